"""The suite's false-alarm budget (:data:`BUDGET`): every calibrated comparison registers its rate and basis
and receives its k; the non-asymptotic intervals (Clopper-Pearson, empirical Bernstein, Wilson) at those rates.
The two bases and the union bound are explained in :mod:`lnrecency.inference.stats`."""
from __future__ import annotations

import math
from contextlib import contextmanager
from dataclasses import dataclass, field

from scipy.stats import norm as _normal

from lnrecency.inference.estimates import Proportion
from lnrecency.runtime.arguments import check_int, check_real

#: default per-comparison false-alarm rate of a normal-tail (asymptotic) comparison.
PER_COMPARISON = 1e-6


#: per-comparison rate of a non-asymptotic comparison (Clopper-Pearson, empirical Bernstein).
EXACT_RATE = 1e-9


#: the bases a comparison's stated rate rests on.
BASES = ("exact", "normal")


#: the suite's false-alarm limits, per basis (union bound over the registered comparisons of that basis).
SUITE_LIMITS = {"exact": 1e-6, "normal": 2e-3}


#: the limit on the rigorous part (kept for callers that name one number).
SUITE_LIMIT = SUITE_LIMITS["exact"]


def k_for(rate: float, *, sided: int = 2) -> float:
    """Normal quantile k with P(|Z| > k) = rate (sided=2) or P(Z > k) = rate (sided=1)."""
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2; got {sided!r}")
    return float(_normal.isf(rate / sided))


@dataclass
class Budget:
    """Registry of Monte Carlo comparisons: name -> (comparisons, per-comparison rate, basis)."""

    entries: dict = field(default_factory=dict)
    families: set = field(default_factory=set)  # names registered as one family-wise decision
    paused: int = 0

    @contextmanager
    def expecting_rejection(self):
        """Within: checks that a test *expects to fail* (a planted wrong formula, a mutant, a reversed claim)
        return their k but are not recorded. Their risk is a miss (power: proofs_check/test_power.py), not a
        false alarm: a chance rejection there cannot fail the suite, so it does not belong in the union bound."""
        self.paused += 1
        try:
            yield self
        finally:
            self.paused -= 1

    def register(self, name: str, comparisons: int = 1, *, rate: float | None = None,
                 sided: int = 2, basis: str = "normal", family: bool = False) -> float:
        """Record ``comparisons`` comparisons at false-alarm ``rate`` each (default: ``PER_COMPARISON``
        for basis "normal", ``EXACT_RATE`` for "exact"); return the normal quantile k of that rate.

        ``family=True``: the comparisons are one decision (the check fails when any entry fails) at the
        family-wise ``rate``: Bonferroni within, each entry at ``rate / comparisons`` (valid under any
        dependence between the entries, e.g. entries computed from the same draws); the family adds
        ``rate`` to the budget, and the k returned is that of ``rate / comparisons``.

        Registering the same name again replaces the entry (a check run twice is one check).
        """
        check_int("comparisons", comparisons, minimum=1)
        if basis not in BASES:
            raise ValueError(f"basis must be one of {BASES}; got {basis!r}")
        if not isinstance(family, bool):
            raise ValueError(f"family must be True or False; got {family!r}")
        if rate is None:
            rate = EXACT_RATE if basis == "exact" else PER_COMPARISON
        check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
        per_entry = float(rate) / comparisons if family else float(rate)
        k = k_for(per_entry, sided=sided)
        if not self.paused:
            self.entries[name] = (comparisons, per_entry, basis)
            (self.families.add if family else self.families.discard)(name)
        return k

    def total(self, basis: str | None = None) -> float:
        """Union bound: P(some correct registered comparison fails by chance) <= sum m * a, over the
        comparisons of ``basis`` (None: all)."""
        return float(sum(m * a for m, a, b in self.entries.values() if basis in (None, b)))

    def comparisons(self, basis: str | None = None) -> int:
        return int(sum(m for m, _, b in self.entries.values() if basis in (None, b)))

    def decisions(self, basis: str | None = None) -> int:
        """Decisions that can fail: a family counts once, any other entry once per comparison."""
        return int(sum(1 if name in self.families else m for name, (m, _, b) in self.entries.items()
                       if basis in (None, b)))

    def over_limit(self) -> list[str]:
        """The bases whose total exceeds its ``SUITE_LIMITS`` entry."""
        return [b for b in BASES if self.total(b) > SUITE_LIMITS[b]]

    def clear(self) -> None:
        self.entries.clear()
        self.families.clear()

    def snapshot(self) -> tuple[dict, frozenset]:
        """(entries, family names): what another process or a later :meth:`merge` needs."""
        return dict(self.entries), frozenset(self.families)

    def merge(self, snapshot: tuple[dict, frozenset]) -> None:
        """Add a :meth:`snapshot` (a worker's registrations; a name registered again replaces its entry)."""
        entries, families = snapshot
        for name, entry in entries.items():
            self.entries[name] = entry
            (self.families.add if name in families else self.families.discard)(name)


