"""Content-addressed file store: `files/<sha256><suffix>` under the data dir, written atomically; and the figures'
thumbnails beside them, `files/thumbnails/<document id>/<name>.png`, removed with their document."""

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


class LocalThumbnailStore:
    """PNG thumbnails of each document's figures, one folder a document (written atomically)."""

    def __init__(self, root: Path) -> None:
        self._root = root

    def put_thumbnail(self, document_id: str, name: str, png: bytes) -> str:
        """Write a thumbnail and return its file name."""
        folder = self._folder(document_id)
        folder.mkdir(parents=True, exist_ok=True)
        file_name = f"{_safe(name)}.png"
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".incoming-")
        with os.fdopen(fd, "wb") as handle:
            handle.write(png)
        os.replace(temp, folder / file_name)
        return file_name

    def thumbnail_path(self, document_id: str, name: str) -> Path:
        """Where a document's thumbnail of this file name is (or would be)."""
        return self._folder(document_id) / _safe(name)

    def delete_thumbnails(self, document_id: str) -> None:
        """Remove a document's thumbnails (if any)."""
        shutil.rmtree(self._folder(document_id), ignore_errors=True)

    def _folder(self, document_id: str) -> Path:
        return self._root / _safe(document_id)


def _safe(name: str) -> str:
    """A name kept inside its folder: ids and file names are ours, but a path is never built from anything else."""
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise ValueError(f"unexpected file name {name!r}")
    return name
