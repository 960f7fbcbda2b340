"""Definition 1 profiler: classify each row i of layer l as recency / earlier / flat / mixed.

Definition 1 (docs/model.md): row i has *recency* bias if E S_ij > E S_ik whenever i >= j > k >= 1 (the key may
be the query itself), *earlier-token* bias if E S_ij < E S_ik whenever i > j > k >= 1 (keys strictly
before the query), and is *flat* if E S_ij is the same for all j < i. By transitivity each is decided by
the adjacent differences D_j = E S_{i,j+1} - E S_{i,j}, j = 1..i-1 (D_{i-1} involves the diagonal).

Labels: "recency", "earlier", "flat", "mixed" (none of these), and "trivial" for row 1 and for row 2
when it is not recency (no two keys below the query: earlier / flat are vacuous). Monte Carlo adds
"inconclusive" (some differences not significant, no contradiction).

* method "limit": the exact d -> infinity recursion (theory.limit). A difference is resolved in float64
  when |D_j| > 1e-12 * max_j |S_ij|; otherwise the layer is recomputed in mpmath at ``dps`` significant
  digits (default 50) and D_j counts as 0 when |D_j| <= 10^-(dps - 10) * max_j |S_ij|.
* method "mc": finite-width Monte Carlo (numerics.simulate_scores); D_j is the mean of the per-sample
  paired difference with its SE; sign +1 / -1 when z > k / z < -k with k = z_{1 - s/(2m)} for the
  profile's significance s and its m comparisons (Bonferroni: P(any sign wrong) <= s). "flat" then means
  "no significant difference at resolution k * max SE" (the resolution is reported per row).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import mpmath
import numpy as np

from lnrecency.inference.stats import k_for, z_score
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["LABELS", "BiasRow", "BiasProfile", "classify_signs", "bias_profile", "limit_differences",
           "FLOAT_RESOLUTION", "DEFAULT_DPS"]

LABELS = ("recency", "earlier", "flat", "mixed", "trivial", "inconclusive")
FLOAT_RESOLUTION = 1e-12
ROUNDING_NOISE = float(np.sqrt(np.finfo(float).eps))  # 1.5e-8: a difference with no spread below it is rounding
DEFAULT_DPS = 50
METHODS = ("limit", "mc")


def classify_signs(signs: list[int]) -> str:
    """Label of a row from the signs (+1, 0, -1) of D_1..D_{i-1} (the last one is the diagonal pair).

    For the limit the signs are exact; a Monte Carlo 0 means "not significant" and is handled by the
    caller (see :func:`_classify_mc`).
    """
    if not signs:
        return "trivial"
    if all(s > 0 for s in signs):
        return "recency"
    off = signs[:-1]
    if not off:
        return "trivial"
    if all(s < 0 for s in off):
        return "earlier"
    if all(s == 0 for s in off):
        return "flat"
    return "mixed"


def _classify_mc(signs: list[int]) -> str:
    """:func:`classify_signs` where a Monte Carlo 0 (not significant) leaves a label undecided: a lone
    diagonal pair without a significant sign, or a row called mixed only because of such zeros."""
    label = classify_signs(signs)
    if label == "trivial" and signs and signs[-1] == 0:
        return "inconclusive"
    if label == "mixed":
        off = signs[:-1]
        sure = (1 in off and -1 in off) or (all(s > 0 for s in off) and signs[-1] < 0)
        return "mixed" if sure else "inconclusive"
    return label


@dataclass(frozen=True)
class BiasRow:
    """Row i: label, adjacent differences D_1..D_{i-1} and (MC) their SEs and z."""

    i: int
    bias: str
    differences: tuple
    stderr: tuple = ()
    z: tuple = ()
    resolution: float | None = None
    precision: str = "float64"

    def to_json(self) -> dict:
        out: dict[str, Any] = {"i": self.i, "bias": self.bias,
                               "differences": [float(x) for x in self.differences]}
        if self.stderr:
            out["stderr"] = [float(x) for x in self.stderr]
            out["z"] = [float(x) for x in self.z]
            out["resolution"] = self.resolution
        else:
            out["precision"] = self.precision
        return out


@dataclass(frozen=True)
class BiasProfile:
    layer: int
    method: str
    config: ModelConfig
    n: int
    rows: tuple
    meta: dict = field(default_factory=dict)

    def labels(self) -> list[str]:
        return [r.bias for r in self.rows]

    def summary(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for r in self.rows:
            out[r.bias] = out.get(r.bias, 0) + 1
        return out

    def to_json(self) -> dict:
        return {"layer": self.layer, "method": self.method, "n": self.n,
                "config": self.config.as_dict(), **self.meta,
                "rows": [r.to_json() for r in self.rows]}


def limit_differences(n: int, layer: int, config: ModelConfig, *, dps: int = DEFAULT_DPS):
    """Per row i: (signs, differences as floats, precision used) of the exact limit at ``layer``."""
    from lnrecency.theory.limit import Float64Overflow, limit_scores

    hp = None
    try:
        s = limit_scores(n, layer, config=config)[layer - 1]
    except Float64Overflow:  # float64 cannot hold this setting: every row from mpmath
        s = np.full((n, n), np.nan)
    out = []
    for i in range(1, n + 1):
        row = s[i - 1, :i]
        d = np.diff(row)
        precision = "float64"
        unresolved = not np.all(np.isfinite(row)) or np.any(
            np.abs(d) <= FLOAT_RESOLUTION * float(np.max(np.abs(row))))
        if d.size and unresolved:
            if hp is None:
                hp = limit_scores(n, layer, config=config, dps=dps)[layer - 1]
            with mpmath.workdps(dps):
                hrow = list(hp[i - 1, :i])
                hscale = max(abs(x) for x in hrow)
                hd = [hrow[j + 1] - hrow[j] for j in range(i - 1)]
                tol = mpmath.mpf(10) ** (-(dps - 10)) * hscale
                signs = [0 if abs(x) <= tol else (1 if x > 0 else -1) for x in hd]
                d = np.array([float(x) for x in hd])
            precision = f"mpmath dps={dps}"
        else:
            signs = [1 if x > 0 else -1 for x in d]
        out.append((signs, d, precision))
    return out


def bias_profile(layer: int, n: int, *, config: ModelConfig | None = None, method: str = "limit",
                 dps: int = DEFAULT_DPS, d: int | None = None, samples: int | None = None,
                 seed: int | None = None, significance: float = 1e-3, sim_method: str = "gram",
                 progress: Any = None, **params: Any) -> BiasProfile:
    """Classify rows 1..n of ``layer`` (Definition 1) from the limit or from Monte Carlo.

    Monte Carlo needs ``d``, ``samples`` and ``seed``; ``significance`` bounds the probability that any
    sign in the profile is wrong (Bonferroni over the profile's comparisons, two-sided each).
    """
    layer = check_int("layer", layer, minimum=1)
    n = check_int("n", n, minimum=1)
    check_choice("method", method, METHODS)
    cfg = make_config(config, **params)
    if method == "limit":
        check_int("dps", dps, minimum=20)
        rows = tuple(BiasRow(i, classify_signs(signs), tuple(diff), precision=prec)
                     for i, (signs, diff, prec) in enumerate(limit_differences(n, layer, cfg, dps=dps),
                                                             start=1))
        return BiasProfile(layer, method, cfg, n, rows, {"dps_fallback": dps,
                                                         "float_resolution": FLOAT_RESOLUTION})
    missing = [name for name, value in (("d", d), ("samples", samples), ("seed", seed)) if value is None]
    if missing:
        raise ValueError(f"method='mc' needs d (the width), samples (the number of draws) and seed; "
                         f"missing: {', '.join(missing)}")
    check_int("d", d, minimum=2)
    check_int("samples", samples, minimum=2)
    check_int("seed", seed, minimum=0)
    check_real("significance", significance, low=0.0, high=0.5, low_open=True, high_open=False)
    from lnrecency.numerics import simulate_scores

    sim = simulate_scores(n, layer, d, samples, seed=seed, method=sim_method, config=cfg,
                          progress=progress)
    m = max(1, n * (n - 1) // 2)
    k = k_for(significance / m, sided=2)
    rows = []
    for i in range(1, n + 1):
        est = [sim.paired_difference(layer, i, j + 1, j) for j in range(1, i)]
        means = tuple(float(e.mean) for e in est)
        ses = tuple(float(e.stderr) for e in est)
        # no spread (SE below the float64 resolution of the row's scores) and a difference below sqrt(eps)
        # of them: every draw gave the same rounding (e.g. alpha = 1 - 1e-16, tokens equal up to 1e-8), not
        # a resolved difference; z would be +-inf from rounding alone. A tie, z = 0.
        scale = max(1.0, float(np.nanmax(np.abs(sim.mean[layer - 1, i - 1, :i]))))
        zs = tuple(0.0 if se <= FLOAT_RESOLUTION * scale and abs(mu) <= ROUNDING_NOISE * scale
                   else z_score(mu, se) for mu, se in zip(means, ses))
        signs = [1 if z > k else (-1 if z < -k else 0) for z in zs]
        res = k * max(ses) if ses else None
        rows.append(BiasRow(i, _classify_mc(signs), means, ses, zs, res))
    meta = {"d": d, "samples": samples, "seed": seed, "significance": significance, "k": k,
            "comparisons": m, "simulation": sim_method}
    return BiasProfile(layer, method, cfg, n, tuple(rows), meta)
