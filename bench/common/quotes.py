"""Quote quality of answers: one small detector per defect the answer benchmark counts (issue 14, deliverable 4).

A quote is a sentence an answer cites (`Citation.quote`); the answer text is what the user reads, with our
`[n]` markers. Detectors are heuristics tuned to the guideline corpus (ACC/AHA journals, Chinese guidelines);
each is a pure function of a string, pinned by tests/bench/test_quotes.py with positive and negative examples.

- `is_fragment`: not a complete sentence, list item or table row (starts mid-sentence, ends mid-clause, or
  leaves a bracket open);
- `is_reference_entry`: a bibliography entry (author list, "et al." with a year, journal year;volume:pages,
  doi, PMID, URL, Chinese "[J]");
- `is_figure_or_table_title`: a figure / table caption ("Figure 3.", "Table 2 ...", "... TABLE 10", "表8 ...");
- `is_abbreviation_legend`: the abbreviation key under a table or figure ("CVD indicates cardiovascular disease;
  DASH, ...");
- `source_reference_markers`: the source's own reference markers left in the answer text ("(S4.5-33)", "(76)",
  "(380,468–471)", "［6‑7］", "[12,13]", superscripts), not counting our trailing `[n]` markers;
- `dropped_glyphs`: control characters (U+0000–U+001F other than newline and tab), U+FFFD and the visible
  marker of an unrecoverable glyph (`GLYPH_MARKER`);
- `suspected_dropped_symbols`: traces a silently dropped symbol leaves ("( 1%/y" for "(<1%/y", "-Blockers" for
  "β-Blockers"); a heuristic, reported apart from `dropped_glyphs`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from workspace_app.ingest.glyphs import MARKER

# The visible marker the parser puts where a symbol-font glyph could not be recovered (issue 14, deliverable 1).
GLYPH_MARKER = MARKER  # the parser's mark of a glyph it could not read back

# Words a complete English sentence, list item or table row does not end with.
_DANGLING = frozenset(
    "and or but nor the a an of to in on at by for with from as than that which who whom whose is are was were be "
    "been has have had into onto per via versus vs including such between among if when while whereas because "
    "although its their his her our".split()
)
# Brackets that must pair up; an ASCII and a full-width one pair too ("（…)" is common in Chinese PDFs).
_BRACKETS = (("(（", ")）"), ("[［【", "]］】"), ("{", "}"))
# "1) ...", "a) ..." at the start or after ";" / ":" open no parenthesis ("(both Parts A and B) during" does).
_ENUMERATOR = re.compile(r"(?:^|(?<=[;；:：]))\s*(?:\d{1,2}|[a-z]|[ivx]{1,4})[)）](?=\s)")
_CONTINUATION_START = tuple("，、；：。）」』,;:)")
# A list item may end with ";" / "；" and a lead-in with ":": neither is a fragment. These endings are.
_DANGLING_END = tuple("，、（和与及或,(-–/‑")


def is_fragment(quote: str) -> bool:
    """A quote that is not a complete sentence, list item or table row."""
    text = quote.strip()
    if not text:
        return False
    return _starts_mid_sentence(text) or _ends_mid_clause(text) or _unbalanced_brackets(text)


def _starts_mid_sentence(text: str) -> bool:
    if text.startswith(_CONTINUATION_START):
        return True
    first = re.match(r"[A-Za-z][\w'’\-]*", text)
    if not first or not ("a" <= text[0] <= "z"):
        return False  # starts with a capital, a digit, a symbol, a Greek letter or a CJK character
    word = first.group(0)
    # Lower-case abbreviations start sentences too: hsCRP, eGFR, apoB, e.g., i.e., n-3, mRNA.
    return not (any(c.isupper() for c in word) or text.startswith(("e.g.", "i.e.", "n-3", "n-6", "vs.")))


def _ends_mid_clause(text: str) -> bool:
    if text.endswith(_DANGLING_END):
        return True
    last = re.search(r"([A-Za-z]+)$", text)
    # A lone capital A ends a level of evidence ("LOE A", a Chinese row's "Ⅰ A"), not a clause.
    return bool(last and last.group(1) != "A" and last.group(1).lower() in _DANGLING)


def _unbalanced_brackets(text: str) -> bool:
    body = _ENUMERATOR.sub("", text)
    return any(sum(body.count(c) for c in opens) != sum(body.count(c) for c in closes) for opens, closes in _BRACKETS)


_AUTHORS = re.compile(r"(?:\b[A-Z][a-z][\w'’\-]*\s[A-Z]{1,3},\s*){2,}")  # "Smith AB, Jones C, "
_JOURNAL = re.compile(
    r"\b(?:19|20)\d{2}[a-z]?\s*;\s*\d+\s*(?:\(\s*[\w\s]+\))?\s*:\s*[eE]?\d+"  # 2017;136:e60
    r"|\b(?:19|20)\d{2}\s*[,，]\s*\d+\s*\(\s*\d+\s*\)\s*[:：]\s*\d+"  # 2020, 48(3): 123
)
_IDS = re.compile(r"\bdoi\b|doi\.org|\bPMID\b|\bPMCID\b|https?://|\bwww\.|[\[［]\s*[JMCDRSN]\s*[\]］]", re.IGNORECASE)
_ET_AL_YEAR = re.compile(r"\bet al\b\.?.{0,80}?\b(?:19|20)\d{2}\b|\b(?:19|20)\d{2}\b.{0,80}?\bet al\b", re.DOTALL)


def is_reference_entry(quote: str) -> bool:
    """A bibliography entry: author list, journal year;volume:pages, doi/PMID/URL, or "et al." with a year."""
    return bool(_IDS.search(quote) or _JOURNAL.search(quote) or _AUTHORS.search(quote) or _ET_AL_YEAR.search(quote))


_CAPTION_START = re.compile(
    r"^\s*(?:Figure|FIGURE|Fig\.?|Table|TABLE|Box|BOX|Supplemental Table)\s*[A-Z]?\d+[A-Za-z]?(?:[.:]|\s+(?=[A-Z(]))"
)
_CAPTION_END = re.compile(r"\b(?:TABLE|FIGURE)\s+\d+[A-Z]?\s*$")
_PROSE_VERB = re.compile(
    r"^\s*\S+\s*\S+\s+(?:shows?|summari[sz]es|lists?|presents?|provides?|describes?|illustrates?|gives?|outlines?|"
    r"contains?|depicts?|compares?|displays?|includes?|reports?|indicates?)\b"
)
_ZH_CAPTION = re.compile(r"^\s*[图表]\s*\d+[A-Za-z]?\s*\S")


def is_figure_or_table_title(quote: str) -> bool:
    """A figure or table caption: "Figure 3. ...", "Table 2 Recommendations for ...", "... TABLE 10", "表8 ..."."""
    if _CAPTION_START.search(quote):
        return not _PROSE_VERB.search(quote)
    return bool(_CAPTION_END.search(quote) or _ZH_CAPTION.search(quote))


_INDICATES = re.compile(r"^\s*[A-Za-z][\w\-/]*(?:\s[A-Z][\w\-/]*)?\s+indicates\s+[^;]+;")
_KEY_ENTRIES = re.compile(r"(?:\b[A-Z][\w\-/]*(?:\s[A-Z][\w\-/]*)?,\s[^;,]{3,80};\s*){3,}")
_EQUALS_KEY = re.compile(r"^\s*[A-Z][\w\-]*\s*[=¼]\s*[a-z]")
_ZH_NOTE = re.compile(r"^\s*注\s*[：:]")
_ZH_KEY = re.compile(
    r"^\s*[A-Z][\w\-/]*[A-Z][\w\-/]*\s*[：:]\s*(?![^；;。]*(?:推荐|首选|使用|应|可|禁|避免))[\u4e00-\u9fff][^，。；;,\d]{1,30}[；;]?\s*$"
)


def is_abbreviation_legend(quote: str) -> bool:
    """The abbreviation key of a table or figure ("CVD indicates ...; DASH, ...;", "POTS ¼ ...", "注：...",
    "HFrEF：射血分数降低的心力衰竭；")."""
    return bool(_INDICATES.search(quote) or _KEY_ENTRIES.search(quote) or _EQUALS_KEY.search(quote)
                or _ZH_NOTE.search(quote) or _ZH_KEY.search(quote))


_OUR_RUN = re.compile(r"(?:\[\d{1,3}\])+")
_SOURCE_MARKERS = re.compile(
    r"\(\s*S\d+(?:\.\d+)*-\d+(?:\s*[,–\-‑]\s*S?\d+(?:\.\d+)*(?:-\d+)?)*\s*\)"  # ACC/AHA supplement: (S4.5-33)
    r"|[\[［【]\s*\d{1,4}(?:\s*[,，、‑–—\-~～]\s*\d{1,4})*\s*[\]］】]"  # [12], [12,13], ［6‑7］
    r"|\(\s*\d{1,4}(?:\s*[,–‑\-]\s*\d{1,4})+\s*\)"  # (5,6), (380,468–471)
    r"|\(\s*[1-9]\d{1,2}\s*\)"  # (76); a lone (1)-(9) reads as an enumeration and is left alone
    r"|(?<![mM])[⁰¹²³⁴⁵⁶⁷⁸⁹]+(?:[,‑–\-][⁰¹²³⁴⁵⁶⁷⁸⁹]+)*"  # superscript digits (not m², mm³)
)


def without_answer_markers(answer_text: str, citations: int) -> str:
    """The answer text without our `[n]` markers: per paragraph, the trailing markers numbered 1..`citations`.

    The extractive answerer puts a sentence's markers after it ("... 50 mm Hg [1]." / "...卒中[2]。"); a
    bracketed number of the source just before them ("...[12][1]") stays, when it is above `citations`.
    """
    paragraphs = []
    for paragraph in answer_text.split("\n\n"):
        runs = list(_OUR_RUN.finditer(paragraph))
        if runs:
            last = runs[-1]
            numbers = [int(n) for n in re.findall(r"\d+", last.group(0))]
            keep = len(numbers)
            while keep and 1 <= numbers[keep - 1] <= citations:
                keep -= 1
            rest = "".join(f"[{n}]" for n in numbers[:keep])
            paragraph = paragraph[: last.start()] + rest + paragraph[last.end():]
        paragraphs.append(paragraph)
    return "\n\n".join(paragraphs)


def source_reference_markers(text: str) -> list[str]:
    """The source's reference markers in a text that holds none of ours (see `without_answer_markers`)."""
    return [m.group(0) for m in _SOURCE_MARKERS.finditer(text)]


