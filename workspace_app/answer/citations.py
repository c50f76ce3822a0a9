"""Citation verification: every `[n]` must exist and the sentence it follows must be supported by block n.

Run after every answer, whichever answerer wrote it. For each sentence of the answer:
- markers naming no evidence block are removed;
- each remaining block is checked: every number in the sentence must occur in the block (a changed dose or
  threshold is the error that matters most), and the sentence's content terms must be covered by the block
  (lexically, or semantically for English when an embedder is given);
- the block's sentence that best matches the claim becomes the citation's quote (the UI highlights it).
Sentences left without a supporting block are marked unsupported; the answer is grounded only when none are.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from workspace_app.answer.markers import markers_of, strip_markers
from workspace_app.answer.quotes import is_table_title, quote_sentences, table_rows
from workspace_app.embedding.embedder import Embedder
from workspace_app.models.answers import EvidenceBlock
from workspace_app.text.sentences import Span, split_sentences
from workspace_app.text.terms import Coverage, content_terms, loose

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
LEXICAL_SUPPORT = 0.6
SEMANTIC_SUPPORT = 0.7
SEMANTIC_LEXICAL_FLOOR = 0.35


@dataclass(frozen=True)
class Support:
    """Block n supports a claim through one of its sentences (the quote), with a 0..1 score."""

    n: int
    quote: Span
    score: float


@dataclass
class CheckedSentence:
    """An answer sentence without its markers, and the blocks that were found to support it."""

    text: str
    supports: list[Support] = field(default_factory=list)
    cited: list[int] = field(default_factory=list)
    needs_citation: bool = True

    @property
    def supported(self) -> bool:
        """True when a cited block supports it, or when it states nothing that needs a source."""
        return bool(self.supports) or not self.needs_citation


@dataclass
class Verification:
    """The checked sentences of an answer and what was removed."""

    sentences: list[CheckedSentence]
    unknown_markers: list[int]

    @property
    def grounded(self) -> bool:
        """No unsupported sentence remains."""
        return all(s.supported for s in self.sentences)

    @property
    def unsupported(self) -> list[str]:
        """Sentences no cited block supports."""
        return [s.text for s in self.sentences if not s.supported]


def verify_citations(
    answer: str, blocks: Sequence[EvidenceBlock], embedder: Embedder | None = None, language: str = "en"
) -> Verification:
    """Check every sentence of `answer` against the blocks its `[n]` markers name."""
    return verify_sentences([span.text for span in _answer_sentences(answer)], blocks, embedder, language)


def verify_sentences(
    sentences: Sequence[str], blocks: Sequence[EvidenceBlock], embedder: Embedder | None = None, language: str = "en"
) -> Verification:
    """Check answer sentences (each with its `[n]` markers) against the blocks they name."""
    by_n = {block.n: block for block in blocks}
    unknown: list[int] = []
    checked: list[CheckedSentence] = []
    for text in sentences:
        markers = markers_of(text)
        unknown += [n for n in markers if n not in by_n]
        sentence = CheckedSentence(strip_markers(text), cited=[n for n in markers if n in by_n])
        sentence.needs_citation = _states_something(sentence.text)
        for n in sentence.cited:
            support = check_support(sentence.text, by_n[n], embedder if language == "en" else None)
            if support is not None:
                sentence.supports.append(support)
        if sentence.text:
            checked.append(sentence)
    return Verification(checked, list(dict.fromkeys(unknown)))


def _answer_sentences(answer: str) -> list[Span]:
    """Sentences of an answer, with markers that start a line glued back to the sentence before them."""
    spans = split_sentences(answer)
    merged: list[Span] = []
    for span in spans:
        if merged and not strip_markers(span.text):
            last = merged[-1]
            merged[-1] = Span(last.start, span.end, f"{last.text} {span.text}")
        else:
            merged.append(span)
    return merged


def _states_something(text: str) -> bool:
    """Whether a sentence makes a claim (has numbers or at least three content terms)."""
    return bool(_NUMBER.search(text)) or len(content_terms(text)) >= 3


def check_support(claim: str, block: EvidenceBlock, embedder: Embedder | None) -> Support | None:
    """The quote of `block` supporting `claim`, or None when the block does not support it."""
    if not numbers_present(claim, block.support_text):
        return None
    terms = content_terms(claim)
    coverage = Coverage(terms, {})
    lexical = coverage.of(block.support_text) if terms else 0.0
    quote, quote_score = best_quote(claim, block, coverage)
    if quote is None:
        return None
    if lexical >= LEXICAL_SUPPORT:
        return Support(block.n, quote, max(lexical, quote_score))
    if embedder is not None and lexical >= SEMANTIC_LEXICAL_FLOOR:
        vectors = embedder.embed_passages([claim, quote.text])
        similarity = float(np.dot(vectors[0], vectors[1]))
        if similarity >= SEMANTIC_SUPPORT:
            return Support(block.n, quote, similarity)
    return None


def best_quote(claim: str, block: EvidenceBlock, coverage: Coverage | None = None) -> tuple[Span | None, float]:
    """The block sentence or table row covering most of the claim (ties: the longer quoted whole, then the
    earlier one)."""
    coverage = coverage or Coverage(content_terms(claim), {})
    flat_claim = loose(claim)
    sentences = quote_sentences(block.chunk.text)
    best: tuple[Span | None, float] = (None, -1.0)
    size = 0
    in_table = is_table_title(block.chunk.section.split(" > ")[-1])
    for span in sentences + [row for _, row in table_rows(block.chunk.text, sentences, in_table)]:
        whole = bool(flat_claim) and loose(strip_markers(span.text)) in flat_claim and len(loose(span.text)) > 8
        score = 1.0 if whole else coverage.of(span.text)
        if score > best[1] or whole and score == best[1] and len(span.text) > size:
            best, size = (span, score), len(span.text)
    return best


def numbers_present(claim: str, evidence: str) -> bool:
    """Every number of the claim occurs in the evidence (thousands separators ignored)."""
    have = {n.replace(",", "") for n in _NUMBER.findall(evidence)}
    return all(n.replace(",", "") in have for n in _NUMBER.findall(claim))
