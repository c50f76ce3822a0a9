"""The embedder takes its length-sorted batches shortest and longest in turn (so the pace measured at any point is
the whole document's, issue 29), and still returns each passage's own vector, with progress that only goes up."""

from __future__ import annotations

import uuid
from typing import Any

import numpy as np

from workspace_app.embedding.embedder import alternate_ends


def test_alternate_ends_takes_both_ends_in_turn() -> None:
    assert alternate_ends(range(0, 167, 32)) == [0, 160, 32, 128, 64, 96]
    assert alternate_ends([0, 32, 64]) == [0, 64, 32]
    assert alternate_ends([0]) == [0] and alternate_ends([]) == []


def test_vectors_stay_with_their_passages_and_progress_only_rises(embedder: Any) -> None:
    texts = [f"{uuid.uuid4().hex} " + "beta blockers after myocardial infarction " * (1 + n % 9) for n in range(70)]
    seen: list[tuple[int, int]] = []
    together = embedder.embed_passages(texts, lambda done, total: seen.append((done, total)))
    # Each alone, by the model itself (the embedder's cache would hand back what the batched call stored).
    alone = embedder.model.encode([texts[0], texts[35], texts[69]], normalize_embeddings=True, convert_to_numpy=True)
    assert np.allclose(together[[0, 35, 69]], alone, atol=1e-5)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen) and seen[-1] == (70, 70)
