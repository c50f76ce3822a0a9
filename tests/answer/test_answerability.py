"""What a question asks for: its specific terms, those the sources never use, the kind of answer, its parts."""

from __future__ import annotations

from collections.abc import Sequence

from workspace_app.answer.answerability import (
    AnswerabilityRules,
    asks_definition,
    asks_grading,
    defines,
    names_a_subject,
    names_acronyms,
    points_back,
    question_acronyms,
    question_needs,
    question_parts,
    unmet,
    with_concepts,
)
from workspace_app.answer.vocabulary import everyday_words, is_technical
from workspace_app.domain.clinical import CLINICAL
from workspace_app.text.terms import content_terms

RULES = AnswerabilityRules(cues=CLINICAL.cues)
# Passages per word in an imagined workspace on syncope (the keyword index's document frequencies).
WORKSPACE = {"midodrine": 12, "syncope": 300, "vasovagal": 40, "recurrent": 60, "米多君": 0}


def frequency(question: str) -> object:
    terms = content_terms(question, drop_question_words=True)

    def used(key: str) -> int:
        return WORKSPACE.get(terms.get(key, key), 0)

    return used


def no_translation(term: str) -> Sequence[str]:
    return []


def test_technical_words_are_told_from_everyday_ones() -> None:
    assert everyday_words(), "the bundled tokenizer vocabulary is installed with the default embedder"
    for word in ("ivabradine", "myectomy", "stanols", "tenecteplase", "midodrine"):
        assert is_technical(word), word
    for word in ("roughly", "length", "resuming", "vaccination", "window", "truck"):
        assert not is_technical(word), word


def test_a_technical_term_the_workspace_never_uses_is_absent() -> None:
    question = "What ivabradine dose is recommended for recurrent vasovagal syncope?"
    needs = question_needs(question, frequency(question), {}, RULES, no_translation)
    assert "ivabradine" in needs.unknown and needs.wants == "dose"
    # Quoting English evidence, an English term the workspace never names is missing.
    assert "absent:ivabradine" in unmet(needs, ["Midodrine is reasonable in recurrent VVS."], "", RULES, no_translation)


def test_a_term_named_only_in_the_other_language_is_not_absent_when_the_answer_quotes_that_language() -> None:
    question = "What midodrine regimen is used?"
    needs = question_needs(question, lambda key: 0, {}, RULES, no_translation)
    assert "midodrine" in needs.unknown
    assert not [m for m in unmet(needs, ["米多君可用于反复发作的血管迷走性晕厥。"], "", RULES, no_translation) if m.startswith("absent")]


def test_an_acronym_no_source_uses_is_absent_whatever_the_language_quoted() -> None:
    # Chinese and English guidelines both write "STEMI": one no source uses cannot be quoted in either language.
    question = "STEMI患者接受直接PCI时，门球时间应控制在多少分钟以内？"
    needs = question_needs(question, lambda key: 0 if key == "stemi" else 5, {}, RULES, no_translation)
    assert needs.absent == ("stemi",) and "pci" in needs.specific
    assert "absent:stemi" in unmet(needs, ["血流动力学不稳定、发作时间＜48 h 的急性房颤，可直接电复律；"], "", RULES, no_translation)


def test_a_translation_the_workspace_uses_makes_the_term_present() -> None:
    question = "Is midodrine useful?"
    needs = question_needs(question, lambda key: 0, {}, RULES, lambda term: ["米多君"] if term == "midodrine" else [])
    assert needs.absent == ("midodrine",) and needs.unknown == ()  # known in translation; the workspace uses neither
    needs = question_needs(question, lambda key: 0 if key != "米多君" else 3, {}, RULES,
                           lambda term: ["米多君"] if term == "midodrine" else [])
    assert needs.absent == () and needs.unknown == ()


def test_the_wanted_kind_of_answer_must_be_in_the_quote() -> None:
    question = "What midodrine dose should I prescribe for recurrent vasovagal syncope?"
    needs = question_needs(question, frequency(question), {"midodrine": 4.0, "vasovagal": 3.0}, RULES, no_translation)
    assert needs.wants == "dose"
    assert "wants:dose" in unmet(needs, ["Midodrine is reasonable in patients with recurrent vasovagal syncope."], "", RULES)
    assert unmet(needs, ["Midodrine 5 mg three times daily helps in recurrent vasovagal syncope."], "", RULES) == []


