"""Files that cannot be ingested, through the service and the CLI: a clear message naming the file, nothing else
in the workspace changes, and the good files given alongside are ingested all the same. OCR is off here, so an
image-only PDF is refused too (tests/ingest/test_ocr.py reads one with OCR on)."""

from __future__ import annotations

import json
import re
import sqlite3
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pymupdf
import pytest
from keyword_index import keyword_rows

from workspace_app.adapters.ownership import release_data_dir

GOOD = "arnett-2014-guideline-strategies.pdf"
ODD_NAME = "../../etc/ünï code\u202e.pdf"
QUERIES = ["multiple chronic conditions in Medicare beneficiaries", "clinical practice guideline comorbidity"]


@dataclass(frozen=True)
class Bad:
    """A file that must be refused, and words its message must contain."""

    name: str
    message: str


BAD = [
    Bad("empty.pdf", r"empty|0 bytes"),
    Bad("truncated.pdf", r"not a readable PDF|damaged|truncated|no pages"),
    Bad("locked.pdf", r"password"),
    Bad("not-a-pdf.pdf", r"is not a PDF: it is another kind of file"),
    Bad("picture.pdf", r"is not a PDF: it is a PNG image"),
    Bad("scanned.pdf", r"no text layer|scanned|image"),
    Bad("notes.docx", r"not supported"),
]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory, guidelines: Path, excerpt: Callable[..., Path]) -> dict[str, Path]:
    """The bad files, a 300-page PDF, an odd file name and a PDF encrypted with an empty user password."""
    folder = tmp_path_factory.mktemp("bad-input")
    made = {GOOD: guidelines / GOOD}
    made["empty.pdf"] = folder / "empty.pdf"
    made["empty.pdf"].write_bytes(b"")
    whole = (guidelines / "mosca-2011-women-cvd.pdf").read_bytes()
    made["truncated.pdf"] = folder / "truncated.pdf"
    made["truncated.pdf"].write_bytes(whole[: int(len(whole) * 0.3)])
    made["not-a-pdf.pdf"] = folder / "not-a-pdf.pdf"
    made["not-a-pdf.pdf"].write_text("Minutes of the guideline meeting.\nNothing to see here.\n" * 50, encoding="utf-8")
    made["picture.pdf"] = folder / "picture.pdf"
    with pymupdf.open(excerpt("shen-2017-syncope.pdf", 10, 10)) as doc:
        made["picture.pdf"].write_bytes(doc[0].get_pixmap(dpi=30).tobytes("png"))
    made["notes.docx"] = folder / "notes.docx"
    made["notes.docx"].write_bytes(b"PK\x03\x04" + b"\x00" * 200)
    with pymupdf.open(excerpt("shen-2017-syncope.pdf", 10, 11)) as doc:
        made["locked.pdf"] = folder / "locked.pdf"
        doc.save(made["locked.pdf"], encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="x", owner_pw="y")
        with pymupdf.open() as scanned:
            pixmap = doc[0].get_pixmap(dpi=60)
            page = scanned.new_page(width=doc[0].rect.width, height=doc[0].rect.height)
            page.insert_image(page.rect, pixmap=pixmap)
            made["scanned.pdf"] = folder / "scanned.pdf"
            scanned.save(made["scanned.pdf"])
    # The first two pages of zh-dapt-chd-consensus-2021.pdf, keeping its encryption (AES, empty user password).
    with pymupdf.open(guidelines / "zh-dapt-chd-consensus-2021.pdf") as doc:
        doc.select([0, 1])
        made["blank-password.pdf"] = folder / "blank-password.pdf"
        doc.save(made["blank-password.pdf"], encryption=pymupdf.PDF_ENCRYPT_KEEP)
    odd = folder / "odd" / unicodedata.normalize("NFC", "ünï code\u202e.pdf")
    odd.parent.mkdir()
    odd.write_bytes(excerpt("mosca-2011-women-cvd.pdf", 3, 4).read_bytes())
    made["odd"] = odd
    with pymupdf.open(guidelines / GOOD) as source, pymupdf.open() as big:
        while big.page_count < 300:
            big.insert_pdf(source, from_page=0, to_page=min(source.page_count, 300 - big.page_count) - 1)
        made["300-pages.pdf"] = folder / "300-pages.pdf"
        big.save(made["300-pages.pdf"], garbage=3, deflate=True)
    return made


