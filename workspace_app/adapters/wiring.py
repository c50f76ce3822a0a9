"""The composition root: Settings -> backends -> App. The one place that knows which backends, readers,
rerankers, stages, evidence sources and domain pack we use."""

from __future__ import annotations

import json
import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from workspace_app.accounts.service import AccountService
from workspace_app.adapters.ownership import claim_data_dir
from workspace_app.adapters.process import make_private
from workspace_app.answer.llm import LlmAnswerer
from workspace_app.answer.sentence_vectors import SentenceVectorsStage
from workspace_app.answer.service import AnswerService
from workspace_app.answer.sources import StoredDocumentSource
from workspace_app.app import App
from workspace_app.chats.service import ChatService, NoteService
from workspace_app.config import CATALOG_SCHEMES, Settings
from workspace_app.documents.figures import FigureService
from workspace_app.documents.guide import GuideService, GuideStage
from workspace_app.documents.jobs import Jobs
from workspace_app.documents.lifecycle import DocumentStates
from workspace_app.documents.service import DocumentService
from workspace_app.documents.suggestions import SuggestionService
from workspace_app.domain import pack
from workspace_app.domain.clinical import CONCEPTS
from workspace_app.domain.pack import ConceptPatterns
from workspace_app.embedding.embedder import Embedder
from workspace_app.evaluation.service import EvaluationService
from workspace_app.graph.entities import LexiconEntityExtractor
from workspace_app.graph.lexicon import Lexicon, load_lexicon
from workspace_app.graph.llm import LlmEntityExtractor, community_summarizer
from workspace_app.graph.service import GraphService
from workspace_app.graph.stage import GraphStage
from workspace_app.graph.translation import LexiconTranslator
from workspace_app.ingest.crosslingual_stage import CrossLanguageStage
from workspace_app.ingest.figure_stage import FigureStage
from workspace_app.ingest.figures import FigureRules
from workspace_app.ingest.pipeline import IndexStage, ProgressCallback, StopCheck, ingest_document
from workspace_app.jobs.pace import Pace
from workspace_app.llm import LlmClient
from workspace_app.models.documents import Document
from workspace_app.patients.crosslevel import PatientAnswerService
from workspace_app.patients.imports import PatientImports
from workspace_app.patients.links import PatientLinkService
from workspace_app.patients.records import PatientRecordSource
from workspace_app.patients.rules import DEFAULT_LINKS
from workspace_app.patients.service import PatientService
from workspace_app.retrieval.hybrid import CrossLanguageIndex, HybridRetriever
from workspace_app.retrieval.rerank import build_reranker
from workspace_app.retrieval.search import SearchService
from workspace_app.storage.base import EmbeddingCache, FileStore, ThumbnailStore, UploadFolder
from workspace_app.storage.chroma import ChromaVectorIndex, open_chroma
from workspace_app.storage.files import LocalFileStore, LocalThumbnailStore, LocalUploadFolder
from workspace_app.storage.queue import HueyJobQueue, open_huey
from workspace_app.storage.sqlite.catalog import SqliteCatalog
from workspace_app.storage.sqlite.embedding_cache import SqliteEmbeddingCache
from workspace_app.storage.sqlite.graph import SqliteGraphStore
from workspace_app.storage.vector_set import VectorIndexSet
from workspace_app.studio.service import StudioService
from workspace_app.workspaces import WorkspaceService

RUN_FILE = "run/serve.json"
TOKEN_FILE = "run/chroma.token"  # written by `serve` (supervisor.chroma_token), private to the user
SHARED_CACHE = "shared-cache"  # this machine's copies of the files in an S3 bucket (shared.s3_url)


def running_chroma_url(data_dir: Path) -> str | None:
    """The Chroma URL of a `serve` that is running on this data dir, if any."""
    path = data_dir / RUN_FILE
    try:
        info = json.loads(path.read_text())
        os.kill(int(info["pid"]), 0)
    except (OSError, ValueError, KeyError):
        return None
    url = info.get("chroma_url")
    return str(url) if url else None


