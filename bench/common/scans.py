"""Scanned copies of corpus pages, made here (no scanned data from elsewhere), and how well OCR read them.

    scanned_copy([(pdf, page), ...], target)  -> an image-only PDF: each page rendered to a picture, nothing else
    with_scanned_page(pdf, [pages], k, target) -> the born-digital pages with page k replaced by its picture
    char_accuracy(reference, read)             -> 1 - edit distance / reference length, spaces and width ignored

A picture may carry noise (grey specks) and a slight skew, as a page through a scanner does. Used by
tests/ingest/test_ocr.py and bench/ocr.py.
"""

from __future__ import annotations

import io
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import pymupdf


def page_picture(page: pymupdf.Page, dpi: int = 150, noise: float = 0.0, skew_deg: float = 0.0, seed: int = 0) -> bytes:
    """The page as a PNG at `dpi`, with `noise` (share of pixels set to a random grey) and a rotation of `skew_deg`."""
    pixmap = page.get_pixmap(dpi=dpi, alpha=False, colorspace=pymupdf.csRGB)
    if not noise and not skew_deg:
        return bytes(pixmap.tobytes("png"))
    import numpy as np
    from PIL import Image

    image = np.frombuffer(pixmap.samples, dtype=np.uint8).reshape(pixmap.height, pixmap.width, 3).copy()
    generator = np.random.default_rng(seed)
    specks = generator.random(image.shape[:2]) < noise
    image[specks] = generator.integers(0, 256, size=(int(specks.sum()), 1), dtype=np.uint8)
    picture = Image.fromarray(image)
    if skew_deg:
        picture = picture.rotate(skew_deg, resample=Image.Resampling.BILINEAR, expand=False, fillcolor=(255, 255, 255))
    out = io.BytesIO()
    picture.save(out, format="PNG")
    return out.getvalue()


def scanned_copy(
    pages: Sequence[tuple[Path, int]], target: Path, *, dpi: int = 150, noise: float = 0.0, skew_deg: float = 0.0,
) -> Path:
    """An image-only PDF of the given (source PDF, 1-based page) pairs: each page one picture, the page's size."""
    with pymupdf.open() as scan:
        for source, number in pages:
            with pymupdf.open(source) as doc:
                page = doc.load_page(number - 1)
                new = scan.new_page(width=page.rect.width, height=page.rect.height)
                new.insert_image(new.rect, stream=page_picture(page, dpi, noise, skew_deg, seed=number))
        scan.save(target, garbage=3, deflate=True)
    return target


def with_scanned_page(
    source: Path, pages: Sequence[int], scanned: int, target: Path, *, dpi: int = 150, noise: float = 0.0,
    skew_deg: float = 0.0,
) -> Path:
    """The 1-based `pages` of `source` as they are, but for page `scanned` (1-based in `source`), which becomes a
    picture of itself: a born-digital PDF with a scanned page inside."""
    with pymupdf.open(source) as doc, pymupdf.open() as mixed:
        for number in pages:
            if number == scanned:
                page = doc.load_page(number - 1)
                new = mixed.new_page(width=page.rect.width, height=page.rect.height)
                new.insert_image(new.rect, stream=page_picture(page, dpi, noise, skew_deg, seed=number))
            else:
                mixed.insert_pdf(doc, from_page=number - 1, to_page=number - 1)
        mixed.save(target, garbage=3, deflate=True)
    return target


def comparable(text: str) -> str:
    """Text as compared: NFKC (full-width forms as ASCII), ligatures split, no whitespace, no control characters."""
    text = unicodedata.normalize("NFKC", text)
    return "".join(ch for ch in text if not ch.isspace() and unicodedata.category(ch)[0] != "C")


def char_accuracy(reference: str, read: str) -> float:
    """1 - (Levenshtein distance / reference length) over `comparable` texts, at least 0."""
    expected, found = comparable(reference), comparable(read)
    if not expected:
        return 1.0 if not found else 0.0
    return max(0.0, 1.0 - edit_distance(expected, found) / len(expected))


def edit_distance(a: str, b: str) -> int:
    """Levenshtein distance by the bit-parallel algorithm (Myers 1999, Hyyrö 2001), fast on page-long texts.

    SEE: https://doi.org/10.1145/316542.316550 (Myers), Hyyrö, "Explaining and extending the bit-parallel
    approximate string matching algorithm of Myers" (2001)."""
    if not a:
        return len(b)
    masks: dict[str, int] = {}
    for index, char in enumerate(a):
        masks[char] = masks.get(char, 0) | (1 << index)
    full, top = (1 << len(a)) - 1, 1 << (len(a) - 1)
    plus, minus, score = full, 0, len(a)
    for char in b:
        eq = masks.get(char, 0)
        xv = eq | minus
        xh = (((eq & plus) + plus) ^ plus) | eq
        hp = minus | (~(xh | plus) & full)
        hm = plus & xh
        if hp & top:
            score += 1
        elif hm & top:
            score -= 1
        hp = ((hp << 1) | 1) & full
        hm = (hm << 1) & full
        plus = hm | (~(xv | hp) & full)
        minus = hp & xv
    return score

