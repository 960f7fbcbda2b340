"""Plan v5's numbers (``lnrecency/data/thesis_text_plan_v5.md``), recomputed from the repository alone.

Every number the plan states is computed here from the published per-seed snapshots of plans v2, v3 and v4
(``docs/thesis_text_v2.json``, ``docs/thesis_text_v3.json``, ``docs/thesis_text_v4.json``) and the measured run times
(``lnrecency/data/costs.json``), with the fixed choices below. Power is the noncentral t of
:meth:`lnrecency.inference.seed_tests.SeedTest.power` at the level the rule decides: the pair rule at Holm's first
step of its family (F and P: seven tests, one-sided 0.05 / 14; T: three, 0.05 / 6) and at its last (0.05 / 2).
"""
from __future__ import annotations

import math

import numpy as np

from lnrecency.experiments.plans.declared import study
from lnrecency.experiments.studies.text_v4 import v4_plan

__all__ = ["plan_sha256", "FAMILIES", "FWER", "FP_SEEDS", "T_SEEDS", "LEVELS", "TOKEN_STEPS", "flat_levels",
           "predictions", "design"]

#: the SHA-256 of the plan as committed before any of its runs (declared once, in lnrecency.experiments.plans.declared)
PLAN_SHA256 = study("thesis-text-v5").pinned_sha256
#: two Holm families, each at family-wise rate FWER (F and the parts with BOS, T without; declared once, with the
#: plan: the plan's P1-P4 are D1-D4 there, as Wu's experiment holds P1-P6)
FAMILIES = study("thesis-text-v5").holm_families()
FWER = 0.05
_FIELDS = dict(study("thesis-text-v5").arms.fields)  # the plan's settings, declared once with its arms
#: F and P: seeds per arm (the power below holds at the SD plan v4 measured, rounded up)
FP_SEEDS = len(_FIELDS["fp_seeds"])
#: T: seeds per arm
T_SEEDS = len(_FIELDS["t_seeds"])
#: the held-out losses at which T's runs are probed (the first evaluation at or below each), and the steps (every
#: run's tokens: 2048 a step) at which they are probed at equal tokens
LEVELS = _FIELDS["levels"]
TOKEN_STEPS = _FIELDS["token_steps"]
T_EVAL_EVERY = _FIELDS["t_eval_every"]
#: F and P's assumed between-seed SD: the larger of plan v4's two measured U cells (0.0215, 0.0179), rounded up
FP_SD_STEP = 0.005
WINDOWS_FP = _FIELDS["windows"]
WINDOWS_T = _FIELDS["t_windows"]


plan_sha256 = study("thesis-text-v5").plan_sha256  # the plan text's SHA-256 as shipped (defined once, with it)


def _up(x: float, step: float) -> float:
    return math.ceil(round(x / step, 9)) * step


def flat_levels(v2: dict) -> dict:
    """F's flat shares of layer 1's first key: 0 (no sink), the mean over query rows 2..n of plan v2's BOS LayerNorm
    profile and of its BOS none profile (the profiles plan v4 imposed)."""
    prof = v4_plan.imposed_profiles(v2)
    return {"zero": 0.0, "layernorm": float(np.mean(prof["layernorm"][1:])), "none": float(np.mean(prof["none"][1:]))}


def predictions(v2: dict, v3: dict) -> dict:
    """The slopes plan v5 predicts before its runs, from published rows only.

    F: plan v3's path decomposition of the intact BOS LayerNorm models (8 seeds). A flat share makes the BOS path's
    logit constant along the keys before the per-token scale, so its numerator and interaction terms vanish; its scale
    term is taken proportional to the share's level (level / the LayerNorm profile's mean). The prediction keeps the
    trained weights (a model trained under the flat share may learn otherwise: that is what F measures).
    P: centring only: plan v3's C1 (the per-token scale fixed to its window mean, the rest of LayerNorm kept);
    RMSNorm: plan v2's BOS RMSNorm cell; the scale out of the gradient and the gain fixed: the intact LayerNorm cell
    (no published number bears on them)."""
    rows = v3["runs"]["bos layernorm"]
    lv = flat_levels(v2)

    def f(level: float) -> float:
        return float(np.mean([r["paths"]["own"]["slope"] + r["paths"]["other"]["slope"]
                              + r["paths"]["bos"]["scale"] * level / lv["layernorm"] for r in rows]))

    mean = lambda cell: float(np.mean([r["slope"] for r in v2["runs"][cell]]))  # noqa: E731
    return {"F1": f(lv["zero"]), "F2": f(lv["layernorm"]), "F3": f(lv["none"]),
            "D1": float(np.mean([r["scale_fixed"] for r in rows])), "D2": mean("bos rmsnorm"),
            "D3": mean("bos layernorm"), "D4": mean("bos layernorm")}


