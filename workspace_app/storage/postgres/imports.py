"""Patient imports in the PostgreSQL catalog: one row per import with its progress, outcome and worker lease.

As storage/sqlite/imports.py: claiming is one conditional UPDATE (the row lock makes a second claimer see the
first one's lease), heartbeats use the server's clock; `seq` orders imports made in the same instant (SQLite's rowid).
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Sequence
from typing import Any

from workspace_app.models.events import ImportReport, ImportStep, PatientImport
from workspace_app.storage.postgres.database import PostgresDatabase
from workspace_app.storage.postgres.leases import NOW
from workspace_app.storage.sqlite.imports import FIRST_ERRORS

_COLUMNS = (
    f"id, path, patients, status, current_table, events, patient_count, admissions, embedded, error_count, "
    f"first_errors, error, created_at, started_at, finished_at, lease_owner, {NOW} - lease_heartbeat AS age, "
    "table_done, table_rows, table_number, tables_total, rows_done, rows_total, table_eta_s, eta_s"
)
_STEP = ("table_done", "table_rows", "table_number", "tables_total", "rows_done", "rows_total", "table_eta_s", "eta_s")


def _import(row: dict[str, Any]) -> PatientImport:
    return PatientImport(
        row["id"], row["path"], tuple(json.loads(row["patients"])), row["status"], row["current_table"],
        row["events"], row["patient_count"], row["admissions"], row["embedded"], row["error_count"],
        tuple(json.loads(row["first_errors"])), row["error"], row["created_at"], row["started_at"],
        row["finished_at"], row["lease_owner"], row["age"], step=_step(row),
    )


def _step(row: dict[str, Any]) -> ImportStep | None:
    """The totals and time left of a running import (None before its first batch is recorded, or once it ended)."""
    if row["status"] != "running" or not row["tables_total"]:
        return None
    return ImportStep(row["current_table"], row["events"], *(row[name] for name in _STEP))


class PostgresImports:
    """The `ImportStore` over the catalog's database."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def add_import(self, path: str, patients: Sequence[str]) -> PatientImport:
        """A new queued import of a path (only these patients of a MIMIC-IV folder, if any)."""
        import_id = uuid.uuid4().hex[:12]
        with self._db.transaction() as db:
            db.execute(
                "INSERT INTO imports (id, path, patients, created_at) VALUES (%s, %s, %s, %s)",
                (import_id, path, json.dumps(list(patients)), time.time()),
            )
        found = self.get_import(import_id)
        assert found is not None
        return found

    def get_import(self, import_id: str) -> PatientImport | None:
        """The import with this id, if any."""
        rows = self._db.query(f"SELECT {_COLUMNS} FROM imports WHERE id = %s", (import_id,))
        return _import(rows[0]) if rows else None

    def list_imports(self, limit: int = 20) -> list[PatientImport]:
        """The latest imports, newest first."""
        rows = self._db.query(f"SELECT {_COLUMNS} FROM imports ORDER BY created_at DESC, seq DESC LIMIT %s", (limit,))
        return [_import(row) for row in rows]

    def active_imports(self) -> list[PatientImport]:
        """Every queued or running import (for recovery)."""
        rows = self._db.query(
            f"SELECT {_COLUMNS} FROM imports WHERE status IN ('queued', 'running') ORDER BY created_at, seq"
        )
        return [_import(row) for row in rows]

    def claim_import(self, import_id: str, owner: str, stale_after_s: float) -> bool:
        """Take the lease of a queued or running import unless a live lease or a cancel request stops it (a re-run
        counts its progress from nothing again: what it finds stored is counted, not stored twice)."""
        with self._db.transaction() as db:
            cursor = db.execute(
                f"UPDATE imports SET lease_owner = %s, lease_heartbeat = {NOW}, status = 'running', error = '', "
                "current_table = '', events = 0, tables_total = 0, table_eta_s = NULL, eta_s = NULL, "
                "started_at = COALESCE(started_at, %s) "
                "WHERE id = %s AND status IN ('queued', 'running') AND NOT cancel_requested "
                f"AND (lease_owner IS NULL OR lease_heartbeat < {NOW} - %s)",
                (owner, time.time(), import_id, stale_after_s),
            )
            return cursor.rowcount == 1

    def renew_lease(self, import_id: str, owner: str) -> str:
        """Refresh the heartbeat: 'ok', 'cancel' (the user asked to stop) or 'lost' (someone else has it now)."""
        with self._db.transaction() as db:
            row = db.execute(
                f"UPDATE imports SET lease_heartbeat = {NOW} WHERE id = %s AND lease_owner = %s "
                "RETURNING cancel_requested",
                (import_id, owner),
            ).fetchone()
        if row is None:
            return "lost"
        return "cancel" if row["cancel_requested"] else "ok"

    def cancel_requested(self, import_id: str) -> bool:
        """Whether the user asked the import to stop."""
        rows = self._db.query("SELECT cancel_requested FROM imports WHERE id = %s", (import_id,))
        return bool(rows and rows[0]["cancel_requested"])

    def record_progress(self, import_id: str, owner: str, step: ImportStep) -> bool:
        """Where the run is (table, events stored, totals, time left); False when the lease is not ours any more."""
        values = (step.table, step.events, *(getattr(step, name) for name in _STEP))
        with self._db.transaction() as db:
            cursor = db.execute(
                "UPDATE imports SET current_table = %s, events = %s, " + ", ".join(f"{name} = %s" for name in _STEP)
                + " WHERE id = %s AND lease_owner = %s",
                (*values, import_id, owner),
            )
            return cursor.rowcount == 1

    def finish_import(self, import_id: str, owner: str, report: ImportReport) -> bool:
        """Settle a run as done with its counts and bad rows, giving the lease up; False when it was not ours."""
        errors = [str(e) for e in report.errors[:FIRST_ERRORS]]
        return self._release(
            import_id, owner, status="done", events=report.events, patient_count=report.patients,
            admissions=report.admissions, embedded=report.embedded, error_count=len(report.errors),
            first_errors=json.dumps(errors), finished_at=time.time(),
        )

    def fail_import(self, import_id: str, owner: str, message: str) -> bool:
        """Settle a run as failed with what to do, giving the lease up."""
        return self._release(import_id, owner, status="failed", error=message, finished_at=time.time())

    def cancel_import(self, import_id: str, owner: str) -> bool:
        """Settle a run the user stopped as cancelled, giving the lease up."""
        return self._release(import_id, owner, status="cancelled", finished_at=time.time())

    def release_to_queue(self, import_id: str, owner: str) -> bool:
        """Give a run's lease up and mark it queued again (a shutdown, or a dead worker's run found by recovery)."""
        return self._release(import_id, owner, status="queued")

    def request_cancel(self, import_id: str) -> str:
        """Cancel a queued import at once, or ask the worker running it to stop; returns the resulting status."""
        with self._db.transaction() as db:
            stopped = db.execute(
                "UPDATE imports SET status = 'cancelled', finished_at = %s "
                "WHERE id = %s AND status = 'queued' AND lease_owner IS NULL",
                (time.time(), import_id),
            ).rowcount
            if not stopped:
                db.execute(
                    "UPDATE imports SET cancel_requested = TRUE WHERE id = %s AND status IN ('queued', 'running')",
                    (import_id,),
                )
            row = db.execute("SELECT status FROM imports WHERE id = %s", (import_id,)).fetchone()
        return str(row["status"]) if row else "removed"

    def _release(self, import_id: str, owner: str, **fields: object) -> bool:
        assignments = "".join(f", {name} = %s" for name in fields)
        with self._db.transaction() as db:
            cursor = db.execute(
                f"UPDATE imports SET lease_owner = NULL, lease_heartbeat = NULL{assignments} "
                "WHERE id = %s AND lease_owner = %s",
                (*fields.values(), import_id, owner),
            )
            return cursor.rowcount == 1
