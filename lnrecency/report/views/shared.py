"""What the claims' report tables and figures share: verdict notes, the score table of a claim's own Monte Carlo
mean checks, curves (theory beside Monte Carlo) and plotting helpers.

Builders take the report's data object (:class:`lnrecency.report.data.ReportData`: ``settings``, ``limit``,
``sim``, ``results``, ...) and return a :class:`~lnrecency.files.table_record.Table` or
:class:`~lnrecency.files.figure_record.ReportFigure` records; their numbers come from the library through that object.
Conventions: positions are 1-indexed; "MC d=64" is the Monte Carlo mean at width d, "SE" its standard error,
"z" = (MC - reference) / SE. At finite d, E_d[S] differs from the limit by O(1/d), so a large |z| at small d
measures that finite-width bias; it shrinks as d grows.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable

import matplotlib
import numpy as np
from matplotlib.lines import Line2D

from lnrecency.claims.mc_checks import D_BIG, PRACTICAL_WIDTHS
from lnrecency.files.figure_record import ReportFigure
from lnrecency.files.table_record import Table
from lnrecency.inference.evidence import PerSetting, records_of
from lnrecency.inference.records import MCMeans
from lnrecency.inference.stats import is_deterministic, z_score
from lnrecency.model.config import ModelConfig, make_config

__all__ = ["zscore", "model_config", "LN", "setting_summary", "verdict_note", "records_in",
           "records_with_settings", "means_table", "score_table", "Curve", "slug", "plot_curves", "finish",
           "show_figures", "not_run_figure"]


def zscore(value: float, reference: float, stderr: float) -> float | None:
    """:func:`lnrecency.inference.stats.z_score` of value - reference; shown as None (not applicable) when the SE
    is zero up to float64 rounding (a deterministic entry such as S_ii = lam)."""
    if not np.isfinite(stderr) or stderr <= 1e-12 * max(1.0, abs(value)):
        return None
    return z_score(value - reference, stderr)


def model_config(**params: Any) -> ModelConfig:
    """make_config(None, **params): a validated ModelConfig (the report data caches by it)."""
    return make_config(None, **params)


LN = model_config(norm="layernorm")


def _value_text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def setting_summary(setting: dict, limit: None = None) -> str:
    """A one-line, exact summary of a ClaimResult setting: scalars as k=v; a list of per-setting dicts
    ("settings") as the keys they share, then each case by the keys that vary, e.g.
    "3 settings: norm=layernorm, gamma=1; cases (residual=False, lam=1), (residual=True, lam=1), (residual=True,
    lam=3)". Whole, never cut (issue 75); ``limit`` is accepted for old callers and must be None."""
    parts = []
    for key, value in setting.items():
        if isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
            keys = list(dict.fromkeys(k for item in value for k in item))
            texts = [{k: _value_text(item.get(k, "-")) for k in keys} for item in value]
            fixed = [k for k in keys if len({t[k] for t in texts}) == 1]
            varying = [k for k in keys if k not in fixed]
            text = f"{len(value)} setting{'s' if len(value) != 1 else ''}"
            if fixed:
                text += ": " + ", ".join(f"{k}={texts[0][k]}" for k in fixed)
            if varying:
                text += "; cases " + ", ".join(
                    "(" + ", ".join(f"{k}={t[k]}" for k in varying) + ")" for t in texts)
            parts.append(text)
        elif not isinstance(value, (dict, list)):
            parts.append(f"{key}={_value_text(value)}")
    if limit is not None:
        raise ValueError(f"limit must be None: a setting is never cut (issue 75); got {limit!r}")
    return "; ".join(parts)


