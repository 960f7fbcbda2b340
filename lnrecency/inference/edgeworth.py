"""Where the normal tail is only nominal: Edgeworth corrections to the tail of a studentised mean (first term,
one-sided; second term, two-sided, Hall 1992 q2), the Edgeworth probability of a positive difference, and the
unbiased k-statistics they read."""
from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm as _normal

from lnrecency.runtime.arguments import check_int, check_real


def edgeworth_tail_ratio(skewness: float, samples: int, k: float) -> float:
    """Bound 1 + |g| (2k^2 + 1) phi(k) / (6 sqrt(n) (1 - Phi(k))) on the ratio of a one-sided tail of the
    studentised mean to the normal tail at k, from the first Edgeworth term (Hall 1987, q1(x) =
    g (2x^2 + 1) / 6 for the studentised mean; g the skewness of one draw). Two-sided tails: the term
    cancels (q1 is even), the error is O(1/n)."""
    n = check_int("samples", samples, minimum=2)
    check_real("k", k, low=0.0, low_open=True)
    mills = float(_normal.pdf(k) / _normal.sf(k))
    return 1.0 + abs(float(skewness)) * (2.0 * k * k + 1.0) * mills / (6.0 * math.sqrt(n))


def edgeworth_two_sided_ratio(skewness: float, excess_kurtosis: float, samples: int, k: float) -> float:
    """Bound on P(|T| > k) / P(|Z| > k) for the studentised mean T of ``samples`` i.i.d. draws, from the
    second Edgeworth term (the first cancels in a two-sided tail): Hall (1992, The Bootstrap and Edgeworth
    Expansion, Sec. 2.6) gives P(|T| <= x) = 2 Phi(x) - 1 + 2 q2(x) phi(x) / n + O(n^-2) with

        q2(x) = x [e (x^2 - 3) / 12 - g^2 (x^4 + 2 x^2 - 3) / 18 - (x^2 + 3) / 4]

    (g the skewness, e the excess kurtosis of one draw; the variance with divisor n, whose tail is the
    heavier of the two divisors). Returned: 1 + |q2(k)| phi(k) / (n (1 - Phi(k))), each term of q2 taken
    in absolute value. The last term is the t distribution's own (Gaussian draws)."""
    n = check_int("samples", samples, minimum=2)
    check_real("k", k, low=0.0, low_open=True)
    x = float(k)
    mills = float(_normal.pdf(x) / _normal.sf(x))
    q2 = x * (abs(float(excess_kurtosis)) * abs(x * x - 3.0) / 12.0
              + float(skewness) ** 2 * (x ** 4 + 2.0 * x * x - 3.0) / 18.0 + (x * x + 3.0) / 4.0)
    return 1.0 + q2 * mills / n


def edgeworth_prob_positive(mean, var, k3, k4=None):
    """P(X > 0) from the first cumulants of X, by the Edgeworth expansion of its CDF (Hall 1992, 2.2):
    with z = mean / sd, g = k3 / sd^3, e = k4 / sd^4 and the Hermite polynomials He,

        P(X > 0) = Phi(z) + phi(z) g He2(z) / 6                                (one term, ``k4`` None)
                          - phi(z) (e He3(z) / 24 + g^2 He5(z) / 72)           (two terms).

    For a sum of m i.i.d. terms the one-term form errs by O(1/m), the two-term form by O(m^-3/2).
    Arrays broadcast; var must be > 0. Not clipped to [0, 1]: a value outside says the expansion fails."""
    mean, var, k3 = (np.asarray(a, dtype=float) for a in (mean, var, k3))
    sd = np.sqrt(var)
    z, g = mean / sd, k3 / sd ** 3
    phi = np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)
    out = _normal.cdf(z) + phi * g * (z * z - 1.0) / 6.0
    if k4 is not None:
        e = np.asarray(k4, dtype=float) / var ** 2
        out = out - phi * (e * (z ** 3 - 3.0 * z) / 24.0 + g * g * (z ** 5 - 10.0 * z ** 3 + 15.0 * z) / 72.0)
    return out


def k_statistics(count: int, s1, s2, s3, s4) -> tuple:
    """(k1, k2, k3, k4), the unbiased cumulant estimates (Fisher's k-statistics), from ``count`` draws'
    power sums s_p = sum x^p (arrays broadcast). Central moments m_p from the raw ones, then
    k2 = n m2 / (n-1), k3 = n^2 m3 / ((n-1)(n-2)), k4 = n^2 ((n+1) m4 - 3 (n-1) m2^2) / ((n-1)(n-2)(n-3))."""
    n = check_int("count", count, minimum=4)
    mu = np.asarray(s1, dtype=float) / n
    r2, r3, r4 = (np.asarray(s, dtype=float) / n for s in (s2, s3, s4))
    m2 = r2 - mu * mu
    m3 = r3 - 3.0 * mu * r2 + 2.0 * mu ** 3
    m4 = r4 - 4.0 * mu * r3 + 6.0 * mu * mu * r2 - 3.0 * mu ** 4
    k2 = n * m2 / (n - 1)
    k3 = n * n * m3 / ((n - 1) * (n - 2))
    k4 = n * n * ((n + 1) * m4 - 3.0 * (n - 1) * m2 * m2) / ((n - 1) * (n - 2) * (n - 3))
    return mu, k2, k3, k4
