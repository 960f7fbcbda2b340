"""The README's answer (issues 66, 75): the plain answer to "does LayerNorm induce recency bias, and where?" in at most
about 125 words, each part from its claims' findings (their verdict labels and typed qualifiers,
:mod:`lnrecency.report.words.findings`) and plans v2 and v3's snapshots; never from a finding's prose, and never from
evidence that docs/verdicts.json does not keep (so ``regenerate --claim`` renders it on a fresh clone). The verdicts
row by row are in the table below it (:mod:`lnrecency.report.readme`)."""
from __future__ import annotations

from collections import Counter

__all__ = ["readme_answer", "answer_lines", "snapshots", "SNAPSHOTS"]


def _label(rows: list) -> str:
    """One label for some findings: their verdict when they agree, else "split"."""
    kinds = list(dict.fromkeys(f.verdict for f in rows))
    return kinds[0] if len(kinds) == 1 else "split"


def _v(f) -> str:
    """A finding's verdict as the answer says it: with ", by a hair" when its pair p lay within a factor of 2 of its
    Holm level (:attr:`lnrecency.inference.qualifiers.Qualifiers.by_a_hair`), and, undecided, the side it leans to."""
    q = f.qualifiers
    return f.verdict + ((", by a hair" + (f", leaning {q.leans} it" if q.leans else "")) if q.by_a_hair else "")


def _role(found: list, role: str, k: int = 0) -> tuple[list, str]:
    """The findings of the ``k``-th part of an answer role (lnrecency.claims.catalog.ANSWER: all of a claim's rows,
    one statement's, or one source's) and its words."""
    from lnrecency.claims.catalog import SOURCES, answer_parts

    cid, which, words = answer_parts(role)[k]
    kind, _, value = (which or "").partition(":")
    return [f for f in found if f.claim == cid and (
        which is None or (f.statement_key == value if kind == "statement" else f.source == SOURCES[value]))], words


#: a question's first word from its claim's label (never typed beside it)
ANSWER_WORD = {"confirmed": "Yes", "reproduced": "Yes", "refuted": "No", "the opposite shown": "No",
               "inconclusive": "Undecided", "split": "In part"}


#: what the paper claims, in one line (the answer's first; Theorem 1's statement in plain words)
CLAIM = ("The paper claims that LayerNorm makes a decoder's attention favour recent tokens: the expected layer-2 "
         "score rises with the key's position (its Theorem 1).")


#: the published snapshots the answer reads beside the findings (docs/): keyword -> file
SNAPSHOTS = {"v2": "thesis_text_v2.json", "v3": "thesis_text_v3.json", "v4": "thesis_text_v4.json",
             "v5": "thesis_text_v5.json", "pretrained": "pretrained.json"}


def snapshots(docs) -> dict:
    """The published snapshots in ``docs`` (a source checkout's docs/; an installed package has none) as
    :func:`readme_answer`'s keywords, each read through the one validated JSON reader; a missing one is None (the
    questions that need it are left out)."""
    from pathlib import Path

    from lnrecency.files.readers import read_json

    out = {}
    for key, name in SNAPSHOTS.items():
        path = Path(docs) / name
        out[key] = (read_json(path, what=f"the published runs docs/{name}", max_bytes=32 * 2**20, max_depth=16)
                    if path.is_file() else None)
    return out


def readme_answer(found: list, v2: dict | None = None, v3: dict | None = None, v4: dict | None = None,
                  v5: dict | None = None, pretrained: dict | None = None) -> str:
    """:func:`answer_lines` as the README writes them: the claim, then one bullet per question."""
    first, *rest = answer_lines(found, v2, v3, v4, v5, pretrained)
    return "\n".join([first] + [f"- {line}" for line in rest])