def dropped_glyphs(text: str) -> list[str]:
    """Control characters (other than newline and tab), U+FFFD and `GLYPH_MARKER`s, in order of appearance."""
    found = [ch for ch in text.replace(GLYPH_MARKER, "") if (ord(ch) < 0x20 and ch not in "\n\t") or ch == "\ufffd"]
    return found + [GLYPH_MARKER] * text.count(GLYPH_MARKER)


_SUSPECTED = re.compile(
    r"\(\s+\d"  # "( 1%/y": a symbol after the parenthesis is gone ("(<1%/y")
    r"|(?:^|(?<=[\s(]))-(?=[A-Za-z]{3,})"  # "-Blockers": the Greek letter before the hyphen is gone
    r"|(?<=[A-Za-z])[ ]{2,}(?=\d)"  # "LDL-C  100": two spaces where a "<" stood
)


def suspected_dropped_symbols(text: str) -> list[str]:
    """Traces of a silently dropped symbol (heuristic): the text around each, for reading."""
    return [text[max(0, m.start() - 12): m.end() + 12].replace("\n", " ") for m in _SUSPECTED.finditer(text)]


QUOTE_DETECTORS = {
    "fragment": is_fragment,
    "reference entry": is_reference_entry,
    "figure/table title": is_figure_or_table_title,
    "abbreviation legend": is_abbreviation_legend,
}


