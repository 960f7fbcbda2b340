"""Precision as the interface (issue 70): simulate_scores(..., se=) reaches the target on every requested entry with
the estimator a pilot chooses, the same bytes for the same seed, a refusal naming samples when the target needs more
than allowed, and a second round when the pilot's bound falls short (the safeguard is tested by planting a plan that
asks for too few)."""
from __future__ import annotations

import numpy as np
import pytest

from lnrecency.numerics import precision, simulate_scores

LOW = np.tril(np.ones((5, 5), dtype=bool))
SETTING = dict(norm="layernorm", embedding="gaussian")


def _largest_se(r, layers=(1, 2)):
    return max(float(r.stderr[q - 1][LOW].max()) for q in layers)


@pytest.fixture(scope="module")
def reached():
    return simulate_scores(5, 2, 64, seed=3, se=1e-3, **SETTING)


def test_the_target_is_reached_on_every_entry_with_the_cheaper_estimator(reached):
    assert _largest_se(reached) <= 1e-3
    plan = precision.plan_samples(simulate_scores, 5, 2, 64, se=1e-3, seed=3, **SETTING)
    # plain draws need about 21,000 samples, the control variate its floor of 2,048 at 6x the cost a sample
    assert plan.estimator == reached.control_variate == "quadratic"
    assert plan.needed["none"] * precision.ESTIMATOR_COST["none"] > plan.needed["quadratic"] * precision.ESTIMATOR_COST[
        "quadratic"]
    assert plan.needed["quadratic"] < plan.needed["none"] and reached.samples == plan.samples
    assert reached.samples >= precision.MIN_SAMPLES


def test_the_same_seed_gives_the_same_bytes(reached):
    again = simulate_scores(5, 2, 64, seed=3, se=1e-3, **SETTING)
    assert again.samples == reached.samples and np.array_equal(again.mean, reached.mean, equal_nan=True)


def test_without_a_control_variate_the_plain_draws_reach_it():
    r = simulate_scores(5, 2, 64, seed=1, se=4e-3, norm="layernorm", embedding="normalized", paired=False)
    assert r.control_variate == "none" and _largest_se(r) <= 4e-3  # the control variate does not apply here
    only2 = simulate_scores(5, 2, 64, seed=1, se=4e-3, se_layers=2, norm="layernorm", embedding="normalized",
                            paired=False)
    assert _largest_se(only2, (2,)) <= 4e-3 and only2.samples <= r.samples


def test_a_plan_that_asks_for_too_few_is_drawn_again(monkeypatch):
    real = precision._needed
    monkeypatch.setattr(precision, "_needed", lambda sd, se, pilot: max(2, real(sd, se, pilot) // 8))
    monkeypatch.setattr(precision, "MIN_SAMPLES", 2)
    r = simulate_scores(5, 2, 64, seed=5, se=4e-3, control_variate="none", paired=False, **SETTING)
    assert _largest_se(r) <= 4e-3 and r.samples > precision.plan_samples(simulate_scores, 5, 2, 64, se=4e-3, seed=5,
                                                                         control_variate="none", **SETTING).samples


@pytest.mark.parametrize("kw, word", [(dict(se=1e-7, samples=5000), "above samples=5000"),
                                      (dict(se=0.0), "se must be in"), (dict(se="1e-3"), "se must be a real"),
                                      (dict(se=1e-3, se_layers=3), "se_layers must be an integer in"),
                                      (dict(samples=None), "needs samples, or se"),
                                      (dict(samples=100, se_layers=1), "se_layers goes with se")])
def test_refusals_name_what_is_wrong(kw, word):
    kw = {"samples": None, **kw}
    with pytest.raises(ValueError, match=word):
        simulate_scores(5, 2, 64, seed=0, **kw, **SETTING)


def test_the_control_variate_is_not_chosen_where_it_costs_more():
    """A loose target: plain draws need no more than the floor, so the control variate (6x a sample) is not chosen,
    though it applies."""
    plan = precision.plan_samples(simulate_scores, 5, 2, 64, se=5e-3, seed=3, **SETTING)
    assert set(plan.needed) == {"none", "quadratic"} and plan.estimator == "none"
    assert plan.needed["none"] == precision.MIN_SAMPLES
