"""Large public QA sets as workspaces: questions no rule can be fitted to, with unanswerable rows made by removal.

    .venv/bin/python -m bench.large_sets build covidqa      # ingest once into bench/.cache/large-covidqa/
    .venv/bin/python -m bench.large_sets questions covidqa  # -> the question file's path (workspace-app eval format)

Sets (see ../shared/STACK.md for how to fetch them; the JSON files go in bench/.cache/large-sources/):
- `covidqa`: deepset-ai/COVID-QA `data/question-answering/200423_covidQA.json` (1,380 English questions over 98
  scientific articles, Apache-2.0) -> `covidqa.json`; one text file per article.
- `cmrc`: ymcui/cmrc2018 `squad-style-data/cmrc2018_dev.json` (~3.2k Chinese questions over 848 Wikipedia
  paragraphs, CC BY-SA 4.0) -> `cmrc_dev.json`; eight paragraphs a Markdown file, each under its title.
- `pubmedqa`: ../shared/eval's PubMedQA files: the gold abstracts of the first 300 dev queries.
- `xquad`: deepmind/xquad `xquad.en.json` and `xquad.zh.json` (1,190 questions over 48 Wikipedia articles, each
  article and question in both languages, CC BY-SA 4.0) -> the same names; cross-language rows: each article is
  stored in one language (by a hash of its name) and its questions are asked in the other one. Its workspace
  also gets unanswerable rows in both languages whose best evidence is often in the other language: questions of
  COVID-QA and CMRC (`FOREIGN`), whose sources it does not hold.
- `xquad_own`: the same questions asked in their article's own language, in xquad's workspace (`SHARED`). With
  both, a question's source is in its own language half of the time: the sentence ranking learns how to weigh
  same- and other-language evidence without learning to prefer either (bench.fit_answers ranks on the two together).

Measured only (`MEASURED`: never fitted on; bench.fit_answers fits on `SETS`; figures: `python -m bench.large_eval`):
- `financebench`: patronus-ai/financebench (CC BY-NC 4.0: for measurement; its files are never committed), read
  from its git mirror (`fetch github:patronus-ai/financebench` -> `FINANCEBENCH_MIRROR`): 150 questions over 84
  10-K, 10-Q and 8-K filings and earnings releases. Ingestion is bounded by a subset rule (`financebench_subset`):
  only documents whose PDF the snapshot holds count (10 of the 84 are absent: a snapshot lacks large blobs); of
  those in buckets 2-9, the ones with at least `FINANCEBENCH_MIN_QUESTIONS` (3) questions are ingested (13
  documents, ~1,950 pages, 51 questions; at 2 it was 25 documents and ~3,300 pages, over an hour here); every
  document of buckets 0 and 1 is left out as usual and its questions asked unanswerable (16); the other
  documents' questions are not asked. The PDFs are copied from the mirror into `large-sources/financebench/`; the
  workspace is read with the `generic` domain pack (`PACKS`: run `workspace-app eval` on it with
  WORKSPACE_DOMAIN__PACK=generic) and keeps its vectors in its own data dir. Gold: the document and the evidence
  pages (the set's `evidence_page_num` is 0-based: checked against PyMuPDF's page texts); a first citation is
  right when it is on a gold page of the gold document.

Every document falls in one of ten buckets by a hash of its name. Buckets 0 and 1 are left out of the workspace:
their questions are asked there as unanswerable rows (the workspace holds their topical neighbours, not their
source). Even buckets are the fit part (scoring models are fitted on it: `python -m bench.fit_answers`), odd
buckets the held-back part that is reported. A question is right when the first citation's passage is in its
document and holds one of its gold answers (PubMedQA: is in its abstract; FinanceBench: is on a gold page).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.common import (
    CACHE_DIR,
    EVAL_DIR,
    REPO,
    CachedWorkspace,
    bench_settings,
    dev_inputs,
    ingest_sources,
    load_jsonl,
    log,
    open_app,
)
from bench.common.fingerprint import embedding_fingerprint

SOURCES = CACHE_DIR / "large-sources"
SETS = ("covidqa", "cmrc", "pubmedqa", "xquad", "xquad_own")  # the sets bench.fit_answers fits on
SHARED = {"xquad_own": "xquad"}  # a set asked in another set's workspace (its documents are that set's)
MEASURED = ("financebench",)  # sets only measured: never part of the fit
PACKS = {"financebench": "generic"}  # the domain pack a set's workspace is read with (default: the settings')
REMOVED = {0, 1}
CMRC_GROUP = 8
CMRC_QUESTIONS = 1600  # every other question of the dev set keeps asking time near COVID-QA's
PUBMEDQA_DOCUMENTS = 300
FOREIGN = {"xquad": (("covidqa", 200), ("cmrc", 200))}  # (set, how many) of other sets' questions asked unanswerable
FINANCEBENCH_MIRROR = REPO.parent / ".mirror" / "patronus-ai+financebench" / "repo"  # a bare git mirror
FINANCEBENCH_MIN_QUESTIONS = 3  # the subset rule: a kept document has at least this many questions


def bucket(name: str) -> int:
    """The document's bucket, 0..9, by a stable hash of its name."""
    return int(hashlib.sha1(name.encode("utf-8")).hexdigest(), 16) % 10


