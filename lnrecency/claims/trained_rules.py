"""The one place where every trained-model verdict (TM1-TM5, S2.x, S3.x) is decided.

A verdict row is a statement about one or more *parts*; each part is one statistic measured once per
training seed (:class:`lnrecency.inference.stats.SeedTest`). The rules:

* **Learned.** A part is decided on the runs that passed its learning gate (held-out loss a stated amount
  below the targets' entropy without context; an induction score where the statement is about an induction
  head), when at least :data:`MIN_LEARNED` = 3 of them did; the runs that failed are named and left out.
  Otherwise it reads "not decided: not learned", with the numbers.
* **Stable.** Trained models are probed on their training distribution (the decisive variant) and on random
  tokens (beside it). A directional statistic whose mean has opposite signs in the two variants (relative to
  the boundary), or an equivalence statistic inside the margin in one variant and outside in the other, is
  **unstable**: never confirmed or refuted.
* **Directional** statements are confirmed only by a significant one-sided t-test in their direction and
  refuted only by one in the opposite direction. **Equality** statements are confirmed only by two one-sided
  tests (TOST) within a margin fixed in advance, and refuted only when shown outside it.
* **Family-wise rate.** All trained verdicts together have family-wise error rate
  :data:`lnrecency.inference.stats.TRAINED_FWER` = 0.05: each experiment (thesis, seed002, seed003) receives a share
  proportional to its number of tests (weighted Bonferroni over the three; the sizes are fixed by the design,
  before any result), and Holm's procedure decides within the experiment. Parts that cannot be decided (not
  learned, unstable, non-finite) stay in the family, undecided.
* **Universal** statements ("every layer >= 2") are confirmed only where every part is confirmed; any
  refuted part refutes them.
* **Quick runs** are smoke tests: their rows say "quick run: not decisive" and are inconclusive.
* Each part reports the smallest effect its design detects with power 0.8 at the experiment's first Holm
  threshold (:meth:`lnrecency.inference.stats.SeedTest.detectable`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from lnrecency.inference.evidence import Evidence, combine, item, ladder, record
from lnrecency.inference.qualifiers import by_a_hair as near_level
from lnrecency.inference.stats import TRAINED_FWER, SeedTest, decide_family

if TYPE_CHECKING:
    from lnrecency.inference.stats import SeedDecision

__all__ = ["claim_rows", "MIN_LEARNED", "keep_learned", "Part", "PartEvidence", "RowEvidence", "decide_parts",
           "experiment_alpha", "DESIGN_SIZES", "QUICK",
           "NOT_LEARNED", "UNSTABLE", "share_words", "stability", "reproduction_label", "by_a_hair", "not_installed",
           "one_claim_of", "snapshot_levels", "plan_levels"]

QUICK = "quick run: not decisive"


def reproduction_label(verdict: str) -> str:
    """A seed test's decision (confirmed / refuted / inconclusive) as a verdict on trained models reads: a result
    of someone else's tested on ours is "reproduced" or "the opposite shown"."""
    from lnrecency.experiments.plans.declaration import label

    return label(verdict, "theirs")
def by_a_hair(p_pair: float, level: float | None, verdict: str) -> str:
    """The sentence a plan's finding adds when its pair's p lies within a factor of 2 of its Holm level (either
    side; :func:`lnrecency.inference.qualifiers.by_a_hair`, which the row's cell reads), saying which side and why
    ("" otherwise)."""
    if not near_level(p_pair, level):
        return ""
    where = ("outside it" if p_pair > level else "inside it, but Holm's step-down stopped at a test before it"
             if verdict == "inconclusive" else "inside it")
    # an undecided test was not decided by a hair: it was left undecided by one (the cell's words, plain.cell)
    return (f" {'Undecided' if verdict == 'inconclusive' else 'Decided'} by a hair: its pair's p {p_pair:.2g} is "
            f"within a factor of 2 of its Holm level {level:.3g} ({where}).")


