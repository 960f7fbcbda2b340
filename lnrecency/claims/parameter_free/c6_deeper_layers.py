"""C6 (our formulation): what happens to the bias at layers 3..L with normalisation.

Statement tested per setting: "with normalisation, every layer l = 3..L keeps recency bias on every row
i >= 2". Evidence: the boundary search (theory/boundary.py) on the exact limit, per layer 3..L, up to
N_MAX (L = 4, N_MAX = 200 quick; L = 6, N_MAX = 400 full): the first sequence length (= first row) at
which recency fails, so the verdict says "holds for n < N*" rather than a point verdict; the non-increasing
steps of that row; the row-n gap S_{n,n-1} - S_{n,1} by layer at n = 32 / 48; where a layer fails at
alpha = 0, the set of alpha where it fails (lnrecency.theory.region, certified ends): a grid of alpha cannot
say "only at alpha = 0". Settings: residual off / on (gamma in {1, 8}), lam in {0.3, 1, 8},
alpha in {0, 0.5}. Monte Carlo (d = 10^12, implementation consistency, one-sided paired): the non-monotone
step the limit predicts with residual, lam = 1, alpha = 0 at layer 3, row 27 (S_{27,26} < S_{27,25}), and the
adjacent orderings of row 8 at layer 3 without residual; their entries at d = 16, 64, 256 against limit + c/d
(support at the authors' widths; row 27's in the full run only).
"""
from __future__ import annotations

from itertools import product

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import adjacent_triples, boundary_finding, grouped, mc_means, mc_orderings, setting
from lnrecency.inference.evidence import Evidence, item, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.records import BoundarySearch, MCMeans, OrderingTests, RegionRecord
from lnrecency.model.config import ModelConfig
from lnrecency.theory.boundary import boundary
from lnrecency.theory.limit import limit_scores
from lnrecency.theory.region import region

ID = "C6"
STATEMENT = declared(ID).text("statement")


@record
class DeeperEvidence(Evidence):
    search: BoundarySearch = item(flatten=True)  # {str(layer): LayerBoundary}
    gap_row_n: dict  # {"n": n, str(layer): S_{n,n-1} - S_{n,1}}
    mc_counterexample: OrderingTests | None = item(omit_none=True)
    mc_layer3: OrderingTests | None = item(omit_none=True)
    # the entries of those orderings at d = 16, 64, 256 against limit + c/d (support at the authors' widths;
    # the counterexample's only in the full run: n = 27 costs 4 s)
    mc_counterexample_widths: MCMeans | None = item(omit_none=True)
    mc_layer3_widths: MCMeans | None = item(omit_none=True)
    # where a layer fails at alpha = 0: the alpha set of that layer (lnrecency.theory.region), {str(layer): ...}
    alpha_regions: dict | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        """The exact search's verdict (a failed Monte Carlo check can only leave the row inconclusive)."""
        return self.search.verdict


def _finding(verdict: str, group) -> str:
    text = boundary_finding(group, lambda st: (
        f"{'residual gamma=' + format(st['gamma'], 'g') if st['residual'] else 'no residual'}, "
        f"lam={st['lam']:g}, alpha={st['alpha']:g}"))
    regions = [f"{'residual gamma=' + format(st['gamma'], 'g') if st['residual'] else 'no residual'}, "
               f"lam={st['lam']:g}: {r.describe()}" for st, ev in group for r in (ev.alpha_regions or {}).values()]
    if regions:
        text += (" Not only at alpha = 0: " + "; ".join(regions)
                 + " (lnrecency region: ends certified by exact decisions on both sides).")
    return text


# ---- the claim's report tables, figures and notebook cells ----------------------------------------


