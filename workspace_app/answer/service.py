"""The answer facade: grounded answers with verified citations, chats and notes (UI, CLI and API call this).

    ask -> scope (the chosen or included sources) -> retrieve (the query mode, retrieval/modes.py) -> evidence blocks
        -> answer (extractive by default; the LLM when one is configured) -> verify citations
        -> citations renumbered [1], [2]... in order of appearance, each with its quote's rectangles

Its parts are given by the wiring (workspace_app/adapters/wiring.py): the scope catalog, the search, the graph
query, the evidence source that locates quotes, and the chat and note repositories.
"""

from __future__ import annotations

import re
import time
from collections.abc import Generator, Iterator, Sequence
from dataclasses import replace
from typing import Protocol

from storage.base import ChatRepository, ChunkRepository, DocumentRepository, NoteRepository
from workspace_app.answer.answerability import AnswerabilityRules, names_a_subject, question_parts
from workspace_app.answer.citations import Verification, verify_citations, verify_sentences
from workspace_app.answer.document_names import without_document_names
from workspace_app.answer.evidence import EvidenceGatherer
from workspace_app.answer.export import chat_markdown, notes_markdown
from workspace_app.answer.extractive import Candidate, ExtractiveAnswerer, ExtractiveWeights, Selection
from workspace_app.answer.grade_notes import stated_grading
from workspace_app.answer.llm import LlmAnswerer
from workspace_app.answer.markers import normalize_markers, strip_markers, with_markers
from workspace_app.answer.mentions import EntityPassage, entity_passages, passage_citation
from workspace_app.answer.phrases import (
    UNSUPPORTED_NOTES,
    disclaimer_text,
    is_refusal,
    partial_text,
    quoted_in_text,
    refusal_text,
)
from workspace_app.answer.reading import QuestionReader
from workspace_app.answer.sources import EvidenceSource
from workspace_app.config import Settings
from workspace_app.domain import DomainPack
from workspace_app.embedding.embedder import Embedder
from workspace_app.errors import ChatNotFoundError, NoteNotFoundError, WorkspaceError
from workspace_app.models.answers import Answer, Chat, ChatMessage, Citation, EvidenceBlock, Note, SourceUses, Turn
from workspace_app.models.documents import Workspace
from workspace_app.models.graph import Entity
from workspace_app.retrieval.bilingual import Translator
from workspace_app.retrieval.graph_query import GraphQuery
from workspace_app.retrieval.modes import MODES, ModeOptions, ModeRetriever, entity_refs
from workspace_app.retrieval.scope import Scope, ScopeCatalog, answer_scope, find_workspace
from workspace_app.retrieval.search import SearchService
from workspace_app.text.language import detect_language
from workspace_app.text.source_markers import without_source_markers
from workspace_app.text.terms import content_terms

MAX_QUESTION_CHARS = 2000
HISTORY_TURNS = 3
PART_SENTENCES = 2  # sentences quoted for each part of a question answered part by part
NEW_CHAT = "New chat"
NOTE_TITLE_CHARS = 200
MAX_NOTE_CHARS = 20_000
_FOLLOW_UP = re.compile(
    r"^(and|but|also|what about|how about|then|so)\b|\b(it|its|this|that|these|those|they|them|he|she)\b|"
    r"^(那|那么|还有|另外)|它|这个|那个|这些|那些|其",
    re.IGNORECASE,
)


class AnswerCatalog(ScopeCatalog, DocumentRepository, ChunkRepository, Protocol):
    """What answers read of the catalog: the scope, documents (citations) and the keyword index (term weights)."""


