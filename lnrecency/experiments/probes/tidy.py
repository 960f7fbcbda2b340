"""A probe's result as tidy rows, a pandas DataFrame, CSV or a figure: what a user loads into a notebook.

Long and tidy: one row per layer, level, head and measure, with its value and standard error. ``level`` is
``"layer mean"`` (the mean over the layer's heads; ``head_index`` None) or ``"head"`` (``head_index`` 1, 2, ...), so
the layer mean is never mistaken for a head; no column is named after a DataFrame method. The measures are
:data:`MEASURES`: the recency ``slope`` (logit per key), ``rp``, the ``sink`` (mean attention share of the first
key) and, per head, ``gu_sink_above_eps`` (1 when that share exceeds Gu et al.'s eps, else 0; no SE). A measure the
probe did not make (a streamed or light probe computes no per-head RP) has no row: never a NaN.

The figure (:func:`plot`, ``res.plot()``): each layer's recency slope with its SE as an error bar, each head's slope
as a dot beside it, with ``positions="both"`` the slopes with positions off too; and a layer's head-mean logit map
(queries down, keys across, from 1; above the diagonal blank) where the probe kept one. The records themselves:
:class:`LayerProbe` per layer, :class:`HeadProbe` per head (layers and heads from 1).

>>> df = res.to_frame()                                                      # doctest: +SKIP
>>> df[(df.level == "layer mean") & (df.measure == "slope")][["layer", "value", "se"]]   # doctest: +SKIP
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from lnrecency.experiments.probes.probe_settings import ROLLOUT_LAMBDA

__all__ = ["HeadProbe", "LayerProbe", "slope_label", "positions_line", "has_positions", "LATE_KEY", "COLUMNS",
           "MAP_COLUMNS", "MEASURES", "LEVELS", "records", "to_frame", "to_csv", "gu_sink", "triangle",
           "vector", "maps", "positions_difference", "plot"]

#: the columns of every row
COLUMNS = ("layer", "level", "head_index", "measure", "value", "se")
#: with maps: the query and key of a map's cell (from 1; None for the other measures)
MAP_COLUMNS = ("query", "key")
#: the measures, in row order (``mean_logit``: a map's cell, with maps only)
MEASURES = ("slope", "rp", "sink", "gu_sink_above_eps", "mean_logit")
#: the levels a row is at
LEVELS = ("layer mean", "head")


#: the late slope (:attr:`LayerProbe.late_slope`) reads keys from this one on (issue 50: in the BOS-trained text
#: models the slope is curved, keys 1-7 carrying most of it)
LATE_KEY = 8

@dataclass
class HeadProbe:
    head: int
    mean_logit: np.ndarray | None  # None when the probe keeps no per-head maps (real models)
    mean_logit_se: np.ndarray | None
    recency_slope: float
    recency_slope_se: float
    rp: float
    rp_se: float
    norm_profile: np.ndarray | None = None  # E |o_i|^2
    norm_profile_se: np.ndarray | None = None
    norm_law: np.ndarray | None = None  # s2 (rho + (1 - rho) E sum_k P_ik^2)
    value_sq: float | None = None  # s2
    value_rho: float | None = None  # rho
    sink: float | None = None  # the first key's share of this head's attention (mean P_i1, rows i >= 2), its SE
    sink_se: float | None = None

    def to_json(self) -> dict:
        return {"head": self.head, "mean_logit": triangle(self.mean_logit),
                "mean_logit_se": triangle(self.mean_logit_se),
                "recency_slope": self.recency_slope, "recency_slope_se": self.recency_slope_se,
                "rp": self.rp, "rp_se": self.rp_se,
                "norm_profile": vector(self.norm_profile), "norm_profile_se": vector(self.norm_profile_se),
                "norm_law": vector(self.norm_law), "value_sq": self.value_sq, "value_rho": self.value_rho,
                "sink": self.sink, "sink_se": self.sink_se}


def slope_label(lo: float, hi: float) -> str:
    """A layer's label by its slope interval [lo, hi]: "recency" above 0, "earlier" below, "no sign" across it."""
    return "recency" if lo > 0 else "earlier" if hi < 0 else "no sign"


