"""Chunks of ingested real PDFs: sizes within the embedder's limit, boxes on the page that cover the chunk's words."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from workspace_app.ingest.pipeline import embedding_text

_LIGATURES = str.maketrans({"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"})
_CJK = r"\u3400-\u4dbf\u4e00-\u9fff"


@pytest.fixture(scope="module")
def ingested(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], guidelines: Path,
    excerpt: Callable[..., Path],
) -> Iterator[tuple[Any, dict[str, Path]]]:
    """A workspace holding the 6-page arnett-2014 guideline and pages 5-6 of the Chinese AF guideline."""
    service = build(tmp_path_factory.mktemp("chunks") / "data")
    service.workspaces.create("chunks")
    sources = {
        "arnett-2014-guideline-strategies.pdf": guidelines / "arnett-2014-guideline-strategies.pdf",
        "zh-acute-af-ed-2024-p5-6.pdf": excerpt("zh-acute-af-ed-2024.pdf", 5, 6),
    }
    for name, path in sources.items():
        report = service.documents.ingest("chunks", path, name)
        assert report.status == "ready", report
    yield service, sources


def stored_chunks(service: Any, name: str) -> list[Any]:
    document = service.documents.get("chunks", name)
    ids = service.catalog.document_chunk_ids(document.id)
    found = service.catalog.get_chunks(ids)
    return [found[chunk_id] for chunk_id in ids]


@pytest.mark.parametrize(
    "name", ["arnett-2014-guideline-strategies.pdf", "mosca-2011-women-cvd.pdf", "zh-acute-af-ed-2024.pdf"]
)
def test_every_chunk_fits_the_model(
    guidelines: Path, chunk_pdf: Callable[[Path], list[Any]], embedder: Any, name: str
) -> None:
    chunks = chunk_pdf(guidelines / name)
    counts = embedder.count_tokens([c.text for c in chunks])
    assert len(chunks) >= 20
    too_long = [(c.page_start, n) for c, n in zip(chunks, counts, strict=True) if n > embedder.max_tokens]
    assert not too_long, f"chunks over {embedder.max_tokens} word pieces: {too_long[:5]}"
    assert all(n > 0 for n in counts)


@pytest.mark.parametrize("name", ["arnett-2014-guideline-strategies.pdf", "zh-acute-af-ed-2024-p5-6.pdf"])
def test_what_is_embedded_fits_the_model_too(ingested: tuple[Any, dict[str, Path]], embedder: Any, name: str) -> None:
    service, _ = ingested
    chunks = stored_chunks(service, name)
    counts = embedder.count_tokens([embedding_text(c) for c in chunks])
    assert max(counts) <= embedder.max_tokens


def test_chunks_are_numbered_in_reading_order(ingested: tuple[Any, dict[str, Path]]) -> None:
    service, _ = ingested
    chunks = stored_chunks(service, "arnett-2014-guideline-strategies.pdf")
    document = service.documents.get("chunks", "arnett-2014-guideline-strategies.pdf")
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert document.chunks == len(chunks)
    assert [c.page_start for c in chunks] == sorted(c.page_start for c in chunks)
    assert {c.page_start for c in chunks} == set(range(1, 7))


@pytest.mark.parametrize("name", ["arnett-2014-guideline-strategies.pdf", "zh-acute-af-ed-2024-p5-6.pdf"])
def test_rects_lie_on_the_chunks_pages(ingested: tuple[Any, dict[str, Path]], name: str) -> None:
    service, sources = ingested
    with pymupdf.open(sources[name]) as doc:
        sizes = {page.number + 1: (page.rect.width, page.rect.height) for page in doc}
    for chunk in stored_chunks(service, name):
        assert chunk.rects, chunk.id
        assert {r.page for r in chunk.rects} >= {chunk.page_start, chunk.page_end}
        for rect in chunk.rects:
            width, height = sizes[rect.page]
            assert chunk.page_start <= rect.page <= chunk.page_end
            assert 0 <= rect.x0 < rect.x1 <= width, (chunk.id, rect)
            assert 0 <= rect.y0 < rect.y1 <= height, (chunk.id, rect)


def _tokens(text: str) -> list[str]:
    """Words of Latin text and single characters of Chinese, lower-cased, ligatures expanded."""
    return re.findall(rf"[{_CJK}]|[^\W{_CJK}_]+", text.translate(_LIGATURES).lower())


def _text_inside(page: pymupdf.Page, rects: list[Any]) -> str:
    """The letters of every pymupdf word whose centre is inside one of the rects, run together."""
    inside = []
    for x0, y0, x1, y1, word, *_ in page.get_text("words"):
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if any(r.x0 - 1 <= cx <= r.x1 + 1 and r.y0 - 1 <= cy <= r.y1 + 1 for r in rects):
            inside.append(word)
    return "".join(_tokens(" ".join(inside)))


@pytest.mark.parametrize("name", ["arnett-2014-guideline-strategies.pdf", "zh-acute-af-ed-2024-p5-6.pdf"])
def test_rects_cover_the_chunks_words(ingested: tuple[Any, dict[str, Path]], name: str) -> None:
    service, sources = ingested
    poorly_covered = []
    with pymupdf.open(sources[name]) as doc:
        for chunk in stored_chunks(service, name):
            inside = "".join(
                _text_inside(doc[page - 1], [r for r in chunk.rects if r.page == page])
                for page in sorted({r.page for r in chunk.rects})
            )
            words = _tokens(chunk.text)
            covered = sum(word in inside for word in words)
            if covered < 0.9 * len(words):
                poorly_covered.append((chunk.ordinal, f"{covered}/{len(words)}", chunk.text[:60]))
    assert not poorly_covered, f"chunks whose boxes miss more than 10% of their words: {poorly_covered[:5]}"


def test_rects_do_not_cover_much_more_than_the_chunk(ingested: tuple[Any, dict[str, Path]]) -> None:
    # The boxes are the chunk's own lines: a box around a whole column would let the UI highlight too much.
    service, sources = ingested
    with pymupdf.open(sources["arnett-2014-guideline-strategies.pdf"]) as doc:
        for chunk in stored_chunks(service, "arnett-2014-guideline-strategies.pdf"):
            inside = "".join(
                _text_inside(doc[page - 1], [r for r in chunk.rects if r.page == page])
                for page in sorted({r.page for r in chunk.rects})
            )
            own = "".join(_tokens(chunk.text))
            assert len(inside) <= 1.6 * len(own) + 40, (chunk.ordinal, len(inside), len(own))