def test_durations_and_numbers() -> None:
    how_long = question_needs("How long should driving be avoided after syncope?", lambda k: 1, {}, RULES)
    assert how_long.wants == "duration"
    assert unmet(how_long, ["Patients should not drive for 1 mo after the event."], "", RULES) == []
    assert unmet(how_long, ["Patients should not drive after the event."], "", RULES) == ["wants:duration"]
    share = question_needs("What percentage of patients faint?", lambda k: 1, {}, RULES)
    assert share.wants == "number" and unmet(share, ["About 40% of people faint at least once."], "", RULES) == []


def test_specific_terms_must_mostly_be_named_by_the_quote_or_its_surroundings() -> None:
    question = "Is midodrine reasonable for recurrent vasovagal syncope?"
    needs = question_needs(question, frequency(question), {}, RULES, no_translation)
    assert set(needs.specific) >= {"midodrine", "vasovagal"}
    assert unmet(needs, ["Midodrine is reasonable in patients with recurrent VVS."], "vasovagal syncope", RULES) == []
    lacking = unmet(needs, ["Fludrocortisone might be reasonable in orthostatic hypotension."], "", RULES)
    assert any(m.startswith("specific:") for m in lacking)


def test_grading_questions() -> None:
    assert asks_grading("What is the class of recommendation and level of evidence for tilt testing?", CLINICAL.cues)
    assert asks_grading("How strongly is telemetry recommended?", CLINICAL.cues)
    assert asks_grading("心电图检查的推荐级别是什么？", CLINICAL.cues)
    assert not asks_grading("What tilt angle gives the best yield?", CLINICAL.cues)


def test_question_parts() -> None:
    assert question_parts("What tilt angle and test duration give the best yield?") == [
        "What tilt angle and test duration give the best yield?"
    ]
    two = question_parts(
        "What warfarin INR range does the women's guideline set for atrial fibrillation, and does the Chinese "
        "emergency AF guideline allow a lower range for older patients?"
    )
    assert len(two) == 2 and two[1].startswith("and does")
    # A part pointing back, or only asking for the grading, stays with the part it extends.
    assert len(question_parts("How is delayed OH defined, and how does it differ from classic OH?")) == 1
    assert len(question_parts("射血分数不低于40%的急性房颤，控制心室率首选什么药？这条推荐是几类、什么证据级别？")) == 1
    assert len(question_parts("华法林起始剂量是多少？开始时INR多久监测一次，INR稳定后监测间隔可以延长到多久？")) == 3


def test_two_questions_joined_in_one_sentence_are_two_parts() -> None:
    """", and" or a Chinese comma joins two questions when the clause after it asks on its own (opening with an
    interrogative or an auxiliary, after at most one preposition) and, in Chinese, the clause before asks too."""
    two = question_parts(
        "How much weekly physical activity does the prevention guideline recommend, and at what LDL-C level does "
        "the cholesterol guideline recommend a high-intensity statin?"
    )
    assert len(two) == 2 and two[1].startswith("and at what LDL-C level")
    why = "What non-structural proteins are coded by rotavirus, and why do infants receive the oral vaccine early?"
    assert len(question_parts(why)) == 2
    assert len(question_parts("上海东方明珠新媒体股份有限公司成立于哪一年，半线天竺鲷的模式产地在哪里？")) == 2
    # A clause that does not ask, or a Chinese clause before one that asks, stays in the question it belongs to.
    assert len(question_parts("What is the dose in adults, and in children who weigh less than 20 kg?")) == 1
    assert len(question_parts("患者年龄大于75岁，华法林的INR目标值是多少？")) == 1
    assert len(question_parts("Which statins, and which doses?")) == 1  # the second names nothing of its own


