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

import numpy as np
import sympy
from matplotlib.figure import Figure

from lnrecency.claims.catalog import declared
from lnrecency.claims.declare import FigureOutput, TableOutput, claim
from lnrecency.claims.mc_checks import grouped, mc_means, setting
from lnrecency.claims.tables_and_plots import Curve, finish, means_table, model_config
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.inference.evidence import Evidence, item, record
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


@record
class FloorEvidence(Evidence):
    """The limit of |o_i|^2 as i -> oo at one alpha (the floor alpha), with Monte Carlo where alpha > 0."""

    limit_i_to_oo_of_osq: str
    floor_formula: str
    mc_means: MCMeans | None = item(omit_none=True)


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

def output_norm_curves(data) -> list[Curve]:
    """|o_i|^2 of layer 1 against the position i (LayerNorm, alpha = 0): limit, MC at each d."""
    s = data.settings
    c = model_config(norm="layernorm")
    n = max(s.lengths)
    i = np.arange(1, n + 1)
    theory = data.limit(c, n=n, layers=1).layers[0].output_norms ** 2
    curves = []
    for d in (s.ds[0], s.ds[-1]):
        sim = data.sim(c, d, n=n, layers=2, paired=False)
        curves.append(Curve(f"d = {d}", i, theory, i, sim.output_sq_norm_mean[0],
                            sim.output_sq_norm_stderr[0]))
    return curves


def output_norm_table(data) -> Table:
    """C7 (seed 002): the verdict's Monte Carlo means of |o_i|^2 (layer 1) against limit + c/d at each width, beside
    the limit identity sum_k P_ik^2 and the near-uniform reference 1/i."""
    def identity(where: dict, e) -> list:
        cfg = model_config(norm="layernorm", alpha=float(where.get("alpha", 0.0)))
        weights = data.limit(cfg, n=N_MC, layers=1).layers[0].weights
        return [float(np.sum(weights[e.i - 1] ** 2)), 1.0 / e.i]

    return means_table(data, ID, "c7_output_norm", "Seed 002: the attention output gets shorter with position",
                       extra_columns=("sum_k P_ik^2 limit", "1/i"), extra=identity,
                       caption="Here the quantity is |o_i|^2 of the first layer's attention output (LayerNorm, lam = "
                               "1), entry (i, i): its limit equals sum_k P_ik^2 at alpha = 0 (seed 002's identity) and "
                               "exceeds it for alpha > 0, where the output keeps a floor alpha.")


def output_norm_figure(data) -> ReportFigure:
    s = data.settings
    curves = output_norm_curves(data)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    ax.plot(curves[0].x, curves[0].y, "-", color="k", lw=1.6, label="limit sum_k P_ik^2")
    for col, cv in zip(("tab:orange", "tab:blue"), curves):
        ax.errorbar(cv.mc_x, cv.mc_mean, yerr=cv.mc_se, fmt="o", ms=3.5, color=col, capsize=2, lw=0.8,
                    label=f"MC {cv.label}")
    x = curves[0].x
    ax.plot(x, 1.0 / x, ":", color="grey", label="1/i (uniform attention)")
    ax.set_xscale("log")
    ax.set_yscale("log")
    title = "Seed 002: the attention output gets shorter with position"
    finish(fig, ax, title, "position i", "|o_i|^2, layer-1 attention output")
    caption = (f"Squared length of the layer-1 attention output o_i against the position i (LayerNorm, alpha = "
               f"0, lam = 1), log-log: the exact limit sum_k P_ik^2, Monte Carlo mean +- SE at d = {s.ds[0]} "
               f"and d = {s.ds[-1]} ({s.samples} samples), and the 1/i of uniform attention. The Monte Carlo points "
               f"are the report's own illustration runs (positions up to {max(s.lengths)}); the verdict's means are "
               f"in the c7_output_norm table.")
    return ReportFigure("seed002_output_norm", title, caption, fig)


def output_norm_figures(data) -> list[ReportFigure]:
    return [output_norm_figure(data)]


@claim(ID,
       tables=(TableOutput("c7_output_norm", "seed 002: |o_i|^2 against position, limit vs MC", output_norm_table),),
       figures=(FigureOutput("seed 002: output norm against position", output_norm_figures,
                             ("seed002_output_norm",)),),
       notebook="05_seeds_output_norm_and_variance", cells=(output_norm_table, output_norm_figures))
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
    exact_ok = same_as_h2 and all(v.sum_of_squares and v.formula for v in ident.values())
    ok = exact_ok and proof.proven and lim_i == 1 and lim_lam == 1
    cfg = ModelConfig(norm="layernorm", alpha=0.0)
    n = N_MC
    means = mc_means("C7[alpha=0]", cfg, n, 1, [(q, q) for q in range(1, n + 1)], quantity="osq", samples=4000,
                     seed=seed, progress=progress)
    ev = OutputNormEvidence(closed_form=str(osq), closed_form_equals_h2_at_alpha0=bool(same_as_h2),
                            exact_recursion=ident, proof=ProofRecord.of(proof), limit_i_to_oo_of_i_osq=str(lim_i),
                            limit_lam_to_0_of_i_osq=str(lim_lam), i_osq_at_lam1=numbers, mc_means=means)
    v = decide(ok, means.passed)
    out = grouped(ID, STATEMENT, {"layer": 1}, [(setting(cfg, lam="any > 0"), v, ev)])
    items, extension = [], []
    for a in (0.0, 0.5):
        c = cfg.replace(alpha=a)
        f = sympy.simplify(floor.subs(alpha, sympy.nsimplify(a)))
        m = None
        if a:
            m = mc_means(f"C7[alpha={a}]", c, n, 1, [(q, q) for q in range(1, n + 1)], quantity="osq",
                         samples=4000, seed=seed + 1, progress=progress)
        vv = "confirmed" if f.is_zero else "refuted"
        if m is not None and not m.passed:
            vv = "inconclusive"
        (extension if a else items).append((setting(c, lam="any > 0"), vv,
                                            FloorEvidence(limit_i_to_oo_of_osq=str(f), floor_formula=str(floor),
                                                          mc_means=m)))
    out += grouped(ID, SHRINK_TO_ZERO, {"layer": 1}, items)
    out += grouped(ID, EXTENSION, {"layer": 1}, extension,
                   lambda v, g: ("It does not extend: |o_i|^2 -> alpha (a floor, "
                                 + ", ".join(e.limit_i_to_oo_of_osq for _, e in g)
                                 + " here), not 0; the seed restricts itself to weakly correlated vectors, "
                                   "where the claim is confirmed.") if v == "refuted" else "")
    return out
