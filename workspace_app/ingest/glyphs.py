"""Characters drawn by symbol fonts: read back what each glyph shows, or mark it, never drop it.

Some PDFs draw ≥ ≤ < > ± β with symbol fonts whose codes extract as control characters ("\\x01") or as the
wrong plain character (an Elsevier font draws "≥" at the code of "$"). A glyph is recovered, in this order,
by the glyph name the font's /Encoding gives its code (Linotype Math Pi fonts name glyphs "H11350"; Elsevier's
Adv fonts "C21", meaningful within one font only), or by the font and the character its code extracts as.
Every table entry was read off a rendering of the glyph in the corpus PDFs (bench/glyphs.py counts them).
A control character that draws no ink is a blank; any other glyph that cannot be read becomes `MARKER`.
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any

from workspace_app.ingest.layout import GlyphCount

if TYPE_CHECKING:
    import pymupdf

MARKER = "⟨?⟩"

# Linotype Mathematical Pi / Universal Pi glyph names mean one glyph in every font of the family.
_PI_NAMES = {
    "H11005": "=", "H11006": "±", "H11015": "≈", "H11021": "<", "H11022": ">", "H11033": "″",
    "H11349": "≤", "H11350": "≥", "H9252": "β", "H18533": "●", "H18546": "■", "H20648": "‖",
}
# Elsevier's Adv fonts number their glyphs: a number means one glyph in one font.
_FONT_NAMES: dict[str, dict[str, str]] = {
    "AdvP4C4E74": {"C0": "−", "C2": "×", "C6": "±", "C14": "°", "C15": "•", "C20": "≤", "C21": "≥"},
    "AdvP4C4E59": {"C19": "\u0301", "C21": "\u0306"},  # accents drawn before the letter they sit on
    "AdvPSSym": {"C211": "©", "C226": "®"},
}
# Symbol fonts whose codes extract as plain characters: what each of those characters draws.
_FONT_CHARS: dict[str, dict[str, str]] = {
    "AdvOT8817665d": {"$": "≥", "#": "≤"},
    "AdvPS_SSYB": {"‡": "≥", "£": "≤"},
    "AdvP4C4E74": {"¼": "=", "þ": "+", "y": "†", "z": "‡", "x": "§", "k": "‖", "{": "¶", "0": "′"},
    "AdvP4C4E51": {"<": "<", ">": ">"},
    "AdvPSSym": {"ª": "©"},
    "AdvPS3FDD77": {"z": "≈", "w": "∼", ".": "…"},
    "AdvMathPi6": {"q": "☆"},
    "AdvPS44A44B": {"d": "—"},
    "AdvPS480274": {"B": "○", "-": "■"},
    "AdvPS3F4C13": {"b": "β"},
    "AdvPS7DED": {"3": "×"},
    "AdvPS6658": {"n": "■"},
    "AdvPS4DD27E": {".": "."},
}
# Font names that say "symbol font" although the tables above do not know the font.
_SYMBOL_FONT = re.compile(r"Pi\d*$|Pi-|MathPi|Math|Symbol|Sym\b|SSYB|Dingbat|Wingding|P4C4E|AdvPS", re.IGNORECASE)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_COMBINING = "\u0301\u0306"
# A font that draws nothing on a page but "$" and "#" stands in for "≥" and "≤" (Elsevier's ACC/AHA layout).
_COMPARISON_GLYPHS = {"$": "≥", "#": "≤"}

def _known(table: dict[str, dict[str, str]], font: str) -> dict[str, str]:
    """The font's table entry; span font names lose their subset prefix and are cut at 24 characters."""
    if font in table:
        return table[font]
    return next((v for k, v in table.items() if len(font) >= 20 and k.startswith(font)), {})


@functools.lru_cache(maxsize=512)
def is_symbol_font(font: str) -> bool:
    """Whether a font (by its name in the text layer) draws symbols rather than text."""
    return bool(_SYMBOL_FONT.search(font)) or bool(_known(_FONT_CHARS, font)) or bool(_known(_FONT_NAMES, font))


def is_suspect(font: str, char: str) -> bool:
    """Whether a character of the text layer needs reading back: a control code, or anything a symbol font draws."""
    return bool(_CONTROL.match(char)) or (is_symbol_font(font) and not char.isspace())


class FontEncodings:
    """Code-to-glyph-name maps of a document's fonts (their /Encoding /Differences), read once per font."""

    def __init__(self, doc: pymupdf.Document) -> None:
        self._doc = doc
        self._by_xref: dict[int, dict[int, str]] = {}

    def for_page(self, page: pymupdf.Page) -> dict[str, dict[int, str]]:
        """Font name (subset prefix removed) -> code -> glyph name, for the fonts of a page."""
        fonts: dict[str, dict[int, str]] = {}
        for xref, _ext, _type, basefont, *_ in page.get_fonts(full=True):
            if xref > 0 and xref not in self._by_xref:
                self._by_xref[xref] = _differences(self._doc, xref)
            name = basefont.split("+", 1)[-1]
            fonts.setdefault(name, {}).update(self._by_xref.get(xref, {}))
        return fonts


def _differences(doc: pymupdf.Document, xref: int) -> dict[int, str]:
    try:
        kind, value = doc.xref_get_key(xref, "Encoding")
        if kind == "xref":
            kind, value = doc.xref_get_key(int(value.split()[0]), "Differences")
    except (ValueError, RuntimeError):
        return {}
    if kind != "array":
        return {}
    names: dict[int, str] = {}
    code = 0
    for token in re.findall(r"/[^\s/\[\]]+|\d+", value):
        if token.startswith("/"):
            names[code] = token[1:]
            code += 1
        else:
            code = int(token)
    return names


