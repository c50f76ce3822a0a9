"""How a question is read against the workspace before sentences are picked: term weights, what it needs,
its parts, and the other names of its terms.

    question -> idf (keyword-index document frequencies, remembered per scope)
             -> needs (answerability.py: specific terms, absent ones, the kind of answer)
             -> parts (a question in several: each part's terms, needs and the documents its search found)
             -> translations (the other language's names of its concepts)

One reader serves every ask; what belongs to one ask is returned in a `Reading`, never kept on the reader.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace

from workspace_app.answer.answerability import (
    AnswerabilityRules,
    Needs,
    contrary,
    gives,
    names_acronyms,
    question_acronyms,
    question_needs,
    unmet,
    with_concepts,
)
from workspace_app.answer.document_names import named_documents, without_document_names
from workspace_app.answer.extractive import Candidate, EitherLanguage, ExtractiveWeights, Part
from workspace_app.models.answers import EvidenceBlock
from workspace_app.models.documents import Chunk
from workspace_app.retrieval.scope import Scope
from workspace_app.storage.base import ChunkRepository
from workspace_app.text.analyzer import expand_with_abbreviations, index_text
from workspace_app.text.terms import (
    Coverage,
    content_terms,
    evidence_terms,
    idf_weights,
    is_cjk_term,
    loose,
    present,
    stem,
)

_MEMO_LIMIT = 20_000
_DOCUMENTS_KEPT = 8
_BORROWED = 0.5  # weight of the rest of the question's words in a part that names its document
_TRANSLATED_DISCOUNT = ExtractiveWeights().translated
_OPENING_CHUNKS, _OPENING_CHARS = 8, 4000  # where a document's title is looked for: its first page
# `anchored`: the question's rarest named things; how rare (named by at most this share of the scope's passages,
# or this many); and how common a thing may be when the question asks for a dose, duration or number (only
# passages giving one are kept then).
_ANCHORS, _RARE_SHARE, _RARE_MIN, _COMMON = 2, 0.01, 3, 40


@dataclass(frozen=True)
class Reading:
    """One question read against one scope and its evidence."""

    idf: dict[str, float]
    needs: Needs
    lacking: Callable[[Candidate], list[str]]
    contrary: Callable[[Candidate], bool]
    parts: tuple[Part, ...]
    translations: tuple[str, ...]
    sources: frozenset[str] = frozenset()  # the documents it names, when it names several: each must be cited
    naming: Callable[[Candidate], float] | None = None  # how many of the question's acronyms a sentence names
    # The short forms of what the question spells out, each with the question's terms its long form spells
    # ("sfsr" -> san, francisco, syncop, rule): a table row using one covers them (extractive.py).
    short_forms: Mapping[str, tuple[str, ...]] | None = None


class QuestionReader:
    """Reads questions against the keyword index, the workspace's abbreviations and the translator."""

    def __init__(
        self, chunks: ChunkRepository, rules: AnswerabilityRules,
        translate: Callable[[str], Sequence[str]] | None = None,
        mentions: Callable[[str], Sequence[str]] | None = None,
    ) -> None:
        self._chunks = chunks
        self.rules = rules
        self.translate = translate
        self._mentions = mentions
        self._frequencies: dict[tuple[str, tuple[str, ...], int, str], int] = {}
        self._documents: dict[tuple[str, int], list[tuple[frozenset[str], str]]] = {}
        self._openings: dict[tuple[str, int], str] = {}
        self._defined: dict[tuple[str, frozenset[tuple[str, int]]], dict[str, str]] = {}

    def read(
        self, question: str, scope: Scope, blocks: Sequence[EvidenceBlock],
        part_documents: Mapping[str, frozenset[str]] | None = None,
        parts: Sequence[str] = (),
    ) -> Reading:
        """The question's weights, needs, parts (its plan's, when it has several) and translations."""
        idf = self.idf(question, scope)
        defined = self.abbreviations(scope)
        forms = self._forms(defined)
        needs = self._needs(question, scope, idf, forms, blocks)
        read_parts = tuple(
            self._part(part, question, scope, forms, blocks, needs, (part_documents or {}).get(part, frozenset()))
            for part in parts
        ) if len(parts) > 1 else ()
        named = self.named(question, scope)
        return Reading(
            idf, needs, lambda candidate: unmet(needs, [candidate.span.text], candidate.context, self.rules, forms),
            lambda candidate: contrary(needs, candidate.span.text), read_parts,
            tuple(self.translate(question)) if self.translate is not None else (),
            frozenset(named) if len(named) > 1 else frozenset(),
            _acronym_naming(question_acronyms(question), forms),
            spelled_short_forms(question, defined),
        )

    def idf(self, question: str, scope: Scope) -> dict[str, float]:
        """Smoothed inverse document frequency of the question's content terms in the scope."""
        terms = content_terms(question, drop_question_words=True)
        frequency = self._frequency(scope)
        return idf_weights(terms, lambda key: frequency(terms[key]), scope.chunk_total)

    def _frequency(self, scope: Scope) -> Callable[[str], int]:
        """How many of the scope's passages use a word (the keyword index), remembered per scope."""

        def frequency(word: str) -> int:
            # Document frequencies only change with the workspace's sources: remember them per scope.
            memo = (scope.workspace.id, tuple(scope.document_ids or ()), scope.chunk_total, word)
            if memo not in self._frequencies:
                hits = self._chunks.keyword_search(scope.workspace.id, [word], scope.chunk_total + 1, scope.document_ids)
                if len(self._frequencies) > _MEMO_LIMIT:
                    self._frequencies.clear()
                self._frequencies[memo] = len(hits)
            return self._frequencies[memo]

        return frequency

    def _needs(
        self, question: str, scope: Scope, idf: dict[str, float], forms: Callable[[str], list[str]],
        blocks: Sequence[EvidenceBlock],
    ) -> Needs:
        concepts = list(self._mentions(question)) if self._mentions is not None else []
        terms = with_concepts(content_terms(question, drop_question_words=True), concepts)
        frequency = self._frequency(scope)
        evidence = loose("\n".join(block.chunk.text for block in blocks))

        def used(key: str) -> int:
            word = terms.get(key, key)
            # jieba may cut the sources' text differently from the question's: look for the characters too.
            return frequency(word) or int(is_cjk_term(word) and loose(word) in evidence)

        # A concept name kept whole weighs what its heaviest piece weighs (the pieces' own idf, as before merging).
        weights = dict(idf)
        for key in terms:
            if key not in idf:
                pieces = [idf[piece] for piece in idf if is_cjk_term(piece) and piece in key]
                weights[key] = max(pieces, default=idf_weights([key], used, scope.chunk_total)[key])
        return question_needs(question, used, weights, self.rules, forms, concepts)

    def _part(
        self, part: str, question: str, scope: Scope, forms: Callable[[str], list[str]],
        blocks: Sequence[EvidenceBlock], whole: Needs, documents: frozenset[str],
    ) -> Part:
        """One part of a question in several: its terms and what a sentence must give to answer it."""
        idf = self.idf(part, scope)
        needs = replace(self._needs(part, scope, idf, forms, blocks), absent=whole.absent, unknown=whole.unknown)
        terms = list(content_terms(part, drop_question_words=True))
        names = self._names(part)
        naming = self.named(part, scope)
        named = naming[0] if len(naming) == 1 else None
        if named:
            coverage = self._coverage_in(named, scope, question, without_document_names(part))
        else:
            coverage = Coverage(terms, idf)
            if names:
                # A part another language's guideline answers (a cross-document question) is covered in its names too.
                coverage = EitherLanguage(coverage, names, _TRANSLATED_DISCOUNT)
        return Part(
            coverage,
            lambda candidate: unmet(needs, [candidate.span.text], candidate.context, self.rules, forms),
            documents,
        )

    def _coverage_in(self, document_id: str, scope: Scope, question: str, asked: str) -> Coverage:
        """How well a sentence covers a part that names its document, which answers it alone (`asked`: the part
        without the phrase naming the document).

        The part's words weigh by how rare they are in that document, so its topic's words (房颤 in an AF
        guideline), found in most of its passages, make no passage look like the answer. The rest of the
        question's words count at half weight: a part often leaves its subject to the one before ("… and does the
        AF guideline allow a lower range?").
        """
        weigh = self._weights_in(document_id, scope)
        rest = without_document_names(question)
        own = weigh(list(content_terms(asked, drop_question_words=True)))
        own |= {t: w * _BORROWED for t, w in weigh(list(content_terms(rest, drop_question_words=True))).items() if t not in own}
        names = weigh(self._names(asked))
        names |= {n: w * _BORROWED for n, w in weigh(self._names(rest)).items() if n not in names}
        if not own:
            return Coverage(list(names), names)
        coverage = Coverage(list(own), own)
        return EitherLanguage(coverage, list(names), _TRANSLATED_DISCOUNT, names) if names else coverage

    def anchored(self, question: str, scope: Scope) -> list[list[Chunk]]:
        """For each of the `_ANCHORS` rarest things the question names (a drug, a score, a trial; in either
        language), the passages naming it, best first by the keyword index: all of them when few do (1 % of the
        scope's passages, at least 3); when the question asks for a dose, duration or number of a thing named by
        fewer than `_COMMON` passages, and only in the other language, those of them giving one. A dose table's row
        names its drug once, among figures, and loses the search to prose naming everything else the question says."""
        idf = self.idf(question, scope)
        defined = self.abbreviations(scope)
        forms = self._forms(defined)
        terms = content_terms(question, drop_question_words=True)
        needs = self._needs(question, scope, idf, forms, ())
        found: list[tuple[int, list[Chunk]]] = []
        rare = max(_RARE_MIN, int(_RARE_SHARE * scope.chunk_total))
        # Judged absent too: the keyword index holds a Chinese name in jieba's words, which the needs' count of the
        # word as written misses ("地尔硫卓" is held as "地尔 硫卓").
        # … and the short forms of what it spells out ("San Francisco Syncope Rule": a table row says "SFSR (72)").
        shorts = expand_with_abbreviations(question, [], defined)
        for key in (*needs.specific, *needs.absent, *shorts):
            word = terms.get(key, key)
            if len(word) < 3:
                continue  # "iv", "af": two letters name too many things
            # Each name as the index holds it (a Chinese one in jieba's words, matched as a phrase).
            names = [index_text(name) for name in dict.fromkeys([word, *forms(word)])]
            ids = [chunk_id for chunk_id, _ in self._chunks.keyword_search(scope.workspace.id, names, _COMMON, scope.document_ids)]
            if not 0 < len(ids) <= rare and not (needs.wants and 0 < len(ids) < _COMMON):
                continue
            chunks = self._chunks.get_chunks(ids)
            body = [chunks[i] for i in ids if i in chunks and chunks[i].kind == "body"]
            if len(ids) <= rare:
                found.append((len(ids), body))
            elif needs.wants and not any(_uses(word, chunk.text) for chunk in body):
                # Named only in the other language, the thing's passages rank low for the question's words: those
                # giving what it asks for (the dose of a drug the English question names, in a Chinese table).
                found.append((len(ids), [chunk for chunk in body if gives(needs.wants, chunk.text, self.rules.cues)]))
        return [body for _, body in sorted(found, key=lambda pair: pair[0])[:_ANCHORS]]

    def named(self, text: str, scope: Scope) -> list[str]:
        """The documents of the scope the text names (document_names.py): by file name (also through the
        workspace's abbreviations) or by title."""
        return named_documents(
            text, scope.searched_names, self.translate, self.openings(scope),
            self.abbreviations(scope),
        )

    def abbreviations(self, scope: Scope) -> dict[str, str]:
        """The workspace's abbreviations (short -> long), read once per state of the scope's documents (an ask
        reads them for its needs, its anchors and the sources it names)."""
        memo = (scope.workspace.id, frozenset(scope.chunk_counts.items()))
        if memo not in self._defined:
            if len(self._defined) > _DOCUMENTS_KEPT:
                self._defined.clear()
            self._defined[memo] = self._chunks.workspace_abbreviations(scope.workspace.id)
        return self._defined[memo]

    def openings(self, scope: Scope) -> dict[str, str]:
        """The text opening each searched document's first page (its title, authors' bodies, year), remembered."""
        found = {}
        for document_id in scope.searched_names:
            memo = (document_id, scope.chunk_counts.get(document_id, 0))  # a new ingestion, a new opening
            if memo not in self._openings:
                ids = self._chunks.document_chunk_ids(document_id)[:_OPENING_CHUNKS]
                chunks = sorted(self._chunks.get_chunks(ids).values(), key=lambda c: ids.index(c.id))
                if len(self._openings) > _MEMO_LIMIT:
                    self._openings.clear()
                self._openings[memo] = " ".join(c.text for c in chunks if c.page_start == 1)[:_OPENING_CHARS]
            found[document_id] = self._openings[memo]
        return found

    def _names(self, text: str) -> list[str]:
        """The other language's names of what the text mentions, loose."""
        names = [loose(name) for name in self.translate(text)] if self.translate is not None else []
        return list(dict.fromkeys(name for name in names if name))

    def _weights_in(self, document_id: str, scope: Scope) -> Callable[[Sequence[str]], dict[str, float]]:
        """Smoothed idf of terms among one document's passages (a term it never uses weighs the most)."""
        passages = self._passages(document_id, scope.chunk_counts.get(document_id, 0))

        def weigh(terms: Sequence[str]) -> dict[str, float]:
            return idf_weights(terms, lambda term: sum(present(term, words, flat) for words, flat in passages), len(passages))

        return weigh

    def _passages(self, document_id: str, count: int) -> list[tuple[frozenset[str], str]]:
        """A document's passages as (terms, loose text), remembered for the last few documents asked about."""
        memo = (document_id, count)
        if memo not in self._documents:
            ids = self._chunks.document_chunk_ids(document_id)
            chunks = self._chunks.get_chunks(ids).values()
            if len(self._documents) >= _DOCUMENTS_KEPT:
                self._documents.pop(next(iter(self._documents)))
            self._documents[memo] = [(evidence_terms(chunk.text), loose(chunk.text)) for chunk in chunks]
        return self._documents[memo]

    def _forms(self, defined: Mapping[str, str]) -> Callable[[str], list[str]]:
        """Other names of a term: its translations, and the workspace's abbreviations (`defined`) of long forms
        using it."""
        abbreviations = [(short, evidence_terms(long)) for short, long in defined.items()]

        def forms(term: str) -> list[str]:
            key = stem(loose(term)) if not is_cjk_term(term) else term
            found = [short for short, words in abbreviations if key in words]
            return found + (list(self.translate(term)) if self.translate is not None else [])

        return forms


def _uses(word: str, text: str) -> bool:
    """Whether a passage uses the word itself (its stem, for an English one)."""
    key = word if is_cjk_term(word) else stem(loose(word))
    return present(key, evidence_terms(text), loose(text))


def spelled_short_forms(question: str, abbreviations: Mapping[str, str]) -> dict[str, tuple[str, ...]]:
    """The short forms of the long forms a question spells out ("San Francisco Syncope Rule" -> "sfsr"), each with
    the question's terms its long form spells."""
    asked = content_terms(question, drop_question_words=True)
    found = {}
    for short in expand_with_abbreviations(question, [], abbreviations):
        long_form = next(long for key, long in abbreviations.items() if key.lower() == short)
        found[stem(short)] = tuple(key for key in content_terms(long_form) if key in asked)
    return found


def _acronym_naming(
    acronyms: Sequence[str], forms: Callable[[str], list[str]]
) -> Callable[[Candidate], float] | None:
    """How many of the question's acronyms a candidate names itself, with its term label or its section's title
    (None for a question naming none)."""
    if not acronyms:
        return None
    return lambda candidate: float(names_acronyms(acronyms, candidate.own_text, forms))
