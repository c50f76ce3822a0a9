"""Questions in two parts, each answered by another document: does the answer cite both? (issue 26, cross-document)

The guideline sets hold five cross-document questions and the blind set a few more: too few to tell a change to the
multi-part answer from noise, and any rule written for them would fit them. Here every pair of two answerable
questions of a large set (COVID-QA, CMRC 2018: bench.large_sets), each from another document, is joined into one
question ("Q1 Q2", the two as asked) and asked in that set's workspace. Pairs are drawn from one split at a time
(`fit` or `held`, the split of bench.large_sets), in a fixed order from a hash of the rows' ids.

Judged per part: a citation in the part's document whose passage holds one of its gold answers (the large sets'
rule for a right passage). Figures, per set and split:
- `both`: both parts answered (the cross-document measure: every document cited with its answer);
- `documents`: both documents cited (the blind set's measure, without the answers);
- `parts`: the share of parts answered; `refused`: joined questions refused;
- `alone`: the share of parts answered when asked alone (the same questions one at a time): what joining costs.

    .venv/bin/python -m bench.large_sets build covidqa cmrc      # once (~10 min)
    .venv/bin/python -m bench.compound covidqa cmrc --pairs 60 --split held --label now
Results: bench/results/compound.json (one entry per label, the latest last).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import time
from collections.abc import Sequence
from typing import Any

from bench.common import RESULTS_DIR, git_info, load_jsonl, log, machine_info, now_iso
from bench.large_sets import materialise, workspace
from workspace_app.evaluation.gold import normalized

OUT = RESULTS_DIR / "compound.json"
WORKSPACE = "bench"
JOINER = {"en": " ", "zh": ""}


def pairs_of(rows: Sequence[dict[str, Any]], split: str, count: int) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    """`count` pairs of answerable rows of the split, each pair from two documents, in a fixed hashed order."""
    pool = sorted(
        (r for r in rows if r.get("answerable") and r.get("split") == split and r.get("answers")),
        key=lambda r: hashlib.sha1(f"compound {r['id']}".encode()).hexdigest(),
    )
    pairs: list[tuple[dict[str, Any], dict[str, Any]]] = []
    waiting: list[dict[str, Any]] = []
    for row in pool:
        partner = next((w for w in waiting if w["doc"] != row["doc"]), None)
        if partner is None:
            waiting.append(row)
            continue
        waiting.remove(partner)
        pairs.append((partner, row))
        if len(pairs) == count:
            break
    return pairs


def joined(first: dict[str, Any], second: dict[str, Any], join: str = "asked") -> str:
    """The two questions as one: each ending as asked (a question mark added where it had none), or (`comma`) as
    one sentence, the way people join two questions in writing ("What is X, and how many Y?", "X是什么，Y是多少？")."""
    def ended(q: str, lang: str) -> str:
        q = q.strip()
        return q if q[-1:] in "?？" else q + ("？" if lang == "zh" else "?")
    if join == "comma":
        head = first["question"].strip().rstrip("?？ ")
        tail = ended(second["question"], second["lang"])
        if first["lang"] == "zh":
            return f"{head}，{tail}"
        if tail[1:2].islower():  # "What …" -> "what …"; an acronym ("HIV …") keeps its case
            tail = tail[0].lower() + tail[1:]
        return f"{head}, and {tail}"
    return JOINER.get(first["lang"], " ").join(ended(r["question"], r["lang"]) for r in (first, second))


class Judge:
    """Whether an answer's citations hold a row's gold answer in the row's document."""

    def __init__(self, app: Any) -> None:
        self.app = app

    def answered(self, answer: Any, row: dict[str, Any]) -> bool:
        if answer.refused:
            return False
        chunks = self.app.catalog.get_chunks([c.chunk_id for c in answer.citations])
        gold = [normalized(a) for a in row["answers"]]
        for citation in answer.citations:
            chunk = chunks.get(citation.chunk_id)
            if citation.document == row["doc"] and chunk is not None:
                text = normalized(chunk.text)
                if any(g in text for g in gold):
                    return True
        return False

    def cites(self, answer: Any, document: str) -> bool:
        return not answer.refused and any(c.document == document for c in answer.citations)


def measure(name: str, split: str, count: int, alone: bool, join: str = "asked") -> dict[str, Any]:
    built = workspace(name)
    rows = load_jsonl(materialise(name)[1])
    pairs = pairs_of(rows, split, count)
    judge = Judge(built.app)
    ask = built.app.answers.ask
    both = documents = parts = refused = 0
    alone_right = 0
    started = time.perf_counter()
    details = []
    for i, (first, second) in enumerate(pairs, 1):
        question = joined(first, second, join)
        answer = ask(WORKSPACE, question, mode="hybrid")
        right = [judge.answered(answer, r) for r in (first, second)]
        cited = [judge.cites(answer, r["doc"]) for r in (first, second)]
        both += all(right)
        documents += all(cited)
        parts += sum(right)
        refused += answer.refused
        row: dict[str, Any] = {"ids": [first["id"], second["id"]], "both": all(right), "parts": right,
                               "documents": cited, "refused": answer.refused, "citations": len(answer.citations)}
        if alone:
            by_itself = [judge.answered(ask(WORKSPACE, r["question"], mode="hybrid"), r) for r in (first, second)]
            alone_right += sum(by_itself)
            row["alone"] = by_itself
        details.append(row)
        if i % 10 == 0:
            log(f"[{name}/{split}] {i}/{len(pairs)}: both {both / i:.3f}, parts {parts / (2 * i):.3f}")
    n = len(pairs)
    result = {
        "set": name, "split": split, "join": join, "pairs": n, "both": round(both / n, 3), "documents": round(documents / n, 3),
        "parts": round(parts / (2 * n), 3), "refused": round(refused / n, 3),
        "alone": round(alone_right / (2 * n), 3) if alone else None,
        "seconds": round(time.perf_counter() - started, 1), "details": details,
    }
    log(f"[{name}/{split}] " + json.dumps({k: v for k, v in result.items() if k != "details"}))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("sets", nargs="+", choices=("covidqa", "cmrc"))
    parser.add_argument("--pairs", type=int, default=60)
    parser.add_argument("--split", choices=("fit", "held"), default="held")
    parser.add_argument("--no-alone", action="store_true", help="skip asking each part alone")
    parser.add_argument("--join", choices=("asked", "comma"), default="asked",
                        help="asked: 'Q1? Q2?'; comma: one sentence, 'Q1, and q2?' ('Q1，Q2？' in Chinese)")
    parser.add_argument("--label", default="run")
    args = parser.parse_args()
    runs = [measure(name, args.split, args.pairs, not args.no_alone, args.join) for name in args.sets]
    entry = {"label": args.label, "run_at": now_iso(), "command": "python -m bench.compound " + " ".join(
        [*args.sets, "--pairs", str(args.pairs), "--split", args.split, "--join", args.join]), "git": git_info(),
        "machine": machine_info(), "runs": runs}
    history = json.loads(OUT.read_text(encoding="utf-8")) if OUT.exists() else []
    history = [e for e in history if e["label"] != args.label] + [entry]
    OUT.write_text(json.dumps(history, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    for run in runs:
        print(json.dumps({k: v for k, v in run.items() if k != "details"}))


if __name__ == "__main__":
    main()
