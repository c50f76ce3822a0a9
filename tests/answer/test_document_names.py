"""Which document a part of a question names (a cross-document question searches each part in its own source)."""

from __future__ import annotations

from workspace_app.answer.document_names import named_document, named_documents, without_document_names
from workspace_app.graph.translation import LexiconTranslator

NAMES = {
    "shen": "shen-2017-syncope.pdf", "eckel": "eckel-2013-lifestyle.pdf", "mosca": "mosca-2011-women-cvd.pdf",
    "arnett": "arnett-2014-guideline-strategies.pdf", "zh": "zh-acute-af-ed-2024.pdf",
}


def test_a_part_names_a_guideline_by_its_year_or_topic() -> None:
    assert named_document("What INR range does the 2011 women's prevention guideline set?", NAMES) == "mosca"
    assert named_document("what daily sodium ceiling does the lifestyle guideline set for adults?", NAMES) == "eckel"
    # "guideline" is in a file name too, but names no document in particular.
    assert named_document("Which features of frailty does the syncope guideline list?", NAMES) == "shen"


def test_a_chinese_part_names_a_guideline_through_its_concepts_other_names() -> None:
    translate = LexiconTranslator().other_language
    assert named_document("中国急诊房颤指南列出的房颤主要共病有哪些？", NAMES, translate) == "zh"


def test_no_document_is_named_without_a_reference_to_one_or_when_two_match() -> None:
    assert named_document("What is the INR range for women with atrial fibrillation in 2011?", NAMES) is None
    assert named_document("The 2013 lifestyle guideline and the 2011 women's guideline both give a target.", NAMES) is None
    assert named_document("What does the syncope guideline say?", {"shen": "shen-2017-syncope.pdf"}) is None


def test_a_question_may_name_several_documents() -> None:
    question = "The 2013 lifestyle guideline and the 2011 women's prevention guideline both give a target. What is it?"
    assert sorted(named_documents(question, NAMES)) == ["eckel", "mosca"]
    assert named_documents("What does the syncope guideline say?", NAMES) == ["shen"]
    assert named_documents("What is the INR range for women with atrial fibrillation in 2011?", NAMES) == []


def test_a_source_is_named_by_its_short_form_spelled_out() -> None:
    names = {**NAMES, "stout": "stout-2018-achd.pdf", "ommen": "ommen-2024-hcm.pdf"}
    defined = {"ACHD": "adult congenital heart disease", "HCM": "hypertrophic cardiomyopathy", "AF": "atrial fibrillation"}
    question = "Do the HCM guideline and the adult congenital heart disease guideline both recommend ICDs?"
    assert sorted(named_documents(question, names, abbreviations=defined)) == ["ommen", "stout"]
    assert named_documents(question, names) == ["ommen"]
    # Only in the phrase naming a source: atrial fibrillation asked about names no AF guideline.
    asked = "What does the syncope guideline say about atrial fibrillation?"
    assert named_documents(asked, names, abbreviations=defined) == ["shen"]


def test_what_a_part_asks_of_the_source_it_names() -> None:
    assert without_document_names(
        "and does the 2024 Chinese emergency AF guideline allow a lower range for any older patients?"
    ) == "and does allow a lower range for any older patients?"
    assert without_document_names("中国急诊房颤指南列出的房颤主要共病有哪些？") == "列出的房颤主要共病有哪些？"
    assert without_document_names("Does the lifestyle guideline's evidence review show a fall?") == "Does evidence review show a fall?"
    # A phrase stops at words that do not name a source ("in", "the") and at Chinese particles.
    assert without_document_names("What does the evidence say about statins in the guideline?") == (
        "What does the evidence say about statins in ?"
    )
    assert without_document_names("房颤患者用华法林时指南推荐的INR目标") == "房颤患者用华法林时指南推荐的INR目标"
    assert without_document_names("What INR range is recommended?") == "What INR range is recommended?"