def split_of(name: str) -> str:
    """'fit' (even buckets) or 'held' (odd ones)."""
    return "fit" if bucket(name) % 2 == 0 else "held"


def _covidqa() -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    data = json.loads((SOURCES / "covidqa.json").read_text(encoding="utf-8"))["data"]
    for i, article in enumerate(data):
        for paragraph in article["paragraphs"]:
            qas = [
                {"id": f"covidqa-{qa['id']}", "question": qa["question"], "lang": "en",
                 "answers": sorted({a["text"].strip() for a in qa["answers"] if a["text"].strip()})}
                for qa in paragraph["qas"] if not qa.get("is_impossible")
            ]
            yield f"covid-{i:03d}.txt", paragraph["context"], qas


def _cmrc() -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    data = json.loads((SOURCES / "cmrc_dev.json").read_text(encoding="utf-8"))["data"]
    for start in range(0, len(data), CMRC_GROUP):
        group = data[start : start + CMRC_GROUP]
        texts, qas = [], []
        for article in group:
            for paragraph in article["paragraphs"]:
                texts.append(f"# {article.get('title') or '段落'}\n\n{paragraph['context']}")
                for qa in paragraph["qas"]:
                    number = int(hashlib.sha1(qa["id"].encode()).hexdigest(), 16)
                    if number % 2 == 0:  # half of the questions (CMRC_QUESTIONS)
                        qas.append({
                            "id": f"cmrc-{qa['id']}", "question": qa["question"], "lang": "zh",
                            "answers": sorted({a["text"].strip() for a in qa["answers"] if a["text"].strip()}),
                        })
        yield f"cmrc-{start // CMRC_GROUP:03d}.md", "\n\n".join(texts), qas


def _pubmedqa() -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    corpus = {row["id"]: row["text"] for row in load_jsonl(EVAL_DIR / "pubmedqa_corpus.jsonl")}
    for row in load_jsonl(EVAL_DIR / "pubmedqa_dev_queries.jsonl")[:PUBMEDQA_DOCUMENTS]:
        qa = {"id": row["id"], "question": row["question"], "lang": "en"}
        yield f"{row['gold_id']}.txt", corpus[row["gold_id"]], [qa]


