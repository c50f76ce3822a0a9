"""Ingestion progress: overall share and each stage's time left at the pace measured in this run of that stage; no
estimate until measured; a stage that stands still (waiting for the model another job holds) has no time left
rather than one that keeps rising, and its wait is not counted as its pace."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

from workspace_app.ingest import pipeline
from workspace_app.ingest.pipeline import Progress, _Tracker
from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.jobs.pace import Pace
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


def test_a_stage_standing_still_has_no_time_left_and_its_wait_is_not_counted_as_pace(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    clock = [100.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    states = RecordedStates()
    track = _Tracker(states, "doc", seen.append)
    clock[0] += 10
    track("embedding", 0, 167)
    assert seen[-1].eta_s is None and not seen[-1].waiting, "nothing measured yet: estimating, not a guess"
    assert seen[-1].overall == 0.25
    for _ in range(3):  # the model is busy: the same count, reported while waiting
        clock[0] += 5
        track("embedding", 0, 167)
    assert seen[-1].eta_s is None and states.steps[-1].eta_s is None, "waiting: no time left, not a rising one"
    assert seen[-1].waiting and states.steps[-1].counts["stage_waiting"] == 1
    assert states.steps[-1].counts["stage_done"] == 0 and states.steps[-1].counts["chunks_total"] == 167
    clock[0] += 1
    track("embedding", 32, 167)
    assert not seen[-1].waiting and states.steps[-1].counts["stage_waiting"] == 0
    # 32 passages in the 1 s since the wait ended: 135 left take ~4.2 s (the 15 s wait counted would say ~67 s).
    assert seen[-1].eta_s == pytest.approx(135 / 32, abs=0.1)


def test_each_stage_is_measured_on_its_own(monkeypatch: pytest.MonkeyPatch) -> None:
    """A fast stage after a slow one gets the fast stage's pace, not the job's (the old estimate used the whole
    job's elapsed time over a fixed share per stage)."""
    clock = [0.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    track = _Tracker(RecordedStates(), "doc", seen.append)
    for done in range(0, 101, 10):  # embedding: 10 passages every 4 s
        track("embedding", done, 100)
        clock[0] += 4
    assert seen[5].eta_s == pytest.approx(20.0), "half done at 10 per 4 s: 50 left take 20 s"
    track("cross-language", 0, 100)
    for done in range(10, 101, 10):  # the other language: 10 passages a second
        clock[0] += 1
        track("cross-language", done, 100)
        if done == 50:
            assert seen[-1].eta_s == pytest.approx(5.0)


def test_a_stage_that_names_its_total_after_its_setup_is_timed_from_there(monkeypatch: pytest.MonkeyPatch) -> None:
    """The pipeline opens each index stage as one step; the graph builds its document's terms and matchers, then
    names its count of passages. The setup is no pace of the passages: timed from it, the time left comes out long
    (a 1 s setup before 3 s of passages said ~40 % too much)."""
    clock = [0.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    track = _Tracker(RecordedStates(), "doc", seen.append)
    track("graph", 0, 1)  # the pipeline's placeholder
    clock[0] += 1.2  # terms and matchers
    track("graph", 0, 200)
    assert seen[-1].eta_s is None and not seen[-1].waiting, "counting starts here: nothing measured yet"
    for done in (50, 100):
        clock[0] += 1.5
        track("graph", done, 200)
    assert seen[-1].eta_s == pytest.approx(3.0), "100 passages in 3 s: 100 left take 3 s (with the setup: 4.2 s)"
    clock[0] += 3.0
    track("graph", 200, 200)
    assert seen[-1].eta_s == 0.0


def test_work_left_is_never_shown_as_no_time_left(monkeypatch: pytest.MonkeyPatch) -> None:
    """A stage racing through its items still has some time left until its last one is done."""
    clock = [0.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    track = _Tracker(RecordedStates(), "doc", seen.append, pace=lambda: Pace(min_measured_s=0.0))
    track("embedding", 0, 400)
    clock[0] += 0.01
    track("embedding", 200, 400)
    assert seen[-1].eta_s == 0.1
    clock[0] += 0.01
    track("embedding", 400, 400)
    assert seen[-1].eta_s == 0.0


def test_a_stage_whose_items_cost_unlike_amounts_is_timed_on_its_share_of_the_work(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Parsing counts pages, but a page showing much text takes longer than one showing little: with the share of
    the work done beside the count, the time left follows the work, not the pages."""
    clock = [0.0]
    monkeypatch.setattr(pipeline.time, "monotonic", lambda: clock[0])
    seen: list[Progress] = []
    states = RecordedStates()
    track = _Tracker(states, "doc", seen.append)
    track("parsing", 0, 100, work=0.0)
    clock[0] += 10
    track("parsing", 50, 100, work=0.25)  # half the pages, a quarter of the work, in 10 s
    assert seen[-1].eta_s == pytest.approx(30.0), "the three quarters left take 30 s (the pages alone say 10 s)"
    assert (seen[-1].done, seen[-1].total) == (50, 100)
    assert states.steps[-1].counts["pages_parsed"] == 50, "the page counter stays in pages"
    clock[0] += 30
    track("parsing", 100, 100, work=1.0)
    assert seen[-1].eta_s == 0.0


def test_parsing_weighs_each_page_by_the_text_it_shows(tmp_path: Path) -> None:
    """Four pages with a line each, then four full of text: half the pages are well under half the work."""
    path = tmp_path / "uneven.pdf"
    with pymupdf.open() as doc:
        for number in range(8):
            page = doc.new_page()
            lines = 1 if number < 4 else 60
            for line in range(lines):
                page.insert_text((50, 60 + 11 * line), f"Page {number + 1}, line {line + 1}: some words of text.")
        doc.save(path)
    reports: list[tuple[str, int, int, float | None]] = []
    parse_pdf(path, "uneven.pdf", lambda stage, done, total, work=None: reports.append((stage, done, total, work)))
    parsing = [(done, work) for stage, done, total, work in reports if stage == "parsing"]
    assert [done for done, _ in parsing] == list(range(1, 9))
    shares = [work for _, work in parsing]
    assert shares == sorted(shares) and shares[-1] == 1.0
    assert shares[3] is not None and shares[3] < 0.4, shares


def test_pace_waits_until_measured_then_follows_the_recent_window() -> None:
    pace = Pace(window_s=10.0, min_measured_s=1.0)
    assert pace.observe(0, 100, 0.0) is None, "nothing measured"
    assert pace.observe(5, 100, 0.5) is None, "measured for less than min_measured_s"
    assert pace.observe(10, 100, 1.0) == pytest.approx(9.0), "10 per second: 90 left take 9 s"
    for second in range(2, 21):  # 10 per second up to 20 s, then the machine gets 4x slower
        pace.observe(10 * second, 1000, float(second))
    for step in range(1, 11):
        pace.observe(200 + 10 * step, 1000, 20.0 + 4 * step)
    # Only the last 10 s count: 2.5 per second, so the 700 left take 280 s (over the whole run it would say ~147 s).
    assert pace.seconds_left(300, 1000, 60.0) == pytest.approx(280.0)
    assert pace.observe(1000, 1000, 61.0) == 0.0
    assert pace.observe(0, 50, 62.0) is None, "a count that went back (a re-run) is measured again"
