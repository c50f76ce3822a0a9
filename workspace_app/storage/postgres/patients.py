"""Patient records in the PostgreSQL catalog: patients, admissions, events (idempotent by id) and event vectors by
model (float32 bytes, as in SQLite), as storage/sqlite/patients.py keeps them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from workspace_app.models.events import Admission, Event, Patient, epoch_seconds
from workspace_app.storage.postgres.database import PostgresDatabase

_EVENT_COLUMNS = (
    "event_id, patient_id, timestamp, event_type, sub_type, content, source_table, source_row, links, concepts, "
    "admission_id"
)


def _event(row: dict[str, Any]) -> Event:
    return Event(
        row["event_id"], row["patient_id"], row["timestamp"], row["event_type"], row["sub_type"], row["content"],
        row["source_table"], row["source_row"], json.loads(row["links"]), tuple(json.loads(row["concepts"])),
        row["admission_id"],
    )


class PostgresPatientStore:
    """The `EventStore` over the catalog's database."""

    def __init__(self, database: PostgresDatabase) -> None:
        self.database = database

    def upsert_patients(self, patients: Sequence[Patient]) -> None:
        """Insert patients; known ones keep their row but take new gender/age when given."""
        rows = [(p.patient_id, p.gender, p.age) for p in patients]
        if rows:
            with self.database.transaction() as db:
                db.cursor().executemany(
                    "INSERT INTO patients (patient_id, gender, age) VALUES (%s, %s, %s) ON CONFLICT (patient_id) "
                    "DO UPDATE SET gender = CASE WHEN excluded.gender <> '' THEN excluded.gender "
                    "ELSE patients.gender END, age = COALESCE(excluded.age, patients.age)",
                    rows,
                )

    def upsert_admissions(self, admissions: Sequence[Admission]) -> None:
        """Insert or replace admissions by id."""
        rows = [(a.admission_id, a.patient_id, a.admit_time, a.discharge_time, a.admission_type) for a in admissions]
        if rows:
            with self.database.transaction() as db:
                db.cursor().executemany(
                    "INSERT INTO admissions (admission_id, patient_id, admit_time, discharge_time, admission_type) "
                    "VALUES (%s, %s, %s, %s, %s) ON CONFLICT (admission_id) DO UPDATE SET "
                    "patient_id = excluded.patient_id, admit_time = excluded.admit_time, "
                    "discharge_time = excluded.discharge_time, admission_type = excluded.admission_type",
                    rows,
                )

    def upsert_events(self, events: Sequence[Event]) -> int:
        """Insert events, or update the ones whose id is known (their vectors stay until the text changes).
        Returns how many rows were written."""
        rows = [
            (e.event_id, e.patient_id, epoch_seconds(e.timestamp), e.timestamp, e.event_type, e.sub_type, e.content,
             e.source_table, e.source_row, json.dumps(dict(e.links), sort_keys=True), json.dumps(list(e.concepts)),
             e.admission_id)
            for e in events
        ]
        if not rows:
            return 0
        with self.database.transaction() as db:
            cursor = db.cursor()
            cursor.executemany(
                "INSERT INTO patients (patient_id) VALUES (%s) ON CONFLICT (patient_id) DO NOTHING",
                sorted({(e.patient_id,) for e in events}),
            )
            cursor.executemany(
                "INSERT INTO events (event_id, patient_id, ts, timestamp, event_type, sub_type, content, source_table, "
                "source_row, links, concepts, admission_id) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT (event_id) DO UPDATE SET patient_id = excluded.patient_id, ts = excluded.ts, "
                "timestamp = excluded.timestamp, event_type = excluded.event_type, sub_type = excluded.sub_type, "
                "content = excluded.content, source_table = excluded.source_table, source_row = excluded.source_row, "
                "links = excluded.links, concepts = excluded.concepts, admission_id = excluded.admission_id",
                rows,
            )
        return len(rows)

    def list_patients(self) -> list[Patient]:
        """Every patient with counts of admissions and events and the span of their events."""
        rows = self.database.query(
            "SELECT p.patient_id, p.gender, p.age, "
            "(SELECT COUNT(*) FROM admissions a WHERE a.patient_id = p.patient_id) AS admissions, "
            "COUNT(e.event_id) AS events, MIN(e.timestamp) AS first, MAX(e.timestamp) AS last "
            "FROM patients p LEFT JOIN events e ON e.patient_id = p.patient_id GROUP BY p.patient_id "
            'ORDER BY p.patient_id COLLATE "C"'
        )
        return [
            Patient(r["patient_id"], r["gender"], r["age"], r["admissions"], r["events"], r["first"] or "", r["last"] or "")
            for r in rows
        ]

    def patient_ids(self) -> list[str]:
        """Every patient's id, in order (without the counts, which read every event)."""
        rows = self.database.query('SELECT patient_id FROM patients ORDER BY patient_id COLLATE "C"')
        return [r["patient_id"] for r in rows]

    def admissions(self, patient_id: str) -> list[Admission]:
        """A patient's admissions in time order."""
        rows = self.database.query(
            "SELECT admission_id, patient_id, admit_time, discharge_time, admission_type FROM admissions "
            'WHERE patient_id = %s ORDER BY admit_time COLLATE "C", admission_id COLLATE "C"',
            (patient_id,),
        )
        return [
            Admission(r["admission_id"], r["patient_id"], r["admit_time"], r["discharge_time"], r["admission_type"])
            for r in rows
        ]

    def events(self, patient_id: str, event_type: str | None = None) -> list[Event]:
        """A patient's events in time order, of one type if given."""
        where, params = "patient_id = %s", [patient_id]
        if event_type:
            where, params = where + " AND event_type = %s", [patient_id, event_type]
        sql = f'SELECT {_EVENT_COLUMNS} FROM events WHERE {where} ORDER BY ts, event_id COLLATE "C"'
        return [_event(row) for row in self.database.query(sql, params)]

    def get_event(self, event_id: str) -> Event | None:
        """The event with this id, if any."""
        rows = self.database.query(f"SELECT {_EVENT_COLUMNS} FROM events WHERE event_id = %s", (event_id,))
        return _event(rows[0]) if rows else None

    def vector_keys(self, model: str, event_ids: Sequence[str]) -> dict[str, str]:
        """The text key of each event's stored vector for this model (events without one are left out)."""
        rows = self.database.query(
            "SELECT event_id, text_key FROM event_vectors WHERE model = %s AND event_id = ANY(%s)",
            (model, list(event_ids)),
        )
        return {r["event_id"]: r["text_key"] for r in rows}

    def put_vectors(self, model: str, vectors: Mapping[str, tuple[str, NDArray[np.float32]]]) -> None:
        """Store (text key, vector) per event id for this model, replacing older ones."""
        rows = [(eid, model, key, np.asarray(v, dtype=np.float32).tobytes()) for eid, (key, v) in vectors.items()]
        if rows:
            with self.database.transaction() as db:
                db.cursor().executemany(
                    "INSERT INTO event_vectors (event_id, model, text_key, vector) VALUES (%s, %s, %s, %s) "
                    "ON CONFLICT (event_id, model) DO UPDATE SET text_key = excluded.text_key, vector = excluded.vector",
                    rows,
                )

    def event_count(self, patient_id: str) -> int:
        """How many events the patient has (read from the index alone)."""
        return int(self.database.query("SELECT COUNT(*) AS n FROM events WHERE patient_id = %s", (patient_id,))[0]["n"])

    def vector_count(self, patient_id: str, model: str) -> int:
        """How many of the patient's events have a vector for this model."""
        return int(self.database.query(
            "SELECT COUNT(*) AS n FROM events e JOIN event_vectors v ON v.event_id = e.event_id AND v.model = %s "
            "WHERE e.patient_id = %s",
            (model, patient_id),
        )[0]["n"])

    def patient_vectors(self, patient_id: str, model: str) -> tuple[list[str], NDArray[np.float32]]:
        """The event ids of a patient that have a vector for this model, and those vectors as one matrix."""
        rows = self.database.query(
            "SELECT v.event_id, v.vector FROM event_vectors v JOIN events e ON e.event_id = v.event_id "
            'WHERE e.patient_id = %s AND v.model = %s ORDER BY e.ts, v.event_id COLLATE "C"',
            (patient_id, model),
        )
        if not rows:
            return [], np.zeros((0, 0), dtype=np.float32)
        return [r["event_id"] for r in rows], np.stack([np.frombuffer(r["vector"], dtype=np.float32) for r in rows])
