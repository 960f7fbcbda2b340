"""A study declared once (issue 82): what it trains and probes, its tests and, for a pre-registered plan, the
sentence each outcome of each test means (its readings), as data. Standard library only: the claims, the report and
the command line read a declaration without loading numpy or torch; :mod:`lnrecency.experiments.plans.engine` runs it.

A declaration names its code by hooks, ``"module:attribute"`` strings, resolved only when the study runs (a hook
that does not resolve is a ValueError naming the study and the field, then; tests/experiments/test_plans.py resolves
every declared one). The rest is checked when the declaration is made: a wrong outcome, quantity, operator, test ID,
hook spelling, or a reading said to be written before the runs but missing from its plan's text is a ValueError naming
the study, the test and the field; lnrecency.experiments.plans.declared refuses a test ID or a claim that a second plan
takes.
"""
from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path

from lnrecency.experiments.plans.arms import IMPOSED, NORMS, Arm, Arms

__all__ = ["Condition", "Reading", "Sample", "Rule", "Test", "Arm", "Arms", "Design", "Study", "OUTCOMES",
           "QUANTITIES", "HOOKS", "DATA", "IMPOSED", "NORMS", "sha256_of", "label", "readings_in"]

#: a study's fields that name its code ("package.module:attribute")
HOOKS = ("settings", "run", "snapshot", "lines", "summaries", "figure", "numbers")
#: where the plan texts live (their bytes are hashed; a changed file is a new plan)
DATA = Path(__file__).resolve().parents[2] / "data"
OUTCOMES = ("confirmed", "refuted", "inconclusive")
#: the quantities a reading may state a condition on, each read from a snapshot's per-run rows of one cell (the runs
#: the plan's rule uses: past the learning gate, and at the target where the cell has one); the engine defines them
QUANTITIES = {
    "mean slope": "the mean of the runs' layer-2 slopes (logit per key)",
    "bos path share": "the BOS path's share of the mean slope (the path decomposition: own + bos + other + bias)",
    "own path share": "the own-token path's share of the mean slope",
    "other path share": "the other keys' path's share of the mean slope",
}
#: the words by which a reading speaks of a recorded quantity beyond its test's own sample (the path decomposition):
#: a reading that uses them states that quantity as a condition on the rows (:class:`Reading`), so that its own rows
#: can contradict it; the mean slope is what the test itself decides, and needs none
SPOKEN = {
    "bos path share": r"\bBOS[- ]path\b|\bpath through (the )?BOS\b",
    "own path share": r"\bown[- ](token[- ])?path\b",
    "other path share": r"\bother[- ]keys?'? path\b|\bother[- ]path\b",
}
OPS = ("<", "<=", ">", ">=")
WRITTEN = ("before the runs", "after the runs")
_HOOK = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_.]*$")


def sha256_of(path: Path) -> str:
    """The SHA-256 of a plan text (its bytes as shipped): the one definition every plan's ``plan_sha256`` calls."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def readings_in(name: str) -> dict:
    """Test ID -> its readings as a plan text in lnrecency/data/ writes them, one line each (plan v5 onwards):
    ``- **F1 confirmed:** the sentence``. The words are the hashed plan's own (nothing is copied by hand)."""
    out: dict = {}
    for tid, outcome, text in re.findall(r"^- \*\*([A-Z][0-9]) (confirmed|refuted|inconclusive):\*\* (.+)$",
                                         (DATA / name).read_text(encoding="utf-8"), re.M):
        out.setdefault(tid, []).append(Reading(outcome, text.strip()))
    return {k: tuple(v) for k, v in out.items()}


def label(verdict: str, whose: str) -> str:
    """A decision as a row reads it: someone else's statement tested on our models is "reproduced" / "the opposite
    shown" / "inconclusive"; ours confirmed / refuted / inconclusive (one label, one meaning)."""
    if whose == "theirs":
        return {"confirmed": "reproduced", "refuted": "the opposite shown"}.get(verdict, "inconclusive")
    return verdict if verdict in OUTCOMES else "inconclusive"


def _text(where: str, name: str, value, limit: int = 600, empty: bool = False) -> None:
    if not isinstance(value, str) or (not value.strip() and not empty) or len(value) > limit:
        raise ValueError(f"{where}: {name} must be a text of at most {limit} characters; got {value!r:.80}")


