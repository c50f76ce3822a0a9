"""Command-line adapter: `workspace-app` (workspaces, ingest, search, ask, eval, studio, documents, cancel, retry, remove,
worker, api, serve; patients, events and related for patient records; users, keys, audit and workspace sharing in
cli_accounts.py, which also checks every command's role before it runs: `--as USER`, or the operator).

JSON printed here is a public contract (benchmarks and scripts rely on it): keys are only ever added.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import time
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from workspace_app.adapters.cli_accounts import (
    add_account_commands as _add_account_commands,
)
from workspace_app.adapters.cli_accounts import (
    check_command,
    record_command,
    run_audit,
    run_keys,
    run_sharing,
    run_users,
)
from workspace_app.adapters.process import prepare_process
from workspace_app.config import Settings, load_settings
from workspace_app.errors import UnsupportedFileError, WorkspaceError
from workspace_app.models.documents import time_left_words
from workspace_app.models.events import ImportStep
from workspace_app.patients.mimic import is_mimic_dir
from workspace_app.retrieval.search import METHODS as SEARCH_METHODS

if TYPE_CHECKING:
    from workspace_app.app import App

METHODS = {
    "hybrid": SEARCH_METHODS, "dense": ("dense",), "sparse": ("sparse",),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser for every sub-command."""
    parser = argparse.ArgumentParser(prog="workspace-app", description="Grounded knowledge workspace.")
    parser.add_argument("--data-dir", type=Path, default=None, help="data directory (default: settings)")
    parser.add_argument(
        "--as", dest="as_user", default=None, metavar="USER",
        help="act as this user, with their roles (accounts on); without it the CLI acts as the server's operator",
    )
    commands = parser.add_subparsers(dest="command", required=True)

    ws = commands.add_parser("workspace", help="create, list, rename or delete workspaces")
    ws_commands = ws.add_subparsers(dest="action", required=True)
    ws_commands.add_parser("create").add_argument("name")
    ws_commands.add_parser("list").add_argument("--json", action="store_true")
    rename = ws_commands.add_parser("rename")
    rename.add_argument("name")
    rename.add_argument("new_name")
    ws_commands.add_parser("delete").add_argument("name")
    _add_account_commands(commands, ws_commands)

    ingest = commands.add_parser("ingest", help="ingest files into a workspace")
    ingest.add_argument("--workspace", "-w", required=True)
    ingest.add_argument("files", nargs="+", type=Path)
    ingest.add_argument("--no-wait", action="store_true", help="only queue the files for the worker and return")

    search = commands.add_parser("search", help="hybrid search in a workspace")
    _add_query_arguments(search)
    search.add_argument("--top-k", type=int, default=None)
    search.add_argument("--method", choices=sorted(METHODS), default="hybrid")

    ask = commands.add_parser("ask", help="answer a question from a workspace's sources, with verified citations")
    _add_query_arguments(ask)
    ask.add_argument(
        "--mode", choices=("naive", "local", "global", "hybrid"), default="naive",
        help="query mode: naive (text search), local (the question's entities), global (community reports), hybrid",
    )
    ask.add_argument(
        "--patient", "-p", default=None,
        help="a patient id: answer from the patient's records, the workspace's guidelines and the vocabulary",
    )

    _add_eval_command(commands)

    studio = commands.add_parser(
        "studio", help="build a FAQ, a briefing or a study guide from a workspace's sources, every statement cited"
    )
    studio.add_argument("kind", choices=("faq", "briefing", "study-guide"))
    studio.add_argument("--workspace", "-w", required=True)
    studio.add_argument("--mode", choices=("naive", "local", "global", "hybrid"), default="hybrid")
    studio.add_argument("--save", action="store_true", help="also keep it as a note of the workspace")
    studio.add_argument("--json", action="store_true", help="print one JSON object instead of Markdown")

    documents = commands.add_parser("documents", help="list a workspace's documents")
    documents.add_argument("--workspace", "-w", required=True)
    documents.add_argument("--json", action="store_true")

    document_commands = {
        "remove": "remove a document from a workspace",
        "cancel": "cancel a queued or running ingestion",
        "retry": "queue a failed or cancelled document again",
    }
    for name, text in document_commands.items():
        command = commands.add_parser(name, help=text)
        command.add_argument("--workspace", "-w", required=True)
        command.add_argument("document")

    reindex = commands.add_parser(
        "reindex", help="ingest a workspace's documents again from their stored files (after an upgrade adds an index)"
    )
    reindex.add_argument("--workspace", "-w", required=True)
    reindex.add_argument("documents", nargs="*", help="names or ids (default: every document)")

    graph = commands.add_parser("graph", help="the entity graph of a workspace")
    graph_commands = graph.add_subparsers(dest="action", required=True)
    export = graph_commands.add_parser("export", help="GraphML of documents, chunks, entities and their relations")
    export.add_argument("--workspace", "-w", required=True)
    export.add_argument("--out", type=Path, default=None, help="file to write (default: standard output)")

    _add_patient_commands(commands)

    worker = commands.add_parser("worker", help="take ingestion jobs from the queue and run them")
    worker.add_argument("--threads", type=int, default=None, help="jobs at once (default: settings)")

    api = commands.add_parser("api", help="serve the HTTP API (FastAPI) on 127.0.0.1")
    api.add_argument("--port", type=int, default=None, help="port (default: settings api.port, 8502)")
    api.add_argument(
        "--host", default="127.0.0.1",
        help="address to listen on (default loopback; any other needs WORKSPACE_API__KEYS)",
    )

    serve = commands.add_parser("serve", help="start Chroma server, the worker and the UI")
    serve.add_argument("--port", type=int, default=8501)
    serve.add_argument(
        "--host", default="127.0.0.1",
        help="address the UI listens on (default loopback; any other needs WORKSPACE_UI__PASSWORD)",
    )
    serve.add_argument("--chroma-port", type=int, default=None)
    return parser


