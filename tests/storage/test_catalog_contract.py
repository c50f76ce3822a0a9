"""The `Catalog` protocol's workspaces, documents and job leases, the guides repository and the vocabulary, the same
tests on SQLite and on PostgreSQL (`catalog_store`, tests/catalogs.py): what the services rely on, at the repository level;
the PostgreSQL catalog's migrations and connection errors."""

from __future__ import annotations

import time
from typing import Any

import pytest
from catalogs import CatalogStore

from workspace_app.errors import WorkspaceExistsError, WorkspaceNotFoundError
from workspace_app.ingest.pipeline import keyword_texts
from workspace_app.models.documents import Chunk, Document, Rect
from workspace_app.models.events import VocabularyEntry
from workspace_app.models.guides import GuideEntity, GuideRecommendation, SourceGuide, SuggestedQuestion


def document(workspace_id: str, doc_id: str, status: str = "ready", sha: str | None = None) -> Document:
    return Document(
        id=doc_id, workspace_id=workspace_id, name=f"{doc_id}.pdf", sha256=sha or doc_id * 4, size_bytes=10, pages=1,
        chunks=0, status=status, stage=status, progress=0.0, error=None, added_at=f"2024-01-01T00:00:{len(doc_id):02d}",
        pages_without_text=(3, 4),
    )


def chunk(doc_id: str, ordinal: int, text: str) -> Chunk:
    return Chunk(
        id=f"{doc_id}-{ordinal:05d}", document_id=doc_id, ordinal=ordinal, text=text, section="Intro", page_start=1,
        page_end=1, token_count=len(text.split()), rects=(Rect(1, 1.0, 2.0, 3.0, 4.0),),
    )


