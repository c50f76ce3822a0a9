"""Asking about a patient in Chat (AppTest, real data): the sidebar picks the patient, the answer cites the
patient's events, the guideline and the definitions, and a patient chip opens the event with a link to its place
on the patient's timeline."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

REPO = Path(__file__).resolve().parents[2]
APP = REPO / "app.py"
AF_PATIENT = "10025463"  # coded with atrial fibrillation, prescribed warfarin
QUESTION = "Is this patient's anticoagulation in line with the AF guideline?"


@pytest.fixture
def data_dir(af_patient_data: Path) -> Path:
    """Workspace 'AF' with the HCM guideline's AF pages, and the AF demo patient imported (tests/ui/conftest.py)."""
    return af_patient_data


@pytest.fixture
def app(data_dir: Path, build: Callable[..., Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[AppTest]:
    monkeypatch.setenv("WORKSPACE_DATA_DIR", str(data_dir))
    monkeypatch.chdir(data_dir.parent)
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))
    st.cache_resource.clear()
    at = AppTest.from_file(str(APP), default_timeout=120)
    at.run()
    at.switch_page("pages/chat.py").run()
    assert not at.exception
    yield at
    st.cache_resource.clear()


def test_a_question_about_a_patient_cites_each_level_and_opens_the_event(app: AppTest, build: Callable[..., Any],
                                                                          data_dir: Path) -> None:
    picker = app.selectbox(key="chat-patient")
    assert picker.options[:2] == ["No patient: the sources only", f"Patient {AF_PATIENT}"]
    picker.select(AF_PATIENT).run()
    app.chat_input(key="chat-input").set_value(QUESTION).run()
    assert not app.exception

    service = build(data_dir)
    [chat] = service.chats.list_chats("AF")
    [message] = service.chats.chat_messages("AF", chat.id)
    levels = {c.level for c in message.answer.citations}
    assert levels == {"patient", "guideline", "vocabulary"}, "the kept answer cites each level"
    shown = "\n".join(m.value for m in app.markdown).replace("\\", "")
    assert "Patient record:" in shown and "Guideline:" in shown
    crossed = next(c.value for c in app.caption if c.value.startswith("Graph entities crossed"))
    assert all(f"{e.name} ({e.type})" in crossed.replace("\\", "") for e in message.answer.entities)
    assert "disease:atrial fibrillation" in {e.id for e in message.answer.entities}

    event = next(c for c in message.answer.citations if c.level == "patient")
    next(b for b in app.button if b.key == f"answer-{message.id}-chip-{event.n}").click().run()
    assert not app.exception
    texts = "\n".join(m.value for m in app.markdown).replace("\\", "")
    assert "patient record" in texts and event.quote.split()[0] in texts, "the event, not a 'source removed' notice"
    assert not [w for w in app.warning if "removed" in w.value]
    links = [link for link in app.get("page_link") if "timeline" in link.proto.label]
    assert links and links[0].proto.page == "patients"
    assert parse_qs(links[0].proto.query_string) == {"patient": [AF_PATIENT], "event": [event.event_id]}


def test_a_question_about_the_patient_s_timeline_cites_the_record(app: AppTest, build: Callable[..., Any],
                                                                   data_dir: Path) -> None:
    app.selectbox(key="chat-patient").select(AF_PATIENT).run()
    question = "When was the patient's INR last high?"
    app.chat_input(key="chat-input").set_value(question).run()
    assert not app.exception
    service = build(data_dir)
    kept = [m for c in service.chats.list_chats("AF") for m in service.chats.chat_messages("AF", c.id)]
    [message] = [m for m in kept if m.answer.question == question]
    high = [e for e in service.patients.events(AF_PATIENT) if "abnormal:inr(pt)↑" in e.concepts]
    assert [c.event_id for c in message.answer.citations] == [high[-1].event_id]
    shown = "\n".join(m.value for m in app.markdown).replace("\\", "")
    assert f"The latest INR (high) in the record of patient {AF_PATIENT}:" in shown
    event = message.answer.citations[0]
    next(b for b in app.button if b.key == f"answer-{message.id}-chip-{event.n}").click().run()
    assert not app.exception
