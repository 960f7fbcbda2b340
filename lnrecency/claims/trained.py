"""TM1-TM5: the paper's thesis in trained decoders (our formulation), from :mod:`lnrecency.models.thesis`.

Every verdict rests on at least 3 training seeds: the statistic is each run's layer recency slope (the
least-squares slope of the head-mean logit against the key, averaged over rows; lnrecency.models.probe), and
the verdict reads the sign of its 95% t-interval over seeds (Welch's interval for a difference of two
normalisations): above 0 confirms recency, below 0 earlier-token bias, an interval containing 0 decides
nothing. Stages: ``final`` (equal steps) and ``matched`` (equal held-out loss, see the experiment's module).

Scale and broken assumptions are part of every setting: the models have learned W_Q, W_K, W_V, W_O (the theory
has W = I), token embeddings that are neither isotropic nor fixed, an MLP (mlp2) and training; positions are
absent (NoPE), as in the authors' trained model.
"""
from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims._common import grouped
from lnrecency.claims._views import not_run_figure, verdict_note
from lnrecency.claims.declare import REGISTERED, FigureOutput, TableOutput, claim
from lnrecency.evidence import Evidence, item, record
from lnrecency.figure import ReportFigure, colour_bar
from lnrecency.tables import Table

SOURCE = "trained models, our formulation"
LN_RECENCY = ("Trained NoPE decoders with LayerNorm (pre-LN, residual) show recency at every layer >= 2: the "
              "head-mean attention logit increases with the key position (95% t-interval of the recency "
              "slope over training seeds above 0).")
NONE_EARLIER = ("Trained NoPE decoders without normalisation show earlier-token bias at every layer >= 2 (95% "
                "t-interval of the recency slope over training seeds below 0).")
RMS_LIKE_LN = ("RMSNorm behaves like LayerNorm: at every layer >= 2 the recency slope's t-interval over seeds "
               "has the same sign with either normalisation, and Welch's interval of their difference "
               "contains 0.")
INIT_THEORY = ("At initialisation (independent N(0, s^2) weights) the expected logits carry no position: the "
               "recency slope's t-interval over seeds contains 0 at every layer, and E S_ij^2 = s^4 |y_i|^2 "
               "|y_j|^2 (the ratio of the two sides is 1 within its t-interval over seeds and heads).")
MATCHED = ("The difference in recency slope between LayerNorm and no normalisation persists at matched "
           "held-out loss (Welch's 95% interval of the difference excludes 0 with the sign it has at equal "
           "steps).")
STATEMENTS = {"TM1": LN_RECENCY, "TM2": NONE_EARLIER, "TM3": RMS_LIKE_LN, "TM4": INIT_THEORY, "TM5": MATCHED}


@record
class SeedInterval(Evidence):
    """A statistic over training seeds: values, mean, t-interval (level), and the per-seed phases."""

    values: tuple
    mean: float
    low: float
    high: float
    level: float
    phases: dict | None = item(omit_none=True)

    @property
    def sign(self) -> str:
        return _sign(self.low, self.high)

    JSON_PROPERTIES = ("sign",)


@record
class SlopeEvidence(Evidence):
    slope: SeedInterval
    heldout_loss: tuple
    steps: tuple
    induction_score: tuple


@record
class CompareEvidence(Evidence):
    first: SeedInterval
    second: SeedInterval
    difference_low: float
    difference_high: float


@record
class InitEvidence(Evidence):
    slope: SeedInterval
    second_moment_ratio: SeedInterval


@record
class NotRun(Evidence):
    reason: str


def seed_interval(values, phases=None, level: float = 0.95) -> SeedInterval:
    from lnrecency.stats import t_interval

    m, lo, hi = t_interval(values, level)
    return SeedInterval(values=tuple(float(v) for v in values), mean=m, low=lo, high=hi, level=level, phases=phases)


