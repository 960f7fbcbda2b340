"""pytest configuration of the whole suite (tests/ and proofs_check/).

* hypothesis profiles: "ci" (default; few examples, no deadline) and "thorough" (many examples),
  selected by the environment variable LNRECENCY_HYPOTHESIS=thorough. Both derandomised (fixed seed):
  the same run gives the same examples.
* the false-alarm budget: every statistical comparison of the suite (Monte Carlo means, orderings and
  frequencies in proofs_check/, the sampler's two-sample tests and mean checks in tests/) registers
  itself in lnrecency.stats.BUDGET;
  the terminal summary prints the union bound on the probability that a correct claim fails by chance
  in this run, and the suite asserts it is <= lnrecency.stats.SUITE_LIMIT (1e-6).
"""
from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

from lnrecency.stats import BUDGET, SUITE_LIMIT

settings.register_profile("ci", max_examples=25, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("thorough", max_examples=400, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow])
PROFILE = os.environ.get("LNRECENCY_HYPOTHESIS", "ci")
if PROFILE not in ("ci", "thorough"):
    raise ValueError(f"LNRECENCY_HYPOTHESIS must be 'ci' or 'thorough'; got {PROFILE!r}")
settings.load_profile(PROFILE)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    total = BUDGET.total()
    terminalreporter.section("lnrecency false-alarm budget")
    terminalreporter.write_line(
        f"hypothesis profile: {PROFILE}; registered Monte Carlo comparisons: {BUDGET.comparisons()} "
        f"in {len(BUDGET.entries)} checks")
    terminalreporter.write_line(
        f"probability that a correct claim fails by chance in this run <= {total:.3g} "
        f"(union bound; limit {SUITE_LIMIT:g})" + ("" if total <= SUITE_LIMIT else "  ** OVER BUDGET **"))


def pytest_sessionfinish(session, exitstatus):
    if BUDGET.total() > SUITE_LIMIT and session.exitstatus == 0:
        session.exitstatus = 1