def design(v2: dict, v3: dict, v4: dict, costs: dict) -> dict:
    """Every number plan v5 states, from the snapshots and the measured costs."""
    ln, none = v2["runs"]["bos layernorm"], v2["runs"]["bos none"]
    ln_mean = float(np.mean([r["slope"] for r in ln]))
    boundary = ln_mean / 2
    effect = min(ln_mean - boundary, boundary - float(np.mean([r["slope"] for r in none])))
    u_sds = [float(np.std([r["slope"] for r in v4["runs"][c]], ddof=1)) for c in ("U1 none", "U2 layernorm")]
    sd = _up(max(u_sds), FP_SD_STEP)
    m, mt = len(FAMILIES["FP"]), len(FAMILIES["T"])
    fp_first = v4_plan.u_power(FP_SEEDS, sd, effect, alpha=FWER / m)
    fp_last = v4_plan.u_power(FP_SEEDS, sd, effect, alpha=FWER)
    nb = {k: [r["slope"] for r in v2["runs"][f"no bos {k}"]] for k in ("layernorm", "none")}
    t2_effect = float(np.mean(nb["layernorm"]) - np.mean(nb["none"]))  # plan v2's equal-token difference
    t2_sds = {k: _up(float(np.std(v, ddof=1)), 1e-4) for k, v in nb.items()}
    t2_first, t2_half = (v4_plan.n1_power(T_SEEDS, t2_sds["layernorm"], t2_sds["none"], e, alpha=FWER / mt)
                         for e in (t2_effect, t2_effect / 2))
    sds = v4_plan.matched_sds(v2, v3)
    t3_first = v4_plan.n1_power(T_SEEDS, sds["layernorm"]["assumed"], sds["none"]["assumed"], v4_plan.EFFECT_N1,
                                alpha=FWER / mt)
    t3_last = v4_plan.n1_power(T_SEEDS, sds["layernorm"]["assumed"], sds["none"]["assumed"], v4_plan.EFFECT_N1,
                               alpha=FWER)
    # T1: LayerNorm's slope at 3M tokens minus at loss 4.25, per seed; the difference of the published means (v2's
    # 3M rows, v4's N1 rows), its SD the two SDs added in quadrature (independent runs: conservative for a pair)
    n1 = [r["slope"] for r in v4["runs"]["N1 layernorm"]]
    t1_effect = float(np.mean(nb["layernorm"]) - np.mean(n1)) / 2
    t1_sd = _up(float(math.hypot(np.std(nb["layernorm"], ddof=1), np.std(n1, ddof=1))), 1e-4)
    t1_first = v4_plan.u_power(T_SEEDS, t1_sd, t1_effect, alpha=FWER / mt)
    # the cost: a full run of plan v2 (core-seconds), T's runs with an evaluation every 5 steps, the probes
    v2c = costs["commands"]["experiments thesis-text-v2"]
    run = v2c["seconds"] * v4_plan.WORKERS / 24
    probe = 58 * v4_plan.WORKERS / 48 / 320  # core-seconds per window (plan v3's probe)
    extra = 1.0 + v4_plan.EVAL_STEP_COST * (128 / 32) / T_EVAL_EVERY
    fp = 7 * FP_SEEDS * (run + probe * WINDOWS_FP)
    t = 2 * T_SEEDS * (run * extra + (len(LEVELS) + len(TOKEN_STEPS)) * probe * WINDOWS_T)
    return {"boundary": boundary, "effect": effect, "u_sds": u_sds, "fp_sd": sd, "fp_power_first": fp_first,
            "fp_power_last": fp_last, "levels": flat_levels(v2), "predictions": predictions(v2, v3),
            "t1_effect": t1_effect, "t1_sd": t1_sd, "t1_power_first": t1_first,
            "t2_effect": t2_effect, "t2_sds": t2_sds, "t2_power_first": t2_first, "t2_power_half": t2_half,
            "t3_power_first": t3_first, "t3_power_last": t3_last, "t3_sds": {k: v["assumed"] for k, v in sds.items()},
            "cost": {"run_core_seconds": run, "fp_core_seconds": fp, "t_core_seconds": t,
                     "wall_seconds": (fp + t) / v4_plan.WORKERS}}
