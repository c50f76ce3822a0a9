"""The default model run without sentence-transformers gives the library's vectors: passages through transformers,
questions in numpy. A process that only embeds questions never imports torch, and one that embeds passages never
imports sentence-transformers (the seconds every `ask`, `search`, worker and server saves); a folder that pools or
prompts otherwise is still loaded by the library."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np

from workspace_app.config import EmbeddingSettings
from workspace_app.embedding.embedder import Embedder, resolve_model_path
from workspace_app.embedding.mean_pooled import MeanPooledModel, NumpyBert, is_plain_mean_pooled

FOLDER = Path(resolve_model_path(EmbeddingSettings().model))
# Unlike lengths in one batch (padding), text past the 256-piece limit (truncation), Chinese, and the spaces around
# a text that the library strips.
TEXTS = [
    "Syncope is a transient loss of consciousness.",
    "  Statins lower LDL cholesterol.\n",
    "心房颤动患者的抗凝治疗应根据CHA2DS2-VASc评分决定。",
    "In adults with a history of ASCVD, " + "high-intensity statin therapy lowers events " * 60,
    "β-blockers ≤ 24 h after admission (Class I; Level of Evidence A)",
]


def test_its_vectors_are_the_librarys() -> None:
    from sentence_transformers import SentenceTransformer

    library = SentenceTransformer(str(FOLDER), device="cpu")
    ours = MeanPooledModel(FOLDER)
    expected = library.encode(TEXTS, batch_size=2, normalize_embeddings=True, convert_to_numpy=True)
    got = ours.encode(TEXTS, batch_size=2)
    assert got.shape == expected.shape == (len(TEXTS), 384) and got.dtype == np.float32
    assert np.abs(got - expected).max() < 1e-6
    assert ours.max_seq_length == library.max_seq_length == 256
    assert ours.get_sentence_embedding_dimension() == library.get_embedding_dimension()
    assert ours.encode([]).shape == (0, 384)

    queries = NumpyBert.for_folder(FOLDER)
    assert queries is not None and queries.dimension == 384
    from threadpoolctl import threadpool_info

    threads = [library["num_threads"] for library in threadpool_info()]
    one_by_one = np.stack([queries.encode_one(text) for text in TEXTS])
    assert [library["num_threads"] for library in threadpool_info()] == threads  # one BLAS thread only meanwhile
    assert one_by_one.dtype == np.float32 and np.abs(one_by_one - expected).max() < 1e-6


def test_a_folder_that_pools_or_prompts_otherwise_is_left_to_the_library(tmp_path: Path) -> None:
    assert is_plain_mean_pooled(FOLDER)

    def changed(name: str, edit: dict[str, object], file: str) -> Path:
        copy = tmp_path / name
        shutil.copytree(FOLDER, copy)
        data = json.loads((copy / file).read_text(encoding="utf-8"))
        data.update(edit)
        (copy / file).write_text(json.dumps(data), encoding="utf-8")
        return copy

    cls_pooled = changed("cls", {"pooling_mode_mean_tokens": False, "pooling_mode_cls_token": True}, "1_Pooling/config.json")
    prompted = changed("prompted", {"prompts": {"query": "query: "}, "default_prompt_name": "query"},
                       "config_sentence_transformers.json")
    lower_cased = changed("lower", {"do_lower_case": True}, "sentence_bert_config.json")
    assert not any(is_plain_mean_pooled(folder) for folder in (cls_pooled, prompted, lower_cased, tmp_path / "none"))

    embedder = Embedder(EmbeddingSettings(model=str(cls_pooled)))
    assert type(embedder.model).__name__ == "SentenceTransformer"


def test_a_process_that_answers_never_imports_torch_and_one_that_ingests_never_the_library() -> None:
    script = (
        "import sys\n"
        "from workspace_app.config import EmbeddingSettings\n"
        "from workspace_app.embedding.embedder import Embedder\n"
        "embedder = Embedder(EmbeddingSettings())\n"
        "assert embedder.embed_query('How intense should statin therapy be?').shape == (384,)\n"
        "few = embedder.embed_passages(['Statins lower LDL cholesterol.', 'Aspirin is not advised.'])\n"
        "assert few.shape == (2, 384) and embedder.dimension == 384\n"
        "assert embedder.count_tokens(['Statins lower LDL cholesterol.'])[0] > 3\n"
        "print('torch' in sys.modules)\n"
        "many = embedder.embed_passages([f'Passage {n} on statins and LDL cholesterol.' for n in range(20)])\n"
        "assert many.shape == (20, 384)\n"
        "print(type(embedder.model).__name__, 'sentence_transformers' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "MeanPooledModel", "False"]


def test_few_texts_run_in_numpy_only_where_torch_would_run_the_model_on_the_cpu_and_is_not_loaded() -> None:
    assert Embedder(EmbeddingSettings())._numpy_model() is not None
    assert Embedder(EmbeddingSettings(backend="onnx"))._numpy_model() is None
    assert Embedder(EmbeddingSettings(device="cuda"))._numpy_model() is None
    assert Embedder(EmbeddingSettings(few_texts=0))._numpy_model() is None
    embedder = Embedder(EmbeddingSettings(few_texts=2))
    assert embedder._few(2) is not None and embedder._few(3) is None
    numpy_made = embedder.embed_passages(["Statins lower LDL cholesterol."])  # not cached: no cache given
    embedder.load()
    assert embedder._few(1) is None  # once torch is loaded it runs every call
    assert np.abs(embedder.embed_passages(["Statins lower LDL cholesterol."]) - numpy_made).max() < 1e-6


def test_words_are_counted_alike_with_or_without_torch() -> None:
    texts = TEXTS + ["", "β-blockers≤24 h", "CHA₂DS₂-VASc ≥ 2"]
    without = Embedder(EmbeddingSettings()).count_tokens(texts)
    with_torch = Embedder(EmbeddingSettings())
    with_torch.load()
    assert with_torch.count_tokens(texts) == without
