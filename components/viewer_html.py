"""The page frame of the source viewer: page images with the citations laid over them, zoom, scroll to the passage.

Plain HTML + a little JavaScript for `st.iframe`. The frame scrolls only itself (`window.scrollTo` inside the
frame, never `scrollIntoView`, which also scrolls every ancestor: the chat would jump). Highlights are boxes
positioned in percent of the page, so they sit right at every zoom and before the image has loaded.
Every text shown here is HTML-escaped.
"""

from __future__ import annotations

import html
from collections.abc import Sequence
from dataclasses import dataclass

from workspace_app.models.answers import Citation
from workspace_app.models.documents import PageImage, Rect


@dataclass(frozen=True)
class ShownPage:
    """A page of the window and the URL its image is served at."""

    image: PageImage
    url: str


_STYLE = """
:root{--zoom:1}
body{margin:0;background:#e9ebef;font:13px/1.3 system-ui,sans-serif;color:#222}
.bar{position:fixed;top:0;left:0;right:0;z-index:5;display:flex;gap:6px;align-items:center;padding:4px 8px;
 background:#fff;border-bottom:1px solid #d6d8dc}
.bar button{font:inherit;padding:2px 8px;border:1px solid #c5c8ce;border-radius:6px;background:#fff;cursor:pointer}
.bar .where{margin-left:auto;color:#555}
.pages{padding:40px 8px 8px;width:calc(var(--zoom) * 100% - 16px)}
.page{position:relative;margin:0 0 10px;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.3);width:100%}
.page img{width:100%;height:100%;display:block}
.page .no{position:absolute;right:6px;bottom:4px;color:#888;font-size:11px}
.box{position:absolute;box-sizing:border-box;pointer-events:none}
.chunk{border:2px dotted #d97706}
.quote{border:2px solid #dc2626;background:rgba(220,38,38,.10)}
.mark{border:2px solid #2563eb;background:rgba(37,99,235,.07)}
.mark.first::before{content:attr(data-n);position:absolute;left:-2px;top:-15px;padding:0 3px;border-radius:3px;
 background:#2563eb;color:#fff;font:bold 11px/14px system-ui,sans-serif}
"""

# A citation opens zoomed so the cited passage fills the panel's width (a two-column page is unreadable at
# page width in a half-screen panel); the buttons zoom from there. Zoom stays within the frame: no round trip.
_SCRIPT = """
(function(){
const passage=Array.from(document.querySelectorAll('.chunk,.quote'));
function passageZoom(){if(!passage.length)return 1;
 const lefts=passage.map(function(b){return parseFloat(b.style.left);});
 const rights=passage.map(function(b){return parseFloat(b.style.left)+parseFloat(b.style.width);});
 const span=Math.max.apply(null,rights)-Math.min.apply(null,lefts);
 return Math.min(2.5,Math.max(1,92/Math.max(span,1)));}
const focus=document.body.dataset.focus,doc=document.body.dataset.doc;
function kept(){try{return JSON.parse(sessionStorage.getItem('viewer-zoom')||'null');}catch(e){return null;}}
function keep(){try{sessionStorage.setItem('viewer-zoom',JSON.stringify({doc:doc,focus:focus,zoom:zoom}));}catch(e){}}
// A zoom the reader chose stays while they page through the same document (and its citation stays open);
// a newly opened citation starts with its passage across the panel.
const last=kept();
let zoom=last&&last.doc===doc&&(last.focus===focus||!passage.length)?last.zoom:passageZoom();
const label=document.getElementById('zoom-label');
function apply(){zoom=Math.min(4,Math.max(0.5,zoom));document.documentElement.style.setProperty('--zoom',zoom);
 label.textContent=Math.round(zoom*100)+'%';keep();}
function target(){return document.querySelector('.quote')||document.querySelector('.chunk')||document.querySelector('.page');}
function reveal(){const t=target();if(!t)return;const r=t.getBoundingClientRect();const bar=40;
 const boxes=passage.length?passage.map(function(b){return b.getBoundingClientRect();}):[r];
 const left=Math.min.apply(null,boxes.map(function(b){return b.left;}));
 const right=Math.max.apply(null,boxes.map(function(b){return b.right;}));
 const width=document.documentElement.clientWidth,height=document.documentElement.clientHeight;
 window.scrollTo({top:window.scrollY+r.top-bar-Math.max(0,(height-bar-r.height)/3),
  left:window.scrollX+left-Math.max(8,(width-(right-left))/2),behavior:'instant'});}
document.getElementById('zoom-in').onclick=function(){zoom*=1.25;apply();reveal();};
document.getElementById('zoom-out').onclick=function(){zoom/=1.25;apply();reveal();};
document.getElementById('zoom-fit').onclick=function(){zoom=1;apply();reveal();};
document.getElementById('zoom-passage').onclick=function(){zoom=passageZoom();apply();reveal();};
apply();reveal();
const t=target();const page=t&&t.closest('.page');const img=page&&page.querySelector('img');
const loaded=!img||img.complete?Promise.resolve():new Promise(function(ok){img.onload=ok;img.onerror=ok;});
loaded.then(function(){return img&&img.decode?img.decode().catch(function(){}):null;}).then(function(){
 requestAnimationFrame(function(){reveal();requestAnimationFrame(function(){document.body.dataset.painted='1';});});});
})();
"""