BUDGET = Budget()


def register(name: str, comparisons: int = 1, *, rate: float | None = None, sided: int = 2,
             basis: str = "normal", family: bool = False) -> float:
    """:meth:`Budget.register` on the global :data:`BUDGET`."""
    return BUDGET.register(name, comparisons, rate=rate, sided=sided, basis=basis, family=family)


def family_k(comparisons: int, *, rate: float = PER_COMPARISON, sided: int = 2) -> float:
    """The per-entry k of a family of ``comparisons`` entries at family-wise ``rate`` (Bonferroni:
    ``k_for(rate / comparisons)``), without registering it (for power tests and tables)."""
    check_int("comparisons", comparisons, minimum=1)
    return k_for(rate / comparisons, sided=sided)


def _log_term(rate: float, sided: int) -> float:
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    if sided not in (1, 2):
        raise ValueError(f"sided must be 1 or 2; got {sided!r}")
    return math.log(2.0 * sided / rate)


def bernstein_halfwidth(stderr: float, samples: int, width: float, *, rate: float = EXACT_RATE,
                        sided: int = 2) -> float:
    """Empirical Bernstein half-width (Maurer & Pontil 2009, Thm 4) for the mean of ``samples`` i.i.d.
    draws in an interval of width ``width``, with ``stderr`` = sqrt(V_n / n) (V_n unbiased):
    SE sqrt(2 L) + 7 W L / (3 (n - 1)), L = ln(2 sided / rate) (each side at rate / sided).
    Holds for every n >= 2, no asymptotics."""
    check_real("stderr", stderr, low=0.0)
    check_real("width", width, low=0.0)
    n = check_int("samples", samples, minimum=2)
    big_l = _log_term(rate, sided)
    return float(stderr) * math.sqrt(2.0 * big_l) + 7.0 * float(width) * big_l / (3.0 * (n - 1))


def clopper_pearson_interval(count: int, samples: int, *, rate: float = EXACT_RATE) -> tuple[float, float]:
    """Clopper-Pearson ("exact") binomial interval at two-sided level 1 - rate: its coverage is >= 1 - rate
    for every p and n (non-asymptotic; :meth:`Proportion.confidence_interval`)."""
    samples = check_int("samples", samples, minimum=1)
    count = check_int("count", count, minimum=0, maximum=samples)
    check_real("rate", rate, low=0.0, high=0.5, low_open=True, high_open=False)
    return Proportion(count, samples).confidence_interval(1.0 - float(rate), method="exact")


def wilson_interval(count: int, samples: int, *, k: float) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion at normal quantile k (two-sided level
    1 - 2 P(Z > k)): :meth:`Proportion.confidence_interval`."""
    samples = check_int("samples", samples, minimum=1)
    count = check_int("count", count, minimum=0, maximum=samples)
    check_real("k", k, low=0.0, low_open=True)
    return Proportion(count, samples).confidence_interval(1.0 - 2.0 * float(_normal.sf(k)))
