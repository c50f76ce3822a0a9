"""Fixtures shared by the UI tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

DEMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "clinical" / "mimic-iv-demo"
AF_PATIENT = "10025463"  # coded with atrial fibrillation, prescribed warfarin


@pytest.fixture(scope="session")
def af_patient_data(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> Path:
    """A data dir with workspace 'AF' (the HCM guideline's AF pages) and the AF demo patient imported, built once
    for the Graph page's and the Chat page's patient tests."""
    if not (DEMO / "hosp" / "admissions.csv.gz").is_file():
        pytest.skip(f"the MIMIC-IV demo is not at {DEMO.resolve()}")
    folder = tmp_path_factory.mktemp("af-patient")
    service = build(folder / "data")
    service.workspaces.create("AF")
    assert service.documents.ingest("AF", excerpt("ommen-2024-hcm.pdf", 47, 48), "hcm-af.pdf").status == "ready"
    service.patients.import_path(DEMO, [AF_PATIENT])
    return folder / "data"
