"""Training throughput of `lnrecency train` (lnrecency.experiments.decoders.train.train) against a plain PyTorch loop
over the
same model, data and optimiser, in one run: tokens per second of each, their ratio (goal >= 0.8), the model
FLOP/s of each against a torch float32 matmul measured in the same run on one thread (the machine's practical
peak for this work), and the process's peak resident memory.

Model FLOPs per token (training): 6 x (weights of every linear map: attention W_Q, W_K, W_V, W_O, the MLP,
the unembedding) for the forward and backward matrix products, plus 6 x layers x n x d for the causal
attention products Q K^T and P V (forward 2 x 2 x n x d / 2 per token and layer for the causal half, backward
twice that); normalisations, softmax and the optimiser are not counted (they are memory-bound).

The plain loop: AdamW, zero_grad / forward / cross-entropy / backward / step, nothing else (no warm-up
schedule, no gradient clipping, no held-out evaluation, no progress bar). Both use one intra-op thread (the
project's deterministic default) and the same batches; each is timed over ``--steps`` steps after 20
warm-up steps, best of ``--repeats``.

    python3 benchmarks/bench_train.py [--steps 300] [--repeats 3] [--layers 2] [--width 64] [--mlp]
    python3 benchmarks/bench_train.py --grouped 8 [--steps 60] [--mlp]

``--grouped K`` (issue 40: train the seeds of one configuration together): the thesis-on-text configuration (a
language model on the default corpus, BOS + 63 tokens, vocabulary 2049, width 64) trained as K seeds in one
grouped model (lnrecency.experiments.decoders.grouped: stacked weights, batched products, the output layer's
loss in row blocks, per-seed clipping) against the same K seeds trained one after another by lnrecency train,
in the same run, one thread each: tokens/s of both and their ratio (the issue's goal: >= 2).
"""
from __future__ import annotations

import argparse
import resource
import time

import numpy as np
import torch

from lnrecency.experiments.decoders.decoder import build
from lnrecency.experiments.decoders.decoder_config import DecoderConfig
from lnrecency.experiments.decoders.tasks import batch
from lnrecency.experiments.decoders.train import TrainSettings, deterministic, train


def plain(cfg: DecoderConfig, st: TrainSettings) -> float:
    """Seconds for st.steps steps of the plain loop (after 20 untimed steps)."""
    with deterministic(st.threads):
        model = build(cfg, st.seed)
        opt = torch.optim.AdamW(model.parameters(), lr=st.lr, betas=(0.9, 0.98))
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([st.seed, 1])))
        start = None
        for step in range(st.steps + 20):
            if step == 20:
                start = time.perf_counter()
            tokens, targets = batch(st.task, st.n, st.batch, cfg.vocab, rng)
            logits, _ = model(torch.from_numpy(tokens))
            loss = torch.nn.functional.cross_entropy(logits.reshape(-1, cfg.vocab),
                                                     torch.from_numpy(targets).reshape(-1), ignore_index=-1)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
        return time.perf_counter() - start


def ours(cfg: DecoderConfig, st: TrainSettings) -> float:
    """Seconds for st.steps steps of lnrecency's loop: a run of steps + 20 minus a run of 20."""
    long = train(cfg, st.__class__(**{**st.__dict__, "steps": st.steps + 20})).seconds
    short = train(cfg, st.__class__(**{**st.__dict__, "steps": 20})).seconds
    return long - short


def model_flops_per_token(cfg: DecoderConfig, n: int) -> float:
    model = build(cfg, 0)
    linear = sum(m.weight.numel() for m in model.modules() if isinstance(m, torch.nn.Linear))
    return 6.0 * linear + 6.0 * cfg.n_layers * n * cfg.d_model


def matmul_peak(size: int = 512, repeats: int = 20) -> float:
    """FLOP/s of a float32 size x size matmul on one thread (best of ``repeats``)."""
    with deterministic(1):
        a, b = torch.randn(size, size), torch.randn(size, size)
        best = float("inf")
        for _ in range(repeats):
            start = time.perf_counter()
            a @ b
            best = min(best, time.perf_counter() - start)
    return 2.0 * size ** 3 / best


