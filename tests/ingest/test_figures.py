"""Figures of real corpus pages: a vector flowchart and a raster figure are found with their caption and box, a
ruled table and a journal's logo are not figures; the ingestion stage stores them with thumbnails and the chunks
beside them, figure search finds them by caption and inner text, and removing the document removes them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pymupdf
import pytest

from workspace_app.answer.figures import answer_figures, asks_for_figure
from workspace_app.errors import DocumentNotFoundError
from workspace_app.ingest.figures import FigureRules, caption_label, find_figures
from workspace_app.models.answers import Answer

# (pdf, 1-based page, label, caption start): pages checked by eye on renders (bench/figures_gold.jsonl has them all).
FLOWCHART = ("shen-2017-syncope.pdf", 9, "Figure 1", "FIGURE 1 Syncope Initial Evaluation")  # drawn boxes, arrows
RASTER = ("ommen-2024-hcm.pdf", 28, "Figure 2", "FIGURE 2 Genetic Testing Process in HCM")  # one picture
RASTER_ZH = ("zh-acute-af-ed-2024.pdf", 5, "图 1", "图1 急性房颤急诊管理流程")  # its caption shares a block with a table
NOT_FIGURES = {
    ("shen-2017-syncope.pdf", 12): "TABLE 6, a ruled table with shaded rows (106 drawings)",
    ("eckel-2013-lifestyle.pdf", 4): "Table 1 set as a picture under its caption",
    ("kusumoto-2018-bradycardia.pdf", 1): "the journal's masthead band and a small logo",
    ("zh-dapt-chd-consensus-2021.pdf", 2): "a scanned page: one picture under the whole text layer",
}


def figures_of(guidelines: Path, name: str, number: int) -> list[Any]:
    with pymupdf.open(guidelines / name) as doc:
        return find_figures(doc.load_page(number - 1), FigureRules())


def test_caption_labels_are_read_from_typography_alone() -> None:
    assert caption_label("FIGURE 3 Syncope Algorithm") == "Figure 3"
    assert caption_label("Figure 2. Risk of events") == "Figure 2"
    assert caption_label("Fig. 4A: Panels") == "Figure 4A"
    assert caption_label("Central Illustration Shared Decision-Making") == "Central Illustration"
    assert caption_label("图1 射血分数保留的心力衰竭诊断流程") == "图 1"
    assert caption_label("图 2 治疗") == "图 2"
    for mention in ("Figure 3 shows that the risk rises", "Figure 2) and then", "Figures are shown", "A Figure 3",
                    "图1）所示", "图12.5", "Table 3 Risk factors"):
        assert caption_label(mention) is None, mention


def test_a_vector_flowchart_is_found_with_its_caption_and_box(guidelines: Path) -> None:
    name, number, label, caption = FLOWCHART
    found = [f for f in figures_of(guidelines, name, number) if f.label == label]
    assert len(found) == 1
    figure = found[0]
    assert figure.caption.startswith(caption) and figure.kind in ("vector", "mixed")
    x0, y0, x1, y1 = figure.box
    assert (x1 - x0) > 200 and (y1 - y0) > 150  # the chart, not its caption line
    assert len(figure.text) > 40  # the words in its boxes


@pytest.mark.parametrize("case", [RASTER, RASTER_ZH], ids=["english", "chinese"])
def test_a_raster_figure_is_found_with_its_caption(guidelines: Path, case: tuple[str, int, str, str]) -> None:
    name, number, label, caption = case
    found = figures_of(guidelines, name, number)
    assert [f.label for f in found] == [label]
    assert found[0].caption == caption or found[0].caption.startswith(caption + " ")
    assert found[0].kind == "raster"


@pytest.mark.parametrize("page", sorted(NOT_FIGURES), ids=[f"{n[:12]}-p{p}" for n, p in sorted(NOT_FIGURES)])
def test_tables_logos_and_page_scans_are_not_figures(guidelines: Path, page: tuple[str, int]) -> None:
    assert figures_of(guidelines, *page) == [], NOT_FIGURES[page]


@pytest.fixture
def ingested(tmp_path: Path, build: Callable[..., Any], excerpt: Callable[[str, int, int], Path]) -> Any:
    """The flowchart's page ingested through the real pipeline in a new data dir."""
    app = build(tmp_path / "data")
    app.workspaces.create("Figures")
    name, number, _, _ = FLOWCHART
    report = app.documents.ingest("Figures", excerpt(name, number, number))
    assert report.status == "ready", report
    return app, report.document_id


