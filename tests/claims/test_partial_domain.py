"""No verdict beyond what was checked (issue 84, item 2): a universal statement that a run checks on part of its domain
is not confirmed by it; the row says where it held and why it is not decided, and the answer, lists and counts (all
read from the label) follow."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from lnrecency.inference.evidence import Evidence, Setting, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.verdicts import ClaimResult

ROOT = Path(__file__).resolve().parents[2]


@record
class _Checked(Evidence):
    layers: int


def _row(verdict, **q):
    return ClaimResult("C2", "our formulation", "every layer >= 3 ...", Setting.of({"layers": "3..4"}), verdict,
                       _Checked(layers=4), "", Qualifiers(**q) if q else None)


@pytest.mark.parametrize("verdict, after", [("confirmed", "inconclusive"), ("refuted", "refuted"),
                                            ("inconclusive", "inconclusive")])
def test_a_row_checked_on_part_of_its_domain_is_not_confirmed_by_it(verdict, after):
    q = {"fails": "at layer 4"} if verdict == "refuted" else {}
    r = _row(verdict, **q).on_part("at layers 3-4", "layers 5-6")
    assert r.verdict == after
    if after != verdict:
        assert r.qualifiers.reason == "partial" and r.qualifiers.holds == "at layers 3-4"
        assert r.finding.startswith("Checked at layers 3-4 only; not checked: layers 5-6")


def test_the_quick_report_does_not_confirm_c2_where_the_full_run_refutes_it():
    """The planted case is the real one: "layers >= 3 have earlier-token bias" holds at layers 3-4 (all the quick run
    computes) and fails at layers 5-6 with the residual (the full run)."""
    from lnrecency.claims.registry import evaluate

    quick = [r for r in evaluate(["C2"], quick=True, progress=False) if "layers >= 3" in r.statement]
    assert quick and all(r.verdict != "confirmed" for r in quick)
    assert any(r.qualifiers.reason == "partial" and r.qualifiers.holds == "at layers 3-4" for r in quick)
    full = [r for r in json.loads((ROOT / "docs" / "verdicts.json").read_text())["verdicts"]
            if r["id"] == "C2" and "layers >= 3" in r["statement"]]
    assert any(r["verdict"] == "refuted" and "5-6" in r["qualifiers"]["fails"] for r in full)
    kept = [r for r in json.loads((ROOT / "docs" / "verdicts.json").read_text())["quick_rows"]
            if r["id"] in ("C2", "C6") and ("layers >= 3" in r["statement"] or "3..L" in r["statement"])]
    assert kept and all(r["verdict"] != "confirmed" for r in kept)  # the README's quick counts read these