def welch(a: SeedInterval, b: SeedInterval) -> tuple[float, float]:
    """Welch's t-interval (a.level) for mean(a) - mean(b) over independent seeds."""
    from scipy.stats import t as student_t

    x, y = np.asarray(a.values), np.asarray(b.values)
    va, vb = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
    se = math.sqrt(va + vb)
    if se == 0:
        return (a.mean - b.mean,) * 2
    df = (va + vb) ** 2 / (va ** 2 / (len(x) - 1) + vb ** 2 / (len(y) - 1))
    half = float(student_t.ppf(0.5 + a.level / 2, df)) * se
    return a.mean - b.mean - half, a.mean - b.mean + half


def _verdict(sign: str, want: str) -> str:
    return "confirmed" if sign == want else "inconclusive" if sign == "includes 0" else "refuted"


def _base(res) -> dict:
    st = res.settings
    return {"scale": f"d={st.d_model}, heads={st.n_heads}, vocab={st.vocab}, n={st.n}, steps={st.steps}, "
                     f"{len(st.seeds)} seeds, induction task, NoPE, pre-norm, residual",
            "breaks": "W_Q, W_K, W_V, W_O learned (theory: I); embeddings learned; MLP where arch=mlp2; trained"}


def _slope_items(res, norm: str, want: str) -> list:
    items = []
    for arch in res.settings.archs:
        runs = res.select(arch, norm)
        for stage in ("final", "matched"):
            for layer in range(2, res.n_layers(arch) + 1):
                si = seed_interval(res.slopes(arch, norm, stage, layer), res.phases(arch, norm, stage, layer))
                ev = SlopeEvidence(slope=si, heldout_loss=tuple(r["log"][-1]["heldout_loss"] for r in runs),
                                   steps=tuple(r[stage].get("step", r["log"][-1]["step"]) for r in runs),
                                   induction_score=tuple(r["induction_score"] for r in runs))
                items.append(({"arch": arch, "norm": norm, "stage": stage, "layer": layer},
                              _verdict(si.sign, want), ev))
    return items


def _describe(verdict: str, group: list) -> str:
    parts = [f"{s['arch']} layer {s['layer']} ({s['stage']}): slope {e.slope.mean:.3g} "
             f"[{e.slope.low:.3g}, {e.slope.high:.3g}], phases {e.slope.phases}" for s, e in group]
    return "; ".join(parts) + "."


def evaluate(*, quick: bool = False, progress=None) -> list:
    """TM1-TM5 (each registered with its own evaluator below)."""
    return [r for cid in STATEMENTS for r in REGISTERED[cid].evaluate(quick=quick, progress=progress)]


def available(quick: bool) -> bool:
    """Whether the thesis experiment of this mode is cached (the verdicts then cost no training)."""
    from lnrecency.models.thesis_config import ThesisSettings, is_cached, torch_version

    return torch_version() is not None and is_cached(ThesisSettings.preset(quick))


def cached_results(quick: bool):
    """The thesis experiment's results when cached, else None (nothing is trained)."""
    if not available(quick):
        return None
    from lnrecency.models.thesis import ThesisSettings, run_thesis

    return run_thesis(ThesisSettings.preset(quick))


def _results(quick: bool, progress):
    try:
        from lnrecency.models.thesis import ThesisSettings, run_thesis
    except ImportError as exc:  # torch not installed: say so, decide nothing
        return None, f"needs the models extra (python3 -m pip install -e '.[models]'): {exc}"
    return run_thesis(ThesisSettings.preset(quick), progress=bool(progress)), ""


def _not_run(cid: str, reason: str) -> list:
    from lnrecency.verdicts import ClaimResult

    return [ClaimResult(cid, SOURCE, STATEMENTS[cid], {}, "inconclusive", NotRun(reason=reason),
                        f"Not evaluated: {reason}")]


def _on_results(cid: str):
    """Decorator: an evaluator ``fn(results)`` of claim ``cid`` as ``run(quick=, progress=)``; an inconclusive
    "not evaluated" result when the experiment cannot run (no torch)."""
    def wrap(fn):
        def run(*, quick: bool = False, progress=None) -> list:
            res, why = _results(quick, progress)
            return _not_run(cid, why) if res is None else fn(res)
        return run
    return wrap


