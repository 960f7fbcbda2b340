"""Typed evidence of a verdict: frozen dataclasses read by attribute (claims, findings, report, tests) and
written to JSON one way (:meth:`Evidence.to_json`, the ``"evidence"`` of ``lnrecency verify --json``).

JSON rules, in :meth:`Evidence.to_json`:
  * fields in declaration order, under their name or the ``key`` given with :func:`item`;
  * a nested record becomes an object; ``flatten=True`` merges the field's object into its parent (a
    check's numbers next to the entry they check);
  * ``omit_none=True``: the key is left out when the value is None (evidence gathered in some settings
    only); otherwise None is null;
  * properties named in ``JSON_PROPERTIES`` follow the fields (derived values such as ``passed``);
  * lnrecency.inference.stats checks serialise through ``as_dict``, theory results through ``to_json``; NaN is null.

The records shared by several claims live here; a claim's own per-setting record lives in its module.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

if TYPE_CHECKING:  # annotations only (postponed): no import cycle at run time
    pass


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


@record
class NotRun(Evidence):
    """The evidence of a verdict that was not run: why, and what to run (one class for every claim)."""

    reason: str


@record
class Damaged(NotRun):
    """The evidence of a verdict whose experiment's cached results are damaged: the file, what is wrong and the fix
    (``reason``). Not a verdict, and never reported as "not run": the report names the file."""


# ---- grouping: one ClaimResult per verdict over settings --------------------------------------------


#: a result about someone else's model (the seeds' experiments), tested on ours, is "reproduced" or "not
#: reproduced in this setting", never confirmed or refuted
VERDICTS = ("confirmed", "refuted", "inconclusive", "reproduced", "the opposite shown", "secondary")


def combine(verdicts: list[str]) -> str:
    """The one rule for combining verdicts: all confirmed -> confirmed; any refuted -> refuted; else
    inconclusive (an empty list is inconclusive)."""
    if verdicts and all(v == "confirmed" for v in verdicts):
        return "confirmed"
    if "refuted" in verdicts:
        return "refuted"
    return "inconclusive"


def ladder(holds: bool, opposite: bool = True) -> str:
    """The one verdict ladder, written once (issue 66): confirmed when the statement is shown to hold, refuted when
    its opposite is shown (``opposite``; an exact result that does not hold shows it: the default), inconclusive
    otherwise (``opposite=False``: the check that failed is not decisive)."""
    return "confirmed" if holds else "refuted" if opposite else "inconclusive"


def decide(holds: bool, corroborated: bool = True) -> str:
    """An exact (or decisive) result with a corroborating check: confirmed when it holds and is
    corroborated, refuted when it does not hold, inconclusive when the corroboration fails."""
    return combine([ladder(holds), ladder(corroborated, opposite=False)])


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


