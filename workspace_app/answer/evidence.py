"""The evidence an answer is chosen from: numbered blocks of passages, gathered once for what the plan asks.

    the mode's hits (direct, then graph expansion)
      + each part's own best passages, for a question in several parts (in the source a part names, if any)
      + each named source's best passages, for a question naming several sources
      + the best passages naming the question's rarest things, when the search missed them
    -> EvidenceBlock 1..n, the documents each part's search found, and, for a question answered part by part,
       each part's own evidence (gathered here once: the answer reads it, nothing searches again)

Every addition comes after the mode's hits, so block order (and the answerer's prior) still favours them.
(Adding the other language's best passages as well was measured: cross-language first citations rose, but
first citations and refusal recall overall fell; bench/README.md.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from workspace_app.answer.plan import QuestionPlan
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk
from workspace_app.retrieval.modes import ModeHit, ModeRetrieval, ModeRetriever
from workspace_app.retrieval.scope import Scope

EVIDENCE_BLOCKS = 8
PART_BLOCKS = 3
ANCHOR_BLOCKS = 2


@dataclass(frozen=True)
class Evidence:
    """What an ask found: its blocks (numbered from 1), the mode's retrieval, the documents each part's search
    found, and each part's own blocks when the plan answers part by part (each numbered from 1)."""

    blocks: list[EvidenceBlock]
    found: ModeRetrieval
    part_documents: dict[str, frozenset[str]] = field(default_factory=dict)
    parts: tuple[list[EvidenceBlock], ...] = ()

    @property
    def apart(self) -> bool:
        """Whether the question's parts are answered in different sources: each part's best passage is in another
        document (two questions asked as one, not one question asked in two steps about one subject)."""
        leads = [own[0].chunk.document_id for own in self.parts if own]
        return len(self.parts) > 1 and len(leads) == len(self.parts) and len(set(leads)) == len(leads)


class EvidenceGatherer:
    """Gathers a question's evidence blocks from the query modes."""

    def __init__(
        self, modes: ModeRetriever, anchored: Callable[[str, Scope], Sequence[Sequence[Chunk]]] | None = None,
    ) -> None:
        """`anchored`: passages naming the rarest things a question names (QuestionReader.anchored)."""
        self.modes = modes
        self._anchored = anchored
        self.blocks = EVIDENCE_BLOCKS

    def gather(self, plan: QuestionPlan, timings: dict[str, float]) -> Evidence:
        """The plan's evidence: the whole question's, and each part's."""
        started = time.perf_counter()
        query, scope, mode = plan.standalone, plan.scope, plan.mode
        found = self.modes.retrieve(scope, query, mode, self.blocks)
        hits = list(found.hits)
        part_documents: dict[str, frozenset[str]] = {}
        own_hits: list[list[ModeHit]] = []
        for part in plan.parts:
            # Each part gets its own best passages (another document's, often: a cross-document question). A part
            # naming one of the sources ("the 2011 women's guideline") is searched in it alone, with the whole
            # question and by what the part asks of it; answered part by part, each part's own evidence is
            # gathered here, once.
            named = part.named
            within = scope.narrowed([named]) if named else scope
            asked = self._direct(part.asked, within, mode, part.parts) if (named or plan.in_parts) and part.asked else []
            own_hits.append(asked)
            if named:
                own = self.modes.retrieve(within, query, mode, PART_BLOCKS).hits[:PART_BLOCKS]
                _add(own, asked[:PART_BLOCKS])
            elif asked:
                own = asked[:PART_BLOCKS]
            else:
                own = self.modes.retrieve(scope, part.text, mode, PART_BLOCKS).hits[:PART_BLOCKS]
            part_documents[part.text] = frozenset([named] if named else (h.chunk.document_id for h in own[:2]))
            _add(hits, own)
        if plan.sources and len(plan.sources) < len(scope.searched_names):
            # A question naming a source ("the 2019 heart failure statement", "2019年心衰共识") gets its best
            # passages for the whole question, which the others' may crowd out (in the other language, often);
            # naming several, each one's: its answer cites each (extractive.py).
            for document_id in plan.sources:
                _add(hits, self.modes.retrieve(scope.narrowed([document_id]), query, mode, PART_BLOCKS).hits[:PART_BLOCKS])
        self._add_anchored(hits, query, scope)
        timings.update(retrieve=_ms(started), **{f"retrieve.{stage}": ms for stage, ms in found.timings.items()})
        parts = tuple(_numbered(own) for own in own_hits) if plan.in_parts else ()
        return Evidence(_numbered(hits), found, part_documents, parts)

    def _direct(self, query: str, scope: Scope, mode: str, parts: Sequence[str] = ()) -> list[ModeHit]:
        """A question's own evidence in a scope: the mode's hits, each of its parts' best passages and the passages
        naming its rarest things."""
        hits = list(self.modes.retrieve(scope, query, mode, self.blocks).hits)
        for part in parts:
            _add(hits, self.modes.retrieve(scope, part, mode, PART_BLOCKS).hits[:PART_BLOCKS])
        self._add_anchored(hits, query, scope)
        return hits

    def _add_anchored(self, hits: list[ModeHit], query: str, scope: Scope) -> None:
        for passages in self._anchored(query, scope) if self._anchored is not None else ():
            # The best passages naming each of the rarest things the question names, when the search found one
            # of them but missed others (a thing the search found nothing of is likely not what the sources say:
            # "intermittent fasting" is not "fasting glucose").
            names = scope.searched_names
            seen = {hit.chunk.id for hit in hits}
            fresh = [chunk for chunk in passages if chunk.id not in seen]
            if len(fresh) < len(passages):
                _add(hits, [ModeHit(chunk, names.get(chunk.document_id, ""), 0.0, "anchor") for chunk in fresh[:ANCHOR_BLOCKS]])


def _numbered(hits: Sequence[ModeHit]) -> list[EvidenceBlock]:
    return [EvidenceBlock(n, h.chunk, h.document_name, h.score, h.ranks) for n, h in enumerate(hits, start=1)]


def _add(hits: list[ModeHit], more: Sequence[ModeHit]) -> None:
    """Append the hits not already there."""
    seen = {hit.chunk.id for hit in hits}
    for hit in more:
        if hit.chunk.id not in seen:
            hits.append(hit)
            seen.add(hit.chunk.id)


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