def _sign(low: float, high: float) -> str:
    return "positive" if low > 0 else "negative" if high < 0 else "includes 0"


def _slope_claim(cid: str, norm: str, want: str):
    return _on_results(cid)(lambda res: grouped(cid, SOURCE, STATEMENTS[cid], _base(res),
                                                _slope_items(res, norm, want), _describe))


@_on_results("TM3")
def tm3(res) -> list:
    items = []
    for arch in res.settings.archs:
        for stage in ("final", "matched"):
            for layer in range(2, res.n_layers(arch) + 1):
                ln = seed_interval(res.slopes(arch, "layernorm", stage, layer))
                rms = seed_interval(res.slopes(arch, "rmsnorm", stage, layer))
                lo, hi = welch(rms, ln)
                same = ln.sign == rms.sign and ln.sign != "includes 0"
                differ = {ln.sign, rms.sign} == {"positive", "negative"} or _sign(lo, hi) != "includes 0"
                v = "refuted" if differ else "confirmed" if same else "inconclusive"
                items.append(({"arch": arch, "stage": stage, "layer": layer}, v,
                              CompareEvidence(first=rms, second=ln, difference_low=lo, difference_high=hi)))

    def text(verdict, group):
        return "; ".join(f"{s['arch']} layer {s['layer']} ({s['stage']}): RMSNorm {e.first.mean:.3g} "
                         f"[{e.first.low:.3g}, {e.first.high:.3g}], LayerNorm {e.second.mean:.3g} "
                         f"[{e.second.low:.3g}, {e.second.high:.3g}], difference [{e.difference_low:.3g}, "
                         f"{e.difference_high:.3g}]" for s, e in group) + "."
    return grouped("TM3", SOURCE, RMS_LIKE_LN, _base(res), items, text)


@_on_results("TM4")
def tm4(res) -> list:
    items = []
    for arch in res.settings.archs:
        for norm in res.settings.norms:
            runs = res.select(arch, norm)
            for layer in range(1, res.n_layers(arch) + 1):
                slope = seed_interval(res.slopes(arch, norm, "init", layer), res.phases(arch, norm, "init", layer))
                ratio = seed_interval([x for r in runs for x in r["init"]["second_moment_ratio"][layer - 1]])
                ok = slope.sign == "includes 0" and ratio.low <= 1.0 <= ratio.high
                items.append(({"arch": arch, "norm": norm, "layer": layer, "stage": "init"},
                              "confirmed" if ok else "refuted", InitEvidence(slope=slope, second_moment_ratio=ratio)))

    def text(verdict, group):
        return "; ".join(f"{s['arch']}/{s['norm']} layer {s['layer']}: slope [{e.slope.low:.2g}, {e.slope.high:.2g}], "
                         f"E S^2 ratio {e.second_moment_ratio.mean:.3f} [{e.second_moment_ratio.low:.3f}, "
                         f"{e.second_moment_ratio.high:.3f}]" for s, e in group) + "."
    return grouped("TM4", SOURCE, INIT_THEORY, _base(res), items, text)


@_on_results("TM5")
def tm5(res) -> list:
    items = []
    for arch in res.settings.archs:
        for layer in range(2, res.n_layers(arch) + 1):
            ev = {}
            for stage in ("final", "matched"):
                ln = seed_interval(res.slopes(arch, "layernorm", stage, layer))
                none = seed_interval(res.slopes(arch, "none", stage, layer))
                lo, hi = welch(ln, none)
                ev[stage] = CompareEvidence(first=ln, second=none, difference_low=lo, difference_high=hi)
            f, m = ev["final"], ev["matched"]
            sign_f, sign_m = _sign(f.difference_low, f.difference_high), _sign(m.difference_low, m.difference_high)
            v = ("inconclusive" if sign_f == "includes 0" else "confirmed" if sign_m == sign_f
                 else "refuted")
            items.append(({"arch": arch, "layer": layer}, v, MatchedEvidence(equal_steps=f, matched_loss=m)))

    def text(verdict, group):
        return "; ".join(f"{s['arch']} layer {s['layer']}: LayerNorm - none = [{e.equal_steps.difference_low:.3g}, "
                         f"{e.equal_steps.difference_high:.3g}] at equal steps, [{e.matched_loss.difference_low:.3g}, "
                         f"{e.matched_loss.difference_high:.3g}] at matched loss" for s, e in group) + (
            ". A difference that vanishes at matched loss is not attributed to the normalisation."
            if verdict == "refuted" else ".")
    return grouped("TM5", SOURCE, MATCHED, _base(res), items, text)


