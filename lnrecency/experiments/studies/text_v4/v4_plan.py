"""Plan v4's numbers (``lnrecency/data/thesis_text_plan_v4.md``), recomputed from the repository alone.

Every number the plan states is computed here from the published per-seed snapshots of plans v2 and v3
(``docs/thesis_text_v2.json``, ``docs/thesis_text_v3.json``) and the measured run times
(``lnrecency/data/costs.json``), with the fixed choices below (the target loss, the smallest effect of interest,
the family and its rate). Power is the noncentral t of :meth:`lnrecency.inference.seed_tests.SeedTest.power` at the
level the rule decides: the pair rule at Holm's first step over the family of three, one-sided 0.05 / 6 (and at its
last, one-sided 0.05 / 2).
"""
from __future__ import annotations

import math

import numpy as np

from lnrecency.experiments.plans.declared import study

__all__ = ["plan_path", "plan_sha256", "PLAN_SHA256", "TARGET_LOSS", "EFFECT_N1", "FAMILY", "FWER", "U_SEEDS",
           "crossing", "matched_sds", "n1_power", "seeds_needed", "u_power", "windows_needed", "cost_seconds",
           "design", "imposed_profiles"]

#: the SHA-256 of the plan as committed before any of its runs (a change to the plan is a new plan version)
PLAN_SHA256 = study("thesis-text-v4").pinned_sha256  # declared once, in lnrecency.experiments.plans.declared
#: N1's matched held-out loss: every run trains until an evaluation at or below it (v2's eight none runs all crossed
#: it, the last at 2.84M of their 3.0M tokens)
TARGET_LOSS = 4.25
#: N1's smallest effect of interest (logit per key): half of the no-BOS LayerNorm - none difference at equal tokens
#: (+0.0066 - +0.0036, plan v2's TV2 as issue 76 quotes it)
EFFECT_N1 = 0.0015
FAMILY = ("U1", "U2", "N1")
FWER = 0.05
#: U1 and U2: plan v2's seeds (its runs of the same cells are the intact comparison)
U_SEEDS = 8
#: U1 / U2: the between-seed SD assumed for a new intervention (v2's BOS LayerNorm SD, doubled, as plan v3 did)
U_SD_FACTOR = 2.0
#: the probe: one run's SE at most this fraction of the between-seed SD in every cell
NOISE_TARGET = 1.0 / 3.0
WINDOW_STEP = 64
#: N1's held-out evaluation every this many steps (the stop is at the first evaluation at or below the target)
N1_EVAL_EVERY = 5
#: the training cap of an N1 run: twice plan v2's steps
N1_CAP_FACTOR = 2
#: an evaluation's cost in training steps: eval_sequences / batch sequences forward only, a training step being
#: about three forwards (forward and backward)
EVAL_STEP_COST = 1.0 / 3.0
WORKERS = 2
BUDGET_SECONDS = 3 * 3600


#: the plan's declaration: its text (``PLAN.plan_path()``) and SHA-256 (``PLAN.plan_sha256()``), defined once there
PLAN = study("thesis-text-v4")
plan_path, plan_sha256 = PLAN.plan_path, PLAN.plan_sha256


def crossing(trajectory: list, target: float) -> tuple[float | None, float | None]:
    """(tokens, layer-2 slope) where a run's held-out loss first reaches ``target``, both interpolated linearly in
    log tokens between the evaluations around it (plan v3's matched-loss rule); (None, None) when it never does.
    ``trajectory``: [(tokens, loss, slope)] as the v2 snapshot publishes it."""
    for (t0, l0, s0), (t1, l1, s1) in zip(trajectory, trajectory[1:]):
        if l0 > target >= l1 and t0 > 0:
            f = (l0 - target) / (l0 - l1)
            return float(math.exp(math.log(t0) + f * (math.log(t1) - math.log(t0)))), float(s0 + f * (s1 - s0))
    return None, None


def _up(x: float, step: float) -> float:
    return math.ceil(round(x / step, 9)) * step


