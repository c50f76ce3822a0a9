"""An evaluation as a front end runs it (the UI's Evaluation page): an uploaded question file read, its gold
documents checked against the workspace, the run with its progress, and the outcome as plain data to show."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING

from workspace_app.evaluation.metrics import summarize
from workspace_app.evaluation.questions import EvalQuestion, parse_questions
from workspace_app.evaluation.report import table_rows
from workspace_app.evaluation.runner import Evaluator, Progress
from workspace_app.models.evaluation import EvaluationReport

if TYPE_CHECKING:
    from workspace_app.app import App


class EvaluationService:
    """Reads question files and runs them against a workspace through the App's answers and search."""

    def __init__(self, app: App) -> None:
        self.evaluator = Evaluator(app)

    def read_questions(self, data: bytes | str, name: str) -> list[EvalQuestion]:
        """The questions of a file's content; QuestionFileError naming the malformed line."""
        return parse_questions(data, name)

    def unknown_documents(self, workspace: str, questions: Sequence[EvalQuestion]) -> list[str]:
        """Gold document names that no document of the workspace has."""
        return self.evaluator.unknown_documents(workspace, questions)

    def run(
        self, workspace: str, questions: Sequence[EvalQuestion], mode: str, file_name: str,
        progress: Progress | None = None,
    ) -> EvaluationReport:
        """Ask every question in `mode` (answers come from the sources ticked for chat) and search it (every ready
        source); the figures overall, by language and by split, and the rows. `progress(done, total)` is called
        after each question."""
        started = time.perf_counter()
        results = list(self.evaluator.run(workspace, questions, mode, progress=progress))
        return EvaluationReport(
            workspace=workspace, mode=mode, file_name=file_name,
            figures=table_rows(summarize(results, by_split=True)), rows=[result.to_json() for result in results],
            elapsed_s=time.perf_counter() - started,
        )
