"""The probe's arithmetic on its running sums, one concept a function: the count of key triples a row orders by
recency (RP), the streaming moments of a quantity over sequences, the authors' diagonal normalisation of a map, and
the phase test of a layer from its row and layer z-scores (:mod:`lnrecency.experiments.probes.probe` uses them)."""
from __future__ import annotations

import functools

import numpy as np
import torch

from lnrecency.experiments.probes.probe_costs import PIECE_BYTES

__all__ = ["recency_counts", "head_sums", "triples", "Moments", "diag_normalise", "phase_of", "z_scores"]


def recency_counts(s: torch.Tensor, skip: int = 0) -> torch.Tensor:
    """Per leading index, the number of triples skip <= j < k < i (0-based) with S_ik > S_ij (s: (..., n, n)).
    Rows are compared a block of at most :data:`COUNT_ROWS` at a time (at most :data:`COUNT_CELLS` comparisons in
    flight) against the keys below the block's last row only; a row's keys at or after its query are set to -inf in
    a copy of the block (so no pair with them compares greater) and the pairs j < k kept by one (keys, keys) mask:
    the same integer counts as a row-by-row loop, without its per-row overhead, and about a third of the comparisons
    of blocks of every row against every key."""
    n = s.shape[-1]
    flat = s.reshape(-1, n, n)[:, :, skip:]  # (P, n, m): keys from skip on
    count = torch.zeros(flat.shape[0], dtype=torch.int64, device=s.device)
    later, pair = _count_masks(n, skip, str(s.device))
    for r0, r1 in _count_blocks(n, skip, flat.shape[0]):
        keys = r1 - 1 - skip  # rows r0..r1-1 have the keys skip..r1-2
        v = flat[:, r0:r1, :keys].masked_fill(later[r0:r1, :keys], float("-inf"))  # key k of row i: k < i - skip
        gt = v[..., None, :] > v[..., :, None]  # [.., j, k] = S_ik > S_ij
        gt &= pair[:keys, :keys]  # j < k
        # the trues counted as bytes summed in int32 (at most COUNT_ROWS n^2 a map): 3x faster than count_nonzero
        count += gt.view(torch.uint8).reshape(gt.shape[0], -1).sum(1, dtype=torch.int32)
    return count.to("cpu", torch.float64).reshape(s.shape[:-2])


#: comparisons :func:`recency_counts` holds at once (one byte each: 4 MiB blocks; 32 x 64 x 64 logits, ten counts
#: measured on a loaded 2-core machine: 1.6 s and 16k minor faults, against 1.1-1.3 s and 96-151k faults for 8-16
#: MiB blocks and 1.9 s for 256 KiB)
COUNT_CELLS = 2**22
#: rows :func:`recency_counts` compares at once: a block's rows are compared with the keys of its last row, so short
#: blocks compare little more than each row's own triangle
COUNT_ROWS = 16


@functools.lru_cache(maxsize=4)
def _count_masks(n: int, skip: int, device: str) -> tuple:
    """:func:`recency_counts`' masks: [i, k] the key skip + k at or after query i (n, n - skip), and [j, k] j < k."""
    key = torch.arange(n - skip, device=device)
    return key[None, :] >= torch.arange(n, device=device)[:, None] - skip, key[:, None] < key[None, :]


@functools.lru_cache(maxsize=64)
def _count_blocks(n: int, skip: int, leading: int) -> tuple:
    """:func:`recency_counts`' blocks of rows [r0, r1) for ``leading`` (n, n) maps, from row 2 + skip (0-based: the
    first with two keys)."""
    blocks = []
    r0 = 2 + skip
    while r0 < n:
        r1 = r0 + 1
        while r1 < n and r1 - r0 < COUNT_ROWS and leading * (r1 + 1 - r0) * (r1 - skip) ** 2 <= COUNT_CELLS:
            r1 += 1
        blocks.append((r0, r1))
        r0 = r1
    return tuple(blocks)


