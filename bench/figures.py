"""Figure benchmark: are the corpus PDFs' captioned figures found, on the right page, with the right caption?

Gold (`bench/figures_gold.jsonl`, one row a figure: pdf, page (1-based), label such as "Figure 3", caption start):
every caption line of the 13 corpus PDFs that opens with a figure label, listed from the text layer
(`--candidates` prints them) and checked by eye on pages rendered to PNG (in-text mentions that only open a line
were dropped; a figure whose caption is part of its picture has no text-layer caption and is not in the gold).

Measured with the ingestion's own finder (`workspace_app/ingest/figures.py`, default settings) on every page:

- found: a gold figure with a found figure on its page with its label and a caption that starts like the gold's
  (first 25 characters, spaces and case ignored); recall = found / gold (target >= 0.90), per PDF and in all;
- false figures: found figures without a caption (an image kept for its size; a logo would be one), and found
  figures whose label is not in the gold on that page;
- seconds a page (the finder alone; the machine is shared).

Figure-seeking questions (`bench/figure_questions.jsonl`, 10 written here: pdf and label of the figure meant): the
figures found are stored in a catalog in a temporary folder as the ingestion stage stores them (thumbnails too, but
without passages: the nearby text of a full ingestion is not indexed here), and each question gets the figures an
answer would show (`workspace_app/answer/figures.py`, the asked-for one first); right = the first is the one meant
(target: >= 8 of 10).

    ORT_DISABLE_TELEMETRY=1 .venv/bin/python -m bench.figures            # writes bench/results/figures.json
    ORT_DISABLE_TELEMETRY=1 .venv/bin/python -m bench.figures --candidates   # caption lines for the gold
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from bench.common import CORPUS_DIR, REPO, RESULTS_DIR, compact_json, git_info, load_jsonl, log, machine_info, now_iso

OUT = RESULTS_DIR / "figures.json"
GOLD = REPO / "bench" / "figures_gold.jsonl"
QUESTIONS = REPO / "bench" / "figure_questions.jsonl"
TARGET = 0.90
_START = 25  # caption characters compared


def _key(text: str) -> str:
    return "".join(text.split()).lower()[:_START]


def candidates(pdf: Path) -> list[dict[str, Any]]:
    """Text-layer lines of a PDF that open with a figure label: pdf, page, label, caption start."""
    import pymupdf

    from workspace_app.ingest.figures import caption_label

    rows = []
    with pymupdf.open(pdf) as doc:
        for page in doc:
            for block in page.get_text("dict", flags=pymupdf.TEXTFLAGS_TEXT)["blocks"]:
                lines = block.get("lines", [])
                for index, line in enumerate(lines):
                    text = "".join(span["text"] for span in line["spans"]).strip()
                    label = caption_label(text)
                    if label:
                        # the rest of the visual line: a label and its title may be two line objects
                        beside = [
                            "".join(span["text"] for span in other["spans"]).strip() for other in lines[index + 1:]
                            if abs(other["bbox"][3] - line["bbox"][3]) < 2
                        ]
                        caption = " ".join([text, *beside])
                        rows.append({"pdf": pdf.name, "page": page.number + 1, "label": label, "caption": caption[:80]})
    return rows


def measure_pdf(pdf: Path, gold: list[dict[str, Any]], found: dict[int, list[Any]], engine: Any) -> dict[str, Any]:
    """Gold figures found, false figures and time for one PDF (`found` receives its figures by page, their
    pictures read by `engine` when there is one)."""
    import pymupdf

    from workspace_app.ingest.figure_stage import read_picture
    from workspace_app.ingest.figures import find_figures

    started = time.perf_counter()
    ocr_s = 0.0
    with pymupdf.open(pdf) as doc:
        for page in doc:
            found[page.number + 1] = find_figures(page)
        pages = doc.page_count
        seconds = time.perf_counter() - started
        if engine is not None:  # as the ingestion stage does (figure_ocr): pictures without a text layer
            started = time.perf_counter()
            for number, figures in found.items():
                page = doc.load_page(number - 1)
                found[number] = [
                    replace(f, text=read_picture(page, f.box, engine, 200)) if f.kind == "raster" and not f.text else f
                    for f in figures
                ]
            ocr_s = time.perf_counter() - started
    missed = []
    hits = 0
    for row in gold:
        on_page = found.get(row["page"], [])
        if any(f.label == row["label"] and _key(f.caption) == _key(row["caption"]) for f in on_page):
            hits += 1
        else:
            seen = [(f.label, f.caption[:40]) for f in on_page]
            missed.append({"page": row["page"], "label": row["label"], "found_on_page": seen})
    gold_labels = {(row["page"], row["label"]) for row in gold}
    uncaptioned = [(p, f.box) for p, figures in found.items() for f in figures if not f.label]
    unknown = [(p, f.label) for p, figures in found.items() for f in figures if f.label and (p, f.label) not in gold_labels]
    return {
        "pdf": pdf.name, "pages": pages, "gold": len(gold), "found": hits,
        "recall": round(hits / len(gold), 3) if gold else None,
        "false_uncaptioned": len(uncaptioned), "false_unknown_label": len(unknown),
        "seconds_per_page": round(seconds / pages, 4), "ocr_s": round(ocr_s, 1),
        "pictures_read": sum(1 for figures in found.values() for f in figures if f.kind == "raster"),
        "missed": missed,
        "uncaptioned": [{"page": p, "box": [round(v) for v in box]} for p, box in uncaptioned],
        "unknown_labels": [{"page": p, "label": label} for p, label in unknown],
    }


def measure_questions(found: dict[str, dict[int, list[Any]]], questions: list[dict[str, Any]]) -> dict[str, Any]:
    """Each question's first shown figure, from a catalog holding every figure found."""
    from workspace_app.answer.figures import answer_figures
    from workspace_app.answer.plan import tool_calls
    from workspace_app.ingest.figure_stage import figure_index_text
    from workspace_app.models.documents import Document, Figure, Rect
    from workspace_app.storage.sqlite.catalog import SqliteCatalog

    with tempfile.TemporaryDirectory() as folder:
        catalog = SqliteCatalog(Path(folder) / "catalog.sqlite")
        workspace = catalog.create_workspace("Figures")
        names = {}
        for number, (name, pages) in enumerate(sorted(found.items())):
            document_id = f"doc{number:02d}"
            names[document_id] = name
            catalog.add_document(Document(document_id, workspace.id, name, document_id, 0, len(pages), 0, "ready",
                                          "ready", 1.0, None, now_iso()))
            figures = [
                Figure(f"{document_id}-fig{ordinal:03d}", document_id, ordinal, Rect(f.page, *f.box), f.label,
                       f.caption, f.text, f.kind)
                for ordinal, f in enumerate(f for page in sorted(pages) for f in pages[page])
            ]
            catalog.figures.replace_figures(
                document_id, workspace.id, figures, [figure_index_text(f, {}) for f in figures]
            )
        rows = []
        for row in questions:
            asked = next((call.query for call in tool_calls(row["question"], "naive") if call.tool == "figures"), None)
            shown = answer_figures(catalog.figures, asked, workspace.id, None, [], 2)
            first = (names[shown[0].document_id], shown[0].label) if shown else None
            rows.append({**row, "shown": list(first) if first else None, "right": first == (row["pdf"], row["label"])})
        catalog.close()
    return {"questions": len(rows), "right": sum(row["right"] for row in rows), "rows": rows}


