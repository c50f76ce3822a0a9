"""The application object: the one typed way into the core for pages, the CLI, the worker and the API.

    app.workspaces  create, list, rename, delete workspaces
    app.documents   add (ingest here or submit to the queue), list, cancel, retry, include, remove; .jobs for workers
    app.search      hybrid search in a workspace or some of its documents
    app.answers     grounded answers with verified citations, entity passages
    app.chats       a workspace's chats: questions with their answers, in order; which chats and notes cite a source
    app.notes       saved answers and notes of one's own
    app.studio      FAQ, briefing and study guide built from the sources, cited, saved as notes
    app.graph       the entity graph: entities, relations, communities, GraphML
    app.translator  English <-> Chinese names of the lexicon concepts a text mentions (cross-language matching)
    app.guides      each source's guide: summary, key recommendations, main entities (made at ingestion)
    app.suggestions questions a workspace's sources answer, checked with the answerer
    app.patients    patient records: import (MIMIC-IV or an events file), patients, events, related events
    app.patient_imports  patient imports run by the worker: submit (checked, queued), progress, cancel, recover
    app.patient_answers  questions about one patient answered across levels: its events, the guidelines, the vocabulary
    app.patient_links    a patient's LINKS_TO edges to a workspace graph's entities (coded diagnoses, drugs, labs)
    app.domain      the domain pack chosen in settings (clinical or generic)
    app.figures     figures of the sources (images, flowcharts) with caption, page and box: listed, drawn, searched
    app.accounts    users, their API keys, roles per workspace (the gate every front end calls) and the audit log

Built once per process by `workspace_app.adapters.wiring.build_app(settings)` (datasette hands its views one
`Datasette` the same way). Pages and components import the core only through this module (and plain
models and errors): the names re-exported below are what they use of the answer package.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from workspace_app.accounts.policy import Action
from workspace_app.accounts.service import AccountService, export_audit
from workspace_app.answer.export import answer_markdown, escape, grading_text
from workspace_app.answer.mentions import EntityPassage
from workspace_app.answer.service import AnswerService
from workspace_app.chats.service import ChatService, NoteService
from workspace_app.config import Settings
from workspace_app.documents.figures import FigureService
from workspace_app.documents.guide import GuideService
from workspace_app.documents.service import DocumentService
from workspace_app.documents.suggestions import SuggestionService
from workspace_app.domain import DomainPack
from workspace_app.domain.clinical import CLINICAL
from workspace_app.embedding.embedder import Embedder
from workspace_app.graph.service import GraphService
from workspace_app.patients.crosslevel import PatientAnswerService
from workspace_app.patients.imports import PatientImports
from workspace_app.patients.links import PatientLinkService
from workspace_app.patients.service import PatientService
from workspace_app.retrieval.bilingual import NoTranslator, Translator
from workspace_app.retrieval.modes import MODES
from workspace_app.retrieval.search import SearchService
from workspace_app.storage.base import Catalog, VectorIndex
from workspace_app.studio.service import KINDS as STUDIO_KINDS
from workspace_app.studio.service import StudioService
from workspace_app.text.file_names import safe_file_name
from workspace_app.text.terms import content_terms
from workspace_app.workspaces import WorkspaceService

WARM_WORKSPACES = 3

__all__ = [
    "MODES", "STUDIO_KINDS", "Action", "AnswerService", "App", "ChatService", "EntityPassage", "NoteService", "answer_markdown",
    "escape", "export_audit", "grading_text", "safe_file_name",
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
    guides: GuideService
    suggestions: SuggestionService
    patients: PatientService
    patient_answers: PatientAnswerService
    patient_imports: PatientImports
    patient_links: PatientLinkService
    chats: ChatService
    notes: NoteService
    studio: StudioService
    accounts: AccountService
    translator: Translator = field(default_factory=NoTranslator)
    domain: DomainPack = CLINICAL  # the pack chosen in settings (the wiring gives it): its warm-up questions are asked
    figures: FigureService | None = None  # the wiring always gives it; None only where an App is built without figures

    def warm_up(self, mode: str = "hybrid", suggestions: bool = True) -> dict[str, float]:
        """Load now what the first answer would otherwise load (the embedding model, a reranker, jieba, the
        lexicon, the answerer's word lists, a stale graph's refresh) by answering in each workspace that has
        sources (searching only, when a language model answers); also make sure each has its suggested questions
        (unless `suggestions` is False: the API serves none). Returns the seconds each step took."""
        timings: dict[str, float] = {}
        started = time.perf_counter()
        questions = self.domain.warm_questions
        # The whole model, not only the numpy runner a question needs: a request that embeds more than a few texts
        # (a graph-mode ask's community reports, new suggestions) would otherwise load torch while someone waits.
        self.embedder.load()
        self.embedder.embed_query(questions[0])
        timings["embedder"] = time.perf_counter() - started
        for question in questions:
            content_terms(question)
            self.translator.other_language(question)
        timings["text"] = time.perf_counter() - started - timings["embedder"]
        for workspace in self.workspaces.list()[:WARM_WORKSPACES]:
            if not self.documents.included_ids(workspace.id):
                continue
            began = time.perf_counter()
            for question in questions:
                if self.answers.answerer_name == "llm":  # a remote model needs no warming, and may be slow or down
                    self.search.search(workspace.id, question)
                else:
                    self.answers.ask(workspace.id, question, mode=mode)
            if suggestions and self.answers.answerer_name != "llm":  # with a model, the worker finds them after ingestion
                self.suggestions.suggest(workspace.id, mode)
            timings[f"workspace {workspace.name}"] = time.perf_counter() - began
        return timings

    def close(self) -> None:
        """Close the catalog's connection (closing twice is harmless)."""
        self.catalog.close()