def matched_sds(v2: dict, v3: dict) -> dict:
    """Per no-BOS arm ("layernorm", "none"): the between-seed SD of the layer-2 slope at matched loss, published
    twice: at :data:`TARGET_LOSS` from v2's trajectories, and at v3's target (its M0 rows). The assumed SD is the
    larger of the two, rounded up to 1e-4 (each includes probe noise of 32 windows, more than v4's)."""
    out = {}
    for norm in ("layernorm", "none"):
        at_target = [crossing(r["trajectory"], TARGET_LOSS)[1] for r in v2["runs"][f"no bos {norm}"]]
        v3_rows = [r["matched_slope"] for r in v3["runs"][f"no bos {norm}"]]
        sd_v2, sd_v3 = float(np.std(at_target, ddof=1)), float(np.std(v3_rows, ddof=1))
        out[norm] = {"v2_at_target": sd_v2, "v3_m0": sd_v3, "assumed": _up(max(sd_v2, sd_v3), 1e-4),
                     "mean_at_target": float(np.mean(at_target))}
    return out


def _values(n: int, mean: float, sd: float) -> tuple:
    """n values whose mean and SD are exactly ``mean`` and ``sd`` (the design the power is computed for)."""
    z = np.linspace(-1.0, 1.0, n)
    z = (z - z.mean()) / z.std(ddof=1)
    return tuple(float(v) for v in mean + sd * z)


def n1_power(seeds: int, sd_ln: float, sd_none: float, effect: float = EFFECT_N1, alpha: float = FWER / 3) -> float:
    """N1's power: Welch's test of LayerNorm - none (``seeds`` per arm) confirming at the pair rule's level
    (one-sided alpha / 2) when the true difference is ``effect``."""
    from lnrecency.inference.seed_tests import SeedTest

    test = SeedTest(_values(seeds, 0.0, sd_ln), side="above", other=_values(seeds, 0.0, sd_none))
    return test.power(effect, alpha)


def seeds_needed(sd_ln: float, sd_none: float, effect: float = EFFECT_N1, alpha: float = FWER / 3,
                 power: float = 0.8) -> int:
    """The fewest seeds per arm for N1's power >= ``power`` at ``alpha`` (the pair rule's share: alpha / 2)."""
    for n in range(3, 400):
        if n1_power(n, sd_ln, sd_none, effect, alpha) >= power:
            return n
    raise ValueError(f"more than 400 seeds per arm needed for power {power} at effect {effect}")


def u_power(seeds: int, sd: float, effect: float, alpha: float = FWER / 3) -> float:
    """U1's and U2's power: one sample of ``seeds`` values against the fixed boundary, the true mean ``effect``
    beyond it."""
    from lnrecency.inference.seed_tests import SeedTest

    return SeedTest(_values(seeds, 0.0, sd), side="above").power(effect, alpha)


def windows_needed(v3: dict, sds: dict) -> dict:
    """Per cell of plan v4: the probe windows for one run's SE at most :data:`NOISE_TARGET` of the between-seed SD,
    from v3's measured SE on 320 windows (SE ~ 1 / sqrt(windows)): N1's cells against their assumed matched-loss SDs,
    U1 (it starts from the BOS none models) and U2 (from the BOS LayerNorm models) from v3's ratios of those cells.
    ``windows``: the largest, rounded up to a multiple of 64."""
    noise = v3["noise"]
    base = v3["settings"]["windows"]

    def need(se: float, sd: float) -> int:
        return math.ceil(base * (se / (NOISE_TARGET * sd)) ** 2)
    cells = {"N1 layernorm": need(noise["no bos layernorm"]["probe_se"], sds["layernorm"]["assumed"]),
             "N1 none": need(noise["no bos none"]["probe_se"], sds["none"]["assumed"]),
             "U1": need(noise["bos none"]["probe_se"], noise["bos none"]["seed_sd"]),
             "U2": need(noise["bos layernorm"]["probe_se"], noise["bos layernorm"]["seed_sd"])}
    return {"cells": cells, "windows": int(_up(max(cells.values()), WINDOW_STEP))}


