"""Clean quotes: a quote shows no reference numbers, footnote marks or a second statement run into it, and the
highlight still finds it on the page. Sentences are the corpus PDFs' own text (page numbers in the comments)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.answer.quotes import clean_quote, quotable, quote_sentences
from workspace_app.app import App

OMMEN = "ommen-2024-hcm.pdf"
HFPEF = "zh-hfpef-consensus-2023.pdf"
# ommen-2024 page 22: the reference "6" is set as a superscript the text layer glues to the full stop.
BYPASS = (
    "Findings of extensive CAD would inform decision-making regarding altering the strategy to surgical myectomy "
    "combined with coronary bypass surgery.6 Coronary angiography is a requisite component of alcohol septal "
    "ablation, to assess septal anatomy, and for the presence of CAD that can be addressed at the time of septal "
    "ablation."
)
# zh-hfpef-consensus-2023 page 10: a table's unit footnote runs into the next statement's label.
DIURETICS = (
    "HFA：心力衰竭协会；ICOS：国际心脏肿瘤学会。1 mmHg=0.133 kPa陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。"
    "首选袢利尿剂，对袢利尿剂治疗效果不佳的患者可加用噻嗪类利尿剂，合并低钠血症的患者推荐使用托伐普坦。"
)
_DEBRIS = re.compile(r"[a-z)][.,;:]\d{1,3}(?:[,–-]\d{1,3})*(?=\s|$)|[\[［]\d|[†‡§¶]|kPa陈述")


def test_a_reference_number_glued_to_a_full_stop_parts_two_sentences() -> None:
    spans = quote_sentences(BYPASS)
    assert spans[0].text.endswith("combined with coronary bypass surgery.")
    assert spans[1].text.startswith("Coronary angiography is a requisite component")
    assert all(BYPASS[s.start : s.end] == s.text for s in spans), "offsets point into the passage"
    assert all(quotable(BYPASS, s, "en") for s in spans)


def test_a_statement_label_after_a_footnote_starts_its_own_sentence() -> None:
    spans = quote_sentences(DIURETICS)
    statement = next(s for s in spans if "利尿剂以减轻症状" in s.text)
    assert statement.text == "陈述8：推荐有液体潴留的患者使用利尿剂以减轻症状和体征。"
    assert DIURETICS[statement.start : statement.end] == statement.text
    assert quotable(DIURETICS, statement, "zh")


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        # ommen-2024 page 6: superscript references after a comma, mid-sentence.
        ("including the Institute of Medicine,1,2 and on the basis of internal reevaluation.",
         "including the Institute of Medicine, and on the basis of internal reevaluation."),
        # ommen-2024 page 25: a superscript glued to a word.
        (("The importance of potential psychological, social, legal, ethical, and professional implications of having a "
         "genetic disease33 should be conveyed."),
         ("The importance of potential psychological, social, legal, ethical, and professional implications of having a "
         "genetic disease should be conveyed.")),
        # shen-2017: parenthesised reference lists (a table's reference kept).
        (("Evaluation of the cause and assessment for the short- and long-term morbidity and mortality risk of syncope "
         "are recommended (Table 5) (68,82,83,100)."),
         ("Evaluation of the cause and assessment for the short- and long-term morbidity and mortality risk of syncope "
         "are recommended (Table 5).")),
        # zh-acute-af-ed-2024: bracketed reference lists.
        ("房颤发病率随年龄增长而增加[10,12]，且男性比女性更容易患房颤[10,13-14]。",
         "房颤发病率随年龄增长而增加，且男性比女性更容易患房颤。"),
        # shen-2017 Table 6: footnote marks glued to a table row's cells.
        ("Syncope Risk Score (75) 2009 2,584 173 (7%) 30-d serious events# No Abnormal ECG‡; >90 y of age",
         "Syncope Risk Score 2009 2,584 173 (7%) 30-d serious events No Abnormal ECG; >90 y of age"),
    ],
)
def test_a_quote_is_shown_without_reference_numbers_and_footnote_marks(raw: str, shown: str) -> None:
    assert clean_quote(raw) == shown


@pytest.mark.parametrize(
    "sentence",
    [
        # Numbers, decimals, doses, units and table references stay (grundy-2018's misread "l.27" too).
        ("In MESA (Multi-Ethnic Study of Atherosclerosis), CAC scanning delivered 0.74 to l.27 mSv of radiation, which "
        "is similar to the dose of a clinical mammogram."),
        ("In the large population of Medicare beneficiaries, the prevalence of persons with multiple chronic conditions "
        "is considerably greater: more than two thirds (68%) have ≥2 chronic conditions, and 14% have ≥6 chronic "
        "conditions."),
        ("Recruitment was limited to patients who had LDL-C ≥70 mg/dL (≥1.8 mmol/L) (or non–HDL-C ≥100 mg/dL (≥2.6 "
        "mmol/L)) on maximal statin ± ezetimibe."),
        ("A follow-up ECG is recommended in specific lesions and in the setting of new or worsening congestion or low "
        "cardiac output syndrome (Table 7)."),
        ("有创血液动力学检查，静息状态下肺毛细血管楔压（PCWP）≥15 mmHg（1 mmHg=0.133 kPa）或左心室舒张末期压力（LVEDP）"
        "≥16 mmHg，或负荷状态下PCWP ≥25 mmHg 可明确诊断HFpEF。"),
    ],
)
def test_a_clean_sentence_is_shown_as_written(sentence: str) -> None:
    assert clean_quote(sentence) == sentence
    assert [s.text for s in quote_sentences(sentence)] == [sentence]


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], excerpt: Callable[..., Path]) -> App:
    service = build(tmp_path_factory.mktemp("clean-quotes") / "data")
    service.workspaces.create("Quotes")
    assert service.documents.ingest("Quotes", excerpt(OMMEN, 22, 22), OMMEN).status == "ready"
    assert service.documents.ingest("Quotes", excerpt(HFPEF, 10, 10), HFPEF).status == "ready"
    return service


def test_the_highlight_finds_a_sentence_parted_at_a_reference(app: App) -> None:
    document = next(d for d in app.documents.list("Quotes") if d.name == OMMEN)
    chunks = app.catalog.get_chunks(app.catalog.document_chunk_ids(document.id)).values()
    chunk = next(c for c in chunks if "surgery.6" in c.text)
    first, second = (s for s in quote_sentences(chunk.text) if "surgery." in s.text or s.text.startswith("Coronary angio"))
    before = app.answers.source.locate(document, chunk, first.text, first.start)
    after = app.answers.source.locate(document, chunk, second.text, second.start)
    assert before and after and len(before) < len(chunk.rects)
    # The seam is mid-line: the first sentence's last line is the second's first.
    assert before[-1].page == after[0].page and abs(before[-1].y0 - after[0].y0) < 2


@pytest.mark.parametrize(
    "question",
    ["Is coronary angiography a requisite component of alcohol septal ablation?", "有液体潴留的HFpEF患者推荐使用什么药物？"],
)
def test_answers_quote_clean_sentences_that_the_page_highlights(app: App, question: str) -> None:
    answer = app.answers.ask("Quotes", question)
    assert not answer.refused and answer.citations
    for citation in answer.citations:
        assert not _DEBRIS.search(citation.quote), citation.quote
        assert not _DEBRIS.search(re.sub(r"\[\d+\]", "", answer.text)), answer.text  # our own [n] markers aside
        assert citation.rects
