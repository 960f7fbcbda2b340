"""C2 (our formulation of prior work, Wu et al. ICML 2025): stacked causal attention WITHOUT
normalisation: layer 2 is flat (E S^(2)_ij equal for all j < i) and layers >= 3 show earlier-token bias.

Evidence per setting (norm = none; residual off / on; lam in {0.5, 1, 3}; alpha in {0, 0.5, 0.9}):
  * layer 2: sympy proof theory.proofs.proof_flat_without_norm (d/dj S^(2)_ij == 0) and the exact limit
    (flatness resolved in mpmath at dps 50, see lnrecency.bias);
  * layers 3..L: Definition-1 profile of the exact limit (n = 12, L = 4 quick; n = 24, L = 6 full);
  * Monte Carlo (one setting per residual flag, d = 10^12): layer-2 paired difference S_{n,n-1} - S_{n,1}
    within k SE + bias bound of 0, and the layer-3 ordering S_{n,1} > S_{n,n-1} one-sided.
"""
from __future__ import annotations

from itertools import product

from lnrecency.claims._common import grouped, mc_orderings, mc_paired_mean, row_labels, setting
from lnrecency.config import ModelConfig
from lnrecency.verdicts import decide

ID = "C2"
SOURCE = "our formulation"
FLAT = "Without normalisation (prior work's setting), the layer-2 scores are flat in the key j < i."
EARLIER = ("Without normalisation (prior work's setting), layers >= 3 have earlier-token bias "
           "(E S_ij < E S_ik for i > j > k) on every row i >= 3.")
N_MC = 6


def evaluate(*, quick: bool = False, progress=None, seed: int = 20260202) -> list:
    from lnrecency.theory.proofs import proof_flat_without_norm

    n, depth = (12, 4) if quick else (24, 6)
    flat_items, earlier_items = [], []
    for idx, (residual, lam, alpha) in enumerate(product((False, True), (0.5, 1.0, 3.0),
                                                          (0.0, 0.5, 0.9))):
        cfg = ModelConfig(norm="none", residual=residual, lam=lam, alpha=alpha)
        proof = proof_flat_without_norm(residual)
        lab2 = row_labels(n, 2, cfg, min_row=3)
        flat_ok = set(lab2) == {"flat"}
        ev = {"proof": {"name": proof.name, "proven": proof.proven, "steps": list(proof.steps)},
              "limit_layer2": {"n": n, "rows_by_label": lab2}}
        v = decide(flat_ok, proof.proven)
        if lam == 1.0 and alpha == 0.0:
            ev["mc_layer2"] = mc_paired_mean(f"C2 flat[{cfg.label()}]", cfg, N_MC, 2, N_MC, N_MC - 1, 1,
                                             prediction=0.0, samples=4000, seed=seed + idx,
                                             progress=progress)
            if not ev["mc_layer2"]["passed"]:
                v = "inconclusive" if v == "confirmed" else v
        flat_items.append((setting(cfg), v, ev))

        deep = {L: row_labels(n, L, cfg, min_row=3) for L in range(3, depth + 1)}
        bad = {L: {k: r for k, r in lab.items() if k != "earlier"}
               for L, lab in deep.items()}
        bad = {L: b for L, b in bad.items() if b}
        ev = {"limit": {"n": n, "layers": f"3..{depth}",
                        "rows_by_label": {str(L): lab for L, lab in deep.items()}},
              "failing_layers": {str(L): b for L, b in bad.items()}}
        v = "refuted" if bad else "confirmed"
        if lam == 1.0 and alpha == 0.0:
            ev["mc_layer3"] = mc_orderings(f"C2 earlier[{cfg.label()}]", cfg, N_MC, 3,
                                           [(N_MC, 1, N_MC - 1)], samples=4000, seed=seed + 100 + idx,
                                           progress=progress)
            if ev["mc_layer3"]["verdict"] != "confirmed" and v == "confirmed":
                v = "inconclusive"
        earlier_items.append((setting(cfg, layers=f"3..{depth}", n=n), v, ev))
    base = {"norm": "none"}
    return (grouped(ID, SOURCE, FLAT, {**base, "layer": 2}, flat_items)
            + grouped(ID, SOURCE, EARLIER, {**base, "layers": f"3..{depth}"}, earlier_items))
