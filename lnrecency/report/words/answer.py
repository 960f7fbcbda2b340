"""The README's answer (issues 66, 75): the plain answer to "does LayerNorm induce recency bias, and where?" in at most
about 125 words, each part from its claims' findings (their verdict labels and typed qualifiers,
:mod:`lnrecency.report.words.findings`) and plans v2 and v3's snapshots; never from a finding's prose, and never from
evidence that docs/verdicts.json does not keep (so ``regenerate --claim`` renders it on a fresh clone). The verdicts
row by row are in the table below it (:mod:`lnrecency.report.readme`)."""
from __future__ import annotations

__all__ = ["readme_answer"]


def _label(rows: list) -> str:
    """One label for some findings: their verdict when they agree, else "split"."""
    kinds = list(dict.fromkeys(f.verdict for f in rows))
    return kinds[0] if len(kinds) == 1 else "split"


def _role(found: list, role: str, k: int = 0) -> tuple[list, str]:
    """The findings of the ``k``-th part of an answer role (lnrecency.claims.catalog.ANSWER: all of a claim's rows,
    one statement's, or one source's) and its words."""
    from lnrecency.claims.catalog import SOURCES, answer_parts

    cid, which, words = answer_parts(role)[k]
    kind, _, value = (which or "").partition(":")
    return [f for f in found if f.claim == cid and (
        which is None or (f.statement_key == value if kind == "statement" else f.source == SOURCES[value]))], words


#: what the paper claims, in one line (the answer's first; Theorem 1's statement in plain words)
CLAIM = ("The paper claims that LayerNorm makes a decoder's attention favour recent tokens: the expected layer-2 "
         "score rises with the key's position (its Theorem 1).")


def readme_answer(found: list, v2: dict | None = None, v3: dict | None = None, v4: dict | None = None,
                  v5: dict | None = None) -> str:
    """The README's answer (issue 84, item 1): what the paper claims in one line, then one line per question a reader
    brings (in expectation; one draw; deeper layers; trained models with BOS; without BOS; real pretrained models;
    the printed derivation), each with its verdict, its size in the claim's own quantity, its scope and its strongest
    counter-row, from the findings' typed qualifiers (plan v2's snapshot ``v2`` for the ablation, plan v4's readings
    as its declaration holds them, plan v5's flat share, LayerNorm's parts and the stage, ``v5`` its snapshot); a
    question whose findings are not there is left out."""
    from lnrecency.claims.catalog import answer_parts

    out = []
    theorem, _ = _role(found, "theorem")
    if theorem:
        out.append(f"**In expectation?** Yes (Theorem 1: {_label(theorem)}).")
    one = next((f for f in theorem if f.setting.get("norm") == "layernorm" and f.qualifiers.counter is not None
                and f.qualifiers.estimate is not None), None)
    if one is not None:
        q = one.qualifiers
        out.append(f"**One draw?** It orders key triples by recency with probability {q.estimate:.2f} at "
                   f"{q.where} (0.5: none), {q.counter.estimate:.2f} with {q.counter.label}.")
    flat, flat_words = _role(found, "boundary", 0)
    deep, deep_words = _role(found, "boundary", 1)
    if flat and deep:  # each part with its own verdict, the deeper layers' where each holds, with the failure's size
        where = "; ".join(_deep_words(f) for f in sorted(deep, key=lambda f: f.verdict != "confirmed"))
        out.append(f"**Without normalisation?** {flat_words.capitalize()} ({_label(flat)}) and {deep_words} "
                   f"({where}).")
    deeper, _ = _role(found, "mechanism", 1)  # with normalisation the recency persists at deeper layers
    deeper = [f for f in deeper if f.qualifiers.settings]
    if deeper:  # row by row, each with how many settings it covers (its scope words stay on the claim's page)
        parts = "; ".join(f"{f.verdict} in {f.qualifiers.settings} settings"
                          + ("" if not f.qualifiers.fails else
                             f" ({f.qualifiers.where}: fails {f.qualifiers.fails.split(' (')[0]})")
                          for f in sorted(deeper, key=lambda f: f.verdict != "confirmed"))
        out.append(f"**Does recency persist at deeper layers with normalisation?** In the limit, layers 3-6: {parts}.")
    cells = (v2 or {}).get("cells") or {}
    ln = ((cells.get("bos layernorm") or {}).get("change") or (None, None))[0]
    if ln is not None:
        intact = ((cells.get("bos layernorm") or {}).get("slope") or (None,))[0]
        out.append(f"**Trained text models with BOS?** Fixing layer 1's BOS share at its mean removes "
                   f"{-100 * ln:.0f} % of LayerNorm's slope{_upstream(found, intact)}.")
    carries = _flat_and_parts(found)
    if carries:
        out.append(f"**What in the sink and in LayerNorm does it need?** {carries}")
    no_bos = _no_bos(found, v4)
    if no_bos:
        rest = no_bos.removeprefix("Without BOS, ")
        out.append(f"**Without BOS?** {rest[0].upper()}{rest[1:]}{_stage(found, v5)}")
    real = _pretrained(found)
    if real:
        out.append("**Real pretrained models?** " + real)
    printed = {cid: [f for f in found if f.claim == cid] for cid, _, _ in answer_parts("printed")}
    printed = {cid: rows for cid, rows in printed.items() if rows}
    if printed:
        good = sum(_label(rows) == "confirmed" for rows in printed.values())
        other = [f"{cid} {_label(rows)}" for cid, rows in printed.items() if _label(rows) != "confirmed"]
        out.append(f"**The printed derivation?** It holds in {good} of {len(printed)} lines"
                   + (f" ({', '.join(other)})" if other else "") + ".")
    return "\n".join([CLAIM] + [f"- {line}" for line in out])


