"""The probe on our own decoders: inputs (the identity configuration's Gaussian draws, or tokens of the task or
random tokens), the traces the hooks record, the model's assumptions (norms, cosines, QK distance) and the
induction score."""
from __future__ import annotations

import dataclasses
import math
from typing import Callable, Iterable

import numpy as np
import torch

from lnrecency.experiments.probes.probe import THEORY_INPUTS, ProbeResult, ProbeSettings, check_probe_cost, probe
from lnrecency.experiments.probes.probe_settings import check_first_share  # noqa: F401 (its home before)


# ------------------------------------------------------------------------------------------------------
# Decoders of lnrecency.experiments.decoders (trained or identity)
# ------------------------------------------------------------------------------------------------------
def _identity_inputs(cfg, settings: ProbeSettings) -> Callable[[int, int], torch.Tensor]:
    """The theory's embeddings at width d (numerics.samplers, direct representation, the Monte Carlo's
    stream for this seed): sequence b of the stream is the Monte Carlo's draw b."""
    from lnrecency.numerics.samplers import Representation, draw_range, embed

    rep = Representation(settings.n, cfg.d_model, "direct")

    def inputs(start: int, stop: int) -> torch.Tensor:
        return torch.from_numpy(embed(draw_range(rep, settings.seed, start, stop), cfg.identity, cfg.d_model))
    return inputs


def _token_inputs(model, settings: ProbeSettings, task: str | None) -> Callable[[int, int], torch.Tensor]:
    from lnrecency.experiments.decoders.tasks import batch, bos_response_tokens, random_tokens

    cfg = model.cfg
    if settings.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={settings.n}")

    def inputs(start: int, stop: int) -> torch.Tensor:
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([settings.seed, start])))
        if settings.tokens in ("task", "task-no-bos"):
            if task is None:
                raise ValueError(f"--tokens {settings.tokens} needs a model trained on a task")
            if settings.tokens == "task":
                toks, _ = batch(task, settings.n, stop - start, cfg.vocab, rng)
            else:  # the same task without its BOS: one token longer, BOS dropped
                toks = batch(task, settings.n + 1, stop - start, cfg.vocab, rng)[0][:, 1:]
        elif settings.tokens == "bos-response":
            toks = bos_response_tokens(settings.n, stop - start, cfg.vocab, rng)
        else:
            toks = random_tokens(settings.n, stop - start, cfg.vocab, rng)
        return torch.from_numpy(toks)
    return inputs


def _trace_dicts(traces: Iterable) -> list:
    return [{"logits": t.logits, "weights": t.weights, "values": t.values, "head_out": t.head_out,
             "normed": t.normed, "attn_out": t.attn_out, "mid": t.mid, "mlp_in": t.mlp_in, "out": t.out}
            for t in traces]


def assumptions_of(model, inputs: torch.Tensor | None = None) -> dict:
    """Distances from the theory's assumptions: per layer and head, d(W_Q^T W_K) = ||Sym - c I||_F / ||Sym||_F
    (Sym the symmetric part, c = tr(Sym) / d; 0 for a multiple of I; a rank-r matrix is at least
    sqrt(1 - r/d) away, ``rank_floor``) and the antisymmetric share ||Anti||_F / ||M||_F; the embeddings'
    anisotropy as the mean cosine of distinct token embeddings and of distinct positions' inputs."""
    cfg = model.cfg
    if cfg.is_identity:
        return {"identity": True, "w_qk_distance": 0.0, "w_qk_antisymmetric": 0.0, "w_o": False, "mlp": False,
                "positions": "none", "trained": False, "alpha_config": float(cfg.identity.alpha),
                "alpha_inputs": mean_cosine(inputs) if inputs is not None else None}
    out = {"identity": False, "w_o": True, "mlp": cfg.mlp, "positions": cfg.positions,
           "rank_floor": math.sqrt(1.0 - cfg.head_dim / cfg.d_model), "layers": []}
    dh = cfg.head_dim
    for l0, block in enumerate(model.blocks):
        wq, wk = block.attn.q.weight.detach().double(), block.attn.k.weight.detach().double()
        heads = []
        for h in range(cfg.n_heads):
            mq, mk = wq[h * dh:(h + 1) * dh], wk[h * dh:(h + 1) * dh]
            heads.append(qk_distance(mq.T @ mk))
        out["layers"].append({"layer": l0 + 1, "heads": heads})
    emb = model.tok.weight.detach().double()
    out["alpha_tokens"] = mean_cosine(emb[None])
    if inputs is not None:
        out["alpha_inputs"] = mean_cosine(inputs)
    return out


def qk_distance(m: torch.Tensor) -> dict:
    sym, anti = (m + m.T) / 2, (m - m.T) / 2
    d = m.shape[0]
    c = torch.trace(sym) / d
    norm = torch.linalg.norm(sym)
    return {"distance": float(torch.linalg.norm(sym - c * torch.eye(d, dtype=m.dtype)) / norm) if norm > 0 else None,
            "antisymmetric": (float(torch.linalg.norm(anti) / torch.linalg.norm(m))
                              if torch.linalg.norm(m) > 0 else None),
            "scale": float(c)}