def chroma_location(settings: Settings) -> tuple[Path | None, str | None, str | None]:
    """(embedded path, server URL, token): a configured URL first, then a running `serve`'s (with the token it
    made for the data dir), else embedded."""
    data_dir = settings.storage.data_dir
    if settings.storage.chroma_url:
        return None, settings.storage.chroma_url, settings.storage.chroma_token
    url = running_chroma_url(data_dir)
    if url is None:
        return data_dir / "chroma", None, None
    return None, url, settings.storage.chroma_token or _read_token(data_dir / TOKEN_FILE)


def _read_token(path: Path) -> str | None:
    try:
        return path.read_text().strip() or None
    except OSError:
        return None


if TYPE_CHECKING:  # PostgreSQL's modules (and psycopg) load only where a postgresql:// catalog is configured
    from workspace_app.storage.postgres.catalog import PostgresCatalog
    from workspace_app.storage.postgres.embedding_cache import PostgresEmbeddingCache
    from workspace_app.storage.postgres.graph import PostgresGraphStore

    Catalog = SqliteCatalog | PostgresCatalog
    """The catalog backends: one store of every repository, chosen by `WORKSPACE_CATALOG__URL`."""


def open_catalog(settings: Settings) -> Catalog:
    """The catalog chosen by the scheme of `WORKSPACE_CATALOG__URL`: empty is the SQLite file catalog.sqlite in the
    data dir, postgresql:// (or postgres://) the PostgreSQL database it names (migrated on open). A scheme is
    checked when the settings are read (config.py), so nothing else gets here."""
    url = settings.catalog.url
    if url.startswith(CATALOG_SCHEMES):
        from workspace_app.storage.postgres.catalog import PostgresCatalog

        return PostgresCatalog(url)
    return SqliteCatalog(settings.storage.data_dir / "catalog.sqlite")


def open_embedding_cache(settings: Settings) -> SqliteEmbeddingCache | PostgresEmbeddingCache:
    """The embedding cache beside the catalog: a table in its PostgreSQL database (shared by every machine, so the
    sentence vectors a worker made serve the API's asks), else the SQLite file embeddings.sqlite in the data dir."""
    if settings.catalog.url.startswith(CATALOG_SCHEMES):
        from workspace_app.storage.postgres.embedding_cache import PostgresEmbeddingCache

        return PostgresEmbeddingCache(settings.catalog.url)
    return SqliteEmbeddingCache(settings.storage.data_dir / "embeddings.sqlite")


def account_service(catalog: Catalog, settings: Settings) -> AccountService:
    """Accounts on the catalog's users, memberships, keys and audit log (one store answers all four)."""
    store = catalog.accounts
    return AccountService(store, store, store, store, catalog, settings.accounts)


def open_accounts(settings: Settings) -> tuple[AccountService, Catalog]:
    """The account service on the catalog alone (no vectors, no models): what the CLI's account commands and its
    role check need. The caller closes the catalog."""
    data_dir = settings.storage.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    make_private(data_dir)
    catalog = open_catalog(settings)
    return account_service(catalog, settings), catalog


def graph_store(catalog: Catalog) -> SqliteGraphStore | PostgresGraphStore:
    """The entity graph's tables, in the catalog's database."""
    if isinstance(catalog, SqliteCatalog):
        return SqliteGraphStore(catalog.database)
    from workspace_app.storage.postgres.graph import PostgresGraphStore

    return PostgresGraphStore(catalog.database)


def build_queue(settings: Settings) -> HueyJobQueue:
    """The ingestion queue: SQLite in the data dir, or Redis, as configured."""
    queue = settings.queue
    return HueyJobQueue(
        open_huey(queue, settings.storage.data_dir), queue.retries, queue.retry_delay_s, queue.retry_delay_max_s
    )


