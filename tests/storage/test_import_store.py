"""Patient imports in the catalog on a real SQLite file and a real PostgreSQL database (`catalog_store`,
tests/catalogs.py): one worker holds an import at a time, progress and the outcome are kept across a reopen, a stale
lease can be taken over, cancel works queued and running."""

from __future__ import annotations

import time

from catalogs import CatalogStore

from workspace_app.models.events import ImportReport, ImportStep, RowError


def test_one_holder_progress_and_outcome_survive_a_reopen(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    store = catalog.imports
    added = store.add_import("/data/mimic", ["10019917"])
    assert (added.status, added.patients, added.held_by) == ("queued", ("10019917",), None)
    assert store.claim_import(added.import_id, "a@h:1:x", 60)
    assert not store.claim_import(added.import_id, "b@h:2:y", 60), "a live lease is not taken"
    assert store.renew_lease(added.import_id, "a@h:1:x") == "ok"
    assert store.renew_lease(added.import_id, "b@h:2:y") == "lost"
    step = ImportStep("labevents", 4000, 2000, 107727, 4, 9, 9500, 235609, 41.5, 183.0)
    assert store.record_progress(added.import_id, "a@h:1:x", step)
    assert not store.record_progress(added.import_id, "b@h:2:y", ImportStep("labevents", 1)), "only the holder records"
    running = store.get_import(added.import_id)
    assert running is not None and (running.status, running.table, running.events) == ("running", "labevents", 4000)
    assert running.step == step, "totals and time left are kept as recorded"
    assert running.to_json()["progress"]["rows_total"] == 235609
    assert running.heartbeat_age_s is not None and running.heartbeat_age_s < 5
    report = ImportReport("/data/mimic", patients=1, admissions=2, events=197, embedded=197,
                          errors=[RowError("emar", n, "no time (its admission is unknown).") for n in range(2, 32)])
    assert not store.finish_import(added.import_id, "b@h:2:y", report)
    assert store.finish_import(added.import_id, "a@h:1:x", report)
    catalog.close()

    reopened = catalog_store.open().imports
    [done] = reopened.list_imports()
    assert (done.status, done.held_by, done.patient_count, done.admissions, done.events) == ("done", None, 1, 2, 197)
    assert done.error_count == 30 and len(done.first_errors) == 20 and done.first_errors[0].startswith("emar:2: ")
    assert done.finished_at is not None and done.finished_at <= time.time()
    assert done.step is None and done.to_json()["progress"] is None, "an import that ended has no time left"
    assert reopened.active_imports() == [] and not reopened.claim_import(done.import_id, "c@h:3:z", 60)


def test_a_stale_lease_is_taken_over_and_cancel_works_queued_and_running(catalog_store: CatalogStore) -> None:
    store = catalog_store.open().imports
    first, second = store.add_import("/a.csv", []), store.add_import("/b.csv", [])
    assert [job.import_id for job in store.list_imports()] == [second.import_id, first.import_id], "newest first"
    assert store.claim_import(first.import_id, "a@h:1:x", 60)
    assert store.claim_import(first.import_id, "b@h:2:y", -1), "a lease older than the timeout is taken over"
    assert store.renew_lease(first.import_id, "a@h:1:x") == "lost"
    assert store.request_cancel(first.import_id) == "running" and store.cancel_requested(first.import_id)
    assert store.renew_lease(first.import_id, "b@h:2:y") == "cancel"
    assert store.cancel_import(first.import_id, "b@h:2:y")
    assert store.request_cancel(second.import_id) == "cancelled", "a queued import is cancelled at once"
    assert not store.claim_import(second.import_id, "a@h:1:x", 60)
    assert store.request_cancel("nope") == "removed"
