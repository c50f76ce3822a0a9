"""A workspace under the generic pack: real PDFs ingested and answered with no clinical knowledge at all (no
grades read or shown, no lexicon, no clinical warm-up or suggestion patterns), and a non-clinical PDF answered."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from workspace_app.adapters.wiring import build_app
from workspace_app.app import App
from workspace_app.config import Settings
from workspace_app.domain.generic import GENERIC

# A short annual report of a made-up company: nothing clinical in it. "Grade I B" reads as a class and a level to
# the clinical grammar; the generic pack reads no grades.
REPORT = {
    1: ("Northwind Freight annual report 2023",
        "Overview",
        ("Northwind Freight moved 4.2 million parcels in 2023, up from 3.1 million parcels in 2022. "
         "Revenue rose to 81 million euros, driven by the new cold-chain service for grocers. "
         "The board approved a dividend of 0.40 euros per share for the year.")),
    2: ("Offices and fleet",
        "Offices",
        ("Northwind opened its Lisbon office in March 2023 to serve customers in Portugal and Spain. "
         "The Lisbon office employs 35 people and runs the southern sorting hub. "
         "The company replaced 120 diesel vans with electric vans during the year. "
         "Bonds rated Grade I B carry the lowest risk in the treasury portfolio.")),
}


def report_pdf(path: Path) -> Path:
    """Write the report as a two-page PDF with a title, a heading and body text on each page."""
    with pymupdf.open() as doc:
        for _, (title, heading, body) in sorted(REPORT.items()):
            page = doc.new_page()
            page.insert_text((72, 72), title, fontsize=18)
            page.insert_text((72, 110), heading, fontsize=14)
            page.insert_textbox(pymupdf.Rect(72, 130, 520, 760), body, fontsize=11)
        doc.save(path)
    return path


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, embedder: Any, excerpt: Callable[..., Path]) -> Iterator[App]:
    """The generic pack's App with two workspaces: a guideline's recommendation tables (ommen-2024 p.13-16, graded
    "1 B-NR" in cells) and the non-clinical report."""
    folder = tmp_path_factory.mktemp("generic")
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = folder / "data"
    settings.domain.pack = "generic"
    made = build_app(settings, embedder=embedder)
    made.workspaces.create("Guideline")
    assert made.documents.ingest("Guideline", excerpt("ommen-2024-hcm.pdf", 13, 16)).status == "ready"
    made.workspaces.create("Report")
    assert made.documents.ingest("Report", report_pdf(folder / "northwind-2023.pdf")).status == "ready"
    yield made
    made.close()


def chunks(app: App, workspace: str) -> list[Any]:
    documents = app.documents.list(workspace)
    ids = [i for d in documents for i in app.catalog.document_chunk_ids(d.id)]
    return list(app.catalog.get_chunks(ids).values())


def test_the_app_carries_the_generic_pack(app: App) -> None:
    assert app.domain is GENERIC
    assert app.translator.other_language("What is recommended for atrial fibrillation?") == []  # no lexicon


def test_a_graded_guideline_is_read_without_grades(app: App) -> None:
    body = chunks(app, "Guideline")
    assert body and not [c for c in body if c.recommendation_class or c.evidence_level]
    document = app.documents.list("Guideline")[0]
    guide = app.guides.guides("Guideline", [document.id])[document.id]
    assert guide.recommendations == ()
    assert not [q for q in app.suggestions.suggest("Guideline") if q.origin == "recommendation"]


def test_an_answer_from_a_graded_guideline_shows_no_grade(app: App) -> None:
    answer = app.answers.ask("Guideline", "Is shared decision-making recommended for patients with HCM?")
    assert not answer.refused and answer.citations
    assert not [c for c in answer.citations if c.recommendation_class or c.evidence_level]
    assert not re.search(r"\((?:Class|Strong|Conditional)\b[^)]*LOE", answer.text)


@pytest.mark.parametrize(("question", "page", "fact"), [
    ("When did Northwind open its Lisbon office?", 2, "March 2023"),
    ("How many parcels did Northwind move in 2023?", 1, "4.2 million"),
])
def test_a_non_clinical_pdf_is_answered_from_its_page(app: App, question: str, page: int, fact: str) -> None:
    answer = app.answers.ask("Report", question)
    assert not answer.refused, answer.text
    first = answer.citations[0]
    assert first.document == "northwind-2023.pdf" and first.page_start <= page <= first.page_end
    assert fact in answer.text


def test_the_report_reads_no_grade_from_grade_like_words(app: App) -> None:
    assert any("Grade I B" in c.text for c in chunks(app, "Report"))
    assert not [c for c in chunks(app, "Report") if c.recommendation_class or c.evidence_level]


def test_a_non_clinical_report_gets_a_guide_of_its_own_whole_sentences(app: App) -> None:
    """The guide's summary is domain-neutral: the report's central sentences, whole, in reading order (the
    titles and headings set apart are none of them)."""
    from workspace_app.text.sentences import split_sentences

    document = app.documents.list("Report")[0]
    guide = app.guides.guides("Report", [document.id])[document.id]
    written = [sentence for _, (_, _, body) in sorted(REPORT.items()) for sentence in body.split(". ")]
    written = [s if s.endswith(".") else f"{s}." for s in written]
    sentences = [span.text for span in split_sentences(guide.summary)]
    assert 2 <= len(sentences) <= 3 and all(s in written for s in sentences), sentences
    assert sorted(sentences, key=written.index) == sentences  # in the report's order
    assert not any(title in guide.summary for title, _, _ in REPORT.values())
    assert guide.recommendations == ()
