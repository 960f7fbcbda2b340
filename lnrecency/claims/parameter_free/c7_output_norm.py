"""C7 (seed 002): at the first layer with alpha = 0 the limit gives |o_i|^2 = sum_k P_ik^2, so the
attention output gets shorter with position, about 1/i when attention is near uniform.

Evidence:
  * exact (sympy): the limit recursion (exact=True, n = 6, lam in {1, 1/2}) gives O_ii == sum_k P_ik^2, and
    the closed form (E^2 + i - 1)/(E + i - 1)^2 (E = e^lam) equals it and the derived closed form h2 at alpha = 0;
  * shrinking: sympy proof theory.proofs.proof_h_decreasing (LayerNorm, no residual) (|o_j|^2 = h2(j), no residual);
  * "about 1/i": sympy limit of i |o_i|^2 as i -> oo (= 1) and as lam -> 0 (= 1 for every i);
  * the claim outside its setting: with alpha > 0, |o_i|^2 -> alpha (sympy limit), not 1/i;
  * Monte Carlo: |o_i|^2 means of layer 1 at d = 16, 64, 256 within k SE + R/d^2 of limit + c/d (the
    support) and at d = 10^12 within k SE of the limit (implementation consistency),
    alpha = 0 and alpha = 0.5.
"""
from __future__ import annotations

import sympy

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import claim
from lnrecency.claims.mc_checks import grouped, mc_means, setting
from lnrecency.inference.evidence import Evidence, item, ladder, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.records import MCMeans, ProofRecord
from lnrecency.inference.verdicts import decide
from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.limit import limit_trajectory
from lnrecency.theory.proofs import proof_h_decreasing

ID = "C7"
N_MC = 8  # the Monte Carlo checks' sequence length (entries (i, i), i = 1..N_MC)
STATEMENT = declared(ID).text("statement")
SHRINK_TO_ZERO = declared(ID).text("shrink_to_zero")
EXTENSION = declared(ID).text("extension")


@record
class ExactIdentity(Evidence):
    """At one lam: the limit's O_ii equals sum_k P_ik^2, and equals the candidate formula, on every row."""

    sum_of_squares: bool = item(key="O_ii - sum_k P_ik^2 == 0")
    formula: bool = item(key="O_ii - formula == 0")


@record
class OutputNormEvidence(Evidence):
    closed_form: str
    closed_form_equals_h2_at_alpha0: bool
    exact_recursion: dict  # {lam: ExactIdentity}
    proof: ProofRecord
    limit_i_to_oo_of_i_osq: str
    limit_lam_to_0_of_i_osq: str
    i_osq_at_lam1: dict  # {i: i |o_i|^2}
    mc_means: MCMeans

    @property
    def verdict(self) -> str:
        """The row's verdict, decided here once (the evaluator reads it; a stored row is re-decided by it): the
        closed form, the exact recursion on every row, the proof and both limits, corroborated by the means."""
        exact = self.closed_form_equals_h2_at_alpha0 and all(
            v.sum_of_squares and v.formula for v in self.exact_recursion.values())
        ok = exact and self.proof.proven and self.limit_i_to_oo_of_i_osq == "1" and self.limit_lam_to_0_of_i_osq == "1"
        return decide(ok, self.mc_means.passed)


@record
class FloorEvidence(Evidence):
    """The limit of |o_i|^2 as i -> oo at one alpha (the floor alpha), with Monte Carlo where alpha > 0."""

    limit_i_to_oo_of_osq: str
    floor_formula: str
    mc_means: MCMeans | None = item(omit_none=True)

    @property
    def verdict(self) -> str:
        """Tends to 0 (the exact limit), the means, where run, only able to take it back."""
        v = ladder(self.limit_i_to_oo_of_osq == "0")
        return "inconclusive" if v == "confirmed" and self.mc_means is not None and not self.mc_means.passed else v


def osq_formula():
    """The claimed closed form |o_i|^2 = sum_k P_ik^2 = (E^2 + i - 1)/(E + i - 1)^2, E = e^lam."""

    E = sympy.exp(cf.lam)
    return (E ** 2 + cf.i - 1) / (E + cf.i - 1) ** 2


