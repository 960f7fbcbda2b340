"""The theory's diagnostics on any causal decoder: the parameter-free stack, a model trained here, or a local
Hugging Face causal LM (:mod:`lnrecency.experiments.probes.hf`).

On B input sequences of length n, per layer l and head h (S = attention logits, P = attention weights):

* ``mean_logit``: E S_ij over sequences with its SE (null above the diagonal); ``diag_normalised``: the
  authors' map (concept/with_params.ipynb): the head-mean logits with each lower diagonal's mean removed;
* ``recency_slope``: per sequence, the least-squares slope of S_ij against the key j over the keys j < i of
  row i (the BOS key left out when the inputs start with BOS, ``bos_first``), averaged over the rows that
  have at least ``MIN_KEYS`` = 3 such keys, each row weighted by its number of keys (a row's slope has
  variance ~ 12 / keys^3 under i.i.d. noise, so short rows would dominate an unweighted mean); its mean
  and SE over sequences (sequences are i.i.d.);
* ``rp``: the authors' per-instance recency probability, the fraction of triples j < k < i with S_ik > S_ij
  (j not the BOS key when ``bos_first``), per sequence; its mean and SE over sequences;
* ``sink``: with ``bos_first``, the BOS key's share of attention, mean over heads, rows i >= 2 and
  sequences of P_i1 (reported as its own number, never inside a slope or RP);
* ``phase`` per layer (logits averaged over heads, as the authors plot them), a calibrated test with
  family-wise false-alarm rate ``rate`` per layer (union bound): every row's slope is tested two-sided at
  rate / (2 (n - 2)) and the layer's mean slope at rate / 2, with Student-t quantiles (B - 1 degrees of
  freedom; tests/experiments/test_models_theory.py measures the rate on an exact null).
  ``recency``: the mean slope is significantly positive, or some row is and none is significantly
  negative; ``earlier``: the mirror image; ``mixed``: rows significant in both directions; ``flat``: no
  ordering detectable at this B (the slope's CI is reported). This is our operational reading of
  Definition 1 for noisy trained logits, not the paper's;
* ``norm_profile``: E |o_i|^2 of the head output o_i = sum_k P_ik v_k against i, beside the law of an
  average of weakly correlated vectors (seed 002; the parameter-free identity |o_i|^2 = sum_k P_ik^2 at
  alpha = 0): E|o_i|^2 ~ s2 (rho + (1 - rho) E sum_k P_ik^2), with s2 = E|v_k|^2 and rho = E<v_k, v_l> / s2
  (k != l) measured on the same sequences. A head that attends to itself (sum_k P_ik^2 ~ 1) does not shrink;
* Gram panels of the authors' Figure (a)-(g): E[Y Y^T] of the normalised attention input Y, of the head
  outputs, of the attention output, of the stream after attention, of the MLP's input, of the block output.

``assumptions``: how far the model is from the theory's (W_Q^T W_K against a multiple of I, per head;
embedding anisotropy as a mean cosine; W_O, MLP, positions, training).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
import torch
from scipy.stats import t as student_t

from lnrecency.experiments.probes import tidy
from lnrecency.experiments.probes.probe_costs import (  # noqa: F401 (re-exported)
    MAX_CELLS,
    MAX_PROBE_BYTES,
    MAX_SECONDS,
    PIECE_BYTES,
    PROBE_COST,
    SLOPE_WORK_BYTES,
    Progress,
    check_probe_cost,
    probe_bytes,
    probe_chunk,
    probe_seconds,
)
from lnrecency.experiments.probes.probe_settings import (  # noqa: F401 (re-exported)
    BOS_CHOICES,
    GU_EPS,
    ROLLOUT_LAMBDA,
    THEORY_INPUTS,
    TOKENS,
    ProbeSettings,
    bos_token,
)
from lnrecency.experiments.probes.probe_sums import (  # noqa: F401 (re-exported)
    Moments,
    diag_normalise,
    head_sums,
    phase_of,
    recency_counts,
    triples,
    z_scores,
)
from lnrecency.experiments.probes.tidy import LATE_KEY, HeadProbe, LayerProbe  # noqa: F401 (re-exported)
from lnrecency.inference.recency_slope import MIN_KEYS, row_slope_weights, row_weights  # noqa: F401 (re-exported)
from lnrecency.runtime.arguments import check_int

__all__ = ["ProbeSettings", "ProbeResult", "probe", "check_probe_bounds", "BOS_CHOICES", "bos_token",
           "row_slope_weights", "recency_counts",
           "PHASES", "MIN_KEYS", "row_weights", "TOKENS", "GU_EPS", "LATE_KEY", "ROLLOUT_LAMBDA",
           # re-exported from probe_costs (what a probe costs, decided before any work)
           "MAX_CELLS", "MAX_PROBE_BYTES", "MAX_SECONDS", "PROBE_COST", "check_probe_cost", "probe_bytes",
           "probe_chunk", "probe_seconds"]

PHASES = ("recency", "earlier", "flat", "mixed")
#: what each traced tensor is, for the refusal of a non-finite one
TRACE_NAMES = {"logits": "attention logits", "weights": "attention weights", "values": "attention values",
               "head_out": "head outputs", "normed": "normalised inputs of attention", "attn_out": "attention outputs",
               "mid": "residual states after attention", "mlp_in": "MLP inputs", "out": "layer outputs"}


@dataclass
class ProbeResult:
    """A probe's result: ``layers`` (:class:`LayerProbe`, each with its ``heads``, :class:`HeadProbe`), the model and
    the settings it was measured on.

    Index convention, stated once: layers and heads count from 1, as printed, in the JSON, the tidy rows and the
    plots (``res.layer(1)`` is the first layer, ``res.layer(1).heads[0].head == 1``; ``res.layer(0)`` is refused).

    ``inputs``: the (sequences, n) token ids probed (None for the theory's inputs); ``positions_off``: with
    ``positions="both"``, the probe of the same windows with positions off (:meth:`positions_difference`).
    Arrays on request: :meth:`maps`; a figure: :meth:`plot`; rows: :meth:`records`, :meth:`to_frame`,
    :meth:`to_csv`; everything: :meth:`to_json`."""

    model: dict
    settings: ProbeSettings
    layers: list
    assumptions: dict
    logits_note: str = "attention logits S = q.k scale (exact)"
    inputs: np.ndarray | None = None
    positions_off: ProbeResult | None = None

    def layer(self, layer: int) -> LayerProbe:
        """The layer numbered ``layer``, counting from 1 (the class's index convention)."""
        try:
            q = check_int("layer", layer, minimum=1, maximum=len(self.layers))
        except ValueError as exc:
            raise ValueError(f"{exc} (layers count from 1: res.layer(1) is the first)") from None
        return self.layers[q - 1]

    def gu_sink(self, eps: float = GU_EPS) -> float | None:
        """Gu et al.'s Sink^eps_1 (lnrecency.experiments.probes.tidy.gu_sink)."""
        return tidy.gu_sink(self, eps)

    def records(self, eps: float = GU_EPS, maps: bool = False) -> list[dict]:
        """Tidy rows, one per layer and head (lnrecency.experiments.probes.tidy); ``maps``: the mean logit maps'
        cells too (measure ``mean_logit``, with ``query`` and ``key``, from 1)."""
        return tidy.records(self, eps, maps)

    def to_frame(self, eps: float = GU_EPS, maps: bool = False):
        """:meth:`records` as a pandas DataFrame (pandas is an optional extra)."""
        return tidy.to_frame(self, eps, maps)

    def to_csv(self, path, eps: float = GU_EPS) -> None:
        """:meth:`records` as CSV (empty cells for values not measured), written atomically."""
        tidy.to_csv(self, path, eps)

    def maps(self) -> dict:
        """The mean logit maps as arrays (NaN above the diagonal; index [layer - 1, head - 1, query - 1, key - 1]):
        ``mean_logit`` (layers, n, n), the head mean; ``diag_normalised`` (layers, n, n), the authors' map (each
        lower diagonal's mean removed); with ``maps=True`` at the probe, ``head_mean_logit`` and
        ``head_mean_logit_se`` (layers, heads, n, n). Float64: 8 L (2 H + 2) n^2 bytes; ValueError where the probe
        kept none (slopes only)."""
        return tidy.maps(self)

    def positions_difference(self) -> list[dict]:
        """With ``positions="both"``: per layer, the slope with positions on and off over the same windows, their
        difference on - off and its paired SE (the SD of the per-window differences over sqrt(windows))."""
        return tidy.positions_difference(self)

    def plot(self, map_layer: int | None = None, path=None):
        """A matplotlib figure: each layer's slope with its SE and each head's beside it; and a layer's
        head-mean logit map (``map_layer``, from 1; default the last) where the probe kept one. ``path``: also
        saved there. (lnrecency.experiments.probes.tidy.plot)"""
        return tidy.plot(self, map_layer, path)

    def to_json(self) -> dict:
        s = self.settings
        keep_maps = self.model.get("maps") or self.model.get("kind") not in ("gguf",)
        out = {"model": self.model, "settings": {"n": s.n, "sequences": s.sequences, "seed": s.seed,
                                                 "tokens": s.tokens, "bos_first": s.bos_first,
                                                 "min_keys": MIN_KEYS, "row_weights": "number of keys",
                                                 "rate": s.rate},
               "index": "layers, heads, queries and keys count from 1",
               "logits": self.logits_note, "assumptions": self.assumptions,
               "gu_sink": {"eps": GU_EPS, "share_of_heads": self.gu_sink(),
                           "definition": "Gu et al. 2024 Sink^eps_1: the share of (layer, head) pairs whose mean "
                                         "attention to the first token (rows i >= 2) exceeds eps"},
               "layers": [lp.to_json(bool(keep_maps)) for lp in self.layers]}
        if self.positions_off is not None:
            out["positions_difference"] = self.positions_difference()
            out["positions_off"] = {"model": {"positions": self.positions_off.model.get("positions")},
                                    "layers": [lp.to_json(False) for lp in self.positions_off.layers]}
        return out


def check_probe_bounds(st: ProbeSettings, n_layers: int, n_heads: int, width: int, *, light: bool = False,
                       maps: bool = True, stream: bool = False, slopes_only: bool = False,
                       timed: bool | None = None) -> int:
    """The probe's bounds, checked before any input is built or model run: its cells (sequences x n^2 x heads x
    layers, unless streamed), its memory per step and its time (:func:`check_probe_cost`; a streamed probe's time
    is the caller's estimate unless ``timed``). Returns the sequences per step."""
    n = st.n
    if not stream and st.sequences * n * n * n_heads * n_layers > MAX_CELLS:  # streamed: its time estimate bounds it
        raise ValueError(f"sequences * n^2 * heads * layers = {st.sequences * n * n * n_heads * n_layers} exceeds "
                         f"the probe's bound {MAX_CELLS}; lower sequences or n")
    return check_probe_cost(1 if stream else n_layers, n_heads, n, width, st, light, layers_kept=n_layers,
                            maps=maps, timed=not stream if timed is None else timed,  # streamed: the caller's estimate
                            slopes_only=slopes_only)


def probe(traces_of: Callable, *, n_layers: int, n_heads: int, settings: ProbeSettings,
          model_info: dict, assumptions: dict, logits_note: str | None = None, progress: bool = False,
          light: bool = False, width: int = 0, stream: bool = False, maps: bool = True,
          regions: dict | None = None, slopes_only: bool = False, pilot: bool = False) -> ProbeResult:
    """The generic probe: ``traces_of(start, stop)`` returns, for sequences [start, stop) of the input stream,
    one record per layer with tensors ``logits`` and ``weights`` (B, H, n, n) and optionally ``values``,
    ``head_out`` (B, H, n, d_head) and Gram inputs (``normed``, ``attn_out``, ``mid``, ``mlp_in``, ``out``).
    ``stream``: ``traces_of(start, stop, emit)`` instead calls ``emit(layer0, record)`` for each layer as it is
    made (only one layer's traces are alive at a time: the probe keeps running sums).
    ``light``: the layers' slopes, RP, phases and sink only (per-head RP, norm profiles and Gram panels are
    left out, NaN / empty): the per-evaluation trajectory of a training run. ``maps``: False keeps no per-head
    mean-logit map (the heads' ``mean_logit`` is None; the layer's head-mean map stays). ``regions``: {name: 1-based
    rows}: the layer slope over those rows only (each row weighted by its keys, as in the layer slope), per
    sequence, reported as ``LayerProbe.regions`` {name: (mean, se)} (the induction task's two copies).
    ``width``: the model's d, for the memory bound: sequences are taken :func:`probe_chunk` at a time (at most
    ``settings.chunk``). ``slopes_only`` (with ``light``): slopes, sink and rollout from running row sums, no
    head-mean map and no RP (O(n^3) a row set), a layer read a piece at a time in float64
    (:data:`PIECE_BYTES`): memory O(B H n^2) for the layer in flight plus O(L (H + n)), for large n.
    ``progress``: a bar on a terminal, else a line on stderr about every tenth of the sequences. ``pilot``: the
    first two steps take an eighth of the sequences each, so that the time estimate from the second
    (``estimate_from_first_windows_seconds`` in the result's model) comes early."""
    st = settings
    if slopes_only and not light:
        raise ValueError("slopes_only goes with light (the full probe keeps per-head maps and RP)")
    chunk = check_probe_bounds(st, n_layers, n_heads, width, light=light, maps=maps, stream=stream,
                               slopes_only=slopes_only)
    sums = _Sums(st, n_layers, light, maps, slopes_only, regions, batch=chunk)
    report = Progress(st.sequences, progress)
    first = min(chunk, max(1, st.sequences // 8)) if pilot else min(chunk, st.sequences)  # pilot: two short first
    # steps, for an early estimate; never past the sequences asked for (a first step of a whole chunk read a chunk)
    steps = [(0, first), (first, min(2 * first, st.sequences))] if pilot else [(0, first)]
    steps = [(a, b) for a, b in steps if a < b]
    steps += [(a, min(a + chunk, st.sequences)) for a in range(steps[-1][1], st.sequences, chunk)]
    for start, stop in steps:
        if stream:
            traces_of(start, stop, sums.take)
        else:
            for l0, tr in enumerate(traces_of(start, stop)):
                sums.take(l0, tr)
        report.update(stop)
    report.close()
    layers = [sums.layer_result(l0, n_heads) for l0 in range(n_layers)]
    res = ProbeResult(model_info, st, layers, assumptions, logits_note or ProbeResult.logits_note)
    if report.estimate is not None:
        res.model["estimate_from_first_windows_seconds"] = round(report.estimate, 2)
    return res


_MOMENTS = ("S", "Smean", "seq_slope", "rp", "osq", "psq", "vsq", "vcross", "layer_rows", "layer_slope", "layer_rp",
            "sink", "head_sink", "first_rows", "late", "rollout", "rollout_res")


class _Sums:
    """The probe's running sums, layer by layer (:func:`probe`): what each layer's traces add, and the layer's
    result from them once every sequence is in."""

    def __init__(self, st: ProbeSettings, n_layers: int, light: bool, maps: bool, slopes_only: bool,
                 regions: dict | None, batch: int = 1) -> None:
        n = st.n
        self.batch = batch  # the sequences of the largest step: the float64 buffers' leading size
        self.st, self.n, self.light, self.maps, self.slopes_only = st, n, light, maps, slopes_only
        self.skip = 1 if st.bos_first else 0
        self.w = torch.from_numpy(row_slope_weights(n, self.skip))
        omega = row_weights(n, self.skip)
        self.rows = np.flatnonzero(omega)  # 0-based rows that enter the layer slope
        self.omega_rows = torch.from_numpy(omega[self.rows])
        self.mom = [{name: Moments() for name in _MOMENTS} for _ in range(n_layers)]
        self.roll: dict = {}  # the chunk's running rollouts (B, n, n), plain and residual-aware: layers in order
        late_rows = np.arange(1, n + 1) - LATE_KEY >= MIN_KEYS  # rows with MIN_KEYS keys >= LATE_KEY
        self.w_late = torch.from_numpy(row_slope_weights(n, LATE_KEY - 1)) if late_rows.any() else None
        self.omega_late = torch.from_numpy(row_weights(n, LATE_KEY - 1)) if late_rows.any() else None
        self.region_w = {}
        for name, wanted in (regions or {}).items():  # the layer-slope weights restricted to the region's rows
            keep = np.isin(self.rows + 1, np.asarray(list(wanted), dtype=int))
            if keep.any():
                self.region_w[name] = torch.from_numpy(np.where(keep, omega[self.rows], 0.0)
                                                       / omega[self.rows][keep].sum())
        self.region_mom = [{name: Moments() for name in self.region_w} for _ in range(n_layers)]
        self.grams = [dict() for _ in range(n_layers)]
        self.values: list[list] = [[] for _ in range(n_layers)]  # per sequence, the layer slope (B floats a step)
        self.n_triples = triples(n, self.skip)
        self.eye = torch.eye(n, dtype=torch.float64)
        self.buffers: dict = {}

    def float64(self, name: str, t: torch.Tensor) -> torch.Tensor:
        """``t`` copied into this probe's float64 buffer ``name``, made once per shape and reused layer after layer
        (a fresh 30 MiB array every layer is memory handed back and faulted in again: page faults that grow with
        the depth)."""
        buf = self.buffers.get(name)
        if buf is None or buf.shape[1:] != t.shape[1:] or buf.shape[0] < t.shape[0]:
            buf = self.buffers[name] = torch.empty((max(t.shape[0], self.batch),) + tuple(t.shape[1:]),
                                                   dtype=torch.float64)
        return buf[:t.shape[0]].copy_(t)

    def take(self, l0: int, tr: dict) -> None:
        """One layer's traces of one chunk of sequences added to the sums."""
        if self.slopes_only or (self.light and not self.maps):  # no per-head map kept: a few heads at a time
            self.take_slopes(l0, tr)
        else:
            self.take_full(l0, tr)

    def take_slopes(self, l0: int, tr: dict) -> None:
        """The slopes, sink and rollout of one layer from its logits and weights, a piece at a time in float64
        (:func:`head_sums`: no float64 copy of the whole layer); for a light probe that is not slopes-only, the
        head-mean map and the layer RP too."""
        m = self.mom[l0]
        s_in, p_in = tr["logits"], tr["weights"]
        slopes, sm, a = head_sums(s_in, p_in, self.w, self.buffers)
        # finite iff these sums are: every entry of S is in one of sm's float64 sums and every entry of P in one of
        # a's, and a NaN or an infinity stays one through any sum (float32 entries cannot overflow one); no pass of
        # its own over S or P
        if not math.isfinite(float(sm.sum()) + float(a.sum())):
            raise ValueError(f"layer {l0 + 1}: the attention logits or weights are not finite (NaN or overflow); "
                             f"nothing is decided from them")
        m["seq_slope"].add(slopes[..., self.rows] @ self.omega_rows)
        if not self.slopes_only:  # the light probe: the head-mean map and the layer's RP, from the head means
            m["Smean"].add(sm)
            m["layer_rp"].add((recency_counts(sm, self.skip) / self.n_triples)[:, None])
        self.layer_sums(l0, sm, p_in[:, :, :, 0].to(torch.float64), a)

    def layer_sums(self, l0: int, sm: torch.Tensor, first: torch.Tensor, a: torch.Tensor) -> None:
        """What every probe sums from a layer's head means: the layer slope (rows, per sequence, per region), the
        first key's share (sm: head-mean logits (B, n, n); first: each head's weight on key 1, (B, H, n); a:
        head-mean weights), the two rollouts and the late slope."""
        m, n = self.mom[l0], self.n
        lr = torch.einsum("bij,ij->bi", sm, self.w)[:, self.rows]
        m["layer_rows"].add(lr)
        seq = lr @ self.omega_rows
        m["layer_slope"].add(seq[:, None])
        self.values[l0].append(seq.numpy())
        for name, rw in self.region_w.items():
            self.region_mom[l0][name].add((lr @ rw)[:, None])
        m["sink"].add(first[:, :, 1:].mean((1, 2))[:, None])  # P_i1 over heads and rows i >= 2
        m["head_sink"].add(first[:, :, 1:].mean(2))  # per head (B, H)
        m["first_rows"].add(first.mean(1))  # the first key's share per query row (B, n)
        mixed = (1.0 - ROLLOUT_LAMBDA) * self.eye.to(a.dtype) + ROLLOUT_LAMBDA * a
        self.roll["plain"] = a if l0 == 0 else a @ self.roll["plain"]
        self.roll["res"] = mixed if l0 == 0 else mixed @ self.roll["res"]
        m["rollout"].add(self.roll["plain"][:, n - 1, :])
        m["rollout_res"].add(self.roll["res"][:, n - 1, :])
        if self.w_late is not None:
            m["late"].add((torch.einsum("bij,ij->bi", sm, self.w_late) @ self.omega_late)[:, None])

    def take_full(self, l0: int, tr: dict) -> None:
        """A layer's maps, slopes, RP and sums (and, unless light, its norm profiles and Gram panels)."""
        m = self.mom[l0]
        s, p = self.float64("logits", tr["logits"]), self.float64("weights", tr["weights"])  # (B, H, n, n)
        for name, t in tr.items():  # logits, weights, values, head outputs, residual states
            t = s if name == "logits" else p if name == "weights" else t
            # finite iff the least and largest entries are (torch.aminmax propagates NaN): one pass, no copy
            if torch.is_tensor(t) and t.is_floating_point() and t.numel() and \
                    not all(math.isfinite(float(x)) for x in torch.aminmax(t)):
                raise ValueError(f"layer {l0 + 1}: the {TRACE_NAMES.get(name, name)} are not finite (NaN or "
                                 f"overflow); nothing is decided from them")
        sm = s.mean(1)  # head-mean logits (B, n, n)
        m["S" if self.maps else "Smean"].add(s if self.maps else sm)
        slopes = torch.einsum("bhij,ij->bhi", s, self.w)  # (B, H, n)
        m["seq_slope"].add(slopes[..., self.rows] @ self.omega_rows)
        if not self.light:
            m["rp"].add(recency_counts(s, self.skip) / self.n_triples)
        m["layer_rp"].add((recency_counts(sm, self.skip) / self.n_triples)[:, None])
        self.layer_sums(l0, sm, p[:, :, :, 0], p.mean(1))  # the first key's weights (a view), head-mean weights
        if not self.light:
            self.take_norms(l0, tr, p)

    def take_norms(self, l0: int, tr: dict, p: torch.Tensor) -> None:
        """The norm profiles and the Gram panels of a full probe."""
        m, n = self.mom[l0], self.n
        m["psq"].add((p * p).sum(-1))  # sum_k P_ik^2, (B, H, n)
        if tr.get("head_out") is not None:
            o = tr["head_out"].to(torch.float64)
            v = tr["values"].to(torch.float64)
            m["osq"].add((o * o).sum(-1))
            g = v @ v.transpose(-1, -2)  # (B, H, n, n)
            diag = torch.diagonal(g, dim1=-2, dim2=-1)
            m["vsq"].add(diag.mean(-1))
            m["vcross"].add((g.sum((-1, -2)) - diag.sum(-1)) / (n * (n - 1)))
        for name in ("normed", "head_out_cat", "attn_out", "mid", "mlp_in", "out"):
            x = tr.get(name)
            if name == "head_out_cat" and tr.get("head_out") is not None:
                ho = tr["head_out"]
                x = ho.transpose(1, 2).reshape(ho.shape[0], n, -1)
            if x is None:
                continue
            x = x.to(torch.float64)
            acc = (x @ x.transpose(-1, -2)).sum(0)
            self.grams[l0][name] = acc if name not in self.grams[l0] else self.grams[l0][name] + acc

    def head_results(self, l0: int, n_heads: int, mask: np.ndarray) -> list:
        m = self.mom[l0]
        got: dict = {}

        def mean(name: str) -> np.ndarray:  # each moment's mean and SE over every head made once, not once a head
            return got[name, "mean"] if (name, "mean") in got else got.setdefault((name, "mean"), m[name].mean)

        def se(name: str) -> np.ndarray:
            return got[name, "se"] if (name, "se") in got else got.setdefault((name, "se"), m[name].se)

        heads = []
        for h in range(n_heads):
            hp = HeadProbe(h + 1, *((np.where(mask, mean("S")[h], np.nan), np.where(mask, se("S")[h], np.nan))
                                    if self.maps else (None, None)),
                           float(mean("seq_slope")[h]), float(se("seq_slope")[h]),
                           *((math.nan, math.nan) if self.light else (float(mean("rp")[h]), float(se("rp")[h]))))
            if self.skip:
                hp.sink, hp.sink_se = float(mean("head_sink")[h]), float(se("head_sink")[h])
            if m["osq"].count:
                s2, cross = float(mean("vsq")[h]), float(mean("vcross")[h])
                rho = cross / s2 if s2 > 0 else float("nan")
                hp.norm_profile, hp.norm_profile_se = mean("osq")[h], se("osq")[h]
                hp.norm_law = s2 * (rho + (1.0 - rho) * mean("psq")[h])
                hp.value_sq, hp.value_rho = s2, rho
            heads.append(hp)
        return heads

    def layer_result(self, l0: int, n_heads: int) -> LayerProbe:
        """Layer ``l0``'s :class:`LayerProbe` from its sums, with the phase test at Student-t quantiles (B - 1
        degrees of freedom: the slopes are studentised means over B sequences)."""
        st, m, rows, n = self.st, self.mom[l0], self.rows, self.n
        df = max(st.sequences - 1, 1)
        k = float(student_t.isf(st.rate / 4.0, df))
        row_k = float(student_t.isf(st.rate / (4.0 * max(len(rows), 1)), df))
        mask = np.tril(np.ones((n, n), dtype=bool))
        head_mean = (np.where(mask, m["S"].mean.mean(0), np.nan) if self.maps else None if self.slopes_only
                     else np.where(mask, m["Smean"].mean, np.nan))
        slope, slope_se = float(m["layer_slope"].mean[0]), float(m["layer_slope"].se[0])
        phase, pos, neg = phase_of(z_scores(m["layer_rows"].mean, m["layer_rows"].se),
                                   float(z_scores(np.array(slope), np.array(slope_se))), k, row_k)
        rp = (math.nan, math.nan) if self.slopes_only else (float(m["layer_rp"].mean[0]), float(m["layer_rp"].se[0]))
        sink = (float(m["sink"].mean[0]), float(m["sink"].se[0])) if self.skip else (None, None)
        return LayerProbe(l0 + 1, phase, slope, slope_se, k, row_k, [int(rows[p - 1]) + 1 for p in pos],
                          [int(rows[q - 1]) + 1 for q in neg], *rp, head_mean,
                          None if head_mean is None else diag_normalise(np.nan_to_num(head_mean))
                          * np.where(mask, 1, np.nan), self.head_results(l0, n_heads, mask),
                          {name: (g / st.sequences).numpy() for name, g in self.grams[l0].items()},
                          sink=sink[0], sink_se=sink[1], slope_values=np.concatenate(self.values[l0]),
                          regions={k: (float(v.mean[0]), float(v.se[0])) for k, v in self.region_mom[l0].items()},
                          first_share_rows=m["first_rows"].mean, first_share_rows_se=m["first_rows"].se,
                          late_slope=(float(m["late"].mean[0]), float(m["late"].se[0])) if m["late"].count else None,
                          rollout_last=m["rollout"].mean, rollout_last_se=m["rollout"].se,
                          rollout_residual_last=m["rollout_res"].mean, rollout_residual_last_se=m["rollout_res"].se)
