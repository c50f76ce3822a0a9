"""OCR benchmark: pages per minute and character accuracy of the OCR stage on scanned copies of dev PDF pages.

Each page is rendered to a picture (`bench/common/scans.py`: 200 dpi, light noise, a slight skew, as through a
scanner); the pictures make one image-only PDF, parsed as ingestion does with OCR on (`parse_pdf(..., ocr=...)`,
`ocr_workers` pages at once). Each page's text (its lines in reading order) is compared with the text layer of the
same pages put in one born-digital PDF and parsed the same way (so running headers are dropped alike):

- character accuracy = 1 - Levenshtein distance / reference characters, whitespace ignored, NFKC (full-width forms
  as ASCII); pooled per language over all its pages. A table read in another order than the text layer's counts
  as errors too, so this is a floor on what OCR recognises; `order_free` is the share of characters the two texts
  have in common as multisets (recognition alone, order ignored), to tell the two apart;
- pages per minute = pages / seconds of the OCR stage (from its first report to its last: rendering + detection +
  recognition), the engines already loaded (their load time is reported apart);
- CPU seconds per page = the process's CPU time (all threads) over the OCR stage / pages: load on the machine
  does not change it much, so `60 / (CPU s per page / cores)` is the pages per minute a quiet machine would give
  when the pages are read on all cores at once (`--workers` = cores).

The machine is shared: the load average at start and end is recorded with the figures.

    ORT_DISABLE_TELEMETRY=1 .venv/bin/python -m bench.ocr     # writes bench/results/ocr.json, prints a table
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import CORPUS_DIR, RESULTS_DIR, compact_json, git_info, log, machine_info, now_iso
from bench.common.scans import comparable, edit_distance, scanned_copy
from workspace_app.ingest.layout import ParsedDocument
from workspace_app.ingest.ocr import PageOcr, engine_pool
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


def page_texts(parsed: ParsedDocument) -> dict[int, str]:
    """Each page's lines in reading order, one per row."""
    texts: dict[int, list[str]] = {}
    for paragraph in parsed.paragraphs:
        for span in paragraph.spans:
            texts.setdefault(span.line.page, []).append(span.line.text)
    return {page: "\n".join(lines) for page, lines in texts.items()}


def cpu_seconds() -> float:
    """CPU time of this process so far, all threads, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def born_digital(pages: list[tuple[Path, int]], target: Path) -> Path:
    """The same pages as they are (text layer), in one PDF."""
    with pymupdf.open() as out:
        for source, number in pages:
            with pymupdf.open(source) as doc:
                out.insert_pdf(doc, from_page=number - 1, to_page=number - 1)
        out.save(target)
    return target


def measure(folder: Path, ocr: PageOcr, scan: dict[str, Any], chosen: tuple[tuple[str, int, str], ...]
            ) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Per page: characters and edit distance to its text layer; and the OCR stage's wall and CPU seconds."""
    pages = [(CORPUS_DIR / name, number) for name, number, _ in chosen]
    scanned = scanned_copy(pages, folder / "scanned.pdf", **scan)
    reports: list[tuple[float, float]] = []
    timed = replace(ocr, report=lambda d, t: reports.append((time.perf_counter(), cpu_seconds())))
    read = page_texts(parse_pdf(scanned, scanned.name, ocr=timed))
    reference = page_texts(parse_pdf(born_digital(pages, folder / "original.pdf"), "original.pdf"))
    rows = []
    for page, (name, number, language) in enumerate(chosen, start=1):
        expected, found = comparable(reference.get(page, "")), comparable(read.get(page, ""))
        distance = edit_distance(expected, found)
        common = sum((Counter(expected) & Counter(found)).values())
        rows.append({
            "pdf": name, "page": number, "language": language, "reference_chars": len(expected),
            "read_chars": len(found), "edit_distance": distance,
            "accuracy": round(1 - distance / max(len(expected), 1), 4), "common_chars": common,
            "order_free": round(common / max(len(expected), len(found), 1), 4),
        })
    timing = {"ocr_s": reports[-1][0] - reports[0][0], "cpu_s": reports[-1][1] - reports[0][1]}
    return rows, timing


def summary(rows: list[dict[str, Any]], timing: dict[str, float], load_s: float, cores: int) -> dict[str, Any]:
    """Pages per minute over all pages (measured, and a quiet machine's from CPU seconds), pooled accuracy per
    language."""
    seconds, cpu_per_page = timing["ocr_s"], timing["cpu_s"] / len(rows)
    result: dict[str, Any] = {
        "pages": len(rows), "ocr_s": round(seconds, 1), "pages_per_minute": round(60 * len(rows) / seconds, 2),
        "cpu_s_per_page": round(cpu_per_page, 2), "cores": cores,
        "quiet_pages_per_minute": round(60 / (cpu_per_page / cores), 1), "engine_load_s": round(load_s, 2),
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
    head = "| page | language | reference chars | accuracy | order-free |\n|---|---|---|---|---|\n"
    lines = [f"| {r['pdf']} p{r['page']} | {r['language']} | {r['reference_chars']} | {r['accuracy']} "
             f"| {r['order_free']} |" for r in rows]
    tail = (f"\n\n{total['pages']} pages in {total['ocr_s']} s: **{total['pages_per_minute']} pages/min** measured, "
            f"{total['cpu_s_per_page']} CPU s a page (a quiet machine's {total['cores']} cores: "
            f"**{total['quiet_pages_per_minute']} pages/min**); accuracy "
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
    parser.add_argument("--detection-side", type=int, default=1280, help="ingest.ocr_detection_side")
    parser.add_argument("--workers", type=int, default=2, help="ingest.ocr_workers (pages read at once)")
    parser.add_argument("--threads", type=int, default=1, help="ingest.ocr_threads (threads per engine)")
    parser.add_argument("--cores", type=int, default=2, help="cores of the quiet-machine estimate")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    machine = machine_info()
    ocr = PageOcr(dpi=args.dpi, detection_side=args.detection_side, workers=args.workers, threads=args.threads)
    started = time.perf_counter()
    pool = engine_pool(ocr.engine, ocr.detection_side, ocr.threads, ocr.workers)
    with ExitStack() as held:  # all engines made before the clock starts
        for _ in range(ocr.workers):
            held.enter_context(pool.engine())
    load_s = time.perf_counter() - started
    scan = {"dpi": args.scan_dpi, "noise": args.noise, "skew_deg": args.skew}
    log(f"reading {args.limit} pages, {args.workers} at once ...")
    with tempfile.TemporaryDirectory() as folder:
        rows, timing = measure(Path(folder), ocr, scan, PAGES[: args.limit])
    total = {**summary(rows, timing, load_s, args.cores),
             "loadavg": [machine["loadavg_at_start"], [round(x, 2) for x in os.getloadavg()]]}
    result = {
        "benchmark": "ocr", "at": now_iso(), "git": git_info(), "machine": machine, "engine": ocr.engine,
        "ocr_dpi": args.dpi, "detection_side": args.detection_side, "workers": args.workers,
        "threads": args.threads, "scan": scan, "targets": TARGETS, "summary": total, "pages": rows,
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows, total))


if __name__ == "__main__":
    main()
