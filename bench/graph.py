"""Graph benchmark: extraction per corpus PDF, answers per query mode, ask latency per mode, Graph page render time.

Run from the repository root:

    .venv/bin/python -m bench.graph                  # everything -> bench/results/graph.json, tables on stdout
    .venv/bin/python -m bench.graph --only-modes     # answer metrics and latency per mode (the dev workspace)
    .venv/bin/python -m bench.graph --markdown       # print the README tables from bench/results/graph.json

Parts:
1. Extraction (`bench/graph_extraction.py::extraction_stats` on a copy of bench.retrieval's cached 13-PDF
   workspace, the graph stage re-run on every document): entities, relations and communities per PDF, the graph
   stage's seconds and share of ingestion, the 30 highest-degree entities per PDF.
2. Modes: the chat issue's answer metrics (bench/answers.py: first/any-citation page accuracy, refusals, fully
   supported answers) for naive, local, global and hybrid side by side, on the 50 dev questions in the workspace
   of the 5 dev PDFs (the same cached workspace as bench.answers), plus how many entities each answer lists.
   `--questions all|xling|all+xling` evaluates a larger set instead, also per file and per kind.
3. Latency: every one of the first 50 dev questions (whatever `--questions` says) asked in every mode,
   `--passes` times, the embedder's recent-query memo cleared before each ask (warm model, warm caches); p50 over
   all asks and p95 over the per-question medians.
4. Graph page render on the 13-PDF workspace (the largest): `entity_graph` + the pyvis HTML (median of 5), and,
   with Debian's Chromium, the time from loading that HTML to vis-network's first drawing and to a settled
   layout, with every request to another host aborted and counted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.answers import build as build_dev_workspace
from bench.answers import every_document_cited, fully_supported, metrics, on_gold_page
from bench.common import (
    CACHE_DIR,
    REPO,
    RESULTS_DIR,
    BenchApp,
    CachedWorkspace,
    bench_settings,
    dev_inputs,
    forget_recent_queries,
    git_info,
    log,
    machine_info,
    now_iso,
    open_app,
    percentile,
)
from bench.common.questions import DEFAULT_SET, QuestionSet, add_questions_option, grouped_metrics, results_name
from bench.common.questions import select_questions as select_question_set

MODES = ("naive", "local", "global", "hybrid")
TARGETS_MS = {"local": 1000.0, "global": 2000.0, "hybrid": 2000.0}
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run",
]
NAMES = ["first-citation page accuracy", "any-citation page accuracy", "refusal recall", "false-refusal rate",
         "answers fully supported"]


def evaluate_mode(answers: Any, questions: list[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """One record per question, asked in `mode` (the rows bench.answers.metrics expects, plus entities)."""
    rows = []
    for q in questions:
        answer = answers.ask(CachedWorkspace.WORKSPACE, q["question"], mode=mode)
        answerable = q["kind"] != "unanswerable"
        rows.append({
            "id": q["id"], "lang": q["lang"], "kind": q["kind"], "answerable": answerable, "refused": answer.refused,
            "first": bool(answerable and answer.citations and on_gold_page(answer.citations[0], q)),
            "any": bool(answerable and any(on_gold_page(c, q) for c in answer.citations)),
            "supported": None if answer.refused else fully_supported(answer),
            "citations": [[c.document, c.page_start, c.page_end] for c in answer.citations[:3]],
            "entities": [f"{e.name} ({e.type})" for e in answer.entities],
            "entities_cited": sum(1 for e in answer.entities if e.citations), "ms": answer.timings_ms.get("total", 0.0),
        })
        if isinstance(q["doc"], list):
            rows[-1]["all_docs"] = every_document_cited(answer.citations, q)
    return rows


def mode_metrics(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """bench.answers' metrics over all, en and zh, and the share of answers listing entities."""
    result = {g: metrics([r for r in rows if g == "all" or r["lang"] == g]) for g in ("all", "en", "zh")}
    answered = [r for r in rows if not r["refused"]]
    result["all"]["answers listing entities"] = round(sum(bool(r["entities"]) for r in answered) / max(1, len(answered)), 4)
    result["all"]["entities per answer (mean)"] = round(
        statistics.fmean(len(r["entities"]) for r in answered) if answered else 0.0, 2
    )
    return result


