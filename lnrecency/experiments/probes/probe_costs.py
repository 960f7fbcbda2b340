"""What a probe costs, decided before any work: the memory of its arrays (:func:`probe_bytes`, bounded by
:data:`MAX_PROBE_BYTES`, which sets the sequences per step) and its time (:func:`probe_seconds`, fitted on the
identity decoders by benchmarks/bench_estimates.py; refused above :data:`MAX_SECONDS`). A GGUF model's own
estimate, with its load and output layer, is :mod:`lnrecency.experiments.probes.gguf`'s."""
from __future__ import annotations

__all__ = ["MAX_CELLS", "MAX_PROBE_BYTES", "PROBE_COST", "STREAM_COST", "SLOPE_WORK_BYTES", "PIECE_BYTES",
           "LOAD_MARGIN", "MAX_SECONDS", "SLOPES_ONLY_ABOVE", "probe_bytes", "probe_seconds", "check_probe_cost",
           "probe_chunk", "ENGINE_COST", "forward_flops", "engine_seconds", "check_engine_time", "Progress"]

#: bound on sequences * n^2 * heads * layers (the work of one probe)
MAX_CELLS = 4 * 10**9
#: memory the probe's own arrays may take (the traces of one chunk of sequences and the running moments; the
#: model's weights and the interpreter come on top: issue 33 asks for refusals within 1 GiB in all)
MAX_PROBE_BYTES = 512 * 2**20


#: the float64 piece of a layer's logits or weights that a light probe works on at a time
#: (lnrecency.experiments.probes.probe_sums.head_sums): it stays in the cache. 32 layers x 32 heads at n = 64, 24
#: sequences, on this project's loaded 2-core machine: 1.7 ms a layer for the slopes and both head means, against 10
#: ms from float64 copies of the whole layer; 1-8 MiB pieces within 15% of each other
PIECE_BYTES = 4 * 2**20
#: the bound counted for the float64 working buffers of a light probe: two pieces (two heads where one head is larger,
#: within the bound up to n = 2048)
SLOPE_WORK_BYTES = 64 * 2**20


def probe_bytes(n_layers: int, n_heads: int, n: int, width: int, batch: int, light: bool = False,
                layers_kept: int | None = None, maps: bool = True, slopes_only: bool = False) -> int:
    """Bytes of the probe's arrays for ``batch`` sequences at a time (an upper estimate, float64 everywhere):
    the traces of ``n_layers`` layers held at once (logits and weights, B H n^2 each; six (B, n, d)-sized
    states), the float64 working copies of one layer (3 B H n^2) and the running moments of ``layers_kept``
    layers (default ``n_layers``; 2 x (H n^2 + small) each, n^2 without per-head maps). ``slopes_only``: the
    logits and weights of the ``n_layers`` layers in flight as the model makes them (float32, 4 bytes a cell),
    :data:`SLOPE_WORK_BYTES` of float64 heads, five (B, n, n) float64 sums (head means, the two rollouts) and the
    running moments, O(H + n) a layer."""
    if slopes_only:
        kept = n_layers if layers_kept is None else layers_kept
        return (4 * n_layers * batch * 2 * n_heads * n * n + min(SLOPE_WORK_BYTES, 16 * batch * n_heads * n * n)
                + 8 * 5 * batch * n * n + 8 * kept * 2 * (n_heads + 24 * n))
    traces = n_layers * batch * (2 * n_heads * n * n + 6 * n * width)
    work = 3 * batch * n_heads * n * n + batch * n * n  # recency_counts' row masks
    kept = n_layers if layers_kept is None else layers_kept
    maps_cells = (n_heads if maps else 1) * n * n
    moments = kept * 2 * (maps_cells * (1 if light else 2) + 16 * n)
    return 8 * (traces + work + moments)


#: the probe's time model, fitted on this project's 2-core machine (identity decoders, n = 16..512, d = 32..512,
#: 1-8 layers, 16-256 sequences; benchmarks/bench_estimates.py --fit, after torch's one-time set-up; FIXED fitted
#: to 0): seconds = FIXED + S L
#: (PER_SEQUENCE_LAYER + CUBIC (H n^3 + n^2 d)), times LOAD_MARGIN; refused above MAX_SECONDS (an interactive
#: answer; --max-seconds moves it)
PROBE_COST = {"FIXED": 0.0, "PER_SEQUENCE_LAYER": 5.25e-5, "CUBIC": 4.1e-10}
#: a slopes-only streamed probe of a transformers model (benchmarks/bench_probe_stream.py, this project's 2-core
#: machine): seconds = S L (PER_SEQUENCE_LAYER + ROLLOUT n^3 + CELL H n^2 + FLOP (the layer's forward FLOPs)),
#: times LOAD_MARGIN
STREAM_COST = {"PER_SEQUENCE_LAYER": 1e-3, "ROLLOUT": 4e-11, "CELL": 2e-8, "FLOP": 1.5e-11}
LOAD_MARGIN = 1.5
MAX_SECONDS = 600.0


