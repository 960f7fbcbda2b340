"""Theory against simulation for any setting: the exact limit, the first-order theory (limit + c/d), the Monte Carlo
mean and its SE, their z-scores, and a calibrated decision per entry (``lnrecency compare``, :func:`compare`).

    >>> from lnrecency.experiments.compare import compare
    >>> res = compare(norm="layernorm", residual=True, alpha=0.3, d=64, n=4, layers=2, samples=2000, seed=0)
    >>> res.flagged()                     # the entries whose Monte Carlo mean disagrees with limit + c/d
    []
    >>> res.table("scores", 2).columns[:4]
    ('alpha', 'i', 'j', 'limit')

The quantities (:data:`QUANTITIES`), each what a claim of the catalogue checks:

* ``scores``: S^(l)_ij, j <= i, every layer (T1, C2, C3, C6, C9);
* ``output-norm``: |o_i|^2, the attention output's squared norm, every layer (C7);
* ``output-variance``: d Var_coord(o_i), every layer (C8); its first-order theory exists for a centring
  normalisation only (the output is then centred and d Var_coord(o_i) = |o_i|^2 exactly); elsewhere the theory
  columns are empty and the decision reads "no theory";
* ``h``: h(j)^2 = |x_j^(1)|^2, the first layer's state (C4's curves; against alpha with several ``alphas``); without
  the residual it is layer 1's |o_j|^2. With the residual the simulation does not record the state x + gamma o, so
  ``h`` is refused there by name.

The decision. With E_d X = X_lim + c/d + r(d), r = O(1/d^2) (:mod:`lnrecency.theory.finite_width`), an entry
*agrees* when |MC - (X_lim + c/d)| <= k SE + R/d^2 + rounding, and *differs* otherwise:

* k is Bonferroni's at the family-wise false-alarm rate ``fwer`` (default 0.01) over every random entry of the call
  (all quantities, layers and alphas together), two-sided, normal tails; half of ``fwer`` goes to these checks, the
  other half to the remainder's upper confidence bounds below; both families are registered in the false-alarm
  budget (:func:`lnrecency.inference.budget.register`), so a test suite counts them;
* R bounds sup_{d >= d_ref} d^2 |r(d)|, measured by the same Monte Carlo at d_ref and 2 d_ref (seeds seed + 1 and
  seed + 2) as |y1| + 2 |y2| with each |y| = d^2 |MC - X_lim - c/d| replaced by its upper confidence bound: the rule
  of the claims' checks (:func:`lnrecency.inference.checks.remainder_bound`), resting on the same stated assumption
  (d^2 r(d) = e2 + e3/d beyond d_ref);
* rounding: 1e-12 relative to the prediction (float64 in both).

R is measured from the theory's own predictions, so an error e in the limit inflates R by about 9 d_ref^2 |e| and
R/d^2 by 9 (d_ref / d)^2 |e|, and an error e of c by about 5 d_ref |e|: a wrong limit can be rejected only where
d > 3 d_ref, a wrong c only where d > 5 d_ref. The default d_ref is max(2 + removed, d // 8), removed being the
directions the normalisation removes (1 for LayerNorm's centring, else 0): 8 at d = 64; each table states it.
Measured at d = 64, n = 6, 3 layers, 20,000 draws, fwer 0.01 (63 score entries a setting): five settings (LayerNorm,
none, RMSNorm, l2; residual on and off; alpha 0-0.6) gave no "differs" with the true theory, and 0-20 with c planted
1.5x too large (0 for LayerNorm at lam 4, 5 for none, 17-20 for the residual settings);
tests/experiments/test_compare.py plants c doubled and dropped at n = 4. The "detectable" column is the smallest
error of the prediction, not itself in R, that the check rejects with probability 0.8 (normal law): tolerance +
0.84 SE; a wrong c also raises R, so it needs about 1 / (1 - 5 d_ref / d) times more (2.7x at the default d_ref), a
wrong limit 1 / (1 - 9 (d_ref / d)^2) times more.

The estimator. The scores' Monte Carlo uses the *linear* control variate by default (first order on the uncentred
Gram, mean exactly 0: unbiased whatever c is, so the comparison does not lean on the theory it tests); ``"none"``
gives plain draws. The quadratic variate is not offered here: its mean uses c. Output norms and variances are plain
draws. ``se``: draw until every entry's SE is at most ``se`` (a pilot chooses the samples; ``samples`` is the cap).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

from lnrecency.choices import COMPARE_ESTIMATORS, COMPARE_QUANTITIES
from lnrecency.files.table_record import Table
from lnrecency.inference.budget import register
from lnrecency.inference.checks import mean_check, remainder_bound
from lnrecency.inference.estimates import is_deterministic, z_score
from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_choice, check_int, check_real

__all__ = ["QUANTITIES", "ESTIMATORS", "Comparison", "Entry", "compare", "default_d_ref", "POWER_Z"]

#: the quantities compared, and the scores' control variates offered (lnrecency.choices: the parser reads them)
QUANTITIES, ESTIMATORS = COMPARE_QUANTITIES, COMPARE_ESTIMATORS
ROUNDING = 1e-12
#: z of power 0.8 (the "detectable" column: tolerance + POWER_Z SE is rejected with probability 0.8)
POWER_Z = 0.8416212335729143
DEFAULT_SAMPLES = 20000
MAX_TABLE_N = 64
#: a call estimated above this many seconds is refused before any work (raise it with --max-seconds, or
#: LNRECENCY_MAX_SECONDS from Python)
MAX_SECONDS = 600.0


def estimate_seconds(n: int, layers: int, samples: int, alphas: int, estimator: str) -> float:
    """The call's time on this project's 2-core machine, before any work: three simulations (d, d_ref, 2 d_ref) per
    alpha, each at the Monte Carlo's own estimate (:mod:`lnrecency.numerics.precision`); the theory is seconds."""
    from lnrecency.numerics.precision import cost
    from lnrecency.numerics.precision import estimate_seconds as simulation_seconds

    return 3 * alphas * simulation_seconds(n, layers, samples) * cost(estimator)


