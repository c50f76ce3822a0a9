"""The embedding model's turn-taking: most urgent waiter first, sessions keep their claim between turns."""

from __future__ import annotations

import threading
import time

from workspace_app.embedding.priority import QUERY_PRIORITY, PriorityLock


def _wait_for(condition, timeout_s: float = 5.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "threads did not reach the lock"
        time.sleep(0.005)


def test_waiters_are_served_by_priority_not_arrival() -> None:
    lock = PriorityLock()
    served: list[float] = []

    def take(priority: float) -> None:
        with lock.hold(priority):
            served.append(priority)

    with lock.hold(0):
        threads = [threading.Thread(target=take, args=(p,)) for p in (3.0, 1.0, QUERY_PRIORITY, 2.0)]
        for thread in threads:
            thread.start()
        _wait_for(lambda: lock.waiting == 4)
    for thread in threads:
        thread.join(5)
    assert served == [QUERY_PRIORITY, 1.0, 2.0, 3.0]


def test_a_session_keeps_the_lock_between_its_turns() -> None:
    """The older job's batches all run before the younger job's first, though the younger one waits between."""
    lock = PriorityLock()
    order: list[str] = []
    younger_waiting = threading.Event()

    def job(name: str, priority: float, batches: int, ready: threading.Event | None = None) -> None:
        with lock.session(priority):
            if ready is not None:
                ready.set()
            for _ in range(batches):
                with lock.hold(priority):
                    order.append(name)
                time.sleep(0.01)  # work between turns (caching, progress), lock free

    older = threading.Thread(target=job, args=("old", 1.0, 5))
    with lock.hold(0):
        older.start()
        _wait_for(lambda: lock.waiting == 1)
        younger = threading.Thread(target=job, args=("new", 2.0, 3, younger_waiting))
        younger.start()
        younger_waiting.wait(5)
    older.join(5)
    younger.join(5)
    assert order == ["old"] * 5 + ["new"] * 3


def test_a_query_cuts_in_between_the_batches_of_a_session() -> None:
    lock = PriorityLock()
    order: list[str] = []
    first_batch_done = threading.Event()
    query_waiting = threading.Event()

    def job() -> None:
        with lock.session(1.0):
            for i in range(3):
                with lock.hold(1.0):
                    order.append("batch")
                    if i == 0:
                        first_batch_done.set()
                        query_waiting.wait(5)
                        _wait_for(lambda: lock.waiting == 1)

    def query() -> None:
        first_batch_done.wait(5)
        query_waiting.set()
        with lock.hold(QUERY_PRIORITY):
            order.append("query")

    threads = [threading.Thread(target=job), threading.Thread(target=query)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(5)
    assert order == ["batch", "query", "batch", "batch"]
