"""T1 (seed text, Theorem 1): isotropic N(0, I_d/d) embeddings, stacked normalisation + causal attention,
d >> 1 => the layer-2 scores have recency bias (Definition 1) on every row i >= 2.

Evidence per setting (norm in l2 / rmsnorm / layernorm; lam = 1, the authors' "scaling d", and lam = 8 =
sqrt(64), "scaling sqrt(d)" at d = 64; no residual, alpha = 0):
  * proof: theory.proofs.proof_layer2_recency (sympy sign-by-coefficients, all lam > 0, alpha in [0,1));
  * exact limit: Definition-1 profile of layer 2 for n = 16 (quick) or 96;
  * Monte Carlo (gram sampler), row 8: at d = 16, 64, 256 the means within k SE + R/d^2 of limit + c/d
    (the support); at d = 10^12 (implementation consistency) all adjacent paired differences one-sided
    > 0 and the means within k SE of the limit.
"""
from __future__ import annotations

from lnrecency.claims._common import (adjacent_triples, mc_means, mc_orderings, row_labels,
                                      setting)
from lnrecency.config import ModelConfig
from lnrecency.evidence import (Evidence, LimitProfile, MCMeans, OrderingTests, ProofRecord,
                                 record)
from lnrecency.verdicts import ClaimResult, combine

ID = "T1"
SOURCE = "seed text"
STATEMENT = ("Theorem 1: with isotropic N(0, I_d/d) embeddings and stacked normalisation + causal "
             "self-attention, for d >> 1 the layer-2 scores S^(2) have recency bias (every row i >= 2).")
N_MC = 8


@record
class T1Evidence(Evidence):
    proof: ProofRecord
    limit: LimitProfile
    mc_ordering: OrderingTests
    mc_means: MCMeans


def evaluate(*, quick: bool = False, progress=None, seed: int = 20260101) -> list[ClaimResult]:
    from lnrecency.theory.proofs import proof_layer2_recency

    proof = proof_layer2_recency(ModelConfig(norm="layernorm"))
    n = 16 if quick else 96
    samples = 20000
    out = []
    for s_idx, (norm, lam) in enumerate([("layernorm", 1.0), ("l2", 1.0), ("rmsnorm", 1.0),
                                         ("layernorm", 8.0)]):
        cfg = ModelConfig(norm=norm, lam=lam)
        limit = LimitProfile(n=n, rows_by_label=row_labels(n, 2, cfg))
        limit_ok = limit.labels == {"recency"}
        name = f"T1[{cfg.label()}]"
        order = mc_orderings(name, cfg, N_MC, 2, adjacent_triples(N_MC), samples=samples,
                             seed=seed + 10 * s_idx, progress=progress)
        means = mc_means(name, cfg, N_MC, 2, [(N_MC, j) for j in range(1, N_MC + 1)],
                         samples=4000, seed=seed + 10 * s_idx + 5, progress=progress)
        verdicts = ["confirmed" if proof.proven else "inconclusive",
                    "confirmed" if limit_ok else "refuted", order.verdict,
                    "confirmed" if means.passed else "inconclusive"]
        out.append(ClaimResult(
            ID, SOURCE, STATEMENT, setting(cfg, layer=2, n_limit=n, n_mc=N_MC), combine(verdicts),
            T1Evidence(proof=ProofRecord.of(proof, steps=2), limit=limit, mc_ordering=order, mc_means=means)))
    return out
