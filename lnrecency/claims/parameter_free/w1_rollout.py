"""W1: the paper's foil measured in its own quantity. Wu et al. (ICML 2025, "On the Emergence of Position Bias in
Transformers") prove their primacy result, Theorem 4.1, about the attention rollout R^(l) = P^(l) ... P^(1) (the
cumulative probability over the input tokens, Abnar & Zuidema 2020), not about per-layer scores; the paper (T1)
and C2 / C6 speak of the scores E S^(l)_ij. Both are computed here in the same exact d -> infinity limit
(:func:`lnrecency.theory.rollout.limit_rollout`, :func:`lnrecency.theory.limit.limit_scores`).

* Theorem 4.1 (Wu et al.'s statement, counted as theirs): per setting (norm in none / layernorm, residual off / on
  with the residual-aware mix (I + gamma P) / (1 + gamma), lam in {1, 8}, alpha in {0, 0.3}; n = 16, layers 1..L
  with L = 8, or 6 quick), on the last row: confirmed when R^(l)_n1 rises strictly at every layer and the other
  tokens' mass 1 - R^(l)_n1 shrinks by at most rho = max_l (1 - R^(l+1)_n1) / (1 - R^(l)_n1) <= 1 - 1e-9 per layer
  (the limit is exact: a deterministic decision, its margin reported); refuted when R^(l)_n1 falls at some layer;
  inconclusive when it neither falls nor shrinks measurably within L layers (a rate of 1 - 1e-9 or slower is not
  a rate L layers can show: Theorem 4.1's bound needs every earlier token's weight bounded below by eps > 0, and
  at lam = 8 without normalisation the weights leave almost all mass on the diagonal).
* Scores and rollout at once (ours): per setting (norm in layernorm / rmsnorm / l2, residual off / on, lam in {1,
  8}, alpha in {0, 0.3}; n = 16), confirmed when the layer-2 scores of row n rise strictly over the keys j < n and
  the layer-2 rollout of row n falls strictly over the same keys; refuted (naming which fails) otherwise. The
  smallest step of each is the margin.
"""
from __future__ import annotations

from itertools import product

import numpy as np

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import grouped, setting, settings_count
from lnrecency.inference.evidence import Evidence, ladder, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.model.config import ModelConfig
from lnrecency.theory.limit import limit_scores
from lnrecency.theory.rollout import limit_rollout

ID = "W1"
THEOREM = declared(ID).text("theorem41")
SIDE = declared(ID).text("side_by_side")
N = 16
#: a per-layer shrink factor of the other tokens' mass this close to 1 is not one L layers can show
RATE_RESOLUTION = 1e-9


@record
class RolloutDepthEvidence(Evidence):
    n: int
    layers: int
    first_token_mass: list  # R^(l)_n1, l = 1..layers
    rate: float  # rho = max_l (1 - R^(l+1)_n1) / (1 - R^(l)_n1)
    smallest_rise: float  # min_l R^(l+1)_n1 - R^(l)_n1 (the margin of "rises")

    @property
    def verdict(self) -> str:
        """Re-decided from the stored masses by the one rule (:func:`depth_decision`)."""
        return depth_decision(np.asarray(self.first_token_mass, dtype=float))[0]


@record
class SideBySideEvidence(Evidence):
    n: int
    scores_row_n: list  # layer-2 E S_nj, j = 1..n-1
    rollout_row_n: list  # layer-2 R_nj, j = 1..n-1
    smallest_score_rise: float  # min_j S_n,j+1 - S_nj (> 0: recency)
    smallest_rollout_fall: float  # min_j R_nj - R_n,j+1 (> 0: primacy)

    @property
    def verdict(self) -> str:
        """Re-decided from the stored rows by the one rule (:func:`side_decision`)."""
        return side_decision(np.asarray(self.scores_row_n, dtype=float), np.asarray(self.rollout_row_n, dtype=float))


def depth_decision(r: np.ndarray) -> tuple[str, float, float]:
    """(verdict, rho, smallest rise) of Theorem 4.1 on a row's first-token masses over the layers (docstring)."""
    rise = np.diff(r)
    rest = 1.0 - r
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = rest[1:] / rest[:-1]
    rho = float(np.max(np.where(rest[:-1] > 0, ratios, 0.0)))
    if np.any(rise < 0):
        return "refuted", rho, float(rise.min())
    if np.all(rise > 0) and rho <= 1 - RATE_RESOLUTION:
        return "confirmed", rho, float(rise.min())
    return "inconclusive", rho, float(rise.min())


def side_decision(scores: np.ndarray, rollout: np.ndarray) -> str:
    """"confirmed" when ``scores`` rise and ``rollout`` falls strictly over the keys, else "refuted"."""
    return ladder(np.all(np.diff(scores) > 0) and np.all(np.diff(rollout) < 0))


def _depth_finding(verdict: str, group: list) -> str:
    rates = [e.rate for _, e in group]
    where = "; ".join(f"{s['norm']}, {'residual' if s['residual'] else 'no residual'}, lam {s['lam']:g}, alpha "
                      f"{s['alpha']:g}: rho = {e.rate:.4g}, R^(L)_n1 = {e.first_token_mass[-1]:.3g}"
                      for s, e in group)
    lead = {"confirmed": "Holds in the limit: the rollout's mass on token 1 rises at every layer and the rest shrinks "
                         f"geometrically (per-layer factor rho from {min(rates):.3g} to {max(rates):.6g})",
            "refuted": "Fails in the limit: the rollout's mass on token 1 falls at some layer",
            "inconclusive": "Not shown within the layers computed: the mass on token 1 neither falls nor shrinks at a "
                            f"rate the layers resolve (rho within {RATE_RESOLUTION:g} of 1: the weights keep almost "
                            "all mass on the diagonal, so Theorem 4.1's eps is near 0)"}[verdict]
    return f"{lead}, in {settings_count(len(group))}: {where}."


