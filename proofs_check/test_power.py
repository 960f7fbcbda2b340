"""Power: every kind of check used by the claims says NO to a wrong formula or a false ordering.

Mutants of the seed-002 closed form |o_i|^2 = (E^2 + i - 1)/(E + i - 1)^2 (E = e^lam, layer 1, alpha = 0):
  constant  (E^2 + i)/(E + i - 1)^2          dropped term  E^2/(E + i - 1)^2
  exponent  (E^2 + i - 1)/(E + i - 1)^3      swapped sign  (E^2 - i + 1)/(E + i - 1)^2
Kinds of check and the mutant / false claim each must reject:
  exact (sympy recursion)      -> the four mutants                    test_exact_rejects_mutants
  closed form (sympy identity) -> the four mutants vs the derived h2         test_closed_form_rejects_mutants
  proof machinery              -> 'h increasing' claimed               test_proof_rejects_false_monotonicity
  MC mean (k SE + bias bound)  -> the four mutants as predictions      test_mc_mean_rejects_mutants
  MC paired ordering           -> reversed ordering; recency w/o norm  test_mc_ordering_rejects_false_orderings
  MC gap comparison (C5/C3)    -> 'Delta(0.9) > Delta(0)'               test_mc_gap_comparison_rejects_reversed
  per-instance frequency       -> 'P >= 0.9 at d = 64', 'coin flip'   test_frequency_rejects_false_claims
  rate in d                    -> slopes -1/2 and -2                   test_rate_rejects_wrong_exponents
  bias profiler                -> in test_bias.py (test_profiler_refuses_false_labels, MC 'flat')
"""
from __future__ import annotations

import numpy as np
import pytest
import sympy

from lnrecency.claims.mc_checks import adjacent_triples, mc_means, mc_orderings, simulate
from lnrecency.claims.parameter_free import c7_output_norm as output_norm
from lnrecency.inference.stats import BUDGET, EXACT_RATE, clopper_pearson_interval, register
from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf

E = sympy.exp(cf.lam)
I = cf.i
TRUE = output_norm.osq_formula()
MUTANTS = {
    "changed constant": (E ** 2 + I) / (E + I - 1) ** 2,
    "dropped term": E ** 2 / (E + I - 1) ** 2,
    "wrong exponent": (E ** 2 + I - 1) / (E + I - 1) ** 3,
    "swapped sign": (E ** 2 - I + 1) / (E + I - 1) ** 2,
}


def test_true_formula_passes_exact():
    res = output_norm.exact_identity(TRUE, n=5)
    assert all(v.formula and v.sum_of_squares for v in res.values())


@pytest.mark.parametrize("name", list(MUTANTS))
def test_exact_rejects_mutants(name):
    res = output_norm.exact_identity(MUTANTS[name], n=5)
    assert not all(v.formula for v in res.values())


@pytest.mark.parametrize("name", list(MUTANTS))
def test_closed_form_rejects_mutants(name):
    h2 = cf.closed_forms(ModelConfig(norm="layernorm")).h2.subs(cf.alpha, 0).subs(cf.j, cf.i)
    assert sympy.simplify(h2 - TRUE) == 0
    assert sympy.simplify(h2 - MUTANTS[name]) != 0


def test_proof_rejects_false_monotonicity():
    from lnrecency.theory.proofs import prove_decreasing

    h2 = cf.closed_forms(ModelConfig(norm="layernorm")).h2
    assert prove_decreasing(h2, residual=False).proven
    assert not prove_decreasing(-h2, residual=False).proven  # "-h^2 decreasing" = "h increasing": false


N = 6
CFG = ModelConfig(norm="layernorm")


def _predictions(expr):
    f = sympy.lambdify(cf.i, expr.subs(cf.lam, 1))
    return {(q, q): float(f(q)) for q in range(1, N + 1)}


def test_mc_mean_accepts_true_formula():
    res = mc_means("power: true |o_i|^2", CFG, N, 1, [(q, q) for q in range(1, N + 1)], quantity="osq",
                   samples=2000, seed=71, predictions=_predictions(TRUE))
    assert res.passed


@pytest.mark.parametrize("name", list(MUTANTS))
def test_mc_mean_rejects_mutants(name):
    with BUDGET.expecting_rejection():  # expected to fail: its risk is a miss, not a false alarm
        res = mc_means(f"power: mutant {name}", CFG, N, 1, [(q, q) for q in range(1, N + 1)], quantity="osq",
                       samples=2000, seed=72, predictions=_predictions(MUTANTS[name]))
    assert not res.passed


def test_mc_ordering_rejects_false_orderings():
    true = mc_orderings("power: T1 true", CFG, N, 2, adjacent_triples(N), samples=2000, seed=73)
    assert true.verdict == "confirmed"
    none = ModelConfig(norm="none")
    with BUDGET.expecting_rejection():  # claims that are false here: a miss is the risk, not a false alarm
        reversed_ = mc_orderings("power: T1 reversed", CFG, N, 2, [(i, k, j) for i, j, k in adjacent_triples(N)],
                                 samples=2000, seed=73)
        deep = mc_orderings("power: recency w/o norm, layer 3", none, N, 3, adjacent_triples(N)[:-1],
                            samples=2000, seed=74)
    assert reversed_.verdict == "refuted"
    assert deep.verdict == "refuted"
    flat = mc_orderings("power: recency w/o norm, layer 2", none, N, 2, [(N, N - 1, 1)], samples=2000, seed=75)
    assert flat.verdict != "confirmed"


