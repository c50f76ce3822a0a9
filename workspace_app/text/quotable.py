"""What may be quoted or summarised as a sentence of its own: whole sentences, list items and table rows, never
reference entries, captions, legends, running heads or contents lines.

Shared by the extractive answerer (`answer/quotes.py` reads quotes with it) and the source guides
(`documents/summary.py` chooses summary sentences with it): a sentence cut by a chunk boundary ("Intake of trans
fat has been shown to be harmful and"), one that starts mid-clause ("with White individuals had …"), a
bibliography entry, a figure or table caption or a contents line stands on its own in neither.
"""

from __future__ import annotations

import re

from workspace_app.text.cjk import has_cjk
from workspace_app.text.sentences import Span, ends_in_grade_cells, leaves_clause_open

_EN_TERMINAL = tuple(".!?:;")
_ZH_TERMINAL = tuple("。！？；：.!?;:")
_CLOSERS = "\"')]”’）】"
_BULLETS = "•·▪●○■□–—-*①②③④⑤⑥⑦⑧⑨⑩"
# A quote ending on a joining mark, or on a word that cannot end a clause (`leaves_clause_open`), goes on after it.
_JOINING = tuple(",([/–-")
_REFERENCE_ENTRY = re.compile(
    r"\bet al\b\.?|\b(?:19|20)\d{2}\s*;\s*\d+\s*[(:]|\b\d+\s*\(\d+\)\s*:\s*\d+|(?i:\bdoi)\s*[:.]|\bPMID\b|\[[JMDC]\]"
    r"|[\w.+-]+@[\w-]+\.[\w.]+"  # an e-mail address: a page's author block, not a statement
    r"|^\s*\[?\d{1,4}[.\]]\s+[A-Z][\w'’-]+ [A-Z]{1,3}[,.]|^(?:[A-Z][\w'’-]+ [A-Z]{1,3}, ){2,}",
)
_CONTENTS_LEADER = re.compile(r"(?:(?:\.\s?){4,}|…{2,})\s*[A-Za-z]?\d{0,4}\s*$")
_CAPTION = re.compile(
    r"^\s*(?:Figure|Fig\.?|Table|Box|Panel|Appendix|Supplemental (?:Table|Figure)|Data Supplement)\s*[S]?\d+[A-Za-z]?\b"
    r"|^\s*[图表]\s*\d+",
    re.IGNORECASE,
)
# A caption whose label is set after its title ("The 10 Most Common Comorbidities … (13) TABLE 1").
_TRAILING_LABEL = re.compile(r"\b(?:TABLE|FIGURE)\s+\d+[A-Z]?\s*$")
# A table's abbreviation legend: "CVD indicates cardiovascular disease;", "HF = heart failure" (an abbreviation:
# two capitals at least, so "This indicates that ..." is a sentence).
_LEGEND = re.compile(r"^\s*(?=[\w/-]*[A-Z][\w/-]*[A-Z])[A-Za-z0-9/-]{2,},?\s*(?:indicates\b|[=¼]\s)")
# … and a Chinese one: "HFrEF：射血分数降低的心力衰竭；", "INR ：国际标准化比值；" (the long form alone; a row such as
# "HFrEF：首选β受体阻滞剂" says what to do and is kept).
_ZH_LEGEND = re.compile(
    r"^\s*(?=[\w/-]*[A-Z][\w/-]*[A-Z])[A-Za-z0-9/-]{2,}\s*[：:]\s*(?![^；;。]*(?:推荐|首选|使用|应|可|禁|避免|\d))"
    r"[\u4e00-\u9fff][^，。；;,]{1,30}[；;]?\s*$"
)


