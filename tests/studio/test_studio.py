"""Studio outputs (issue 29 item 5) on real guideline pages: a briefing quotes each key recommendation with its
grade and page and cites it where the PDF prints it; a FAQ answers the checked suggested questions from their
source; citations are numbered once across an output; an output is kept as a note and exported; the CLI prints it."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.answer.export import nested_headings
from workspace_app.errors import WorkspaceError
from workspace_app.studio.service import note_text
from workspace_app.text.terms import loose

WORKSPACE = "Prevention"
MARKER = re.compile(r"\[(\d{1,3})\]")


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> Any:
    """Two graded guideline excerpts: the women's prevention guideline (pp. 10-11) and the lifestyle one (pp. 10-13)."""
    service = build(tmp_path_factory.mktemp("studio") / "data")
    service.workspaces.create(WORKSPACE)
    for name, first, last in (("mosca-2011-women-cvd.pdf", 10, 11), ("eckel-2013-lifestyle.pdf", 10, 13)):
        assert service.documents.ingest(WORKSPACE, excerpt(name, first, last), name).status == "ready"
    return service


def markers(body: str) -> list[int]:
    return [int(n) for n in MARKER.findall(body)]


def assert_numbered_once(output: Any) -> None:
    """Citations run 1..k, each passage once, and every marker in the text names one of them."""
    citations = output.answer.citations
    assert [c.n for c in citations] == list(range(1, len(citations) + 1))
    assert len({(c.chunk_id, c.quote) for c in citations}) == len(citations), "a passage quoted twice keeps one number"
    assert set(markers(output.body)) == {c.n for c in citations}


def test_briefing_quotes_each_key_recommendation_with_its_grade_page_and_citation(app: Any) -> None:
    output = app.studio.build(WORKSPACE, "briefing")
    ws = app.workspaces.get(WORKSPACE)
    guides = app.guides.guides(ws.id)
    recommendations = [(d, r) for d, g in guides.items() for r in g.recommendations]
    assert len(recommendations) >= 4, "both excerpts print graded recommendations"
    assert output.items == 2 and output.left_out == 0
    assert_numbered_once(output)
    by_number = {c.n: c for c in output.answer.citations}
    lines = output.body.splitlines()
    for document_id, recommendation in recommendations:
        line = next(x for x in lines if x.startswith(f"- {note_text(recommendation.text)} ("))
        assert f"p. {recommendation.page})" in line
        assert f"LOE {recommendation.evidence_level}" in line or not recommendation.evidence_level
        citation = by_number[markers(line)[-1]]  # the line's own marker, at its end
        assert citation.chunk_id == recommendation.chunk_id and citation.document_id == document_id
        assert citation.page_start <= recommendation.page <= citation.page_end
        assert citation.rects, "the recommendation is located on its PDF page, to be highlighted"
        assert (citation.recommendation_class, citation.evidence_level) == (
            recommendation.recommendation_class, recommendation.evidence_level), "its own grading, not its chunk's"
        chunk = app.catalog.get_chunks([citation.chunk_id])[citation.chunk_id]
        assert loose(citation.quote)[:40] in loose(chunk.text)
    for document in app.documents.list(WORKSPACE):
        assert f"#### {note_text(document.name)}" in output.body


def test_faq_answers_the_suggested_questions_from_their_source(app: Any) -> None:
    ws = app.workspaces.get(WORKSPACE)
    asked = app.suggestions.suggest(ws.id, "hybrid", limit=app.studio.faq_questions)
    seen: list[tuple[int, int]] = []
    output = app.studio.build(WORKSPACE, "faq", report=lambda done, total: seen.append((done, total)))
    assert asked and output.items == len(asked)
    assert seen == [(i, len(asked)) for i in range(len(asked))], "progress after each question"
    answered = [q for q in asked if f"**{note_text(q.question)}**" in output.body]
    assert len(answered) == output.items - output.left_out >= 1
    assert_numbered_once(output)
    cited = {c.document_id for c in output.answer.citations}
    assert cited <= {q.document_id for q in asked}, "each question is answered from the source it came from"


