"""A planted registration for tests/inference/test_xdist_budget.py (not collected by the suite: not named test_*.py).
Its rate is the environment's LNRECENCY_PLANTED_RATE."""
import os

from lnrecency.inference.stats import register


def test_register_a():
    register("planted: xdist budget a", 1, rate=float(os.environ["LNRECENCY_PLANTED_RATE"]))
