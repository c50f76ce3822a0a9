"""The README documents every setting: its environment variable, default and description (as datasette's test_docs)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from workspace_app.config import Settings

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
ENV_EXAMPLE = (ROOT / ".env.example").read_text(encoding="utf-8")


def settings_fields() -> list[tuple[str, FieldInfo]]:
    """(environment variable, field) for every field of every settings group."""
    fields = []
    for group_name, group in Settings.model_fields.items():
        model = group.annotation
        assert isinstance(model, type) and issubclass(model, BaseModel), group_name
        for name, field in model.model_fields.items():
            fields.append((f"WORKSPACE_{group_name}__{name}".upper(), field))
    return fields


def readme_rows() -> dict[str, str]:
    """Configuration table rows of the README keyed by the variable in their first cell."""
    rows = {}
    for line in README.splitlines():
        match = re.match(r"\|\s*`(WORKSPACE_[A-Z_]+)`\s*\|", line)
        if match:
            rows[match.group(1)] = line
    return rows


def default_text(default: Any) -> str:
    """How the README's table writes a default."""
    if default is None:
        return "*unset*"
    return f"`{default}`" if not isinstance(default, str) or default else '`""`'


SETTINGS = settings_fields()
IDS = [name for name, _ in SETTINGS]


@pytest.mark.parametrize("group", sorted(Settings.model_fields))
def test_every_group_has_a_description(group: str) -> None:
    assert Settings.model_fields[group].description


@pytest.mark.parametrize(("variable", "field"), SETTINGS, ids=IDS)
def test_every_setting_has_a_description(variable: str, field: FieldInfo) -> None:
    assert field.description and len(field.description) > 10, variable


@pytest.mark.parametrize(("variable", "field"), SETTINGS, ids=IDS)
def test_every_setting_is_in_the_readme_table(variable: str, field: FieldInfo) -> None:
    row = readme_rows().get(variable)
    assert row is not None, f"add a row for {variable} to the Configuration table in README.md"
    cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
    assert cells[1] == default_text(field.default), f"{variable}: the README's default is out of date"
    assert cells[2] == field.description, f"{variable}: the README's description differs from config.py"


def test_readme_names_no_setting_that_does_not_exist() -> None:
    unknown = set(readme_rows()) - set(IDS)
    assert not unknown, f"README.md documents settings that config.py does not have: {sorted(unknown)}"


@pytest.mark.parametrize(("variable", "field"), SETTINGS, ids=IDS)
def test_every_setting_is_in_env_example(variable: str, field: FieldInfo) -> None:
    assert re.search(rf"^# {variable}=", ENV_EXAMPLE, re.MULTILINE), f"add {variable} to .env.example"
