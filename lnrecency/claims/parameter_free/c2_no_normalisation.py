"""C2 (our formulation of prior work, Wu et al. ICML 2025): stacked causal attention WITHOUT
normalisation: layer 2 is flat (E S^(2)_ij equal for all j < i) and layers >= 3 show earlier-token bias.

Evidence:
  * layer 2 (norm = none; residual off / on; lam in {0.5, 1, 3}; alpha in {0, 0.5, 0.9}): sympy proof
    theory.proofs.proof_flat_without_norm (d/dj S^(2)_ij == 0, symbolic in alpha and lam) and the exact limit
    (flatness resolved in mpmath at dps 50, see lnrecency.experiments.profiler);
  * layers 3..L, per (residual, lam), over ALL alpha in [0, 0.999]: the set of alpha where earlier-token bias
    holds on every row <= N_MAX, as intervals whose ends are certified by exact decisions on both sides
    (lnrecency.theory.region; L = 4, N_MAX = 60 quick; L = 6, N_MAX = 120 full): a grid of alpha decides
    nothing. Where a layer fails, the first failing row at the middle of its first failing interval and, on
    that row, the attention weight on token 1 and the largest weight among the keys where the order breaks
    (Definition 1 is an ordering of scores; a failure among keys carrying e^-30 of the weight leaves the mass on
    token 1). Quick and full differ in depth: quick stops at layer 4, where every setting holds for every
    alpha; full adds layers 5 and 6, where the residual settings fail on alpha intervals.
  * Monte Carlo (lam = 1, alpha = 0, residual off / on): at d = 10^12 (implementation consistency) the layer-2
    paired difference S_{n,n-1} - S_{n,1} within k SE + bias bound of 0 and the layer-3 ordering
    S_{n,1} > S_{n,n-1} one-sided; at the authors' widths d = 16, 64, 256 (support) both entries of each
    against limit + c/d within k SE + R/d^2 (lnrecency.claims.mc_checks.mc_means; two entries, not the whole
    row: the suite's false-alarm budget).
"""
from __future__ import annotations

import dataclasses
import math
from itertools import product
from typing import TYPE_CHECKING

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import grouped, mc_means, mc_orderings, mc_paired_mean, row_labels, setting
from lnrecency.inference.evidence import Evidence, item, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.records import LimitProfile, MCMeans, OrderingTests, PairedMean, ProofRecord, RegionRecord
from lnrecency.inference.verdicts import combine, decide
from lnrecency.model.config import ModelConfig
from lnrecency.theory.boundary import boundary
from lnrecency.theory.limit import limit_trajectory
from lnrecency.theory.proofs import proof_flat_without_norm
from lnrecency.theory.region import regions

if TYPE_CHECKING:  # annotation only (the theory is imported where it is used)
    from lnrecency.theory.boundary import LayerBoundary

ID = "C2"
FLAT = declared(ID).text("flat")
EARLIER = declared(ID).text("earlier")
N_MC = 6
ALPHA_MAX = 0.999  # the alpha range of the region decisions is [0, ALPHA_MAX]
SCAN_QUICK, SCAN_FULL = 25, 121  # region scan points (lnrecency.theory.region)


@record
class FlatEvidence(Evidence):
    proof: ProofRecord
    limit_layer2: LimitProfile
    mc_layer2: PairedMean | None = item(omit_none=True)
    # S_{n,n-1} and S_{n,1} of layer 2 at d = 16, 64, 256 against limit + c/d (support at the authors' widths)
    mc_layer2_widths: MCMeans | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        """The row's verdict, decided here once (the evaluator reads it; a stored row is re-decided by it): the
        exact limit's labels and the proof; the Monte Carlo checks, where run, can only take a confirmation back."""
        v = decide(self.limit_layer2.labels == {"flat"}, self.proof.proven)
        if v == "confirmed" and self.mc_layer2 is not None and not (self.mc_layer2.passed
                                                                    and self.mc_layer2_widths.passed):
            v = "inconclusive"
        return v


