"""Offline entity extraction on real guideline pages (English and Chinese): known concepts found and typed,
abbreviations and Chinese names merged with their English long form, variants merged, junk rejected."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from workspace_app.graph.entities import LexiconEntityExtractor
from workspace_app.graph.lexicon import normalize_key
from workspace_app.ingest.references import chunk_kind
from workspace_app.models.documents import Chunk
from workspace_app.models.graph import ChunkEntities, FoundEntity


def chunks_of(drafts: list[Any], document_id: str = "doc") -> list[Chunk]:
    """Chunks as the pipeline stores them (ids, order, reference lists and contents marked) from chunk drafts."""
    return [
        Chunk(
            id=f"{document_id}-{i:05d}", document_id=document_id, ordinal=i, text=d.text, section=d.section,
            page_start=d.page_start, page_end=d.page_end, token_count=d.token_count,
            kind=chunk_kind(d.text),
        )
        for i, d in enumerate(drafts)
    ]


def extract(chunk_pdf: Callable[[Path], list[Any]], path: Path) -> list[ChunkEntities]:
    return LexiconEntityExtractor().extract(chunks_of(chunk_pdf(path)))


def merged(found: list[ChunkEntities]) -> dict[str, FoundEntity]:
    """Entities over all chunks by key (type and name of the first find, surfaces of all)."""
    entities: dict[str, FoundEntity] = {}
    surfaces: dict[str, set[str]] = {}
    for chunk in found:
        for entity in chunk.entities:
            entities.setdefault(entity.key, entity)
            surfaces.setdefault(entity.key, set()).update(entity.surfaces)
    return {k: FoundEntity(e.key, e.name, e.type, e.count, tuple(sorted(surfaces[k]))) for k, e in entities.items()}


@pytest.fixture(scope="module")
def hcm(excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]) -> dict[str, FoundEntity]:
    """Pages 38-39 of the HCM guideline: pharmacologic management of obstructive HCM."""
    return merged(extract(chunk_pdf, excerpt("ommen-2024-hcm.pdf", 38, 39)))


def test_drugs_and_diseases_on_an_english_page(hcm: dict[str, FoundEntity]) -> None:
    expected = {
        "mavacamten": "drug", "verapamil": "drug", "disopyramide": "drug", "beta blocker": "drug class",
        "hypertrophic cardiomyopathy": "disease", "left ventricular outflow tract obstruction": "disease",
    }
    for key, kind in expected.items():
        assert key in hcm, f"{key} not found; found {sorted(hcm)[:40]}"
        assert hcm[key].type == kind


def test_case_plural_hyphen_and_abbreviation_variants_merge_into_one_entity(hcm: dict[str, FoundEntity]) -> None:
    assert {"Beta blockers", "beta blocker", "beta blockers", "beta-blocker"} <= set(hcm["beta blocker"].surfaces)
    assert {"Obstructive HCM", "obstructive HCM"} <= set(hcm["obstructive hypertrophic cardiomyopathy"].surfaces)
    assert "LVOTO" in hcm["left ventricular outflow tract obstruction"].surfaces
    assert not any(key.startswith("beta blocker") and key != "beta blocker" for key in hcm)
    assert "pharmacological therapy" not in hcm, "a qualifier and a generic head are not a concept"


@pytest.mark.parametrize(
    "variants",
    [("Beta-Blockers", "beta blocker", "beta blockers"), ("ACE Inhibitors", "ACE inhibitor"), ("therapies", "therapy")],
)
def test_case_plural_and_hyphen_variants_share_a_key(variants: tuple[str, ...]) -> None:
    assert len({normalize_key(v) for v in variants}) == 1


def test_drugs_on_a_chinese_page_merge_with_their_english_names(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    found = merged(extract(chunk_pdf, excerpt("zh-dapt-chd-consensus-2021.pdf", 7, 7)))
    for key, chinese in {"aspirin": "阿司匹林", "clopidogrel": "氯吡格雷", "ticagrelor": "替格瑞洛"}.items():
        assert key in found and found[key].type == "drug"
        assert chinese in found[key].surfaces
    assert "dual antiplatelet therapy" in found


def test_chinese_term_abbreviation_and_english_long_form_are_one_entity(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    found = merged(extract(chunk_pdf, excerpt("zh-hfpef-consensus-2023.pdf", 1, 2)))
    hfref = found["heart failure with reduced ejection fraction"]
    assert {"HFrEF", "射血分数降低的心力衰竭"} <= set(hfref.surfaces)
    assert hfref.type == "disease"
    assert {"HFpEF", "射血分数保留的心力衰竭"} <= set(found["heart failure with preserved ejection fraction"].surfaces)


def test_a_pairing_the_lexicon_does_not_know_links_chinese_english_and_abbreviation(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    """非瓣膜性房颤（non valvular atrial fi brillation，NVAF）: the document's own pairing (split ligature too)."""
    found = merged(extract(chunk_pdf, excerpt("zh-acute-af-ed-2024.pdf", 3, 3)))
    nvaf = found["non valvular atrial fibrillation"]
    assert "非瓣膜性房颤" in nvaf.surfaces
    assert nvaf.type == "disease"


