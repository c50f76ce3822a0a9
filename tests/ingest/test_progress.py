"""Ingestion progress: overall share and time left per stage; a stage that stands still (waiting for the model
another job holds) has no time left rather than one that keeps rising."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from workspace_app.ingest import pipeline
from workspace_app.ingest.pipeline import Progress, _Tracker
from workspace_app.models.documents import StageProgress


class RecordedStates:
    """The pipeline's DocumentStates seam, keeping what it is told."""

    def __init__(self) -> None:
        self.steps: list[StageProgress] = []

    def start(self, document_id: str) -> None: ...
    def progress(self, document_id: str, step: StageProgress) -> None:
        self.steps.append(step)
    def parsed(self, document_id: str, pages: int, pages_without_text: Sequence[int]) -> None: ...
    def ready(self, document_id: str, pages: int, chunks: int) -> None: ...
    def fail(self, document_id: str, message: str, retryable: bool = True) -> None: ...


def test_a_stage_standing_still_has_no_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    clock = [100.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    states = RecordedStates()
    track = _Tracker(states, "doc", seen.append)
    clock[0] += 10
    track("embedding", 0, 167)
    assert seen[-1].eta_s is not None and seen[-1].overall == 0.25
    for _ in range(3):  # the model is busy: the same count, reported while waiting
        clock[0] += 5
        track("embedding", 0, 167)
    assert seen[-1].eta_s is None and states.steps[-1].eta_s is None, "waiting: no time left, not a rising one"
    assert states.steps[-1].counts["stage_done"] == 0 and states.steps[-1].counts["chunks_total"] == 167
    clock[0] += 1
    track("embedding", 32, 167)
    assert seen[-1].eta_s is not None and seen[-1].eta_s > 0, "moving again: time left comes back"
