"""Quote debris benchmark: how many quotable sentences of the corpus carry reference numbers, footnote marks or a
second statement run into them, as read before (`split_sentences`, shown verbatim) and now (`quote_sentences`,
shown by `clean_quote`).

Each corpus PDF is read and chunked as the ingestion pipeline does (`read_source`, then `build_chunks`); the
sentences of its body chunks that `answer.quotes.quotable` accepts are what an answer may quote. Each is checked
for four kinds of debris, by detectors of their own (not the cleaner's patterns):

- glued reference: digits set as a superscript glued to the punctuation or word before them ("surgery.6",
  "Medicine,1,2 and", "disease33 should");
- bracket reference: the source's markers as `bench.common.quotes.source_reference_markers` finds them in an
  answer ("[12,13]", "［6‑7］", "(S4.5-33)", "(77,99)", superscript digits);
- footnote mark: a dagger-like symbol, or "*" / "#" glued to a word ("events#", "ECG‡");
- run-together: a second statement inside the quote, after a glued reference ("surgery.6 Coronary") or a
  numbered statement label set right after Latin text ("1 mmHg=0.133 kPa陈述8：").

It also checks that the highlight still finds each sentence the new reading parts (`answer.highlight`, by the
PDF's words, as a citation locates its raw quote), against the share found for the sentence it came from.

    .venv/bin/python -m bench.quotes            # ~2 min: writes bench/results/quotes.json, prints a Markdown table
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path
from typing import Any

from bench.common import RESULTS_DIR, compact_json, git_info, log, measure_corpus, now_iso
from bench.common.quotes import source_reference_markers

OUT = RESULTS_DIR / "quotes.json"
EXAMPLES = 3
KINDS = ("glued reference", "bracket reference", "footnote mark", "run-together")
_GLUED = re.compile(r"[A-Za-z)][.,;:]\d{1,3}(?:[,–-]\d{1,3})*(?=\s|$)|[a-z]{3}\d{1,3}(?=[\s.,;])")
_FOOTNOTE = re.compile(r"[†‡§¶‖]|(?<=[\w)])[*#](?=[\s.,;:)]|$)")
_RUN_TOGETHER = re.compile(r"[a-z)][.?!]\d{1,3}(?:[,–-]\d{1,3})*\s+[A-Z][a-z]|[A-Za-z0-9)）][\u4e00-\u9fff]{1,4}\d{1,3}[：:]")


def debris(quote: str) -> list[str]:
    """The kinds of debris a shown quote carries."""
    found = {
        "glued reference": bool(_GLUED.search(quote)),
        "bracket reference": bool(source_reference_markers(quote)),
        "footnote mark": bool(_FOOTNOTE.search(quote)),
        "run-together": bool(_RUN_TOGETHER.search(quote)),
    }
    return [kind for kind in KINDS if found[kind]]


def _quotes(chunks: list[Any], split: Any, show: Any) -> list[tuple[Any, Any, str]]:
    """(chunk, span, shown quote) of every quotable sentence of the body chunks."""
    from workspace_app.answer.quotes import is_table_title, quotable
    from workspace_app.text.cjk import has_cjk

    found = []
    for chunk in chunks:
        if chunk.kind != "body":
            continue
        table = is_table_title(chunk.section.split(" > ")[-1])
        for span in split(chunk.text):
            if quotable(chunk.text, span, "zh" if has_cjk(span.text) else "en", table):
                found.append((chunk, span, show(span.text)))
    return found


def _tally(quotes: list[tuple[Any, Any, str]]) -> dict[str, Any]:
    counts: Counter[str] = Counter()
    examples: dict[str, list[str]] = {kind: [] for kind in KINDS}
    for _, _, quote in quotes:
        kinds = debris(quote)
        counts.update(kinds)
        counts["any"] += bool(kinds)
        for kind in kinds:
            if len(examples[kind]) < EXAMPLES:
                examples[kind].append(quote[:200])
    return {"quotable": len(quotes), **{k: counts[k] for k in (*KINDS, "any")}, "examples": examples}


def _located(path: Path, pairs: list[tuple[Any, str]]) -> int:
    """How many (chunk, raw quote) pairs the highlight finds by the page's words."""
    from workspace_app.answer.highlight import _by_words
    from workspace_app.text.terms import loose

    return sum(bool(_by_words(path, chunk, loose(quote))) for chunk, quote in pairs)


def measure(path: Path, embedder: Any, settings: Any) -> dict[str, Any]:
    """One PDF's row: debris before and after, and the highlight of the sentences the new reading parts."""
    from workspace_app.answer.quotes import clean_quote, quote_sentences
    from workspace_app.ingest.pipeline import build_chunks
    from workspace_app.ingest.readers import media_type_for, read_source
    from workspace_app.models.documents import Document
    from workspace_app.text.sentences import split_sentences

    media_type = media_type_for(path.name)
    parsed = read_source(path, path.name, media_type)
    document = Document(path.stem, "bench", path.name, "", path.stat().st_size, parsed.page_count, 0, "parsing",
                        "parsing", 0.0, None, now_iso(), media_type)
    chunks = build_chunks(document, parsed, embedder, settings)
    before = _quotes(chunks, split_sentences, lambda text: text)
    after = _quotes(chunks, quote_sentences, clean_quote)
    # The sentences parted anew, and the ones they came from: does the highlight find both alike?
    old = {(chunk.id, span.start, span.end) for chunk, span, _ in before}
    parted = [(chunk, span) for chunk, span, _ in after if (chunk.id, span.start, span.end) not in old]
    starts = {(chunk.id, span.start) for chunk, span in parted}
    whole = [(chunk, span) for chunk, span, _ in before
             if any((chunk.id, at) in starts for at in range(span.start, span.end))]
    return {
        "pdf": path.name, "before": _tally(before), "after": _tally(after),
        "parted": {"sentences": len(parted), "located": _located(path, [(c, s.text) for c, s in parted]),
                   "from": len(whole), "from located": _located(path, [(c, s.text) for c, s in whole])},
    }


def markdown(rows: list[dict[str, Any]]) -> str:
    """Quotable sentences with each kind of debris, before -> after, per PDF."""
    head = "| PDF | quotable | " + " | ".join(KINDS) + " | any |\n|---|---|" + "---|" * (len(KINDS) + 1) + "\n"

    def cells(b: dict[str, Any], a: dict[str, Any]) -> str:
        return " | ".join(f"{b[k]} → {a[k]}" for k in ("quotable", *KINDS, "any"))

    lines = [f"| {r['pdf']} | {cells(r['before'], r['after'])} |" for r in rows]
    total = {side: {k: sum(r[side][k] for r in rows) for k in ("quotable", *KINDS, "any")} for side in ("before", "after")}
    return head + "\n".join([*lines, f"| **all** | {cells(total['before'], total['after'])} |"])


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    parser.add_argument("--pdf", action="append", default=[], help="only these corpus PDFs (file names)")
    args = parser.parse_args(argv)
    rows = measure_corpus(measure, args.pdf)
    keys = ("quotable", *KINDS, "any")
    totals = {side: {k: sum(r[side][k] for r in rows) for k in keys} for side in ("before", "after")}
    totals["parted"] = {k: sum(r["parted"][k] for r in rows) for k in ("sentences", "located", "from", "from located")}
    result = {"benchmark": "quotes", "at": now_iso(), "git": git_info(), "totals": totals, "pdfs": rows}
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows))


if __name__ == "__main__":
    main()
