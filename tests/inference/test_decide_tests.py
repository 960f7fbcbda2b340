"""The one decision loop every plan's tests go through (lnrecency.inference.seed_tests.decide_tests, issue 82): a test
with a sample too small is not made and says why, keeping its place in its family; each family is decided by Holm
apart, so a family of one decides at the full rate where the same test among four would not."""
from __future__ import annotations

from lnrecency.inference.seed_tests import MIN_VALUES, SeedTest, decide_family, decide_tests

STRONG = (0.11, 0.09, 0.10, 0.12, 0.08)
WEAK = (0.05, 0.01, 0.06, 0.01, 0.04)  # pair p 0.030: alone at 0.05 decided; first of four nulls, at 0.0125, not
NULL = (0.01, -0.02, 0.015, -0.01, 0.0)  # pair p 0.88


def test_one_family_is_decide_family_and_a_small_sample_says_why():
    made = {"A": ([STRONG], lambda: SeedTest(STRONG), "few"), "C": ([WEAK], lambda: SeedTest(WEAK), "few"),
            "B": ([(0.1,) * (MIN_VALUES - 1)], lambda: 1 / 0, "few B")}
    got = decide_tests(made, alpha=0.05)
    assert list(got) == ["A", "C", "B"] and got["B"] == (None, "few B")  # never made: 1 / 0 is not called
    want = decide_family([SeedTest(STRONG), SeedTest(WEAK), None], 0.05)
    assert [d.verdict if d else None for d, _ in got.values()] == [d.verdict if d else None for d in want]
    assert got["A"][1] == "" and got["A"][0].family == 3  # B keeps its place in the family


def test_families_are_decided_apart():
    made = {k: ([v], lambda v=v: SeedTest(v), "few") for k, v in
            (("A", NULL), ("B", NULL), ("C", NULL), ("W", WEAK))}
    joint = decide_tests(made, alpha=0.05)
    apart = decide_tests(made, [["A", "B", "C"], ["W"]], alpha=0.05)
    assert joint["W"][0].verdict == "inconclusive" and apart["W"][0].verdict == "confirmed"
    assert apart["W"][0].family == 1 and apart["A"][0].family == 3
