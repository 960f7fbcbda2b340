"""C2 (our formulation of prior work, Wu et al. ICML 2025): stacked causal attention WITHOUT
normalisation: layer 2 is flat (E S^(2)_ij equal for all j < i) and layers >= 3 show earlier-token bias.

Evidence per setting (norm = none; residual off / on; lam in {0.5, 1, 3}; alpha in {0, 0.5, 0.9}):
  * layer 2: sympy proof theory.proofs.proof_flat_without_norm (d/dj S^(2)_ij == 0) and the exact limit
    (flatness resolved in mpmath at dps 50, see lnrecency.bias);
  * layers 3..L: the boundary search (theory/boundary.py) for earlier-token bias on the exact limit, up to
    N_MAX (L = 4, N_MAX = 60 quick; L = 6, N_MAX = 120 full): the first length (= row) at which it fails,
    and, on that row, the attention weight on token 1 and the largest weight among the keys where the
    order breaks (Definition 1 is an ordering of scores; a failure among keys carrying e^-30 of the weight
    leaves the mass on token 1). Quick and full differ in depth: quick stops at layer 4, where every
    setting holds up to N_MAX; full adds layers 5 and 6, where the residual settings fail at n ~ 10.
  * Monte Carlo (one setting per residual flag, d = 10^12, implementation consistency): layer-2 paired difference S_{n,n-1} - S_{n,1}
    within k SE + bias bound of 0, and the layer-3 ordering S_{n,1} > S_{n,n-1} one-sided.
"""
from __future__ import annotations

from itertools import product
from typing import TYPE_CHECKING

from lnrecency.claims._common import (boundary_finding, grouped, mc_orderings, mc_paired_mean, row_labels,
                                      setting)
from lnrecency.config import ModelConfig
from lnrecency.evidence import (BoundarySearch, Evidence, LimitProfile, OrderingTests, PairedMean, ProofRecord,
                                item, record)
from lnrecency.verdicts import decide

if TYPE_CHECKING:  # annotation only (the theory is imported where it is used)
    from lnrecency.theory.boundary import LayerBoundary

ID = "C2"
SOURCE = "our formulation"
FLAT = "Without normalisation (prior work's setting), the layer-2 scores are flat in the key j < i."
EARLIER = ("Without normalisation (prior work's setting), layers >= 3 have earlier-token bias "
           "(E S_ij < E S_ik for i > j > k) on every row i >= 3.")
N_MC = 6


@record
class FlatEvidence(Evidence):
    proof: ProofRecord
    limit_layer2: LimitProfile
    mc_layer2: PairedMean | None = item(omit_none=True)


@record
class FailingRow(Evidence):
    """A layer's boundary and, on its first failing row, where the attention weight is."""

    boundary: LayerBoundary = item(flatten=True)
    weight_on_token_1: float | None = item(omit_none=True)
    largest_weight_where_order_breaks: float | None = item(omit_none=True)
    keys_where_order_breaks: list | None = item(omit_none=True)

    @property
    def first_failing_n(self) -> int | None:
        return self.boundary.first_failing_n

    @property
    def undecided_from(self) -> int | None:
        return self.boundary.undecided_from


@record
class EarlierEvidence(Evidence):
    search: BoundarySearch = item(flatten=True)  # {str(layer): FailingRow}
    mc_layer3: OrderingTests | None = item(omit_none=True)


