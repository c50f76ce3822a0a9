"""The offline answerer: quotes the evidence sentences that best answer the question, each cited.

Every quotable candidate sentence of the evidence blocks (whole sentences, list items, table rows: quotes.py) is
read for general signals: its similarity to the question by both embedders (the main one only for English pairs,
since the default MiniLM model is English-only; the multilingual one for every pair), the IDF-weighted share of
the question's content terms it covers, alone, with its neighbours and in its heading (jieba words for Chinese; in
the other language, through the translator's names of its concepts), the ranks of its passage in retrieval, what
it lacks of what the question asks for (answerability.py), and its kind. The fitted sentence model (scoring.py)
turns them into the probability that it answers; the best leads, close ones follow; the fitted answerability
model decides whether to refuse. A question in several parts gets the best sentence of each part it leaves
open. The sentences are quoted verbatim, so the answer cannot state anything the sources do not.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from workspace_app.answer.answerability import asks_definition, asks_grading, defines, wanted
from workspace_app.answer.quotes import is_table_title, quotable, quote_sentences, table_rows
from workspace_app.answer.scoring import ScoringModels, other_language_side, question_features, reciprocal
from workspace_app.answer.vocabulary import is_technical
from workspace_app.domain import GradeGrammar, NoGrades, QuestionCues
from workspace_app.embedding.embedder import Embedder
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk
from workspace_app.text.cjk import has_cjk
from workspace_app.text.sentences import Span
from workspace_app.text.terms import Coverage, content_terms, evidence_terms, loose

_HAS_NUMBER = re.compile(r"\d")
_MIN_CHARS = {"en": 30, "zh": 10}
_MAX_CHARS = 700
_TERM_LINE = re.compile(r"[•▪●◦‣\-–]\s*([^.;:。；：]{2,40}?)")


def _scored_length(text: str) -> bool:
    """Whether a sentence is long enough to answer and short enough to quote (judged in its own language: a
    Chinese sentence is shorter than an English one)."""
    return _MIN_CHARS["zh" if has_cjk(text) else "en"] <= len(text) <= _MAX_CHARS


def scored_texts(chunk: Chunk) -> list[str]:
    """The sentences and table rows of a chunk that an answer may score, as the embedders see them (a superset:
    `quotable` drops a few more at ask time)."""
    if chunk.kind != "body":
        return []
    spans = quote_sentences(chunk.text)
    rows = table_rows(chunk.text, spans, is_table_title(chunk.section.split(" > ")[-1]))
    return [s.text for s in spans if _scored_length(s.text)] + [row.text for _, row in rows]


@dataclass
class Candidate:
    """An evidence sentence with its features and score."""

    block: EvidenceBlock
    span: Span
    position: int
    coverage: float
    context_coverage: float
    prior: float
    numeric: bool
    context: str = ""
    graded: bool = False
    defining: bool = False
    semantic: float = 0.0
    score: float = 0.0
    twins: list[Candidate] = field(default_factory=list)
    label: str = ""  # the glossary term it is read with ("Delayed OH"), if any
    keyed: bool = False  # a table row whose label the question names
    features: dict[str, float] = field(default_factory=dict)  # what the sentence model read (scoring.py)

    @property
    def own_text(self) -> str:
        """What the sentence says about itself: its term label, the sentence, its section's title."""
        return f"{self.label}\n{self.span.text}\n{self.block.chunk.section.split(' > ')[-1]}"


class EitherLanguage(Coverage):
    """How much of a question a text covers in the question's words, or in the other language's names of the
    concepts it mentions: the mean of the names' share found and of the question's weight covered (its own words
    found, such as numbers and abbreviations, plus each name found weighing an average term), discounted."""

    def __init__(
        self, own: Coverage, names: Sequence[str], discount: float, name_weights: Mapping[str, float] | None = None
    ) -> None:
        super().__init__(own.terms, own.weights, own.short_forms)
        self._names = [loose(name) for name in names if loose(name)]
        self._other = Coverage(self._names, name_weights or {})
        self._discount = discount

    def of(self, text: str) -> float:
        """The better of the two coverages."""
        own = super().of(text)
        if not self._names or not self.terms:
            return own
        average = self.total / len(self.terms)
        found = self._other.of(text)
        combined = min(1.0, own + found * len(self._names) * average / self.total)
        return max(own, self._discount * (found + combined) / 2)


@dataclass(frozen=True)
class Part:
    """One part of a question in several: its terms, and what a sentence lacks to answer it."""

    coverage: Coverage
    answers: Callable[[Candidate], list[str]]
    documents: frozenset[str] = frozenset()


