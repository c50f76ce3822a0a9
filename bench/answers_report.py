"""bench.answers, the readable summary: Markdown tables from a results dict (stdout)."""

from __future__ import annotations

from typing import Any

from bench.answers_metrics import ALL, CHIP_COUNTERS, GROUP_SPLITS, LANGS, QUOTE_COUNTERS

HEADLINE = [
    "first-citation page accuracy", "any-citation page accuracy", "refusal recall", "false-refusal rate",
    "answers fully supported", "every document cited, count", "class and level stated",
    "class and level stated (answer text)", "class and level stated (first citation)",
]
COUNTERS = ["quotes checked", *QUOTE_COUNTERS, "answers with a flagged quote", "source reference markers",
            "answers with source markers", "quotes from reference-list chunks", "quotes from contents chunks",
            "dropped glyphs", "suspected dropped symbols", *CHIP_COUNTERS]
GROUP_METRICS = ["first-citation page accuracy", "any-citation page accuracy", "refusal recall", "false-refusal rate"]


def cell(value: Any) -> str:
    if value is None:
        return "–"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def headline_lines(results: dict[str, Any]) -> list[str]:
    """Every headline figure and counter for tuning / held-back / all, and all by language."""
    m = results["metrics"]
    columns = [(split, ALL) for split in GROUP_SPLITS] + [(ALL, lang) for lang in LANGS]
    lines = ["| metric | tuning | held-back | all | all en | all zh |", "|---|---|---|---|---|---|"]
    counts = [f"{m[s].get(g, {}).get('answerable', 0)} / {m[s].get(g, {}).get('unanswerable', 0)}" for s, g in columns]
    lines.append("| questions (answerable / unanswerable) | " + " | ".join(counts) + " |")
    for name in HEADLINE + COUNTERS:
        values = [m[s].get(g, {}).get(name) for s, g in columns]
        if any(v is not None for v in values):
            lines.append(f"| {name} | " + " | ".join(cell(v) for v in values) + " |")
    return lines


def group_lines(results: dict[str, Any]) -> list[str]:
    """Per file and per kind (and `hard`), all rows: each metric as all · en · zh."""
    lines = ["| group | questions (en/zh) | " + " | ".join(f"{n} (all · en · zh)" for n in GROUP_METRICS) + " |",
             "|---|---|" + "---|" * len(GROUP_METRICS)]
    for grouping, label in (("metrics_by_file", "file"), ("metrics_by_kind", "kind")):
        for group, by_lang in results[grouping][ALL].items():
            sizes = f"{by_lang[ALL]['questions']} ({'/'.join(str(by_lang.get(g, {}).get('questions', 0)) for g in LANGS)})"
            cells = [" · ".join(cell(by_lang.get(g, {}).get(n)) for g in (ALL, *LANGS)) for n in GROUP_METRICS]
            lines.append(f"| {label}: {group} | {sizes} | " + " | ".join(cells) + " |")
    return lines


def split_lines(results: dict[str, Any]) -> list[str]:
    """Per file and per kind: each metric on the tuning part · the held-back part."""
    lines = ["| group | questions (tuning/held-back) | " + " | ".join(f"{n} (tuning · held-back)" for n in GROUP_METRICS)
             + " |", "|---|---|" + "---|" * len(GROUP_METRICS)]
    for grouping, label in (("metrics_by_file", "file"), ("metrics_by_kind", "kind")):
        for group in results[grouping][ALL]:
            parts = [results[grouping][s].get(group, {}).get(ALL, {}) for s in GROUP_SPLITS[:2]]
            sizes = "/".join(str(p.get("questions", 0)) for p in parts)
            cells = [" · ".join(cell(p.get(n)) for p in parts) for n in GROUP_METRICS]
            lines.append(f"| {label}: {group} | {sizes} | " + " | ".join(cells) + " |")
    return lines


def latency_lines(results: dict[str, Any]) -> list[str]:
    lat, cold = results["latency"], results["latency_without_sentence_cache"]
    by = lat["by_language"]
    lines = [
        (f"warm ask latency, mode {lat['mode']}, {lat['passes']} passes x {lat['asks'] // max(1, lat['passes'])} questions "
        f"(the first 50), sequential: p50 {lat['p50']} ms, p95 of per-question medians "
        f"{lat['p95 of per-question medians']} ms (raw p95 {lat['p95 raw']}, max {lat['max']}); en p50/p95 "
        f"{by['en']['p50']}/{by['en']['p95']}, zh {by['zh']['p50']}/{by['zh']['p95']}"),
        f"hybrid search alone (same loop): p50 {lat['search only']['p50']} ms, p95 "
        f"{lat['search only']['p95 of per-question medians']} ms; stages p50/p95: "
        + ", ".join(f"{k} {v[0]}/{v[1]}" for k, v in lat["stages p50/p95 ms"].items()),
        f"evidence sentences embedded afresh (1 pass): p50 {cold['p50']} ms, p95 {cold['p95 of per-question medians']} ms",
        f"load average before / after: {lat['loadavg_before']} / {lat['loadavg_after']} on "
        f"{results['machine']['cpus_usable']} CPUs"
        + (" -- TAKEN UNDER LOAD (other processes were running): compare 'search only' before blaming the answerer"
           if lat["under_load"] else ""),
    ]
    return lines


def target_lines(results: dict[str, Any]) -> list[str]:
    lines = ["| target | rows | tuning | held-back | all | goal | met (all) |", "|---|---|---|---|---|---|---|"]
    for t in results["targets"]:
        values = [cell(t["values"].get(s)) for s in GROUP_SPLITS]
        lines.append(f"| {t['target']} | {t['rows']} | " + " | ".join(values)
                     + f" | {t['goal']} | {'yes' if t['met'] else 'NO'} |")
    return lines


def print_report(results: dict[str, Any]) -> None:
    """The tables, to stdout."""
    n = results["metrics"][ALL][ALL]["questions"]
    print(f"\n## Answers (extractive, mode {results['mode']}, --questions {results['question_set']}: {n} questions, "
          "workspace of the 5 dev PDFs)\n")
    print(f"Held-back split: {results['split_rule']}\n")
    print("\n".join(headline_lines(results)))
    print("\nPer file and kind (all rows):\n")
    print("\n".join(group_lines(results)))
    print("\nTuning vs held-back:\n")
    print("\n".join(split_lines(results)))
    if "latency" in results:
        print("\n" + "\n".join(latency_lines(results)))
    print("\nTargets (issue 14):\n")
    print("\n".join(target_lines(results)))


def print_flagged(rows: list[dict[str, Any]]) -> None:
    """Every flagged quote, source marker and suspected dropped symbol, by question (for `--details`)."""
    print("\nQuote problems:")
    for row in rows:
        quality = row.get("quality") or {}
        for flagged in quality.get("flagged", []):
            print(f"  {row['id']} {','.join(flagged['flags'])}: {flagged['quote'][:140]!r}")
        if quality.get("source markers"):
            print(f"  {row['id']} source markers: {' '.join(quality['source markers'])}")
        for trace in quality.get("suspected dropped symbols", []):
            print(f"  {row['id']} suspected dropped symbol: {trace!r}")
        if quality.get("dropped glyphs"):
            print(f"  {row['id']} dropped glyphs: {' '.join(quality['dropped glyphs'])}")