def _xquad(own: bool = False) -> Iterator[tuple[str, str, list[dict[str, Any]]]]:
    """Each article in its stored language, with its questions in the other language (`own`: in the same one)."""
    versions = {lang: json.loads((SOURCES / f"xquad.{lang}.json").read_text(encoding="utf-8"))["data"] for lang in ("en", "zh")}
    for i, (en, zh) in enumerate(zip(versions["en"], versions["zh"], strict=True)):
        document = f"xquad-{i:02d}.md"
        stored = "zh" if int(hashlib.sha1(f"language {document}".encode()).hexdigest(), 16) % 2 else "en"
        text, asked = (zh, en) if stored == "zh" else (en, zh)
        asked, language = (text, stored) if own else (asked, "en" if stored == "zh" else "zh")
        spans = {qa["id"]: qa["answers"] for paragraph in text["paragraphs"] for qa in paragraph["qas"]}
        qas = [
            {"id": f"xquad-{'own-' if own else ''}{qa['id']}", "question": qa["question"], "lang": language,
             "answers": sorted({a["text"].strip() for a in spans[qa["id"]] if a["text"].strip()})}
            for paragraph in asked["paragraphs"] for qa in paragraph["qas"] if qa["id"] in spans
        ]
        yield document, "\n\n".join(p["context"] for p in text["paragraphs"]), qas


def _mirror(*args: str, stdin: str | None = None) -> bytes:
    """The output of a git command on the FinanceBench mirror (bytes: it also gives PDFs)."""
    return subprocess.run(
        ["git", f"--git-dir={FINANCEBENCH_MIRROR}", *args], input=stdin.encode() if stdin is not None else None,
        capture_output=True, check=True,
    ).stdout


def in_snapshot(documents: Iterable[str]) -> set[str]:
    """The FinanceBench documents whose PDF the mirror holds (a snapshot lacks its largest blobs)."""
    names = sorted(documents)
    checked = _mirror("cat-file", "--batch-check", stdin="".join(f"HEAD:pdfs/{n}\n" for n in names)).decode()
    return {n for n, line in zip(names, checked.splitlines(), strict=True) if not line.endswith("missing")}


def financebench_subset(counts: dict[str, int], available: set[str]) -> tuple[list[str], list[str]]:
    """(ingested, left out) documents: of the available ones, those of buckets 2-9 with at least
    FINANCEBENCH_MIN_QUESTIONS questions are ingested, and every one of buckets 0 and 1 is left out (its questions
    become unanswerable rows). The 10-Ks run to 100-500 pages (~1 page/s ingested here): taking every document would
    take hours; the documents asked about most give the most questions per page ingested."""
    present = sorted(d for d in counts if d in available)
    kept = [d for d in present if bucket(d) not in REMOVED and counts[d] >= FINANCEBENCH_MIN_QUESTIONS]
    return kept, [d for d in present if bucket(d) in REMOVED]


def gold_pages(evidence: list[dict[str, Any]]) -> list[int]:
    """The 1-based pages of a row's evidence (FinanceBench counts its `evidence_page_num` from 0)."""
    return sorted({int(e["evidence_page_num"]) + 1 for e in evidence})


def financebench_pdf(document: str) -> Path:
    """The document's PDF in large-sources/financebench/, copied from the mirror on first use."""
    path = SOURCES / "financebench" / document
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(_mirror("show", f"HEAD:pdfs/{document}"))
    return path


def _financebench() -> Iterator[tuple[str, str | Path, list[dict[str, Any]]]]:
    rows = [json.loads(line) for line in _mirror("show", "HEAD:data/financebench_open_source.jsonl").decode().splitlines() if line.strip()]
    counts = Counter(f"{row['doc_name']}.pdf" for row in rows)
    kept, removed = financebench_subset(counts, in_snapshot(counts))
    for document in kept + removed:
        qas = [
            {"id": row["financebench_id"].replace("financebench_id_", "financebench-"), "question": row["question"],
             "lang": "en", "pages": gold_pages(row["evidence"]), "question_type": row["question_type"]}
            for row in rows if f"{row['doc_name']}.pdf" == document
        ]
        yield document, financebench_pdf(document), qas


READERS = {
    "covidqa": _covidqa, "cmrc": _cmrc, "pubmedqa": _pubmedqa, "xquad": _xquad, "xquad_own": lambda: _xquad(own=True),
    "financebench": _financebench,
}


