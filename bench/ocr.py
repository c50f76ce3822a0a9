"""OCR benchmark: pages per minute and character accuracy of the OCR stage on scanned copies of dev PDF pages.

Each page is rendered to a picture (`bench/common/scans.py`: 200 dpi, light noise, a slight skew, as through a
scanner), put alone in an image-only PDF, and parsed as ingestion does with OCR on (`parse_pdf(..., ocr=...)`).
Its text (the lines in reading order) is compared with the text layer of the same page parsed the same way:

- character accuracy = 1 - Levenshtein distance / reference characters, whitespace ignored, NFKC (full-width forms
  as ASCII); pooled per language over all its pages. A table read in another order than the text layer's counts
  as errors too, so this is a floor on what OCR recognises; `order_free` is the share of characters the two texts
  have in common as multisets (recognition alone, order ignored), to tell the two apart;
- pages per minute = pages / seconds of the OCR stage (from its first report to its last: rendering + detection +
  recognition), the engine already loaded (its load time is reported apart).

The machine is shared: the load average at start and end is recorded with the figures.

    ORT_DISABLE_TELEMETRY=1 .venv/bin/python -m bench.ocr     # writes bench/results/ocr.json, prints a table
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import CORPUS_DIR, RESULTS_DIR, compact_json, git_info, log, machine_info, now_iso
from bench.common.scans import comparable, edit_distance, scanned_copy
from workspace_app.ingest.layout import ParsedDocument
from workspace_app.ingest.ocr import PageOcr, load_engine
from workspace_app.ingest.readers.pdf import parse_pdf

OUT = RESULTS_DIR / "ocr.json"
# Pages of the 5 dev PDFs (1-based): body text of each English one (pages whose text is all in the text layer: no
# pictures), and two of the Chinese one (a page with a recommendation table, and prose). shen p4 and zh-acute p5
# are the pages tests/ingest/test_ocr.py reads.
PAGES = (
    ("shen-2017-syncope.pdf", 4, "en"),
    ("eckel-2013-lifestyle.pdf", 3, "en"),
    ("mosca-2011-women-cvd.pdf", 3, "en"),
    ("arnett-2014-guideline-strategies.pdf", 2, "en"),
    ("zh-acute-af-ed-2024.pdf", 5, "zh"),
    ("zh-acute-af-ed-2024.pdf", 6, "zh"),
)
TARGETS = {"pages_per_minute": 10.0, "en": 0.95, "zh": 0.90}


def lines_text(parsed: ParsedDocument) -> str:
    """A parsed page's lines in reading order, one per row."""
    return "\n".join(span.line.text for paragraph in parsed.paragraphs for span in paragraph.spans)


def measure_page(name: str, number: int, folder: Path, ocr: PageOcr, scan: dict[str, Any]) -> dict[str, Any]:
    """One page: OCR seconds, characters, edit distance to its text layer."""
    source = CORPUS_DIR / name
    original = folder / f"{Path(name).stem}-p{number}.pdf"
    with pymupdf.open(source) as doc, pymupdf.open() as one:
        one.insert_pdf(doc, from_page=number - 1, to_page=number - 1)
        one.save(original)
    scanned = scanned_copy([(source, number)], folder / f"{Path(name).stem}-p{number}-scan.pdf", **scan)
    reports: list[float] = []
    timed = PageOcr(ocr.engine, ocr.dpi, ocr.max_chars, ocr.min_image_share, lambda d, t: reports.append(time.perf_counter()))
    read = lines_text(parse_pdf(scanned, scanned.name, ocr=timed))
    reference = lines_text(parse_pdf(original, original.name))
    expected, found = comparable(reference), comparable(read)
    distance = edit_distance(expected, found)
    common = sum((Counter(expected) & Counter(found)).values())
    return {
        "pdf": name, "page": number, "ocr_s": round(reports[-1] - reports[0], 2), "reference_chars": len(expected),
        "read_chars": len(found), "edit_distance": distance, "accuracy": round(1 - distance / max(len(expected), 1), 4),
        "common_chars": common, "order_free": round(common / max(len(expected), len(found), 1), 4),
    }


def summary(rows: list[dict[str, Any]], load_s: float) -> dict[str, Any]:
    """Pages per minute over all pages, and pooled accuracy per language."""
    seconds = sum(r["ocr_s"] for r in rows)
    result: dict[str, Any] = {
        "pages": len(rows), "ocr_s": round(seconds, 1), "pages_per_minute": round(60 * len(rows) / seconds, 2),
        "engine_load_s": round(load_s, 2),
    }
    for language in ("en", "zh"):
        mine = [r for r in rows if r["language"] == language]
        if not mine:  # --limit left this language out
            result[f"accuracy_{language}"] = result[f"order_free_{language}"] = None
            continue
        chars = sum(r["reference_chars"] for r in mine)
        result[f"accuracy_{language}"] = round(1 - sum(r["edit_distance"] for r in mine) / max(chars, 1), 4)
        longer = sum(max(r["reference_chars"], r["read_chars"]) for r in mine)
        result[f"order_free_{language}"] = round(sum(r["common_chars"] for r in mine) / max(longer, 1), 4)
    return result


def markdown(rows: list[dict[str, Any]], total: dict[str, Any]) -> str:
    """The table printed after a run."""
    head = "| page | language | OCR s | reference chars | accuracy | order-free |\n|---|---|---|---|---|---|\n"
    lines = [f"| {r['pdf']} p{r['page']} | {r['language']} | {r['ocr_s']} | {r['reference_chars']} | {r['accuracy']} "
             f"| {r['order_free']} |" for r in rows]
    tail = (f"\n\n{total['pages']} pages in {total['ocr_s']} s: **{total['pages_per_minute']} pages/min**; accuracy "
            f"**{total['accuracy_en']} English, {total['accuracy_zh']} Chinese** (order-free {total['order_free_en']}, "
            f"{total['order_free_zh']}); load average {total['loadavg']}")
    return head + "\n".join(lines) + tail


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    parser.add_argument("--dpi", type=int, default=200, help="OCR render resolution (ingest.ocr_dpi)")
    parser.add_argument("--scan-dpi", type=int, default=200, help="resolution of the scanned pictures")
    parser.add_argument("--noise", type=float, default=0.002, help="share of pixels made random grey")
    parser.add_argument("--skew", type=float, default=0.3, help="rotation of the pictures in degrees")
    parser.add_argument("--limit", type=int, default=len(PAGES), help="measure only the first N pages")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    machine = machine_info()
    ocr = PageOcr(dpi=args.dpi)
    started = time.perf_counter()
    load_engine(ocr.engine)
    load_s = time.perf_counter() - started
    scan = {"dpi": args.scan_dpi, "noise": args.noise, "skew_deg": args.skew}
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for name, number, language in PAGES[: args.limit]:
            log(f"{name} p{number} ...")
            rows.append({**measure_page(name, number, Path(folder), ocr, scan), "language": language})
            log(f"  {rows[-1]['ocr_s']} s, accuracy {rows[-1]['accuracy']}")
    total = {**summary(rows, load_s), "loadavg": [machine["loadavg_at_start"], [round(x, 2) for x in os.getloadavg()]]}
    result = {
        "benchmark": "ocr", "at": now_iso(), "git": git_info(), "machine": machine, "engine": ocr.engine,
        "ocr_dpi": args.dpi, "scan": scan, "targets": TARGETS, "summary": total, "pages": rows,
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows, total))


if __name__ == "__main__":
    main()