def test_chinese_words_point_back_as_words_not_as_characters() -> None:
    """这些, 该药, 它 point back; 应该 ("should") and 其他 ("other") hold such a character and point nowhere, so a
    second question using them is a question of its own."""
    assert points_back("这些药物有哪些副作用？") and points_back("该药的剂量是多少？") and points_back("它的作用是什么？")
    assert not points_back("急性心衰患者应该使用哪些利尿剂？") and not points_back("其他抗凝药物有哪些禁忌证？")
    assert len(question_parts("房颤患者如何选择抗凝药物？急性心衰患者应该使用哪些利尿剂？")) == 2


def test_a_sentence_on_the_other_side_of_the_questions_threshold_does_not_answer_it() -> None:
    from workspace_app.answer.answerability import bounds, contrary

    assert bounds("LVEF低于40%的急性房颤") == {"40": {"<"}} and bounds("LVEF ≥40% 的急性房颤") == {"40": {">"}}
    assert bounds("women 65 years or older") == {"65": {">"}} and bounds("80岁以上人群") == {"80": {">"}}
    question = "Can digitalis control the rate in acute AF with LVEF below 40%?"
    needs = question_needs(question, lambda key: 1, {}, RULES)
    assert contrary(needs, "In acute AF with LVEF ≥40%, beta blockers are the first choice.")
    assert not contrary(needs, "In acute AF with LVEF <40%, digitalis can control the rate.")
    assert not contrary(needs, "Digitalis can control the rate in acute AF.")
    # A sentence covering both sides of the threshold still answers ("≥65 y ... and may be reasonable for <65 y").
    older = question_needs("What aspirin regimen for healthy women aged 65 or older?", lambda key: 1, {}, RULES)
    assert not contrary(older, "Aspirin can be useful in women ≥65 y of age and may be reasonable for women <65 y.")
    assert contrary(older, "Routine aspirin in healthy women <65 y of age is not recommended.")


def test_a_concept_name_the_segmenter_cuts_stays_one_specific_term() -> None:
    # jieba reads "屈昔多巴" (droxidopa) as 屈昔 / 多巴: two words too short to be specific on their own.
    question = "屈昔多巴用于神经源性直立性低血压所致的晕厥，推荐级别是什么？"
    pieces = content_terms(question, drop_question_words=True)
    assert "屈昔多巴" not in pieces and {"屈昔", "多巴"} <= set(pieces)
    terms = with_concepts(pieces, ["屈昔多巴", "直立性低血压", "晕厥"])
    assert "屈昔多巴" in terms and "屈昔" not in terms and "多巴" not in terms

    def used(key: str) -> int:
        return 0 if key == "屈昔多巴" else 5

    def droxidopa(term: str) -> Sequence[str]:
        return ["droxidopa"] if term == "屈昔多巴" else []

    idf = {key: 6.0 for key in terms}
    needs = question_needs(question, used, idf, RULES, droxidopa, ["屈昔多巴", "直立性低血压", "晕厥"])
    assert "屈昔多巴" in needs.specific  # used only in English, through its translation
    other = "洋地黄类药物主要通过延缓房室结传导来降低房颤的心室率。"
    assert "specific:屈昔多巴" in unmet(needs, [other], "", RULES, droxidopa)


def test_words_of_a_concept_are_named_by_its_other_language_name() -> None:
    # "atrial" alone has only the workspace's abbreviation "AF" as another form; "atrial fibrillation" has 房颤.
    question = "In a patient with COPD and atrial fibrillation, which drug is first choice for rate control?"
    names = {"atrial fibrillation": ["心房颤动", "房颤"], "copd": ["慢阻肺"], "atrial": ["AF"], "fibrillation": ["AF"]}

    def translate(term: str) -> Sequence[str]:
        return names.get(term.lower(), [])

    terms = content_terms(question, drop_question_words=True)
    idf = {key: 6.0 if key == "atrial" else 4.0 for key in terms}
    needs = question_needs(question, lambda key: 3, idf, RULES, translate, ["COPD", "atrial fibrillation"])
    assert {"atrial", "copd"} <= set(needs.specific)
    row = "COPD 患者的房颤心室率控制首选NDCC Ⅰ C"
    assert unmet(needs, [row], "", RULES, translate) == []
    without = question_needs(question, lambda key: 3, idf, RULES, translate)
    assert any(m.startswith("specific:") for m in unmet(without, [row], "", RULES, translate))


