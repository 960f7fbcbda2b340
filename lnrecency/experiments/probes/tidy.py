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

__all__ = ["COLUMNS", "MEASURES", "LEVELS", "records", "to_frame", "to_csv", "gu_sink", "triangle", "vector"]

#: the columns of every row
COLUMNS = ("layer", "level", "head_index", "measure", "value", "se")
#: the measures, in row order
MEASURES = ("slope", "rp", "sink", "gu_sink_above_eps")
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


def records(res, eps: float) -> list[dict]:
    """The tidy rows of the module docstring (:data:`COLUMNS`), layer by layer: the layer mean's measures, then each
    head's; ``eps``: Gu et al.'s threshold for ``gu_sink_above_eps``."""
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
    return out


def to_frame(res, eps: float):
    try:
        import pandas as pd
    except ImportError:
        raise ValueError("to_frame() needs pandas: python3 -m pip install pandas (or use records())") from None
    df = pd.DataFrame(records(res, eps), columns=list(COLUMNS))
    df["head_index"] = df["head_index"].astype("Int64")  # the layer mean's missing head stays <NA>, not a float
    df["level"] = pd.Categorical(df["level"], categories=list(LEVELS))
    df["measure"] = pd.Categorical(df["measure"], categories=list(MEASURES))
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
