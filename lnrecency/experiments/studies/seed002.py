"""Seed 002's experiments on a small trained model: an induction head's recency and its cause.

Per training seed (settings: :class:`lnrecency.experiments.studies.seeds_config.Seed002Settings`):

* **induction head**: the layer-1 head with the largest induction score (mean attention from the second copy
  of a repeated random sequence to the token after the current token's first occurrence); it must reach
  ``threshold`` for the experiments below to be about an induction head.
* **Figure 1**: sequences <BOS> R [A][B] R.. [A][C] R.. [A] of 13 tokens, every token distinct except the
  three [A] (seed 002's layout), the second [A] at positions 4..10; the model's probability of [B] and of [C]
  after the last [A], mean and SE over ``samples`` random sequences per position.
* **Figure 3**: the induction head's attention from the last [A] to [B] (position 3) and to [C].
* **Figures 4-5**: the induction head's attention averaged over random sequences of ``short`` and ``long``
  tokens (token 0 = BOS at position 0, the others uniform over the content tokens). Recency statistic: the
  least-squares slope of the average attention weight against the key k = 1..i-1 (BOS and the query itself
  left out), averaged over the rows i >= 3.
* **Figure 6**: the same at ``long`` tokens with token embeddings only (no position embeddings) and every
  layer-0 head ablated (output 0) except one, for each choice of the kept head.
* **Mechanism**: each layer-0 head's output z_i = sum_k P_ik v_k (before W_O) on random sequences of ``long``
  tokens: the measured E|z_i|^2 beside the law for an average of uncorrelated vectors, E sum_k P_ik^2 |v_k|^2
  (cross terms dropped; exact when the v_k are uncorrelated with mean 0), from the measured weights and value
  vectors; the log-log slopes of both against the number of tokens averaged (i + 1), and each head's mean
  self-attention P_ii (seed 002's exception: a head that attends strongly to itself shrinks less).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import ClassVar

import numpy as np
import torch

from lnrecency.experiments.decoders.decoder import Decoder, build
from lnrecency.experiments.decoders.train import deterministic, train
from lnrecency.experiments.probes.probe_decoder import induction_score
from lnrecency.experiments.studies.seeds_config import Seed002Settings, run_cached

__all__ = ["run_seed002", "figure1_sequences", "POSITIONS", "SEQ_LEN", "attention_slope", "log_slope",
           "uncorrelated_law"]

SEQ_LEN = 13  # seed 002's sequences: positions 0..12
POSITIONS = tuple(range(4, 11))  # the second [A]
FIRST_A, B_POS, LAST = 2, 3, 12
PROBE_SEED = 20020


def figure1_sequences(pos2: int, size: int, vocab: int, rng: np.random.Generator) -> tuple[np.ndarray, int, int]:
    """(tokens (size, 13), index of [B], index of [C]): <BOS> at 0, [A] at 2, [B] at 3, [A] at ``pos2``, [C]
    at pos2 + 1, [A] at 12; every other position a random token; all tokens distinct except the [A]s."""
    if pos2 not in POSITIONS:
        raise ValueError(f"the second [A] must be at a position in {POSITIONS}; got {pos2!r}")
    if vocab - 2 < SEQ_LEN:
        raise ValueError(f"vocab must be at least {SEQ_LEN + 2} for distinct tokens; got {vocab}")
    perm = np.argsort(rng.random((size, vocab - 2)), axis=1)[:, :SEQ_LEN - 2] + 2  # distinct content tokens
    a, b, c, rest = perm[:, 0], perm[:, 1], perm[:, 2], perm[:, 3:]
    toks = np.zeros((size, SEQ_LEN), dtype=np.int64)
    fixed = {FIRST_A: a, B_POS: b, pos2: a, pos2 + 1: c, LAST: a}
    free = [p for p in range(1, SEQ_LEN) if p not in fixed]
    for p, col in fixed.items():
        toks[:, p] = col
    toks[:, free] = rest[:, :len(free)]
    return toks, b, c


def attention_slope(att: np.ndarray, first_row: int = 3) -> float:
    """Mean over rows i >= first_row of the least-squares slope of att[i, k] against k = 1..i-1."""
    slopes = []
    for i in range(first_row, att.shape[0]):
        k = np.arange(1, i, dtype=float)
        y = att[i, 1:i]
        kc = k - k.mean()
        slopes.append(float((kc * (y - y.mean())).sum() / (kc * kc).sum()))
    return float(np.mean(slopes))


def log_slope(values: np.ndarray, start: int = 1) -> float:
    """Least-squares slope of log(values[i]) against log(i + 1) over i >= start."""
    i = np.arange(start, len(values))
    return float(np.polyfit(np.log(i + 1.0), np.log(values[start:]), 1)[0])


def _random_sequences(n: int, size: int, vocab: int, seed: int, stream: int) -> torch.Tensor:
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([PROBE_SEED, seed, stream])))
    toks = rng.integers(2, vocab, size=(size, n))
    toks[:, 0] = 0
    return torch.from_numpy(toks)


def _mean_attention(model: Decoder, toks: torch.Tensor, head: int, **kw) -> np.ndarray:
    with torch.no_grad():
        _, tr = model(toks, trace=True, **kw)
    return tr[1].weights[:, head].double().mean(0).numpy()


def _figure1(model: Decoder, st: Seed002Settings, head: int, seed: int) -> dict:
    out = {"pos2": list(POSITIONS), "p_b": [], "p_b_se": [], "p_c": [], "p_c_se": [], "att_b": [], "att_b_se": [],
           "att_c": [], "att_c_se": []}
    for pos2 in POSITIONS:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([PROBE_SEED, seed, 1, pos2])))
        toks, b, c = figure1_sequences(pos2, st.samples, st.vocab, rng)
        with torch.no_grad():
            logits, tr = model(torch.from_numpy(toks), trace=True)
        prob = torch.softmax(logits[:, LAST].double(), dim=-1).numpy()
        rows = np.arange(st.samples)
        att = tr[1].weights[:, head, LAST].double().numpy()
        for key, x in (("p_b", prob[rows, b]), ("p_c", prob[rows, c]), ("att_b", att[:, B_POS]),
                       ("att_c", att[:, pos2 + 1])):
            out[key].append(float(x.mean()))
            out[key + "_se"].append(float(x.std(ddof=1) / np.sqrt(len(x))))
    return out


def _mechanism(model: Decoder, st: Seed002Settings, seed: int) -> dict:
    toks = _random_sequences(st.long, st.random_sequences, st.vocab, seed, 3)
    with torch.no_grad():
        _, tr = model(toks, trace=True)
    t0 = tr[0]
    w = t0.weights.double()  # (B, H, n, n)
    z2 = (t0.head_out.double() ** 2).sum(-1)  # (B, H, n): |z_i|^2
    law = uncorrelated_law(w, t0.values.double())
    heads = []
    for h in range(st.n_heads):
        meas, pred = z2[:, h].mean(0).numpy(), law[:, h].mean(0).numpy()
        heads.append({"head": h, "measured": meas.tolist(), "law": pred.tolist(),
                      "measured_slope": log_slope(meas), "law_slope": log_slope(pred),
                      "self_attention": float(torch.diagonal(w[:, h], dim1=-2, dim2=-1)[:, 1:].mean())})
    return {"n": st.long, "heads": heads}


def uncorrelated_law(weights: torch.Tensor, values: torch.Tensor) -> torch.Tensor:
    """sum_k P_ik^2 |v_k|^2 per (..., i): |sum_k P_ik v_k|^2 without its cross terms, exact when the v_k are
    orthogonal (weights (..., n, n), values (..., n, d_head))."""
    return torch.einsum("...ik,...k->...i", weights ** 2, (values ** 2).sum(-1))


@dataclass(frozen=True)
class Seed002Measurement:
    """Every statistic of S2.1-S2.7 on one model (:func:`measure`), in the order its cache record holds them."""

    induction_score: float
    induction_scores: list  # per layer, per head
    head: int  # the induction head: the layer-1 head of largest induction score on periods within training
    figure1: dict
    attention_short: list
    attention_long: list
    slope_short: float
    slope_long: float
    ablated_slopes: list
    ablated_map: list
    ablated_kept: int
    mechanism: dict

    #: the large arrays of a measurement, kept at the end of training only (the figures)
    MAPS: ClassVar[tuple[str, ...]] = ("attention_short", "attention_long", "ablated_map", "induction_scores")

    def record(self, *, maps: bool = True) -> dict:
        """The fields as the cache record's entries (without :data:`MAPS` unless ``maps``)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if maps or f.name not in self.MAPS}


