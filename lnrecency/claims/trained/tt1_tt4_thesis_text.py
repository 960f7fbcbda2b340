"""TT1-TT4: the paper's thesis on text, in NoPE language models trained here
(:mod:`lnrecency.experiments.studies.thesis_text`).

The four primary hypotheses of the pre-registered plan (``lnrecency/data/thesis_text_plan.md``; its SHA-256 is
in every row's evidence), decided together by Holm's procedure at 0.05 over these four only. The thesis is the
paper's and the statements are ours, so a row reads "confirmed", "refuted" or "inconclusive" (the registry
labels every row by whose statement it is, lnrecency.claims.catalog.label). Everything else the experiment measures
(layer 1, the neutral random control, the MLP arm, the trajectory) is secondary: intervals in the table and the
figure, no verdict.
"""
from __future__ import annotations

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.claims.published import plan_rows
from lnrecency.claims.trained_qualifiers import plan_qualifiers
from lnrecency.claims.trained_rules import not_installed, one_claim_of, plan_levels
from lnrecency.experiments.plans.declared import plan_keys
from lnrecency.inference.evidence import Evidence, record

STATEMENTS = {
    "TT1": declared("TT1").text("s1"),
    "TT2": declared("TT2").text("s1"),
    "TT3": declared("TT3").text("s1"),
    "TT4": declared("TT4").text("s1"),
}
PLAN_KEYS = plan_keys("thesis-text")  # claim -> its test, from the plan's declaration


@record
class TextThesisEvidence(Evidence):
    hypothesis: str
    plan_sha256: str
    decision: dict  # SeedDecision JSON, or {} when not decided
    why_not: str
    seeds: int
    tokens: int
    matched: dict


def settings_for(quick: bool):
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings

    return TextThesisSettings.preset(quick)


def available(quick: bool = False) -> bool:
    try:
        from lnrecency.experiments.studies.thesis_text import cached_runs

        return cached_runs(settings_for(quick)) is not None
    except ImportError:
        return False


def decide(runs: list, st) -> dict:
    """The plan's four primary tests (H1-H4) decided together by Holm at 0.05 (``st``: the experiment's
    TextThesisSettings) by the engine, from the runs' table (lnrecency.experiments.studies.thesis_text.table) and the
    tests' declared rules: id -> (SeedDecision or None, why-not text or ""). As the plan says, an arm with fewer than
    3 learned runs decides nothing (lnrecency.inference.seed_tests.MIN_VALUES)."""
    from lnrecency.experiments.plans.declared import study
    from lnrecency.experiments.plans.engine import decide as decide_plan
    from lnrecency.experiments.studies.thesis_text import table

    return decide_plan(study("thesis-text"), table(runs, st))


