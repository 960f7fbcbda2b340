"""The plain answer's part on trained and real models (:func:`trained_summary`, read by
:func:`lnrecency.report.headline.answer`, and re-exported there), and which setting the thesis on text needs
(:func:`v2_setting`, issue 50: the report's answer, the README and the TT claim pages say it with these words)."""
from __future__ import annotations

from lnrecency.inference.verdicts import ClaimResult

__all__ = ["trained_summary", "v2_setting", "wu_sentence"]


def v2_setting(cells: dict, verdicts: dict, matched: list | None, *, quick: bool = False, brief: bool = False) -> str:
    """Which setting the thesis on text needs, in one plain sentence (plan v2, issue 50): ``cells`` as the experiment
    summarises them ("bos layernorm" -> {"slope": (mean, SE), "change": (mean, SE), ...}), ``verdicts`` claim ->
    label (TV1-TV6), ``matched``: TV3's interval (LayerNorm - none at matched loss). The report's answer, the
    README and the TT claim pages all say it with these words (``brief``: the README's, without the verdicts,
    which its table gives)."""
    def slope(cell):
        m = (cells.get(cell) or {}).get("slope") or (None, None)
        return "n/a" if m[0] is None else f"{m[0]:+.4f}"

    def change(cell):
        m = (cells.get(cell) or {}).get("change") or (None, None)
        return "n/a" if m[0] is None else f"{100 * m[0]:+.0f} %"

    from lnrecency.claims.catalog import answer_ids

    claim = answer_ids("plan v2")  # the plan's test -> its claim

    def said(*tests):
        return ", ".join(f"{claim[q]} {verdicts.get(claim[q], 'not evaluated')}" for q in tests)
    iv = (f"[{matched[0]:+.4f}, {matched[1]:+.4f}]" if matched and None not in matched[:2] else "n/a")
    lead = "Which setting it needs (plan v2, ours" + (", a quick run: not decisive" if quick else "") + "): "
    if brief:  # the README, whose table gives each TV verdict
        return (f"{lead}with BOS first, layer 1's BOS share carries LayerNorm's {slope('bos layernorm')} (fixing it: "
                f"{change('bos layernorm')}); without BOS, {slope('no bos layernorm')} against none "
                f"{slope('no bos none')}, and at matched loss LayerNorm minus none is {iv}.")
    return (f"{lead}with BOS first in every window LayerNorm's layer-2 slope is {slope('bos layernorm')} logit per "
            f"key, and layer 1's share of attention to BOS carries it: fixing that share changes it by "
            f"{change('bos layernorm')} ({said('Q4')}), without normalisation by {change('bos none')} "
            f"({said('Q5')}); without any BOS, LayerNorm reads {slope('no bos layernorm')} against none "
            f"{slope('no bos none')} ({said('Q1', 'Q2')}), and at matched loss LayerNorm minus none is {iv} "
            f"({said('Q3')}).")


