"""Claim verdicts: a claim, the setting it was evaluated under, the verdict, and its evidence.

Shared by ``lnrecency verify``, ``pytest proofs_check`` and ``lnrecency report``.
JSON schema of one result (``ClaimResult.to_json()``):
    {"id": str, "source": str, "statement": str, "setting": {...}, "verdict": str, "finding": str,
     "evidence": {...}}
``setting``: a typed :class:`Setting` (read by attribute; its JSON lists the fields that are set).
``evidence``: a typed record of :mod:`lnrecency.inference.evidence` (read by attribute; its JSON is ``to_json()``).
``finding``: in one or two sentences, what holds and what fails, with the boundary and the numbers
("" when the verdict says it all).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from lnrecency.inference.evidence import VERDICTS, Evidence, NotRun, Setting, combine, decide, jsonable  # noqa: F401 (re-exported)
from lnrecency.inference.qualifiers import Qualifiers, contradiction, rule_outcome

SOURCES = ("seed text", "printed derivation", "our formulation", "trained models, our formulation",
           "prior work (Wu et al. 2025)", "trained models, seed text")
#: the sources whose statements are someone else's: the only rows that may read "reproduced" / "the opposite shown"
THEIR_SOURCES = ("seed text", "prior work (Wu et al. 2025)", "trained models, seed text")


def evidence_contradiction(verdict: str, evidence) -> str:
    """What in a row's evidence contradicts its label ("" when nothing does): each setting's evidence that decides
    the row by itself (a record with a ``verdict`` of its own, unless it says ``decides_row = False``) must give the
    row's outcome, or the row must be inconclusive (a failed Monte Carlo check, or a domain checked only in part,
    leaves a decided setting undecided; nothing makes an undecided or opposite setting decided)."""
    from lnrecency.inference.evidence import SettingGroup

    row = rule_outcome(verdict)
    if row in ("inconclusive", "secondary", "not run"):
        return ""
    items = [p.evidence for p in evidence.per_setting] if isinstance(evidence, SettingGroup) else [evidence]
    for k, e in enumerate(items, start=1):
        if not getattr(type(e), "decides_row", True):
            continue
        try:
            own = getattr(e, "verdict", None)
        except (ArithmeticError, LookupError, TypeError, ValueError):  # a damaged record decides nothing
            return f"the evidence of setting {k} cannot be read back to a verdict"
        if isinstance(own, str) and own in ("confirmed", "refuted", "inconclusive") and own != row:
            return (f"it reads {verdict} but the evidence of setting {k} ({type(e).__name__}) decides "
                    f"{own}")
    return ""


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
    qualifiers: Qualifiers | None = None  # what the row says beyond its label, as typed fields (issue 75)

    def __post_init__(self) -> None:
        object.__setattr__(self, "setting", Setting.of(self.setting))
        if self.qualifiers is not None and not isinstance(self.qualifiers, Qualifiers):
            raise TypeError(f"qualifiers must be an lnrecency.inference.qualifiers.Qualifiers; "
                            f"got {type(self.qualifiers).__name__}")
        said = contradiction(self.verdict, self.qualifiers)
        if said:  # a row does not follow from what it carries: refused when made, and when read back from a store
            raise ValueError(f"the {self.id} row does not follow from what is stored with it: {said}")
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {VERDICTS}; got {self.verdict!r}")
        if self.source not in SOURCES:
            raise ValueError(f"source must be one of {SOURCES}; got {self.source!r}")
        if self.verdict in ("reproduced", "the opposite shown") and self.source not in THEIR_SOURCES:
            raise ValueError(f"the {self.id} row reads {self.verdict!r}, a label for someone else's statement, but its "
                             f"source is {self.source!r} (ours: confirmed / refuted)")
        if not isinstance(self.evidence, Evidence):
            raise TypeError(f"evidence must be an lnrecency.inference.evidence record; "
                            f"got {type(self.evidence).__name__}")
        said = evidence_contradiction(self.verdict, self.evidence)
        if said:  # re-decided from the evidence stored with it (issue 86, item 1)
            raise ValueError(f"the {self.id} row does not follow from what is stored with it: {said}")

    @property
    def confirmed(self) -> bool:
        return self.verdict == "confirmed"

    def on_part(self, checked: str, rest: str) -> "ClaimResult":
        """This row as a check of part of its statement's domain (issue 84, item 2): a universal statement a run
        checked only ``checked`` (e.g. "at layers 3-4") is not confirmed by it. A row that holds there reads
        inconclusive, reason "partial", holding ``checked``, and its finding names ``rest`` (what the run did not
        check); a row shown to fail there stays refuted (one counterexample decides), an undecided one stays."""
        if self.verdict not in ("confirmed", "reproduced"):
            return self
        q = replace(self.qualifiers or Qualifiers(), holds=checked, reason="partial")
        return replace(self, verdict="inconclusive", qualifiers=q,
                       finding=f"Checked {checked} only; not checked: {rest}; not confirmed beyond what was checked. "
                               + self.finding)

    @property
    def not_run(self) -> bool:
        """A row that was not evaluated (e.g. the models extra is missing): reported, never counted as a verdict."""
        return isinstance(self.evidence, NotRun)

    def to_json(self) -> dict:
        out = {"id": self.id, "source": self.source, "statement": self.statement,
               "setting": self.setting.to_json(), "verdict": self.verdict, "finding": self.finding,
               "evidence": jsonable(self.evidence)}
        if self.qualifiers is not None:
            out["qualifiers"] = self.qualifiers.to_json()
        top = getattr(self.evidence, "top_level", None)  # trained verdict rows: their summary fields
        if callable(top):
            out.update(top())
        return out


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
