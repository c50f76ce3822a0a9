"""The source viewer: a whole document, paged through lazily, with the cited passage highlighted and in view.

    render_citation_viewer(app, workspace, citation, marks, key=...)  beside an answer (Chat, Notes)
    render_source_preview(app, workspace, documents, key=...)         any source (Sources page)

Only the pages in view are drawn (1, or 2 when the passage runs onto the next page), each once per process
(`st.cache_data`), and served by URL from Streamlit's media store: a rerun re-sends a small frame, not a PDF,
and an unchanged frame is not reloaded by the browser. The viewer's column stays in view while the chat scrolls
(`sticky_viewer_style`). A citation of a removed source shows its saved quote and says the source is gone.

Around the frame: the wide or beside layout (`viewer_layout`), the page's words for its text layer
(`page_text`), sharper page images once the frame says its zoom needs them (`page_scale`), and "Save selection"
(to notes, `passage_notes`).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Sequence

import streamlit as st
from streamlit import runtime

from components.account import may
from components.citations import pages_label
from components.page_scale import RenderScales, render_scale, render_sharpener
from components.page_text import PageWord, page_words
from components.passage_notes import render_passage_saver
from components.text import escape_markdown
from components.viewer_html import ShownPage, viewer_html
from components.viewer_layout import PanelLayout, apply_layout, panel_layout, render_layout_switch
from workspace_app.app import Action, App, grading_text
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Citation, SourceUses
from workspace_app.models.documents import Document, PageImage

PageLoader = Callable[[int, float], PageImage]  # (page, pixels per PDF point)
WordLoader = Callable[[int], tuple[PageWord, ...]]
SCALE = 2.0  # pixels per PDF point a page is first drawn at: the default of Settings.ui.viewer_render_scale
DEFAULT_SCALES = RenderScales(SCALE, 4.0)
FRAME_HEIGHT = 760
REMOVED = "This source was removed from the workspace. The quote saved with the answer is shown instead."


def sticky_viewer_style(key: str) -> None:
    """Keep the column holding the viewer `key` in view while the page scrolls (CSS only, no layout change)."""
    st.html(
        f"<style>[data-testid='stColumn']:has(.st-key-{key}){{position:sticky;top:3.75rem;align-self:flex-start;"
        f"max-height:calc(100vh - 4.5rem);overflow-y:auto}}"
        # The frame's height follows the window; its element container must not keep the fixed height.
        f".st-key-{key} iframe{{height:calc(100vh - 20rem)!important;min-height:360px}}"
        f".st-key-{key} .stElementContainer:has(iframe){{height:auto!important;flex:0 0 auto!important}}</style>"
    )


def render_citation_viewer(app: App, workspace: str, citation: Citation | None, marks: Sequence[Citation] = (),
                           *, key: str) -> None:
    """The cited document at the cited page (the answer's other citations marked), or a hint when none is open."""
    layout = panel_layout(app, key)
    with st.container(key=key):
        if citation is None:
            st.info("Click a citation such as [1] to open its source here.", icon=":material/picture_as_pdf:")
            return
        _render_citation_header(citation)
        if citation.level in ("patient", "vocabulary"):
            _render_record_citation(citation)
            return
        document = None
        try:
            document = app.documents.find(workspace, citation.document_id)
        except WorkspaceError as exc:
            st.error(exc.user_message, icon=":material/error:")
            return
        if document is None:
            st.warning(REMOVED, icon=":material/link_off:")
            _render_saved_quote(citation)
            return
        if not has_page_images(document):
            _render_saved_quote(citation)
        others = [m for m in marks if m.document_id == document.id and m.n != citation.n]
        # 'Save selection' makes a note: offered only to a role that may write one.
        saver = (lambda: render_passage_saver(app, workspace, document, frame=f"{key}-doc-frame", key=f"{key}-doc")) \
            if may(app, workspace, Action.EDIT) else None
        render_source_viewer(document, _loader(app, workspace, document), focus=citation, marks=others,
                             file=_file_loader(app, workspace, document), layout=layout,
                             words=_words_loader(app, workspace, document), scales=render_scales(app), key=f"{key}-doc",
                             saver=saver)


def render_source_preview(app: App, workspace: str, documents: Sequence[Document], *, key: str) -> None:
    """Pick any ready source and read it in the viewer (the Sources page's preview)."""
    ready = [d for d in documents if d.status == "ready"]
    if not ready:
        return
    with st.expander("Preview a source", icon=":material/preview:", key=f"{key}-expander"):
        names = {d.id: d.name for d in ready}
        chosen = st.selectbox("Source", list(names), format_func=names.__getitem__, key=f"{key}-pick")
        document = next((d for d in ready if d.id == chosen), None)
        if document is not None:
            render_source_viewer(document, _loader(app, workspace, document), file=_file_loader(app, workspace, document),
                                 words=_words_loader(app, workspace, document), scales=render_scales(app),
                                 key=f"{key}-doc")


def render_source_viewer(document: Document, load_page: PageLoader, *, focus: Citation | None = None,
                         marks: Sequence[Citation] = (), file: Callable[[], bytes] | None = None,
                         layout: PanelLayout | None = None, words: WordLoader | None = None,
                         scales: RenderScales = DEFAULT_SCALES, saver: Callable[[], None] | None = None,
                         key: str) -> None:
    """Pages of one document with paging, jump-to-page, zoom, full screen, a wide mode and 'open full PDF' at the
    page in view; the focus passage in view, the text selectable, the images as sharp as the zoom needs. With a
    `saver` (drawn beside the frame) the frame offers 'Save selection'."""
    if not has_page_images(document):
        st.caption(f"{escape_markdown(document.name)} is a text source: it has no pages to show.")
        return
    page = _current_page(document, focus, key)
    try:
        window = _window(load_page, page, focus, scales.first)
    except WorkspaceError as exc:
        st.error(exc.user_message, icon=":material/error:")
        return
    total = window[0].pages
    if layout is not None:
        apply_layout(layout)
    _render_navigation(document, page, total, file, layout, key)
    shown = [
        ShownPage(image, _media_url(image.png, "image/png", f"{key}-page-{i}"), words(image.page) if words else ())
        for i, image in enumerate(window)
    ]
    where = f"{document.name} · page {page} of {total}"
    with st.container(key=f"{key}-frame"):
        st.iframe(viewer_html(shown, focus, marks, where, document.id, can_save=saver is not None), height=FRAME_HEIGHT)
    if saver is not None:
        saver()
    # Drawn after the frame is sent, so a sharper page never delays the first paint.
    scale = render_scale(scales, key=key)
    sharp = {} if scale <= scales.first else {
        image.page: _media_url(load_page(image.page, scale).png, "image/png", f"{key}-sharp-{i}")
        for i, image in enumerate(window)
    }
    render_sharpener(scales, scale, sharp, frame=f"{key}-frame", key=key)


def _window(load_page: PageLoader, page: int, focus: Citation | None, scale: float) -> list[PageImage]:
    """The pages shown: the page in view, and the next one when the focus passage runs onto it."""
    first = load_page(page, scale)
    window = [first]
    if focus is not None and page == focus.page_start and focus.page_end > page and page < first.pages:
        window.append(load_page(page + 1, scale))
    return window


def render_scales(app: App) -> RenderScales:
    """The settings' first and largest scales for drawing a page."""
    ui = app.settings.ui
    return RenderScales(ui.viewer_render_scale, max(ui.viewer_render_scale, ui.viewer_max_render_scale))


def has_page_images(document: Document) -> bool:
    """Whether the viewer can show pages of this document (PDFs; text and Markdown sources have none)."""
    return document.media_type == "application/pdf"


def _render_citation_header(citation: Citation) -> None:
    facts = [f"**\\[{citation.n}\\] {escape_markdown(citation.document)}**", pages_label(citation)]
    grading = grading_text(citation)
    if grading:
        facts.append(escape_markdown(grading))
    st.markdown(" · ".join(facts))


def _render_record_citation(citation: Citation) -> None:
    """A patient's event or a code's standard definition: what it says, where it comes from, and a link to the
    event on the patient's timeline."""
    st.markdown(f"> {escape_markdown(citation.quote)}")
    if citation.section:
        st.caption(escape_markdown(citation.section))
    if citation.patient_id:
        params = {"patient": citation.patient_id, **({"event": citation.event_id} if citation.event_id else {})}
        st.page_link("pages/patients.py", label="Open on the patient's timeline", icon=":material/timeline:",
                     query_params=params)


def _render_saved_quote(citation: Citation) -> None:
    if citation.section:
        st.caption(escape_markdown(citation.section))
    st.markdown(f"> {escape_markdown(citation.quote)}")


def _current_page(document: Document, focus: Citation | None, key: str) -> int:
    """The page in view: the cited page when a new citation is opened, else where the user paged to."""
    target = (document.id, focus.chunk_id, focus.n, focus.page_start) if focus else (document.id,)
    if st.session_state.get(f"{key}-target") != target:
        st.session_state[f"{key}-target"] = target
        st.session_state[f"{key}-page"] = focus.page_start if focus else 1
    page = max(1, int(st.session_state.get(f"{key}-page", 1)))
    if document.pages:
        page = min(page, document.pages)
    st.session_state[f"{key}-page"] = page
    st.session_state[f"{key}-page-input"] = page
    return page


def _render_navigation(document: Document, page: int, total: int, file: Callable[[], bytes] | None,
                       layout: PanelLayout | None, key: str) -> None:
    with st.container(horizontal=True, vertical_alignment="center", gap="small", key=f"{key}-nav"):
        st.button("", key=f"{key}-prev", icon=":material/chevron_left:", disabled=page <= 1,
                  on_click=_go_to, args=(key, page - 1), help="Previous page")
        st.number_input("Page", min_value=1, max_value=total, step=1, key=f"{key}-page-input",
                        on_change=_typed_page, args=(key,), width=120, label_visibility="collapsed",
                        help="Type a page number to jump to it")
        st.markdown(f"of {total}", width="content")
        st.button("", key=f"{key}-next", icon=":material/chevron_right:", disabled=page >= total,
                  on_click=_go_to, args=(key, page + 1), help="Next page")
        if layout is not None:
            render_layout_switch(layout)
        if file is not None:
            # Browsers' PDF viewers open a file at `#page=N` (RFC 8118), so the full PDF opens where the reader is.
            url = _media_url(file(), "application/pdf", f"{key}-file", file_name=document.name)
            st.link_button("Open full PDF", f"{url}#page={page}", icon=":material/open_in_new:",
                           help=f"The whole file in a new tab, at page {page}")


def _go_to(key: str, page: int) -> None:
    st.session_state[f"{key}-page"] = page


def _typed_page(key: str) -> None:
    st.session_state[f"{key}-page"] = st.session_state.get(f"{key}-page-input") or 1


def _loader(app: App, workspace: str, document: Document) -> PageLoader:
    return lambda page, scale: _page_image(app, workspace, document.id, document.sha256, page, scale)


def _file_loader(app: App, workspace: str, document: Document) -> Callable[[], bytes]:
    return lambda: app.documents.file_bytes(workspace, document.id)


def _words_loader(app: App, workspace: str, document: Document) -> WordLoader:
    return lambda page: page_words(_file_loader(app, workspace, document), document.sha256, page)


@st.cache_data(max_entries=64, show_spinner=False)
def _page_image(_app: App, _workspace: str, document_id: str, sha256: str, page: int, scale: float) -> PageImage:
    # Keyed by content (sha256), so a page is drawn once per process and scale whichever workspace shows it.
    return _app.documents.page_image(_workspace, document_id, page, scale)


def _media_url(data: bytes, mimetype: str, coordinates: str, file_name: str | None = None) -> str:
    """A URL the browser can fetch the bytes from: Streamlit's media store (as st.image uses), else a data URL."""
    if runtime.exists():
        return runtime.get_instance().media_file_mgr.add(data, mimetype, coordinates, file_name=file_name)
    return f"data:{mimetype};base64,{base64.b64encode(data).decode('ascii')}"


def render_removal_warning(name: str, uses: SourceUses) -> None:
    """Say how many chats and notes cite a document about to be removed (nothing when none do)."""
    if not uses.chats and not uses.notes:
        return
    cited_by = " and ".join(part for part in (_count(uses.chats, "chat"), _count(uses.notes, "note")) if part)
    one = uses.chats + uses.notes == 1
    verb, whose = ("cites", "its") if one else ("cite", "their")
    st.warning(
        f"{cited_by} {verb} **{escape_markdown(name)}**. After removal {whose} citations show the saved quotes only.",
        icon=":material/link_off:",
    )


def _count(count: int, noun: str) -> str:
    return "" if not count else f"{count} {noun}" if count == 1 else f"{count} {noun}s"
