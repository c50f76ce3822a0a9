"""The onnxruntime backends of the embedder give unit vectors close to torch's and never share its cache entries."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from workspace_app.config import EmbeddingSettings
from workspace_app.embedding.embedder import Embedder

# Lowest cosine to torch's vector over the 1,324 dev chunks was 0.9829 for onnx-int8 and 1.0000 for onnx
# (bench/results/embedder.json); the bounds leave a margin.
MIN_COSINE = {"onnx": 0.999, "onnx-int8": 0.97}


@pytest.fixture(scope="module")
def passages(excerpt: Callable[[str, int, int], Path], chunk_pdf: Callable[[Path], list[Any]]) -> list[str]:
    """Chunks of two pages of a guideline, as ingestion cuts them."""
    return [draft.text for draft in chunk_pdf(excerpt("shen-2017-syncope.pdf", 8, 9))][:8]


@pytest.fixture(scope="module")
def export_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One export folder for the module: onnx-int8 quantises the fp32 export that onnx made."""
    return tmp_path_factory.mktemp("onnx")


@pytest.mark.parametrize("backend", ["onnx", "onnx-int8"])
def test_backend_vectors_are_close_to_torch(backend: str, passages: list[str], export_dir: Path, embedder: Any) -> None:
    fast = Embedder(EmbeddingSettings(backend=backend, export_dir=export_dir))  # type: ignore[arg-type]

    vectors = fast.embed_passages(passages)
    reference = embedder.embed_passages(passages)

    assert vectors.shape == (len(passages), 384) and vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    assert np.sum(vectors * reference, axis=1).min() > MIN_COSINE[backend]
    question = "What pause counts as carotid sinus hypersensitivity?"
    assert float(fast.embed_query(question) @ embedder.embed_query(question)) > MIN_COSINE[backend]
    assert fast.max_tokens == embedder.max_tokens


def test_backends_have_their_own_cache_keys(embedder: Any) -> None:
    ids = {Embedder(EmbeddingSettings(backend=backend)).model_id for backend in ("onnx", "onnx-int8")}  # type: ignore[arg-type]

    assert len(ids | {embedder.model_id}) == 3


def test_an_export_is_reused(passages: list[str], export_dir: Path) -> None:
    Embedder(EmbeddingSettings(backend="onnx-int8", export_dir=export_dir)).embed_passages(passages[:1])
    files = {path: path.stat().st_mtime_ns for path in export_dir.iterdir()}

    Embedder(EmbeddingSettings(backend="onnx-int8", export_dir=export_dir)).embed_passages(passages[:1])

    assert len(files) == 2 and {path: path.stat().st_mtime_ns for path in export_dir.iterdir()} == files