def mean_cosine(x: torch.Tensor) -> float:
    """Mean cosine between distinct rows of each x[b] (B, n, d), averaged over b."""
    x = x.to(torch.float64)
    u = x / torch.linalg.norm(x, dim=-1, keepdim=True).clamp_min(1e-300)
    g = u @ u.transpose(-1, -2)
    n = g.shape[-1]
    return float(((g.sum((-1, -2)) - torch.diagonal(g, dim1=-2, dim2=-1).sum(-1)) / (n * (n - 1))).mean())


def induction_regions(n: int, bos: bool = True) -> dict:
    """The induction task's row regions (1-based rows): the first copy of r and the second (with its BOS first,
    [BOS, r, r, ...]; without it, [r, r, ...])."""
    m = (n - 1) // 2 if bos else n // 2
    first = 2 if bos else 1
    return {"first copy": list(range(first, first + m)), "second copy": list(range(first + m, n + 1))}


def probe_decoder(model, settings: ProbeSettings, *, task: str | None = None, info: dict | None = None,
                  progress: bool = False, light: bool = False,
                  inputs: Callable[[int, int], torch.Tensor] | None = None,
                  first_share: dict | None = None) -> ProbeResult:
    """:func:`probe` on a decoder of :mod:`lnrecency.experiments.decoders` (trained or identity); ``inputs``:
    the token sequences (start, stop) -> (stop - start, n), where the model's inputs are not a generated task's
    (a ``train lm`` model: :func:`lnrecency.experiments.text.lm_inputs.lm_inputs`). ``first_share``: the sink
    ablation, {layer (1-based): a share in [0, 1) or "mean"} (:func:`check_first_share`,
    :func:`lnrecency.experiments.decoders.decoder.fix_first_share`), stated in the result's model info."""
    from lnrecency.experiments.decoders.train import deterministic

    cfg = model.cfg
    if cfg.is_identity:  # the theory's Gaussian inputs: no tokens, no BOS (every key enters the slopes)
        settings = dataclasses.replace(settings, tokens=THEORY_INPUTS)
    if inputs is not None and settings.n > cfg.context:
        raise ValueError(f"n must be <= the model's context {cfg.context}; got n={settings.n}")
    make = (_identity_inputs(cfg, settings) if cfg.is_identity else inputs if inputs is not None
            else _token_inputs(model, settings, task))

    fixed = {q - 1: v for q, v in check_first_share(first_share, cfg.n_layers).items()}

    def traces_of(start: int, stop: int) -> list:
        x = make(start, stop)
        with torch.no_grad():
            _, tr = (model(embeds=x, trace=True, first_share=fixed) if cfg.is_identity
                     else model(x, trace=True, first_share=fixed))
        return _trace_dicts(tr)

    check_probe_cost(cfg.n_layers, cfg.n_heads, settings.n, cfg.d_model, settings, light)  # before any input
    regions = None
    if task == "induction" and settings.tokens in ("task", "task-no-bos") and inputs is None:
        regions = induction_regions(settings.n, bos=settings.tokens == "task")
    with deterministic(1):
        first = make(0, min(settings.chunk, settings.sequences))
        with torch.no_grad():
            inputs = first if cfg.is_identity else model.embed(first)
        assumptions = assumptions_of(model, inputs)
        info = {"kind": "identity" if cfg.is_identity else "lnrecency-decoder", "config": cfg.as_dict(),
                **(info or {})}
        if fixed:
            info["sink_ablation"] = {str(q + 1): v for q, v in fixed.items()}
        return probe(traces_of, n_layers=cfg.n_layers, n_heads=cfg.n_heads, settings=settings, model_info=info,
                     assumptions=assumptions, progress=progress, light=light, width=cfg.d_model, regions=regions,
                     logits_note=("identity: S_ij = lam <N(h_i), N(h_j)> (the theory's score)" if cfg.is_identity
                                  else "attention logits S = (W_Q y_i).(W_K y_j) / sqrt(d_head) (exact)"))


def induction_score(model, *, n: int = 33, sequences: int = 128, seed: int = 0) -> tuple[float, list]:
    """The standard induction score on repeated random sequences [BOS, r_1..r_m, r_1..r_m]: per head, the mean
    attention weight from a position of the second copy to the token after that token's first occurrence
    (offset m - 1 back). Returns (max over heads, [[per head] per layer])."""
    from lnrecency.experiments.decoders.tasks import batch

    cfg = model.cfg
    n = min(n, cfg.context)
    m = (n - 1) // 2
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, 7])))
    toks, _ = batch("induction", n, sequences, cfg.vocab, rng)
    with torch.no_grad():
        _, tr = model(torch.from_numpy(toks), trace=True)
    q = np.arange(m + 1, 2 * m + 1)  # 0-based query positions of the second copy
    key = q - m + 1
    per = [[float(t.weights[:, h, q, key].mean()) for h in range(cfg.n_heads)] for t in tr]
    return max(max(p) for p in per), per
