"""Plans v2's and v3's results on the documentation pages and the README (issues 50, 51, 67), from the snapshots of
their runs (docs/thesis_text_v2.json, docs/thesis_text_v3.json): plan v2's plain sentence and the block of its six
tests, its cells and the rollout and sink metrics in its models; plan v3's block: its five tests, the probe's noise,
each cell's interventions and path decomposition, and what they say in plain words."""
from __future__ import annotations

__all__ = ["V2_BEGIN", "V2_END", "v2_block", "v2_sentence", "V3_BEGIN", "V3_END", "v3_block"]


def plan_label(plan: str, test: str, verdict: str) -> str:
    """A plan test's verdict as its claim's row reads it, by whose statement it is (lnrecency.claims.catalog.label;
    the snapshots of runs before issue 75 wrote "reproduced" for the project's own statements)."""
    from lnrecency.claims.catalog import answer_ids, declared, label

    cid = answer_ids(plan).get(test)
    if cid is None or verdict not in ("confirmed", "refuted", "reproduced", "the opposite shown", "inconclusive"):
        return verdict
    return label(cid, declared(cid).statements[0].text, verdict)


def v2_sentence(snapshot: dict, *, brief: bool = False) -> str:
    """Plan v2's result in one plain sentence (issue 50; :func:`lnrecency.report.headline.v2_setting`), from the
    snapshot of its run (docs/thesis_text_v2.json), linked to its page."""
    from lnrecency.claims.catalog import answer_ids
    from lnrecency.report.headline import v2_setting

    tests = snapshot["tests"]
    verdicts = {cid: plan_label("plan v2", q, tests[q]["verdict"]) for q, cid in answer_ids("plan v2").items()
                if q in tests}
    return (v2_setting(snapshot["cells"], verdicts, tests.get("Q3", {}).get("interval"), quick=snapshot.get("quick"),
                       brief=brief) + " [Details](docs/thesis-text-v2.md).")


V2_BEGIN, V2_END = "<!-- thesis-text-v2:begin -->", "<!-- thesis-text-v2:end -->"


def v2_block(snapshot: dict) -> str:
    """Plan v2's results (issue 50) from the snapshot of its run (``lnrecency experiments thesis-text-v2 --json``,
    kept as docs/thesis_text_v2.json): the six tests, then one row per cell, between the thesis-text-v2 markers."""
    def num(x, fmt="+.4f"):
        return "n/a" if x is None else format(x, fmt)

    def pair(p):
        return "n/a" if p is None or p[0] is None else f"{p[0]:+.4f} (SE {p[1]:.4f})"
    lines = [V2_BEGIN, f"Plan SHA-256 `{snapshot['plan_sha256']}`"
             + (" (quick run: not decisive)" if snapshot.get("quick") else "") + "; Holm over Q1-Q6 at 0.05.", "",
             "| test | statement | verdict | interval (95 %, logit per key) | detectable effect "
             "| p (pair) / Holm level |",
             "|---|---|---|---|---|---|"]
    from lnrecency.inference.seed_tests import holm_levels

    tests = snapshot["tests"]
    pairs = [min(1.0, 2 * min(t["p_confirm"], t["p_refute"])) if t.get("p_confirm") is not None else float("nan")
             for t in tests.values()]
    levels = holm_levels(pairs, 0.05)  # a pair decides when its p is at or below its step's level (and all before)
    for (key, t), p, level in zip(tests.items(), pairs, levels):
        lo, hi = (t.get("interval") or (None, None))
        lines.append(f"| {key} | {t['statement']} | {plan_label('plan v2', key, t['verdict'])} | "
                     + (f"[{num(lo)}, {num(hi)}]" if lo is not None else t.get("why") or "n/a")
                     + f" | {num(t.get('detectable_effect'), '.4f')} | "
                     + ("n/a" if p != p else f"{p:.2g} / {level:.3g}") + " |")
    lines += ["", "A test whose p sits within a factor of 2 of its Holm level was decided by a hair, either way."]
    lines += ["", _level_sentence(tests)] + _noise_lines(snapshot.get("runs"))
    lines += ["", "| cell | seeds learned | layer-2 slope | keys >= 8 | ablated (layer 1's first-key share fixed) | "
              "change | layer-1 first-key share, rows 2 / 16 / 64 | sink theory: fitted b, its largest gap | "
              "sink theory's layer-2 slope at that b, the cell's normalisation: no residual / residual |",
              "|---|---|---|---|---|---|---|---|---|"]
    for name, c in snapshot["cells"].items():
        rows = c.get("first_share_rows") or []
        share = " / ".join(f"{rows[i - 1]:.3f}" for i in (2, 16, 64) if i <= len(rows)) or "n/a"
        th = c.get("theory")
        change = c.get("change") or (None, None)
        lines.append(f"| {name} | {len(c['seeds'])} | {pair(c['slope'])} | {pair(c['late'])} | {pair(c['ablated'])} | "
                     + ("n/a" if change[0] is None else f"{100 * change[0]:+.0f} % (SE {100 * change[1]:.0f})")
                     + f" | {share} | " + ("n/a" if not th else f"b = {th['b']:.2f}, {th['largest_gap']:.3f}")
                     + " | " + _theory_slopes(th, name) + " |")
    lines += _theory_sentence(snapshot["cells"])
    n = ((snapshot.get("settings") or {}).get("base") or {}).get("n")
    return "\n".join(lines + _rollout_lines(snapshot["cells"], n if isinstance(n, int) else None) + [V2_END])