@dataclass(frozen=True)
class Condition:
    """What a reading says of a recorded quantity, as a condition on the rows: ``quantity`` of ``cell`` ``op``
    ``value`` (e.g. the BOS path share of "U2 layernorm" < 0.5), and the same in ``words``."""

    cell: str
    quantity: str
    op: str
    value: float
    words: str

    def __post_init__(self):
        where = f"condition {self.words!r:.60}"
        if self.quantity not in QUANTITIES:
            raise ValueError(f"{where}: quantity must be one of {', '.join(QUANTITIES)}; got {self.quantity!r}")
        if self.op not in OPS:
            raise ValueError(f"{where}: op must be one of {', '.join(OPS)}; got {self.op!r}")
        if isinstance(self.value, bool) or not isinstance(self.value, (int, float)) or self.value != self.value:
            raise ValueError(f"{where}: value must be a finite number; got {self.value!r}")
        _text(where, "cell", self.cell, 60)
        _text(where, "words", self.words, 200)

    def holds(self, x: float) -> bool:
        return {"<": x < self.value, "<=": x <= self.value, ">": x > self.value, ">=": x >= self.value}[self.op]


@dataclass(frozen=True)
class Reading:
    """The sentence one outcome of a test means, when it was written (before or after the runs) and the conditions
    on the rows that its words state (checked when the plan is decided). ``note``: ours, added after the runs to a
    pinned reading whose words say other than what its runs did (plan v4's "LayerNorm-level share", where the runs set
    the share row by row to a profile); the pinned words stay as written and the note is rendered beside them."""

    outcome: str
    text: str
    written: str = "before the runs"
    conditions: tuple = ()
    note: str = ""

    def __post_init__(self):
        if self.outcome not in OUTCOMES:
            raise ValueError(f"reading {self.text!r:.60}: outcome must be one of {', '.join(OUTCOMES)}; got "
                             f"{self.outcome!r}")
        if self.written not in WRITTEN:
            raise ValueError(f"reading {self.text!r:.60}: written must be one of {', '.join(WRITTEN)}; got "
                             f"{self.written!r}")
        _text("reading", "text", self.text)
        if self.note:
            _text("reading", "note", self.note)
        if not all(isinstance(c, Condition) for c in self.conditions):
            raise ValueError(f"reading {self.text!r:.60}: conditions must be Condition records")

    def unstated(self) -> tuple[str, str] | None:
        """(the words, the quantity) of a recorded quantity its text speaks of with no condition on it, or None
        (:data:`SPOKEN`; a study refuses such a reading when declared)."""
        stated = {c.quantity for c in self.conditions}
        for q, words in SPOKEN.items():
            said = re.search(words, self.text, re.I)
            if said and q not in stated:
                return said.group(0), q
        return None


@dataclass(frozen=True)
class Sample:
    """The per-seed values a test reads from its plan's per-run table (the snapshot publishes it): the runs of
    ``cell`` past the study's gate for it (:meth:`Study.used`; ``gated=False``: every run), each run's layer-2 slope,
    or its slope at the point ``at`` along training ("loss 4.25", "step 1465"; a run without that point is left out),
    less its slope at the point ``minus`` (paired: the same run's, seeds in order); ``value``: the row's field read
    instead of the slope (plan v3's "qk_identity_value": the intervened slope less half the intact one); ``less``:
    (k, field), the value less k times the same row's field (plan v2's ablated slope less half the intact one);
    ``matched``: a cell whose runs' median final held-out loss is where each run's slope is read (its first evaluation
    at or below it, from the row's trajectory of [tokens, loss, slope]; plan v2's matched loss): the sample is complete
    only when every run got there, else its test is not decided."""

    cell: str
    at: str | None = None
    minus: str | None = None
    gated: bool = True
    value: str = "slope"
    less: tuple = ()
    matched: str | None = None

    def __post_init__(self):
        where = f"sample of cell {self.cell!r}"
        _text(where, "cell", self.cell, 60)
        for name in ("at", "minus"):
            value = getattr(self, name)
            if value is not None and not re.fullmatch(r"(loss|step) [0-9.]+", str(value)):
                raise ValueError(f"{where}: {name} must be a point 'loss X' or 'step N'; got {value!r:.60}")
        if self.minus is not None and self.at is None:
            raise ValueError(f"{where}: minus (a paired point) needs at")
        if not isinstance(self.gated, bool):
            raise ValueError(f"{where}: gated must be true or false; got {self.gated!r}")
        if not re.fullmatch(r"[a-z][a-z0-9_]{0,39}", str(self.value)) or (self.at and self.value != "slope"):
            raise ValueError(f"{where}: value must be a row's field (lower case, '_'), and the slope at a point along "
                             f"training; got {self.value!r:.60}")
        if self.less and not (isinstance(self.less, tuple) and len(self.less) == 2
                              and isinstance(self.less[0], (int, float)) and not isinstance(self.less[0], bool)
                              and 0 < self.less[0] <= 10 and re.fullmatch(r"[a-z][a-z0-9_]{0,39}", str(self.less[1]))):
            raise ValueError(f"{where}: less must be (k, field) with 0 < k <= 10 and a row's field; got "
                             f"{self.less!r:.60}")
        if self.less and self.at:
            raise ValueError(f"{where}: less reads the row's fields at the end, not at a point along training")
        if self.matched is not None:
            _text(where, "matched", self.matched, 60)
            if self.at or self.less or self.value != "slope":
                raise ValueError(f"{where}: matched reads the slope at a loss, with no point, value or less")