def test_a_definition_in_the_text_links_an_unknown_abbreviation(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    """"slower sinoatrial conduction times (SACT)" (bradycardia guideline p. 25): not in the lexicon."""
    found = merged(extract(chunk_pdf, excerpt("kusumoto-2018-bradycardia.pdf", 25, 25)))
    sact = found["sinoatrial conduction time"]
    assert "SACT" in sact.surfaces


JUNK = re.compile(
    r"^(et al|table|figure|fig|circulation|jacc|journal|doi|http|www|page|copyright|mg|ml|mmhg|kg|the|and|of|with)\b"
    r"|^[\d\s.,%/()-]+$",
    re.IGNORECASE,
)


@pytest.mark.parametrize(
    ("name", "first", "last", "references"),
    [("shen-2017-syncope.pdf", 48, 49, True), ("grundy-2018-cholesterol.pdf", 1, 2, False)],
)
def test_no_junk_from_reference_lists_title_pages_and_tables(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]], name: str, first: int, last: int,
    references: bool,
) -> None:
    """The end of the body text and the reference list (syncope pp. 48-49), and a title page with authors, journals and DOIs (cholesterol pp. 1-2)."""
    chunks = chunks_of(chunk_pdf(excerpt(name, first, last)))
    found = LexiconEntityExtractor().extract(chunks)
    body = sum(c.kind == "body" for c in chunks)
    assert len(found) == body and any(c.kind == "references" for c in chunks) == references, "reference lists are not read"
    names = {e.name for chunk in found for e in chunk.entities}
    assert names, "the body text still has concepts"
    junk = sorted(n for n in names if JUNK.search(n) or len(n) < 3 and not n.isupper())
    assert not junk, junk
    capitalised_words = [n for n in names if re.fullmatch(r"[A-Z][a-z]+", n)]
    assert not capitalised_words, f"author-like names: {capitalised_words}"


def test_sentence_groups_only_hold_keys_of_the_chunk(hcm: dict[str, FoundEntity], excerpt: Callable[..., Path],
                                                     chunk_pdf: Callable[[Path], list[Any]]) -> None:
    for chunk in extract(chunk_pdf, excerpt("ommen-2024-hcm.pdf", 38, 39)):
        keys = {e.key for e in chunk.entities}
        assert all(set(group) <= keys for group in chunk.sentences)
        assert sum(e.count for e in chunk.entities) >= len(keys)


@pytest.mark.parametrize(
    ("long_form", "short"),
    [("American Heart Association", "AHA"), ("Pediatric & Congenital Electrophysiology Society", "PACES"),
     ("Canadian Trial of Physiologic Pacing", "CTOPP")],
)
def test_a_defined_proper_name_is_not_a_concept(long_form: str, short: str) -> None:
    """Organisations and trials are written as names, every word capitalised: no word list needed to skip them."""
    assert LexiconEntityExtractor().resolve(long_form, short) is None


def test_a_defined_term_written_in_lower_case_is_a_concept_whatever_its_words() -> None:
    """"guideline-directed medical therapy (GDMT)" names a treatment, although "guideline" names documents too."""
    concept = LexiconEntityExtractor().resolve("guideline-directed medical therapy", "GDMT")
    assert concept is not None and concept.type == "procedure"


def test_a_chinese_terms_title_case_english_gloss_is_still_a_concept(
    excerpt: Callable[..., Path], chunk_pdf: Callable[[Path], list[Any]]
) -> None:
    """"左心室充盈压（Filling Pressure）" (HFpEF consensus p. 4): glosses are capitalised by convention, not as names."""
    found = merged(extract(chunk_pdf, excerpt("zh-hfpef-consensus-2023.pdf", 4, 4)))
    assert "filling pressure" in found


# A made-up freight company's notes: nothing clinical in them. Its frequent noun phrases are its concepts.
FREIGHT = [
    "Lisbon handled most of the parcel volume; the cold chain line is new, as are the electric vans.",
    "Our electric vans are cheap, and the parcel volume is up. The cold chain line is busy.",
    "Next year the cold chain line is doubled, with more of the parcel volume and more electric vans.",
    ("The cold chain line and the parcel volume are why there are more electric vans, said the lisinopril "
     "supplier's heart failure clinic next door."),
]


def freight_entities(pack_name: str) -> set[str]:
    from workspace_app.domain import pack
    from workspace_app.graph.lexicon import load_lexicon

    chosen = pack(pack_name)
    extractor = LexiconEntityExtractor(load_lexicon(chosen.lexicon), chosen.concepts)
    chunks = [Chunk(id=f"f-{i:05d}", document_id="f", ordinal=i, text=text, section="", page_start=1, page_end=1,
                    token_count=len(text.split())) for i, text in enumerate(FREIGHT)]
    return {e.key for chunk in extractor.extract(chunks) for e in chunk.entities}


def test_the_generic_pack_finds_a_non_clinical_documents_frequent_noun_phrases() -> None:
    """The graph's patterns are the pack's: without a field, any frequent noun phrase is a concept (none of the
    clinical stems, drug endings or disease heads apply); the clinical pack keeps only its field's terms."""
    generic = freight_entities("generic")
    assert {"parcel volume", "electric van", "cold chain line"} <= generic, generic
    assert not {"lisinopril", "heart failure"} & generic  # no drug endings, no disease heads, no lexicon
    clinical = freight_entities("clinical")
    assert not {"parcel volume", "electric van", "cold chain line"} & clinical, clinical