def _add_patient_commands(commands: Any) -> None:
    patients = commands.add_parser("patients", help="import patient records, list patients")
    patient_commands = patients.add_subparsers(dest="action", required=True)
    load = patient_commands.add_parser("import", help="import a MIMIC-IV folder or a .csv/.jsonl events file")
    load.add_argument("path", type=Path)
    load.add_argument("--patients", default=None, help="comma-separated patient ids to import (MIMIC-IV; default all)")
    load.add_argument("--background", action="store_true",
                      help="queue the import for the worker and return at once (follow it with `patients imports`)")
    patient_commands.add_parser("list", help="imported patients with counts").add_argument("--json", action="store_true")
    patient_commands.add_parser("imports", help="the latest imports run by the worker, with their status")
    similar = patient_commands.add_parser(
        "similar", help="the imported patients most like one patient (shared concepts and their order), with reasons"
    )
    similar.add_argument("--patient", "-p", required=True)
    similar.add_argument("--top-k", type=int, choices=range(1, 101), default=5, metavar="1-100", help="how many (default 5)")
    similar.add_argument("--json", action="store_true")
    mine = patient_commands.add_parser(
        "mine-links", help="learn treatment links (abnormal lab -> medication, order, re-check) from a MIMIC-IV "
        "folder's training patients and write them as rules with their provenance",
    )
    mine.add_argument("path", type=Path, help="a MIMIC-IV folder (read only)")
    mine.add_argument("--out", type=Path, required=True,
                      help="the mined rules file to write (the shipped one: workspace_app/patients/mined_rules.yaml)")
    mine.add_argument("--window-h", type=float, help="hours after the finding (default 24)")
    mine.add_argument("--min-support", type=int, help="times the pair is seen, at least (default 5)")
    mine.add_argument("--min-patients", type=int, help="distinct patients, at least (default 5)")
    mine.add_argument("--min-lift", type=float,
                      help="lift over the base rate, with the lower bound of the confidence, at least (default 1.2)")
    mine.add_argument("--min-patient-lift", type=float,
                      help="support over what each patient's own base rate predicts, at least (default 1.1)")
    mine.add_argument("--max-per-finding", type=int, help="strongest links kept (default 6)")
    mine.add_argument("--test-percent", type=int,
                      help="share of patients held out by a hash of their id, never mined (default 40)")

    events = commands.add_parser("events", help="a patient's events in time order")
    events.add_argument("--patient", "-p", required=True)
    events.add_argument("--type", "-t", default=None, help="only events of this type (lab, order, nursing, ...)")
    events.add_argument("--json", action="store_true")

    related = commands.add_parser("related", help="events related to one event of a patient, with the reasons")
    related.add_argument("--patient", "-p", required=True)
    related.add_argument("--event", "-e", required=True)
    related.add_argument("--top-k", type=int, default=20)
    related.add_argument("--window-h", type=float, default=24.0, help="temporal recall window, ± hours")
    related.add_argument("--tau-h", type=float, default=6.0, help="time decay constant τ in hours")
    related.add_argument("--json", action="store_true")


