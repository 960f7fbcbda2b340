"""The output_attentions families streamed (issue 77): BLOOM, Falcon, MPT and GPT-Neo, outside transformers'
attention interface, are read layer by layer by forward hooks on their attention modules. Their slopes and sinks
equal a least-squares fit written here on transformers' own ``output_attentions``; the model keeps no layer's
weights (none returned, none alive while a later layer runs); a layer read twice, a layer without weights and
weights above the diagonal are refused by name, the hooks removed; BLOOM's positions off equal the model with its
ALiBi bias switched off by hand."""
from __future__ import annotations

import copy
import weakref

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402
from lnrecency.experiments.decoders.train import deterministic  # noqa: E402
from lnrecency.experiments.probes.gguf import THREADS  # noqa: E402

N, SEQ, V = 16, 8, 64
EPS32, EPS64 = float(np.finfo(np.float32).eps), float(np.finfo(np.float64).eps)


def _build(family):
    torch.manual_seed(0)
    t = transformers
    ids = {"bos_token_id": 0, "eos_token_id": 1}
    if family == "bloom":
        return t.BloomForCausalLM(t.BloomConfig(vocab_size=V, hidden_size=32, n_layer=2, n_head=4, **ids))
    if family == "falcon":  # built as transformers builds it (sdpa), which its weights path must not read
        return t.FalconForCausalLM(t.FalconConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2,
                                                  num_attention_heads=4, **ids))
    if family == "mpt":
        return t.MptForCausalLM(t.MptConfig(vocab_size=V, d_model=32, n_layers=2, n_heads=4, max_seq_len=64, **ids))
    return t.GPTNeoForCausalLM(t.GPTNeoConfig(vocab_size=V, hidden_size=32, num_layers=2, num_heads=4,
                                              attention_types=[[["global"], 2]], max_position_embeddings=64, **ids))


#: each family's attention module in layer q, by its path in transformers' source
ATTENTION = {"bloom": lambda m, q: m.transformer.h[q].self_attention,
             "falcon": lambda m, q: m.transformer.h[q].self_attention,
             "mpt": lambda m, q: m.transformer.blocks[q].attn,
             "neo": lambda m, q: m.transformer.h[q].attn.attention}
FAMILIES = tuple(ATTENTION)


@pytest.fixture(scope="module")
def models():
    return {f: _build(f) for f in FAMILIES}


def _ids() -> np.ndarray:
    ids = np.random.default_rng(1).integers(2, V, size=(SEQ, N))
    ids[:, 0] = 0  # BOS first: the first key is the sink, left out of the slopes
    return ids


def _eager_weights(model, ids: np.ndarray) -> list[np.ndarray]:
    """Each layer's attention weights (B, H, n, n) from transformers' own output_attentions on a copy of the model
    set to eager attention (the path transformers names for output_attentions), with the probe's thread count."""
    ref = copy.deepcopy(model).eval()
    ref.config._attn_implementation = "eager"
    with torch.no_grad(), deterministic(THREADS):
        out = ref(input_ids=torch.from_numpy(ids), attention_mask=torch.ones(ids.shape, dtype=torch.long),
                  output_attentions=True, use_cache=False)
    return [a.numpy() for a in out.attentions]


def _fit(logp: np.ndarray) -> np.ndarray:
    """Per sequence, the layer slope of log P (B, n, n): per row i (0-based) with at least 3 keys among 1..i-1 (the
    first key and the query's own left out), the least-squares slope of log P_ij against j (numpy lstsq); rows
    weighted by their number of keys."""
    num, den = np.zeros(logp.shape[0]), 0.0
    for i in range(N):
        keys = np.arange(1, i)
        if keys.size < 3:
            continue
        design = np.stack([np.ones(keys.size), keys.astype(float)], axis=1)
        coef = np.linalg.lstsq(design, logp[:, i, keys].T, rcond=None)[0]  # (2, B): intercept and slope
        num, den = num + keys.size * coef[1], den + keys.size
    return num / den


