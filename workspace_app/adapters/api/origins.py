"""Which sites may use the API from a browser: the `Host` allow-list (against DNS rebinding) and the `Origin` check
of state-changing requests (against cross-site writes from any page the user visits).

    Host     one of `allowed_hosts` (loopback names, the `--host` address, WORKSPACE_API__ALLOWED_HOSTS), any port;
             anything else, or none, is a 421 `host_not_allowed`
    Origin   on POST, PUT, PATCH and DELETE: absent (curl, SDKs), the API's own origin, or one of
             WORKSPACE_API__CORS_ORIGINS; any other (`null` included) is a 403 `cross_origin`

Both hold with or without keys: a browser on the user's machine reaches a loopback API with no key at all.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from workspace_app.adapters.api.access import ASGIApp, Receive, Scope, Send
from workspace_app.adapters.api.errors import error_response
from workspace_app.errors import WorkspaceError

WRITES = frozenset({"POST", "PUT", "PATCH", "DELETE"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
Origin = tuple[str, str, int]  # scheme, host name, port


class HostNotAllowedError(WorkspaceError):
    """The request's Host header names a host this API does not answer to."""

    status = 421


class CrossOriginError(WorkspaceError):
    """A web page of another origin sent a request that changes something."""

    status = 403


def host_name(header: str) -> str | None:
    """The lower-case host name of a Host header (`[::1]:8502` -> `::1`), or None when it is not a valid one."""
    try:
        parts = urlsplit(f"//{header}")
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError:
        return None
    if not parts.hostname or parts.username is not None or parts.password is not None or parts.path:
        return None
    return parts.hostname.rstrip(".")


def origin_of(url: str) -> Origin | None:
    """(scheme, host name, port) of an origin or URL, default ports filled in; None when it is not one (`null`)."""
    try:
        parts = urlsplit(url.strip().lower())
        port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    except ValueError:
        return None
    return (parts.scheme, parts.hostname.rstrip("."), port) if parts.scheme and parts.hostname else None


class SameOriginGuard:
    """ASGI middleware: refuse a request whose Host is not allowed (421), or a write whose Origin is neither the
    API's own nor a configured CORS origin (403), before anything else reads it."""

    def __init__(self, app: ASGIApp, hosts: list[str], cors_origins: list[str]) -> None:
        self.app = app
        self.hosts = frozenset(hosts)
        self.origins = {found for found in map(origin_of, cors_origins) if found}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            problem = self.problem(scope)
            if problem is not None:
                await error_response(problem)(scope, receive, send)
                return
        await self.app(scope, receive, send)

    def problem(self, scope: Scope) -> WorkspaceError | None:
        """Why this request is refused, or None."""
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        host = headers.get("host", "")
        if host_name(host) not in self.hosts:
            return HostNotAllowedError(
                f"This API does not answer to the host name {host[:100]!r} (a guard against DNS rebinding). Call it "
                "as localhost or 127.0.0.1, or add the name to WORKSPACE_API__ALLOWED_HOSTS."
            )
        origin = headers.get("origin")
        if scope["method"] not in WRITES or origin is None:
            return None
        presented, own = origin_of(origin), origin_of(f"{scope.get('scheme', 'http')}://{host}")
        if presented is not None and (presented == own or presented in self.origins):
            return None
        return CrossOriginError(
            f"A web page at {origin[:100]!r} may not change anything here (requests from other sites are refused). "
            "Call the API from a program (no Origin header) or from its own origin, or add the site's origin to "
            "WORKSPACE_API__CORS_ORIGINS."
        )