OPENINGS = {
    "shen": "2017 ACC/AHA/HRS Guideline for the Evaluation and Management of Patients With Syncope",
    "eckel": "2013 AHA/ACC Guideline on Lifestyle Management to Reduce Cardiovascular Risk",
    "mosca": "Effectiveness-Based Guidelines for the Prevention of Cardiovascular Disease in Women—2011 Update",
    "arnett": "AHA/ACC/HHS Strategies to Enhance Application of Clinical Practice Guidelines in Patients With "
    "Cardiovascular Disease and Comorbid Conditions",
    "zh": "急性心房颤动中国急诊管理指南（2024）",
}


def test_a_phrase_referring_to_a_source_names_it_by_its_title() -> None:
    # No file name has "HHS": the first page's title does, and no other first page.
    part = "and how does the AHA/ACC/HHS comorbidity paper describe frailty as a problem?"
    assert named_documents(part, NAMES) == []
    assert named_documents(part, NAMES, openings=OPENINGS) == ["arnett"]
    # Title words shared by several sources ("AHA/ACC", "Cardiovascular") name none of them.
    assert named_documents("What does the AHA/ACC cardiovascular guideline say?", NAMES, openings=OPENINGS) == []
    # Only the words of the phrase that refers to a source count, not the question's others.
    assert named_documents("Does the guideline discuss comorbid conditions and HHS programs?", NAMES, openings=OPENINGS) == []


EIGHT = {
    "grundy": "grundy-2018-cholesterol.pdf", "kusumoto": "kusumoto-2018-bradycardia.pdf", "ommen": "ommen-2024-hcm.pdf",
    "stout": "stout-2018-achd.pdf", "tracy": "tracy-2012-device-therapy.pdf", "dapt": "zh-dapt-chd-consensus-2021.pdf",
    "hfpef": "zh-hfpef-consensus-2023.pdf",
}


def test_words_the_question_asks_about_name_no_source() -> None:
    # "the guideline" names none of them; "therapy", "bradycardia" and "cholesterol" are what is asked, and each
    # is the topic of one file name: a source named here would be the only one searched.
    translate = LexiconTranslator().other_language
    for question in (
        "What therapy does the guideline recommend for atrial fibrillation?",
        "What does the guideline say about bradycardia in patients with hypertrophic cardiomyopathy?",
        "How should cholesterol be managed in adults with congenital heart disease according to the guideline?",
        "指南对冠心病患者的双联抗血小板治疗时长有何推荐？",
    ):
        assert named_documents(question, EIGHT, translate) == [], question


def test_the_source_sharing_most_words_with_the_phrase_is_named_and_a_tie_names_none() -> None:
    translate = LexiconTranslator().other_language
    # A Chinese title runs back past its particles to the punctuation before it.
    assert named_documents("冠心病双联抗血小板治疗中国专家共识推荐什么？", EIGHT, translate) == ["dapt"]
    assert named_documents("《射血分数保留的心力衰竭中国专家共识》推荐什么？", EIGHT, translate) == ["hfpef"]
    # "ACHD" and "CHD" both come from the phrase spelled out, one word each: the phrase names neither.
    defined = {"ACHD": "adult congenital heart disease", "CHD": "congenital heart disease"}
    assert named_documents("What does the adult congenital heart disease guideline say?", EIGHT, abbreviations=defined) == []
    assert named_documents("What does the 2018 ACHD guideline say?", EIGHT, abbreviations=defined) == ["stout"]


def test_a_year_alone_names_no_source_whose_name_lacks_the_phrases_topic() -> None:
    # The workspace's only 2021 source is the Chinese DAPT consensus: "the 2021 ESC heart failure guideline" is
    # another document (not in the workspace), "the 2021 consensus" is this one.
    assert named_documents("What does the 2021 ESC heart failure guideline recommend?", EIGHT) == []
    assert named_documents("What does the 2021 consensus recommend for DAPT?", EIGHT) == ["dapt"]
    assert named_documents("What INR range does the 2011 women's prevention guideline set?", NAMES) == ["mosca"]
