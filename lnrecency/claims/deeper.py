"""C6 (our formulation): what happens to the bias at layers 3..L with normalisation.

Statement tested per setting: "with normalisation, every layer l = 3..L keeps recency bias on every row
i >= 2". Evidence: the exact-limit Definition-1 profile of each layer (n = 32 / L = 4 quick; n = 48 /
L = 6 full), the rows that are not recency and where their rows stop increasing, and the row-n gap
S_{n,n-1} - S_{n,1} by layer. Settings: residual off / on (gamma in {1, 8}), lam in {0.3, 1, 8},
alpha in {0, 0.5}. Monte Carlo (d = 10^12, one-sided paired): the non-monotone step the limit predicts
with residual, lam = 1, alpha = 0 at layer 3, row 27 (S_{27,26} < S_{27,25}), and the adjacent orderings
of row 8 at layer 3 without residual.
"""
from __future__ import annotations

from itertools import product

from lnrecency.claims._common import adjacent_triples, grouped, mc_orderings, row_labels, setting
from lnrecency.config import ModelConfig

ID = "C6"
SOURCE = "our formulation"
STATEMENT = ("With normalisation, the recency bias persists at deeper layers: every layer 3..L has "
             "recency bias on every row i >= 2.")


def evaluate(*, quick: bool = False, progress=None, seed: int = 20260606) -> list:
    from lnrecency.bias import bias_profile
    from lnrecency.theory.limit import limit_scores

    n, depth = (32, 4) if quick else (48, 6)
    items = []
    for residual, gamma, lam, alpha in [(False, 1.0, lam, a) for lam, a in product((0.3, 1.0, 8.0), (0.0, 0.5))] + \
            [(True, g, lam, a) for g, lam, a in product((1.0, 8.0), (0.3, 1.0, 8.0), (0.0, 0.5))]:
        cfg = ModelConfig(norm="layernorm", residual=residual, gamma=gamma, lam=lam, alpha=alpha)
        s = limit_scores(n, depth, config=cfg)
        layers = {}
        failing = {}
        for L in range(3, depth + 1):
            lab = row_labels(n, L, cfg)
            layers[str(L)] = {"rows_by_label": lab, "gap_row_n": float(s[L - 1, n - 1, n - 2] - s[L - 1, n - 1, 0])}
            bad = [i for key, rows in lab.items() if key != "recency" for i in rows]
            if bad:
                prof = bias_profile(L, n, config=cfg)
                failing[str(L)] = [{"i": i, "non_increasing_steps": [j for j, x in
                                                                      enumerate(prof.rows[i - 1].differences, 1)
                                                                      if x <= 0]} for i in bad[:6]]
        ev = {"limit": {"n": n, "layers": layers}, "failing": failing}
        v = "refuted" if failing else "confirmed"
        if (residual, gamma, lam, alpha) == (True, 1.0, 1.0, 0.0):
            # the limit predicts S_{27,26} < S_{27,25} at layer 3: claimed ordering 25 over 26
            ev["mc_counterexample"] = mc_orderings(f"C6 dip[{cfg.label()}]", cfg, 27, 3, [(27, 25, 26)],
                                                   samples=2000 if quick else 4000, seed=seed,
                                                   progress=progress)
            mc = ev["mc_counterexample"]["verdict"]
            if mc == "confirmed":  # a significant violation of recency at finite (huge) d
                v = "refuted"
            elif v == "refuted":
                v = "inconclusive"
        if (residual, lam, alpha) == (False, 1.0, 0.0):
            ev["mc_layer3"] = mc_orderings(f"C6 keep[{cfg.label()}]", cfg, 8, 3, adjacent_triples(8),
                                           samples=20000, seed=seed + 1, progress=progress)
            if v == "confirmed" and ev["mc_layer3"]["verdict"] != "confirmed":
                v = "inconclusive"
        items.append((setting(cfg, n=n, layers=f"3..{depth}"), v, ev))
    return grouped(ID, SOURCE, STATEMENT, {"norm": "layernorm (l2 / rmsnorm: same limit)"}, items)
