"""What is never an entity: stopwords, generic qualifiers, page furniture, citation fragments, organisations,
statistics, units and numbers, in English and Chinese."""

from __future__ import annotations

import re


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


STOPWORDS = _words(
    """a about above after again against all also although among an and any are as at be because been before
    being below between both but by can could did do does doing down during each either et al etc few for from
    further had has have having here how however i if in into is it its itself may might more most much must
    no nor not of off on once only or other our out over own per same should so some such than that the their
    them then there these they this those through thus to too under until up upon very via was we were what when
    where whether which while who whom why will with within without would yet you your vs versus eg ie among
    patients patient individuals persons people adults subjects participants use used using including include
    includes included based related associated compared considered recommended reasonable indicated
    is was shown show shows found reported"""
)

# Words that qualify a concept without changing it; dropped from the front of pattern phrases.
GENERIC_MODIFIERS = _words(
    """severe mild moderate significant symptomatic asymptomatic known suspected new recent prior previous
    clinical advanced associated underlying concomitant existing established documented initial further
    additional current optimal appropriate specific standard routine first second third early late long short
    high low higher lower increased decreased reduced elevated overall potential possible other certain
    various different general common rare major minor total greater lesser same similar likely unlikely
    primary secondary subsequent future ongoing preceding following prolonged persistent frequent recurrent
    treatment therapeutic medical management selected isolated combined combination adjunctive alternative
    conventional traditional usual intensive aggressive conservative invasive noninvasive effective
    ineffective successful unsuccessful relevant important multiple single individual independent all any
    each every this that such these those which whose"""
)

# Phrases made only of these words (after modifiers) are not concepts: "the disease", "clinical trial".
_GENERIC_PHRASE_WORDS = _words(
    """disease disorder syndrome failure therapy intervention procedure surgery test testing score index
    device agent monitoring imaging assessment evaluation management treatment approach strategy program
    trial study studies analysis data evidence group groups outcome outcomes event events effect effects
    benefit benefits risk risks rate rates level levels factor factors care practice guideline guidelines
    recommendation recommendations statement"""
)

_ORGANISATION = re.compile(
    r"\b(association|college|society|institute|committee|foundation|organization|organisation|administration|"
    r"journal|trialists|academy|alliance|agency|network|federation|council|university|hospital|center|centre|"
    r"department|task force|writing group|review|guideline|guidelines|statement|statements|question|questions|"
    r"industry|interval|ratio|odds|hazard|confidence|units?|version|table|figure|supplement|appendix|"
    r"copyright|doi|et al|trial|study|investigators|registry|cohort|survey)\b",
    re.IGNORECASE,
)
_FURNITURE = re.compile(
    r"^(table|figure|fig|section|page|appendix|supplement|online|downloaded|circulation|jacc|journal|vol|"
    r"see|ref|references?|http|www|doi)\b",
    re.IGNORECASE,
)
_NUMBERISH = re.compile(r"^[\d\s.,:;%/()\-+<>=≥≤±×x]*$")
_UNITS = _words("mg g kg mcg μg ml l dl mmol mol mmhg mm cm m h hr min s ms bpm kcal iu u mg/dl mmol/l")

ZH_STOP = _words(
    """的 了 和 与 及 或 在 对 于 为 是 将 被 把 从 以 等 中 其 该 本 此 这 那 各 每 有 无 可 应 需 患者 病人 研究 指南
    共识 推荐 建议 证据 治疗 检查 疾病 相关 其他 上述 合并 多种 主要 常见 部分 一般 一种 这些 目前 临床 并发症 手术
    外科手术 病症 病因 病情 病程 病史 发病 症状 炎症 重症 急症 危重症"""
)
ZH_BAD_PREFIXES = ("相关", "其他", "上述", "合并", "该", "本", "此", "这", "各种", "常见", "主要", "多种", "一些",
                   "部分", "所有", "其", "伴", "伴有", "导致", "引起", "包括", "如", "与", "和", "或", "及", "的", "对",
                   "在", "为", "是", "患", "有", "无", "发生", "出现", "存在", "诊断", "治疗", "预防", "评估", "继发",
                   "减少", "增加", "降低", "升高", "避免", "防止", "控制", "改善", "使用", "应用", "给予", "进行",
                   "置入", "植入", "术后", "术前", "围术期")


def is_junk_phrase(key: str) -> bool:
    """True when a normalised English phrase is not a concept (furniture, organisation, generic, number)."""
    words = key.split()
    if not words or _NUMBERISH.match(key) or key in _UNITS:
        return True
    if _FURNITURE.match(key) or _ORGANISATION.search(key):
        return True
    if all(word in _GENERIC_PHRASE_WORDS or word in GENERIC_MODIFIERS or word in STOPWORDS for word in words):
        return True
    if len(words) == 1 and (len(key) < 3 or key in STOPWORDS):
        return True
    return any(word.isdigit() for word in words)


def is_junk_chinese(term: str) -> bool:
    """True when a Chinese term is a function word, generic, or starts with a qualifier or verb."""
    if len(term) < 2 or term in ZH_STOP or _NUMBERISH.match(term):
        return True
    return term.startswith(ZH_BAD_PREFIXES) or any(ch.isdigit() for ch in term)