def quote_flags(quote: str) -> list[str]:
    """The names of the `QUOTE_DETECTORS` that flag a quote."""
    return [name for name, detect in QUOTE_DETECTORS.items() if detect(quote)]


def answer_quality(answer_text: str, quotes: Sequence[str]) -> dict[str, Any]:
    """Every counter for one answer (its text and its citations' quotes, in citation order).

    Flagged quotes, the source's reference markers left in the text, dropped glyphs and suspected dropped symbols.
    """
    text = without_answer_markers(answer_text, len(quotes))
    quotes = list(dict.fromkeys(quotes))
    flagged = {q: quote_flags(q) for q in quotes}
    # Glyphs are counted once: in the answer text, and in a quote only when the text does not show it whole.
    shown = _OUR_RUN.sub("", answer_text).replace(" .", ".")
    glyph_text = "\n".join([answer_text, *(q for q in quotes if q not in shown and q.rstrip(".") not in shown)])
    return {
        "quotes": len(quotes),
        "flagged": [{"quote": q[:200], "flags": f} for q, f in flagged.items() if f],
        "source markers": source_reference_markers(text),
        "dropped glyphs": [f"U+{ord(g):04X}" if len(g) == 1 else g for g in dropped_glyphs(glyph_text)],
        "suspected dropped symbols": suspected_dropped_symbols(glyph_text),
    }
