"""W2-W4: Wu et al.'s behavioural experiment (ICML 2025, Fig. 2) reproduced, then extended with a normalisation
inserted, in the stacks trained here (:mod:`lnrecency.experiments.studies.wu_icl`).

The tests were written down before the run in ``lnrecency/data/wu_icl_plan.md`` (its SHA-256 is in every row's
evidence) as two families, each decided by Holm's procedure at 0.05 over its six tests only:

* W2 (Wu et al.'s statement, counted as theirs; family "Wu et al. reproduction"): R1-R6, their first-vs-middle and
  first-vs-last gaps above 0 in each published arm without normalisation; a row reads "reproduced" (confirmed),
  "the opposite shown" (refuted: significant in the opposite direction) or "inconclusive" (not decided: the arm did
  not learn, or the test was not significant after Holm; the finding says which, :func:`label`), with their
  published value beside ours.
* W3 and W4 (ours; family "Wu et al. plan"): P1-P4, a normalisation lowers the first-vs-last gap; P5, with
  LayerNorm it is below 0; P6, fixing LayerNorm's per-token scale raises it (the mechanism's ablation).

The middle-vs-last gaps, the cells' accuracies, the trained models' score slopes and rollouts are secondary: a
table and a figure, intervals without verdicts. A quick run decides nothing.
"""
from __future__ import annotations

from lnrecency.claims.cached_study import CachedStudy
from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.published import plan_rows
from lnrecency.claims.trained_qualifiers import plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair, not_installed, one_claim_of, plan_levels, reproduction_label
from lnrecency.inference.evidence import Evidence, record
from lnrecency.inference.qualifiers import REASONS

#: the plan's test -> (claim, statement key)
TESTS = {**{f"R{k}": ("W2", "statement") for k in range(1, 7)},
         **{f"P{k}": ("W3", "lowers") for k in range(1, 5)}, "P5": ("W4", "turns"), "P6": ("W4", "mechanism")}
#: the plan's test -> the statement it decides, word for word
STATEMENTS = {t: declared(c).text(key) for t, (c, key) in TESTS.items()}
#: the setting each test reads: (arm, normalisation)
SETTINGS = {"P1": ("depth 2", "layernorm"), "P2": ("depth 6", "layernorm"), "P3": ("depth 2 residual", "layernorm"),
            "P4": ("depth 2", "rmsnorm"), "P5": ("depth 2", "layernorm"), "P6": ("depth 2", "layernorm")}
CELL_KEYS = ("seeds", "not_learned", "plain", "gaps", "ablated_gaps", "ablated_plain", "slope", "rollout_first",
             "rollout_last", "trajectory")


@record
class WuEvidence(Evidence):
    test: str
    plan_sha256: str
    decision: dict  # SeedDecision JSON, or {} when not decided
    why_not: str
    seeds: int
    steps: int
    published: float | None  # Wu et al.'s Fig. 2 value (R tests)
    cells: dict  # "depth 2 none" ... -> CELL_KEYS


#: the experiment's cached runs (lnrecency.claims.cached_study)
STUDY = CachedStudy("lnrecency.experiments.studies.wu_icl", "WuSettings", "cached_wu", "run_wu")
_settings, available, _runs = STUDY.settings_for, STUDY.available, STUDY.runs


def _setting(test: str) -> tuple[str, str, str]:
    """(arm, normalisation, gap) of a test."""
    from lnrecency.experiments.studies.wu_icl import REPRODUCTION

    if test in REPRODUCTION:
        return (*REPRODUCTION[test][:1], "none", REPRODUCTION[test][1])
    return (*SETTINGS[test], "first-last")


def _num(pair, fmt="+.3f") -> str:
    return "n/a" if not pair or pair[0] is None else f"{pair[0]:{fmt}}"


def _context(test: str, cells: dict) -> str:
    """The cells' numbers a reader needs beside a P test: the stage of learning each arm reached (the comparison is
    at equal steps), the gap and in-context accuracy with the scale fixed."""
    arm, norm, _ = _setting(test)
    c, none = cells.get(f"{arm} {norm}") or {}, cells.get(f"{arm} none") or {}
    if test == "P6":
        return (f" First-vs-last gap {_num(c.get('gaps', {}).get('first-last'))} intact, "
                f"{_num((c.get('ablated_gaps') or {}).get('first-last'))} with the scale fixed; in-context accuracy "
                f"{_num(c.get('plain'), '.3f')} intact, {_num(c.get('ablated_plain'), '.3f')} with it fixed (the "
                f"ablated model still copies a context label).")
    if test not in ("P1", "P2", "P3", "P4") or not c.get("trajectory") or not none.get("trajectory"):
        return ""
    first, end = c["trajectory"][1], c["trajectory"][-1]
    n_first, n_end = none["trajectory"][1], none["trajectory"][-1]
    return (f" The comparison is at equal steps, not at equal stages of learning: in-context accuracy at step "
            f"{end['step']:,} is {_num(end['plain'], '.3f')} with {norm}, {_num(n_end['plain'], '.3f')} without, and "
            f"already {_num(first['plain'], '.3f')} with {norm} at step {first['step']:,} (without: "
            f"{_num(n_first['plain'], '.3f')}); at that step the first-vs-last gaps read {_num(first['first-last'])} "
            f"and {_num(n_first['first-last'])}.")