def test_an_unknown_chinese_word_weighs_in_the_share_and_matches_by_its_pieces() -> None:
    # "抽样调查" / "成年人": the sources write "抽样研究" / "成人"; "流感疫苗" (flu vaccine) is nowhere.
    needs = question_needs("成年人房颤患病率是多少？抽样调查结果如何？", lambda key: 0 if key in ("抽样调查", "成年人") else 4,
                           {"患病率": 3.0, "抽样调查": 8.0, "成年人": 8.0, "房颤": 2.0}, RULES, no_translation)
    assert set(needs.unknown) == {"抽样调查", "成年人"}
    answer = "分层多阶段抽样研究发现，≥18 岁居民的房颤患病率为1.6%。"
    assert unmet(needs, [answer], "", RULES, no_translation) == []
    vaccine = question_needs("心力衰竭患者是否应每年接种流感疫苗？", lambda key: 0 if key == "流感疫苗" else 9,
                             {"心力衰竭": 3.0, "流感疫苗": 8.0}, RULES, no_translation)
    assert vaccine.unknown == ("流感疫苗",)
    assert unmet(vaccine, ["部分患者可能表现心力衰竭等并发症的症状。"], "", RULES, no_translation) == ["absent:流感疫苗"]
    specific = question_needs("心力衰竭患者是否应每年接种流感疫苗？", lambda key: 0 if key == "流感疫苗" else 9,
                              {"心力衰竭": 5.0, "流感疫苗": 8.0}, RULES, no_translation)
    assert specific.specific == ("心力衰竭",)
    assert "specific:流感疫苗" in unmet(specific, ["部分患者可能表现心力衰竭等并发症的症状。"], "", RULES, no_translation)


def test_a_quote_in_the_other_language_must_name_what_can_be_judged() -> None:
    # An English question on ajmaline: a Chinese dose row naming none of its judgeable terms does not answer it.
    question = "What intravenous ajmaline dose unmasks a Brugada pattern in a patient with unexplained syncope?"

    def names(term: str) -> Sequence[str]:
        return ["晕厥"] if term == "syncope" else []

    needs = question_needs(question, lambda key: 0 if key == "ajmaline" else 3, {}, RULES, names)
    row = "酒石酸美托洛尔 2.5~5 mg，5 min 后可重复给药，最大剂量20 mg"
    assert any(m.startswith("specific:") for m in unmet(needs, [row], "", RULES, names))
    assert unmet(needs, ["晕厥患者静脉给药 2.5 mg"], "", RULES, names) == []


def test_a_translated_name_matches_its_plural_in_the_quote() -> None:
    # 肌肉力量训练 -> "muscle-strengthening activity"; the guideline writes "muscle-strengthening activities".
    question = "女性应以什么频率进行肌肉力量训练？"
    names = {"肌肉力量训练": ["resistance training", "muscle-strengthening activity"]}

    def translate(term: str) -> Sequence[str]:
        return names.get(term, [])

    terms = with_concepts(content_terms(question, drop_question_words=True), ["肌肉力量训练"])
    idf = {key: 6.0 for key in terms}
    needs = question_needs(question, lambda key: 3, idf, RULES, translate, ["肌肉力量训练"])
    assert "肌肉力量训练" in needs.specific
    quote = "Women should be advised to engage in muscle-strengthening activities on ≥2 d/wk (Class I; Level of Evidence B)."
    assert unmet(needs, [quote], "", RULES, translate) == []
    assert unmet(needs, ["Women should be advised to walk daily."], "", RULES, translate)


