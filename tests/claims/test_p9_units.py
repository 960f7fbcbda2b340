"""P9c is decided in two units (attention logits, and per unit of lam): a setting whose verdict flips with the
unit is inconclusive and says so; agreeing units decide, either way (the same rule says no)."""
from __future__ import annotations

import pytest

from lnrecency.claims.parameter_free.p8_p9_printed_numeric import (
    UNITS,
    GapsAtWidth,
    PerLamGaps,
    WeakensEvidence,
    weakens_finding,
)
from lnrecency.inference.stats import ordering_check


def evidence(raw_mean: float, per_lam_mean: float) -> WeakensEvidence:
    k = 4.0
    raw = ordering_check(raw_mean, 0.01, k=k)
    per = ordering_check(per_lam_mean, 0.01, k=k)
    return WeakensEvidence(claim="planted", mc=GapsAtWidth(gap_lam1=0.138, se_lam1=0.001, gap_lam_sqrt_d=0.578,
                                                           se_lam_sqrt_d=0.001, samples=100, check=raw),
                           context_limit_gaps_lam_fixed={}, context_first_order_lam1=0.0,
                           per_lam=PerLamGaps(gap_lam1_per_lam=0.138, gap_lam_sqrt_d_per_lam=0.072, check=per))


@pytest.mark.parametrize("raw,per,verdict,split", [
    (0.3, 0.3, "confirmed", False),      # weaker in both units
    (-0.3, -0.3, "refuted", False),      # stronger in both units: the same rule says no
    (-0.44, 0.066, "inconclusive", True),  # the case: 0.578 vs 0.138 raw, 0.072 vs 0.138 per lam
    (0.001, 0.3, "inconclusive", False),  # one unit unresolved
])
def test_the_verdict_needs_both_units(raw, per, verdict, split):
    ev = evidence(raw, per)
    assert ev.verdict == verdict and ev.split_by_unit == split
    assert set(ev.unit_verdicts) == set(UNITS)
    # issue 75: "weakens" is read two ways, each reading its own statement decided in its unit; the finding of a
    # reading names the other unit's verdict where the two disagree
    for unit in UNITS:
        text = weakens_finding(ev.unit_verdicts[unit], [({"residual": False, "alpha": 0.7, "d": 64}, ev)], unit)
        assert text.startswith({"confirmed": "Holds in", "refuted": "Fails in", "inconclusive": "Not settled in"}[
            ev.unit_verdicts[unit]] + " " + unit)
        if split:
            assert "per unit of lam 0.138 vs 0.072" in text and "attention logits: refuted" in text


def test_old_evidence_without_the_second_unit_keeps_its_verdict():
    ev = evidence(-0.44, 0.066)
    old = WeakensEvidence(claim=ev.claim, mc=ev.mc, context_limit_gaps_lam_fixed={}, context_first_order_lam1=0.0)
    assert old.verdict == "refuted" and list(old.unit_verdicts) == [UNITS[0]]