class AnswerService:
    """Grounded answers over a workspace, and the chats and notes that keep them."""

    def __init__(
        self, *, settings: Settings, catalog: AnswerCatalog, search: SearchService, embedder: Embedder,
        graph: GraphQuery | None, source: EvidenceSource, chats: ChatRepository, notes: NoteRepository,
        llm: LlmAnswerer | None = None, translator: Translator | None = None, multilingual: Embedder | None = None,
        domain: DomainPack,
    ) -> None:
        self.catalog = catalog
        self.embedder = embedder
        self.source = source
        self.chats = chats
        self.notes = notes
        # The multilingual embedder (when configured) compares a question with sentences of the other language.
        self.grades = domain.grades  # what a citation's class and level are read with (none in a generic pack)
        self.extractive = ExtractiveAnswerer(embedder, _weights(settings), multilingual=multilingual, grades=self.grades)
        confident = settings.answers.confident_threshold
        self.confident_threshold = self.extractive.models.confident_threshold if confident is None else confident
        # The other language's names of what a text mentions (the graph lexicon), for cross-language answers.
        self.reader = QuestionReader(
            catalog, AnswerabilityRules(cues=domain.cues), translator.other_language if translator else None,
            translator.mentions if translator else None,
        )
        self.modes = ModeRetriever(search, catalog, embedder, graph, ModeOptions(seq_ret=settings.retrieval.seq_ret))
        self.evidence = EvidenceGatherer(self.modes, self.reader.named, self.reader.anchored)
        llm_settings = settings.llm
        configured = bool(llm_settings.api_key or llm_settings.base_url)
        self.llm = llm if llm is not None else (LlmAnswerer(llm_settings) if configured else None)

    @property
    def answerer_name(self) -> str:
        """'llm' when a language model is configured, else 'extractive'."""
        return "llm" if self.llm is not None else "extractive"

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
        mode: str = "naive",
    ) -> Iterator[str | Answer]:
        """Pieces of text while a language model writes, then the verified `Answer` (always last)."""
        started = time.perf_counter()
        question = _clean_question(question)
        if mode not in MODES:
            raise WorkspaceError(f"The query mode '{mode}' is not available; use one of: {', '.join(MODES)}.")
        language = detect_language(question)
        scope = answer_scope(self.catalog, workspace, documents)
        timings: dict[str, float] = {}
        standalone = self._standalone(question, history, timings)
        blocks, found, part_documents = self.evidence.gather(standalone, scope, timings, mode)
        if self.llm is not None:
            text = yield from self._generate(standalone, blocks, language, timings)
            answer = self._from_text(question, text, blocks, language, timings)
        else:
            answer = self._extract(question, standalone, blocks, language, scope, timings, part_documents, mode)
        answer.standalone_question = standalone if standalone != question else None
        answer.mode = mode
        answer.documents = scope.document_ids
        answer.entities = [] if answer.refused else entity_refs(self.modes.graph, found, answer.citations, scope.workspace)
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
        elif _FOLLOW_UP.search(question) or len(content_terms(question, drop_question_words=True)) < 3:
            rewritten = f"{recent[-1].question} {question}"
        else:
            rewritten = question
        timings["rewrite"] = _ms(started)
        return rewritten

    def explain(self, workspace: str, question: str, documents: Sequence[str] | None = None, mode: str = "hybrid") -> Selection:
        """What the extractive answerer reads and decides for a question: its scored pool, the question's features
        and the answerability probability (`bench.fit_answers` fits the scoring models on these)."""
        question = _clean_question(question)
        scope = answer_scope(self.catalog, workspace, documents)
        blocks, _, part_documents = self.evidence.gather(question, scope, {}, mode)
        return self._select(question, blocks, detect_language(question), scope, part_documents)

    def _select(
        self, question: str, blocks: list[EvidenceBlock], language: str, scope: Scope,
        part_documents: dict[str, frozenset[str]], shared_case: bool = False,
    ) -> Selection:
        """The question read against the scope, and the extractive answerer's choice from its evidence."""
        reading = self.reader.read(question, scope, blocks, part_documents, shared_case=shared_case)
        return self.extractive.select(
            question, blocks, language, reading.idf, reading.lacking, reading.parts, reading.translations,
            reading.contrary, reading.sources, reading.naming, reading.short_forms,
            len(reading.needs.absent) + len(reading.needs.unknown),
        )

    # The extractive answerer

    def _extract(
        self, question: str, standalone: str, blocks: list[EvidenceBlock], language: str, scope: Scope,
        timings: dict[str, float], part_documents: dict[str, frozenset[str]], mode: str = "naive",
    ) -> Answer:
        started = time.perf_counter()
        by_part = self._by_part(standalone, scope, language, mode)
        if by_part is not None:
            sentences, part_blocks, confidence = by_part
            timings["answer"] = _ms(started)
            verification = verify_sentences(sentences, part_blocks, None, language)
            return self._assemble(question, verification, part_blocks, language, confidence, timings, "\n\n", True)
        started = time.perf_counter()
        selection = self._select(standalone, blocks, language, scope, part_documents)
        timings["answer"] = _ms(started)
        if selection.refused:
            return self._refusal(question, language, selection.confidence, "extractive")
        started = time.perf_counter()
        sentences = [_quoted(candidate) for candidate in selection.sentences]
        verification = verify_sentences(sentences, blocks, None, language)
        timings["verify"] = _ms(started)
        return self._assemble(question, verification, blocks, language, selection.confidence, timings, "\n\n", True)

    def _by_part(
        self, question: str, scope: Scope, language: str, mode: str
    ) -> tuple[list[str], list[EvidenceBlock], float] | None:
        """A question in parts naming the sources they ask ("How much salt does the syncope guideline suggest, and
        what sodium ceiling does the lifestyle guideline set?"), answered one part at a time, each in the source it
        names, without the words naming it (they match the source's title pages, not its answer): the quoted
        sentences with their markers, the blocks they cite (numbered across parts) and the lowest confidence.
        None when the question is not such a question or a part goes unanswered alone (the whole question's
        evidence then decides)."""
        parts = question_parts(question)
        if len(parts) < 2:
            return None
        naming = [self.reader.named(part, scope) for part in parts]
        if not any(naming) or any(len(named) > 1 for named in naming):
            return None
        named = [named[0] if named else None for named in naming]
        sentences: list[str] = []
        blocks: list[EvidenceBlock] = []
        confidence = 1.0
        previous = ""
        for part, document_id in zip(parts, named, strict=True):
            asked = without_document_names(part)
            # "… and does the Chinese AF guideline allow a lower range?" leaves its subject (the INR) to the part
            # before it: with no subject of its own, the part is asked with that part.
            asked, previous = (asked if names_a_subject(asked) else f"{previous} {asked}".strip()), asked
            within = scope.narrowed([document_id]) if document_id else scope
            own, _, part_documents = self.evidence.gather(asked, within, {}, mode)
            selection = self._select(asked, own, language, within, part_documents, shared_case=True)
            if selection.refused:
                return None
            offset = len(blocks)
            blocks += [replace(block, n=block.n + offset) for block in own]
            for candidate in selection.sentences[:PART_SENTENCES]:
                quoted = _quoted(candidate, offset)
                if not any(strip_markers(quoted) == strip_markers(s) for s in sentences):
                    sentences.append(quoted)
            confidence = min(confidence, selection.confidence)
        return sentences, blocks, confidence

    # The LLM answerer

    def _generate(
        self, question: str, blocks: list[EvidenceBlock], language: str, timings: dict[str, float]
    ) -> Generator[str, None, str]:
        assert self.llm is not None
        if not blocks:
            return refusal_text(language)
        started = time.perf_counter()
        pieces = []
        for piece in self.llm.stream(question, blocks, language):
            pieces.append(piece)
            yield piece
        timings["answer"] = _ms(started)
        return "".join(pieces)

    def _from_text(
        self, question: str, text: str, blocks: list[EvidenceBlock], language: str, timings: dict[str, float]
    ) -> Answer:
        if not text.strip() or is_refusal(text):
            return self._refusal(question, language, 0.0, "llm")
        started = time.perf_counter()
        verification = verify_citations(normalize_markers(text), blocks, self.embedder, language)
        timings["verify"] = _ms(started)
        supported = [max(s.score for s in c.supports) for c in verification.sentences if c.supports]
        share = len(supported) / max(1, sum(1 for c in verification.sentences if c.needs_citation))
        confidence = share * (sum(supported) / len(supported)) if supported else 0.0
        answer = self._assemble(question, verification, blocks, language, confidence, timings, " " if language != "zh" else "")
        answer.answerer = "llm"
        # A written answer's confidence is its citations' support, not the fitted probability: it is confident when
        # every sentence needing a citation has a verified one.
        if verification.grounded and share == 1.0:
            answer.support, answer.support_note = "confident", ""
        return answer

    # Building the answer

    def _assemble(
        self, question: str, verification: Verification, blocks: list[EvidenceBlock], language: str,
        confidence: float, timings: dict[str, float], joiner: str, quoting: bool = False,
    ) -> Answer:
        started = time.perf_counter()
        by_n = {block.n: block for block in blocks}
        numbers: dict[tuple[str, int], int] = {}
        citations: list[Citation] = []
        lines = []
        for sentence in verification.sentences:
            marks = []
            for support in sentence.supports:
                key = (by_n[support.n].chunk.id, support.quote.start)
                if key not in numbers:
                    numbers[key] = len(citations) + 1
                    citations.append(self._citation(numbers[key], by_n[support.n], support.quote.text, support.quote.start, support.score))
                marks.append(numbers[key])
            text = without_source_markers(sentence.text)
            if quoting and sentence.supports:
                note = stated_grading(by_n[sentence.supports[0].n], sentence.supports[0].quote.start, sentence.text, language, self.grades)
                text = text[:-1] + note + text[-1] if note and text[-1:] in ".。" else text + note
            line = with_markers(text, [f"[{m}]" for m in dict.fromkeys(marks)], language)
            if not sentence.supported:
                line += " " + UNSUPPORTED_NOTES.get(language, UNSUPPORTED_NOTES["en"])
            lines.append(line)
        timings["locate"] = _ms(started)
        if quoting:
            # An offline answer quotes: say so when the quotes are in another language than the question.
            # The line goes before the first such quote (a cross-document answer may quote both languages).
            quoted = [(i, detect_language(s.text)) for i, s in enumerate(verification.sentences) if s.supports]
            first = next(((i, lang) for i, lang in quoted if lang != language), None)
            if first is not None:
                i, other = first
                lines[i] = f"{quoted_in_text(language, other)} {lines[i]}"
        confident = confidence >= self.confident_threshold and verification.grounded
        return Answer(
            question=question, text=joiner.join(lines), citations=citations, grounded=verification.grounded,
            refused=False, confidence=round(confidence, 4), language=language, disclaimer=disclaimer_text(language),
            unsupported=verification.unsupported,
            support="confident" if confident else "partial", support_note="" if confident else partial_text(language),
        )

    def _citation(self, n: int, block: EvidenceBlock, quote: str, start: int, score: float) -> Citation:
        chunk = block.chunk
        document = self.catalog.get_document(chunk.document_id)
        rects = self.source.locate(document, chunk, quote, start) if document else ()
        pages = sorted({r.page for r in rects}) or [chunk.page_start, chunk.page_end]
        grading = self.grades.grading_in(chunk.text, start, quote)
        return Citation(
            n=n, chunk_id=chunk.id, document=block.document_name, document_id=chunk.document_id,
            page_start=pages[0], page_end=pages[-1], section=chunk.section, quote=quote, rects=tuple(rects),
            chunk_rects=chunk.rects, score=score,
            # Only what is stated at the quote: a chunk may hold several recommendations graded differently.
            recommendation_class=grading.recommendation_class, evidence_level=grading.evidence_level,
        )

    def _refusal(self, question: str, language: str, confidence: float, answerer: str) -> Answer:
        return Answer(
            question=question, text=refusal_text(language), citations=[], grounded=True, refused=True,
            confidence=round(confidence, 4), language=language, disclaimer=disclaimer_text(language), answerer=answerer,
            support="none",
        )

    # The cited page

    def source_uses(self, workspace: str, document_id: str) -> SourceUses:
        """How many chats and notes of the workspace cite the document (removal warns with these)."""
        ws = self._workspace(workspace)

        def cites(answer: Answer | None) -> bool:
            return answer is not None and any(c.document_id == document_id for c in answer.citations)

        chats = sum(
            any(cites(m.answer) for m in self.chats.list_messages(chat.id)) for chat in self.chats.list_chats(ws.id)
        )
        return SourceUses(chats=chats, notes=sum(cites(note.answer) for note in self.notes.list_notes(ws.id)))

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

    # Chats

    def create_chat(self, workspace: str, title: str = NEW_CHAT) -> Chat:
        """Start a chat in a workspace."""
        return self.chats.create_chat(self._workspace(workspace).id, _clean_title(title))

    def list_chats(self, workspace: str) -> list[Chat]:
        """The workspace's chats, most recent first."""
        return self.chats.list_chats(self._workspace(workspace).id)

    def get_chat(self, workspace: str, chat_id: str) -> Chat:
        """A chat of this workspace, or a clear error."""
        chat = self.chats.get_chat(chat_id)
        if chat is None or chat.workspace_id != self._workspace(workspace).id:
            raise ChatNotFoundError("This chat no longer exists. Pick another chat or start a new one.")
        return chat

    def rename_chat(self, workspace: str, chat_id: str, title: str) -> Chat:
        """Give a chat a new title (1-80 visible characters)."""
        self.get_chat(workspace, chat_id)
        self.chats.rename_chat(chat_id, _clean_title(title))
        return self.get_chat(workspace, chat_id)

    def delete_chat(self, workspace: str, chat_id: str) -> None:
        """Delete a chat with its messages."""
        self.chats.delete_chat(self.get_chat(workspace, chat_id).id)

    def chat_messages(self, workspace: str, chat_id: str) -> list[ChatMessage]:
        """A chat's exchanges in order."""
        return self.chats.list_messages(self.get_chat(workspace, chat_id).id)

    def chat_history(self, workspace: str, chat_id: str) -> list[Turn]:
        """The chat's last turns, as follow-up rewriting sees them."""
        return [Turn(m.question, m.answer.text) for m in self.chat_messages(workspace, chat_id)][-HISTORY_TURNS:]

    def record_answer(self, workspace: str, chat_id: str, answer: Answer) -> ChatMessage:
        """Keep an answer in its chat; the first question names a chat still called 'New chat'."""
        chat = self.get_chat(workspace, chat_id)
        message = self.chats.add_message(chat.id, answer.question, answer)
        if chat.title == NEW_CHAT and message.position == 1:
            self.chats.rename_chat(chat.id, _clean_title(answer.question, limit=60))
        return message

    def export_chat(self, workspace: str, chat_id: str) -> str:
        """The chat as Markdown, each answer followed by its numbered citation list."""
        chat = self.get_chat(workspace, chat_id)
        return chat_markdown(chat, self.chats.list_messages(chat.id))

    # Notes

    def save_note(
        self, workspace: str, answer: Answer, title: str | None = None, message_id: str | None = None
    ) -> Note:
        """Save an answer to the workspace's notes, titled by the question it answered (a follow-up's standalone
        form); saving the answer of one chat message again returns the note already saved."""
        ws = self._workspace(workspace)
        heading = title or answer.standalone_question or answer.question
        return self.notes.add_note(ws.id, _clean_title(heading, NOTE_TITLE_CHARS, "A note's title"), answer, message_id=message_id)

    def add_note(self, workspace: str, title: str, body: str) -> Note:
        """A note of one's own: a title and Markdown text."""
        ws = self._workspace(workspace)
        return self.notes.add_note(ws.id, _clean_title(title, NOTE_TITLE_CHARS, "A note's title"), None, _clean_body(body))

    def update_note(self, workspace: str, note_id: str, title: str, body: str) -> Note:
        """Give a note a new title and Markdown text."""
        self.get_note(workspace, note_id)
        self.notes.update_note(note_id, _clean_title(title, NOTE_TITLE_CHARS, "A note's title"), _clean_body(body))
        return self.get_note(workspace, note_id)

    def list_notes(self, workspace: str) -> list[Note]:
        """The workspace's notes, newest first."""
        return self.notes.list_notes(self._workspace(workspace).id)

    def saved_messages(self, workspace: str) -> dict[str, str]:
        """Chat message id -> id of the note it was saved to, for the workspace's saved answers."""
        return {note.message_id: note.id for note in self.list_notes(workspace) if note.message_id}

    def delete_note(self, workspace: str, note_id: str) -> None:
        """Delete a note of the workspace."""
        self.notes.delete_note(self.get_note(workspace, note_id).id)

    def export_notes(self, workspace: str) -> str:
        """All notes of the workspace as one Markdown document."""
        ws = self._workspace(workspace)
        return notes_markdown(ws.name, self.notes.list_notes(ws.id))

    def get_note(self, workspace: str, note_id: str) -> Note:
        """A note of this workspace, or a clear error."""
        found = next((n for n in self.notes.list_notes(self._workspace(workspace).id) if n.id == note_id), None)
        if found is None:
            raise NoteNotFoundError("This note no longer exists.")
        return found