def answer_lines(found: list, v2: dict | None = None, v3: dict | None = None, v4: dict | None = None,
                 v5: dict | None = None, pretrained: dict | None = None) -> list[str]:
    """The answer (issue 84, item 1), the README's and the report's: what the paper claims in one line, then one line
    per question a reader brings (in expectation; one draw; deeper layers; prior work; trained models with BOS;
    without BOS; real pretrained models; the printed derivation), each with its verdict, its size in the claim's own
    quantity, its scope and its strongest counter-row, from the findings' typed qualifiers (plan v2's snapshot ``v2``
    for the ablation, plan v4's readings as its declaration holds them, plan v5's flat share, LayerNorm's parts and
    the stage, ``v5`` its snapshot; the pretrained models' published runs ``pretrained``); a question whose findings
    are not there is left out."""
    from lnrecency.claims.catalog import answer_parts
    from lnrecency.report.words.plain import number

    out = []
    theorem, theorem_words = _role(found, "theorem")
    if theorem:
        word = ANSWER_WORD.get(_label(theorem), "Undecided")
        out.append(f"**In expectation?** {word}{', ' + theorem_words if theorem_words else ''}"
                   f" (Theorem 1: {_label(theorem)}).")
    one = next((f for f in theorem if f.setting.get("norm") == "layernorm" and f.qualifiers.counter is not None
                and f.qualifiers.estimate is not None), None)
    if one is not None:
        q = one.qualifiers
        lam = one.setting.get("lam")
        n = one.setting.get("n_mc")  # the sequence length the one-draw probability was measured at
        out.append(f"**One draw?** At {q.where}" + (f" with lam = {lam:g}" if isinstance(lam, (int, float)) else "")
                   + (f" and sequences of {n}" if isinstance(n, int) else "")
                   + f" it orders key triples by recency with probability {q.estimate:.2f} (0.5: chance); with "
                   f"{q.counter.label}, " + _near_chance(q.counter))
    flat, flat_words = _role(found, "boundary", 0)
    deep, deep_words = _role(found, "boundary", 1)
    if flat and deep:  # each part with its own verdict, the deeper layers' where each holds, with the failure's size
        where = "; ".join(_deep_words(f) for f in sorted(deep, key=lambda f: f.verdict != "confirmed"))
        out.append(f"**Without normalisation?** {flat_words.capitalize()} ({_label(flat)}) and {deep_words} "
                   f"({where}).")
    deeper, _ = _role(found, "mechanism", 1)  # with normalisation the recency persists at deeper layers
    deeper = [f for f in deeper if f.qualifiers.settings]
    if deeper:  # row by row, each with how many settings it covers (its scope words stay on the claim's page)
        from lnrecency.inference.qualifiers import REASONS

        parts = "; ".join(f"{f.verdict} in {f.qualifiers.settings} settings"
                          + ("" if not f.qualifiers.fails else
                             f" ({f.qualifiers.where}: fails {f.qualifiers.fails.split(' (')[0]})")
                          # a run that checked part of the layers (--quick) says which, never the whole range
                          + (f" ({REASONS['partial']}: {f.qualifiers.holds})" if f.qualifiers.reason == "partial"
                             else "")
                          for f in sorted(deeper, key=lambda f: f.verdict != "confirmed"))
        partial = any(f.qualifiers.reason == "partial" for f in deeper)
        out.append(f"**Does recency persist at deeper layers with normalisation?** In the limit"
                   f"{'' if partial else ', layers 3-6'}: {parts}.")
    ours, _ = _role(found, "foil", 0)
    theirs, _ = _role(found, "foil", 1)
    trained, trained_words = _role(found, "foil", 2)
    sizes, sizes_words = _role(found, "foil", 3)
    if ours:  # Wu et al.: early tokens win in the rollout, which one layer's recency does not contradict
        settings: Counter = Counter()
        for f in theirs:
            settings[f.verdict] += f.qualifiers.settings or 1
        counts = ", ".join(f"{v} in {n}" for v, n in settings.most_common()) + (
            " setting" if list(settings.values()) == [1] else " settings")
        turn = next((f for f in trained if f.qualifiers.estimate is not None), None)
        against = {f.verdict for f in ours + theirs} & {"refuted", "the opposite shown"}
        lead = ("Not contradicted" if _label(ours) == "confirmed" and not against else
                "Contradicted in part" if against else "Undecided")
        both = ("early tokens win in their rollout, recent ones in one layer's scores; in the limit both hold where "
                "decided" if lead == "Not contradicted" else "in the limit")  # the reading only where its rows say it
        out.append(f"**Wu et al. (ICML 2025)?** {lead}: {both} ({ours[0].claim}: {_label(ours)}"
                   + (f"; their Theorem 4.1: {counts}" if theirs else "") + ")"
                   + ("" if turn is None else
                      f"; {trained_words}, early tokens still win: first-last gap "
                      f"{number(turn.qualifiers.estimate, True)} accuracy ({turn.claim}: {_v(turn)})")
                   + _published_sizes(sizes, sizes_words) + ".")
    cells = (v2 or {}).get("cells") or {}
    ln = ((cells.get("bos layernorm") or {}).get("change") or (None, None))[0]
    if ln is not None:
        intact = ((cells.get("bos layernorm") or {}).get("slope") or (None,))[0]
        out.append(f"**Trained text models with BOS?** Fixing layer 1's BOS share at its mean in the trained models "
                   f"(plan v2, at the probe) removes {-100 * ln:.0f} % of LayerNorm's slope{_sink(found, intact)}.")
    parts = _parts(found, v5)
    if parts:
        out.append(f"**What in LayerNorm does it need there?** {parts}")
    no_bos = _no_bos(found, v4, v5)
    if no_bos:
        rest = no_bos.removeprefix("Without BOS, ")
        out.append(f"**Without BOS?** {rest[0].upper()}{rest[1:]}")
    real = _pretrained(found, pretrained)
    if real:
        out.append("**Real pretrained models?** " + real)
    printed = {cid: [f for f in found if f.claim == cid] for cid, _, _ in answer_parts("printed")}
    printed = {cid: rows for cid, rows in printed.items() if rows}
    if printed:
        good = sum(_label(rows) == "confirmed" for rows in printed.values())
        other = [f"{cid} {_label(rows)}" for cid, rows in printed.items() if _label(rows) != "confirmed"]
        out.append(f"**The printed derivation?** It holds in {good} of {len(printed)} lines"
                   + (f" ({', '.join(other)})" if other else "") + ".")
    return [CLAIM] + out


