"""Typed evidence of a verdict: frozen dataclasses read by attribute (claims, findings, report, tests) and
written to JSON one way (:meth:`Evidence.to_json`, the ``"evidence"`` of ``lnrecency verify --json``).

JSON rules, in :meth:`Evidence.to_json`:
  * fields in declaration order, under their name or the ``key`` given with :func:`item`;
  * a nested record becomes an object; ``flatten=True`` merges the field's object into its parent (a
    check's numbers next to the entry they check);
  * ``omit_none=True``: the key is left out when the value is None (evidence gathered in some settings
    only); otherwise None is null;
  * properties named in ``JSON_PROPERTIES`` follow the fields (derived values such as ``passed``);
  * lnrecency.stats checks serialise through ``as_dict``, theory results through ``to_json``; NaN is null.

The records shared by several claims live here; a claim's own per-setting record lives in its module.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

if TYPE_CHECKING:  # annotations only (postponed): no import cycle at run time
    from lnrecency.stats import MeanCheck, OrderingCheck


def jsonable(x: Any) -> Any:
    """Plain JSON data of ``x`` (records, checks, dicts, sequences, numbers; NaN -> None)."""
    if isinstance(x, Evidence):
        return x.to_json()
    if hasattr(x, "as_dict") and not isinstance(x, type):
        return jsonable(x.as_dict())
    if dataclasses.is_dataclass(x) and hasattr(x, "to_json") and not isinstance(x, type):
        return jsonable(x.to_json())
    if isinstance(x, dict):
        return {str(k): jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [jsonable(v) for v in x]
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return x
    try:
        f = float(x)
    except (TypeError, ValueError):
        return str(x)
    return None if math.isnan(f) else f


def strict_json(x: Any) -> Any:
    """Non-finite floats as the strings "nan", "inf", "-inf" (strict JSON), in nested dicts and lists."""
    if isinstance(x, dict):
        return {k: strict_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [strict_json(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")
    return x


def item(*, key: str | None = None, flatten: bool = False, omit_none: bool = False, **kwargs: Any) -> Any:
    """A record field with its JSON rule (see the module docstring); ``omit_none`` implies default None."""
    if omit_none:
        kwargs.setdefault("default", None)
    return field(metadata={"key": key, "flatten": flatten, "omit_none": omit_none}, **kwargs)


class Evidence:
    """Base of the evidence records (subclasses are frozen, keyword-only dataclasses)."""

    JSON_PROPERTIES: ClassVar[tuple[str, ...]] = ()

    def to_json(self) -> dict:
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("omit_none") and value is None:
                continue
            data = jsonable(value)
            if f.metadata.get("flatten"):
                out.update(data)
            else:
                out[f.metadata.get("key") or f.name] = data
        for name in self.JSON_PROPERTIES:
            out[name] = jsonable(getattr(self, name))
        return out


def record(cls):
    """Decorator: a frozen, keyword-only dataclass subclass of :class:`Evidence`."""
    return dataclass(frozen=True, kw_only=True)(cls)


# ---- grouping: one ClaimResult per verdict over settings --------------------------------------------


#: a result about someone else's model (the seeds' experiments), tested on ours, is "reproduced" or "not
#: reproduced in this setting", never confirmed or refuted
VERDICTS = ("confirmed", "refuted", "inconclusive", "reproduced", "not reproduced in this setting")


def combine(verdicts: list[str]) -> str:
    """The one rule for combining verdicts: all confirmed -> confirmed; any refuted -> refuted; else
    inconclusive (an empty list is inconclusive)."""
    if verdicts and all(v == "confirmed" for v in verdicts):
        return "confirmed"
    if "refuted" in verdicts:
        return "refuted"
    return "inconclusive"


def decide(holds: bool, corroborated: bool = True) -> str:
    """An exact (or decisive) result with a corroborating check: confirmed when it holds and is
    corroborated, refuted when it does not hold, inconclusive when the corroboration fails."""
    return combine(["confirmed" if holds else "refuted", "confirmed" if corroborated else "inconclusive"])


@dataclass(frozen=True)
class Setting:
    """Where a verdict was evaluated: the model (norm, residual, gamma, lam, alpha, embedding, or the authors'
    convention), the ranges it covers (layer(s), n, widths, entries), the measure, the experiment's scale,
    and, for a grouped verdict, each case (``settings``). A field is None where the verdict does not fix it;
    a value may be a range written out ("any > 0", "[0, 1)") where the verdict covers one."""

    norm: str | None = None
    residual: bool | None = None
    gamma: float | str | None = None
    lam: float | str | None = None
    alpha: float | str | list | None = None
    embedding: str | None = None
    convention: str | None = None
    layer: int | None = None
    layers: str | None = None
    n: int | None = None
    n_max: int | None = None
    n_limit: int | None = None
    n_mc: int | None = None
    d: int | None = None
    i: int | None = None
    j: int | None = None
    k: int | None = None
    measure: str | None = None
    quantity: str | None = None
    figure: str | None = None
    figures: str | None = None
    alphas: str | None = None
    arch: str | None = None
    stage: str | None = None
    case: str | None = None
    scale: str | None = None
    breaks: str | None = None
    probe: str | None = None
    seed_setting: str | None = None  # a seed's own setting (model, data, tokens seen) beside ours
    training_seeds: int | None = None
    settings: tuple[Setting, ...] | None = None

    @classmethod
    def of(cls, value: Setting | Mapping[str, Any]) -> Setting:
        """A Setting from a mapping of its field names (the cases under "settings" likewise)."""
        if isinstance(value, Setting):
            return value
        if not isinstance(value, Mapping):
            raise TypeError(f"setting must be a Setting or a mapping; got {type(value).__name__}")
        unknown = sorted(set(value) - _SETTING_FIELDS)
        if unknown:
            raise ValueError(f"setting: unknown keys {unknown}; allowed: {sorted(_SETTING_FIELDS)}")
        kw = dict(value)
        if kw.get("settings") is not None:
            kw["settings"] = tuple(cls.of(case) for case in kw["settings"])
        return cls(**kw)

    def to_json(self) -> dict:
        """The fields that are set, in field order (cases as a list)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if v is not None:
                out[f.name] = [c.to_json() for c in v] if f.name == "settings" else jsonable(v)
        return out

    def cases(self) -> list[dict]:
        """Each case merged with the fields it shares (one case, the setting itself, when not grouped)."""
        base = {k: v for k, v in self.to_json().items() if k != "settings"}
        return [{**base, **c.to_json()} for c in self.settings or (Setting(),)]


