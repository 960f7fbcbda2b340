"""Evidence records shared by several claims: proofs, limit profiles, the remainder constant, Monte Carlo mean
checks and orderings, paired means, gap comparisons, boundary searches and regions. A claim's own records live
in its module; every record is a frozen keyword-only dataclass stored by :mod:`lnrecency.files.store`."""
from __future__ import annotations

from typing import TYPE_CHECKING

from lnrecency.inference.evidence import Evidence, combine, item, record

if TYPE_CHECKING:  # annotations only (postponed): no import cycle at run time
    from lnrecency.inference.stats import MeanCheck, OrderingCheck


@record
class ProofRecord(Evidence):
    """A sympy proof of lnrecency.theory.proofs: its name, whether it is proven, the first steps."""

    name: str
    proven: bool
    steps: tuple | None = item(omit_none=True)

    @classmethod
    def of(cls, proof, steps: int | None = 0) -> "ProofRecord":
        """From a Proof; ``steps``: how many of its steps to keep (None: all; 0: none)."""
        kept = None if steps == 0 else tuple(proof.steps if steps is None else proof.steps[:steps])
        return cls(name=proof.name, proven=bool(proof.proven), steps=kept)


@record
class LimitProfile(Evidence):
    """Definition-1 labels of the rows of the exact limit at one layer: {label: [rows]}."""

    n: int
    rows_by_label: dict

    @property
    def labels(self) -> set:
        return set(self.rows_by_label)


@record
class RemainderConstant(Evidence):
    """R >= sup_{d >= d_ref} d^2 |E_d X - X_lim - c/d|, measured at d_ref and 2 d_ref (lnrecency.claims.mc_checks)."""

    R: float
    d_ref: int
    samples: int
    seed: int | tuple[int, ...] | None
    k: float


@record
class EntryCheck(Evidence):
    """One entry (i, j) of a Monte Carlo mean check against limit + c/d."""

    i: int
    j: int
    limit: float
    c: float
    check: MeanCheck = item(flatten=True)

    @property
    def passed(self) -> bool:
        return self.check.passed


@record
class MeanChecks(Evidence):
    """Monte Carlo means at width d against limit + c/d, within k SE + R/d^2 (+ rounding) each. At
    d = 10^12 (``remainder_constant`` None: c/d is ~1e-12) it is an implementation-consistency check: the
    sampler and the limit code agree; it adds no support at a width anyone uses."""

    JSON_PROPERTIES = ("passed",)

    kind: str
    quantity: str  # the estimated quantity ("score", "weight", ...: numerics' quantity names)
    layer: int
    d: int
    samples: int
    seed: int | tuple[int, ...] | None
    method: str
    remainder_constant: RemainderConstant | None
    remainder_bound: float
    per_comparison_rate: float
    checks: tuple[EntryCheck, ...]

    @property
    def passed(self) -> bool:
        return all(ch.passed for ch in self.checks)

    @property
    def max_abs_z(self) -> float:
        return max(abs(ch.check.z) for ch in self.checks)


@record
class WidthChecks(Evidence):
    """Support at the widths people use: Monte Carlo means at each d in ``widths`` (the authors' 16, 64,
    256) against limit + c/d within k SE + R/d^2, one remainder constant R measured at d_ref = 16 and 32
    (independent seeds) for all of them."""

    JSON_PROPERTIES = ("passed",)

    remainder_constant: RemainderConstant
    widths: tuple[MeanChecks, ...]

    @property
    def passed(self) -> bool:
        return all(m.passed for m in self.widths)

    @property
    def max_abs_z(self) -> float:
        return max(m.max_abs_z for m in self.widths)


@record
class MCMeans(Evidence):
    """A Monte Carlo mean check in its two roles (lnrecency.claims.mc_checks.mc_means): implementation
    consistency at d = 10^12 (code against code) and support at the authors' widths."""

    JSON_PROPERTIES = ("passed",)

    implementation_consistency: MeanChecks
    authors_widths: WidthChecks
    name: str | None = item(omit_none=True)  # the check's name: claim, role and the model it simulates

    @property
    def passed(self) -> bool:
        return self.implementation_consistency.passed and self.authors_widths.passed


