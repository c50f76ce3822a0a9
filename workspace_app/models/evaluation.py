"""An evaluation run's outcome as front ends show it: plain cells and JSON rows (made by `workspace_app.evaluation`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class EvaluationReport:
    """A finished run of a question file in a workspace.

    `figures` are table cells: a header row ("", "all", each language, "split=<name>"...), the question counts,
    then one row per figure, each cell a share with its counts ("0.800 (8/10)", "-" when no question counts).
    `rows` are one JSON object per question, the shape of `workspace-app eval --rows`."""

    workspace: str
    mode: str
    file_name: str
    figures: list[list[str]]
    rows: list[dict[str, Any]]
    elapsed_s: float
