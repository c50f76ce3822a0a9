"""`serve` hands its account settings to the processes it starts (a .env it read is not read by the UI, whose
working directory is the repository), and nothing at all with accounts off."""

from __future__ import annotations

from pathlib import Path

from workspace_app.adapters.supervisor import child_specs
from workspace_app.config import Settings


def specs(tmp_path: Path, enabled: bool) -> dict[str, dict[str, str]]:
    settings = Settings(_env_file=None)  # type: ignore[call-arg]
    settings.accounts.enabled = enabled
    settings.accounts.audit_limit = 77
    made = child_specs(settings, tmp_path, "http://127.0.0.1:1", 8501, "token", api_port=8502)
    return {spec.name: spec.env for spec in made}


def test_with_accounts_on_every_child_gets_the_account_settings(tmp_path: Path) -> None:
    envs = specs(tmp_path, True)
    assert {"api", "ui", "worker"} <= set(envs)
    for name in ("api", "ui", "worker"):
        assert envs[name]["WORKSPACE_ACCOUNTS__ENABLED"] == "true", name
        assert envs[name]["WORKSPACE_ACCOUNTS__AUDIT_LIMIT"] == "77", name


def test_with_accounts_off_no_child_gets_an_account_setting(tmp_path: Path) -> None:
    assert not any(k.startswith("WORKSPACE_ACCOUNTS__") for env in specs(tmp_path, False).values() for k in env)
