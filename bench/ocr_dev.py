"""OCR on the dev set: image-only copies of the 5 dev PDFs against their text-layer originals (issue 31).

Every page of the 5 dev PDFs is made into a picture (`bench/common/scans.py`: 200 dpi, 0.2 % of pixels random
grey, turned 0.3°, as bench.ocr) and the pictures into image-only PDFs of the same names, cached under
`bench/.cache/ocr-dev-pictures/` (never committed). Both sets are ingested into their own cached workspaces
(`ocrdev-scan-<fingerprint>`, `ocrdev-text-<fingerprint>`) as the app ingests them, OCR on; then, on the dev
questions (`--questions`, default all+xling), for each workspace:

- search page-hit@k and MRR@10 per method (`bench.retrieval_dev.eval_dev`, the metrics of bench.retrieval);
- the offline answerer's first-citation and any-citation page accuracy (`bench.answers_rows.evaluate` and
  `bench.answers_metrics.by_language`, the metrics of bench.answers);
- character accuracy of the OCR text per language, pooled over all pages: each page's lines as ingestion read
  them (kept while the scanned copies were ingested) against the same page's text layer parsed the same way
  (1 - Levenshtein / reference characters, whitespace ignored, NFKC; bench.ocr), and `order_free` (recognition
  alone, order ignored).

    PYTHONPATH=. .venv/bin/python -m bench.ocr_dev --build-only   # ingest both (OCR of ~150 pages: long)
    PYTHONPATH=. .venv/bin/python -m bench.ocr_dev                # measure -> bench/results/ocr_dev.json

`--partial` measures a scanned workspace whose ingestion has not finished: only the documents ready so far, in both
workspaces (search and answers limited to them), and only the questions whose gold documents are all among them.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from bench.answers_metrics import by_language
from bench.answers_rows import evaluate
from bench.common import (
    CACHE_DIR,
    RESULTS_DIR,
    BenchApp,
    CachedWorkspace,
    bench_settings,
    dev_inputs,
    git_info,
    log,
    machine_info,
    now_iso,
    open_app,
)
from bench.common.questions import add_questions_option, gold_documents, load_questions
from bench.common.scans import comparable, edit_distance, scanned_copy
from bench.retrieval_dev import eval_dev

OUT = RESULTS_DIR / "ocr_dev.json"
PICTURES = CACHE_DIR / "ocr-dev-pictures"
SCAN: dict[str, Any] = {"dpi": 200, "noise": 0.002, "skew_deg": 0.3}
# Smallest first: a run stopped early has whole documents ready (`--partial`).
ORDER = ("arnett-2014-guideline-strategies.pdf", "mosca-2011-women-cvd.pdf", "eckel-2013-lifestyle.pdf",
         "zh-acute-af-ed-2024.pdf", "shen-2017-syncope.pdf")
PAGES_FILE = "ocr-pages.jsonl"  # in the scanned workspace's data dir: each document's pages as OCR read them
TARGETS = {"page_hit@5_gap": 0.05, "first_citation_gap": 0.05, "accuracy_en": 0.95, "accuracy_zh": 0.90}
LANGUAGE = {"zh-acute-af-ed-2024.pdf": "zh"}


def scanned_inputs() -> list[Path]:
    """Image-only copies of the dev PDFs (made once, cached), in `ORDER`."""
    import pymupdf

    PICTURES.mkdir(parents=True, exist_ok=True)
    sources = {p.name: p for p in dev_inputs()}
    made = []
    for name in ORDER:
        target = PICTURES / name
        if not target.exists():
            log(f"scanning {name} ...")
            with pymupdf.open(sources[name]) as doc:
                pages = [(sources[name], number) for number in range(1, doc.page_count + 1)]
            partial = target.with_suffix(".tmp.pdf")
            scanned_copy(pages, partial, **SCAN)
            partial.rename(target)
        made.append(target)
    return made


def page_texts(parsed: Any) -> dict[int, str]:
    """Each page's lines in reading order, one per row."""
    texts: dict[int, list[str]] = {}
    for paragraph in parsed.paragraphs:
        for span in paragraph.spans:
            texts.setdefault(span.line.page, []).append(span.line.text)
    return {page: "\n".join(lines) for page, lines in texts.items()}