def build_app(
    settings: Settings, embedder: Embedder | None = None, *, role: str = "embedded store",
    chroma_timeout_s: float | None = None,
) -> App:
    """The application on the data dir named in the settings: Settings -> backends -> App.

    Without a Chroma server this process opens the embedded store and so must own the data dir (`role` says who
    it is in the message another process gets); DataDirBusyError when a `serve` or another process owns it.
    `chroma_timeout_s` bounds each call to a Chroma server: request paths (the API) set it, the worker does not."""
    data_dir = settings.storage.data_dir
    data_dir.mkdir(parents=True, exist_ok=True)
    make_private(data_dir)
    catalog = open_catalog(settings)
    cache = open_embedding_cache(settings)
    if embedder is None:
        embedder = Embedder(settings.embedding, cache)
    if settings.storage.vector_backend != "chroma":
        raise ValueError(f"unknown vector backend {settings.storage.vector_backend!r}")
    chroma_path, chroma_url, token = chroma_location(settings)
    if chroma_path is not None:
        claim_data_dir(data_dir, role)
    client = open_chroma(chroma_path, chroma_url, token, chroma_timeout_s)
    main_vectors = ChromaVectorIndex(client, settings.embedding.model, search_ef=settings.storage.vector_search_ef)
    crosslingual = build_crosslingual(settings, client, cache)
    vectors = VectorIndexSet(main_vectors, [crosslingual.vectors] if crosslingual else [])
    files, thumbnails, uploads = shared_files(settings)
    domain = pack(settings.domain.pack)
    lexicon = load_lexicon(domain.lexicon)
    graph = build_graph(settings, catalog, lexicon, domain.concepts)
    guides = build_guides(settings, catalog, graph, crosslingual.embedder if crosslingual else embedder)
    states = DocumentStates(catalog, catalog)
    stages: list[IndexStage] = [GraphStage(graph), GuideStage(guides)]
    pace = partial(Pace, settings.queue.pace_window_s, settings.queue.pace_min_measured_s)  # each stage's time left
    if settings.answers.sentence_vectors_at_ingest:
        stages.insert(0, SentenceVectorsStage(embedder, crosslingual.embedder if crosslingual else None))
    if crosslingual:
        stages.insert(0, CrossLanguageStage(crosslingual.embedder, crosslingual.vectors))
    if settings.ingest.figures:
        stages.insert(0, FigureStage(
            lambda document: documents.document_path(document), catalog.figures, thumbnails,
            FigureRules.from_settings(settings.ingest), settings.ingest.figure_thumbnail_px,
            settings.ingest.ocr_engine if settings.ingest.figure_ocr and settings.ingest.ocr_engine != "none" else None,
        ))

    def ingest(document: Document, on_progress: ProgressCallback | None, should_stop: StopCheck | None) -> Document:
        return ingest_document(
            document, documents.document_path(document), embedder=embedder, documents=catalog, states=states,
            chunks=catalog, vectors=main_vectors, settings=settings.ingest, on_progress=on_progress,
            should_stop=should_stop, stages=stages, grades=domain.grades, pace=pace,
        )

    queue = build_queue(settings)
    jobs = Jobs(catalog, vectors, queue, states, settings.queue, ingest)
    documents = DocumentService(
        catalog, vectors, files, states, jobs, settings.ingest,
        on_remove=[graph.remove_document], thumbnails=thumbnails,
    )
    translator = LexiconTranslator(lexicon)
    retriever = HybridRetriever(
        embedder, main_vectors, catalog, settings.retrieval, build_reranker(settings.retrieval), translator,
        crosslingual,
    )
    search = SearchService(catalog, retriever, settings.retrieval.top_k)
    answers = AnswerService(
        settings=settings, catalog=catalog, search=search, embedder=embedder, graph=graph,
        source=StoredDocumentSource(documents), translator=translator, llm=build_llm(settings),
        multilingual=crosslingual.embedder if crosslingual else None, domain=domain, figures=catalog.figures,
    )
    workspaces = WorkspaceService(catalog, vectors, documents)
    mined = (settings.patients.links_file or DEFAULT_LINKS) if settings.patients.mined_links else None
    patients = PatientService(
        catalog.patients, embedder, settings.patients.rules_file, catalog.vocabulary, mined,
        settings.patients.similar_sequence_weight, settings.patients.similar_reranked, pace,
    )
    # Server folders a remote caller may import from: by default imports/ of the shared dir (the data dir), also
    # when uploads go to an S3 bucket (their local copies are no place for an operator's MIMIC-IV folders).
    roots = [Path(root.strip()) for root in settings.patients.import_roots.split(",") if root.strip()]
    roots = roots or [settings.shared_dir / "imports"]
    imports = PatientImports(catalog.imports, patients, queue, settings.queue, uploads, roots)
    links = PatientLinkService(graph, patients, workspaces.get)
    records = PatientRecordSource(patients, settings.patients.timeline_recent_h, settings.patients.timeline_relation_h)
    suggestions = SuggestionService(catalog, guides, answers, domain.recommendation_question)
    notes = NoteService(catalog, catalog)
    studio = StudioService(
        catalog, answers, guides, suggestions, notes,
        settings.answers.studio_faq_questions, settings.answers.studio_topics_per_source,
    )
    return App(
        settings, workspaces, documents, search, answers, graph, embedder, catalog, vectors,
        guides=guides, suggestions=suggestions,
        patients=patients, patient_answers=PatientAnswerService(answers, records, links),
        patient_imports=imports, patient_links=links, chats=ChatService(catalog, catalog, catalog),
        notes=notes, studio=studio, accounts=account_service(catalog, settings),
        translator=translator, domain=domain,
        figures=FigureService(catalog, catalog.figures, thumbnails, documents.get, graph.match_question),
    )


