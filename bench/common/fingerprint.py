"""Fingerprints that decide whether a cached ingested workspace (or the shared embedding cache) is still valid.

An ingested data dir under bench/.cache is reused while its fingerprint is unchanged. The code part hashes
whole directories, not a list of files, so moving or adding a module inside them needs no edit here:

- `workspace_app/ingest/`, `workspace_app/text/` (the analyzer that builds the keyword index),
  `workspace_app/embedding/`, `workspace_app/models/`, `workspace_app/graph/` (the graph stage runs during
  ingestion), `workspace_app/documents/` (states, jobs) and `workspace_app/adapters/wiring.py` (which stages
  run) and `workspace_app/storage/`: every file under them (recursively; `__pycache__` and dot-files skipped). Python
  files count by their AST, so comments and formatting do not force a re-ingest; other files (e.g. the graph
  lexicon) by their bytes. A missing directory hashes as empty.

Query-time definitions are left out (`QUERY_TIME` wherever they are, `QUERY_TIME_IN_FILE` in one file), so
tuning them does not re-ingest. Both lists only save re-ingests: a name or path that no longer exists leaves
the definition in the hash, which costs one re-ingest and never reuses a stale workspace.
The fingerprint of an ingested workspace also covers `settings.ingest` and `settings.embedding` (environment
and `.env` included), library versions and the sha256 of the input files.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from bench.common.app import bench_settings, embedding_cache_source
from bench.common.paths import CACHE_DIR, REPO, file_sha256

CACHE_VERSION = 1
FINGERPRINT_DIRS = (
    "workspace_app/ingest",
    "workspace_app/text",
    "workspace_app/embedding",
    "workspace_app/models",
    "workspace_app/graph",
    "workspace_app/documents",
    "workspace_app/adapters/wiring.py",
    "workspace_app/storage",
)
# Query-time definitions (top-level names or `Class.member`), dropped in every fingerprinted file.
QUERY_TIME = (
    "Embedder.embed_query", "one_query_thread", "_QUERY_TURN", "UseModel.encode_query", "SqliteCatalog.keyword_search",
    # The numpy runner embeds questions and an answer's few sentences; ingestion loads torch first (`Embedder.load`).
    "Embedder._numpy_model", "Embedder._few", "NumpyBert", "_BertLayer", "_layer_norm", "_ERFC", "_erf", "_ONE_BLAS_THREAD",
    "_blas_controller",
    "SqliteChunks.keyword_search", "ChromaVectorIndex.query", "query_terms", "ChunkRepository.chunk_texts",
    "SqliteCatalog.chunk_texts", "SqliteChunks.chunk_texts",
)
# Query-time definitions whose name is common (the graph's own STOPWORDS decide what it extracts), by file.
QUERY_TIME_IN_FILE = {
    "workspace_app/text/analyzer.py": ("STOPWORDS",),
    # The concept translator only serves queries (retrieval's cross-language keyword list, answers' matching).
    "workspace_app/graph/translation.py": ("ConceptNames", "_Matchers", "LexiconTranslator", "concept_names"),
}
FINGERPRINT_LIBS = ("pymupdf", "chromadb", "sentence-transformers", "transformers", "torch", "jieba")
EMPTY = hashlib.sha256(b"").hexdigest()


def _node_name(node: ast.stmt) -> str:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return node.name
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return ""


def _ast_entries(body: Iterable[ast.stmt], prefix: str = "") -> Iterator[tuple[str, str]]:
    for node in body:
        name = _node_name(node)
        qualified = f"{prefix}{name}" if name else ""
        if isinstance(node, ast.ClassDef):
            header = [ast.dump(x) for x in (*node.bases, *node.keywords, *node.decorator_list)]
            yield qualified, f"class {node.name} {header}"
            yield from _ast_entries(node.body, qualified + ".")
        else:
            yield qualified, ast.dump(node)


def source_digest(path: Path, drop: Sequence[str] = ()) -> str:
    """Digest of a module's AST (comments and formatting ignored) without the named definitions.

    A missing file digests as empty; a file that does not parse, by its bytes.
    """
    if not path.is_file():
        return EMPTY
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError):
        return file_sha256(path)

    def dropped(name: str) -> bool:
        return any(name == n or name.startswith(n + ".") for n in drop)

    parts = [f"{name}\n{dumped}" for name, dumped in _ast_entries(tree.body) if not (name and dropped(name))]
    return hashlib.sha256("\n\n".join(parts).encode()).hexdigest()


def directory_digest(folder: Path) -> str:
    """Digest of every file under `folder` (relative path and content), or of one module; missing digests as empty."""
    if folder.is_file():
        return source_digest(folder, QUERY_TIME)
    if not folder.is_dir():
        return EMPTY
    parts = []
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if not path.is_file() or any(p == "__pycache__" or p.startswith(".") for p in relative.parts):
            continue
        if path.suffix == ".py":
            in_file = QUERY_TIME_IN_FILE.get(path.relative_to(REPO).as_posix(), ()) if path.is_relative_to(REPO) else ()
            digest = source_digest(path, (*QUERY_TIME, *in_file))
        else:
            digest = file_sha256(path)
        parts.append(f"{relative.as_posix()}\n{digest}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest() if parts else EMPTY


def code_fingerprint() -> dict[str, str]:
    """Digests of the ingestion code, one per directory (keys end in "/")."""
    return {f"{d}/": directory_digest(REPO / d)[:16] for d in FINGERPRINT_DIRS}


def library_versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    found = {}
    for name in FINGERPRINT_LIBS:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "missing"
    return found


@functools.lru_cache(maxsize=1)
def embedding_fingerprint() -> str:
    """Fingerprint of what a cached vector depends on: embedder code, embedding cache code, settings, libraries."""
    settings = bench_settings(CACHE_DIR)
    parts = {
        "cache_version": CACHE_VERSION,
        "workspace_app/embedding/": directory_digest(REPO / "workspace_app" / "embedding"),
        "embedding_cache": source_digest(embedding_cache_source()),
        "settings": settings.embedding.model_dump(mode="json"),
        "libraries": {
            k: v for k, v in library_versions().items() if k in ("sentence-transformers", "transformers", "torch")
        },
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def ingest_fingerprint(kind: str, inputs: Sequence[Path]) -> tuple[str, dict[str, Any]]:
    """Fingerprint of an ingested workspace, and what went into it."""
    settings = bench_settings(CACHE_DIR)
    parts = {
        "cache_version": CACHE_VERSION,
        "kind": kind,
        "code": code_fingerprint(),
        "ingest_settings": settings.ingest.model_dump(mode="json"),
        "embedding_settings": settings.embedding.model_dump(mode="json"),
        "libraries": library_versions(),
        "inputs": {p.name: file_sha256(p)[:16] for p in inputs},
    }
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12], parts
