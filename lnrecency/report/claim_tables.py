"""The report's tables: theory beside simulation for every claim, h(j), last-row scores, P1-P9, verdicts.

Each builder takes a :class:`~lnrecency.report.data.ReportData` and returns a
:class:`~lnrecency.tables.Table`; all numbers come from the library through that object.
Conventions: positions are 1-indexed; "MC d=64" is the Monte Carlo mean over ``samples`` draws at width
d, "SE" its standard error, "z" = (MC - limit) / SE. At finite d, E_d[S] differs from the limit by O(1/d),
so a large |z| at small d measures that finite-width bias; it shrinks as d grows.
"""
from __future__ import annotations

import math
from dataclasses import replace
from typing import Any, Callable

import numpy as np

from lnrecency.bias import LABELS
from lnrecency.claims import seeds_trained
from lnrecency.claims._common import D_BIG, PRACTICAL_WIDTHS
from lnrecency.claims.catalog import CATALOG
from lnrecency.claims.seeds_trained import S2, S3
from lnrecency.claims.trained import seed_interval
from lnrecency.config import ModelConfig, make_config
from lnrecency.evidence import MCMeans, MeanChecks, OrderingTests, PairedMean, PerSetting, jsonable, records_of
from lnrecency.stats import z_score
from lnrecency.report import series
from lnrecency.report.data import ReportData
from lnrecency.reproduce import panel_table
from lnrecency.sweep import phase_table
from lnrecency.tables import Table

__all__ = ["SCORE_TITLES", "TABLES", "build_tables", "score_table", "verdict_note", "trained_table",
           "seed002_table", "seed003_table"]


def zscore(value: float, reference: float, stderr: float) -> float | None:
    """:func:`lnrecency.stats.z_score` of value - reference; shown as None (not applicable) when the SE
    is zero up to float64 rounding (a deterministic entry such as S_ii = lam)."""
    if not np.isfinite(stderr) or stderr <= 1e-12 * max(1.0, abs(value)):
        return None
    return z_score(value - reference, stderr)


def cfg(**params: Any) -> ModelConfig:
    return make_config(None, **params)


LN = cfg(norm="layernorm")

# Claim id -> the title of its score table (the rows are the claim's own Monte Carlo mean checks)
SCORE_TITLES: dict[str, str] = {
    "T1": "Theorem 1: layer-2 recency with normalisation (the verdict's Monte Carlo, row 8)",
    "C2": "No normalisation: layer 2 flat, layer 3 earlier-token bias (the verdict's Monte Carlo, S_61 and S_65)",
    "C3": "Residual connections weaken but keep the layer-2 recency (the verdict's Monte Carlo, row 8)",
    "C4": "Anisotropic embeddings: layer-2 recency at alpha = 0.9 (the verdict's Monte Carlo, row 8)",
    "C6": "Deeper layers with LayerNorm (the verdict's Monte Carlo, layer 3)",
}


def _value_text(v: Any) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


def setting_summary(setting: dict, limit: int | None = 240) -> str:
    """A one-line, exact summary of a ClaimResult setting: scalars as k=v; a list of per-setting dicts
    ("settings") as the keys they share, then each case by the keys that vary, e.g.
    "3 settings: norm=layernorm, gamma=1; cases (residual=False, lam=1), (residual=True, lam=1), ..."."""
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
    text = "; ".join(parts)
    return text if limit is None or len(text) <= limit else text[: limit - 3] + "..."


def verdict_note(data: ReportData, *ids: str) -> list[str]:
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


ILLUSTRATION_NOTE = (
    "The Monte Carlo columns of this table are the report's own illustration runs (the report's seed and widths), "
    "not the verdict's: the numbers the verdict cites are in the tables verdict_means and verdict_orderings "
    "(entry by entry), practical_widths and implementation_consistency.")


def _records_in(results, kind: type):
    """(result, setting summary, record) for every record of ``kind`` in ``results``' evidence, per setting."""
    for r in results:
        parts = records_of(r.evidence, PerSetting) or [None]
        for part in parts:  # a grouped result: each setting with its own checks
            where = (r.setting if part is None else part.setting).to_json()
            for rec in records_of(r.evidence if part is None else part.evidence, kind):
                yield r, setting_summary(where, None), rec


