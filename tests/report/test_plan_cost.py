"""What each plan costs (issue 82, item 5), measured from its declaration: docs/layout.md's table is the measurement
of the committed tree, and plan v5's row is counted again here by other means (its files' newlines)."""
from __future__ import annotations

from pathlib import Path

from lnrecency.report.words.plan_cost import PLAN_COST_BEGIN, PLAN_COST_END, plan_cost_table, plan_costs

ROOT = Path(__file__).resolve().parents[2]


def test_the_layout_page_states_the_measured_costs():
    text = (ROOT / "docs" / "layout.md").read_text(encoding="utf-8")
    block = PLAN_COST_BEGIN + text.split(PLAN_COST_BEGIN, 1)[1].split(PLAN_COST_END, 1)[0] + PLAN_COST_END
    assert block == plan_cost_table(), "run: python3 -m lnrecency.report.regenerate"


def test_plan_v5_s_own_modules_are_its_sub_package_and_its_claim_module():
    cost = {c.name: c for c in plan_costs()}["thesis-text-v5"]
    folder = ROOT / "lnrecency" / "experiments" / "studies" / "text_v5"
    claim = ROOT / "lnrecency" / "claims" / "trained" / "tf1_tf3_tp1_tp4_ts1_ts3_thesis_text_v5.py"
    expected = {str(p.relative_to(ROOT)): p.read_bytes().count(b"\n") for p in [*sorted(folder.glob("*.py")), claim]}
    assert dict(cost.code) == expected
    assert cost.files == 2 + len(expected)  # its text and declared.py beside them
    text = ROOT / "lnrecency" / "data" / "thesis_text_plan_v5.md"
    assert cost.text_lines == text.read_bytes().count(b"\n")
    # its Study(...), its tests' tuple, its arms and its rules' helper: not the whole declarations file
    declared = ROOT / "lnrecency" / "experiments" / "plans" / "declared.py"
    assert 40 < cost.declaration_lines < 100 < len(declared.read_text(encoding="utf-8").splitlines())


def test_a_hook_in_the_shared_module_counts_its_own_function_and_those_it_calls():
    cost = {c.name: c for c in plan_costs()}["thesis-text-v4"]
    hooks = {p: n for p, n in cost.code if p.startswith("lnrecency/experiments/plans/hooks.py:")}
    # v4_snapshot calls v4_secondary, v4_lines calls _mean; no other plan's hook is counted
    assert set(hooks) == {f"lnrecency/experiments/plans/hooks.py:{f}"
                          for f in ("v4_snapshot", "v4_secondary", "v4_lines", "_mean")}
    assert all(n < 25 for n in hooks.values())
    # the plan's own sub-package counts whole through its declared numbers hook (v4_plan.py: its design recomputed)
    assert "lnrecency/experiments/studies/text_v4/v4_plan.py" in dict(cost.code)
    assert cost.files == 2 + len({p.split(":")[0] for p, _ in cost.code})
