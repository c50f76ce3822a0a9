"""Ruled tables of the English guidelines (eckel-2013 Table 5, shen-2017 Table 6, arnett-2014 Table 1): their rows
are passages of their own, read under the table's caption and header, and a row of several sentences is quoted
whole."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.answer.quotes import clean_quote
from workspace_app.app import App

ECKEL = "eckel-2013-lifestyle.pdf"
SHEN = "shen-2017-syncope.pdf"
ARNETT = "arnett-2014-guideline-strategies.pdf"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> App:
    service = build(tmp_path_factory.mktemp("ruled-tables") / "data")
    service.workspaces.create("Tables")
    assert service.documents.ingest("Tables", excerpt(ECKEL, 7, 7), ECKEL).status == "ready"
    assert service.documents.ingest("Tables", excerpt(SHEN, 12, 12), SHEN).status == "ready"
    assert service.documents.ingest("Tables", excerpt(ARNETT, 2, 3), ARNETT).status == "ready"
    return service


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _chunks(app: App, name: str) -> list[Any]:
    document = next(d for d in app.documents.list("Tables") if d.name == name)
    ids = app.catalog.document_chunk_ids(document.id)
    return list(app.catalog.get_chunks(ids).values())


def test_a_tables_rows_are_read_under_its_caption_and_header(app: App) -> None:
    rows = [c for c in _chunks(app, SHEN) if "SFSR (72) 2004 684 79 (12%)" in c.text]
    assert rows, "the SFSR row is in a passage"
    title = rows[0].section.split(" > ")[-1]
    assert title.startswith("TABLE 6 Examples of Syncope Risk Scores: ")
    assert "Predictors" in title and "NPV" in title
    # The prose after the table is back in its own section.
    prose = [c for c in _chunks(app, SHEN) if "AVB indicates atrioventricular block" in c.text]
    assert prose and not prose[0].section.split(" > ")[-1].startswith("TABLE")


def test_a_table_row_of_several_sentences_is_quoted_whole(app: App) -> None:
    """Table 5's row: the advice (two sentences), its NHLBI grade, evidence statements, class and level."""
    answer = app.answers.ask(
        "Tables",
        "In the lifestyle guideline's summary table, what NHLBI grade, evidence statements and ACC/AHA class/level "
        "are attached to aerobic exercise advice aimed at LDL cholesterol and non-HDL cholesterol?",
        mode="hybrid",  # the chat's and the API's default (the question's answerability is near the threshold in naive)
    )
    assert not answer.refused, answer.text
    lead = answer.citations[0]
    assert "reduce LDL-C and non–HDL-C" in lead.quote and lead.quote.rstrip().endswith("ES5 (low) IIa A"), answer.text
    chunk = app.catalog.get_chunks([lead.chunk_id])[lead.chunk_id]
    assert flat(lead.quote) in flat(clean_quote(chunk.text)) and lead.rects and lead.page_start == 1
