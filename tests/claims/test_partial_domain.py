"""No verdict beyond what was checked (issue 84, item 2): a universal statement that a run checks on part of its domain
is not confirmed by it; the row says where it held and why it is not decided, and the answer, lists and counts (all
read from the label) follow."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
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


# --- a planted claim, decided by the same engine as the real ones -------------------------------------------------
# A true fact of the limit, made into a universal statement over the layers: without normalisation, with the
# residual (gamma = 1), the diagonal score S_nn of row n = 8 grows with depth. "S_nn stays below the bound at every
# layer 1..6" holds at layers 1-4 (all the quick run computes) and fails at layers 5-6 (the full run): the bound lies
# between layer 4's value and layer 5's (asserted below, so the plant cannot silently stop being one).
_PLANTED = "X7"
_TEXT = "Without normalisation, with the residual, the diagonal score S_88 stays below the bound at every layer 1..6."


def _diagonal(layers: int):
    from lnrecency.theory.limit import limit_scores

    return limit_scores(8, layers, norm="none", residual=True, gamma=1.0)[:, 7, 7]


def _planted_evaluate(*, quick, progress=False):
    """The planted claim's evaluator: layers 1-4 quick, 1-6 full; it names no part (the engine must)."""
    bound = _bound()
    diag = _diagonal(4 if quick else 6)
    verdict = "confirmed" if all(diag < bound) else "refuted"
    q = Qualifiers(fails=f"at layer {int(np.argmax(diag >= bound)) + 1}") if verdict == "refuted" else None
    return [ClaimResult(_PLANTED, "our formulation", _TEXT, Setting.of({"layers": "1..4" if quick else "1..6"}),
                        verdict, _Checked(layers=len(diag)), "S_88 by layer: " + ", ".join(f"{x:.3g}" for x in diag),
                        q)]


def _bound() -> float:
    diag = _diagonal(6)
    return float(0.5 * (diag[:4].max() + diag[4]))  # between layer 4's and layer 5's


def _plant(monkeypatch, quick_part: bool) -> None:
    from lnrecency.claims import catalog, registry
    from lnrecency.claims.declare import Claim

    monkeypatch.setitem(catalog.DECLARED, _PLANTED, catalog.declare(
        _PLANTED, __name__, "planted: a statement that fails beyond the quick run's layers",
        catalog.S("s", "ours", _TEXT, quick_part=quick_part), view=False))
    monkeypatch.setitem(registry.CLAIMS, _PLANTED, Claim(_PLANTED, __name__, "planted", _planted_evaluate))


def test_the_plant_holds_on_the_quick_part_and_fails_beyond_it():
    diag, bound = _diagonal(6), _bound()
    assert diag[:4].max() < bound < diag[4] <= diag[5]


def test_a_planted_statement_failing_beyond_the_quick_domain_is_not_confirmed_by_the_quick_report(monkeypatch):
    """Issue 84, item 2: the planted evaluator says "confirmed" on layers 1-4 and names no part; the engine, reading
    the declaration (quick_part), keeps the quick report from confirming it, and the full run refutes it."""
    from lnrecency.claims.registry import QUICK_PART, evaluate
    from lnrecency.report.headline import counts_line, headline_markdown

    _plant(monkeypatch, quick_part=True)
    quick, = evaluate([_PLANTED], quick=True, progress=False)
    assert quick.verdict == "inconclusive"
    assert (quick.qualifiers.reason, quick.qualifiers.holds) == ("partial", QUICK_PART[0])
    assert quick.finding.startswith(f"Checked {QUICK_PART[0]} only; not checked: {QUICK_PART[1]}")
    full, = evaluate([_PLANTED], quick=False, progress=False)
    assert full.verdict == "refuted" and full.qualifiers.fails == "at layer 5"
    # the quick report: not among what holds, and not counted as confirmed
    page = headline_markdown([quick], {_PLANTED: "verdicts.md"}, quick=True)
    holds = page.split("**What holds, and where**", 1)[1]
    assert _PLANTED not in holds and _PLANTED in page.split("**What holds, and where**", 1)[0]
    assert "0 confirmed" in counts_line([quick], quick=True)


def test_without_the_declaration_the_same_plant_would_be_confirmed(monkeypatch):
    """The control: it is the declaration that stops the quick confirmation (the machinery can say yes)."""
    from lnrecency.claims.registry import evaluate

    _plant(monkeypatch, quick_part=False)
    quick, = evaluate([_PLANTED], quick=True, progress=False)
    assert quick.verdict == "confirmed"


def test_every_statement_a_module_checks_in_part_is_declared_so():
    """The modules that name their quick part (on_part) and the catalogue agree: each such statement is declared
    quick_part (the C2/C3/C4/C5/C6/W1 statements listed in issue 84)."""
    from lnrecency.claims import catalog

    marked = {(c.id, s.key) for c in catalog.CATALOG for s in c.statements if s.quick_part}
    assert marked == {("C2", "earlier"), ("W1", "theorem41"), ("C3", "keeps"), ("C3", "weakens"),
                      ("C4", "recency"), ("C5", "rp_amplifies"), ("C6", "statement")}
