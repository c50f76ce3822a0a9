"""The page frame of the source viewer: page images with the citations laid over them, a text layer, zoom, full
screen, scroll to the passage.

Plain HTML + a little JavaScript for `st.iframe`. Text is selectable through a layer of transparent words laid
over each page image (PyMuPDF's word boxes, `components.page_text`) rather than pdf.js: the page is already drawn
on the server, the boxes cost a few kilobytes, and pdf.js would add a 1-3 MB bundle to serve offline.

The frame scrolls only itself (`window.scrollTo` inside the frame, never `scrollIntoView`, which also scrolls
every ancestor: the chat would jump). Highlights are boxes positioned in percent of the page, so they sit right at
every zoom and before the image has loaded. Every text shown here is HTML-escaped; the words reach the text layer
as JSON with '<' and '>' escaped and become text nodes.
"""

from __future__ import annotations

import html
import json
from collections.abc import Sequence
from dataclasses import dataclass

from components.page_text import PageWord
from workspace_app.models.answers import Citation
from workspace_app.models.documents import PageImage, Rect


@dataclass(frozen=True)
class ShownPage:
    """A page of the window, the URL its image is served at and its words (the text layer)."""

    image: PageImage
    url: str
    words: tuple[PageWord, ...] = ()


_STYLE = """
:root{--zoom:1}
body{margin:0;background:#e9ebef;font:13px/1.3 system-ui,sans-serif;color:#222}
.bar{position:fixed;top:0;left:0;right:0;z-index:5;display:flex;flex-wrap:wrap;gap:6px;align-items:center;
 padding:4px 8px;background:#fff;border-bottom:1px solid #d6d8dc;white-space:nowrap}
.bar button{font:inherit;padding:2px 8px;border:1px solid #c5c8ce;border-radius:6px;background:#fff;cursor:pointer;
 flex:0 0 auto}
.bar .where{flex:1 1 0;min-width:0;text-align:right;overflow:hidden;text-overflow:ellipsis;color:#555}
.pages{padding:40px 8px 8px;width:calc(var(--zoom) * 100% - 16px)}
.page{position:relative;margin:0 0 10px;background:#fff;box-shadow:0 1px 3px rgba(0,0,0,.3);width:100%}
.page img{width:100%;height:100%;display:block;user-select:none}
.page .no{position:absolute;right:6px;bottom:4px;color:#888;font-size:11px}
.box{position:absolute;box-sizing:border-box;pointer-events:none}
.chunk{border:2px solid rgba(217,119,6,.85);border-radius:3px}
.quote{background:rgba(220,38,38,.16);border-bottom:2px solid #dc2626}
.mark{border:2px solid #2563eb;background:rgba(37,99,235,.07)}
.mark.first::before{content:attr(data-n);position:absolute;left:-2px;top:-15px;padding:0 3px;border-radius:3px;
 background:#2563eb;color:#fff;font:bold 11px/14px system-ui,sans-serif}
.text{position:absolute;inset:0;line-height:1;z-index:2}
.text span{position:absolute;white-space:pre;color:transparent;font-family:sans-serif;transform-origin:0 0}
.text span::selection{background:rgba(37,99,235,.35);color:transparent}
"""