@record
class MatchedEvidence(Evidence):
    equal_steps: CompareEvidence
    matched_loss: CompareEvidence


# ---- the claim's report tables, figures and notebook cells ----------------------------------------

def trained_table(data) -> Table:
    """TM1-TM5: per architecture, normalisation, stage and layer, the recency slope over training seeds."""
    columns = ["arch", "norm", "stage", "layer", "step (mean)", "held-out loss (mean)", "slope", "95% low",
               "95% high", "sign", "phases per seed", "RP (mean)", "seeds"]
    res = data.thesis()
    if res is None:  # no verdicts either: evaluating them would train (the report never trains)
        return Table("trained_phases", "Trained decoders (TM1-TM5): not run", "The thesis experiment is not in "
                     "the cache: run `lnrecency experiments thesis" + (" --quick" if data.settings.quick else "")
                     + "` (it trains and caches the models), then rebuild the report.", columns, [],
                     ["Verdicts TM1-TM5: not evaluated (the experiment is not cached)."])
    notes = verdict_note(data, "TM1", "TM2", "TM3", "TM4", "TM5")
    rows = []
    for arch in res.settings.archs:
        for norm in res.settings.norms:
            runs = res.select(arch, norm)
            for stage in ("init", "matched", "final"):
                steps = [0 if stage == "init" else r[stage].get("step", r["log"][-1]["step"]) for r in runs]
                losses = [next(e["heldout_loss"] for e in r["log"] if e["step"] == s) for r, s in zip(runs, steps)]
                for layer in range(1, res.n_layers(arch) + 1):
                    si = seed_interval(res.slopes(arch, norm, stage, layer), res.phases(arch, norm, stage, layer))
                    rp = float(np.mean([r[stage]["layers"][layer - 1]["rp"] for r in runs]))
                    rows.append([arch, norm, stage, layer, float(np.mean(steps)), float(np.mean(losses)), si.mean,
                                 si.low, si.high, si.sign, ", ".join(f"{k} {v}" for k, v in sorted(si.phases.items())),
                                 rp, len(runs)])
    st = res.settings
    caption = (f"NoPE decoders trained on the induction task (d = {st.d_model}, {st.n_heads} heads, vocabulary "
               f"{st.vocab}, n = {st.n}, {st.steps} steps, seeds {list(st.seeds)}). The recency slope is the "
               f"least-squares slope of the head-mean attention logit against the key position (keys below the "
               f"query), averaged over rows, on {st.probe_sequences} random-token sequences; its 95% t-interval "
               f"is over training seeds. Stages: init (step 0), matched (first evaluation at which the run's "
               f"held-out loss reached the largest final loss of its architecture), final (equal steps). Phases: "
               f"the probe's calibrated test per seed (lnrecency.models.probe).")
    return Table("trained_phases", "Trained decoders: recency per layer over training seeds (TM1-TM5)", caption,
                 columns, rows, notes)


TRAINED_STEMS = ("trained_logit_maps", "trained_phases", "trained_norm_profiles")


_NORM_COLOURS = {"layernorm": "tab:blue", "rmsnorm": "tab:green", "none": "tab:red"}