def cost_seconds(costs: dict, v2: dict, n1_seeds: int, windows: int, v3_windows: int = 320) -> dict:
    """The training budget from the measured run times (``lnrecency/data/costs.json``): a full run of plan v2 costs
    its measured wall time x workers / runs (24 no-BOS runs on 2 workers); an N1 run the fraction of v2's tokens its
    arm needed to cross the target (the slowest of v2's eight seeds) with an evaluation every
    :data:`N1_EVAL_EVERY` steps; a probe v3's measured probe time per model scaled to the windows."""
    v2c, v3c = costs["commands"]["experiments thesis-text-v2"], costs["commands"]["experiments thesis-text-v3"]
    run = v2c["seconds"] * WORKERS / 24  # core-seconds of one full run (3.0M tokens)
    if "(58 s)" not in v3c["what"]:
        raise ValueError("lnrecency/data/costs.json no longer states plan v3's probe time (58 s)")
    probe = 58 * WORKERS / 48 * windows / v3_windows  # v3: 48 models probed on 320 windows in 58 s on 2 workers
    tokens = v2["runs"]["no bos none"][0]["trajectory"][-1][0]
    frac = {norm: max(crossing(r["trajectory"], TARGET_LOSS)[0] for r in v2["runs"][f"no bos {norm}"]) / tokens
            for norm in ("layernorm", "none")}
    extra = 1.0 + EVAL_STEP_COST * (128 / 32) / N1_EVAL_EVERY  # v2's 128 held-out sequences, batch 32
    u = 2 * U_SEEDS * run
    n1 = n1_seeds * run * extra * (frac["layernorm"] + frac["none"])
    probes = (2 * U_SEEDS + 2 * n1_seeds) * probe
    total = u + n1 + probes
    return {"run_core_seconds": run, "fraction_of_tokens": frac, "eval_factor": extra, "u_core_seconds": u,
            "n1_core_seconds": n1, "probe_core_seconds": probes, "core_seconds": total,
            "wall_seconds": total / WORKERS, "fits": total / WORKERS <= BUDGET_SECONDS}


def design(v2: dict, v3: dict, costs: dict) -> dict:
    """Every number plan v4 states, from the snapshots ``v2``, ``v3`` (the JSON of docs/thesis_text_v2.json and
    docs/thesis_text_v3.json) and ``costs`` (lnrecency/data/costs.json)."""
    sds = matched_sds(v2, v3)
    ln_slopes = [r["slope"] for r in v2["runs"]["bos layernorm"]]
    ln_mean, ln_sd = float(np.mean(ln_slopes)), float(np.std(ln_slopes, ddof=1))
    none_mean = float(np.mean([r["slope"] for r in v2["runs"]["bos none"]]))
    boundary = ln_mean / 2
    effect = min(ln_mean - boundary, boundary - none_mean)  # U1 at the LayerNorm level, U2 at the none level
    u_sd = _up(U_SD_FACTOR * ln_sd, 1e-3)
    seeds = seeds_needed(sds["layernorm"]["assumed"], sds["none"]["assumed"])
    win = windows_needed(v3, sds)
    return {"target_loss": TARGET_LOSS, "effect_n1": EFFECT_N1, "sds": sds, "n1_seeds": seeds,
            "n1_power_first": n1_power(seeds, sds["layernorm"]["assumed"], sds["none"]["assumed"]),
            "n1_power_last": n1_power(seeds, sds["layernorm"]["assumed"], sds["none"]["assumed"], alpha=FWER),
            "u_boundary": boundary, "u_effect": effect, "u_sd": u_sd, "bos_layernorm_mean": ln_mean,
            "bos_none_mean": none_mean, "u_power_first": u_power(U_SEEDS, u_sd, effect),
            "u_power_last": u_power(U_SEEDS, u_sd, effect, alpha=FWER),
            "windows": win, "cost": cost_seconds(costs, v2, seeds, win["windows"], v3["settings"]["windows"])}


def imposed_profiles(v2: dict) -> dict:
    """The layer-1 first-key shares U1 and U2 impose, row by row (query i = 1..n; row 1 sees only the first key):
    the published mean of plan v2's BOS cells (mean over heads and seeds), "layernorm" for U1 and "none" for U2."""
    return {norm: [float(x) for x in v2["cells"][f"bos {norm}"]["first_share_rows"]] for norm in ("layernorm", "none")}
