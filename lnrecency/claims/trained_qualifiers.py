"""The qualifiers of the verdict rows on trained and real models (issue 75), from typed numbers only: a plan's
decision (its JSON: verdict, interval, p-values; :meth:`lnrecency.inference.seed_tests.SeedDecision.to_json`), a
seed experiment's row fields (interval, rule, learned) and the plans' declared words below. The claim modules call
these when they decide; ``python3 -m lnrecency.report.words.requalify`` calls the same functions on the published
snapshots (docs/thesis_text*.json, docs/wu_icl.json) for rows kept from an earlier run.

Each plan test's words: where it is decided, what it compares (what minus what) and the unit, and its strongest
counter-row (the test whose setting differs in the one factor a reader would ask about: matched loss beside equal
tokens).
"""
from __future__ import annotations

import math

from lnrecency.experiments.plans.declared import plans
from lnrecency.inference.qualifiers import Counter, Qualifiers, rule_outcome
from lnrecency.inference.seed_tests import pair_p

__all__ = ["PLAN_WORDS", "COUNTER_OF", "plan_qualifiers", "reason_of", "row_qualifiers", "SEED_WORDS",
           "matched_stage", "TOKENS_TO_LOSS", "part_counter"]

SLOPE = "logit per key"
#: plan test -> (where, comparison, unit), and -> (its strongest counter-row's test, that row's label in a cell):
#: read from each plan's declaration (lnrecency.experiments.plans.declared), never kept here
PLAN_WORDS: dict[str, tuple[str, str, str]] = {t.id: (t.where, t.comparison, t.unit) for s in plans() for t in s.tests}
COUNTER_OF: dict[str, tuple[str, str]] = {t.id: t.counter for s in plans() for t in s.tests if t.counter}


#: the counter-row of a matched-loss comparison whose arms reached the loss after different numbers of tokens: how
#: many times the tokens the none models took, over LayerNorm's (plan v4's N1)
TOKENS_TO_LOSS = "training tokens, none / LayerNorm"


def matched_stage(snapshot: dict | None) -> tuple[float, float] | None:
    """Plan v4's N1 in its own rows: (how many times the tokens none's runs took to reach the target loss, over
    LayerNorm's, medians over the runs that reached it; LayerNorm's mean slope there), or None."""
    import statistics

    runs = (snapshot or {}).get("runs") or {}
    used = {norm: [r for r in runs.get(f"N1 {norm}", []) if r.get("reached")] for norm in ("layernorm", "none")}
    if not all(used.values()):
        return None
    ln, none = (statistics.median(r["tokens"] for r in used[norm]) for norm in ("layernorm", "none"))
    slope = statistics.fmean(r["slope"] for r in used["layernorm"])
    return (none / ln, slope) if ln > 0 else None


def _estimate(decision: dict) -> float:
    """The estimate of a decision: the middle of its t interval (symmetric about the mean)."""
    lo, hi = decision["interval"]
    return 0.5 * (float(lo) + float(hi))


def reason_of(decision: dict | None, why: str, quick: bool, level: float | None = None) -> str:
    """Why an undecided test is not decided (:data:`lnrecency.inference.qualifiers.REASONS`): a quick run; not
    learned (a plan leaves a test without a decision only when too few of its runs learned; ``why`` says how many,
    for the finding); with the Holm ``level`` it was compared with: Holm stopped before it (its own pair p is within
    that level: a test before it in Holm's order was not decided), or the pair rule (its smaller one-sided p is within
    the level, twice that p is not: testing both directions at once alone left it undecided); significant alone but
    not after Holm (one-sided p below half the family rate); else not significant."""
    if quick:
        return "quick run"
    if decision is None:
        return "not learned"
    one_sided = min(decision.get("p_confirm", 1.0), decision.get("p_refute", 1.0))
    if level is not None:
        if decision.get("p_pair", pair_p(decision.get("p_confirm", math.nan), decision.get("p_refute", math.nan))) \
                <= level:
            return "holm stop"
        if one_sided <= level:
            return "pair"
    if one_sided < decision.get("fwer", 0.05) / 2:
        return "holm"
    return "not significant"


