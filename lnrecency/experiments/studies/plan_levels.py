"""Plan v2's power at the level its rule decides (issue 67, item 5), and what the rule's doubling decided.

The plan (``lnrecency/data/thesis_text_plan_v2.md``, section "Power") computed each test's power one-sided at
Holm's first threshold 0.05 / 6. Its rule (:class:`lnrecency.inference.seed_tests.SeedTest`) decides a test by the
pair of opposite one-sided statements, p_pair = 2 min(p_confirm, p_refute): one-sided at 0.05 / 12 in effect. The
plan's verdicts stand; this module states the power at the rule's level from the same assumed designs, and names
the tests that the doubling alone left undecided.

>>> round(plan_power()["Q2"]["plan"], 2), round(plan_power()["Q2"]["rule"], 2)
(0.87, 0.77)
"""
from __future__ import annotations

import numpy as np

__all__ = ["PLAN_DESIGNS", "plan_power", "doubling_only", "V3_DESIGNS", "v3_power"]

#: the plan's assumed designs (its power table): test -> (mean, seed SD) of each arm and the assumed effect (for
#: Q6, the margin at a true difference of 0); 8 seeds per arm. Copied from the plan's table, which is fixed.
PLAN_DESIGNS = {
    "Q1": {"arms": ((0.0055, 0.00044),), "effect": 0.0055},
    "Q2": {"arms": ((0.0055, 0.00044), (0.0032, 0.00145)), "effect": 0.0055 - 0.0032},
    "Q3": {"arms": ((0.00067, 0.0008), (0.0032, 0.00145)), "effect": 0.0032 - 0.00067},
    "Q4": {"arms": ((-0.0645, 0.014),), "effect": 0.0645, "side": "below"},
    "Q5": {"arms": ((0.0028, 0.001),), "effect": 0.0028},
    "Q6": {"arms": ((0.0, 0.0236), (0.0, 0.0236)), "effect": 0.05, "rule": "equivalence"},
}
SEEDS, TESTS, FWER = 8, 6, 0.05


def _design(arms: tuple, rule: str, side: str = "above"):
    from lnrecency.inference.seed_tests import SeedTest

    z = np.linspace(-1.0, 1.0, SEEDS)
    z = (z - z.mean()) / z.std(ddof=1)  # a sample whose mean and SD are exactly the assumed ones

    def values(mean, sd):
        return tuple(float(v) for v in mean + sd * z)
    other = values(*arms[1]) if len(arms) > 1 else None
    if rule == "equivalence":
        return SeedTest(values(*arms[0]), rule="equivalence", side="within", margin=0.05, other=other)
    return SeedTest(values(*arms[0]), side=side, other=other)


def plan_power() -> dict:
    """Per test of :data:`PLAN_DESIGNS`: its power as the plan computed it (one-sided at 0.05 / 6) and at the level
    the rule decides (one-sided at 0.05 / 12), by the noncentral t (:meth:`SeedTest.power`, whose ``alpha`` is the
    pair's level: one-sided alpha / 2)."""
    out = {}
    for key, d in PLAN_DESIGNS.items():
        test = _design(d["arms"], d.get("rule", "directional"), d.get("side", "above"))
        out[key] = {"plan": test.power(d["effect"], 2 * FWER / TESTS), "rule": test.power(d["effect"], FWER / TESTS)}
    return out


def doubling_only(tests: dict) -> list[str]:
    """The tests (of a snapshot's ``tests``: p_confirm, p_refute, verdict) that the rule left inconclusive but that
    Holm at the same family-wise rate decides on the one-sided min(p_confirm, p_refute), undoubled: inconclusive
    only through the pair's doubling. A statement about the rule, not a verdict: the plan's rule stands."""
    from lnrecency.inference.seed_tests import holm

    keys = [k for k, t in tests.items() if t.get("p_confirm") is not None]
    single = [min(tests[k]["p_confirm"], tests[k]["p_refute"]) for k in keys]
    return [k for k, rej in zip(keys, holm(single, FWER)) if rej and tests[k]["verdict"] == "inconclusive"]


#: plan v3's assumed designs (lnrecency/data/thesis_text_plan_v3.md, "Power"), from plan v2's published per-seed
#: rows (docs/thesis_text_v2.json): test -> (mean, SD) of its per-seed value and the effect it is powered for; the
#: SDs are those of v2's paired value ablated - 0.5 x intact in the same cell (BOS LayerNorm 0.0069, no-BOS
#: LayerNorm 0.0006), doubled or more for a new intervention; M0's effect of interest +0.002 logit per key with
#: v2's between-seed SDs net of probe noise (0.0013-0.0018 -> 0.0015)
V3_DESIGNS = {
    "A1": {"arms": ((-0.038, 0.014),), "effect": 0.038, "side": "below"},
    "B1": {"arms": ((-0.038, 0.014),), "effect": 0.038, "side": "below"},
    "C1": {"arms": ((-0.038, 0.014),), "effect": 0.038, "side": "below"},
    "A0": {"arms": ((-0.002, 0.0012),), "effect": 0.002, "side": "below"},
    "C0": {"arms": ((-0.002, 0.0012),), "effect": 0.002, "side": "below"},
    "M0": {"arms": ((0.0056, 0.0015), (0.0036, 0.0015)), "effect": 0.002},
}
V3_TESTS = 5  # the primary family: A1, B1, C1, A0, C0 (M0 is secondary: its power is stated, not used)


def v3_power() -> dict:
    """Plan v3's power per test at the level its rule decides: the pair rule at Holm's first step (one-sided
    0.05 / 12) and at its last (one-sided 0.05 / 2), 8 seeds per arm, noncentral t (:meth:`SeedTest.power`)."""
    out = {}
    for key, d in V3_DESIGNS.items():
        test = _design(d["arms"], "directional", d.get("side", "above"))
        out[key] = {"first": test.power(d["effect"], FWER / V3_TESTS), "last": test.power(d["effect"], FWER)}
    return out