@contextmanager
def keeping_pages(data_dir: Path) -> Iterator[None]:
    """While ingesting, append each parsed document's page texts to `PAGES_FILE` (a line per document)."""
    from workspace_app.ingest import pipeline

    original = pipeline.read_source

    def read_and_keep(path: Path, name: str, *args: Any, **kwargs: Any) -> Any:
        parsed = original(path, name, *args, **kwargs)
        record = {"document": name, "pages_ocr": parsed.pages_ocr, "pages": page_texts(parsed)}
        with (data_dir / PAGES_FILE).open("a", encoding="utf-8") as out:
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
        return parsed

    pipeline.read_source = read_and_keep  # type: ignore[assignment]
    try:
        yield
    finally:
        pipeline.read_source = original  # type: ignore[assignment]


def ingest(app: BenchApp, inputs: Sequence[Path], label: str) -> dict[str, Any]:
    """Ingest the files one by one into the bench workspace; wall and process CPU seconds per document."""
    app.workspaces.create(CachedWorkspace.WORKSPACE)
    documents, failures = [], []
    for path in inputs:
        started, cpu = time.perf_counter(), time.process_time()
        report = app.documents.ingest(CachedWorkspace.WORKSPACE, path, path.name)
        took = {"wall_s": round(time.perf_counter() - started, 1), "cpu_s": round(time.process_time() - cpu, 1)}
        documents.append({"document": path.name, "status": report.status, "pages": report.pages,
                          "chunks": report.chunks, **took, "loadavg": [round(x, 2) for x in os.getloadavg()]})
        log(f"  {label}: {path.name}: {report.status}, {report.pages} pages, {report.chunks} chunks, {took}")
        if report.status != "ready":
            failures.append({"document": path.name, "status": report.status, "error": report.error})
    return {"documents": documents, "failures": failures, "measured_at": now_iso(), "git_commit": git_info()["commit"]}


def build_scanned(cached: CachedWorkspace, inputs: list[Path]) -> Any:
    def build(app: BenchApp) -> dict[str, Any]:
        with keeping_pages(cached.data_dir):
            return ingest(app, inputs, "scanned")
    return build


def build_text(app: BenchApp) -> dict[str, Any]:
    return ingest(app, dev_inputs(), "text layer")


def char_accuracy(data_dir: Path) -> dict[str, Any]:
    """Pooled character accuracy per language of the OCR'd pages against the text layer parsed the same way; pages
    whose text layer holds less than half of what OCR read are set apart ("picture pages": a figure drawn as an
    image, whose words OCR reads and the text layer lacks, so there is nothing to compare them with)."""
    from workspace_app.ingest.readers.pdf import parse_pdf

    sources = {p.name: p for p in dev_inputs()}
    totals: dict[str, Counter[str]] = {}
    pages, pictures = [], []
    for line in (data_dir / PAGES_FILE).read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        name = record["document"]
        reference = page_texts(parse_pdf(sources[name], name))
        for page in record["pages_ocr"]:
            expected, found = comparable(reference.get(page, "")), comparable(record["pages"].get(str(page), ""))
            counts = Counter(pages=1, reference=len(expected), longer=max(len(expected), len(found)),
                             distance=edit_distance(expected, found),
                             common=sum((Counter(expected) & Counter(found)).values()))
            row = {"document": name, "page": page, "read_chars": len(found), **_accuracy(counts)}
            if len(expected) < 0.5 * len(found):
                pictures.append(row)
                continue
            pages.append(row)
            totals.setdefault(LANGUAGE.get(name, "en"), Counter()).update(counts)
    return {"by_language": {lang: _accuracy(c) for lang, c in totals.items()}, "picture_pages": pictures,
            "pages": pages}


def _accuracy(counts: Counter[str]) -> dict[str, Any]:
    return {
        "pages": counts["pages"], "reference_chars": counts["reference"],
        "accuracy": round(1 - counts["distance"] / max(counts["reference"], 1), 4),
        "order_free": round(counts["common"] / max(counts["longer"], 1), 4),
    }


def measure(app: BenchApp, questions: list[dict[str, Any]], question_set: str) -> dict[str, Any]:
    """Search page-hit metrics and answer citation accuracy on one workspace."""
    started = time.perf_counter()
    search = eval_dev(app, questions)
    app.answers.ask(CachedWorkspace.WORKSPACE, "warm up: what is syncope?", mode="hybrid")
    rows = evaluate(app.answers, questions, "hybrid", question_set, app.catalog)
    return {
        "search": search["metrics"], "search_misses_at_5": search["misses_at_5"],
        "answers": by_language(rows), "run_s": round(time.perf_counter() - started, 1),
        "answer_rows": [{k: r[k] for k in ("id", "lang", "first", "any", "refused")} for r in rows],
    }