def is_fragment(text: str, span: Span, language: str, table: bool = False) -> bool:
    """Whether a sentence of `text` is cut off: it starts mid-sentence or ends mid-clause. In a ruled table's
    passage (`table`) a line is a whole row: one ending the passage goes on in no other."""
    quote = span.text.strip()
    if not quote:
        return True
    before = text[: span.start].rstrip(" \t")
    # Lower case starts a sentence only as a list item ("• reduce sodium"): elsewhere it goes on from a
    # line, column or chunk before.
    item = quote[:1] in _BULLETS or (bool(before) and before[-1] in _BULLETS)
    first = quote.lstrip(_BULLETS + " \"'(“‘")[:1]
    if language != "zh" and first.islower() and not item:
        return True
    if first in ",.;:)，。；：）、" or _unbalanced(quote):
        return True
    if quote.rstrip(_CLOSERS).endswith(_ZH_TERMINAL if language == "zh" else _EN_TERMINAL):
        return False
    if ends_in_grade_cells(quote):
        return False  # a whole recommendation row: its class and level cells end it
    if not text[span.end :].strip():
        # The chunk ends here without a full stop: the sentence goes on in the next chunk (a table's row does not).
        return not table
    return quote.endswith(_JOINING) or leaves_clause_open(quote)


_URL = re.compile(r"(?:https?://|www\.)\S*")
_PLAIN_WORD = re.compile(r"(?<![\w/.])[a-z][a-z'’-]+\b")


_PAIRS = (("(", ")"), ("（", "）"), ("[", "]"), ("［", "］"))
_ENUMERATOR = re.compile(r"(?:^|\s)(?:\d{1,2}|[a-z]|[ivx]{1,4})\)|（\d{1,2}）")


def _unbalanced(quote: str) -> bool:
    """A bracket opened and not closed (or the reverse): the sentence was cut, or two columns interleaved."""
    body = _ENUMERATOR.sub(" ", quote)
    return any(body.count(a) != body.count(b) for a, b in _PAIRS)


def is_reference_entry(quote: str) -> bool:
    """A bibliography entry ("Smith AB, Jones C, et al. Circulation. 2017;136:e60–122."), a resource given by its
    address ("Your Guide to Lowering Your Blood Pressure With DASH (http://www.nhlbi.nih.gov/...)"), or an author
    block with its e-mail and DOI glued to the text after it. A statement that merely carries a link (its
    words outside the address run as prose: five lower-case words at least) is not one."""
    if _REFERENCE_ENTRY.search(quote):
        return True
    return bool(_URL.search(quote)) and len(_PLAIN_WORD.findall(_URL.sub(" ", quote))) < 5


def is_caption(quote: str) -> bool:
    """A figure, table or box title, a table's header, or a table-of-contents line."""
    return bool(
        _CAPTION.search(quote) or _TRAILING_LABEL.search(quote) or _LEGEND.search(quote) or _ZH_LEGEND.search(quote)
        or _CONTENTS_LEADER.search(quote) or _is_header(quote)
    )


_HEADER_WORD = re.compile(r"[A-Za-z][\w'’/-]*")
_FUNCTION_WORDS = frozenset("a an and at by for in of on or the to vs with".split())


def _is_header(quote: str) -> bool:
    """A running head, keyword line, table header row or heading: mostly capitals ("KEY WORDS", "TABLE 10"), or
    words in title case ("Class I Class IIa Strength of Recommendation") with no figure and no full stop. A table's
    data row has figures ("Hypertension 1 (81.3) …") or lower-case words ("Cough syncope, untreated Not fit to
    drive"), a statement its full stop."""
    text = quote.strip()
    letters = [ch for ch in text if ch.isascii() and ch.isalpha()]
    if len(letters) >= 12 and (sum(ch.isupper() for ch in letters) / len(letters) > 0.6 or text.upper().startswith("KEY WORDS")):
        return True
    if not text or has_cjk(text) or any(ch.isdigit() for ch in text) or text.endswith(_EN_TERMINAL):
        return False
    words = [w for w in _HEADER_WORD.findall(text) if w.lower() not in _FUNCTION_WORDS]
    return len(words) >= 2 and all(w[0].isupper() for w in words)


def quotable(text: str, span: Span, language: str, table: bool = False) -> bool:
    """A whole sentence, list item or table row that is neither a reference entry nor a caption."""
    return not (is_fragment(text, span, language, table) or is_reference_entry(span.text) or is_caption(span.text))



def is_table_title(section_title: str) -> bool:
    """Whether a passage's innermost section is a table ("TABLE 6 Examples of …: Study/ Reference …"): ingestion
    reads a ruled table's rows one per line, in a section of their own titled by the table's caption and header."""
    return bool(_CAPTION.match(section_title))
