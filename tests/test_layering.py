"""The layout is the architecture: each package imports only what its layer may (STYLE.md §1, ARCHITECTURE.md).

    base       workspace_app.{config, errors, models, text, llm, embedding, domain}   (text and models are leaves;
               domain, the domain packs, sits on text alone)
    features   ingest, retrieval, graph (each over the base only)
               answer (over the base and retrieval), documents (over the base, ingest and retrieval.scope),
               patients (over the base, the jobs engine, the graph and the answers' fixed texts: it answers
               questions about a patient), chats (over the base, the answers' Markdown and the scope),
               studio (over the base, answer and the scope: outputs built from asked answers and guides)
    the App    app.py, workspaces.py over the features; adapters/ (wiring, cli, worker, supervisor) over all
    evaluation over the base and the App (it asks and searches as a user does; nothing in the core imports it)
    storage    workspace_app/storage: only its protocols, plain models, errors and settings of the core; the
               core packages (all but the leaves) see only its protocols (workspace_app.storage.base), and
               only the adapters import its backends. Nothing imports a top-level `storage` any more.
    UI         pages/ import the App module, models and errors, and components/; components/application.py
               alone builds the App (through the wiring)
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE_FORBIDDEN = {"streamlit", "fastapi", "chromadb", "sqlite3"}
BASE = ("workspace_app.config", "workspace_app.errors", "workspace_app.models", "workspace_app.text",
        "workspace_app.llm", "workspace_app.embedding", "workspace_app.domain")
# What each core package may import from workspace_app (besides itself); the leaves see no storage at all.
LEAVES = ("text", "models", "domain")
STORAGE_PROTOCOLS = ("workspace_app.storage.base",)
ALLOWED: dict[str, tuple[str, ...]] = {
    "text": ("workspace_app.errors",),
    "models": (),
    "domain": ("workspace_app.text",),
    "embedding": BASE,
    "llm": BASE,
    "jobs": ("workspace_app.errors",),
    "ingest": (*BASE, "workspace_app.jobs"),
    "retrieval": BASE,
    "graph": BASE,
    "answer": (*BASE, "workspace_app.retrieval"),
    "documents": (*BASE, "workspace_app.ingest", "workspace_app.jobs", "workspace_app.retrieval.scope"),
    "patients": (*BASE, "workspace_app.jobs", "workspace_app.graph", "workspace_app.answer.phrases"),
    "chats": (*BASE, "workspace_app.answer.export", "workspace_app.retrieval.scope"),
    "studio": (*BASE, "workspace_app.answer", "workspace_app.retrieval.scope"),
    "evaluation": (*BASE, "workspace_app.app"),
}
STORAGE_ALLOWED = ("workspace_app.models", "workspace_app.errors", "workspace_app.config")
PAGES_ALLOWED = ("workspace_app.app", "workspace_app.models", "workspace_app.errors", "components")


def imports_of(path: Path) -> set[str]:
    """Every absolute module imported by a file, including imports inside functions."""
    names = set()
    for node in ast.walk(ast.parse((ROOT / path).read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module)
    return names


def python_files(folder: str) -> list[Path]:
    """The .py files under a folder of the repo, relative to the repo."""
    return sorted(path.relative_to(ROOT) for path in (ROOT / folder).rglob("*.py"))


def package_of(path: Path) -> str:
    """'ingest' for workspace_app/ingest/x.py, 'llm' for workspace_app/llm.py."""
    parts = path.parts
    return parts[1] if len(parts) > 2 else path.stem


def within(module: str, prefixes: tuple[str, ...]) -> bool:
    """Whether a module is one of the prefixes or inside one."""
    return any(module == prefix or module.startswith(prefix + ".") for prefix in prefixes)


def offenders(paths: list[Path], allowed_for: dict[Path, tuple[str, ...]], scope: tuple[str, ...]) -> list[str]:
    """'path -> module' for every import inside `scope` that its file's allowance does not cover."""
    found = []
    for path in paths:
        for module in sorted(imports_of(path)):
            if within(module, scope) and not within(module, allowed_for[path]):
                found.append(f"{path} -> {module}")
    return found


