"""The evidence an answer is chosen from: numbered blocks of passages, gathered for what the question needs.

    the mode's hits (direct, then graph expansion)
      + each part's own best passages, for a question in several parts (in the source a part names, if any)
      + each named source's best passages, for a question naming several sources
    -> EvidenceBlock 1..n, and the documents each part's search found

Every addition comes after the mode's hits, so block order (and the answerer's prior) still favours them.
(Adding the other language's best passages as well was measured: cross-language first citations rose, but
first citations and refusal recall overall fell; bench/README.md.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from workspace_app.answer.answerability import question_parts
from workspace_app.answer.document_names import without_document_names
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk
from workspace_app.retrieval.modes import ModeHit, ModeRetrieval, ModeRetriever
from workspace_app.retrieval.scope import Scope

EVIDENCE_BLOCKS = 8
PART_BLOCKS = 3
ANCHOR_BLOCKS = 2


class EvidenceGatherer:
    """Gathers a question's evidence blocks from the query modes."""

    def __init__(
        self, modes: ModeRetriever, named: Callable[[str, Scope], Sequence[str]],
        anchored: Callable[[str, Scope], Sequence[Sequence[Chunk]]] | None = None,
    ) -> None:
        """`named`: the documents of a scope a text names (QuestionReader.named); `anchored`: passages naming the
        rarest things a question names (QuestionReader.anchored)."""
        self.modes = modes
        self._named = named
        self._anchored = anchored
        self.blocks = EVIDENCE_BLOCKS

    def gather(
        self, query: str, scope: Scope, timings: dict[str, float], mode: str = "naive"
    ) -> tuple[list[EvidenceBlock], ModeRetrieval, dict[str, frozenset[str]]]:
        """Evidence blocks numbered from 1, the mode's retrieval, and the documents each part's search found."""
        started = time.perf_counter()
        found = self.modes.retrieve(scope, query, mode, self.blocks)
        hits = list(found.hits)
        part_documents: dict[str, frozenset[str]] = {}
        parts = question_parts(query)
        if len(parts) > 1:
            # Each part gets its own best passages (another document's, often: a cross-document question).
            for part in parts:
                # A part naming one of the sources ("the 2011 women's guideline") is searched in it alone, with the
                # whole question (a part may leave its subject to the one before: "does it allow a lower range?").
                naming = self._named(part, scope)
                named = naming[0] if len(naming) == 1 else None
                if named:
                    within = scope.narrowed([named])
                    own = self.modes.retrieve(within, query, mode, PART_BLOCKS).hits[:PART_BLOCKS]
                    # … and by what the part asks of it: the words naming the source would find its title pages.
                    asked = without_document_names(part)
                    if asked:
                        _add(own, self.modes.retrieve(within, asked, mode, PART_BLOCKS).hits[:PART_BLOCKS])
                else:
                    own = self.modes.retrieve(scope, part, mode, PART_BLOCKS).hits[:PART_BLOCKS]
                part_documents[part] = frozenset([named] if named else (h.chunk.document_id for h in own[:2]))
                _add(hits, own)
        sources = self._named(query, scope)
        if sources and len(sources) < len(scope.searched_names):
            # A question naming a source ("the 2013 lifestyle guideline", "2013年生活方式指南") gets its best
            # passages for the whole question, which the others' may crowd out (in the other language, often);
            # naming several, each one's: its answer cites each (extractive.py).
            for document_id in sources:
                _add(hits, self.modes.retrieve(scope.narrowed([document_id]), query, mode, PART_BLOCKS).hits[:PART_BLOCKS])
        for passages in self._anchored(query, scope) if self._anchored is not None else ():
            # The best passages naming each of the rarest things the question names, when the search found one
            # of them but missed others (a thing the search found nothing of is likely not what the sources say:
            # "intermittent fasting" is not "fasting glucose").
            names = scope.searched_names
            seen = {hit.chunk.id for hit in hits}
            fresh = [chunk for chunk in passages if chunk.id not in seen]
            if len(fresh) < len(passages):
                _add(hits, [ModeHit(chunk, names.get(chunk.document_id, ""), 0.0, "anchor") for chunk in fresh[:ANCHOR_BLOCKS]])
        timings.update(retrieve=_ms(started), **{f"retrieve.{stage}": ms for stage, ms in found.timings.items()})
        blocks = [EvidenceBlock(n, h.chunk, h.document_name, h.score, h.ranks) for n, h in enumerate(hits, start=1)]
        return blocks, found, part_documents


def _add(hits: list[ModeHit], more: Sequence[ModeHit]) -> None:
    """Append the hits not already there."""
    seen = {hit.chunk.id for hit in hits}
    for hit in more:
        if hit.chunk.id not in seen:
            hits.append(hit)
            seen.add(hit.chunk.id)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
