"""The README documents every setting: its environment variable, default and description (as datasette's test_docs)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

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
        match = re.match(r"\|\s*`(WORKSPACE_[A-Z0-9_]+)`\s*\|", line)
        if match:
            rows[match.group(1)] = line
    return rows


def default_text(default: Any) -> str:
    """How the README's table writes a default."""
    if default is None:
        return "*unset*"
    return f"`{default}`" if not isinstance(default, str) or default else '`""`'


SETTINGS = settings_fields()
NAMES = [name for name, _ in SETTINGS]


def test_every_group_has_a_description() -> None:
    missing = [group for group, field in Settings.model_fields.items() if not field.description]
    assert missing == [], f"settings groups without a description in config.py: {missing}"


def test_every_setting_has_a_description() -> None:
    missing = [name for name, field in SETTINGS if not (field.description and len(field.description) > 10)]
    assert missing == [], f"settings without a description (over 10 characters) in config.py: {missing}"


def test_every_setting_is_in_the_readme_table() -> None:
    rows = readme_rows()
    problems = []
    for name, field in SETTINGS:
        row = rows.get(name)
        if row is None:
            problems.append(f"{name}: add a row to the Configuration table in README.md")
            continue
        cells = [cell.strip() for cell in row.strip().strip("|").split("|")]
        if cells[1] != default_text(field.default):
            problems.append(f"{name}: the README's default is out of date")
        if cells[2] != field.description:
            problems.append(f"{name}: the README's description differs from config.py")
    assert problems == [], "\n".join(problems)


def test_readme_names_no_setting_that_does_not_exist() -> None:
    unknown = set(readme_rows()) - set(NAMES)
    assert not unknown, f"README.md documents settings that config.py does not have: {sorted(unknown)}"


def test_every_setting_is_in_env_example() -> None:
    missing = [name for name in NAMES if not re.search(rf"^# {name}=", ENV_EXAMPLE, re.MULTILINE)]
    assert missing == [], f"add these settings to .env.example: {missing}"
