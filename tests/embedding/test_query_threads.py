"""A query runs torch on one thread and gives the thread count back, also when several threads ask at once."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import torch

from workspace_app.embedding.embedder import one_query_thread

QUESTIONS = [
    "What is the recommended LDL cholesterol goal for secondary prevention?",
    "When is a pacemaker indicated for sinus node dysfunction?",
    "How should syncope be evaluated in the emergency department?",
    "阿司匹林不能耐受时换用哪种抗血小板药物？",
]


def test_torch_runs_one_thread_inside_and_its_own_count_after() -> None:
    before = torch.get_num_threads()
    with one_query_thread():
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before


def test_the_thread_count_comes_back_after_an_error() -> None:
    before = torch.get_num_threads()
    try:
        with one_query_thread():
            raise ValueError("boom")
    except ValueError:
        pass
    assert torch.get_num_threads() == before


def test_query_vectors_are_the_batch_vectors_and_concurrent_queries_agree(embedder: Any) -> None:
    model = embedder.model
    batch = model.encode(QUESTIONS, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)
    before = torch.get_num_threads()
    with ThreadPoolExecutor(4) as pool:
        for _ in range(3):
            embedder._recent_queries.clear()  # the memo would answer the repeats without the model
            vectors = list(pool.map(embedder.embed_query, QUESTIONS))
            assert np.allclose(np.stack(vectors), batch, atol=1e-5)
    assert torch.get_num_threads() == before


def test_what_lives_once_the_model_is_loaded_is_left_out_of_full_collections(embedder: Any) -> None:
    """The model and its libraries are frozen out of the collector's full passes (each walked them, ~0.3 s)."""
    import gc

    assert embedder.is_loaded
    assert gc.get_freeze_count() > 100_000
