"""A passage selected in the viewer saved as a note: the note cites the document, the page and the quoted text
(with the selection's boxes), survives reopening the workspace, and bad selections are refused in plain words."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import DocumentNotFoundError, WorkspaceError
from workspace_app.models.documents import Rect

QUOTE = "Carotid sinus massage is a useful\n  test"


@pytest.fixture
def workspace(tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path]) -> tuple[Path, str]:
    """A workspace holding pages 7-8 of the syncope guideline; its data dir and the document's id."""
    made = build(tmp_path / "data")
    made.workspaces.create("Cardiology")
    report = made.documents.ingest("Cardiology", excerpt("shen-2017-syncope.pdf", 7, 8), "syncope.pdf")
    assert report.status == "ready"
    return tmp_path / "data", made.documents.list("Cardiology")[0].id


def test_a_saved_passage_is_a_note_citing_its_page_and_quote(workspace: tuple[Path, str], build: Callable[..., Any]) -> None:
    data, document_id = workspace
    boxes = (Rect(2, 50, 100, 300, 112), Rect(1, 0, 0, 10, 10))
    note = build(data).notes.save_passage("Cardiology", document_id, 2, QUOTE, boxes)
    assert note.title == "Passage from syncope.pdf, p. 2"

    [kept] = build(data).notes.list_notes("Cardiology")  # reopened: the note and its citation were stored
    assert kept.id == note.id and kept.answer is not None
    [citation] = kept.answer.citations
    assert (citation.document, citation.document_id, citation.page_start, citation.page_end) == (
        "syncope.pdf", document_id, 2, 2)
    assert citation.quote == "Carotid sinus massage is a useful test", "whitespace of the selection is folded"
    assert citation.rects == (Rect(2, 50, 100, 300, 112),), "only the boxes on the cited page are kept"
    assert kept.answer.text == "“Carotid sinus massage is a useful test” [1]"
    markdown = build(data).notes.note_markdown("Cardiology", note.id)
    assert "Carotid sinus massage is a useful test" in markdown and "syncope.pdf" in markdown


def test_bad_selections_are_refused(workspace: tuple[Path, str], build: Callable[..., Any]) -> None:
    data, document_id = workspace
    notes = build(data).notes
    with pytest.raises(WorkspaceError, match="Select some text"):
        notes.save_passage("Cardiology", document_id, 1, " \n ")
    with pytest.raises(WorkspaceError, match="Page 9 is not a page"):
        notes.save_passage("Cardiology", document_id, 9, QUOTE)
    with pytest.raises(DocumentNotFoundError):
        notes.save_passage("Cardiology", "no-such-document", 1, QUOTE)
    assert notes.list_notes("Cardiology") == []
