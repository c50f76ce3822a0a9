"""Bibliography and table-of-contents chunks are recognised (search ranks them after body text)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from workspace_app.ingest.chunking import chunk_paragraphs
from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.ingest.references import chunk_kind, looks_like_references

REFERENCE_LIST = (
    "471. Mathias CJ, Senard JM, Braune S, et al. L-threo-dihydroxyphenylserine (L-threo-DOPS; droxidopa) in the "
    "management of neurogenic orthostatic hypotension. Clin Auton Res. 2001;11:235-42.\n"
    "472. Hauser RA, Hewitt LA, Isaacson S. Droxidopa in patients with neurogenic orthostatic hypotension "
    "associated with Parkinson's disease (NOH306A). J Parkinsons Dis. 2014;4:57-65."
)
CHINESE_REFERENCES = "[12] 张澍, 杨艳敏. 心房颤动诊断和治疗中国指南[J]. 中华心血管病杂志, 2023, 51(6): 572-618.\n[13] 黄从新. 心房颤动[J]. 中华心律失常学杂志, 2022, 26(1): 15-88."
BODY = (
    "Droxidopa can be beneficial in patients with syncope due to neurogenic orthostatic hypotension (OH) "
    "(463-466). In a randomized trial, droxidopa improved symptoms of neurogenic OH due to Parkinson disease, "
    "pure autonomic failure and multiple system atrophy, as shown by Kaufmann et al in 2014."
)


def test_reference_lists_are_recognised() -> None:
    assert looks_like_references(REFERENCE_LIST)
    assert looks_like_references(CHINESE_REFERENCES)


def test_body_text_with_citations_is_not_a_reference_list() -> None:
    assert not looks_like_references(BODY)


CONTENTS = (
    "2.1. Definitions: Terms and Classification . . . . . . . . . e45\n2.2. Epidemiology and Demographics . . . . . . e45\n"
    "2.3. Initial Evaluation of Patients With Syncope . . . . . . . e47\n2.3.1. History and Physical Examination:\n"
    "Recommendation . . . . . . . . . . . . . . . . . . . . e48"
)


def test_contents_entries_are_their_own_kind() -> None:
    assert chunk_kind(CONTENTS) == "contents"
    assert chunk_kind(BODY) == "body"
    assert chunk_kind(REFERENCE_LIST) == "references"


def test_a_table_of_contents_opens_no_sections(excerpt: Callable[[str, int, int], Path]) -> None:
    """shen-2017's contents (pp. 2-3) list every section; read as headings they gave the first pages of the
    body section paths like "2.1. Definitions ... . . . e45"."""
    path = excerpt("shen-2017-syncope.pdf", 1, 4)
    parsed = parse_pdf(path, path.name)
    assert not [p.text for p in parsed.paragraphs if p.is_heading and p.page_start in (2, 3) and ". . ." in p.text]
    drafts = chunk_paragraphs(parsed.paragraphs, lambda texts: [len(t.split()) * 2 for t in texts], 200, 32)
    kinds = {draft.page_start: chunk_kind(draft.text) for draft in drafts if "e45" in draft.text}
    assert kinds and set(kinds.values()) == {"contents"}
    assert not any(". . ." in draft.section for draft in drafts)