def probe_seconds(n_layers: int, n_heads: int, n: int, width: int, sequences: int,
                  slopes_only: bool = False) -> float:
    """The estimated time of a probe (:data:`PROBE_COST`; slopes only, :data:`STREAM_COST`), made before any
    work."""
    if slopes_only:
        c = STREAM_COST
        flops = 2 * (12 * n * width * width + 2 * n * n * width)  # projections and MLP, then q k^T and P V
        return LOAD_MARGIN * sequences * n_layers * (c["PER_SEQUENCE_LAYER"] + c["ROLLOUT"] * n ** 3
                                                     + c["CELL"] * n_heads * n * n + c["FLOP"] * flops)
    c = PROBE_COST
    return LOAD_MARGIN * (c["FIXED"] + sequences * n_layers * (c["PER_SEQUENCE_LAYER"] + c["CUBIC"] * (
        n_heads * n ** 3 + n * n * width)))


def check_probe_cost(n_layers: int, n_heads: int, n: int, width: int, settings,
                     light: bool = False, layers_kept: int | None = None, maps: bool = True,
                     timed: bool = True, slopes_only: bool = False) -> int:
    """``settings``: a :class:`lnrecency.experiments.probes.probe.ProbeSettings` (its ``chunk`` and
    ``sequences`` are read). Refuse a probe above its memory bound (:func:`probe_chunk`) or its time limit
    (:func:`probe_seconds`, ``--max-seconds``) before any work; return the sequences per step. ``timed``: False
    when the caller has already bounded the time with its own estimate, before loading the model (a streamed
    real model: lnrecency.experiments.probes.gguf.estimate_probe, measured on such models)."""
    from lnrecency.runtime.timelimit import refusal, time_limit

    chunk = probe_chunk(n_layers, n_heads, n, width, settings.chunk, light, layers_kept, maps, slopes_only)
    seconds = probe_seconds(n_layers if layers_kept is None else layers_kept, n_heads, n, width, settings.sequences,
                            slopes_only)
    if timed and seconds > time_limit(MAX_SECONDS):
        depth = n_layers if layers_kept is None else layers_kept
        raise refusal(f"the probe of {settings.sequences} sequences at n = {n} ({depth} layers x "
                      f"{n_heads} heads, width {width})", seconds, time_limit(MAX_SECONDS),
                      "lower sequences or n (--sequences, --n)")
    return chunk


def probe_chunk(n_layers: int, n_heads: int, n: int, width: int, chunk: int, light: bool = False,
                layers_kept: int | None = None, maps: bool = True, slopes_only: bool = False) -> int:
    """The largest number of sequences per step, at most ``chunk``, whose :func:`probe_bytes` fits
    MAX_PROBE_BYTES; ValueError (naming the sizes) when not even one sequence fits."""
    if probe_bytes(n_layers, n_heads, n, width, 1, light, layers_kept, maps, slopes_only) > MAX_PROBE_BYTES:
        need = probe_bytes(n_layers, n_heads, n, width, 1, light, layers_kept, maps, slopes_only)
        raise ValueError(f"the probe of {n_layers} layers x {n_heads} heads at n = {n}, width {width} needs about "
                         f"{need / 2**20:.0f} MiB for one sequence, above its limit {MAX_PROBE_BYTES / 2**20:.0f} MiB; "
                         f"lower n (--n), or the layers or width (--layers, --d)")
    low, high = 1, chunk
    while low < high:  # bytes grow with the batch: bisect
        mid = (low + high + 1) // 2
        if probe_bytes(n_layers, n_heads, n, width, mid, light, layers_kept, maps, slopes_only) <= MAX_PROBE_BYTES:
            low = mid
        else:
            high = mid - 1
    return low


#: the time model of :func:`lnrecency.probe_model` on a transformers model (the forward pass and the probe's sums,
#: no load): seconds = S (FLOP x forward FLOPs + L (PER_LAYER + CELL H n^2 + CUBE n^3 [not slopes only]
#: + MAP_CELL H n^2 [maps])). Fitted on this project's 2-core machine (benchmarks/bench_probe_cost.py, the least of
#: three runs each). FLOP from SmolLM2-135M's forward through the tap (32 windows of n = 64, 4.4e11 FLOPs, at an
#: earlier load; the plain forward now measures 2.21 s, 5.0e-12 a FLOP, so FLOP errs high by a fifth there). CELL (a
#: head's float64 row slopes and both head means, per cell) and CUBE (the layer RP and the two rollouts, per n^3)
#: refitted 2026-11-29 after the sums were made a cached piece at a time (they were 5.0e-9 and 1.5e-9: the estimate
#: then came to 1.8 times the measured time of the 32-layer, 32-head model built small and 3.4 times at n = 256), on
#: the five rows of the full benchmark then (before the head-size-64 case): 0.99-1.14 of the measured times in the
#: run after the refit (benchmarks/probe_cost.json, "full", load average 1.3-1.55), 1.02-1.19 in the latest quick
#: run ("quick"). MAP_CELL (maps=True's per-head maps, unchanged) is not in the benchmark. The machine is shared: the
#: probe also prints the whole probe's time at its own rate after its second step
ENGINE_COST = {"FLOP": 6.0e-12, "PER_LAYER": 1.0e-4, "CELL": 3.5e-9, "CUBE": 1.2e-10, "MAP_CELL": 4.0e-9}


