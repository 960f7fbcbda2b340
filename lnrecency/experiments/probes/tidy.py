"""A probe's result as tidy rows (one per layer and head), a pandas DataFrame or CSV: what a user loads into a
notebook. ``head`` 0 is the layer's head mean; a value the probe did not measure (a streamed probe computes no
per-head RP) is None, an empty CSV cell, never NaN."""
from __future__ import annotations

import math

__all__ = ["COLUMNS", "records", "to_frame", "to_csv", "gu_sink", "triangle", "vector"]

#: the columns of every row
COLUMNS = ("layer", "head", "slope", "slope_se", "rp", "rp_se", "sink", "sink_se", "gu_sink_above_eps")


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
    """One row per layer (head 0: the head mean) and per head: :data:`COLUMNS`; ``gu_sink_above_eps``: whether the
    head's mean attention to the first key exceeds ``eps`` (Gu et al.'s Sink^eps count)."""
    out = []
    for lp in res.layers:
        out.append({"layer": lp.layer, "head": 0, "slope": _clean(lp.slope), "slope_se": _clean(lp.slope_se),
                    "rp": _clean(lp.rp), "rp_se": _clean(lp.rp_se), "sink": _clean(lp.sink),
                    "sink_se": _clean(lp.sink_se), "gu_sink_above_eps": None})
        for h in lp.heads:
            out.append({"layer": lp.layer, "head": h.head, "slope": _clean(h.recency_slope),
                        "slope_se": _clean(h.recency_slope_se), "rp": _clean(h.rp), "rp_se": _clean(h.rp_se),
                        "sink": _clean(h.sink), "sink_se": _clean(h.sink_se),
                        "gu_sink_above_eps": None if h.sink is None else bool(h.sink > eps)})
    return out


def to_frame(res, eps: float):
    try:
        import pandas as pd
    except ImportError:
        raise ValueError("to_frame() needs pandas: python3 -m pip install pandas (or use records())") from None
    return pd.DataFrame(records(res, eps), columns=list(COLUMNS))


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