#: the normalisations as a cell names them
_NORM = {"layernorm": "LayerNorm", "rmsnorm": "RMSNorm"}


def unlearned(test: str, cells: dict) -> str:
    """The arms of ``test`` whose every run failed the learning gate, in words ("without normalisation"; "" when
    none): an undecided row's cell names them, rather than "the models" of both arms."""
    arm, norm, _ = _setting(test)
    arms = ["none"] if test.startswith("R") else [norm] if test in ("P5", "P6") else [norm, "none"]
    failed = [a for a in arms if (cells.get(f"{arm} {a}") or {}).get("not_learned")
              and not (cells.get(f"{arm} {a}") or {}).get("seeds")]
    return " and ".join("without normalisation" if a == "none" else f"with {_NORM[a]}" for a in failed)


def stage_counter(test: str, cells: dict):
    """A P1-P4 row's counter-row: the compared arms learned unequally by the step they are compared at, so their
    in-context accuracy (its label says "ours, learned unequally" where the interval excludes 0), normalised minus none,
    with its 95 % Welch interval over the runs (from the cells' means and
    standard errors over every run of the arm, each run's accuracy on its 2,000 test sequences, so the probe's noise
    is in it); None for another test or where an arm has no accuracy."""
    from scipy import stats

    from lnrecency.inference.qualifiers import Counter

    if test not in ("P1", "P2", "P3", "P4"):
        return None
    arm, norm, _ = _setting(test)
    a, b = cells.get(f"{arm} {norm}") or {}, cells.get(f"{arm} none") or {}
    if not (a.get("plain") and b.get("plain") and a.get("seeds") and b.get("seeds")) or None in (*a["plain"],
                                                                                               *b["plain"]):
        return None
    (ma, sa), (mb, sb) = a["plain"], b["plain"]
    na, nb = (len(c["seeds"]) + len(c.get("not_learned") or ()) for c in (a, b))  # "plain" is over every run
    se = (sa * sa + sb * sb) ** 0.5
    if not (se > 0 and na > 1 and nb > 1):
        return Counter(f"ours: in-context accuracy, {_NORM[norm]} - none", ma - mb, other=True)
    df = se ** 4 / (sa ** 4 / (na - 1) + sb ** 4 / (nb - 1))
    half = float(stats.t.ppf(0.975, df)) * se
    low, high = ma - mb - half, ma - mb + half
    # said in words only where the interval shows it: the arms compared at equal steps learned unequally
    unequal = ", learned unequally" if low > 0 or high < 0 else ""
    # "ours": measured on our models (the row's statement is ours too, a P test; the label says whose number it is)
    return Counter(f"ours{unequal}: in-context accuracy, {_NORM[norm]} - none", ma - mb, low, high, other=True)


def label(test: str, d, quick: bool) -> str:
    """A test's verdict as its row reads, one label with one meaning (docs/glossary.md): an R test (theirs)
    "reproduced" when confirmed, "the opposite shown" when refuted (significant in the opposite direction), else
    "inconclusive" (not decided: not learned, or not significant after Holm; the finding says which); a P test
    (ours) confirmed / refuted / inconclusive; a quick run or an undecided test "inconclusive". The plan (its
    section 3) named every R test short of confirmed "not reproduced in this setting"; its decisions are kept, only
    the words changed (issue 66)."""
    if quick or d is None:
        return "inconclusive"
    if test.startswith("R"):
        return reproduction_label(d.verdict)
    return d.verdict


