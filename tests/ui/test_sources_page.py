"""The Sources page driven through Streamlit's AppTest on a data dir in tmp_path (no worker: jobs stay queued
unless the test runs one in-process with `service.process_job`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from markdown_it import MarkdownIt
from streamlit.testing.v1 import AppTest

APP = Path(__file__).resolve().parents[2] / "app.py"
ROWS = "sources"
HOSTILE = "<img src=x onerror=alert(1)> **bold** :red[x].pdf"


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The app's data dir; the upload limit is 1 MB so an over-size file is cheap to make."""
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("WORKSPACE_INGEST__MAX_FILE_MB", "1")
    monkeypatch.chdir(tmp_path)
    return tmp_path / "data"


@pytest.fixture
def service(data_dir: Path, build: Callable[..., Any]) -> Any:
    """A second service on the app's data dir, for arranging state and checking what the page did."""
    made = build(data_dir)
    made.settings.ingest.max_file_mb = 1
    return made


@pytest.fixture
def workspace(service: Any) -> Any:
    return service.workspaces.create("Cardiology")


@pytest.fixture
def app(data_dir: Path, workspace: Any) -> Iterator[AppTest]:
    """The Sources page with the workspace open."""
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60)
    at.session_state["workspace"] = workspace.id
    at.run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def shown_text(at: AppTest) -> str:
    """Markdown elements as a CommonMark renderer shows them."""
    renderer = MarkdownIt("commonmark", {"html": True})
    return "\n".join(renderer.render(element.value) for element in at.markdown)


def row_states(at: AppTest) -> list[str]:
    """Each row's state as shown, in list order: its progress text while active, else its status badge."""
    bars = [bar.proto.text.replace("\\", "") for bar in at.get("progress")]
    badges = [m.value for m in at.markdown if "-badge[" in m.value and "Class" not in m.value]
    return bars + [b.split("[", 1)[1].split(" ", 1)[1].rstrip("]") for b in badges]


def retry_buttons(at: AppTest) -> list[str]:
    return [b.key for b in at.button if b.key and "-retry-" in b.key]


def upload(at: AppTest, *files: tuple[str, bytes]) -> None:
    at.file_uploader[0].set_value([(name, data, "application/octet-stream") for name, data in files])
    at.run()
    assert not at.exception


def test_without_a_workspace_the_page_says_where_to_go(data_dir: Path) -> None:
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=60).run()
    at.switch_page("pages/sources.py").run()
    assert not at.exception
    assert "Open or create a workspace first" in at.info[0].value
    st.cache_resource.clear()


def test_empty_workspace_invites_an_upload(app: AppTest) -> None:
    assert app.title[0].value == "Sources"
    assert "No sources yet" in app.info[0].value
    assert app.file_uploader[0].accept_multiple_files
    assert set(app.file_uploader[0].allowed_type) == {".pdf", ".txt", ".md"}


def test_upload_many_queues_good_ones_and_names_the_limit(app: AppTest, service: Any, workspace: Any,
                                                         excerpt: Callable[..., Path]) -> None:
    good = excerpt("shen-2017-syncope.pdf", 10, 11).read_bytes()
    upload(app, ("syncope.pdf", good), ("notes.md", b"# Notes\n\nBeta blockers."), ("huge.pdf", b"%PDF" + b"0" * 1_300_000))

    documents = {d.name: d for d in service.documents.list(workspace.id)}
    assert set(documents) == {"syncope.pdf", "notes.md"}
    assert {d.status for d in documents.values()} == {"queued"}
    assert service.documents.jobs.queue().pending_document_ids() == [documents["syncope.pdf"].id, documents["notes.md"].id]
    problems = " ".join(e.value for e in app.error).replace("\\", "")
    assert "huge.pdf is 1.2 MB; the limit is 1 MB" in problems
    assert "Queued 2 files" in app.toast[0].value
    assert not app.dataframe  # one list: no separate table of the same sources
    names = [m.value for m in app.markdown if m.value.startswith("**") and m.value.endswith(".md**") or ".pdf**" in m.value]
    assert names == ["**syncope\\.pdf**", "**notes\\.md**"]
    assert row_states(app) == ["Waiting for a worker"] * 2  # one bar per queued source, in its row
    assert not app.file_uploader[0].value  # the drop zone is cleared for the next files

    app.button(key=f"{PROBLEMS_KEY}-dismiss").click().run()
    assert not app.error


PROBLEMS_KEY = "sources-upload-problems"


