"""Bibliography chunks are recognised (search ranks them after body text)."""

from __future__ import annotations

from workspace_app.ingest.references import looks_like_references

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