@record
class FailingRow(Evidence):
    """A layer's boundary at one alpha and, on its first failing row, where the attention weight is."""

    boundary: LayerBoundary = item(flatten=True)
    alpha: float | None = item(omit_none=True)  # where the row was searched (a point of a failing interval)
    weight_on_token_1: float | None = item(omit_none=True)
    largest_weight_where_order_breaks: float | None = item(omit_none=True)
    keys_where_order_breaks: list | None = item(omit_none=True)
    # the failure in the claim's own quantity: the largest score step S_i,j+1 - S_ij (logits) where the order breaks
    largest_score_step: float | None = item(omit_none=True)

    @property
    def first_failing_n(self) -> int | None:
        return self.boundary.first_failing_n

    @property
    def undecided_from(self) -> int | None:
        return self.boundary.undecided_from


@record
class EarlierEvidence(Evidence):
    """Earlier-token bias at layers 3..depth over all alpha in [0, 0.999]: per layer, the alpha set where it
    holds on every row <= n_max (lnrecency.theory.region, certified ends) and, where it fails, the first
    failing row at the middle of the first failing interval."""

    n_max: int
    regions: dict  # {str(layer): RegionRecord}
    failing_rows: dict | None = item(omit_none=True)  # {str(layer): FailingRow}
    mc_layer3: OrderingTests | None = item(omit_none=True)
    # S_{n,1} and S_{n,n-1} of layer 3 at d = 16, 64, 256 against limit + c/d (support at the authors' widths)
    mc_layer3_widths: MCMeans | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        return combine([r.verdict for r in self.regions.values()])


FULL_DEPTH = 6  # the depth the full run searches (quick: 4)


@claim(ID)
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260202) -> list:
    n, depth, n_max = (12, 4, 60) if quick else (24, FULL_DEPTH, 120)
    flat_items, earlier_items = [], []
    for idx, (residual, lam, alpha) in enumerate(product((False, True), (0.5, 1.0, 3.0),
                                                          (0.0, 0.5, 0.9))):
        cfg = ModelConfig(norm="none", residual=residual, lam=lam, alpha=alpha)
        proof = proof_flat_without_norm(cfg)
        lab2 = LimitProfile(n=n, rows_by_label=row_labels(n, 2, cfg, min_row=3))
        mc2 = widths2 = None
        if lam == 1.0 and alpha == 0.0:
            mc2 = mc_paired_mean(f"C2 flat[{cfg.label()}]", cfg, N_MC, 2, N_MC, N_MC - 1, 1, prediction=0.0,
                                 samples=4000, seed=seed + idx, progress=progress)
            widths2 = mc_means(f"C2 flat[{cfg.label()}]", cfg, N_MC, 2, [(N_MC, N_MC - 1), (N_MC, 1)],
                               samples=4000, seed=seed + 200 + 10 * idx, progress=progress)
        flat = FlatEvidence(proof=ProofRecord.of(proof, steps=None), limit_layer2=lab2, mc_layer2=mc2,
                            mc_layer2_widths=widths2)
        flat_items.append((setting(cfg), flat.verdict, flat))
    for idx, (residual, lam) in enumerate(product((False, True), (0.5, 1.0, 3.0))):
        cfg = ModelConfig(norm="none", residual=residual, lam=lam, alpha=0.0)
        ev = earlier_evidence(cfg, depth, n_max, scan=SCAN_QUICK if quick else SCAN_FULL)
        v = ev.verdict
        if lam == 1.0:
            mc3 = mc_orderings(f"C2 earlier[{cfg.label()}]", cfg, N_MC, 3, [(N_MC, 1, N_MC - 1)], samples=4000,
                               seed=seed + 100 + 9 * idx, progress=progress)
            widths3 = mc_means(f"C2 earlier[{cfg.label()}]", cfg, N_MC, 3, [(N_MC, 1), (N_MC, N_MC - 1)],
                               samples=4000, seed=seed + 300 + 10 * idx, progress=progress)
            ev = dataclasses.replace(ev, mc_layer3=mc3, mc_layer3_widths=widths3)
            if (mc3.verdict != "confirmed" or not widths3.passed) and v == "confirmed":
                v = "inconclusive"
        earlier_items.append((setting(cfg, layers=f"3..{depth}", n_max=n_max,
                                      alpha=f"[0, {ALPHA_MAX:g}] (region)"), v, ev))
    base = {"norm": "none"}
    earlier = grouped(ID, EARLIER, {**base, "layers": f"3..{depth}"}, earlier_items, _finding, _qualifiers)
    if depth < FULL_DEPTH:  # "layers >= 3" checked at layers 3..depth only: not confirmed beyond them (issue 84)
        earlier = [r.on_part(f"at layers 3-{depth}", f"layers {depth + 1}-{FULL_DEPTH} (the full run checks them)")
                   for r in earlier]
    return grouped(ID, FLAT, {**base, "layer": 2}, flat_items) + earlier