def trained_figures(data) -> list[ReportFigure]:
    """TM1-TM5: the authors' diagonal-normalised logit maps per layer (seed 0, after training), the recency
    slope per layer with its t-interval over seeds, and the head outputs' norm profile beside the law."""

    res = data.thesis()
    titles = ("Trained decoders: the authors' diagonal-normalised logit maps",
              "Trained decoders: recency slope per layer, 95% t-interval over training seeds",
              "Trained decoders: head-output norm against position, beside the law of an average")
    if res is None:
        return [not_run_figure(stem, t, data.settings.quick) for stem, t in zip(TRAINED_STEMS, titles)]
    st = res.settings
    arch = max(st.archs, key=res.n_layers)
    L = res.n_layers(arch)
    fig = Figure(figsize=(3.3 * L, 2.9 * len(st.norms)))
    axes = np.atleast_2d(fig.subplots(len(st.norms), L, squeeze=False))
    for r_, norm in enumerate(st.norms):
        run = res.select(arch, norm)[0]
        for c_ in range(L):
            m = np.array(run["final"]["layers"][c_]["diag_normalised"], dtype=float)
            m[np.triu_indices(m.shape[0], k=1)] = np.nan
            ax = axes[r_, c_]
            im = ax.imshow(m, cmap="magma")
            colour_bar(ax, im)
            ax.set_title(f"{norm}, layer {c_ + 1}", fontsize=9)
            ax.set_xlabel("key position", fontsize=8)
            ax.set_ylabel("query position", fontsize=8)
    fig.suptitle(f"{titles[0]} ({arch}, seed {st.seeds[0]}, after {st.steps} steps)", fontsize=10)
    fig.tight_layout()
    maps = ReportFigure(TRAINED_STEMS[0], titles[0],
                        f"Head-mean attention logits of the {arch} models (seed {st.seeds[0]}, after training) on "
                        f"{st.probe_sequences} random-token sequences, each lower diagonal minus its own mean (the "
                        f"authors' normalize_lower_diagonals, concept/with_params.ipynb): rows are normalisations, "
                        f"columns layers; brighter towards the diagonal within a row = recency.", fig)
    fig = Figure(figsize=(4.2 * len(st.archs), 3.6))
    axes = np.atleast_1d(fig.subplots(1, len(st.archs)))
    for ax, a in zip(axes, st.archs):
        layers = np.arange(1, res.n_layers(a) + 1)
        for q, norm in enumerate(st.norms):
            for stage, marker, shift in (("init", "o", -0.15), ("matched", "s", 0.0), ("final", "D", 0.15)):
                iv = [seed_interval(res.slopes(a, norm, stage, lay)) for lay in layers]
                mean = np.array([v.mean for v in iv])
                err = np.array([[v.mean - v.low for v in iv], [v.high - v.mean for v in iv]])
                ax.errorbar(layers + shift + 0.04 * (q - 1), mean, yerr=err, fmt=marker, ms=4, capsize=2, lw=0.8,
                            color=_NORM_COLOURS[norm], mfc="none" if stage == "init" else _NORM_COLOURS[norm],
                            label=f"{norm} {stage}" if a == st.archs[0] else None)
        ax.axhline(0.0, color="grey", lw=0.8)
        ax.set_xticks(layers)
        ax.set_title(a, fontsize=9)
        ax.set_xlabel("layer")
        ax.set_ylabel("recency slope (logit per key position)")
    axes[0].legend(fontsize=6, ncol=1)
    fig.suptitle(titles[1], fontsize=10)
    fig.tight_layout()
    phases = ReportFigure(TRAINED_STEMS[1], titles[1],
                          "Mean over training seeds of each layer's recency slope with its 95% t-interval, per "
                          "architecture and normalisation, at initialisation (open circles), at matched held-out "
                          "loss (squares) and after training (diamonds). Above 0: recency; below 0: earlier-token "
                          "bias.", fig)
    fig = Figure(figsize=(4.2 * len(st.norms), 3.4))
    axes = np.atleast_1d(fig.subplots(1, len(st.norms)))
    for ax, norm in zip(axes, st.norms):
        run = res.select(st.archs[0], norm)[0]
        for lay in run["final"]["layers"]:
            if lay["norm_profile"] is None:
                continue
            x = np.arange(1, len(lay["norm_profile"]) + 1)
            line, = ax.plot(x, lay["norm_profile"], "-", lw=1.4, label=f"layer {lay['layer']} measured")
            ax.plot(x, lay["norm_law"], ":", lw=1.4, color=line.get_color(), label=f"layer {lay['layer']} law")
        ax.set_yscale("log")
        ax.set_title(f"{st.archs[0]}, {norm}", fontsize=9)
        ax.set_xlabel("position i")
        ax.set_ylabel("E |o_i|^2 (head mean)")
        ax.legend(fontsize=7)
    fig.suptitle(titles[2], fontsize=10)
    fig.tight_layout()
    norms = ReportFigure(TRAINED_STEMS[2], titles[2],
                         "Squared norm of the head outputs o_i = sum_k P_ik v_k (mean over heads and sequences, "
                         f"seed {st.seeds[0]}, after training) against position, beside the law of an average of "
                         "weakly correlated vectors s2 (rho + (1 - rho) E sum_k P_ik^2) with s2 and rho measured "
                         "from the same value vectors (seed 002's mechanism).", fig)
    return [maps, phases, norms]


