"""The identity provider's settings as Streamlit's `st.login` reads them: an `[auth]` section of a secrets file.

Streamlit takes its sign-in configuration only from secrets (`[auth]` in a secrets.toml: redirect_uri, cookie_secret,
client_id, client_secret, server_metadata_url), while ours are WORKSPACE_ACCOUNTS__OIDC_* settings. The UI launcher
(`adapters/ui.py`, which both `serve` and deploy/compose.yaml start) writes them into `<data dir>/run/ui-auth/
secrets.toml`, readable by this user only and replaced whole on every start, and hands that file alone to
`streamlit run --secrets.files` (so a stray `.streamlit/secrets.toml` cannot change who signs in). The secrets are
never logged: only the file's path is.

The cookie secret signs the cookie that keeps a browser signed in: WORKSPACE_ACCOUNTS__OIDC_COOKIE_SECRET, or one made
once and kept in `<data dir>/run/ui-cookie.secret`, so sign-ins survive a restart.
"""

from __future__ import annotations

import json
from pathlib import Path

from workspace_app.adapters.process import private_token, write_private
from workspace_app.config import AccountsSettings, Settings

SECRETS_FILE = "run/ui-auth/secrets.toml"
COOKIE_SECRET_FILE = "run/ui-cookie.secret"


def auth_section(accounts: AccountsSettings, cookie_secret: str) -> dict[str, str]:
    """Streamlit's `[auth]` section for the one (default) provider of the settings."""
    assert accounts.oidc_client_secret is not None, "only for a configured provider (accounts.oidc_configured)"
    return {
        "redirect_uri": accounts.oidc_redirect_uri,
        "cookie_secret": cookie_secret,
        "client_id": accounts.oidc_client_id,
        "client_secret": accounts.oidc_client_secret.get_secret_value(),
        "server_metadata_url": accounts.oidc_metadata_url,
    }


def toml_table(name: str, values: dict[str, str]) -> str:
    """A TOML table of string values (basic strings: JSON's escapes are TOML's, but for DEL, escaped here too)."""
    lines = [f"[{name}]", *(f"{key} = {toml_string(value)}" for key, value in values.items())]
    return "\n".join(lines) + "\n"


def toml_string(value: str) -> str:
    """A TOML basic string."""
    return json.dumps(value, ensure_ascii=False).replace("\x7f", "\\u007f")


def cookie_secret(settings: Settings) -> str:
    """The configured cookie secret, else the data dir's (made once)."""
    configured = settings.accounts.oidc_cookie_secret
    if configured is not None:
        return configured.get_secret_value().strip()
    return private_token(settings.storage.data_dir / COOKIE_SECRET_FILE)


def write_streamlit_secrets(settings: Settings) -> Path | None:
    """Write the `[auth]` secrets file for a UI with accounts on and an identity provider configured (None, and
    no file, otherwise; an old one is removed so a provider taken out of the settings stops signing people in)."""
    path = settings.storage.data_dir / SECRETS_FILE
    if not (settings.accounts.enabled and settings.accounts.oidc_configured):
        path.unlink(missing_ok=True)
        return None
    write_private(path, toml_table("auth", auth_section(settings.accounts, cookie_secret(settings))))
    return path