def head_sums(s_in: torch.Tensor, p_in: torch.Tensor, w: torch.Tensor, buffers: dict) -> tuple:
    """Per head and row the float64 slope of the logits (B, H, n) with the row weights ``w`` (n, n), and the head
    means of the logits and of the weights (B, n, n), in float64: read :data:`PIECE_BYTES` at a time (some sequences
    with all their heads, or some heads of one sequence) through two float64 buffers kept in ``buffers`` and reused
    layer after layer (the piece stays in the cache, and no layer allocates a float64 copy of itself: memory handed
    back and faulted in again)."""
    b, h, n = s_in.shape[0], s_in.shape[1], s_in.shape[-1]
    per_head = 8 * n * n
    heads = h if h * per_head <= PIECE_BYTES else max(1, PIECE_BYTES // per_head)
    seqs = max(1, PIECE_BYTES // (heads * per_head)) if heads == h else 1
    if buffers.get("piece") is None or buffers["piece"].numel() < seqs * heads * n * n:
        buffers["piece"] = torch.empty(seqs * heads * n * n, dtype=torch.float64)
        buffers["product"] = torch.empty(seqs * heads * n * n, dtype=torch.float64)
    slopes = torch.empty(b, h, n, dtype=torch.float64)
    sm = torch.empty(b, n, n, dtype=torch.float64)
    a = torch.empty(b, n, n, dtype=torch.float64)
    for b0 in range(0, b, seqs):
        b1 = min(b, b0 + seqs)
        for h0 in range(0, h, heads):
            h1 = min(h, h0 + heads)
            shape = (b1 - b0, h1 - h0, n, n)
            cells = shape[0] * shape[1] * n * n
            x = buffers["piece"][:cells].view(shape).copy_(s_in[b0:b1, h0:h1])
            y = buffers["product"][:cells].view(shape)
            if heads == h:  # the slopes' rows of these sequences: contiguous, summed into in place
                torch.sum(torch.mul(x, w, out=y), -1, out=slopes[b0:b1])
            else:
                slopes[b0:b1, h0:h1] = torch.mul(x, w, out=y).sum(-1)
            for total, t in ((sm, x), (a, y.copy_(p_in[b0:b1, h0:h1]))):
                if h0 == 0:
                    torch.sum(t, 1, out=total[b0:b1])
                else:
                    total[b0:b1] += t.sum(1)
    sm /= h
    a /= h
    return slopes, sm, a


def triples(n: int, skip: int = 0) -> int:
    return sum((i - 1 - skip) * (i - 2 - skip) // 2 for i in range(3 + skip, n + 1))


class Moments:
    """Streaming sums of a quantity over sequences (axis 0 of each update): mean and SE."""

    def __init__(self):
        self.count, self.s1, self.s2 = 0, None, None

    def add(self, x: torch.Tensor) -> None:
        x = x.to(torch.float64)
        a, b = x.sum(0), (x * x).sum(0)
        if self.s1 is None:
            self.s1, self.s2 = a, b
        else:  # in place: the sums are this object's own
            self.s1 += a
            self.s2 += b
        self.count += x.shape[0]

    @property
    def mean(self) -> np.ndarray:
        return (self.s1 / self.count).numpy()

    @property
    def se(self) -> np.ndarray:
        m = self.s1 / self.count
        var = torch.clamp(self.s2 / self.count - m * m, min=0.0) * self.count / max(self.count - 1, 1)
        return torch.sqrt(var / self.count).numpy()


def diag_normalise(m: np.ndarray) -> np.ndarray:
    """The authors' map: each lower diagonal (offset 0, 1, ..) minus its own mean; NaN above the diagonal."""
    n = m.shape[0]
    out = np.full_like(m, np.nan, dtype=float)
    for off in range(n):
        idx = (np.arange(off, n), np.arange(0, n - off))
        out[idx] = m[idx] - m[idx].mean()
    return out


def phase_of(row_z: np.ndarray, z: float, k: float, row_k: float) -> tuple[str, list, list]:
    pos = [i + 1 for i in range(len(row_z)) if row_z[i] > row_k]
    neg = [i + 1 for i in range(len(row_z)) if row_z[i] < -row_k]
    up, down = z > k or bool(pos), z < -k or bool(neg)
    return ("mixed" if up and down else "recency" if up else "earlier" if down else "flat"), pos, neg


def z_scores(mean, se):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(se > 0, mean / np.where(se > 0, se, 1.0), np.where(mean > 0, np.inf, np.where(mean < 0,
                                                                                                      -np.inf, 0.0)))
