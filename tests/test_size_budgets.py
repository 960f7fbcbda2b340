"""The size budgets (issue 82, item 3): one written policy (docs/layout.md, "Size budgets") whose table names the same
caps as their one place, pyproject.toml's [tool.lnrecency.size-budgets], and every measured budget within its cap. The
tests that enforce each budget read its cap from there; this file checks the table and the measures together."""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BUDGETS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["lnrecency"]["size-budgets"]


def _table(page: str | None = None) -> dict[str, int]:
    text = (page or (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")).split("## Size budgets", 1)[1]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^\| `([a-z-]+)` \| (\d+) \|", text, re.M)}


def test_the_written_policy_names_the_caps_the_tests_read():
    assert _table() == BUDGETS


def test_the_measured_budgets_are_within_their_caps():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    begin, end = "<!-- verdicts:begin -->", "<!-- verdicts:end -->"
    outside = readme.split(begin, 1)[0] + readme.split(end, 1)[1]
    answer = readme.split(begin, 1)[1].split("**The answer.**", 1)[1].split("\n\n", 1)[0]  # the whole answer
    used = {"readme-words": len([w for w in readme.split() if not set(w) <= set("|-:")]),
            "readme-outside-words": len(outside.split()), "readme-lines": len(readme.splitlines()),
            "answer-words": len(answer.split())}
    over = {k: (v, BUDGETS[k]) for k, v in used.items() if v > BUDGETS[k]}
    assert over == {}


def test_a_planted_cap_is_caught():
    """The same check says no: the page with one cap raised in its table no longer names the caps the tests read."""
    page = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    cap = BUDGETS["readme-words"]
    planted = page.replace(f"| `readme-words` | {cap} |", f"| `readme-words` | {cap + 100} |")
    assert planted != page and _table(planted) != BUDGETS
