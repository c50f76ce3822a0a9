"""Content-addressed file store: `files/<sha256><suffix>` under the data dir, written atomically."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from pathlib import Path


def sha256_of(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB pieces."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalFileStore:
    """Files named by their content hash; the same bytes are stored once."""

    def __init__(self, root: Path) -> None:
        self._root = root
        root.mkdir(parents=True, exist_ok=True)

    def put(self, source: Path, suffix: str) -> tuple[str, Path]:
        """Copy a file in (once per content) and return its sha256 and stored path."""
        sha = sha256_of(source)
        target = self.path_for(sha, suffix)
        if not target.exists():
            fd, temp = tempfile.mkstemp(dir=self._root, prefix=".incoming-")
            os.close(fd)
            shutil.copyfile(source, temp)
            os.replace(temp, target)
        return sha, target

    def path_for(self, sha256: str, suffix: str) -> Path:
        """Where the file with this hash is (or would be) stored."""
        return self._root / f"{sha256}{suffix}"

    def delete(self, sha256: str, suffix: str) -> None:
        """Remove a stored file if present."""
        self.path_for(sha256, suffix).unlink(missing_ok=True)
