"""The one loop every declared study runs through (issue 82): settings -> the pinned plan checked -> runs (trained
here, in local workers or on a Dask cluster, or read from the cache) -> the snapshot (a plan's per-run rows and its
decisions) -> a quick run marked not decisive -> each decided test's reading checked against its own rows.

    >>> from lnrecency.experiments.plans.engine import check_readings
    >>> from lnrecency.experiments.plans.declared import study
    >>> import json; snap = json.load(open("docs/thesis_text_v4.json"))   # doctest: +SKIP
    >>> check_readings(study("thesis-text-v4"), snap)["U2"].outcome       # doctest: +SKIP
    'refuted'

A reading whose words state a condition on the rows (``Condition``) is checked when the plan is decided: one its rows
contradict is refused (:class:`ReadingContradicted`, naming the study, the test, the row and the number), never
rendered.
"""
from __future__ import annotations

import importlib

from lnrecency.experiments.plans.declaration import OUTCOMES, Reading, Sample, Study
from lnrecency.inference.qualifiers import rule_outcome

__all__ = ["hook", "settings_of", "run_study", "run_plan", "check_pinned", "quantity", "check_readings",
           "ReadingContradicted", "NOT_DECISIVE", "sample_values", "decide", "decided_tests", "published_snapshot"]

NOT_DECISIVE = "not decisive (quick run)"


class ReadingContradicted(ValueError):
    """A reading whose own rows contradict it (``test``: its test's ID)."""

    def __init__(self, message: str, test: str = ""):
        super().__init__(message)
        self.test = test


def hook(path: str, study: Study | None = None, field: str = "hook"):
    """The object a declaration's hook ``"module:attr.attr"`` names; ValueError naming the study and the field when
    it does not resolve (its spelling is checked when the declaration is made, that it resolves here, when it runs,
    and for every declared study by tests/experiments/test_plans.py)."""
    module, _, attr = path.partition(":")
    try:
        obj = importlib.import_module(module)
        for part in attr.split("."):
            obj = getattr(obj, part)
    except (ImportError, AttributeError) as exc:
        who = f"study {study.name!r}: " if study is not None else ""
        raise ValueError(f"{who}its {field} hook {path!r} does not resolve ({type(exc).__name__}: {exc}); name a "
                         f"'package.module:attribute' that exists") from None
    return obj


def settings_of(study: Study, quick: bool):
    return hook(study.settings, study, "settings")(quick)


def check_pinned(study: Study) -> None:
    """A plan whose text is not the one pinned before its runs is refused (a changed plan is a new plan)."""
    if study.pinned_sha256 and study.plan_sha256() != study.pinned_sha256:
        raise ValueError(f"lnrecency/data/{study.plan_file} is not the plan registered before the runs (SHA-256 "
                         f"{study.pinned_sha256[:16]}...): a changed plan is a new plan version")


def run_study(study: Study, st, **options):
    """The study's runs under settings ``st``; ``options`` (use_cache, progress, workers, scheduler, models) are
    passed where the study's run takes them. A plan whose text is not the one pinned before its runs is refused."""
    check_pinned(study)
    return hook(study.run, study, "run")(st, **{k: v for k, v in options.items() if k in study.options})


def run_plan(study: Study, *, quick: bool, words: dict, **options) -> dict:
    """A plan's snapshot: its runs, its decisions, ``quick`` marked (a quick run decides nothing: its rows say so
    instead of a verdict; the interval stays, as a number) and, for a full run, each decided test's reading checked
    against the rows (:func:`check_readings`). ``words``: test ID -> its statement (the catalogue's words)."""
    st = settings_of(study, quick)
    snap = hook(study.snapshot, study, "snapshot")(run_study(study, st, **options), st, words)
    snap = {**snap, "quick": quick}
    if quick:
        for t in snap["tests"].values():
            t["verdict"] = NOT_DECISIVE
    else:
        check_readings(study, snap)
    return snap


def _used(study: Study, cell: str, table: dict, gated: bool = True) -> list:
    rows = table.get(cell) or []
    return study.used(cell, rows) if gated else [r for r in rows if isinstance(r, dict)]


