"""Hand-written rules in the package: regular expressions and their alternations, per file (issue 26's target:
answer/ at most 256 alternations, the whole tree at most 700).

An alternation is a `|` inside a string constant given to `re.compile` (read from the syntax tree, so a `|` in a
comment or a docstring does not count, and one in a pattern built from named pieces counts only where it is
written in the call).

    .venv/bin/python -m bench.rules     # writes bench/results/rules.json, prints the totals and the largest
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

from bench.common import RESULTS_DIR, git_info, now_iso

PACKAGE = Path(__file__).resolve().parents[1] / "workspace_app"
OUT = RESULTS_DIR / "rules.json"
TARGETS = {"answer": 256, "package": 700}


def compiled_patterns(path: Path) -> list[tuple[int, int]]:
    """(line, alternations) of every `re.compile(...)` call in a module."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        func = node.func if isinstance(node, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr == "compile" and getattr(func.value, "id", None) == "re":
            pattern = node.args[0] if node.args else None  # type: ignore[union-attr]
            constants = [n.value for n in ast.walk(pattern) if isinstance(n, ast.Constant) and isinstance(n.value, str)] if pattern else []
            found.append((node.lineno, sum(text.count("|") for text in constants)))
    return found


def count(root: Path = PACKAGE) -> dict[str, dict[str, int]]:
    """Per module (relative to the package's parent): patterns and alternations."""
    rows = {}
    for path in sorted(root.rglob("*.py")):
        patterns = compiled_patterns(path)
        if patterns:
            rows[str(path.relative_to(root.parent))] = {"patterns": len(patterns), "alternations": sum(a for _, a in patterns)}
    return rows


def main() -> None:
    rows = count()
    answer = sum(r["alternations"] for name, r in rows.items() if name.startswith("workspace_app/answer/"))
    package = sum(r["alternations"] for r in rows.values())
    result = {
        "benchmark": "rules", "at": now_iso(), "git": git_info(),
        "totals": {"answer": answer, "package": package, "patterns": sum(r["patterns"] for r in rows.values())},
        "targets": {name: {"at_most": limit, "met": {"answer": answer, "package": package}[name] <= limit}
                    for name, limit in TARGETS.items()},
        "modules": rows,
    }
    OUT.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(f"answer/ {answer} alternations (target <= {TARGETS['answer']}), package {package} (<= {TARGETS['package']})")
    for name, row in sorted(rows.items(), key=lambda item: -item[1]["alternations"])[:10]:
        print(f"{row['alternations']:5d}  {name}")


if __name__ == "__main__":
    main()