def viewer_html(pages: Sequence[ShownPage], focus: Citation | None, marks: Sequence[Citation], where: str,
                document_id: str = "") -> str:
    """The frame's document: a zoom bar, the pages, the focused citation's boxes and the other citations' marks.
    `document_id` lets a zoom chosen on one page stay on the next."""
    body = "".join(_page_html(shown, focus, marks) for shown in pages)
    focus_id = f"{focus.chunk_id}-{focus.n}" if focus else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{_STYLE}</style></head>"
        f"<body data-painted='0' data-focus='{html.escape(focus_id, quote=True)}' "
        f"data-doc='{html.escape(document_id, quote=True)}'><div class='bar'>"
        "<button id='zoom-out' title='Zoom out'>−</button><span id='zoom-label'>100%</span>"
        "<button id='zoom-in' title='Zoom in'>+</button><button id='zoom-fit' title='The whole page width in the panel'>Page</button>"
        "<button id='zoom-passage' title='The cited passage across the panel'>Passage</button>"
        f"<span class='where'>{html.escape(where)}</span></div><div class='pages'>{body}</div>"
        f"<script>{_SCRIPT}</script></body></html>"
    )


def _page_html(shown: ShownPage, focus: Citation | None, marks: Sequence[Citation]) -> str:
    image = shown.image
    boxes: list[str] = []
    if focus is not None:
        boxes += [_box(r, image, "chunk", f"chunk-{focus.n}-{i}") for i, r in enumerate(focus.chunk_rects)]
        boxes += [_box(r, image, "quote", f"quote-{focus.n}-{i}") for i, r in enumerate(focus.rects)]
    for mark in marks:
        on_page = [r for r in mark.rects if r.page == image.page]
        boxes += [
            _box(r, image, "mark first" if i == 0 else "mark", f"mark-{mark.n}-{i}", f"[{mark.n}]")
            for i, r in enumerate(on_page)
        ]
    return (
        f"<div class='page' data-page='{image.page}' style='aspect-ratio:{image.width:.2f}/{image.height:.2f}'>"
        f"<img src='{html.escape(shown.url, quote=True)}' alt='Page {image.page} of {image.pages}'>"
        f"{''.join(b for b in boxes if b)}<span class='no'>{image.page} / {image.pages}</span></div>"
    )


def _box(rect: Rect, image: PageImage, kind: str, ident: str, label: str = "") -> str:
    if rect.page != image.page or image.width <= 0 or image.height <= 0:
        return ""
    left, top = 100 * rect.x0 / image.width, 100 * rect.y0 / image.height
    width, height = 100 * (rect.x1 - rect.x0) / image.width, 100 * (rect.y1 - rect.y0) / image.height
    # A point of margin around the text so the outline does not cross the glyphs.
    pad_x, pad_y = 100 / image.width, 100 / image.height
    data = f" data-n='{html.escape(label, quote=True)}'" if label else ""
    return (
        f"<div class='box {kind}' id='{ident}'{data} style='left:{left - pad_x:.3f}%;top:{top - pad_y:.3f}%;"
        f"width:{width + 2 * pad_x:.3f}%;height:{height + 2 * pad_y:.3f}%'></div>"
    )
