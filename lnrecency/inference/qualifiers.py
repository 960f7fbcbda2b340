"""What a verdict row says beyond its label, as typed fields (issue 75): where it holds and where not, its size and
unit, what it compares, its interval, the margin of an exact decision, the reason it is not decided, and its
strongest counter-row. A claim module fills them from the numbers it decides with; every plain sentence, cell and
count of the report is rendered from them (:mod:`lnrecency.report.words.plain`), never from a finding's prose.

Standard library only: docs/verdicts.json stores them as JSON (:meth:`Qualifiers.to_json`) and
:meth:`Qualifiers.from_json` reads them back checking every field against its declared type.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, fields

__all__ = ["REASONS", "FAMILY_REASONS", "Counter", "Qualifiers", "contradiction", "rule_outcome", "HAIR", "by_a_hair"]

#: why a statement is not decided: key -> the words a cell says (each defined in docs/glossary.md under
#: "inconclusive"); a row reads inconclusive only with one of these
REASONS: dict[str, str] = {
    "not significant": "not significant",
    "holm": "not significant after Holm",
    "pair": "undecided by the pair rule",
    "holm stop": "Holm stopped before it",
    "not learned": "the models did not learn",
    "unstable": "unstable across seeds",
    "quick run": "a quick run decides nothing",
    "not resolved": "unresolved in the layers computed",
    "checks failed": "a Monte Carlo check failed",
    "partial": "checked on part of its domain only",
}


#: the reasons under which a test is significant alone but undecided in its family: the interval beside it is its own,
#: not adjusted for the family, and its cell says so
FAMILY_REASONS = frozenset({"holm", "pair", "holm stop"})

#: a plan test is decided "by a hair" when its pair's p lies within this factor of its Holm level, either side
HAIR = 2.0


def by_a_hair(p_pair: float | None, level: float | None) -> bool:
    """Whether a test's pair p (twice its smaller one-sided p) lies within a factor :data:`HAIR` of the Holm level it
    was compared with, on either side: a decision a small change of the data would have turned."""
    return p_pair is not None and level is not None and level / HAIR <= p_pair <= HAIR * level


#: the longest text a qualifier field holds (characters; the longest stored today is 85): a cell renders at most 20
#: words, and a stored field longer than this is refused, not rendered
MAX_TEXT = 400


def _number(value, name: str, *, optional: bool = True) -> float | None:
    if value is None and optional:
        return None
    try:  # an integer beyond float's range (a 400-digit one) is refused by name, not an OverflowError
        ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(float(value))
    except OverflowError:
        ok = False
    if not ok:
        shown = f"{value!r:.40}" + ("..." if len(repr(value)) > 40 else "")
        raise ValueError(f"qualifier {name} must be a finite number within float range{' or null' if optional else ''}"
                         f"; got {shown}")
    return float(value)


def _text(value, name: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"qualifier {name} must be a string; got {type(value).__name__}")
    if len(value) > MAX_TEXT:
        raise ValueError(f"qualifier {name} must be at most {MAX_TEXT} characters; got {len(value)}")
    return " ".join(value.split())


@dataclass(frozen=True)
class Counter:
    """The strongest row against a finding: ``label`` (the setting in words, e.g. "at matched loss"), its estimate,
    interval and ``verdict`` (of its own statement, or "" when it is a secondary interval); ``ratio``: the estimate
    is a ratio of two quantities its label names (said "5.7x"), not a value in the finding's unit; ``other``: the
    estimate is another quantity, which its label names (its sign is not compared with the row's)."""

    label: str
    estimate: float
    low: float | None = None
    high: float | None = None
    verdict: str = ""
    ratio: bool = False
    other: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "label", _text(self.label, "counter.label"))
        object.__setattr__(self, "estimate", _number(self.estimate, "counter.estimate", optional=False))
        object.__setattr__(self, "low", _number(self.low, "counter.low"))
        object.__setattr__(self, "high", _number(self.high, "counter.high"))
        object.__setattr__(self, "verdict", _text(self.verdict, "counter.verdict"))
        if not self.label:
            raise ValueError("qualifier counter.label must not be empty")
        if not isinstance(self.ratio, bool) or (self.ratio and not self.estimate > 0):
            raise ValueError(f"qualifier counter.ratio must be true or false, and a ratio above 0; got "
                             f"{self.ratio!r} with {self.estimate}")
        if not isinstance(self.other, bool):
            raise ValueError(f"qualifier counter.other must be true or false; got {self.other!r}")
        if (self.low is None) != (self.high is None) or (self.low is not None and self.low > self.high):
            raise ValueError(f"qualifier counter's interval must have both ends, low <= high; got [{self.low}, "
                             f"{self.high}]")

    def to_json(self) -> dict:  # ``ratio``, ``other`` only when set (rows written before them read back the same)
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name not in ("ratio", "other")
                or getattr(self, f.name)}

    @classmethod
    def from_json(cls, data) -> "Counter":
        if not isinstance(data, dict) or set(data) - {f.name for f in fields(cls)}:
            raise ValueError(f"qualifier counter must be an object with keys among "
                             f"{', '.join(f.name for f in fields(cls))}; got {str(data)[:80]!r}")
        missing = [k for k in ("label", "estimate") if k not in data]
        if missing:
            raise ValueError(f"qualifier counter needs {' and '.join(missing)}; got keys {sorted(data)}")
        return cls(**data)