def exact_identity(candidate=None, n: int = 6) -> dict[str, ExactIdentity]:
    """Exact (sympy) comparison of the limit's O_ii with sum_k P_ik^2 and with ``candidate`` (a sympy
    expression in theory.closed_forms.i and lam; default :func:`osq_formula`), lam in {1, 1/2}."""

    candidate = osq_formula() if candidate is None else candidate
    out = {}
    for lam in (sympy.Integer(1), sympy.Rational(1, 2)):
        tr = limit_trajectory(n, 1, exact=True, norm="layernorm", lam=lam, alpha=0)
        layer = tr.layers[0]
        diffs = [sympy.simplify(layer.output_gram[q, q] - sum(layer.weights[q, m] ** 2 for m in range(q + 1)))
                 for q in range(n)]
        closed = [sympy.simplify(layer.output_gram[q, q] - candidate.subs({cf.i: q + 1, cf.lam: lam}))
                  for q in range(n)]
        out[str(lam)] = ExactIdentity(sum_of_squares=all(x == 0 for x in diffs), formula=all(x == 0 for x in closed))
    return out


# ---- the claim's report tables, figures and notebook cells ----------------------------------------


@claim(ID)
def evaluate(*, quick: bool = False, progress=None, seed: int = 20260707) -> list:
    """C7's rows. ``quick`` changes nothing here: the exact parts are exact, and the one Monte Carlo check (4000
    draws at n = N_MC) already runs at the size of the other claims' quick checks."""
    i, lam, alpha, j = cf.i, cf.lam, cf.alpha, cf.j
    osq = osq_formula()
    h2 = cf.closed_forms(ModelConfig(norm="layernorm")).h2
    same_as_h2 = sympy.simplify(h2.subs(alpha, 0).subs(j, i) - osq) == 0
    ident = exact_identity()
    proof = proof_h_decreasing(ModelConfig(norm="layernorm"))
    lim_i = sympy.limit(i * osq, i, sympy.oo)
    lim_lam = sympy.simplify(sympy.limit(i * osq, lam, 0))
    floor = sympy.limit(h2.subs(j, i), i, sympy.oo)
    numbers = {str(q): float((q * osq).subs({i: q, lam: 1})) for q in (2, 10, 100, 1000)}
    cfg = ModelConfig(norm="layernorm", alpha=0.0)
    n = N_MC
    means = mc_means("C7[alpha=0]", cfg, n, 1, [(q, q) for q in range(1, n + 1)], quantity="osq", samples=4000,
                     seed=seed, progress=progress)
    ev = OutputNormEvidence(closed_form=str(osq), closed_form_equals_h2_at_alpha0=bool(same_as_h2),
                            exact_recursion=ident, proof=ProofRecord.of(proof), limit_i_to_oo_of_i_osq=str(lim_i),
                            limit_lam_to_0_of_i_osq=str(lim_lam), i_osq_at_lam1=numbers, mc_means=means)
    out = grouped(ID, STATEMENT, {"layer": 1}, [(setting(cfg, lam="any > 0"), ev.verdict, ev)])
    items, extension = [], []
    for a in (0.0, 0.5):
        c = cfg.replace(alpha=a)
        f = sympy.simplify(floor.subs(alpha, sympy.nsimplify(a)))
        m = None
        if a:
            m = mc_means(f"C7[alpha={a}]", c, n, 1, [(q, q) for q in range(1, n + 1)], quantity="osq",
                         samples=4000, seed=seed + 1, progress=progress)
        fl = FloorEvidence(limit_i_to_oo_of_osq=str(f), floor_formula=str(floor), mc_means=m)
        (extension if a else items).append((setting(c, lam="any > 0"), fl.verdict, fl))
    out += grouped(ID, SHRINK_TO_ZERO, {"layer": 1}, items)
    out += grouped(ID, EXTENSION, {"layer": 1}, extension,
                   lambda v, g: ("It does not extend: |o_i|^2 -> alpha (a floor, "
                                 + ", ".join(e.limit_i_to_oo_of_osq for _, e in g)
                                 + " here), not 0; the seed restricts itself to weakly correlated vectors, "
                                   "where the claim is confirmed.") if v == "refuted" else "",
                   lambda v, g: Qualifiers(
                       where="correlated tokens, alpha " + ", ".join(f"{s['alpha']:g}" for s, _ in g),
                       fails="as the norm tends to alpha, not 0" if v == "refuted" else "",
                       holds="" if v == "refuted" else "the norm tends to 0", exact=True))
    return out