def _pretrained(found: list) -> str:
    """R1's rows in one sentence: each model's verdict and where (its qualifiers), "" when not there."""
    from lnrecency.claims.catalog import answer_ids

    rows = [f for f in found if f.claim in answer_ids("pretrained").values()]
    if not rows:
        return ""
    parts = [f"{f.qualifiers.where}: {f.verdict} ({f.qualifiers.holds or f.qualifiers.fails})" for f in rows
             if f.qualifiers.where]
    return "; ".join(parts) + " (positions off: outside their training)."


def _upstream(found: list, intact: float | None) -> str:
    """Plan v4's U1 and U2 from their findings (issue 76): where the BOS route is not the only one, and where the
    sink alone does not make the slope ("" until decided)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.inference.qualifiers import rule_outcome
    from lnrecency.report.words.plain import number

    ids = answer_ids("plan v4")
    u1, u2 = (next((f for f in found if f.claim == ids.get(k)), None) for k in ("U1", "U2"))
    if u1 is None or u2 is None or u1.qualifiers.estimate is None or u2.qualifiers.estimate is None:
        return ""
    u2_slope = u2.qualifiers.estimate
    from lnrecency.experiments.plans.declared import test_for

    test = test_for(u1.claim)  # the plan test deciding U1's claim, with its declared readings
    reading = None if test is None else test.reading(rule_outcome(u1.verdict))
    said = "" if reading is None else reading.text.rstrip(".").split(". ")[-1]  # what the outcome means
    return (f"; trained with the share clamped to none's level (lowered, not removed), LayerNorm's slope is "
            f"{number(u2_slope, True)} (U2, below half: {u2.verdict}; intact, trained apart: "
            f"{number(intact, True) if intact is not None else 'n/a'}), and the LayerNorm-level share imposed without "
            f"normalisation gives {number(u1.qualifiers.estimate, True)} (U1, above half: {u1.verdict})"
            + (f"; U1's pre-registered reading: \"{said}\"" if said else ""))


def _flat_and_parts(found: list) -> str:
    """Plan v5's F and parts tests from their findings (issue 83): each arm's slope with its verdict, and the
    pre-registered reading of the flat share at the LayerNorm level ("" until decided)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.experiments.plans.declared import test_for
    from lnrecency.inference.qualifiers import rule_outcome
    from lnrecency.report.words.plain import number

    ids = answer_ids("plan v5")
    rows = {k: next((f for f in found if f.claim == ids.get(k)), None) for k in ("F1", "F2", "F3", "D1", "D2", "D3",
                                                                               "D4")}
    if any(f is None or f.qualifiers.estimate is None for f in rows.values()):
        return ""

    def arm(k: str, words: str) -> str:
        return f"{words} {number(rows[k].qualifiers.estimate, True)} ({rows[k].verdict})"
    flat = ", ".join(arm(k, w) for k, w in (("F1", "at 0 (no sink)"), ("F2", "at the LayerNorm level"),
                                            ("F3", "at the none level")))
    parts = ", ".join(arm(k, w) for k, w in (("D1", "centring only"), ("D2", "RMSNorm"),
                                             ("D3", "the scale out of the gradient"), ("D4", "the gain fixed")))
    test = test_for(rows["F2"].claim)
    reading = None if test is None else test.reading(rule_outcome(rows["F2"].verdict))
    return (f"With layer 1's share held flat in every row, LayerNorm's slope is {flat} (plan v5, each against half "
            f"the intact +0.153); with the LayerNorm profile set, {parts}"
            + (f". F2's pre-registered reading: \"{reading.text.rstrip('.').split(': ')[-1]}\"" if reading else "")
            + ".")


