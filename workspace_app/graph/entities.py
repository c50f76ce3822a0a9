"""Entity extraction behind one interface: `EntityExtractor.extract(chunks) -> ChunkEntities per chunk`.

The offline extractor (`LexiconEntityExtractor`) works per document: it first reads the document's own
definitions ("heart failure with reduced ejection fraction (HFrEF)", "射血分数保留的心力衰竭（heart failure with
preserved ejection fraction，HFpEF）") so abbreviations and Chinese names merge with their English long form,
then matches every body chunk (reference lists are skipped) with the lexicon, those definitions and patterns,
and groups the keys found by sentence for co-occurrence weighting.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from workspace_app.domain.clinical import CONCEPTS
from workspace_app.domain.pack import ConceptPatterns
from workspace_app.graph.chinese import ChineseMatcher, find_pairings
from workspace_app.graph.english import EnglishMatcher, Match, candidate_phrases
from workspace_app.graph.junk import is_junk_phrase, is_proper_name
from workspace_app.graph.lexicon import (
    SAFE_SHORT,
    Concept,
    Lexicon,
    case_key,
    clean_text,
    load_lexicon,
    normalize_key,
    singular,
)
from workspace_app.models.documents import Chunk
from workspace_app.models.graph import ChunkEntities, FoundEntity
from workspace_app.text.abbreviations import find_abbreviations
from workspace_app.text.cjk import has_cjk
from workspace_app.text.sentences import split_sentences

ProgressCallback = Callable[[int, int], None]
MIN_PATTERN_COUNT = 2  # a pattern find named once in a whole document is more often noise than a concept
MIN_PHRASE_COUNT = 4
# "left ventricular (LV)" defines an adjective, not a concept.
_ADJECTIVE_ENDINGS = ("ar", "al", "ic", "ous", "ive", "ary", "ed")


class EntityExtractor(Protocol):
    """Finds the entities (and relations) of a document's chunks."""

    name: str

    def extract(
        self, chunks: Sequence[Chunk], abbreviations: Mapping[str, str] | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[ChunkEntities]:
        """What each body chunk mentions; `abbreviations` are the workspace's known short -> long forms."""
        ...


class LexiconEntityExtractor:
    """Offline extraction: curated lexicon, the document's own definitions and patterns (English and Chinese)."""

    name = "offline"

    def __init__(self, lexicon: Lexicon | None = None, patterns: ConceptPatterns = CONCEPTS) -> None:
        """The domain pack's lexicon and patterns (the clinical pack's by default)."""
        self._lexicon = lexicon or load_lexicon()
        self._patterns = patterns

    def extract(
        self, chunks: Sequence[Chunk], abbreviations: Mapping[str, str] | None = None,
        on_progress: ProgressCallback | None = None,
    ) -> list[ChunkEntities]:
        """Entities of every body chunk, grouped by sentence."""
        body = [chunk for chunk in chunks if chunk.kind == "body"]
        defined, forms, chinese = self.document_terms(body, abbreviations or {})
        english = EnglishMatcher(self._lexicon, defined, forms, self._patterns)
        chinese_matcher = ChineseMatcher(self._lexicon, chinese) if any(has_cjk(c.text) for c in body) else None
        if on_progress:  # the count of passages starts here, after the document's terms and matchers (~1 s)
            on_progress(0, len(body))
        texts, matches, phrases = [], [], []
        for done, chunk in enumerate(body, start=1):
            text = clean_text(chunk.text)
            found = english.find(text)
            if chinese_matcher is not None and has_cjk(text):
                found = sorted([*found, *chinese_matcher.find(text)], key=lambda m: m.start)
            texts.append(text)
            matches.append(found)
            phrases.append(candidate_phrases(text, found, self._patterns))
            if on_progress and (done % 50 == 0 or done == len(body)):
                on_progress(done, len(body))
        kept = _frequent_enough(matches, phrases)
        return [
            chunk_entities(chunk.id, text, sorted([*(m for m in found if _keep(m, kept)), *_phrase_matches(text, spans, kept)], key=lambda m: m.start))
            for chunk, text, found, spans in zip(body, texts, matches, phrases, strict=True)
        ]

    def document_terms(
        self, body: Sequence[Chunk], workspace: Mapping[str, str]
    ) -> tuple[dict[str, Concept], dict[str, Concept], dict[str, Concept]]:
        """(abbreviation -> concept, English long form key -> concept, Chinese term -> concept) of a document."""
        pairs: dict[str, str] = dict(workspace)
        chinese_pairs = []
        for chunk in body:
            text = clean_text(chunk.text)
            pairs.update(find_abbreviations(text))
            if has_cjk(text):
                chinese_pairs.extend(find_pairings(text))
        defined: dict[str, Concept] = {}
        forms: dict[str, Concept] = {}
        for short, long_form in pairs.items():
            self._define(short, long_form, defined, forms)
        chinese: dict[str, Concept] = {}
        for pairing in chinese_pairs:
            # The English gloss of a Chinese term is written in Title Case by convention ("Filling Pressure").
            concept = self._define(pairing.abbreviation, pairing.english, defined, forms, names_capitalised=False)
            if concept is not None and pairing.chinese not in self._lexicon.chinese:
                chinese.setdefault(pairing.chinese, concept)
        return defined, forms, chinese

    def _define(
        self, short: str | None, long_form: str, defined: dict[str, Concept], forms: dict[str, Concept],
        names_capitalised: bool = True,
    ) -> Concept | None:
        concept = self.resolve(long_form, short, names_capitalised=names_capitalised)
        if concept is None:
            return None
        if short:
            defined.setdefault(case_key(short), concept)
        key = normalize_key(long_form)
        if key not in self._lexicon.forms:
            forms.setdefault(key, concept)
        return concept

    def resolve(self, long_form: str, short: str | None = None, *, names_capitalised: bool = True) -> Concept | None:
        """The concept a defined long form names: the lexicon's, a typed pattern, a term of the pack's field, or None (with
        `names_capitalised`, the text's convention, a proper name: "American Heart Association (AHA)")."""
        key = normalize_key(self._expanded(long_form))
        if key in self._lexicon.forms:
            return self._lexicon.forms[key]
        if short and case_key(short) in self._lexicon.abbreviations:
            return self._lexicon.abbreviations[case_key(short)]
        if is_junk_phrase(key) or len(key.split()) > 7 or (names_capitalised and is_proper_name(long_form)):
            return None
        kind = self._patterns.head_types.get(singular(key.split()[-1]))
        if kind is None and (not self._patterns.of_the_field(key) or key.endswith(_ADJECTIVE_ENDINGS)):
            return None
        return Concept(key, key, kind or "concept", "defined")


    def _expanded(self, long_form: str) -> str:
        """The long form with known abbreviations inside spelled out ("persistent AF" -> "persistent atrial fibrillation")."""
        words = long_form.split()
        for index, word in enumerate(words):
            concept = self._lexicon.abbreviations.get(case_key(word))
            if concept is not None and (len(word) > 2 or word in SAFE_SHORT):
                words[index] = concept.name
        return " ".join(words)


def _frequent_enough(matches: Sequence[Sequence[Match]], phrases: Sequence[Sequence[tuple[int, int, str]]]) -> set[str]:
    """Keys of pattern finds seen at least twice and noun phrases seen at least four times in the document."""
    counts: Counter[str] = Counter(m.concept.key for found in matches for m in found if m.concept.source == "pattern")
    kept = {key for key, count in counts.items() if count >= MIN_PATTERN_COUNT}
    phrase_counts: Counter[str] = Counter(key for spans in phrases for _, _, key in spans)
    return kept | {f"phrase:{key}" for key, count in phrase_counts.items() if count >= MIN_PHRASE_COUNT}


def _keep(match: Match, kept: set[str]) -> bool:
    return match.concept.source != "pattern" or match.concept.key in kept


def _phrase_matches(text: str, spans: Sequence[tuple[int, int, str]], kept: set[str]) -> list[Match]:
    return [
        Match(start, end, text[start:end], Concept(key, key, "concept", "phrase"))
        for start, end, key in spans if f"phrase:{key}" in kept
    ]


def chunk_entities(chunk_id: str, text: str, matches: Sequence[Match]) -> ChunkEntities:
    """Group a chunk's matches into entities (counts, surface forms) and per-sentence key sets."""
    counts: Counter[str] = Counter()
    surfaces: dict[str, set[str]] = defaultdict(set)
    concepts: dict[str, Concept] = {}
    for match in matches:
        concepts[match.concept.key] = match.concept
        counts[match.concept.key] += 1
        surfaces[match.concept.key].add(" ".join(match.surface.split()))
    sentences = []
    spans = split_sentences(text) if matches else []
    position = 0
    for span in spans:
        keys: list[str] = []
        while position < len(matches) and matches[position].start < span.end:
            key = matches[position].concept.key
            if key not in keys:
                keys.append(key)
            position += 1
        if keys:
            sentences.append(tuple(keys))
    entities = tuple(
        FoundEntity(key, concepts[key].name, concepts[key].type, count, tuple(sorted(surfaces[key])))
        for key, count in counts.items()
    )
    return ChunkEntities(chunk_id, entities, tuple(sentences))