def _add_eval_command(commands: Any) -> None:
    evaluate = commands.add_parser(
        "eval", help="ask a file of questions with gold pages or answers; print citation, refusal and search figures"
    )
    evaluate.add_argument("questions", type=Path, help="JSONL file: one {\"question\", \"doc\", \"pages\", ...} a line")
    evaluate.add_argument("--workspace", "-w", required=True)
    evaluate.add_argument("--mode", choices=("naive", "local", "global", "hybrid"), default="hybrid")
    evaluate.add_argument("--documents", default=None, help="comma-separated document names or ids")
    evaluate.add_argument("--rows", type=Path, default=None, help="write one JSON line per question to this file")
    evaluate.add_argument("--json", action="store_true", help="print the figures as one JSON object")


def _add_query_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--workspace", "-w", required=True)
    parser.add_argument("--documents", default=None, help="comma-separated document names or ids")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--queries", type=Path, default=None, help="file with one query per line")
    parser.add_argument("query", nargs="?", default=None)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of `workspace-app`."""
    prepare_process()
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    args = build_parser().parse_args(argv)
    global _ROLE
    _ROLE = f"workspace-app {args.command}"
    handler = _HANDLERS[args.command]
    try:
        settings = load_settings(args.data_dir)
        args.caller, workspace = check_command(args, settings)  # the role check, before anything runs
        code = handler(args, settings)
        if code == 0:
            record_command(args, settings, args.caller, workspace)
        return code
    except WorkspaceError as exc:
        print(f"error: {terminal_safe(exc.user_message)}", file=sys.stderr)
        return 2


def terminal_safe(text: str) -> str:
    """Text for a terminal: control characters (escape sequences in a file name) shown as '?', never run."""
    return "".join("?" if unicodedata.category(ch) == "Cc" and ch not in "\n\t" else ch for ch in text)


_ROLE = "workspace-app"  # who this process is, in the message of a process refused the data dir it owns


def _app(settings: Settings) -> App:
    from workspace_app.adapters.wiring import build_app

    return build_app(settings, role=_ROLE)


def _workspace(args: argparse.Namespace, settings: Settings) -> int:
    if args.action in ("share", "unshare", "members"):
        return run_sharing(args, settings, args.caller, _print_terminal_safe)
    app = _app(settings)
    if args.action == "create":
        print(json.dumps(_workspace_json(app.workspaces.create(args.name))))
    elif args.action == "list":
        for ws in app.accounts.visible(args.caller, app.workspaces.list()):
            print(json.dumps(_workspace_json(ws)) if args.json else terminal_safe(f"{ws.name}\t{ws.document_count} documents"))
    elif args.action == "rename":
        print(json.dumps(_workspace_json(app.workspaces.rename(args.name, args.new_name))))
    else:
        app.workspaces.delete(args.name)
        print(json.dumps({"deleted": args.name}))
    return 0


def _print_terminal_safe(text: str) -> None:
    print(terminal_safe(text), end="", flush=True)


def _workspace_json(ws: Any) -> dict[str, Any]:
    return {"id": ws.id, "name": ws.name, "created_at": ws.created_at, "documents": ws.document_count}


def _ingest(args: argparse.Namespace, settings: Settings) -> int:
    from tqdm import tqdm

    app = _app(settings)
    app.workspaces.get(args.workspace)
    if args.no_wait:
        return _enqueue(app, args.workspace, args.files, settings)
    failed = False
    for path in args.files:
        with tqdm(total=100, desc=terminal_safe(path.name)[:40], unit="%", file=sys.stderr, leave=False) as bar:
            def show(progress: Any, bar: Any = bar) -> None:
                bar.set_postfix_str(terminal_safe(stage_words(progress)))
                bar.n = int(progress.overall * 100)
                bar.refresh()

            report = _ingest_one(app, args.workspace, path, show)
        failed |= report.status == "failed"
        print(json.dumps(report.to_json(), ensure_ascii=False), flush=True)
    return 1 if failed else 0


def _enqueue(app: App, workspace: str, files: list[Path], settings: Settings) -> int:
    from workspace_app.adapters.wiring import running_chroma_url
    from workspace_app.models.documents import IngestReport

    failed = False
    for path in files:
        if path.is_file():
            report = app.documents.submit(workspace, path, path.name)
        else:
            report = IngestReport(None, path.name, "failed", 0, 0, f"{path} does not exist or is not a file.")
        failed |= report.status == "failed"
        print(json.dumps(report.to_json(), ensure_ascii=False), flush=True)
    if running_chroma_url(settings.storage.data_dir) is None:
        print("note: queued files are ingested by `workspace-app worker` (or `serve`) on this data dir.", file=sys.stderr)
    return 1 if failed else 0


def _ingest_one(app: App, workspace: str, path: Path, show: Callable[[Any], None]) -> Any:
    from workspace_app.models.documents import IngestReport

    if not path.is_file():
        return IngestReport(None, path.name, "failed", 0, 0, f"{path} does not exist or is not a file.")
    return app.documents.ingest(workspace, path, path.name, show)


def _queries(args: argparse.Namespace) -> Iterator[str]:
    if args.queries is not None:
        yield from (line.strip() for line in args.queries.read_text(encoding="utf-8").splitlines() if line.strip())
    elif args.query:
        yield args.query
    else:
        raise WorkspaceError("Give a query, or --queries FILE with one query per line.")


def _search(args: argparse.Namespace, settings: Settings) -> int:
    app = _app(settings)
    documents = [d.strip() for d in args.documents.split(",")] if args.documents else None
    for query in _queries(args):
        result = app.search.search(args.workspace, query, args.top_k, documents, METHODS[args.method])
        if args.json:
            print(json.dumps(result.to_json(), ensure_ascii=False), flush=True)
        else:
            _print_hits(result)
    return 0


def _print_hits(result: Any) -> None:
    print(terminal_safe(f"# {result.query}"))
    for hit in result.hits:
        pages = f"p.{hit.chunk.page_start}" + (f"-{hit.chunk.page_end}" if hit.chunk.page_end != hit.chunk.page_start else "")
        print(terminal_safe(f"{hit.rank:>2}. {hit.document_name} {pages} [{hit.chunk.section[-60:]}]"))
        print(f"    {hit.chunk.text[:200]!r}")


def _ask(args: argparse.Namespace, settings: Settings) -> int:
    app = _app(settings)
    documents = [d.strip() for d in args.documents.split(",")] if args.documents else None
    for question in _queries(args):
        if args.patient:
            answer = app.patient_answers.ask(args.workspace, args.patient, question, documents, args.mode)
        else:
            answer = app.answers.ask(args.workspace, question, documents=documents, mode=args.mode)
        if args.json:
            print(json.dumps(answer.to_json(), ensure_ascii=False), flush=True)
        else:
            _print_answer(answer)
    return 0


def _print_answer(answer: Any) -> None:
    from workspace_app.answer.export import grading_text

    note = f"({answer.support_note})\n\n" if answer.support_note else ""
    print(terminal_safe(f"# {answer.question}\n\n{note}{answer.text}\n"))
    for c in answer.citations:
        if c.level != "guideline":
            print(terminal_safe(f"[{c.n}] ({c.level}) {c.document}, {c.section}: {c.quote[:160]!r}"))
            continue
        pages = f"p.{c.page_start}" + (f"-{c.page_end}" if c.page_end != c.page_start else "")
        grading = f" ({grading_text(c)})" if grading_text(c) else ""
        print(terminal_safe(f"[{c.n}] {c.document} {pages}{grading}: {c.quote[:160]!r}"))
    if answer.entities and any(c.level == "patient" for c in answer.citations):
        named = ", ".join(f"{e.name} ({e.id})" + "".join(f"[{n}]" for n in e.citations) for e in answer.entities)
        print(terminal_safe(f"\nGraph entities crossed (patient record <-> guidelines): {named}"))
    elif answer.entities:
        named = ", ".join(f"{e.name} ({e.type})" + "".join(f"[{n}]" for n in e.citations) for e in answer.entities)
        print(terminal_safe(f"\nEntities ({answer.mode} mode, workspace {answer.entities[0].workspace}): {named}"))
    print(f"\n{answer.disclaimer}\n")


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    from workspace_app.evaluation.metrics import summarize
    from workspace_app.evaluation.questions import load_questions
    from workspace_app.evaluation.report import render_table

    questions = load_questions(args.questions)  # a malformed file fails before the models load
    app = _app(settings)
    try:
        results = _evaluate(app, args, questions)
    finally:
        app.close()
    summary = summarize(results, by_split=True)
    print(json.dumps(summary.to_json(), ensure_ascii=False) if args.json else terminal_safe(render_table(summary)))
    return 0


def _evaluate(app: App, args: argparse.Namespace, questions: list[Any]) -> list[Any]:
    from contextlib import ExitStack

    from tqdm import tqdm

    from workspace_app.evaluation.runner import Evaluator

    evaluator = Evaluator(app)
    documents = [d.strip() for d in args.documents.split(",")] if args.documents else None
    for name in evaluator.unknown_documents(args.workspace, questions):
        print(terminal_safe(f"warning: the workspace has no document {name!r}; its questions cannot be right"),
              file=sys.stderr)
    results = []
    with ExitStack() as stack:
        rows = stack.enter_context(args.rows.open("w", encoding="utf-8")) if args.rows else None
        bar = stack.enter_context(tqdm(total=len(questions), desc="eval", unit="q", file=sys.stderr, leave=False))
        for result in evaluator.run(args.workspace, questions, args.mode, documents, lambda done, _: bar.update(done - bar.n)):
            results.append(result)
            if rows is not None:
                rows.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
                rows.flush()
    return results


def _documents(args: argparse.Namespace, settings: Settings) -> int:
    for document in _app(settings).documents.list(args.workspace):
        print(json.dumps(document.to_json(), ensure_ascii=False) if args.json else terminal_safe(_document_line(document)))
    return 0


def _document_line(document: Any) -> str:
    note = document.job_note(time.time())
    if document.stalled:
        return f"{document.name}\tstalled\t{note}"
    if document.is_active:
        more = f" · {note}" if note else ""
        return f"{document.name}\t{document.status}\t{document.stage} {document.progress:.0%}{_time_left(document)}{more}"
    detail = f"{document.chunks} chunks" if document.status == "ready" else (document.error or "")
    return f"{document.name}\t{document.status}\t{detail}"


def _time_left(document: Any) -> str:
    """", 120/340 · about 40 s left in this step", ", 0/167 · estimating the time left", ", 0/167 · waiting for
    the model" or nothing (a running document's stage counts and time left, as the Sources page shows them)."""
    if document.status != "running":
        return ""
    counts = f", {document.stage_done}/{document.stage_total}" if document.stage_total > 1 else ""
    if document.waiting_turn:
        return f"{counts} · waiting for the model"
    if document.estimating:
        return f"{counts} · estimating the time left"
    return f"{counts} · {time_left_words(document.eta_s)} in this step" if document.eta_s is not None else counts


