"""`/docs`: the API's routes as one self-contained HTML page, made from the OpenAPI schema.

FastAPI's own docs page loads Swagger UI from a CDN, which this product must not do (offline by design, see the
README's "Offline"), and no installed package ships Swagger UI's assets. The page lists each route with its
summary, parameters and request body, and links to `/openapi.json` for tools.
"""

from __future__ import annotations

from html import escape
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse

router = APIRouter(include_in_schema=False)
_STYLE = (
    "body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}"
    "code{background:#f3f3f3;padding:0 .2rem}.m{display:inline-block;width:4.5rem;font-weight:bold}"
    "li{margin:.5rem 0}small{color:#555}"
)


def docs_html(schema: dict[str, Any]) -> str:
    """The page: title, version, and one entry per route (method, path, summary, parameters, body)."""
    info = schema.get("info", {})
    items = []
    for path, operations in schema.get("paths", {}).items():
        for method, operation in operations.items():
            items.append(_route_item(method, path, operation))
    return (
        f"<!doctype html><html lang='en'><head><meta charset='utf-8'><title>{escape(info.get('title', 'API'))}"
        f"</title><style>{_STYLE}</style></head><body><h1>{escape(info.get('title', 'API'))} "
        f"<small>{escape(str(info.get('version', '')))}</small></h1>"
        "<p>Every route but <code>/health</code> needs <code>Authorization: Bearer &lt;key&gt;</code> when "
        "<code>WORKSPACE_API__KEYS</code> is set. Machine-readable schema: <a href='/openapi.json'>/openapi.json</a>."
        f"</p><ul>{''.join(items)}</ul></body></html>"
    )


def _route_item(method: str, path: str, operation: dict[str, Any]) -> str:
    parameters = ", ".join(
        f"{p.get('name')}{'' if p.get('required') else '?'} ({p.get('in')})" for p in operation.get("parameters", [])
    )
    content = operation.get("requestBody", {}).get("content", {})
    body = f" · body: {', '.join(content)}" if content else ""
    detail = f"<br><small>{escape(parameters)}{escape(body)}</small>" if parameters or body else ""
    summary = operation.get("description") or operation.get("summary", "")
    return (
        f"<li><span class='m'>{escape(method.upper())}</span><code>{escape(path)}</code> "
        f"{escape(summary.splitlines()[0] if summary else '')}{detail}</li>"
    )


@router.get("/docs", response_class=HTMLResponse)
def docs(request: Request) -> HTMLResponse:
    """The routes as an HTML page with no outside asset."""
    return HTMLResponse(docs_html(request.app.openapi()))