#: above this n the probe of a transformers model measures the slopes, sink and rollout only (RP counts key triples,
#: O(n^3) a row set); slopes_only= overrides it
SLOPES_ONLY_ABOVE = 256


def forward_flops(parameters: int, n_layers: int, n_heads: int, width: int, n: int) -> float:
    """FLOPs of one window of n tokens through a model of ``parameters`` weights (their matmuls, 2 a weight and
    token) and its attention (q k^T and P V: 4 L n^2 width)."""
    return 2.0 * parameters * n + 4.0 * n_layers * n * n * width


def engine_seconds(parameters: int, n_layers: int, n_heads: int, width: int, n: int, sequences: int,
                   slopes_only: bool = False, maps: bool = False) -> float:
    """The estimated time of one probe of a transformers model by :func:`lnrecency.probe_model` (:data:`ENGINE_COST`),
    the model's load not included."""
    c = ENGINE_COST
    per_layer = c["PER_LAYER"] + c["CELL"] * n_heads * n * n + (0.0 if slopes_only else c["CUBE"] * n ** 3) \
        + (c["MAP_CELL"] * n_heads * n * n if maps else 0.0)
    return sequences * (c["FLOP"] * forward_flops(parameters, n_layers, n_heads, width, n) + n_layers * per_layer)


def check_engine_time(model, settings, n_layers: int, n_heads: int, width: int, slopes_only: bool,
                      maps: bool = False) -> float:
    """:func:`engine_seconds` of ``model`` (a torch module) under ``settings``, refused above the time limit
    (``max_seconds``, default :data:`MAX_SECONDS`); returns the estimate."""
    from lnrecency.runtime.timelimit import refusal, time_limit

    params = int(sum(p.numel() for name, p in model.named_parameters()  # the blocks' weights: the input embedding
                     if not any(k in name for k in ("embed_tokens", "wte", "lm_head"))))  # is a lookup, the output
    # layer runs on the last position only
    seconds = engine_seconds(params, n_layers, n_heads, width, settings.n, settings.sequences, slopes_only, maps)
    if seconds > time_limit(MAX_SECONDS):
        said = refusal(f"the probe of {settings.sequences} sequences at n = {settings.n} ({n_layers} layers x "
                       f"{n_heads} heads, width {width})", seconds, time_limit(MAX_SECONDS), "lower sequences or n")
        raise ValueError(str(said).replace("with --max-seconds", "with max_seconds (--max-seconds on the command "
                                                                 "line)"))
    return seconds


class Progress:
    """A tqdm bar where stderr is a terminal; else one line on stderr about every tenth of the sequences, with the
    time so far and the time left at the rate so far. After the second step, the time of the whole probe at that
    step's rate (``estimate``; a line on stderr with ``on``): measured on this machine as it is loaded now, after
    the first step's one-time costs (the first forward pass allocates what later ones reuse)."""

    def __init__(self, total: int, on: bool) -> None:
        import sys
        import time

        self.total, self.on, self.t0, self.next = total, on, time.perf_counter(), max(1, total // 10)
        self.tty = on and sys.stderr.isatty()
        self.bar = None
        if self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc="probe", unit="seq", leave=False)
        self.done, self.estimate, self.last = 0, None, self.t0

    def update(self, done: int) -> None:
        import sys
        import time

        now = time.perf_counter()
        if self.estimate is None and (self.done or done == self.total):  # the second step: the first one warmed up
            step = now - self.last
            self.estimate = now - self.t0 + step / max(done - self.done, 1) * (self.total - done)
            if self.on and done < self.total:
                print(f"probe: estimated {self.estimate:.3g} s in all (sequences {self.done + 1}-{done} of "
                      f"{self.total} took {step:.2g} s)", file=sys.stderr, flush=True)
        self.last = now
        if self.bar is not None:
            self.bar.update(done - self.done)
        elif self.on and (done >= self.next or done == self.total):
            spent = time.perf_counter() - self.t0
            left = spent / done * (self.total - done)
            print(f"probe: {done}/{self.total} sequences, {spent:.1f} s, about {left:.0f} s left", file=sys.stderr,
                  flush=True)
            self.next = done + max(1, self.total // 10)
        self.done = done

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
