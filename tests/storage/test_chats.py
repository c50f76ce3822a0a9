"""Chats, their messages and notes in the SQLite catalog: persisted across reopen, cascade with their workspace."""

from __future__ import annotations

from pathlib import Path

from storage.sqlite.catalog import SqliteCatalog
from workspace_app.models.answers import Answer, Citation
from workspace_app.models.documents import Rect


def answer(question: str) -> Answer:
    citation = Citation(
        n=1, chunk_id="c-1", document="doc <b>.pdf", document_id="d1", page_start=3, page_end=3, section="2 > 2.1",
        quote="A quote with [a link](http://x).", rects=(Rect(3, 1.0, 2.0, 3.0, 4.0),),
        chunk_rects=(Rect(3, 1.0, 2.0, 30.0, 40.0),), score=0.9, recommendation_class="IIa", evidence_level="B-NR",
    )
    return Answer(question, "A quote with [a link](http://x). [1]", [citation], True, False, 0.7, "en",
                  {"total": 12.5}, "disclaimer", unsupported=[], documents=["d1"])


def test_chats_messages_and_notes_survive_reopening(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    catalog = SqliteCatalog(path)
    workspace = catalog.create_workspace("W")
    chat = catalog.create_chat(workspace.id, "First")
    catalog.add_message(chat.id, "q1", answer("q1"))
    catalog.add_message(chat.id, "q2", answer("q2"))
    catalog.add_note(workspace.id, "kept", answer("q1"))
    catalog.rename_chat(chat.id, "Renamed")
    catalog.close()

    reopened = SqliteCatalog(path)
    [found] = reopened.list_chats(workspace.id)
    assert found.title == "Renamed"
    messages = reopened.list_messages(chat.id)
    assert [m.position for m in messages] == [1, 2] and [m.question for m in messages] == ["q1", "q2"]
    assert messages[0].answer == answer("q1"), "answers round-trip with citations and rectangles"
    [note] = reopened.list_notes(workspace.id)
    assert note.title == "kept" and note.answer.citations[0].chunk_rects == (Rect(3, 1.0, 2.0, 30.0, 40.0),)
    reopened.close()


def test_deleting_a_chat_or_the_workspace_removes_what_belongs_to_it(tmp_path: Path) -> None:
    catalog = SqliteCatalog(tmp_path / "catalog.sqlite")
    workspace = catalog.create_workspace("W")
    other = catalog.create_workspace("Other")
    one, two = catalog.create_chat(workspace.id, "one"), catalog.create_chat(workspace.id, "two")
    kept = catalog.create_chat(other.id, "kept")
    catalog.add_message(one.id, "q", answer("q"))
    catalog.add_note(workspace.id, "n", answer("q"))
    catalog.delete_chat(one.id)
    assert catalog.list_messages(one.id) == [] and [c.id for c in catalog.list_chats(workspace.id)] == [two.id]
    catalog.delete_workspace(workspace.id)
    assert catalog.list_chats(workspace.id) == [] and catalog.list_notes(workspace.id) == []
    assert [c.id for c in catalog.list_chats(other.id)] == [kept.id]
    catalog.close()