def stage_words(progress: Any) -> str:
    """A pipeline progress report as `ingest` shows it: "embedding 120/340, about 40 s left in this step"."""
    text = f"{progress.stage} {progress.done}/{progress.total}"
    if progress.done >= progress.total:
        return text
    if progress.waiting:
        return f"{text}, waiting for the model"
    if progress.eta_s is None:
        return f"{text}, estimating the time left" if progress.total > 1 else text
    return f"{text}, {time_left_words(progress.eta_s)} in this step"


def _remove(args: argparse.Namespace, settings: Settings) -> int:
    removed = _app(settings).documents.remove(args.workspace, args.document)
    print(json.dumps({"removed": removed.name, "document_id": removed.id}, ensure_ascii=False))
    return 0


def _cancel(args: argparse.Namespace, settings: Settings) -> int:
    print(json.dumps(_app(settings).documents.cancel(args.workspace, args.document).to_json(), ensure_ascii=False))
    return 0


def _reindex(args: argparse.Namespace, settings: Settings) -> int:
    queued = _app(settings).documents.reindex(args.workspace, args.documents)
    for document in queued:
        print(json.dumps(document.to_json(), ensure_ascii=False))
    print(f"Queued {len(queued)} document(s); a running `serve` or `workspace-app worker` ingests them.", file=sys.stderr)
    return 0