# A citation and every page open fitted to the panel's width (the page's right edge never cut off); a zoom the
# reader chose stays while they page through the same document. Zoom stays within the frame: no round trip.
# The text layer (each word's box and font size, in points) is laid out here so a page's words cost a few bytes.
_SCRIPT = """
(function(){
const body=document.body,focus=body.dataset.focus,doc=body.dataset.doc;
const passage=Array.from(document.querySelectorAll('.chunk'));
function passageZoom(){if(!passage.length)return 1;
 const lefts=passage.map(function(b){return parseFloat(b.style.left);});
 const rights=passage.map(function(b){return parseFloat(b.style.left)+parseFloat(b.style.width);});
 return Math.min(4,Math.max(1,92/Math.max(Math.max.apply(null,rights)-Math.min.apply(null,lefts),1)));}
function kept(){try{return JSON.parse(sessionStorage.getItem('viewer-zoom')||'null');}catch(e){return null;}}
function keep(user){try{sessionStorage.setItem('viewer-zoom',JSON.stringify({doc:doc,zoom:zoom,user:user}));}catch(e){}}
const last=kept();
let zoom=last&&last.user&&last.doc===doc?last.zoom:1,user=!!(last&&last.user&&last.doc===doc);
const label=document.getElementById('zoom-label');
function scalePages(){document.querySelectorAll('.page').forEach(function(p){
 p.style.setProperty('--k',p.getBoundingClientRect().width/parseFloat(p.dataset.w));});}
function apply(){zoom=Math.min(4,Math.max(0.5,zoom));document.documentElement.style.setProperty('--zoom',zoom);
 label.textContent=user?Math.round(zoom*100)+'%':'Fit';scalePages();keep(user);report();}
// The scale the page images need to stay sharp (screen pixels per PDF point), for the viewer's sharpener.
function report(){const p=document.querySelector('.page');if(!p)return;
 body.dataset.need=p.getBoundingClientRect().width*(window.devicePixelRatio||1)/parseFloat(p.dataset.w);
 try{window.parent.dispatchEvent(new window.parent.CustomEvent('viewer-scale',
  {detail:{frame:window.frameElement,need:parseFloat(body.dataset.need)}}));}catch(e){}}
function target(){return document.querySelector('.quote')||document.querySelector('.chunk')||document.querySelector('.page');}
function reveal(){const t=target();if(!t)return;const r=t.getBoundingClientRect();const bar=barHeight();
 const boxes=passage.length?passage.map(function(b){return b.getBoundingClientRect();}):[r];
 const left=Math.min.apply(null,boxes.map(function(b){return b.left;}));
 const right=Math.max.apply(null,boxes.map(function(b){return b.right;}));
 const width=document.documentElement.clientWidth,height=document.documentElement.clientHeight;
 window.scrollTo({top:window.scrollY+r.top-bar-Math.max(0,(height-bar-r.height)/3),
  left:user?window.scrollX+left-Math.max(8,(width-(right-left))/2):0,behavior:'instant'});}
function barHeight(){return document.querySelector('.bar').getBoundingClientRect().height;}
function clearOfBar(){document.querySelector('.pages').style.paddingTop=(barHeight()+6)+'px';}
function setZoom(z,byUser){zoom=z;user=byUser;apply();reveal();}
document.getElementById('zoom-in').onclick=function(){setZoom(zoom*1.25,true);};
document.getElementById('zoom-out').onclick=function(){setZoom(zoom/1.25,true);};
document.getElementById('zoom-fit').onclick=function(){setZoom(1,false);};
document.getElementById('zoom-passage').onclick=function(){setZoom(passageZoom(),true);};
// Full screen takes the frame itself (the parent document is the same origin); Esc or the button leaves it.
document.getElementById('full-screen').onclick=function(){
 const top=window.frameElement?window.parent.document:document;
 if(top.fullscreenElement){top.exitFullscreen();return;}
 (window.frameElement||document.documentElement).requestFullscreen().catch(function(){});};
// 'Save selection': the selected text, its page and its boxes in PDF points, to the viewer's saver in the app.
const save=document.getElementById('save-selection');
if(save)save.onmousedown=function(e){e.preventDefault();};  // keep the selection while the button is pressed
if(save)save.onclick=function(){const sel=getSelection(),text=sel.toString().trim();
 const start=sel.rangeCount?sel.getRangeAt(0).startContainer:null;
 const el=start&&(start.nodeType===1?start:start.parentElement),page=el&&el.closest('.page');
 if(!text||!page){save.textContent='Select text first';setTimeout(function(){save.textContent='Save selection';},2500);return;}
 const box=page.getBoundingClientRect(),w=parseFloat(page.dataset.w),h=parseFloat(page.dataset.h);
 const rects=Array.from(sel.getRangeAt(0).getClientRects()).filter(function(r){
  return r.width>0&&r.left<box.right&&r.top<box.bottom&&r.bottom>box.top;}).map(function(r){
  return [(r.left-box.left)/box.width*w,(r.top-box.top)/box.height*h,(r.right-box.left)/box.width*w,
   (r.bottom-box.top)/box.height*h];});
 try{window.parent.dispatchEvent(new window.parent.CustomEvent('viewer-save',{detail:{frame:window.frameElement,
  text:text,page:parseInt(page.dataset.page,10),rects:rects}}));}catch(e){}};
document.querySelectorAll('script.words').forEach(function(data){
 const page=data.closest('.page'),w=parseFloat(page.dataset.w),h=parseFloat(page.dataset.h);
 const layer=document.createElement('div');layer.className='text';
 JSON.parse(data.textContent).forEach(function(t){const s=document.createElement('span');
  s.textContent=t[4]+(t[6]?'\\n':' ');s.style.left=(100*t[0]/w)+'%';s.style.top=(100*t[1]/h)+'%';
  s.style.fontSize='calc(var(--k) * '+t[5]+'px)';s.dataset.w=t[2]-t[0];layer.appendChild(s);});
 page.appendChild(layer);});
window.addEventListener('resize',function(){clearOfBar();scalePages();report();});
clearOfBar();apply();reveal();
const t=target();const page=t&&t.closest('.page');const img=page&&page.querySelector('img');
const loaded=!img||img.complete?Promise.resolve():new Promise(function(ok){img.onload=ok;img.onerror=ok;});
loaded.then(function(){return img&&img.decode?img.decode().catch(function(){}):null;}).then(function(){
 requestAnimationFrame(function(){reveal();requestAnimationFrame(function(){body.dataset.painted='1';});});});
})();
"""