def snapshot(service: Any, workspace: str, name: str) -> dict[str, Any]:
    """What must not change: the good document, its chunks, vectors, index rows and search results."""
    ws = service.workspaces.get(workspace)
    document = service.documents.get(workspace, name)
    ids = service.catalog.document_chunk_ids(document.id)
    return {
        "document": (document.id, document.status, document.chunks, document.pages),
        "chunks": [(c.id, c.text, c.page_start) for c in map(service.catalog.get_chunks(ids).get, ids)],
        "vectors": service.vectors.count(ws.id),
        "searches": [
            [(hit.chunk.id, hit.rank) for hit in service.search.search(workspace, query).hits] for query in QUERIES
        ],
    }


def fts_rows(data_dir: Path) -> int:
    with sqlite3.connect(data_dir / "catalog.sqlite") as db:
        return keyword_rows(db)


@pytest.fixture(scope="module")
def workspace(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], files: dict[str, Path]
) -> Iterator[tuple[Any, Path, dict[str, Any]]]:
    """A service (OCR off) with workspace "W" holding the good document, and a snapshot of it."""
    data_dir = tmp_path_factory.mktemp("bad-service") / "data"
    service = build(data_dir, ocr_engine="none")
    service.workspaces.create("W")
    assert service.documents.ingest("W", files[GOOD]).status == "ready"
    yield service, data_dir, snapshot(service, "W", GOOD)


@pytest.mark.parametrize("bad", BAD, ids=[bad.name for bad in BAD])
def test_service_refuses_a_bad_file_clearly_and_changes_nothing(
    workspace: tuple[Any, Path, dict[str, Any]], files: dict[str, Path], bad: Bad
) -> None:
    service, data_dir, before = workspace

    report = service.documents.ingest("W", files[bad.name])

    assert report.status == "failed"
    assert report.chunks == 0
    assert bad.name in (report.error or ""), report.error
    assert re.search(bad.message, report.error or "", re.IGNORECASE), report.error
    assert "Traceback" not in (report.error or "")
    assert snapshot(service, "W", GOOD) == before
    assert fts_rows(data_dir) == before["document"][2]
    for document in service.documents.list("W"):
        if document.name != GOOD:  # a refused file may stay listed, as failed, with its message
            assert (document.status, document.chunks, document.error) == ("failed", 0, document.error)
            assert document.error and document.name in document.error
            assert service.catalog.document_chunk_ids(document.id) == []


def test_a_refused_file_is_refused_again_on_retry(
    workspace: tuple[Any, Path, dict[str, Any]], files: dict[str, Path]
) -> None:
    service, _, before = workspace
    first = service.documents.ingest("W", files["locked.pdf"])
    second = service.documents.ingest("W", files["locked.pdf"])
    assert first.status == second.status == "failed"
    assert second.error == first.error
    assert snapshot(service, "W", GOOD) == before


def test_a_missing_workspace_is_a_failed_report_not_an_exception(
    workspace: tuple[Any, Path, dict[str, Any]], files: dict[str, Path]
) -> None:
    service, _, _ = workspace
    report = service.documents.ingest("No such workspace", files[GOOD])
    assert report.status == "failed" and "No such workspace" in (report.error or "")


def test_path_separators_and_odd_unicode_in_a_name_are_made_safe(
    tmp_path: Path, build: Callable[..., Any], files: dict[str, Path]
) -> None:
    data_dir = tmp_path / "data"
    service = build(data_dir)
    service.workspaces.create("Odd")

    report = service.documents.ingest("Odd", files["odd"], ODD_NAME)

    assert report.status == "ready", report
    name = service.documents.get("Odd", report.document_id).name
    assert "/" not in name and "\\" not in name and ".." not in name
    assert not [ch for ch in name if unicodedata.category(ch).startswith("C")]
    assert name.startswith("ünï code") and name.endswith(".pdf")
    assert report.document == name
    assert service.documents.get("Odd", name).id == report.document_id
    assert service.documents.document_path(service.documents.get("Odd", name)).parent == data_dir / "files"
    assert not (tmp_path / "etc").exists() and not (data_dir.parent.parent / "etc").exists()
    assert service.search.search("Odd", "hormone therapy").hits