def _width_label(d: int) -> str:
    return f"10^{round(math.log10(D_BIG))}" if d == D_BIG else str(d)


def score_table(data: ReportData, claim_id: str, name: str | None = None) -> Table:
    """The claim's own Monte Carlo mean checks (the runs its verdict cites), entry by entry: limit, c, and per
    width (the authors' 16, 64, 256 and the implementation-consistency 10^12) MC, SE, prediction, z, result."""
    ds = (*PRACTICAL_WIDTHS, D_BIG)
    columns = ["setting", "verdict", "check", "quantity", "layer", "i", "j", "limit", "c"]
    for d in ds:
        w = _width_label(d)
        columns += [f"MC d={w}", f"SE d={w}", f"prediction d={w}", f"z d={w}", f"result d={w}"]
    rows = []
    for r, where, m in _records_in(data.results(claim_id), MCMeans):
        runs = (*m.authors_widths.widths, m.implementation_consistency)
        if tuple(x.d for x in runs) != ds:
            raise ValueError(f"{claim_id}: mean checks at widths {[x.d for x in runs]}, the table expects {list(ds)}")
        for q, e in enumerate(m.implementation_consistency.checks):
            row: list[Any] = [where, r.verdict, m.name, m.implementation_consistency.quantity,
                              m.implementation_consistency.layer, e.i, e.j,
                              e.limit, e.c]
            for x in runs:
                ch = x.checks[q].check
                row += [ch.estimate, ch.stderr, ch.prediction, ch.z, "pass" if ch.passed else "FAIL"]
            rows.append(row)
    caption = ("The Monte Carlo means the verdict cites (lnrecency verify; the same runs as the verdict_means "
               "table), entry (i, j) by entry: the exact d -> infinity limit, the first-order coefficient c, and "
               "per width the MC mean, its SE, the prediction (limit + c/d at the authors' widths d = 16, 64, "
               "256; the limit at d = 10^12, where the check is implementation consistency), z = (MC - "
               "prediction)/SE and the result of the check |MC - prediction| <= k SE + R/d^2. The claim's paired "
               "orderings are in the verdict_orderings table.")
    return Table(name or f"{claim_id.lower()}_scores", f"{claim_id}. {SCORE_TITLES[claim_id]}", caption, columns,
                 rows, verdict_note(data, claim_id))


def gap_table(data: ReportData) -> Table:
    """C5: the gap S^(2)_{n,n-1} - S^(2)_{n,1} (absolute and relative to S_{n,1}) against alpha."""
    s = data.settings
    n, d = s.n, s.ds[-1]
    rows = []
    for residual in (False, True):
        for a in s.alphas:
            c = cfg(norm="layernorm", residual=residual, alpha=a)
            lim = data.limit_scores(c)[1, n - 1]
            gap = lim[n - 2] - lim[0]
            est = data.sim(c, d).paired_difference(2, n, n - 1, 1)
            rows.append(["yes" if residual else "no", a, lim[0], lim[n - 2], gap, gap / lim[0],
                         est.mean, est.stderr, zscore(est.mean, gap, est.stderr)])
    columns = ["residual", "alpha", "S_(n,1) limit", "S_(n,n-1) limit", "gap limit", "gap / S_(n,1)",
               f"gap MC d={d}", f"SE d={d}", "z"]
    caption = (f"Layer-2 recency gap S_(n,n-1) - S_(n,1) at n = {n} (LayerNorm, lam = 1, gamma = 1) against "
               f"alpha: exact limit, relative gap, paired Monte Carlo estimate at d = {d} ({s.samples} samples) "
               f"and z = (MC - limit)/SE. 'Amplify' can mean a larger absolute or a larger relative gap; "
               f"the table shows both.")
    return Table("c5_gap_vs_alpha", "C5. Does anisotropy amplify the recency gap?", caption, columns, rows,
                 verdict_note(data, "C5") + [ILLUSTRATION_NOTE])