def test_an_output_is_kept_as_a_note_and_exported_with_its_citations(app: Any) -> None:
    output = app.studio.build(WORKSPACE, "briefing")
    note = app.studio.save(WORKSPACE, output)
    kept = next(n for n in app.notes.list_notes(WORKSPACE) if n.id == note.id)
    assert kept.title == f"Briefing: {WORKSPACE}" and kept.body == output.body.strip()
    assert kept.answer is not None and kept.answer.answerer == "studio"
    assert [c.quote for c in kept.answer.citations] == [c.quote for c in output.answer.citations]
    exported = app.notes.export_notes(WORKSPACE)
    assert nested_headings(output.body.strip(), 2) in exported and f"1. {output.answer.citations[0].document}" in exported
    cited = output.answer.citations[0].document_id
    assert app.chats.source_uses(WORKSPACE, cited).notes >= 1, "removing a cited source warns about the note"
    markdown = app.studio.markdown(output)
    assert markdown.startswith(f"# Briefing: {WORKSPACE}\n\n## ") and "**Citations**" in markdown


def test_a_note_added_as_a_source_is_read_back_into_the_workspace(app: Any, tmp_path: Path) -> None:
    output = app.studio.build(WORKSPACE, "briefing")
    note = app.studio.save(WORKSPACE, output)
    markdown = app.notes.note_markdown(WORKSPACE, note.id)
    assert markdown.startswith(f"# Briefing: {WORKSPACE}\n\n## ") and "**Citations**" in markdown
    report = app.documents.submit(WORKSPACE, markdown.encode("utf-8"), "briefing-note.md")
    assert report.status == "queued", report.error
    again = app.documents.submit(WORKSPACE, markdown.encode("utf-8"), "briefing-note.md")
    assert again.status == "duplicate" and "already in this workspace" in (again.error or "")
    app.documents.remove(WORKSPACE, report.document_id)


def test_an_unknown_output_or_workspace_is_a_clear_error(app: Any) -> None:
    with pytest.raises(WorkspaceError, match="no studio output 'poster'"):
        app.studio.build(WORKSPACE, "poster")
    with pytest.raises(WorkspaceError, match="no workspace 'Nowhere'"):
        app.studio.build("Nowhere", "faq")


@pytest.mark.parametrize(("source", "shown"), [
    ("costs $5 and $10", "costs \\$5 and \\$10"),  # Streamlit math
    ("see :red[this] and :material/home:", "see \\:red[this] and \\:material/home:"),  # Streamlit directives
    ("*not bold* <b>x</b>", "\\*not bold* \\<b>x\\</b>"),  # an asterisk that cannot open stays
    ("LDL-C <70 mg/dL [12]", "LDL-C <70 mg/dL [12]"),  # what forms nothing stays; a marker is kept
    ("Class I: ratio 2:1", "Class I: ratio 2:1"),
])
def test_source_text_in_a_note_shows_as_written(source: str, shown: str) -> None:
    assert note_text(source) == shown


@pytest.mark.slow
def test_cli_prints_an_output_and_saves_it(
    tmp_path: Path, cli: Callable[..., Any], excerpt: Callable[..., Path]
) -> None:
    data = tmp_path / "data"
    cli(data, "workspace", "create", "W")
    assert cli(data, "ingest", "-w", "W", excerpt("mosca-2011-women-cvd.pdf", 10, 11)).returncode == 0
    shown = cli(data, "studio", "briefing", "-w", "W", "--json", "--save")
    assert shown.returncode == 0, shown.stderr
    result = json.loads(shown.stdout)
    assert result["kind"] == "briefing" and result["note_id"] and result["citations"]
    assert result["markdown"].startswith("# Briefing: W\n") and "(Class I, LOE" in result["markdown"]
    assert "briefing: 0/1" in shown.stderr, "progress on stderr"
    plain = cli(data, "studio", "briefing", "-w", "W")
    assert plain.returncode == 0 and plain.stdout.startswith("# Briefing: W\n") and "**Citations**" in plain.stdout
    missing = cli(data, "studio", "faq", "-w", "Nowhere")
    assert missing.returncode == 2 and "no workspace 'Nowhere'" in missing.stderr