def _matched(study: Study, s: Sample, rows: list, table: dict) -> tuple[tuple, bool]:
    """(the slopes of ``rows`` where each first reaches the median final loss of ``s.matched``'s runs, whether every
    run got there)."""
    import numpy as np

    ref = [r["final_loss"] for r in _used(study, s.matched, table)]
    if not ref:
        return (), False
    target = float(np.median(ref))
    hits = [next((e for e in r["trajectory"] if e[1] <= target), None) for r in rows]
    return tuple(h[2] for h in hits if h is not None), all(h is not None for h in hits)


#: the largest published snapshot read (plan v1's, with its trajectories, is about 1.3 MB)
PUBLISHED_BYTES = 32 * 2**20


def published_snapshot(name: str) -> dict | None:
    """A plan's published snapshot ``docs/NAME`` (a plain file, never through a link, at most
    :data:`PUBLISHED_BYTES`), as a later plan's snapshot reads an earlier one's cells; None outside a source checkout
    (an installed package ships no docs/)."""
    import json
    from pathlib import Path

    from lnrecency.files.readers import open_plain

    path = Path(__file__).resolve().parents[3] / "docs" / name
    if not path.is_file():
        return None
    with open_plain(path, "published snapshot", PUBLISHED_BYTES) as fh:
        return json.loads(fh.read().decode("utf-8"))


def sample_values(study: Study, s: Sample, table: dict) -> tuple:
    """The per-seed values of a declared sample from a per-run table (cell -> rows, as a snapshot publishes it); a
    matched sample some run did not complete has none."""
    rows = _used(study, s.cell, table, s.gated)
    if s.matched is not None:
        values, complete = _matched(study, s, rows, table)
        return values if complete else ()
    if s.less:
        k, field = s.less
        return tuple(r[s.value] - k * r[field] for r in rows)
    if s.at is None:
        return tuple(r[s.value] for r in rows)
    at = {r["seed"]: r["points"][s.at]["slope"] for r in rows if s.at in r["points"]}
    if s.minus is None:
        return tuple(at.values())
    base = {r["seed"]: r["points"][s.minus]["slope"] for r in rows if s.minus in r["points"]}
    return tuple(at[k] - base[k] for k in sorted(at) if k in base)


def decide(study: Study, table: dict) -> dict:
    """A plan's tests decided from its per-run table by their declared rules, each Holm family of the plan at its
    rate by the pair rule (:func:`lnrecency.inference.seed_tests.decide_tests`): test ID -> (SeedDecision or None,
    why-not text). ValueError naming the study when a test has no rule."""
    from lnrecency.inference.seed_tests import MIN_VALUES, SeedTest, decide_tests

    missing = [t.id for t in study.tests if t.rule is None]
    if missing or not study.tests:
        raise ValueError(f"study {study.name}: tests {', '.join(missing) or '(none)'} have no rule; the engine decides "
                         f"a plan whose every test declares one")
    few = (study.few.format(min=MIN_VALUES) if study.few else
           f"fewer than {MIN_VALUES} runs past the gate (or at the point) in a sample")
    made = {}
    for t in study.tests:
        r = t.rule
        mine = sample_values(study, r.sample, table)
        other = None if r.other is None else sample_values(study, r.other, table)
        why = few
        if (r.sample.matched is not None and not mine and _used(study, r.sample.cell, table)
                and _used(study, r.sample.matched, table)  # else the matched cell's runs are too few: ``few``
                and not _matched(study, r.sample, _used(study, r.sample.cell, table), table)[1]):
            why = (study.unmatched or "not every run of {cell} reached the median final loss of {matched}").format(
                cell=r.sample.cell, matched=r.sample.matched)
        kind = dict(rule="equivalence", margin=float(r.margin)) if r.side == "within" else {}
        made[t.id] = ([mine] + ([] if other is None else [other]),
                      lambda r=r, m=mine, o=other, kind=kind: SeedTest(m, side=r.side, boundary=float(r.boundary),
                                                                       other=o, **kind), why)
    return decide_tests(made, [list(f) for f in study.holm_families().values()], study.fwer)


