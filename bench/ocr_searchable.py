"""A scanned 20-page PDF is searchable while its later pages are still read (issue 31's target), measured.

`mosca-2011-women-cvd.pdf` (20 pages) made into an image-only PDF as bench.ocr_dev makes its scans (200 dpi, light
noise, a slight turn), ingested into a new data dir. After each page OCR has read, a keyword search and the default
(hybrid) search look for a phrase of that page's text layer, and for one of the last page's. Recorded per page:
seconds since the job started, whether the page's own phrase is found on that page (a provisional passage), and
whether the last page's phrase is found yet (it must not be, before its page is read). The run must end as a normal
one: no provisional passage left, the first page's phrase found in a chunk of the finished document.

    PYTHONPATH=. .venv/bin/python -m bench.ocr_searchable       # ~3 min; writes bench/results/ocr_searchable.json
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

import pymupdf

from bench.common import CORPUS_DIR, RESULTS_DIR, compact_json, git_info, log, machine_info, now_iso
from bench.common.app import bench_settings, open_app
from bench.common.scans import scanned_copy
from workspace_app.ingest.pipeline import Progress
from workspace_app.models.documents import PROVISIONAL

SOURCE = "mosca-2011-women-cvd.pdf"
NAME = "scan.pdf"
OWNER = "bench@ocr_searchable:1:x"
OUT = RESULTS_DIR / "ocr_searchable.json"
PHRASE_WORDS = 8


def phrases(source: Path) -> list[str]:
    """Per page, a run of words from the middle of its longest text-layer line that no other page has (not a
    running header, which ingestion drops)."""
    found = []
    with pymupdf.open(source) as doc:
        pages = [[line.strip() for line in page.get_text().splitlines()] for page in doc]
        for lines in pages:
            own = [line for line in lines if sum(line in other for other in pages) == 1] or lines
            longest = max(own, key=len).split()
            middle = max(0, len(longest) // 2 - PHRASE_WORDS // 2)
            found.append(" ".join(longest[middle : middle + PHRASE_WORDS]))
    return found


def found_on(app: Any, phrase: str, page: int, methods: tuple[str, ...] | None = None) -> bool:
    """Whether the search's best hits hold a passage of the scan on that page."""
    kwargs = {"methods": methods} if methods else {}
    hits = app.search.search("W", phrase, **kwargs).hits[:5]
    return any(h.document_name == NAME and h.chunk.page_start <= page <= h.chunk.page_end for h in hits)


def main() -> int:
    source = CORPUS_DIR / SOURCE
    wanted = phrases(source)
    pages = len(wanted)
    with tempfile.TemporaryDirectory(prefix="ocr-searchable-") as folder:
        scan = scanned_copy([(source, n) for n in range(1, pages + 1)], Path(folder) / NAME, dpi=200, noise=0.002,
                            skew_deg=0.3)
        app = open_app(bench_settings(Path(folder) / "data"))
        app.workspaces.create("W")
        submitted = app.documents.submit("W", scan)
        started = time.monotonic()
        rows: list[dict[str, Any]] = []

        def look(progress: Progress) -> None:
            if progress.stage != "ocr" or not progress.done or len(rows) >= progress.done:
                return
            page = progress.done
            document = app.documents.get("W", NAME)
            rows.append({
                "page": page, "of": progress.total, "at_s": round(time.monotonic() - started, 1),
                "partly_searchable": bool(document.partly_searchable),
                "own_page_keyword": found_on(app, wanted[page - 1], page, ("sparse",)),
                "own_page_hybrid": found_on(app, wanted[page - 1], page),
                "last_page_found_early": page < pages and found_on(app, wanted[-1], pages, ("sparse",)),
            })
            log(f"page {page}/{progress.total} at {rows[-1]['at_s']} s: {rows[-1]}")

        outcome = app.documents.jobs.run(submitted.document_id, OWNER, None, look)
        finished = time.monotonic() - started
        document = app.documents.get("W", NAME)
        chunks = app.catalog.get_chunks(app.catalog.document_chunk_ids(document.id)).values()
        result = {
            "benchmark": "ocr_searchable", "at": now_iso(), "git": git_info(), "machine": machine_info(),
            "command": "python -m bench.ocr_searchable", "document": SOURCE, "pages": pages,
            "outcome": outcome, "ready_s": round(finished, 1),
            "first_searchable_s": next((r["at_s"] for r in rows if r["own_page_keyword"]), None),
            "ocr_done_s": rows[-1]["at_s"] if rows else None,
            "pages_found_while_reading": sum(r["own_page_keyword"] for r in rows[:-1]),
            "pages_found_while_reading_hybrid": sum(r["own_page_hybrid"] for r in rows[:-1]),
            "later_page_found_early": sum(r["last_page_found_early"] for r in rows),
            "provisional_left": sum(c.kind == PROVISIONAL for c in chunks),
            "first_page_found_when_ready": found_on(app, wanted[0], 1, ("sparse",)),
            "pages_read": rows,
        }
        app.close()
    OUT.write_text(compact_json(result) + "\n", encoding="utf-8")
    log(f"{pages} pages: first page searchable at {result['first_searchable_s']} s, OCR done at "
        f"{result['ocr_done_s']} s, ready at {result['ready_s']} s; pages found while reading "
        f"{result['pages_found_while_reading']} of {pages - 1} (hybrid {result['pages_found_while_reading_hybrid']}), "
        f"later page found early {result['later_page_found_early']}, provisional left {result['provisional_left']}")
    return 0 if outcome == "ready" else 1


if __name__ == "__main__":
    raise SystemExit(main())