def _weights(settings: Settings) -> ExtractiveWeights:
    """The extractive answerer's tunables from the answers settings."""
    answers = settings.answers
    return ExtractiveWeights(
        semantic_pool=answers.scored_sentences, max_sentences=answers.max_sentences,
        answerable_threshold=answers.answerable_threshold,
    )


def _quoted(candidate: Candidate, offset: int = 0) -> str:
    """An extractive sentence with its block's marker (and those of the blocks repeating it), block numbers moved
    by `offset`."""
    blocks = [candidate.block.n] + [twin.block.n for twin in candidate.twins]
    return candidate.span.text + " " + "".join(f"[{n + offset}]" for n in dict.fromkeys(blocks))


def _clean_question(question: str) -> str:
    cleaned = re.sub(r"\s+", " ", question).strip()
    if not cleaned:
        raise WorkspaceError("Type a question first.")
    if len(cleaned) > MAX_QUESTION_CHARS:
        raise WorkspaceError(f"Questions are limited to {MAX_QUESTION_CHARS} characters; shorten it and ask again.")
    return cleaned


def _clean_title(title: str, limit: int = 80, what: str = "A chat name") -> str:
    cleaned = re.sub(r"\s+", " ", "".join(ch for ch in title if ch.isprintable())).strip()
    if not cleaned:
        raise WorkspaceError(f"{what} needs at least one visible character.")
    if len(cleaned) <= limit:
        return cleaned
    cut = cleaned[: limit - 1]
    # At a word's end where there is one in the second half (a chat named "… the class of evid…" reads badly).
    return (cut.rsplit(" ", 1)[0] if " " in cut[limit // 2:] else cut).rstrip(" ,;:") + "…"


def _clean_body(body: str) -> str:
    if len(body) > MAX_NOTE_CHARS:
        raise WorkspaceError(f"A note is limited to {MAX_NOTE_CHARS:,} characters; shorten it and save again.")
    return body.strip()


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