def plan_qualifiers(test: str, decision: dict | None, why: str = "", *, quick: bool = False,
                    decisions: dict | None = None, theirs: tuple[float, ...] = (), none_slope: float | None = None,
                    tokens_ratio: float | None = None, level: float | None = None,
                    stage: Counter | None = None, unlearned: str = "") -> Qualifiers:
    """A plan test's qualifiers from its decision JSON (None when not decided, ``why`` says why): where, the
    comparison and unit (:data:`PLAN_WORDS`), the estimate and interval, the reason when undecided, the counter-row
    from ``decisions`` (test -> decision JSON or None; :data:`COUNTER_OF`), Wu et al.'s published values
    ``theirs`` (direction only when ours agree in sign but the values lie outside our interval), and, for plan v2's
    Q1, the slope without normalisation ``none_slope`` as its counter-row; for plan v4's N1, ``tokens_ratio``
    (:func:`matched_stage`: how many times the tokens none took to reach the loss, over LayerNorm's); ``level``: the
    Holm level the test was compared with (:func:`lnrecency.claims.trained_rules.plan_levels`), kept with its pair p
    so that the cell says when it was decided by a hair; ``stage``: a counter-row the experiment computes itself
    (Wu's plan: the arms' in-context accuracy, when they learned unequally), where the plan declares none;
    ``unlearned``: the arms whose runs all failed the learning gate, in words, added to where a test not decided for
    that reason stands ("depth 6, without normalisation: the models did not learn")."""
    where, comparison, unit = PLAN_WORDS[test]
    verdict = "inconclusive" if decision is None or quick else decision["verdict"]
    reason = reason_of(decision, why, quick, level) if verdict == "inconclusive" else ""
    if decision is None:
        where = f"{where}, {unlearned}" if unlearned and reason == "not learned" else where
        return Qualifiers(where=where, comparison=comparison, unit=unit, reason=reason, theirs=tuple(theirs))
    lo, hi = (float(x) for x in decision["interval"])
    if decision.get("rule") == "equivalence" and isinstance(decision.get("margin"), (int, float)):
        # the margin it was decided against; and, where at the measured spread the design confirms equivalence with
        # power 0.8 only at a wider margin even were the true difference 0, that it is underpowered (plan v2 said
        # of Q6 that "the report will say so")
        need = decision.get("detectable_effect")
        short = isinstance(need, (int, float)) and math.isfinite(need) and need > decision["margin"]
        comparison = f"{comparison} (margin {decision['margin']:g}" + (
            f"; underpowered: power 0.8 needs {need:.2g})" if short else ")")
    counter = None
    other = COUNTER_OF.get(test)
    if other is not None and decisions and decisions.get(other[0]) is not None:
        # the counter-rows are the project's own plan tests: confirmed / refuted (snapshots before issue 75 wrote
        # "reproduced" / "the opposite shown")
        said = decisions[other[0]]["verdict"]
        counter = Counter(other[1], _estimate(decisions[other[0]]), *decisions[other[0]]["interval"],
                          verdict=rule_outcome(said))
    elif none_slope is not None:
        counter = Counter("none alone", none_slope)
    elif tokens_ratio is not None:
        counter = Counter(TOKENS_TO_LOSS, tokens_ratio, ratio=True)
    elif stage is not None:
        counter = stage
    hair = {}
    if level is not None and not quick:
        p = decision.get("p_pair", pair_p(decision.get("p_confirm", math.nan), decision.get("p_refute", math.nan)))
        hair = {} if math.isnan(p) else {"p_pair": float(p), "level": float(level)}
        if hair and verdict == "inconclusive":  # the side an undecided test leans to
            hair["leans"] = "for" if decision.get("p_confirm", 1.0) < decision.get("p_refute", 1.0) else "against"
    outside = bool(theirs) and any(not lo <= t <= hi for t in theirs)
    same_sign = bool(theirs) and all((t > 0) == (_estimate(decision) > 0) for t in theirs)
    return Qualifiers(where=where, comparison=comparison, unit=unit, estimate=_estimate(decision), low=lo, high=hi,
                      reason=reason, counter=counter, theirs=tuple(theirs),
                      direction_only=outside and same_sign and verdict in ("confirmed", "reproduced"), **hair)


#: seed experiments and the synthetic task: claim -> (where, quantity, unit) of its rows; the claims whose rows are
#: told apart by their part's label (its task and placement, or its architecture) add it to where
SEED_WORDS: dict[str, tuple[str, str, str]] = {
    "TM1": ("synthetic task, LayerNorm", "layer slope", SLOPE),
    "TM2": ("synthetic task, no normalisation", "layer slope", SLOPE),
    "TM3": ("synthetic task", "RMSNorm - LayerNorm RP", ""),
    "TM4": ("at initialisation", "", ""),
    "TM5": ("synthetic task, matched loss", "LayerNorm - none slope", SLOPE),
    "S2.1": ("per seed", "largest induction score", ""),
    "S2.2": ("second [A] near the end", "P(C) - P(B)", ""),
    "S2.3": ("induction head", "attention slope to [C] over [B]", ""),
    "S2.4": ("random sequences", "induction head slope", SLOPE),
    "S2.5": ("no positions, one layer-0 head", "slope", SLOPE),
    "S2.6": ("layer-0 heads", "log-log slope of output norm", ""),
    "S2.7": ("layer-0 heads", "law - measured log-log slope", ""),
    "S3.1": ("", "log-log variance slope", ""),
    "S3.2": ("8x training length", "pre-LN - post-LN shift", ""),
    "S3.3": ("8x training length", "post-LN - pre-LN accuracy", ""),
}
#: the claims whose rows differ by their part (its label names the task and placement, or the layer)
BY_PART = ("S3.1", "TM4")


