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

from lnrecency.claims._common import grouped
from lnrecency.evidence import Evidence, item, record

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
    return [r for cid in BY_ID for r in BY_ID[cid](quick=quick, progress=progress)]


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


BY_ID = {"TM1": _slope_claim("TM1", "layernorm", "positive"), "TM2": _slope_claim("TM2", "none", "negative"),
         "TM3": tm3, "TM4": tm4, "TM5": tm5}
