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


def test_the_plan_and_every_draw_travel_with_the_result(reached):
    """Issue 78, item 10: the pilots' measurements and the choice are on the result, and its draws count the pilots'
    (one of 2,048 per estimator) besides the samples of the estimate; a run without se= has no plan."""
    assert reached.plan is not None and reached.plan.estimator == reached.control_variate
    assert set(reached.plan.sd) == {"none", "quadratic"} and reached.plan.seconds > 0
    assert reached.draws >= reached.samples + 2 * precision.PILOT_SAMPLES
    plain = simulate_scores(3, 1, 16, 10, seed=0, paired=False)
    assert plain.plan is None and plain.draws == plain.samples == 10


@pytest.mark.parametrize("kw, word", [
    (dict(se=1e-3, se_layers=[]), r"se_layers must be a layer or a non-empty sequence of layers in 1..2; got \[\]"),
    (dict(se=1e-300), "needs about more than 1e\\+30 samples"),  # was an OverflowError after the pilot
    (dict(se=1e-7), r"se=1e-07 needs about .* draws with the estimator control_variate='quadratic'.*above the time "
                    r"limit"),
    (dict(se=1e-3, control_variate="cubic"), "control_variate must be one of"),
])
def test_precision_refusals_name_the_python_arguments(kw, word):
    """Issue 78, items 7-8: each a ValueError naming the argument (not max()'s empty sequence, an OverflowError, a
    KeyError, or a command-line flag in a library call)."""
    with pytest.raises(ValueError, match=word) as exc:
        simulate_scores(5, 2, 64, seed=0, **{"samples": None, **kw}, **SETTING)
    assert "--control-variate" not in str(exc.value) and "samples=10000000000000 " not in str(exc.value)


def test_a_named_linear_control_variate_reaches_the_target():
    """Issue 78, item 7: se= with control_variate='linear' (a KeyError before) runs the linear control variate."""
    r = simulate_scores(5, 2, 64, seed=2, se=0.05, control_variate="linear", paired=False, **SETTING)
    assert r.control_variate == "linear" and set(r.plan.sd) == {"linear"} and _largest_se(r, (1, 2)) <= 0.05


def test_a_long_run_says_its_plan_and_progress_without_a_terminal(monkeypatch, capsys):
    """Issue 78, item 10: above ANNOUNCE_SECONDS (lowered here to 0 so a tiny run counts as long) the default
    progress prints the plan (draws, estimator, estimated time) and progress lines to a stderr that is not a
    terminal; progress=False stays quiet, and so does a short run."""
    from lnrecency.numerics import simulate as sim_module

    simulate_scores(3, 1, 16, 10, seed=0, paired=False)
    assert capsys.readouterr().err == ""  # short: quiet
    monkeypatch.setattr(sim_module, "ANNOUNCE_SECONDS", 0.0)
    monkeypatch.setattr(precision, "ANNOUNCE_SECONDS", 0.0)
    simulate_scores(3, 1, 16, 10, seed=0, paired=False)
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("simulate_scores: 10 draws, estimator control_variate='none', n=3, layers=1, d=16: "
                             "about ") and "s estimated" in err[0]
    assert any(line.startswith("simulate d=16: 10/10 samples") for line in err[1:])
    simulate_scores(4, 1, 16, seed=0, se=0.05, paired=False)
    err = capsys.readouterr().err
    assert "simulate_scores(se=0.05): se <= 0.05 on every entry of layers [1]: pilot of 2048 draws" in err
    assert err.count("simulate_scores: 2048 draws") >= 1  # the pilot announced like any run
    simulate_scores(3, 1, 16, 10, seed=0, paired=False, progress=False)
    assert capsys.readouterr().err == ""