def _retry(args: argparse.Namespace, settings: Settings) -> int:
    print(json.dumps(_app(settings).documents.retry(args.workspace, args.document).to_json(), ensure_ascii=False))
    return 0


def _graph(args: argparse.Namespace, settings: Settings) -> int:
    app = _app(settings)
    workspace = app.workspaces.get(args.workspace)
    data = app.graph.export_graphml(workspace.id)
    if args.out is None:
        sys.stdout.buffer.write(data)
    else:
        args.out.write_bytes(data)
        print(json.dumps({"workspace": workspace.name, "out": str(args.out), "bytes": len(data)}, ensure_ascii=False))
    return 0


def _patients(args: argparse.Namespace, settings: Settings) -> int:
    if args.action == "mine-links":
        return _mine_links(args)
    app = _app(settings)
    if args.action == "list":
        for patient in app.patients.list():
            line = f"{patient.patient_id}\t{patient.admissions} admissions\t{patient.events} events"
            print(json.dumps(patient.to_json()) if args.json else terminal_safe(line))
        return 0
    if args.action == "imports":
        for job in app.patient_imports.latest(20):
            print(json.dumps(job.to_json(), ensure_ascii=False))
        return 0
    if args.action == "similar":
        return _similar_patients(app, args)
    chosen = [p.strip() for p in args.patients.split(",") if p.strip()] if args.patients else None
    if args.background:
        print(json.dumps(app.patient_imports.submit(args.path, chosen).to_json(), ensure_ascii=False))
        return 0

    def show(step: ImportStep) -> None:
        print(terminal_safe(step.in_words()), file=sys.stderr, flush=True)

    report = app.patients.import_path(args.path, chosen, show)
    for error in report.errors[:20]:
        print(terminal_safe(f"skipped {error}"), file=sys.stderr)
    if len(report.errors) > 20:
        print(f"... and {len(report.errors) - 20} more skipped rows", file=sys.stderr)
    print(json.dumps(report.to_json(), ensure_ascii=False))
    return 0


