"""Questions across levels (seed 002 QUERY-003): a question about one patient answered from three levels, each
cited and labelled.

    patient     the patient's own events the question is about (patient_evidence.py), quoted with their time
    guideline   what the workspace's sources say, by the usual answerer on a patient-free form of the question
    vocabulary  the standard definitions of the coded items cited (ICD titles, lab item labels)

The answer's text groups its sentences under 'Patient record:', 'Guideline:' and 'Definition:', every sentence
with its [n]; a level with nothing to say says so rather than being filled with anything else. Whether care follows
the guideline (guideline_fit.py, issue 28 item 3): 'Compared with the guideline:' states the patient's latest value
of a measure against the target a passage states, citing both; 'Not for this patient:' lists the passages whose
population the record does not meet, taken out of 'Guideline:', with whom they are for. `Answer.entities`
lists the graph entities crossed: the workspace entities (as the Graph page names them, with their ids) that the
concepts the cited events share with the cited guideline passages link to (LINKS_TO).

A question about the patient's own timeline ("what anticoagulants did she get in the last 48 hours?", "患者最近服过
什么药？") is answered from the record alone when the record's planner says so (`PatientRecords.timeline`, not
None): the events found, each cited, under a lead that says what was looked for over which time; when the record
does not say, the answer says so and is a refusal. Questions about what the guidelines say keep the three levels.

The patient's record is read through `PatientRecords` (records.py, given by the wiring), the guidelines through
`GuidelineAnswerer` (the answer package's AnswerService) and concepts become graph entities through
`ConceptEntities` (links.py): this module imports none of them.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from typing import Protocol

from workspace_app.errors import WorkspaceError
from workspace_app.models.answers import Answer, Citation, EntityRef, Turn
from workspace_app.models.events import ConceptName, Event, Patient, TimelineFindings, VocabularyEntry
from workspace_app.models.graph import Entity
from workspace_app.patients.guideline_fit import (
    Comparison,
    Exclusion,
    compare,
    comparison_sentence,
    exclusion_sentence,
    exclusions,
    measures_asked,
    passage_key,
    stated_target,
    states_target,
    target_question,
)
from workspace_app.patients.patient_evidence import (
    PatientEvidence,
    choose_events,
    event_citation,
    event_sentence,
    score_events,
    timeline_answer,
)
from workspace_app.text.language import detect_language

HEADINGS = {
    "en": {"patient": "Patient record:", "guideline": "Guideline:", "compared": "Compared with the guideline:",
           "excluded": "Not for this patient:", "vocabulary": "Definition:"},
    "zh": {"patient": "患者记录：", "guideline": "指南：", "compared": "与指南对照：", "excluded": "不适用于该患者：",
           "vocabulary": "定义："},
}
_PATIENT_WORDS = re.compile(
    r"\b(?:this|the|my|our|that) patient(?:'s|’s)?\s*|\bpatient \d+(?:'s)?\s*|(?:该|这位|此|这个)?患者的?", re.IGNORECASE
)
_VOCABULARY_NAMES = {"icd9": "ICD-9", "icd10": "ICD-10", "labitem": "MIMIC-IV lab item"}


class PatientRecords(Protocol):
    """What the cross-level answer reads of a patient's record."""

    def concepts(self, text: str) -> list[ConceptName]: ...
    def events(self, patient_id: str) -> list[Event]: ...
    def similarity(self, patient_id: str, text: str) -> dict[str, float]: ...
    def definitions(self, events: Sequence[Event]) -> list[tuple[str, VocabularyEntry]]: ...
    def timeline(self, patient_id: str, question: str, language: str) -> TimelineFindings | None: ...
    def patient(self, patient_id: str) -> Patient: ...


class ConceptEntities(Protocol):
    """The workspace graph's entities that patient concepts link to."""

    def concept_entities(self, workspace: str, concepts: Sequence[str]) -> dict[str, Entity]: ...


class GuidelineAnswerer(Protocol):
    """The workspace's answerer (AnswerService.ask), and its search for sentences of a kind (find_sentences)."""

    def ask(
        self, workspace: str, question: str, history: Sequence[Turn] = (), documents: Sequence[str] | None = None,
        mode: str = "naive",
    ) -> Answer: ...
    def find_sentences(
        self, workspace: str, query: str, wanted: Callable[[str], bool], documents: Sequence[str] | None = None,
        top_k: int = 20, limit: int = 4,
    ) -> list[Citation]: ...


