"""What a user sees of a running job: every stage shows itself and counts, and a cancel is obeyed promptly,
also by a job waiting for the embedding model while another document is being embedded, and by one in the middle
of a model batch."""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

OWNER = "test@nowhere:1:x"


@pytest.fixture
def service(tmp_path: Path, build: Callable[..., Any]) -> Any:
    made = build(tmp_path / "data")
    made.settings.queue.heartbeat_s = 0.1
    made.workspaces.create("Cardiology")
    return made


def unique_notes(tmp_path: Path, name: str, paragraphs: int) -> Path:
    """A Markdown source no embedding cache has seen (every paragraph carries a fresh token)."""
    lines = [f"# {name}\n"]
    for index in range(paragraphs):
        lines.append(
            f"Paragraph {index} ({uuid.uuid4().hex}): beta blockers after myocardial infarction reduce mortality; "
            "the dose is titrated to heart rate and blood pressure over several weeks of follow-up visits.\n"
        )
    path = tmp_path / f"{name}.md"
    path.write_text("\n".join(lines))
    return path


def test_every_stage_is_shown_as_it_starts_and_counts(service: Any, excerpt: Callable[..., Path]) -> None:
    report = service.documents.submit("Cardiology", excerpt("mosca-2011-women-cvd.pdf", 10, 12))
    seen: dict[str, set[int]] = {}
    shown: dict[str, str] = {}

    def listen(progress: Any) -> None:
        if progress.stage not in seen:  # the row says so as soon as the stage starts
            shown[progress.stage] = service.catalog.get_document(report.document_id).stage
        seen.setdefault(progress.stage, set()).add(progress.done)

    assert service.documents.jobs.run(report.document_id, OWNER, None, listen) == "ready"
    assert list(seen) == ["parsing", "chunking", "embedding", "indexing", "figures", "cross-language", "sentences",
                          "graph", "graph links", "guide"]
    assert seen["graph links"] == {0, 1}  # storing and refreshing the graph: one step after its passages are counted
    assert shown == {stage: stage for stage in seen}
    for stage, done in seen.items():
        assert len(done) >= 2, stage  # its counter moves
    assert len(seen["chunking"]) > 2  # section by section, not just "0 of 1" then "1 of 1"


def test_tables_are_a_stage_of_their_own_counting_the_pages_that_may_hold_one(
    service: Any, excerpt: Callable[..., Path]
) -> None:
    # Pages 14 and 15 of stout-2018 name a table over several columns; page 13 is prose. The layout model runs on
    # those two only, after every page's text is read, so each stage counts pages that cost alike.
    report = service.documents.submit("Cardiology", excerpt("stout-2018-achd.pdf", 13, 15))
    counts: dict[str, list[tuple[int, int]]] = {}
    shown: dict[str, str] = {}

    def listen(progress: Any) -> None:
        if progress.stage not in counts:
            shown[progress.stage] = service.catalog.get_document(report.document_id).stage
        counts.setdefault(progress.stage, []).append((progress.done, progress.total))

    assert service.documents.jobs.run(report.document_id, OWNER, None, listen) == "ready"
    assert list(counts)[:3] == ["parsing", "tables", "chunking"]
    assert shown["tables"] == "tables"
    assert counts["parsing"] == [(1, 3), (2, 3), (3, 3)]
    assert counts["tables"] == [(0, 2), (1, 2), (2, 2)]
    document = service.catalog.get_document(report.document_id)
    assert (document.pages_parsed, document.pages) == (3, 3)  # the page counter is the text layer's


def test_the_model_is_loaded_before_any_stage_counts(tmp_path: Path, excerpt: Callable[..., Path]) -> None:
    """A job in a process whose model is not loaded yet (the CLI's `ingest`) loads it before its first count, so the
    seconds of loading are not measured as the pace of the stage they fall in (chunking, before)."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings
    from workspace_app.embedding.embedder import Embedder

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    embedder = Embedder(settings.embedding)
    service = build_app(settings, embedder=embedder)
    service.workspaces.create("Cardiology")
    loaded: list[tuple[str, bool]] = []

    report = service.documents.submit("Cardiology", excerpt("mosca-2011-women-cvd.pdf", 10, 12))
    outcome = service.documents.jobs.run(
        report.document_id, OWNER, None, lambda progress: loaded.append((progress.stage, embedder.is_loaded))
    )
    assert outcome == "ready"
    assert loaded[0] == ("parsing", True)


def test_cancel_during_chunking_stops_before_embedding(service: Any, excerpt: Callable[..., Path]) -> None:
    report = service.documents.submit("Cardiology", excerpt("shen-2017-syncope.pdf", 10, 16))
    stages: list[str] = []
    cancelled = threading.Event()

    def listen(progress: Any) -> None:
        stages.append(progress.stage)
        if progress.stage == "chunking" and 0 < progress.done < progress.total and not cancelled.is_set():
            service.documents.cancel("Cardiology", report.document_id)
            cancelled.set()
            threading.Event().wait(0.5)  # the heartbeat (every 0.1 s here) sees the request meanwhile

    assert service.documents.jobs.run(report.document_id, OWNER, None, listen) == "cancelled"
    assert cancelled.is_set()
    assert "embedding" not in stages
    document = service.documents.get("Cardiology", report.document_id)
    assert document.status == "cancelled" and service.catalog.document_chunk_ids(document.id) == []


def test_cancel_reaches_a_job_waiting_for_the_model(service: Any, tmp_path: Path) -> None:
    """B waits for the model while A embeds; cancelling B ends it before A's embedding is over."""
    first = service.documents.submit("Cardiology", unique_notes(tmp_path, "first", 1000))
    second = service.documents.submit("Cardiology", unique_notes(tmp_path, "second", 30))
    outcome: dict[str, str] = {}
    second_waits = threading.Event()

    def run_second() -> None:
        def listen(progress: Any) -> None:
            if progress.stage == "embedding" and not second_waits.is_set():
                second_waits.set()
                service.documents.cancel("Cardiology", second.document_id)

        outcome["second"] = service.documents.jobs.run(second.document_id, "test@nowhere:2:y", None, listen)
        outcome["first_embedded_then"] = str(service.catalog.get_document(first.document_id).chunks_embedded)
        outcome["first_total"] = str(service.catalog.get_document(first.document_id).chunks_total)

    threads: list[threading.Thread] = []

    def listen_first(progress: Any) -> None:
        if progress.stage == "embedding" and progress.done > 0 and not threads:
            threads.append(threading.Thread(target=run_second, name="second-job"))
            threads[0].start()

    assert service.documents.jobs.run(first.document_id, OWNER, None, listen_first) == "ready"
    assert threads
    threads[0].join(60)
    assert second_waits.is_set()
    assert outcome["second"] == "cancelled"
    assert int(outcome["first_embedded_then"]) < int(outcome["first_total"])  # A was still embedding
    assert service.documents.get("Cardiology", second.document_id).status == "cancelled"


