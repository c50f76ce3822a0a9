"""Headings on scanned pages: OCR'd lines carry a font size from their glyph height and bold from their stroke
weight, so a bold or larger heading opens a section on a scan as it does in a text layer."""

from __future__ import annotations

from pathlib import Path

import pymupdf
import pytest

from bench.common.scans import scanned_copy
from workspace_app.ingest.layout import ParsedDocument
from workspace_app.ingest.ocr import PageOcr
from workspace_app.ingest.readers.pdf import parse_pdf

BODY = (
    "Patients with a first episode of palpitations were seen in the clinic within two weeks and",
    "had an electrocardiogram recorded at rest together with a record of their symptoms over time",
    "and of the drugs they took, which the physician reviewed with them at the following visit",
    "before any change of treatment was made or any further test of the heart rhythm was ordered.",
)
HEADINGS = ("Selection of Patients", "Follow-up Visits")  # unnumbered: only their weight and size say so


def _draw_page(path: Path) -> Path:
    """A born-digital page: each heading bold and larger (Helvetica-Bold 12 pt) above body text (Times 10 pt)."""
    with pymupdf.open() as doc:
        page = doc.new_page(width=595, height=842)
        y = 90.0
        for heading in HEADINGS:
            page.insert_text((72, y), heading, fontname="hebo", fontsize=12)
            y += 22
            for line in BODY:
                page.insert_text((72, y), line, fontname="tiro", fontsize=10)
                y += 13
            y += 18
        doc.save(path)
    return path


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ParsedDocument]:
    """The page parsed from its text layer, and its picture (as a scanner makes it) parsed by OCR."""
    folder = tmp_path_factory.mktemp("headings")
    drawn = _draw_page(folder / "drawn.pdf")
    scan = scanned_copy([(drawn, 1)], folder / "scan.pdf", dpi=200, noise=0.002, skew_deg=0.3)
    return {"text": parse_pdf(drawn, "drawn.pdf"), "scan": parse_pdf(scan, "scan.pdf", ocr=PageOcr())}


def _sections(parsed: ParsedDocument) -> list[tuple[str, str]]:
    return [(p.section, p.text[:40]) for p in parsed.paragraphs if not p.is_heading]


def test_a_bold_larger_heading_on_a_scan_opens_a_section_as_in_the_text_layer(
    pages: dict[str, ParsedDocument],
) -> None:
    text, scan = pages["text"], pages["scan"]
    assert scan.pages_ocr == [1]
    assert [p.text for p in text.paragraphs if p.is_heading] == list(HEADINGS)
    assert [p.text for p in scan.paragraphs if p.is_heading] == list(HEADINGS)
    assert [section for section, _ in _sections(scan)] == [section for section, _ in _sections(text)]
    assert {section for section, _ in _sections(scan)} == set(HEADINGS)


def test_ocr_body_lines_share_one_size_and_are_not_bold(pages: dict[str, ParsedDocument]) -> None:
    lines = [span.line for p in pages["scan"].paragraphs if not p.is_heading for span in p.spans]
    headings = [span.line for p in pages["scan"].paragraphs if p.is_heading for span in p.spans]
    assert len({line.size for line in lines}) == 1
    assert not any(line.bold for line in lines)
    assert all(line.bold and line.size >= lines[0].size for line in headings)
