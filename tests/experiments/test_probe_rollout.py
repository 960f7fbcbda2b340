"""The probe's attention rollout (issue 51): the last query's row of A^(l) ... A^(1), A each layer's head-mean
attention weights, per sequence, then averaged; and the residual-aware rollout with (1 - lambda) I + lambda A.
Checked against matrix products written here, and on uniform causal attention against its exact path counts."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.probes.probe import ROLLOUT_LAMBDA, ProbeSettings, probe  # noqa: E402

N, B, L = 9, 8, 3
#: float64 rounding bound of the rollout: entries in [0, 1], each of L products sums N nonnegative terms, so the
#: error is at most L N eps = 3 * 9 * 2.2e-16 = 6e-15 per entry (the mean over B sequences adds about eps; a row
#: sum of N entries, N times that)
EXACT = 1e-14
#: the SE comes from streaming sums (s2 / B - m^2): cancellation costs a relative eps m^2 / var, below 1e-9 while
#: var > 2e-7 m^2, which these random weights keep by orders (checked: the test fails loudly otherwise)
SE_RTOL = 1e-9


def _run(weights: np.ndarray):
    """``weights``: (L, B, H, n, n) attention weights; logits their logs (0 above the diagonal)."""
    mask = np.tril(np.ones((N, N), dtype=bool))

    def traces_of(start, stop):
        out = []
        for w in weights:
            p = torch.from_numpy(w[start:stop])
            s = torch.log(p.clamp_min(1e-300)).masked_fill(~torch.from_numpy(mask), 0.0)
            out.append({"logits": s, "weights": p})
        return out
    return probe(traces_of, n_layers=len(weights), n_heads=weights.shape[2], settings=ProbeSettings(
        n=N, sequences=weights.shape[1], tokens="random", chunk=3), model_info={}, assumptions={}, light=True)


def test_uniform_attention_gives_the_exact_path_counts():
    a = np.tril(np.ones((N, N))) / np.arange(1, N + 1)[:, None]  # row i attends 1/i to each of its keys
    res = _run(np.broadcast_to(a, (L, B, 1, N, N)).copy())
    mixed = (1 - ROLLOUT_LAMBDA) * np.eye(N) + ROLLOUT_LAMBDA * a
    for q, lp in enumerate(res.layers, 1):
        assert np.allclose(lp.rollout_last, np.linalg.matrix_power(a, q)[-1], rtol=0, atol=EXACT)
        assert np.allclose(lp.rollout_residual_last, np.linalg.matrix_power(mixed, q)[-1], rtol=0, atol=EXACT)
        assert np.all(lp.rollout_last_se == 0.0) and lp.rollout_last.sum() == pytest.approx(1.0, abs=N * EXACT)
    # two layers: token 1's cumulative probability from query n is (1/n) (1 + 1/2 + ... + 1/n), the harmonic number
    harmonic = sum(1.0 / k for k in range(1, N + 1))
    assert res.layers[1].rollout_last[0] == pytest.approx(harmonic / N, abs=EXACT)
    assert res.layers[0].rollout_last[0] == pytest.approx(1.0 / N, abs=EXACT)
    assert res.layers[1].rollout_last[0] > res.layers[0].rollout_last[0]  # primacy grows with depth (Wu et al.)
    assert res.to_json()["layers"][1]["rollout"]["residual_lambda"] == ROLLOUT_LAMBDA


def test_per_sequence_products_of_head_means_then_the_mean_and_not_the_other_way():
    rng = np.random.default_rng(3)
    logits = rng.normal(size=(L, B, 2, N, N)) * 2
    logits = np.where(np.tril(np.ones((N, N), dtype=bool)), logits, -np.inf)
    w = np.exp(logits - logits.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    res = _run(w)
    heads = w.mean(2)  # (L, B, n, n)
    for q, lp in enumerate(res.layers):
        per_seq = np.stack([np.linalg.multi_dot([heads[k, b] for k in range(q, -1, -1)] + [np.eye(N)])[-1]
                            for b in range(B)])
        assert np.allclose(lp.rollout_last, per_seq.mean(0), rtol=0, atol=EXACT)
        assert np.allclose(lp.rollout_last_se, per_seq.std(0, ddof=1) / np.sqrt(B), rtol=SE_RTOL, atol=EXACT)
    # a wrong order (A1 A2 instead of A2 A1) or the mean's product is told apart: they differ from the right value
    # by more than 1e-6, eight orders above the rounding bound EXACT
    wrong = np.stack([(heads[0, b] @ heads[1, b])[-1] for b in range(B)]).mean(0)
    assert not np.allclose(res.layers[1].rollout_last, wrong, atol=1e-6)
    means = (heads[1].mean(0) @ heads[0].mean(0))[-1]
    assert not np.allclose(res.layers[1].rollout_last, means, atol=1e-6)


def test_the_pretrained_record_carries_the_rollout_and_gus_sink_beside_ours():
    """What `experiments pretrained` keeps of each probe (issue 51): per layer our sink share and the rollout at
    token 1 and at the last token (plain and residual-aware), and Gu et al.'s Sink^eps_1 over the heads."""
    from lnrecency.experiments.studies.pretrained import probe_summary

    a = np.tril(np.ones((N, N))) / np.arange(1, N + 1)[:, None]
    strong = a.copy()
    strong[1:, 0], strong[1:, 1:] = 0.6, 0.4 * a[1:, 1:] * np.arange(2, N + 1)[:, None] / np.arange(1, N)[:, None]
    strong = np.tril(strong)
    heads = np.stack([a, strong])  # head 1: uniform (sink share below 0.3), head 2: 0.6 on the first key
    res = _run(np.broadcast_to(heads, (L, B, 2, N, N)).copy())
    rec = probe_summary(res)
    assert rec["gu_sink"] == pytest.approx(0.5)  # one head of two per layer above eps = 0.3
    mean = heads.mean(0)
    for q, lay in enumerate(rec["layers"], 1):
        want = np.linalg.matrix_power(mean, q)[-1]
        assert lay["rollout_first"] == pytest.approx(want[0], abs=EXACT)
        assert lay["rollout_last"] == pytest.approx(want[-1], abs=EXACT)
        mixed = np.linalg.matrix_power((1 - ROLLOUT_LAMBDA) * np.eye(N) + ROLLOUT_LAMBDA * mean, q)[-1]
        assert lay["rollout_residual_first"] == pytest.approx(mixed[0], abs=EXACT)
        assert lay["sink"] == pytest.approx(mean[1:, 0].mean(), abs=EXACT)
