"""Pages of a stored PDF drawn for the viewer: one page at a time, its size in points, clear errors."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from workspace_app.documents.pages import render_page
from workspace_app.errors import WorkspaceError


def test_a_page_is_drawn_as_a_png_with_its_size_in_points(excerpt: Callable[..., Path]) -> None:
    pdf = excerpt("shen-2017-syncope.pdf", 8, 9)
    image = render_page(pdf, 2, 1.0)
    assert image.png.startswith(b"\x89PNG") and (image.page, image.pages) == (2, 2)
    assert 500 < image.width < 700 and 700 < image.height < 900
    assert len(render_page(pdf, 2, 2.0).png) > len(image.png), "a larger scale draws more pixels"


def test_a_page_outside_the_document_is_a_clear_error(excerpt: Callable[..., Path]) -> None:
    with pytest.raises(WorkspaceError, match="Page 3 does not exist; this source has 2 pages"):
        render_page(excerpt("shen-2017-syncope.pdf", 8, 9), 3, 1.0)
