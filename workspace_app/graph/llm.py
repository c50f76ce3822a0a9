"""Entity extraction and community summaries by a language model (any OpenAI-compatible server, `workspace_app.llm`).

Each body chunk is sent once with a JSON-only prompt; the reply (entities with type and description, typed
relations) is cached in the catalog keyed by (model, sha256 of prompt version + chunk text), so ingesting the
same text again costs no call. The offline extractor runs too and its finds are merged in, so lexicon
concepts keep their keys across documents and a chunk the model fails on still has entities.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from typing import Any

from workspace_app.config import LlmSettings
from workspace_app.graph.entities import LexiconEntityExtractor, ProgressCallback
from workspace_app.graph.lexicon import Concept, case_key, clean_text, load_lexicon, normalize_key
from workspace_app.llm import LlmClient
from workspace_app.models.documents import Chunk
from workspace_app.models.graph import ENTITY_TYPES, ChunkEntities, CommunityReport, FoundEntity, FoundRelation
from workspace_app.storage.base import ResponseCache
from workspace_app.text.cjk import has_cjk

log = logging.getLogger(__name__)
PROMPT_VERSION = "graph-extract-v1"
CONCURRENT_REQUESTS = 4
SUMMARY_VERSION = "graph-summary-v1"
EXTRACTION_PROMPT = (
    "You extract a knowledge graph from clinical guideline text. Return only JSON of the form "
    '{"entities": [{"name": str, "type": str, "description": str}], '
    '"relations": [{"source": str, "target": str, "type": str}]}. '
    f"Entity types: {', '.join(ENTITY_TYPES)}. Use the names as written in the text (long form, not the "
    "abbreviation). Relation types are short verbs such as treats, causes, diagnoses, increases risk of, "
    "contraindicated in. Describe each entity in one sentence from the text. No other text."
)
SUMMARY_PROMPT = (
    "Summarise this group of related clinical concepts in 2-4 sentences using only the report below. "
    "Write plain text, no lists."
)
_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$")


def cache_key(version: str, text: str) -> str:
    """The cache key of a prompt version and a text."""
    return hashlib.sha256(f"{version}\n{text}".encode()).hexdigest()


class LlmEntityExtractor:
    """Entities and typed relations per chunk by a chat model, cached; merged with the offline finds."""

    name = "llm"

    def __init__(self, settings: LlmSettings, cache: ResponseCache, offline: LexiconEntityExtractor | None = None) -> None:
        self._settings = settings
        self._cache = cache
        self._offline = offline or LexiconEntityExtractor()
        self._llm = LlmClient(settings)

    def extract(
        self, chunks: Sequence[Chunk], abbreviations: Mapping[str, str] | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[ChunkEntities]:
        """The offline finds of each body chunk plus what the model found there."""
        offline = {found.chunk_id: found for found in self._offline.extract(chunks, abbreviations)}
        body = [chunk for chunk in chunks if chunk.kind == "body"]
        merged = []
        # A few requests at once: the server, not this process, is the bottleneck.
        with ThreadPoolExecutor(max_workers=CONCURRENT_REQUESTS) as pool:
            for done, (chunk, reply) in enumerate(zip(body, pool.map(self._reply, [c.text for c in body]), strict=True), start=1):
                merged.append(merge_reply(offline[chunk.id], reply) if reply else offline[chunk.id])
                if on_progress:
                    on_progress(done, len(body))
        return merged

    def _reply(self, text: str) -> dict[str, Any] | None:
        key = cache_key(PROMPT_VERSION, text)
        cached = self._cache.cached_response(self._settings.model, key)
        if cached is not None:
            return parse_reply(cached)
        try:
            content = self.complete(EXTRACTION_PROMPT, text)
        except Exception:  # the offline finds stand when the model cannot be reached
            log.warning("entity extraction by the language model failed; using the offline entities", exc_info=True)
            return None
        parsed = parse_reply(content)
        if parsed is not None:
            self._cache.cache_response(self._settings.model, key, content)
        return parsed

    def complete(self, system: str, user: str) -> str:
        """One chat completion's text."""
        return self._llm.complete([{"role": "system", "content": system}, {"role": "user", "content": user}])


def parse_reply(content: str) -> dict[str, Any] | None:
    """The JSON object of a reply (code fences allowed), or None when it is not one."""
    try:
        data = json.loads(_FENCE.sub("", content.strip()))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def merge_reply(offline: ChunkEntities, reply: Mapping[str, Any]) -> ChunkEntities:
    """Add the model's entities (typed, described) and relations to a chunk's offline finds."""
    entities = {e.key: e for e in offline.entities}
    names: dict[str, str] = {}
    for item in reply.get("entities") or []:
        found = _entity(item)
        if found is None:
            continue
        names[str(item.get("name", "")).strip().lower()] = found.key
        known = entities.get(found.key)
        entities[found.key] = replace(known, description=known.description or found.description) if known else found
    relations = list(offline.relations)
    for item in reply.get("relations") or []:
        if not isinstance(item, dict):
            continue
        source = names.get(str(item.get("source", "")).strip().lower())
        target = names.get(str(item.get("target", "")).strip().lower())
        kind = " ".join(str(item.get("type") or "related to").split())[:60]
        if source and target and source != target:
            relations.append(FoundRelation(source, target, kind, 1.0))
    return replace(offline, entities=tuple(entities.values()), relations=tuple(relations))


def _entity(item: Any) -> FoundEntity | None:
    if not isinstance(item, dict):
        return None
    name = " ".join(clean_text(str(item.get("name") or "")).split())
    if not name or len(name) > 80:
        return None
    concept = _known(name)
    if concept is None:
        kind = str(item.get("type") or "concept").lower()
        key = name if has_cjk(name) else normalize_key(name)
        concept = Concept(key, name, kind if kind in ENTITY_TYPES else "concept", "llm")
    description = " ".join(str(item.get("description") or "").split())[:300]
    return FoundEntity(concept.key, concept.name, concept.type, 1, (name,), description)


def _known(name: str) -> Concept | None:
    lexicon = load_lexicon()
    if has_cjk(name):
        return lexicon.chinese.get(name.replace(" ", ""))
    return lexicon.forms.get(normalize_key(name)) or lexicon.abbreviations.get(case_key(name))


def community_summarizer(settings: LlmSettings, cache: ResponseCache) -> Callable[[CommunityReport], str]:
    """A function writing a community's summary with the model from its extractive report (cached)."""
    extractor = LlmEntityExtractor(settings, cache)

    def summarize(report: CommunityReport) -> str:
        key = cache_key(SUMMARY_VERSION, report.summary)
        cached = cache.cached_response(settings.model, key)
        if cached is not None:
            return cached
        text = extractor.complete(SUMMARY_PROMPT, report.summary).strip()
        if text:
            cache.cache_response(settings.model, key, text)
        return text

    return summarize
