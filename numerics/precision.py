"""Precision as the interface of the Monte Carlo (issue 70): ``simulate_scores(..., se=1e-4)`` runs until every
requested score entry's standard error is at most ``se``.

How: a pilot of :data:`PILOT_SAMPLES` draws (its own seed, derived from the run's) measures each entry's standard
deviation under each applicable estimator (plain draws; the quadratic control variate where
:func:`lnrecency.theory.width_jets.check_supported` admits the model); the samples each would need are
``(SD_upper / se)^2``, SD_upper the pilot SD's one-sided 99% upper bound (chi-square, n - 1 degrees of freedom), and
the estimator chosen is the one with the fewest samples times its cost per sample (:data:`ESTIMATOR_COST`, a fixed,
measured ratio: the choice never depends on this machine's speed, so the same seed gives the same bytes). The run then
draws that many on the caller's seed; if its largest SE still misses the target (the upper bound failed, about 1% of
requests), it is drawn again with the samples scaled by (achieved / target)^2, at most :data:`MAX_ROUNDS` times.

Bias: both estimators are unbiased (the control variate subtracts a polynomial whose exact mean is added back,
:mod:`lnrecency.numerics.simulate`); the control variate changes the variance only.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

__all__ = ["PrecisionPlan", "plan_samples", "simulate_to_se", "by_precision", "PILOT_SAMPLES", "MIN_SAMPLES",
           "ESTIMATOR_COST", "MAX_ROUNDS", "UPPER_QUANTILE"]

#: draws of the pilot that sizes the run
PILOT_SAMPLES = 2048
#: the fewest draws a run takes, however small the SD: as many as the pilot, so that the run's own SE (and with it
#: the check that the target is met) is estimated at least as well as the pilot's
MIN_SAMPLES = PILOT_SAMPLES
#: cost per sample of each estimator relative to plain draws, rounded up from the largest ratio measured: the
#: authors' setting (n 50, d 64, l2, residual, normalised tokens, paired=False) on this project's 2-core machine,
#: 2026-11-28: 84 against 358 us a sample at 2 layers (4.3-4.7x), 124 against 716 us at 4 layers (5.8x)
ESTIMATOR_COST = {"none": 1.0, "quadratic": 6.0}
#: the cost per sample assumed for an estimator not measured above (the linear control variate: its jets are those of
#: the quadratic one, to first order; the quadratic's cost bounds it): only its time is estimated with it, it is
#: never chosen by cost (it runs only when named)
UNMEASURED_COST = ESTIMATOR_COST["quadratic"]
#: a target that needs more samples than this is reported as needing "more than" it (no float overflow)
NEEDED_CAP = 10 ** 30

CONTROL_VARIATES = ("none", "linear", "quadratic")


def _check_control_variate(value: Any) -> str:
    from lnrecency.runtime.arguments import check_choice

    if value is None or value is True or value is False:
        return "quadratic" if value else "none"
    return check_choice("control_variate", value, CONTROL_VARIATES)


MAX_SECONDS = 86400.0
#: a run (or a pilot) estimated above this many seconds prints its plan and progress lines by default
#: (progress=None), whether or not stderr is a terminal; progress=False keeps it quiet
ANNOUNCE_SECONDS = 60.0
#: seconds per sample and layer = RATE_FIXED + RATE_CUBIC n^3, fitted on this project's 2-core machine (gram
#: sampler, n = 8..64; benchmarks/bench_estimates.py, data in benchmarks/estimates.json); the estimate is the fit
#: times LOAD_MARGIN (the paired RP accumulators add up to 2x at n = 64; a loaded machine 2-4x)
RATE_FIXED = 2.8e-6
RATE_CUBIC = 4.8e-10
LOAD_MARGIN = 1.5


def estimate_seconds(n: int, layers: int, samples: int) -> float:
    """The time of a simulation on this project's machine, estimated before any work (LOAD_MARGIN x the fit)."""
    return LOAD_MARGIN * samples * layers * (RATE_FIXED + RATE_CUBIC * n ** 3)
#: the pilot SD's upper bound is taken at this one-sided level
UPPER_QUANTILE = 0.99
#: draws of the run at most this many times when the bound fails
MAX_ROUNDS = 3
#: a seed component that sets the pilot's stream apart from the run's
_PILOT_TAG = 0x5E