def _identity_probe_cell(data, display):
    # the decoder needs torch (the models extra), so the cell imports it itself
    from lnrecency.config import ModelConfig
    from lnrecency.models.config import DecoderConfig
    from lnrecency.models.decoder import build
    from lnrecency.models.probe import ProbeSettings, probe_decoder

    identity = build(DecoderConfig.identity_of(ModelConfig(norm="layernorm"), d=64, layers=2, n=12), 0)
    pr = probe_decoder(identity, ProbeSettings(n=12, sequences=512))
    display([(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers])


def _small_training_cell(data, display):
    from lnrecency.models.config import DecoderConfig
    from lnrecency.models.probe import ProbeSettings, probe_decoder
    from lnrecency.models.train import TrainSettings, train

    cfg = DecoderConfig(vocab=64, d_model=64, n_layers=2, n_heads=4, context=32)
    run = train(cfg, TrainSettings(steps=300, n=32, eval_every=100))
    pr = probe_decoder(run.model, ProbeSettings(n=32, sequences=128))
    print(run.log[-1])
    display([(lp.layer, lp.phase, round(lp.slope, 4), round(lp.slope_se, 4)) for lp in pr.layers])


claim("TM1", "trained decoders: LayerNorm gives recency at layers >= 2", training=True,
      tables=(TableOutput("trained_phases", "trained NoPE decoders: recency slope per layer with its t-interval over "
                                            "training seeds, phases, at init / matched loss / equal steps",
                          trained_table),),
      figures=(FigureOutput("trained decoders: the authors' diagonal-normalised logit maps, phase per layer with CIs, "
                            "norm profiles against the law", trained_figures, TRAINED_STEMS),),
      notebook="08_trained_decoders",
      cells=("The parameter-free model is one configuration of the decoder (W = I, the theory's N): its probe "
             "reproduces the theory's layer-2 recency.", _identity_probe_cell,
             "A small NoPE decoder trained here (300 steps, a few seconds), probed the same way:", _small_training_cell,
             "Trained NoPE decoders (`lnrecency experiments thesis`; cached). Each row: an architecture, a "
             "normalisation, a stage, a layer; the recency slope's t-interval over training seeds and the per-seed "
             "phases.", trained_table, trained_figures))(_slope_claim("TM1", "layernorm", "positive"))
claim("TM2", "trained decoders: no normalisation gives earlier-token bias", training=True)(
    _slope_claim("TM2", "none", "negative"))
claim("TM3", "trained decoders: RMSNorm behaves like LayerNorm", training=True)(tm3)
claim("TM4", "trained decoders at initialisation: the random-W theory", training=True)(tm4)
claim("TM5", "trained decoders: LayerNorm vs none at matched held-out loss", training=True)(tm5)