@dataclass
class GuidelineFit:
    """What the answer says of the patient against the guidelines: passages asked for a target (beyond the
    guideline answer's), the comparisons, and the passages not for this patient (by passage_key)."""

    extra: list[Citation] = field(default_factory=list)
    comparisons: list[Comparison] = field(default_factory=list)
    excluded: dict[str, Exclusion] = field(default_factory=dict)


class PatientAnswerService:
    """Answers about one patient that cite the patient's events, the guidelines and the standard vocabulary."""

    def __init__(self, answers: GuidelineAnswerer, records: PatientRecords, entities: ConceptEntities) -> None:
        self.answers = answers
        self.records = records
        self.entities = entities

    def ask(
        self, workspace: str, patient_id: str, question: str, documents: Sequence[str] | None = None,
        mode: str = "naive",
    ) -> Answer:
        """Answer a question about a patient across the three levels. Raises PatientNotFoundError, WorkspaceError."""
        started = time.perf_counter()
        question = re.sub(r"\s+", " ", question).strip()
        if not question:
            raise WorkspaceError("Type a question first.")
        language = "zh" if detect_language(question) == "zh" else "en"
        timeline = self.records.timeline(patient_id, question, language)
        if timeline is not None:
            answer = timeline_answer(question, language, patient_id, timeline)
            answer.mode, answer.timings_ms = mode, {"total": _ms(started)}
            return answer
        concepts = self.records.concepts(question)
        events = self.records.events(patient_id)
        chosen = self._patient_level(patient_id, question, concepts, events)
        guideline = self._guideline_level(workspace, question, concepts, language, documents, mode)
        fit = self._fit(workspace, patient_id, question, concepts, events, guideline, language, documents)
        chosen += [PatientEvidence(c.latest.event, (), 1.0) for c in fit.comparisons
                   if all(p.event.event_id != c.latest.event.event_id for p in chosen)]
        definitions = self.records.definitions([p.event for p in chosen])
        answer = _assemble(question, language, patient_id, concepts, chosen, guideline, definitions, fit)
        answer.entities = self._crossed(workspace, chosen, answer.citations)
        answer.mode = mode
        answer.timings_ms = {**(guideline.timings_ms if guideline else {}), "total": _ms(started)}
        return answer

    def _fit(
        self, workspace: str, patient_id: str, question: str, concepts: Sequence[ConceptName],
        events: Sequence[Event], guideline: Answer | None, language: str, documents: Sequence[str] | None,
    ) -> GuidelineFit:
        """The passages not for this patient, and the patient's values against the targets the passages state
        (asking the guidelines for a measure's target when the answer's passages state none)."""
        patient = self.records.patient(patient_id)
        cited = list(guideline.citations) if guideline else []
        excluded = exclusions(cited, patient, events, language)
        extra: list[Citation] = []
        comparisons = []
        for measure, readings in measures_asked(question, concepts, events):
            found = stated_target(measure, cited + extra, excluded)
            for asked_in in (language, "en" if language == "zh" else "zh"):
                if found is not None and found[0].is_target:
                    break  # a threshold found so far is kept only if no target is stated
                known = {passage_key(c) for c in cited + extra}
                new = [c for c in self.answers.find_sentences(
                    workspace, target_question(measure, concepts, asked_in), partial(states_target, measure), documents)
                    if passage_key(c) not in known]
                excluded.update(exclusions(new, patient, events, language))
                extra += new
                found = stated_target(measure, cited + extra, excluded)
            if found is not None:
                comparisons.append(compare(measure, found[0], found[1], readings))
        used = {passage_key(c.passage) for c in comparisons} | set(excluded)
        extra = [c for c in extra if passage_key(c) in used]
        return GuidelineFit(extra, comparisons, excluded)

    def _patient_level(
        self, patient_id: str, question: str, concepts: Sequence[ConceptName], events: Sequence[Event]
    ) -> list[PatientEvidence]:
        keys = [c.key for c in concepts]
        if not keys or not events:
            return []
        scored = score_events(events, keys, self.records.similarity(patient_id, question))
        return choose_events(scored, keys)

    def _guideline_level(
        self, workspace: str, question: str, concepts: Sequence[ConceptName], language: str,
        documents: Sequence[str] | None, mode: str,
    ) -> Answer | None:
        """The answer of the workspace's sources to the patient-free question (None when they do not answer)."""
        tried = dict.fromkeys(q for q in (patient_free(concepts, language), without_patient(question)) if q)
        for asked in tried:
            answer = self.answers.ask(workspace, asked, documents=documents, mode=mode)
            if not answer.refused and answer.citations:
                answer.standalone_question = asked
                return answer
        return None

    def _crossed(self, workspace: str, chosen: Sequence[PatientEvidence], citations: Sequence[Citation]) -> list[EntityRef]:
        """The graph entities of the concepts the cited events share with the cited guideline passages, with the
        citations naming them (a concept with no entity in the workspace's graph is not listed)."""
        in_events = {c for p in chosen for c in p.event.concepts}
        numbers: dict[str, set[int]] = {}
        for citation in citations:
            if citation.level != "guideline":
                continue
            for concept in self.records.concepts(citation.quote):
                if concept.key in in_events:
                    numbers.setdefault(concept.key, set()).add(citation.n)
        for citation in citations:
            event = next((p.event for p in chosen if p.event.event_id == citation.event_id), None)
            for key in set(event.concepts if event and citation.level == "patient" else ()) & set(numbers):
                numbers[key].add(citation.n)
        entities = self.entities.concept_entities(workspace, list(numbers))
        refs: dict[str, tuple[Entity, set[int]]] = {}
        for key, entity in entities.items():
            refs.setdefault(entity.id, (entity, set()))[1].update(numbers[key])
        return [
            EntityRef(entity.id, entity.name, entity.type, entity.workspace_id, workspace, tuple(sorted(cited)))
            for entity, cited in refs.values()
        ]