def _reference(weights: list[np.ndarray]) -> tuple[list, list, list, float]:
    """(layer slopes, head slopes, sinks, the slope tolerance) from the weights."""
    layers, heads, sinks, top = [], [], [], 0.0
    for p in weights:
        with np.errstate(divide="ignore"):  # 0 above the diagonal (never read): log 0 = -inf
            logp = np.log(p.astype(np.float64))  # the float32 weights exactly, their log in float64
        low = logp[:, :, np.tril_indices(N)[0], np.tril_indices(N)[1]]
        top = max(top, float(np.abs(low).max()))
        layers.append(float(_fit(logp.mean(1)).mean()))
        heads.append([float(_fit(logp[:, h]).mean()) for h in range(p.shape[1])])
        sinks.append(float(p[:, :, 1:, 0].astype(np.float64).mean()))  # P_i1 over heads, rows i >= 2, sequences
    # the probe reads log P as float32 (torch.log of the float32 weights, within 1 ulp <= eps32 |log P|), the fit
    # the same weights' log in float64; a row slope is sum_j w_ij log P_ij with sum_j |w_ij| = sum |c| / sum c^2
    # (c the keys' deviations from their mean) at most 1 (3 keys: 2 / 2), and a layer or head slope is a convex
    # combination of row slopes; the float64 sums on either side add at most n eps64 of the same size
    spread = max(np.abs(c).sum() / (c @ c) for c in (np.arange(m) - (m - 1) / 2 for m in range(3, N - 1)))
    return layers, heads, sinks, (EPS32 + N * EPS64) * top * float(spread)


@pytest.mark.parametrize("family", FAMILIES)
def test_slopes_and_sinks_equal_a_fit_on_transformers_own_weights_and_the_probe_streams(models, family):
    model, ids = models[family], _ids()
    res = lnrecency.probe_model(model, tokens=ids, n=N, sequences=SEQ)
    assert res.model["streamed"] is True and res.settings.bos_first
    assert "output_attentions" in res.logits_note
    layers, heads, sinks, bound = _reference(_eager_weights(model, ids))
    assert np.allclose([lp.slope for lp in res.layers], layers, rtol=0, atol=bound), (res.layers, layers, bound)
    got_heads = [[hp.recency_slope for hp in lp.heads] for lp in res.layers]
    assert np.allclose(got_heads, heads, rtol=0, atol=bound)
    # the sinks: float64 means of the same float32 weights on both sides, differing by summation order only: at
    # most (sequences x heads x rows) eps64 of a share <= 1
    assert np.allclose([lp.sink for lp in res.layers], sinks, rtol=0, atol=SEQ * 4 * N * EPS64)
    assert max(abs(s) for s in layers) > 10 * bound  # a slope of 0 everywhere would not pass for the reference's


@pytest.mark.parametrize("family", FAMILIES)
def test_the_model_keeps_no_layers_weights_while_the_next_runs(models, family):
    """Each attention module's weights are gone (no reference to them left) before the next layer's attention runs,
    and the model returns none: at most one layer's weights alive at a time."""
    model = models[family]
    alive: list = []
    seen_alive: list = []
    returned: list = []

    def watch(module):
        inner = module.forward

        def forward(*args, **kwargs):
            seen_alive.append(sum(r() is not None for r in alive))
            out = inner(*args, **kwargs)
            if out[1] is not None:
                alive.append(weakref.ref(out[1]))
            return out
        module.forward = forward
        return module

    mods = [watch(ATTENTION[family](model, q)) for q in range(2)]
    top = model.register_forward_hook(lambda m, args, out: returned.append(out.attentions))
    try:
        lnrecency.probe_model(model, tokens=_ids(), n=N, sequences=SEQ)
    finally:
        top.remove()
        for m in mods:
            del m.forward
    assert len(alive) == len(seen_alive) > 2 and max(seen_alive) == 0, seen_alive  # every forward made weights
    assert returned and all(a is None for atts in returned for a in atts), returned


def test_the_old_way_would_have_kept_them():
    """The neighbour of the test above: transformers itself, asked for output_attentions, keeps every layer's
    weights until its forward returns (so the count above can see a kept layer)."""
    model = _build("bloom").eval()
    alive: list = []
    counts: list = []
    for q in range(2):
        att = ATTENTION["bloom"](model, q)
        att.register_forward_pre_hook(lambda m, args: counts.append(sum(r() is not None for r in alive)))
        att.register_forward_hook(lambda m, args, out: alive.append(weakref.ref(out[1])))
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(_ids()), output_attentions=True, use_cache=False)
    assert counts == [0, 1] and all(a is not None for a in out.attentions)


