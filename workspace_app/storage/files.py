"""Content-addressed file store: `files/<sha256><suffix>` under the data dir, written atomically; the figures'
thumbnails beside them, `files/thumbnails/<document id>/<name>.png`, removed with their document; and uploaded
patient-import files in `imports/`. The S3 stores (storage/s3.py) keep their local copies with these same classes."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO


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
            write_atomically(target, lambda handle: _copy_into(source, handle))
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
        file_name = f"{_safe(name)}.png"
        write_atomically(self._folder(document_id) / file_name, lambda handle: handle.write(png))
        return file_name

    def thumbnail_path(self, document_id: str, name: str) -> Path:
        """Where a document's thumbnail of this file name is (or would be)."""
        return self._folder(document_id) / _safe(name)

    def delete_thumbnails(self, document_id: str) -> None:
        """Remove a document's thumbnails (if any)."""
        shutil.rmtree(self._folder(document_id), ignore_errors=True)

    def _folder(self, document_id: str) -> Path:
        return self._root / _safe(document_id)


class LocalUploadFolder:
    """Uploaded files kept in one folder (`imports/` of the shared dir), read at the path they were written to."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def save(self, file_name: str, data: bytes) -> Path:
        """Write an upload (atomically) and return its path."""
        target = self.root / _safe(file_name)
        write_atomically(target, lambda handle: handle.write(data))
        return target

    def local_copy(self, path: Path) -> Path:
        """The path to read a recorded upload (or any other import source) from: here, the path itself."""
        return path


def write_atomically(target: Path, write: Callable[[BinaryIO], object]) -> None:
    """Write a file through a temporary one beside it, renamed into place: a reader never sees half of it."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _copy_into(source: Path, handle: BinaryIO) -> None:
    with source.open("rb") as read:
        shutil.copyfileobj(read, handle, 1 << 20)


def _safe(name: str) -> str:
    """A name kept inside its folder: ids and file names are ours, but a path is never built from anything else."""
    if not name or name.startswith(".") or "/" in name or "\\" in name:
        raise ValueError(f"unexpected file name {name!r}")
    return name