def _rollout_lines(cells: dict, n: int | None = None) -> list[str]:
    """Issue 51 in plan v2's models: the last query's attention rollout (Wu et al.'s quantity) and Gu et al.'s
    Sink^eps_1 beside our sink share, per cell, on held-out text (the random control beside the sink metrics), and
    uniform causal attention's exact rollout at window length ``n`` for reference; none for a snapshot from before
    they were recorded."""
    from lnrecency.experiments.probes.probe_settings import GU_EPS, ROLLOUT_LAMBDA, uniform_reference

    if not cells or any("text gu_sink" not in c for c in cells.values()):
        return []

    def pair(p, fmt=".3f"):
        return "n/a" if p is None or p[0] is None else f"{p[0]:{fmt}} (SE {p[1]:{fmt}})"
    lines = ["", f"Wu et al.'s quantity and Gu et al.'s sink metric in the same models (secondary, no verdict): the "
             f"last query's attention rollout R = A^(2) A^(1) (head-mean weights) at the first and the last key, "
             f"the residual-aware rollout ((1 - lambda) I + lambda A, lambda {ROLLOUT_LAMBDA}), Gu et al.'s "
             f"Sink^{GU_EPS}_1 (the share of (layer, head) pairs whose mean attention to the first key exceeds "
             f"{GU_EPS}) and our sink share (layer 1's mean attention to the first key, rows i >= 2); held-out "
             f"text, the random control after the slash.", "",
             "| cell | rollout at key 1, layer 1 / layer 2 | rollout at the last key, layer 2 | residual-aware "
             "rollout at key 1, layer 2 | Gu's Sink_1, text / random | our sink share, text / random |",
             "|---|---|---|---|---|---|"]
    for name, c in cells.items():
        lines.append(f"| {name} | {pair(c['text rollout 1 first'])} / {pair(c['text rollout 2 first'])} | "
                     f"{pair(c['text rollout 2 last'], '.4f')} | {pair(c['text rollout 2 residual first'])} | "
                     f"{pair(c['text gu_sink'], '.2f')} / {pair(c['random gu_sink'], '.2f')} | "
                     f"{pair(c['text sink'])} / {pair(c['random sink'])} |")
    if n:  # uniform causal attention's exact rollout at the window length
        u = uniform_reference(n)
        lines.append(f"| uniform causal attention (exact path count, n = {n}) | {u['first 1']:.3f} / "
                     f"{u['first 2']:.3f} | {u['last 2']:.4f} | {u['residual first 2']:.3f} | n/a | n/a |")
        lines += ["", rollout_reading(cells, u["first 2"])]
    return lines


