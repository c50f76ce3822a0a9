"""Migration 9 on a real catalog made by the previous schema, and guides / suggested questions stored in it."""

from __future__ import annotations

from pathlib import Path

from workspace_app.models.guides import GuideEntity, GuideRecommendation, SourceGuide, SuggestedQuestion
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.database import Database
from workspace_app.storage.sqlite.keywords import create_keyword_table
from workspace_app.storage.sqlite.migrations import MIGRATIONS

GUIDE = SourceGuide(
    document_id="doc-ready", summary="Warfarin keeps the INR at 2.0 to 3.0 <b>in</b> women with AF.",
    recommendations=(GuideRecommendation("Warfarin should be used.", "I", "A", 11, "Warfarin: AF", "doc-ready-00001"),),
    entities=(GuideEntity("warfarin", "drug", 12),), topics=("warfarin", "atrial fibrillation"), llm_summary=None,
)


def old_catalog(path: Path) -> None:
    """A catalog as the schema before guides left it, with a ready and a failed document."""
    database = Database(path)
    database.migrate(MIGRATIONS[:8])
    with database.transaction() as db:
        db.execute("INSERT INTO workspaces (id, name, created_at) VALUES ('ws', 'Cardiology', '2026-11-01')")
        create_keyword_table(db, "ws")
        for document_id, status, error in (("doc-ready", "ready", None), ("doc-failed", "failed", "Timed out.")):
            db.execute(
                "INSERT INTO documents (id, workspace_id, name, sha256, size_bytes, media_type, status, stage, error, "
                "added_at, updated_at) VALUES (?, 'ws', ?, ?, 10, 'application/pdf', ?, ?, ?, '2026-11-01', '2026-11-01')",
                (document_id, f"{document_id}.pdf", document_id, status, status, error),
            )
    database.close()


def test_the_migration_keeps_existing_documents_and_their_retry(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    old_catalog(path)
    catalog = SqliteCatalog(path)
    documents = {d.id: d for d in catalog.list_documents("ws")}
    assert set(documents) == {"doc-ready", "doc-failed"}
    assert documents["doc-failed"].status == "failed" and documents["doc-failed"].retryable  # as before: Retry
    assert documents["doc-ready"].stage_total == 0
    assert catalog.get_guides(["doc-ready"], "guide-v1") == {}  # made on first read by the core
    catalog.close()


def test_guides_are_stored_per_version_reread_and_go_with_their_document(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    old_catalog(path)
    catalog = SqliteCatalog(path)
    catalog.save_guide("ws", GUIDE, "guide-v1")
    catalog.save_guide("ws", SourceGuide("doc-gone", "x", (), ()), "guide-v1")  # a removed document keeps none
    catalog.close()

    reopened = SqliteCatalog(path)
    assert reopened.get_guides(["doc-ready", "doc-gone"], "guide-v1") == {"doc-ready": GUIDE}
    assert reopened.get_guides(["doc-ready"], "guide-v2") == {}
    reopened.delete_document("doc-ready")
    reopened.save_guide("ws", GUIDE, "guide-v1")
    assert reopened.get_guides(["doc-ready"], "guide-v1") == {}
    reopened.close()


def test_suggestions_are_kept_per_document_under_the_key_that_checked_them(tmp_path: Path) -> None:
    path = tmp_path / "catalog.sqlite"
    old_catalog(path)
    catalog = SqliteCatalog(path)
    questions = [SuggestedQuestion("What INR should warfarin target?", "doc-ready", "doc-ready.pdf", "recommendation")]
    catalog.save_document_suggestions("doc-ready", "key-a", questions)
    catalog.save_document_suggestions("doc-ready", "key-b", [])
    catalog.save_document_suggestions("doc-gone", "key-a", questions)  # a removed document keeps none
    catalog.close()

    reopened = SqliteCatalog(path)
    assert reopened.get_document_suggestions({"doc-ready": "key-a", "doc-gone": "key-a"}) == {"doc-ready": questions}
    assert reopened.get_document_suggestions({"doc-ready": "key-b"}) == {"doc-ready": []}
    assert reopened.get_document_suggestions({"doc-ready": "key-c", "doc-failed": "key-a"}) == {}
    reopened.delete_document("doc-ready")
    assert reopened.get_document_suggestions({"doc-ready": "key-a"}) == {}
    reopened.close()
