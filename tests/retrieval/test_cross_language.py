"""Cross-language search on real guideline pages: an English question finds the Chinese guideline's passage and a
Chinese question the English guideline's, through the lexicon's names of the question's concepts."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

WOMEN = "women-p10-11.pdf"  # mosca-2011 pages 10-11: warfarin INR 2.0 to 3.0 in atrial fibrillation (page 11)
CHINESE = "zh-acute-af-p5-6.pdf"  # zh-acute-af-ed-2024 pages 5-6: rate control, IV metoprolol dosing (page 6)
SYNCOPE = "syncope-p11.pdf"  # shen-2017 page 11: the initial evaluation of syncope


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Iterator[Any]:
    built = build(tmp_path_factory.mktemp("xling") / "data")
    built.workspaces.create("Xling")
    sources = {
        WOMEN: excerpt("mosca-2011-women-cvd.pdf", 10, 11),
        CHINESE: excerpt("zh-acute-af-ed-2024.pdf", 5, 6),
        SYNCOPE: excerpt("shen-2017-syncope.pdf", 11, 11),
    }
    for name, path in sources.items():
        assert built.documents.ingest("Xling", path, name).status == "ready"
    yield built


def _top(app: Any, question: str) -> Any:
    return app.search.search("Xling", question, top_k=3).hits[0]


def test_an_english_question_finds_the_chinese_passage(app: Any) -> None:
    hit = _top(app, "When IV metoprolol tartrate is used to control the ventricular rate in AF, what is the single dose?")
    assert hit.document_name == CHINESE and hit.chunk.page_start <= 2 <= hit.chunk.page_end
    assert "美托洛尔" in hit.chunk.text
    assert hit.ranks["translated"] is not None


@pytest.mark.parametrize(("question", "document", "page", "word"), [
    ("慢性或阵发性房颤的女性患者服用华法林，INR目标范围是多少？", WOMEN, 2, "warfarin"),
    ("高危女性有阿司匹林适应证但不能耐受阿司匹林，应换用哪种抗血小板药物？", WOMEN, 2, "clopidogrel"),
    ("晕厥患者初始评估时行静息12导联心电图检查，推荐级别和证据水平是什么？", SYNCOPE, 1, "electrocardiogram"),
])
def test_a_chinese_question_finds_the_english_passage(app: Any, question: str, document: str, page: int, word: str) -> None:
    # Chinese questions have no dense ranking of their own (the default embedder is English-only) and their
    # translated list weighs less than their own BM25 list, so the Chinese guideline's nearest passage may stay first.
    hits = app.search.search("Xling", question, top_k=3).hits
    found = [h for h in hits if h.document_name == document and h.chunk.page_start <= page <= h.chunk.page_end]
    assert found and word in found[0].chunk.text.lower()
    assert found[0].ranks["translated"] is not None


def test_the_multilingual_index_ranks_the_languages_the_main_embedder_does_not(app: Any) -> None:
    # An English question has MiniLM's ranking of its own language: the multilingual index adds the other one only.
    english = app.search.search("Xling", "What INR should warfarin keep in women with atrial fibrillation?", top_k=8).hits
    ranked = [h for h in english if h.ranks.get("crosslingual") is not None]
    assert ranked, "the multilingual index took part"
    assert all(h.document_name == CHINESE for h in ranked)
    # A Chinese question has no dense ranking of its own (the default embedder is English-only): the multilingual
    # index ranks passages of both languages for it (the English ones: the test above), its own language's too.
    chinese = app.search.search("Xling", "急性房颤控制心室率时，静脉美托洛尔的剂量是多少？", top_k=8).hits
    ranked = sorted((h for h in chinese if h.ranks.get("crosslingual") is not None), key=lambda h: h.ranks["crosslingual"])
    assert ranked and ranked[0].document_name == CHINESE and "心室率" in ranked[0].chunk.text
    # With a dense ranking of Chinese (a multilingual main embedder), it goes back to the other language only.
    settings = app.settings.retrieval
    settings.dense_weight_cjk = 1.0
    try:
        chinese = app.search.search("Xling", "急性房颤控制心室率时，静脉美托洛尔的剂量是多少？", top_k=8).hits
    finally:
        settings.dense_weight_cjk = 0.0
    assert all(h.document_name != CHINESE for h in chinese if h.ranks.get("crosslingual") is not None)


def test_without_the_multilingual_index_an_english_question_still_reaches_chinese(app: Any) -> None:
    settings = app.settings.retrieval
    settings.crosslingual_weight = 0.0
    try:
        question = "When IV metoprolol tartrate is used to control the ventricular rate in AF, what is the single dose?"
        hits = app.search.search("Xling", question, top_k=3).hits
    finally:
        settings.crosslingual_weight = 1.0
    # The lexicon's Chinese names of the question's concepts alone bring the dosing table's row among the
    # passages an answer is built from (an English passage sharing its general words may rank above it).
    found = [h for h in hits if h.document_name == CHINESE and "酒石酸美托洛尔" in h.chunk.text]
    assert found and found[0].ranks["translated"] == 1
    assert all("crosslingual" not in h.ranks for h in hits)


def test_without_translation_the_english_question_stays_in_english(app: Any) -> None:
    settings = app.settings.retrieval
    settings.translated_weight = settings.crosslingual_weight = 0.0
    try:
        hits = app.search.search("Xling", "metoprolol dose for ventricular rate control in AF", top_k=3).hits
    finally:
        settings.translated_weight = settings.crosslingual_weight = 1.0
    assert all("translated" not in hit.ranks and "crosslingual" not in hit.ranks for hit in hits)


def test_the_app_and_the_search_hand_out_the_translator(app: Any) -> None:
    assert app.translator is app.search.translator
    assert "华法林" in app.translator.other_language("warfarin")


def test_an_english_question_is_answered_by_quoting_the_chinese_guideline(app: Any) -> None:
    answer = app.answers.ask(
        "Xling", "In acute AF with an ejection fraction of 40% or higher, which drugs are first-line for ventricular "
        "rate control, and what Class of Recommendation and Level of Evidence apply?",
    )
    assert not answer.refused and answer.language == "en"
    first = answer.citations[0]
    assert first.document == CHINESE and first.page_start == 2
    # Said once, before the first quote in the other language; the quote itself is verbatim Chinese.
    assert answer.text.startswith("Quoted from the Chinese source") and answer.text.count("Quoted from") == 1
    assert first.recommendation_class and first.evidence_level  # a recommendation row, its grading on the chip
    assert any("受体阻滞剂" in c.quote for c in answer.citations)


def test_a_chinese_question_is_answered_by_quoting_the_english_guideline(app: Any) -> None:
    answer = app.answers.ask("Xling", "慢性或阵发性房颤的女性患者服用华法林，INR目标范围是多少？")
    assert not answer.refused and answer.language == "zh"
    assert answer.citations[0].document == WOMEN and "INR at 2.0 to 3.0" in answer.citations[0].quote
    assert answer.text.startswith("以下为英文原文引用")
