"""deploy/ (the team shape) cannot be run here (no Docker), so its consistency with the code is checked: every
WORKSPACE_* variable it sets is a setting and its value is valid, every command it runs is one the CLI parses (or a
module that exists), every variable it reads is in deploy/.env.example, and the Dockerfile copies what exists."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from workspace_app.adapters.cli import build_parser
from workspace_app.config import Settings, load_settings

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
SHORT_FORMS = {"WORKSPACE_DATA_DIR", "WORKSPACE_CHROMA_URL"}
VARIABLE = re.compile(r"\$\{(\w+)(?::?[-?]([^}]*))?\}")


def compose() -> dict[str, Any]:
    return yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))  # merge keys (<<) resolved


def env_example() -> dict[str, str]:
    pairs = {}
    for line in (DEPLOY / ".env.example").read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            name, _, value = line.partition("=")
            pairs[name.strip()] = value.strip()
    return pairs


def substituted(value: str, env: dict[str, str]) -> str:
    """A compose value with ${NAME}, ${NAME:-default} and ${NAME:?message} replaced as compose would."""

    def one(match: re.Match[str]) -> str:
        name, rest = match.group(1), match.group(2)
        if env.get(name):
            return env[name]
        if name not in env and "?" in match.group(0):
            raise AssertionError(f"{name} is required by deploy/compose.yaml but not in deploy/.env.example")
        return rest if rest is not None and ":-" in match.group(0) else ""

    return VARIABLE.sub(one, value)


def setting_names() -> set[str]:
    names = set(SHORT_FORMS)
    for group, field in Settings.model_fields.items():
        model = field.annotation
        assert isinstance(model, type)
        names.update(f"WORKSPACE_{group}__{name}".upper() for name in model.model_fields)  # type: ignore[attr-defined]
    return names


def app_services() -> dict[str, dict[str, Any]]:
    """The services that run our image (the others are PostgreSQL, Redis and Chroma)."""
    return {name: spec for name, spec in compose()["services"].items() if spec.get("image") == "workspace-app:local"}


def test_the_team_shape_has_every_part() -> None:
    services = compose()["services"]
    assert {"postgres", "redis", "chroma", "api", "ui", "worker"} <= set(services)
    assert set(app_services()) == {"api", "ui", "worker"}
    assert "replicas" in services["worker"]["deploy"]
    published = {name for name, spec in services.items() if spec.get("ports")}
    assert published == {"api", "ui"}, "the stores stay on the compose network"


def test_every_workspace_variable_is_a_setting() -> None:
    known = setting_names()
    used = set(env_example())
    for spec in compose()["services"].values():
        used.update((spec.get("environment") or {}).keys())
    unknown = sorted(name for name in used if name.startswith("WORKSPACE_") and name not in known)
    assert unknown == [], f"deploy/ sets variables Settings does not have: {unknown}"


def test_every_variable_compose_reads_is_in_the_env_example() -> None:
    text = (DEPLOY / "compose.yaml").read_text(encoding="utf-8")
    read = {match.group(1) for match in VARIABLE.finditer(text)}
    assert read - set(env_example()) == set(), "add them to deploy/.env.example"


@pytest.mark.parametrize("service", ["api", "ui", "worker"])
def test_each_app_service_s_settings_load_and_describe_the_team_shape(
    service: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    example = env_example()
    environment = app_services()[service]["environment"]
    for name, value in environment.items():
        monkeypatch.setenv(name, substituted(str(value), example))
    settings = load_settings()  # a WorkspaceError naming the variable when a value is not valid
    assert settings.catalog.url.startswith("postgresql://workspace:") and "@postgres:5432/" in settings.catalog.url
    assert settings.queue.backend == "redis" and settings.storage.chroma_url == "http://chroma:8000"
    assert settings.shared_dir == Path("/shared") and settings.storage.data_dir == Path("/data")
    mounts = app_services()[service]["volumes"]
    assert f"shared:{settings.shared_dir}" in mounts, "the shared dir is the shared volume"


@pytest.mark.parametrize("service", ["api", "ui", "worker"])
def test_each_app_service_runs_a_command_that_exists(service: str) -> None:
    spec = app_services()[service]
    argv = [substituted(str(part), env_example()) for part in spec["command"]]
    if argv[0] == "workspace-app":
        args = build_parser().parse_args(argv[1:])  # SystemExit (a test error) when the CLI does not know it
        assert args.command == service
        if "--host" in argv and argv[argv.index("--host") + 1] not in ("127.0.0.1", "localhost"):
            assert "WORKSPACE_API__KEYS" in spec["environment"], "an exposed API refuses to start without keys"
        return
    assert argv[:2] == ["python", "-m"]
    assert importlib.util.find_spec(argv[2]) is not None, f"no module {argv[2]}"
    assert (ROOT / argv[3]).is_file(), f"the UI script {argv[3]} is not in the repository"
    assert "--server.address=0.0.0.0" in argv and "WORKSPACE_UI__PASSWORD" in spec["environment"], (
        "a UI other machines reach needs its password"
    )


def test_the_dockerfile_copies_what_exists() -> None:
    copied = re.findall(r"^COPY (.+) \S+$", (DEPLOY / "Dockerfile").read_text(encoding="utf-8"), re.MULTILINE)
    sources = [name for line in copied for name in line.split()]
    assert sources and all((ROOT / name).exists() for name in sources), sources
    build = compose()["services"]["api"]["build"]
    assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == (DEPLOY / "Dockerfile").resolve()


def test_the_object_store_is_optional_and_its_settings_load_when_pointed_at_the_minio_service(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    services = compose()["services"]
    assert all(services[name]["profiles"] == ["s3"] for name in ("minio", "minio-bucket")), "off unless asked for"
    example = env_example()
    assert example["WORKSPACE_SHARED__S3_URL"] == "", "the example keeps the files on the shared volume"
    minio = {
        **example, "WORKSPACE_SHARED__S3_URL": "s3://workspace", "WORKSPACE_SHARED__S3_ENDPOINT_URL": "http://minio:9000",
        "WORKSPACE_SHARED__S3_ACCESS_KEY_ID": example["MINIO_ROOT_USER"],
        "WORKSPACE_SHARED__S3_SECRET_ACCESS_KEY": example["MINIO_ROOT_PASSWORD"],
    }
    for chosen, expected_url in ((example, ""), (minio, "s3://workspace")):
        for name, value in app_services()["worker"]["environment"].items():
            monkeypatch.setenv(name, substituted(str(value), chosen))
        shared = load_settings().shared
        assert shared.s3_url == expected_url
        assert (shared.s3_access_key_id is None) == (expected_url == ""), "an empty key is no key"
    bucket = services["minio-bucket"]["command"][0]
    assert "mc mb --ignore-existing store/workspace" in bucket, "the bucket of the example's s3://workspace"