def _similar_patients(app: App, args: argparse.Namespace) -> int:
    for found in app.patients.similar_patients(args.patient, args.top_k):
        line = f"{found.patient.patient_id}\t{found.score:.3f}\t" + "; ".join(found.reasons)
        print(json.dumps(found.to_json(), ensure_ascii=False) if args.json else terminal_safe(line))
    return 0


def _mine_links(args: argparse.Namespace) -> int:
    from dataclasses import fields, replace

    from workspace_app.patients.link_mining import MiningOptions, mine_folder, write_rules

    if not is_mimic_dir(args.path):
        raise UnsupportedFileError(f"{args.path} is not a MIMIC-IV folder (with hosp/admissions.csv.gz).")
    given = {f.name: getattr(args, f.name) for f in fields(MiningOptions) if getattr(args, f.name, None) is not None}
    options = replace(MiningOptions(), **given)
    links, grades, provenance = mine_folder(args.path, options)
    command = (f"workspace-app patients mine-links {args.path.name} --out {args.out.name} --window-h {options.window_h:g} "
               f"--min-support {options.min_support} --min-patients {options.min_patients} --min-lift {options.min_lift:g} "
               f"--min-patient-lift {options.min_patient_lift:g} --max-per-finding {options.max_per_finding} "
               f"--test-percent {options.test_percent}")
    write_rules(args.out, links, grades, options, {"command": command, **provenance})
    print(json.dumps({"out": str(args.out), **provenance}, ensure_ascii=False))
    return 0