def _refused(model, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        lnrecency.probe_model(model, tokens=_ids(), n=N, sequences=SEQ)
    for q in range(2):  # the probe's hooks are removed after a refusal too
        assert not ATTENTION["bloom"](model, q)._forward_hooks


def test_a_layer_read_twice_is_refused_by_name():
    model = _build("bloom")
    block = model.transformer.h[0]
    once = block.forward

    def twice(*args, **kwargs):
        once(*args, **kwargs)
        return once(*args, **kwargs)
    block.forward = twice
    _refused(model, r"BloomForCausalLM: layer 1's attention weights arrived after 1 layers' \(a layer read twice\)")


@pytest.mark.parametrize("layer,match", [
    (0, r"BloomForCausalLM: layer 2's attention weights arrived after 0 layers' \(a layer without weights\)"),
    (1, r"BloomForCausalLM returned attention weights to the probe for 1 of its 2 layers; refused")])
def test_a_layer_without_weights_is_refused_by_name(layer, match):
    model = _build("bloom")
    att = ATTENTION["bloom"](model, layer)
    inner = att.forward
    att.forward = lambda *args, **kwargs: (inner(*args, **kwargs)[0], None)
    _refused(model, match)


def test_weights_above_the_diagonal_are_refused_by_name():
    model = _build("bloom")
    att = ATTENTION["bloom"](model, 1)
    inner = att.forward

    def uniform(*args, **kwargs):
        out, p = inner(*args, **kwargs)
        return out, torch.full_like(p, 1.0 / p.shape[-1])  # every key, later ones too: an encoder's pattern
    att.forward = uniform
    _refused(model, "layer 2: BloomForCausalLM attends to later keys")


def test_bloom_positions_off_equal_the_model_with_its_alibi_switched_off_by_hand(models):
    """positions="off" builds BLOOM's ALiBi bias as zeros; the reference drops it inside the attention instead
    (baddbmm's beta = 0: 0 x bias + q.k / sqrt(d)), on a copy."""
    model, ids = models["bloom"], _ids()
    off = lnrecency.probe_model(model, tokens=ids, n=N, sequences=SEQ, positions="off")
    no_alibi = copy.deepcopy(model)
    for q in range(2):
        ATTENTION["bloom"](no_alibi, q).beta = 0.0
    layers, _, sinks, bound = _reference(_eager_weights(no_alibi, ids))
    assert off.model["streamed"] is True and off.model["positions"]["state"].startswith("off: ALiBi bias zero")
    assert np.allclose([lp.slope for lp in off.layers], layers, rtol=0, atol=bound), (off.layers, layers)
    assert np.allclose([lp.sink for lp in off.layers], sinks, rtol=0, atol=SEQ * 4 * N * EPS64)
    on, _, _, _ = _reference(_eager_weights(model, ids))  # the neighbour: with the bias, far from it
    assert min(abs(a - b) for a, b in zip(on, layers)) > 100 * bound


def test_mpt_positions_off_equal_the_model_with_its_alibi_switched_off_by_hand(models):
    """positions="off" builds MPT's ALiBi bias (build_mpt_alibi_tensor) as zeros; the reference instead hands each
    attention module a zero position_bias through a forward pre-hook, on a copy (before, MPT's off was refused: its
    builder has another name than BLOOM's)."""
    model, ids = models["mpt"], _ids()
    off = lnrecency.probe_model(model, tokens=ids, n=N, sequences=SEQ, positions="off")
    no_alibi = copy.deepcopy(model)
    for q in range(2):
        def zero_bias(module, args, kwargs):
            if "position_bias" in kwargs:
                kwargs["position_bias"] = torch.zeros_like(kwargs["position_bias"])
            else:
                args = (args[0], torch.zeros_like(args[1]), *args[2:])
            return args, kwargs
        ATTENTION["mpt"](no_alibi, q).register_forward_pre_hook(zero_bias, with_kwargs=True)
    layers, _, _, bound = _reference(_eager_weights(no_alibi, ids))
    assert off.model["positions"]["state"].startswith("off: ALiBi bias zero")
    assert np.allclose([lp.slope for lp in off.layers], layers, rtol=0, atol=bound), (off.layers, layers)
    on, _, _, _ = _reference(_eager_weights(model, ids))
    assert min(abs(a - b) for a, b in zip(on, layers)) > 100 * bound


def test_gpt1s_learned_positions_are_found_by_their_own_name():
    """OpenAI GPT names its position embedding positions_embed: read as learned (positions off sets every position
    id to 0), never as a model without positions whose 'off' would leave them on."""
    from lnrecency.experiments.probes.model_probe import position_scheme

    torch.manual_seed(0)
    gpt = transformers.OpenAIGPTLMHeadModel(transformers.OpenAIGPTConfig(vocab_size=V, n_positions=64, n_embd=32,
                                                                        n_layer=1, n_head=4))
    assert position_scheme(gpt) == "learned"
