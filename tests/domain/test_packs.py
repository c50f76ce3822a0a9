"""Domain packs: the registry, the setting that chooses one, what the clinical pack holds and that the generic pack
holds none of it."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from workspace_app.config import Settings
from workspace_app.domain import PACKS, DomainPack, NoGrades, pack
from workspace_app.domain.clinical import CLINICAL, LEXICON
from workspace_app.domain.generic import GENERIC
from workspace_app.graph.lexicon import load_lexicon

GRADED = "Beta blockers are recommended in patients with HCM and symptoms (Class I; Level of Evidence B)."
CLINICAL_WORDS = ("recommend", "patient", "fibrillation", "推荐", "患者", "房颤")


def test_the_registry_names_each_pack_and_refuses_an_unknown_one() -> None:
    assert set(PACKS) == {"clinical", "generic"}
    assert pack("clinical") is CLINICAL and pack("generic") is GENERIC
    assert all(isinstance(p, DomainPack) and p.name == name for name, p in PACKS.items())
    with pytest.raises(ValueError, match="clinical, generic"):
        pack("cardiology")


def test_the_setting_chooses_the_pack_clinical_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings(_env_file=None).domain.pack == "clinical"  # type: ignore[call-arg]
    monkeypatch.setenv("WORKSPACE_DOMAIN__PACK", "generic")
    assert pack(Settings(_env_file=None).domain.pack) is GENERIC  # type: ignore[call-arg]
    monkeypatch.setenv("WORKSPACE_DOMAIN__PACK", "legal")
    with pytest.raises(ValidationError):
        Settings(_env_file=None)  # type: ignore[call-arg]


def test_the_clinical_pack_holds_the_lexicon_grades_cues_and_patterns() -> None:
    assert CLINICAL.lexicon == LEXICON and LEXICON.is_file()
    lexicon = load_lexicon(CLINICAL.lexicon)
    assert "atrial fibrillation" in lexicon.forms and "房颤" in lexicon.chinese
    grades = CLINICAL.grades
    found = grades.find_recommendation(GRADED)
    assert (found.recommendation_class, found.evidence_level) == ("I", "B")
    assert grades.table_cells and grades.states_grading("推荐强度：强  证据质量：B")
    assert grades.describe_class("IIa") == "Class IIa"
    cues = CLINICAL.cues
    assert set(cues.populations) == {"children", "pregnancy"}
    assert cues.populations["children"].search("the apixaban dose for children")
    assert cues.amount_question is not None and cues.amount_question.search("What is the loading dose of amiodarone?")
    assert cues.amount is not None and cues.amount.search("150 mg over 10 min")
    assert CLINICAL.recommendation_question(
        "For women with atrial fibrillation, warfarin should be used.", ""
    ) == "What is recommended for women with atrial fibrillation?"
    assert any("fibrillation" in q for q in CLINICAL.warm_questions)
    concepts = CLINICAL.concepts
    assert "rosuvastatin".endswith(concepts.drug_suffixes) and concepts.head_types["failure"] == "disease"
    assert concepts.of_the_field("left ventricular outflow") and not concepts.of_the_field("sorting hub")


def test_the_generic_pack_holds_none_of_it() -> None:
    assert GENERIC.lexicon is None
    empty = load_lexicon(GENERIC.lexicon)
    assert not (empty.forms or empty.abbreviations or empty.chinese or empty.by_key)
    grades = GENERIC.grades
    assert isinstance(grades, NoGrades) and not grades.table_cells
    found = grades.find_recommendation(GRADED)
    assert found.recommendation_class is None and found.evidence_level is None
    assert grades.grading_in(GRADED, 0, GRADED).recommendation_class is None
    assert not grades.states_grading("推荐强度：强  证据质量：B")
    assert not GENERIC.cues.populations and GENERIC.cues.amount_question is None and GENERIC.cues.amount is None
    assert GENERIC.recommendation_question("For women with atrial fibrillation, warfarin should be used.", "") is None
    concepts = GENERIC.concepts
    assert not concepts.drug_suffixes and not concepts.head_types and concepts.stems is None
    assert concepts.of_the_field("sorting hub")
    assert GENERIC.warm_questions and {"en", "zh"} <= {"zh" if any("\u4e00" <= c <= "\u9fff" for c in q) else "en"
                                                        for q in GENERIC.warm_questions}
    assert not [q for q in GENERIC.warm_questions if any(w in q.lower() for w in CLINICAL_WORDS)]