def test_mc_gap_comparison_rejects_reversed():
    from lnrecency.claims.parameter_free.c5_amplification import mc_gap_compare

    assert mc_gap_compare(CFG, 0.1, 0.0, samples=2000, seed=76).verdict == "confirmed"
    assert mc_gap_compare(CFG, 0.9, 0.0, samples=2000, seed=77).verdict == "refuted"


def test_frequency_rejects_false_claims():
    register("power: per-instance frequency", 2, basis="exact")
    sim = simulate(8, 2, 64, 4000, 78, CFG)
    p = sim.prob_greater(2, 8, 7, 6)
    lo, hi = clopper_pearson_interval(p.count, p.samples, rate=EXACT_RATE)
    assert hi < 0.9   # "the ordering holds in >= 90% of draws at d = 64" is rejected: the whole interval is below
    assert lo > 0.5   # "a single draw is a coin flip" is rejected too: the whole interval is above


@pytest.mark.parametrize("factor", [0.0, 0.5, 2.0])
def test_rate_decision_rejects_a_wrong_first_order_term(monkeypatch, factor):
    """C9's rate decision (E_d S - S_lim = c/d within k SE + R/d^2, R re-measured with the planted c)
    says no to a planted 1/d coefficient: none at all (c = 0), halved, doubled."""
    import lnrecency.claims.parameter_free.c9_finite_width as finite_width
    from lnrecency.claims.parameter_free.c9_finite_width import rate_item

    real_checks = finite_width.theory_mean_checks

    def planted_checks(name, refs, sim, fw, layer, entries, **kw):
        c = {(i, j): factor * float(fw.c[layer - 1, i - 1, j - 1]) for i, j in entries}
        return real_checks(name, refs, sim, fw, layer, entries, c=c, **kw)

    monkeypatch.setattr(finite_width, "theory_mean_checks", planted_checks)  # the name rate_item calls
    assert rate_item(CFG, 6, 2, 10000, 79)[1] == "refuted"


def test_rate_decision_confirms_the_true_term():
    from lnrecency.claims.parameter_free.c9_finite_width import rate_item

    assert rate_item(CFG, 6, 2, 10000, 79)[1] == "confirmed"


def test_rate_exponent_test_rejects_a_wrong_rate():
    """C9's c-free exponent test on planted biases: c/d + e/d^2 with |e| <= R passes; C/sqrt(d) (the wrong rate)
    and C/d^2 with a large C are rejected with the same allowance."""
    from lnrecency.claims.parameter_free.c9_finite_width import scaled_bias_test

    ds = (16, 32, 64, 128, 256)
    d = np.array(ds, dtype=float)[:, None, None]
    entries = [(2, 1), (3, 1), (3, 2)]
    c = np.zeros((1, 3, 3))
    c[0, 1, 0], c[0, 2, 0], c[0, 2, 1] = -0.5, -0.7, -0.9
    se = np.full((5, 3, 3), 1e-5)
    R = 10.0
    right = c / d + (0.9 * R * np.cos(d)) / d ** 2  # any e(d) within +-R
    assert scaled_bias_test(right, se, ds, R, entries, name="power: exponent, right rate").passed
    assert not scaled_bias_test(c / np.sqrt(d), se, ds, R, entries, name="power: exponent, 1/sqrt(d)").passed
    assert not scaled_bias_test(40 * c / d ** 2, se, ds, R, entries, name="power: exponent, 1/d^2").passed


def test_smallest_d_verdict_rejects_a_wrong_d_star():
    from lnrecency.claims.parameter_free.c9_finite_width import WidthOrdering, decide_smallest_d

    def per(zs):
        return tuple(WidthOrdering(d=d, mean=z * 1e-3, stderr=1e-3, z=z, holds=z > 4.75, prob_greater=0.5)
                     for d, z in zip((2, 4, 8, 16, 32), zs))

    k = 4.75
    ok = per([0.3, 2.0, 6.0, 9.0, 12.0])
    assert decide_smallest_d(ok, 8, k) == "confirmed"
    assert decide_smallest_d(ok, 16, k) == "refuted"        # it already holds at 8: 16 is not the smallest
    assert decide_smallest_d(ok, 4, k) == "inconclusive"    # not confirmed at 4: not supported
    assert decide_smallest_d(per([0.3, 2.0, 6.0, -9.0, 12.0]), 8, k) == "refuted"  # reversed above d*
    assert decide_smallest_d(per([-9.0, 2.0, 6.0, 9.0, 12.0]), 8, k) == "confirmed"  # reversed below d* only


@pytest.mark.parametrize("factor", [0.0, 2.0])
def test_authors_width_checks_reject_a_wrong_first_order_term(factor):
    """The claims' support at the authors' widths (mc_means: d = 16, 64, 256, R from d = 16 and 32) says no
    to a planted 1/d coefficient (none, doubled; halved is rejected too, seed 80, not run here), while the d = 10^12
    implementation-consistency
    check cannot see c at all and passes: why it is not counted as support at any width."""
    from lnrecency.claims.mc_checks import theory

    cfg = ModelConfig(norm="layernorm", lam=1.0)
    fw = theory(cfg, 8, 2)
    entries = [(8, j) for j in range(1, 9)]
    c = {(i, j): factor * float(fw.c[1, i - 1, j - 1]) for i, j in entries}
    res = mc_means(f"power: c x {factor}", cfg, 8, 2, entries, samples=4000, seed=80, c=c)
    assert res.implementation_consistency.passed and not res.authors_widths.passed
    true = mc_means("power: true c", cfg, 8, 2, entries, samples=4000, seed=80)
    assert true.passed
