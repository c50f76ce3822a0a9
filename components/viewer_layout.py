"""Where the source viewer sits: beside the chat (its page column), or wide, over most of the screen.

In a half-screen panel at 1366x768 (~420 px) a page fitted to the width draws an 8-point table at 6 px: too small
to read. So below `ui.viewer_wide_below` pixels of window width the viewer opens wide unless the reader docked it
beside; above, it opens beside unless the reader widened it. The window's width is known only to the browser, so
the default is a CSS media query and the switch offers whichever mode is not in effect. Wide is CSS over the
viewer's own container (fixed to the right of the window): nothing else on the page moves.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from workspace_app.app import App

SIDEBAR_PX = 300  # Streamlit's default sidebar width


@dataclass(frozen=True)
class PanelLayout:
    """The viewer container `key`, whether the reader chose wide (None: not chosen), and the settings' widths."""

    key: str
    wide: bool | None
    wide_below: int
    wide_share: int


def panel_layout(app: App, key: str) -> PanelLayout:
    """The layout of the viewer `key`: the reader's choice, else the settings' default."""
    ui = app.settings.ui
    return PanelLayout(key, st.session_state.get(f"{key}-wide"), ui.viewer_wide_below, ui.viewer_wide_share)


def apply_layout(layout: PanelLayout) -> None:
    """Style the viewer's container for its layout (only while it shows a document: a hint needs no room)."""
    css = layout_css(layout)
    if css:
        st.html(f"<style>{css}</style>")


def layout_css(layout: PanelLayout) -> str:
    """The CSS of the chosen layout: wide always, never, or below the settings' window width (with the switch
    showing the mode not in effect)."""
    wide, on, off = _wide_css(layout), f".st-key-{layout.key}-wide-on", f".st-key-{layout.key}-wide-off"
    if layout.wide is True:
        return wide
    if layout.wide is False or layout.wide_below <= 0:
        return ""
    narrow, broad = f"(max-width:{layout.wide_below - 1}px)", f"(min-width:{layout.wide_below}px)"
    return f"@media {narrow}{{{wide}{on}{{display:none}}}}@media {broad}{{{off}{{display:none}}}}"


def _wide_css(layout: PanelLayout) -> str:
    """The viewer's container fixed over the right `wide_share` % of the window, under the app's header; its frame
    as tall as the window allows."""
    box = f".st-key-{layout.key}"
    return (
        f"{box}{{position:fixed;top:3.75rem;right:.5rem;bottom:.5rem;width:min({layout.wide_share}vw,calc(100vw - 1rem));"
        "z-index:1000000;background:#fff;padding:.5rem .75rem;border-radius:.5rem;overflow:auto;"
        "box-shadow:0 6px 28px rgba(0,0,0,.28)}"
        f"{box} iframe{{height:calc(100vh - 11.5rem)!important;min-height:320px}}"
        # The open sidebar stays above the main area whatever the z-index: the panel ends at its edge.
        f"body:has(section[data-testid=stSidebar][data-collapsed=false]) {box}"
        f"{{width:min({layout.wide_share}vw,calc(100vw - {SIDEBAR_PX}px - 1.25rem))}}"
        # So does the chat's question box at the bottom: the panel ends above it.
        f"body:has([data-testid=stBottom] [data-testid=stChatInput]) {box}{{bottom:6.5rem}}"
        f"body:has([data-testid=stBottom] [data-testid=stChatInput]) {box} iframe{{height:calc(100vh - 17.5rem)!important}}"
    )


def render_layout_switch(layout: PanelLayout) -> None:
    """'Wide' and/or 'Beside': the mode not in effect (both when the window's width decides; CSS hides one)."""
    # Icons only: the navigation row must stay one line in a ~450 px panel (a second line pushes the page down).
    if layout.wide is not True:
        st.button("", key=f"{layout.key}-wide-on", icon=":material/open_in_full:", on_click=_choose,
                  args=(layout.key, True), help="Wide: the viewer over most of the screen")
    if layout.wide is not False and (layout.wide is True or layout.wide_below > 0):
        st.button("", key=f"{layout.key}-wide-off", icon=":material/close_fullscreen:", on_click=_choose,
                  args=(layout.key, False), help="Beside: the viewer back beside the page")


def _choose(key: str, wide: bool) -> None:
    st.session_state[f"{key}-wide"] = wide
