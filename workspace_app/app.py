"""The application object: the one typed way into the core for pages, the CLI, the worker and the API.

    app.workspaces  create, list, rename, delete workspaces
    app.documents   add (ingest here or submit to the queue), list, cancel, retry, include, remove; .jobs for workers
    app.search      hybrid search in a workspace or some of its documents
    app.answers     grounded answers with verified citations, chats, notes, entity passages
    app.graph       the entity graph: entities, relations, communities, GraphML
    app.translator  English <-> Chinese names of the lexicon concepts a text mentions (cross-language matching)

Built once per process by `workspace_app.adapters.wiring.build_app(settings)` (datasette hands its views one
`Datasette` the same way). Pages and components import the core only through this module (and plain
models and errors): the names re-exported below are what they use of the answer package.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from storage.base import Catalog, VectorIndex
from workspace_app.answer.export import answer_markdown, escape, grading_text
from workspace_app.answer.mentions import EntityPassage
from workspace_app.answer.service import AnswerService
from workspace_app.answer.sources import CitationExcerpt
from workspace_app.config import Settings
from workspace_app.documents.service import DocumentService
from workspace_app.embedding.embedder import Embedder
from workspace_app.graph.service import GraphService
from workspace_app.retrieval.bilingual import NoTranslator, Translator
from workspace_app.retrieval.modes import MODES
from workspace_app.retrieval.search import SearchService
from workspace_app.text.file_names import safe_file_name
from workspace_app.workspaces import WorkspaceService

__all__ = [
    "MODES", "AnswerService", "App", "CitationExcerpt", "EntityPassage", "answer_markdown", "escape", "grading_text",
    "safe_file_name",
]


@dataclass(frozen=True)
class App:
    """The workspace application: its typed parts over one data dir."""

    settings: Settings
    workspaces: WorkspaceService
    documents: DocumentService
    search: SearchService
    answers: AnswerService
    graph: GraphService
    embedder: Embedder
    catalog: Catalog
    vectors: VectorIndex
    translator: Translator = field(default_factory=NoTranslator)

    def close(self) -> None:
        """Close the catalog's connection (closing twice is harmless)."""
        self.catalog.close()