def h_table(data: ReportData) -> Table:
    """h(j) = |x_j^(1)| against j for every alpha, without and with residual (exact limit + closed form)."""
    s = data.settings
    n = s.h_n
    js = [j for j in (1, 2, 3, 4, 5, 8, 10, 16, 20, 30, 40, 50) if j <= n]
    rows = []
    for residual in (False, True):
        for a in s.alphas:
            c = cfg(norm="layernorm", residual=residual, alpha=a)
            h = np.sqrt(np.diagonal(data.limit(c, n=n, layers=1).layers[0].next_gram))
            hc = data.closed_form("h", c, 1, np.array(js, dtype=float))
            err = float(np.max(np.abs(np.asarray(hc, dtype=float) - h[np.array(js) - 1])))
            rows.append(["yes" if residual else "no", a, *[h[j - 1] for j in js], err])
    columns = ["residual", "alpha", *[f"h({j})" for j in js], "max |closed form - limit|"]
    caption = ("h(j) = |x_j^(1)|, the length of the first layer's output (plus the input, with the residual) "
               "at key j, from the exact limit (lam = 1, gamma = 1), and the largest difference from the sympy "
               "closed form at the listed j. Layer-2 recency is exactly 'h strictly decreasing in j'; "
               "the second version's Figures 2 and 5 plot these curves.")
    return Table("h_of_j", "h(j) against j for several alpha, without and with residual", caption, columns,
                 rows, verdict_note(data, "C4") + [ILLUSTRATION_NOTE])


LAST_ROW_CONFIGS = [
    ("none", cfg(norm="none")), ("l2", cfg(norm="l2")), ("layernorm lam=1", LN),
    ("none + res", cfg(norm="none", residual=True)), ("l2 + res", cfg(norm="l2", residual=True)),
    ("layernorm + res", cfg(norm="layernorm", residual=True)),
]


def last_row_table(data: ReportData) -> Table:
    """S^(2)_{n,j} for j = 1..n, exact limit, for each normalisation with and without residual."""
    s = data.settings
    n = s.n
    lam_d = math.sqrt(s.heat_d)
    configs = LAST_ROW_CONFIGS + [(f"layernorm lam=sqrt({s.heat_d})", cfg(norm="layernorm", lam=lam_d))]
    cols = {label: data.limit_scores(c)[1, n - 1] for label, c in configs}
    rows = [[j, *[cols[label][j - 1] for label, _ in configs]] for j in range(1, n + 1)]
    caption = (f"Exact d -> infinity layer-2 scores of the last row i = n = {n} against the key j, alpha = 0, "
               f"gamma = 1. l2, rmsnorm and LayerNorm share this limit. Without normalisation the "
               f"off-diagonal entries are equal (flat); with normalisation they increase with j (recency).")
    return Table("layer2_last_row", "Layer-2 scores of the last row", caption, ["j", *cols], rows,
                 verdict_note(data, "T1", "C2"))


def output_norm_table(data: ReportData) -> Table:
    """C7 (seed 002): |o_i|^2 at layer 1 against position i: limit sum_k P_ik^2, MC mean +- SE per d."""
    s = data.settings
    n = s.n
    c = LN
    traj = data.limit(c)
    sumsq = np.sum(traj.layers[0].weights ** 2, axis=1)
    onorm2 = traj.layers[0].output_norms ** 2
    columns = ["i", "sum_k P_ik^2", "norm(o_i)^2 limit", "1/i"]
    for d in s.ds:
        columns += [f"MC d={d}", f"SE d={d}", f"z d={d}", f"limit+c/d d={d}", f"z* d={d}"]
    coef = data.finite_width(c).c_output_sq[0]
    rows = []
    for i in range(1, n + 1):
        row = [i, sumsq[i - 1], onorm2[i - 1], 1.0 / i]
        for d in s.ds:
            sim = data.sim(c, d)
            m, se = sim.output_sq_norm_mean[0, i - 1], sim.output_sq_norm_stderr[0, i - 1]
            pred = onorm2[i - 1] + coef[i - 1] / d
            row += [m, se, zscore(m, onorm2[i - 1], se), pred, zscore(m, pred, se)]
        rows.append(row)
    caption = ("Seed 002: the squared length of the first layer's attention output o_i against the position "
               "i (LayerNorm, alpha = 0, lam = 1): the limit identity |o_i|^2 = sum_k P_ik^2, the limit "
               "|o_i|^2 from the output Gram matrix, the near-uniform reference 1/i, and Monte Carlo with "
               "z = (MC - limit)/SE, the first-order finite-width expectation limit + c/d and "
               "z* = (MC - limit - c/d)/SE.")
    return Table("c7_output_norm", "C7. Seed 002: the attention output gets shorter with position", caption,
                 columns, rows, verdict_note(data, "C7") + [ILLUSTRATION_NOTE])