def measure(model: Decoder, st: Seed002Settings, seed: int) -> Seed002Measurement:
    """Every statistic of S2.1-S2.7 on ``model`` (its induction head: the layer-1 head of largest induction
    score on periods within training)."""
    with deterministic(st.threads), torch.no_grad():
        _, per = induction_score(model, n=st.n_train, sequences=256, seed=seed)  # periods within training
        head = int(np.argmax(per[1]))
        short = _mean_attention(model, _random_sequences(st.short, st.random_sequences, st.vocab, seed, 2), head)
        long_toks = _random_sequences(st.long, st.random_sequences, st.vocab, seed, 2)
        long = _mean_attention(model, long_toks, head)
        ablated = [attention_slope(_mean_attention(model, long_toks, head, positions=False, keep_heads={0: [k]}))
                   for k in range(st.n_heads)]
        kept = int(np.argmin(np.abs(np.asarray(ablated) - np.median(ablated))))  # the median kept head (shown)
        ablated_map = _mean_attention(model, long_toks, head, positions=False, keep_heads={0: [kept]})
        return Seed002Measurement(
            induction_score=float(per[1][head]), induction_scores=per, head=head,
            figure1=_figure1(model, st, head, seed), attention_short=short.tolist(), attention_long=long.tolist(),
            slope_short=attention_slope(short), slope_long=attention_slope(long), ablated_slopes=ablated,
            ablated_map=ablated_map.tolist(), ablated_kept=kept, mechanism=_mechanism(model, st, seed))