@dataclass(frozen=True)
class PrecisionPlan:
    """What the pilot measured and chose: per estimator the largest SD over the requested entries and the samples
    it needs; the estimator chosen and its samples; ``seconds``: the run's estimated time on this project's machine
    (:func:`lnrecency.numerics.simulate.estimate_seconds` times the estimator's cost a sample). It travels with the
    result of ``simulate_scores(..., se=)`` (``ScoreSimulation.plan``)."""

    target_se: float
    layers: tuple[int, ...]
    pilot_samples: int  # draws of each estimator's pilot
    sd: dict  # estimator -> the largest pilot SD over the requested entries
    needed: dict  # estimator -> samples for the target (from the SD's upper bound)
    estimator: str
    samples: int
    seconds: float = 0.0

    def describe(self) -> str:
        parts = ", ".join(f"{cv}: SD {self.sd[cv]:.3g}, {self.needed[cv]:.4g} samples" for cv in self.sd)
        return (f"se <= {self.target_se:g} on every entry of layers {list(self.layers)}: pilot of "
                f"{self.pilot_samples} draws per estimator ({parts}); chosen {self.estimator} ({self.samples:.4g} "
                f"samples, about {self.seconds:.3g} s estimated)")


def cost(estimator: str) -> float:
    """Cost per sample of ``estimator`` relative to plain draws (:data:`ESTIMATOR_COST`, else
    :data:`UNMEASURED_COST`)."""
    return ESTIMATOR_COST.get(estimator, UNMEASURED_COST)


def _seed_tuple(seed: Any) -> tuple[int, ...]:
    return (int(seed),) if isinstance(seed, (int, np.integer)) else tuple(int(s) for s in seed)


def _largest(sim, layers: tuple[int, ...], what: str) -> float:
    values = sim.stderr if what == "se" else sim.stderr * math.sqrt(sim.samples)
    low = np.tril(np.ones((sim.n, sim.n), dtype=bool))
    return float(max(np.max(values[layer - 1][low]) for layer in layers))


def _needed(sd: float, se: float, pilot: int) -> int:
    from scipy.stats import chi2

    upper = sd * math.sqrt((pilot - 1) / chi2.ppf(1.0 - UPPER_QUANTILE, pilot - 1))
    ratio = upper / se
    if not math.isfinite(ratio) or ratio * ratio >= NEEDED_CAP:  # e.g. se=1e-300: no float overflow, a refusal
        return NEEDED_CAP
    return max(MIN_SAMPLES, math.ceil(ratio * ratio))


def _estimators(config, control_variate: Any) -> list[str]:
    from lnrecency.theory.width_jets import check_supported

    if control_variate not in (None, "auto"):
        return [control_variate]
    try:
        check_supported(config, control_variate=True)
    except ValueError:
        return ["none"]
    return ["none", "quadratic"]


def _wanted_layers(se_layers: Any, layers: int) -> tuple[int, ...]:
    """The layers whose entries must reach the target: all by default, else a layer or a non-empty sequence of them,
    each in 1..layers (ValueError naming se_layers)."""
    from lnrecency.runtime.arguments import check_int

    if se_layers is None:
        return tuple(range(1, layers + 1))
    if isinstance(se_layers, (int, np.integer)) and not isinstance(se_layers, bool):
        se_layers = (se_layers,)
    if not isinstance(se_layers, (tuple, list, range)) or len(se_layers) == 0:
        raise ValueError(f"se_layers must be a layer or a non-empty sequence of layers in 1..{layers}; got "
                         f"{se_layers!r:.80}")
    return tuple(check_int("se_layers", q, minimum=1, maximum=layers) for q in se_layers)


def _announce(progress: Any, seconds: float) -> bool:
    """Whether a step estimated at ``seconds`` says its plan: above :data:`ANNOUNCE_SECONDS`
    unless progress=False, terminal or not."""
    return progress is not False and seconds > ANNOUNCE_SECONDS


def plan_samples(run: Callable, n: int, layers: int, d: int, *, se: float, seed: Any, se_layers: Any = None,
                 control_variate: Any = "auto", **kwargs: Any) -> PrecisionPlan:
    """The pilot and the choice of :func:`simulate_to_se` (module docstring), without the run; ``run`` is
    :func:`lnrecency.numerics.simulate.simulate_scores` (passed in: this module sits below it)."""
    from lnrecency.model.config import make_config
    from lnrecency.runtime.arguments import check_int, check_real

    se = float(check_real("se", se, low=0.0, low_open=True))
    layers = check_int("layers", layers, minimum=1)
    wanted = _wanted_layers(se_layers, layers)
    config = make_config(kwargs.pop("config", None), **{k: kwargs.pop(k) for k in list(kwargs)
                                                         if k in ("norm", "residual", "gamma", "lam", "alpha",
                                                                  "embedding")})
    pilot_seed = (*_seed_tuple(seed), _PILOT_TAG)
    progress = kwargs.get("progress")
    kwargs = {k: v for k, v in kwargs.items() if k not in ("paired", "progress")}  # the pilot's own
    sd, needed = {}, {}
    for cv in _estimators(config, control_variate):
        # a pilot above a minute says so and reports progress like any run (simulate_scores' progress=None)
        pilot = run(n, layers, d, PILOT_SAMPLES, seed=pilot_seed, config=config, control_variate=cv,
                    paired=False, progress=None if progress is not False else False, **kwargs)
        sd[cv] = _largest(pilot, wanted, "sd")
        needed[cv] = _needed(sd[cv], se, PILOT_SAMPLES)
    # the estimators measured are chosen by cost; one named by the caller (linear, say) is the only candidate
    best = min(needed, key=lambda cv: (needed[cv] * cost(cv), cv != "none"))
    seconds = estimate_seconds(n, layers, min(needed[best], NEEDED_CAP)) * cost(best)
    return PrecisionPlan(se, wanted, PILOT_SAMPLES, sd, needed, best, needed[best], seconds)