@dataclass
class Selection:
    """What the extractive answerer chose: sentences in answer order, or a refusal, with its confidence (answered:
    the fitted probability that the lead holds the answer; refused: that the sources answer at all), the question's
    features and the scored pool (for fitting and calibration)."""

    sentences: list[Candidate]
    refused: bool
    confidence: float
    features: dict[str, float] = field(default_factory=dict)
    pool: list[Candidate] = field(default_factory=list)


@dataclass(frozen=True)
class ExtractiveWeights:
    """How many sentences are scored and quoted, and how parts of a question are covered (AnswersSettings)."""

    semantic_pool: int = 12
    block_pool: int = 2  # the lexically best sentences of each of the first passages, always scored
    pool_blocks: int = 3
    max_sentences: int = 3
    keep_ratio: float = 0.80
    answerable_threshold: float | None = None  # None: the one fitted with the models
    answerable_across_threshold: float | None = None  # the same, for evidence in the other language
    other_language_threshold: float | None = None  # answer from the other language's evidence at or above it
    translated: float = 0.9
    part_floor: float = 0.2
    part_coverage: float = 0.3


class ExtractiveAnswerer:
    """Picks, orders and scores evidence sentences; the service turns them into a cited answer."""

    name = "extractive"

    def __init__(
        self, embedder: Embedder, weights: ExtractiveWeights | None = None, multilingual: Embedder | None = None,
        models: ScoringModels | None = None, grades: GradeGrammar | None = None, cues: QuestionCues | None = None,
    ) -> None:
        self._embedder = embedder
        self._grades = grades or NoGrades()  # the domain pack's: whether a sentence states a grading
        self._cues = cues or QuestionCues()  # the domain pack's: what asks for an amount (`wanted`)
        self._multilingual = multilingual
        self.weights = weights or ExtractiveWeights()
        self.models = models or ScoringModels.load()

    def select(
        self, question: str, blocks: Sequence[EvidenceBlock], language: str, idf: dict[str, float],
        answers: Callable[[Candidate], list[str]] | None = None, parts: Sequence[Part] = (),
        translations: Sequence[str] = (), contrary: Callable[[Candidate], bool] | None = None,
        sources: frozenset[str] = frozenset(), naming: Callable[[Candidate], float] | None = None,
        short_forms: Mapping[str, Sequence[str]] | None = None, unknown_terms: int = 0,
    ) -> Selection:
        """Choose the sentences to quote, or decide to refuse.

        Each candidate of the pool gets the sentence model's probability of answering; the question is refused
        when the answerability model's probability falls below the threshold, unless the candidates in the other
        language than the lead's answer by their own model (`_other_language`); an answer's confidence is the
        correctness model's probability that its lead holds the answer. `answers` names what a candidate
        lacks of what the question asks for (answerability.py), `naming` how many of the question's acronyms it
        names, `unknown_terms` how many of the question's specific terms the workspace never uses: all features.
        """
        terms = content_terms(question, drop_question_words=True)
        coverage: Coverage = Coverage(terms, idf)
        # A table's row often names its item by a short form only; prose is read in its own words.
        in_tables: Coverage = Coverage(terms, idf, short_forms)
        if translations:
            coverage = EitherLanguage(coverage, translations, self.weights.translated)
            in_tables = EitherLanguage(in_tables, translations, self.weights.translated)
        candidates = self._candidates(
            question, blocks, language, coverage, _row_naming(question, short_forms or {}), in_tables
        )
        if contrary is not None:
            candidates = [c for c in candidates if not contrary(c)]
        if not candidates:
            return Selection([], True, 0.0, {"candidates": 0})
        if parts:
            # A question in several parts is answerable when one part is; each part then gets its best sentence.
            answers = _any_part(parts)
        evidence = coverage.of("\n".join(b.support_text + "\n" + b.chunk.section for b in blocks[:5]))
        pool = self._pool(candidates, answers)
        self._score(question, pool, language, coverage, answers, naming)
        pool.sort(key=lambda c: -c.score)
        features = question_features([(c.score, c.features) for c in pool], evidence, unknown_terms, language == "zh")
        answerable, refuse_below = self.models.answerability(
            features, self.weights.answerable_threshold, self.weights.answerable_across_threshold
        )
        # An answer's confidence is the probability that its first citation holds the answer.
        confidence = self.models.correct.probability(features)
        features.update(answerable=answerable, correct=confidence)
        # A question asking what several of the workspace's sources say is answered from each of them, however
        # weakly (its confidence says how weakly); the large sets have no such questions to fit a refusal on.
        asks_sources = len(sources) > 1
        if answerable < refuse_below and not asks_sources:
            other = self._other_language(pool, evidence, unknown_terms, language)
            if other is None:
                return Selection([], True, answerable, features, pool)
            # The lead's evidence does not answer, the other language's does: it leads, and its probability of
            # holding the answer is the answer's confidence.
            pool, confidence = other
            features.update(other_language_lead=1.0, correct=confidence)
        chosen = self._pick(pool)
        for part in parts:
            self._cover(part, pool, chosen)
        for document_id in sorted(sources):
            self._cite(document_id, pool, chosen)
        return Selection(chosen, False, confidence, features, pool)

    def _other_language(
        self, pool: list[Candidate], evidence: float, unknown_terms: int, language: str
    ) -> tuple[list[Candidate], float] | None:
        """The pool led by its candidates in the other language than the lead's, with the fitted probability that
        the best of them holds the answer, when it reaches the threshold (None otherwise, or without such
        candidates or model)."""
        model = self.models.other_language
        if model is None:
            return None
        side = other_language_side([(c.score, c.features) for c in pool], evidence, unknown_terms, language == "zh")
        if side is None:
            return None
        chosen, features = side
        threshold = self.weights.other_language_threshold
        probability = model.probability(features)
        if probability < (self.models.other_language_threshold if threshold is None else threshold):
            return None
        led = set(chosen)
        return [pool[i] for i in chosen] + [c for i, c in enumerate(pool) if i not in led], probability

    def _cite(self, document_id: str, ranked: list[Candidate], chosen: list[Candidate]) -> None:
        """Add a document the question names its best sentence when no chosen one comes from it (one lacking
        nothing of what is asked: the `lacking` its features already counted)."""
        if any(c.block.chunk.document_id == document_id for c in chosen):
            return
        floor = ranked[0].score * self.weights.part_floor
        fitting = [
            c for c in ranked
            if c.block.chunk.document_id == document_id and c.score >= floor
            and not any(_redundant(c, other) for other in chosen) and not c.features.get("lacking", 0.0)
        ]
        if fitting:
            chosen.append(fitting[0])

    def _cover(self, part: Part, ranked: list[Candidate], chosen: list[Candidate]) -> None:
        """Add the sentence best answering one part of the question when the chosen ones do not answer it."""
        # The part's own search names the documents that answer it (another document, in a cross-document question).
        home = part.documents or {c.block.chunk.document_id for c in ranked}
        if any(c.block.chunk.document_id in home and not part.answers(c) and _part_score(part, c) >= self.weights.part_coverage
               for c in chosen):
            return
        floor = ranked[0].score * self.weights.part_floor
        fitting = [
            c for c in ranked
            if c.score >= floor and c not in chosen and not any(_redundant(c, other) for other in chosen)
            and c.block.chunk.document_id in home and _part_score(part, c) >= self.weights.part_coverage
            and not part.answers(c)
        ]
        if fitting:
            chosen.append(max(fitting, key=lambda c: (_part_score(part, c), c.score)))

    def _pool(self, candidates: list[Candidate], answers: Callable[[Candidate], list[str]] | None) -> list[Candidate]:
        """The candidates worth embedding: the lexically best, the best few of each of the first passages, and the
        best giving all the question asks for."""
        w = self.weights
        ranked = sorted(candidates, key=lambda c: -_lexical(c))
        pool = ranked[: w.semantic_pool]
        for n in range(1, w.pool_blocks + 1):
            pool += [c for c in ranked if c.block.n == n and c not in pool][: w.block_pool]
        if answers is not None:
            pool += [c for c in ranked if c not in pool and not answers(c)][: w.block_pool * 2]
        return pool

    def _score(
        self, question: str, pool: list[Candidate], language: str, coverage: Coverage,
        answers: Callable[[Candidate], list[str]] | None, naming: Callable[[Candidate], float] | None,
    ) -> None:
        """Every pooled candidate's features, and its probability of answering by the sentence model."""
        own = [c for c in pool if language == "en" and not has_cjk(c.span.text)]
        main = self._similarities(question, own, self._embedder)
        multi = self._similarities(question, pool, self._multilingual) if self._multilingual is not None else {}
        for c in pool:
            c.semantic = main.get(id(c), multi.get(id(c), 0.0))
            ranks = c.block.ranks
            c.features = {
                "semantic_main": main.get(id(c), 0.0), "semantic_multi": multi.get(id(c), 0.0),
                "coverage": c.coverage, "context": c.context_coverage,
                "heading": coverage.of(c.block.chunk.section.split(" > ")[-1]),
                "fused_rank": reciprocal(c.block.n), "first_block": float(c.block.n == 1),
                "dense_rank": reciprocal(ranks.get("dense")), "keyword_rank": reciprocal(ranks.get("sparse")),
                "lacking": float(min(3, len(answers(c)))) if answers is not None else 0.0,
                "numeric": float(c.numeric), "graded": float(c.graded), "defining": float(c.defining),
                "keyed": float(c.keyed) + (naming(c) if naming is not None else 0.0),
                "table_row": float(is_table_title(c.block.chunk.section.split(" > ")[-1])),
                "other_language": float(has_cjk(c.span.text) != (language == "zh")),
                "short": float(len(c.span.text) < 60), "first_sentence": float(c.position == 0),
            }
            c.score = self.models.sentence.probability(c.features)

    @staticmethod
    def _similarities(question: str, candidates: list[Candidate], embedder: Embedder) -> dict[int, float]:
        """Cosine similarity of the question to each candidate sentence, by candidate identity."""
        if not candidates:
            return {}
        vectors = embedder.embed_passages([c.span.text for c in candidates])
        query = embedder.embed_query(question)
        return {id(c): float(s) for c, s in zip(candidates, np.asarray(vectors) @ query, strict=True)}

    def _candidates(
        self, question: str, blocks: Sequence[EvidenceBlock], language: str, prose: Coverage,
        keyed: Callable[[str], bool] | None = None, in_tables: Coverage | None = None,
    ) -> list[Candidate]:
        numeric = wanted(question, self._cues) is not None
        definition = asks_definition(question)
        # "How are classes of recommendation defined?" asks what the grades mean, not for a graded statement.
        grading = asks_grading(question, self._cues) and not definition
        found = []
        for block in blocks:
            if block.chunk.kind != "body":
                continue
            spans = quote_sentences(block.chunk.text)
            title = block.chunk.section.split(" > ")[-1]
            in_table = is_table_title(title)
            named_row = _named_rows(block.chunk.text, keyed) if in_table and keyed is not None else set()
            coverage = in_tables if in_table and in_tables is not None else prose
            for i, span in enumerate(spans):
                own = "zh" if has_cjk(span.text) else "en"
                if not _scored_length(span.text) or not quotable(block.chunk.text, span, own, in_table):
                    continue
                context = " ".join(s.text for s in spans[max(0, i - 1) : i + 2]) + " " + title
                # An entry of a glossary or definitions table ("• Delayed OH" / "A sustained reduction …") is read
                # with its term: the sentence says what the term is without naming it.
                label = _term_label(spans[i - 1].text) if i else None
                read = f"{label}: {span.text}" if label else span.text
                found.append(Candidate(
                    block, span, i, coverage.of(read), coverage.of(context), 1.0 / block.n,
                    numeric and bool(_HAS_NUMBER.search(span.text)), context,
                    grading and _graded(self._grades, block.chunk.text, span), definition and defines(read),
                    label=label or "", keyed=_line_start(block.chunk.text, span.start) in named_row,
                ))
            # A table row of several sentences is also quoted whole: a drug's dose, use and contraindications are
            # one row's cells, and a question about the drug often asks for more than one of them.
            for i, row in table_rows(block.chunk.text, spans, in_table):
                if not quotable(block.chunk.text, row, "zh" if has_cjk(row.text) else "en", in_table):
                    continue
                context = f"{row.text} {title}"
                found.append(Candidate(
                    block, row, i, coverage.of(row.text), coverage.of(context), 1.0 / block.n,
                    numeric and bool(_HAS_NUMBER.search(row.text)), context,
                    grading and _graded(self._grades, block.chunk.text, row), definition and defines(row.text),
                    keyed=_line_start(block.chunk.text, row.start) in named_row,
                ))
        return found

    def _pick(self, ranked: list[Candidate]) -> list[Candidate]:
        w = self.weights
        chosen: list[Candidate] = []
        floor = ranked[0].score * w.keep_ratio
        lead_language = has_cjk(ranked[0].span.text)
        for candidate in ranked:
            if has_cjk(candidate.span.text) != lead_language:
                continue  # one answer, one language (a question in parts may still add the other: `_cover`)
            twin = next((other for other in chosen if _redundant(candidate, other)), None)
            if twin is not None:
                # The same statement elsewhere (a summary table and the text): cite it too, don't repeat it.
                if len(twin.twins) < 2 and twin.block.chunk.id != candidate.block.chunk.id and candidate.score >= floor * 0.7:
                    twin.twins.append(candidate)
                continue
            if len(chosen) < w.max_sentences and candidate.score >= floor:
                chosen.append(candidate)
        # The best sentence leads; the rest follow in document order (block, then position).
        head, rest = chosen[:1], sorted(chosen[1:], key=lambda c: (c.block.n, c.position))
        return head + rest