def _side(m, uniform: float) -> str:
    """Where a (mean, SE) over seeds lies against uniform attention's value: beyond 2 SE either way, or within."""
    if m is None or m[0] is None:
        return "n/a"
    return "above" if m[0] - 2 * m[1] > uniform else "below" if m[0] + 2 * m[1] < uniform else "within 2 SE of"


def rollout_reading(cells: dict, uniform: float) -> str:
    """The rollout table in plain words, from the numbers: in the BOS-trained LayerNorm models the paper's quantity
    (the layer-2 slope) and Wu et al.'s (the rollout at the first and the last key) side by side; where each
    cell's rollout at the first key lies against uniform attention's (``uniform``, the causal mask's path count),
    by 2 SE over seeds; Gu et al.'s Sink^eps_1 per BOS arm."""
    ln = cells.get("bos layernorm") or {}

    def num(c, key, fmt):
        m = c.get(key) or (None, None)
        return "n/a" if m[0] is None else f"{m[0]:{fmt}}"
    sides = {name: _side(c.get("text rollout 2 first"), uniform) for name, c in cells.items()}
    by_side: dict = {}
    for name, side in sides.items():
        by_side.setdefault(side, []).append(name)
    return (f"In words: with BOS and LayerNorm, layer 2's scores rise by {num(ln, 'slope', '+.4f')} logit per key "
            f"while the rollout gives the first key {num(ln, 'text rollout 2 first', '.3f')} after layer 2 and the "
            f"last key {num(ln, 'text rollout 2 last', '.4f')}: recency in the paper's quantity and primacy in Wu et "
            f"al.'s, in the same models. Against uniform attention's {uniform:.3f} at the first key (the causal "
            f"mask's path count alone), the rollout at the first key after layer 2 is "
            + "; ".join(f"{side} it in {', '.join(names)}" for side, names in by_side.items())
            + " (by 2 SE over seeds). Gu et al.'s Sink_1: "
            + ", ".join(f"{name} {num(c, 'text gu_sink', '.2f')}" for name, c in cells.items()) + ".")


def _level_sentence(tests: dict) -> str:
    """Issue 67, item 5: the plan's power restated at the level its rule decides, and the tests that the rule's
    doubling alone left inconclusive (:mod:`lnrecency.experiments.studies.plan_levels`)."""
    from lnrecency.experiments.studies.plan_levels import doubling_only, plan_power

    power = plan_power()
    only = doubling_only(tests)
    said = ", ".join(f"{k} {v['plan']:.2f} -> {v['rule']:.2f}" for k, v in power.items())
    return ("The level the rule decides at: the plan computed each test's power one-sided at 0.05 / 6, but the rule "
            "decides on the pair p = 2 min(p in the stated direction, p in the opposite), one-sided at 0.05 / 12 in "
            f"effect. From the plan's own assumed designs (8 seeds per arm, noncentral t), its power as planned -> at "
            f"the rule's level: {said}. The verdicts stand as decided. "
            + (f"{', '.join(only)} {'is' if len(only) == 1 else 'are'} inconclusive only through that doubling: Holm "
               f"at 0.05 on the one-sided min(p) would have decided {'it' if len(only) == 1 else 'them'} (on the side "
               f"of the smaller p)." if only else "No test is inconclusive only through that doubling."))


