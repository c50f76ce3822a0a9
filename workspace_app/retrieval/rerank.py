"""Rerankers: the `Reranker` seam and its implementations, chosen by settings (none by default: no reranker
weights ship offline). A new reranker is a class with `rerank` here and one line in `build_reranker`."""

from __future__ import annotations

import threading
from typing import Any, Protocol

from workspace_app.config import RetrievalSettings
from workspace_app.errors import ModelUnavailableError


class Reranker(Protocol):
    """Scores passages against a query (higher is better); the search orders its candidates by these scores."""

    def rerank(self, query: str, passages: list[str]) -> list[float]: ...


def build_reranker(settings: RetrievalSettings) -> Reranker | None:
    """The reranker the settings name: a sentence-transformers cross-encoder by name or path, or none."""
    return CrossEncoderReranker(settings.reranker) if settings.reranker else None


class CrossEncoderReranker:
    """Scores (query, passage) pairs with a sentence-transformers CrossEncoder loaded on first use."""

    def __init__(self, model_name: str, device: str = "cpu") -> None:
        self._name = model_name
        self._device = device
        self._model: Any = None
        self._lock = threading.Lock()

    def _load(self) -> Any:
        with self._lock:
            if self._model is None:
                try:
                    from sentence_transformers import CrossEncoder

                    self._model = CrossEncoder(self._name, device=self._device)
                except Exception as exc:
                    raise ModelUnavailableError(
                        f"The reranker '{self._name}' could not be loaded ({type(exc).__name__}). "
                        "Give a local path or unset WORKSPACE_RETRIEVAL__RERANKER."
                    ) from exc
        return self._model

    def rerank(self, query: str, passages: list[str]) -> list[float]:
        """One relevance score per passage (higher is better)."""
        if not passages:
            return []
        scores = self._load().predict([(query, passage) for passage in passages], show_progress_bar=False)
        return [float(score) for score in scores]
