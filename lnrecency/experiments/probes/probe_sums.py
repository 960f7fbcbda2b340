"""The probe's arithmetic on its running sums, one concept a function: the count of key triples a row orders by
recency (RP), the streaming moments of a quantity over sequences, the authors' diagonal normalisation of a map, and
the phase test of a layer from its row and layer z-scores (:mod:`lnrecency.experiments.probes.probe` uses them)."""
from __future__ import annotations

import numpy as np
import torch

__all__ = ["recency_counts", "triples", "Moments", "diag_normalise", "phase_of", "z_scores"]


def recency_counts(s: torch.Tensor, skip: int = 0) -> torch.Tensor:
    """Per leading index, the number of triples skip <= j < k < i (0-based) with S_ik > S_ij (s: (..., n, n)).
    Rows are compared a block at a time (at most :data:`COUNT_CELLS` comparisons in flight), each block's pairs
    masked to j < k < i at once: the same integer counts as a row-by-row loop, without its per-row overhead."""
    n = s.shape[-1]
    m = n - skip
    flat = s.reshape(-1, n, n)[:, :, skip:]  # (P, n, m): keys from skip on
    count = torch.zeros(flat.shape[0], dtype=torch.float64)
    key = torch.arange(m, device=s.device)
    pair = key[:, None] < key[None, :]  # [j, k]: j < k
    block = max(1, COUNT_CELLS // max(flat.shape[0] * m * m, 1))
    for r0 in range(2 + skip, n, block):  # 0-based row i has keys skip..i-1 strictly below the query
        rows = torch.arange(r0, min(n, r0 + block), device=s.device)
        valid = pair[None] & (key[None, None, :] < (rows - skip)[:, None, None])  # (R, m, m): j < k < i
        v = flat[:, r0:r0 + len(rows), :]
        gt = v[..., None, :] > v[..., :, None]  # [.., j, k] = S_ik > S_ij
        count += (gt & valid).sum(dim=(-1, -2, -3)).to(torch.float64).cpu()
    return count.reshape(s.shape[:-2])


#: comparisons :func:`recency_counts` holds at once (one byte each, twice: 4 MiB blocks; 32 x 64 x 64 logits, ten
#: counts measured on a loaded 2-core machine: 1.6 s and 16k minor faults, against 1.1-1.3 s and 96-151k faults
#: for 8-16 MiB blocks and 1.9 s for 256 KiB)
COUNT_CELLS = 2**22


def triples(n: int, skip: int = 0) -> int:
    return sum((i - 1 - skip) * (i - 2 - skip) // 2 for i in range(3 + skip, n + 1))


class Moments:
    """Streaming sums of a quantity over sequences (axis 0 of each update): mean and SE."""

    def __init__(self):
        self.count, self.s1, self.s2 = 0, None, None

    def add(self, x: torch.Tensor) -> None:
        x = x.to(torch.float64)
        a, b = x.sum(0), (x * x).sum(0)
        self.s1 = a if self.s1 is None else self.s1 + a
        self.s2 = b if self.s2 is None else self.s2 + b
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
