"""A lock handed to the most urgent waiter: the embedding model's turn-taking between jobs and queries.

The worker ingests two documents at once so that parsing one overlaps embedding the other. Both want the
model, and a plain lock hands it over in no particular order, so the two documents finished at about the same
late time. With priorities the document that started embedding first keeps the model while the other parses;
documents become searchable one after the other, the first one as soon as it alone would, and a search query
(priority below every job) waits for at most one batch.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

QUERY_PRIORITY = float("-inf")
WAIT_POLL_S = 0.25


class PriorityLock:
    """Mutual exclusion where the most urgent (smallest) priority goes next; equal priorities: first come.

    A caller that takes the lock many times in a row (one embedding batch at a time) opens a `session` at its
    priority: while it is open, less urgent callers wait even in the moments between its turns.
    """

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._held = False
        self._waiting: list[tuple[float, int]] = []
        self._sessions: list[float] = []
        self._arrivals = itertools.count()

    @contextmanager
    def session(self, priority: float) -> Iterator[None]:
        """Keep `priority` claiming the lock between the `hold`s made inside the `with`."""
        with self._condition:
            self._sessions.append(priority)
        try:
            yield
        finally:
            with self._condition:
                self._sessions.remove(priority)
                self._condition.notify_all()

    @contextmanager
    def hold(self, priority: float, while_waiting: Callable[[], None] | None = None) -> Iterator[None]:
        """Wait for the lock at `priority`, hold it for the body of the `with`.

        `while_waiting` is called every WAIT_POLL_S while the lock is not ours (a job checks there whether it
        was cancelled: a document behind another's embedding waits for minutes); what it raises ends the wait.
        """
        ticket = (priority, next(self._arrivals))
        with self._condition:
            heapq.heappush(self._waiting, ticket)
            try:
                while self._held or self._waiting[0] != ticket or priority > min(self._sessions, default=priority):
                    if not self._condition.wait(WAIT_POLL_S if while_waiting else None) and while_waiting:
                        while_waiting()
            except BaseException:
                self._waiting.remove(ticket)
                heapq.heapify(self._waiting)
                self._condition.notify_all()
                raise
            heapq.heappop(self._waiting)
            self._held = True
        try:
            yield
        finally:
            with self._condition:
                self._held = False
                self._condition.notify_all()

    @property
    def waiting(self) -> int:
        """Threads waiting for the lock now."""
        with self._condition:
            return len(self._waiting)