#: a part is decided on the runs that pass its learning gate, when at least this many do (the minimum for a
#: verdict over training seeds); the runs that fail are named and left out
MIN_LEARNED = 3
NOT_LEARNED = "not decided: not learned"
UNSTABLE = "unstable: the training-distribution probe and the neutral random control disagree in sign"


def thesis_size(st) -> int:
    """Tests of the thesis design: TM1, TM2, TM3, TM5 one per layer >= 2 per architecture; TM4 two (slope and
    second moment) per layer per architecture and normalisation."""
    from lnrecency.experiments.studies.thesis_config import ARCHS

    upper = sum(ARCHS[a]["n_layers"] - 1 for a in st.archs)
    return 4 * upper + 2 * len(st.norms) * sum(ARCHS[a]["n_layers"] for a in st.archs)


def seed003_size(st) -> int:
    return len(st.tasks) * len(st.archs) + 2 * len(st.tasks) * (len(st.archs) - 1)


#: tests per experiment, fixed by the design (seed002: S2.2-S2.7 with two statistics for S2.4; S2.1 is read seed by
# seed)
DESIGN_SIZES = {"thesis": thesis_size, "seed002": lambda st: 7, "seed003": seed003_size}


def share_words(family: int, level: float) -> str:
    """Where an experiment's Holm level comes from, in words (:func:`experiment_alpha`): its share of the trained
    claims' family-wise rate, by its number of tests ("" when the level is the whole rate)."""
    if not 0 < level < TRAINED_FWER:
        return ""
    total = round(family * TRAINED_FWER / level)
    return f" (its share of the trained claims' family-wise {TRAINED_FWER:g}: {family} of their {total} tests)"


def experiment_alpha(experiment: str, quick: bool, fwer: float = TRAINED_FWER) -> float:
    """The experiment's share of the family-wise rate: fwer * its tests / all trained tests (of the same mode)."""
    from lnrecency.experiments.studies.seeds_config import EXPERIMENTS
    from lnrecency.experiments.studies.thesis_config import ThesisSettings

    presets = {"thesis": ThesisSettings.preset(quick), **{k: v.preset(quick) for k, v in EXPERIMENTS.items()}}
    sizes = {k: DESIGN_SIZES[k](presets[k]) for k in DESIGN_SIZES}
    return fwer * sizes[experiment] / sum(sizes.values())


@dataclass
class Part:
    """One statistic of one verdict row: its test on the training distribution (``test``), the same statistic
    on random tokens (``random``: a SeedTest or None when not measured), the runs' learning gate, the
    trajectory (stage -> (mean step, mean value)), and what it is."""

    label: str
    statistic: str
    test: SeedTest | None
    random: SeedTest | None = None
    learned: int = 0
    seeds: int = 0
    gate: str = ""
    trajectory: dict = field(default_factory=dict)
    labels: tuple = ("confirmed", "refuted")  # the words of the two decisive outcomes
    status: str = ""
    decision: SeedDecision | None = None

    @property
    def decidable(self) -> bool:
        return self.status == ""


def keep_learned(values, ok) -> tuple:
    """The values of the runs that pass the gate (all of them when fewer than MIN_LEARNED do: the part is then
    not decided, and its numbers are shown over every run)."""
    values, ok = list(values), list(ok)
    kept = tuple(v for v, good in zip(values, ok) if good)
    return kept if len(kept) >= MIN_LEARNED else tuple(values)


def stability(test: SeedTest, random: SeedTest | None) -> bool:
    """Whether the two probe variants agree (see the module docstring); True when no random variant."""
    if random is None or not random.finite:
        return True
    if test.rule == "directional":
        a, b = test.mean - test.boundary, random.mean - random.boundary
        return not (a * b < 0)
    inside = [abs(t.mean - t.boundary) < t.margin for t in (test, random)]
    return inside[0] == inside[1]


