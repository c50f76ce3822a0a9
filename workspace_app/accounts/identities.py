"""People an identity provider signs in (OpenID Connect): whether their email domain may sign in, and the user name
their first sign-in gives them. The link itself (issuer + subject -> user) is kept by the catalog's UserStore."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator, Mapping
from typing import Any

from workspace_app.errors import PermissionDeniedError
from workspace_app.models.accounts import Identity

_NOT_NAME = re.compile(r"[^\w.@+-]+")
NAME_CHARS = 64


def identity_from_claims(claims: Mapping[str, Any]) -> Identity:
    """The person an ID token's claims name (`iss`, `sub`, `email`, `name`, `email_verified`; Streamlit's st.user)."""
    verified = claims.get("email_verified")
    return Identity(
        issuer=str(claims.get("iss") or ""), subject=str(claims.get("sub") or ""),
        email=str(claims.get("email") or "").strip(), name=str(claims.get("name") or "").strip(),
        email_verified=verified if isinstance(verified, bool) else None,
    )


def allowed_domains(setting: str) -> list[str]:
    """The email domains of WORKSPACE_ACCOUNTS__OIDC_ALLOWED_DOMAINS, lower-case, without a leading '@'."""
    return [d.strip().lstrip("@").lower().rstrip(".") for d in setting.split(",") if d.strip().strip("@.")]


def check_domain(identity: Identity, domains: list[str]) -> None:
    """Refuse a person whose (verified) email is not in one of the allowed domains; with none listed, allow all."""
    if not domains:
        return
    domain = identity.email.rpartition("@")[2].lower().rstrip(".") if "@" in identity.email else ""
    if domain in domains and identity.email_verified is not False:
        return
    who = identity.email or identity.name or "This account"
    raise PermissionDeniedError(
        f"{who} may not sign in here: only accounts of {', '.join(domains)} may (with a verified email). Sign out and "
        "sign in with such an account, or ask the operator to allow your domain "
        "(WORKSPACE_ACCOUNTS__OIDC_ALLOWED_DOMAINS)."
    )


def user_names(identity: Identity) -> Iterator[str]:
    """User names to try, in order, for a person's first sign-in: their email (or name, or subject) made into a user
    name, then the same with -2, -3... (a local user may already have it: a person never takes over another account)."""
    base = _as_name(identity.email) or _as_name(identity.name) or _as_name(f"user-{identity.subject}") or "user"
    yield base
    for n in range(2, 1000):
        yield f"{base[: NAME_CHARS - len(str(n)) - 1]}-{n}"


def _as_name(text: str) -> str:
    """Text as a user name: runs of characters a name may not have become '.', cut to 64 characters."""
    cleaned = _NOT_NAME.sub(".", unicodedata.normalize("NFC", text.strip())).strip(".")
    return cleaned[:NAME_CHARS]
