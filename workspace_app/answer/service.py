"""The answer facade: grounded answers with verified citations (UI, CLI and API call this).

    ask -> scope (the chosen or included sources)
        -> plan (plan.py: the question made standalone, read once: its language, what it wants, its parts, the
           sources it names)
        -> gather (evidence.py: the query mode's blocks, once per part)
        -> answer (answerers.py: quoting offline; a language model writing when the wiring gives one)
        -> verify (citations.py: every cited sentence checked against its block)
        -> citations renumbered [1], [2]... in order of appearance, each with its quote's rectangles

Its parts are given by the wiring (workspace_app/adapters/wiring.py): the scope catalog, the search, the graph
query, the evidence source that locates quotes and the language model, if any.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Generator, Iterator, Sequence
from typing import Protocol

from workspace_app.answer.answerability import AnswerabilityRules, leans_on_before
from workspace_app.answer.answerers import Answerer, Draft, QuotingAnswerer, WritingAnswerer
from workspace_app.answer.citations import Verification, verify_citations, verify_sentences
from workspace_app.answer.evidence import EvidenceGatherer
from workspace_app.answer.extractive import ExtractiveAnswerer, ExtractiveWeights, Selection
from workspace_app.answer.figures import answer_figures
from workspace_app.answer.grade_notes import stated_grading
from workspace_app.answer.llm import LlmAnswerer
from workspace_app.answer.markers import normalize_markers, with_markers
from workspace_app.answer.mentions import EntityPassage, entity_passages, passage_citation
from workspace_app.answer.phrases import (
    UNSUPPORTED_NOTES,
    disclaimer_text,
    is_refusal,
    partial_text,
    quoted_in_text,
    refusal_text,
)
from workspace_app.answer.plan import Planner, QuestionPlan
from workspace_app.answer.quotes import clean_quote, quote_sentences
from workspace_app.answer.reading import QuestionReader
from workspace_app.answer.sources import EvidenceSource
from workspace_app.config import Settings
from workspace_app.domain import DomainPack
from workspace_app.embedding.embedder import Embedder
from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, AnswerLine, Citation, EvidenceBlock, Turn
from workspace_app.models.documents import Chunk, Workspace
from workspace_app.models.graph import Entity
from workspace_app.retrieval.bilingual import Translator
from workspace_app.retrieval.graph_query import GraphQuery
from workspace_app.retrieval.modes import MODES, ModeOptions, ModeRetriever, entity_refs
from workspace_app.retrieval.scope import ScopeCatalog, answer_scope, find_workspace
from workspace_app.retrieval.search import SearchService
from workspace_app.storage.base import ChunkRepository, DocumentRepository, FigureRepository
from workspace_app.text.language import detect_language

MAX_QUESTION_CHARS = 2000
HISTORY_TURNS = 3
class AnswerCatalog(ScopeCatalog, DocumentRepository, ChunkRepository, Protocol):
    """What answers read of the catalog: the scope, documents (citations) and the keyword index (term weights)."""


class AnswerService:
    """Grounded answers over a workspace (chats and notes keep them: workspace_app/chats)."""

    def __init__(
        self, *, settings: Settings, catalog: AnswerCatalog, search: SearchService, embedder: Embedder,
        graph: GraphQuery | None, source: EvidenceSource,
        llm: LlmAnswerer | None = None, translator: Translator | None = None, multilingual: Embedder | None = None,
        domain: DomainPack, figures: FigureRepository | None = None,
    ) -> None:
        """`llm`: the language model that writes answers, given by the wiring when one is configured; without it
        the offline quoting answerer answers."""
        self.catalog = catalog
        self.search = search
        self.embedder = embedder
        self.source = source
        self.grades = domain.grades  # what a citation's class and level are read with (none in a generic pack)
        # The multilingual embedder (when configured) compares a question with sentences of the other language.
        self.extractive = ExtractiveAnswerer(
            embedder, _weights(settings), multilingual=multilingual, grades=self.grades, cues=domain.cues
        )
        confident = settings.answers.confident_threshold
        self.confident_threshold = self.extractive.models.confident_threshold if confident is None else confident
        # The other language's names of what a text mentions (the graph lexicon), for cross-language answers.
        self.reader = QuestionReader(
            catalog, AnswerabilityRules(cues=domain.cues), translator.other_language if translator else None,
            translator.mentions if translator else None,
        )
        self.modes = ModeRetriever(search, catalog, embedder, graph, ModeOptions(seq_ret=settings.retrieval.seq_ret))
        self.planner = Planner(self.reader.named, self.reader.rules.cues)
        self.evidence = EvidenceGatherer(self.modes, self.reader.anchored)
        self.llm = llm
        self.quoting = QuotingAnswerer(self.reader, self.extractive)
        self.answerer: Answerer = WritingAnswerer(llm) if llm is not None else self.quoting
        self.figures = figures  # the figure search and the figures beside passages (answer/figures.py)
        self.figures_shown = settings.answers.figures_shown

    @property
    def answerer_name(self) -> str:
        """'llm' when a language model writes the answers, else 'extractive'."""
        return self.answerer.name

    # Answers

    def ask(
        self, workspace: str, question: str, history: Sequence[Turn] = (), documents: Sequence[str] | None = None,
        mode: str = "naive",
    ) -> Answer:
        """Answer a question from the workspace's sources (see `ask_stream`)."""
        answer = None
        for event in self.ask_stream(workspace, question, history, documents, mode):
            if isinstance(event, Answer):
                answer = event
        assert answer is not None
        return answer

    def ask_stream(
        self, workspace: str, question: str, history: Sequence[Turn] = (), documents: Sequence[str] | None = None,
        mode: str = "naive", lines: bool = False,
    ) -> Iterator[str | AnswerLine | Answer]:
        """Pieces of text while a language model writes, then the verified `Answer` (always last). With `lines`, a
        quoted answer's lines come first, each as soon as it is final (`AnswerLine`: before the citations are
        located in the documents and the answer's entities found)."""
        started = time.perf_counter()
        question = _clean_question(question)
        if mode not in MODES:
            raise WorkspaceError(f"The query mode '{mode}' is not available; use one of: {', '.join(MODES)}.")
        scope = answer_scope(self.catalog, workspace, documents)
        timings: dict[str, float] = {}
        plan = self.planner.plan(question, scope, mode, self._standalone(question, history, timings))
        evidence = self.evidence.gather(plan, timings)
        draft = yield from self.answerer.answer(plan, evidence, timings)
        answer = yield from self._verified(plan, draft, timings, lines)
        answer.standalone_question = plan.standalone if plan.standalone != question else None
        answer.mode = mode
        answer.documents = scope.document_ids
        answer.entities = [] if answer.refused else entity_refs(self.modes.graph, evidence.found, answer.citations, scope.workspace)
        if self.figures is not None and self.figures_shown:
            cited = [] if answer.refused else [c.chunk_id for c in answer.citations if c.level == "guideline"]
            asked = plan.call("figures")
            answer.figures = answer_figures(
                self.figures, asked.query if asked else None, scope.workspace.id, scope.document_ids, cited,
                self.figures_shown,
            )
        timings["total"] = _ms(started)
        answer.timings_ms = timings
        yield answer

    def _standalone(self, question: str, history: Sequence[Turn], timings: dict[str, float]) -> str:
        """The question made to stand alone: rewritten by the LLM, or joined to the last question offline."""
        recent = list(history)[-HISTORY_TURNS:]
        if not recent:
            return question
        started = time.perf_counter()
        if self.llm is not None:
            rewritten = self.llm.rewrite(question, recent)
        elif leans_on_before(question):
            rewritten = f"{recent[-1].question} {question}"
        else:
            rewritten = question
        timings["rewrite"] = _ms(started)
        return rewritten

    def explain(self, workspace: str, question: str, documents: Sequence[str] | None = None, mode: str = "hybrid") -> Selection:
        """What the extractive answerer reads and decides for a question: its scored pool, the question's features
        and the answerability probability (`bench.fit_answers` fits the scoring models on these)."""
        plan = self.planner.plan(_clean_question(question), answer_scope(self.catalog, workspace, documents), mode)
        evidence = self.evidence.gather(plan, {})
        return self.quoting.select(plan.question, evidence.blocks, plan.language, plan.scope, evidence.part_documents,
                                   parts=plan.part_texts)

    # Verifying a draft

    def _verified(
        self, plan: QuestionPlan, draft: Draft, timings: dict[str, float], lines: bool = False
    ) -> Generator[AnswerLine, None, Answer]:
        """The draft's citations checked against its blocks, and the answer built from what holds (a quoted one's
        lines yielded as they are final, with `lines`)."""
        question, language = plan.question, plan.language
        if draft.refused or (draft.text is not None and (not draft.text.strip() or is_refusal(draft.text))):
            return self._refusal(question, language, draft.confidence, self.answerer.name)
        started = time.perf_counter()
        if draft.quoting:
            verification = verify_sentences(draft.sentences, draft.blocks, None, language)
            timings["verify"] = _ms(started)
            return (yield from self._assemble(question, verification, draft.blocks, language, draft.confidence, timings,
                                              "\n\n", quoting=True, lines=lines))
        verification = verify_citations(normalize_markers(draft.text or ""), draft.blocks, self.embedder, language)
        timings["verify"] = _ms(started)
        supported = [max(s.score for s in c.supports) for c in verification.sentences if c.supports]
        share = len(supported) / max(1, sum(1 for c in verification.sentences if c.needs_citation))
        confidence = share * (sum(supported) / len(supported)) if supported else 0.0
        joiner = " " if language != "zh" else ""
        answer = yield from self._assemble(question, verification, draft.blocks, language, confidence, timings, joiner)
        answer.answerer = self.answerer.name
        # A written answer's confidence is its citations' support, not the fitted probability: it is confident when
        # every sentence needing a citation has a verified one.
        if verification.grounded and share == 1.0:
            answer.support, answer.support_note = "confident", ""
        return answer

    # Building the answer

    def _assemble(
        self, question: str, verification: Verification, blocks: list[EvidenceBlock], language: str,
        confidence: float, timings: dict[str, float], joiner: str, quoting: bool = False, lines: bool = False,
    ) -> Generator[AnswerLine, None, Answer]:
        """The answer's lines (each yielded once final, with `lines`), then its citations, numbered in order of
        appearance and located in their documents (the slow part, after the lines)."""
        started = time.perf_counter()
        by_n = {block.n: block for block in blocks}
        confident = confidence >= self.confident_threshold and verification.grounded
        note = "" if confident else partial_text(language)
        foreign = _first_foreign_quote(verification, language) if quoting else None
        numbers: dict[tuple[str, int], int] = {}
        cited: list[tuple[EvidenceBlock, str, int, float]] = []
        texts = []
        for i, sentence in enumerate(verification.sentences):
            marks = []
            for support in sentence.supports:
                key = (by_n[support.n].chunk.id, support.quote.start)
                if key not in numbers:
                    numbers[key] = len(cited) + 1
                    cited.append((by_n[support.n], support.quote.text, support.quote.start, support.score))
                marks.append(numbers[key])
            text = clean_quote(sentence.text)
            if quoting and sentence.supports:
                note_of = stated_grading(by_n[sentence.supports[0].n], sentence.supports[0].quote.start, sentence.text, language, self.grades)
                text = text[:-1] + note_of + text[-1] if note_of and text[-1:] in ".。" else text + note_of
            line = with_markers(text, [f"[{m}]" for m in dict.fromkeys(marks)], language)
            if not sentence.supported:
                line += " " + UNSUPPORTED_NOTES.get(language, UNSUPPORTED_NOTES["en"])
            if foreign is not None and foreign[0] == i:
                # An offline answer quotes: say so before the first quote in another language than the question's.
                line = f"{quoted_in_text(language, foreign[1])} {line}"
            texts.append(line)
            if lines:
                yield AnswerLine(line, i, joiner, note)
        citations = [self._citation(n, *quoted) for n, quoted in enumerate(cited, 1)]
        timings["locate"] = _ms(started)
        return Answer(
            question=question, text=joiner.join(texts), citations=citations, grounded=verification.grounded,
            refused=False, confidence=round(confidence, 4), language=language, disclaimer=disclaimer_text(language),
            unsupported=verification.unsupported,
            support="confident" if confident else "partial", support_note=note,
        )

    def _citation(self, n: int, block: EvidenceBlock, quote: str, start: int, score: float) -> Citation:
        chunk = block.chunk
        document = self.catalog.get_document(chunk.document_id)
        rects = self.source.locate(document, chunk, quote, start) if document else ()
        pages = sorted({r.page for r in rects}) or [chunk.page_start, chunk.page_end]
        grading = self.grades.grading_in(chunk.text, start, quote)
        return Citation(
            n=n, chunk_id=chunk.id, document=block.document_name, document_id=chunk.document_id,
            page_start=pages[0], page_end=pages[-1], section=chunk.section, quote=clean_quote(quote), rects=tuple(rects),
            chunk_rects=chunk.rects, score=score,
            # Only what is stated at the quote: a chunk may hold several recommendations graded differently.
            recommendation_class=grading.recommendation_class, evidence_level=grading.evidence_level,
        )

    def find_sentences(
        self, workspace: str, query: str, wanted: Callable[[str], bool], documents: Sequence[str] | None = None,
        top_k: int = 20, limit: int = 4,
    ) -> list[Citation]:
        """The sentences `wanted` accepts in the passages a search for the query finds, best passage first, as
        citations (numbered from 1): for a caller that knows the kind of sentence it looks for (a target stated for
        a lab, issue 28 item 3), which an answer's few quotes may not include."""
        found: list[Citation] = []
        for hit in self.search.search(workspace, query, top_k=top_k, documents=documents).hits:
            for span in quote_sentences(hit.chunk.text):
                if len(found) < limit and wanted(span.text):
                    block = EvidenceBlock(n=0, chunk=hit.chunk, document_name=hit.document_name, score=hit.score)
                    found.append(self._citation(len(found) + 1, block, span.text, span.start, hit.score))
        return found

    def quote_citation(self, chunk: Chunk, document_name: str, quote: str) -> Citation:
        """A sentence of a passage as a citation, located on its page as an answer's quotes are (for callers that
        choose the sentence themselves: the studio's briefing)."""
        block = EvidenceBlock(n=0, chunk=chunk, document_name=document_name, score=1.0)
        return self._citation(0, block, quote, max(0, chunk.text.find(quote)), 1.0)

    def _refusal(self, question: str, language: str, confidence: float, answerer: str) -> Answer:
        return Answer(
            question=question, text=refusal_text(language), citations=[], grounded=True, refused=True,
            confidence=round(confidence, 4), language=language, disclaimer=disclaimer_text(language), answerer=answerer,
            support="none",
        )

    def _workspace(self, workspace: str) -> Workspace:
        return find_workspace(self.catalog, workspace)

    # Where an entity is mentioned (the Graph page's side list)

    def entity_passages(
        self, workspace: str, entity: Entity, document_ids: Sequence[str] | None = None, limit: int = 20
    ) -> list[EntityPassage]:
        """The passages mentioning an entity, most mentions first (empty without a graph)."""
        if self.modes.graph is None:
            return []
        return entity_passages(self.modes.graph, self.catalog, self._workspace(workspace).id, entity, document_ids, limit)

    def passage_citation(self, passage: EntityPassage, n: int = 1) -> Citation:
        """A passage as a citation the PDF panel can open, its naming sentence highlighted."""
        return passage_citation(self.catalog, self.source, passage, n)


def _weights(settings: Settings) -> ExtractiveWeights:
    """The extractive answerer's tunables from the answers settings."""
    answers = settings.answers
    return ExtractiveWeights(
        semantic_pool=answers.scored_sentences, max_sentences=answers.max_sentences,
        answerable_threshold=answers.answerable_threshold,
        answerable_across_threshold=answers.answerable_across_threshold,
        other_language_threshold=answers.other_language_threshold,
    )


def _first_foreign_quote(verification: Verification, language: str) -> tuple[int, str] | None:
    """(index, language) of the first quoted sentence in another language than the question's (a cross-document
    answer may quote both languages), or None."""
    quoted = [(i, detect_language(s.text)) for i, s in enumerate(verification.sentences) if s.supports]
    return next(((i, lang) for i, lang in quoted if lang != language), None)


def _clean_question(question: str) -> str:
    cleaned = re.sub(r"\s+", " ", question).strip()
    if not cleaned:
        raise WorkspaceError("Type a question first.")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise WorkspaceError(f"Questions are limited to {MAX_QUESTION_CHARS} characters; shorten it and ask again.")
    return cleaned


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
