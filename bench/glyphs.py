"""Glyph benchmark: every character a symbol font draws (or a control code stands for) is kept or flagged.

For each corpus PDF it counts, from the raw text layer (`page.get_text("rawdict")`), the characters that need
reading back: control codes in any font and every non-space character of a symbol font
(`workspace_app.ingest.glyphs.is_symbol_font`). Then it parses the PDF as ingestion does and takes the
parser's own count of what became of them, per page:

- recovered: read back as the glyph the page shows ("\\x01" of MathematicalPi-One -> "≥", "$" of AdvOT8817665d -> "≥");
- kept: the text layer already had the right character (a "<" of a symbol font, a bullet with a ToUnicode entry);
- flagged: unreadable, written as the marker (`MARKER`) in the text; the pages are listed;
- blank: a control code whose glyph paints nothing (read as a space);
- set aside: in a line the parser leaves out as a whole (rotated margin notes and tables, running headers),
  blanks not included;
- dropped: in the raw layer but in none of the above (must be 0).

It also checks that the text holds exactly as many markers as glyphs were flagged, and lists what each
(font, raw character) was read as, over the corpus.

    .venv/bin/python -m bench.glyphs            # writes bench/results/glyphs.json, prints a Markdown table
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import RESULTS_DIR, all_inputs, compact_json, git_info, log, now_iso
from workspace_app.ingest.glyphs import MARKER, FontEncodings, comparison_fonts, is_suspect, read_glyph
from workspace_app.ingest.layout import GlyphCount
from workspace_app.ingest.readers.pdf import parse_pdf

OUT = RESULTS_DIR / "glyphs.json"


def raw_suspects(path: Path) -> tuple[Counter[int], Counter[str]]:
    """Per page, the raw characters that need reading back; and what each (font, character) reads as."""
    per_page: Counter[int] = Counter()
    readings: Counter[str] = Counter()
    with pymupdf.open(path) as doc:
        encodings = FontEncodings(doc)
        for page in doc:
            raw = page.get_text("rawdict")
            names, comparison = encodings.for_page(page), comparison_fonts(_as_text(raw))
            for span in (s for b in raw["blocks"] for line in b.get("lines", []) for s in line["spans"]):
                glyph_names = names.get(span["font"]) or next((v for k, v in names.items() if k.startswith(span["font"])), {})
                for char in (c["c"] for c in span["chars"]):
                    if is_suspect(span["font"], char):
                        per_page[page.number + 1] += 1
                        found = read_glyph(span["font"], char, glyph_names, span["font"] in comparison)
                        readings[f"{span['font']} {char!r} -> {found if found is not None else 'blank or flagged'}"] += 1
    return per_page, readings


def _as_text(raw: dict[str, Any]) -> dict[str, Any]:
    """A rawdict page with span texts, as `comparison_fonts` reads them."""
    for block in raw["blocks"]:
        for line in block.get("lines", []):
            for span in line["spans"]:
                span["text"] = "".join(c["c"] for c in span["chars"])
    return raw


def measure(path: Path) -> tuple[dict[str, Any], Counter[str]]:
    """One PDF's row: raw suspects, and what parsing made of them."""
    raw, readings = raw_suspects(path)
    started = time.perf_counter()
    parsed = parse_pdf(path, path.name)
    parse_s = time.perf_counter() - started
    text, aside = GlyphCount(), GlyphCount()
    dropped: dict[int, int] = {}
    for page in range(1, parsed.page_count + 1):
        here, there = parsed.glyphs.get(page, GlyphCount()), parsed.glyphs_set_aside.get(page, GlyphCount())
        text.add(here)
        aside.add(there)
        if raw[page] - here.total - there.total:
            dropped[page] = raw[page] - here.total - there.total
    markers = sum(p.text.count(MARKER) for p in parsed.paragraphs)
    row = {
        "pdf": path.name, "pages": parsed.page_count, "raw": sum(raw.values()),
        "recovered": text.recovered, "kept": text.kept, "flagged": text.flagged, "blank": text.blank + aside.blank,
        "set_aside": aside.total - aside.blank, "dropped": sum(dropped.values()), "dropped_pages": dropped,
        "flagged_pages": parsed.flagged_pages, "markers_in_text": markers, "markers_match": markers == text.flagged,
        "parse_s": round(parse_s, 2),
    }
    return row, readings


def markdown(rows: list[dict[str, Any]]) -> str:
    """The README table."""
    head = "| PDF | raw | recovered | kept | flagged | blank | set aside | dropped |\n|---|---|---|---|---|---|---|---|\n"
    keys = ("raw", "recovered", "kept", "flagged", "blank", "set_aside", "dropped")
    lines = [f"| {r['pdf']} | " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows]
    total = "| **all** | " + " | ".join(str(sum(r[k] for r in rows)) for k in keys) + " |"
    return head + "\n".join([*lines, total])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    args = parser.parse_args(argv)
    rows, readings = [], Counter[str]()
    for path in all_inputs():
        log(f"{path.name} ...")
        row, found = measure(path)
        rows.append(row)
        readings.update(found)
    result = {
        "benchmark": "glyphs", "at": now_iso(), "git": git_info(), "marker": MARKER, "pdfs": rows,
        "totals": {k: sum(r[k] for r in rows) for k in ("raw", "recovered", "kept", "flagged", "blank", "set_aside", "dropped")},
        "readings": dict(sorted(readings.items())),
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows))


if __name__ == "__main__":
    main()