def test_a_pdf_with_an_empty_user_password_is_ingested(
    tmp_path: Path, build: Callable[..., Any], files: dict[str, Path]
) -> None:
    with pymupdf.open(files["blank-password.pdf"]) as doc:
        assert "AES" in (doc.metadata or {}).get("encryption", "")
    service = build(tmp_path / "data")
    service.workspaces.create("Blank password")
    report = service.documents.ingest("Blank password", files["blank-password.pdf"])
    assert report.status == "ready", report
    assert report.pages == 2 and report.chunks > 0
    assert service.search.search("Blank password", "双联抗血小板", methods=("sparse",)).hits


def test_the_page_limit_refuses_a_long_pdf_cleanly(
    tmp_path: Path, build: Callable[..., Any], files: dict[str, Path], guidelines: Path
) -> None:
    service = build(tmp_path / "data", max_pages=10)
    service.workspaces.create("Limited")
    assert service.documents.ingest("Limited", files[GOOD]).status == "ready"
    before = snapshot(service, "Limited", GOOD)

    report = service.documents.ingest("Limited", guidelines / "mosca-2011-women-cvd.pdf")

    assert report.status == "failed"
    message = report.error or ""
    assert "mosca-2011-women-cvd.pdf" in message and "20 pages" in message and "10" in message, message
    assert snapshot(service, "Limited", GOOD) == before


def test_the_size_limit_refuses_a_large_file_before_storing_it(
    tmp_path: Path, build: Callable[..., Any], guidelines: Path
) -> None:
    service = build(tmp_path / "data", max_file_mb=1)
    service.workspaces.create("Small")
    large = guidelines / "shen-2017-syncope.pdf"
    assert large.stat().st_size > 1024 * 1024
    report = service.documents.ingest("Small", large)
    assert report.status == "failed" and report.document_id is None
    assert large.name in (report.error or "") and "MB" in (report.error or "")
    assert service.documents.list("Small") == []
    assert list((tmp_path / "data" / "files").iterdir()) == []


# The same through the command line


@pytest.fixture(scope="module")
def cli_run(
    tmp_path_factory: pytest.TempPathFactory, cli: Callable[..., Any], files: dict[str, Path]
) -> tuple[Path, Any, list[dict[str, Any]], list[Path]]:
    """`workspace-app ingest` (OCR off) given the good file, every bad one, the odd name, a missing file and big
    PDFs."""
    data_dir = tmp_path_factory.mktemp("bad-cli") / "data"
    created = cli(data_dir, "workspace", "create", "W", timeout=120)
    assert created.returncode == 0, created.stderr
    given = [
        files[GOOD], *(files[bad.name] for bad in BAD), files["odd"], data_dir.parent / "missing.pdf",
        files["blank-password.pdf"], files["300-pages.pdf"],
    ]
    done = cli(data_dir, "ingest", "-w", "W", *given, timeout=600, WORKSPACE_INGEST__OCR_ENGINE="none")
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    return data_dir, done, reports, given