def patient_free(concepts: Sequence[ConceptName], language: str) -> str:
    """The question as the guidelines can answer it: 'What is recommended for anticoagulation in patients with
    atrial fibrillation?' ('' when it names no concept)."""
    name = (lambda c: c.name_zh or c.name) if language == "zh" else (lambda c: c.name)
    diseases = [name(c) for c in concepts if c.kind == "disease"]
    treatments = [name(c) for c in concepts if c.kind != "disease"][:2]
    joiner = "和" if language == "zh" else " and "
    disease, treatment = joiner.join(diseases[:2]), joiner.join(treatments)
    if language == "zh":
        if disease and treatment:
            return f"{disease}患者的{treatment}推荐什么？"
        return f"{disease}患者推荐什么治疗？" if disease else (f"{treatment}的推荐是什么？" if treatment else "")
    if disease and treatment:
        return f"What is recommended for {treatment} in patients with {disease}?"
    if disease:
        return f"What is recommended for patients with {disease}?"
    return f"What is recommended for {treatment}?" if treatment else ""


def without_patient(question: str) -> str:
    """The question without the words that point at the patient ('this patient's anticoagulation' -> ...)."""
    return re.sub(r"\s+", " ", _PATIENT_WORDS.sub("", question)).strip()


def _assemble(
    question: str, language: str, patient_id: str, concepts: Sequence[ConceptName], chosen: Sequence[PatientEvidence],
    guideline: Answer | None, definitions: Sequence[tuple[str, VocabularyEntry]], fit: GuidelineFit,
) -> Answer:
    citations: list[Citation] = []
    heads = HEADINGS[language]
    lines = [heads["patient"]]
    for evidence in chosen:
        citations.append(_event_citation(len(citations) + 1, evidence, patient_id))
        lines.append(f"{event_sentence(evidence, language)} [{len(citations)}]")
    if not chosen:
        lines.append(_missing_patient(language, patient_id, concepts))
    lines.append(heads["guideline"])
    applied = _guideline_lines(citations, guideline, fit) if guideline is not None else []
    for passage in fit.extra:
        citations.append(replace(passage, n=len(citations) + 1, level="guideline"))
        if passage_key(passage) not in fit.excluded:
            applied.append(f"{passage.quote} [{len(citations)}]")
    lines += applied or [_missing_guideline(language) if guideline is None and not fit.extra else _all_excluded(language)]
    number = {passage_key(c): c.n for c in citations if c.level == "guideline"}
    if fit.comparisons:
        lines.append(heads["compared"])
        event_n = {c.event_id: c.n for c in citations if c.level == "patient"}
        lines += [comparison_sentence(c, event_n[c.latest.event.event_id], number[passage_key(c.passage)], language)
                  for c in fit.comparisons]
    if fit.excluded:
        lines.append(heads["excluded"])
        lines += [exclusion_sentence(e, number[key], patient_id, language) for key, e in fit.excluded.items()]
    lines.append(heads["vocabulary"])
    for event_id, entry in definitions:
        if any(c.level == "vocabulary" and c.chunk_id == _code_id(entry) for c in citations):
            continue
        citations.append(_definition_citation(len(citations) + 1, entry, patient_id, event_id))
        lines.append(f"{_code_name(entry)}: {entry.title}{f' ({entry.detail})' if entry.detail else ''}. [{len(citations)}]")
    if not definitions:
        lines.append("所引用的记录没有带标准定义的编码。" if language == "zh"
                     else "None of the cited records carries a code with a standard definition.")
    return Answer(
        question=question, text="\n\n".join(lines), citations=citations,
        grounded=guideline.grounded if guideline else True, refused=not chosen and guideline is None and not fit.extra,
        confidence=guideline.confidence if guideline else 0.0, language=language,
        disclaimer=guideline.disclaimer if guideline else "", answerer="extractive",
        standalone_question=guideline.standalone_question if guideline else None,
        support=guideline.support if guideline else "partial", support_note=guideline.support_note if guideline else "",
    )