def variance_table(data: ReportData) -> Table:
    """C8 (seed 003): d * Var(o_n) of the last position against the sequence length n, without and with
    a normalisation right after attention."""
    s = data.settings
    d = s.ds[0]
    v = series.variance_curve(data, d)
    rows = [[L, v.limit_plain[k], v.limit_post[k], v.mc_plain[k], v.se_plain[k], v.mc_post[k], v.se_post[k]]
            for k, L in enumerate(v.lengths)]
    columns = ["sequence length n", "d Var limit (no post-norm)", "d Var limit (post-norm)",
               f"d Var MC d={d} (no post-norm)", "SE (no post-norm)", f"d Var MC d={d} (post-norm)",
               "SE (post-norm)"]
    caption = (f"Seed 003: per-coordinate variance of the layer-1 attention output at the last position, times "
               f"d, against the sequence length n (LayerNorm before attention, alpha = 0, lam = 1). Without a "
               f"normalisation after attention it decays (like 1/n for near-uniform attention); with one "
               f"(the next layer's LayerNorm of o, i.e. post-LN) it is 1 at every n. Monte Carlo at d = {d}, "
               f"{s.samples} samples.")
    return Table("c8_output_variance", "C8. Seed 003: vanishing variance and post-attention normalisation",
                 caption, columns, rows, verdict_note(data, "C8") + [ILLUSTRATION_NOTE])


def instance_table(data: ReportData) -> Table:
    """C9: per-instance P(S_{n,n-1} > S_{n,1}) at layer 2 across d."""
    s = data.settings
    n = s.n
    rows = []
    for label, c in (("LayerNorm, no residual", LN), ("LayerNorm, residual", cfg(norm="layernorm",
                                                                                  residual=True))):
        gap = data.limit_scores(c)[1, n - 1, n - 2] - data.limit_scores(c)[1, n - 1, 0]
        for d in s.ds:
            sim = data.sim(c, d)
            p = sim.prob_greater(2, n, n - 1, 1)
            lo, hi = p.confidence_interval(0.95)
            est = sim.paired_difference(2, n, n - 1, 1)
            rows.append([label, d, gap, est.mean, est.stderr, p.estimate, lo, hi])
    columns = ["setting", "d", "gap limit", "gap MC", "SE", "P(S_(n,n-1) > S_(n,1))", "95% low", "95% high"]
    caption = (f"Beyond the expectation: for one random draw at width d, the frequency with which the layer-2 "
               f"score of the last row (n = {n}) prefers key n-1 over key 1, with a Wilson 95% interval, "
               f"beside the expected gap (limit and paired Monte Carlo). {s.samples} samples per d.")
    return Table("c9_per_instance", "C9. Per-instance ordering probability against d", caption, columns,
                 rows, verdict_note(data, "C9") + [ILLUSTRATION_NOTE])


def convergence_table(data: ReportData) -> Table:
    """C9: E_d[S] - S_limit against d with SE for two layer-2 entries, and the fitted log-log slope."""
    conv = series.convergence_curve(data)
    js = list(conv.entries)
    columns = ["d"]
    for j in js:
        columns += [f"bias S_({conv.n},{j})", f"SE S_({conv.n},{j})", f"z S_({conv.n},{j})",
                    f"c/d S_({conv.n},{j})", f"z* S_({conv.n},{j})"]
    rows = []
    for k, d in enumerate(conv.ds):
        row: list[Any] = [int(d)]
        for j in js:
            b, se = conv.entries[j]
            pred = conv.c[j] / d
            row += [b[k], se[k], zscore(b[k], 0.0, se[k]), pred, zscore(b[k], pred, se[k])]
        rows.append(row)
    caption = (f"Finite-width bias E_d[S] - S_limit of layer-2 scores of the last row ({conv.label}, n = "
               f"{conv.n}): Monte Carlo mean, SE and z = bias/SE against d ({data.settings.conv_samples} "
               f"samples per d), the predicted first-order bias c/d (finite-width theory, no fit) and "
               f"z* = (bias - c/d)/SE. Common slope of log|bias| against log d fitted over {conv.fit_entries} "
               f"resolved layer-2 entries: {conv.slope:.4f} +- {conv.slope_se:.4f} (O(1/d) means -1).")
    return Table("c9_convergence_in_d", "C9. Convergence of the finite-d expectation to the limit", caption,
                 columns, rows, [f"fitted slope {conv.slope:.6g} +- {conv.slope_se:.3g} "
                                 f"({conv.fit_points} points)"] + verdict_note(data, "C9") + [ILLUSTRATION_NOTE])