def evaluate(*, quick: bool = False, progress=None, seed: int = 20260202) -> list:
    from lnrecency.theory.proofs import proof_flat_without_norm

    n, depth, n_max = (12, 4, 60) if quick else (24, 6, 120)
    flat_items, earlier_items = [], []
    for idx, (residual, lam, alpha) in enumerate(product((False, True), (0.5, 1.0, 3.0),
                                                          (0.0, 0.5, 0.9))):
        cfg = ModelConfig(norm="none", residual=residual, lam=lam, alpha=alpha)
        proof = proof_flat_without_norm(cfg)
        lab2 = LimitProfile(n=n, rows_by_label=row_labels(n, 2, cfg, min_row=3))
        v = decide(lab2.labels == {"flat"}, proof.proven)
        mc2 = None
        if lam == 1.0 and alpha == 0.0:
            mc2 = mc_paired_mean(f"C2 flat[{cfg.label()}]", cfg, N_MC, 2, N_MC, N_MC - 1, 1, prediction=0.0,
                                 samples=4000, seed=seed + idx, progress=progress)
            if not mc2.passed:
                v = "inconclusive" if v == "confirmed" else v
        flat_items.append((setting(cfg), v, FlatEvidence(proof=ProofRecord.of(proof, steps=None),
                                                         limit_layer2=lab2, mc_layer2=mc2)))

        search = earlier_search(cfg, depth, n_max)
        v = search.verdict
        mc3 = None
        if lam == 1.0 and alpha == 0.0:
            mc3 = mc_orderings(f"C2 earlier[{cfg.label()}]", cfg, N_MC, 3, [(N_MC, 1, N_MC - 1)], samples=4000,
                               seed=seed + 100 + idx, progress=progress)
            if mc3.verdict != "confirmed" and v == "confirmed":
                v = "inconclusive"
        earlier_items.append((setting(cfg, layers=f"3..{depth}", n_max=n_max), v,
                              EarlierEvidence(search=search, mc_layer3=mc3)))
    base = {"norm": "none"}
    return (grouped(ID, SOURCE, FLAT, {**base, "layer": 2}, flat_items)
            + grouped(ID, SOURCE, EARLIER, {**base, "layers": f"3..{depth}"}, earlier_items, _finding))


def earlier_search(cfg: ModelConfig, depth: int, n_max: int) -> BoundarySearch:
    """Boundary of earlier-token bias at layers 3..depth and, at each failing row, where the weight is."""
    from lnrecency.theory.boundary import boundary
    from lnrecency.theory.limit import limit_trajectory

    rows = {}
    for b in boundary(depth, n_max, ordering="earlier", config=cfg, first_layer=3):
        i = b.first_failing_n
        if i is None:
            rows[str(b.layer)] = FailingRow(boundary=b)
            continue
        p = limit_trajectory(i, b.layer, config=cfg).layers[-1].weights[i - 1, :i]
        diffs = [float(x) for x in b.differences][:-1]  # keys strictly below the query
        broken = [j for j, x in enumerate(diffs, start=1) if not x < 0]  # S_{i,j+1} >= S_{i,j}
        rows[str(b.layer)] = FailingRow(boundary=b, weight_on_token_1=float(p[0]),
                                        largest_weight_where_order_breaks=float(max(max(p[j - 1], p[j])
                                                                                    for j in broken)),
                                        keys_where_order_breaks=broken)
    return BoundarySearch(n_max=n_max, boundary=rows)


def _share(w: float) -> str:
    """A weight near 1 as '1 - 2.2e-12' (the shortfall is the information), else 3 digits."""
    if 1 - w <= 0:
        return "all but < 1e-16 (float64)"
    return f"1 - {1 - w:.2g}" if 1 - w < 1e-3 else f"{w:.3g}"


def _finding(verdict: str, group) -> str:
    text = boundary_finding(
        group, lambda st: f"{'residual' if st['residual'] else 'no residual'}, lam={st['lam']:g}, alpha={st['alpha']:g}",
        lambda layer, row: (f"; there token 1 keeps {_share(row.weight_on_token_1)} of the weight, the keys "
                            f"where the order breaks at most {row.largest_weight_where_order_breaks:.2g}"))
    depth = max(int(L) for L in group[0][1].search.boundary)
    scope = ("" if depth >= 6 else f" (quick run: layers 3..{depth} only; the full run searches layers 3..6, "
             f"where residual settings fail at short lengths)")
    return text + scope
