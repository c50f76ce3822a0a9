"""API fuzzing benchmark (issue 27, item 9, target ">= 1,000 generated requests over all routes, 0 server errors"):
the fuzz of `tests/api/test_api_fuzz.py` (same stack, seed data and rules: `tests/api/api_fuzz.py`) with more random
requests per pass, and its figures recorded.

    .venv/bin/python -m bench.fuzz [--examples 25] [--label default]

A Chroma server (behind its gate), a worker and `workspace-app api` with a key start on a temporary data dir; one
workspace with a two-page guideline excerpt, a chat, a note and a patient's events is seeded; then every operation of
/openapi.json gets its coverage cases and up to `--examples` random requests per pass. Results go to
bench/results/fuzz.json under the label: requests, statuses, requests per operation, every 5xx with a curl line,
whether the data changed, and the wall time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.common import REPO, RESULTS_DIR, git_info, log, machine_info, now_iso

OUT = RESULTS_DIR / "fuzz.json"
CORPUS_PDF = REPO / ".." / "shared" / "corpus" / "guidelines" / "mosca-2011-women-cvd.pdf"
PAGES = (10, 11)  # the excerpt the API tests use


def excerpt(folder: Path) -> Path:
    """The two-page excerpt of the corpus guideline, as the tests' `pdf` fixture makes it."""
    import pymupdf

    target = folder / "mosca-2011-women-cvd-p10-11.pdf"
    with pymupdf.open(CORPUS_PDF) as source, pymupdf.open() as new:
        new.insert_pdf(source, from_page=PAGES[0] - 1, to_page=PAGES[1] - 1)
        new.save(target)
    return target


def run(examples: int) -> dict[str, object]:
    """Start the stack, seed it, fuzz it; the figures."""
    sys.path[:0] = [str(REPO / "tests" / "api"), str(REPO / "tests")]  # the test helpers (api_stack, fake_openai)
    import httpx
    from api_fuzz import auth, changes, fuzz, fuzz_stack, seed, snapshot

    with tempfile.TemporaryDirectory(prefix="bench-fuzz-") as folder:
        root = Path(folder)
        pdf = excerpt(root)
        with fuzz_stack(root, pdf) as (url, data_dir):
            with httpx.Client(base_url=url, headers=auth(), timeout=120, trust_env=False) as client:
                seeded = seed(client, pdf, data_dir)
            before = snapshot(data_dir)
            began = time.monotonic()
            report = fuzz(url, seeded, examples)
            wall_s = time.monotonic() - began
            changed = changes(before, snapshot(data_dir), report.created_workspaces, report.chats_answered)
    return {**report.to_json(), "examples_per_pass": examples, "wall_s": round(wall_s, 1),
            "requests_per_s": round(report.requests / wall_s, 1), "data_changes": changed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=25, help="random requests per pass at most (default 25)")
    parser.add_argument("--label", default="default")
    args = parser.parse_args()
    figures = run(args.examples)
    results = json.loads(OUT.read_text()) if OUT.exists() else {}
    results[args.label] = {"when": now_iso(), "git": git_info(), "machine": machine_info(), **figures}
    OUT.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n")
    log(f"{figures['requests']} requests over {figures['operations']} operations in {figures['wall_s']} s: "
        f"{len(figures['server_errors'])} server errors, data changes: {figures['data_changes'] or 'none'} -> {OUT}")


if __name__ == "__main__":
    main()
