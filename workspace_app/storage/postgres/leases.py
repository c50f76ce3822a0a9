"""Job leases on document rows (PostgreSQL): who runs a document's ingestion, their last heartbeat, cancel requests.

As in storage/sqlite/leases.py: claiming is one conditional UPDATE (PostgreSQL's row lock makes a second claimer
wait and then see the first one's lease), and heartbeats use the server's clock, so every process agrees on a
lease's age.
"""

from __future__ import annotations

from collections.abc import Sequence

from workspace_app.models.documents import JobState
from workspace_app.storage.postgres.database import PostgresDatabase

NOW = "EXTRACT(EPOCH FROM clock_timestamp())::float8"  # seconds since the epoch, by the server's clock
_RELEASE_FIELDS = {"status", "stage", "progress", "error", "eta_s", "cancel_requested", "next_try_at"}


class PostgresJobLeases:
    """Leases on documents being ingested: one worker at a time, heartbeats, cooperative cancel."""

    def __init__(self, database: PostgresDatabase) -> None:
        self._db = database

    def claim_document(self, document_id: str, owner: str, stale_after_s: float) -> bool:
        """Take the lease of a queued or running document unless a live lease or a cancel request stops it."""
        with self._db.transaction() as db:
            cursor = db.execute(
                f"UPDATE documents SET lease_owner = %s, lease_heartbeat = {NOW}, status = 'running', "
                "stage = 'parsing', progress = 0, eta_s = NULL, error = NULL, next_try_at = NULL, pages_parsed = 0, "
                "chunks_embedded = 0, chunks_total = 0 "
                "WHERE id = %s AND status IN ('queued', 'running') AND NOT cancel_requested "
                f"AND (lease_owner IS NULL OR lease_heartbeat < {NOW} - %s)",
                (owner, document_id, stale_after_s),
            )
            return cursor.rowcount == 1

    def cancel_requested(self, document_id: str) -> bool:
        """Whether the user asked the document's job to stop (a read: the job checks it between steps)."""
        rows = self._db.query("SELECT cancel_requested FROM documents WHERE id = %s", (document_id,))
        return bool(rows and rows[0]["cancel_requested"])

    def renew_lease(self, document_id: str, owner: str) -> str:
        """Refresh the heartbeat: 'ok', 'cancel' (the user asked to stop) or 'lost' (someone else has it now)."""
        with self._db.transaction() as db:
            row = db.execute(
                f"UPDATE documents SET lease_heartbeat = {NOW} WHERE id = %s AND lease_owner = %s "
                "RETURNING cancel_requested",
                (document_id, owner),
            ).fetchone()
        if row is None:
            return "lost"
        return "cancel" if row["cancel_requested"] else "ok"

    def release_lease(self, document_id: str, owner: str, **fields: object) -> bool:
        """Give the lease up (setting some state columns at the same time); False when it was not ours."""
        unknown = set(fields) - _RELEASE_FIELDS
        if unknown:
            raise ValueError(f"unknown document fields: {sorted(unknown)}")
        assignments = "".join(f", {name} = %s" for name in fields)
        values = [bool(v) if k == "cancel_requested" else v for k, v in fields.items()]
        with self._db.transaction() as db:
            cursor = db.execute(
                f"UPDATE documents SET lease_owner = NULL, lease_heartbeat = NULL{assignments} "
                "WHERE id = %s AND lease_owner = %s",
                (*values, document_id, owner),
            )
            return cursor.rowcount == 1

    def request_cancel(self, document_id: str) -> str:
        """Cancel a queued document at once, or ask the worker running it to stop; returns the resulting status."""
        with self._db.transaction() as db:
            stopped = db.execute(
                "UPDATE documents SET status = 'cancelled', stage = 'cancelled', progress = 0, eta_s = NULL "
                "WHERE id = %s AND status = 'queued' AND lease_owner IS NULL",
                (document_id,),
            ).rowcount
            if not stopped:
                db.execute(
                    "UPDATE documents SET cancel_requested = TRUE WHERE id = %s AND status IN ('queued', 'running')",
                    (document_id,),
                )
            row = db.execute("SELECT status FROM documents WHERE id = %s", (document_id,)).fetchone()
        return str(row["status"]) if row else "removed"

    def requeue_document(self, document_id: str, statuses: Sequence[str]) -> bool:
        """Put a document with one of these statuses back in the queued state (no lease, no cancel, no error)."""
        with self._db.transaction() as db:
            cursor = db.execute(
                "UPDATE documents SET status = 'queued', stage = 'queued', progress = 0, error = NULL, eta_s = NULL, "
                "next_try_at = NULL, attempt = 0, "
                "cancel_requested = FALSE, lease_owner = NULL, lease_heartbeat = NULL, pages_parsed = 0, "
                "chunks_embedded = 0, chunks_total = 0 WHERE id = %s AND status = ANY(%s)",
                (document_id, list(statuses)),
            )
            return cursor.rowcount == 1

    def list_jobs(self) -> list[JobState]:
        """Every queued or running document in the data dir, with its lease."""
        rows = self._db.query(
            f"SELECT id, workspace_id, status, lease_owner, {NOW} - lease_heartbeat AS age, cancel_requested "
            "FROM documents WHERE status IN ('queued', 'running') ORDER BY added_at"
        )
        return [
            JobState(
                row["id"], row["workspace_id"], row["status"], row["lease_owner"],
                None if row["age"] is None else float(row["age"]), bool(row["cancel_requested"]),
            )
            for row in rows
        ]
