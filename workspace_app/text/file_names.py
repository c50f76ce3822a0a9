"""Download file names from user-given titles: readable (letters of any script, spaces kept) and safe on every
common file system (no path separators, reserved characters, control characters or reserved device names)."""

from __future__ import annotations

import re
import unicodedata

# A title often holds markup typed as text ("<b>women</b>"): the tags say nothing in a file name.
_TAG = re.compile(r"</?[A-Za-z][^<>]{0,40}>")
# Reserved on Windows or macOS, or a path separator anywhere.
_UNSAFE = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]+')
_RESERVED = {"con", "prn", "aux", "nul", *(f"com{i}" for i in range(1, 10)), *(f"lpt{i}" for i in range(1, 10))}
MAX_STEM = 80


def safe_file_name(title: str, extension: str, fallback: str = "export") -> str:
    """'Cardiology <b>women</b> & AF' + 'graphml' -> 'Cardiology women & AF.graphml'."""
    text = unicodedata.normalize("NFC", _TAG.sub(" ", title))
    text = "".join(" " if unicodedata.category(ch).startswith(("C", "Z")) else ch for ch in text)
    stem = " ".join(_UNSAFE.sub(" ", text).split())
    if len(stem) > MAX_STEM:
        cut = stem[:MAX_STEM]
        stem = cut.rsplit(" ", 1)[0] if " " in cut[MAX_STEM // 2:] else cut
    # A shortened title's ellipsis and a dangling separator say nothing in a file name; a trailing dot vanishes on
    # Windows.
    stem = stem.strip(" .…-_,;")
    if not stem or stem.lower() in _RESERVED:
        stem = fallback
    return f"{stem}.{extension.lstrip('.')}"