@dataclass(frozen=True)
class Rule:
    """How a test is decided, fixed before the runs: its sample, the side its statement claims ("above", "below", or
    "within" with ``margin``: an equivalence test, two one-sided tests of the difference within +-margin), and a fixed
    boundary or a second sample (then Welch's two-sample test of the difference). The engine decides it
    (:func:`lnrecency.experiments.plans.engine.decide`) with the plan's Holm families, by the pair rule."""

    sample: Sample
    side: str = "above"
    boundary: float = 0.0
    other: Sample | None = None
    margin: float | None = None  # side "within": an equivalence test (TOST) of the difference within +-margin

    def __post_init__(self):
        if not isinstance(self.sample, Sample) or not (self.other is None or isinstance(self.other, Sample)):
            raise ValueError(f"rule on {self.sample!r:.60}: sample and other must be Sample records")
        if self.side not in ("above", "below", "within"):
            raise ValueError(f"rule on cell {self.sample.cell!r}: side must be 'above', 'below' or 'within'; got "
                             f"{self.side!r}")
        if (self.side == "within") != (self.margin is not None) or (
                self.margin is not None and not (isinstance(self.margin, (int, float)) and 0 < self.margin < 1e6)):
            raise ValueError(f"rule on cell {self.sample.cell!r}: side 'within' (an equivalence test) and a positive "
                             f"margin go together; got side {self.side!r}, margin {self.margin!r}")
        if isinstance(self.boundary, bool) or not isinstance(self.boundary, (int, float)) or not (
                abs(self.boundary) < float("inf")):
            raise ValueError(f"rule on cell {self.sample.cell!r}: boundary must be a finite number; got "
                             f"{self.boundary!r}")
        if self.other is not None and self.boundary != 0:
            raise ValueError(f"rule on cell {self.sample.cell!r}: a two-sample rule compares the difference with 0")


@dataclass(frozen=True)
class Test:
    """One test of a plan: its ID in the plan, the claim whose row it decides (and the catalogue key of its statement,
    None for the claim's title), whose statement it is, where it is read and what is compared in which unit (the
    row's words), its margin when fixed in advance, its strongest counter-row (test, words), its readings, and (plans
    the engine decides) its statement in the plan's words and its rule."""

    id: str
    claim: str
    where: str
    comparison: str
    unit: str
    statement_key: str | None = None
    whose: str = "ours"
    margin: float | None = None
    counter: tuple = ()
    readings: tuple = ()
    in_text: str | None = None  # the ID its plan's text gives it, where another plan's test already holds that one
    says: str = ""  # its statement in the plan's words (its snapshot keeps it beside the decision)
    rule: Rule | None = None  # how the engine decides it (plans decided by their own code have none)
    question: str = ""  # set: its claim is declared from this test (the catalogue's title; its statement ``says``)

    def __post_init__(self):
        at = f"test {self.id!r}"
        if not all(re.fullmatch(r"[A-Z][0-9]", str(x)) for x in (self.id, self.in_text or self.id)):
            raise ValueError(f"{at}: a test ID (and its ID in the plan's text) is a capital letter and a digit")
        for name in ("claim", "where", "comparison", "unit"):
            _text(at, name, getattr(self, name), 120)
        if self.whose not in ("ours", "theirs"):
            raise ValueError(f"{at}: whose must be 'ours' or 'theirs'; got {self.whose!r}")
        if self.counter and (len(self.counter) != 2 or not all(isinstance(x, str) for x in self.counter)):
            raise ValueError(f"{at}: counter must be (test ID, words); got {self.counter!r:.80}")
        if self.rule is not None and not (isinstance(self.rule, Rule) and self.says):
            raise ValueError(f"{at}: a rule is a Rule record, with the statement it decides (says)")
        _text(at, "says", self.says, 300, empty=True)
        _text(at, "question", self.question, 120, empty=True)
        if self.question and not (self.rule is not None and self.whose == "ours"):
            raise ValueError(f"{at}: a claim declared from its test (question) needs the test's rule and statement, "
                             f"and is the project's own (whose='ours')")
        outcomes = [r.outcome for r in self.readings]
        if not all(isinstance(r, Reading) for r in self.readings) or len(set(outcomes)) != len(outcomes):
            raise ValueError(f"{at}: readings must be Reading records, at most one per outcome; got {outcomes}")

    def reading(self, outcome: str) -> Reading | None:
        return next((r for r in self.readings if r.outcome == outcome), None)