def test_cancel_in_the_middle_of_a_model_batch_settles_within_2_s(tmp_path: Path, excerpt: Callable[..., Path]) -> None:
    """Issue 12's 2 s budget for a cancel, whatever the batch: the job stops while its batch is still embedded.

    30 pages make ~170 passages, one model batch here (batch size 256, no embedding cache): 4-13 s of
    embedding, which a job that looked for a cancel only between batches spent before it stopped."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings
    from workspace_app.embedding.embedder import Embedder

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    settings.queue.heartbeat_s = 0.1
    settings.embedding.batch_size = 256
    service = build_app(settings, embedder=Embedder(settings.embedding))
    service.workspaces.create("Cardiology")
    report = service.documents.submit("Cardiology", excerpt("kusumoto-2018-bradycardia.pdf", 10, 39))
    embedding = threading.Event()
    asked_at: list[float] = []

    def cancel_once_the_batch_runs() -> None:
        assert embedding.wait(120)
        time.sleep(0.5)  # the model is in the middle of the batch now
        asked_at.append(time.monotonic())
        service.documents.cancel("Cardiology", report.document_id)

    def listen(progress: Any) -> None:
        if progress.stage == "embedding":
            assert progress.done < 200 and progress.total > 150  # one batch, not yet embedded
            embedding.set()

    canceller = threading.Thread(target=cancel_once_the_batch_runs, name="canceller")
    canceller.start()
    try:
        assert service.documents.jobs.run(report.document_id, OWNER, None, listen) == "cancelled"
        settled_s = time.monotonic() - asked_at[0]
        assert settled_s < 2.0
        document = service.documents.get("Cardiology", report.document_id)
        assert document.status == "cancelled" and document.chunks_embedded == 0
        assert service.catalog.document_chunk_ids(document.id) == []
    finally:
        embedding.set()
        canceller.join()
        service.catalog.close()


def test_every_counted_stage_has_a_total_and_a_time_left_once_half_done(tmp_path: Path, embedder: Any) -> None:
    """Issue 29 item 4 on a real run: from its halfway point on, the embedding, the cross-language index and the graph
    each have a total and the time left of that stage, measured in this run, on the listener and on the row the
    Sources page reads."""
    from workspace_app.adapters.wiring import build_app
    from workspace_app.config import Settings

    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir = tmp_path / "data"
    settings.queue.pace_min_measured_s = 0.0  # any measured step gives an estimate (a fast machine is done in < 1 s)
    app = build_app(settings, embedder=embedder)
    try:
        app.workspaces.create("Cardiology")
        report = app.documents.submit("Cardiology", unique_notes(tmp_path, "long-notes", 400))
        half: dict[str, tuple[Any, Any]] = {}

        def listen(progress: Any) -> None:
            if 2 * progress.done >= progress.total > progress.done and progress.stage not in half:
                half[progress.stage] = (progress, app.catalog.get_document(report.document_id))

        assert app.documents.jobs.run(report.document_id, OWNER, None, listen) == "ready"
    finally:
        app.catalog.close()
    assert {"embedding", "cross-language", "graph"} <= set(half), half
    for stage in ("embedding", "cross-language", "graph"):
        progress, row = half[stage]
        assert progress.total > 1 and progress.eta_s is not None and progress.eta_s > 0, (stage, progress)
        # The row is written at most every 0.25 s, and at once when a time left appears: it has one too.
        assert (row.stage, row.stage_total) == (stage, progress.total) and row.eta_s is not None, (stage, row)
        assert not row.waiting_turn and not row.estimating