def _guideline_lines(citations: list[Citation], guideline: Answer, fit: GuidelineFit) -> list[str]:
    """The guideline answer's paragraphs, renumbered after the patient's citations, without those citing a passage
    not for this patient (their citations are kept: the answer says whom they are for)."""
    offset = len(citations)
    citations += [replace(c, n=c.n + offset, level="guideline") for c in guideline.citations]
    excluded = {c.n for c in guideline.citations if passage_key(c) in fit.excluded}
    kept = []
    for paragraph in guideline.text.split("\n\n"):
        cited = {int(n) for n in re.findall(r"\[(\d+)\]", paragraph)}
        if cited & excluded:
            continue
        kept.append(re.sub(r"\[(\d+)\]", lambda m: f"[{int(m[1]) + offset}]", paragraph))
    return kept if any(re.search(r"\[\d+\]", k) for k in kept) else []


def _all_excluded(language: str) -> str:
    return ("指南中找到的段落针对的是其他人群（见下文），不适用于该患者。" if language == "zh"
            else "The guideline passages found are for other populations (below): none is applied to this patient.")


def _missing_patient(language: str, patient_id: str, concepts: Sequence[ConceptName]) -> str:
    named = ", ".join((c.name_zh or c.name) if language == "zh" else c.name for c in concepts)
    if language == "zh":
        return f"患者 {patient_id} 没有与问题（{named}）相符的记录。" if named else f"问题未提到已知的药物、疾病或检验，未匹配患者 {patient_id} 的记录。"
    if not named:
        return f"The question names no drug, disease or lab test the records know, so no record of patient {patient_id} was matched."
    return f"No record of patient {patient_id} matches the question ({named})."


def _missing_guideline(language: str) -> str:
    return ("工作区的指南中没有找到回答这个问题的内容。" if language == "zh"
            else "The workspace's guidelines say nothing that answers this question.")


def _event_citation(n: int, evidence: PatientEvidence, patient_id: str) -> Citation:
    return event_citation(n, evidence.event, patient_id, evidence.score)


def _definition_citation(n: int, entry: VocabularyEntry, patient_id: str, event_id: str) -> Citation:
    return Citation(
        n=n, chunk_id=_code_id(entry), document=entry.source or _code_name(entry), document_id="", page_start=0,
        page_end=0, section=_code_name(entry), quote=entry.title, rects=(), chunk_rects=(), score=1.0,
        level="vocabulary", patient_id=patient_id, event_id=event_id,
    )


def _code_name(entry: VocabularyEntry) -> str:
    return f"{_VOCABULARY_NAMES.get(entry.system, entry.system)} {entry.code}"


def _code_id(entry: VocabularyEntry) -> str:
    return f"{entry.system}:{entry.code}"


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000