def _published_sizes(rows: list, words: str) -> str:
    """Wu et al.'s published gaps beside ours, trained in their stack (W2's rows with both), by arm: the counter-row of
    their line ("" when none has both)."""
    from lnrecency.report.words.plain import number

    by: dict = {}
    for f in rows:
        q = f.qualifiers
        if q.theirs and q.estimate is not None:
            by.setdefault(q.where, []).append((q.theirs[0], q.estimate, q.low <= q.theirs[0] <= q.high
                                               if q.low is not None else None))
    if not by:
        return ""
    parts = [f"{where}: published {'/'.join(number(t, True) for t, _, _ in got)}, ours "
             f"{'/'.join(number(o, True) for _, o, _ in got)}" for where, got in by.items()]
    outside = all(inside is False for got in by.values() for _, _, inside in got)
    compared = sum(len(got) for got in by.values())
    # the published values with no interval of ours to compare with (an arm that did not learn) are said apart
    missing = sum(1 for f in rows if f.qualifiers.theirs and f.qualifiers.estimate is None)
    return (f"; {words}, {'; '.join(parts)} ({rows[0].claim}"
            + (f": all {compared} published values compared lie outside our intervals" if outside else "")
            + (f"; {missing} not compared: our models there did not learn" if missing else "") + ")")


def _near_chance(c) -> str:
    """A one-draw probability that reads 0.50 at two digits, in four with its interval, and what it means: chance when
    its interval holds 0.5, just above (or below) it otherwise (T1's sqrt(d)-scaled row: 0.5033 [0.5005, 0.5061])."""
    if f"{c.estimate:.2f}" != "0.50":
        return f"{c.estimate:.2f}."
    if c.low is None or c.high is None:
        return f"{c.estimate:.3f}."
    said = f"{c.estimate:.4f} [{c.low:.4f}, {c.high:.4f}]"
    if c.low <= 0.5 <= c.high:
        return f"{said}: there a single draw orders them by recency about as often as not."
    side = "more" if c.low > 0.5 else "less"
    return f"{said}: there a single draw orders them by recency only just {side} often than not."