def grouped_section(k: int, steps: int, mlp: bool) -> None:
    """K seeds grouped against K separate runs of lnrecency train (the thesis-on-text language model)."""
    from lnrecency.experiments.decoders.grouped import GroupedDecoder, clip_per_seed
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings, corpus_data

    tt = TextThesisSettings()
    data = corpus_data(None)
    cfg = tt.decoder("mlp2" if mlp else "attn2", "layernorm", data.vocab)
    st = TrainSettings(task="lm", steps=steps, batch=tt.batch, n=tt.n, lr=tt.lr, warmup=tt.warmup, eval_every=0)
    tokens = k * steps * st.batch * st.n
    t0 = time.perf_counter()
    for seed in range(k):
        train(cfg, st.__class__(**{**st.__dict__, "seed": seed}), data=data)
    separate = time.perf_counter() - t0
    with deterministic(1):
        model = GroupedDecoder(cfg, tuple(range(k)))
        opt = torch.optim.AdamW(model.parameters(), lr=st.lr, betas=(0.9, 0.98))
        rngs = [np.random.Generator(np.random.PCG64(np.random.SeedSequence([s, 1]))) for s in range(k)]
        t0 = time.perf_counter()
        for step in range(steps):
            for g in opt.param_groups:
                g["lr"] = st.lr * min(1.0, (step + 1) / max(st.warmup, 1))
            x, y = zip(*(data.train(st.n, st.batch, r) for r in rngs))
            loss = model.losses(torch.from_numpy(np.stack(x)), torch.from_numpy(np.stack(y))).sum()
            opt.zero_grad(set_to_none=True)
            loss.backward()
            clip_per_seed(list(model.parameters()))
            opt.step()
        grouped = time.perf_counter() - t0
    print(f"{k} seeds of {cfg.label()} on the default corpus, {steps} steps x {st.batch} x {st.n} tokens, 1 thread:")
    print(f"  {k} separate runs (lnrecency train): {tokens / separate:10.0f} tokens/s ({separate:.1f} s)")
    print(f"  one grouped model                : {tokens / grouped:10.0f} tokens/s ({grouped:.1f} s)")
    print(f"  ratio (grouped / separate): {separate / grouped:.2f}  (goal >= 2)")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--grouped", type=int, default=0, metavar="K", help="K seeds grouped against K separate runs")
    p.add_argument("--steps", type=int, default=300)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--width", type=int, default=64)
    p.add_argument("--mlp", action="store_true")
    a = p.parse_args()
    if a.grouped:
        grouped_section(a.grouped, a.steps, a.mlp)
        return
    cfg = DecoderConfig(vocab=64, d_model=a.width, n_layers=a.layers, n_heads=4, context=32, mlp=a.mlp)
    st = TrainSettings(task="induction", steps=a.steps, n=32, batch=32, eval_every=0)
    tokens = a.steps * st.batch * st.n
    t_plain = min(plain(cfg, st) for _ in range(a.repeats))
    t_ours = min(ours(cfg, st) for _ in range(a.repeats))
    flops = model_flops_per_token(cfg, st.n) * tokens
    mm = matmul_peak()
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"model: {cfg.label()}; {a.steps} steps x {st.batch} sequences x {st.n} tokens; 1 thread; best of "
          f"{a.repeats}")
    print(f"plain PyTorch loop : {tokens / t_plain:10.0f} tokens/s ({t_plain:.2f} s)")
    print(f"lnrecency train    : {tokens / t_ours:10.0f} tokens/s ({t_ours:.2f} s)")
    print(f"ratio (ours / plain): {t_plain / t_ours:.3f}  (goal >= 0.8)")
    print(f"model FLOP/s: ours {flops / t_ours / 1e9:.2f} GFLOP/s, plain {flops / t_plain / 1e9:.2f} GFLOP/s; "
          f"torch float32 512 x 512 matmul on 1 thread {mm / 1e9:.1f} GFLOP/s: ours at "
          f"{100 * flops / t_ours / mm:.0f}% of it")
    print(f"peak resident memory: {peak:.0f} MiB")


if __name__ == "__main__":
    main()
