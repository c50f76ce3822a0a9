"""Dose tables of the Chinese AF guideline (pages 6-9: 表8 rate-control drugs, 表9 cardioversion drugs): a drug's
row is quoted whole, and a question naming a rare drug (in either language) finds the passages naming it."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.answer.quotes import clean_quote
from workspace_app.app import App
from workspace_app.retrieval.scope import answer_scope

CHINESE = "zh-acute-af-ed-2024.pdf"


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> App:
    service = build(tmp_path_factory.mktemp("dose-tables") / "data")
    service.workspaces.create("AF")
    assert service.documents.ingest("AF", excerpt(CHINESE, 6, 9), CHINESE).status == "ready"
    return service


def flat(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def test_a_drug_row_of_several_sentences_is_quoted_whole(app: App) -> None:
    """表9's vernakalant row: dose | use | contraindications, one sentence each; the question asks for two cells."""
    answer = app.answers.ask("AF", "维纳卡兰用于房颤复律怎样给药？收缩压低于多少时禁用？")
    assert not answer.refused
    lead = answer.citations[0]
    assert "3 mg/kg" in lead.quote and "收缩压<100 mmHg" in lead.quote, answer.text
    chunk = app.catalog.get_chunks([lead.chunk_id])[lead.chunk_id]
    assert flat(lead.quote) in flat(clean_quote(chunk.text)) and lead.rects
    assert "[97]" not in answer.text and "[97]" not in lead.quote  # the source view keeps its reference markers


def test_passages_naming_a_rare_drug_are_found_in_either_language(app: App) -> None:
    scope = answer_scope(app.catalog, "AF", None)
    question = "For IV diltiazem used to control the ventricular rate in AF, what are the initial and maintenance doses?"
    groups = app.answers.reader.anchored(question, scope)
    assert any("地尔硫卓 0.25 mg/kg" in chunk.text for group in groups for chunk in group)
    assert all(chunk.kind == "body" for group in groups for chunk in group)
    # A drug the pages never name anchors nothing; nor do two-letter words ("IV", "AF").
    assert app.answers.reader.anchored("What is the IV dose of ivabradine in AF?", scope) == []




def test_a_dose_asked_in_english_finds_the_dose_rows_of_a_common_drug(app: App) -> None:
    """Asked for amiodarone's dose in English, the passages naming 胺碘酮 are found, 表8's and 表9's rows among
    them (in the whole dev workspace, where it is too common to be rare, those giving a dose: bench.answers)."""
    scope = answer_scope(app.catalog, "AF", None)
    groups = app.answers.reader.anchored("What amiodarone regimen is given for pharmacological cardioversion of AF?", scope)
    rows = [chunk for group in groups for chunk in group if chunk.text.lstrip().startswith(("胺碘酮", "其他类"))]
    assert any("150 mg" in chunk.text for chunk in rows) and any("300 mg" in chunk.text for chunk in rows)
    # Asked in Chinese, the question's own word finds its passages: nothing is added.
    assert app.answers.reader.anchored("胺碘酮用于药物复律时怎样给药？", scope) == []

def test_a_dose_for_a_use_the_pages_never_mention_is_refused(app: App) -> None:
    """Amiodarone's doses are in the tables, for rate control and cardioversion; not for preventing AF after
    cardiac surgery."""
    assert app.answers.ask("AF", "心脏外科术后（如冠脉搭桥术后）预防房颤，胺碘酮应怎样给药？").refused