def mode_latency(app: BenchApp, questions: list[dict[str, Any]], passes: int) -> dict[str, Any]:
    """Every question in every mode, interleaved by question so each mode sees the same machine load."""
    per: dict[str, dict[str, list[float]]] = {m: {q["id"]: [] for q in questions} for m in MODES}
    stages: dict[str, dict[str, list[float]]] = {m: {} for m in MODES}
    for _ in range(passes):
        for q in questions:
            for mode in MODES:
                forget_recent_queries(app.embedder)
                started = time.perf_counter()
                answer = app.answers.ask(CachedWorkspace.WORKSPACE, q["question"], mode=mode)
                per[mode][q["id"]].append((time.perf_counter() - started) * 1000)
                for stage, ms in answer.timings_ms.items():
                    stages[mode].setdefault(stage, []).append(ms)
    result = {}
    for mode in MODES:
        every = [ms for values in per[mode].values() for ms in values]
        medians = [statistics.median(values) for values in per[mode].values()]
        result[mode] = {
            "asks": len(every), "p50": round(percentile(every, 50), 1),
            "p95 of per-question medians": round(percentile(medians, 95), 1), "p95 raw": round(percentile(every, 95), 1),
            "max": round(max(every), 1),
            "stages p50/p95 ms": {k: [round(percentile(v, 50), 1), round(percentile(v, 95), 1)] for k, v in stages[mode].items()},
        }
    return result


def run_modes(sets: QuestionSet, passes: int, fresh: bool, expansion: int | None = None) -> dict[str, Any]:
    """Answer metrics and latency per mode in the dev workspace (expansion: override the expansion blocks)."""
    from dataclasses import replace

    cached = CachedWorkspace("answers", dev_inputs())
    app = cached.open(build_dev_workspace, fresh)
    answers = app.answers  # offline: the extractive answerer is what is measured
    if expansion is not None:
        answers.modes.options = replace(answers.modes.options, expansion=expansion)
    return {"workspace": cached.summary(), **measure_modes(app, sets, passes, "dev")}


def measure_modes(app: BenchApp, sets: QuestionSet, passes: int, label: str) -> dict[str, Any]:
    """Metrics per mode (first pass) and latency per mode (`passes` more passes, first 50 questions) on one workspace."""
    answers, questions = app.answers, sets.questions
    graph = app.graph
    entities = len(graph.entities(app.workspaces.get(CachedWorkspace.WORKSPACE).id)) if graph else 0
    log(f"[{label}] {entities} entities in the workspace graph")
    for mode in MODES:
        answers.ask(CachedWorkspace.WORKSPACE, "warm up: what is syncope?", mode=mode)
    details = {}
    by_mode = {}
    for mode in MODES:
        started = time.perf_counter()
        details[mode] = evaluate_mode(answers, questions, mode)
        by_mode[mode] = mode_metrics(details[mode])
        log(f"[{label}] {mode}: first-citation {by_mode[mode]['all']['first-citation page accuracy']} "
            f"({time.perf_counter() - started:.1f} s)")
    latency_questions = sets.latency_questions
    log(f"[{label}] latency: {passes} passes x {len(latency_questions)} questions x {len(MODES)} modes")
    result = {"graph_entities": entities, "options": answers.modes.options.__dict__, "metrics": by_mode}
    if sets.groups is not None:
        grouped = {mode: grouped_metrics(details[mode], sets.groups, metrics) for mode in MODES}
        result["metrics_by_file"] = {mode: grouped[mode]["by_file"] for mode in MODES}
        result["metrics_by_kind"] = {mode: grouped[mode]["by_kind"] for mode in MODES}
    return {**result, "latency": mode_latency(app, latency_questions, passes), "details": details}


def run_modes_largest(app: BenchApp, sets: QuestionSet, passes: int) -> dict[str, Any]:
    """The modes on the 13-PDF workspace (more distractors, a larger graph), and hybrid with seq_ret routing."""
    from dataclasses import replace

    answers = app.answers
    result = measure_modes(app, sets, passes, "13 PDFs")
    answers.modes.options = replace(answers.modes.options, seq_ret=True)
    started = time.perf_counter()
    rows = evaluate_mode(answers, sets.questions, "hybrid")
    result["metrics"]["hybrid + seq_ret"] = mode_metrics(rows)
    result["details"]["hybrid + seq_ret"] = rows
    timed = {q["id"] for q in sets.latency_questions}
    ms = [r["ms"] for r in rows if r["id"] in timed]
    result["latency"]["hybrid + seq_ret"] = {
        "asks": len(ms), "p50": round(percentile(ms, 50), 1),
        "p95 of per-question medians": round(percentile(ms, 95), 1),
    }
    log(f"[13 PDFs] hybrid + seq_ret: first-citation {result['metrics']['hybrid + seq_ret']['all']['first-citation page accuracy']} "
        f"({time.perf_counter() - started:.1f} s)")
    return result