def test_a_question_about_a_special_population_needs_evidence_about_it() -> None:
    """The adult dose does not answer a question about children, in either language; naming the group does."""
    question = "What dose of midodrine is recommended for children with recurrent vasovagal syncope?"
    needs = question_needs(question, frequency(question), {}, RULES, no_translation)
    assert needs.populations == ("children",)
    adults = ["Midodrine 5 mg three times daily is reasonable in recurrent VVS."]
    assert "population:children" in unmet(needs, adults, "", RULES, no_translation)
    paediatric = ["In pediatric patients, midodrine 2.5 mg daily may be considered for recurrent VVS."]
    assert not [m for m in unmet(needs, paediatric, "", RULES, no_translation) if m.startswith("population")]
    assert not [m for m in unmet(needs, adults, "Syncope in adolescents", RULES, no_translation) if m.startswith("population")]
    zh = question_needs("妊娠期高血压应首选哪种药物？", lambda key: 1, {}, RULES, no_translation)
    assert zh.populations == ("pregnancy",)
    assert "population:pregnancy" in unmet(zh, ["高血压患者首选ACEI。"], "", RULES, no_translation)
    assert not [m for m in unmet(zh, ["For hypertension in pregnancy, labetalol is first-line."], "", RULES, no_translation)
                if m.startswith("population")]
    assert question_needs("What is recommended for syncope?", frequency("syncope"), {}, RULES).populations == ()


def test_the_acronyms_a_sentence_names_itself_or_by_a_translation() -> None:
    """Of two sentences that answer, the one naming the condition the question names by its acronym leads."""
    acronyms = question_acronyms("In a patient with COPD and AF, which drug class is first choice for rate control?")
    assert acronyms == ("copd", "af")

    def translate(term: str) -> Sequence[str]:
        return {"copd": ["慢性阻塞性肺疾病"], "af": ["房颤"]}.get(term, [])

    assert names_acronyms(acronyms, "COPD 患者的房颤心室率控制首选NDCC Ⅰ C", translate) == 2
    assert names_acronyms(acronyms, "房颤伴快速心室率且症状明显的患者，首选静脉给药控制心室率 Ⅰ B", translate) == 1
    assert names_acronyms(acronyms, "合并慢性阻塞性肺疾病的房颤患者首选非二氢吡啶类钙拮抗剂。", translate) == 2
    assert question_acronyms("What is recommended for syncope?") == ()


def test_a_part_that_leaves_its_subject_to_the_part_before_names_none() -> None:
    assert not names_a_subject("and does it allow a lower range for any older patients?")
    assert names_a_subject("and what daily sodium ceiling applies to adults who need BP lowering?")  # BP
    assert names_a_subject("Which features of frailty are listed for older adults?")
    assert names_a_subject("列出的房颤主要共病有哪些？")


def test_a_reference_marker_or_a_word_piece_is_no_number() -> None:
    """"…可能更长的患者[76]。" answered "how many joules": its only figures were the source's reference marker and
    the 一 of 若一时 ("for the moment")."""
    joules = question_needs("How many joules should the first shock deliver?", lambda k: 1, {}, RULES)
    assert joules.wants == "number"
    assert unmet(joules, ["若一时不能明确病因，应紧急心脏复律，特别是对于房颤发作持续时间可能更长的患者[76]。"], "", RULES) == ["wants:number"]
    assert unmet(joules, ["推荐150 J～200 J 双相波作为初始电击能量[91]。"], "", RULES) == []
    times = question_needs("地高辛每天服用几次？", lambda k: 1, {}, RULES)
    assert times.wants == "number" and unmet(times, ["地高辛每日服用两次。"], "", RULES) == []


def test_a_dosing_regimen_asked_in_chinese_wants_a_dose() -> None:
    assert question_needs("胺碘酮静脉用于控制心室率时，给药方案是怎样的？", lambda k: 1, {}, RULES).wants == "dose"


def test_definition_questions_and_defining_sentences() -> None:
    for question in (
        "How is delayed orthostatic hypotension defined?",
        "During carotid sinus massage, what length of pause counts as carotid sinus hypersensitivity?",
        "What constitutes multimorbidity?",
        "什么是急性房颤？",
    ):
        assert asks_definition(question), question
    assert not asks_definition("What dose of midodrine is used?")
    for sentence in (
        "Carotid sinus hypersensitivity is present when a pause ≥3 s occurs upon stimulation of the carotid sinus.",
        "Delayed OH is defined as a sustained reduction of systolic BP.",
        "急性房颤：指房颤首次发作或阵发性房颤发作的患者。",
    ):
        assert defines(sentence), sentence
    assert not defines("It is diagnosed by the reproduction of clinical syncope during carotid sinus massage.")
    assert not defines("The drug is present in breast milk, and when given with food its effect is greater.")
