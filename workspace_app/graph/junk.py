"""What is never an entity: stopwords, generic qualifiers, proper names (organisations, trials), units and numbers,
in English and Chinese."""

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
    each every this that such these those which whose repeat particular key value service many highly less
    longer average substantial minimum regular serial maximal maximally index pharmacological pharmacologic
    nonpharmacological nonpharmacologic preventive preventative diagnostic operative elective prophylactic"""
)

# Verbs that run into a head noun ("perform surgery", "warrant intervention"): a phrase never starts there.
VERBS = _words(
    """perform performs require requires warrant warrants justify guide guides target targets promote provide
    take takes initiate evaluate develop develops except unless despite prevent prevents determine discontinue
    interrupt indicate indicates request requests estimate select introduce continue consider recommend avoid
    reduce increase improve achieve treat manage assess undergo undergone receive add start stop maintain
    allow allows enable suggest suggests need needs make makes help support include involve involves than
    forestall uncover exclude establish escalate alleviate alleviates represent represents prohibit precede
    track slow given sole true frank level type onset lifelong lifetime earlier numerous uncommon complex
    immediate robust proven available careful iii another several whose"""
)
# Words ending in -ing that are nouns, not verbs, in front of a head noun ("pacing lead", "screening test").
NOUNS_IN_ING = _words("pacing imaging screening bleeding recording training counseling monitoring testing")

# Phrases made only of these words (after modifiers) are not concepts: "the disease", "clinical trial".
_GENERIC_PHRASE_WORDS = _words(
    """disease disorder syndrome failure therapy intervention procedure surgery test testing score index
    device agent monitoring imaging assessment evaluation management treatment approach strategy program
    trial study studies analysis data evidence group groups outcome outcomes event events effect effects
    benefit benefits risk risks rate rates level levels factor factors care practice guideline guidelines
    recommendation recommendations statement"""
)

_NUMBERISH = re.compile(r"^[\d\s.,:;%/()\-+<>=≥≤±×x]*$")
_UNITS = _words("mg g kg mcg μg ml l dl mmol mol mmhg mm cm m h hr min s ms bpm kcal iu u mg/dl mmol/l")

ZH_STOP = _words(
    """的 了 和 与 及 或 在 对 于 为 是 将 被 把 从 以 等 中 其 该 本 此 这 那 各 每 有 无 可 应 需 患者 病人 研究 指南
    共识 推荐 建议 证据 治疗 检查 疾病 相关 其他 上述 合并 多种 主要 常见 部分 一般 一种 这些 目前 临床 并发症 手术
    外科手术 病症 病因 病情 病程 病史 发病 症状 炎症 重症 急症 危重症"""
)
# Words a Chinese term never runs across: where a term written before "（English）" starts.
ZH_CUT = (ZH_STOP - {"的"}) | _words(
    """针对 对于 关于 采用 使用 包括 以及 通过 根据 由于 属于 作为 称为 定义为 即 均 也 都 仅 已 所 则 并 而 但 如果
    若 因此 其中 显示 提示 表明 发现 认为 见 例如 比如 合并 伴 伴有 导致 引起 增加 降低 减少 评估 诊断 治疗 预防"""
)
ZH_BAD_PREFIXES = ("相关", "其他", "上述", "合并", "该", "本", "此", "这", "各种", "常见", "主要", "多种", "一些",
                   "部分", "所有", "其", "伴", "伴有", "导致", "引起", "包括", "如", "与", "和", "或", "及", "的", "对",
                   "在", "为", "是", "患", "有", "无", "发生", "出现", "存在", "诊断", "治疗", "预防", "评估", "继发",
                   "减少", "增加", "降低", "升高", "避免", "防止", "控制", "改善", "使用", "应用", "给予", "进行",
                   "置入", "植入", "术后", "术前", "围术期")


# Heads that make a frequent noun phrase too vague to be a concept ("cardiovascular condition", "cardiac cause").
VAGUE_HEADS = _words(
    """condition event cause etiology issue finding factor outcome effect benefit approach strategy option
    status decision feature aspect change difference role value need use consideration concern context setting
    estimate estimator measure measurement increase decrease reduction guideline population"""
)


def is_proper_name(text: str) -> bool:
    """True when a phrase as written capitalises every content word ("American Heart Association", "Canadian
    Trial of Physiologic Pacing"): the name of an organisation, a trial or a document, not a concept."""
    content = [word for word in text.replace("-", " ").split() if word[:1].isalpha() and word.lower() not in STOPWORDS]
    return len(content) >= 2 and all(word[:1].isupper() for word in content)


def is_junk_phrase(key: str) -> bool:
    """True when a normalised English phrase is not a concept (generic words only, a unit or a number)."""
    words = key.split()
    if not words or _NUMBERISH.match(key) or key in _UNITS:
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
