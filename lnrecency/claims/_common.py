"""Shared machinery of the claim modules: limit orderings, Monte Carlo mean / ordering checks with a
measured 1/d bias bound, and the budget registration of every Monte Carlo comparison.

Monte Carlo against the limit. E_d[S] = S_lim + c/d + O(1/d^2). The checks run at ``D_BIG`` = 10^12 with
the d-independent "gram" sampler (same cost at any d), and bound the bias there by
    |E_d S - S_lim| <= BIAS_SAFETY * C / d,   C = max over checked entries of d_ref (|mean - lim| + k SE)
measured at d_ref = ``D_REF`` (an upper confidence bound on d_ref |bias(d_ref)|, registered in the
budget). The assumption, stated: d |bias(d)| changes by less than a factor BIAS_SAFETY = 2 between d_ref
and infinity (measured: d * bias at d = 64 and 256 agree within ~10% on the default settings).
Float64 rounding of the limit and the estimate is allowed for by ROUNDING (relative) in every mean check.

Orderings (one-sided paired tests) at D_BIG test the sign of E_d[S_ij - S_ik]; they stand for the limit's
sign because the bias of a difference, <= 2 BIAS_SAFETY C / d with the measured C <= ~16 on the settings
used (C is printed in the evidence of the mean checks), is <= ~7e-11 at d = 10^12, below 1e-3 SE of every
paired difference tested; it is stated here rather than added to the threshold.
Claims about a finite d (C8 at d = 64, C9, P9 at d = 64) are tested at that d, with no limit involved.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from lnrecency.config import ModelConfig
from lnrecency.stats import PER_COMPARISON, mean_check, ordering_check, register

D_BIG = 10 ** 12
D_REF = 256
BIAS_SAFETY = 2.0
ROUNDING = 1e-12


def setting(cfg: ModelConfig, **extra: Any) -> dict:
    out = cfg.as_dict()
    out.pop("embedding", None)
    out.update(extra)
    return out


def simulate(n: int, layers: int, d: int, samples: int, seed: int, cfg: ModelConfig, progress=None):
    from lnrecency.numerics import simulate_scores

    return simulate_scores(n, layers, d, samples, seed=seed, method="gram", config=cfg,
                           progress=progress)


QUANTITIES = ("score", "osq", "ovar")


def _entry(sim, tr, quantity: str, layer: int, i: int, j: int) -> tuple[float, float, float]:
    """(MC mean, SE, limit) of one quantity: S^(l)_ij; |o_i|^2; d * per-coordinate variance of o_i.

    The limit of |o_i|^2 and of d * Var_coord(o_i) is the attention-output Gram diagonal O_ii.
    """
    l0, i0 = layer - 1, i - 1
    if quantity == "score":
        return (float(sim.mean[l0, i0, j - 1]), float(sim.stderr[l0, i0, j - 1]),
                float(tr.scores[l0, i0, j - 1]))
    lim = float(tr.layers[l0].output_gram[i0, i0])
    if quantity == "osq":
        return float(sim.output_sq_norm_mean[l0, i0]), float(sim.output_sq_norm_stderr[l0, i0]), lim
    if quantity == "ovar":
        return (float(sim.d * sim.output_var_mean[l0, i0]), float(sim.d * sim.output_var_stderr[l0, i0]),
                lim)
    raise ValueError(f"quantity must be one of {QUANTITIES}; got {quantity!r}")


def bias_constant(name: str, cfg: ModelConfig, n: int, layer: int, entries: list[tuple[int, int]],
                  *, samples: int, seed: int, d_ref: int = D_REF, quantity: str = "score",
                  progress=None) -> dict:
    """Upper confidence bound C on d_ref |E_{d_ref} X - X_lim| over ``entries`` (1-indexed (i, j)).

    quantity "score": X = S^(layer)_ij; "osq": X = |o_i|^2; "ovar": X = d Var_coord(o_i) (j ignored).
    """
    from lnrecency.theory.limit import limit_trajectory

    k = register(f"{name}: bias constant at d_ref={d_ref}", len(entries), sided=2)
    sim = simulate(n, layer, d_ref, samples, seed, cfg, progress)
    tr = limit_trajectory(n, layer, config=cfg)
    worst = 0.0
    for i, j in entries:
        est, se, lim = _entry(sim, tr, quantity, layer, i, j)
        worst = max(worst, d_ref * (abs(est - lim) + k * se))
    return {"C": float(worst), "d_ref": d_ref, "samples": samples, "seed": seed, "k": k}


def mc_means(name: str, cfg: ModelConfig, n: int, layer: int, entries: list[tuple[int, int]], *,
             samples: int, seed: int, d: int = D_BIG, quantity: str = "score", progress=None,
             predictions: dict | None = None) -> dict:
    """Mean checks |MC - limit| <= k SE + bias bound for ``entries`` at width d; evidence dict.

    ``predictions`` overrides the limit (used by the power tests to plant a wrong prediction).
    """
    from lnrecency.theory.limit import limit_trajectory

    const = bias_constant(name, cfg, n, layer, entries, samples=samples, seed=seed + 1,
                          quantity=quantity, progress=progress)
    bound = BIAS_SAFETY * const["C"] / d
    k = register(f"{name}: MC mean at d={d}", len(entries), sided=2)
    sim = simulate(n, layer, d, samples, seed, cfg, progress)
    tr = limit_trajectory(n, layer, config=cfg)
    checks = []
    for i, j in entries:
        est, se, lim = _entry(sim, tr, quantity, layer, i, j)
        if predictions is not None:
            lim = predictions[(i, j)]
        c = mean_check(est, se, lim, k=k, bias_bound=bound + ROUNDING * max(1.0, abs(float(lim))))
        checks.append({"i": i, "j": j, **c.as_dict()})
    return {"kind": f"MC mean vs limit ({quantity})", "layer": layer, "d": d, "samples": samples,
            "seed": seed, "method": "gram", "bias_constant": const, "bias_bound": bound,
            "per_comparison_rate": PER_COMPARISON, "checks": checks,
            "passed": all(c["passed"] for c in checks)}


def mc_orderings(name: str, cfg: ModelConfig, n: int, layer: int, triples: list[tuple[int, int, int]],
                 *, samples: int, seed: int, d: int = D_BIG, progress=None, sim=None) -> dict:
    """One-sided paired tests of E S_ij > E S_ik at width d for (i, j, k) in ``triples``.

    The claimed direction is j over k; z > k confirms, z < -k refutes (k from the budget).
    """
    k = register(f"{name}: MC ordering at d={d}", len(triples), sided=1)
    if sim is None:
        sim = simulate(n, layer, d, samples, seed, cfg, progress)
    tests = []
    for i, j, kk in triples:
        est = sim.paired_difference(layer, i, j, kk)
        o = ordering_check(est.mean, est.stderr, k=k)
        tests.append({"i": i, "j": j, "k_key": kk, **o.as_dict()})
    verdicts = {t["verdict"] for t in tests}
    overall = ("confirmed" if verdicts == {"confirmed"} else
               "refuted" if "refuted" in verdicts else "inconclusive")
    return {"kind": "MC paired ordering (one-sided)", "layer": layer, "d": d, "samples": samples,
            "seed": seed, "method": "gram", "tests": tests, "verdict": overall}


def row_labels(n: int, layer: int, cfg: ModelConfig, *, min_row: int = 2) -> dict[str, list[int]]:
    """Rows i >= min_row of the exact limit grouped by Definition-1 label.

    min_row = 3 for earlier / flat statements (row 2 has a single key below the query: vacuous).
    """
    from lnrecency.bias import bias_profile

    out: dict[str, list[int]] = {}
    for r in bias_profile(layer, n, config=cfg).rows[min_row - 1:]:
        out.setdefault(r.bias, []).append(r.i)
    return out


def combine(verdicts: list[str]) -> str:
    """All confirmed -> confirmed; any refuted -> refuted; else inconclusive."""
    if verdicts and all(v == "confirmed" for v in verdicts):
        return "confirmed"
    if "refuted" in verdicts:
        return "refuted"
    return "inconclusive"


def adjacent_triples(i: int) -> list[tuple[int, int, int]]:
    """(i, j+1, j) for j = 1..i-1: recency on row i <=> all adjacent differences positive."""
    return [(i, j + 1, j) for j in range(1, i)]


def as_float_list(x) -> list:
    return [float(v) for v in np.asarray(x, dtype=float)]


def mc_paired_mean(name: str, cfg: ModelConfig, n: int, layer: int, i: int, j: int, kk: int, *,
                   prediction: float, samples: int, seed: int, d: int = D_BIG, progress=None) -> dict:
    """Two-sided check |mean(S_ij - S_ik) - prediction| <= k SE + bias bound at width d.

    The bias bound of a difference is twice the per-entry bound (measured constant, see module doc).
    """
    const = bias_constant(name, cfg, n, layer, [(i, j), (i, kk)], samples=samples, seed=seed + 1,
                          progress=progress)
    bound = 2 * BIAS_SAFETY * const["C"] / d
    k = register(f"{name}: MC paired mean at d={d}", 1, sided=2)
    sim = simulate(n, layer, d, samples, seed, cfg, progress)
    est = sim.paired_difference(layer, i, j, kk)
    c = mean_check(est.mean, est.stderr, prediction, k=k,
                   bias_bound=bound + ROUNDING * max(1.0, abs(float(prediction))))
    return {"kind": "MC paired difference mean", "layer": layer, "i": i, "j": j, "k_key": kk, "d": d,
            "samples": samples, "seed": seed, "bias_constant": const, **c.as_dict()}


def grouped(claim_id: str, source: str, statement: str, base: dict,
            items: list[tuple[dict, str, dict]]) -> list:
    """One ClaimResult per verdict among per-setting items (setting, verdict, evidence)."""
    from lnrecency.verdicts import ClaimResult

    out = []
    for verdict in ("confirmed", "refuted", "inconclusive"):
        group = [(s, e) for s, v, e in items if v == verdict]
        if not group:
            continue
        settings = [s for s, _ in group]
        out.append(ClaimResult(claim_id, source, statement, {**base, "settings": settings}, verdict,
                               {"per_setting": [{"setting": s, **e} for s, e in group],
                                "settings_total": len(items), "settings_here": len(group)}))
    return out