def decide_parts(parts: list, alpha: float, *, quick: bool) -> None:
    """Set each part's status and decision: gate, stability, finiteness, then Holm over the experiment's
    parts at rate ``alpha`` (its share of the family-wise rate)."""
    for p in parts:
        if p.test is None or not p.test.finite:
            p.status = p.status or "not decided: the statistic is undefined (non-finite) in some seed"
        elif p.learned < MIN_LEARNED:
            p.status = (f"{NOT_LEARNED} ({p.learned} of {p.seeds} runs pass the gate, fewer than {MIN_LEARNED}: "
                        f"{p.gate})")
        elif not stability(p.test, p.random):
            p.status = UNSTABLE
    decisions = decide_family([p.test if p.decidable else None for p in parts], alpha)
    for p, d in zip(parts, decisions):
        p.decision = d
        if d is None and p.test is not None and p.test.finite:  # undecided, but its numbers are shown
            from lnrecency.inference.stats import SeedDecision

            p.decision = SeedDecision(p.test, "inconclusive", len(parts), alpha)
        if quick and p.decidable:
            p.status = QUICK


def part_verdict(p: Part) -> str:
    if not p.decidable or p.decision is None:
        return "inconclusive"
    v = p.decision.verdict
    return {"confirmed": p.labels[0], "refuted": p.labels[1]}.get(v, "inconclusive")


def row_verdict(parts: list) -> str:
    """The universal rule over a row's parts (confirmed / refuted or their seed labels)."""
    verdicts = [part_verdict(p) for p in parts]
    yes, no = parts[0].labels
    mapped = combine([ladder(v == yes, opposite=v == no) for v in verdicts])
    return {"confirmed": yes, "refuted": no}.get(mapped, "inconclusive")


def _fmt(x: float) -> str:
    return "n/a" if x is None or not math.isfinite(x) else f"{x:.3g}"


def _iv(t: SeedTest | None) -> str:
    if t is None or not t.finite:
        return "n/a"
    lo, hi = t.interval()
    return f"{_fmt(t.mean)} [{_fmt(lo)}, {_fmt(hi)}]"


def part_text(p: Part) -> str:
    """One sentence: the part, its verdict and margin, the random-token variant, the gate, the trajectory."""
    name = p.statistic if p.label in p.statistic else f"{p.label}: {p.statistic}"
    used = p.test.n_values if p.test is not None else p.seeds
    head = f"{name} {_iv(p.test)} (95% over {used} seeds" + (
        f"; the {p.seeds - p.learned} of {p.seeds} that fail the learning gate left out)"
        if MIN_LEARNED <= p.learned < p.seeds else ")")
    bits = []
    if p.random is not None:
        bits.append(f"neutral random control {_iv(p.random)}")
    d = p.decision
    if p.status:
        bits.insert(0, p.status)
    elif d is not None:
        verdict = part_verdict(p)
        rule = (f"within +-{_fmt(d.test.margin)}" if d.test.rule == "equivalence"
                else f"{d.test.side} {_fmt(d.test.boundary)}")
        bits.insert(0, f"{verdict} (statement: {rule}; one-sided p {d.test.p_confirm:.2g} for it, "
                       f"{d.test.p_refute:.2g} against it; Holm family of {d.family} at {d.fwer:.3g}"
                       f"{share_words(d.family, d.fwer)}, "
                       f"first threshold {d.fwer / d.family:.2g} on 2 min(p); smallest effect detected with "
                       f"power 0.8: {_fmt(d.detectable)})")
    traj = p.trajectory
    if traj:
        seq = [(k, traj[k]) for k in ("quarter", "half", "final") if k in traj]
        signs = {np.sign(v[1] - (p.test.boundary if p.test else 0)) for _, v in seq if math.isfinite(v[1])}
        text = ", ".join(f"{k} (step {v[0]:.0f}) {_fmt(v[1])}" for k, v in seq)
        bits.append("trajectory " + text + ("; the sign changes along training" if len(signs - {0}) > 1 else ""))
    return head + ": " + "; ".join(bits)