@pytest.mark.slow
def test_cli_reports_each_file_and_exits_1_when_any_failed(
    cli_run: tuple[Path, Any, list[dict[str, Any]], list[Path]],
) -> None:
    _, done, reports, given = cli_run
    assert done.returncode == 1, done.stderr[-2000:]
    assert len(reports) == len(given)
    by_name = {report["document"]: report for report in reports}
    assert by_name[GOOD]["status"] == "ready"
    assert by_name["blank-password.pdf"]["status"] == "ready"
    assert by_name["300-pages.pdf"]["status"] == "ready" and by_name["300-pages.pdf"]["pages"] == 300
    for bad in BAD:
        report = by_name[bad.name]
        assert report["status"] == "failed"
        assert bad.name in report["error"] and re.search(bad.message, report["error"], re.IGNORECASE)
    assert by_name["missing.pdf"]["status"] == "failed" and "missing.pdf" in by_name["missing.pdf"]["error"]
    odd = [report for report in reports if report["document"].startswith("ünï code")]
    assert len(odd) == 1 and odd[0]["status"] == "ready"
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_cli_good_document_matches_an_undisturbed_ingest(
    cli_run: tuple[Path, Any, list[dict[str, Any]], list[Path]], build: Callable[..., Any],
    workspace: tuple[Any, Path, dict[str, Any]],
) -> None:
    data_dir, _, _, _ = cli_run
    reference, _, _ = workspace
    service = build(data_dir)
    ws = service.workspaces.get("W")
    good = service.documents.get("W", GOOD)
    expected = reference.documents.get("W", GOOD)
    assert (good.status, good.chunks, good.pages) == ("ready", expected.chunks, expected.pages)
    ids, ref_ids = service.catalog.document_chunk_ids(good.id), reference.catalog.document_chunk_ids(expected.id)
    found, ref_found = service.catalog.get_chunks(ids), reference.catalog.get_chunks(ref_ids)
    assert [found[i].text for i in ids] == [ref_found[i].text for i in ref_ids]
    assert service.vectors.count(ws.id, good.id) == good.chunks
    # Dense ranks restricted to the good document depend only on its own vectors (BM25 statistics would also
    # see the other documents the CLI ingested). Vectors from two processes may differ in the last bits, so
    # near-ties may swap: each side's top 3 must be in the other's top 5.
    for query in QUERIES:
        got = [hit.chunk.text for hit in service.search.search("W", query, 5, [GOOD], ("dense",)).hits]
        want = [hit.chunk.text for hit in reference.search.search("W", query, 5, [GOOD], ("dense",)).hits]
        assert set(got[:3]) <= set(want) and set(want[:3]) <= set(got), query
    for document in service.documents.list("W"):
        assert document.status in ("ready", "failed")
        if document.status == "failed":
            assert service.catalog.document_chunk_ids(document.id) == []
            assert service.vectors.count(ws.id, document.id) == 0


@pytest.mark.slow
def test_the_300_page_pdf_the_cli_ingested_is_whole(
    cli_run: tuple[Path, Any, list[dict[str, Any]], list[Path]], build: Callable[..., Any],
) -> None:
    data_dir, _, _, _ = cli_run
    service = build(data_dir)
    document = service.documents.get("W", "300-pages.pdf")
    assert (document.status, document.pages) == ("ready", 300)
    ids = service.catalog.document_chunk_ids(document.id)
    assert len(ids) == document.chunks
    assert service.vectors.count(document.workspace_id, document.id) == document.chunks
    pages = {c.page_end for c in service.catalog.get_chunks(ids).values()}
    assert max(pages) >= 299


@pytest.mark.slow
def test_cli_search_json_reads_what_the_ingest_process_wrote(
    cli_run: tuple[Path, Any, list[dict[str, Any]], list[Path]], cli: Callable[..., Any],
) -> None:
    data_dir, _, _, _ = cli_run
    release_data_dir(data_dir)  # an App of an earlier test may have owned it; idle now, the CLI process owns it
    done = cli(data_dir, "search", "-w", "W", "--json", "--documents", GOOD, "--top-k", "4", QUERIES[0], timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0]["query"] == QUERIES[0]
    results = lines[0]["results"]
    assert [r["rank"] for r in results] == [1, 2, 3, 4]
    for result in results:
        assert result["document"] == GOOD and result["text"].strip()
        assert 1 <= result["page_start"] <= result["page_end"] <= 6
        assert result["rects"] and {"dense", "sparse"} <= set(result["ranks"])


def test_a_very_long_name_is_shortened_but_keeps_its_extension(
    tmp_path: Path, build: Callable[..., Any], files: dict[str, Path]
) -> None:
    service = build(tmp_path / "data")
    service.workspaces.create("Long")
    report = service.documents.ingest("Long", files[GOOD], "guideline " * 40 + ".pdf")
    assert report.status == "ready", report
    assert len(report.document) <= 180 and report.document.endswith(".pdf")
    assert service.documents.get("Long", report.document).id == report.document_id


@pytest.mark.parametrize("bad", BAD, ids=[bad.name for bad in BAD])
def test_queueing_without_waiting_refuses_a_bad_file_at_once_with_the_same_message(
    workspace: tuple[Any, Path, dict[str, Any]], files: dict[str, Path], bad: Bad
) -> None:
    service, _, before = workspace
    queued_before = service.documents.jobs.queue().pending_document_ids()

    service.workspaces.create(f"Queued {bad.name}")  # a workspace of its own: in W the file is already listed
    report = service.documents.submit(f"Queued {bad.name}", files[bad.name])

    assert report.status == "failed" and re.search(bad.message, report.error or "", re.IGNORECASE), report.error
    assert service.documents.jobs.queue().pending_document_ids() == queued_before  # nothing for a worker to fail
    assert snapshot(service, "W", GOOD) == before