def largest_workspace() -> tuple[BenchApp, Path]:
    """The app on a copy of the newest cached 13-PDF workspace (bench.retrieval's), so the cache is untouched.

    Copying reuses its ingestion (parsing, chunks, vectors) instead of ingesting the 13 PDFs again; the graph
    stage is then run on every document by `extraction_stats`, which brings the graph up to date with the code.
    """
    candidates = sorted(CACHE_DIR.glob("all13-*"), key=lambda path: path.stat().st_mtime)
    if not candidates:
        raise SystemExit("no cached 13-PDF workspace under bench/.cache/all13-*: run python -m bench.retrieval first")
    target = Path(tempfile.mkdtemp(prefix="bench-graph-")) / "data"
    shutil.copytree(candidates[-1], target)
    settings = bench_settings(target)
    return open_app(settings, embedding_cache=target / "embeddings.sqlite"), target


def run_extraction(app: BenchApp) -> dict[str, Any]:
    """The graph-building figures of bench/graph_extraction.py (graph stage re-run on every document)."""
    from bench.graph_extraction import extraction_stats

    return extraction_stats(app, CachedWorkspace.WORKSPACE)


def run_render(app: BenchApp, repeats: int = 5) -> dict[str, Any]:
    """Graph page render time on the 13-PDF workspace: graph load + pyvis HTML, then drawing in Chromium."""
    from components.graph_view import MAX_NODES, build_network_html

    workspace = app.workspaces.get(CachedWorkspace.WORKSPACE)
    load, build = [], []
    view = None
    for _ in range(repeats):
        started = time.perf_counter()
        graph = app.graph.entity_graph(workspace.id)
        loaded = time.perf_counter()
        view = build_network_html(graph, max_nodes=MAX_NODES)
        load.append((loaded - started) * 1000)
        build.append((time.perf_counter() - loaded) * 1000)
    assert view is not None
    result: dict[str, Any] = {
        "entities": graph.number_of_nodes(), "relations": graph.number_of_edges(), "shown_nodes": view.shown_nodes,
        "shown_edges": view.shown_edges, "html_bytes": len(view.html),
        "entity_graph_ms_median": round(statistics.median(load), 1), "pyvis_html_ms_median": round(statistics.median(build), 1),
    }
    result["browser"] = draw_in_browser(view.html)
    return result


def draw_in_browser(html: str) -> dict[str, Any]:
    """Milliseconds from loading the page to vis-network's first drawing and to a settled layout, offline."""
    chromium = shutil.which("chromium")
    if chromium is None:
        return {"skipped": "no chromium on PATH"}
    from playwright.sync_api import sync_playwright

    outside: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1200, "height": 800})
        page.route("**/*", lambda route: (outside.append(route.request.url), route.abort()))
        started = time.perf_counter()
        page.set_content(html, wait_until="load")
        page.wait_for_selector("body[data-drawn-ms]", timeout=60_000)
        drawn = (time.perf_counter() - started) * 1000
        page.wait_for_selector("body[data-stable-ms]", timeout=120_000)
        stable = (time.perf_counter() - started) * 1000
        painted = page.evaluate(_PAINTED_PIXELS)
        browser.close()
    return {"first_draw_ms": round(drawn, 1), "settled_ms": round(stable, 1), "painted_pixels": painted,
            "outside_requests": outside}


# Counts canvas pixels that are not blank (the network really drew).
_PAINTED_PIXELS = """() => {
  const canvas = document.querySelector('#mynetwork canvas');
  if (!canvas) { return 0; }
  const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
  let painted = 0;
  for (let i = 3; i < data.length; i += 4) { if (data[i] > 0) { painted++; } }
  return painted;
}"""