# A table row's label: the words before its first figure or mark ("Alzheimer’s disease/dementia † 10 (26.3) …",
# "SFSR (72) 2004 684 …"); a numbered statement ("1. In general, …") has none.
_ROW_LABEL = re.compile(r"^\s*([A-Za-z][^\d†‡§*¶#|]{2,60}?)\s*(?:\(?\d|[†‡§*¶#]|$)")
_LABEL_WORDS = 6


def _row_naming(question: str, short_forms: Mapping[str, Sequence[str]]) -> Callable[[str], bool]:
    """Whether the question names a table row's label: every word of it, or its short form spelled out ("San
    Francisco Syncope Rule" names the row "SFSR (72) …"). A label of one everyday word ("Depression", "Yes") names
    too little to pick a row."""
    asked = evidence_terms(question) | set(short_forms)

    def names(label: str) -> bool:
        words = evidence_terms(label) - {"s"}
        one = next(iter(words), "")
        picks = len(words) >= 2 or bool(_ACRONYM_LABEL.fullmatch(label.strip())) or is_technical(one)
        return bool(words) and picks and words <= asked

    return names


_ACRONYM_LABEL = re.compile(r"[A-Z][A-Za-z0-9-]*[A-Z][A-Za-z0-9-]*")


def _named_rows(text: str, keyed: Callable[[str], bool]) -> set[int]:
    """Where the rows of a table's passage start whose label the question names."""
    named = set()
    offset = 0
    for line in text.split("\n"):
        found = _ROW_LABEL.match(line)
        if found and len(found.group(1).split()) <= _LABEL_WORDS and keyed(found.group(1)):
            named.add(offset)
        offset += len(line) + 1
    return named