@record
class PartEvidence(Evidence):
    """One part of a trained verdict row: its decision and its numbers."""

    label: str
    statistic: str
    verdict: str
    status: str
    training_seeds: int
    learned: int
    gate: str
    test: dict | None
    random: dict | None
    decision: dict | None
    trajectory: dict


@record
class RowEvidence(Evidence):
    """A trained verdict row: its parts, the seeds, the learned runs, and the row's summary fields."""

    parts: tuple
    training_seeds: int
    learned: int
    interval: tuple | None = item(omit_none=False, default=None)
    rule: dict | None = item(default=None)
    probe: dict | None = item(default=None)
    trajectory: dict | None = item(default=None)
    # the secondary rows of the synthetic task: what its layer slope is made of, per normalisation (a sentence)
    anchoring: str | None = item(omit_none=True)

    def top_level(self) -> dict:
        """The fields every trained verdict row carries at the top of its JSON."""
        from lnrecency.inference.evidence import jsonable

        return {"training_seeds": self.training_seeds, "learned": self.learned,
                "interval": jsonable(self.interval), "rule": jsonable(self.rule), "probe": jsonable(self.probe),
                "trajectory": jsonable(self.trajectory)}


def part_evidence(p: Part) -> PartEvidence:
    return PartEvidence(label=p.label, statistic=p.statistic, verdict=part_verdict(p), status=p.status,
                        training_seeds=p.seeds, learned=p.learned, gate=p.gate,
                        test=p.test.to_json() if p.test is not None else None,
                        random=p.random.to_json() if p.random is not None else None,
                        decision=p.decision.to_json() if p.decision is not None else None,
                        trajectory={k: {"step": v[0], "mean": v[1]} for k, v in p.trajectory.items()})


def row_evidence(parts: list) -> RowEvidence:
    """The row's evidence. Its summary fields describe the part that decides it: the first part not
    confirmed (or the first part when all are)."""
    key = next((p for p in parts if part_verdict(p) != p.labels[0]), parts[0])
    t = key.test
    interval = tuple(t.interval()) if t is not None and t.finite else None
    rule = {"rule": t.rule if t is not None else None, "margin": t.margin if t is not None else None,
            "side": t.side if t is not None else None, "boundary": t.boundary if t is not None else None,
            "part": key.label}
    probe = {"task": {"mean": t.mean if t is not None and t.finite else None, "interval": interval},
             "random": ({"mean": key.random.mean, "interval": tuple(key.random.interval())}
                        if key.random is not None and key.random.finite else None),
             "stable": stability(t, key.random) if t is not None and t.finite else None}
    traj = {k: {"step": v[0], "mean": v[1]} for k, v in key.trajectory.items()}
    return RowEvidence(parts=tuple(part_evidence(p) for p in parts), training_seeds=max(p.seeds for p in parts),
                       learned=min(p.learned for p in parts), interval=interval, rule=rule, probe=probe,
                       trajectory=traj or None)


def claim_rows(cid: str, statement: str, base: dict, rows: list, *, quick: bool) -> list:
    """One ClaimResult per decided row [(setting, [Part])]: the universal verdict over its parts, the parts'
    sentences as the finding (led by the quick label in a quick run), and the row's evidence; its source read from
    the catalogue."""
    from lnrecency.claims.catalog import result_source
    from lnrecency.claims.trained_qualifiers import SEED_WORDS, row_qualifiers
    from lnrecency.inference.verdicts import ClaimResult

    source = result_source(cid, statement)
    lead = QUICK + ". " if quick else ""
    decided = [(setting, parts, row_verdict(parts), row_evidence(parts)) for setting, parts in rows]
    fields = [{"verdict": verdict, **ev.top_level()} for _, _, verdict, ev in decided]  # each row's, and its others'
    out = []
    for (setting, parts, verdict, ev), row in zip(decided, fields):
        q = (row_qualifiers(cid, row, min_learned=MIN_LEARNED, quick=quick, others=fields)
             if cid in SEED_WORDS else None)
        out.append(ClaimResult(cid, source, statement, {**base, **setting}, verdict, ev,
                               lead + " ".join(part_text(p) + "." for p in parts), q))
    return out