def test_the_stage_stores_figures_with_thumbnails_and_removal_deletes_them(ingested: Any) -> None:
    app, document_id = ingested
    stored = app.catalog.figures.document_figures(document_id)
    assert [f.label for f in stored] == [FLOWCHART[2]]
    figure = stored[0]
    assert figure.caption.startswith(FLOWCHART[3]) and figure.rect.page == 1
    chunks = app.catalog.get_chunks(list(figure.chunk_ids))
    assert chunks and all(chunk.page_start <= 1 <= chunk.page_end for chunk in chunks.values())
    thumbnails = app.settings.storage.data_dir / "files" / "thumbnails" / document_id
    png = (thumbnails / figure.thumbnail).read_bytes()
    assert png.startswith(b"\x89PNG")
    app.documents.remove("Figures", document_id)
    assert app.catalog.figures.document_figures(document_id) == []
    assert not thumbnails.exists()


def test_figures_are_listed_drawn_and_searched_through_the_app(ingested: Any) -> None:
    app, document_id = ingested
    figure = app.figures.document_figures("Figures", document_id)[0]
    assert app.figures.thumbnail("Figures", document_id, figure.id).startswith(b"\x89PNG")
    by_caption = app.figures.search("Figures", "syncope initial evaluation")
    assert [hit.figure.id for hit in by_caption] == [figure.id]
    assert by_caption[0].to_json()["type"] == "figure" and by_caption[0].document_name.endswith(".pdf")
    inner_word = next(word for word in figure.text.split() if len(word) > 6 and word.isalpha())
    assert [hit.figure.id for hit in app.figures.search("Figures", inner_word)] == [figure.id]  # text in its boxes
    assert app.figures.search("Figures", "zebra quantum") == []
    assert app.figures.figures_beside(list(figure.chunk_ids[:1])) == [figure]
    with pytest.raises(DocumentNotFoundError):
        app.figures.thumbnail("Figures", document_id, "nothing")


def test_an_answer_shows_the_figure_asked_for_or_beside_its_citations(ingested: Any) -> None:
    app, document_id = ingested
    figure = app.figures.document_figures("Figures", document_id)[0]
    asked = app.answers.ask("Figures", "Show the syncope initial evaluation algorithm")
    assert [f.id for f in asked.figures][:1] == [figure.id]
    assert asked.to_json()["figures"][0]["rect"]["page"] == 1
    assert Answer.from_record(asked.to_record()).figures == asked.figures  # a chat keeps them
    workspace_id = app.workspaces.get("Figures").id
    beside = answer_figures(app.catalog.figures, None, workspace_id, None, figure.chunk_ids[:1], 2)
    assert beside == [figure]
    assert answer_figures(app.catalog.figures, None, workspace_id, None, [], 2) == []


def test_a_question_asks_for_a_figure_by_the_words_of_documents() -> None:
    for question in ("Show the syncope evaluation algorithm", "Which flowchart covers pacing?", "HFpEF 的诊断流程图",
                     "见图 2 的评分"):
        assert asks_for_figure(question), question
    for question in ("What INR should warfarin target?", "心电图有何表现？", "How is syncope evaluated?"):
        assert not asks_for_figure(question), question


def test_the_words_inside_a_picture_are_read_by_ocr_and_found(
    tmp_path: Path, build: Callable[..., Any], excerpt: Callable[[str, int, int], Path]
) -> None:
    app = build(tmp_path / "data")
    app.workspaces.create("Figures")
    name, number, label, _ = RASTER
    counts: dict[str, list[tuple[int, int]]] = {}
    overall: list[float] = []

    def listen(progress: Any) -> None:
        counts.setdefault(progress.stage, []).append((progress.done, progress.total))
        overall.append(progress.overall)

    report = app.documents.ingest("Figures", excerpt(name, number, number), on_progress=listen)
    assert report.status == "ready", report
    # The pages are searched for figures, then the picture is read as a stage of its own (its OCR takes seconds,
    # finding the figures of a page milliseconds), counted in pictures.
    stages = list(counts)
    assert stages.index("figure text") == stages.index("figures") + 1
    assert counts["figures"][:2] == [(0, 1), (0, 1)] and (1, 1) in counts["figures"]
    assert counts["figure text"] == [(0, 1), (1, 1), (1, 1)]  # the stage ends where it last counted
    assert overall == sorted(overall), "the one progress number never goes back"
    [figure] = app.figures.document_figures("Figures", report.document_id)
    assert figure.label == label and figure.kind == "raster"
    assert "Reclassified" in figure.text  # a word of the picture: the page's text layer has none of it
    assert [hit.figure.id for hit in app.figures.search("Figures", "reclassified")] == [figure.id]