def _finding(test: str, d, why: str, quick: bool, published: float | None, level: float | None,
             cells: dict, steps: int, reason: str = "") -> str:
    """The row's finding; ``reason``: its qualifiers' reason when undecided (the cell's words, said here too)."""
    lead = "quick run: not decisive. " if quick else ""
    arm, norm, gap = _setting(test)
    if d is None:
        c = cells.get(f"{arm} none" if test.startswith("R") or test in ("P1", "P2", "P3", "P4") else
                      f"{arm} {norm}") or {}
        gate = ""
        if c.get("not_learned"):
            total = len(c["not_learned"]) + len(c.get("seeds", []))
            gate = (f" {arm.capitalize()} without normalisation: in-context accuracy {_num(c.get('plain'), '.3f')} "
                    f"after {steps:,} steps, {len(c['not_learned'])} of {total} seeds below the gate.")
        said = (f"not decided: {arm} without normalisation did not learn" if c.get("not_learned") and
                not c.get("seeds") else "not decided")
        return f"{lead}{said}; {why} (the family keeps its six places).{gate}"
    lo, hi = d.test.interval()
    what = {"P6": "scale fixed - intact", "P5": "LayerNorm"}.get(test, "no normalisation" if test.startswith("R")
                                                                 else f"{norm} - none")
    seeds = (f"{d.test.n_values} learned seeds" if d.test.other is None else
             f"{len(d.test.values)} and {len(d.test.other)} learned seeds")
    head = {"P5": f"LayerNorm {gap} gap {d.test.mean:+.3f}",
            "P6": f"scale fixed minus intact {d.test.mean:+.3f}"}.get(
        test, f"{gap} {d.test.mean:+.3f}" if test.startswith("R") else f"{norm} minus none {d.test.mean:+.3f}")
    # the reason in the cell's words (trained_qualifiers.reason_of: the pair rule, Holm's stop, or not significant)
    said = REASONS.get(reason, "")
    undecided = f"{said[:1].upper()}{said[1:]}. " if d.verdict == "inconclusive" and not quick and said else ""
    text = (f"{lead}{undecided}{head} at {arm}" + (f", theirs {published:+.3f}" if published is not None else "") + "; "
            f"{test} ({arm}, {gap} gap, {what}): {d.test.mean:+.4f} (accuracy), 95% interval "
            f"[{lo:+.4f}, {hi:+.4f}] over {seeds}; p (stated direction) {d.test.p_confirm:.2g}, p (opposite) "
            f"{d.test.p_refute:.2g}; Holm over the family's 6 tests at 0.05 ({d.verdict}); at the measured spread the "
            f"design detects {d.detectable:.4f} with power 0.8.")
    if published is not None:
        inside = "inside" if lo <= published <= hi else "outside"
        text += f" Wu et al. published {published:+.3f} (after 50,000 steps), {inside} our interval."
    text += _context(test, cells)
    text += by_a_hair(d.test.p_pair, level, d.verdict)
    return text


def _evaluate_all(quick: bool, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.studies.wu_icl import PUBLISHED, decide, plan_sha256, summary
        from lnrecency.experiments.wu.icl_task import PAIRS
    except ImportError as exc:
        return [not_installed(TESTS[t][0], s, exc, {"case": t}) for t, s in STATEMENTS.items()]
    st, runs = _runs(quick, progress)
    decisions, sha = decide(runs, st), plan_sha256()
    cells = {name: {k: c[k] for k in CELL_KEYS} for name, c in summary(runs, st).items()}
    names = [f"{a}-{b}" for a, b in PAIRS]
    as_json = {k: (None if d is None else d.to_json()) for k, (d, _) in decisions.items()}
    levels = plan_levels("wu-icl", as_json)  # its two families, R and P, each at 0.05
    out = []
    for test, statement in STATEMENTS.items():
        d, why = decisions[test]
        arm, norm, gap = _setting(test)
        published = PUBLISHED[arm][names.index(gap)] if test.startswith("R") else None
        verdict = label(test, d, quick)
        ev = WuEvidence(test=test, plan_sha256=sha, decision={} if d is None else d.to_json(), why_not=why,
                        seeds=len(st.seeds), steps=st.steps, published=published, cells=cells)
        q = plan_qualifiers(test, as_json[test], why, quick=quick, decisions=as_json, level=levels.get(test),
                            stage=stage_counter(test, cells), theirs=(published,) if published is not None else (),
                            unlearned=unlearned(test, cells))
        out.append(ClaimResult(TESTS[test][0], result_source(TESTS[test][0], statement), statement,
                               {"case": test, "arch": f"{arm} (Wu et al.'s stack, width {st.task.dim}, NoPE)",
                                "norm": norm, "measure": f"{gap} accuracy gap", "training_seeds": len(st.seeds),
                                "probe": f"{st.test_size} novel-class sequences per test after {st.steps:,} steps; "
                                         f"plan {sha[:12]}"},
                               verdict, ev,
                               _finding(test, d, why, quick, published, levels.get(test), cells, st.steps, q.reason),
                               q))
    return out


def evaluator_for(cid: str):
    return one_claim_of(_evaluate_all, cid)


claim("W2", module=__name__, available=available)(evaluator_for("W2"))
for _cid in ("W3", "W4"):
    claim(_cid, module=__name__, available=available)(evaluator_for(_cid))


#: the per-run rows this experiment publishes (a file of docs/): a fresh report with nothing cached re-decides this
#: module's rows from them by the plan's own rule (lnrecency.claims.published)
PUBLISHED = "wu_icl.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval or None) of every row this module decides, re-decided from the published
    snapshot's per-run rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits)."""
    from lnrecency.experiments.studies.wu_icl import WuSettings, decide

    decided = decide(snap["runs"], WuSettings.preset(False))
    return plan_rows(decided, [(TESTS[t][0], s, t) for t, s in STATEMENTS.items()], lambda t, d: label(t, d, False))
