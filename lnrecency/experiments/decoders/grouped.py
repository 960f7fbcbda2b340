"""K training seeds of one decoder configuration trained together, as one grouped model.

Every parameter of the K decoders is stacked along a leading seed axis; the forward pass runs all K with
batched matrix products (one op where K separate models would issue K small ones), and the loss is the sum
of the K per-seed losses, so the gradient of each seed's slice is that seed's own gradient. AdamW is
elementwise, so one optimiser over the stacked tensors is K independent AdamWs; gradient clipping is done
per seed (each seed's own norm). Each seed starts from ``build(cfg, seed)``'s weights and draws its own
batches, so a seed's run does not depend on which other seeds share its group (up to float rounding of the
batched kernels: deterministic on CPU, not bit-identical to a run alone).

Supported: trainable NoPE decoders, pre-normalisation (LayerNorm, RMSNorm or none), attention-only or with
MLP, residual stream on (the thesis-on-text configurations). :meth:`GroupedDecoder.export` returns seed k as an
ordinary :class:`lnrecency.experiments.decoders.decoder.Decoder` for the probe.
"""
from __future__ import annotations

import math

import torch
from torch import nn

from lnrecency.experiments.decoders.decoder import Decoder, build
from lnrecency.experiments.decoders.decoder_config import DecoderConfig

__all__ = ["GroupedDecoder", "clip_per_seed"]


