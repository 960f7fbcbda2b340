"""C3 (our formulation): residual connections h' = h + gamma o weaken the layer-2 recency bias but do
not remove it (normalised models).

"Do not remove": sympy proof theory.proofs.proof_layer2_recency (LayerNorm with residual) (every gamma, lam > 0,
alpha in [0, 1)), the exact-limit profile of layer 2 per setting, a Monte Carlo ordering (d = 10^12:
implementation consistency) and the row's means at d = 16, 64, 256 against limit + c/d (support).
"Weaken", made measurable per row i >= 3 by two gaps of the exact limit:
    absolute  Delta_i = S_{i,i-1} - S_{i,1}  (= log of the attention-weight ratio P_{i,i-1} / P_{i,1}),
    relative  Delta_i / S_{i,1};
weakened in a setting when the residual model's gap is smaller than the no-residual model's (same lam,
alpha) on every row 3..n, for both gaps. Monte Carlo: Delta_n(no residual) - Delta_n(residual) > 0,
one-sided, from two independent simulations (SE added in quadrature; d = 10^12, implementation consistency),
and the gap's entries of the no-residual model at d = 16, 64, 256 against limit + c/d (support; the
residual model's are the keeps check's row).
Settings: gamma in {0.3, 1, 8 (= sqrt(64), the authors' unscaled LayerNorm output)}, lam in {1, 8},
alpha in {0, 0.3, 0.7}; n = 16 (quick) or 64.
"""
from __future__ import annotations

from itertools import product

import numpy as np

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import (
    adjacent_triples,
    gap_comparison,
    grouped,
    mc_means,
    mc_orderings,
    row_labels,
    setting,
)
from lnrecency.inference.evidence import Evidence, item, ladder, record
from lnrecency.inference.records import GapComparison, LimitProfile, MCMeans, OrderingTests, ProofRecord
from lnrecency.inference.stats import register
from lnrecency.model.config import ModelConfig
from lnrecency.theory.limit import limit_scores
from lnrecency.theory.proofs import proof_layer2_recency

ID = "C3"
KEEPS = declared(ID).text("keeps")
WEAKENS = declared(ID).text("weakens")
N_MC = 8


@record
class KeepsEvidence(Evidence):
    proof: ProofRecord
    limit: LimitProfile
    mc_ordering: OrderingTests | None = item(omit_none=True)
    mc_means: MCMeans | None = item(omit_none=True)  # row N_MC at d = 16, 64, 256 against limit + c/d

    @property
    def verdict(self) -> str:
        """The row's verdict, decided here once (the evaluator reads it; a stored row is re-decided by it): the exact
        limit and the proof; the Monte Carlo orderings and means, where run, can only take a confirmation back."""
        ok = self.limit.labels == {"recency"}
        v = ladder(ok and self.proof.proven, opposite=not ok)
        if v == "confirmed" and self.mc_ordering is not None and self.mc_ordering.verdict != "confirmed":
            v = "inconclusive" if self.mc_ordering.verdict == "inconclusive" else "refuted"
        if v == "confirmed" and self.mc_means is not None and not self.mc_means.passed:
            v = "inconclusive"
        return v


@record
class WeakensEvidence(Evidence):
    absolute_gap_row_n: dict  # {"residual": .., "no_residual": ..}
    relative_gap_row_n: dict
    rows_where_absolute_not_weaker: list
    rows_where_relative_not_weaker: list
    mc_gap_difference: GapComparison | None = item(omit_none=True)
    # the no-residual model's gap entries at d = 16, 64, 256 against limit + c/d (the residual model's are in the
    # same setting's KeepsEvidence.mc_means)
    mc_gap_entries_no_residual: MCMeans | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        """Its own part of the row's verdict: weaker on every row in both gaps (exact), the Monte Carlo difference
        and entries, where run, only able to take it back (the residual model's entries are the keeps record's)."""
        v = ladder(not self.rows_where_absolute_not_weaker and not self.rows_where_relative_not_weaker)
        mc, entries = self.mc_gap_difference, self.mc_gap_entries_no_residual
        if v == "confirmed" and mc is not None and (mc.verdict != "confirmed" or not entries.passed):
            v = "inconclusive"
        return v


