"""Shared files in an S3-compatible object store (AWS S3, MinIO, Ceph...) through boto3, with a copy on this machine.

The bucket holds what `WORKSPACE_SHARED__DIR` holds otherwise, under the same names (after the URL's prefix):
`files/<sha256><suffix>`, `files/thumbnails/<document id>/<name>.png` and `imports/<upload>`. Readers open files by
local path (PyMuPDF needs one), so each machine keeps a read-through copy under its own data dir, laid out the same:
a file is fetched on first use, written atomically, and never changes afterwards (its name is its content's hash, or
an id). Deleting removes the object and this machine's copy; another machine's stale copy is never read again (no
document refers to it) and goes with that machine's data dir.

Every boto3/botocore failure becomes an ObjectStoreError whose message says what to check, at this boundary
(`_object_store_errors`), the way httpx's `map_httpcore_exceptions` maps its transport's errors."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, BinaryIO

import boto3
from botocore.config import Config
from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionError,
    NoCredentialsError,
    ReadTimeoutError,
)

from workspace_app.config import SharedSettings
from workspace_app.errors import ObjectStoreError
from workspace_app.storage.files import LocalFileStore, LocalThumbnailStore, LocalUploadFolder, write_atomically

ATTEMPTS = 3  # botocore's "standard" retry mode: a call is tried this many times before it fails
MISSING = {"404", "NoSuchKey", "NotFound"}
NO_BUCKET = {"NoSuchBucket"}
REFUSED = {"403", "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "AllAccessDisabled",
           "InvalidToken", "ExpiredToken"}


def parse_s3_url(url: str) -> tuple[str, str]:
    """(bucket, key prefix ending in '/' or empty) of `s3://bucket/prefix`."""
    bucket, _, prefix = url.removeprefix("s3://").partition("/")
    prefix = prefix.strip("/")
    return bucket, f"{prefix}/" if prefix else ""


class S3Bucket:
    """One bucket (and key prefix) of an S3-compatible store: the few object calls the stores need."""

    def __init__(self, settings: SharedSettings) -> None:
        self.bucket, self._prefix = parse_s3_url(settings.s3_url)
        self._where = f"{settings.s3_url} at {settings.s3_endpoint_url or 'AWS S3'}"
        secret = settings.s3_secret_access_key
        self._client: Any = boto3.session.Session().client(
            "s3",
            endpoint_url=settings.s3_endpoint_url or None,
            region_name=settings.s3_region or None,
            aws_access_key_id=settings.s3_access_key_id,
            aws_secret_access_key=secret.get_secret_value() if secret is not None else None,
            config=Config(
                connect_timeout=settings.s3_timeout_s, read_timeout=settings.s3_timeout_s,
                retries={"max_attempts": ATTEMPTS, "mode": "standard"},
                # MinIO and most self-hosted servers serve buckets by path, not as <bucket>.host names.
                s3={"addressing_style": "path" if settings.s3_endpoint_url else "auto"},
            ),
        )

    def exists(self, key: str) -> bool:
        """Whether the object is there (a HEAD)."""
        with self._object_store_errors("look for", key):
            try:
                self._client.head_object(Bucket=self.bucket, Key=self._prefix + key)
            except ClientError as exc:
                if _code(exc) in MISSING:
                    return False
                raise
        return True

    def upload(self, source: BinaryIO, key: str) -> None:
        """Store an object from an open file (in parts when it is large)."""
        with self._object_store_errors("store", key):
            self._client.upload_fileobj(source, self.bucket, self._prefix + key)

    def download(self, key: str, target: Path) -> bool:
        """Fetch an object into `target` (atomically); False when the bucket has no such object."""
        with self._object_store_errors("fetch", key):
            try:
                # GET, not boto3's download_file: its HEAD answers a bare 404 for a missing bucket as for a missing key.
                body = self._client.get_object(Bucket=self.bucket, Key=self._prefix + key)["Body"]
            except ClientError as exc:
                if _code(exc) in MISSING:
                    return False
                raise
            with body:
                write_atomically(target, lambda handle: shutil.copyfileobj(body, handle, 1 << 20))
        return True

    def delete(self, key: str) -> None:
        """Remove an object (nothing happens when it is not there)."""
        with self._object_store_errors("delete", key):
            self._client.delete_object(Bucket=self.bucket, Key=self._prefix + key)

    def delete_under(self, folder: str) -> None:
        """Remove every object whose key starts with `folder/`."""
        with self._object_store_errors("delete", f"{folder}/"):
            pages = self._client.get_paginator("list_objects_v2").paginate(
                Bucket=self.bucket, Prefix=f"{self._prefix}{folder}/"
            )
            for page in pages:
                keys = [{"Key": item["Key"]} for item in page.get("Contents", [])]
                if keys:  # at most 1,000 a page, as many as one DeleteObjects call takes
                    self._client.delete_objects(Bucket=self.bucket, Delete={"Objects": keys, "Quiet": True})

    @contextmanager
    def _object_store_errors(self, action: str, key: str) -> Iterator[None]:
        """Turn a boto3/botocore failure into an ObjectStoreError that says what to check."""
        try:
            yield
        except ClientError as exc:
            raise ObjectStoreError(self._refusal(action, key, _code(exc))) from exc
        except NoCredentialsError as exc:
            raise ObjectStoreError(
                f"No credentials to {action} {key} in {self._where}: set WORKSPACE_SHARED__S3_ACCESS_KEY_ID and "
                "WORKSPACE_SHARED__S3_SECRET_ACCESS_KEY (or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY)."
            ) from exc
        except (ConnectionError, ReadTimeoutError) as exc:
            raise ObjectStoreError(
                f"The object store {self._where} is not answering, so {key} could not be {_done(action)}. Check "
                "WORKSPACE_SHARED__S3_ENDPOINT_URL and that the server is running and reachable, then try again."
            ) from exc
        except BotoCoreError as exc:
            raise ObjectStoreError(
                f"The object store {self._where} failed to {action} {key} ({type(exc).__name__}). Check the "
                "WORKSPACE_SHARED__S3_* settings, then try again."
            ) from exc

    def _refusal(self, action: str, key: str, code: str) -> str:
        if code in NO_BUCKET:
            return (f"The bucket {self.bucket!r} does not exist in {self._where}. Create it (e.g. `aws s3 mb "
                    f"s3://{self.bucket}` or MinIO's `mc mb`) or correct WORKSPACE_SHARED__S3_URL.")
        if code in REFUSED:
            return (f"The object store {self._where} refused to let us {action} {key} ({code}). Check the "
                    "credentials (WORKSPACE_SHARED__S3_ACCESS_KEY_ID / _SECRET_ACCESS_KEY, or AWS_ACCESS_KEY_ID / "
                    "AWS_SECRET_ACCESS_KEY) and that they may read and write the bucket.")
        return (f"The object store {self._where} could not {action} {key} ({code}). Check the WORKSPACE_SHARED__S3_* "
                "settings and the server's log, then try again.")


class S3FileStore:
    """The content-addressed source files in the bucket, each opened from this machine's copy."""

    def __init__(self, bucket: S3Bucket, cache: Path) -> None:
        self._bucket = bucket
        self._copies = LocalFileStore(cache)

    def put(self, source: Path, suffix: str) -> tuple[str, Path]:
        """Store a file (uploaded once per content: a HEAD first) and return its sha256 and local copy."""
        sha, copy = self._copies.put(source, suffix)
        key = _file_key(copy)
        if not self._bucket.exists(key):
            with copy.open("rb") as handle:
                self._bucket.upload(handle, key)
        return sha, copy

    def path_for(self, sha256: str, suffix: str) -> Path:
        """This machine's copy of the file, fetched from the bucket on first use; it does not exist when the bucket
        has no such file."""
        copy = self._copies.path_for(sha256, suffix)
        if not copy.exists():
            self._bucket.download(_file_key(copy), copy)
        return copy

    def delete(self, sha256: str, suffix: str) -> None:
        """Remove the file from the bucket and this machine's copy."""
        copy = self._copies.path_for(sha256, suffix)
        self._bucket.delete(_file_key(copy))
        self._copies.delete(sha256, suffix)