def decided_tests(study: Study, table: dict, extra=("mean",)) -> dict:
    """The tests as a snapshot holds them: test ID -> its statement in the plan's words, verdict, why-not text, and,
    decided, the decision's fields, its pair p, ``extra`` (the test's mean) and the per-seed values it read."""
    out = {}
    for tid, (d, why) in decide(study, table).items():
        out[tid] = {"statement": study.test(tid).says, "verdict": "inconclusive" if d is None else d.verdict,
                    "why": why, **({} if d is None else {
                        **d.to_json(), "p_pair": d.test.p_pair, **{k: getattr(d.test, k) for k in extra},
                        "values": list(d.test.values), "other": None if d.test.other is None else list(d.test.other)})}
    return out


def _path(r: dict, name: str) -> float:
    p = r["paths"][name]
    return float(p["slope"] if isinstance(p, dict) else p)


def quantity(snap: dict, cell: str, name: str, study: Study | None = None) -> float:
    """A recorded quantity of one cell of a snapshot (:data:`~.declaration.QUANTITIES`), from the runs its tests read
    (past the study's gate for that cell: :meth:`~.declaration.Study.used`; without a study, the runs that learned);
    ValueError naming the cell when it has no such runs or rows."""
    cells = snap.get("runs") or {}
    if cell not in cells:
        raise ValueError(f"the snapshot has no cell {cell!r}; its cells: {', '.join(map(str, cells)) or 'none'}")
    rows = (study.used(cell, cells[cell] or []) if study is not None else
            [r for r in cells[cell] or [] if isinstance(r, dict) and r.get("learned", True)])
    if not rows:
        raise ValueError(f"the snapshot has no runs past the gate in cell {cell!r}")
    mean = sum(float(r["slope"]) for r in rows) / len(rows)
    if name == "mean slope":
        return mean
    part = name.split()[0]
    if not all(isinstance(r.get("paths"), dict) and part in r["paths"] for r in rows):
        raise ValueError(f"cell {cell!r}: its rows record no {part} path (the path decomposition)")
    if mean == 0:
        raise ValueError(f"cell {cell!r}: its mean slope is 0; a path's share of it is undefined")
    return sum(_path(r, part) for r in rows) / len(rows) / mean


def check_readings(study: Study, snap: dict, readings: dict | None = None) -> dict:
    """Test ID -> the reading of its decided outcome (None where the plan wrote none), each condition checked on the
    snapshot's rows. ``readings``: test ID -> a Reading to check instead of the declared one (what a reviewer
    proposes). ReadingContradicted names the study, the test, the reading, the row and the number."""
    out = {}
    tests = snap.get("tests") or {}
    missing = [t.id for t in study.tests if t.id not in tests]
    if missing:  # the snapshot is not this plan's: its declared tests are not decided there
        raise ValueError(f"study {study.name}: the snapshot decides no test {', '.join(missing)} (it decides "
                         f"{', '.join(map(str, tests)) or 'none'}): is it this plan's snapshot?")
    for t in study.tests:
        decided = tests.get(t.id)
        if not isinstance(decided, dict):
            continue
        outcome = rule_outcome(str(decided.get("verdict")))
        if outcome not in OUTCOMES:
            continue
        r = (readings or {}).get(t.id) or t.reading(outcome)
        if isinstance(r, Reading) and r.outcome != outcome:
            raise ValueError(f"study {study.name}: test {t.id} was {outcome}; the reading given is for {r.outcome}")
        for c in (r.conditions if r is not None else ()):
            x = quantity(snap, c.cell, c.quantity, study)
            if not c.holds(x):
                raise ReadingContradicted(
                    f"study {study.name}: test {t.id}'s {outcome} reading ({r.written}) is contradicted by its own "
                    f"rows: it says {c.words} ({c.quantity} {c.op} {c.value:g}), but row {c.cell!r} has "
                    f"{c.quantity} {x:.3f}: {r.text!r:.120}", t.id)
        out[t.id] = r
    return out