_KEY_EVIDENCE = ("summary", "equal", "first_difference.i", "first_difference.j", "first_difference.user",
                 "first_difference.derived", "corrected_expression", "corrected_equal", "printed", "exact_6_digits",
                 "agrees_at_3_decimals", "conclusion", "reason")


def _leaves(x: Any, prefix: str = ""):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(x, list) and x and all(isinstance(v, (dict, list)) for v in x):
        for q, v in enumerate(x):
            yield from _leaves(v, f"{prefix}[{q}]")
    else:
        yield prefix, x


PROFILE_CONFIGS = [
    ("none, no residual", cfg(norm="none")), ("none, residual", cfg(norm="none", residual=True)),
    ("LayerNorm, no residual", LN), ("LayerNorm, residual", cfg(norm="layernorm", residual=True)),
    ("LayerNorm, residual, alpha=0.5", cfg(norm="layernorm", residual=True, alpha=0.5)),
    ("LayerNorm, lam=8, no residual", cfg(norm="layernorm", lam=8.0)),
]
PROFILE_N = 32


def _ranges(values: list[int]) -> str:
    """[3, 4, 5, 9] -> '3-5, 9'."""
    out: list[str] = []
    for v in values:
        if out and int(out[-1].split("-")[-1]) == v - 1:
            out[-1] = f"{out[-1].split('-')[0]}-{v}"
        else:
            out.append(str(v))
    return ", ".join(out)


def profile_table(data: ReportData) -> Table:
    """Definition 1, row by row, for layers 1-L and several settings (:func:`lnrecency.bias.bias_profile`)."""
    rows = []
    for label, c in PROFILE_CONFIGS:
        for layer in range(1, data.settings.layers + 1):
            prof = data.bias_profile(layer, PROFILE_N, c)
            counts = prof.summary()
            other = [r.i for r in prof.rows if r.bias not in ("recency", "trivial")]
            rows.append([label, layer, PROFILE_N, *[counts.get(k, 0) for k in LABELS[:5]], _ranges(other)])
    caption = (f"Definition 1 applied to every row i = 1..{PROFILE_N} of each layer in the exact limit "
               f"(lnrecency bias --method limit): the number of rows with recency, earlier-token bias, flat "
               f"scores, a mixed pattern, or too few keys to tell (trivial), and the rows that are not "
               f"recency. lam = 1 and gamma = 1 unless stated.")
    return Table("bias_profiles", "Bias profile by layer (Definition 1, exact limit)", caption,
                 ["setting", "layer", "n", *LABELS[:5], "rows not recency"], rows,
                 verdict_note(data, "C2", "C6"))


