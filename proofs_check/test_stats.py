"""lnrecency.inference.stats: quantiles, the budget registry, and the three check kinds (incl. their 'no')."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm
from scipy.stats import t as t_dist

from lnrecency.inference.stats import (
    EXACT_RATE,
    PER_COMPARISON,
    SUITE_LIMITS,
    Budget,
    bernstein_halfwidth,
    clopper_pearson_interval,
    edgeworth_tail_ratio,
    edgeworth_two_sided_ratio,
    family_k,
    k_for,
    mean_check,
    ordering_check,
    wilson_interval,
)


def test_k_matches_normal_tails():
    assert math.isclose(2 * norm.sf(k_for(1e-9, sided=2)), 1e-9, rel_tol=1e-9)
    assert math.isclose(norm.sf(k_for(1e-9, sided=1)), 1e-9, rel_tol=1e-9)
    assert k_for(0.05, sided=2) == pytest.approx(1.959964, abs=1e-6)


def test_budget_union_bound_and_replacement():
    b = Budget()
    k = b.register("a", 10, rate=1e-9, sided=1)
    b.register("b", 5, rate=2e-9)
    b.register("a", 10, rate=1e-9, sided=1)  # same check again: not counted twice
    b.register("c", 3, basis="exact")
    assert b.comparisons() == 18 and math.isclose(b.total(), 2e-8 + 3 * EXACT_RATE)
    assert b.comparisons("normal") == 15 and math.isclose(b.total("exact"), 3 * EXACT_RATE)
    assert math.isclose(norm.sf(k), 1e-9, rel_tol=1e-9)
    assert b.over_limit() == []
    b.register("many", 2001)  # 2001 normal comparisons at 1e-6 exceed the normal part's 2e-3
    assert b.over_limit() == ["normal"]
    assert PER_COMPARISON * 999 < SUITE_LIMITS["normal"] and EXACT_RATE * 999 < SUITE_LIMITS["exact"]


def test_a_family_is_one_decision_at_its_rate():
    """register(family=True): m entries at rate / m each (Bonferroni), the family adds rate to the total."""
    b = Budget()
    k = b.register("fam", 84, family=True)
    assert math.isclose(b.total(), PER_COMPARISON) and b.comparisons() == 84 and b.decisions() == 1
    assert math.isclose(2 * norm.sf(k), PER_COMPARISON / 84, rel_tol=1e-9) and k == family_k(84)
    other = Budget()
    other.merge(b.snapshot())  # a worker's registrations merged into the parent: still one decision
    assert other.decisions() == 1 and other.snapshot() == b.snapshot()
    b.register("fam", 84)  # the same name, per comparison: 84 decisions again
    assert b.decisions() == 84 and math.isclose(b.total(), 84 * PER_COMPARISON)
    with pytest.raises(ValueError, match="family"):
        b.register("x", 2, family="yes")


def test_mean_check_accepts_within_and_rejects_outside():
    assert mean_check(1.0 + 5e-3, 1e-3, 1.0, k=6.0).passed
    assert not mean_check(1.0 + 7e-3, 1e-3, 1.0, k=6.0).passed
    # the bias bound widens the window by exactly its size, no more
    assert mean_check(1.0 + 7e-3, 1e-3, 1.0, k=6.0, bias_bound=1e-3).passed
    assert not mean_check(1.0 + 7.1e-3, 1e-3, 1.0, k=6.0, bias_bound=1e-3).passed


def test_ordering_check_three_outcomes():
    assert ordering_check(1.0, 0.1, k=6.0).verdict == "confirmed"
    assert ordering_check(-1.0, 0.1, k=6.0).verdict == "refuted"
    assert ordering_check(0.3, 0.1, k=6.0).verdict == "inconclusive"
    assert ordering_check(0.0, 0.0, k=6.0).verdict == "inconclusive"


def test_wilson_interval_contains_truth_and_excludes_wrong_claims():
    lo, hi = wilson_interval(650, 1000, k=6.0)
    assert lo < 0.65 < hi and hi < 0.9 and lo > 0.4
    assert wilson_interval(1000, 1000, k=6.0)[1] == 1.0


@pytest.mark.parametrize("call, words", [
    (lambda: k_for(0.0), ["rate", "0.0"]),
    (lambda: k_for(1e-3, sided=3), ["sided", "3"]),
    (lambda: mean_check(1, -1, 1, k=6), ["stderr", "-1"]),
    (lambda: mean_check(1, 1, 1, k=0), ["k", "0"]),
    (lambda: ordering_check(1, 1, k=-2), ["k", "-2"]),
    (lambda: wilson_interval(5, 3, k=2), ["count", "5"]),
    (lambda: Budget().register("x", 0), ["comparisons", "0"]),
    (lambda: Budget().register("x", 1, basis="clt"), ["basis", "clt"]),
    (lambda: bernstein_halfwidth(0.1, 1, 1.0), ["samples", "1"]),
    (lambda: bernstein_halfwidth(0.1, 10, -1.0), ["width", "-1"]),
    (lambda: clopper_pearson_interval(5, 3), ["count", "5"]),
])
def test_bad_input_raises_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as e:
        call()
    for w in words:
        assert w in str(e.value)


# -- non-asymptotic checks -------------------------------------------------------------------------

def test_bernstein_halfwidth_formula():
    """Maurer & Pontil (2009) Thm 4, two-sided at rate delta: SE sqrt(2 L) + 7 W L / (3 (n - 1)),
    L = ln(4 / delta); one-sided L = ln(2 / delta). Written out here from the paper, not from the code."""
    se, n, w, delta = 0.01, 5000, 2.0, 1e-9
    big_l = math.log(4 / delta)
    assert bernstein_halfwidth(se, n, w, rate=delta) == pytest.approx(
        se * math.sqrt(2 * big_l) + 7 * w * big_l / (3 * (n - 1)), rel=1e-14)
    big_l = math.log(2 / delta)
    assert bernstein_halfwidth(se, n, w, rate=delta, sided=1) == pytest.approx(
        se * math.sqrt(2 * big_l) + 7 * w * big_l / (3 * (n - 1)), rel=1e-14)


def test_bernstein_holds_where_the_normal_tail_fails():
    """Rare events: Bernoulli(1e-3) draws, n = 1000. In about 37% of runs every draw is 0 (SE = 0) and the
    normal-tail check at any k rejects the true mean; the empirical Bernstein check (range 1) does not.
    Exact: the count is drawn from its binomial law, no random failure."""
    n, p = 1000, 1e-3
    assert (1 - p) ** n > 0.3  # P(all draws 0)
    assert not mean_check(0.0, 0.0, p, k=k_for(PER_COMPARISON)).passed
    assert mean_check(0.0, 0.0, p, k=1.0, width=1.0, samples=n).passed
    # ... and it still says no: 10^5 uniform(0, 1) draws (SE = 0.289 / sqrt(n)) do not have mean 0.51
    n = 10 ** 5
    se = math.sqrt(1 / 12 / n)
    assert not mean_check(0.5, se, 0.51, k=1.0, width=1.0, samples=n).passed
    assert mean_check(0.5, se, 0.5 + 0.5 * bernstein_halfwidth(se, n, 1.0), k=1.0, width=1.0, samples=n).passed
    # one-sided ordering: a gap of 0.01 with the same draws is confirmed, reversed refuted, 1e-3 undecided
    assert ordering_check(0.01, se, k=1.0, width=1.0, samples=n).verdict == "confirmed"
    assert ordering_check(-0.01, se, k=1.0, width=1.0, samples=n).verdict == "refuted"
    assert ordering_check(1e-3, se, k=1.0, width=1.0, samples=n).verdict == "inconclusive"


def test_clopper_pearson_covers_and_rejects():
    lo, hi = clopper_pearson_interval(650, 1000, rate=EXACT_RATE)
    assert lo < 0.65 < hi and 0.55 < lo and hi < 0.75
    assert clopper_pearson_interval(0, 1000)[0] == 0.0 and clopper_pearson_interval(1000, 1000)[1] == 1.0
    # exact coverage >= 1 - rate: the probability of a miss, summed over the binomial law, is <= rate
    from scipy.stats import binom
    n, p, rate = 200, 0.3, 0.01
    miss = sum(binom.pmf(c, n, p) for c in range(n + 1)
               if not (lambda ci: ci[0] <= p <= ci[1])(clopper_pearson_interval(c, n, rate=rate)))
    assert miss <= rate


# -- the normal tail where the suite uses it ---------------------------------------------------------
# The normal part claims rate PER_COMPARISON per comparison. The first Edgeworth term of the studentised
# mean multiplies a one-sided tail at k by at most edgeworth_tail_ratio(skew, n, k). Measured here on the
# draws the suite's one-sided checks test, with the skewness replaced by its upper bound |g| + 5 SE(g)
# (SE(g) = sqrt(6 / m) for m draws): the factor stays below 2 at the smallest sample size of those checks
# (1000 at d = 10^12, test_properties; 2000 at d = 64 / 1024, P9c quick; 10000, C9).
SKEW_DRAWS = 10000
TAIL_FACTOR = 2.0


def _skew_ucb(x):
    from scipy.stats import skew

    return abs(float(skew(x))) + 5 * math.sqrt(6 / len(x))


@pytest.mark.parametrize("params, d, n_check", [
    (dict(norm="layernorm"), 10 ** 12, 1000),
    (dict(norm="layernorm", residual=True, alpha=0.5, lam=2.0), 10 ** 12, 1000),
    (dict(norm="l2", alpha=0.8, lam=0.5), 10 ** 12, 1000),
    (dict(norm="none", alpha=0.5, lam=2.0), 10 ** 12, 1000),
    (dict(norm="layernorm", alpha=0.9), 64, 2000),           # P9c, the most skewed of its settings
    (dict(norm="layernorm", alpha=0.9, lam=8.0), 64, 2000),
    (dict(norm="layernorm", alpha=0.9, residual=True), 64, 2000),
    (dict(norm="layernorm"), 4, 10000),                      # C9 smallest d, d = 4
])
def test_normal_tail_supported_where_the_suite_uses_it(params, d, n_check):
    from lnrecency.numerics import sample_instances

    inst = sample_instances(8, 2, d, SKEW_DRAWS, seed=(11, d), method="gram" if d >= 10 else "direct",
                            **params)
    k = k_for(PER_COMPARISON, sided=1)
    for j, kk in ((7, 1), (7, 6), (2, 1)):
        x = inst.scores[:, 1, 7, j - 1] - inst.scores[:, 1, 7, kk - 1]
        assert edgeworth_tail_ratio(_skew_ucb(x), n_check, k) < TAIL_FACTOR, (params, d, j, kk)


# Two-sided checks are one family-wise decision per check (Budget.register(family=True): Bonferroni over
# its m entries, k = family_k(m), 5.4 for m = 14 up to 5.7 for m = 84). The first Edgeworth term cancels in
# a two-sided tail; the second multiplies it by at most edgeworth_two_sided_ratio(g, e, n, k) (g, e: the
# skewness and excess kurtosis of one draw, replaced by upper bounds |g| + 5 sqrt(6/m), |e| + 5 sqrt(24/m)).
# Measured on the entries of the suite's largest two-sided families at their sample sizes (3 layers, the
# worst entry of each setting): the factor stays below 2 where listed here.
def _kurt_ucb(x):
    from scipy.stats import kurtosis

    return abs(float(kurtosis(x))) + 5 * math.sqrt(24 / len(x))


def _worst_two_sided_factor(params, d, layers, n_check, m, n=7):
    import numpy as np

    from lnrecency.numerics import sample_instances

    inst = sample_instances(n, layers, d, SKEW_DRAWS, seed=(13, d), method="gram", **params)
    k = family_k(m)
    x = inst.scores[:, :, np.tril(np.ones((n, n), bool))].reshape(SKEW_DRAWS, -1)
    x = x[:, x.std(axis=0) > 1e-9]  # the diagonal under a normalisation is exact: no comparison
    return max(edgeworth_two_sided_ratio(_skew_ucb(c), _kurt_ucb(c), n_check, k) for c in x.T)


@pytest.mark.parametrize("params, d, layers, n_check, m", [
    (dict(norm="l2", residual=True, gamma=0.5, alpha=0.3), 16, 3, 3000, 45),   # identity decoder vs MC
    (dict(norm="none", lam=0.5), 64, 3, 3000, 45),                              # identity decoder vs MC
    (dict(norm="layernorm"), 10 ** 6, 3, 20000, 45),                            # mean vs limit at d = 1e6
    (dict(norm="layernorm"), 16, 2, 4000, 14),                                  # claim families at d_ref
    (dict(norm="layernorm", lam=8.0), 16, 3, 4000, 14),
    (dict(norm="layernorm", residual=True), 16, 3, 4000, 14),
])
def test_two_sided_family_tail_supported(params, d, layers, n_check, m):
    assert _worst_two_sided_factor(params, d, layers, n_check, m) < TAIL_FACTOR


@pytest.mark.parametrize("params, factor", [
    (dict(norm="layernorm"), 2.5),              # layer 3: scores piled near lam (skewness 3)
    (dict(norm="layernorm", alpha=0.9), 2.5),   # skewness 4-8, excess kurtosis 50-170 (seed to seed)
])
def test_two_sided_tail_not_supported_at_small_width(params, factor):
    """Where the suite's normal basis is nominal only (docs/checks.md): three LayerNorm layers at d = 16 with
    lam = 1, and alpha = 0.9, at 4000 draws. The same bound says no there, even at 1e-6 per entry (m = 1)."""
    assert _worst_two_sided_factor(params, 16, 3, 4000, 1) > factor


def test_two_sided_ratio_matches_student_t_for_gaussian_draws():
    """Gaussian draws: the studentised mean (variance divisor n) is t_{n-1} scaled by sqrt(n / (n-1)), an
    exact tail; the bound's last term is its 1/n term (g = e = 0)."""
    for n, x in ((1000, 4.0), (3000, 5.5)):
        exact = float(t_dist.sf(x * math.sqrt((n - 1) / n), n - 1) / norm.sf(x))
        assert abs(edgeworth_two_sided_ratio(0.0, 0.0, n, x) - exact) < 0.1 * (exact - 1), (n, x)


