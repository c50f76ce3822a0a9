"""Where the benchmarks read and write, and the small file and number helpers they share."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared"
CORPUS_DIR = SHARED / "corpus" / "guidelines"
EVAL_DIR = SHARED / "eval"
DEMO_DIR = SHARED / "clinical" / "mimic-iv-demo"  # the MIMIC-IV Clinical Database Demo (read only)
CACHE_DIR = REPO / "bench" / ".cache"
RESULTS_DIR = REPO / "bench" / "results"

# The 5 PDFs the guideline dev questions refer to (evaluate them in a workspace holding exactly these).
DEV_DOCS = (
    "shen-2017-syncope.pdf",
    "eckel-2013-lifestyle.pdf",
    "mosca-2011-women-cvd.pdf",
    "arnett-2014-guideline-strategies.pdf",
    "zh-acute-af-ed-2024.pdf",
)


def dev_inputs() -> list[Path]:
    """The 5 dev PDFs."""
    return [CORPUS_DIR / name for name in DEV_DOCS]


def all_inputs() -> list[Path]:
    """All 13 corpus PDFs."""
    return sorted(CORPUS_DIR.glob("*.pdf"))


def log(message: str) -> None:
    """Progress goes to stderr so stdout holds only the tables."""
    print(message, file=sys.stderr, flush=True)


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


def compact_json(data: Any) -> str:
    """Indented JSON with every list of scalars on one line (keeps the per-query details readable)."""
    text = json.dumps(data, indent=1, ensure_ascii=False)
    text = re.sub(r"\[\s+([^\[\]{}]*?)\s+\]", lambda m: "[" + re.sub(r",\s*\n\s*", ", ", m.group(1)) + "]", text)
    return text + "\n"


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def percentile(values: Sequence[float], q: float) -> float:
    import numpy as np

    return float(np.percentile(np.asarray(values, dtype=float), q))