def _noise_lines(runs: dict | None) -> list[str]:
    """Issue 67, item 3, measured from the snapshot's per-seed rows: per cell, one run's probe SE (its layer-2
    slope's SE over the held-out windows, mean over the learned runs) against the SD of the slope between learned
    seeds. Where the ratio is near 1 or above, most of the between-seed spread is the probe's own noise."""
    import numpy as np

    if not runs:
        return []
    lines = ["", "The probe's noise against the seeds' spread (learned runs; layer-2 slope, logit per key):", "",
             "| cell | runs | one run's probe SE (mean over runs) | SD between seeds | probe SE / seed SD |",
             "|---|---|---|---|---|"]
    for name, rows in runs.items():
        ok = [r for r in rows if r["learned"]]
        if len(ok) < 2:
            lines.append(f"| {name} | {len(ok)} | n/a | n/a | n/a |")
            continue
        se = float(np.mean([r["slope_se"] for r in ok]))
        sd = float(np.std([r["slope"] for r in ok], ddof=1))
        lines.append(f"| {name} | {len(ok)} | {se:.4f} | {sd:.4f} | " + (f"{se / sd:.2f}" if sd > 0 else "n/a")
                     + " |")
    return lines


def _predicted(th: dict | None, cell: str) -> tuple | None:
    """The sink theory's layer-2 slopes (no residual, residual) for a cell's normalisation: LayerNorm's for LayerNorm
    and RMSNorm (one limit), none's for none; None for a snapshot from before they were recorded."""
    if not th or "theory_slope_none_residual" not in th:
        return None
    kind = "none" if cell.endswith(" none") else "layernorm"
    return th[f"theory_slope_{kind}"], th[f"theory_slope_{kind}_residual"]


def _theory_slopes(th: dict | None, cell: str) -> str:
    pair = _predicted(th, cell)
    return "n/a" if pair is None else f"{pair[0]:+.5f} / {pair[1]:+.5f}"


def _theory_sentence(cells: dict) -> list[str]:
    """Issue 67, item 4 in part: the parameter-free sink theory in the trained models' own setting (each cell's
    normalisation with the residual, at its b fitted to its layer-1 shares, never to its slope) against the trained
    layer-2 slope, with the ratio and where it fails; none for a snapshot from before it was recorded."""
    parts, misses = [], []
    for name, c in cells.items():
        pair, m = _predicted(c.get("theory"), name), c.get("slope") or (None, None)
        if pair is None or m[0] is None:
            continue
        pred = pair[1]
        if pred * m[0] < 0:
            how = "the opposite sign"
        else:
            how = f"{m[0] / pred:.0f}x smaller than trained" if abs(pred) < abs(m[0]) else "the same sign"
        misses.append(pred * m[0] < 0 or abs(pred) * 10 < abs(m[0]))
        parts.append(f"{name}: predicted {pred:+.5f} against trained {m[0]:+.4f} (SE {m[1]:.4f}), {how}")
    if not parts:
        return []
    return ["", "The sink theory in the trained models' setting (the cell's normalisation with the residual, gamma 1, "
            "at each cell's bonus b fitted to its layer-1 shares, never to the slope it predicts): " + "; ".join(parts)
            + "." + (" In every cell it misses by the sign or by more than a factor of 10: the parameter-free theory "
                     "does not predict the learned read-out." if all(misses) else "")]


V3_BEGIN, V3_END = "<!-- thesis-text-v3:begin -->", "<!-- thesis-text-v3:end -->"


