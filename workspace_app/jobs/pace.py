"""Time left of one stage of a job (a document's parsing, embedding, cross-language index, graph; a patient import's
table), from the pace measured in the current run of that stage: no guess from another stage, another run or a
fixed share of the whole.

    observe(done, total, now) -> items per second over the recent window -> (total - done) / rate seconds

A stage gets no estimate until it has moved and has been measured for a while (`min_measured_s`): a front end says
"estimating…" rather than a number that would be wrong. The window (`window_s`) follows the machine's load as it
changes during a long stage. A caller that knows the stage is waiting (for the embedding model another job holds)
calls `restart`, so the wait is not counted as slow work once the stage moves again.

Issue 29 measured the old estimate (elapsed × share left ÷ share done, with a fixed share per stage) 2–5×
optimistic under load; bench/progress.py measures this one at the halfway point of each stage.
"""

from __future__ import annotations

from collections import deque


class Pace:
    """Items (or shares of the work) per second of one stage, measured over the last `window_s` seconds of this
    run, and the time left."""

    def __init__(self, window_s: float = 15.0, min_measured_s: float = 1.0) -> None:
        self.window_s = window_s
        self.min_measured_s = min_measured_s
        self._samples: deque[tuple[float, float]] = deque()  # (when, done) at each change of `done`

    def restart(self, done: float, now: float) -> None:
        """Measure again from here: what came before (a wait for the model) says nothing of the pace."""
        self._samples.clear()
        self._samples.append((now, done))

    def observe(self, done: float, total: float, now: float) -> float | None:
        """Record that `done` of `total` items are done at `now` (monotonic seconds); returns the seconds left, or
        None while too little is measured (or when the count went back, as a re-run's does: measured again)."""
        if self._samples and done < self._samples[-1][1]:
            self._samples.clear()
        if not self._samples or done != self._samples[-1][1]:
            self._samples.append((now, done))
        return self.seconds_left(done, total, now)

    def seconds_left(self, done: float, total: float, now: float) -> float | None:
        """(total - done) at the rate measured from the oldest sample in the window to `now`, if measured enough."""
        if done >= total:
            return 0.0
        reference = self._reference(now)
        if reference is None:
            return None
        since, done_then = reference
        measured = now - since
        if done <= done_then or measured < self.min_measured_s:
            return None
        return (total - done) * measured / (done - done_then)

    def _reference(self, now: float) -> tuple[float, float] | None:
        """The oldest sample inside the window, keeping at least the two latest (a stage slower than the window
        between two counts is still measured over one step)."""
        while len(self._samples) > 2 and self._samples[1][0] <= now - self.window_s:
            self._samples.popleft()
        return self._samples[0] if self._samples else None
