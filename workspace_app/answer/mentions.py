"""Where an entity is mentioned, as passages the PDF panel can open like citations (the Graph page's side list).

Each passage is a chunk that mentions the entity, with the sentence naming it (by name or alias) as the quote,
so the panel outlines the chunk and draws the sentence strongly, exactly as for an answer's citation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from workspace_app.answer.quotes import clean_quote, quote_sentences
from workspace_app.answer.sources import EvidenceSource
from workspace_app.models.answers import Citation
from workspace_app.models.documents import Chunk, Document
from workspace_app.models.graph import Entity
from workspace_app.retrieval.graph_query import GraphQuery
from workspace_app.text.sentences import Span
from workspace_app.text.terms import loose


@dataclass(frozen=True)
class EntityPassage:
    """A chunk mentioning an entity: its document, how often, and the first sentence naming the entity."""

    chunk: Chunk
    document_name: str
    count: int
    sentence: Span


class PassageCatalog(Protocol):
    """Chunks and documents, as the passages of an entity need them."""

    def get_chunks(self, chunk_ids: Sequence[str]) -> dict[str, Chunk]: ...
    def list_documents(self, workspace_id: str) -> list[Document]: ...
    def get_document(self, document_id: str) -> Document | None: ...


def entity_passages(
    graph: GraphQuery, catalog: PassageCatalog, workspace_id: str, entity: Entity,
    document_ids: Sequence[str] | None = None, limit: int = 20,
) -> list[EntityPassage]:
    """The chunks that mention the entity (most mentions first, then document order), at most `limit`."""
    mentions = sorted(
        graph.mentions(workspace_id, entity.id, list(document_ids) if document_ids is not None else None),
        key=lambda m: (-m.count, m.document_id, m.page_start),
    )[:limit]
    chunks = catalog.get_chunks([m.chunk_id for m in mentions])
    names = {d.id: d.name for d in catalog.list_documents(workspace_id)}
    passages = []
    for mention in mentions:
        chunk = chunks.get(mention.chunk_id)
        if chunk is not None:
            passages.append(EntityPassage(chunk, names.get(chunk.document_id, "?"), mention.count, naming_sentence(chunk, entity)))
    return passages


def naming_sentence(chunk: Chunk, entity: Entity) -> Span:
    """The first sentence of the chunk naming the entity (or an alias); the first sentence when none does."""
    spans = quote_sentences(chunk.text) or [Span(0, len(chunk.text), chunk.text)]
    forms = [loose(form) for form in (entity.name, *entity.aliases) if len(loose(form)) >= 2]
    for span in spans:
        text = loose(span.text)
        if any(form in text for form in forms):
            return span
    return spans[0]


def passage_citation(catalog: PassageCatalog, source: EvidenceSource, passage: EntityPassage, n: int = 1) -> Citation:
    """The passage as a citation: the chunk's rectangles and those of the naming sentence."""
    chunk = passage.chunk
    document = catalog.get_document(chunk.document_id)
    quote = passage.sentence.text
    rects = source.locate(document, chunk, quote, passage.sentence.start) if document else ()
    pages = sorted({r.page for r in rects}) or [chunk.page_start, chunk.page_end]
    return Citation(
        n=n, chunk_id=chunk.id, document=passage.document_name, document_id=chunk.document_id, page_start=pages[0],
        page_end=pages[-1], section=chunk.section, quote=clean_quote(quote), rects=tuple(rects), chunk_rects=chunk.rects,
        score=float(passage.count),
    )