def _evaluate_all(quick: bool, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.studies.thesis_text import (
            MARGIN,
            PLANNED,
            cached_runs,
            matched,
            plan_sha256,
        )
    except ImportError as exc:
        return [not_installed(cid, s, exc) for cid, s in STATEMENTS.items()]
    st = settings_for(quick)
    runs = cached_runs(st)
    if runs is None:  # verify --claim TTx announces the training first (lnrecency.cli.commands.verify)
        from lnrecency.experiments.studies.thesis_text import run_thesis_text

        runs = run_thesis_text(st, progress=progress)
    decisions, m, sha = decide(runs, st), matched(runs, st), plan_sha256()
    as_json = {k: (None if d is None else d.to_json()) for k, (d, _) in decisions.items()}
    out = []
    for cid, statement in STATEMENTS.items():
        d, why = decisions[PLAN_KEYS[cid]]
        verdict = "inconclusive" if (d is None or quick) else d.verdict  # ours: confirmed / refuted
        lead = "quick run: not decisive. " if quick else ""
        if d is None:
            finding = f"{lead}Not decided: {why} (the plan's Holm family keeps its four places)."
        else:
            lo, hi = d.test.interval()
            h = PLAN_KEYS[cid]
            seeds = (f"{d.test.n_values} learned seeds" if d.test.other is None else
                     f"{len(d.test.values)} and {len(d.test.other)} learned seeds")
            power = d.test.power(PLANNED[h], d.fwer / d.family)
            finding = (f"{lead}{h}: {d.test.mean:+.5f} logit per key, 95% interval [{lo:+.5f}, {hi:+.5f}] over "
                       f"{seeds}; p (stated direction) {d.test.p_confirm:.2g}, p (opposite) {d.test.p_refute:.2g}; "
                       f"Holm over the plan's 4 tests at 0.05; at the measured spread the design detects "
                       f"{d.detectable:.5f} with power 0.8, and had power {power:.2f} at the plan's "
                       f"{'margin' if h == 'H4' else 'effect'} {PLANNED[h]}.")
            if h == "H4" and d.detectable > MARGIN:
                finding += (f" The plan's margin {MARGIN} is below the smallest margin this design confirms with "
                            f"power 0.8 ({d.detectable:.4f}): the slopes here are far larger than the audit's that "
                            f"set it, so TOST at that margin could hardly confirm; reported as planned.")
            if cid == "TT3" and m["target"] is not None:
                toks = [p["tokens"] for p in m["layernorm"] if p is not None]
                span = (f"{min(toks):,}" if toks and min(toks) == max(toks)
                        else f"{min(toks or [0]):,}-{max(toks or [0]):,}")
                finding += (f" Matched at the none arm's median final held-out loss {m['target']:.3f} nats: "
                            f"LayerNorm reached it after {span} tokens (the first evaluation at or below it), none "
                            f"after {m['none'][0]['tokens']:,}.") if toks else ""
                reach = [t for t in m["none_reach_layernorm"] if t is not None]
                if m["layernorm_final"] is not None:
                    finding += (f" The other way round, the none runs reached the LayerNorm arm's median final "
                                f"loss {m['layernorm_final']:.3f} in {len(reach)} of {len(m['none_reach_layernorm'])}"
                                + (f" (after {min(reach):,}-{max(reach):,} tokens)" if reach else
                                   f": not within the budget of {st.steps * st.tokens_per_step():,} tokens") + ".")
        ev = TextThesisEvidence(hypothesis=PLAN_KEYS[cid], plan_sha256=sha, decision={} if d is None else d.to_json(),
                                why_not=why, seeds=len(st.primary_seeds), tokens=st.steps * st.tokens_per_step(),
                                matched=m if cid == "TT3" else {})
        out.append(ClaimResult(cid, result_source(cid, statement),
                               statement, {"arch": "attn2 (2 attention-only layers, NoPE, width 64)",
                                                         "layer": 2, "training_seeds": len(st.primary_seeds),
                                                         "probe": f"{st.probe_windows} held-out windows, BOS first, "
                                                                  f"its key out; plan {sha[:12]}"},
                               verdict, ev, finding,
                               plan_qualifiers(PLAN_KEYS[cid], as_json[PLAN_KEYS[cid]], why, quick=quick,
                                               decisions=as_json,
                                               level=plan_levels("thesis-text", as_json).get(PLAN_KEYS[cid]))))
    return out


def evaluator_for(cid: str):
    return one_claim_of(_evaluate_all, cid)


claim("TT1", module=__name__, available=available)(evaluator_for("TT1"))
claim("TT2",
      module=__name__, available=available)(evaluator_for("TT2"))
claim("TT3",
      module=__name__, available=available)(evaluator_for("TT3"))
claim("TT4",
      module=__name__, available=available)(evaluator_for("TT4"))


#: the per-run rows this experiment publishes (a file of docs/): a fresh report with nothing cached re-decides this
#: module's rows from them by the plan's own rule (lnrecency.claims.published)
PUBLISHED = "thesis_text.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval or None) of every row this module decides, re-decided from the published
    snapshot's per-run rows alone by the plan's own rule (the same code on JSON-exact values gives the same bits)."""
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings

    decided = decide(runs_of(snap), TextThesisSettings.preset(False))
    return plan_rows(decided, [(cid, s, PLAN_KEYS[cid]) for cid, s in STATEMENTS.items()],
                     lambda key, d: "inconclusive" if d is None else d.verdict)


def runs_of(snap: dict) -> list:
    """The published rows (``lnrecency experiments thesis-text --json``'s "runs") as the records :func:`decide` reads:
    the final probes whole, the trajectory's layer-2 slope."""
    return [{"arch": s["arch"], "norm": s["norm"], "seed": s["seed"], "unigram": s["unigram_entropy"],
             "log": [{"heldout_loss": s["final_heldout_loss"]}], "final": s["final"],
             "trajectory": [{"tokens": e["tokens"], "heldout_loss": e["heldout_loss"],
                             "text": [{"layer": 2, "slope": e["layer2_text_slope"]}]} for e in s["trajectory"]]}
            for s in snap["runs"]]