def verdict_note(data, *ids: str) -> list[str]:
    """One note per (claim id, verdict, statement): the verdict from ``lnrecency verify`` and its settings."""
    notes = []
    for cid in ids:
        results = data.results(cid)
        if not results:
            notes.append(f"Verdict {cid} (lnrecency verify): not evaluated.")
        for r in results:
            notes.append(f"Verdict {cid} (lnrecency verify): {r.verdict}. {r.statement} "
                         f"[{setting_summary(r.to_json()['setting'])}]"
                         + (f" Finding: {r.finding}" if r.finding else ""))
    return notes


def records_with_settings(results, kind: type):
    """(result, setting as a dict, record) for every record of ``kind`` in ``results``' evidence, per setting."""
    for r in results:
        parts = records_of(r.evidence, PerSetting) or [None]
        for part in parts:  # a grouped result: each setting with its own checks
            where = (r.setting if part is None else part.setting).to_json()
            for rec in records_of(r.evidence if part is None else part.evidence, kind):
                yield r, where, rec


def records_in(results, kind: type):
    """(result, setting summary, record) for every record of ``kind`` in ``results``' evidence, per setting."""
    for r, where, rec in records_with_settings(results, kind):
        yield r, setting_summary(where, None), rec


def _width_label(d: int) -> str:
    return f"10^{round(math.log10(D_BIG))}" if d == D_BIG else str(d)


MEANS_CAPTION = (
    "The Monte Carlo means the verdict cites (lnrecency verify; the same runs as the verdict_means table), entry "
    "(i, j) by entry: the exact d -> infinity limit, the first-order coefficient c, and per width the MC mean, its "
    "SE, the prediction (limit + c/d at the authors' widths d = 16, 64, 256; the limit at d = 10^12, where the "
    "check is implementation consistency), z = (MC - prediction)/SE, the tolerance k SE + R/d^2 (k from the "
    "false-alarm budget, R/d^2 the bound on the expansion's remainder) and the result: pass when |MC - prediction| "
    "<= tolerance. A tolerance much larger than the SE means the check is loose at that width: read the tolerance, "
    "not only the word.")


def means_table(data, claim_id: str, stem: str, title: str, *, caption: str = "", extra_columns: tuple = (),
                extra: Callable[[dict, Any], list] | None = None) -> Table:
    """The claim's own Monte Carlo mean checks (MCMeans: the runs its verdict cites), one row per entry: setting,
    verdict, quantity, layer, i, j, check, limit, c, then ``extra_columns`` (``extra(setting, entry)``), then per
    width (the authors' 16, 64, 256 and the implementation-consistency 10^12) MC, SE, prediction, z, tolerance,
    result. A deterministic entry (SE at float rounding, e.g. the diagonal S_ii = lam) reads "exact (no test)",
    z n/a."""
    ds = (*PRACTICAL_WIDTHS, D_BIG)
    columns = ["setting", "verdict", "quantity", "layer", "i", "j", "check", "limit", "c", *extra_columns]
    groups = [("check", "limit", "c", *extra_columns)]
    for d in ds:
        w = _width_label(d)
        groups.append((f"MC d={w}", f"SE d={w}", f"prediction d={w}", f"z d={w}", f"tolerance d={w}",
                       f"result d={w}"))
        columns += groups[-1]
    rows = []
    for r, where, m in records_with_settings(data.results(claim_id), MCMeans):
        runs = (*m.authors_widths.widths, m.implementation_consistency)
        if tuple(x.d for x in runs) != ds:
            raise ValueError(f"{claim_id}: mean checks at widths {[x.d for x in runs]}, the table expects {list(ds)}")
        for q, e in enumerate(m.implementation_consistency.checks):
            row: list[Any] = [setting_summary(where, None), r.verdict, m.implementation_consistency.quantity,
                              m.implementation_consistency.layer, e.i, e.j, m.name, e.limit, e.c]
            row += extra(where, e) if extra is not None else []
            for x in runs:
                ch = x.checks[q].check
                if is_deterministic(ch.estimate, ch.stderr):  # e.g. the diagonal S_ii = lam: no test
                    row += [ch.estimate, ch.stderr, ch.prediction, None, None, "exact (no test)"]
                else:
                    row += [ch.estimate, ch.stderr, ch.prediction, ch.z, ch.tolerance, "pass" if ch.passed else "FAIL"]
            rows.append(row)
    return Table(stem, f"{claim_id}. {title}", " ".join(t for t in (MEANS_CAPTION, caption) if t), columns, rows,
                 verdict_note(data, claim_id), key=6, md_groups=groups)


