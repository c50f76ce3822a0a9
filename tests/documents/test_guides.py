"""Source guides and suggested questions on real guideline excerpts, real SQLite and the real answerer."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, fake_openai_server

# Pages 10-11 of the women's CVD guideline: its recommendation tables (Class I, Level A statements on blood
# pressure, lipids, aspirin and warfarin in atrial fibrillation).
MOSCA = ("mosca-2011-women-cvd.pdf", 10, 11)
SYNCOPE = ("shen-2017-syncope.pdf", 10, 11)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    made = build(tmp_path_factory.mktemp("guides") / "data")
    workspace = made.workspaces.create("Cardiology")
    for name, first, last in (MOSCA, SYNCOPE):
        assert made.documents.ingest(workspace.id, excerpt(name, first, last)).status == "ready"
    return made


def document(service: Any, stem: str) -> Any:
    return next(d for d in service.documents.list("Cardiology") if d.name.startswith(stem))


def test_ingestion_stores_a_guide_of_the_documents_own_text(service: Any) -> None:
    mosca = document(service, "mosca")
    stored = service.catalog.get_guides([mosca.id], service.guides.version)
    assert mosca.id in stored  # made by the pipeline's guide stage, before anything read it
    guide = stored[mosca.id]

    chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(mosca.id)).values()
    flat = " ".join(" ".join(c.text.split()) for c in chunks)
    assert guide.summary and len(guide.summary) <= 800
    assert guide.summary.split(". ")[0] in flat  # extractive: the document's own sentences
    assert guide.recommendations
    first = guide.recommendations[0]
    assert (first.recommendation_class, first.evidence_level) == ("I", "A")
    assert " ".join(first.text.split()) in flat and first.page in (1, 2)
    texts = " ".join(r.text for r in guide.recommendations).lower()
    assert "aspirin" in texts or "warfarin" in texts
    names = [e.name for e in guide.entities]
    assert "coronary heart disease" in names and len(names) <= 8
    assert all(e.mentions > 0 for e in guide.entities)
    assert guide.llm_summary is None  # offline


def test_a_guide_survives_reopening_and_an_outdated_one_is_made_again_on_read(
    service: Any, build: Callable[..., Any]
) -> None:
    syncope = document(service, "shen")
    reopened = build(service.settings.storage.data_dir)
    guide = reopened.guides.guides("Cardiology", [syncope.id])[syncope.id]
    assert guide == service.catalog.get_guides([syncope.id], service.guides.version)[syncope.id]

    # A document ingested before guides existed (or by an older version) has none of this version.
    reopened.catalog.save_guide(syncope.workspace_id, guide, "guide-v0")
    assert reopened.catalog.get_guides([syncope.id], reopened.guides.version) == {}
    assert reopened.guides.guides("Cardiology", [syncope.id])[syncope.id] == guide
    assert syncope.id in reopened.catalog.get_guides([syncope.id], reopened.guides.version)


def test_suggested_questions_are_answered_citing_their_own_source(service: Any) -> None:
    questions = service.suggestions.suggest("Cardiology", "hybrid")
    assert 2 <= len(questions) <= 5
    assert {q.document_id for q in questions} == {d.id for d in service.documents.list("Cardiology")}
    for question in questions:
        answer = service.answers.ask("Cardiology", question.question, mode="hybrid")
        assert not answer.refused, question
        assert question.document_id in {c.document_id for c in answer.citations}, question
    checked = service.suggestions.parts_checked
    assert service.suggestions.suggest("Cardiology", "hybrid") == questions  # stored, not asked again
    assert service.suggestions.parts_checked == checked


def test_suggestions_follow_the_sources_ticked_for_chat_and_name_their_topics(service: Any) -> None:
    """After a source is left out, the questions are the remaining source's, about topics of its own content (not
    a section's name such as "intended use"), and nothing is checked again."""
    mosca, syncope = document(service, "mosca"), document(service, "shen")
    service.suggestions.suggest("Cardiology", "hybrid")
    checked = service.suggestions.parts_checked
    service.documents.set_included("Cardiology", mosca.id, False)
    try:
        questions = service.suggestions.suggest("Cardiology", "hybrid")
        assert questions and all(q.document_id == syncope.id for q in questions)
        assert service.suggestions.parts_checked == checked  # the remaining source's part was stored
        topics = service.guides.guides("Cardiology", [syncope.id])[syncope.id].topics
        chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(syncope.id)).values()
        flat = " ".join(c.text for c in chunks).lower()
        assert topics and all(topic.lower() in flat for topic in topics)  # written in the source itself
        for question in questions:
            if question.origin == "topic":
                assert any(question.question == f"What do the sources say about {t}?" for t in topics), question
    finally:
        service.documents.set_included("Cardiology", mosca.id, True)


def test_a_source_added_checks_only_its_own_questions(service: Any, excerpt: Callable[..., Path]) -> None:
    before = service.suggestions.suggest("Cardiology", "hybrid")
    checked = service.suggestions.parts_checked
    added = service.documents.ingest("Cardiology", excerpt("kusumoto-2018-bradycardia.pdf", 20, 21))
    assert added.status == "ready" and added.document_id
    try:
        after = service.suggestions.suggest("Cardiology", "hybrid")
        assert service.suggestions.parts_checked == checked + 1  # the new source's part only
        assert added.document_id in {q.document_id for q in after}
        assert {q.question for q in before} & {q.question for q in after}  # the others' parts are kept
    finally:
        service.documents.remove("Cardiology", added.document_id)
    assert service.suggestions.suggest("Cardiology", "hybrid") == before
    assert service.suggestions.parts_checked == checked + 1  # removing checks nothing


