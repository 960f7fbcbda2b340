"""Seed 003's experiments on small trained decoders: vanishing attention-output variance, the hidden-state
shift it causes, and a LayerNorm right after attention (settings:
:class:`lnrecency.experiments.studies.seeds_config.Seed003Settings`).

Per (task, architecture, training seed), trained at length L and tested at lengths f L (f in
``test_factors``) on ``test_sequences`` fresh sequences each, all read at the last position (where the
task's answer is predicted):

* **attention-output variance**: per layer, the variance over sequences of each coordinate of the attention
  output W_O (P V) *before* any post-attention LayerNorm, averaged over coordinates; beside it the mean over
  heads and sequences of sum_k P_ik^2 (the parameter-free identity of claim C8: for uncorrelated value
  vectors of equal variance the output variance is proportional to it). ``variance_slope``: the log-log
  slope of the layer-1 variance against the test length.
* **hidden-state shift**: the variance (mean over coordinates) of the residual stream entering layer 2 at the
  last position; ``shift``: |log(variance at f L / variance at L)| per f (0 at f = 1).
* **accuracy** of the task's answer, with its binomial SE.
"""
from __future__ import annotations

from dataclasses import asdict

import numpy as np
import torch

from lnrecency.experiments.decoders.decoder import Decoder, build
from lnrecency.experiments.decoders.tasks import batch
from lnrecency.experiments.decoders.train import deterministic, train
from lnrecency.experiments.studies.seeds_config import Seed003Settings, run_cached, runs_of, select

__all__ = ["run_seed003", "measure", "select", "TEST_SEED"]

TEST_SEED = 20030


def measure(model: Decoder, st: Seed003Settings, task: str, seed: int) -> dict:
    """The measurements above at every test length."""
    out = {"lengths": [], "accuracy": [], "accuracy_se": [], "variance": [], "sum_p2": [], "stream_variance": []}
    for f in st.test_factors:
        n = st.length(task, f)
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([TEST_SEED, seed, n])))
        toks, tg = batch(task, n, st.test_sequences, st.vocab, rng)
        with torch.no_grad():
            logits, traces = model(torch.from_numpy(toks), trace=True)
            raws = [model.blocks[q].attn.o(tr.head_out.transpose(1, 2).reshape(len(toks), n, -1))[:, -1].double()
                    for q, tr in enumerate(traces)]
        correct = (logits[:, -1].argmax(-1).numpy() == tg[:, -1]).astype(float)
        var, p2 = [], []
        for tr, raw in zip(traces, raws):
            var.append(float(raw.var(dim=0, unbiased=True).mean()))
            p2.append(float((tr.weights[:, :, -1].double() ** 2).sum(-1).mean()))
        out["lengths"].append(n)
        out["accuracy"].append(float(correct.mean()))
        out["accuracy_se"].append(float(correct.std(ddof=1) / np.sqrt(len(correct))))
        out["variance"].append(var)
        out["sum_p2"].append(p2)
        out["stream_variance"].append(float(traces[0].out[:, -1].double().var(dim=0, unbiased=True).mean()))
    v1 = np.array([v[0] for v in out["variance"]])
    out["variance_slope"] = float(np.polyfit(np.log(out["lengths"]), np.log(v1), 1)[0])
    p1 = np.array([p[0] for p in out["sum_p2"]])
    out["sum_p2_slope"] = float(np.polyfit(np.log(out["lengths"]), np.log(p1), 1)[0])
    base = out["stream_variance"][0]
    out["shift"] = [float(abs(np.log(v / base))) for v in out["stream_variance"]]
    return out


def run_one(st: Seed003Settings, task: str, arch: str, seed: int) -> dict:
    """Train one model and measure it at the end and at 1/4 and 1/2 of training (a worker's job)."""
    res = train(st.decoder(arch), st.training(task, seed), snapshots=True)
    with deterministic(st.threads):
        rec = measure(res.model, st, task, seed)
    out = {"task": task, "arch": arch, "seed": seed, "settings": asdict(st), "seconds": res.seconds,
           "log": res.log, **rec, "stages": {}}
    states = {step: state for step, _, state in res.snapshots}
    every = st.training(task, seed).eval_every
    for name, frac in (("quarter", 0.25), ("half", 0.5)):
        step = int(round(frac * res.log[-1]["step"] / every)) * every
        model = build(st.decoder(arch), seed)
        model.load_state_dict(states[step])
        model.eval()
        with deterministic(st.threads):
            out["stages"][name] = {"step": step, **measure(model, st, task, seed)}
    return out


def run_seed003(st: Seed003Settings, *, use_cache: bool = True, progress: bool = False,
                workers: int | None = None, scheduler: str = "local") -> list[dict]:
    """Every (task, architecture, seed) record (trained in parallel workers, or read from the cache)."""
    return run_cached("seed003", st, runs_of("seed003", st), run_one, use_cache=use_cache, progress=progress,
                      workers=workers, scheduler=scheduler)
