"""A probe's result as tidy rows, a pandas DataFrame or CSV: what a user loads into a notebook.

Long and tidy: one row per layer, level, head and measure, with its value and standard error. ``level`` is
``"layer mean"`` (the mean over the layer's heads; ``head_index`` None) or ``"head"`` (``head_index`` 1, 2, ...), so
the layer mean is never mistaken for a head; no column is named after a DataFrame method. The measures are
:data:`MEASURES`: the recency ``slope`` (logit per key), ``rp``, the ``sink`` (mean attention share of the first
key) and, per head, ``gu_sink_above_eps`` (1 when that share exceeds Gu et al.'s eps, else 0; no SE). A measure the
probe did not make (a streamed or light probe computes no per-head RP) has no row: never a NaN.

>>> df = res.to_frame()                                                      # doctest: +SKIP
>>> df[(df.level == "layer mean") & (df.measure == "slope")][["layer", "value", "se"]]   # doctest: +SKIP
"""
from __future__ import annotations

import math

__all__ = ["COLUMNS", "MAP_COLUMNS", "MEASURES", "LEVELS", "records", "to_frame", "to_csv", "gu_sink", "triangle",
           "vector", "maps", "positions_difference"]

#: the columns of every row
COLUMNS = ("layer", "level", "head_index", "measure", "value", "se")
#: with maps: the query and key of a map's cell (from 1; None for the other measures)
MAP_COLUMNS = ("query", "key")
#: the measures, in row order (``mean_logit``: a map's cell, with maps only)
MEASURES = ("slope", "rp", "sink", "gu_sink_above_eps", "mean_logit")
#: the levels a row is at
LEVELS = ("layer mean", "head")


def triangle(m, full: bool = False):
    """An n x n map as JSON: nested lists, None above the diagonal (unless ``full``) and where not finite."""
    if m is None:
        return None
    n = m.shape[0]
    return [[None if ((not full) and j > i) or not math.isfinite(float(m[i, j])) else float(m[i, j])
             for j in range(n)] for i in range(n)]


def vector(v):
    return None if v is None else [float(x) for x in v]


def _clean(x):
    return None if x is None or (isinstance(x, float) and not math.isfinite(x)) else float(x)


def gu_sink(res, eps: float) -> float | None:
    """Gu et al. (2024)'s Sink^eps_1: the share of (layer, head) pairs whose mean attention to the first token (rows
    i >= 2 here) exceeds ``eps`` (their 0.3); None when the inputs had no first key to leave out."""
    shares = [h.sink for lp in res.layers for h in lp.heads if h.sink is not None]
    return sum(s > eps for s in shares) / len(shares) if shares else None


def maps(res) -> dict:
    """The mean logit maps of ``res`` as arrays (:meth:`lnrecency.experiments.probes.probe.ProbeResult.maps`)."""
    import numpy as np

    if any(lp.mean_logit is None for lp in res.layers):
        raise ValueError("this probe kept no mean logit maps (slopes only: slopes_only=True, or n above the "
                         "slopes-only bound); probe with maps=True")
    out = {"mean_logit": np.stack([lp.mean_logit for lp in res.layers]),
           "diag_normalised": np.stack([lp.diag_normalised for lp in res.layers])}
    if all(h.mean_logit is not None for lp in res.layers for h in lp.heads):
        out["head_mean_logit"] = np.stack([np.stack([h.mean_logit for h in lp.heads]) for lp in res.layers])
        out["head_mean_logit_se"] = np.stack([np.stack([h.mean_logit_se for h in lp.heads]) for lp in res.layers])
    return out


def positions_difference(res) -> list[dict]:
    """Per layer, the slope with positions on (``res``) and off (``res.positions_off``, the same windows), the
    difference on - off per window, its mean and paired SE."""
    import numpy as np

    off = res.positions_off
    if off is None:
        raise ValueError("positions_difference() needs a probe with positions='both' (on and off on the same "
                         "windows)")
    out = []
    for a, b in zip(res.layers, off.layers):
        d = np.asarray(a.slope_values, dtype=np.float64) - np.asarray(b.slope_values, dtype=np.float64)
        out.append({"layer": a.layer, "on": a.slope, "off": b.slope, "difference": float(d.mean()),
                    "difference_se": float(d.std(ddof=1) / np.sqrt(d.size)), "sequences": int(d.size)})
    return out


def _map_rows(res) -> list[dict]:
    """Every cell on or below the diagonal of every layer's head-mean map and, where kept, each head's."""
    out = []
    for lp in res.layers:
        for head, m, se in [(None, lp.mean_logit, None)] + [(h.head, h.mean_logit, h.mean_logit_se)
                                                            for h in lp.heads if h.mean_logit is not None]:
            if m is None:
                continue
            for i in range(m.shape[0]):
                for j in range(i + 1):
                    out.append({"layer": lp.layer, "level": "layer mean" if head is None else "head",
                                "head_index": head, "measure": "mean_logit", "value": _clean(m[i, j]),
                                "se": None if se is None else _clean(se[i, j]), "query": i + 1, "key": j + 1})
    return out


def records(res, eps: float, maps: bool = False) -> list[dict]:
    """The tidy rows of the module docstring (:data:`COLUMNS`), layer by layer: the layer mean's measures, then each
    head's; ``eps``: Gu et al.'s threshold for ``gu_sink_above_eps``; ``maps``: the map cells after them (with
    :data:`MAP_COLUMNS`)."""
    out = []

    def add(layer: int, level: str, head, measured: dict) -> None:
        for measure in MEASURES:
            value, se = measured.get(measure, (None, None))
            value = value if isinstance(value, int) and not isinstance(value, bool) else _clean(value)
            if value is not None:
                out.append({"layer": layer, "level": level, "head_index": head, "measure": measure, "value": value,
                            "se": _clean(se)})

    for lp in res.layers:
        add(lp.layer, "layer mean", None, {"slope": (lp.slope, lp.slope_se), "rp": (lp.rp, lp.rp_se),
                                           "sink": (lp.sink, lp.sink_se)})
        for h in lp.heads:
            add(lp.layer, "head", h.head, {"slope": (h.recency_slope, h.recency_slope_se), "rp": (h.rp, h.rp_se),
                                           "sink": (h.sink, h.sink_se),
                                           "gu_sink_above_eps": (None if h.sink is None else int(h.sink > eps),
                                                                 None)})
    return out + _map_rows(res) if maps else out


def to_frame(res, eps: float, maps: bool = False):
    try:
        import pandas as pd
    except ImportError:
        raise ValueError("to_frame() needs pandas: python3 -m pip install pandas (or use records())") from None
    df = pd.DataFrame(records(res, eps, maps), columns=list(COLUMNS + (MAP_COLUMNS if maps else ())))
    df["head_index"] = df["head_index"].astype("Int64")  # the layer mean's missing head stays <NA>, not a float
    df["level"] = pd.Categorical(df["level"], categories=list(LEVELS))
    df["measure"] = pd.Categorical(df["measure"], categories=list(MEASURES if maps else MEASURES[:-1]))
    for name in MAP_COLUMNS if maps else ():
        df[name] = df[name].astype("Int64")
    return df


def to_csv(res, path, eps: float) -> None:
    import csv
    import io

    from lnrecency.files.atomic import atomic_write_text

    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=list(COLUMNS), lineterminator="\n")
    w.writeheader()
    for row in records(res, eps):
        w.writerow({k: ("" if v is None else v) for k, v in row.items()})
    atomic_write_text(path, buf.getvalue())