def earlier_evidence(cfg: ModelConfig, depth: int, n_max: int, *, scan: int) -> EarlierEvidence:
    """The alpha regions of earlier-token bias at layers 3..depth (every n <= n_max) and, at the middle of each
    failing layer's first failing interval, where the weight is on the first failing row."""

    found = regions(range(3, depth + 1), n_max, "alpha", hi=ALPHA_MAX, ordering="earlier", config=cfg, scan=scan)
    recs = {str(r.layer): RegionRecord.of(r) for r in found}
    rows = {str(r.layer): failing_row(cfg.replace(alpha=0.5 * sum(r.fails[0])), r.layer, n_max)
            for r in found if r.fails}
    return EarlierEvidence(n_max=n_max, regions=recs, failing_rows=rows or None)


def failing_row(cfg: ModelConfig, layer: int, n_max: int) -> FailingRow:
    """The boundary of earlier-token bias at ``layer`` (exact limit, rows <= n_max) and, on its first failing row,
    the attention weight on token 1 and the largest weight among the keys where the order breaks."""

    b = boundary(layer, n_max, ordering="earlier", config=cfg, first_layer=layer)[0]
    i = b.first_failing_n
    if i is None:
        return FailingRow(boundary=b, alpha=cfg.alpha)
    p = limit_trajectory(i, layer, config=cfg).layers[-1].weights[i - 1, :i]
    diffs = [float(x) for x in b.differences][:-1]  # keys strictly below the query
    broken = [j for j, x in enumerate(diffs, start=1) if not x < 0]  # S_{i,j+1} >= S_{i,j}
    return FailingRow(boundary=b, alpha=cfg.alpha, weight_on_token_1=float(p[0]),
                      largest_weight_where_order_breaks=float(max(max(p[j - 1], p[j]) for j in broken)),
                      keys_where_order_breaks=broken, largest_score_step=max(diffs[j - 1] for j in broken))


def _layers(names) -> str:
    """'3-4' for consecutive layers, '3, 5' otherwise."""
    ls = sorted(int(x) for x in names)
    return f"{ls[0]}-{ls[-1]}" if len(ls) > 1 and ls == list(range(ls[0], ls[-1] + 1)) else ", ".join(map(str, ls))


#: the second quantity of a failing row, in the words before its number: the largest attention weight of one key
#: where the order breaks, on the rows sampled, which are also where the score step is read (the first failing row of
#: each failing layer at the middle of its first failing alpha interval)
WEIGHT_OF = "and on every row sampled the keys where the order breaks carry attention weight at most"
#: the failure's size in the claim's own quantity, on those rows (the region's other rows are not searched for it;
#: "the rows sampled" is defined in the glossary)
STEP_OF = "largest score step on the rows sampled (logits)"


