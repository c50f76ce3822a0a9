"""PostgreSQL's keyword search ranks as SQLite's FTS5 `bm25()` does: the paragraphs of two real corpus PDFs (one
English, one Chinese) indexed into both catalogs with the pipeline's index terms, then every dev question (and a few
terms FTS5 splits into phrases: decimals, diacritics) searched in both; the rankings and scores must agree."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workspace_app.ingest.pipeline import keyword_texts
from workspace_app.ingest.readers.pdf import parse_pdf
from workspace_app.models.documents import Chunk, Document
from workspace_app.storage.postgres.catalog import PostgresCatalog
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.text.analyzer import query_terms

pytestmark = pytest.mark.postgres

PDFS = ("eckel-2013-lifestyle.pdf", "zh-acute-af-ed-2024.pdf")
EVAL = Path(__file__).resolve().parents[2] / ".." / "shared" / "eval"
EXTRA = ["1.5 mg", "2.0 mmol/L", "Ménière café naïve", "β-blocker", "心房颤动 抗凝", "LDL-C < 1.8", 'NEAR(a b) "x"']
REL = 1e-9


def paragraph_chunks(path: Path, document_id: str) -> list[Chunk]:
    """One chunk per paragraph of the PDF, as read by the ingestion's PDF reader."""
    parsed = parse_pdf(path, path.name)
    return [
        Chunk(
            id=f"{document_id}-{i:05d}", document_id=document_id, ordinal=i, text=p.text, section=p.section,
            page_start=p.page_start, page_end=p.page_start, token_count=len(p.text.split()), rects=(),
        )
        for i, p in enumerate(paragraph for paragraph in parsed.paragraphs if paragraph.text.strip())
    ]


def questions() -> list[str]:
    found = []
    for name in ("guidelines_dev.jsonl", "guidelines_dev_more.jsonl", "guidelines_dev_xling.jsonl"):
        with open(EVAL / name, encoding="utf-8") as rows:
            found += [json.loads(line)["question"] for line in rows if line.strip()]
    return found


@pytest.fixture(scope="module")
def indexed(
    guidelines: Path, tmp_path_factory: pytest.TempPathFactory, postgres_cluster: Any
) -> Iterator[tuple[Any, Any, str]]:
    """Both catalogs holding the same workspace: both PDFs ready, plus a queued copy of the first (indexed, so it
    counts in BM25's statistics, but never returned)."""
    name = postgres_cluster.create_database()
    sqlite = SqliteCatalog(tmp_path_factory.mktemp("ranking") / "catalog.sqlite")
    postgres = PostgresCatalog(postgres_cluster.url(name))
    workspace = sqlite.create_workspace("Ranking")
    postgres.workspaces.add_workspace(workspace)
    for n, (pdf, status) in enumerate([(PDFS[0], "ready"), (PDFS[1], "ready"), (PDFS[0], "queued")]):
        document = Document(
            id=f"doc{n}", workspace_id=workspace.id, name=f"{n}-{pdf}", sha256=f"{n:064d}", size_bytes=1, pages=1,
            chunks=0, status=status, stage=status, progress=0.0, error=None, added_at="2024-01-01T00:00:00+00:00",
        )
        chunks = paragraph_chunks(guidelines / pdf, document.id)
        for catalog in (sqlite, postgres):
            catalog.add_document(document)
            catalog.replace_chunks(document.id, workspace.id, chunks, keyword_texts(chunks))
    yield sqlite, postgres, workspace.id
    sqlite.close()
    postgres.close()
    postgres_cluster.drop_database(name)


def assert_same_ranking(
    expected: list[tuple[str, float]], got: list[tuple[str, float]], query: str,
    everything: list[tuple[str, float]] | None = None,
) -> None:
    """Same scores position by position; the same chunks, except that chunks of one score may swap places (within
    `everything` SQLite found, when `expected` is cut at a limit)."""
    assert len(got) == len(expected), query
    for (_, want), (_, have) in zip(expected, got, strict=True):
        assert have == pytest.approx(want, rel=REL), query
    ties: dict[float, set[str]] = {}
    for chunk_id, score in everything or expected:
        ties.setdefault(round(score, 6), set()).add(chunk_id)
    for chunk_id, score in got:
        assert chunk_id in ties.get(round(score, 6), set()), (query, chunk_id)


def test_postgres_ranks_every_dev_question_as_fts5_bm25(indexed: tuple[Any, Any, str]) -> None:
    sqlite, postgres, workspace_id = indexed
    ranked = 0
    for query in questions() + EXTRA:
        terms = query_terms(query)
        expected = sqlite.keyword_search(workspace_id, terms, 10_000, None)
        assert_same_ranking(expected, postgres.keyword_search(workspace_id, terms, 10_000, None), query)
        assert_same_ranking(expected[:5], postgres.keyword_search(workspace_id, terms, 5, None), query, expected)
        ranked += len(expected) >= 10
    assert ranked >= 100  # most questions find many chunks: the comparison is not of empty lists


def test_phrases_filters_and_statuses_rank_as_fts5(indexed: tuple[Any, Any, str]) -> None:
    sqlite, postgres, workspace_id = indexed
    cases = (["1.5"], ["2.0", "mmol"], ["ménière"], ["心房颤动", "抗凝"], ["sodium", "sodium"], ['"'], ["a:b"])
    for terms in cases:
        for documents in (None, ["doc1"], ["doc2"], []):
            expected = sqlite.keyword_search(workspace_id, terms, 50, documents)
            assert_same_ranking(expected, postgres.keyword_search(workspace_id, terms, 50, documents), str(terms))
    assert postgres.keyword_search(workspace_id, ["sodium"], 50, ["doc2"]) == []  # queued: never returned
    assert len(postgres.keyword_search(workspace_id, ["sodium"], 50, None)) > 5