def test_the_import_walker_sees_every_form(tmp_path: Path) -> None:
    source = ROOT / "tests" / "test_layering.py"
    assert "ast" in imports_of(source.relative_to(ROOT)) and "pathlib" in imports_of(source.relative_to(ROOT))
    assert package_of(Path("workspace_app/ingest/readers/pdf.py")) == "ingest"
    assert package_of(Path("workspace_app/llm.py")) == "llm"


def test_the_core_imports_no_front_end_or_backend() -> None:
    found = [
        f"{path} -> {module}" for path in python_files("workspace_app") if package_of(path) not in ("adapters", "storage")
        for module in imports_of(path) if module.split(".")[0] in CORE_FORBIDDEN
    ]
    assert not found, f"move this code to an adapter or workspace_app/storage/: {found}"


def test_core_packages_import_only_the_layers_below() -> None:
    paths = [p for p in python_files("workspace_app") if package_of(p) in ALLOWED]
    assert {package_of(p) for p in paths} >= {
        "text", "models", "domain", "ingest", "retrieval", "graph", "answer", "documents"
    }
    found = offenders(paths, {p: (f"workspace_app.{package_of(p)}", *ALLOWED[package_of(p)],
                                  *(() if package_of(p) in LEAVES else STORAGE_PROTOCOLS)) for p in paths},
                      ("workspace_app",))
    assert not found, f"feature packages import each other's internals: {found}"


def test_nothing_in_the_core_imports_the_evaluation() -> None:
    found = [
        f"{path} -> {module}" for path in python_files("workspace_app")
        if package_of(path) not in ("evaluation", "adapters")
        for module in imports_of(path) if within(module, ("workspace_app.evaluation",))
    ]
    assert not found, f"the evaluation sits above the App; only adapters use it: {found}"


def test_storage_imports_only_protocols_and_plain_models_of_the_core() -> None:
    paths = python_files("workspace_app/storage")
    assert Path("workspace_app/storage/base.py") in paths
    found = offenders(paths, dict.fromkeys(paths, ("workspace_app.storage", *STORAGE_ALLOWED)), ("workspace_app",))
    assert not found, f"storage must receive what it stores, not call the core: {found}"


def test_only_the_adapters_and_the_app_reach_past_the_storage_protocols() -> None:
    paths = [p for p in python_files("workspace_app") if package_of(p) not in ("adapters", "storage")]
    found = [
        f"{path} -> {module}" for path in paths for module in sorted(imports_of(path))
        if within(module, ("workspace_app.storage",)) and not within(module, STORAGE_PROTOCOLS)
    ]
    assert not found, f"the core sees storage through its protocols; backends are chosen in the wiring: {found}"


def test_nothing_imports_a_top_level_storage_package() -> None:
    paths = [p for folder in ("workspace_app", "pages", "components", "tests", "bench") for p in python_files(folder)]
    found = [
        f"{path} -> {module}" for path in [*paths, Path("app.py")] for module in sorted(imports_of(path))
        if within(module, ("storage",))
    ]
    assert not found, f"storage lives in workspace_app/storage: {found}"


def test_pages_import_only_the_app_and_components() -> None:
    paths = python_files("pages")
    found = offenders(paths, dict.fromkeys(paths, PAGES_ALLOWED), ("workspace_app", "components"))
    assert not found, f"pages take the App from components.application: {found}"


def test_components_never_reach_storage_and_only_one_builds_the_app() -> None:
    paths = python_files("components")
    builders = [p for p in paths if any(within(m, ("workspace_app.adapters",)) for m in imports_of(p))]
    assert builders == [Path("components/application.py")]
    found = offenders(paths, {p: (*PAGES_ALLOWED, "workspace_app.adapters.wiring", "workspace_app.config") for p in paths},
                      ("workspace_app",))
    assert not found, f"components render plain models: {found}"


def test_only_the_lifecycle_writes_document_state() -> None:
    writers = [
        path for path in python_files("workspace_app") if package_of(path) != "storage"  # storage defines them
        if "update_document(" in (ROOT / path).read_text(encoding="utf-8") or "status=" in _release_calls(path)
    ]
    assert writers == [Path("workspace_app/documents/lifecycle.py")]


def _release_calls(path: Path) -> str:
    """The source of the file's `release_lease(...)` calls."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    calls = [
        node for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "release_lease"
    ]
    return " ".join(ast.unparse(call) for call in calls)