def shared_files(settings: Settings) -> tuple[FileStore, ThumbnailStore, UploadFolder]:
    """The source files, figure thumbnails and uploaded import files every machine shares: in the S3 bucket of
    `shared.s3_url` (read through copies under `<data dir>/shared-cache/`), else under the shared dir."""
    if settings.shared.s3_url:
        # boto3 is imported only here: ~0.2 s of every start that does not use it.
        from workspace_app.storage.s3 import S3Bucket, S3FileStore, S3ThumbnailStore, S3UploadFolder

        bucket, cache = S3Bucket(settings.shared), settings.storage.data_dir / SHARED_CACHE
        return (S3FileStore(bucket, cache / "files"), S3ThumbnailStore(bucket, cache / "files" / "thumbnails"),
                S3UploadFolder(bucket, cache / "imports"))
    shared = settings.shared_dir
    return (LocalFileStore(shared / "files"), LocalThumbnailStore(shared / "files" / "thumbnails"),
            LocalUploadFolder(shared / "imports"))


def build_evaluation(app: App) -> EvaluationService:
    """The evaluation of question files against the App's workspaces (the UI's Evaluation page)."""
    return EvaluationService(app)


def build_llm(settings: Settings) -> LlmAnswerer | None:
    """The language model that writes answers when one is configured (an API key or a base URL); None answers
    offline by quoting."""
    configured = bool(settings.llm.api_key or settings.llm.base_url)
    return LlmAnswerer(settings.llm) if configured else None


def build_crosslingual(settings: Settings, chroma: object, cache: EmbeddingCache) -> CrossLanguageIndex | None:
    """The multilingual embedder and its companion index (Chroma collections `xl-<workspace id>`), unless turned
    off or the main embedder is already that model."""
    model = settings.embedding.crosslingual_model
    if not model or model == settings.embedding.model:
        return None
    # USE takes no prefixes and runs in numpy: the main model's prefixes and backend are not its.
    own = {"model": model, "backend": "torch", "query_prefix": "", "passage_prefix": ""}
    embedder = Embedder(settings.embedding.model_copy(update=own), cache)
    vectors = ChromaVectorIndex(chroma, model, prefix="xl-", search_ef=settings.storage.vector_search_ef)
    return CrossLanguageIndex(embedder, vectors)


def build_guides(settings: Settings, catalog: Catalog, graph: GraphService, embedder: Embedder) -> GuideService:
    """Source guides on the catalog, the graph and an embedder whose cache holds the chunks' vectors (the
    multilingual one when there is one: Chinese and English alike); with a language model configured, it writes
    their summaries."""
    if not (settings.llm.api_key or settings.llm.base_url):
        return GuideService(catalog, graph, embedder.embed_passages)
    return GuideService(catalog, graph, embedder.embed_passages, LlmClient(settings.llm), settings.llm.model)


def build_graph(
    settings: Settings, catalog: Catalog, lexicon: Lexicon | None = None, concepts: ConceptPatterns = CONCEPTS,
) -> GraphService:
    """The entity graph on the catalog: offline extraction with the domain pack's lexicon and patterns, or the
    configured language model's (cached) merged with it."""
    store = graph_store(catalog)
    offline = LexiconEntityExtractor(lexicon, concepts)
    if not (settings.llm.api_key or settings.llm.base_url):
        return GraphService(store, catalog, offline)
    return GraphService(
        store, catalog, LlmEntityExtractor(settings.llm, store, offline), community_summarizer(settings.llm, store)
    )
