"""The API's one error shape, `{"error": {"code", "message"}}`, and the handlers that produce it.

Our `WorkspaceError`s carry their HTTP status and a message meant for users; the code is the class name in
snake case without `_error` (`WorkspaceNotFoundError` -> `workspace_not_found`). Request validation, unknown
routes and anything unexpected are mapped to the same shape, so a client handles one kind of error body.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException

from workspace_app.errors import WorkspaceError

log = logging.getLogger("workspace_app.api")

_HTTP_CODES = {
    400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found", 405: "method_not_allowed",
    409: "conflict", 413: "too_large", 415: "unsupported_media_type", 422: "invalid_request", 429: "too_busy", 503: "unavailable",
}


class ApiKeyError(WorkspaceError):
    """The request carries no API key, or one that is not configured."""

    status = 401


class BodyTooLargeError(WorkspaceError):
    """The request body is larger than the API accepts."""

    status = 413


class TooBusyError(WorkspaceError):
    """Every place for questions and the queue before them are taken (429), or an ask waited its longest for a
    place (503): try again after `Retry-After`."""

    status = 429
    retryable = True

    def __init__(self, user_message: str, status: int = 429) -> None:
        super().__init__(user_message)
        self.status = status


def error_body(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The one error shape of every API response that is not a success."""
    return {"error": {"code": code, "message": message}, **extra}


def error_code(exc: WorkspaceError) -> str:
    """`WorkspaceNotFoundError` -> `workspace_not_found`; the root class (a plain bad request) -> `bad_request`."""
    if type(exc) is WorkspaceError:
        return "bad_request"
    name = re.sub(r"Error$", "", type(exc).__name__)
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def error_response(exc: WorkspaceError, **extra: Any) -> JSONResponse:
    """The JSON response of one of our errors, with its status."""
    headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, ApiKeyError) else None
    return JSONResponse(error_body(error_code(exc), exc.user_message, **extra), exc.status, headers=headers)


def validation_message(exc: RequestValidationError) -> tuple[int, str]:
    """(status, message) of a body or parameter that failed validation: 400 for a body that is not JSON at all,
    422 naming each field otherwise."""
    problems = []
    for error in exc.errors():
        if error.get("type") == "json_invalid":
            return 400, f"The request body is not valid JSON ({error.get('ctx', {}).get('error', 'parse error')})."
        where = ".".join(str(part) for part in error.get("loc", ()) if part != "body") or "body"
        problems.append(f"{where}: {error.get('msg', 'invalid')}")
    return 422, "Invalid request: " + "; ".join(problems) + "."


def not_utf8_message(exc: UnicodeDecodeError) -> str:
    """The message of a JSON body that is not UTF-8 (worded like one that does not parse: both are invalid_json)."""
    return (f"The request body is not valid JSON (byte 0x{exc.object[exc.start]:02x} at position {exc.start} is not "
            "UTF-8). Send the JSON encoded as UTF-8.")


def install_error_handlers(api: FastAPI) -> None:
    """Map our errors, validation errors, HTTP errors and unexpected ones to the error shape."""

    @api.exception_handler(WorkspaceError)
    async def workspace_error(request: Request, exc: WorkspaceError) -> JSONResponse:
        return error_response(exc)

    @api.exception_handler(RequestValidationError)
    async def invalid_request(request: Request, exc: RequestValidationError) -> JSONResponse:
        status, message = validation_message(exc)
        return JSONResponse(error_body("invalid_json" if status == 400 else "invalid_request", message), status)

    @api.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> JSONResponse:
        if isinstance(exc.__cause__, UnicodeDecodeError):  # FastAPI's 400 for a JSON body that is not UTF-8
            return JSONResponse(error_body("invalid_json", not_utf8_message(exc.__cause__)), 400)
        message = exc.detail if isinstance(exc.detail, str) else "The request failed."
        if exc.status_code == 404 and message == "Not Found":
            message = f"There is no route {request.method} {request.url.path}; see /docs."
        code = _HTTP_CODES.get(exc.status_code, "error")
        return JSONResponse(error_body(code, message), exc.status_code, headers=getattr(exc, "headers", None))

    @api.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return JSONResponse(error_body("internal_error", "Something went wrong; the API's log has the details."), 500)