def test_a_second_file_with_a_taken_name_gets_a_suffix_and_a_shared_name_is_refused_with_the_candidates(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[..., Path]
) -> None:
    from workspace_app.errors import AmbiguousDocumentError

    service = build(tmp_path / "data")
    service.workspaces.create("W")
    first = service.documents.submit("W", excerpt("shen-2017-syncope.pdf", 10, 10), "same.pdf")
    second = service.documents.submit("W", excerpt("mosca-2011-women-cvd.pdf", 3, 3), "same.pdf")
    third = service.documents.submit("W", excerpt("eckel-2013-lifestyle.pdf", 5, 5), "same.pdf")
    again = service.documents.submit("W", excerpt("shen-2017-syncope.pdf", 10, 10), "other.pdf")
    assert [first.document, second.document, third.document] == ["same.pdf", "same (2).pdf", "same (3).pdf"]
    assert again.status == "duplicate" and again.document_id == first.document_id  # the same file is not a new name
    assert service.documents.get("W", "same (2).pdf").id == second.document_id

    # A catalog from before names were kept apart: both rows named same.pdf. Naming one is refused, listing both.
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite") as db:
        db.execute("UPDATE documents SET name = 'same.pdf' WHERE id = ?", (second.document_id,))
    with pytest.raises(AmbiguousDocumentError) as refused:
        service.documents.get("W", "same.pdf")
    assert first.document_id in refused.value.user_message and second.document_id in refused.value.user_message
    with pytest.raises(AmbiguousDocumentError):
        service.documents.remove("W", "same.pdf")
    assert len(service.documents.list("W")) == 3  # nothing was removed
    assert service.documents.get("W", second.document_id).name == "same.pdf"  # an id still names one

    # Reopening runs the rename of migration 11 again on such rows (as an upgrade would): later ones get suffixes.
    with sqlite3.connect(tmp_path / "data" / "catalog.sqlite") as db:
        # Migration 11 renames; later ones run again too (they are written to run again harmlessly).
        db.execute("DELETE FROM schema_version WHERE version >= 11")
        for column in ("attempt", "attempts", "next_try_at", "stage_waiting"):  # added by migrations 12 and 16
            db.execute(f"ALTER TABLE documents DROP COLUMN {column}")
        for column in ("table_done", "table_rows", "table_number", "tables_total", "rows_done", "rows_total",
                       "table_eta_s", "eta_s"):  # migration 16
            db.execute(f"ALTER TABLE imports DROP COLUMN {column}")
    reopened = build(tmp_path / "data")
    names = sorted(d.name for d in reopened.documents.list("W"))
    assert names == ["same (2).pdf", "same (3).pdf", "same.pdf"]


def test_escape_sequences_in_a_file_name_never_reach_the_terminal(
    tmp_path: Path, cli: Callable[..., Any], excerpt: Callable[..., Path]
) -> None:
    hostile = tmp_path / "\x1b]0;owned\x07\x1b[2J\x1b[31mred.pdf"
    hostile.write_bytes(excerpt("mosca-2011-women-cvd.pdf", 3, 3).read_bytes())
    data_dir = tmp_path / "data"
    assert cli(data_dir, "workspace", "create", "W").returncode == 0
    runs = [
        cli(data_dir, "ingest", "-w", "W", hostile),
        cli(data_dir, "documents", "-w", "W"),
        cli(data_dir, "documents", "-w", "W", "--json"),
        cli(data_dir, "remove", "-w", "W", "\x1b[2Jnothing.pdf"),
    ]
    assert runs[0].returncode == 0 and runs[3].returncode == 2
    for run in runs:
        assert "\x1b" not in run.stdout and "\x1b" not in run.stderr and "\x07" not in run.stdout + run.stderr
    assert "red.pdf" in runs[1].stdout and "red.pdf" in runs[2].stdout
    assert "There is no document '?[2Jnothing.pdf'" in runs[3].stderr
