"""How the finite-width expectation E_d[S] approaches the d -> infinity limit (docs/model.md, claim C9).

``convergence_in_d`` estimates the bias b_d = E_d[S^(l)_ij] - S^(l)_ij(limit) with its Monte Carlo
standard error for each d (independent streams per d: seed entropy (seed, d)), using the exact limit of
:mod:`theory.limit`. docs/model.md: the bias is O(1/d), so log|b_d| = a_e - p log d + o(1) with p = 1.

``ConvergenceResult.fit_rate`` fits the common slope s = -p by weighted least squares with one intercept
per entry e = (l, i, j): only points whose bias is resolved, |b| > min_z * SE, enter, and only entries
with >= 2 such points of one sign (a sign change means the bias crosses zero and is not a power law).
Weights 1 / Var(log|b|) = (b / SE)^2 (delta method). Slope SE = (sum w (x - xbar_e)^2)^(-1/2),
multiplied by sqrt(chi2 / dof) when that exceeds 1 (Birge ratio: scatter beyond the errors, e.g. the
O(1/d^2) curvature at small d). Known biases of the estimate, stated with it: log|b_hat| is biased by
about -1 / (2 z^2) at z = |b| / SE (<= 0.02 for the default min_z = 5), and an O(1/d) relative
curvature from the next order of the expansion; use ds large enough for the latter to be small.

``smallest_d_for_ordering`` finds the smallest d in ``ds`` at which the paired mean of S_ij - S_ik is
> 0 with one-sided confidence ``confidence`` (z > Phi^{-1}(confidence)); each d is tested at that level,
so over len(ds) widths at which the ordering fails in expectation the chance of a false declaration is at
most len(ds) * (1 - confidence) (Bonferroni). Rows <= i of a causal stack do not depend on later
positions, so the simulation uses n = i and ``layers = layer``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np
from scipy import stats

from lnrecency.inference.stats import Estimate, Proportion
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.numerics.simulate import simulate_scores
from lnrecency.runtime.arguments import check_int, check_real

#: |bias| at or below this is float64 rounding (limit recursion and Chan accumulation of O(1) scores)
ROUNDING_FLOOR = 1e-12

__all__ = ["ConvergenceResult", "RateFit", "convergence_in_d", "OrderingEvidence", "OrderingSearch",
           "smallest_d_for_ordering"]


def _check_ds(ds: Sequence[int], minimum: int) -> tuple[int, ...]:
    if isinstance(ds, (str, bytes)) or not hasattr(ds, "__len__") or len(ds) == 0:
        raise ValueError(f"ds must be a non-empty sequence of integers >= {minimum}; got {ds!r}")
    out = tuple(check_int("ds[]", d, minimum=minimum) for d in ds)
    if len(set(out)) != len(out):
        raise ValueError(f"ds must not repeat a width; got {list(out)}")
    return tuple(sorted(out))


@dataclass(frozen=True)
class RateFit:
    """Common slope of log|E_d S - S_limit| against log d over the resolved entries."""

    slope: float
    stderr: float  # Birge-inflated when chi2/dof > 1
    stderr_raw: float
    chi2: float
    dof: int
    entries: int
    points: int

    def as_estimate(self) -> Estimate:
        return Estimate(self.slope, self.stderr, self.points)


@dataclass(frozen=True)
class ConvergenceResult:
    """Per-d bias E_d[S] - S_limit and its SE: arrays (len(ds), layers, n, n), NaN above the diagonal."""

    ds: tuple[int, ...]
    bias: np.ndarray
    stderr: np.ndarray
    limit: np.ndarray
    samples: int
    config: ModelConfig
    method: str
    runs: tuple = field(default=(), repr=False, compare=False)  # the ScoreSimulation of each d

    def fit_rate(self, layer: int | None = None, *, min_z: float = 5.0,
                 min_bias: float = ROUNDING_FLOOR, entries=None, d_min: int = 1,
                 d_max: int | None = None) -> RateFit:
        """WLS slope of log|bias| vs log d (see module docstring); ``layer`` restricts to one layer,
        ``entries`` (a set of 1-indexed (layer, i, j)) to those entries, ``d_min`` / ``d_max`` to the widths
        d_min <= d <= d_max.

        Points with |bias| <= ``min_bias`` are float64 rounding of the limit and of the accumulation
        (an entry that is exactly linear or quadratic in the input Gram has no remainder at all, and
        its control-variate SE is ~1e-17): they are not a finite-width effect and never enter."""
        check_real("min_z", min_z, low=0.0, low_open=True)
        wide = np.asarray(self.ds) >= check_int("d_min", d_min, minimum=1)
        if d_max is not None:
            wide &= np.asarray(self.ds) <= check_int("d_max", d_max, minimum=d_min)
        bias, se = self.bias, self.stderr
        layers = range(bias.shape[1]) if layer is None else [
            check_int("layer", layer, minimum=1, maximum=bias.shape[1]) - 1]
        n = bias.shape[2]
        x = np.log(np.asarray(self.ds, dtype=float))
        sxx = sxy = 0.0
        groups = []
        for l0 in layers:
            for i0 in range(n):
                for j0 in range(i0 + 1):
                    if j0 == i0 and self.config.normalisation.fixed_length:
                        continue  # S_ii = lam g^2 exactly under a normalisation: no bias to fit
                    if entries is not None and (l0 + 1, i0 + 1, j0 + 1) not in entries:
                        continue
                    b, s = bias[:, l0, i0, j0], se[:, l0, i0, j0]
                    ok = (np.abs(b) > min_z * s) & (s > 0) & (np.abs(b) > min_bias) & wide
                    if ok.sum() < 2 or len(set(np.sign(b[ok]))) != 1:
                        continue
                    xe, ye = x[ok], np.log(np.abs(b[ok]))
                    we = (b[ok] / s[ok]) ** 2
                    xbar, ybar = np.average(xe, weights=we), np.average(ye, weights=we)
                    sxx += float(np.sum(we * (xe - xbar) ** 2))
                    sxy += float(np.sum(we * (xe - xbar) * (ye - ybar)))
                    groups.append((xe - xbar, ye - ybar, we))
        if not groups or sxx == 0.0:
            raise ValueError(f"no entry has a bias resolved beyond min_z={min_z} standard errors at two "
                             f"or more widths; increase samples or lower min_z")
        slope = sxy / sxx
        chi2 = float(sum(np.sum(w * (dy - slope * dx) ** 2) for dx, dy, w in groups))
        points = sum(len(w) for _, _, w in groups)
        dof = points - len(groups) - 1
        raw = 1.0 / math.sqrt(sxx)
        inflate = math.sqrt(chi2 / dof) if dof > 0 and chi2 > dof else 1.0
        return RateFit(slope, raw * inflate, raw, chi2, dof, len(groups), points)


def convergence_in_d(n: int, layers: int, ds: Sequence[int], samples: int, *, seed: int,
                     config: ModelConfig | None = None, method: str = "gram", chunk: int | None = None,
                     progress: bool | None = None, first_order: bool = False,
                     control_variate: bool | str = False, **params: Any) -> ConvergenceResult:
    """Bias E_d[S] - S_limit with SE at each d in ``ds`` (seed entropy (seed, d) per width).

    ``first_order=True``: the remainder E_d[S] - S_limit - c/d instead (c from
    :mod:`lnrecency.theory.finite_width`; its slope in log d is -2); ``control_variate`` is passed to
    the sampler (it uses c through the variate's exact mean, so validate c itself without it).
    """
    from lnrecency.theory.limit import limit_scores  # the limit is only used here and in tests

    cfg = make_config(config, **params)
    n = check_int("n", n, minimum=1)
    layers = check_int("layers", layers, minimum=1)
    ds = _check_ds(ds, cfg.normalisation.removed + 1)
    samples = check_int("samples", samples, minimum=2)
    seed = check_int("seed", seed, minimum=0)
    limit = limit_scores(n, layers, config=cfg)
    c = 0.0
    if first_order:
        from lnrecency.theory.finite_width import finite_width

        c = finite_width(n, layers, config=cfg).c
    bias, se, runs = [], [], []
    for d in ds:
        sim = simulate_scores(n, layers, d, samples, seed=(seed, d), method=method, chunk=chunk,
                              config=cfg, paired=False, progress=progress,
                              control_variate=control_variate)
        bias.append(sim.mean - limit - c / d)
        se.append(sim.stderr)
        runs.append(sim)
    return ConvergenceResult(ds, np.stack(bias), np.stack(se), limit, samples, cfg, method, tuple(runs))


@dataclass(frozen=True)
class OrderingEvidence:
    d: int
    difference: Estimate  # paired mean and SE of S_ij - S_ik
    zscore: float
    holds: bool
    prob_greater: Proportion  # per-instance frequency of S_ij > S_ik


@dataclass(frozen=True)
class OrderingSearch:
    """Smallest d in ``ds`` with E_d[S_ij - S_ik] > 0 at one-sided ``confidence`` (None if none)."""

    layer: int
    i: int
    j: int
    k: int
    confidence: float
    d: int | None
    evidence: tuple[OrderingEvidence, ...]


def smallest_d_for_ordering(layer: int, i: int, j: int, k: int, *, ds: Sequence[int], samples: int,
                            seed: int, confidence: float = 0.99, config: ModelConfig | None = None,
                            method: str = "gram", chunk: int | None = None,
                            progress: bool | None = None, **params: Any) -> OrderingSearch:
    """Smallest d in ds at which S^(layer)_ij > S^(layer)_ik holds in expectation (paired z-test)."""
    cfg = make_config(config, **params)
    layer = check_int("layer", layer, minimum=1)
    i = check_int("i", i, minimum=2)
    j = check_int("j", j, minimum=1, maximum=i)
    k = check_int("k", k, minimum=1, maximum=i)
    if j == k:
        raise ValueError(f"j and k must differ; got j = k = {j}")
    confidence = float(check_real("confidence", confidence, low=0.5, high=1.0, high_open=True))
    ds = _check_ds(ds, cfg.normalisation.removed + 1)
    samples = check_int("samples", samples, minimum=2)
    seed = check_int("seed", seed, minimum=0)
    z_crit = float(stats.norm.ppf(confidence))
    evidence, found = [], None
    for d in ds:
        sim = simulate_scores(i, layer, d, samples, seed=(seed, d), method=method, chunk=chunk,
                              config=cfg, paired=True, progress=progress)
        est = sim.paired_difference(layer, i, j, k)
        z = est.zscore(0.0)
        holds = z > z_crit
        evidence.append(OrderingEvidence(d, est, z, holds, sim.prob_greater(layer, i, j, k)))
        if holds and found is None:
            found = d
    return OrderingSearch(layer, i, j, k, confidence, found, tuple(evidence))