def viewer_html(pages: Sequence[ShownPage], focus: Citation | None, marks: Sequence[Citation], where: str,
                document_id: str = "", can_save: bool = False) -> str:
    """The frame's document: a zoom bar, the pages with their text layers, the focused citation's outline and red
    sentence, and the other citations' marks. `document_id` lets a zoom the reader chose stay on the next page;
    `can_save` offers 'Save selection' (a passage saver listens beside the frame)."""
    body = "".join(_page_html(shown, focus, marks) for shown in pages)
    focus_id = f"{focus.chunk_id}-{focus.n}" if focus else ""
    save = ("<button id='save-selection' title='Keep the text selected in the page as a note citing it'>"
            "Save selection</button>") if can_save else ""
    return (
        f"<!doctype html><html><head><meta charset='utf-8'><style>{_STYLE}</style></head>"
        f"<body data-painted='0' data-focus='{html.escape(focus_id, quote=True)}' "
        f"data-doc='{html.escape(document_id, quote=True)}'><div class='bar'>"
        "<button id='zoom-out' title='Zoom out'>−</button><span id='zoom-label'>Fit</span>"
        "<button id='zoom-in' title='Zoom in'>+</button>"
        "<button id='zoom-fit' title='Fit the page&#39;s width to the panel'>Width</button>"
        "<button id='zoom-passage' title='The cited passage across the panel'>Passage</button>"
        f"<button id='full-screen' title='The viewer over the whole screen (Esc leaves it)'>Full screen</button>{save}"
        f"<span class='where' title='{html.escape(where, quote=True)}'>{html.escape(where)}</span></div>"
        f"<div class='pages'>{body}</div><script>{_SCRIPT}</script></body></html>"
    )


def _page_html(shown: ShownPage, focus: Citation | None, marks: Sequence[Citation]) -> str:
    image = shown.image
    boxes: list[str] = []
    if focus is not None:
        outline = passage_outline(focus.chunk_rects, image.page)
        boxes += [_box(outline, image, "chunk", f"chunk-{focus.n}-0")] if outline else []
        boxes += [_box(r, image, "quote", f"quote-{focus.n}-{i}") for i, r in enumerate(focus.rects)]
    for mark in marks:
        on_page = [r for r in mark.rects if r.page == image.page]
        boxes += [
            _box(r, image, "mark first" if i == 0 else "mark", f"mark-{mark.n}-{i}", f"[{mark.n}]")
            for i, r in enumerate(on_page)
        ]
    return (
        f"<div class='page' data-page='{image.page}' data-w='{image.width:.2f}' data-h='{image.height:.2f}' "
        f"style='aspect-ratio:{image.width:.2f}/{image.height:.2f}'>"
        f"<img src='{html.escape(shown.url, quote=True)}' alt='Page {image.page} of {image.pages}'>"
        f"{''.join(b for b in boxes if b)}<span class='no'>{image.page} / {image.pages}</span>"
        f"{_words_json(shown.words)}</div>"
    )


def passage_outline(rects: Sequence[Rect], page: int) -> Rect | None:
    """The one rectangle around a passage's lines on a page (an outline per line hid dense text), or None."""
    on_page = [r for r in rects if r.page == page]
    if not on_page:
        return None
    return Rect(page, min(r.x0 for r in on_page), min(r.y0 for r in on_page), max(r.x1 for r in on_page),
                max(r.y1 for r in on_page))


def _words_json(words: Sequence[PageWord]) -> str:
    """The page's words for the text layer, as JSON the script lays out; '<' is escaped so no document text can
    close the script element (the words reach the page as text nodes, never as HTML)."""
    if not words:
        return ""
    rows = [[round(w.x0, 1), round(w.y0, 1), round(w.x1, 1), round(w.y1, 1), w.text, round(w.size, 1), int(w.line_end)]
            for w in words]
    data = json.dumps(rows, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c").replace(">", "\\u003e")
    return f"<script type='application/json' class='words'>{data}</script>"


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
