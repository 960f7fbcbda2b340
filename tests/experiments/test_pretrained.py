"""Real pretrained decoders without the models: the first-key rule on planted sink logits through the streamed
probe, the text windows, and R1's decision rule on planted results (lnrecency.experiments.studies.pretrained)."""
from __future__ import annotations

import ast
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.probes.probe import ProbeSettings, probe  # noqa: E402


def _streamed(logits, weights, tokens="text"):
    B, L = logits.shape[0], 1

    def traces_of(start, stop, emit):
        for layer in range(L):
            emit(layer, {"logits": logits[start:stop], "weights": weights[start:stop]})

    return probe(traces_of, n_layers=L, n_heads=logits.shape[1], settings=ProbeSettings(n=logits.shape[-1],
                 sequences=B, tokens=tokens, chunk=3), model_info={}, assumptions={}, light=True, stream=True,
                 maps=False, width=8)


def test_the_first_key_is_out_of_the_slope_and_its_share_is_the_sink():
    """Planted logits S_ij = 0.5 j for keys j >= 1 and a huge S_i0 (a sink, as real models have): streamed in
    steps of 3 sequences, the slope is exactly 0.5 per key and the sink is the planted share; read with the
    first key in, the slope would be far below 0 (the real models' "earlier" phases came from that)."""
    from lnrecency.experiments.probes.probe import row_slope_weights, row_weights

    n, B, H = 16, 8, 2
    s = 0.5 * torch.arange(n, dtype=torch.float64)[None, :].expand(n, n).clone()
    s[:, 0] = 40.0
    mask = torch.ones(n, n, dtype=torch.bool).tril()
    weights = torch.softmax(s.masked_fill(~mask, float("-inf")), -1).expand(B, H, n, n).clone()
    logits = s.expand(B, H, n, n).clone()  # the tap hands S before the mask: entries above the diagonal are finite
    lay = _streamed(logits, weights).layers[0]
    assert lay.slope == pytest.approx(0.5, abs=1e-12) and lay.slope_se == pytest.approx(0.0, abs=1e-12)
    assert lay.rp == pytest.approx(1.0, abs=1e-12)
    assert lay.sink == pytest.approx(float(weights[0, 0, 1:, 0].mean()), abs=1e-12) and lay.sink > 0.99
    assert lay.slope_values.shape == (B,) and np.allclose(lay.slope_values, 0.5)
    w_in, omega_in = row_slope_weights(n, 0), row_weights(n, 0)
    slope_in = float((omega_in * (torch.from_numpy(w_in) * s).sum(-1).numpy()).sum())
    assert slope_in < -1.0


def test_the_streamed_probe_equals_the_list_probe():
    g = torch.Generator().manual_seed(3)
    n, B, H = 12, 9, 3
    logits = torch.randn(B, H, n, n, generator=g, dtype=torch.float64)
    weights = torch.softmax(logits.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")), -1)
    a = _streamed(logits, weights).layers[0]
    b = probe(lambda s0, s1: [{"logits": logits[s0:s1], "weights": weights[s0:s1]}], n_layers=1, n_heads=H,
              settings=ProbeSettings(n=n, sequences=B, tokens="text", chunk=4), model_info={}, assumptions={},
              light=True).layers[0]
    assert (a.slope, a.slope_se, a.rp, a.sink) == pytest.approx((b.slope, b.slope_se, b.rp, b.sink), rel=1e-12)
    # float64 sums over 9 sequences in steps of 3 against steps of 4: rounding of order 9 eps (2e-15) relative
    assert np.allclose(a.mean_logit[np.tril_indices(n)], b.mean_logit[np.tril_indices(n)], rtol=1e-12, atol=1e-15)
    assert a.heads[0].mean_logit is None and b.heads[0].mean_logit is not None


def test_the_default_text_is_read_as_data_and_cut_into_windows():
    from lnrecency.experiments.text.text_windows import default_text_path, read_text, text_windows

    docs, what = read_text()
    assert len(docs) > 50 and sum(map(len, docs)) > 100_000 and "Python" in what
    assert isinstance(ast.parse(default_text_path().read_text()), ast.Module)
    ids = np.arange(1000)
    w = text_windows(ids, 10, 20, seed=1, bos=7)
    assert w.shape == (20, 10) and (w[:, 0] == 7).all()
    starts = w[:, 1]
    assert len(set(starts.tolist())) == 20 and all(s % 9 == 0 for s in starts)  # non-overlapping slots
    assert np.array_equal(w, text_windows(ids, 10, 20, seed=1, bos=7))
    assert not np.array_equal(w, text_windows(ids, 10, 20, seed=2, bos=7))
    assert text_windows(ids, 10, 5, seed=0, bos=None).shape == (5, 10)
    with pytest.raises(ValueError, match="fewer than the 200 asked"):
        text_windows(ids, 10, 200, seed=0, bos=None)


def _run(values: np.ndarray) -> dict:
    """A cached model run whose per-window layer slopes are ``values`` (windows x layers)."""
    return {"window_slopes": values.tolist(),
            "layers": [{"layer": q + 1, "slope": float(values[:, q].mean()),
                        "slope_se": float(values[:, q].std(ddof=1) / math.sqrt(len(values)))}
                       for q in range(values.shape[1])]}


def test_r1_decides_by_the_sign_of_the_mean_over_layers_with_holm():
    from lnrecency.claims.trained.r1_pretrained_decoders import decide
    from lnrecency.experiments.studies.pretrained import RATE, layer_counts

    rng = np.random.default_rng(0)
    up = 0.01 + 0.001 * rng.standard_normal((16, 5))
    down = -0.01 + 0.001 * rng.standard_normal((16, 5))
    null = 0.001 * rng.standard_normal((16, 5))
    data = {"models": {k: {"runs": {"text/off": _run(v)}} for k, v in (("a", up), ("b", down), ("c", null))}}
    d = decide(data)
    assert d["a"][0] == "confirmed" and d["b"][0] == "refuted"  # the statement is ours
    assert d["c"][0] == "inconclusive"
    assert sorted(level for _, _, level in d.values())[:2] == [RATE / 3, RATE / 2]
    c = layer_counts(_run(up))
    assert c["positive"] == [1, 2, 3, 4, 5] and c["negative"] == []


def test_r1_decides_nothing_from_no_spread_or_too_few_windows():
    from lnrecency.claims.trained.r1_pretrained_decoders import decide

    flat = np.full((16, 3), 0.02)
    few = np.array([[0.1, 0.2], [0.11, 0.21]])
    data = {"models": {"flat": {"runs": {"text/off": _run(flat)}}, "few": {"runs": {"text/off": _run(few)}}}}
    assert {k: v[0] for k, v in decide(data).items()} == {"flat": "inconclusive", "few": "inconclusive"}
