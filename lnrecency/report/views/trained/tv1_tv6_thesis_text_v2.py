"""What TV1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.tv1_tv6_thesis_text_v2`)."""
from __future__ import annotations

from lnrecency.claims.trained.tv1_tv6_thesis_text_v2 import STATEMENTS, STUDY
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views

COMMAND = "lnrecency experiments thesis-text-v2"


STEMS = ("thesis_text_v2_sink",)


def _pm(p, fmt: str = "+.4f") -> str:
    """A (mean, SE) over seeds as "mean +- SE" (the SE without a sign), "n/a" when not measured."""
    return "n/a" if p is None or p[0] is None else f"{p[0]:{fmt}} +- {p[1]:{fmt.lstrip('+')}}"


def v2_table(data) -> Table:
    """Per cell (BOS x normalisation): learned seeds, final held-out loss, the layer-2 slope, over keys >= 8, with
    layer 1's first-key share fixed (the ablation) and its relative change, and layer 1's first-key share at rows
    2, 16 and 64 (mean over seeds; +- one SE over seeds)."""
    columns = ["cell", "seeds learned", "held-out loss", "layer-2 slope", "keys >= 8", "ablated", "change",
               "layer-1 first-key share, rows 2 / 16 / 64"]
    runs = STUDY.for_report(data)
    if runs is None:
        return Table("thesis_text_v2", "The thesis on text, plan v2 (TV1-TV6): not run",
                     f"Plan v2's models are not cached: run `{COMMAND}` (about an hour on 2 cores), then rebuild the "
                     f"report.", columns, [], ["Verdicts TV1-TV6: not evaluated (not cached)."])
    from lnrecency.experiments.studies.thesis_text_v2 import plan_sha256, summary

    st = STUDY.settings_for(data.settings.quick)

    rows = []
    for name, c in summary(runs, st).items():
        share = c["first_share_rows"] or []
        rows.append([name, f"{len(c['seeds'])} / {len(c['seeds']) + len(c['not_learned'])}",
                     _pm(c["final_loss"], "+.3f").lstrip("+"), _pm(c["slope"]), _pm(c["late"]),
                     _pm(c["ablated"]),
                     "n/a" if c["change"][0] is None
                     else f"{100 * c['change'][0]:+.0f} % +- {100 * c['change'][1]:.0f}",
                     " / ".join(f"{share[i - 1]:.3f}" for i in (2, 16, 64) if i <= len(share)) or "n/a"])
    b = st.base
    caption = (f"NoPE attn2 language models on the default corpus, trained with BOS first in every window (BOS + "
               f"{b.n - 1} tokens) or without any BOS ({b.n} tokens), {b.steps * b.tokens_per_step():,} "
               f"tokens each, {len(st.seeds)} seeds per cell; recency slope in logit per key on {b.probe_windows} "
               f"held-out windows per run of its own kind, the first key out either way; ablated: layer 1's "
               f"first-key share fixed at its own mean over the queries, content weights renormalised. Plan v2 "
               f"SHA-256 {plan_sha256()}.")
    notes = [f"Verdict {cid}: {r.verdict}." for cid in STATEMENTS for r in data.verdicts([cid])[cid]]
    return Table("thesis_text_v2", "The thesis on text, plan v2: with and without BOS, and the sink ablation",
                 caption, columns, rows, notes)