def v3_block(snapshot: dict, v2: dict | None = None) -> str:
    """Plan v3's results (issue 67) from the snapshot of its run (docs/thesis_text_v3.json), between the
    thesis-text-v3 markers: the plain reading, the five tests, the probe's noise and one row per cell. ``v2``: plan
    v2's snapshot, for the sink bonus fitted to the BOS LayerNorm cell's layer-1 share."""
    from lnrecency.claims.trained.tc1_tc5_thesis_text_v3 import cells_of
    from lnrecency.inference.seed_tests import holm_levels

    def pm(p):
        return "n/a" if p is None or p[0] is None else f"{p[0]:+.4f} (SE {p[1]:.4f})"
    tests, cells = snapshot["tests"], cells_of(snapshot["runs"])
    order = [k for k in ("A1", "B1", "C1", "A0", "C0") if k in tests]
    reading = _v3_reading(tests, cells, snapshot.get("theory") or {}, snapshot.get("secondary"))
    lines = [V3_BEGIN, reading, "", *([_v3_theory(snapshot["theory"]), ""] if snapshot.get("theory") else []),
             f"Plan SHA-256 `{snapshot['plan_sha256']}`; Holm over the five tests at 0.05; each per-seed "
             f"value is intervened - 0.5 x intact (logit per key), stated side below 0.", "",
             "| test | statement | verdict | interval (95 %) | p (pair) / Holm level |", "|---|---|---|---|---|"]
    pairs = [tests[k].get("p_pair", float("nan")) for k in order]
    for k, p, level in zip(order, pairs, holm_levels(pairs, 0.05)):
        t = tests[k]
        span = f"[{t['interval'][0]:+.4f}, {t['interval'][1]:+.4f}]" if t.get("interval") else t.get("why") or "n/a"
        lines.append(f"| {k} | {t['statement']} | {t['verdict']} | {span} | "
                     + ("n/a" if p != p else f"{p:.2g} / {level:.3g}") + " |")
    for key, m in (snapshot.get("secondary") or {}).items():  # intervals with their side, never verdicts
        lo, hi = m["interval"]
        lines += ["", f"Secondary {key} (no verdict): {m['what']}, at held-out loss {m['target_loss']:.3f}: "
                      f"{m['mean']:+.4f} logit per key, 95 % interval [{lo:+.4f}, {hi:+.4f}], {m['side']} 0 "
                      f"({m['seeds'][0]} and {m['seeds'][1]} seeds; {m['final_used']} runs never reached that loss and "
                      f"enter with their final slope)."]
    lines += ["", "The probe's noise (the plan aimed at one run's SE below a third of the spread between seeds):", "",
              "| cell | one run's SE (mean) | between-seed SD | ratio | target (< 1/3) |", "|---|---|---|---|---|"]
    for cell, nz in snapshot["noise"].items():
        ratio = nz.get("ratio")
        sd = "n/a" if nz["seed_sd"] is None else f"{nz['seed_sd']:.5f}"
        lines.append(f"| {cell} | {nz['probe_se']:.5f} | {sd} | "
                     + ("n/a" if ratio is None else f"{ratio:.2f} | {'met' if ratio < 1 / 3 else 'missed'}") + " |")
    lines += ["", "| cell | layer-2 slope | QK = c I | BOS direction removed | scale fixed | own path | BOS path | "
              "other content | BOS path: scale / own change | all paths: scale / own change / interaction |",
              "|---|---|---|---|---|---|---|---|---|---|"]
    for cell, c in cells.items():
        lines.append(f"| {cell} | " + " | ".join(pm(c[k]) for k in ("slope", "qk_identity", "bos_direction",
                                                                   "scale_fixed", "own", "bos", "other"))
                     + f" | {c['bos scale'][0]:+.4f} / {c['bos numerator'][0]:+.4f} | {c['scale'][0]:+.4f} / "
                       f"{c['numerator'][0]:+.4f} / {c['interaction'][0]:+.4f} |")
    lines += ["", "Means over each cell's learned seeds (SE over seeds); the paths sum to the slope to float rounding "
                  "in every model (docs/thesis_text_v3.json, per seed)."]
    th = snapshot.get("theory") or {}
    if th:
        lines += ["", "The sink theory in the models' own setting (the limit with the residual, alpha = 0, n = 64; b "
                      "fitted to the cell's layer-1 first-key share, plan v2), without and with the read-out of the "
                      "first token's coordinate at its gain measured from each model's logit level "
                      "(`lnrecency.theory.sink.readout_slope`):", "",
                  "| cell | b | parameter-free slope | read-out gain (mean) | predicted slope | trained slope | "
                  "trained BOS path | predicted / trained |", "|---|---|---|---|---|---|---|---|"]
        for cell, t in th.items():
            ratio = "n/a" if t["ratio"] is None else f"{t['ratio']:.2f}"
            lines.append(f"| {cell} | {t['b']:.3f} | {t['parameter_free']:+.4f} | {t['gain']:+.2f} | "
                         f"{t['predicted']:+.4f} | {t['trained']:+.4f} | {t['bos_path']:+.4f} | {ratio} |")
    return "\n".join(lines + [V3_END])


