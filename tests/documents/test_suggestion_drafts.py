"""Drafting suggested questions from a guide: what a reader would ask about what a source says (its
recommendations, its key topics), never a section's name, and summary sentences that stand alone."""

from __future__ import annotations

import numpy as np

from workspace_app.documents.guide import recommendation_sentence
from workspace_app.documents.suggestions import candidate_questions, topic_question
from workspace_app.documents.summary import lexrank, mmr, summary_candidates
from workspace_app.domain.clinical_suggestions import recommendation_question
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.guides import GuideRecommendation, SourceGuide, SuggestedQuestion


def test_a_topic_becomes_a_question_in_the_sources_language() -> None:
    assert topic_question("orthostatic hypotension", False) == "What do the sources say about orthostatic hypotension?"
    assert topic_question("房颤", True) == "关于房颤，资料中怎么说？"
    document = Document("d", "ws", "syncope.pdf", "sha", 1, 1, 1, "ready", "ready", 1.0, None, "2026-11-27")
    guide = SourceGuide(
        "d", "Syncope is a symptom.", (GuideRecommendation(
            "For women with atrial fibrillation, warfarin should be used.", "I", "A", 3, "AF", "d-00001"),), (),
        topics=("syncope", "tilt-table testing"),
    )
    questions = candidate_questions(document, guide, lambda text, section: recommendation_question(text, section))
    assert [(q.question, q.origin) for q in questions] == [
        ("What is recommended for women with atrial fibrillation?", "recommendation"),
        ("What do the sources say about syncope?", "topic"),
        ("What do the sources say about tilt-table testing?", "topic"),
    ]


def test_a_recommendation_becomes_a_question_about_its_population_or_subject() -> None:
    assert recommendation_question(
        "For women with chronic or paroxysmal atrial fibrillation, warfarin should be used to maintain the INR."
    ) == "What is recommended for women with chronic or paroxysmal atrial fibrillation?"
    assert recommendation_question(
        "Aspirin therapy (75–325 mg/d) should be used in women with CHD unless contraindicated (Class I; Level A)."
    ) == "When is aspirin therapy recommended?", "a population after the advice is not cut out of the sentence"
    assert recommendation_question(
        "Aspirin 75–325 mg should be used in women with chronic or paroxysmal atrial fibrillation with a "
        "contraindication to warfarin."
    ) == "When is aspirin recommended?", "nor is its dose"
    assert recommendation_question(
        "Pharmacotherapy is indicated when blood pressure is ≥140/90 mm Hg.", "Blood pressure: pharmacotherapy"
    ) == "When is pharmacotherapy recommended for blood pressure?", "a bare subject gets its section's topic"
    assert recommendation_question("Acute water ingestion is recommended for temporary relief.") == (
        "When is acute water ingestion recommended?"
    )
    assert recommendation_question("非瓣膜性房颤的血栓栓塞风险评估首选CHA2DS2-VASc-60 评分 Ⅰ A") == "非瓣膜性房颤的血栓栓塞风险评估首选什么？"
    assert recommendation_question("ACS 行PCI 的房颤患者，若出血风险高于血栓风险，建议三联方案≤1 周；") == "对于ACS 行PCI 的房颤患者，推荐什么？"
    assert recommendation_question("See Online Data Supplement 1.") is None


def test_summary_candidates_are_whole_sentences_without_labels_or_markers() -> None:
    text = ("with White individuals had a younger mean age at diagnosis than the others in the registry. "
            "A detailed history and physical examination should be performed in patients with syncope (58–66). "
            "Table 3 Diagnostic tests for syncope in adults and their yield. "
            "Smith AB, Jones C, et al. Circulation. 2017;136:e60–122.\n"
            "推荐强度：GPS证据概述：共识制定工作组进行了定性研究，共纳入文献11篇。"
            "急性房颤是急诊最常见问题之一，包括两方面含义[2-3]。"
            "HRS Expert Consensus Statement on Cardiac Sarcoidosis Referenced studies support it. "
            "Thus, the focus on 10-year risk may underestimate the lifetime risk of most women. "
            "此外，还应评估出血风险与卒中风险。")
    found = [c.text for c in summary_candidates(Chunk("c0", "d", 0, text, "Introduction", 2, 2, 60))]
    assert found == [
        "A detailed history and physical examination should be performed in patients with syncope.",
        "急性房颤是急诊最常见问题之一，包括两方面含义。",
    ]