@dataclass(frozen=True)
class Design:
    """What a study trains and probes, in words a page renders: its arms, seeds, learning gate, stopping rule, what
    is probed and recorded per run, and the power it needs."""

    arms: tuple
    seeds: str
    gate: str
    stopping: str
    probes: str
    power: str = ""


@dataclass(frozen=True)
class Study:
    """A study: the experiment name the command takes, a title, its hooks (settings, run, and either snapshot +
    lines for a plan decided by its own rule, or summaries for a study whose claims the registry decides), the
    options its run takes, the optional extra it needs, whether it trains (a Dask scheduler applies), its design,
    its tests (a plan's, Holm over them at ``fwer``), its plan text and the SHA-256 pinned before its runs."""

    name: str
    title: str
    settings: str
    run: str
    claims: tuple
    design: Design
    snapshot: str | None = None
    lines: str | None = None
    summaries: str | None = None
    figure: str | None = None
    numbers: str | None = None  # the function recomputing from the repository the numbers its text states (its design)
    options: tuple = ("use_cache", "progress", "workers", "scheduler")
    extra: str = "models"
    plan_file: str | None = None
    pinned_sha256: str | None = None
    tests: tuple = ()
    fwer: float = 0.05
    digits: int = 4
    test_words: str = "statement"
    published: str | None = None  # the snapshot of its run in docs/ (its per-run rows, its decisions)
    page: str | None = None  # its page in docs/ whose results block the engine's renderer fills (report.plan_results)
    gates: dict = field(default_factory=dict)  # cell prefix -> the row key that says a run is used (else "learned")
    extras: dict = field(default_factory=dict)
    families: dict = field(default_factory=dict)  # Holm family name -> its test IDs (none given: one family of all)
    arms: Arms | None = None  # a plan on text decoders the engine trains (lnrecency.experiments.plans.text_arms)
    few: str = ""  # why a test is not decided when a sample has too few runs, in the plan's words ({min}: how many)
    unmatched: str = ""  # why, when a run of a matched sample never got to the loss ({cell}, {matched}: the cells)

    def __post_init__(self):
        at = f"study {self.name!r}"
        if not re.fullmatch(r"[a-z][a-z0-9-]*", str(self.name)):
            raise ValueError(f"{at}: a study's name is lower-case words joined by '-'")
        for hook in HOOKS:
            value = getattr(self, hook)
            if value is not None and not _HOOK.match(str(value)):
                raise ValueError(f"{at}: {hook} must be a hook 'package.module:attribute'; got {value!r:.80}")
        if (self.snapshot is None) == (self.summaries is None):
            raise ValueError(f"{at}: give snapshot (a plan decided by its own rule) or summaries (claims decided by "
                             f"the registry), one of the two")
        if self.snapshot is not None and (self.plan_file is None or self.lines is None or not self.tests):
            raise ValueError(f"{at}: a plan names its plan_file, its lines hook and its tests")
        if self.extra not in ("models", "hf"):
            raise ValueError(f"{at}: extra must be 'models' or 'hf'; got {self.extra!r}")
        for name, keys in (("few", "min"), ("unmatched", "cell|matched")):
            value = getattr(self, name)
            if not (isinstance(value, str) and len(value) <= 120
                    and re.fullmatch(rf"[^{{}}]*(\{{({keys})\}}[^{{}}]*)*", value)):
                raise ValueError(f"{at}: {name} is a sentence of at most 120 characters, its only fields "
                                 f"{' and '.join('{' + k + '}' for k in keys.split('|'))}; got {value!r:.80}")
        if self.arms is not None and not isinstance(self.arms, Arms):
            raise ValueError(f"{at}: arms must be an Arms record")
        if not isinstance(self.design, Design):
            raise ValueError(f"{at}: design must be a Design record")
        ids = [t.id for t in self.tests]
        if len(set(ids)) != len(ids) or not all(isinstance(t, Test) for t in self.tests):
            raise ValueError(f"{at}: tests must be Test records with distinct IDs; got {ids}")
        decided = list(dict.fromkeys(t.claim for t in self.tests))
        if self.tests and tuple(self.claims) != tuple(decided):
            raise ValueError(f"{at}: claims must be the claims its tests decide, in their order: "
                             f"{tuple(decided)}; got {tuple(self.claims)!r:.120}")
        for t in self.tests:
            if t.counter and t.counter[0] not in ids:
                raise ValueError(f"{at}: test {t.id}'s counter-row {t.counter[0]!r} is not one of its tests")
        for t in self.tests:
            for r in t.readings:
                if r.unstated() is not None:
                    said, q = r.unstated()
                    raise ValueError(f"{at}: test {t.id}'s {r.outcome} reading speaks of {said!r}, a recorded "
                                     f"quantity, but states no condition on {q!r} (give it conditions=(Condition(cell, "
                                     f"{q!r}, op, value, words),), so that its rows can contradict it): {r.text!r:.80}")
        if self.arms is not None:  # every cell a rule or a reading names is one its arms publish
            self._check_cells({a.published for a in self.arms.arms})
        ruled = [t.id for t in self.tests if t.rule is not None]
        if ruled and len(ruled) != len(ids):
            raise ValueError(f"{at}: the engine decides a plan whole: every test has a rule or none does (rules: "
                             f"{', '.join(ruled)}; without: {', '.join(t for t in ids if t not in ruled)})")
        held = [tid for fam in self.families.values() for tid in fam]
        if self.families and sorted(held) != sorted(ids):
            raise ValueError(f"{at}: families must hold each test once; they hold {held}, the tests are {ids}")
        for name in ("published", "page"):
            value = getattr(self, name)
            if value is not None and not re.fullmatch(r"[a-z0-9_.-]+\.(json|md)", str(value)):
                raise ValueError(f"{at}: {name} must be a file name in docs/; got {value!r:.80}")
        if self.plan_file is not None and not (DATA / self.plan_file).is_file():
            raise ValueError(f"{at}: plan_file {self.plan_file!r} is not in lnrecency/data/")
        before = [(t.id, r) for t in self.tests for r in t.readings if r.written == "before the runs"]
        if before:  # written before the runs means hashed with the plan: the words are in its text
            text = " ".join((DATA / self.plan_file).read_text(encoding="utf-8").split())
            for tid, r in before:
                if " ".join(r.text.split()) not in text:
                    raise ValueError(f"{at}: test {tid}'s {r.outcome} reading is said to be written before the runs "
                                     f"but is not in {self.plan_file}: {r.text!r:.80}")

    def _check_cells(self, cells: set) -> None:
        """A misspelt cell is refused here, naming the test and the field, not left to read as too few runs."""
        for t in self.tests:
            named = []
            if t.rule is not None:
                for which, s in (("sample", t.rule.sample), ("other", t.rule.other)):
                    if s is not None:
                        named += [(f"rule's {which}", s.cell)] + ([(f"rule's {which} matched", s.matched)]
                                                                  if s.matched is not None else [])
            named += [(f"{r.outcome} reading's condition", c.cell) for r in t.readings for c in r.conditions]
            for field_name, cell in named:
                if cell not in cells:
                    raise ValueError(f"study {self.name!r}: test {t.id}'s {field_name} names cell {cell!r}, which no "
                                     f"arm publishes (its cells: {', '.join(sorted(cells))})")

    def used(self, cell: str, rows: list) -> list:
        """The runs of ``cell`` its tests read: those past its gate (``gates``: e.g. plan v4's N1 reads the runs that
        reached the target loss; every other cell the runs that learned)."""
        key = next((k for prefix, k in self.gates.items() if cell.startswith(prefix)), "learned")
        return [r for r in rows if isinstance(r, dict) and r.get(key, True)]

    def holm_families(self) -> dict:
        """Holm family name -> its test IDs in declaration order (one family "all" unless ``families`` says)."""
        return {k: tuple(v) for k, v in self.families.items()} or {"all": tuple(t.id for t in self.tests)}

    @property
    def is_plan(self) -> bool:
        return self.snapshot is not None

    def plan_path(self) -> Path:
        """The plan text as shipped (lnrecency/data/, the file the declaration names)."""
        return DATA / self.plan_file

    def plan_sha256(self) -> str:
        """Its SHA-256 (:func:`sha256_of`): part of every cache key and record of the plan's runs."""
        return sha256_of(self.plan_path())

    def test(self, tid: str) -> Test:
        for t in self.tests:
            if t.id == tid:
                return t
        raise KeyError(f"study {self.name!r} has no test {tid!r}; its tests: {', '.join(t.id for t in self.tests)}")