@dataclass
class LayerProbe:
    layer: int
    phase: str
    slope: float  # head-mean logits
    slope_se: float
    k: float
    row_k: float
    rows_recency: list  # rows (1-indexed) with a significantly positive slope
    rows_earlier: list
    rp: float
    rp_se: float
    mean_logit: np.ndarray
    diag_normalised: np.ndarray
    heads: list
    grams: dict = field(default_factory=dict)
    sink: float | None = None  # the BOS key's share of attention (mean P_i1), with its SE
    sink_se: float | None = None
    slope_values: np.ndarray | None = None  # the layer slope of each sequence, in input order
    regions: dict = field(default_factory=dict)  # {name: (mean, se)}: the layer slope over a region's rows
    #: the first key's share of each query row's attention (mean over heads and sequences; row 1 is 1), with SEs:
    #: the position-dependent sink share a later layer may read (issue 50)
    first_share_rows: np.ndarray | None = None
    first_share_rows_se: np.ndarray | None = None
    #: (mean, se) of the layer slope over keys >= LATE_KEY only (None where n leaves no row with MIN_KEYS of them)
    late_slope: tuple | None = None
    #: the attention rollout up to this layer (Abnar & Zuidema 2020; Wu et al.'s cumulative context probability):
    #: the last query's row of A^(l) ... A^(1), A the head-mean attention weights, mean over sequences, with SEs;
    #: and the residual-aware rollout, A replaced by (1 - ROLLOUT_LAMBDA) I + ROLLOUT_LAMBDA A (issue 51)
    rollout_last: np.ndarray | None = None
    rollout_last_se: np.ndarray | None = None
    rollout_residual_last: np.ndarray | None = None
    rollout_residual_last_se: np.ndarray | None = None

    @property
    def slope_interval(self) -> tuple[float, float]:
        return (self.slope - self.k * self.slope_se, self.slope + self.k * self.slope_se)

    @property
    def label(self) -> str:
        """The layer's label by its slope interval (:func:`slope_label`); the phase test is :attr:`phase`."""
        return slope_label(*self.slope_interval)

    def to_json(self, maps: bool = True) -> dict:
        if not maps:  # a real model's result: the n x n maps are left out (60 MB of JSON at 30 layers, n = 256)
            return {k: v for k, v in self.to_json().items() if k not in ("mean_logit", "diag_normalised", "grams")}
        late = {"late_slope": None if self.late_slope is None else {
                    "from_key": LATE_KEY, "mean": self.late_slope[0], "se": self.late_slope[1]},
                "first_share_by_row": vector(self.first_share_rows),
                "first_share_by_row_se": vector(self.first_share_rows_se)}
        if self.rollout_last is not None:
            late["rollout"] = {"row": len(self.rollout_last), "by_key": vector(self.rollout_last),
                               "by_key_se": vector(self.rollout_last_se),
                               "residual_lambda": ROLLOUT_LAMBDA,
                               "residual_by_key": vector(self.rollout_residual_last),
                               "residual_by_key_se": vector(self.rollout_residual_last_se)}
        return {**late, "layer": self.layer, "phase": self.phase, "recency_slope": self.slope,
                "recency_slope_se": self.slope_se, "k": self.k, "row_k": self.row_k,
                "rows_recency": self.rows_recency, "rows_earlier": self.rows_earlier, "rp": self.rp,
                "rp_se": self.rp_se, "sink": self.sink, "sink_se": self.sink_se,
                "regions": {k: {"recency_slope": v[0], "recency_slope_se": v[1]} for k, v in self.regions.items()},
                "mean_logit": triangle(self.mean_logit),
                "diag_normalised": triangle(self.diag_normalised), "heads": [h.to_json() for h in self.heads],
                "grams": {k: triangle(v, full=True) for k, v in self.grams.items()}}


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