def _decided_at_95(rule: dict, lo: float, hi: float) -> bool:
    """Whether the row's 95% interval alone settles its rule (wholly on one side of the boundary, or wholly within
    or outside an equivalence margin): then an undecided row was stopped by Holm's family, not by its own noise."""
    b, margin = rule.get("boundary"), rule.get("margin")
    if not isinstance(b, (int, float)):
        return False
    if rule.get("rule") == "equivalence" and isinstance(margin, (int, float)):
        return (b - margin < lo and hi < b + margin) or hi < b - margin or lo > b + margin
    return lo > b or hi < b


def _interval(row: dict) -> tuple[float, float] | None:
    iv = row.get("interval")
    if isinstance(iv, (list, tuple)) and len(iv) == 2 and all(isinstance(x, (int, float)) for x in iv):
        return float(min(iv)), float(max(iv))
    return None


def part_counter(row: dict, others, *, min_learned: int) -> Counter | None:
    """A directional row's strongest counter-row among its claim's other parts (:data:`BY_PART`): the part whose
    models learned and whose 95 % interval lies wholly on the other side of the boundary, farthest from it (seed
    003's argmax task with LayerNorm after attention, beside its other placements); None when there is none or the
    row is itself such a part."""
    rule = row.get("rule") or {}
    b, side = rule.get("boundary"), rule.get("side")
    if rule.get("rule") != "directional" or not isinstance(b, (int, float)) or side not in ("above", "below"):
        return None

    def against(r: dict) -> bool:
        iv = _interval(r)
        return iv is not None and (iv[0] > b if side == "below" else iv[1] < b)
    if against(row):
        return None
    found = [r for r in others if r is not row and against(r) and (r.get("rule") or {}).get("side") == side
             and (r.get("rule") or {}).get("boundary") == b and isinstance(r.get("learned"), int)
             and r["learned"] >= min_learned and isinstance((r.get("rule") or {}).get("part"), str)]
    if not found:
        return None
    far = max(found, key=lambda r: abs(sum(_interval(r)) / 2 - b))
    lo, hi = _interval(far)
    return Counter(far["rule"]["part"], (lo + hi) / 2, lo, hi, verdict=str(far.get("verdict", "")))


def row_qualifiers(cid: str, row: dict, *, min_learned: int, quick: bool = False, others=()) -> Qualifiers:
    """A seed experiment's or the synthetic task's row from its typed fields (verdict, interval, rule, learned,
    the probe's stability): where and what (:data:`SEED_WORDS`, with the deciding part's label for
    :data:`BY_PART`), the interval and, when undecided, why: a quick run; fewer than ``min_learned`` runs learned;
    the random control disagrees in sign (unstable); its 95% interval settles the rule but the family's Holm did
    not; else not significant. ``others``: the claim's other rows, from which a part's counter-row is read
    (:func:`part_counter`)."""
    where, quantity, unit = SEED_WORDS[cid]
    rule = row.get("rule") or {}
    if cid in BY_PART and isinstance(rule.get("part"), str):
        where = ", ".join(x for x in (where, rule["part"]) if x)
    lo, hi = _interval(row) or (None, None)
    reason = ""
    if row.get("verdict") == "inconclusive":
        learned = row.get("learned")
        stable = (row.get("probe") or {}).get("stable")
        reason = ("quick run" if quick else "not learned" if isinstance(learned, int) and learned < min_learned
                  else "unstable" if stable is False else "holm" if lo is not None and _decided_at_95(rule, lo, hi)
                  else "not significant")
    per_seed = rule.get("rule") == "per seed"
    estimate = None if lo is None or per_seed else 0.5 * (lo + hi)
    values = ((row.get("probe") or {}).get("task") or {}).get("values")
    boundary = rule.get("boundary")
    if per_seed and isinstance(values, list) and isinstance(boundary, (int, float)):  # read seed by seed
        below = [v for v in values if v < boundary]
        return Qualifiers(where=where, quantity=quantity, unit=unit, low=lo, high=hi, reason=reason,
                          holds=f"in {len(values) - len(below)} of {len(values)} seeds" if below else
                          f"in all {len(values)} seeds",
                          fails=f"in {len(below)} ({', '.join(f'{v:.3g}' for v in below)} below {boundary:g})"
                          if below else "")
    counter = (part_counter(row, others, min_learned=min_learned)
               if cid in BY_PART and not quick and reason != "not learned" else None)
    return Qualifiers(where=where, quantity=("range over seeds of the " if per_seed else "") + quantity, unit=unit,
                      estimate=estimate, low=lo, high=hi, reason=reason, counter=counter)