class S3ThumbnailStore:
    """The figures' thumbnails in the bucket (`files/thumbnails/<document id>/`), shown from this machine's copy."""

    def __init__(self, bucket: S3Bucket, cache: Path) -> None:
        self._bucket = bucket
        self._copies = LocalThumbnailStore(cache)

    def put_thumbnail(self, document_id: str, name: str, png: bytes) -> str:
        """Store a thumbnail (and keep a copy here); returns its file name."""
        file_name = self._copies.put_thumbnail(document_id, name, png)
        with self._copies.thumbnail_path(document_id, file_name).open("rb") as handle:
            self._bucket.upload(handle, _thumbnail_key(document_id, file_name))
        return file_name

    def thumbnail_path(self, document_id: str, name: str) -> Path:
        """This machine's copy of a thumbnail, fetched on first use; it does not exist when the bucket has none."""
        copy = self._copies.thumbnail_path(document_id, name)
        if not copy.exists():
            self._bucket.download(_thumbnail_key(document_id, name), copy)
        return copy

    def delete_thumbnails(self, document_id: str) -> None:
        """Remove a document's thumbnails from the bucket and this machine's copies."""
        self._copies.delete_thumbnails(document_id)  # first: it refuses an id that is not a plain name
        self._bucket.delete_under(_thumbnail_key(document_id, "").rstrip("/"))


class S3UploadFolder:
    """Uploaded patient-import files in the bucket (`imports/<name>`, each name unique), read from a local copy."""

    def __init__(self, bucket: S3Bucket, cache: Path) -> None:
        self._bucket = bucket
        self._copies = LocalUploadFolder(cache)
        self.root = cache

    def save(self, file_name: str, data: bytes) -> Path:
        """Store an upload in the bucket and keep a copy here; returns the copy's path (the one the import records)."""
        copy = self._copies.save(file_name, data)
        with copy.open("rb") as handle:
            self._bucket.upload(handle, f"imports/{copy.name}")
        return copy

    def local_copy(self, path: Path) -> Path:
        """The path to read a recorded import source from: the path itself when it is here (this machine took the
        upload, or it is a server folder); an upload another machine took (recorded under its `imports/`) is fetched
        by its name into this machine's copies."""
        if path.exists() or path.parent.name != "imports":
            return path
        copy = self.root / path.name
        return copy if copy.exists() or self._bucket.download(f"imports/{path.name}", copy) else path


def _file_key(copy: Path) -> str:
    return f"files/{copy.name}"


def _thumbnail_key(document_id: str, name: str) -> str:
    return f"files/thumbnails/{document_id}/{name}"


def _code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", "")) or str(
        exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode", "")
    )


def _done(action: str) -> str:
    return {"store": "stored", "fetch": "fetched", "delete": "deleted", "look for": "looked for"}.get(action, action)