def test_two_sided_ratio_against_simulated_exponential_means():
    """Exponential draws (skewness 2, excess kurtosis 6), n = 100, x = 2.5: the simulated two-sided tail
    ratio of the studentised mean (400 000 replicates) agrees with 1 - q2 phi / (n (1 - Phi)) within 5 SE,
    and the formula without the skewness term is rejected by the same test."""
    import numpy as np

    n, x, reps = 100, 2.5, 400_000
    rng = np.random.default_rng(5)
    hits = 0
    for _ in range(reps // 50_000):
        a = rng.exponential(size=(50_000, n))
        z = math.sqrt(n) * (a.mean(1) - 1.0) / a.std(1)
        hits += int((np.abs(z) > x).sum())
    p = hits / reps
    ratio, se = p / (2 * norm.sf(x)), math.sqrt(p * (1 - p) / reps) / (2 * norm.sf(x))
    mills = norm.pdf(x) / norm.sf(x)
    q2 = x * (6 * (x * x - 3) / 12 - 4 * (x ** 4 + 2 * x * x - 3) / 18 - (x * x + 3) / 4)
    assert abs(ratio - (1 - q2 * mills / n)) < 5 * se, (ratio, se)
    no_skew = x * (6 * (x * x - 3) / 12 - (x * x + 3) / 4)
    assert abs(ratio - (1 - no_skew * mills / n)) > 5 * se
    assert edgeworth_two_sided_ratio(2.0, 6.0, n, x) >= ratio - 5 * se  # the bound (terms in |.|)


def test_edgeworth_factor_says_no_for_skewed_draws():
    """The same bound rejects the normal tail for strongly skewed draws (an exponential, skew 2, and a
    Bernoulli(0.01), skew ~9.8) at these sample sizes: the suite could not claim 1e-6 for them."""
    import numpy as np

    rng = np.random.default_rng(3)
    k = k_for(PER_COMPARISON, sided=1)
    assert edgeworth_tail_ratio(_skew_ucb(rng.exponential(size=SKEW_DRAWS)), 1000, k) > TAIL_FACTOR
    assert edgeworth_tail_ratio(_skew_ucb(rng.random(SKEW_DRAWS) < 0.01), 2000, k) > TAIL_FACTOR


def test_expecting_rejection_records_nothing_and_returns_the_same_k():
    """A check a test expects to fail is not a false-alarm risk: inside ``expecting_rejection`` register()
    returns the same k and records nothing; outside, it records as before."""
    from lnrecency.inference.stats import Budget

    b = Budget()
    with b.expecting_rejection():
        k_inside = b.register("planted", 10)
    assert b.entries == {}
    assert b.register("true", 10) == k_inside and b.comparisons() == 10


def test_deterministic_entries_are_checked_but_not_counted():
    """Under LayerNorm the diagonal S_ii = lam has no randomness (SE at float rounding): a mean check still
    checks it, but only the random entries enter the false-alarm union bound."""
    from lnrecency.claims.mc_checks import D_BIG, theory_mean_checks
    from lnrecency.inference.stats import BUDGET, is_deterministic
    from lnrecency.numerics import simulate_scores
    from lnrecency.theory.finite_width import finite_width

    sim = simulate_scores(4, 2, D_BIG, 200, seed=5, method="gram", paired=False, progress=False)
    fw = finite_width(4, 2)
    entries = [(i, j) for i in range(1, 5) for j in range(1, i + 1)]  # 4 diagonal + 6 below
    res = theory_mean_checks("stats test: deterministic entries", None, sim, fw, 2, entries)
    assert len(res.checks) == 10 and all(c.check.passed for c in res.checks)
    det = [c for c in res.checks if is_deterministic(c.check.estimate, c.check.stderr)]
    assert sorted((c.i, c.j) for c in det) == [(q, q) for q in range(1, 5)]
    assert BUDGET.entries["stats test: deterministic entries: MC mean at d=1000000000000"][0] == 6
