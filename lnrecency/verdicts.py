"""Claim verdicts: a claim, the setting it was evaluated under, the verdict, and its evidence.

Shared by ``lnrecency verify``, ``pytest proofs_check`` and ``lnrecency report``.
JSON schema of one result (``ClaimResult.to_json()``):
    {"id": str, "source": str, "statement": str, "setting": {...}, "verdict": str, "finding": str,
     "evidence": {...}}
``setting``: a typed :class:`Setting` (read by attribute; its JSON lists the fields that are set).
``evidence``: a typed record of :mod:`lnrecency.evidence` (read by attribute; its JSON is ``to_json()``).
``finding``: in one or two sentences, what holds and what fails, with the boundary and the numbers
("" when the verdict says it all).
"""
from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping

from lnrecency.evidence import VERDICTS, Evidence, combine, decide, jsonable  # noqa: F401 (the rules, re-exported)
SOURCES = ("seed text", "printed derivation", "our formulation", "trained models, our formulation")


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


@dataclass(frozen=True)
class ClaimResult:
    """One verdict. ``id``: "T1", "C2".. or "P1".."P9"; ``source``: one of :data:`SOURCES`."""

    id: str
    source: str
    statement: str
    setting: Setting  # a mapping of its fields is accepted and converted
    verdict: str
    evidence: Evidence
    finding: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "setting", Setting.of(self.setting))
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {self.source!r}")
        if not isinstance(self.evidence, Evidence):
            raise TypeError(f"evidence must be an lnrecency.evidence record; got {type(self.evidence).__name__}")

    @property
    def confirmed(self) -> bool:
        return self.verdict == "confirmed"

    def to_json(self) -> dict:
        return {"id": self.id, "source": self.source, "statement": self.statement,
                "setting": self.setting.to_json(), "verdict": self.verdict, "finding": self.finding,
                "evidence": jsonable(self.evidence)}


def select(results: list, claim_id: str, *, statement: str | None = None, verdict: str | None = None,
           **setting: Any) -> list[tuple["ClaimResult", dict]]:
    """(result, setting) pairs of ``claim_id`` whose setting matches every keyword (the result's base
    setting merged with each per-setting dict), optionally with that exact ``statement`` (the claim
    module's constant) and ``verdict``: how tests and scripts pick results, by claim id and setting."""
    out = []
    for r in results:
        if r.id != claim_id or (statement is not None and r.statement != statement) or \
                (verdict is not None and r.verdict != verdict):
            continue
        for merged in r.setting.cases():
            if all(merged.get(k) == v for k, v in setting.items()):
                out.append((r, merged))
    return out
