"""What every process we start does first: private files (umask 077) and no calls home.

`prepare_process()` runs at the top of each entry point (the CLI, hence `serve` and its worker; the UI adapter;
`app.py` when Streamlit runs it directly). Children inherit the umask and the environment, so the Chroma server
`serve` starts is covered too.

Why each variable:
- `ORT_DISABLE_TELEMETRY=1`: onnxruntime's official Linux wheels carry Microsoft's 1DS telemetry SDK (static curl).
  `import pymupdf` imports `pymupdf.layout`, which imports onnxruntime; the first session then writes a device id
  and an event database under `$XDG_CACHE_HOME/Microsoft/DeveloperTools/.onnxruntime/` and a background thread
  resolves and posts to mobile.events.data.microsoft.com. The library reads this variable when it initialises
  (onnxruntime's Privacy.md, "Disabling Telemetry"); the Python API (`disable_telemetry_events`) comes too late.
- `ANONYMIZED_TELEMETRY=False`: chromadb's own product telemetry (we also pass `anonymized_telemetry=False`).
- `HF_HUB_DISABLE_TELEMETRY=1`: huggingface_hub's usage pings.
- `STREAMLIT_BROWSER_GATHER_USAGE_STATS=false`: Streamlit's usage statistics (`serve` also passes the flag).
- `OTEL_SDK_DISABLED=true`: FastAPI (0.16x) instruments requests with OpenTelemetry; nothing is exported unless
  exporters are configured, and this keeps any SDK a deployment might install from starting one.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from workspace_app.storage.files import write_atomically

PRIVATE_UMASK = 0o077
OFFLINE_ENVIRON = {
    "ORT_DISABLE_TELEMETRY": "1",
    "ANONYMIZED_TELEMETRY": "False",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "STREAMLIT_BROWSER_GATHER_USAGE_STATS": "false",
    "OTEL_SDK_DISABLED": "true",
}


def prepare_process() -> None:
    """Make files this process (and its children) creates private, and turn every library's telemetry off."""
    os.umask(PRIVATE_UMASK)
    os.environ.update(OFFLINE_ENVIRON)


def make_private(data_dir: Path) -> int:
    """Take group and other permissions off the data dir and everything in it (made by an older version, or
    without our umask); returns how many entries changed. Symbolic links are left alone."""
    changed = _drop_group_and_other(data_dir)
    for root, dirs, files in os.walk(data_dir):
        for name in [*dirs, *files]:
            changed += _drop_group_and_other(Path(root) / name)
    return changed


def _drop_group_and_other(path: Path) -> int:
    try:
        mode = path.lstat().st_mode
    except FileNotFoundError:  # removed meanwhile
        return 0
    if stat.S_ISLNK(mode) or not mode & 0o077:
        return 0
    os.chmod(path, stat.S_IMODE(mode) & ~0o077)
    return 1


def private_token(path: Path) -> str:
    """The random token kept in `path`: made once (readable by this user only), the same every time after."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        existing = path.read_text().strip()
        if existing:
            return existing
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with open(fd, "w", encoding="utf-8") as out:
        token = secrets.token_urlsafe(32)
        out.write(token)
    return token


def write_private(path: Path, text: str) -> None:
    """Write a file only this user may read (in a folder only this user may open), replacing it whole: a reader
    never sees half of it, and it is never readable by others, not even for a moment."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    write_atomically(path, lambda out: out.write(text.encode("utf-8")))  # mkstemp's file is 0600 from the start
