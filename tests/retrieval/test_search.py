"""Hybrid search over a workspace of real guideline pages: what a hit carries, filters, methods, Chinese BM25."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from workspace_app.errors import DocumentNotFoundError
from workspace_app.retrieval.hybrid import mostly_cjk
from workspace_app.text.cjk import is_mostly_cjk

ARNETT = "arnett-2014-guideline-strategies.pdf"
WOMEN = "women-p10-11.pdf"
CHINESE = "zh-acute-af-p3-4.pdf"


@pytest.fixture(scope="module")
def service(
    tmp_path_factory: pytest.TempPathFactory, build: Callable[..., Any], guidelines: Path,
    excerpt: Callable[..., Path],
) -> Iterator[Any]:
    """Workspace "Search": arnett-2014 (6 pages), 2 pages of the women's guideline, 2 pages of the Chinese AF one."""
    built = build(tmp_path_factory.mktemp("search") / "data")
    built.workspaces.create("Search")
    built.workspaces.create("Empty")
    sources = {
        ARNETT: guidelines / ARNETT,
        WOMEN: excerpt("mosca-2011-women-cvd.pdf", 10, 11),
        CHINESE: excerpt("zh-acute-af-ed-2024.pdf", 3, 4),
    }
    for name, path in sources.items():
        report = built.documents.ingest("Search", path, name)
        assert report.status == "ready", report
    yield built


def all_chunks(service: Any, name: str) -> list[Any]:
    document = service.documents.get("Search", name)
    ids = service.catalog.document_chunk_ids(document.id)
    return list(service.catalog.get_chunks(ids).values())


def test_hybrid_hits_carry_text_document_pages_section_rects_and_ranks(service: Any) -> None:
    result = service.search.search("Search", "How should guidelines handle patients with multiple chronic conditions?")
    hits = result.hits
    assert len(hits) == 8
    assert [hit.rank for hit in hits] == list(range(1, 9))
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert len({hit.chunk.id for hit in hits}) == 8
    for hit in hits:
        chunk = hit.chunk
        assert chunk.text.strip()
        assert hit.document_name in {ARNETT, WOMEN, CHINESE}
        assert service.documents.get("Search", hit.document_name).id == chunk.document_id
        assert 1 <= chunk.page_start <= chunk.page_end
        assert isinstance(chunk.section, str)
        assert chunk.rects and all(chunk.page_start <= r.page <= chunk.page_end for r in chunk.rects)
        assert {"dense", "sparse", "crosslingual"} <= set(hit.ranks) <= {"dense", "sparse", "translated", "crosslingual"}
        assert any(rank is not None for rank in hit.ranks.values())
    assert any(hit.ranks["dense"] is not None and hit.ranks["sparse"] is not None for hit in hits)  # found by both
    assert hits[0].document_name == ARNETT
    assert {"embed_query", "dense", "sparse", "fuse", "total"} <= set(result.timings_ms)


def test_hit_json_is_the_public_shape(service: Any) -> None:
    data = service.search.search("Search", "aspirin for women with atrial fibrillation", top_k=3).to_json()
    assert data["query"] == "aspirin for women with atrial fibrillation"
    assert len(data["results"]) == 3
    first = data["results"][0]
    assert {
        "rank", "chunk_id", "document", "document_id", "page_start", "page_end", "section", "text", "score", "rects",
        "ranks", "recommendation_class", "evidence_level",
    } <= set(first)
    assert first["document"] == WOMEN
    assert set(first["rects"][0]) == {"page", "x0", "y0", "x1", "y1"}
    assert {"dense", "sparse"} <= set(first["ranks"]) <= {"dense", "sparse", "translated", "crosslingual"}


def test_a_guideline_statement_is_found_on_its_page(service: Any) -> None:
    # gdev-020: physical activity for weight loss, women's guideline p.10 (p.1 of the excerpt).
    result = service.search.search(
        "Search", "How much daily physical activity should women who need to lose weight get?", top_k=5
    )
    assert any(
        hit.document_name == WOMEN and hit.chunk.page_start == 1 and "60 to 90 min" in hit.chunk.text
        for hit in result.hits
    ), [(hit.document_name, hit.chunk.text[:60]) for hit in result.hits]


@pytest.mark.parametrize("key", ["name", "id"])
def test_documents_filter_restricts_hits(service: Any, key: str) -> None:
    document = service.documents.get("Search", WOMEN)
    chosen = document.name if key == "name" else document.id
    hits = service.search.search("Search", "multiple chronic conditions", top_k=20, documents=[chosen]).hits
    assert hits
    assert {hit.document_name for hit in hits} == {WOMEN}
    unfiltered = service.search.search("Search", "multiple chronic conditions", top_k=20).hits
    assert {hit.document_name for hit in unfiltered} != {WOMEN}


