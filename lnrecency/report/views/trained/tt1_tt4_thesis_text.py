"""What TT1 shows in the report and the notebooks: tables, figures and notebook cells (the claim:
:mod:`lnrecency.claims.trained.tt1_tt4_thesis_text`)."""
from __future__ import annotations

import numpy as np
from matplotlib.figure import Figure

from lnrecency.claims.trained.tt1_tt4_thesis_text import STATEMENTS, available, settings_for
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.report.views.outputs import FigureOutput, TableOutput, views

COMMAND = "lnrecency experiments thesis-text"


STEMS = ("thesis_text_trajectory",)


def _runs(data):
    if not data.frozen and available(data.settings.quick):
        from lnrecency.experiments.studies.thesis_text import cached_runs

        return cached_runs(settings_for(data.settings.quick))
    return None


def _interval(values: list) -> str:
    v = np.asarray(values, dtype=float)
    if v.size < 2:
        return "n/a"
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.975, v.size - 1) * v.std(ddof=1) / np.sqrt(v.size))
    return f"{v.mean():+.4f} [{v.mean() - half:+.4f}, {v.mean() + half:+.4f}]"


def _final_loss(runs: list) -> str:
    """The mean final held-out loss of ``runs``: over the runs that recorded one (a cached run's may be null, e.g.
    a diverged run; such a run is never learned), saying how many did not; "none recorded" when no run did."""
    import math

    losses = [r["log"][-1]["heldout_loss"] for r in runs]
    finite = [float(x) for x in losses if isinstance(x, (int, float)) and math.isfinite(x)]
    shown = f"{np.mean(finite):.3f}" if finite else "none recorded"
    missing = len(losses) - len(finite)
    return shown + (f" ({missing} of {len(losses)} runs without one)" if finite and missing else "")


def text_table(data) -> Table:
    """Per architecture and normalisation: the final layer-1 and layer-2 slopes on held-out text and on the
    neutral random control (mean and 95% t-interval over seeds), the final held-out loss, learned / seeds."""
    columns = ["arch", "norm", "seeds learned", "held-out loss", "layer 1, text", "layer 2, text",
               "layer 2, random control"]
    runs = _runs(data)
    if runs is None:
        return Table("thesis_text", "The thesis on text (TT1-TT4): not run",
                     f"The text models are not cached: run `{COMMAND}` (tens of minutes on 2 cores; `lnrecency "
                     f"verify --claim TT1` states the measured time), then rebuild the report.", columns,
                     [], ["Verdicts TT1-TT4: not evaluated (not cached)."])
    from lnrecency.experiments.studies.thesis_text import learned, plan_sha256

    st = settings_for(data.settings.quick)
    rows = []
    for arch in st.archs:
        for norm in ("layernorm", "rmsnorm", "none"):
            rs = [r for r in runs if r["arch"] == arch and r["norm"] == norm]
            ok = [r for r in rs if learned(r, st)]

            def sl(r, key, layer):
                return next(lay["slope"] for lay in r["final"][key] if lay["layer"] == layer)
            rows.append([arch, norm, f"{len(ok)} / {len(rs)}", _final_loss(rs),
                         _interval([sl(r, "text", 1) for r in ok]), _interval([sl(r, "text", 2) for r in ok]),
                         _interval([sl(r, "random", 2) for r in ok])])
    caption = (f"NoPE language models on the default corpus (BOS + 63 tokens), {st.steps * st.tokens_per_step():,} "
               f"tokens each; recency slope in logit per key (head-mean logits, rows weighted by keys, BOS key "
               f"out) on {st.probe_windows} held-out windows per run; mean and 95% t-interval over the learned "
               f"seeds (held-out loss at least {st.gate_margin} nat below the corpus's unigram entropy "
               f"{runs[0]['unigram']:.3f}). Plan SHA-256 {plan_sha256()}.")
    notes = [f"Verdict {cid}: {r.verdict}." for cid in STATEMENTS for r in data.verdicts([cid])[cid]]
    return Table("thesis_text", "The thesis on text: NoPE language models, recency slope per normalisation",
                 caption, columns, rows, notes)


def text_figures(data) -> list[ReportFigure]:
    """Per architecture: the layer-2 slope on held-out text against tokens seen, mean over seeds +- SE, one
    colour per normalisation."""
    from lnrecency.report.views.shared import not_run_figure

    title = "The thesis on text: layer-2 recency slope against tokens seen"
    runs = _runs(data)
    if runs is None:
        return [not_run_figure(STEMS[0], title, data.settings.quick, experiment="thesis-text")]
    st = settings_for(data.settings.quick)
    colours = {"layernorm": "tab:blue", "rmsnorm": "tab:green", "none": "tab:red"}
    fig = Figure(figsize=(5.0 * len(st.archs), 4.0))
    axes = np.atleast_1d(fig.subplots(1, len(st.archs)))
    for ax, arch in zip(axes, st.archs):
        for norm, colour in colours.items():
            rs = [r for r in runs if r["arch"] == arch and r["norm"] == norm]
            tok = np.array([e["tokens"] for e in rs[0]["trajectory"]], dtype=float) / 1e6
            v = np.array([[next(lay["slope"] for lay in e["text"] if lay["layer"] == 2) for e in r["trajectory"]]
                          for r in rs])
            mean = v.mean(0)
            se = v.std(0, ddof=1) / np.sqrt(len(rs)) if len(rs) > 1 else np.zeros_like(mean)
            ax.plot(tok, mean, color=colour, marker="o", ms=3, label=norm)
            ax.fill_between(tok, mean - 2 * se, mean + 2 * se, color=colour, alpha=0.2, lw=0)
        ax.axhline(0.0, color="black", lw=0.8)
        ax.set_title(f"{arch} ({len(st.seeds(arch))} seeds per normalisation)", fontsize=9)
        ax.set_xlabel("tokens seen (millions)", fontsize=9)
        ax.set_ylabel("layer-2 recency slope (logit per key)", fontsize=9)
        ax.tick_params(labelsize=9)
    fig.legend(*axes[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=9, frameon=False)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.1, 1, 1))
    return [ReportFigure(STEMS[0], title, "Layer-2 recency slope on held-out text (BOS first, its key out) at "
                         "every evaluation, mean over training seeds with a band of +- 2 SE, per normalisation; "
                         "above 0: recency. The primary tests use attn2 at the end (3M tokens) and at matched "
                         "loss.", fig)]


views("TT1", module=__name__,
      tables=(TableOutput("thesis_text", "NoPE language models on text: recency slope per normalisation, layers 1 "
                                         "and 2, text and the neutral control", text_table),),
      figures=(FigureOutput("NoPE language models on text: layer-2 slope against tokens seen", text_figures,
                            STEMS),))
