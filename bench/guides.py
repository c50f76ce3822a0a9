"""Source guides and the chat's greeting on the 13-PDF workspace: are the summaries whole sentences, and how long
does the greeting's suggested-questions step take after the sources change?

    cp -r bench/.cache/latency13 /tmp/g13            # a copy: guides and checked questions are written into it
    .venv/bin/python -m bench.guides --data-dir /tmp/g13

Per document: the summary, its sentences that are not whole (`text.quotable`: a fragment, caption, running head
or reference entry, or an English one starting in lower case) and the key topics. Then the greeting's questions
(`SuggestionService.suggest`) timed cold (no stored parts), after unticking the first source, after ticking it
again, with only the first source ticked, and after a second source is added whose part is not stored yet,
each with the number of per-source parts it checked. (`python -m bench.search_latency --build` makes latency13.)
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, git_info, log, machine_info, now_iso

OUT = RESULTS_DIR / "guides.json"


def summary_checks(app: Any, workspace_id: str) -> dict[str, Any]:
    """Each document's summary, key topics and its sentences that are not whole; the guides' build time."""
    from workspace_app.text.language import detect_language
    from workspace_app.text.quotable import quotable
    from workspace_app.text.sentences import split_sentences

    started = time.perf_counter()
    guides = app.guides.guides(workspace_id)
    seconds = time.perf_counter() - started
    documents, bad, total = {}, 0, 0
    for document in app.documents.list(workspace_id):
        guide = guides[document.id]
        spans = split_sentences(guide.summary)
        wrong = [s.text for s in spans if not quotable(guide.summary, s, detect_language(s.text))
                 or (detect_language(s.text) != "zh" and s.text[:1].islower())]
        total, bad = total + len(spans), bad + len(wrong)
        documents[document.name] = {"summary": guide.summary, "not_whole": wrong, "topics": list(guide.topics)}
    return {"guides_s": round(seconds, 2), "sentences": total, "not_whole": bad, "documents": documents}


def greeting_timings(app: Any, workspace_id: str) -> list[dict[str, Any]]:
    """The suggested-questions step of the greeting after each change of sources, with the parts it checked."""
    documents = app.documents.list(workspace_id)
    steps: list[dict[str, Any]] = []

    def timed(label: str) -> None:
        before, load = app.suggestions.parts_checked, os.getloadavg()[0]
        started = time.perf_counter()
        questions = app.suggestions.suggest(workspace_id)
        steps.append({"step": label, "s": round(time.perf_counter() - started, 2),
                      "parts_checked": app.suggestions.parts_checked - before, "loadavg_1min": round(load, 2),
                      "questions": [f"{q.question} <- {q.document}" for q in questions]})
        log(f"{label}: {steps[-1]['s']} s, {steps[-1]['parts_checked']} parts checked")

    with app.catalog.database.transaction() as db:
        db.execute("DELETE FROM document_suggestions")
    app.answers.ask(workspace_id, "What is this document about?")  # the answerer's resources loaded
    timed("cold: no part stored")
    first, second, rest = documents[0], documents[1], documents[2:]
    app.documents.set_included(workspace_id, first.id, False)
    timed(f"first source unticked ({first.name})")
    app.documents.set_included(workspace_id, first.id, True)
    timed("ticked again")
    for document in [second, *rest]:
        app.documents.set_included(workspace_id, document.id, False)
    timed("only the first source ticked")
    with app.catalog.database.transaction() as db:
        db.execute("DELETE FROM document_suggestions WHERE document_id = ?", (second.id,))
    app.documents.set_included(workspace_id, second.id, True)
    timed(f"a second source added, its part not stored ({second.name})")
    for document in rest:
        app.documents.set_included(workspace_id, document.id, True)
    timed("all ticked again")
    return steps


def main(argv: Sequence[str] | None = None) -> int:
    """Measure and write bench/results/guides.json."""
    from bench.common import bench_settings, open_app

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data-dir", type=Path, required=True, help="a copy of an ingested workspace's data dir")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    app = open_app(bench_settings(args.data_dir))
    workspace = app.workspaces.list()[0]
    result = {"benchmark": "guides", "at": now_iso(), "git": git_info(), "machine": machine_info(),
              "summaries": summary_checks(app, workspace.id), "greeting": greeting_timings(app, workspace.id)}
    app.close()
    args.out.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"summary sentences {result['summaries']['sentences']}, not whole {result['summaries']['not_whole']}")
    for step in result["greeting"]:
        print(f"{step['s']:7.2f} s  {step['parts_checked']} parts  {step['step']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