def default_d_ref(d: int, removed: int) -> int:
    """The width the remainder is measured at (and twice it): max(2 + removed, d // 8), so that a wrong c can be
    rejected (d > 5 d_ref; module docstring)."""
    return max(2 + removed, d // 8)


@dataclass(frozen=True)
class Entry:
    """One compared entry: quantity, layer (1-based), alpha, i, j (j = i for per-token quantities; h: i = j)."""

    quantity: str
    layer: int
    alpha: float
    i: int
    j: int
    limit: float | None
    c: float | None
    first_order: float | None
    mc: float
    se: float
    z_limit: float | None
    z_first_order: float | None
    tolerance: float | None
    detectable: float | None
    decision: str  # "agrees", "differs" or "no theory"

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


@dataclass(frozen=True)
class Comparison:
    """What :func:`compare` found: the setting, the estimator, the family-wise rate and k, the remainder bound per
    (alpha, quantity, layer), and every :class:`Entry`."""

    config: dict
    alphas: tuple
    d: int
    n: int
    layers: int
    quantities: tuple
    samples: dict  # alpha -> samples drawn at d
    seed: int
    estimator: str
    fwer: float
    k: float
    d_ref: int
    remainder: dict = field(repr=False)  # (alpha, quantity, layer) -> {"R", "bound", "k"}
    entries: tuple = field(repr=False)

    def flagged(self) -> list[Entry]:
        """The entries whose Monte Carlo mean differs from limit + c/d beyond the tolerance."""
        return [e for e in self.entries if e.decision == "differs"]

    def rows(self) -> list[dict]:
        return [e.as_dict() for e in self.entries]

    def to_frame(self):
        """Every entry as a pandas DataFrame (pandas is an optional extra)."""
        try:
            import pandas as pd
        except ImportError as exc:
            raise ImportError("Comparison.to_frame needs pandas (pip install pandas); rows() gives the same rows "
                              "as dicts") from exc
        return pd.DataFrame(self.rows())

    def table(self, quantity: str, layer: int) -> Table:
        """One table: ``quantity`` at ``layer`` (1-based), a row per alpha and entry."""
        check_choice("quantity", quantity, self.quantities)
        check_int("layer", layer, minimum=1, maximum=1 if quantity == "h" else self.layers)
        rows = [e for e in self.entries if e.quantity == quantity and e.layer == layer]
        keys = ("alpha", "i", "j") if quantity == "scores" else ("alpha", "j") if quantity == "h" else ("alpha", "i")
        cols = (*keys, "limit", "c", "limit + c/d", "MC mean", "MC SE", "z (limit)", "z (limit + c/d)", "tolerance",
                "detectable", "decision")
        body = tuple((*(getattr(e, k) for k in keys), e.limit, e.c, e.first_order, e.mc, e.se, e.z_limit,
                      e.z_first_order, e.tolerance, e.detectable, e.decision) for e in rows)
        what = {"scores": "S_ij", "output-norm": "|o_i|^2", "output-variance": "d Var_coord(o_i)",
                "h": "h(j)^2 = |x_j^(1)|^2"}[quantity]
        rem = [self.remainder[(a, quantity, layer)] for a in self.alphas if (a, quantity, layer) in self.remainder]
        notes = (f"decision: agrees when |MC - (limit + c/d)| <= k SE + R/d^2 + {ROUNDING:g} relative rounding, with "
                 f"k = {self.k:.4g} (Bonferroni at family-wise rate {self.fwer / 2:g} over the call's "
                 f"{self._random()} random entries, two-sided; the other {self.fwer / 2:g} bounds R)",
                 "R/d^2 per alpha: " + ", ".join(f"{r['bound']:.3g} (R {r['R']:.3g})" for r in rem)
                 + f", R measured at d_ref = {self.d_ref} and {2 * self.d_ref} by this theory's own predictions "
                   f"(a wrong limit can be rejected only where d > 3 d_ref, a wrong c only where d > 5 d_ref)",
                 (f"estimator: {self.estimator} control variate for the scores, plain draws otherwise; samples "
                  if "scores" in self.quantities else "estimator: plain draws; samples ")
                 + ", ".join(f"{self.samples[a]}" for a in self.alphas) + f"; seed {self.seed}",
                 "detectable: the error of limit + c/d rejected with probability 0.8 (tolerance + 0.84 SE); an "
                 "entry without randomness (SE at float rounding, e.g. S_ii under a fixed-length norm) shows SE 0 and "
                 "no z")
        return Table(name=f"compare_{quantity.replace('-', '_')}_layer{layer}",
                     title=f"{what}, layer {layer}: theory against Monte Carlo at d = {self.d}",
                     caption=f"{self.config_label()}, n = {self.n}", columns=cols, rows=body, notes=notes,
                     key=len(keys))

    def _random(self) -> int:
        return sum(e.decision != "no theory" and not is_deterministic(e.mc, e.se) for e in self.entries)

    def config_label(self) -> str:
        c = self.config
        res = f"residual gamma {c['gamma']:g}" if c["residual"] else "no residual"
        return f"{c['norm']}, {res}, lam {c['lam']:g}, {c['embedding']} embeddings"

    def tables(self) -> list[Table]:
        return [self.table(q, layer) for q in self.quantities
                for layer in (range(1, 2) if q == "h" else range(1, self.layers + 1))]

    def to_json(self) -> dict:
        return {"config": self.config, "alphas": list(self.alphas), "d": self.d, "n": self.n, "layers": self.layers,
                "quantities": list(self.quantities), "samples": {f"{a:g}": s for a, s in self.samples.items()},
                "seed": self.seed, "estimator": self.estimator, "fwer": self.fwer, "k": self.k, "d_ref": self.d_ref,
                "remainder": [{"alpha": a, "quantity": q, "layer": lay, **r}
                              for (a, q, lay), r in self.remainder.items()],
                "entries": self.rows()}

    def figure(self):
        """A matplotlib Figure: per quantity and layer, the theory (limit dashed, limit + c/d solid) against the
        Monte Carlo points with 2 SE bars; scores along the last row i = n; h against j per alpha."""
        from matplotlib.figure import Figure

        panels = [(q, layer) for q in self.quantities
                  for layer in (range(1, 2) if q == "h" else range(1, self.layers + 1))]
        fig = Figure(figsize=(4.2 * min(len(panels), 3), 3.4 * math.ceil(len(panels) / 3)))
        for p, (q, layer) in enumerate(panels):
            ax = fig.add_subplot(math.ceil(len(panels) / 3), min(len(panels), 3), p + 1)
            for a in self.alphas:
                rows = [e for e in self.entries if e.quantity == q and e.layer == layer and e.alpha == a
                        and (q != "scores" or e.i == self.n)]
                x = [e.j if q in ("scores", "h") else e.i for e in rows]
                tag = f"alpha {a:g}: " if len(self.alphas) > 1 else ""
                if rows and rows[0].limit is not None:
                    line, = ax.plot(x, [e.first_order for e in rows], "-", label=f"{tag}limit + c/d")
                    ax.plot(x, [e.limit for e in rows], "--", color=line.get_color(), label=f"{tag}limit")
                ax.errorbar(x, [e.mc for e in rows], yerr=[2 * e.se for e in rows], fmt="o", ms=3, capsize=2,
                            label=f"{tag}Monte Carlo (2 SE)")
            ax.set_xlabel("key j" if q in ("scores", "h") else "token i")
            ax.set_title({"scores": f"S_nj, layer {layer}", "output-norm": f"|o_i|^2, layer {layer}",
                          "output-variance": f"d Var(o_i), layer {layer}", "h": "h(j)^2"}[q], fontsize=10)
            ax.legend(fontsize=9)
        fig.suptitle(f"{self.config_label()}, n = {self.n}, d = {self.d}", fontsize=10)
        fig.tight_layout()
        return fig


def _check(quantities, alphas, d, n, layers, samples, se, seed, estimator, fwer, d_ref, cfg: ModelConfig):
    quantities = tuple(dict.fromkeys(check_choice("quantity", q, QUANTITIES) for q in quantities))
    if not quantities:
        raise ValueError(f"quantities must name at least one of {', '.join(QUANTITIES)}")
    n = check_int("n", n, minimum=2, maximum=MAX_TABLE_N)
    layers = check_int("layers", layers, minimum=1, maximum=16)
    removed = cfg.normalisation.removed
    d = check_int("d", d, minimum=max(4, 2 * (removed + 2)))
    if samples is not None:
        samples = check_int("samples", samples, minimum=100, maximum=10 ** 8)
    if se is not None:
        se = check_real("se", se, low=0.0, low_open=True)
    seed = check_int("seed", seed, minimum=0)
    estimator = check_choice("estimator", estimator, ESTIMATORS)
    fwer = check_real("fwer", fwer, low=0.0, high=0.5, low_open=True)
    least = 2 + removed
    d_ref = default_d_ref(d, removed) if d_ref is None else check_int("d_ref", d_ref, minimum=least, maximum=d)
    if "h" in quantities and cfg.residual:
        raise ValueError("quantity 'h' with the residual: the simulation records the attention output o, not the "
                         "state x + gamma o that h measures there; compare 'output-norm' (layer 1) instead, or drop "
                         "the residual")
    alphas = tuple(dict.fromkeys(check_real("alpha", a, low=0.0, high=1.0, high_open=True) for a in alphas))
    if not alphas:
        raise ValueError("alphas must hold at least one alpha in [0, 1)")
    return quantities, alphas, d, n, layers, samples, se, seed, estimator, fwer, d_ref


def _arrays(sim, fw, quantity: str):
    """(MC mean, SE, limit, c) arrays of ``quantity``, shapes (L, n, n) for scores and (L, n) otherwise; limit and c
    None where the theory has nothing to say (output-variance without centring)."""
    if quantity == "scores":
        return sim.mean, sim.stderr, fw.limit, fw.c
    if quantity in ("output-norm", "h"):
        return sim.output_sq_norm_mean, sim.output_sq_norm_stderr, fw.limit_output_sq, fw.c_output_sq
    mean, se = sim.d * sim.output_var_mean, sim.d * sim.output_var_stderr
    if not sim.config.normalisation.centres:
        return mean, se, None, None
    return mean, se, fw.limit_output_sq, fw.c_output_sq


def _cells(quantity: str, n: int, layers: int):
    if quantity == "scores":
        return [(lay, i, j) for lay in range(1, layers + 1) for i in range(1, n + 1) for j in range(1, i + 1)]
    if quantity == "h":
        return [(1, j, j) for j in range(1, n + 1)]
    return [(lay, i, i) for lay in range(1, layers + 1) for i in range(1, n + 1)]


def _at(a, quantity: str, lay: int, i: int, j: int) -> float:
    return float(a[lay - 1, i - 1, j - 1] if quantity == "scores" else a[lay - 1, i - 1])


def compare(*, d: int = 64, n: int = 6, layers: int = 2, quantities=None, alphas=None,
            samples: int | None = None, se: float | None = None, seed: int = 0, estimator: str = "linear",
            fwer: float = 0.01, d_ref: int | None = None, config: ModelConfig | None = None,
            theory: Callable | None = None, executor: Any = None, progress: bool | None = None,
            **params: Any) -> Comparison:
    """Theory against Monte Carlo at width ``d`` for the model of ``config`` or the keywords (norm, residual, gamma,
    lam, alpha, embedding; :func:`lnrecency.model.config.make_config`), for each of ``quantities`` (module
    docstring; default every one that applies: all but ``h`` with the residual). ``alphas``: several alphas (one
    model each, the other parameters kept; default the model's alpha).
    ``samples`` (default 20,000; with ``se`` the most it may take) draws at d, and as many at d_ref and 2 d_ref.
    ``theory``: the theory compared, (config, n, layers) -> an object with ``limit``, ``c``, ``limit_output_sq``,
    ``c_output_sq`` (default :func:`lnrecency.theory.finite_width.finite_width`; a test plants a wrong one). The
    result is a function of the arguments and ``seed`` (whatever ``executor``)."""
    from lnrecency.numerics import simulate_scores
    from lnrecency.theory.finite_width import finite_width

    cfg = make_config(config, **params)
    if quantities is None:
        quantities = tuple(q for q in QUANTITIES if not (q == "h" and cfg.residual))
    elif isinstance(quantities, str):
        quantities = (quantities,)
    alphas = (cfg.alpha,) if alphas is None else tuple(alphas)
    (quantities, alphas, d, n, layers, samples, se, seed, estimator, fwer,
     d_ref) = _check(quantities, alphas, d, n, layers, samples, se, seed, estimator, fwer, d_ref, cfg)
    theory = theory or (lambda c, n_, lay_: finite_width(n_, lay_, config=c))
    sim_layers = layers if any(q != "h" for q in quantities) else 1
    cv = estimator if any(q == "scores" for q in quantities) else "none"
    if cv == "linear":
        from lnrecency.theory.width_jets import check_supported

        try:
            check_supported(cfg, control_variate=True)
        except ValueError:
            cv = "none"  # the variate's law is not expanded there (normalized embeddings with centring)
    kw = dict(method="gram", paired=False, progress=progress, executor=executor, control_variate=cv)
    count = samples or DEFAULT_SAMPLES
    from lnrecency.runtime.timelimit import refusal, time_limit

    if se is None:  # with se the pilot chooses the samples and the simulation checks its own estimate
        seconds = estimate_seconds(n, sim_layers, count, len(alphas), cv)
        if seconds > time_limit(MAX_SECONDS):
            raise refusal(f"{3 * len(alphas)} simulations of {count} draws (n={n}, layers={sim_layers})",
                          seconds, time_limit(MAX_SECONDS), "use fewer samples or alphas")
        if progress is not False:
            import sys

            print(f"compare: {len(alphas)} alpha(s) x 3 Monte Carlo runs of {count} draws at d = {d}, {d_ref} and "
                  f"{2 * d_ref} (n = {n}, {sim_layers} layer(s)): about {max(seconds, 0.1):.2g} s", file=sys.stderr)
    runs = {}
    for a in alphas:
        c_a = cfg.replace(alpha=a) if a != cfg.alpha else cfg
        fw = theory(c_a, n, sim_layers)
        main = (simulate_scores(n, sim_layers, d, samples, se=se, seed=seed, config=c_a, **kw) if se is not None
                else simulate_scores(n, sim_layers, d, count, seed=seed, config=c_a, **kw))
        refs = tuple(simulate_scores(n, sim_layers, dd, main.samples, seed=seed + q, config=c_a, **kw)
                     for q, dd in ((1, d_ref), (2, 2 * d_ref)))
        runs[a] = (fw, main, refs)
    # per alpha, quantity and layer: the entries' (limit, c, MC mean, SE) at d and at d_ref, 2 d_ref
    groups = []
    for a, (fw, main, refs) in runs.items():
        for q in quantities:
            arrays = [_arrays(sim, fw, q) for sim in (main, *refs)]
            lim, c = arrays[0][2], arrays[0][3]
            by_layer: dict = {}
            for lay, i, j in _cells(q, n, layers):
                by_layer.setdefault(lay, []).append((i, j))
            for lay, cells in by_layer.items():
                rows = [(i, j, None if lim is None else _at(lim, q, lay, i, j), None if c is None else
                         _at(c, q, lay, i, j), [(sim.d, _at(m, q, lay, i, j), _at(s_, q, lay, i, j))
                                                for sim, (m, s_, _, _) in zip((main, *refs), arrays)])
                        for i, j in cells]
                groups.append((a, q, lay, rows))
    # the remainder's upper confidence bounds: Bonferroni at fwer / 2 over every random reference entry of the call
    ref_count = sum(not is_deterministic(m, s_) for _, _, _, rows in groups for _, _, lim, _, sims in rows
                    if lim is not None for _, m, s_ in sims[1:])
    name = f"compare {cfg.label()}, alphas {list(alphas)}, n={n}, layers={layers}, d={d}, seed={seed}"
    # both families enter the suite's false-alarm budget (lnrecency.inference.budget) as one decision each
    k_ref = register(f"{name}: remainder bound at d_ref={d_ref}", max(ref_count, 1), rate=fwer / 2, family=True)
    remainder: dict = {}
    pending = []
    for a, q, lay, rows in groups:
        bound = None
        if rows[0][2] is not None:
            big_r = remainder_bound([[(dd, m, s_, lim, c) for dd, m, s_ in sims[1:]]
                                     for _, _, lim, c, sims in rows], k_ref)
            bound = big_r / d ** 2
            remainder[(a, q, lay)] = {"R": big_r, "bound": bound, "k": k_ref}
        pending.extend((q, lay, a, i, j, lim, c, sims[0][1], sims[0][2], bound) for i, j, lim, c, sims in rows)
    random = sum(lim is not None and not is_deterministic(m, s) for (_, _, _, _, _, lim, _, m, s, _) in pending)
    k = register(f"{name}: means against limit + c/d", max(random, 1), rate=fwer / 2, family=True)
    entries = []
    for q, lay, a, i, j, lim, c, m, s, bound in pending:
        if lim is None:
            entries.append(Entry(q, lay, a, i, j, None, None, None, m, s, None, None, None, None, "no theory"))
            continue
        pred = lim + c / d
        exact = is_deterministic(m, s)  # SE at rounding (S_ii under a fixed-length norm): no z, checked to rounding
        if exact:
            s = 0.0
        chk = mean_check(m, s, pred, k=k, bias_bound=bound + ROUNDING * max(1.0, abs(pred)))
        entries.append(Entry(q, lay, a, i, j, lim, c, pred, m, s, None if exact else z_score(m - lim, s),
                             None if exact else chk.z, chk.tolerance, chk.tolerance + POWER_Z * s,
                             "agrees" if chk.passed else "differs"))
    return Comparison(config={k2: v for k2, v in cfg.as_dict().items() if k2 != "alpha"}, alphas=alphas, d=d, n=n,
                      layers=layers, quantities=quantities, samples={a: runs[a][1].samples for a in alphas},
                      seed=seed, estimator=cv, fwer=fwer, k=k, d_ref=d_ref, remainder=remainder,
                      entries=tuple(entries))
