"""The catalog's patient records, on SQLite and on PostgreSQL (`catalog_store`, tests/catalogs.py): upsert by event
id, vectors by event id + model, kept across reopening."""

from __future__ import annotations

import numpy as np
from catalogs import CatalogStore

from workspace_app.models.events import Admission, Event, Patient


def _event(event_id: str, content: str, when: str = "2150-01-01 08:00:00") -> Event:
    return Event(event_id, "p1", when, "lab", "Chemistry", content, "labevents", 2, {"poe_id": "p1-1"},
                 ("lab:potassium",), "h1")


def test_events_upsert_by_id_and_survive_reopening(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    catalog.patients.upsert_patients([Patient("p1", "F", 70)])
    catalog.patients.upsert_admissions([Admission("h1", "p1", "2150-01-01 00:00:00", "2150-01-05 00:00:00")])
    store = catalog.patients
    store.upsert_events([_event("e2", "Potassium 4", "2150-01-01 09:00:00"), _event("e1", "Potassium 3.1")])
    store.upsert_events([_event("e1", "Potassium 3.2")])
    store.put_vectors("m", {"e1": ("k1", np.ones(3, dtype=np.float32)), "e2": ("k2", np.zeros(3, dtype=np.float32))})
    catalog.close()

    again = catalog_store.open().patients
    assert [e.event_id for e in again.events("p1")] == ["e1", "e2"]  # time order
    assert again.get_event("e1") == _event("e1", "Potassium 3.2")
    assert again.vector_keys("m", ["e1", "e2", "e3"]) == {"e1": "k1", "e2": "k2"} and again.vector_keys("x", ["e1"]) == {}
    ids, matrix = again.patient_vectors("p1", "m")
    assert ids == ["e1", "e2"] and matrix.shape == (2, 3) and matrix[0].tolist() == [1.0, 1.0, 1.0]
    [patient] = again.list_patients()
    assert again.patient_ids() == [patient.patient_id]
    assert (patient.gender, patient.age, patient.admissions, patient.events) == ("F", 70, 1, 2)
    assert again.events("p1", "order") == []
    assert again.event_count("p1") == 2 and again.vector_count("p1", "m") == 2 and again.vector_count("p1", "x") == 0
    again.upsert_patients([Patient("p1", "", None)])  # known values stay when none are given
    assert [(p.gender, p.age) for p in again.list_patients()] == [("F", 70)]


def test_admissions_of_a_patient_in_time_order(catalog_store: CatalogStore) -> None:
    catalog = catalog_store.open()
    store = catalog.patients
    store.upsert_patients([Patient("p1"), Patient("p2")])
    later = Admission("h2", "p1", "2150-03-01 00:00:00", "2150-03-02 00:00:00", "URGENT")
    earlier = Admission("h1", "p1", "2150-01-01 00:00:00", "2150-01-05 00:00:00")
    store.upsert_admissions([later, earlier, Admission("h3", "p2", "2150-01-01 00:00:00", "2150-01-02 00:00:00")])
    assert store.admissions("p1") == [earlier, later]
    assert store.admissions("nobody") == []
    catalog.close()