@pytest.mark.parametrize(("name", "first", "last"), [("shen-2017-syncope.pdf", 1, 4), ("zh-hfpef-consensus-2023.pdf", 1, 4)])
def test_a_summary_is_whole_sentences_of_the_document_without_front_matter(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path], name: str, first: int, last: int
) -> None:
    """The opening pages: title, authors and their affiliations, copyright, the writing group, a disclaimer; the
    Chinese consensus's header and grading lines ("推荐强度：GPS证据概述：共识制定工作组…") glue onto sentences."""
    from workspace_app.text.sentences import split_sentences
    from workspace_app.text.source_markers import without_source_markers

    made = build(tmp_path / "data")
    workspace = made.workspaces.create("Opening")
    assert made.documents.ingest(workspace.id, excerpt(name, first, last)).status == "ready"
    source = made.documents.list("Opening")[0]
    summary = made.guides.guides("Opening", [source.id])[source.id].summary
    chunks = made.catalog.get_chunks(made.catalog.document_chunk_ids(source.id)).values()
    flat = "".join("".join(without_source_markers(span.text).split()) for c in chunks for span in split_sentences(c.text))
    sentences = [span.text for span in split_sentences(summary)]
    assert len(sentences) >= 2
    for sentence in sentences:
        assert "".join(sentence.split()) in flat, sentence  # the document's own
        assert sentence[0].isupper() or not sentence[0].isascii(), sentence  # not started mid-sentence
        assert sentence.endswith((".", "。", "；", "!", "?")), sentence  # nor cut off
    for front_matter in ("©", "Copyright", "et al", "@", "Writing Committee", "Member", "推荐强度", "证据概述",
                         "工作组"):
        assert front_matter not in summary
    made.close()


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with fake_openai_server() as server:
        yield server


def test_with_a_language_model_the_guide_has_its_summary_made_once(
    service: Any, build: Callable[..., Any], fake: FakeOpenAI
) -> None:
    fake.replies = ["A guideline on preventing cardiovascular disease in women <b>with</b> graded advice."]
    with_llm = build(service.settings.storage.data_dir)
    with_llm.settings.llm.base_url = fake.url
    from workspace_app.adapters.wiring import build_guides

    guides = build_guides(with_llm.settings, with_llm.catalog, with_llm.graph, with_llm.embedder)
    mosca = document(service, "mosca")
    guide = guides.guides("Cardiology", [mosca.id])[mosca.id]
    assert guide.llm_summary == fake.replies[0]
    assert guide.summary  # the extractive one is kept beside it
    prompt = fake.requests[0]["body"]["messages"][-1]["content"]
    assert guide.recommendations[0].text in prompt
    assert guides.guides("Cardiology", [mosca.id])[mosca.id] == guide
    assert len(fake.requests) == 1  # stored: read again without asking the model


def test_a_failing_language_model_keeps_the_offline_guide(
    service: Any, build: Callable[..., Any], fake: FakeOpenAI
) -> None:
    fake.status = 500
    with_llm = build(service.settings.storage.data_dir)
    with_llm.settings.llm.base_url = fake.url
    with_llm.settings.llm.model = "another-model"
    from workspace_app.adapters.wiring import build_guides

    guides = build_guides(with_llm.settings, with_llm.catalog, with_llm.graph, with_llm.embedder)
    syncope = document(service, "shen")
    guide = guides.guides("Cardiology", [syncope.id])[syncope.id]
    assert guide.llm_summary is None and guide.summary


def test_a_chinese_summary_quotes_no_section_number(tmp_path: Path, build: Callable[..., Any],
                                                     excerpt: Callable[..., Path]) -> None:
    """zh-acute-af-ed-2024 keeps a heading with its paragraph ('2.2.2. 综合评估 在纠正与稳定…'): the summary quotes
    the sentence without the heading's number and title."""
    import re

    from workspace_app.text.sentences import split_sentences

    made = build(tmp_path / "data")
    workspace = made.workspaces.create("Emergency")
    assert made.documents.ingest(workspace.id, excerpt("zh-acute-af-ed-2024.pdf", 1, 3)).status == "ready"
    source = made.documents.list("Emergency")[0]
    summary = made.guides.guides("Emergency", [source.id])[source.id].summary
    sentences = [span.text for span in split_sentences(summary)]
    assert len(sentences) >= 2
    assert any(s.startswith("在纠正与稳定血流动力学状态的同时") for s in sentences)  # the sentence stays, its heading goes
    assert not any(re.match(r"\d+(\.\d+)+", s) for s in sentences)
    assert not re.search(r"\d+\.\d+\.\d+|综合评估 ", summary)


def test_a_heading_fused_to_a_sentence_is_cut_off_or_the_sentence_left_out() -> None:
    from workspace_app.documents.guide import without_section_heading

    assert without_section_heading("2.2.2. 综合评估 在纠正与稳定血流动力学状态的同时，全面询问病史。") == (
        "在纠正与稳定血流动力学状态的同时，全面询问病史。"
    )
    assert without_section_heading("3.2 在纠正与稳定血流动力学状态的同时，全面询问病史。") == ""  # no end to cut at
    assert without_section_heading("2.2.2 Comprehensive assessment In addition to the ECG, a history is taken.") == ""
    assert without_section_heading("如前所述（见 2.2.2 节），应全面询问病史。") == ""
    for kept in ("风险增加2.2 倍，且差异显著。", "Warfarin 2.5 mg daily is reasonable in these patients."):
        assert without_section_heading(kept) == kept