def _events(args: argparse.Namespace, settings: Settings) -> int:
    for event in _app(settings).patients.events(args.patient, args.type):
        line = f"{event.timestamp}\t{event.event_type}/{event.sub_type}\t{event.content}\t[{event.event_id}]"
        print(json.dumps(event.to_json(), ensure_ascii=False) if args.json else terminal_safe(line))
    return 0


def _related(args: argparse.Namespace, settings: Settings) -> int:
    patients = _app(settings).patients
    hits = patients.related(args.patient, args.event, args.top_k, args.window_h, tau_h=args.tau_h)
    if args.json:
        print(json.dumps(hits, ensure_ascii=False))
        return 0
    for hit in hits:
        event = patients.event(args.patient, hit["event_id"])
        why = hit["reasons"]
        rules = f" rules={','.join(why['rule_hits'])}" if why["rule_hits"] else ""
        print(terminal_safe(
            f"{hit['score']:.3f}  {event.timestamp}  {event.event_type}/{event.sub_type}  {event.content[:80]}\n"
            f"       sim={why['sim_vec']:.2f} time={why['time_score']:.2f} concepts={why['concept_overlap']:.2f}"
            f" rule={why['rule_boost']:.2f}{rules} link={why['mined_link']:.2f}  [{hit['event_id']}]"
            + "".join(f"\n       {reason}" for reason in why["links"][:1])
        ))
    return 0


def _worker(args: argparse.Namespace, settings: Settings) -> int:
    from workspace_app.adapters.worker import run_worker

    logging.getLogger().setLevel(logging.INFO)
    for noisy in ("httpx", "chromadb", "sentence_transformers"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    return run_worker(settings, args.threads)


def _api(args: argparse.Namespace, settings: Settings) -> int:
    from workspace_app.adapters.api.server import run_api

    logging.getLogger("workspace_app").setLevel(logging.INFO)
    return run_api(settings, host=args.host, port=args.port)


def _serve(args: argparse.Namespace, settings: Settings) -> int:
    from workspace_app.adapters.supervisor import serve

    return serve(settings, ui_port=args.port, chroma_port=args.chroma_port, host=args.host)


def _studio(args: argparse.Namespace, settings: Settings) -> int:
    """Print a studio output as Markdown (or JSON), progress on stderr; keep it as a note with --save."""
    app = _app(settings)

    def show(done: int, total: int) -> None:
        print(f"\r{args.kind}: {done}/{total}", end="", file=sys.stderr, flush=True)

    output = app.studio.build(args.workspace, args.kind, args.mode, show)
    print(file=sys.stderr)
    note = app.studio.save(args.workspace, output) if args.save else None
    if args.json:
        print(json.dumps({
            "kind": output.kind, "title": output.title, "markdown": app.studio.markdown(output), "items": output.items,
            "left_out": output.left_out, "citations": [c.to_json() for c in output.answer.citations],
            "note_id": note.id if note else None,
        }, ensure_ascii=False))
    else:
        print(terminal_safe(app.studio.markdown(output)), end="")
    return 0


_HANDLERS: dict[str, Callable[[argparse.Namespace, Settings], int]] = {
    "workspace": _workspace,
    "ingest": _ingest,
    "search": _search,
    "ask": _ask,
    "eval": _eval,
    "studio": _studio,
    "documents": _documents,
    "remove": _remove,
    "cancel": _cancel,
    "retry": _retry,
    "reindex": _reindex,
    "graph": _graph,
    "patients": _patients,
    "events": _events,
    "related": _related,
    "worker": _worker,
    "api": _api,
    "serve": _serve,
    "users": lambda args, settings: run_users(args, settings, args.caller),
    "keys": lambda args, settings: run_keys(args, settings, args.caller),
    "audit": lambda args, settings: run_audit(args, settings, args.caller, _print_terminal_safe),
}


if __name__ == "__main__":
    raise SystemExit(main())