SECONDARY_LEAD = "Secondary (an interval, not a verdict): "


def secondary_finding(interval, finding: str) -> str:
    """A secondary row's finding: :data:`SECONDARY_LEAD`, the side of 0 its ``interval`` lies on (when it is two
    finite numbers), then ``finding``."""
    import math

    side = ""
    if isinstance(interval, (tuple, list)) and len(interval) == 2 and all(
            isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) for x in interval):
        lo, hi = float(interval[0]), float(interval[1])
        where = "above 0" if lo > 0 else "below 0" if hi < 0 else "across 0"
        side = f"its interval [{lo:.3g}, {hi:.3g}] lies {where}. "
    return SECONDARY_LEAD + side + (finding or "")


def secondary_row(r):
    """A row of a secondary claim (catalog: primary=False) reads "secondary", never a verdict of its own, and its
    finding opens with the side of 0 its interval lies on (an interval wholly on the far side is not "undecided")."""
    import dataclasses

    if r.not_run:
        return r
    return dataclasses.replace(r, verdict="secondary",
                               finding=secondary_finding(getattr(r.evidence, "interval", None), r.finding))


def not_installed(cid: str, statement: str, exc: Exception, setting: dict | None = None):
    """The row of a claim whose experiment needs the models extra when it is not installed: inconclusive, NotRun with
    the import error, and the install command."""
    from lnrecency.claims.catalog import result_source
    from lnrecency.inference.evidence import NotRun
    from lnrecency.inference.verdicts import ClaimResult

    return ClaimResult(cid, result_source(cid, statement), statement, setting or {}, "inconclusive",
                       NotRun(reason=f"needs the models extra ({exc})"),
                       "Not evaluated: needs the models extra (python3 -m pip install -e '.[models]').")


def snapshot_levels(tests: dict, fwer: float = 0.05) -> dict:
    """Each test's Holm level in the step-down order, from a plan snapshot's tests (key -> its JSON with "p_pair", or
    with "p_confirm" and "p_refute" from which the pair p is derived, or None for a test not decided; the undecided
    keep their places, as decide_family does)."""
    from lnrecency.inference.seed_tests import holm_levels, pair_p

    def p_of(t) -> float:
        if not isinstance(t, dict):
            return float("nan")
        if "p_pair" in t:
            return float(t["p_pair"])
        return pair_p(float(t.get("p_confirm", float("nan"))), float(t.get("p_refute", float("nan"))))
    return dict(zip(tests, holm_levels([p_of(t) for t in tests.values()], fwer)))


def plan_levels(name: str, tests: dict) -> dict:
    """Each test of plan ``name`` (its declaration, :mod:`lnrecency.experiments.plans.declared`) -> the Holm level it
    was compared with, family by family (its declared families; one of all its tests otherwise), from its decisions
    ``tests`` (test -> decision JSON or None; a test missing there counts as undecided)."""
    from lnrecency.experiments.plans.declared import study

    s = study(name)
    return {k: v for fam in s.holm_families().values()
            for k, v in snapshot_levels({t: tests.get(t) for t in fam}, s.fwer).items()}


def one_claim_of(evaluate_all, cid: str):
    """The evaluator of claim ``cid`` from ``evaluate_all(quick, progress)``, which decides a plan's family at once:
    its rows only (asking for one claim decides that claim; the experiment's runs are cached)."""
    def evaluate(*, quick: bool = False, progress=None) -> list:
        return [r for r in evaluate_all(quick, progress) if r.id == cid]
    return evaluate