def _evidence_text(evidence, limit: int = 400) -> str:
    """The decisive scalar entries of a verdict's evidence record, read from its JSON form (``lnrecency verify
    --json`` has all of it)."""
    leaves = [(path, v) for path, v in _leaves(jsonable(evidence)) if not isinstance(v, (dict, list))]
    key = [(p, v) for p, v in leaves
           if any(p == k or p.endswith("." + k) or p.split("]")[-1].lstrip(".") == k for k in _KEY_EVIDENCE)]
    parts = [f"{p}={v:.6g}" if isinstance(v, float) else f"{p}={v}" for p, v in (key or leaves)]
    text = "; ".join(parts)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def printed_table(data: ReportData) -> Table:
    """P1-P9: the authors' printed derivation, line by line, with verdicts."""
    rows = []
    ids = [f"P{k}" for k in range(1, 10)]
    for pid, results in data.verdicts(ids).items():
        for r in results:
            rows.append([r.id, r.verdict, r.statement, _evidence_text(r.evidence)])
    caption = ("The first version's printed derivation (arXiv 2509.21042v1, Sec. 3.2 and App. A), each line "
               "checked against the project's own sympy derivation and exact limit (lnrecency verify). "
               "Evidence: the decisive entries; `lnrecency verify --claim P4 --json` gives all of it.")
    return Table("printed_derivation", "P1-P9. The authors' printed derivation, line by line", caption,
                 ["id", "verdict", "printed line", "evidence"], rows)


def verdict_table(data: ReportData) -> Table:
    """Every claim's verdict (``lnrecency verify``), one row per (claim, setting)."""
    rows = []
    for cid, results in data.verdicts().items():
        for r in results:
            rows.append([r.id, r.source, r.verdict, r.statement, r.finding,
                         setting_summary(r.to_json()["setting"], None)])
    caption = ("Verdicts of lnrecency verify " + ("(quick settings)" if data.settings.quick else "")
               + ": confirmed, refuted or inconclusive under the stated setting; the finding says what holds "
                 "and what fails, with its boundary.")
    return Table("verdicts", "Claims and verdicts", caption.replace("  ", " "),
                 ["id", "source", "verdict", "statement", "finding", "setting"], rows)


def _checks_of(data: ReportData, kind: type):
    """(result, setting summary, record) for every record of ``kind`` in the verdicts' evidence: the table shows
    the very checks the verdicts used (lnrecency.evidence.records_of)."""
    for results in data.verdicts().values():
        yield from _records_in(results, kind)


def _ratio(check) -> float:
    """|estimate - prediction| / tolerance of one mean check (<= 1: it passes)."""
    return abs(check.estimate - check.prediction) / check.tolerance


def _worst(checks) -> float:
    """The largest :func:`_ratio` over a MeanChecks' entries."""
    return max(_ratio(c.check) for c in checks.checks)


def practical_widths_table(data: ReportData) -> Table:
    """Monte Carlo means at the authors' widths against limit + c/d (lnrecency.claims._common.mc_means)."""
    rows = []
    for r, where, m in _checks_of(data, MCMeans):
        w = m.authors_widths
        for mc in w.widths:
            rows.append([r.id, where, mc.kind, mc.layer, mc.d,
                         mc.samples, len(mc.checks), w.remainder_constant.R, mc.remainder_bound, _worst(mc),
                         "pass" if mc.passed else "FAIL"])
    caption = ("Support at the widths people use: each Monte Carlo mean against limit + c/d at d = 16, 64, 256 "
               "within k SE + R/d^2 (R measured at d = 16 and 32, independent seeds; 'worst' is the largest "
               "|MC - prediction| / tolerance over the entries). The numbers are those of the verdicts.")
    return Table("practical_widths", "Monte Carlo support at the authors' widths", caption,
                 ["id", "setting", "check", "layer", "d", "samples", "entries", "R", "R/d^2", "worst", "result"],
                 rows)


def consistency_table(data: ReportData) -> Table:
    """The d = 10^12 Monte Carlo checks (means and orderings): implementation consistency only."""
    rows = []
    for r, where, m in _checks_of(data, MeanChecks):
        if m.d == D_BIG:
            rows.append([r.id, where, "means vs limit", m.layer,
                         m.samples, len(m.checks), _worst(m), "pass" if m.passed else "FAIL"])
    for r, where, p in _checks_of(data, PairedMean):
        if p.d == D_BIG:
            rows.append([r.id, where, "paired mean vs limit", p.layer, p.samples, 1, _ratio(p.check),
                         "pass" if p.check.passed else "FAIL"])
    for r, where, o in _checks_of(data, OrderingTests):
        if o.d == D_BIG:
            rows.append([r.id, where, "orderings (sign of the limit)",
                         o.layer, o.samples, len(o.tests), None, o.verdict])
    caption = ("Implementation consistency: at d = 10^12 the d-independent sampler reproduces the limit by "
               "construction, so these checks compare the sampler with the limit code and support no claim "
               "at any width (the support at the authors' widths is the practical_widths table).")
    return Table("implementation_consistency", "Implementation consistency (d = 10^12)", caption,
                 ["id", "setting", "check", "layer", "samples", "entries", "worst", "result"], rows)


