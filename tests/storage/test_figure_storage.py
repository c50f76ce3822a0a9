"""Figures in a real catalog, SQLite and PostgreSQL (`catalog_store`): stored, read again after reopening, found by
the chunks beside them and by their index terms, replaced as a whole, and gone with their document or workspace
(rows, index rows, thumbnails)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from workspace_app.models.documents import Document, Figure, Rect
from workspace_app.storage.files import LocalThumbnailStore
from workspace_app.text.analyzer import index_text, query_terms


def document(workspace_id: str, name: str) -> Document:
    return Document(
        id=f"doc{name}", workspace_id=workspace_id, name=f"{name}.pdf", sha256=name * 8, size_bytes=10, pages=3,
        chunks=0, status="ready", stage="ready", progress=1.0, error=None, added_at="2026-11-27T21:00:00",
    )


def figure(document_id: str, ordinal: int, label: str, caption: str, chunk_ids: tuple[str, ...]) -> Figure:
    return Figure(
        id=f"{document_id}-fig{ordinal:03d}", document_id=document_id, ordinal=ordinal,
        rect=Rect(2, 50.0, 100.0, 300.5, 400.25), label=label, caption=caption, text="Boxes and arrows",
        kind="vector", chunk_ids=chunk_ids, thumbnail=f"{document_id}-fig{ordinal:03d}.png",
    )


def terms(item: Figure) -> tuple[str, str]:
    return index_text(f"{item.label} {item.caption}"), index_text(item.text)


@pytest.fixture
def catalog(catalog_store: Any) -> Any:
    made = catalog_store.open()
    workspace = made.create_workspace("Cardiology")
    made.add_document(document(workspace.id, "a"))
    made.add_document(document(workspace.id, "b"))
    return made


def test_figures_are_stored_reread_searched_and_replaced(catalog: Any, catalog_store: Any) -> None:
    ws = catalog.find_workspace("Cardiology")
    assert ws is not None
    first = figure("doca", 0, "Figure 1", "Syncope Evaluation Algorithm", ("doca-00003", "doca-00004"))
    second = figure("doca", 1, "Figure 2", "Risk Chart of Statin Therapy", ("doca-00007",))
    catalog.figures.replace_figures("doca", ws.id, [first, second], [terms(first), terms(second)])
    reopened = catalog_store.open()
    assert reopened.figures.document_figures("doca") == [first, second]
    assert reopened.figures.get_figures([second.id, "nothing"]) == {second.id: second}
    assert reopened.figures.figures_beside(["doca-00007", "doca-00004"]) == [second, first]
    assert reopened.figures.figures_beside(["doca-00001"]) == []
    ranked = reopened.figures.search_figures(ws.id, query_terms("syncope algorithm"), 5, None)
    assert [figure_id for figure_id, _ in ranked] == [first.id]
    assert reopened.figures.search_figures(ws.id, query_terms("statin"), 5, ["docb"]) == []
    reopened.figures.replace_figures("doca", ws.id, [second], [terms(second)])
    assert reopened.figures.document_figures("doca") == [second]
    assert reopened.figures.search_figures(ws.id, query_terms("algorithm"), 5, None) == []  # its index rows went with it


def test_removing_a_document_or_workspace_removes_its_figures(catalog: Any, catalog_store: Any) -> None:
    ws = catalog.find_workspace("Cardiology")
    assert ws is not None
    for name in ("a", "b"):
        item = figure(f"doc{name}", 0, "Figure 1", f"Algorithm {name}", ())
        catalog.figures.replace_figures(f"doc{name}", ws.id, [item], [terms(item)])
    catalog.delete_document("doca")
    assert catalog.figures.document_figures("doca") == []
    assert [f for f, _ in catalog.figures.search_figures(ws.id, query_terms("algorithm"), 5, None)] == ["docb-fig000"]
    catalog.delete_workspace(ws.id)
    assert catalog.figures.document_figures("docb") == []
    if catalog_store.kind == "sqlite":
        assert catalog_store.scalar("SELECT COUNT(*) FROM figures_fts") == 0
    assert catalog_store.scalar("SELECT COUNT(*) FROM figures") == 0


def test_a_document_removed_while_its_figures_are_found_keeps_none(catalog: Any) -> None:
    ws = catalog.find_workspace("Cardiology")
    assert ws is not None
    catalog.delete_document("doca")
    item = figure("doca", 0, "Figure 1", "Algorithm", ())
    catalog.figures.replace_figures("doca", ws.id, [item], [terms(item)])
    assert catalog.figures.document_figures("doca") == []


def test_thumbnails_are_kept_per_document_and_removed_with_it(tmp_path: Path) -> None:
    store = LocalThumbnailStore(tmp_path / "thumbnails")
    name = store.put_thumbnail("doca", "doca-fig000", b"\x89PNG fake")
    assert store.thumbnail_path("doca", name).read_bytes() == b"\x89PNG fake"
    store.put_thumbnail("docb", "docb-fig000", b"\x89PNG other")
    store.delete_thumbnails("doca")
    assert not store.thumbnail_path("doca", name).exists()
    assert store.thumbnail_path("docb", "docb-fig000.png").is_file()
    with pytest.raises(ValueError):
        store.thumbnail_path("doca", "../escape.png")