def _written(path: Path, text: str) -> Path:
    """The text file at `path`, written when it is missing or differs."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def materialise(name: str) -> tuple[list[Path], Path]:
    """Write the set's documents (all of them; a reader giving a file's path has written it) and its question
    file; returns the kept documents and the file."""
    folder = CACHE_DIR / f"large-{name}-files"
    kept: list[Path] = []
    questions = []
    for document, content, qas in READERS[name]():
        path = content if isinstance(content, Path) else _written(folder / document, content)
        removed = bucket(document) in REMOVED
        if not removed:
            kept.append(path)
        for qa in qas:
            row = {**qa, "split": split_of(document), "set": name}
            if removed:
                row.update(answerable=False, kind="unanswerable", source=document)
                row.pop("answers", None)
                row.pop("pages", None)
            else:
                row.update(answerable=True, doc=document)
            questions.append(row)
    for other, count in FOREIGN.get(name, ()):
        rows = [row for row in load_jsonl(materialise(other)[1]) if row["answerable"]]
        for row in rows[:: max(1, len(rows) // count)][:count]:
            questions.append({
                "id": f"{name}-{row['id']}", "question": row["question"], "lang": row["lang"], "split": row["split"],
                "set": name, "answerable": False, "kind": "unanswerable", "source": f"{other}:{row['doc']}",
            })
    question_file = CACHE_DIR / f"large-{name}-questions.jsonl"
    question_file.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in questions), encoding="utf-8")
    return kept, question_file


@dataclass
class LargeWorkspace:
    """A set's ingested workspace: its data dir and the app opened on it."""

    name: str
    data_dir: Path
    app: Any
    meta: dict[str, Any]


def workspace(name: str, fresh: bool = False) -> LargeWorkspace:
    """The set's workspace (`dev`: the 5 guideline dev PDFs) in bench/.cache/large-<set>/, ingested on first use (or with `fresh`) and then reused.

    Not fingerprinted by code, as bench/common's cached workspaces are: a large set takes minutes to ingest, and
    the answer work it serves changes query-time code only. Rebuild it with --fresh after changing ingestion.
    """
    name = SHARED.get(name, name)
    kept = dev_inputs() if name == "dev" else materialise(name)[0]
    data_dir = CACHE_DIR / f"large-{name}"
    meta_path = data_dir / "bench-meta.json"
    if fresh and data_dir.exists():
        shutil.rmtree(data_dir)
    settings = bench_settings(data_dir)
    if name in PACKS:
        settings.domain.pack = PACKS[name]
    # A measured set keeps its vectors in its own data dir: the shared embedding cache stays the fitted sets'.
    shared = None if name in MEASURED else CACHE_DIR / f"embeddings-{embedding_fingerprint()}.sqlite"
    app = open_app(settings, embedding_cache=shared)
    if not meta_path.exists():
        log(f"[{name}] ingesting {len(kept)} documents into {data_dir}")
        record = ingest_sources(app, CachedWorkspace.WORKSPACE, [(p, p.name) for p in kept], name,
                                every=1 if name in MEASURED else 10)
        if record["failures"]:
            raise SystemExit(f"[{name}] {len(record['failures'])} documents failed: {record['failures'][:3]}")
        meta_path.write_text(json.dumps({"ingest": record}, indent=1) + "\n", encoding="utf-8")
    return LargeWorkspace(name, data_dir, app, json.loads(meta_path.read_text(encoding="utf-8")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("action", choices=("build", "questions"))
    parser.add_argument("sets", nargs="+", choices=(*SETS, *MEASURED))
    parser.add_argument("--fresh", action="store_true", help="ingest again even when the cache is valid")
    args = parser.parse_args()
    for name in args.sets:
        if args.action == "questions":
            print(materialise(name)[1])
            continue
        built = workspace(name, args.fresh)
        print(json.dumps({"set": name, "data_dir": str(built.data_dir), **built.meta["ingest"]}))


if __name__ == "__main__":
    main()