def _role(d: int) -> str:
    return "implementation consistency" if d == D_BIG else "authors' width"


def verdict_means_table(data: ReportData) -> Table:
    """Every entry of every Monte Carlo mean check the verdicts used, number for number (the runs behind the
    practical_widths and implementation_consistency rows)."""
    rows = []
    for r, where, m in _checks_of(data, MeanChecks):
        for e in m.checks:
            ch = e.check
            rows.append([r.id, where, m.kind, _role(m.d), m.layer, m.d, m.samples, m.seed, e.i, e.j, e.limit,
                         e.c, ch.prediction, ch.estimate, ch.stderr, ch.z, ch.tolerance,
                         "pass" if ch.passed else "FAIL"])
    caption = ("Each Monte Carlo mean of the verdicts (scores, |o_i|^2 or output variances, per entry (i, j)) "
               "beside the exact limit, the first-order coefficient c and the prediction limit + c/d (the limit "
               "alone at d = 10^12), with its SE, z = (MC - prediction)/SE and the tolerance k SE + R/d^2; "
               "'seed' is the run's seed. These are the very runs the verdicts cite (lnrecency verify --out).")
    return Table("verdict_means", "The verdicts' Monte Carlo means, entry by entry", caption,
                 ["id", "setting", "check", "role", "layer", "d", "samples", "seed", "i", "j", "limit", "c",
                  "prediction", "MC", "SE", "z", "tolerance", "result"], rows)


def verdict_orderings_table(data: ReportData) -> Table:
    """Every paired Monte Carlo ordering test the verdicts used, number for number."""
    rows = []
    for r, where, o in _checks_of(data, OrderingTests):
        for t in o.tests:
            ch = t.check
            rows.append([r.id, where, _role(o.d), o.layer, o.d, o.samples, o.seed, t.i, t.j, t.k_key,
                         ch.mean, ch.stderr, ch.z, ch.threshold, t.verdict])
    caption = ("Each paired Monte Carlo test of E S_ij > E S_ik the verdicts used: the mean difference "
               "S_ij - S_ik over the run's draws, its SE, z = mean/SE and the one-sided threshold (k SE from the "
               "false-alarm budget): confirmed above it, refuted below minus it. At d = 10^12 these test the "
               "sampler against the sign of the limit (implementation consistency).")
    return Table("verdict_orderings", "The verdicts' Monte Carlo orderings, test by test", caption,
                 ["id", "setting", "role", "layer", "d", "samples", "seed", "i", "j", "k", "mean S_ij - S_ik",
                  "SE", "z", "threshold", "verdict"], rows)


def authors_table(data: ReportData) -> Table:
    """The authors' figure of the report's convention, RP of every panel (lnrecency.reproduce)."""
    t = panel_table(*data.authors())
    return replace(t, name="authors_panels")


def phase_table_of(data: ReportData) -> Table:
    """The phase diagram's table (lnrecency.sweep)."""
    return phase_table(*data.phase())


# (file stem, one line for the index, builder): derived from the claim catalog, in its order
TABLES: list[tuple[str, str, Callable[[ReportData], Table]]] = [
    (t.stem, t.line, t.build) for c in CATALOG for t in c.tables]


def build_tables(data: ReportData) -> list[Table]:
    return [builder(data) for _, _, builder in TABLES]