_SETTING_FIELDS = frozenset(f.name for f in fields(Setting))


@record
class PerSetting(Evidence):
    """One setting of a grouped result and its evidence (JSON: {"setting": ..., **evidence})."""

    setting: Setting  # a mapping of its fields is accepted and converted
    evidence: Evidence = item(flatten=True)

    def __post_init__(self) -> None:
        object.__setattr__(self, "setting", Setting.of(self.setting))


@record
class SettingGroup(Evidence):
    """The evidence of a result grouping the settings with one verdict."""

    per_setting: tuple[PerSetting, ...]
    settings_total: int
    settings_here: int


# ---- records shared by several claims -----------------------------------------------------------------

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
    """R >= sup_{d >= d_ref} d^2 |E_d X - X_lim - c/d|, measured at d_ref and 2 d_ref (lnrecency.claims._common)."""

    R: float
    d_ref: int
    samples: int
    seed: Any
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
    seed: Any
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
    """A Monte Carlo mean check in its two roles (lnrecency.claims._common.mc_means): implementation
    consistency at d = 10^12 (code against code) and support at the authors' widths."""

    JSON_PROPERTIES = ("passed",)

    implementation_consistency: MeanChecks
    authors_widths: WidthChecks
    name: str | None = item(omit_none=True)  # the check's name: claim, role and the model it simulates

    @property
    def passed(self) -> bool:
        return self.implementation_consistency.passed and self.authors_widths.passed


def records_of(evidence: Any, kind: type) -> list:
    """Every record of type ``kind`` inside ``evidence`` (fields, tuples and lists, depth first, in field
    order): how a table finds the checks a verdict used without knowing the claim."""
    out: list = []

    def walk(x: Any) -> None:
        if isinstance(x, kind):
            out.append(x)
        elif isinstance(x, Evidence):
            for f in fields(x):
                walk(getattr(x, f.name))
        elif isinstance(x, (tuple, list)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk(evidence)
    return out


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
    """Monte Carlo paired orderings at width d; verdict by :func:`lnrecency.verdicts.combine`."""

    JSON_PROPERTIES = ("verdict",)

    kind: str = "MC paired ordering (one-sided)"
    layer: int
    d: int
    samples: int
    seed: Any
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
    seed: Any
    remainder_constant: RemainderConstant
    check: MeanCheck = item(flatten=True)

    @property
    def passed(self) -> bool:
        return self.check.passed


@record
class GapComparison(Evidence):
    """One-sided Monte Carlo test that the first gap exceeds the second, from independent runs with their SEs
    in quadrature (lnrecency.claims._common.gap_comparison); ``gaps``: {"gap_<first>": .., "gap_<second>": ..}."""

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