def score_table(data, claim_id: str, title: str) -> Table:
    """:func:`means_table` of the claim's scores, as ``<claim id>_scores``."""
    return means_table(data, claim_id, f"{claim_id.lower()}_scores", title,
                       caption="The claim's paired orderings are in the verdict_orderings table.")


@dataclass(frozen=True)
class Curve:
    """One labelled curve: theory y(x) on a grid, Monte Carlo points (x, mean, SE) where they exist."""

    label: str
    x: np.ndarray
    y: np.ndarray
    mc_x: np.ndarray | None = None
    mc_mean: np.ndarray | None = None
    mc_se: np.ndarray | None = None


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")


def plot_curves(ax, curves: list[Curve], *, marker: str = "o", mc_label: str = "MC",
                 separate_labels: bool = True) -> list:
    """Lines for the limit, error bars for the Monte Carlo; returns legend handles (colour = curve)."""
    colors = matplotlib.colormaps["viridis"](np.linspace(0.0, 0.85, max(len(curves), 1)))
    handles = []
    for col, cv in zip(colors, curves):
        line, = ax.plot(cv.x, cv.y, "-", color=col, lw=1.6,
                        label=f"{cv.label} (limit)" if separate_labels else cv.label)
        handles.append(line)
        if cv.mc_x is not None:
            ax.errorbar(cv.mc_x, cv.mc_mean, yerr=cv.mc_se, fmt=marker, ms=3.5, color=col, capsize=2,
                        lw=0.8, label=f"{cv.label} ({mc_label})" if separate_labels else None)
    if not separate_labels:  # the key to line and marker styles: the points only where points are drawn
        handles.append(Line2D([], [], color="k", lw=1.6, label="line: exact limit"))
        if any(cv.mc_x is not None for cv in curves):
            handles.append(Line2D([], [], color="k", marker=marker, ls="none", ms=4, label=f"points: {mc_label}"))
    return handles


def finish(fig, ax, title: str, xlabel: str, ylabel: str, *, title_size: int | None = 10) -> None:
    """Axis labels, legend, title and layout of a one-panel figure."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=9)
    ax.set_title(title) if title_size is None else ax.set_title(title, fontsize=title_size)
    fig.tight_layout()


def show_figures(display, *figures: ReportFigure) -> None:
    """A notebook's view of report figures: each caption, then the figure (``display``: IPython's)."""
    for fig in figures:
        print(fig.caption)
        if not fig.not_run:
            display(fig.figure)


def not_run_figure(name: str, title: str, quick: bool, experiment: str = "thesis",
                   other_cached: bool = False) -> ReportFigure:
    """A figure whose experiment is not cached in this report's mode, in words (no picture): it names the exact
    command, and (``other_cached``) that the other mode's run is cached and which report draws it."""
    cmd = f"lnrecency experiments {experiment}" + (" --quick" if quick else "")
    hint = ("" if not other_cached else
            f" The {'default' if quick else 'quick'} run of it is cached: `lnrecency report"
            f"{'' if quick else ' --quick'}` draws this figure from it.")
    does = "probes the downloaded models" if experiment == "pretrained" else "trains and caches the models"
    return ReportFigure(name, title + " (not run)", f"Not run: the {experiment} experiment of this report's mode "
                        f"({'quick' if quick else 'default'}) is not in the cache. `{cmd}` {does}; the report then "
                        f"draws this figure.{hint}", None, not_run=True)

