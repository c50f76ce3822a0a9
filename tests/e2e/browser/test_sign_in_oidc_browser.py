"""Sign-in through an identity provider (issue 30 item 1), in Chromium, against a real OpenID Connect provider on
127.0.0.1 (the `oidc-provider-mock` package: a provider whose sign-in page asks for the subject) and the real UI as
`serve` and deploy/ start it (`python -m workspace_app.adapters.ui app.py`, which writes the [auth] secrets for
st.login from the WORKSPACE_ACCOUNTS__OIDC_* settings). A new person signs in, is made a user and sees no workspace;
the operator shares one with them (the CLI); after a reload they see it; they sign out, of the provider too. Someone
of an email domain not allowed is refused with the reason and may sign out to try another account."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest
from local_process import running
from served import CHROMIUM_ARGS, free_port, require_chromium

from workspace_app.adapters.ui_auth import SECRETS_FILE
from workspace_app.adapters.wiring import open_accounts
from workspace_app.config import Settings
from workspace_app.storage.sqlite.catalog import SqliteCatalog

pytestmark = [pytest.mark.browser, pytest.mark.slow]
REPO = Path(__file__).resolve().parents[3]
CLI = Path(sys.executable).parent / "workspace-app"
LOOPBACK = urllib.request.build_opener(urllib.request.ProxyHandler({}))
STARTUP_S = 120  # the UI answers its health check in ~5 s quiet; on a loaded machine far later
SUBJECT = "alice-7"
EMAIL = "alice@clinic.example.org"
STRANGER = "mallory@elsewhere.example"
CLIENT_SECRET = "client-secret-never-shown"


def answers(url: str) -> bool:
    try:
        with LOOPBACK.open(url, timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def provider() -> tuple[str, list[str]]:
    port = free_port()
    argv = [sys.executable, "-m", "oidc_provider_mock", "--host", "127.0.0.1", "--port", str(port)]
    return f"http://127.0.0.1:{port}", argv


def ui_environ(data: Path, issuer: str) -> dict[str, str]:
    return {
        **os.environ, "WORKSPACE_DATA_DIR": str(data), "WORKSPACE_ACCOUNTS__ENABLED": "true",
        "WORKSPACE_ACCOUNTS__OIDC_METADATA_URL": f"{issuer}/.well-known/openid-configuration",
        "WORKSPACE_ACCOUNTS__OIDC_CLIENT_ID": "workspace", "WORKSPACE_ACCOUNTS__OIDC_CLIENT_SECRET": CLIENT_SECRET,
        "WORKSPACE_ACCOUNTS__OIDC_REDIRECT_URI": "http://127.0.0.1:{port}/oauth2callback",
        "WORKSPACE_ACCOUNTS__OIDC_PROVIDER_NAME": "Clinic ID",
        "WORKSPACE_ACCOUNTS__OIDC_ALLOWED_DOMAINS": "clinic.example.org",
    }


def test_a_new_person_signs_in_through_the_provider_sees_what_is_shared_and_signs_out(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    require_chromium()
    data = tmp_path / "data"
    data.mkdir()
    SqliteCatalog(data / "catalog.sqlite").create_workspace("Ward notes")  # made by the operator: nobody's yet
    issuer, provider_argv = provider()
    ui_port = free_port()
    ui = f"http://127.0.0.1:{ui_port}"
    env = ui_environ(data, issuer)
    ui_argv = [sys.executable, "-m", "workspace_app.adapters.ui", str(REPO / "app.py"), "--server.address",
               "127.0.0.1", "--server.port", str(ui_port), "--server.headless", "true",
               "--browser.gatherUsageStats", "false"]
    with (
        running(provider_argv, lambda: answers(f"{issuer}/.well-known/openid-configuration"), tmp_path / "provider.log",
                "the OpenID provider", STARTUP_S, cwd=REPO),
        running(ui_argv, lambda: answers(f"{ui}/_stcore/health"), tmp_path / "ui.log", "the UI", STARTUP_S, env=env,
                cwd=REPO),
        sync_playwright() as playwright,
    ):
        request = urllib.request.Request(f"{issuer}/users/{quote(SUBJECT)}", method="PUT", headers={
            "Content-Type": "application/json"}, data=json.dumps({"email": EMAIL, "name": "Alice Martin"}).encode())
        assert LOOPBACK.open(request, timeout=10).status == 204  # the claims the provider gives for this subject
        browser = playwright.chromium.launch(executable_path=shutil.which("chromium"), args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(ui)
        sign_in = page.get_by_role("button", name="Sign in with Clinic ID")
        expect(sign_in).to_be_visible(timeout=60_000)
        expect(page.get_by_label("Password")).to_have_count(0)  # the provider only, by default
        sign_in.click()

        page.get_by_placeholder("sub").fill(SUBJECT)  # the provider's own sign-in page
        page.screenshot(path=str(tmp_path / "oidc-provider.png"))
        page.get_by_role("button", name="Authorize").click()

        signed_in_as = page.get_by_text(f"Signed in as {EMAIL}")
        expect(signed_in_as).to_be_visible(timeout=60_000)
        expect(page.get_by_role("heading", name="Workspaces", exact=True)).to_be_visible()
        expect(page.get_by_text("Ward notes")).to_have_count(0)

        shared = subprocess.run(
            [str(CLI), "--data-dir", str(data), "workspace", "share", "Ward notes", EMAIL, "--role", "viewer"],
            check=False, env=env, capture_output=True, text=True, timeout=120,
        )
        assert shared.returncode == 0, shared.stderr
        page.reload()  # a new session: the sign-in cookie says who it is
        expect(signed_in_as).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Ward notes").first).to_be_visible(timeout=30_000)
        page.screenshot(path=str(tmp_path / "oidc-signed-in.png"))

        page.get_by_role("button", name="Sign out").click()
        page.get_by_role("button", name="End session").click()  # the provider asks before it ends its session
        expect(page.get_by_role("button", name="Sign in with Clinic ID")).to_be_visible(timeout=60_000)
        page.reload()
        expect(page.get_by_role("button", name="Sign in with Clinic ID")).to_be_visible(timeout=60_000)
        expect(page.get_by_text("Ward notes")).to_have_count(0)

        page.get_by_role("button", name="Sign in with Clinic ID").click()  # someone of a domain not allowed
        page.get_by_placeholder("sub").fill(STRANGER)  # (the provider gives a new subject's email as the subject)
        page.get_by_role("button", name="Authorize").click()
        expect(page.get_by_text(f"{STRANGER} may not sign in here")).to_be_visible(timeout=60_000)
        page.get_by_role("button", name="Sign out").click()
        page.get_by_role("button", name="End session").click()
        expect(page.get_by_role("button", name="Sign in with Clinic ID")).to_be_visible(timeout=60_000)
        browser.close()

    secrets_file = data / SECRETS_FILE
    assert oct(secrets_file.stat().st_mode & 0o777) == "0o600"
    assert CLIENT_SECRET not in (tmp_path / "ui.log").read_text(), "the client secret is never logged"
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.storage.data_dir, settings.accounts.enabled = data, True
    accounts, catalog = open_accounts(settings)
    try:
        log = [entry.action for entry in accounts.user_audit(None, EMAIL)]
        users = [user.name for user in accounts.list_users()]
    finally:
        catalog.close()
    assert log == ["signed in", "signed in", "signed out"], "each session's sign-in, and the sign-out"
    assert users == [EMAIL], "the person refused was not made a user"