def test_lexrank_puts_the_sentence_most_like_the_others_first_and_mmr_skips_a_repeat() -> None:
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.8, 0.6], [0.0, 1.0]], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    rank = lexrank(vectors)
    assert abs(rank.sum() - 1) < 1e-6 and int(rank.argmax()) in (1, 2)
    assert mmr(rank, vectors, 2) == [1, 0]  # the copy of sentence 1 is not taken again
    assert mmr(rank[:3], vectors[:3], 3) == [1, 0]  # and nothing is left to take


def test_a_recommendation_sentence_is_shown_without_its_reference_markers() -> None:
    advice = "A detailed history and physical examination should be performed in patients with syncope (58–66)."
    assert recommendation_sentence(advice) == advice.replace(" (58–66)", "")


def test_only_the_sources_that_fill_the_list_are_needed() -> None:
    """Questions are taken one per source in turn: once `limit` sources have a question, a later source's come
    after the first `limit` and its part need not be checked; an unknown part stops the walk (it is checked next)."""
    from workspace_app.documents.suggestions import _needed

    sources = [Document(f"d{i}", "ws", f"{i}.pdf", "sha", 1, 1, 1, "ready", "ready", 1.0, None, "2026-11-27")
               for i in range(5)]
    question = [SuggestedQuestion("What do the sources say about syncope?", "d", "d.pdf", "topic")]
    parts = {"d0": question, "d1": [], "d2": question, "d3": question}
    assert [d.id for d in _needed(sources, parts, 2)] == ["d0", "d1", "d2"]  # d1 has none: d2 fills the list
    assert [d.id for d in _needed(sources, parts, 4)] == ["d0", "d1", "d2", "d3", "d4"]  # d4's is unknown yet
    assert [d.id for d in _needed(sources[1:], parts, 2)] == ["d1", "d2", "d3"]  # d0 removed: d3 takes its place


def test_key_topics_are_central_entities_named_as_the_document_writes_them() -> None:
    from workspace_app.documents.summary import key_topics
    from workspace_app.models.graph import Entity

    chunks = [Chunk("c0", "d", 0, "房颤患者应评估卒中风险，房颤 的 HFpEF 患者同样。", "房颤", 1, 1, 20),
              Chunk("c1", "d", 1, "急性房颤的心室率控制。 HFpEF 患者的治疗。", "治疗", 2, 2, 20)]
    af = Entity("af", "ws", "atrial fibrillation", "disease", ("AF", "房颤", "心房颤动"))
    hfpef = Entity("hfpef", "ws", "heart failure with preserved ejection fraction", "disease", ("HFpEF", "射血分数保留的心力衰竭"))
    stroke = Entity("stroke", "ws", "stroke", "disease", ("卒中",))
    centrality = {"c0": 0.7, "c1": 0.3}
    topics = key_topics(chunks, centrality, [(stroke, {"c0": 1}), (af, {"c0": 2, "c1": 1}), (hfpef, {"c0": 1, "c1": 1})])
    # Most central first; the Chinese alias the text writes; HFpEF as written when no Chinese name is.
    assert topics == ("房颤", "HFpEF", "卒中")
    english = [Chunk("c0", "d", 0, "Patients with atrial fibrillation (AF) and AF burden.", "AF", 1, 1, 10)]
    assert key_topics(english, {"c0": 1.0}, [(af, {"c0": 2})]) == ("atrial fibrillation",)
    assert key_topics(english, {"c0": 0.0}, [(af, {"c0": 2})]) == ()  # no central chunk speaks of it
