"""Whether the quoted evidence answers what the question asks for, or only something next to it.

A near-miss question shares most of its words with passages the sources do hold and differs in the one thing
that matters: a drug, score, population or condition the sources never name, or a dose or number they never
give. One similarity score cannot tell these apart, so answerability is decided from the question's needs
(`question_needs`), and `unmet` names what a quoted sentence leaves out:

- its *specific terms*: technical English words (outside everyday vocabulary, `vocabulary.py`), abbreviations,
  and rare Chinese words. One the workspace never uses, in either language (the translator's names), is a
  refusal whatever is quoted. The others must mostly (`named_share` of their weight) be named by the quoted
  sentence, its neighbours or its section title, directly, through the translator or through an
  abbreviation the workspace defines ("vasovagal syncope (VVS)").
- the *kind of answer* it wants: a dose wants an amount with a unit, a duration a number with a time unit
  ("12 mo", "每日"), a number any number.
Thresholds and word lists are in `AnswerabilityRules` and the patterns below; `python -m bench.answers`
measures them on the tuning and held-back dev rows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from workspace_app.answer.vocabulary import is_technical
from workspace_app.domain import QuestionCues
from workspace_app.text.analyzer import analyze
from workspace_app.text.cjk import has_cjk, is_mostly_cjk
from workspace_app.text.source_markers import without_source_markers
from workspace_app.text.terms import (
    content_terms,
    evidence_terms,
    in_loose,
    is_cjk_term,
    is_interrogative,
    loose,
    normalize,
    stem,
)

_DURATION_QUESTION = re.compile(
    r"\b(?:how long|how soon|how often|how frequently|for how many|within how many|what (?:time|interval|duration))\b"
    r"|多长|多久|多少天|几天|多少分钟|几分钟|多少小时|几周|间隔",
    re.IGNORECASE,
)
_NUMBER_QUESTION = re.compile(
    r"\b(?:how many|how much|at what|what (?:percent(?:age)?|proportion|share|rate|range|level|target|threshold|value|"
    r"cut-?off|limit|angle|ceiling|amount|number|score|ratio))\b"
    r"|多少|比例|阈值|目标值|几",
    re.IGNORECASE,
)
# A Chinese numeral counts with what it counts ("三周", "两次", "一半"): alone it is a word's piece ("若一时", "一般").
_NUMBER = re.compile(
    r"\d|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|twice|half|once)\b"
    r"|[一二三四五六七八九十两半]+(?:[个次周天日月年岁倍种项级度分秒成半]|小时)"
)
_TIME = re.compile(
    r"\d\s*(?:-\s*\d+\s*)?(?:s|sec|seconds?|min|minutes?|h|hr|hours?|days?|d|weeks?|wk|months?|mo|years?|y)\b"
    r"|\b(?:daily|weekly|monthly|annually|yearly|every|once|twice|hourly|lifelong|indefinitely)\b"
    r"|\d\s*(?:秒|分钟|小时|天|日|周|个月|月|年)|每[日天周月年]|终身|长期",
    re.IGNORECASE,
)


# Bounded by anything but Latin letters and digits: a Chinese character is a word character to `\b`.
_ACRONYM = re.compile(r"(?<![A-Za-z0-9])[A-Z][A-Za-z0-9]*[A-Z0-9][A-Za-z0-9]*(?![A-Za-z0-9])")
# How Chinese questions ask beyond their interrogatives (`text.terms.is_interrogative`), which the sources never say.
_ZH_ASKING = frozenset({"分别"})


@dataclass(frozen=True)
class Needs:
    """What a question asks for: the terms that pick out its subject, those the sources never use, the answer kind."""

    specific: tuple[str, ...]
    absent: tuple[str, ...]
    unknown: tuple[str, ...]
    wants: str | None
    weights: Mapping[str, float] = field(default_factory=dict)
    bounds: Mapping[str, set[str]] = field(default_factory=dict)
    # A word of a concept named in several words ("atrial" of "atrial fibrillation") is named in the other
    # language by the concept's names there ("房颤"): its own translation is usually nothing.
    phrase_forms: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    chinese: bool = False  # the question is asked in Chinese
    populations: tuple[str, ...] = ()  # special populations it is about ("children"): the evidence must be too

    def describe(self) -> str:
        """A short account for logs and calibration."""
        return (
            f"specific={list(self.specific)} absent={list(self.absent)} unknown={list(self.unknown)} "
            f"wants={self.wants} populations={list(self.populations)}"
        )


def named_populations(text: str, cues: QuestionCues) -> tuple[str, ...]:
    """The special populations (the domain pack's) a text names."""
    return tuple(name for name, pattern in cues.populations.items() if pattern.search(text))


@dataclass(frozen=True)
class AnswerabilityRules:
    """When a term picks out the subject (calibrated with `python -m bench.answers` on the tuning rows), and the
    domain pack's question cues (special populations, amount questions and the units that answer them)."""

    zh_min_chars: int = 3
    zh_specific_idf: float = 4.0
    named_share: float = 0.5
    named_min_terms: int = 2
    cues: QuestionCues = field(default_factory=QuestionCues)


def question_needs(
    question: str, frequency: Callable[[str], int], idf: Mapping[str, float], rules: AnswerabilityRules,
    translate: Callable[[str], Sequence[str]] | None = None, concepts: Sequence[str] = (),
) -> Needs:
    """The question's specific terms, those of them the workspace never uses, and the kind of answer wanted.

    Specific: technical English words (`vocabulary.is_technical`), acronyms, and Chinese words of at least
    `zh_min_chars` characters that are rare in the workspace. A specific term counts as absent only when the
    workspace names neither it nor a translation of it (an acronym: when the workspace never uses it).
    `concepts` are Chinese names of known concepts in the question, kept whole where the word segmenter cuts
    them ("屈昔多巴" read as 屈昔 / 多巴, two words too short to be specific); `idf` must weigh them too.
    """
    terms = with_concepts(content_terms(question, drop_question_words=True), concepts)
    acronyms = {loose(a) for a in _ACRONYM.findall(question)}
    specific: list[str] = []
    absent: list[str] = []
    unknown: list[str] = []
    for key, word in terms.items():
        if key.isdigit() or word in _ZH_ASKING:
            continue
        if is_cjk_term(word):
            picks = len(word) >= rules.zh_min_chars and idf.get(key, 0.0) >= rules.zh_specific_idf
        else:
            picks = is_technical(word) or loose(word) in acronyms
        if not picks:
            continue
        forms = _forms(word, translate)
        if frequency(key) > 0:
            specific.append(key)
        elif not forms:
            # An acronym is written alike in Chinese and English sources: one no source uses is absent in both.
            (absent if loose(word) in acronyms else unknown).append(word)
        elif not any(frequency(form) > 0 for form in forms):
            absent.append(word)
        else:
            specific.append(key)  # named only in the other language ("STEMI" as "ST段抬高型心肌梗死")
    weights = {key: idf.get(key, 1.0) for key in [*specific, *unknown]}
    return Needs(
        tuple(specific), tuple(absent), tuple(unknown), wanted(question, rules.cues), weights, bounds(question),
        _phrase_forms(specific, concepts, translate), is_mostly_cjk(question), named_populations(question, rules.cues),
    )


def _phrase_forms(
    keys: Sequence[str], concepts: Sequence[str], translate: Callable[[str], Sequence[str]] | None
) -> dict[str, tuple[str, ...]]:
    """Per English term, the other-language names of the several-word concepts it is a word of."""
    found: dict[str, tuple[str, ...]] = {}
    for name in concepts:
        words = evidence_terms(name)
        if is_cjk_term(name) or len(words) < 2:
            continue
        names = tuple(_forms(name, translate))
        for key in keys:
            if not is_cjk_term(key) and key in words:
                found[key] = found.get(key, ()) + names
    return found


def with_concepts(terms: dict[str, str], concepts: Sequence[str]) -> dict[str, str]:
    """The question's terms with each Chinese concept name in place of the pieces the segmenter cut it into."""
    merged = dict(terms)
    for name in concepts:
        if not is_cjk_term(name) or name in merged:
            continue
        pieces = [key for key, word in merged.items() if is_cjk_term(word) and word in name]
        if len(pieces) > 1:
            for key in pieces:
                del merged[key]
            merged[name] = name
    return merged


def unmet(
    needs: Needs, quoted: Sequence[str], context: str, rules: AnswerabilityRules,
    translate: Callable[[str], Sequence[str]] | None = None,
) -> list[str]:
    """What the question needs that the quoted sentences (with `context`, their surroundings) do not give."""
    text = "\n".join(quoted)
    missing = [f"absent:{term}" for term in needs.absent]
    around = text + "\n" + context
    words, flat = evidence_terms(around), loose(around)
    named = {}
    # Never named in its own language, and no translation known: absent unless the answer quotes the other one.
    # A Chinese one may be the segmenter's cut of words the sources do use ("抽样调查" beside "抽样研究", "成年人"
    # beside "成人"): it weighs in the named share below, named when a two-character piece of it is quoted.
    for term in needs.unknown:
        if is_cjk_term(term) != has_cjk(text):
            continue
        if is_cjk_term(term):
            named[term] = any(term[i : i + 2] in flat for i in range(len(term) - 1))
        else:
            missing.append(f"absent:{term}")
    for term in needs.specific:
        forms = _forms(term, translate) + list(needs.phrase_forms.get(term, ()))
        if not forms and is_cjk_term(term) != has_cjk(text):
            continue  # quoted in the other language, with no known translation: cannot be judged either way
        named[term] = _named(term, words, flat) or any(_named_form(f, words, flat) for f in forms)
    weight = sum(needs.weights.get(t, 1.0) for t in named) or 1.0
    share = sum(needs.weights.get(t, 1.0) for t, ok in named.items() if ok) / weight
    # Quoted in the other language, few terms can be judged at all: those that can must be named.
    least = 1 if has_cjk(text) != needs.chinese else rules.named_min_terms
    if len(named) >= least and share < rules.named_share:
        missing += [f"specific:{t}" for t, ok in named.items() if not ok]
    elif len(named) < least:
        # Alone, an unknown word decides by itself, as the absent one it is unless a piece of it is quoted.
        missing += [f"absent:{t}" for t in needs.unknown if t in named and not named[t]]
    if needs.wants and not gives(needs.wants, text, rules.cues):
        missing.append(f"wants:{needs.wants}")
    found = named_populations(around, rules.cues)
    missing += [f"population:{name}" for name in needs.populations if name not in found]
    return missing


def question_acronyms(question: str) -> tuple[str, ...]:
    """The acronyms a question names ("COPD", "HFpEF"), loosely keyed."""
    return tuple(dict.fromkeys(loose(a) for a in _ACRONYM.findall(question)))


def names_acronyms(
    acronyms: Sequence[str], sentence: str, translate: Callable[[str], Sequence[str]] | None = None
) -> int:
    """How many of the question's acronyms a sentence names itself, directly or by a translation ("COPD" as
    "慢性阻塞性肺疾病"): the sentence naming the condition asked about should lead, not its neighbour's."""
    words, flat = evidence_terms(sentence), loose(sentence)
    return sum(
        _named(a, words, flat) or any(_named_form(f, words, flat) for f in _forms(a, translate)) for a in acronyms
    )


def contrary(needs: Needs, sentence: str) -> bool:
    """Whether a sentence bounds a number of the question the other way ("LVEF ≥40%" for a question on "<40%"):
    it is about another population and must not be quoted at all, not even after the lead."""
    stated = bounds(sentence)
    return any(number in stated and not (sides & stated[number]) for number, sides in needs.bounds.items())


# Where one question may end and another begin: after a question mark or a semicolon (always), and at ", and" or a
# Chinese comma (when the clause after it asks on its own, below).
_PART_BREAK = re.compile(r"(?<=[?？])\s*(?=\S)|[;；]\s*|(,\s+and\s+|，)", re.IGNORECASE)
# How an English clause opens when it is a question of its own: an interrogative or an auxiliary verb, after at most
# one preposition ("…, and at what level does …").
_ASKING = frozenset("what which how when where who whom whose why".split())
_OPENS_A_QUESTION = _ASKING | frozenset("is are was were do does did can could should would will may must has have".split())
_PREPOSITIONS = frozenset("at in on for from by to with under after before during since until within among over".split())
_MIN_PART_TERMS = 3
# Words that point back ("how does it differ", "这条推荐是几类"): a part or a chat turn using one, or naming fewer than
# three things, goes on from what came before it. Chinese ones are read as jieba cuts the words, not as characters
# anywhere: 应该 ("should") and 其他 ("other") point nowhere.
_BACK_REFERENCE = re.compile(r"\b(?:it|its|this|that|these|those|they|them|he|she|him|her)\b", re.IGNORECASE)
_ZH_BACK_WORDS = frozenset({"它", "它们", "其", "此", "这", "那", "上述", "前述"})
_ZH_BACK_OPENINGS = "这那该此"  # a two-character word opening with one: 这些, 这种, 该药, 此类, 那么


def points_back(text: str) -> bool:
    """Whether a question uses a word pointing back to something asked before ("it", "these", "该药", "这些")."""
    if _BACK_REFERENCE.search(text):
        return True
    words = [word for word in analyze(normalize(text)) if is_cjk_term(word)]
    return any(word in _ZH_BACK_WORDS or (len(word) == 2 and word[0] in _ZH_BACK_OPENINGS) for word in words)


def leans_on_before(text: str) -> bool:
    """Whether a question (or a part of one) goes on from what was asked before it: it points back, or it names
    fewer than three things of its own ("and for how long?")."""
    return points_back(text) or len(content_terms(text, drop_question_words=True)) < _MIN_PART_TERMS


def names_a_subject(text: str) -> bool:
    """Whether a question names what it is about: a technical word, an acronym or a Chinese word of two or more
    characters, beyond how it asks ("does it allow a lower range for older patients?" names none)."""
    if _ACRONYM.search(text):
        return True
    terms = content_terms(text, drop_question_words=True).values()
    return any(is_technical(term) or (is_cjk_term(term) and len(term) >= 2 and term not in _ZH_ASKING) for term in terms)


def question_parts(question: str) -> list[str]:
    """The separate questions asked in one ("What is X, and how does the other guideline Y?"); one when one.

    A part that goes on from the one before it (`leans_on_before`: "and for how long?") stays with it.
    """
    pieces = _clauses(question)
    parts: list[str] = []
    for piece in pieces:
        if parts and leans_on_before(piece):
            parts[-1] = f"{parts[-1]} {piece}"
        else:
            parts.append(piece)
    if len(parts) > 1 and len(content_terms(parts[0], drop_question_words=True)) < _MIN_PART_TERMS:
        parts[:2] = [f"{parts[0]} {parts[1]}"]
    return parts


def _clauses(question: str) -> list[str]:
    """The question cut where a question may end: at every question mark and semicolon; at ", and" when what follows
    opens as a question ("…, and what …", "…, and at what age …"); at a Chinese comma when the clauses on both sides
    each ask ("X是什么，Y是多少？"; not "患者年龄大于75岁，目标是多少？")."""
    pieces = _PART_BREAK.split(question)
    clauses: list[str] = []
    joiner: str | None = None  # the soft break before the next piece (None: a hard one, or the start)
    for index, piece in enumerate(pieces):
        if index % 2:  # the captured soft break, or None after a hard one
            joiner = piece
            continue
        piece = (piece or "").strip(" ,")
        if not piece:
            continue
        if clauses and joiner is not None and not _asks_apart(clauses[-1], piece, joiner):
            clauses[-1] += joiner + piece  # the break as written
        else:
            clauses.append((joiner or "").lstrip(" ,，") + piece if clauses else piece)  # "and what …"
        joiner = None
    return clauses


def _asks_apart(before: str, after: str, joiner: str) -> bool:
    """Whether the clause after a soft break is a question of its own."""
    if joiner == "，":
        return _asks_in_chinese(before) and _asks_in_chinese(after)
    words = after.lower().split()[:2]
    return bool(words) and (
        words[0] in _OPENS_A_QUESTION or (words[0] in _PREPOSITIONS and len(words) > 1 and words[1] in _ASKING)
    )


def _asks_in_chinese(text: str) -> bool:
    return any(is_interrogative(word) for word in analyze(normalize(text)))


_DEFINITION_QUESTION = re.compile(
    r"\b(?:how (?:is|are|do(?:es)?) [\w\s-]{0,60}? defined|how (?:is|are) [\w\s-]{0,60}? define|definition of|"
    r"what (?:is|are) meant by|what does [\w\s-]{0,40} mean|define|counts? as|qualif(?:y|ies) as|constitutes?)\b"
    r"|定义|是指|什么是|指的是",
    re.IGNORECASE,
)
_DEFINES = re.compile(
    r"\b(?:is|are) defined as\b|\bdefined as\b|\brefers? to\b|\bis termed\b|\bmeans\b|^[^.:]{2,60}:\s"
    r"|^[^.,;]{3,80}\b(?:is|are) (?:present|diagnosed|considered|confirmed) (?:when|if)\b"
    r"|定义为|是指|指[^，。]{0,30}的|称为|^[^，。：]{2,30}[：:]",
    re.IGNORECASE,
)


# A bound the question puts on a number ("below 40%", "低于40%", "≥65 years") and the one a sentence states.
_BELOW = r"(?:below|under|less than|lower than|fewer than|<|＜|≤|低于|不足|小于|少于|未满)"
_ABOVE = r"(?:above|over|more than|greater than|at least|>|＞|≥|不低于|不少于|大于|高于|超过|至少)"
_NUMBER_BOUND = re.compile(rf"({_BELOW}|{_ABOVE})\s*(\d+(?:\.\d+)?)", re.IGNORECASE)
_TRAILING_BOUND = re.compile(
    r"(\d+(?:\.\d+)?)\s*%?\s*(?:(?:[a-z]+\s+){0,2}or (more|older|higher|above|less|younger|lower|below)\b"
    r"|[\u4e00-\u9fff]{0,2}?(以上|以下))",
    re.IGNORECASE,
)


def bounds(text: str) -> dict[str, set[str]]:
    """Number -> the sides ("<", ">") the text bounds it from ("LVEF <40%" -> {"40": {"<"}})."""
    found: dict[str, set[str]] = {}
    for word, number in _NUMBER_BOUND.findall(text):
        found.setdefault(number, set()).add("<" if re.fullmatch(_BELOW, word, re.IGNORECASE) else ">")
    for number, english, chinese in _TRAILING_BOUND.findall(text):
        side = ">" if english.lower() in ("more", "older", "higher", "above") or chinese == "以上" else "<"
        found.setdefault(number, set()).add(side)
    return found


def asks_definition(question: str) -> bool:
    """Whether the question asks what something is or how it is defined."""
    return bool(_DEFINITION_QUESTION.search(question))


def defines(sentence: str) -> bool:
    """Whether a sentence reads as a definition ("X is defined as", "X：指…的", a "Term: ..." table row)."""
    return bool(_DEFINES.search(sentence))


def asks_grading(question: str, cues: QuestionCues) -> bool:
    """Whether the question asks how strong a recommendation is (class, level, grade), by the domain pack's cue."""
    return cues.grading is not None and bool(cues.grading.search(question))


def wanted(question: str, cues: QuestionCues) -> str | None:
    """The kind of number a question asks for: "dose" (by the pack's cues), "duration", "number", or None."""
    if cues.amount_question is not None and cues.amount_question.search(question):
        return "dose"
    if _DURATION_QUESTION.search(question):
        return "duration"
    if _NUMBER_QUESTION.search(question):
        return "number"
    return None


def gives(wants: str, text: str, cues: QuestionCues) -> bool:
    """Whether a text gives the kind of answer wanted: an amount with one of the pack's units, a time, a number."""
    text = without_source_markers(text)  # "[76]" is a reference, not a number the sentence gives
    if wants == "dose":
        return cues.amount is not None and bool(cues.amount.search(text))
    if wants == "duration":
        return bool(_TIME.search(text))
    return bool(_NUMBER.search(text))


def _named(term: str, words: frozenset[str], flat: str) -> bool:
    if is_cjk_term(term) or len(term) >= 6:
        return term in flat or term in words
    return term in words


def _named_form(form: str, words: frozenset[str], flat: str) -> bool:
    key = loose(form)
    if not key:
        return False
    if is_cjk_term(key) or len(key) >= 6:
        return in_loose(key, flat)
    return key in words or stem(key) in words


def _forms(term: str, translate: Callable[[str], Sequence[str]] | None) -> list[str]:
    return list(translate(term)) if translate is not None else []