def by_precision(run: Callable, bound: int, n: int, layers: int, d: int, samples: int | None, *, se: Any,
                 se_layers: Any, control_variate: Any, **kwargs: Any):
    """simulate_scores's entry when ``se`` is given (or ``samples`` is not): the checks, then :func:`simulate_to_se`
    with ``samples`` as the cap (default ``bound``) and the estimator chosen unless ``control_variate`` names one."""
    if se is None:
        raise ValueError("se_layers goes with se (the entries whose SE must reach it)" if se_layers is not None
                         else "simulate_scores needs samples, or se (a target standard error) to choose them")
    cv = "auto" if control_variate is None else {True: "quadratic", False: "none"}.get(control_variate,
                                                                                       control_variate)
    if cv != "auto":
        cv = _check_control_variate(cv)
    return simulate_to_se(run, n, layers, d, se=se, max_samples=samples, bound=bound, se_layers=se_layers,
                          control_variate=cv, **kwargs)


def simulate_to_se(run: Callable, n: int, layers: int, d: int, *, se: float, seed: Any,
                   max_samples: int | None = None, bound: int = 10**13, se_layers: Any = None,
                   control_variate: Any = "auto", **kwargs: Any):
    """``run`` (:func:`lnrecency.numerics.simulate.simulate_scores`) until every entry (j <= i) of ``se_layers``
    (default all) has SE <= ``se``: the estimator and the samples from a pilot (module docstring); ``max_samples``
    (default ``bound``, the simulation's own) refuses a target that would need more, before the run. The result's
    ``samples`` and ``control_variate`` say what was used."""
    from lnrecency.runtime.arguments import check_int

    cap = bound if max_samples is None else check_int("samples", max_samples, minimum=2, maximum=bound)
    config = kwargs.pop("config", None)
    from lnrecency.model.config import make_config

    config = make_config(config, **{k: kwargs.pop(k) for k in list(kwargs)
                                    if k in ("norm", "residual", "gamma", "lam", "alpha", "embedding")})
    import dataclasses
    import sys

    from lnrecency.runtime.timelimit import ENV, time_limit

    plan = plan_samples(run, n, layers, d, se=se, seed=seed, se_layers=se_layers, control_variate=control_variate,
                        config=config, **kwargs)
    progress = kwargs.get("progress")
    spent = plan.pilot_samples * len(plan.sd)  # the pilots' draws, counted in the result's draws
    samples = plan.samples
    for _ in range(MAX_ROUNDS):
        more = "more than " if samples >= NEEDED_CAP else ""
        if samples > cap:
            raise ValueError(f"se={plan.target_se:g} needs about {more}{samples:.3g} samples ({plan.describe()}), "
                             f"above samples={cap}; raise samples, or ask for a larger se")
        seconds = estimate_seconds(n, layers, samples) * cost(plan.estimator)
        limit = time_limit(MAX_SECONDS)
        if seconds > limit:
            raise ValueError(f"se={plan.target_se:g} needs about {samples:.3g} draws with the estimator "
                             f"control_variate={plan.estimator!r} ({plan.describe()}): about {seconds:.3g} s here, "
                             f"above the time limit {limit:g} s; ask for a larger se, or raise the limit "
                             f"({ENV}; --max-seconds on the command line)")
        if _announce(progress, seconds):
            print(f"simulate_scores(se={plan.target_se:g}): {plan.describe()}", file=sys.stderr, flush=True)
        sim = run(n, layers, d, samples, seed=seed, config=config, control_variate=plan.estimator, **kwargs)
        spent += sim.samples
        achieved = _largest(sim, plan.layers, "se")
        if achieved <= plan.target_se:
            return dataclasses.replace(sim, plan=dataclasses.replace(plan, seconds=seconds), draws=spent)
        samples = math.ceil(samples * (achieved / plan.target_se) ** 2 * 1.02)
    raise ValueError(f"se={plan.target_se:g} was not reached in {MAX_ROUNDS} rounds (last SE {achieved:.3g} with "
                     f"{sim.samples} samples)")