def _pretrained(found: list, snap: dict | None = None) -> str:
    """R1's rows: with positions on, how many layers of each model show recency (from the published per-run rows
    ``snap``, docs/pretrained.json: layers significantly positive at the experiment's Bonferroni level; intervals, no
    verdict); with positions off, outside their training (the perplexity ratio), each model's verdict and mean layer
    slope beside its counter-row, the random control ("" when R1 is not there)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.report.words.plain import number

    rows = [f for f in found if f.claim in answer_ids("pretrained").values() and f.qualifiers.where]
    if not rows:
        return ""
    _, scope = _role(found, "pretrained")  # the models' kind, as the catalogue declares it
    names = [f.qualifiers.where.removesuffix(", positions off") for f in rows]
    on, every, ratio = [], True, []
    for name, f in zip(names, rows):
        runs = {r.get("condition"): r for r in ((snap or {}).get("runs") or []) if isinstance(r, dict)
                and str(f.setting.get("case", "")).startswith(str(r.get("name")))}
        if "text/on" in runs and "text/off" in runs:
            from lnrecency.experiments.studies.pretrained import layer_counts

            c = layer_counts(runs["text/on"])
            on.append(f"{name} {len(c['positive'])} of {c['layers']}")
            every = every and len(c["positive"]) == c["layers"]
            ppl = runs["text/off"].get("perplexity") or {}
            if ppl.get("on"):
                ratio.append(f"{ppl['off'] / ppl['on']:.0f}x")
    text = f"{scope[0].upper()}{scope[1:]}. " if scope else ""
    if on and len(on) == len(rows):
        text += f"Positions on, {'every layer shows' if every else 'layers showing'} recency ({', '.join(on)}). "
    sized = [f for f in rows if f.qualifiers.estimate is not None]
    if len(sized) != len(rows):  # stored without their size: where each lies, by its verdict
        return text + "; ".join(f"{f.qualifiers.where}: {_v(f)} ({f.qualifiers.holds or f.qualifiers.fails})"
                                for f in rows) + " (positions off: outside their training)."
    text += ("Positions off, outside their training" + (f" (perplexity {' and '.join(ratio)})" if
                                                             len(ratio) == len(rows) else "") + ": "
             + " and ".join(_v(f) for f in rows) + (" respectively" if len(rows) > 1 else "") + " (mean layer slope "
             + " and ".join(number(f.qualifiers.estimate, True) for f in rows) + ")")
    control = [f.qualifiers.counter for f in rows]
    if all(c is not None for c in control) and len({c.label for c in control}) == 1:  # R1's: the random control
        same = all((c.estimate > 0) == (f.qualifiers.estimate > 0) for c, f in zip(control, rows))
        text += (f"; the {control[0].label} reads {' and '.join(number(c.estimate, True) for c in control)}"
                 + (", the same signs: neither is specific to text" if same else ""))
    return text + "."


def _row(found: list, role: str, key: str):
    """The finding of a plan test's claim (``key``: the test in its plan, as the catalogue's ANSWER names it)."""
    from lnrecency.claims.catalog import answer_ids

    return next((f for f in found if f.claim == answer_ids(role).get(key)), None)


def _said(f, sep: str = ": ") -> str:
    """The reading its plan declares for a finding's outcome (before or after the runs), its conclusion after
    ``sep`` ("" where the plan wrote none)."""
    from lnrecency.experiments.plans.declared import test_for
    from lnrecency.inference.qualifiers import rule_outcome

    test = test_for(f.claim)
    reading = None if test is None else test.reading(rule_outcome(f.verdict))
    return "" if reading is None else reading.text.rstrip(".").split(sep, 1)[-1]


def _sink(found: list, intact: float | None) -> str:
    """Plan v5's flat share (F1-F3) beside plan v4's clamped share (U2), from their findings: the slope rides on the
    share's fall with position, not on its level ("" until decided)."""
    from lnrecency.report.words.plain import number

    flat = [_row(found, "plan v5", k) for k in ("flat at 0", "flat at LayerNorm's level", "flat at none's level")]
    u2 = _row(found, "plan v4", "U2")
    if any(f is None or f.qualifiers.estimate is None for f in flat + [u2]):
        return ""
    lo, hi = (fn(f.qualifiers.estimate for f in flat) for fn in (min, max))
    verdicts = "/".join(sorted({_v(f) for f in flat}))
    return (f"; trained with it held flat in every row (at 0, LayerNorm's level or none's) it leaves "
            f"{number(lo, True)} to "
            f"{number(hi, True)} of the intact {number(intact, True) if intact is not None else 'slope'} "
            f"({flat[0].claim}-{flat[-1].claim}, below half: {verdicts}; {flat[1].claim}'s reading: "
            f"\"{_said(flat[1])}\"), while clamped to none's level but still falling with position (lowered, not "
            f"removed) it reaches {number(u2.qualifiers.estimate, True)} ({u2.claim}, below half: {_v(u2)})")


