"""The trained-model decision rules (lnrecency.inference.stats: SeedTest, holm, decide_family;
lnrecency.claims.trained_rules):
each kind of false claim is rejected by the same machinery that confirms true ones.

* directional: a statistic significantly on the wrong side refutes, one straddling the boundary decides
  nothing; a NaN decides nothing;
* equivalence: confirmed only inside the margin by two one-sided tests; an interval that merely contains the
  boundary is not confirmation; shown outside the margin refutes;
* Holm's procedure: against a brute-force step-down written here, and its family-wise rate measured on an
  exact null (no effect) by simulation, with a binomial bound;
* the universal rule, the learning gate, the stability rule and the quick label.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binomtest

from lnrecency.claims.trained_rules import (
    NOT_LEARNED,
    QUICK,
    UNSTABLE,
    Part,
    decide_parts,
    experiment_alpha,
    part_verdict,
    row_verdict,
)
from lnrecency.inference.stats import EXACT_RATE, TRAINED_FWER, SeedTest, decide_family, holm, register


def _one(test: SeedTest, alpha: float = 0.05) -> str:
    return decide_family([test], alpha)[0].verdict


def test_directional_confirms_only_in_its_direction():
    assert _one(SeedTest((0.30, 0.40, 0.35, 0.33, 0.37))) == "confirmed"
    assert _one(SeedTest((0.30, 0.40, 0.35, 0.33, 0.37), side="below")) == "refuted"  # planted false claim
    assert _one(SeedTest((-0.3, 0.4, 0.05))) == "inconclusive"  # straddles: decides nothing
    assert _one(SeedTest((0.21, 0.20, 0.22, 0.21), boundary=0.3)) == "refuted"  # below the stated boundary
    assert _one(SeedTest((0.1, math.nan, 0.2))) == "inconclusive"  # NaN decides nothing
    assert math.isnan(SeedTest((0.1, math.nan, 0.2)).p_pair)


def test_welch_difference_and_its_direction():
    a, b = (0.50, 0.52, 0.49, 0.51), (0.10, 0.12, 0.11, 0.09)
    assert _one(SeedTest(a, other=b)) == "confirmed"
    assert _one(SeedTest(b, other=a)) == "refuted"
    t = SeedTest(a, other=b)
    va, vb = np.var(a, ddof=1) / 4, np.var(b, ddof=1) / 4  # Welch-Satterthwaite, written out
    assert t.df == pytest.approx((va + vb) ** 2 / (va ** 2 / 3 + vb ** 2 / 3))
    assert t.se == pytest.approx(math.sqrt(va + vb))


def test_equivalence_needs_the_margin_not_a_wide_interval():
    assert _one(SeedTest((0.01, 0.02, 0.00, 0.015), rule="equivalence", side="within", margin=0.1)) == "confirmed"
    # an interval containing 0 is not equivalence: wide noise decides nothing
    noisy = SeedTest((-0.5, 0.6, 0.1), rule="equivalence", side="within", margin=0.1)
    assert noisy.interval()[0] < 0 < noisy.interval()[1] and _one(noisy) == "inconclusive"
    # shown outside the margin: refuted (a planted false equality)
    assert _one(SeedTest((0.50, 0.60, 0.55, 0.52), rule="equivalence", side="within", margin=0.1)) == "refuted"
    assert _one(SeedTest((0.99, 1.01, 1.0), rule="equivalence", side="within", margin=0.1, boundary=1.0)) == \
        "confirmed"
    assert _one(SeedTest((0.70, 0.71, 0.69), rule="equivalence", side="within", margin=0.1, boundary=1.0)) == \
        "refuted"
    with pytest.raises(ValueError, match="margin"):
        SeedTest((0.1, 0.2), rule="equivalence", side="within")


def test_holm_against_a_brute_force_step_down():
    rng = np.random.default_rng(3)
    for _ in range(200):
        m = int(rng.integers(1, 12))
        p = rng.random(m) ** 3
        got = holm(p, 0.05)
        want = [False] * m
        for rank, i in enumerate(np.argsort(p, kind="stable")):
            if p[i] > 0.05 / (m - rank):
                break
            want[i] = True
        assert got == want
    assert holm([math.nan, 0.001], 0.05) == [False, True]


def test_family_wise_rate_on_an_exact_null():
    """10 true nulls (normal statistics with mean 0, 5 seeds each), decided as a family at 0.05: any
    confirmation or refutation is an error. 400 families; the error frequency must not exceed 0.05 (exact
    binomial test at one-sided rate EXACT_RATE: it fails only if the rate is really higher, or by that chance;
    registered in the suite's budget)."""
    rate = EXACT_RATE
    register("trained rules: Holm family-wise rate on an exact null", 1, rate=rate, sided=1, basis="exact")
    rng = np.random.default_rng(11)
    errors = 0
    families = 400
    for _ in range(families):
        tests = [SeedTest(tuple(rng.normal(size=5))) for _ in range(10)]
        errors += any(d.verdict != "inconclusive" for d in decide_family(tests, 0.05))
    assert binomtest(errors, families, 0.05, alternative="greater").pvalue > rate


def test_power_is_reported_and_shrinks_with_seeds():
    few = SeedTest((0.1, 0.2, 0.15))
    many = SeedTest((0.1, 0.2, 0.15) * 4)
    assert many.detectable(0.001) < few.detectable(0.001)
    assert few.detectable(0.001) > few.detectable(0.05)


def _part(values, **kw):
    return Part("p", "stat", SeedTest(tuple(values)), kw.pop("random", None), learned=kw.pop("learned", 3),
                seeds=3, **kw)


def test_parts_gate_stability_quick_and_the_universal_rule():
    good, bad = _part((0.3, 0.35, 0.4)), _part((-0.3, -0.35, -0.4))
    unlearned = _part((0.3, 0.35, 0.4), learned=2, gate="loss <= 3.1")
    flip = _part((0.3, 0.35, 0.4), random=SeedTest((-0.3, -0.35, -0.4)))
    parts = [good, bad, unlearned, flip]
    decide_parts(parts, 0.05, quick=False)
    assert part_verdict(good) == "confirmed" and part_verdict(bad) == "refuted"
    assert unlearned.status.startswith(NOT_LEARNED) and part_verdict(unlearned) == "inconclusive"
    assert flip.status == UNSTABLE and part_verdict(flip) == "inconclusive"
    assert row_verdict([good, good]) == "confirmed"
    assert row_verdict([good, unlearned]) == "inconclusive"  # every part, not most
    assert row_verdict([good, bad]) == "refuted"
    q = _part((0.3, 0.35, 0.4))
    decide_parts([q], 0.05, quick=True)
    assert q.status == QUICK and part_verdict(q) == "inconclusive"
    s = _part((0.3, 0.35, 0.4), labels=("reproduced", "the opposite shown"))
    decide_parts([s], 0.05, quick=False)
    assert part_verdict(s) == "reproduced"


def test_the_experiments_share_one_family_wise_rate():
    shares = [experiment_alpha(e, False) for e in ("thesis", "seed002", "seed003")]
    assert sum(shares) == pytest.approx(TRAINED_FWER) and all(s > 0 for s in shares)
