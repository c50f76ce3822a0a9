"""UI adapter: the Streamlit server of `workspace-app serve`, with its App built and warmed in the background.

`python -m workspace_app.adapters.ui [--warm-file PATH] APP_SCRIPT [streamlit flags...]` starts `streamlit run`
at once (so the Workspaces page opens as soon as it can) and, on a thread beside it, builds the App through the
same cached function the pages use (`components.application.current_app`, an `st.cache_resource` shared by every
session of this process; a page that asks for it meanwhile waits for that one build) and warms it (`App.warm_up`:
models loaded, one answer per workspace). When that is done it writes the warm file, which `serve` waits for
before it reports ready: ready means the first question is answered as fast as the ones after it.

With accounts on and an identity provider configured it first writes the provider's settings where Streamlit's
`st.login` reads them (a private secrets file, adapters/ui_auth.py) and adds `--secrets.files` for it.
"""

from __future__ import annotations

import json
import logging
import sys
import threading
import time
from pathlib import Path

log = logging.getLogger("workspace_app.ui")


def warm_app(script: Path) -> dict[str, float]:
    """Build the UI's App (cached for the sessions to come) and warm it; the seconds each step took."""
    sys.path.insert(0, str(script.parent))
    from components.application import current_app

    return current_app().warm_up()


def warm_in_background(script: Path, warm_file: Path | None) -> threading.Thread:
    """Warm the App on a thread; write `warm_file` when done (also after a failure: serve must not wait forever)."""

    def run() -> None:
        started = time.monotonic()
        outcome: dict[str, object] = {}
        try:
            outcome["timings_s"] = {name: round(s, 2) for name, s in warm_app(script).items()}
        except Exception:  # the page shows the problem to the user as it did before warm starts
            log.exception("warming the application failed")
            outcome["failed"] = True
        outcome["warm_after_s"] = round(time.monotonic() - started, 2)
        print(f"workspace UI warm: {json.dumps(outcome)}", file=sys.stderr, flush=True)
        if warm_file is not None:
            warm_file.parent.mkdir(parents=True, exist_ok=True)
            warm_file.write_text(json.dumps(outcome))

    thread = threading.Thread(target=run, name="warm-up", daemon=True)
    thread.start()
    return thread


def auth_secrets_file() -> Path | None:
    """The secrets file `st.login` reads, written from the settings when an identity provider is configured
    (adapters/ui_auth.py); None without one, or when the settings are not valid (the page then says what is wrong)."""
    from workspace_app.adapters.ui_auth import write_streamlit_secrets
    from workspace_app.config import load_settings
    from workspace_app.errors import WorkspaceError

    try:
        path = write_streamlit_secrets(load_settings())
    except WorkspaceError:
        return None
    if path is not None:
        print(f"workspace UI: sign-in through the identity provider, settings for st.login in {path}", file=sys.stderr)
    return path


def main(argv: list[str] | None = None) -> int:
    """Start warming, then hand the main thread to `streamlit run APP_SCRIPT flags...`."""
    from workspace_app.adapters.process import prepare_process

    prepare_process()
    args = list(sys.argv[1:] if argv is None else argv)
    warm_file = None
    if args[:1] == ["--warm-file"]:
        warm_file, args = Path(args[1]), args[2:]
    script = Path(args[0]).resolve()
    secrets_file = auth_secrets_file()
    if secrets_file is not None:
        args += ["--secrets.files", str(secrets_file)]
    # Streamlit is imported here, before the warm-up thread imports the pages' modules: two threads importing it at
    # once deadlock on its package lock or build its DeltaGenerator singleton twice (`serve`'s UI then died at start
    # now and then on a busy machine).
    from streamlit.web import cli

    warm_in_background(script, warm_file)

    sys.argv = ["streamlit", "run", str(script), *args[1:]]
    cli.main()  # exits with streamlit's status
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