def _parts(found: list, v5: dict | None) -> str:
    """Plan v4's U1 and plan v5's parts of LayerNorm (D1-D4), from their findings, with the strongest counter-row: the
    held-out loss of the arm whose slope went, against RMSNorm's (from ``v5``) ("" until decided)."""
    from lnrecency.report.words.plain import number

    u1 = _row(found, "plan v4", "U1")
    rows = {k: _row(found, "plan v5", k) for k in ("centring only", "RMSNorm", "scale out of the gradient",
                                                   "gain fixed")}
    if any(f is None or f.qualifiers.estimate is None for f in [u1, *rows.values()]):
        return ""

    def est(k: str) -> str:
        return number(rows[k].qualifiers.estimate, True)
    stop = "scale out of the gradient"
    loss = {arm: [r["final_loss"] for r in ((v5 or {}).get("runs") or {}).get(arm, [])] for arm in ("Pstop", "Prms")}
    counter = ("" if not all(loss.values()) else
               f", but those models also learn worse (held-out loss {min(loss['Pstop']):.2f}-{max(loss['Pstop']):.2f} "
               f"against RMSNorm's {min(loss['Prms']):.2f}-{max(loss['Prms']):.2f})")
    scale = _row(found, "plan v3", "C1")  # the paper's mechanism, tested in the trained models at the probe
    said = {"refuted": "Not the per-token scale's value at the probe", "confirmed": "The per-token scale's value"}
    lead = ("" if scale is None or scale.qualifiers.estimate is None else
            f"{said.get(scale.verdict, 'The per-token scale, undecided')}: with it fixed in the trained models with "
            f"BOS (plan v3), the slope stays above half ({scale.qualifiers.comparison} "
            f"{number(scale.qualifiers.estimate, True)}; {scale.claim}, removes more than half: {_v(scale)}). "
            if scale.verdict == "refuted" else
            f"{said.get(scale.verdict, 'The per-token scale, undecided')}: fixed in the trained models with BOS (plan "
            f"v3), {scale.qualifiers.comparison} {number(scale.qualifiers.estimate, True)} ({scale.claim}, removes "
            f"more than half: {_v(scale)}). ")
    return (f"{lead}With the LayerNorm profile imposed and no normalisation the slope is "
            f"{number(u1.qualifiers.estimate, True)} "
            f"({u1.claim}, above half: {_v(u1)}). With it and RMSNorm, {est('RMSNorm')}; LayerNorm with its gain "
            f"fixed, {est('gain fixed')} (plan v5, above half: {_v(rows['RMSNorm'])}, {_v(rows['gain fixed'])}); "
            f"centring only, {est('centring only')} ({_v(rows['centring only'])}); with the scale out of the "
            f"gradient, {est(stop)} ({_v(rows[stop])}; its reading: \"{_said(rows[stop])}\")"
            f"{counter}.")