def _qualifiers(verdict: str, group) -> Qualifiers:
    """Where the deeper layers' earlier-token bias holds and fails over alpha (issue 75): the layers that hold for
    every alpha, the failing layers with the largest alpha of a failing interval, the margin: the largest score step
    against the order (the failure's size, in logits), and beside it the largest attention weight among the keys where
    the order breaks."""
    residual = {st["residual"] for st, _ in group}
    where = "residual" if residual == {True} else "no residual" if residual == {False} else ""
    layers = {L for _, ev in group for L in ev.regions}
    failing = {L for _, ev in group for L, r in ev.regions.items() if r.fails}
    if not failing:
        n_max = max(ev.n_max for _, ev in group)  # the rows searched: the statement's "every row" up to there
        return Qualifiers(where=where, settings=len(group),
                          holds=f"at layers {_layers(layers)}, every alpha up to {ALPHA_MAX:g} and row up to {n_max}")
    top = max(hi for _, ev in group for r in ev.regions.values() for _, hi in r.fails)
    low = min(lo for _, ev in group for r in ev.regions.values() for lo, _ in r.fails)
    steps = [row.largest_score_step for _, ev in group for row in (ev.failing_rows or {}).values()
             if row.largest_score_step is not None]
    weights = [row.largest_weight_where_order_breaks for _, ev in group for row in (ev.failing_rows or {}).values()
               if row.largest_weight_where_order_breaks is not None]
    held = layers - failing
    second = {}
    if steps:  # the failure in the claim's own quantity (logits), the keys' weight beside it (issue 84, item 2): a
        # break among keys that carry almost none of the attention changes what the failure means
        margin, margin_of = max(steps), STEP_OF
        if weights:
            second = {"second": max(weights), "second_of": WEIGHT_OF}
    else:  # evidence stored before the score step was recorded
        margin, margin_of = (max(weights), "sampled failing keys' weight") if weights else (None, "")
    return Qualifiers(where=where, settings=len(group), holds=f"at layers {_layers(held)}" if held else "",
                      fails=f"at layers {_layers(failing)}, alpha within [{math.floor(low * 100) / 100:g}, "
                            f"{math.ceil(top * 100) / 100:g}] by lam",
                      margin=margin, margin_of=margin_of, **second)


def _share(w: float) -> str:
    """A weight near 1 as '1 - 2.2e-12' (the shortfall is the information), else 3 digits."""
    if 1 - w <= 0:
        return "all but < 1e-16 (float64)"
    return f"1 - {1 - w:.2g}" if 1 - w < 1e-3 else f"{w:.3g}"


def _finding(verdict: str, group) -> str:
    parts = []
    for st, ev in group:
        where = f"{'residual' if st['residual'] else 'no residual'}, lam={st['lam']:g}"
        failing = {L: r for L, r in ev.regions.items() if r.fails}
        undecided = [L for L, r in ev.regions.items() if r.undecided_at]
        if not failing:
            parts.append(f"{where}: holds for every alpha in [0, {ALPHA_MAX:g}] and every n <= {ev.n_max} at layers "
                         f"{', '.join(ev.regions)}" + (f" (undecided points at layers {', '.join(undecided)})"
                                                       if undecided else ""))
            continue
        held = [L for L in ev.regions if L not in failing]
        text = []
        for L, r in failing.items():
            row = ev.failing_rows[L]
            # the score step (the cell's size, the largest over these rows) named with the row it was read on
            step = ("" if row.largest_score_step is None else
                    f", its largest score step against the order {row.largest_score_step:+.3g} logits")
            at = (f"; at alpha = {row.alpha:.3g} it first fails at n = {row.first_failing_n}{step}, where token 1 "
                  f"keeps {_share(row.weight_on_token_1)} of the weight and the keys where the order breaks at most "
                  f"{row.largest_weight_where_order_breaks:.2g}" if row.first_failing_n is not None else "")
            text.append(f"layer {L} fails for alpha in {r.intervals(r.fails)} and holds in {r.intervals(r.holds)}{at}")
        parts.append(f"{where}: " + "; ".join(text)
                     + (f"; layers {', '.join(held)} hold for every alpha and n <= {ev.n_max}" if held else ""))
    depth = max(int(L) for L in group[0][1].regions)
    scope = ("" if depth >= 6 else f" (quick run: layers 3..{depth} only; the full run searches layers 3..6, "
             f"where residual settings fail)")
    return ("; ".join(parts) + ". Decided over alpha by lnrecency region (ends certified by exact decisions on "
            f"both sides; alpha in ({ALPHA_MAX:g}, 1) not covered)" + scope + ".")