def _v3_reading(tests: dict, cells: dict, theory: dict, secondary: dict | None = None) -> str:
    """Plan v3 in plain words, at most 120 words (issue 75, item 9), every number from the snapshot (its cells,
    tests, theory and secondary intervals): the BOS path beside the other-content path, what each intervention
    leaves and what it removes, that the c I baseline has recency of its own, that these runs cannot tell reading the
    sink from forming it, and the matched-loss interval without BOS."""
    bos, free, none_bos = cells.get("bos layernorm"), cells.get("no bos layernorm"), cells.get("bos none")
    keys = ("slope", "bos", "other", "qk_identity", "bos_direction", "scale_fixed")
    if not bos or not free or not none_bos or any(bos[k][0] is None for k in keys):
        return "Plan v3's snapshot has no LayerNorm cells to read."
    v = {k: t["verdict"] for k, t in tests.items()}
    slope = bos["slope"][0]
    text = (f"**In plain words.** With BOS, the LayerNorm slope is {slope:+.3f} logit per key: the BOS path "
            f"carries {bos['bos'][0]:+.3f}, other content {bos['other'][0]:+.3f} ({100 * bos['other'][0] / slope:.0f} "
            f"%), own key {bos['own'][0]:+.3f}. QK = c I leaves {bos['qk_identity'][0]:+.3f} (A1 {v.get('A1')}), but "
            f"c I has its own recency: "
            f"without BOS it gives {free['qk_identity'][0]:+.4f} against the intact {free['slope'][0]:+.4f} (A0 "
            f"{v.get('A0')}). Removing the keys' whole BOS direction leaves {bos['bos_direction'][0]:+.3f} (B1 "
            f"{v.get('B1')}, {100 * (1 - bos['bos_direction'][0] / slope):.0f} % gone); fixing the scale raises it to "
            f"{bos['scale_fixed'][0]:+.3f} (C1 {v.get('C1')}).")
    t, n = theory.get("bos layernorm"), theory.get("bos none")
    if t and n:
        text += (f" Without normalisation the BOS models barely form a sink (fitted bonus {n['b']:.2f} against "
                 f"{t['b']:.2f}): these runs cannot tell reading it from forming it.")
    m0 = (secondary or {}).get("M0")
    if m0:
        lo, hi = m0["interval"]
        text += (f" Without BOS, at matched loss, a secondary interval ({m0['final_used']} none runs short of the "
                 f"target) puts LayerNorm minus none at {m0['mean']:+.4f} [{lo:+.4f}, {hi:+.4f}].")
    return text


def _v3_theory(theory: dict) -> str:
    """The sink theory against the trained slopes, in words (a paragraph of its own, after the plain one)."""
    t, f = theory.get("bos layernorm"), theory.get("no bos layernorm")
    if not (t and f):
        return ""
    return (f"The parameter-free sink theory in the models' own setting (residual, n = 64) predicts "
            f"{t['parameter_free']:+.4f} with BOS (b = {t['b']:.3f} fitted to the layer-1 share): it misses "
            + ("by its sign" if t["parameter_free"] * t["trained"] < 0 else "its size")
            + f". With a read-out of the first token at the gain measured from each model's logit level it "
            f"predicts {t['predicted']:+.4f}, {t['ratio']:.2f} of the trained slope "
            f"({t['predicted'] / t['bos_path']:.2f} of its BOS path); without BOS it predicts "
            f"{f['predicted']:+.4f} against {f['trained']:+.4f}: the no-BOS slope is not a read-out of the "
            f"first token, and the theory does not explain it.")
