"""A scanned document is keyword-searchable while OCR still reads its later pages: the pages read so far are stored
as provisional passages that search returns (and answers do not), the document says it is partly searchable, and
the finished run ends with exactly the chunks of a run nobody looked at; a run cancelled midway and retried too.

The scan is made here from 6 real corpus pages (bench/common/scans.py); not ~20: each run reads every page by OCR
(~6-7 CPU seconds a page) and the module makes three and a half runs (one undisturbed run, shared)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.common.scans import scanned_copy
from workspace_app.errors import WorkspaceError
from workspace_app.ingest.pipeline import Progress
from workspace_app.models.documents import PROVISIONAL

OWNER = "test@nowhere:1:x"
SCANNED = ("shen-2017-syncope.pdf", range(4, 10))  # prose in two columns over six pages
# Words of the scan's first page (shen p4); the rest of the pages do not have them.
PHRASE = "Literature searches focus on randomized controlled trials but also include registries"
NAME = "scan.pdf"


@pytest.fixture(scope="module")
def scan(guidelines: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("scan")
    name, pages = SCANNED
    return scanned_copy([(guidelines / name, number) for number in pages], folder / NAME, dpi=200, noise=0.001)


@pytest.fixture(scope="module")
def service(build: Callable[..., Any], tmp_path_factory: pytest.TempPathFactory) -> Any:
    made = build(tmp_path_factory.mktemp("searchable") / "data")
    made.settings.queue.heartbeat_s = 0.1
    return made


@pytest.fixture(scope="module")
def undisturbed(service: Any, scan: Path) -> list[tuple[Any, ...]]:
    """The chunks of the scan ingested with nobody searching while it runs."""
    service.workspaces.create("Undisturbed")
    assert service.documents.ingest("Undisturbed", scan).status == "ready"
    return final_chunks(service, service.documents.get("Undisturbed", NAME).id)


def final_chunks(service: Any, document_id: str) -> list[tuple[Any, ...]]:
    """A document's stored chunks, without its id (another workspace's copy has another one)."""
    chunks = service.catalog.get_chunks(service.catalog.document_chunk_ids(document_id))
    return [
        (c.id.removeprefix(document_id), c.ordinal, c.text, c.page_start, c.page_end, c.rects, c.kind)
        for c in sorted(chunks.values(), key=lambda c: c.ordinal)
    ]


def test_pages_read_so_far_are_searchable_and_the_finished_run_is_a_normal_one(
    service: Any, scan: Path, undisturbed: list[tuple[Any, ...]], excerpt: Callable[[str, int, int], Path]
) -> None:
    service.workspaces.create("W")
    assert service.documents.ingest("W", excerpt("mosca-2011-women-cvd.pdf", 10, 10)).status == "ready"
    submitted = service.documents.submit("W", scan)
    seen: dict[str, Any] = {}

    def look_while_reading(progress: Progress) -> None:
        if progress.stage == "ocr" and progress.done == 1 and "hits" not in seen:
            seen["of"] = progress.total
            seen["document"] = service.documents.get("W", NAME)
            seen["hits"] = service.search.search("W", PHRASE, methods=("sparse",)).hits
            seen["hybrid"] = service.search.search("W", PHRASE).hits
            seen["answer"] = service.answers.ask("W", PHRASE)

    assert service.documents.jobs.run(submitted.document_id, OWNER, None, look_while_reading) == "ready"

    assert seen["of"] == 6, "all six pages are read by OCR"
    document = seen["document"]
    assert document.status == "running" and document.stage == "ocr" and document.partly_searchable
    assert document.to_json()["partly_searchable"] is True
    first = seen["hits"][0]
    assert (first.document_name, first.chunk.kind, first.chunk.page_start) == (NAME, PROVISIONAL, 1)
    assert "Literature searches focus on" in first.chunk.text
    assert first.chunk.rects and {r.page for r in first.chunk.rects} == {1}, "it carries its lines' boxes"
    assert any(h.chunk.id == first.chunk.id for h in seen["hybrid"]), "the default search finds it too"
    cited = {c.document for c in seen["answer"].citations}
    assert NAME not in cited, "answers cite ready documents only"

    after = service.documents.get("W", NAME)
    assert after.status == "ready" and not after.partly_searchable
    stored = final_chunks(service, after.id)
    assert stored and all(kind != PROVISIONAL for *_, kind in stored), "no provisional passage is left"
    hits = service.search.search("W", PHRASE, methods=("sparse",)).hits
    assert hits[0].document_name == NAME and hits[0].chunk.kind == "body" and hits[0].chunk.page_start == 1
    assert stored == undisturbed, "the chunks of a run nobody searched while it ran"


def test_a_run_cancelled_during_ocr_leaves_nothing_and_its_retry_ends_as_an_undisturbed_run(
    service: Any, scan: Path, undisturbed: list[tuple[Any, ...]]
) -> None:
    service.workspaces.create("Cancelled")
    submitted = service.documents.submit("Cancelled", scan)
    searched: list[int] = []
    asked = threading.Event()

    def cancel_at_the_third_page(progress: Progress) -> None:
        if progress.stage == "ocr" and progress.done >= 1 and not searched:
            searched.append(len(service.search.search("Cancelled", PHRASE, methods=("sparse",)).hits))
        if progress.stage == "ocr" and progress.done == 3 and not asked.is_set():
            service.documents.cancel("Cancelled", submitted.document_id)
            asked.set()
            threading.Event().wait(0.5)  # the heartbeat (every 0.1 s here) sees the request meanwhile

    outcome = service.documents.jobs.run(submitted.document_id, OWNER, None, cancel_at_the_third_page)

    assert outcome == "cancelled" and searched and searched[0] >= 1
    assert service.catalog.document_chunk_ids(submitted.document_id) == [], "a cancelled run leaves no passage"
    assert service.search.search("Cancelled", PHRASE, methods=("sparse",)).hits == []
    with pytest.raises(WorkspaceError):
        service.answers.ask("Cancelled", PHRASE)  # nothing ready to answer from

    service.documents.retry("Cancelled", submitted.document_id)
    assert service.documents.jobs.run(submitted.document_id, OWNER) == "ready"
    assert final_chunks(service, submitted.document_id) == undisturbed
