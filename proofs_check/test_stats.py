"""lnrecency.stats: quantiles, the budget registry, and the three check kinds (incl. their 'no')."""
from __future__ import annotations

import math

import pytest
from scipy.stats import norm

from lnrecency.stats import (Budget, PER_COMPARISON, SUITE_LIMIT, k_for, mean_check, ordering_check,
                             wilson_interval)


def test_k_matches_normal_tails():
    assert math.isclose(2 * norm.sf(k_for(1e-9, sided=2)), 1e-9, rel_tol=1e-9)
    assert math.isclose(norm.sf(k_for(1e-9, sided=1)), 1e-9, rel_tol=1e-9)
    assert k_for(0.05, sided=2) == pytest.approx(1.959964, abs=1e-6)


def test_budget_union_bound_and_replacement():
    b = Budget()
    k = b.register("a", 10, rate=1e-9, sided=1)
    b.register("b", 5, rate=2e-9)
    b.register("a", 10, rate=1e-9, sided=1)  # same check again: not counted twice
    assert b.comparisons() == 15 and math.isclose(b.total(), 2e-8)
    assert math.isclose(norm.sf(k), 1e-9, rel_tol=1e-9)
    assert PER_COMPARISON * 999 < SUITE_LIMIT


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
])
def test_bad_input_raises_value_error_naming_it(call, words):
    with pytest.raises(ValueError) as e:
        call()
    for w in words:
        assert w in str(e.value)
