"""How far a cumulant expansion can reach the authors' panels: each setting's exact cumulants (batch means) fed to
the normal, Edgeworth and Fisher-z expansions."""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lnrecency.experiments.authors.catalogue import (
    LAYERS,
    Row,
    panel_config,
    row_triples,
    run_seed,
)
from lnrecency.inference.stats import edgeworth_prob_positive, k_statistics
from lnrecency.numerics import sample_instances
from lnrecency.runtime.arguments import check_int

# -- the ceiling of cumulant expansions ------------------------------------------------------------------
CEILING_SAMPLES = 50_000  # draws per (row, d) for the ceiling (at most the run's own count)


CEILING_BATCHES = 40  # independent batches: the SE of a gap is their spread (batch means)


EXPANSIONS = ("normal", "Edgeworth 1", "Edgeworth 2", "Fisher-z Edgeworth 2")


@dataclass(frozen=True)
class Ceiling:
    """The best a cumulant expansion of P(S_ik > S_ij) can do on one panel. From the draws' own k-statistics
    of each triple's difference (exact cumulants up to sampling error, no theory): RP by the normal law
    (k1, k2), the one-term Edgeworth expansion (+ k3) and the two-term one (+ k4)
    (:func:`lnrecency.inference.stats.edgeworth_prob_positive`), and the two-term one for the difference of Fisher's
    z = atanh(S / S_ii) (the same event, as S_ii bounds |S| under a normalisation: the classical normalising
    transform of a cosine; without normalisation z = S), against RP of the same draws. ``gaps[name]`` =
    (expansion - RP, its SE): pooled estimate, SE from the spread of the CEILING_BATCHES batch values.
    A gap many SE from 0 is the truncation's own error at this width: exact cumulants do not remove it."""

    rp: float
    rp_stderr: float
    expansions: dict  # name -> (RP by the truncation, its SE)
    gaps: dict  # name -> (truncation - RP of the same draws, its SE)
    samples: int


def _ceiling_batch(row: Row, d: int, size: int, seed: tuple, trip: tuple, shift) -> tuple:
    """(positive fractions (L, T), power sums p = 1..4 (2, 4, L, T) of (difference - shift) for S and for
    Fisher's z, shift (2, L, T)) of one batch; ``shift`` None: this batch's own means (so the power sums
    stay well conditioned)."""
    i, j, k = trip
    cfg = panel_config(row, d)
    s = sample_instances(row.n, LAYERS, d, size, seed=seed, method="gram", config=cfg).scores
    bound = cfg.normalisation.diagonal_score(cfg.lam)
    z = s if bound is None else np.arctanh(np.clip(s / bound, -1.0 + 1e-15, 1.0 - 1e-15))
    diff = np.stack([s[:, :, i, k] - s[:, :, i, j], z[:, :, i, k] - z[:, :, i, j]])  # (2, b, L, T)
    shift = diff.mean(axis=1) if shift is None else shift
    dev = diff - shift[:, None]
    sq = dev * dev
    sums = np.stack([dev.sum(axis=1), sq.sum(axis=1), (sq * dev).sum(axis=1), (sq * sq).sum(axis=1)], axis=1)
    return (diff[0] > 0).mean(axis=0), sums, shift


def _expand(count: int, sums: np.ndarray, shift: np.ndarray) -> dict:
    """RP per layer (L,) by each truncation, from the power sums of (difference - shift) of S and z."""
    out = {}
    for q, names in ((0, EXPANSIONS[:3]), (1, EXPANSIONS[3:])):
        k1, k2, k3, k4 = k_statistics(count, *sums[q])
        k1 = k1 + shift[q]
        tie = k2 <= 0  # the same value in every draw (no triple here; kept for safety): scored like the limit
        k2 = np.where(tie, 1.0, k2)
        probs = {"normal": edgeworth_prob_positive(k1, k2, 0.0), "Edgeworth 1": edgeworth_prob_positive(k1, k2, k3),
                 "Edgeworth 2": edgeworth_prob_positive(k1, k2, k3, k4)}
        for name in names:
            v = probs[name.removeprefix("Fisher-z ")]
            out[name] = np.where(tie, 0.5 + 0.5 * np.sign(k1), v).mean(axis=1)
    return out


def cumulant_ceiling(row: Row, d: int, *, samples: int, seed: int) -> dict:
    """{layer: :class:`Ceiling`} for the setting (row, d): ``samples`` draws in CEILING_BATCHES batches
    (seeds (run seed, 2, batch): independent of the panel's own run)."""
    samples = check_int("samples", samples, minimum=CEILING_BATCHES * 50)
    trip = tuple(np.array(t) - 1 for t in zip(*row_triples(row.n)))
    sizes = [samples // CEILING_BATCHES + (b < samples % CEILING_BATCHES) for b in range(CEILING_BATCHES)]
    pos, sums, shift = [], [], None
    for b, size in enumerate(sizes):
        fb, sb, shift = _ceiling_batch(row, d, size, (*run_seed(seed, row, d), 2, b), trip, shift)
        pos.append(fb)
        sums.append(sb)
    rp_b = np.array([f.mean(axis=1) for f in pos])  # (B, L)
    ex_b = [_expand(size, sb, shift) for size, sb in zip(sizes, sums)]
    rp = np.average(rp_b, axis=0, weights=sizes)
    pooled = _expand(samples, np.sum(sums, axis=0), shift)
    root = math.sqrt(CEILING_BATCHES)
    out = {}
    for layer in range(1, LAYERS + 1):
        q = layer - 1
        gaps, values = {}, {}
        for name in EXPANSIONS:
            per = np.array([e[name][q] for e in ex_b])
            values[name] = (float(pooled[name][q]), float(per.std(ddof=1) / root))
            gaps[name] = (float(pooled[name][q] - rp[q]), float((per - rp_b[:, q]).std(ddof=1) / root))
        out[layer] = Ceiling(rp=float(rp[q]), rp_stderr=float(rp_b[:, q].std(ddof=1) / root),
                             expansions=values, gaps=gaps, samples=samples)
    return out