def trained_table(data: ReportData) -> Table:
    """TM1-TM5: per architecture, normalisation, stage and layer, the recency slope over training seeds."""
    columns = ["arch", "norm", "stage", "layer", "step (mean)", "held-out loss (mean)", "slope", "95% low",
               "95% high", "sign", "phases per seed", "RP (mean)", "seeds"]
    res = data.thesis()
    if res is None:  # no verdicts either: evaluating them would train (the report never trains)
        return Table("trained_phases", "Trained decoders (TM1-TM5): not run", "The thesis experiment is not in "
                     "the cache: run `lnrecency experiments thesis" + (" --quick" if data.settings.quick else "")
                     + "` (it trains and caches the models), then rebuild the report.", columns, [],
                     ["Verdicts TM1-TM5: not evaluated (the experiment is not cached)."])
    notes = verdict_note(data, "TM1", "TM2", "TM3", "TM4", "TM5")
    rows = []
    for arch in res.settings.archs:
        for norm in res.settings.norms:
            runs = res.select(arch, norm)
            for stage in ("init", "matched", "final"):
                steps = [0 if stage == "init" else r[stage].get("step", r["log"][-1]["step"]) for r in runs]
                losses = [next(e["heldout_loss"] for e in r["log"] if e["step"] == s) for r, s in zip(runs, steps)]
                for layer in range(1, res.n_layers(arch) + 1):
                    si = seed_interval(res.slopes(arch, norm, stage, layer), res.phases(arch, norm, stage, layer))
                    rp = float(np.mean([r[stage]["layers"][layer - 1]["rp"] for r in runs]))
                    rows.append([arch, norm, stage, layer, float(np.mean(steps)), float(np.mean(losses)), si.mean,
                                 si.low, si.high, si.sign, ", ".join(f"{k} {v}" for k, v in sorted(si.phases.items())),
                                 rp, len(runs)])
    st = res.settings
    caption = (f"NoPE decoders trained on the induction task (d = {st.d_model}, {st.n_heads} heads, vocabulary "
               f"{st.vocab}, n = {st.n}, {st.steps} steps, seeds {list(st.seeds)}). The recency slope is the "
               f"least-squares slope of the head-mean attention logit against the key position (keys below the "
               f"query), averaged over rows, on {st.probe_sequences} random-token sequences; its 95% t-interval "
               f"is over training seeds. Stages: init (step 0), matched (first evaluation at which the run's "
               f"held-out loss reached the largest final loss of its architecture), final (equal steps). Phases: "
               f"the probe's calibrated test per seed (lnrecency.models.probe).")
    return Table("trained_phases", "Trained decoders: recency per layer over training seeds (TM1-TM5)", caption,
                 columns, rows, notes)


def _seed_statistics_table(data: ReportData, experiment: str, ids: tuple, title: str) -> Table:
    """One row per (statement, statistic): per-seed values, the t-interval over seeds, the side, the verdict;
    computed from the same cached runs as the verdicts (nothing is trained or sampled here)."""
    columns = ["id", "statistic", "per seed", "mean", "95% low", "95% high", "boundary", "wanted", "verdict",
               "seeds"]
    cached = data.seed_runs(experiment)
    if cached is None:  # no verdicts either: evaluating them would train (the report never trains)
        cmd = f"lnrecency experiments {experiment}" + (" --quick" if data.settings.quick else "")
        return Table(experiment, f"{title}: not run", f"The experiment is not in the cache: run `{cmd}` (it trains "
                     "and caches the models), then rebuild the report.", columns, [],
                     [f"Verdicts {', '.join(ids)}: not evaluated (the experiment is not cached)."])
    notes = verdict_note(data, *ids)
    st, runs = cached
    stats = (seeds_trained.seed002_statistics if experiment == "seed002" else seeds_trained.seed003_statistics)(st, runs)
    rows = []
    for cid in ids:
        for name, values, boundary, want in stats[cid]:
            verdict, iv = seeds_trained.decide_statistic(values, boundary, want)
            rows.append([cid, name, ", ".join(f"{v:.4g}" for v in values), iv.mean, iv.low, iv.high, boundary,
                         "within +-" if want == "within" else want, verdict, len(values)])
    caption = (f"{st.scale()}. Each statistic is computed per training seed; its 95% t-interval over seeds "
               f"decides the verdict (its side of the boundary).")
    return Table(experiment, title, caption, columns, rows, notes)


def seed002_table(data: ReportData) -> Table:
    return _seed_statistics_table(data, "seed002", tuple(S2), "Seed 002 at small scale (S2.1-S2.7)")


def seed003_table(data: ReportData) -> Table:
    return _seed_statistics_table(data, "seed003", tuple(S3), "Seed 003 at small scale (S3.1-S3.3)")
