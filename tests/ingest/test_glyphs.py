"""Symbol-font glyphs: ≥ ≤ < > β ± read back from the corpus PDFs, the unreadable marked, highlights still found.

mosca-2011 draws comparison signs and β with MathematicalPi-One and Universal-GreekwithMathPi, whose codes
extract as control characters ("women \\x0365 years" for "<65"); the Elsevier PDFs draw them with Adv fonts
whose glyphs are numbered ("C21") or stand at the codes of "$", "‡", "¼". Expected texts were read off
renderings of the pages.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from workspace_app.answer.highlight import locate_quote
from workspace_app.ingest.glyphs import MARKER, is_symbol_font, read_glyph, recover_span
from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.models.documents import Chunk

MOSCA = "mosca-2011-women-cvd.pdf"
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def flat(text: str) -> str:
    return " ".join(text.split())


@pytest.fixture(scope="module")
def mosca_text(guidelines: Path, chunk_pdf: Callable[[Path], list[Any]]) -> str:
    return flat(" ".join(chunk.text for chunk in chunk_pdf(guidelines / MOSCA)))


@pytest.mark.parametrize(
    "passage",
    [
        # The aspirin age split: "<65" and "≥65" say opposite things; without the sign both read "65 years".
        "Routine use of aspirin in healthy women <65 years of age is not recommended to prevent MI",
        "Aspirin therapy can be useful in women ≥65 y of age (81 mg daily or 100 mg every other day)",
        "may be reasonable for women <65 y of age for ischemic stroke prevention",
        "aspirin appears cost-effective in women ≥65 years of age with moderate to severe CVD risk",
        # Lipid targets.
        "LDL-C <100 mg/dL, HDL-C >50 mg/dL, triglycerides <150 mg/dL",
        "in women with CHD to achieve an LDL-C <100 mg/dL",
        # β-blockers, and the heart-failure threshold beside them.
        "acute coronary syndrome or MI should be with β-blockers and/or ACE inhibitors/ARBs",
        "β-Blockers should be used for up to 12 mo",
        "an ACE inhibitor and β-blocker and have LVEF ≤40% with symptomatic heart failure",
        "Framingham risk score <10%",
    ],
)
def test_mosca_symbols_are_in_the_chunk_text(mosca_text: str, passage: str) -> None:
    assert passage in mosca_text


def test_mosca_chunks_hold_no_control_codes_bare_blockers_or_markers(mosca_text: str) -> None:
    assert not _CONTROL.search(mosca_text)
    assert not re.search(r"(?<![β\w])-[Bb]lockers?\b", mosca_text)
    assert " 65 years of age is not recommended" not in mosca_text
    assert MARKER not in mosca_text


@pytest.mark.parametrize(
    ("name", "page", "passage"),
    [
        ("tracy-2012-device-therapy.pdf", 16, "p=0.008"),  # Universal-GreekwithMathPi "H11005"
        ("tracy-2012-device-therapy.pdf", 17, "QRS duration ≥150 ms"),  # MathematicalPi-One "H11350"
        ("eckel-2013-lifestyle.pdf", 6, "adults (≥18 years of age)"),  # AdvP4C4E74 "C21"
        ("eckel-2013-lifestyle.pdf", 15, "sodium intake to ≤2,400 mg/d"),  # AdvP4C4E74 "C20"
        ("kusumoto-2018-bradycardia.pdf", 9, "(220 − 0.7 × age)"),  # AdvP4C4E74 "C0", "C2"
        ("grundy-2018-cholesterol.pdf", 15, "(≤3.4 mmol/L)"),  # AdvPS_SSYB "£"
        ("shen-2017-syncope.pdf", 8, "≥50 mm Hg"),  # AdvOT8817665d "$"
        ("ommen-2024-hcm.pdf", 67, "Turska-Kmieć A"),  # AdvP4C4E59 "C19", an accent drawn before its letter
    ],
)
def test_symbol_glyphs_of_other_corpus_pdfs_are_read_back(
    excerpt: Callable[[str, int, int], Path], name: str, page: int, passage: str
) -> None:
    path = excerpt(name, page, page)
    parsed = parse_pdf(path, path.name)
    assert passage in flat(" ".join(p.text for p in parsed.paragraphs))
    assert sum(count.recovered for count in parsed.glyphs.values()) > 0


def test_every_symbol_glyph_of_mosca_is_counted_and_none_is_flagged(guidelines: Path) -> None:
    parsed = parse_pdf(guidelines / MOSCA, MOSCA)
    with pymupdf.open(guidelines / MOSCA) as doc:
        raw = sum(
            1 for page in doc for block in page.get_text("rawdict")["blocks"] for line in block.get("lines", [])
            for span in line["spans"] for char in span["chars"] if _CONTROL.match(char["c"])
        )
    counted = [*parsed.glyphs.values(), *parsed.glyphs_set_aside.values()]
    assert raw == 95 and sum(count.total for count in counted) == raw
    assert parsed.flagged_pages == []


def test_an_unreadable_symbol_glyph_is_marked_not_dropped() -> None:
    span = {"font": "MathematicalPi-Six", "text": "\x07"}  # a glyph name no table knows
    count = recover_span(span, {7: "H99999"}, comparison=False, has_ink=lambda index: True)
    assert span["text"] == MARKER
    assert (count.flagged, count.recovered) == (1, 0)
    letters = {"font": "AdvPS9ABCDE", "text": "q"}  # a symbol font the tables do not know, at a letter's code
    assert recover_span(letters, {}, comparison=False, has_ink=lambda index: True).flagged == 1
    assert letters["text"] == MARKER


def test_a_control_code_that_paints_nothing_is_a_blank() -> None:
    span = {"font": "TimesNewRomanPSMT", "text": "a\x08b"}
    count = recover_span(span, {}, comparison=False, has_ink=lambda index: False)
    assert span["text"] == "a b" and count.blank == 1


def test_glyphs_are_read_by_name_within_the_font_that_names_them() -> None:
    assert read_glyph("MathematicalPi-One", "\x01", {1: "H11350"}, comparison=False) == "≥"
    assert read_glyph("Universal-GreekwithMathP", "\x01", {1: "H11005"}, comparison=False) == "="
    assert read_glyph("AdvP4C4E74", "\x01", {1: "C21"}, comparison=False) == "≥"
    assert read_glyph("AdvP4C4E59", "\x01", {1: "C21"}, comparison=False) == "\u0306"  # same number, other font
    assert read_glyph("AdvOT8817665d", "$", {}, comparison=False) == "≥"
    assert not is_symbol_font("AdvOT17866240") and is_symbol_font("MathematicalPi-One")


@pytest.mark.parametrize(
    ("quote", "follows"),
    [
        ("Aspirin therapy can be useful in women ≥65 y of age (81 mg daily or 100 mg every other day)", "65 y of age (81"),
        ("<65 years of age is not recommended to prevent MI", "65 years of age is not"),
        ("β-Blockers should be used for up to 12 mo", "-Blockers should be used"),
    ],
)
def test_a_quote_with_a_recovered_glyph_is_highlighted_where_the_glyph_is(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], quote: str, follows: str
) -> None:
    """The page's words lack the glyph (MuPDF leaves "\\x03" out of "words"): the highlight must still cover the
    glyph's line, from the glyph or the word after it on. (A quote that starts with the glyph is highlighted
    from the next word: highlight.py reads the page's own words.)"""
    pdf = guidelines / MOSCA
    ordinal, draft = next((i, d) for i, d in enumerate(chunk_pdf(pdf)) if quote in flat(d.text))
    chunk = Chunk("c", "d", ordinal, flat(draft.text), draft.section, draft.page_start, draft.page_end,
                  draft.token_count, tuple(draft.rects))
    rects = locate_quote(pdf, chunk, quote)
    assert rects and len(rects) < len(chunk.rects)
    with pymupdf.open(pdf) as doc:
        hits = [(r.page, hit) for r in rects for hit in doc[r.page - 1].search_for(follows)]
    assert any(
        rect.page == page and rect.y0 - 1 <= hit.y0 and hit.y1 <= rect.y1 + 1 and rect.x0 <= hit.x0 + 0.5
        for rect in rects for page, hit in hits
    ), (rects, hits)