@record
class OrderingTest(Evidence):
    """One-sided paired test of E S_ij > E S_{i,k_key}."""

    i: int
    j: int
    k_key: int
    check: OrderingCheck = item(flatten=True)

    @property
    def verdict(self) -> str:
        return self.check.verdict


@record
class OrderingTests(Evidence):
    """Monte Carlo paired orderings at width d; verdict by :func:`lnrecency.inference.verdicts.combine`."""

    JSON_PROPERTIES = ("verdict",)

    kind: str = "MC paired ordering (one-sided)"
    layer: int
    d: int
    samples: int
    seed: int | tuple[int, ...] | None
    method: str = "gram"
    tests: tuple[OrderingTest, ...]

    @property
    def verdict(self) -> str:
        return combine([t.verdict for t in self.tests])


@record
class PairedMean(Evidence):
    """Two-sided check of the mean of S_ij - S_{i,k_key} against its prediction (limit + c/d)."""

    kind: str = "MC paired difference mean"
    layer: int
    i: int
    j: int
    k_key: int
    d: int
    samples: int
    seed: int | tuple[int, ...] | None
    remainder_constant: RemainderConstant
    check: MeanCheck = item(flatten=True)

    @property
    def passed(self) -> bool:
        return self.check.passed


@record
class GapComparison(Evidence):
    """One-sided Monte Carlo test that the first gap exceeds the second, from independent runs with their SEs
    in quadrature (lnrecency.claims.mc_checks.gap_comparison); ``gaps``: {"gap_<first>": .., "gap_<second>": ..}."""

    claim: str
    d: int
    samples: int
    seed: int
    gaps: dict = item(flatten=True)
    check: OrderingCheck = item(flatten=True)

    @property
    def verdict(self) -> str:
        return self.check.verdict


@record
class BoundarySearch(Evidence):
    """The boundary search on the exact limit (lnrecency.theory.boundary) up to n_max, per layer."""

    n_max: int
    boundary: dict  # {str(layer): LayerBoundary, or a record with its first_failing_n and undecided_from}

    @property
    def verdict(self) -> str:
        """"The ordering holds on every row up to n_max": refuted when a layer fails, inconclusive when
        a row is undecided, else confirmed."""
        bounds = self.boundary.values()
        if any(b.first_failing_n is not None for b in bounds):
            return "refuted"
        if any(b.undecided_from is not None for b in bounds):
            return "inconclusive"
        return "confirmed"


@record
class RegionRecord(Evidence):
    """Where an ordering holds in one parameter at one layer for every n <= n_max (lnrecency.theory.region):
    intervals with ends bracketed by exact decisions to ``tol``."""

    parameter: str
    layer: int
    n_max: int
    range: tuple
    holds: tuple
    fails: tuple
    ends: tuple  # ({"value", "bracket", "holds_below", "first_failing_row"}, ...)
    tol: float
    scan_points: int
    undecided_at: tuple | None = item(omit_none=True)  # scan points the exact decision could not settle

    @classmethod
    def of(cls, r) -> "RegionRecord":
        return cls(parameter=r.parameter, layer=r.layer, n_max=r.n_max, range=(r.lo, r.hi),
                   holds=tuple(tuple(x) for x in r.holds), fails=tuple(tuple(x) for x in r.fails),
                   ends=tuple(e.to_json() for e in r.ends), tol=r.tol, scan_points=r.scan_points,
                   undecided_at=tuple(r.undecided) or None)

    @property
    def everywhere(self) -> bool:
        """The ordering holds on the whole range: no failing interval and no undecided scan point."""
        return not self.fails and not self.undecided_at

    @property
    def verdict(self) -> str:
        """Of "the ordering holds on the whole range": refuted by a failing interval, else inconclusive where a
        scan point is undecided, else confirmed."""
        return "refuted" if self.fails else ("inconclusive" if self.undecided_at else "confirmed")

    @staticmethod
    def intervals(xs) -> str:
        """'[a, b], [c, e]' with 4 significant digits, or 'nowhere'."""
        return ", ".join(f"[{a:.4g}, {b:.4g}]" for a, b in xs) or "nowhere"

    def describe(self) -> str:
        """'holds on [a, b], fails on [c, e]' with 4 significant digits (ends certified to ``tol``)."""
        return (f"{self.parameter}: holds on {self.intervals(self.holds)}, fails on {self.intervals(self.fails)} "
                f"(layer {self.layer}, n <= {self.n_max})")
