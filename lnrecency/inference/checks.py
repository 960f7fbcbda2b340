"""The two calibrated Monte Carlo checks: a mean against a prediction (two-sided, half-width + bias bound) and an
ordering E X > 0 (one-sided: confirmed, refuted or inconclusive), each a record with its k, SE and margin."""
from __future__ import annotations

import math
from dataclasses import dataclass

from lnrecency.inference.budget import EXACT_RATE, bernstein_halfwidth
from lnrecency.inference.estimates import z_score
from lnrecency.runtime.arguments import check_real


@dataclass(frozen=True)
class MeanCheck:
    """|estimate - prediction| <= k SE + bias_bound."""

    estimate: float
    stderr: float
    prediction: float
    k: float
    bias_bound: float

    @property
    def z(self) -> float:
        return z_score(self.estimate - self.prediction, self.stderr)

    @property
    def tolerance(self) -> float:
        return self.k * self.stderr + self.bias_bound

    @property
    def passed(self) -> bool:
        return abs(self.estimate - self.prediction) <= self.tolerance

    def as_dict(self) -> dict:
        return {"estimate": self.estimate, "stderr": self.stderr, "prediction": self.prediction,
                "z": self.z, "k": self.k, "bias_bound": self.bias_bound,
                "tolerance": self.tolerance, "passed": self.passed}


def mean_check(estimate: float, stderr: float, prediction: float, *, k: float,
               bias_bound: float = 0.0, width: float | None = None, samples: int | None = None,
               rate: float = EXACT_RATE) -> MeanCheck:
    """Two-sided mean check. Normal basis: tolerance k SE + bias_bound. With ``width`` (the draws lie in
    an interval of that width) and ``samples``: the empirical Bernstein half-width at ``rate`` replaces
    k SE (k is then reported as that half-width / SE)."""
    check_real("stderr", stderr, low=0.0)
    check_real("bias_bound", bias_bound, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    if width is not None:
        half = bernstein_halfwidth(stderr, samples, width, rate=rate, sided=2)
        k = half / stderr if stderr > 0 else math.inf
        if not math.isfinite(k):  # SE = 0: the half-width is the range term alone
            return MeanCheck(float(estimate), 0.0, float(prediction), 1.0, float(bias_bound) + half)
    return MeanCheck(float(estimate), float(stderr), float(prediction), float(k), float(bias_bound))


@dataclass(frozen=True)
class OrderingCheck:
    """One-sided test of E X > 0 from a mean difference and its SE (X = S_ij - S_ik per sample):
    confirmed when mean > half-width, refuted when mean < -half-width (half-width = k SE on the normal
    basis, the empirical Bernstein half-width when ``halfwidth`` is set)."""

    mean: float
    stderr: float
    k: float
    halfwidth: float | None = None

    @property
    def z(self) -> float:
        return z_score(self.mean, self.stderr)

    @property
    def threshold(self) -> float:
        return self.k * self.stderr if self.halfwidth is None else self.halfwidth

    @property
    def verdict(self) -> str:
        """'confirmed', 'refuted' or 'inconclusive'."""
        if self.halfwidth is None:  # z rule (SE = 0 gives z = +-inf or 0)
            return "confirmed" if self.z > self.k else "refuted" if self.z < -self.k else "inconclusive"
        if self.mean > self.halfwidth:
            return "confirmed"
        if self.mean < -self.halfwidth:
            return "refuted"
        return "inconclusive"

    def as_dict(self) -> dict:
        out = {"mean": self.mean, "stderr": self.stderr, "z": self.z, "k": self.k, "verdict": self.verdict}
        if self.halfwidth is not None:
            out["bernstein_halfwidth"] = self.halfwidth
        return out


def ordering_check(mean: float, stderr: float, *, k: float, width: float | None = None,
                   samples: int | None = None, rate: float = EXACT_RATE) -> OrderingCheck:
    """One-sided ordering test. Normal basis: threshold k SE. With ``width`` and ``samples`` the
    one-sided empirical Bernstein half-width at ``rate`` is the threshold (reported as k = half / SE)."""
    check_real("stderr", stderr, low=0.0)
    check_real("k", k, low=0.0, low_open=True)
    if width is not None:
        half = bernstein_halfwidth(stderr, samples, width, rate=rate, sided=1)
        return OrderingCheck(float(mean), float(stderr), half / stderr if stderr > 0 else math.inf, half)
    return OrderingCheck(float(mean), float(stderr), float(k))


def remainder_bound(pairs, k: float) -> float:
    """R >= sup_{d >= d_ref} d^2 |E_d X - X_lim - c/d| over entries, from Monte Carlo at d_ref and 2 d_ref: per entry
    ``pairs`` holds [(d_ref, estimate, SE, limit, c), (2 d_ref, ...)]. With y(d) = d^2 r(d) = e2 + e3/d + O(1/d^2), y
    is monotone between y(d_ref) and e2 = 2 y(2 d_ref) - y(d_ref), so sup |y| <= |y1| + 2 |y2|; each |y| is replaced by
    its upper confidence bound d^2 (|estimate - limit - c/d| + k SE). The largest over the entries (0 for none)."""
    worst = 0.0
    for pair in pairs:
        (d1, *_), (d2, *_) = pair
        if d2 != 2 * d1:
            raise ValueError(f"the reference widths must be d_ref and 2 d_ref; got {d1} and {d2}")
        ucb = [d ** 2 * (abs(est - lim - c / d) + k * se) for d, est, se, lim, c in pair]
        worst = max(worst, ucb[0] + 2 * ucb[1])
    return float(worst)

