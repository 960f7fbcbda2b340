"""Plan v3's instruments (issue 67, items 2 and 3), on small attn2 decoders built here (no training needed).

* The path decomposition is exact: the paths' slopes sum to the total to float rounding, the total is the slope of
  the model's own layer-2 logits (read from its forward trace, float32) to float32 rounding, and each path is what
  its name says: the BOS path equals layer 1's weight on key 1 times key 1's value through W_O, computed here with
  independent loops; a wrong split (the value of each key's own token in place of BOS's) is rejected by the same
  comparison.
* The interventions do what the plan says: the fixed scale leaves a model without normalisation unchanged; the keys
  lose their component along the BOS direction; QK = c I gives logits of the intact RMS (one head).
* A decoder the decomposition does not read (an MLP, positions) is refused.
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.decoders.decoder import build  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.studies import v3_paths as vp  # noqa: E402
from lnrecency.inference.recency_slope import layer_slope  # noqa: E402

N, VOCAB = 12, 30


def _model(norm: str, heads: int = 2, **extra):
    cfg = DecoderConfig(vocab=VOCAB, d_model=16, n_heads=heads, context=N, norm=norm, placement="pre",
                        positions=extra.pop("positions", "none"), residual=True, n_layers=2,
                        mlp=extra.pop("mlp", False), init_std=0.3)
    return build(cfg, 7)


def _tokens(rows: int = 6) -> np.ndarray:
    return np.random.default_rng(3).integers(0, VOCAB, size=(rows, N))


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "none"])
def test_the_paths_sum_to_the_models_own_slope(norm):
    model, tokens = _model(norm), _tokens()
    dec = vp.decompose(vp.layer2(model, tokens))
    summed = sum(p["slope"] for p in dec["paths"].values())
    assert dec["sum_error"] == pytest.approx(0.0, abs=1e-12 * max(1.0, abs(dec["total"])))
    assert summed == pytest.approx(dec["total"], abs=1e-12)
    for p in dec["paths"].values():  # each path's three parts sum to its slope
        assert p["scale"] + p["numerator"] + p["interaction"] == pytest.approx(p["slope"], abs=1e-12)
    with torch.no_grad():  # the model's own float32 forward: head-mean layer-2 logits, the first key out
        _, traces = model(torch.from_numpy(tokens), trace=True)
    own = np.mean([layer_slope(s.mean(0).numpy().astype(float), skip=1) for s in traces[1].logits])
    assert dec["total"] == pytest.approx(own, abs=2e-5 * max(1.0, abs(own)))
    if norm == "none":
        assert all(p["scale"] == 0.0 for p in dec["paths"].values())


def _bos_path_by_loops(model, tokens: np.ndarray, key: int = 0) -> np.ndarray:
    """Layer 1's weight on ``key`` times ``key``'s value through W_O, summed over heads: loops, float64."""
    m = model.double()
    b1 = m.blocks[0]
    d, heads = m.cfg.d_model, m.cfg.n_heads
    dh = d // heads
    with torch.no_grad():
        y = b1.pre(m.embed(torch.from_numpy(tokens)))
        q, k, v = (lin(y) for lin in (b1.attn.q, b1.attn.k, b1.attn.v))
        out = np.zeros((tokens.shape[0], N, d))
        for b in range(tokens.shape[0]):
            for h in range(heads):
                sl = slice(h * dh, (h + 1) * dh)
                s = (q[b, :, sl] @ k[b, :, sl].T).numpy() * b1.attn.scale
                s[np.triu_indices(N, 1)] = -np.inf
                w = np.exp(s - s.max(1, keepdims=True))
                w /= w.sum(1, keepdims=True)
                o_h = b1.attn.o.weight[:, sl].numpy()
                for j in range(N):
                    src = key if key is not None else j
                    out[b, j] += w[j, src] * (o_h @ v[b, src, sl].numpy())
    model.float()
    return out


def test_the_bos_path_is_layer_ones_weight_on_key_one_times_its_value():
    model, tokens = _model("layernorm"), _tokens(3)
    parts = vp.layer2(model, tokens).parts
    assert np.allclose(parts["bos"], _bos_path_by_loops(model, tokens), rtol=1e-9, atol=1e-12)
    wrong = _bos_path_by_loops(model, tokens, key=None)  # each key's own token's value: a wrong split
    assert not np.allclose(parts["bos"], wrong, rtol=1e-3, atol=1e-6)


def test_the_interventions_do_what_the_plan_says():
    tokens = _tokens()
    plain = vp.layer2(_model("none"), tokens)
    y = plain.normed()
    assert np.allclose(vp.intervened_logits(plain, "scale_fixed"), plain.logits(y, y))  # no scale to fix
    ln = vp.layer2(_model("layernorm", heads=1), tokens)
    y = ln.normed()
    intact = ln.logits(y, y)
    low = np.tril(np.ones((N, N), dtype=bool))
    ident = vp.intervened_logits(ln, "qk_identity")
    assert np.sqrt(np.mean(ident[:, low] ** 2)) == pytest.approx(np.sqrt(np.mean(intact[:, low] ** 2)), rel=1e-12)
    u = ln.shape(ln.bos_value)
    u /= np.linalg.norm(u, axis=-1, keepdims=True)
    removed = vp.intervened_logits(ln, "bos_direction")
    keys = y - np.einsum("bjd,bd->bj", y, u)[..., None] * u[:, None, :]
    assert np.abs(np.einsum("bjd,bd->bj", keys, u)).max() < 1e-12
    assert np.allclose(removed, ln.logits(y, keys))
    assert not np.allclose(removed, intact)
    with pytest.raises(ValueError, match="intervention must be one of"):
        vp.intervened_logits(ln, "nothing")


@pytest.mark.parametrize("extra", [{"mlp": True}, {"positions": "learned"}])
def test_a_decoder_it_does_not_read_is_refused(extra):
    with pytest.raises(ValueError, match="reads attn2 decoders"):
        vp.layer2(_model("layernorm", **extra), _tokens(2))


def test_the_read_out_gain_is_a_level_linear_in_the_query():
    """The gain is the level of the BOS-path logits over the level of the keys' first-token coordinate (never their
    slope): scaling W_Q by 3 scales it by 3 exactly."""
    tokens = _tokens()
    l2 = vp.layer2(_model("layernorm"), tokens)
    g = vp.readout_gain(l2)
    l2.wq = 3.0 * l2.wq
    assert vp.readout_gain(l2) == pytest.approx(3.0 * g, rel=1e-12)
    assert np.isfinite(g) and g != 0.0