def _deep_words(f) -> str:
    """One group of the deeper layers' findings in words, from its typed qualifiers: its verdict, where, and where
    it fails with the failure's size ("refuted with the residual (layers 3-4 hold for every alpha): layers 5-6 fail
    within [0, 0.92] by lam, largest score step on the rows sampled (logits) 136, and there ...")."""
    q = f.qualifiers
    where = {"residual": "with the residual", "no residual": "without the residual"}.get(q.where, q.where)
    if not q.fails:
        return f"{f.verdict} {where}".strip() + (f", {q.holds}" if q.holds else "")
    size = (f", {q.margin_of}{'' if q.margin_of.startswith('largest') else ' up to'} {q.margin:.3g}"
            if q.margin is not None else "")
    if q.second is not None:  # a second quantity where it changes the reading (C2: the keys' attention weight)
        size += f"; {q.second_of} {q.second:.2g}"
    return f"{where}, {f.verdict} {q.fails}{size}"


def _no_bos(found: list, v4: dict | None = None, v5: dict | None = None) -> str:
    """Without BOS (plan v2's Q1-Q3, from their findings' qualifiers): LayerNorm's slope beside none's, and LayerNorm
    minus none at equal tokens and at matched loss, each with its verdict: where it holds and where it reverses; plan
    v5's replication of both in the same runs (T2, T3) and the stage (T1: LayerNorm's slope from the matched loss to
    3.0M tokens, from ``v5``'s trajectories)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.claims.trained_qualifiers import matched_stage
    from lnrecency.inference.qualifiers import REASONS
    from lnrecency.report.words.plain import number

    ids = answer_ids("plan v2")
    rows = {q: next((f for f in found if f.claim == ids.get(q)), None) for q in ("Q1", "Q2", "Q3")}
    n1 = _row(found, "plan v4", "N1")
    if n1 is not None and n1.qualifiers.estimate is not None:  # plan v4 decided matched loss with the power to tell
        rows["Q3"] = n1
    if any(f is None or f.qualifiers.estimate is None for f in rows.values()):
        return ""
    one, eq, ml = (rows[q] for q in ("Q1", "Q2", "Q3"))
    stage = matched_stage(v4)
    none = one.qualifiers.counter
    why = (REASONS[ml.qualifiers.reason] + ", by a hair" * ml.qualifiers.by_a_hair
           if ml.verdict == "inconclusive" and ml.qualifiers.reason else _v(ml))
    t1, t2, t3 = (_row(found, "plan v5", k) for k in ("the stage", "equal tokens", "matched loss"))
    again = (None not in (t1, t2, t3) and t2.qualifiers.estimate is not None and t3.qualifiers.estimate is not None)

    def v5_said(f) -> str:
        return f"; plan v5: {number(f.qualifiers.estimate, True)}, {_v(f)}" if again else ""
    traj = (v5 or {}).get("trajectories") or {}
    at, end = ((traj.get(p) or {}).get("Tln") or {} for p in ("loss 4.25", "step 1465"))
    grows = (f", and in plan v5's runs its slope goes from {number(at['slope'], True)} there to "
             f"{number(end['slope'], True)} at 3.0M tokens ({t1.claim} {_v(t1)}; its reading: \"{_said(t1)}\")"
             if again and "slope" in at and "slope" in end else "")
    return (f"Without BOS, at equal tokens LayerNorm's slope is {number(one.qualifiers.estimate, True)} logit per key"
            + (f" (none {number(none.estimate, True)}" if none is not None else " (")
            + f"; difference {number(eq.qualifiers.estimate, True)}, {_v(eq)}{v5_said(t2)}), "
            + ("and" if ml.verdict == "confirmed" else "but")
            + f" at matched held-out loss LayerNorm minus none is {number(ml.qualifiers.estimate, True)} "
              f"({ml.claim}: {why}"
            + (v5_said(t3) if ml is n1 else "") + ")"
            + (f"; LayerNorm reaches that loss with {stage[0]:.1f}x fewer tokens" + grows
               if stage is not None and ml is n1 else "") + ".")