def _v4_sentence(results: list[ClaimResult]) -> str | None:
    """Plan v4 (issue 76) in one plain sentence from its rows' typed qualifiers: where the slope holds with the sink
    imposed or clamped, and LayerNorm minus none without BOS at matched loss, each with its verdict (None when not
    evaluated)."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.inference.qualifiers import REASONS

    rows = {key: next((r for r in results if r.id == cid and not r.not_run), None)
            for key, cid in answer_ids("plan v4").items()}
    if any(r is None or r.qualifiers is None or r.qualifiers.estimate is None for r in rows.values()):
        return None

    def said(r):
        q = r.qualifiers
        why = f", {REASONS[q.reason]}" if q.reason else ""
        return f"{q.estimate:+.4f} [{q.low:+.4f}, {q.high:+.4f}] logit per key ({r.verdict}{why})"
    return (f"Upstream or read-out (plan v4): with BOS and no normalisation but layer 1's BOS share imposed at the "
            f"LayerNorm level, layer 2's slope is {said(rows['U1'])}; with LayerNorm and the share clamped to the "
            f"none level, {said(rows['U2'])}; without BOS at matched held-out loss, LayerNorm minus none is "
            f"{said(rows['N1'])}.")


def _quick(r: ClaimResult) -> bool:
    """Whether a row was decided by a quick run, read from its typed qualifiers (issue 75: never from its prose)."""
    return r.qualifiers is not None and r.qualifiers.reason == "quick run"


def _v2_sentence(results: list[ClaimResult]) -> str | None:
    from lnrecency.claims.catalog import answer_ids

    claim = answer_ids("plan v2")
    rows = {r.id: r for r in results if r.id in claim.values() and not r.not_run}
    cells = next((getattr(r.evidence, "cells", None) for r in rows.values() if getattr(r.evidence, "cells", None)),
                 None)
    if not cells:
        return None
    tv3 = rows.get(claim["Q3"])
    matched = ((getattr(tv3.evidence, "decision", None) or {}).get("interval") if tv3 is not None else None)
    quick = any(_quick(r) for r in rows.values())
    return v2_setting(cells, {cid: r.verdict for cid, r in rows.items()}, matched, quick=quick)


def _v3_sentence(results: list[ClaimResult]) -> str | None:
    """Plan v3 (issue 67) in one plain sentence: how layer 2 reads the BOS share, from its five tests' verdicts and
    its LayerNorm cells (the claims' evidence); None when not evaluated."""
    from lnrecency.claims.catalog import answer_ids

    claim = answer_ids("plan v3")
    rows = {key: next((r for r in results if r.id == cid and not r.not_run), None) for key, cid in claim.items()}
    if any(r is None for r in rows.values()):
        return None
    cells = getattr(next(iter(rows.values())).evidence, "cells", None) or {}
    bos = cells.get("bos layernorm") or {}
    if not bos or bos.get("slope", (None,))[0] is None:
        return None
    said = "; ".join(f"{key} {r.verdict}" for key, r in rows.items())
    return (f"How layer 2 reads it (plan v3, causal tests in the BOS LayerNorm models, slope {bos['slope'][0]:+.3f}): "
            f"with layer 2's QK replaced by c I {bos['qk_identity'][0]:+.3f}, with the keys' BOS direction removed "
            f"{bos['bos_direction'][0]:+.3f}, with the per-token scale fixed {bos['scale_fixed'][0]:+.3f} ({said}).")


def wu_sentence(cells: dict, verdicts: dict, *, steps: int, seeds: int, quick: bool = False) -> str:
    """Wu et al.'s experiment with normalisation inserted (W2-W4, issue 51) in one plain sentence: ``cells`` as the
    experiment summarises them ("depth 2 none" -> {"gaps": {"first-last": (mean, SE)}, "ablated_gaps": ...}),
    ``verdicts`` the plan's test -> label (R1-R6, P1-P6)."""
    def gap(cell, which="gaps"):
        g = ((cells.get(cell) or {}).get(which) or {}).get("first-last") or (None, None)
        return "n/a" if g[0] is None else f"{g[0]:+.3f}"

    def said(*tests):
        return ", ".join(f"{t} {verdicts.get(t, 'not evaluated')}" for t in tests)
    lead = (f"In Wu et al.'s own experiment (their task and stack without positions, {steps:,} steps, {seeds} seeds "
            f"per cell" + (", a quick run: not decisive" if quick else "") + "), ")
    def num(cell, key, fmt):
        m = (cells.get(cell) or {}).get(key) or (None, None)
        return "n/a" if m[0] is None else f"{m[0]:{fmt}}"
    return (f"{lead}the first-vs-last accuracy gap (> 0: the earlier item wins) reads {gap('depth 2 none')} at depth 2 "
            f"without normalisation ({said('R2')}); LayerNorm makes it {gap('depth 2 layernorm')} ({said('P1')}; "
            f"below 0: {said('P5')}), and fixing LayerNorm's per-token scale makes it "
            f"{gap('depth 2 layernorm', 'ablated_gaps')} again ({said('P6')}). In those LayerNorm models both "
            f"quantities hold at once: the last layer's scores rise by {num('depth 2 layernorm', 'slope', '+.3f')} "
            f"logit per later item ({num('depth 2 none', 'slope', '+.3f')} without normalisation) while the rollout "
            f"gives the first item {num('depth 2 layernorm', 'rollout_first', '.3f')} and the last "
            f"{num('depth 2 layernorm', 'rollout_last', '.3f')}.")


def _wu_sentence(results: list[ClaimResult]) -> str | None:
    from lnrecency.claims.catalog import answer_ids

    rows = [r for r in results if r.id in answer_ids("wu").values() and not r.not_run]
    ev = next((r.evidence for r in rows if getattr(r.evidence, "cells", None)), None)
    if ev is None:
        return None
    quick = any(_quick(r) for r in rows)
    return wu_sentence(ev.cells, {r.setting.case: r.verdict for r in rows}, steps=ev.steps, seeds=ev.seeds,
                       quick=quick)


def trained_summary(results: list[ClaimResult]) -> str:
    """What the trained and real models say, in plain words (3-5 sentences; each part omitted when its claims
    were not evaluated): the synthetic task's limits, the thesis on text, the real pretrained decoders."""
    from lnrecency.claims.catalog import answer_ids

    task, text_ids, real = (list(answer_ids(role).values()) for role in ("task", "text", "pretrained"))
    got = {cid: [r for r in results if r.id == cid and not r.not_run] for cid in task + text_ids + real}
    out = []
    if got[task[0]]:  # what the task's slope is made of is on its claim's page (its evidence's anchoring sentence)
        out.append("On the synthetic induction task the TM1-TM3 and TM5 rows are secondary: its slope cannot test "
                   "the thesis.")
    text = [(cid, got[cid][0]) for cid in text_ids if got[cid]]
    if text:
        def part(cid, r):
            d = getattr(r.evidence, "decision", None) or {}
            iv = d.get("interval")
            num = f" ({iv[0]:+.4f} to {iv[1]:+.4f} logit per key)" if iv and None not in iv else ""
            return f"{cid}: {r.verdict}{num}"
        ev = text[0][1].evidence
        scale = (f" ({ev.seeds} seeds per normalisation, {ev.tokens / 1e6:.3g}M tokens)"
                 if hasattr(ev, "seeds") and hasattr(ev, "tokens") else "")
        out.append(f"On text, in NoPE language models trained here under a pre-registered plan{scale}: "
                   + "; ".join(part(c, r) for c, r in text) + ".")
    v2 = _v2_sentence(results)
    if v2:
        out.append(v2)
    v3 = _v3_sentence(results)
    if v3:
        out.append(v3)
    v4 = _v4_sentence(results)
    if v4:
        out.append(v4)
    wu = _wu_sentence(results)
    if wu:
        out.append(wu)
    if got[real[0]]:
        rows = []
        for r in got[real[0]]:  # from the row's typed qualifiers: cached or re-decided from docs/pretrained.json
            q = r.qualifiers
            name = (q.where if q is not None else "").removesuffix(", positions off") or "a model"
            size = ("" if q is None or q.estimate is None else f" (mean layer slope {q.estimate:+.4f}"
                    + ("" if q.low is None else f" [{q.low:+.4f}, {q.high:+.4f}]") + " logit per key"
                    + ("" if q.counter is None else f"; {q.counter.label} {q.counter.estimate:+.4f}") + ")")
            rows.append(f"{name}: {r.verdict}{size}")
        out.append("In real pretrained decoders with the positional encoding switched off (out of their training "
                   "distribution): " + "; ".join(rows) + ".")
    if not out:
        return ("Trained and real decoders are not run in this report: `lnrecency experiments thesis-text` (the "
                "thesis on text), `thesis`, `seed002`, `seed003` and `pretrained` fill those sections.")
    return " ".join(out)
