"""Optional cross-encoder reranking (off by default: no reranker weights ship offline)."""

from __future__ import annotations

import threading
from typing import Any

from workspace_app.errors import ModelUnavailableError


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
