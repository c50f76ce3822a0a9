"""The offline extractive answerer on the dev guideline questions: quotes cited at the gold pages, every sentence
verified, refusals (in the question's language) on the unanswerable ones, source scope respected."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.answer.phrases import REFUSALS
from workspace_app.answer.plan import Planner
from workspace_app.answer.quotes import clean_quote
from workspace_app.app import App
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, AnswerLine
from workspace_app.models.documents import Workspace
from workspace_app.retrieval.scope import Scope, answer_scope

ARNETT = "arnett-2014-guideline-strategies.pdf"
CHINESE = "zh-acute-af-ed-2024.pdf"
EVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "eval" / "guidelines_dev.jsonl"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], guidelines: Path,
            excerpt: Callable[..., Path]) -> App:
    """arnett-2014 (6 pages) and pages 1-8 of the Chinese AF guideline (its dev questions cite pages 1-8)."""
    service = build(tmp_path_factory.mktemp("extractive") / "data")
    service.workspaces.create("Dev")
    for name, path in {ARNETT: guidelines / ARNETT, CHINESE: excerpt(CHINESE, 1, 8)}.items():
        assert service.documents.ingest("Dev", path, name).status == "ready"
    return service


def dev_questions(docs: set[str] | None) -> list[dict[str, Any]]:
    rows = [json.loads(line) for line in EVAL.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [r for r in rows if (r["doc"] in docs if docs else r["kind"] == "unanswerable")]


def on_gold_page(citation: Any, row: dict[str, Any]) -> bool:
    return citation.document == row["doc"] and any(citation.page_start <= p <= citation.page_end for p in row["pages"])


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_answers_quote_the_gold_pages_and_every_sentence_is_cited(app: App) -> None:
    rows = dev_questions({ARNETT, CHINESE})
    assert len(rows) == 13
    first = any_hit = refused = 0
    misses = []
    for row in rows:
        answer = app.answers.ask("Dev", row["question"])
        if answer.refused:
            refused += 1
            misses.append((row["id"], "refused"))
            continue
        assert answer.answerer == "extractive" and answer.grounded and answer.language == row["lang"]
        first += on_gold_page(answer.citations[0], row)
        if not on_gold_page(answer.citations[0], row):
            misses.append((row["id"], answer.citations[0].page_start, answer.text[:80]))
        any_hit += any(on_gold_page(c, row) for c in answer.citations)
        for paragraph in answer.text.split("\n\n"):
            assert re.search(r"\[\d+\]", paragraph), f"uncited sentence: {paragraph}"
        for citation in answer.citations:
            chunk = app.catalog.get_chunks([citation.chunk_id])[citation.chunk_id]
            assert flat(citation.quote) in flat(clean_quote(chunk.text)), "quotes are verbatim but for reference marks"
            assert citation.rects and citation.chunk_rects
        assert [c.n for c in answer.citations] == list(range(1, len(answer.citations) + 1))
    assert refused <= 2, f"false refusals (the benchmark holds the 0.05 target on the five dev PDFs): {misses}"
    # The targets are held by `python -m bench.answers`; here: a sane floor.
    assert first / len(rows) >= 0.7 and any_hit / len(rows) >= 0.75, (first, any_hit, misses)


def test_a_streamed_answer_gives_each_line_before_its_citations_are_located(app: App) -> None:
    """`ask_stream(lines=True)`: the lines of a quoted answer, then the same Answer `ask` gives; the first line is out
    while nothing has been located in a document yet (the generator stops there until the client reads on)."""
    source = app.answers.source
    located: list[str] = []

    class Recorded:
        def locate(self, *args: Any) -> Any:
            located.append(args[2])
            return source.locate(*args)

    rows = [r for r in dev_questions({ARNETT, CHINESE})][:4]
    app.answers.source = Recorded()  # type: ignore[assignment]
    try:
        for row in rows:
            located.clear()
            events = app.answers.ask_stream("Dev", row["question"], mode="hybrid", lines=True)
            first = next(events)
            if isinstance(first, Answer):  # a refusal has no lines
                assert first.refused
                continue
            assert isinstance(first, AnswerLine) and first.index == 0 and located == []
            rest = list(events)
            answer = rest[-1]
            assert isinstance(answer, Answer) and located
            lines = [first, *rest[:-1]]
            assert all(isinstance(line, AnswerLine) for line in lines)
            assert first.joiner.join(line.text for line in lines) == answer.text  # type: ignore[union-attr]
            assert {line.support_note for line in lines} == {answer.support_note}  # type: ignore[union-attr]
            assert answer.text == app.answers.ask("Dev", row["question"], mode="hybrid").text
    finally:
        app.answers.source = source


def test_a_question_naming_two_sources_cites_each(app: App) -> None:
    question = (
        "How does the 2014 paper on guideline strategies say multiple chronic conditions affect older patients, "
        "and what does the 2024 acute AF guideline say about assessing them?"
    )
    answer = app.answers.ask("Dev", question)
    assert not answer.refused
    assert {c.document for c in answer.citations} == {ARNETT, CHINESE}, answer.text


def test_unanswerable_questions_are_refused_in_their_language(app: App) -> None:
    rows = dev_questions(None)
    refused = 0
    for row in rows:
        answer = app.answers.ask("Dev", row["question"])
        if answer.refused:
            refused += 1
            assert answer.text == REFUSALS[row["lang"]] and answer.citations == [] and answer.language == row["lang"]
            assert answer.disclaimer
    assert refused >= 8, f"{refused} of {len(rows)} refused"


def test_support_level_follows_the_confident_threshold(app: App) -> None:
    """An answer below the confident threshold says the sources only partly cover the question; a refusal has none."""
    question = "What proportion of Medicare beneficiaries live with two or more chronic conditions?"
    kept = app.answers.confident_threshold
    try:
        app.answers.confident_threshold = 1.01  # nothing is that sure
        partial = app.answers.ask("Dev", question)
        app.answers.confident_threshold = 0.0
        confident = app.answers.ask("Dev", question)
    finally:
        app.answers.confident_threshold = kept
    assert not partial.refused and partial.support == "partial"
    assert partial.support_note.startswith("The sources only partly cover this question")
    assert partial.to_json()["support_note"] == partial.support_note
    assert confident.support == "confident" and confident.support_note == ""
    assert 0.0 <= partial.confidence <= 1.0
    refusal = app.answers.ask("Dev", "What dose of ivabradine is recommended for postural tachycardia in children?")
    assert refusal.refused and refusal.support == "none"


def test_answer_json_has_the_public_shape(app: App) -> None:
    answer = app.answers.ask("Dev", "What proportion of Medicare beneficiaries live with two or more chronic conditions?")
    data = answer.to_json()
    assert list(data) == [
        "question", "answer", "refused", "grounded", "confidence", "support", "support_note", "language", "citations",
        "mode", "entities", "figures", "timings_ms",
    ]
    assert data["mode"] == "naive" and isinstance(data["entities"], list)
    citation = data["citations"][0]
    assert list(citation) == [
        "n", "chunk_id", "document", "document_id", "page_start", "page_end", "section", "quote", "rects", "score",
        "recommendation_class", "evidence_level", "level", "patient_id", "event_id",
    ]
    assert set(citation["rects"][0]) == {"page", "x0", "y0", "x1", "y1"}
    assert {"retrieve", "answer", "total"} <= set(data["timings_ms"])
    assert 0.0 <= data["confidence"] <= 1.0


def test_answers_come_only_from_the_chosen_sources(app: App) -> None:
    question = "What proportion of Medicare beneficiaries live with two or more chronic conditions?"
    answer = app.answers.ask("Dev", question, documents=[CHINESE])
    assert answer.refused or all(c.document == CHINESE for c in answer.citations)
    app.documents.set_included("Dev", ARNETT, False)
    try:
        unticked = app.answers.ask("Dev", question)
        assert unticked.refused or all(c.document == CHINESE for c in unticked.citations)
        app.documents.set_included("Dev", CHINESE, False)
        with pytest.raises(WorkspaceError, match="No ready sources"):
            app.answers.ask("Dev", question)
    finally:
        app.documents.set_included("Dev", ARNETT, True)
        app.documents.set_included("Dev", CHINESE, True)


def test_follow_up_offline_borrows_the_previous_question(app: App) -> None:
    from workspace_app.models.answers import Turn

    history = [Turn("How many Medicare beneficiaries with heart failure were included in the 2012 CMS data?", "…")]
    answer = app.answers.ask("Dev", "And what about those with diabetes?", history)
    assert answer.standalone_question and "heart failure" in answer.standalone_question


def test_bad_questions_and_modes_are_refused_with_a_message(app: App) -> None:
    with pytest.raises(WorkspaceError, match="Type a question"):
        app.answers.ask("Dev", "   ")
    with pytest.raises(WorkspaceError, match="mode 'deep'"):
        app.answers.ask("Dev", "What is AF?", mode="deep")


def test_a_part_naming_a_source_is_read_within_it(app: App) -> None:
    """A part naming the Chinese guideline weighs its words by their rarity there: its topic (房颤) and the words
    naming it (急诊, 中国) make no sentence of it look like the answer; what the part asks for does."""
    scope = answer_scope(app.catalog, "Dev", None)
    zh = next(d for d, name in scope.searched_names.items() if name == CHINESE)
    question = "Which comorbidities does the AHA/ACC/HHS paper name, and which drugs does the 2024 Chinese emergency AF guideline advise for rate control?"
    plan = app.answers.planner.plan(question, scope, "hybrid")
    reading = app.answers.reader.read(question, scope, [], parts=plan.part_texts)
    asked = reading.parts[1].coverage
    assert scope.narrowed([zh]).chunk_total == next(d.chunks for d in app.documents.list("Dev") if d.id == zh) < scope.chunk_total
    topic_only = "中国急诊医学专家对急性房颤的急诊管理达成共识。"
    rate_control = "心室率控制的药物首选β受体阻滞剂或非二氢吡啶类钙通道阻滞剂。"
    assert asked.of(rate_control) > 2 * asked.of(topic_only)


def test_a_question_whose_parts_name_their_sources_is_answered_part_by_part(app: App) -> None:
    """Each part is answered in the source it names, the second by its title's words ("AHA/ACC/HHS", in no file
    name), without the words naming it; the answer quotes each source, in the order asked."""
    question = (
        "How does the emergency AF guideline define paroxysmal atrial fibrillation? "
        "Which comorbidities does the AHA/ACC/HHS paper say may be underreported?"
    )
    answer = app.answers.ask("Dev", question)
    assert not answer.refused, answer.text
    documents = [c.document for c in answer.citations]
    assert documents[0] == CHINESE and ARNETT in documents, answer.text
    assert "阵发性房颤" in answer.citations[0].quote and answer.citations[0].page_start == 2
    assert any("underreported" in c.quote for c in answer.citations if c.document == ARNETT), answer.text


def test_a_question_of_two_questions_naming_no_source_is_answered_part_by_part(app: App) -> None:
    """Two questions asked as one, each answered by another source, name neither: their evidence is apart (each
    part's best passage in another source), so each is answered from its own evidence, as if asked alone
    (bench.compound measures it on pairs of the large sets' questions)."""
    first = "Which comorbidities does the paper say may be underreported?"
    second = "阵发性房颤如何定义？"
    scope = answer_scope(app.catalog, "Dev", None)
    plan = app.answers.planner.plan(f"{first} {second}", scope, "hybrid")
    assert len(plan.parts) == 2 and not any(part.naming for part in plan.parts) and plan.in_parts
    assert not plan.by_part and app.answers.evidence.gather(plan, {}).apart
    answer = app.answers.ask("Dev", f"{first} {second}", mode="hybrid")
    assert not answer.refused, answer.text
    alone = [app.answers.ask("Dev", question, mode="hybrid").citations[0] for question in (first, second)]
    assert {c.document for c in alone} == {ARNETT, CHINESE}
    cited = {(c.document, c.quote) for c in answer.citations}
    assert all((c.document, c.quote) in cited for c in alone), answer.text


def test_a_question_in_parts_is_planned_once_and_each_part_gathered_in_the_source_it_names(app: App) -> None:
    """The plan splits and names once; the evidence holds each part's own blocks, all from the source the part
    names, and the whole question's blocks hold each part's best ones (nothing is searched again to answer)."""
    scope = answer_scope(app.catalog, "Dev", None)
    zh = next(d for d, name in scope.searched_names.items() if name == CHINESE)
    question = ("What do the 2014 guideline strategies say about implementation tools, and which drugs does the "
                "2024 Chinese emergency AF guideline advise for rate control?")
    plan = app.answers.planner.plan(question, scope, "hybrid")
    assert len(plan.parts) == 2 and plan.parts[1].named == zh and plan.by_part
    assert "Chinese" not in plan.parts[1].asked and "rate control" in plan.parts[1].asked
    evidence = app.answers.evidence.gather(plan, {})
    assert len(evidence.parts) == 2
    for part, own in zip(plan.parts, evidence.parts, strict=True):
        assert own and {block.chunk.document_id for block in own} == {part.named}
        assert [block.n for block in own] == list(range(1, len(own) + 1))
    whole = {block.chunk.id for block in evidence.blocks}
    assert all(block.chunk.id in whole for own in evidence.parts for block in own[:3])
    answer = app.answers.ask("Dev", question, mode="hybrid")
    assert not answer.refused and {c.document_id for c in answer.citations} <= {part.named for part in plan.parts}


def test_a_part_without_a_subject_of_its_own_asks_with_the_part_before() -> None:
    """"… and does the Chinese guideline allow a lower range?" asks the Chinese guideline about the INR range the
    part before names; the words naming the source are left out of what it asks."""
    scope = Scope(Workspace("w", "W", ""), None, [], 10, {})
    plan = Planner(lambda text, _: ["zh"] if "Chinese" in text else []).plan(
        "What INR range is recommended for warfarin in atrial fibrillation, and does the Chinese guideline allow a "
        "lower range for older patients?", scope, "naive",
    )
    first, second = plan.parts
    assert first.named is None and second.named == "zh" and plan.by_part and plan.sources == ("zh",)
    assert second.asked.startswith(first.asked) and "lower range" in second.asked and "Chinese" not in second.asked
    assert plan.language == "en" and plan.standalone == plan.question


def test_the_plan_calls_the_evidence_tools_the_question_needs() -> None:
    """Passages always, the graph in a graph mode, the figure search when the question asks to see a figure: asked
    what the figure shows, without the words that only ask for a picture."""
    scope = Scope(Workspace("w", "W", ""), None, [], 10, {})
    planner = Planner(lambda text, _: [])
    plain = planner.plan("How is syncope evaluated?", scope, "naive")
    assert plain.tools == ("passages",) and plain.call("figures") is None
    assert plain.call("passages") is not None and plain.call("passages").query == "How is syncope evaluated?"
    shown = planner.plan("Show the figure of the syncope evaluation algorithm", scope, "hybrid")
    assert shown.tools == ("passages", "graph", "figures")
    assert shown.call("figures").query == "the of the syncope evaluation algorithm"
    assert planner.plan("HFpEF 的诊断流程图", scope, "naive").tools == ("passages", "figures")