def check_targets(results: dict[str, Any]) -> dict[str, Any]:
    """The issue's targets that this run measured, with values and whether they are met."""
    checked: dict[str, Any] = {}
    modes = results.get("modes")
    if modes:
        for mode, limit in TARGETS_MS.items():
            value = modes["latency"][mode]["p95 of per-question medians"]
            checked[f"ask p95 ms, {mode}"] = {"target": f"< {limit:g}", "value": value, "met": value < limit}
        hybrid = modes["metrics"]["hybrid"]["all"]["first-citation page accuracy"]
        naive = modes["metrics"]["naive"]["all"]["first-citation page accuracy"]
        checked["hybrid first-citation page accuracy"] = {
            "target": f">= naive's {naive}", "value": hybrid,
            "met": hybrid is not None and naive is not None and hybrid >= naive,
        }
    extraction = results.get("extraction") or {}
    share = extraction.get("share_of_ingestion")
    if share is not None:
        checked["graph building share of ingestion"] = {"target": "<= 0.25", "value": share, "met": share <= 0.25}
    return checked


def extraction_lines(extraction: dict[str, Any]) -> list[str]:
    """Per-PDF graph figures, and each PDF's 30 highest-degree entities (for review) in a collapsed block."""
    lines = ["| PDF | chunks | entities | relations | communities | graph stage s | share of ingestion |",
             "|---|---|---|---|---|---|---|"]
    for doc in extraction["documents"]:
        share = doc.get("share_of_ingestion")
        lines.append(f"| {doc['document']} | {doc['chunks']} | {doc['entities']} | {doc['relations']} | "
                     f"{doc['communities']} | {doc['graph_s']} | {'–' if share is None else f'{share:.3f}'} |")
    share = extraction.get("share_of_ingestion")
    levels = extraction["workspace_communities"]
    communities = " / ".join(f"{count} (level {level})" for level, count in levels.items()) if isinstance(levels, dict) else levels
    lines.append(f"| **workspace** | | {extraction['workspace_entities']} | {extraction['workspace_relations']} | "
                 f"{communities} | {extraction['graph_s']} | {'–' if share is None else f'{share:.3f}'} |")
    lines += ["", "<details><summary>Top-30 entities by degree per PDF</summary>", ""]
    for doc in extraction["documents"]:
        names = ", ".join(f"{e['name']} ({e['type']}, {e['degree']})" for e in doc["top"])
        lines.append(f"- **{doc['document']}**: {names}")
    return [*lines, "", "</details>", ""]


def group_lines(modes: dict[str, Any]) -> list[str]:
    """Per file and per kind (a question set other than first50), per mode: first-citation page accuracy on the
    answerable questions of the group, refusal recall where it has only unanswerable ones."""
    lines = ["| group (5 dev PDFs) | questions | " + " | ".join(MODES) + " |", "|---|---|" + "---|" * len(MODES)]
    for grouping, label in (("metrics_by_file", "file"), ("metrics_by_kind", "kind")):
        for group in modes[grouping][MODES[0]]:
            cells = []
            for mode in MODES:
                m = modes[grouping][mode][group]
                if m["answerable"]:
                    value, prefix = m["first-citation page accuracy"], ""
                else:
                    value, prefix = m["refusal recall"], "refusal "
                cells.append("–" if value is None else f"{prefix}{value:.3f}")
            count = modes[grouping][MODES[0]][group]["questions"]
            lines.append(f"| {label}: {group} | {count} | " + " | ".join(cells) + " |")
    return lines


