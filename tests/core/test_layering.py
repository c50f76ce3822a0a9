"""The layout is the architecture: the core and the UI import only what their layer may (STYLE.md §1)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ADAPTERS = {"cli.py", "supervisor.py", "worker.py", "api.py"}
CORE_FORBIDDEN = {"streamlit", "fastapi", "chromadb", "sqlite3"}
UI_FORBIDDEN = {"sqlite3", "chromadb", "storage"}  # app.py, the entry point, builds the backends


def imported_modules(source: str) -> set[str]:
    """Top-level names of every absolute import in the source, including imports inside functions."""
    names = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def python_files(folder: str) -> list[Path]:
    """The .py files under a folder of the repo, as paths relative to the repo."""
    return sorted(path.relative_to(ROOT) for path in (ROOT / folder).rglob("*.py"))


CORE_MODULES = [p for p in python_files("workspace_app") if not (p.parent.name == "workspace_app" and p.name in ADAPTERS)]
UI_MODULES = python_files("pages") + python_files("components")


def test_the_import_walker_sees_every_form() -> None:
    source = "import chromadb.api\nfrom sqlite3 import connect\ndef f():\n    import streamlit as st\nfrom . import x\n"
    assert imported_modules(source) == {"chromadb", "sqlite3", "streamlit"}


def test_there_is_something_to_check() -> None:
    assert any(p.name == "service.py" for p in CORE_MODULES)
    assert not any(p.name in {"cli.py", "supervisor.py"} for p in CORE_MODULES)
    assert UI_MODULES


@pytest.mark.parametrize("path", CORE_MODULES, ids=str)
def test_core_imports_no_front_end_or_backend(path: Path) -> None:
    found = imported_modules((ROOT / path).read_text(encoding="utf-8")) & CORE_FORBIDDEN
    assert not found, f"{path} imports {sorted(found)}: move that code to an adapter or storage/"


@pytest.mark.parametrize("path", UI_MODULES, ids=str)
def test_pages_and_components_reach_storage_only_through_the_service(path: Path) -> None:
    found = imported_modules((ROOT / path).read_text(encoding="utf-8")) & UI_FORBIDDEN
    assert not found, f"{path} imports {sorted(found)}: call WorkspaceService instead"
