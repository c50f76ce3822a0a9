"""A measured large set's figures from the product's own evaluation (`workspace-app eval`), overall and by the
question field the set is grouped by (FinanceBench: `question_type`).

    .venv/bin/python -m bench.large_sets build financebench   # once
    .venv/bin/python -m bench.large_eval financebench         # -> bench/results/large_financebench.json

It runs the CLI as a user would, on the set's workspace (bench/.cache/large-<set>/, workspace `bench`) with the
set's domain pack (bench.large_sets.PACKS, given as WORKSPACE_DOMAIN__PACK: the pack is a setting, not stored in
the data dir), keeps its per-question rows (bench/.cache/large-<set>-eval-rows.jsonl) and groups them by the
question file's field. The figures are the eval's: first citation (a refusal is a miss), refusal recall, false
refusals and search hit@1 (the share of answerable questions whose search rank-1 passage is right). Beside them,
the shipped models' simulation on the set's candidate pools (bench.fit_answers, no asks): whether the lead would
be right whatever the refusal threshold says, which tells refusals from wrong choices.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import CACHE_DIR, REPO, RESULTS_DIR, git_info, load_jsonl, log, now_iso
from bench.large_sets import MEASURED, PACKS, materialise, workspace

GROUPED_BY = {"financebench": "question_type"}  # the question file's field a set's figures are also grouped by
CLI = ".venv/bin/workspace-app"  # the product's command, run from the repo
HEADLINE = ("first_citation", "refusal_recall", "false_refusals", "search_hit@1", "search_hit@5", "any_citation")


def eval_command(name: str, questions: Path, rows: Path) -> tuple[list[str], dict[str, str]]:
    """The CLI command (relative to the repo) and the environment additions that evaluate the set's workspace."""
    command = [CLI, "--data-dir", str((CACHE_DIR / f"large-{name}").relative_to(REPO)), "eval",
               str(questions.relative_to(REPO)), "-w", "bench", "--json", "--rows", str(rows.relative_to(REPO))]
    env = {"WORKSPACE_DOMAIN__PACK": PACKS[name]} if name in PACKS else {}
    return command, env


def shown(command: Sequence[str], env: dict[str, str]) -> str:
    """The command as one shell line (what the results file records)."""
    return " ".join([*(f"{k}={v}" for k, v in env.items()), *command])


def result_of(row: dict[str, Any]) -> Any:
    """An `eval --rows` line back as the EvalResult the metrics read."""
    from workspace_app.evaluation.results import EvalResult

    fields = {k: v for k, v in row.items() if k != "right"}
    fields["first_pages"] = tuple(row["first_pages"]) if row.get("first_pages") else None
    return EvalResult(**fields)


def headline(figures: dict[str, Any]) -> dict[str, Any]:
    """The counts and the headline figures' values of one group (the eval's JSON shape)."""
    counts = {k: figures[k] for k in ("questions", "answerable", "unanswerable")}
    return {**counts, **{k: figures[k]["value"] for k in HEADLINE if k in figures}}


def grouped(rows: list[dict[str, Any]], questions: list[dict[str, Any]], field: str) -> dict[str, dict[str, Any]]:
    """The eval's figures per value of the question file's `field` (rows and questions are joined by id)."""
    from workspace_app.evaluation.metrics import group_figures

    value_of = {str(q["id"]): q.get(field) for q in questions}
    groups: dict[str, list[Any]] = {}
    for row in rows:
        groups.setdefault(str(value_of.get(str(row["id"]))), []).append(result_of(row))
    return {value: group_figures(results, with_support=False).to_json() for value, results in sorted(groups.items())}


def pool_figures(name: str) -> dict[str, Any]:
    """The shipped models simulated on every row's candidate pool (bench.fit_answers.simulate): the lead's passage
    right at any threshold, and search's rank 1 judged on the same pools (the data dir must be free: after the eval)."""
    from bench.fit_answers import collect, search_rank1, simulate

    opened = workspace(name)
    read = collect(opened.app, load_jsonl(materialise(name)[1]))
    return {**simulate(opened.app.answers.extractive.models, read), "search_rank1": search_rank1(read)}


def measure(name: str) -> dict[str, Any]:
    """Run the eval on the set's workspace and gather its figures, overall and grouped."""
    question_file = materialise(name)[1]
    rows_file = CACHE_DIR / f"large-{name}-eval-rows.jsonl"
    command, env = eval_command(name, question_file, rows_file)
    log(f"[{name}] {shown(command, env)}")
    done = subprocess.run(command, cwd=REPO, env={**os.environ, **env}, capture_output=True, text=True, check=True)
    summary = json.loads(done.stdout)
    questions, rows = load_jsonl(question_file), load_jsonl(rows_file)
    by_group = grouped(rows, questions, GROUPED_BY[name]) if name in GROUPED_BY else {}
    meta = json.loads((CACHE_DIR / f"large-{name}" / "bench-meta.json").read_text(encoding="utf-8"))["ingest"]
    return {
        "set": name, "command": f".venv/bin/python -m bench.large_eval {name}", "eval_command": shown(command, env),
        "git": git_info(), "measured_at": now_iso(),
        "workspace": {k: meta[k] for k in ("documents", "pages", "chunks", "wall_s")},
        "ask_s": round(sum(r["elapsed_ms"] for r in rows) / 1000, 1),
        "overall": headline(summary["overall"]),
        f"by_{GROUPED_BY.get(name, 'group')}": {value: headline(figures) for value, figures in by_group.items()},
        "simulated_on_pools": pool_figures(name),
        "eval": summary, "eval_by_group": by_group,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("set", choices=MEASURED)
    args = parser.parse_args()
    figures = measure(args.set)
    out = RESULTS_DIR / f"large_{args.set}.json"
    out.write_text(json.dumps(figures, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    shown_keys = ("overall", f"by_{GROUPED_BY.get(args.set, 'group')}", "simulated_on_pools")
    print(json.dumps({k: figures[k] for k in shown_keys}, indent=1))


if __name__ == "__main__":
    main()