class GroupedDecoder(nn.Module):
    def __init__(self, cfg: DecoderConfig, seeds: tuple[int, ...]):
        super().__init__()
        if cfg.is_identity or cfg.positions != "none" or cfg.placement != "pre" or not cfg.residual:
            raise ValueError("grouped training takes trainable NoPE decoders with pre-normalisation and a residual "
                             "stream")
        self.cfg, self.seeds = cfg, tuple(int(s) for s in seeds)
        states = [build(cfg, s).state_dict() for s in self.seeds]
        self.names = list(states[0])
        self.params = nn.ParameterDict({k.replace(".", "__"): nn.Parameter(torch.stack([st[k] for st in states]))
                                        for k in self.names})

    def p(self, name: str) -> torch.Tensor:
        return self.params[name.replace(".", "__")]

    def _norm(self, x: torch.Tensor, prefix: str) -> torch.Tensor:
        """(K, B, n, d): the pre-normalisation at ``prefix`` with each seed's own affine parameters."""
        norm, d = self.cfg.norm, x.shape[-1]
        if norm == "none":
            return x
        k = x.shape[0]
        w = self.p(f"{prefix}.weight").view(k, 1, 1, d)
        if norm == "layernorm":
            return nn.functional.layer_norm(x, (d,), eps=1e-5) * w + self.p(f"{prefix}.bias").view(k, 1, 1, d)
        return nn.functional.rms_norm(x, (d,), eps=1e-5) * w

    def _linear(self, x: torch.Tensor, name: str, bias: bool = False) -> torch.Tensor:
        k = x.shape[0]
        w = self.p(f"{name}.weight")  # (K, out, in)
        y = torch.matmul(x.reshape(k, -1, x.shape[-1]), w.transpose(1, 2)).reshape(*x.shape[:-1], w.shape[1])
        return y + self.p(f"{name}.bias").view(k, 1, 1, -1) if bias else y

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (K, B, n) -> next-token logits (K, B, n, vocab)."""
        return self._linear(self._norm(self.hidden(tokens), "final"), "head")

    def hidden(self, tokens: torch.Tensor) -> torch.Tensor:
        """tokens (K, B, n) -> the residual stream after the last block (K, B, n, d)."""
        cfg = self.cfg
        k, b, n = tokens.shape
        h, dh = cfg.n_heads, cfg.head_dim
        emb = self.p("tok.weight")  # (K, V, d)
        x = emb[torch.arange(k)[:, None, None], tokens]
        mask = torch.ones(n, n, dtype=torch.bool).tril()
        for q in range(cfg.n_layers):
            pre = f"blocks.{q}"
            y = self._norm(x, f"{pre}.pre")
            qs, ks, vs = (self._linear(y, f"{pre}.attn.{m}").view(k, b, n, h, dh).transpose(2, 3)
                          for m in ("q", "k", "v"))
            s = torch.matmul(qs, ks.transpose(-1, -2)) / math.sqrt(dh)
            w = torch.softmax(s.masked_fill(~mask, float("-inf")), dim=-1)
            a = torch.matmul(w, vs).transpose(2, 3).reshape(k, b, n, cfg.d_model)
            x = x + self._linear(a, f"{pre}.attn.o")
            if cfg.mlp:
                z = self._linear(self._norm(x, f"{pre}.pre2"), f"{pre}.mlp.0", bias=True)
                x = x + self._linear(nn.functional.gelu(z), f"{pre}.mlp.2", bias=True)
        return x

    def losses(self, tokens: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        """(K,) mean next-token cross-entropy of each seed on its own batch (tokens, targets: (K, B, n)), through
        :class:`HeadLoss` (the (K, B n, vocab) logits are never held whole)."""
        k = tokens.shape[0]
        hidden = self._norm(self.hidden(tokens), "final")
        return HeadLoss.apply(hidden.reshape(k, -1, hidden.shape[-1]), self.p("head.weight"), targets.reshape(k, -1))

    def export(self, q: int) -> Decoder:
        """Seed ``self.seeds[q]`` as an ordinary Decoder (eval mode), its weights copied out of the group."""
        model = Decoder(self.cfg)
        model.load_state_dict({name: self.p(name)[q].detach().clone() for name in self.names})
        return model.eval()


def clip_per_seed(params, max_norm: float = 1.0) -> torch.Tensor:
    """Scale each seed's slice of the gradients to a total norm of at most ``max_norm`` (as
    ``clip_grad_norm_`` does for one model); returns the K norms before clipping."""
    grads = [p.grad for p in params if p.grad is not None]
    k = grads[0].shape[0]
    norm = torch.sqrt(sum((g.reshape(k, -1).double() ** 2).sum(1) for g in grads))
    scale = torch.clamp(max_norm / (norm + 1e-6), max=1.0).to(grads[0].dtype)
    for g in grads:
        g.mul_(scale.view(k, *([1] * (g.dim() - 1))))
    return norm


#: rows of the output layer per step of :class:`HeadLoss` (K x rows x vocab float32 stays in cache)
HEAD_ROWS = 256


class HeadLoss(torch.autograd.Function):
    """Per seed, the mean cross-entropy of the output layer's logits z = h W^T against the targets, computed
    over :data:`HEAD_ROWS` rows at a time in both passes (the backward recomputes z rather than storing it):
    d loss / d z = (softmax(z) - onehot) / M. The same values as ``cross_entropy(h @ W.T)`` up to float
    rounding, without the (K, M, vocab) logits in memory (tests/experiments/test_grouped.py)."""

    @staticmethod
    def forward(ctx, h: torch.Tensor, w: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
        k, m, _ = h.shape
        lse = torch.empty(k, m, dtype=h.dtype)
        total = torch.zeros(k, dtype=torch.float64)
        wt = w.transpose(1, 2)
        for r in range(0, m, HEAD_ROWS):
            z = torch.bmm(h[:, r:r + HEAD_ROWS], wt)
            part = torch.logsumexp(z, -1)
            lse[:, r:r + HEAD_ROWS] = part
            total += (part - z.gather(2, targets[:, r:r + HEAD_ROWS, None])[..., 0]).double().sum(1)
        ctx.save_for_backward(h, w, targets, lse)
        return (total / m).to(h.dtype)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        h, w, targets, lse = ctx.saved_tensors
        k, m, _ = h.shape
        dh, dw = torch.empty_like(h), torch.zeros_like(w)
        wt = w.transpose(1, 2)
        scale = (grad / m).view(k, 1, 1)
        for r in range(0, m, HEAD_ROWS):
            hr = h[:, r:r + HEAD_ROWS]
            p = torch.exp(torch.bmm(hr, wt) - lse[:, r:r + HEAD_ROWS, None])
            p.scatter_add_(2, targets[:, r:r + HEAD_ROWS, None], torch.full_like(p[..., :1], -1.0))
            p.mul_(scale)
            dh[:, r:r + HEAD_ROWS] = torch.bmm(p, w)
            dw.baddbmm_(p.transpose(1, 2), hr)
        return dh, dw, None