def gaps(n: int, cfg: ModelConfig) -> tuple[np.ndarray, np.ndarray]:
    """Absolute and relative layer-2 gaps of rows i = 3..n in the exact limit."""

    s = limit_scores(n, 2, config=cfg)[1]
    rows = np.arange(3, n + 1)
    a = np.array([s[i - 1, i - 2] - s[i - 1, 0] for i in rows])
    r = a / np.array([abs(s[i - 1, 0]) for i in rows])
    return a, r


@claim(ID)
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260303) -> list:
    proof = proof_layer2_recency(ModelConfig(norm="layernorm", residual=True))
    n = 16 if quick else 64
    keep_items, weak_items = [], []
    for idx, (gamma, lam, alpha) in enumerate(product((0.3, 1.0, 8.0), (1.0, 8.0), (0.0, 0.3, 0.7))):
        cfg = ModelConfig(norm="layernorm", residual=True, gamma=gamma, lam=lam, alpha=alpha)
        base = cfg.replace(residual=False)
        limit = LimitProfile(n=n, rows_by_label=row_labels(n, 2, cfg))
        order = means = None
        if (gamma, lam, alpha) == (1.0, 1.0, 0.0):
            order = mc_orderings(f"{ID} keeps[{cfg.label()}]", cfg, N_MC, 2, adjacent_triples(N_MC),
                                 samples=20000, seed=seed, progress=progress)
            means = mc_means(f"{ID} keeps[{cfg.label()}]", cfg, N_MC, 2, [(N_MC, j) for j in range(1, N_MC + 1)],
                             samples=4000, seed=seed + 20, progress=progress)
        keeps = KeepsEvidence(proof=ProofRecord.of(proof), limit=limit, mc_ordering=order, mc_means=means)
        keep_items.append((setting(cfg, n=n), keeps.verdict, keeps))

        a_res, r_res = gaps(n, cfg)
        a_no, r_no = gaps(n, base)
        abs_ok = bool(np.all(a_res < a_no))
        rel_ok = bool(np.all(r_res < r_no))
        v = ladder(abs_ok and rel_ok)
        mc = entries = None
        if (gamma, lam, alpha) == (1.0, 1.0, 0.0):
            mc = mc_gap_difference(cfg, base, samples=20000, seed=seed + 7, progress=progress)
            # the residual model's row (both gap entries included) is the keeps check's `means`, same setting
            entries = mc_means(f"{ID} weakens[{base.label()}]", base, N_MC, 2, [(N_MC, N_MC - 1), (N_MC, 1)],
                               samples=4000, seed=seed + 40, progress=progress)
            if (mc.verdict != "confirmed" or not (entries.passed and means.passed)) and v == "confirmed":
                v = "inconclusive"
        weak_items.append((setting(cfg, n=n), v, WeakensEvidence(
            absolute_gap_row_n={"residual": float(a_res[-1]), "no_residual": float(a_no[-1])},
            relative_gap_row_n={"residual": float(r_res[-1]), "no_residual": float(r_no[-1])},
            rows_where_absolute_not_weaker=[int(i) for i in np.arange(3, n + 1)[a_res >= a_no]],
            rows_where_relative_not_weaker=[int(i) for i in np.arange(3, n + 1)[r_res >= r_no]],
            mc_gap_difference=mc, mc_gap_entries_no_residual=entries)))
    base = {"norm": "layernorm (l2 / rmsnorm: same limit)", "residual": True, "layer": 2}
    rows = grouped(ID, KEEPS, base, keep_items) + grouped(ID, WEAKENS, base, weak_items)
    if quick:  # "every row" checked on rows up to 16 only: not confirmed beyond them (issue 84, item 2)
        rows = [r.on_part(f"on rows i <= {n}", "rows 17-64 (the full run checks them)") for r in rows]
    return rows


def mc_gap_difference(cfg: ModelConfig, base: ModelConfig, *, samples: int, seed: int, d: int = 10 ** 12,
                      progress=None) -> GapComparison:
    """One-sided MC test of Delta_n(base) > Delta_n(cfg) (independent runs, SE in quadrature)."""
    k = register(f"{ID} weakens[{cfg.label()}]: MC gap difference at d={d}", 1, sided=1)
    no_res, res, o = gap_comparison(base, cfg, N_MC, k=k, samples=samples, seeds=(seed, seed + 1), d=d,
                                    progress=progress)
    return GapComparison(claim="Delta(no residual) > Delta(residual)", d=d, samples=samples, seed=seed,
                         gaps={"gap_no_residual": no_res.mean, "gap_residual": res.mean}, check=o)