def markdown(rows: list[dict[str, Any]], total: dict[str, Any]) -> str:
    """The README table."""
    lines = ["| PDF | pages | gold figures | found | recall | uncaptioned | unknown label | s/page |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        lines.append(
            f"| {row['pdf']} | {row['pages']} | {row['gold']} | {row['found']} | {row['recall']} | "
            f"{row['false_uncaptioned']} | {row['false_unknown_label']} | {row['seconds_per_page']} |"
        )
    lines.append(
        f"| **all** | {total['pages']} | {total['gold']} | {total['found']} | **{total['recall']}** | "
        f"{total['false_uncaptioned']} | {total['false_unknown_label']} | {total['seconds_per_page']} |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=OUT, help="results file")
    parser.add_argument("--gold", type=Path, default=GOLD, help="gold figures (jsonl)")
    parser.add_argument("--questions", type=Path, default=QUESTIONS, help="figure-seeking questions (jsonl)")
    parser.add_argument("--no-ocr", action="store_true", help="do not read the pictures' words (figure_ocr off)")
    parser.add_argument("--candidates", action="store_true", help="print caption lines of the corpus as jsonl")
    args = parser.parse_args(argv)
    os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")
    pdfs = sorted(CORPUS_DIR.glob("*.pdf"))
    if args.candidates:
        for pdf in pdfs:
            for row in candidates(pdf):
                print(json.dumps(row, ensure_ascii=False))
        return
    machine = machine_info()
    gold = load_jsonl(args.gold)
    from workspace_app.ingest.ocr import load_engine

    engine = None if args.no_ocr else load_engine("rapidocr")
    rows = []
    found: dict[str, dict[int, list[Any]]] = {}
    for pdf in pdfs:
        log(f"{pdf.name} ...")
        found[pdf.name] = {}
        rows.append(measure_pdf(pdf, [row for row in gold if row["pdf"] == pdf.name], found[pdf.name], engine))
        log(f"  {rows[-1]['found']} of {rows[-1]['gold']}, {rows[-1]['false_uncaptioned']} uncaptioned")
    pages = sum(row["pages"] for row in rows)
    total = {
        "pages": pages, "gold": sum(row["gold"] for row in rows), "found": sum(row["found"] for row in rows),
        "false_uncaptioned": sum(row["false_uncaptioned"] for row in rows),
        "false_unknown_label": sum(row["false_unknown_label"] for row in rows),
        "seconds_per_page": round(sum(row["seconds_per_page"] * row["pages"] for row in rows) / pages, 4),
        "ocr_s": round(sum(row["ocr_s"] for row in rows), 1),
        "pictures_read": sum(row["pictures_read"] for row in rows) if engine is not None else 0,
    }
    total["recall"] = round(total["found"] / total["gold"], 3) if total["gold"] else None
    asked = measure_questions(found, load_jsonl(args.questions))
    log(f"figure questions: {asked['right']} of {asked['questions']} shown the right figure first")
    result = {
        "benchmark": "figures", "at": now_iso(), "git": git_info(), "machine": machine, "target_recall": TARGET,
        "figure_ocr": engine is not None, "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "summary": total, "pdfs": rows, "figure_questions": asked,
    }
    args.out.write_text(compact_json(result), encoding="utf-8")
    log(f"wrote {args.out}")
    print(markdown(rows, total))


if __name__ == "__main__":
    main()
