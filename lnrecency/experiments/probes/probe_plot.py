""":meth:`lnrecency.experiments.probes.probe.ProbeResult.plot`: a probe's result as one matplotlib figure.

Left: each layer's recency slope (head-mean logits, logit per key) with its SE as an error bar, each head's slope
as a dot beside it; with ``positions="both"`` the slopes with positions off too. Right: a layer's head-mean logit
map (queries down, keys across, from 1; above the diagonal blank) where the probe kept one. Layers and heads count
from 1, as everywhere in the result."""
from __future__ import annotations

import numpy as np

__all__ = ["plot"]


def _slopes(ax, res) -> None:
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
    ax.set_xticks(layers)
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
    lp = res.layer(len(res.layers) if map_layer is None else map_layer)
    has_map = lp.mean_logit is not None
    fig, axes = plt.subplots(1, 2 if has_map else 1, figsize=(10 if has_map else 5.5, 4), squeeze=False)
    _slopes(axes[0, 0], res)
    axes[0, 0].set_title(f"{res.model.get('class') or res.model.get('kind')}: {res.settings.sequences} windows, "
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