def _line_start(text: str, position: int) -> int:
    """Where the line holding `position` starts, if the position opens it (leading spaces aside), else -1."""
    start = text.rfind("\n", 0, position) + 1
    return start if not text[start:position].strip() else -1


def _part_score(part: Part, candidate: Candidate) -> float:
    """How well a sentence, and the sentences around it, cover one part of the question."""
    return 0.5 * part.coverage.of(candidate.span.text) + 0.5 * part.coverage.of(candidate.context)


def _any_part(parts: Sequence[Part]) -> Callable[[Candidate], list[str]]:
    """What a candidate lacks to answer the part it answers best (nothing when it answers one)."""

    def lacking(candidate: Candidate) -> list[str]:
        return min((part.answers(candidate) for part in parts), key=len)

    return lacking


def _graded(grades: GradeGrammar, text: str, span: Span) -> bool:
    """Whether a class or level is stated at the sentence (a recommendation, not its supporting text)."""
    found = grades.grading_in(text, span.start, span.text)
    return bool(found.recommendation_class or found.evidence_level)


def _term_label(line: str) -> str | None:
    """The term of a glossary entry when `line` is one: a bullet with a few words and no sentence ("• Classic OH",
    "- 阵发性房颤"), or None."""
    match = _TERM_LINE.fullmatch(line.strip())
    return match.group(1) if match else None


def _redundant(a: Candidate, b: Candidate) -> bool:
    if a.block.chunk.id == b.block.chunk.id and a.span == b.span:
        return True
    x, y = loose(a.span.text), loose(b.span.text)
    if not x or not y:
        return False
    if x in y or y in x:
        return True
    grams_a = {x[i : i + 4] for i in range(len(x) - 3)}
    grams_b = {y[i : i + 4] for i in range(len(y) - 3)}
    union = grams_a | grams_b
    return bool(union) and len(grams_a & grams_b) / len(union) > 0.6


def _lexical(candidate: Candidate) -> float:
    """A cheap first ranking, before embedding: coverage alone and in context, and the passage's rank."""
    return 0.3 * candidate.coverage + 0.2 * candidate.context_coverage + 0.1 / candidate.block.n
