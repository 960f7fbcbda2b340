"""Calibrated comparisons, in one public face: grouped re-exports of the modules beside it.

Every Monte Carlo check is one of
  * mean:      |estimate - prediction| <= half-width + bias_bound             (two-sided)
  * ordering:  claim "E X > 0" is confirmed when X_bar > half-width, refuted   (one-sided)
               when X_bar < -half-width, inconclusive otherwise;
  * frequency: a proportion lies inside its binomial confidence interval.
With per-comparison false-alarm rates a, the probability that a *correct* claim fails by chance in one
run is, by the union (Bonferroni) bound, <= the sum of the a's. Each comparison states its **basis**:

  * ``"exact"`` - non-asymptotic: the Clopper-Pearson interval for a frequency, or, for a mean of i.i.d.
    draws known to lie in an interval of width W (scores under a normalisation: |S| <= lam), the empirical
    Bernstein bound of Maurer & Pontil (2009, Thm 4): with probability >= 1 - delta,
        E X - X_bar <= sqrt(2 V_n ln(2/delta) / n) + 7 W ln(2/delta) / (3 (n - 1)),
    V_n the unbiased sample variance (:func:`bernstein_halfwidth`). These rates are true bounds, so they
    may be small (``EXACT_RATE`` = 1e-9 per comparison).
  * ``"normal"`` - asymptotic: half-width = k SE with the normal quantile k. The central limit theorem
    does not support rates near 1e-9 with a few thousand samples (the tail's relative error grows like
    k^3 / sqrt(n)), so these checks use the moderate ``PER_COMPARISON`` = 1e-6 (k = 4.89 two-sided,
    4.75 one-sided), where the first Edgeworth term of the studentised mean changes a one-sided tail by
    the factor 1 + |skew| (2k^2 + 1) phi(k) / (6 sqrt(n) (1 - Phi(k))) (:func:`edgeworth_tail_ratio`;
    for two-sided checks this term cancels and the second one, :func:`edgeworth_two_sided_ratio`, is
    O(1/n)). A two-sided check over m entries is one family-wise decision (``register(family=True)``:
    Bonferroni within, each entry at rate / m). proofs_check/test_stats.py measures the skewness and
    kurtosis of the draws the suite tests and bounds both factors.

``BUDGET`` is the registry: each check calls :func:`register` with its name, the number of comparisons,
the per-comparison rate and the basis, and receives the matching normal k. ``conftest.py`` prints both
parts in pytest's terminal summary and fails the run when a part exceeds its limit in ``SUITE_LIMITS``.
"""

from __future__ import annotations

# the false-alarm budget and the intervals at its rates
from lnrecency.inference.budget import (
    BASES,
    BUDGET,
    EXACT_RATE,
    PER_COMPARISON,
    SUITE_LIMIT,
    SUITE_LIMITS,
    Budget,
    bernstein_halfwidth,
    clopper_pearson_interval,
    family_k,
    k_for,
    register,
    wilson_interval,
)

# the two Monte Carlo checks
from lnrecency.inference.checks import MeanCheck, OrderingCheck, mean_check, ordering_check

# where the normal tail is nominal only
from lnrecency.inference.edgeworth import (
    edgeworth_prob_positive,
    edgeworth_tail_ratio,
    edgeworth_two_sided_ratio,
    k_statistics,
)

# an estimate with its uncertainty
from lnrecency.inference.estimates import (
    DETERMINISTIC_SE,
    Estimate,
    Proportion,
    check_level,
    is_deterministic,
    t_interval,
    z_score,
)

# decisions over training seeds
from lnrecency.inference.seed_tests import (
    POWER,
    RULES,
    TRAINED_FWER,
    SeedDecision,
    SeedTest,
    decide_family,
    holm,
    holm_levels,
)

__all__ = [
    "Estimate", "Proportion", "z_score", "t_interval", "check_level", "DETERMINISTIC_SE", "is_deterministic",
    "PER_COMPARISON", "EXACT_RATE", "BASES", "SUITE_LIMITS", "SUITE_LIMIT", "Budget", "BUDGET", "k_for", "register",
    "family_k", "bernstein_halfwidth", "clopper_pearson_interval", "wilson_interval",
    "edgeworth_tail_ratio", "edgeworth_two_sided_ratio", "edgeworth_prob_positive", "k_statistics",
    "MeanCheck", "OrderingCheck", "mean_check", "ordering_check",
    "TRAINED_FWER", "POWER", "RULES", "SeedTest", "SeedDecision", "holm", "holm_levels", "decide_family",
]