def test_cancel_a_queued_job_then_retry_it(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers after myocardial infarction."))
    document = service.documents.list(workspace.id)[0]

    app.button(key=f"{ROWS}-cancel-{document.id}").click().run()
    assert not app.exception
    assert service.documents.get(workspace.id, document.id).status == "cancelled"
    assert row_states(app) == ["Cancelled"]

    app.button(key=f"{ROWS}-retry-{document.id}").click().run()
    assert service.documents.get(workspace.id, document.id).status == "queued"
    assert service.documents.jobs.queue().pending_document_ids().count(document.id) == 2  # the cancelled job is skipped


def test_a_permanent_failure_shows_its_error_escaped_leaves_chat_and_offers_no_retry(
    app: AppTest, service: Any, workspace: Any
) -> None:
    upload(app, (HOSTILE, b""))
    document = service.documents.list(workspace.id)[0]
    assert document.status == "failed"  # found before it was queued: no worker needs to try it
    assert service.documents.jobs.queue().pending_document_ids() == []
    app.run()

    assert not app.exception
    error = " ".join(e.value for e in app.error)
    assert "is empty" in error and "Remove it" in error
    text = shown_text(app)
    assert "<img" not in text and "<strong>bold</strong>" not in text and "**bold**" in text
    assert "&lt;img src=x onerror=alert(1)&gt;" in text
    assert row_states(app) == ["Failed"]
    assert retry_buttons(app) == []  # the same bytes would fail the same way
    stored = service.documents.get(workspace.id, document.id)
    assert not stored.retryable and not stored.included
    checkbox = app.checkbox(key=f"{ROWS}-include-{document.id}")
    assert checkbox.value is False and checkbox.disabled


def test_a_passing_failure_offers_retry(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]
    service.documents.jobs.states.fail(document.id, "The vector store did not answer. Retry in a moment.", retryable=True)
    app.run()

    assert row_states(app) == ["Failed"]
    assert "Remove it" not in " ".join(e.value for e in app.error)
    app.button(key=f"{ROWS}-retry-{document.id}").click().run()
    assert service.documents.get(workspace.id, document.id).status == "queued"


def test_duplicates_are_reported_as_such(app: AppTest, service: Any, workspace: Any) -> None:
    notes = b"# Notes\n\nBeta blockers after myocardial infarction."
    upload(app, ("notes.md", notes), ("copy of notes.md", notes))

    assert [d.name for d in service.documents.list(workspace.id)] == ["notes.md"]
    assert "Queued 1 file for ingestion; 1 file already in this workspace" in app.toast[0].value.replace("\\", "")
    shown = " ".join(i.value for i in app.info).replace("\\", "")
    assert "copy of notes.md is already in this workspace as notes.md (waiting to be ingested)" in shown

    upload(app, ("again.md", notes))
    assert "1 file already in this workspace" in app.toast[0].value
    assert "Queued" not in app.toast[0].value
    assert service.documents.jobs.queue().pending_document_ids().count(service.documents.list(workspace.id)[0].id) == 1


def test_a_duplicate_notice_goes_when_the_source_it_duplicates_is_removed(
    app: AppTest, service: Any, workspace: Any
) -> None:
    notes = b"# Notes\n\nBeta blockers after myocardial infarction."
    upload(app, ("notes.md", notes), ("copy of notes.md", notes))
    assert "already in this workspace" in " ".join(i.value for i in app.info)
    document = service.documents.list(workspace.id)[0]

    app.button(key=f"{ROWS}-remove-{document.id}").click().run()
    app.button(key=f"{ROWS}-confirm-remove-{document.id}").click().run()

    assert not app.exception and service.documents.list(workspace.id) == []
    assert "already in this workspace" not in " ".join(i.value for i in app.info) + shown_text(app)
    assert "No sources yet" in " ".join(i.value for i in app.info)


def test_ready_source_can_be_left_out_of_chat(app: AppTest, service: Any, workspace: Any,
                                             excerpt: Callable[..., Path]) -> None:
    upload(app, ("syncope.pdf", excerpt("shen-2017-syncope.pdf", 10, 11).read_bytes()))
    document = service.documents.list(workspace.id)[0]
    assert service.documents.jobs.run(document.id, "test@nowhere:1:x") == "ready"
    app.run()
    assert row_states(app) == ["Ready"]
    assert service.documents.included_ids(workspace.id) == [document.id]
    assert app.expander and app.expander[0].label == "Source guide"
    # The collapsed label is the checkbox's accessible name: read as written, not "syncope\\.pdf".
    assert app.checkbox(key=f"{ROWS}-include-{document.id}").label == "Use syncope.pdf in chat"

    app.checkbox(key=f"{ROWS}-include-{document.id}").uncheck().run()

    assert not app.exception
    assert service.documents.included_ids(workspace.id) == []
    assert not service.documents.get(workspace.id, document.id).included
    assert app.checkbox(key=f"{ROWS}-include-{document.id}").value is False
    assert "not used in chat" in " ".join(c.value for c in app.caption)


def test_remove_asks_first(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]

    app.button(key=f"{ROWS}-remove-{document.id}").click().run()
    assert "cannot be undone" in app.warning[0].value
    app.button(key=f"{ROWS}-keep-{document.id}").click().run()
    assert not app.warning
    assert service.documents.list(workspace.id)

    app.button(key=f"{ROWS}-remove-{document.id}").click().run()
    app.button(key=f"{ROWS}-confirm-remove-{document.id}").click().run()
    assert not app.exception
    assert service.documents.list(workspace.id) == []
    assert "No sources yet" in app.info[0].value


def test_running_job_shows_stage_counts_and_eta(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]
    assert service.catalog.claim_document(document.id, "test@nowhere:1:x", 30)
    service.catalog.update_document(
        document.id, stage="embedding", progress=0.5, chunks_embedded=120, chunks_total=340, eta_s=40.0, pages=12
    )
    app.run()

    bars = app.get("progress")
    assert bars and "Embedding passages 120/340 · about 40 s left in this step" in bars[0].proto.text.replace("\\", "")
    app.button(key=f"{ROWS}-cancel-{document.id}").click().run()
    assert service.documents.get(workspace.id, document.id).cancel_requested
    assert "Cancelling" in app.get("progress")[0].proto.text


def test_a_job_waiting_for_the_model_says_so_instead_of_a_time_left(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]
    assert service.catalog.claim_document(document.id, "test@nowhere:1:x", 30)
    service.catalog.update_document(
        document.id, stage="embedding", progress=0.25, chunks_embedded=0, chunks_total=167, stage_done=0,
        stage_total=167, eta_s=None, stage_waiting=1,
    )
    app.run()

    text = app.get("progress")[0].proto.text.replace("\\", "")
    assert "Embedding passages 0/167 · waiting for the model (another source is using it)" in text
    assert "left" not in text


def test_a_stage_not_measured_yet_says_it_is_estimating(app: AppTest, service: Any, workspace: Any) -> None:
    """Issue 29: "other language 0/167" sat ~50 s with no time shown; now it says the time left is being measured,
    then shows it (the stage's own, as the pipeline measured it)."""
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]
    assert service.catalog.claim_document(document.id, "test@nowhere:1:x", 30)
    service.catalog.update_document(
        document.id, stage="cross-language", progress=0.85, stage_done=0, stage_total=167, eta_s=None,
    )
    app.run()
    text = app.get("progress")[0].proto.text.replace("\\", "")
    assert "Indexing for questions in the other language 0/167 passages · estimating the time left…" in text
    service.catalog.update_document(document.id, stage_done=64, eta_s=150.0)
    app.run()
    text = app.get("progress")[0].proto.text.replace("\\", "")
    assert "other language 64/167 passages · about 2 min left in this step" in text


