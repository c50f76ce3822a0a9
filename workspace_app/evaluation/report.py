"""An evaluation's figures as a plain-text table: one row per figure, one column per group (all, languages,
splits), each cell the share and its counts."""

from __future__ import annotations

from workspace_app.evaluation.metrics import Figure, GroupFigures, Summary

LABELS = {
    "first_citation": "first citation right",
    "any_citation": "any citation right",
    "refusal_recall": "unanswerable refused",
    "false_refusals": "answerable refused (lower is better)",
    "search_hit@1": "search hit@1",
    "search_hit@5": "search hit@5",
    "cross_doc_all_cited": "cross-document: every document cited",
    "confident_right": "confident answers right",
}


def render_table(summary: Summary) -> str:
    """The summary as aligned text columns: `all`, each language, then `split=<name>` for each split."""
    rows = table_rows(summary)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return "\n".join(_line(row, widths) for row in rows)


def table_rows(summary: Summary) -> list[list[str]]:
    """The table's cells: a header row ("", "all", each language, "split=<name>"...), the question counts, then
    one row per figure, labelled."""
    groups: dict[str, GroupFigures] = {"all": summary.overall, **summary.by_lang}
    groups.update({f"split={name}": group for name, group in summary.by_split.items()})
    rows = [["", *groups], ["questions", *(str(g.questions) for g in groups.values())],
            ["answerable / unanswerable", *(f"{g.answerable} / {g.questions - g.answerable}" for g in groups.values())]]
    for name in summary.overall.figures:
        rows.append([LABELS.get(name, name), *(format_figure(g.figures[name]) for g in groups.values())])
    return rows


def _line(row: list[str], widths: list[int]) -> str:
    """The label left-aligned, the cells right-aligned."""
    cells = [row[0].ljust(widths[0]), *(cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True))]
    return "  ".join(cells).rstrip()


def format_figure(figure: Figure) -> str:
    """'0.800 (8/10)', or '-' when no row counts."""
    return "-" if figure.value is None else f"{figure.value:.3f} ({figure.right}/{figure.of})"