def _stage(found: list, v5: dict | None) -> str:
    """Plan v5's T from its findings and snapshot: LayerNorm's slope at the matched loss and at 3.0M tokens in the
    same runs (T1) and LayerNorm - none at 3.0M tokens (T2) ("" until decided)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.experiments.plans.declared import test_for
    from lnrecency.inference.qualifiers import rule_outcome
    from lnrecency.report.words.plain import number

    ids = answer_ids("plan v5")
    t1, t2 = (next((f for f in found if f.claim == ids.get(k)), None) for k in ("T1", "T2"))
    traj = (v5 or {}).get("trajectories") or {}
    at, end = ((traj.get(p) or {}).get("Tln") or {} for p in ("loss 4.25", "step 1465"))
    if t1 is None or t2 is None or t2.qualifiers.estimate is None or "slope" not in at or "slope" not in end:
        return ""
    test = test_for(t1.claim)
    reading = None if test is None else test.reading(rule_outcome(t1.verdict))
    said = "" if reading is None else reading.text.rstrip(".").split(": ", 1)[-1]
    return (f" In plan v5's runs LayerNorm's slope goes from {number(at['slope'], True)} at that loss to "
            f"{number(end['slope'], True)} at 3.0M tokens (T1 {t1.verdict}"
            + (f"; its pre-registered reading: \"{said}\"" if said else "") + "), and at 3.0M tokens LayerNorm minus "
            f"none is {number(t2.qualifiers.estimate, True)} (T2 {t2.verdict}).")


def _deep_words(f) -> str:
    """One group of the deeper layers' findings in words, from its typed qualifiers: its verdict, where, and where
    it fails with the failure's size ("refuted with the residual (layers 3-4 hold for every alpha): layers 5-6 fail
    for alpha below 0.91, the order broken ... by a score step (logits) up to 136")."""
    q = f.qualifiers
    where = {"residual": "with the residual", "no residual": "without the residual"}.get(q.where, q.where)
    if not q.fails:
        return f"{f.verdict} {where}".strip() + (f", {q.holds}" if q.holds else "")
    size = f", {q.margin_of} up to {q.margin:.3g}" if q.margin is not None else ""
    return f"{where}, {f.verdict} {q.fails}{size}"


def _matched_stage(v4: dict | None) -> tuple | None:
    """Plan v4's N1 in its own rows: (how many times fewer tokens LayerNorm's runs took to reach the target loss than
    none's, medians over the runs that reached it; LayerNorm's mean slope there), or None."""
    import statistics

    runs = (v4 or {}).get("runs") or {}
    used = {norm: [r for r in runs.get(f"N1 {norm}", []) if r.get("reached")] for norm in ("layernorm", "none")}
    if not all(used.values()):
        return None
    ln, none = (statistics.median(r["tokens"] for r in used[norm]) for norm in ("layernorm", "none"))
    slope = statistics.fmean(r["slope"] for r in used["layernorm"])
    return (none / ln, slope) if ln > 0 else None


def _no_bos(found: list, v4: dict | None = None) -> str:
    """Without BOS (plan v2's Q1-Q3, from their findings' qualifiers): LayerNorm's slope beside none's, and LayerNorm
    minus none at equal tokens and at matched loss, each with its verdict: where it holds and where it reverses."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.inference.qualifiers import REASONS
    from lnrecency.report.words.plain import number

    ids = answer_ids("plan v2")
    rows = {q: next((f for f in found if f.claim == ids.get(q)), None) for q in ("Q1", "Q2", "Q3")}
    n1 = next((f for f in found if f.claim == answer_ids("plan v4").get("N1")), None)
    if n1 is not None and n1.qualifiers.estimate is not None:  # plan v4 decided matched loss with the power to tell
        rows["Q3"] = n1
    if any(f is None or f.qualifiers.estimate is None for f in rows.values()):
        return ""
    one, eq, ml = (rows[q] for q in ("Q1", "Q2", "Q3"))
    stage = _matched_stage(v4)
    none = one.qualifiers.counter
    why = REASONS[ml.qualifiers.reason] if ml.verdict == "inconclusive" and ml.qualifiers.reason else ml.verdict
    return (f"Without BOS, at equal tokens LayerNorm's slope is {number(one.qualifiers.estimate, True)} logit per key"
            + (f" (none {number(none.estimate, True)}" if none is not None else " (")
            + f"; difference {number(eq.qualifiers.estimate, True)}, {eq.verdict}), "
            + ("and" if ml.verdict == "confirmed" else "but")
            + f" at matched held-out loss LayerNorm minus none is {number(ml.qualifiers.estimate, True)} ({why})"
            + (f"; LayerNorm reaches that loss with {stage[0]:.1f}x fewer tokens, its slope there "
               f"{number(stage[1], True)}" if stage is not None and ml is n1 else "") + ".")


def _read_out(v3: dict | None) -> str:
    """How layer 2 reads the BOS share, from plan v3's snapshot: ", read by layer 2's weights, not the
    normalisation's scale" when a test of the learned weights is confirmed and fixing the scale raised the slope (its
    test refuted); "" otherwise."""
    if not v3:
        return ""
    with_bos = [t for t in (v3.get("tests") or {}).values() if t.get("bos")]
    rows = [r for r in (v3.get("runs") or {}).get("bos layernorm", []) if r.get("learned")]
    scale = [t["verdict"] for t in with_bos if t.get("intervention") == "scale_fixed"]
    learned = [t["verdict"] for t in with_bos if t.get("intervention") not in (None, "scale_fixed")]
    if not rows or scale != ["refuted"] or "confirmed" not in learned:
        return ""
    intact = sum(r["slope"] for r in rows) / len(rows)
    fixed = sum(r["scale_fixed"] for r in rows) / len(rows)
    return ", read by layer 2's weights, not the normalisation's scale" if fixed > intact else ""