def _side_finding(verdict: str, group: list) -> str:
    margin = min(min(e.smallest_score_rise, e.smallest_rollout_fall) for _, e in group)
    where = "; ".join(f"{s['norm']}, {'residual' if s['residual'] else 'no residual'}, lam {s['lam']:g}, alpha "
                      f"{s['alpha']:g}: scores {e.scores_row_n[0]:.3g} -> {e.scores_row_n[-1]:.3g}, rollout "
                      f"{e.rollout_row_n[0]:.3g} -> {e.rollout_row_n[-1]:.3g}" for s, e in group)
    if verdict == "confirmed":
        return (f"Holds in the limit in {settings_count(len(group))}: the layer-2 scores of row {N} rise with the key "
                f"while the layer-2 rollout of the same row falls (smallest step of either {margin:.3g}); {where}.")
    return f"Fails in {settings_count(len(group))} (scores not rising or rollout not falling over the keys): {where}."


@claim(ID)
def evaluate(*, quick: bool = False, progress=None) -> list:
    layers = 6 if quick else 8
    depth_items, side_items = [], []
    for norm, residual, lam, alpha in product(("none", "layernorm"), (False, True), (1.0, 8.0), (0.0, 0.3)):
        cfg = ModelConfig(norm=norm, residual=residual, lam=lam, alpha=alpha)
        r = limit_rollout(N, layers, config=cfg)[:, N - 1, 0]
        verdict, rho, rise = depth_decision(r)
        depth_items.append((setting(cfg, n=N, layers=f"1..{layers}"), verdict, RolloutDepthEvidence(
            n=N, layers=layers, first_token_mass=[float(x) for x in r], rate=rho, smallest_rise=rise)))
    for norm, residual, lam, alpha in product(("layernorm", "rmsnorm", "l2"), (False, True), (1.0, 8.0), (0.0, 0.3)):
        cfg = ModelConfig(norm=norm, residual=residual, lam=lam, alpha=alpha)
        s = limit_scores(N, 2, config=cfg)[1, N - 1, : N - 1]
        r = limit_rollout(N, 2, config=cfg)[1, N - 1, : N - 1]
        side_items.append((setting(cfg, n=N, layer=2), side_decision(s, r), SideBySideEvidence(
            n=N, scores_row_n=[float(x) for x in s], rollout_row_n=[float(x) for x in r],
            smallest_score_rise=float(np.diff(s).min()), smallest_rollout_fall=float(-np.diff(r).max()))))
    base = {"quantity": "attention rollout R^(l) (Abnar & Zuidema) in the d -> infinity limit", "n": N}
    depth_rows = grouped(ID, THEOREM, base, depth_items, _depth_finding, _depth_qualifiers)
    if layers < 8:  # "rises with l" checked to layer 6 only: not confirmed beyond it (issue 84)
        depth_rows = [r.on_part(f"at layers 1-{layers}", f"layers {layers + 1}-8 (the full run checks them)")
                      for r in depth_rows]
    return depth_rows + grouped(ID, SIDE, {**base, "layer": 2}, side_items, _side_finding, _side_qualifiers)


def _where(group: list) -> str:
    """The group's settings in words: the normalisations, and the residual and lam when the group has one only."""
    norms = list(dict.fromkeys(s["norm"] for s, _ in group))
    res = {s["residual"] for s, _ in group}
    lams = sorted({s["lam"] for s, _ in group})
    words = [norms[0] if len(norms) == 1 else ", ".join(norms[:-1]) + " and " + norms[-1]]
    if len(res) == 1:
        words.append("residual" if res == {True} else "no residual")
    if len(lams) == 1:
        words.append(f"lam {lams[0]:g}")
    return ", ".join(words)


def _depth_qualifiers(verdict: str, group: list) -> Qualifiers:
    """Theorem 4.1 in the limit: the per-layer factor rho of the rest's mass, its range, or why it is not resolved."""
    rates = [e.rate for _, e in group]
    if verdict == "inconclusive":
        return Qualifiers(where=_where(group), reason="not resolved", margin=RATE_RESOLUTION,
                          margin_of="factor's distance from 1", settings=len(group))
    return Qualifiers(where=_where(group), settings=len(group),
                      holds=f"in all {len(group)} settings, per-layer factor {min(rates):.3g}-{max(rates):.6g}"
                      if verdict == "confirmed" else "", fails="" if verdict == "confirmed" else
                      f"in {len(group)} settings: the first token's mass falls at some layer")


def _side_qualifiers(verdict: str, group: list) -> Qualifiers:
    """Scores rise while the rollout falls over the keys: in how many settings, and the smallest step of either."""
    margin = min(min(e.smallest_score_rise, e.smallest_rollout_fall) for _, e in group)
    return Qualifiers(where=_where(group), settings=len(group),
                      holds=f"in all {len(group)} settings" if verdict == "confirmed" else "",
                      fails="" if verdict == "confirmed" else f"in {len(group)} settings",
                      margin=margin if verdict == "confirmed" else None, margin_of="smallest step", exact=True)