@dataclass(frozen=True)
class Qualifiers:
    """A verdict row's qualifiers. ``where``: the setting and scope in words ("layers 5-6 with the residual");
    ``holds`` / ``fails``: where, within it, the statement holds and fails; ``quantity``, ``unit`` and
    ``comparison`` ("LayerNorm minus none") of ``estimate`` and its interval [``low``, ``high``]; ``margin``: the
    largest violation of an exact decision (``margin_of`` names it and where it was read: "score step on the rows
    sampled (logits)"); ``second`` and ``second_of``: a second quantity where it changes the reading (the attention
    weight of the keys where an order breaks, beside the size of the break) and the words before its number, given
    together or not at all; ``reason``: a
    :data:`REASONS` key when the row is not decided; ``counter``: its strongest counter-row; ``theirs``: the values
    the statement's authors published, and ``direction_only`` when ours agree in sign but not in size;
    ``settings``: how many settings the row covers; ``exact``: decided by exact arithmetic or a proof; ``p_pair``
    and ``level``: a plan test's pair p and the Holm level it was compared with (both or neither), from which
    :attr:`by_a_hair` is read; ``hair``: decided by a hair by a rule with no pair p (a bound at an exact false-alarm
    rate whose decision turns when that rate is halved or doubled: :data:`HAIR` applied to the rate), and ``hair_at``:
    where, when a row of several settings was decided by a hair in one part of it only; ``leans``: for
    an undecided test, the side its smaller one-sided p favours ("for" or "against" its statement)."""

    where: str = ""
    holds: str = ""
    fails: str = ""
    quantity: str = ""
    unit: str = ""
    comparison: str = ""
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    margin: float | None = None
    margin_of: str = ""
    second: float | None = None
    second_of: str = ""
    reason: str = ""
    counter: Counter | None = None
    theirs: tuple[float, ...] = ()
    direction_only: bool = False
    settings: int | None = None
    exact: bool = False
    p_pair: float | None = None
    level: float | None = None
    leans: str = ""
    hair: bool = False
    hair_at: str = ""

    def __post_init__(self) -> None:
        for name in ("where", "holds", "fails", "quantity", "unit", "comparison", "margin_of", "second_of", "reason",
                     "leans", "hair_at"):
            object.__setattr__(self, name, _text(getattr(self, name), name))
        for name in ("estimate", "low", "high", "margin", "second", "p_pair", "level"):
            object.__setattr__(self, name, _number(getattr(self, name), name))
        if (self.second is None) != (not self.second_of):
            raise ValueError(f"qualifier second and second_of must be given together (a second quantity and its "
                             f"name); got {self.second} and {self.second_of!r}")
        if (self.p_pair is None) != (self.level is None) or (
                self.p_pair is not None and not (0 <= self.p_pair <= 1 and 0 < self.level < 1)):
            raise ValueError(f"qualifier p_pair and level must be given together, 0 <= p_pair <= 1 and 0 < level < 1; "
                             f"got {self.p_pair} and {self.level}")
        if self.leans not in ("", "for", "against") or (self.leans and self.p_pair is None):
            raise ValueError(f"qualifier leans must be '', 'for' or 'against' (the side an undecided test's smaller "
                             f"one-sided p favours, with its pair p); got {self.leans!r}")
        if self.reason and self.reason not in REASONS:
            raise ValueError(f"qualifier reason must be one of {', '.join(REASONS)}; got {self.reason!r}")
        if (self.low is None) != (self.high is None) or (self.low is not None and self.low > self.high):
            raise ValueError(f"qualifier interval must have both ends, low <= high; got [{self.low}, {self.high}]")
        if self.counter is not None and not isinstance(self.counter, Counter):
            raise ValueError(f"qualifier counter must be a Counter; got {type(self.counter).__name__}")
        if not isinstance(self.theirs, (tuple, list)):
            raise ValueError(f"qualifier theirs must be a list of numbers; got {self.theirs!r}")
        object.__setattr__(self, "theirs", tuple(_number(x, "theirs", optional=False) for x in self.theirs))
        for name in ("direction_only", "exact", "hair"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"qualifier {name} must be true or false; got {getattr(self, name)!r}")
        if self.hair_at and not self.hair:
            raise ValueError(f"qualifier hair_at names where a row was decided by a hair: it needs hair true; got "
                             f"{self.hair_at!r} with hair false")
        if self.settings is not None and (isinstance(self.settings, bool) or not isinstance(self.settings, int)
                                          or self.settings < 1):
            raise ValueError(f"qualifier settings must be a positive integer or null; got {self.settings!r}")

    @property
    def by_a_hair(self) -> bool:
        """Decided by a hair (:func:`by_a_hair`): its pair p within a factor 2 of its Holm level (a test Holm stopped
        before included: its family's outcome turned on a test before it), or :attr:`hair` set by its rule."""
        return self.hair or by_a_hair(self.p_pair, self.level)

    @property
    def side(self) -> str:
        """The side of 0 the interval lies on: "above", "below" or "across" ("" without an interval)."""
        if self.low is None:
            return ""
        return "above" if self.low > 0 else "below" if self.high < 0 else "across"

    def to_json(self) -> dict:
        """The fields that differ from their defaults (JSON types only)."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value == f.default:
                continue
            out[f.name] = (value.to_json() if isinstance(value, Counter) else list(value) if isinstance(value, tuple)
                           else value)
        return out

    @classmethod
    def from_json(cls, data) -> "Qualifiers":
        """Read stored qualifiers, every field checked against its declared type (ValueError naming the field)."""
        names = {f.name for f in fields(cls)}
        if not isinstance(data, dict) or set(data) - names:
            raise ValueError(f"qualifiers must be an object with keys among {', '.join(sorted(names))}; "
                             f"got {sorted(data) if isinstance(data, dict) else type(data).__name__}")
        data = dict(data)
        if data.get("counter") is not None:
            data["counter"] = Counter.from_json(data["counter"])
        if "theirs" in data and not isinstance(data["theirs"], list):
            raise ValueError(f"qualifier theirs must be a list of numbers; got {data['theirs']!r}")
        return cls(**data)


#: the labels of a statement shown to hold / shown to fail (lnrecency.claims.catalog.label's two readings)
HOLDS_LABELS, FAILS_LABELS = ("confirmed", "reproduced"), ("refuted", "the opposite shown")


def rule_outcome(label: str) -> str:
    """A row's label read back as its rule's outcome: "reproduced" is confirmed and "the opposite shown" refuted
    (someone else's statement, decided by the same rule); every other label is itself."""
    return {"reproduced": "confirmed", "the opposite shown": "refuted"}.get(label, label)


def contradiction(verdict: str, q: Qualifiers | None) -> str:
    """What in a row's qualifiers contradicts its label ("" when nothing does): a row that holds (confirmed,
    reproduced) names no place where it fails and no reason it is not decided; a row shown to fail gives no such
    reason either, and names where it fails when it names where it holds; a reason belongs to an undecided row. Every
    committed row satisfies these (a test reads docs/verdicts.json); every ClaimResult is checked when it is made, so
    a stored one (the evidence store, the kept verdicts) is checked when it is read back."""
    if q is None:
        return ""
    if verdict in HOLDS_LABELS and q.fails:
        return f"it reads {verdict} but its qualifiers say it fails ({q.fails!r:.60})"
    if verdict in FAILS_LABELS and q.holds and not q.fails:
        return f"it reads {verdict} but its qualifiers say only where it holds ({q.holds!r:.60})"
    if q.reason and verdict in HOLDS_LABELS + FAILS_LABELS:
        return f"it reads {verdict} but its qualifiers give the reason {q.reason!r} (an undecided row's)"
    return ""
