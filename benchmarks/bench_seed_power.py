"""The equivalence (TOST) power of a seed test: the vectorised rule (lnrecency.inference.seed_tests.equivalence_power)
against the adaptive quadrature it replaced (scalar scipy pdf/cdf in a Python integrand over the whole chi-square
range), in the same run: time per call, the ratio, and the largest difference on the grid where both are right
(the former missed narrow supports and returned 0 there; those cases are counted apart). And the cost of a
detectable-effect search (a root search over the power), cached per test and level.

    python3 benchmarks/bench_seed_power.py [--repeats 3]
"""
from __future__ import annotations

import argparse
import math
import time

from scipy.integrate import quad
from scipy.stats import chi2, norm

from lnrecency.inference.seed_tests import SeedTest, detectable_effect, equivalence_power


def former(lam: float, crit: float, df: float) -> float:
    """The code before: quad over [0, the 1 - 1e-12 quantile] of a scalar integrand."""
    def given(v: float) -> float:
        return max(0.0, 2.0 * float(norm.cdf(lam - crit * math.sqrt(v / df))) - 1.0)
    return float(quad(lambda v: given(v) * chi2.pdf(v, df), 0.0, float(chi2.isf(1e-12, df)), limit=200)[0])


def best(fn, cases, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for c in cases:
            fn(*c)
        times.append(time.perf_counter() - t0)
    return min(times) / len(cases)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--repeats", type=int, default=3)
    args = p.parse_args()
    cases = [(lam, crit, df) for lam in (0.5, 1, 2, 3, 5, 8) for crit in (1.5, 2.4, 4.0) for df in (2, 4, 7, 14)]
    old, new = best(former, cases, args.repeats), best(equivalence_power, cases, args.repeats)
    diffs = [(abs(former(*c) - equivalence_power(*c)), former(*c) == 0.0) for c in cases]
    print(f"equivalence power: former {old * 1e3:.2f} ms, vectorised {new * 1e3:.3f} ms per call: "
          f"{old / new:.0f}x faster")
    print(f"  largest difference where the former is positive: {max(d for d, z in diffs if not z):.2e}; "
          f"cases the former returned 0 for: {sum(z for _, z in diffs)} of {len(cases)}")
    test = SeedTest(tuple(float(x) for x in (0.1, -0.2, 0.05, 0.3, -0.1, 0.0, 0.15, -0.05)), rule="equivalence",
                    side="within", margin=0.1)
    detectable_effect.cache_clear()
    t0 = time.perf_counter()
    first = test.detectable(0.0025)
    t1 = time.perf_counter()
    test.detectable(0.0025)
    t2 = time.perf_counter()
    print(f"detectable effect {first:.4f}: search {(t1 - t0) * 1e3:.1f} ms, again (cached) {(t2 - t1) * 1e6:.0f} us")


if __name__ == "__main__":
    main()