@claim(ID)
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260606) -> list:
    n, depth, n_max = (32, 4, 200) if quick else (48, 6, 400)
    items = []
    for residual, gamma, lam, alpha in [(False, 1.0, lam, a) for lam, a in product((0.3, 1.0, 8.0), (0.0, 0.5))] + \
            [(True, g, lam, a) for g, lam, a in product((1.0, 8.0), (0.3, 1.0, 8.0), (0.0, 0.5))]:
        cfg = ModelConfig(norm="layernorm", residual=residual, gamma=gamma, lam=lam, alpha=alpha)
        s = limit_scores(n, depth, config=cfg)
        search = BoundarySearch(n_max=n_max, boundary={str(b.layer): b for b in boundary(depth, n_max, config=cfg,
                                                                                         first_layer=3)})
        v = search.verdict
        dip = keep = dip_w = keep_w = None
        if (residual, gamma, lam, alpha) == (True, 1.0, 1.0, 0.0):
            # the limit predicts S_{27,26} < S_{27,25} at layer 3: claimed ordering 25 over 26
            dip = mc_orderings(f"C6 dip[{cfg.label()}]", cfg, 27, 3, [(27, 25, 26)], samples=2000 if quick else 4000,
                               seed=seed, progress=progress)
            if not quick:
                dip_w = mc_means(f"C6 dip[{cfg.label()}]", cfg, 27, 3, [(27, 25), (27, 26)], samples=4000,
                                 seed=seed + 10, progress=progress)
            if (dip.verdict != "confirmed" or (dip_w is not None and not dip_w.passed)) and v == "refuted":
                v = "inconclusive"
        if (residual, lam, alpha) == (False, 1.0, 0.0):
            keep = mc_orderings(f"C6 keep[{cfg.label()}]", cfg, 8, 3, adjacent_triples(8), samples=20000,
                                seed=seed + 1, progress=progress)
            keep_w = mc_means(f"C6 keep[{cfg.label()}]", cfg, 8, 3, [(8, j) for j in range(1, 9)], samples=4000,
                              seed=seed + 20, progress=progress)
            if v == "confirmed" and (keep.verdict != "confirmed" or not keep_w.passed):
                v = "inconclusive"
        regions = None
        if v == "refuted" and alpha == 0.0:
            # the first failing layer, n <= 60 (quick) or 120 (full), when it fails within that n; the finding
            # states the n it covers
            cap = 60 if quick else 120
            first = min((int(L) for L, b in search.boundary.items() if b.first_failing_n is not None))
            if search.boundary[str(first)].first_failing_n <= cap:
                regions = {str(first): RegionRecord.of(region(first, cap, "alpha", config=cfg,
                                                              hi=0.2 if quick else 0.999, scan=41 if quick else 121,
                                                              tol=1e-6 if quick else 1e-7))}
        gaps = {"n": n, **{str(L): float(s[L - 1, n - 1, n - 2] - s[L - 1, n - 1, 0]) for L in range(3, depth + 1)}}
        items.append((setting(cfg, n_max=n_max, layers=f"3..{depth}"), v,
                      DeeperEvidence(search=search, gap_row_n=gaps, mc_counterexample=dip, mc_layer3=keep,
                                     mc_counterexample_widths=dip_w, mc_layer3_widths=keep_w,
                                     alpha_regions=regions)))
    rows = grouped(ID, STATEMENT, {"norm": "layernorm (l2 / rmsnorm: same limit)"}, items, _finding, _qualifiers)
    if depth < 6:  # "every layer 3..L" checked at layers 3..depth only: not confirmed beyond them (issue 84)
        rows = [r.on_part(f"at layers 3-{depth}", f"layers {depth + 1}-6 (the full run checks them)") for r in rows]
    return rows


def _qualifiers(verdict: str, group) -> Qualifiers:
    """Where the deeper layers keep recency (every n searched) and, where they lose it, from which row on: the
    smallest and largest first failing row over the group's settings and layers."""
    residual = {st["residual"] for st, _ in group}
    where = "with the residual" if residual == {True} else "without the residual" if residual == {False} else \
        "with and without the residual"
    alphas = sorted({st["alpha"] for st, _ in group})
    where += ", alpha " + " and ".join(f"{a:g}" for a in alphas)  # the grid's points, not a range
    n_max = max(ev.search.n_max for _, ev in group)
    layers = sorted({int(L) for _, ev in group for L in ev.search.boundary})
    first = [b.first_failing_n for _, ev in group for b in ev.search.boundary.values()
             if b.first_failing_n is not None]
    if verdict == "refuted" and first:
        # where the region search ran (a layer failing at alpha 0), how far in alpha it fails: not at alpha 0 only
        ends = [hi for _, ev in group for r in (ev.alpha_regions or {}).values() for _, hi in r.fails]
        beyond = f" and up to {max(ends):.2g}" if ends and max(ends) > 0 else ""
        return Qualifiers(where=where + beyond, settings=len(group),
                          fails=f"from row {min(first)}-{max(first)} on (first failing row by setting and layer)")
    return Qualifiers(where=where, settings=len(group),
                      holds=(f"at layers {layers[0]}-{layers[-1]} for every row up to {n_max}"
                             if verdict == "confirmed" else ""),
                      reason="" if verdict != "inconclusive" else "checks failed")