def stage_steps(st: Seed002Settings | object, last: int) -> dict:
    """The trajectory's stages: the evaluations at 1/4 and 1/2 of the training length."""
    every = st.training(st.seeds[0]).eval_every
    return {name: int(round(frac * last / every)) * every for name, frac in (("quarter", 0.25), ("half", 0.5))}


def run_one(st: Seed002Settings, seed: int) -> dict:
    """Train one seed's model and measure it at the end and at 1/4 and 1/2 of training (a worker's job)."""
    res = train(st.decoder(), st.training(seed), snapshots=True)
    rec = {"seed": seed, "settings": asdict(st), "log": res.log, "seconds": res.seconds,
           **measure(res.model, st, seed).record()}
    states = {step: state for step, _, state in res.snapshots}
    rec["stages"] = {}
    for name, step in stage_steps(st, res.log[-1]["step"]).items():
        model = build(st.decoder(), seed)
        model.load_state_dict(states[step])
        model.eval()
        rec["stages"][name] = {"step": step, **measure(model, st, seed).record(maps=False)}
    return rec


def run_seed002(st: Seed002Settings, *, use_cache: bool = True, progress: bool = False,
                workers: int | None = None, scheduler: str = "local") -> list[dict]:
    """Every training seed's record (trained in parallel workers, or read from the cache)."""
    return run_cached("seed002", st, [(seed,) for seed in st.seeds], run_one, use_cache=use_cache,
                      progress=progress, workers=workers, scheduler=scheduler)