class _Within:
    """A service whose `search` and `ask` look only in some documents (a partial run limits both workspaces alike:
    the scanned one's unfinished document must not be a distractor only the text layer's workspace lacks)."""

    def __init__(self, inner: Any, documents: list[str]) -> None:
        self._inner = inner
        self._documents = documents

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def search(self, workspace: str, query: str, top_k: int | None = None, documents: Any = None,
               methods: Any = None) -> Any:
        return self._inner.search(workspace, query, top_k, self._documents, *([methods] if methods else []))

    def ask(self, workspace: str, question: str, history: Any = (), documents: Any = None, mode: str = "naive") -> Any:
        return self._inner.ask(workspace, question, history, self._documents, mode)


def within(app: BenchApp, documents: list[str] | None) -> Any:
    """The app, or one whose search and answers see only `documents` (names)."""
    if documents is None:
        return app
    return SimpleNamespace(search=_Within(app.search, documents), answers=_Within(app.answers, documents),
                           settings=app.settings, catalog=app.catalog)


def ready_documents(app: BenchApp) -> list[str]:
    workspace = app.workspaces.get(CachedWorkspace.WORKSPACE)
    return [d.name for d in app.catalog.list_documents(workspace.id) if d.status == "ready"]


def compare(scanned: dict[str, Any], text: dict[str, Any]) -> dict[str, Any]:
    """Scanned minus text layer for the targets' figures, overall and per language."""
    out: dict[str, Any] = {}
    for lang in ("all", "en", "zh"):
        hit = [side["search"]["hybrid"].get(lang, {}).get("hit@5") for side in (scanned, text)]
        first = [side["answers"].get(lang, {}).get("first-citation page accuracy") for side in (scanned, text)]
        out[lang] = {
            "hybrid page-hit@5 (scanned, text layer)": hit,
            "page-hit@5 gap": None if None in hit else round(hit[1] - hit[0], 4),
            "first-citation accuracy (scanned, text layer)": first,
            "first-citation gap": None if None in first else round(first[1] - first[0], 4),
        }
    return out


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.ocr_dev", description=__doc__.splitlines()[0])
    parser.add_argument("--build-only", action="store_true", help="ingest both workspaces, measure nothing")
    parser.add_argument("--fresh", action="store_true", help="ingest both again")
    parser.add_argument("--partial", action="store_true", help="measure an unfinished scanned workspace")
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    add_questions_option(parser, "all+xling")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    machine = machine_info()
    text_cache = CachedWorkspace("ocrdev-text", dev_inputs())  # first: minutes, where the scans take an hour
    text_app = text_cache.open(build_text, args.fresh)
    inputs = scanned_inputs()
    scan_cache = CachedWorkspace("ocrdev-scan", inputs)
    if args.partial:
        scanned_app = open_app(bench_settings(scan_cache.data_dir))
    else:
        scanned_app = scan_cache.open(build_scanned(scan_cache, inputs), args.fresh)
    if args.build_only:
        return 0
    questions = load_questions(args.questions)
    ready = ready_documents(scanned_app)
    if args.partial:
        questions = [q for q in questions if q["kind"] == "unanswerable" or set(gold_documents(q)) <= set(ready)]
    log(f"[ocr_dev] {len(questions)} questions; scanned documents ready: {', '.join(ready)}")
    limit = ready if args.partial else None
    scanned = measure(within(scanned_app, limit), questions, args.questions)
    text = measure(within(text_app, limit), questions, args.questions)
    result = {
        "benchmark": "ocr_dev", "at": now_iso(), "command": "python -m bench.ocr_dev " + " ".join(argv or sys.argv[1:]),
        "git": git_info(), "machine": machine, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "scan": SCAN, "question_set": args.questions, "questions": len(questions), "partial": args.partial,
        "scanned_documents_ready": ready, "targets": TARGETS,
        "ingest": {"scanned": scan_cache.meta.get("ingest"), "text_layer": text_cache.meta.get("ingest")},
        "character_accuracy": char_accuracy(scan_cache.data_dir),
        "comparison": compare(scanned, text), "scanned": scanned, "text_layer": text,
    }
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({"character_accuracy": result["character_accuracy"]["by_language"],
                      "comparison": result["comparison"]}, indent=1, ensure_ascii=False))
    log(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