def test_workspaces_have_unique_names_counts_and_go_with_everything_in_them(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    first = catalog.create_workspace("Heart failure")
    second = catalog.create_workspace("心衰 HFpEF")
    with pytest.raises(WorkspaceExistsError):
        catalog.create_workspace("Heart failure")
    with pytest.raises(WorkspaceExistsError):
        catalog.rename_workspace(second.id, "Heart failure")
    with pytest.raises(WorkspaceNotFoundError):
        catalog.rename_workspace("missing", "Other")
    assert catalog.find_workspace(first.id) == catalog.find_workspace("Heart failure")
    assert catalog.find_workspace("nope") is None

    catalog.add_document(document(first.id, "ok"))
    catalog.add_document(document(first.id, "bad", status="failed"))
    catalog.replace_chunks("ok", first.id, [chunk("ok", 0, "syncope")], keyword_texts([chunk("ok", 0, "syncope")]))
    listed = {w.name: (w.document_count, w.failed_count) for w in catalog.list_workspaces()}
    assert listed == {"Heart failure": (2, 1), "心衰 HFpEF": (0, 0)}
    assert catalog.rename_workspace(first.id, "HF").name == "HF"

    catalog.delete_workspace(first.id)
    assert [w.name for w in catalog.list_workspaces()] == ["心衰 HFpEF"]
    assert catalog_store.scalar("SELECT COUNT(*) FROM documents") == 0
    assert catalog_store.scalar("SELECT COUNT(*) FROM chunks") == 0
    assert catalog_store.keyword_rows() == 0


def test_documents_are_found_by_id_sha_or_name_and_keep_their_state(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    other = catalog.create_workspace("Other")
    added = catalog.add_document(document(ws.id, "d1", status="queued"))
    catalog.add_document(document(other.id, "d2", status="queued", sha=added.sha256))
    assert catalog.get_document("d1") == added
    assert catalog.find_document(ws.id, added.sha256) == catalog.find_document(ws.id, "d1.pdf") == added
    assert catalog.find_document(other.id, "d1") is None
    assert catalog.count_file_references(added.sha256) == 2

    catalog.update_document(
        "d1", status="failed", stage="failed", progress=0.5, error="broken", included=False, error_retryable=0,
        pages_without_text=(7,), eta_s=None, attempt=2, next_try_at=12.5, stage_waiting=True,
    )
    again = catalog_store.open().get_document("d1")  # a second connection sees it
    state = (again.status, again.progress, again.error, again.included, again.retryable)
    assert state == ("failed", 0.5, "broken", False, False)
    assert (again.pages_without_text, again.attempt, again.next_try_at, again.stage_waiting) == ((7,), 2, 12.5, True)
    with pytest.raises(ValueError):
        catalog.update_document("d1", lease_owner="me")
    catalog.delete_document("d1")
    assert catalog.get_document("d1") is None and catalog.count_file_references(added.sha256) == 1


def test_a_lease_has_one_holder_heartbeats_and_a_cooperative_cancel(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1", status="queued"))
    catalog.add_document(document(ws.id, "d2", status="queued"))

    assert catalog.claim_document("d1", "a", stale_after_s=30)
    assert not catalog.claim_document("d1", "b", stale_after_s=30)
    assert catalog.get_document("d1").held_by == "a" and catalog.get_document("d1").status == "running"
    time.sleep(0.05)
    assert catalog.claim_document("d1", "b", stale_after_s=0.01)  # a's heartbeat is old now
    assert catalog.renew_lease("d1", "a") == "lost"
    assert catalog.renew_lease("d1", "b") == "ok"
    jobs = {job.document_id: job for job in catalog.list_jobs()}
    assert set(jobs) == {"d1", "d2"} and jobs["d1"].lease_owner == "b" and 0 <= (jobs["d1"].lease_age_s or 0) < 30

    assert catalog.request_cancel("d2") == "cancelled"  # queued, nobody holds it: at once
    assert catalog.request_cancel("d1") == "running"  # held: the holder is asked
    assert catalog.cancel_requested("d1") and catalog.renew_lease("d1", "b") == "cancel"
    assert not catalog.release_lease("d1", "a", status="cancelled")
    assert catalog.release_lease("d1", "b", status="cancelled", stage="cancelled", cancel_requested=0)
    assert catalog.list_jobs() == []

    assert catalog.requeue_document("d1", ["cancelled", "failed"])
    assert not catalog.requeue_document("d1", ["failed"])
    requeued = catalog.get_document("d1")
    assert (requeued.status, requeued.held_by, requeued.cancel_requested) == ("queued", None, False)
    assert catalog.request_cancel("missing") == "removed"


def test_guides_and_suggestions_are_kept_per_version_and_key_and_go_with_their_document(
    catalog_store: CatalogStore,
) -> None:
    catalog = catalog_store.open()
    ws = catalog.create_workspace("W")
    catalog.add_document(document(ws.id, "d1"))
    catalog.add_document(document(ws.id, "d2"))
    guide = SourceGuide(
        document_id="d1", summary="Warfarin keeps the INR at 2.0 to 3.0 <b>in</b> women with AF.",
        recommendations=(GuideRecommendation("Warfarin should be used.", "I", "A", 11, "Warfarin: AF", "d1-00001"),),
        entities=(GuideEntity("warfarin", "drug", 12),), topics=("warfarin", "心房颤动"), llm_summary=None,
    )
    catalog.save_guide(ws.id, guide, "v1")
    catalog.save_guide(ws.id, SourceGuide("gone", "x", (), ()), "v1")  # a removed document keeps none
    questions = [SuggestedQuestion("What INR should warfarin target?", "d1", "d1.pdf", "recommendation")]
    catalog.save_document_suggestions("d1", "key-a", questions)
    catalog.save_document_suggestions("d2", "key-b", [])
    catalog.save_document_suggestions("gone", "key-a", questions)

    reopened = catalog_store.open()
    assert reopened.get_guides(["d1", "d2", "gone"], "v1") == {"d1": guide}
    assert reopened.get_guides(["d1"], "v2") == {} and reopened.get_guides([], "v1") == {}
    assert reopened.get_document_suggestions({"d1": "key-a", "d2": "key-b", "gone": "key-a"}) == {
        "d1": questions, "d2": [],
    }
    assert reopened.get_document_suggestions({"d1": "key-b"}) == {}
    reopened.delete_document("d1")
    assert reopened.get_guides(["d1"], "v1") == {} and reopened.get_document_suggestions({"d1": "key-a"}) == {}


def test_the_vocabulary_is_upserted_by_system_and_code_and_read_in_code_order(catalog_store: CatalogStore) -> None:
    vocabulary = catalog_store.open().vocabulary
    assert vocabulary.upsert_vocabulary([
        VocabularyEntry("icd9", "42731", "Atrial fibrillation", "", "d_icd_diagnoses"),
        VocabularyEntry("icd9", "4019", "Hypertension NOS"), VocabularyEntry("labitem", "51237", "INR(PT)"),
    ]) == 3
    assert vocabulary.upsert_vocabulary([VocabularyEntry("icd9", "4019", "Unspecified essential hypertension")]) == 1
    assert vocabulary.upsert_vocabulary([]) == 0
    again = catalog_store.open().vocabulary
    assert [(e.code, e.title) for e in again.vocabulary("icd9")] == [
        ("4019", "Unspecified essential hypertension"), ("42731", "Atrial fibrillation"),
    ]
    assert again.vocabulary("icd9", ["42731", "missing", "42731"]) == [
        VocabularyEntry("icd9", "42731", "Atrial fibrillation", "", "d_icd_diagnoses"),
    ]
    assert again.vocabulary("labitem", []) == [] and again.vocabulary("none") == []


@pytest.mark.postgres
def test_a_new_postgres_catalog_gets_every_migration_once_and_keeps_its_data(postgres_url: str) -> None:
    from workspace_app.storage.postgres.catalog import PostgresCatalog
    from workspace_app.storage.postgres.migrations import MIGRATIONS

    first = PostgresCatalog(postgres_url)
    first.create_workspace("Kept")
    first.close()
    again = PostgresCatalog(postgres_url)
    assert [w.name for w in again.list_workspaces()] == ["Kept"]
    rows = again.database.query("SELECT version FROM schema_version ORDER BY version")
    assert [row["version"] for row in rows] == list(range(1, len(MIGRATIONS) + 1))
    again.close()


@pytest.mark.postgres
def test_an_unreachable_postgres_catalog_is_a_storage_error_without_the_password(postgres_cluster: Any) -> None:
    from workspace_app.errors import StorageError
    from workspace_app.storage.postgres.catalog import PostgresCatalog

    url = f"postgresql://nobody:s3cret@127.0.0.1:{postgres_cluster.port}/no_such_database"
    with pytest.raises(StorageError) as failed:
        PostgresCatalog(url)
    assert "no_such_database" in failed.value.user_message and "s3cret" not in failed.value.user_message
