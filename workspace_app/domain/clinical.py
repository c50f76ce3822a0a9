"""The clinical pack: what clinical guidelines need beyond the neutral engine.

- the cardiology concept lexicon (cardiology.tsv beside this module) the graph and the translator match, and the
  graph's patterns beside it (drug-name endings, the head nouns of diseases, tests and procedures, the word stems
  of clinical terms);
- the Class of Recommendation / Level of Evidence grammar (`workspace_app.text.grades`) and its table cells;
- question cues: special populations ("children", "pregnancy") and dose questions, answered by an amount with
  one of the clinical units;
- suggestion patterns (`clinical_suggestions.py`) and an atrial-fibrillation warm-up question in each language.
"""

from __future__ import annotations

import re
from pathlib import Path

from workspace_app.domain.clinical_suggestions import recommendation_question
from workspace_app.domain.pack import ConceptPatterns, DomainPack, QuestionCues
from workspace_app.text import grades
from workspace_app.text.grades import Recommendation

LEXICON = Path(__file__).with_name("cardiology.tsv")


class CorLoeGrammar:
    """Classes of Recommendation and Levels of Evidence as guidelines print them (`workspace_app.text.grades`)."""

    table_cells = True

    def find_recommendation(self, text: str) -> Recommendation:
        """The first class/level pair stated in the text, or what can be found of one."""
        return grades.find_recommendation(text)

    def grading_in(self, text: str, start: int, quote: str) -> Recommendation:
        """The grading stated at the quote: in it, or after it up to the end of its recommendation."""
        return grades.grading_in(text, start, quote)

    def states_grading(self, text: str) -> bool:
        """Whether the text is a grading line."""
        return grades.states_grading(text)

    def describe_class(self, value: str) -> str:
        """'I' -> 'Class I', 'Strong' -> 'Strong recommendation'."""
        return grades.describe_class(value)


# Populations whose care differs from that of the adults most guidelines are written for: a question about one
# ("the apixaban dose for children") is not answered by a sentence that does not name it (the adult dose), however
# close its other words are. Everyday words, so they never make specific terms on their own.
POPULATIONS = {
    "children": re.compile(
        r"\b(?:child(?:ren|hood)?|pa?ediatric\w*|infants?|infancy|neonat\w*|newborns?|adolescen\w*|teenagers?|"
        r"youths?|boys|girls|juvenile)\b|儿童|小儿|儿科|幼儿|婴儿|婴幼儿|新生儿|青少年|未成年",
        re.IGNORECASE,
    ),
    "pregnancy": re.compile(
        r"\b(?:pregnan\w*|gestation\w*|antenatal|prenatal|peripartum|postpartum|obstetric\w*|pre-?eclampsia|"
        r"lactat\w*|breast-?feeding)\b|妊娠|孕|产妇|产后|围产|哺乳",
        re.IGNORECASE,
    ),
}
DOSE_QUESTION = re.compile(
    r"\b(?:dose|doses|dosage|dosing|bolus|regimens?|infusion rate|loading dose|how many (?:mg|milligrams|grams|units))\b"
    r"|剂量|用量|给药量|如何给药|怎样给药|给药方案|用药方案|用法|多大量",
    re.IGNORECASE,
)
# A question asking how strongly something is recommended: the class of recommendation, the level of evidence.
GRADING_QUESTION = re.compile(
    r"\b(?:class(?:es)? of recommendation|level of evidence|levels of evidence|COR|LOE|how strong(?:ly)?|strength of"
    r"|graded?|grading|what class|which class|evidence level|quality of (?:the )?evidence)\b"
    r"|推荐级别|推荐类别|推荐等级|推荐强度|证据级别|证据水平|证据等级|几类推荐|级别",
    re.IGNORECASE,
)
# An amount in one of the units doses are given in.
AMOUNT = re.compile(
    r"\d\s*(?:mg|µg|μg|mcg|g|gram|grams|kg|iu|units?|u|mmol|meq|ml|mL|l|mg/kg|µg/kg|μg/kg)\b|\d\s*(?:毫克|克|单位|毫升)",
    re.IGNORECASE,
)

