"""Fixtures for patient records: the MIMIC-IV demo (read-only, never copied) and one small patient imported once."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from demo_patients import AF_MAN, AF_PATIENT, AF_WOMAN, HCM_AF_PAGES, OTHER_PATIENT, WOMEN_INR_PAGES, ZH_INR_PAGES

DEMO = Path(__file__).resolve().parents[2] / ".." / "shared" / "clinical" / "mimic-iv-demo"
# The demo's smallest patient (the tests name it too) with administrations, infusions and prescriptions (197 events): quick to embed.
PATIENT = "10019917"


@pytest.fixture(scope="session")
def demo() -> Path:
    """The MIMIC-IV Clinical Database Demo folder."""
    if not (DEMO / "hosp" / "admissions.csv.gz").is_file():
        pytest.skip(f"the MIMIC-IV demo is not at {DEMO.resolve()}")
    return DEMO


@pytest.fixture(scope="session")
def imported(
    demo: Path, build: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Any, Any, Any]:
    """(app, first report, second report): one demo patient imported twice into a fresh data dir."""
    app = build(tmp_path_factory.mktemp("patients") / "data")
    first = app.patients.import_path(demo, [PATIENT])
    second = app.patients.import_path(demo, [PATIENT])
    return app, first, second


@pytest.fixture(scope="session")
def crossed(
    demo: Path, build: Callable[..., Any], excerpt: Callable[[str, int, int], Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    """An app with the AF guideline excerpt in workspace 'af' and two demo patients imported."""
    app = build(tmp_path_factory.mktemp("crosslevel") / "data")
    app.workspaces.create("af")
    report = app.documents.ingest("af", excerpt(*HCM_AF_PAGES), "ommen-2024-hcm-af.pdf")
    assert report.status == "ready"
    app.patients.import_path(demo, [AF_PATIENT, OTHER_PATIENT])
    return app


@pytest.fixture(scope="session")
def targeted(
    demo: Path, build: Callable[..., Any], excerpt: Callable[[str, int, int], Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Any:
    """An app with guideline pages stating INR targets (one for women with AF, one for everyone with AF) and the
    HCM guideline's AF pages in workspace 'targets', and a woman and a man with AF and INR results imported."""
    app = build(tmp_path_factory.mktemp("targets") / "data")
    app.workspaces.create("targets")
    for pages in (WOMEN_INR_PAGES, ZH_INR_PAGES, HCM_AF_PAGES):
        report = app.documents.ingest("targets", excerpt(*pages), f"{pages[0].removesuffix('.pdf')}-p{pages[1]}.pdf")
        assert report.status == "ready"
    app.patients.import_path(demo, [AF_WOMAN, AF_MAN])
    return app