def test_a_scanned_source_being_read_says_it_is_partly_searchable(app: AppTest, service: Any, workspace: Any) -> None:
    upload(app, ("notes.md", b"# Notes\n\nBeta blockers."))
    document = service.documents.list(workspace.id)[0]
    assert service.catalog.claim_document(document.id, "test@nowhere:1:x", 30)
    service.catalog.update_document(document.id, stage="ocr", progress=0.12, stage_done=0, stage_total=20, eta_s=None)
    app.run()
    assert "searchable" not in app.get("progress")[0].proto.text, "no page read yet"
    service.catalog.update_document(document.id, stage_done=3, eta_s=90.0)
    app.run()
    text = app.get("progress")[0].proto.text.replace("\\", "")
    assert "3/20" in text and "partly searchable (the pages read so far)" in text


def test_the_source_guide_shows_the_documents_text_escaped(app: AppTest, service: Any, workspace: Any) -> None:
    hostile = (
        "# Anticoagulation\n\nFor women with atrial fibrillation, warfarin <img src=x onerror=alert(1)> **bold** "
        ":red[x] should be used to maintain the INR at 2.0 to 3.0 (Class I; Level of Evidence A).\n\n"
        "Anticoagulation of women with atrial fibrillation prevents strokes <script>x</script> in most of them, "
        "and the benefit of warfarin outweighs the bleeding it causes in women at moderate or high risk.\n"
    )
    upload(app, ("af.md", hostile.encode()))
    document = service.documents.list(workspace.id)[0]
    assert service.documents.jobs.run(document.id, "test@nowhere:1:x") == "ready"
    app.run()

    assert not app.exception
    assert app.expander[0].label == "Source guide"
    text = shown_text(app)
    assert "Key recommendations" in text and "Class I, Level A" in text
    assert "warfarin" in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "<img" not in text and "<script>" not in text and "<strong>bold</strong>" not in text