def _slopes(ax, res) -> None:
    import numpy as np

    layers = np.array([lp.layer for lp in res.layers])
    ax.errorbar(layers, [lp.slope for lp in res.layers], yerr=[lp.slope_se for lp in res.layers], fmt="o-",
                color="C0", capsize=3, label="layer (head mean) +- SE")
    for lp in res.layers:
        heads = [h.recency_slope for h in lp.heads]
        ax.plot(lp.layer + np.linspace(-0.2, 0.2, len(heads)), heads, ".", color="C0", alpha=0.35)
    if res.positions_off is not None:
        off = res.positions_off.layers
        ax.errorbar(layers + 0.05, [lp.slope for lp in off], yerr=[lp.slope_se for lp in off], fmt="s--",
                    color="C3", capsize=3, label="positions off (same windows)")
    ax.axhline(0.0, color="0.5", lw=0.8)
    ax.set_xlabel("layer (from 1)")
    ax.set_ylabel("recency slope (logit per key)")
    ax.set_xticks(layers if len(layers) <= 16 else layers[::-(-len(layers) // 10)])
    ax.legend(fontsize=8)


def plot(res, map_layer: int | None = None, path=None):
    """The figure of the module docstring; ``map_layer`` (from 1; default the last layer) picks the map;
    ``path``: also written there (any format matplotlib writes)."""
    try:
        import matplotlib

        if path is not None:
            matplotlib.use("Agg", force=False)
        import matplotlib.pyplot as plt
    except ImportError:
        raise ValueError("plot() needs matplotlib: python3 -m pip install matplotlib") from None
    from pathlib import Path

    import numpy as np

    try:
        lp = res.layer(len(res.layers) if map_layer is None else map_layer)
    except ValueError as exc:  # the argument the caller gave is map_layer, not layer
        raise ValueError(str(exc).replace("layer must", "map_layer must", 1).replace("(layers count from 1: "
                                                                                   "res.layer(1) is the first)",
                                                                                   "(layers count from 1)")) from None
    has_map = lp.mean_logit is not None
    fig, axes = plt.subplots(1, 2 if has_map else 1, figsize=(10 if has_map else 5.5, 4), squeeze=False)
    _slopes(axes[0, 0], res)
    name = Path(str(res.model.get("path"))).name if res.model.get("path") else res.model.get("class")
    axes[0, 0].set_title(f"{name or res.model.get('kind')}: {res.settings.sequences} windows ({res.settings.tokens}), "
                         f"n = {res.settings.n}", fontsize=9)
    if has_map:
        n = lp.mean_logit.shape[0]
        image = axes[0, 1].imshow(np.ma.masked_invalid(lp.mean_logit), cmap="viridis",
                                  extent=(0.5, n + 0.5, n + 0.5, 0.5))
        fig.colorbar(image, ax=axes[0, 1], label="mean logit (head mean)")
        axes[0, 1].set_xlabel("key (from 1)")
        axes[0, 1].set_ylabel("query (from 1)")
        axes[0, 1].set_title(f"layer {lp.layer}: mean logits", fontsize=9)
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
    return fig


def positions_line(res, decoder_positions: str | None) -> str:
    """The positional scheme and whether it was on, for every result: the model's own statement where the probe
    makes one (transformers and GGUF models), else this project's decoder's configuration (never switched off)."""
    said = res.model.get("positions")
    if isinstance(said, dict):
        return f"{said.get('scheme')}, {said.get('state')}"
    if isinstance(said, str):
        return said
    if decoder_positions in (None, "none"):
        return "none (the decoder has no positional encoding)"
    return f"{decoder_positions}, on"


def has_positions(res, decoder_positions) -> bool:
    """Whether the model has a positional scheme the probe can switch off (a NoPE model has nothing to compare)."""
    said = res.model.get("positions")
    if isinstance(said, dict):
        return str(said.get("scheme", "none")).lower() not in ("none", "nope", "")
    return decoder_positions not in (None, "none")
