"""Command latency: cold `workspace-app` commands, each a new process, on an ingested workspace.

What a user waits for at the command line, and what every test that runs the CLI pays: imports, model loads and
the work itself. Each command runs `--runs` times in turn (all commands once, then again); the figures are each
command's median, minimum and maximum. One more run of each under `PYTHONPROFILEIMPORTTIME` says which heavy
libraries the process imported.

    .venv/bin/python -m bench.commands [--runs 5]   # -> bench/results/commands.json
    git worktree add /tmp/before <commit>            # another version's code, run by the same interpreter:
    .venv/bin/python -m bench.commands --source /tmp/before --out bench/results/commands-before.json

The workspace is one corpus PDF (arnett-2014, 6 pages), ingested once into bench/.cache/commands/ by the CLI and
kept: latency hardly depends on the exact chunks, so the folder is not fingerprinted (delete it to rebuild).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, git_info, now_iso
from bench.common.paths import CACHE_DIR, CORPUS_DIR, REPO

OUT = RESULTS_DIR / "commands.json"
DATA_DIR = CACHE_DIR / "commands"
PDF = CORPUS_DIR / "arnett-2014-guideline-strategies.pdf"
WORKSPACE = "bench"
QUESTION = "Which strategies improve adherence to guideline recommendations?"
COMMANDS = {
    "workspace list": ["workspace", "list"],
    "documents": ["documents", "--workspace", WORKSPACE],
    "search": ["search", "--workspace", WORKSPACE, QUESTION],
    "ask": ["ask", "--workspace", WORKSPACE, QUESTION],
}
HEAVY = ("torch", "transformers", "sentence_transformers", "pymupdf", "chromadb", "scipy", "sklearn")


SOURCE = [REPO]  # the checkout whose code runs (`--source`)


def run(arguments: list[str], environ: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    environ = {**(environ or os.environ), "PYTHONPATH": str(SOURCE[0])}
    command = [sys.executable, "-m", "workspace_app.adapters.cli", "--data-dir", str(DATA_DIR), *arguments]
    # Run from the checkout: `python -m` puts the working directory before PYTHONPATH on the import path.
    done = subprocess.run(command, capture_output=True, text=True, env=environ, cwd=SOURCE[0], timeout=600, check=False)
    if done.returncode:
        raise RuntimeError(f"{' '.join(arguments)} exited {done.returncode}: {done.stderr[-1000:]}")
    return done


def ensure_workspace() -> None:
    """Ingest the PDF into the bench's data dir once."""
    if (DATA_DIR / ".done").exists():
        return
    run(["workspace", "create", WORKSPACE])
    run(["ingest", "--workspace", WORKSPACE, str(PDF)])
    (DATA_DIR / ".done").write_text(now_iso() + "\n", encoding="utf-8")


def imported(arguments: list[str]) -> list[str]:
    """The heavy libraries a run of the command imports (its import-time report, read for top-level names)."""
    stderr = run(arguments, {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}).stderr
    names = {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if line.startswith("import time:")}
    return [name for name in HEAVY if name in names]


def _commit(checkout: Path) -> str:
    done = subprocess.run(["git", "-C", str(checkout), "rev-parse", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.commands", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--source", type=Path, default=REPO, help="checkout whose workspace_app runs (default: this one)")
    args = parser.parse_args(argv)
    SOURCE[0] = args.source.resolve()
    ensure_workspace()
    seconds: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for index in range(args.runs):
        for name, arguments in COMMANDS.items():
            started = time.perf_counter()
            run(arguments)
            seconds[name].append(round(time.perf_counter() - started, 2))
        print(f"run {index + 1}: {({name: values[-1] for name, values in seconds.items()})}", file=sys.stderr, flush=True)
    commands: dict[str, dict[str, Any]] = {
        name: {"median_s": statistics.median(values), "min_s": min(values), "max_s": max(values), "runs": values,
               "imports": imported(COMMANDS[name])}
        for name, values in seconds.items()
    }
    results = {
        "benchmark": "commands", "at": now_iso(), "git": git_info(), "source": {"path": str(SOURCE[0]), "commit": _commit(SOURCE[0])},
        "load_average": [round(x, 2) for x in os.getloadavg()], "commands": commands,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    for name, row in commands.items():
        print(f"{name:15s} median {row['median_s']:5.2f} s  ({row['min_s']}-{row['max_s']})  imports {', '.join(row['imports'])}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