def markdown_report(results: dict[str, Any]) -> str:
    """The README tables."""
    lines = extraction_lines(results["extraction"]) if results.get("extraction") else []
    modes = results.get("modes")
    if modes:
        lines += ["| metric (dev set, 5 dev PDFs) | " + " | ".join(MODES) + " |", "|---|" + "---|" * len(MODES)]
        for name in [*NAMES, "answers listing entities", "entities per answer (mean)"]:
            values = [modes["metrics"][m]["all"].get(name) for m in MODES]
            lines.append(f"| {name} | " + " | ".join("–" if v is None else f"{v:.3f}" for v in values) + " |")
        for lang in ("en", "zh"):
            values = [modes["metrics"][m][lang]["first-citation page accuracy"] for m in MODES]
            lines.append(f"| first-citation page accuracy, {lang} | " + " | ".join("–" if v is None else f"{v:.3f}" for v in values) + " |")
        lat = modes["latency"]
        lines.append("| ask p50 / p95 ms | " + " | ".join(f"{lat[m]['p50']} / {lat[m]['p95 of per-question medians']}" for m in MODES) + " |")
        if "metrics_by_file" in modes:
            lines += ["", *group_lines(modes)]
    largest = results.get("modes_13")
    if largest:
        columns = list(largest["metrics"])
        lines += ["", "| metric (dev set, all 13 PDFs) | " + " | ".join(columns) + " |", "|---|" + "---|" * len(columns)]
        for name in NAMES[:3]:
            values = [largest["metrics"][m]["all"].get(name) for m in columns]
            lines.append(f"| {name} | " + " | ".join("–" if v is None else f"{v:.3f}" for v in values) + " |")
        lines.append("| ask p50 / p95 ms (1 pass) | " + " | ".join(
            f"{largest['latency'][m]['p50']} / {largest['latency'][m]['p95 of per-question medians']}" for m in columns) + " |")
    render = results.get("render")
    if render:
        browser = render.get("browser", {})
        lines += ["", "| Graph page, 13-PDF workspace | value |", "|---|---|",
                  f"| entities / relations in the workspace graph | {render['entities']} / {render['relations']} |",
                  f"| shown (cap) nodes / edges | {render['shown_nodes']} / {render['shown_edges']} |",
                  f"| entity_graph load, median ms | {render['entity_graph_ms_median']} |",
                  f"| pyvis HTML build, median ms | {render['pyvis_html_ms_median']} ({render['html_bytes'] // 1024} KB) |"]
        if "first_draw_ms" in browser:
            lines += [f"| Chromium: load to first drawing / settled layout, ms | {browser['first_draw_ms']} / {browser['settled_ms']} |",
                      f"| requests to other hosts | {len(browser['outside_requests'])} |"]
    if results.get("targets"):
        lines += ["", "| target | value | met |", "|---|---|---|"]
        for name, check in check_targets(results).items():
            lines.append(f"| {name} {check['target']} | {check['value']} | {'yes' if check['met'] else 'NO'} |")
    return "\n".join(lines)


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.graph", description=__doc__.splitlines()[0])
    parser.add_argument("--only-modes", action="store_true", help="only the answer metrics and latency per mode")
    parser.add_argument("--skip-extraction", action="store_true", help="skip bench/graph_extraction.py")
    parser.add_argument("--skip-render", action="store_true", help="skip the Graph page render time")
    parser.add_argument("--passes", type=int, default=3, help="latency passes over the questions (default 3)")
    parser.add_argument("--fresh", action="store_true", help="ingest the workspaces again")
    parser.add_argument("--expansion", type=int, default=None, help="graph expansion blocks per answer (tuning)")
    parser.add_argument("--markdown", action="store_true", help="print the README tables from the results and exit")
    add_questions_option(parser)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the benchmark and write bench/results/graph.json (a partial run writes graph.partial.json; another
    question set graph-<set>[.partial].json)."""
    args = parse_args(argv)
    if args.markdown:
        print(markdown_report(json.loads((RESULTS_DIR / results_name("graph", args.questions)).read_text())))
        return 0
    started = time.perf_counter()
    sets = select_question_set(args.questions)
    results: dict[str, Any] = {
        "timestamp": now_iso(), "command": "python -m bench.graph " + " ".join(argv or sys.argv[1:]),
        "machine": machine_info(), "git": git_info(),
    }
    if args.questions != DEFAULT_SET:
        results["question_set"] = args.questions
    if not (args.only_modes or (args.skip_extraction and args.skip_render)):
        app, copy = largest_workspace()
        log(f"[13 PDFs] working on a copy in {copy}")
        if not args.skip_extraction:
            results["extraction"] = run_extraction(app)
        if not args.skip_render:
            results["render"] = run_render(app)
        if not args.skip_extraction:  # the graph is current once extraction_stats has re-run the graph stage
            results["modes_13"] = run_modes_largest(app, sets, 1)
        app.close()
        shutil.rmtree(copy.parent, ignore_errors=True)
    results["modes"] = run_modes(sets, args.passes, args.fresh, args.expansion)
    results["targets"] = check_targets(results)
    results["run_s"] = round(time.perf_counter() - started, 1)
    partial = args.only_modes or args.skip_extraction or args.skip_render or args.expansion is not None
    out = RESULTS_DIR / results_name("graph", args.questions, ".partial.json" if partial else ".json")
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2, ensure_ascii=False))
    print(markdown_report(results))
    log(f"results written to {out.relative_to(REPO)} in {results['run_s']} s")
    return 0 if all(check["met"] for check in results["targets"].values()) else 1


if __name__ == "__main__":
    raise SystemExit(main())