def rollout_table(data) -> Table:
    """Wu et al.'s quantity and Gu et al.'s sink metric in plan v2's models (issue 51), beside our sink share: per
    cell, the last query's attention rollout at the first key after layers 1 and 2, at the last key after layer 2,
    the residual-aware rollout at the first key after layer 2, Gu et al.'s Sink^eps_1 and layer 1's mean share to
    the first key, on held-out text and on the random control (mean over learned seeds +- one SE over seeds).
    Secondary: no verdict."""
    from lnrecency.experiments.probes.probe_settings import GU_EPS, ROLLOUT_LAMBDA, uniform_reference

    columns = ["cell", "inputs", "seeds", "rollout at key 1, layer 1 / 2", "rollout at the last key, layer 2",
               f"residual-aware rollout at key 1, layer 2 (lambda {ROLLOUT_LAMBDA})", f"Gu's Sink^{GU_EPS}_1",
               "our sink share (layer 1)"]
    runs = STUDY.for_report(data)
    if runs is None:
        return Table("thesis_text_v2_rollout", "Plan v2's models: rollout and Gu et al.'s sink metric: not run",
                     f"Plan v2's models are not cached: run `{COMMAND}`, then rebuild the report.", columns, [], [])
    from lnrecency.experiments.studies.thesis_text_v2 import summary

    rows = []
    for name, c in summary(runs, STUDY.settings_for(data.settings.quick)).items():
        for which in ("text", "random"):
            rows.append([name, "held-out text" if which == "text" else "random control", str(len(c["seeds"])),
                         f"{_pm(c[f'{which} rollout 1 first'], '.3f')} / {_pm(c[f'{which} rollout 2 first'], '.3f')}",
                         _pm(c[f"{which} rollout 2 last"], ".4f"), _pm(c[f"{which} rollout 2 residual first"], ".3f"),
                         _pm(c[f"{which} gu_sink"], ".2f"), _pm(c[f"{which} sink"], ".3f")])
    n = STUDY.settings_for(data.settings.quick).base.n
    u = uniform_reference(n)
    rows.append([f"uniform causal attention (exact path count, n = {n})", "any", "n/a",
                 f"{u['first 1']:.3f} / {u['first 2']:.3f}", f"{u['last 2']:.4f}", f"{u['residual first 2']:.3f}",
                 "n/a", "n/a"])
    caption = (f"The attention rollout R^(l) = A^(l) ... A^(1) (A: the head-mean attention weights; Abnar & Zuidema "
               f"2020, Wu et al.'s cumulative context probability): its last row (query {n}) at the first and at "
               f"the last key; residual-aware: each A replaced by (1 - lambda) I + lambda A. Gu et al.'s "
               f"Sink^eps_1: the share of the model's (layer, head) pairs whose mean attention to the first key "
               f"(rows i >= 2) exceeds eps = {GU_EPS}. Our sink share: layer 1's mean attention to the first key "
               f"over rows i >= 2 and heads. The first key is BOS in the BOS cells and a content token otherwise. "
               f"The last row: every query attending uniformly to its keys, the reference (Wu et al.'s concentration "
               f"with no learned preference).")
    return Table("thesis_text_v2_rollout", "Plan v2's models: Wu et al.'s rollout and Gu et al.'s sink metric "
                 "beside our sink share", caption, columns, rows,
                 ["Secondary (issue 51): reported as intervals, no verdict."])


def v2_figures(data) -> list[ReportFigure]:
    """Each BOS cell's layer-1 share of attention to BOS by query row (mean over seeds) beside the sink theory's
    share at the fitted bonus (lnrecency.experiments.plans.hooks.sink_figure)."""
    from lnrecency.report.views.shared import not_run_figure

    title = "Plan v2: layer-1 share of attention to BOS, trained and the sink theory"
    runs = STUDY.for_report(data)
    if runs is None:
        return [not_run_figure(STEMS[0], title, data.settings.quick, experiment="thesis-text-v2")]
    from lnrecency.experiments.plans.hooks import sink_figure
    from lnrecency.experiments.studies.thesis_text_v2 import summary

    cells = summary(runs, STUDY.settings_for(data.settings.quick))
    return [ReportFigure(STEMS[0], title, "Layer 1's share of attention to the BOS key at each query position, mean "
                         "over heads, held-out windows and training seeds (points), beside the parameter-free sink "
                         "theory's share e^b / (e^b + (i - 2) + e^lam) at the bonus b fitted to it (lines; "
                         "lnrecency.theory.sink). The theory fits the share's decay; it predicts a layer-2 slope far "
                         "below the trained one (the table and docs/thesis-text-v2.md give both).",
                         sink_figure(cells))]


views("TV1", module=__name__,
      tables=(TableOutput("thesis_text_v2", "NoPE language models with and without BOS: slopes, the sink ablation, "
                                            "layer 1's BOS share (plan v2)", v2_table),
              TableOutput("thesis_text_v2_rollout", "NoPE language models: the attention rollout and Gu et al.'s "
                                                    "Sink^eps_1 beside our sink share (plan v2)", rollout_table)),
      figures=(FigureOutput("Plan v2: layer-1 BOS share by query, trained and the sink theory", v2_figures,
                            STEMS),))
