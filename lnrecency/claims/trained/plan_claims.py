"""The claims a plan declares with its tests (issue 82): a plan on text decoders declared with arms whose tests carry
their question, statement and rule (:class:`lnrecency.experiments.plans.declaration.Test`) has its claims in the
catalogue from its declaration (:func:`lnrecency.claims.catalog.plan_declared`) and decided here, with no module of
its own: its runs read from the cache (or trained) by the engine (:mod:`lnrecency.experiments.plans.text_arms`), its
snapshot from its hook, each test decided by its rule in the plan's Holm families, each row with the plan's words and
qualifiers (:func:`lnrecency.claims.trained_qualifiers.plan_qualifiers`). The statements are the project's own: a
row reads confirmed, refuted or inconclusive; a quick run decides nothing.
"""
from __future__ import annotations

from lnrecency.claims.cached_study import CachedStudy
from lnrecency.claims.catalog import PLAN_CLAIMS, declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.trained_qualifiers import plan_qualifiers
from lnrecency.claims.trained_rules import by_a_hair, not_installed, one_claim_of, plan_levels
from lnrecency.experiments.plans.declared import STUDIES
from lnrecency.inference.evidence import Evidence, record

__all__ = ["PlanEvidence", "cached_study", "evaluate_plan", "register", "declaring"]


@record
class PlanEvidence(Evidence):
    test: str
    plan_sha256: str
    decision: dict  # the snapshot's test: verdict, interval, p-values, per-seed values; {} when not decided
    why_not: str
    noise: dict  # arm -> {"probe_se", "seed_sd", "ratio"}


def declaring(studies=None) -> list:
    """The plans whose tests declare their claims (``Test.question``), in declaration order."""
    return [s for s in (studies if studies is not None else STUDIES.values()) if any(t.question for t in s.tests)]


def cached_study(study) -> CachedStudy:
    """A plan's cached runs as its claims read them (a plan declared with arms: the engine's runner)."""
    attr = study.name.replace("-", "_")
    return CachedStudy("lnrecency.experiments.plans.text_arms", attr, f"{attr}.cached", f"{attr}.run")


def _finding(study, key: str, test: dict, quick: bool, level: float | None) -> str:
    lead = "quick run: not decisive. " if quick else ""
    families = study.holm_families()
    family = next(name for name, ids in families.items() if key in ids)
    where = f"{study.title}'s Holm family" + (f" {family}" if len(families) > 1 else "")
    if not test.get("interval"):
        return f"{lead}Not decided: {test.get('why') or 'no test'} ({where} keeps its place)."
    lo, hi = test["interval"]
    t = study.test(key)
    seeds = (f"{len(test['values'])} and {len(test['other'])} runs" if test.get("other") else
             f"{len(test['values'])} runs")
    return (f"{lead}{key}: {t.comparison} {test['mean']:+.5f} {t.unit}, 95% interval [{lo:+.5f}, {hi:+.5f}] over "
            f"{seeds}; p (stated direction) {test['p_confirm']:.2g}, p (opposite) {test['p_refute']:.2g}; Holm over "
            f"{where} ({len(families[family])} tests) at {study.fwer:g}; at the measured spread the design detects "
            f"{test['detectable_effect']:.5f} with power 0.8." + by_a_hair(test["p_pair"], level, test["verdict"]))


def evaluate_plan(study, quick: bool, progress=None) -> list:
    """Every row of the claims ``study`` declares with its tests, from its runs (cached, or trained)."""
    from lnrecency.inference.verdicts import ClaimResult

    keys = {t.claim: t.id for t in study.tests if t.question}
    statements = {cid: declared(cid).text("s1") for cid in keys}
    try:
        from lnrecency.experiments.plans.engine import hook
    except ImportError as exc:
        return [not_installed(cid, s, exc) for cid, s in statements.items()]
    from lnrecency.experiments.plans.engine import ReadingContradicted, check_readings

    st, runs = cached_study(study).runs(quick, progress)
    snap = hook(study.snapshot, study, "snapshot")(runs, st, {})
    tests = snap["tests"]
    refused = {}
    if not quick:  # each decided test's reading checked on its own rows, as when the plan is run (engine.run_plan)
        try:
            check_readings(study, snap)
        except ReadingContradicted as exc:  # the verdict stands; its reading is refused, naming the row
            refused[exc.test] = f" Its reading is refused: {exc}"
        except ValueError as exc:  # a condition on a cell with no runs past the gate: said, never a traceback
            refused = {t.id: f" Its plan's readings could not be checked on the rows: {exc}" for t in study.tests}
    levels = plan_levels(study.name, tests)
    out = []
    for cid, statement in statements.items():
        key = keys[cid]
        t = tests[key]
        ev = PlanEvidence(test=key, plan_sha256=snap["plan_sha256"], why_not=t["why"], noise=snap["noise"],
                          decision={k: v for k, v in t.items() if k not in ("statement", "why")})
        setting = {"arch": "attn2 (2 attention-only layers, NoPE, width 64)", "layer": 2,
                   "probe": f"{study.title} {snap['plan_sha256'][:12]}, test {key}"}
        decided = t if t.get("interval") is not None else None
        out.append(ClaimResult(cid, result_source(cid, statement), statement, setting,
                               "inconclusive" if quick else t["verdict"], ev,
                               _finding(study, key, t, quick, levels.get(key)) + refused.get(key, ""),
                               plan_qualifiers(key, decided, t.get("why", ""), quick=quick, decisions=tests,
                                               level=levels.get(key))))
    return out


def register(study) -> None:
    """Register the evaluators of the claims ``study`` declares with its tests (done here for every declared plan;
    a test registers a plan it declares itself)."""
    runs = cached_study(study)
    for t in study.tests:
        if t.question:
            claim(t.claim, module=f"lnrecency.claims.{PLAN_CLAIMS}", available=runs.available)(
                one_claim_of(lambda quick, progress=None, s=study: evaluate_plan(s, quick, progress), t.claim))


for _study in declaring():
    register(_study)