def test_documents_filter_with_two_documents(service: Any) -> None:
    hits = service.search.search("Search", "atrial fibrillation", top_k=30, documents=[WOMEN, CHINESE]).hits
    assert hits and {hit.document_name for hit in hits} <= {WOMEN, CHINESE}


def test_unknown_document_in_filter_is_a_clear_error(service: Any) -> None:
    with pytest.raises(DocumentNotFoundError, match="no-such.pdf"):
        service.search.search("Search", "aspirin", documents=["no-such.pdf"])


@pytest.mark.parametrize("method", ["dense", "sparse"])
def test_a_single_method_ranks_alone(service: Any, method: str) -> None:
    other = {"dense": "sparse", "sparse": "dense"}[method]
    hits = service.search.search("Search", "warfarin dabigatran atrial fibrillation", methods=(method,)).hits
    assert hits
    assert all(hit.ranks[method] is not None and hit.ranks.get(other) is None for hit in hits)
    assert all(hit.to_json()["ranks"][other] is None for hit in hits)
    assert [hit.ranks[method] for hit in hits] == sorted(hit.ranks[method] for hit in hits)


def test_chinese_two_character_term_is_found_by_bm25(service: Any) -> None:
    holding = {c.id for c in all_chunks(service, CHINESE) if "血糖" in c.text}
    assert holding  # 血糖 (blood glucose) is on both pages of the excerpt
    hits = service.search.search("Search", "血糖", top_k=20, methods=("sparse",)).hits
    assert hits
    assert {hit.chunk.id for hit in hits} == holding
    assert all(hit.document_name == CHINESE and hit.ranks["sparse"] is not None for hit in hits)


def test_chinese_question_finds_its_passage_in_hybrid_search(service: Any) -> None:
    hits = service.search.search("Search", "急性房颤患者需要检查血糖吗", top_k=3).hits
    assert hits and "血糖" in hits[0].chunk.text
    assert hits[0].document_name == CHINESE


def test_an_empty_workspace_has_no_hits(service: Any) -> None:
    assert service.search.search("Empty", "aspirin").hits == []


def test_concurrent_searches_return_what_one_search_at_a_time_returns(service: Any) -> None:
    """Each search runs its multilingual and keyword half on a second thread: many at once must not mix them up."""
    queries = [
        "How should guidelines handle patients with multiple chronic conditions?",
        "aspirin for women at high risk", "房颤 心室率 控制", "statin therapy", "心率", "evidence grading",
    ]
    alone = {q: [(h.chunk.id, h.score, h.ranks) for h in service.search.search("Search", q).hits] for q in queries}
    with ThreadPoolExecutor(4) as pool:
        for query, result in zip(queries * 2, pool.map(lambda q: service.search.search("Search", q), queries * 2)):
            assert [(h.chunk.id, h.score, h.ranks) for h in result.hits] == alone[query]


@pytest.mark.parametrize("text", [
    "", "123 456", "ＬＤＬ胆固醇", "LDL 胆固醇 target", "²½〇一", "〇〇 ab", "（）、。", "ab中", "a中文", "Ⅻ 心率 ok",
])
def test_the_fast_language_count_is_is_mostly_cjk(text: str) -> None:
    assert mostly_cjk(text) == is_mostly_cjk(text)


def test_the_fast_language_count_agrees_on_every_passage(service: Any) -> None:
    for name in (ARNETT, WOMEN, CHINESE):
        for chunk in all_chunks(service, name):
            assert mostly_cjk(chunk.text) == is_mostly_cjk(chunk.text), chunk.id


def test_a_removed_documents_passages_are_not_found_and_come_back_when_it_is_added_again(
    service: Any, excerpt: Callable[..., Path]
) -> None:
    service.workspaces.create("Removal")
    path = excerpt("zh-acute-af-ed-2024.pdf", 3, 4)
    assert service.documents.ingest("Removal", path, CHINESE).status == "ready"
    assert service.documents.ingest("Removal", excerpt("mosca-2011-women-cvd.pdf", 10, 11), WOMEN).status == "ready"
    query = "房颤患者的心室率控制"
    assert CHINESE in {hit.document_name for hit in service.search.search("Removal", query).hits}
    service.documents.remove("Removal", CHINESE)
    hits = service.search.search("Removal", query).hits
    assert hits and {hit.document_name for hit in hits} == {WOMEN}
    assert service.documents.ingest("Removal", path, CHINESE).status == "ready"
    assert CHINESE in {hit.document_name for hit in service.search.search("Removal", query).hits}
