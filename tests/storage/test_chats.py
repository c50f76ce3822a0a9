"""Chats, their messages and notes in the catalog, on SQLite and on PostgreSQL (`catalog_store`, tests/catalogs.py):
persisted across reopen, cascade with their workspace; the SQLite notes migration."""

from __future__ import annotations

import json
from pathlib import Path

from catalogs import CatalogStore

from workspace_app.models.answers import Answer, Citation
from workspace_app.models.documents import Rect
from workspace_app.storage.sqlite.catalog import SqliteCatalog


def answer(question: str) -> Answer:
    citation = Citation(
        n=1, chunk_id="c-1", document="doc <b>.pdf", document_id="d1", page_start=3, page_end=3, section="2 > 2.1",
        quote="A quote with [a link](http://x).", rects=(Rect(3, 1.0, 2.0, 3.0, 4.0),),
        chunk_rects=(Rect(3, 1.0, 2.0, 30.0, 40.0),), score=0.9, recommendation_class="IIa", evidence_level="B-NR",
    )
    return Answer(question, "A quote with [a link](http://x). [1]", [citation], True, False, 0.7, "en",
                  {"total": 12.5}, "disclaimer", unsupported=[], documents=["d1"])


def test_chats_messages_and_notes_survive_reopening(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    workspace = catalog.create_workspace("W")
    chat = catalog.create_chat(workspace.id, "First")
    catalog.add_message(chat.id, "q1", answer("q1"))
    catalog.add_message(chat.id, "q2", answer("q2"))
    catalog.add_note(workspace.id, "kept", answer("q1"))
    catalog.rename_chat(chat.id, "Renamed")
    catalog.close()

    reopened = catalog_store.open()
    [found] = reopened.list_chats(workspace.id)
    assert found.title == "Renamed"
    messages = reopened.list_messages(chat.id)
    assert [m.position for m in messages] == [1, 2] and [m.question for m in messages] == ["q1", "q2"]
    assert messages[0].answer == answer("q1"), "answers round-trip with citations and rectangles"
    [note] = reopened.list_notes(workspace.id)
    assert note.title == "kept" and note.answer.citations[0].chunk_rects == (Rect(3, 1.0, 2.0, 30.0, 40.0),)
    reopened.close()


def test_deleting_a_chat_or_the_workspace_removes_what_belongs_to_it(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
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


def test_an_answer_is_saved_once_per_chat_message_and_notes_can_be_edited(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    workspace = catalog.create_workspace("W")
    first = catalog.add_note(workspace.id, "q1", answer("q1"), message_id="m1")
    again = catalog.add_note(workspace.id, "q1 again", answer("q1"), message_id="m1")
    own = catalog.add_note(workspace.id, "Mine", None, body="**bold** idea")
    assert again.id == first.id and again.title == "q1", "a second save returns the note already saved"
    catalog.update_note(own.id, "Mine, edited", "- a list")
    notes = {note.id: note for note in catalog.list_notes(workspace.id)}
    assert len(notes) == 2 and notes[own.id].answer is None
    assert (notes[own.id].title, notes[own.id].body) == ("Mine, edited", "- a list")
    assert notes[first.id].message_id == "m1" and notes[first.id].answer == answer("q1")
    catalog.close()


def test_notes_of_the_schema_before_own_notes_are_kept_and_titled_by_the_standalone_question(tmp_path: Path) -> None:
    from workspace_app.storage.sqlite.database import Database
    from workspace_app.storage.sqlite.migrations import MIGRATIONS

    path = tmp_path / "catalog.sqlite"
    old = Database(path)
    old.migrate(MIGRATIONS[:8])
    follow_up = answer("And what about those aged 65 or older?")
    follow_up.standalone_question = "Which statin for women? And what about those aged 65 or older?"
    with old.transaction() as db:
        db.execute("INSERT INTO workspaces VALUES ('w1', 'Old', '2024-01-01T00:00:00+00:00')")
        for note_id, saved in (("n1", answer("q1")), ("n2", follow_up)):
            db.execute(
                "INSERT INTO notes (id, workspace_id, title, answer, created_at) VALUES (?, 'w1', ?, ?, '2024-01-02')",
                (note_id, saved.question, json.dumps(saved.to_record())),
            )
    old.close()
    catalog = SqliteCatalog(path)
    notes = {note.id: note for note in catalog.list_notes("w1")}
    assert notes["n1"].title == "q1" and notes["n1"].answer == answer("q1")
    assert notes["n2"].title == follow_up.standalone_question and notes["n2"].body == ""
    catalog.close()