# The graph's patterns where the lexicon has no entry: drug names by their endings, phrases typed by their head noun,
# and the stems that make a frequent noun phrase a clinical term.
DRUG_SUFFIXES = (
    "olol", "alol", "ilol", "pril", "sartan", "statin", "parin", "xaban", "gatran", "dipine", "gliflozin", "glutide",
    "grel", "arone", "afil", "zosin", "semide", "thiazide", "tidine", "prazole", "umab", "ximab", "teplase",
)
NOT_DRUGS = frozenset({"cholesterol", "ezetimibe", "parin", "heparin", "chemical", "pressure"})
HEADS = {
    "disease": (
        "syndrome", "disease", "failure", "fibrillation", "flutter", "infarction", "stenosis", "regurgitation",
        "hypertension", "cardiomyopathy", "tachycardia", "bradycardia", "block", "arrhythmia", "insufficiency",
        "dysfunction", "thrombosis", "embolism", "hypertrophy", "obstruction", "anomaly", "defect", "aneurysm",
        "dissection", "disorder", "ischemia", "hypotension", "syncope", "stroke", "deficiency", "apnea",
    ),
    "test": (
        "test", "testing", "imaging", "echocardiography", "echocardiogram", "mri", "ecg", "score", "monitoring",
        "angiography", "scan", "electrocardiogram", "ultrasound", "biomarker", "gradient", "index",
    ),
    "procedure": (
        "therapy", "implantation", "ablation", "intervention", "surgery", "pci", "repair", "replacement",
        "transplantation", "catheterization", "closure", "occlusion", "pacing", "cardioversion", "myectomy",
        "revascularization", "rehabilitation", "procedure", "operation",
    ),
    "drug class": ("inhibitor", "blocker", "antagonist", "agonist", "anticoagulant", "statin"),
    "device": ("pacemaker", "defibrillator", "stent", "device", "monitor", "recorder"),
}

# Word stems that mark a term as clinical when neither the lexicon nor a head-noun pattern types it.
CLINICAL_STEMS = re.compile(
    r"(cardi|vascul|arter|ven(ous|a\b)|vein|thromb|lipid|lipo|glyc|gluc|renal|kidney|hepat|pulmon|myocard|atri|"
    r"ventric|valv|coronar|aort|mitral|tricusp|sinus|nod(e|al)|rhythm|pacing|ischem|infarct|stroke|embol|hemorrh|"
    r"bleed|pressure|tension|diabet|insulin|obes|cholesterol|statin|inhibit|block|antagon|agonist|syncop|apnea|"
    r"sarcom|amyloid|fibrill|tachy|brady|conduct|ejection|septal|outflow|gradient|therap|surg|ablat|implant|"
    r"stent|graft|diure|anticoag|platelet|heart|cardiac|blood|plasma|serum|oxygen|exercise|smok|nicotin|diet|"
    r"fatty|creatin|kinase|virus|immun|weight|shunt|fistula|baffle|conduit|lesion|stenos|regurg|perfusion)",
    re.IGNORECASE,
)
CONCEPTS = ConceptPatterns(drug_suffixes=DRUG_SUFFIXES, not_drugs=NOT_DRUGS, heads=HEADS, stems=CLINICAL_STEMS)

CLINICAL = DomainPack(
    name="clinical",
    lexicon=LEXICON,
    concepts=CONCEPTS,
    grades=CorLoeGrammar(),
    cues=QuestionCues(populations=POPULATIONS, amount_question=DOSE_QUESTION, amount=AMOUNT, grading=GRADING_QUESTION),
    recommendation_question=recommendation_question,
    warm_questions=("What is recommended for patients with atrial fibrillation?", "房颤患者推荐什么治疗？"),
)