def comparison_fonts(raw: dict[str, Any]) -> set[str]:
    """Unknown fonts that draw nothing on the page but "$" and "#": standing in for ≥ and ≤ when the font is a
    symbol font (only symbol fonts' characters are read back: a text font's "$" stays a dollar)."""
    drawn: dict[str, set[str]] = {}
    for block in raw.get("blocks", []):
        for line in block.get("lines", []):
            for span in line["spans"]:
                if text := span["text"].strip():
                    drawn.setdefault(span["font"], set()).update(text)
    return {font for font, chars in drawn.items() if chars <= _COMPARISON_GLYPHS.keys() and not _known(_FONT_CHARS, font)}


def read_glyph(font: str, char: str, glyph_names: dict[int, str], comparison: bool) -> str | None:
    """What a suspect character draws, or None when neither its glyph name nor its font tell."""
    code = ord(char)
    name = glyph_names.get(code, "") if code < 256 else ""
    if found := _PI_NAMES.get(name) or _known(_FONT_NAMES, font).get(name):
        return found
    if found := _known(_FONT_CHARS, font).get(char):
        return found
    if comparison and char in _COMPARISON_GLYPHS:
        return _COMPARISON_GLYPHS[char]
    if not _CONTROL.match(char) and code > 0xFF:
        return char  # the PDF gave it a Unicode value beyond Latin-1 (ToUnicode or a standard name): trust it
    return None


def recover_span(
    span: dict[str, Any], glyph_names: dict[int, str], comparison: bool, has_ink: Callable[[int], bool]
) -> GlyphCount:
    """Rewrite a span's text with what its glyphs draw; `has_ink(i)` tells whether character i draws anything."""
    font, text = span["font"], span["text"]
    count = GlyphCount()
    if not any(is_suspect(font, char) for char in text):
        return count
    out: list[str] = []
    pending = ""
    for index, char in enumerate(text):
        if not is_suspect(font, char):
            out.append(char + pending if pending else char)
            pending = ""
            continue
        found = read_glyph(font, char, glyph_names, comparison)
        if found is None:
            if _CONTROL.match(char) and not has_ink(index):
                count.blank += 1
                out.append(" ")
                continue
            count.flagged += 1
            out.append(MARKER)
            continue
        if found == char:
            count.kept += 1
        else:
            count.recovered += 1
        if found in _COMBINING:
            pending = found
            continue
        out.append(found + pending if pending else found)
        pending = ""
    span["text"] = unicodedata.normalize("NFC", "".join(out) + pending)
    return count


def glyph_has_ink(page: pymupdf.Page, bbox: tuple[float, float, float, float]) -> bool:
    """Whether anything is painted inside a glyph's box (a control code may stand for an empty glyph)."""
    import pymupdf

    rect = pymupdf.Rect(bbox)
    if rect.is_empty or rect.width < 0.2:
        return False
    pix = page.get_pixmap(clip=rect, dpi=200, colorspace=pymupdf.csGRAY, alpha=False)
    return any(value < 160 for value in pix.samples)


def recover_page(page: pymupdf.Page, raw: dict[str, Any], encodings: FontEncodings, flags: int) -> None:
    """Rewrite every span of a page's text dict with what its glyphs draw; each line's count goes under "glyphs"."""
    names = encodings.for_page(page)
    comparison = comparison_fonts(raw)
    boxes = _CharBoxes(page, flags)
    for b, block in enumerate(raw.get("blocks", [])):
        for n, line in enumerate(block.get("lines", [])):
            count = GlyphCount()
            for s, span in enumerate(line["spans"]):
                ink = partial(boxes.has_ink, (b, n, s))
                count.add(recover_span(span, _names_of(names, span["font"]), span["font"] in comparison, ink))
            _attach_accents(line["spans"])
            line["glyphs"] = count


def _attach_accents(spans: list[dict[str, Any]]) -> None:
    """Put an accent drawn by its own span ("Kmie" "´" "c") on the letter of the next span ("Kmieć")."""
    for span, following in itertools.pairwise(spans):
        if span["text"][-1:] and span["text"][-1] in _COMBINING and following["text"][:1].isalpha():
            joined = following["text"][0] + span["text"][-1] + following["text"][1:]
            following["text"] = unicodedata.normalize("NFC", joined)
            span["text"] = span["text"][:-1]


def _names_of(names: dict[str, dict[int, str]], font: str) -> dict[int, str]:
    return names.get(font) or next((v for k, v in names.items() if k.startswith(font)), {})


class _CharBoxes:
    """Character boxes of a page, read (as "rawdict") only when a control code has to be looked at."""

    def __init__(self, page: pymupdf.Page, flags: int) -> None:
        self._page = page
        self._flags = flags
        self._raw: dict[str, Any] | None = None

    def has_ink(self, where: tuple[int, int, int], index: int) -> bool:
        """Whether character `index` of span `where` (block, line, span) paints anything; True when unsure."""
        if self._raw is None:
            self._raw = self._page.get_text("rawdict", flags=self._flags)
        block, line, span = where
        try:
            char = self._raw["blocks"][block]["lines"][line]["spans"][span]["chars"][index]
        except (IndexError, KeyError):
            return True
        return glyph_has_ink(self._page, char["bbox"])
