"""The lexicon translator: other-language names of the concepts a text mentions (retrieval's `Translator`)."""

from __future__ import annotations

import pytest

from workspace_app.graph.translation import LexiconTranslator
from workspace_app.retrieval.bilingual import NoTranslator, Translator


@pytest.fixture(scope="module")
def translator() -> LexiconTranslator:
    return LexiconTranslator()


def test_an_english_question_gets_the_chinese_names_of_its_concepts(translator: LexiconTranslator) -> None:
    names = translator.other_language("When IV metoprolol tartrate is used to control the ventricular rate in AF")
    assert "美托洛尔" in names and "心室率" in names
    assert {"心房颤动", "房颤"} <= set(names)  # every Chinese name of atrial fibrillation, via the abbreviation
    assert all(any("\u4e00" <= ch <= "\u9fff" for ch in name) for name in names)


def test_a_chinese_question_gets_the_english_names_and_abbreviations(translator: LexiconTranslator) -> None:
    names = translator.other_language("慢性或阵发性房颤的女性患者服用华法林，INR目标范围是多少？")
    assert names.index("paroxysmal atrial fibrillation") < names.index("warfarin")  # order of mention
    assert not any(any("\u4e00" <= ch <= "\u9fff" for ch in name) for name in names)


def test_abbreviations_and_aliases_come_with_the_name(translator: LexiconTranslator) -> None:
    names = translator.other_language("晕厥患者行静息12导联心电图检查")
    assert names[0] == "syncope"
    assert {"electrocardiogram", "ECG"} <= set(names)


def test_names_are_distinct(translator: LexiconTranslator) -> None:
    names = translator.other_language("Warfarin or warfarin? AF, atrial fibrillation and AF again.")
    assert len(names) == len(set(names))
    assert "华法林" in names


def test_text_without_lexicon_concepts_or_only_patterns_translates_to_nothing(translator: LexiconTranslator) -> None:
    assert translator.other_language("") == []
    assert translator.other_language("What fraction of the population was counted?") == []
    # "…综合征"-style pattern concepts and English head-noun phrases have no entry in the lexicon.
    assert translator.other_language("家庭访视的频率") == []


def test_a_mixed_text_translates_each_part_into_the_other_language(translator: LexiconTranslator) -> None:
    names = translator.other_language("房颤 patients on warfarin")
    assert "atrial fibrillation" in names and "华法林" in names
    assert "房颤" not in names and "warfarin" not in names


def test_names_gives_both_languages_of_each_concept(translator: LexiconTranslator) -> None:
    (warfarin,) = translator.names("华法林")
    assert warfarin.english[0] == "warfarin" and "华法林" in warfarin.chinese


def test_both_implement_the_protocol() -> None:
    seams: list[Translator] = [LexiconTranslator(), NoTranslator()]
    assert seams[1].other_language("warfarin") == []


def test_mentions_are_the_concepts_as_written(translator: LexiconTranslator) -> None:
    assert translator.mentions("屈昔多巴用于神经源性直立性低血压所致的晕厥") == ["屈昔多巴", "直立性低血压", "晕厥"]
    assert translator.mentions("Is droxidopa useful for neurogenic orthostatic hypotension?") == [
        "droxidopa", "orthostatic hypotension",
    ]
    assert NoTranslator().mentions("屈昔多巴") == []


def test_everyday_prevention_terms_cross_languages(translator: LexiconTranslator) -> None:
    # Lifestyle guidelines' vocabulary: salt, lowering blood pressure, strength training.
    assert "sodium" in translator.other_language("减少钠盐摄入")
    assert "lowering blood pressure" in translator.other_language("需要降压的人群")
    assert "muscle strengthening activity" in translator.other_language("女性应多久进行一次肌肉力量训练？")
    assert "力量训练" in translator.other_language("How often should women do strength training?")


def test_health_system_words_cross_languages(translator: LexiconTranslator) -> None:
    """A Chinese question about Medicare beneficiaries with chronic conditions reaches an English paper's words."""
    names = translator.other_language("联邦医疗保险受益人中同时患有慢性病的比例")
    assert {"Medicare", "beneficiary", "chronic condition"} <= set(names)
    assert "共病" in translator.other_language("comorbidity")
