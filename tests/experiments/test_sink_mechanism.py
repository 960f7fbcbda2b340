"""The probes that show the sink mechanism (issue 50), on planted decoders built by hand.

The planted model (attention-only, 2 layers, one head, no normalisation, no positions) has one positional signal
only: the share of layer-1 attention that goes to BOS. Every token carries a common direction e1, BOS also e0.
Layer 1's query maps e1 to beta e0 and its key keeps e0, so query i gives BOS the share e^b / (e^b + i - 1)
(b = beta / sqrt(d_head)); its value writes that share into e2. Layer 2's key reads e2 and its query maps e1 to
-gamma e2, so its logits are -gamma (scale) times each key's layer-1 BOS share: a ramp rising with the key.

* the probe reads the ramp (layer-2 slope > 0), each row's layer-1 BOS share equal to e^b / (e^b + i - 1), and the
  slope over keys >= 8 beside it;
* fixing layer 1's BOS share at its mean (the ablation) flattens layer 2 (slope 0 to rounding), and removing it
  (share 0) too; the same ablation on layer 2 leaves layer 2's logits as they were (the ablation acts on weights,
  not logits, and the ramp is made in layer 1);
* the same model read without BOS (content tokens only) is flat;
* bad ablation specs are refused with the flag, the value and what is allowed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.decoders.decoder import build, fix_first_share  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.probes.probe import LATE_KEY, ProbeSettings  # noqa: E402
from lnrecency.experiments.probes.probe_decoder import check_first_share, probe_decoder  # noqa: E402

D, VOCAB, BETA, GAMMA = 16, 12, 3.0, 4.0


def planted():
    cfg = DecoderConfig(vocab=VOCAB, d_model=D, n_layers=2, n_heads=1, context=32, norm="none", residual=True)
    model = build(cfg, 0)
    e = torch.eye(D)
    with torch.no_grad():
        emb = torch.zeros(VOCAB, D)
        emb[:, 1] = 1.0  # the common direction
        emb[0, 0] = 1.0  # BOS = token 0
        gen = torch.Generator().manual_seed(0)
        emb[1:, 3:] = torch.randn(VOCAB - 1, D - 3, generator=gen) * 0.1  # content, away from e0, e1, e2
        model.tok.weight.copy_(emb)
        a1, a2 = model.blocks[0].attn, model.blocks[1].attn
        for m in (a1.q, a1.k, a1.v, a1.o, a2.q, a2.k, a2.v, a2.o):
            m.weight.zero_()
        a1.q.weight.copy_(BETA * torch.outer(e[0], e[1]))  # e1 -> beta e0
        a1.k.weight.copy_(torch.outer(e[0], e[0]))  # keeps e0
        a1.v.weight.copy_(torch.outer(e[2], e[0]))  # e0 -> e2: the BOS share written into e2
        a1.o.weight.copy_(torch.eye(D))
        a2.q.weight.copy_(-GAMMA * torch.outer(e[2], e[1]))  # e1 -> -gamma e2
        a2.k.weight.copy_(torch.outer(e[2], e[2]))  # reads e2
    return model


def _inputs(n: int, sequences: int, bos: bool):
    rng = np.random.default_rng(5)

    def make(start, stop):
        toks = rng.integers(1, VOCAB, size=(stop - start, n))
        if bos:
            toks[:, 0] = 0
        return torch.from_numpy(toks)
    return make


def _probe(model, bos: bool = True, first_share=None, n: int = 24, sequences: int = 16):
    st = ProbeSettings(n=n, sequences=sequences, tokens="text" if bos else "given")
    return probe_decoder(model, st, inputs=_inputs(n, sequences, bos), first_share=first_share)


@pytest.fixture(scope="module")
def model():
    return planted()


def test_the_probe_reads_the_ramp_and_each_rows_bos_share(model):
    res = _probe(model)
    b = BETA  # the layer-1 logit of BOS: q.k = beta, times 1/sqrt(d_head) with d_head = D
    b /= math.sqrt(D)
    want = [1.0] + [math.exp(b) / (math.exp(b) + i - 1) for i in range(2, 25)]
    assert np.allclose(res.layers[0].first_share_rows, want, rtol=1e-5)
    two = res.layers[1]
    assert two.slope > 20 * two.slope_se and two.slope > 0.01
    assert two.late_slope is not None and two.late_slope[0] > 0  # keys >= LATE_KEY: still rising, less steeply
    assert two.late_slope[0] < two.slope and LATE_KEY == 8
    assert "late_slope" in two.to_json(maps=False) and two.to_json()["first_share_by_row"][0] == pytest.approx(1.0)


@pytest.mark.parametrize("share", ["mean", 0.0, 0.4])
def test_fixing_layer_1s_bos_share_flattens_layer_2(model, share):
    on = _probe(model)
    off = _probe(model, first_share={1: share})
    assert abs(off.layers[1].slope) < 1e-6 < on.layers[1].slope
    assert off.model["sink_ablation"] == {"1": share}
    rows = off.layers[0].first_share_rows[1:]
    if share != "mean":
        assert np.allclose(rows, share)


def test_the_ablation_on_layer_2_leaves_layer_2s_logits(model):
    on, off = _probe(model), _probe(model, first_share={2: "mean"})
    assert off.layers[1].slope == pytest.approx(on.layers[1].slope, rel=1e-9)


def test_without_bos_the_same_model_reads_flat(model):
    res = _probe(model, bos=False)
    assert abs(res.layers[1].slope) < 1e-6


def test_fix_first_share_keeps_rows_summing_to_one_and_the_first_row():
    w = torch.softmax(torch.randn(2, 3, 6, 6).masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(),
                                                           float("-inf")), -1)
    for share in ("mean", 0.0, 0.25):
        f = fix_first_share(w, share)
        assert torch.allclose(f.sum(-1), torch.ones(2, 3, 6), atol=1e-6)
        assert torch.equal(f[..., 0, :], w[..., 0, :]) and (f.triu(1) == 0).all()
        assert torch.allclose(f[..., 1:, 0], f[..., 1:, 0].mean(-1, keepdim=True))


@pytest.mark.parametrize("spec, words", [("1", "LAYER:SHARE"), ("x:mean", "LAYER:SHARE"), ("3:mean", "1..2"),
                                         ("1:1.0", "[0, 1)"), ("1:nan", "[0, 1)"), ("1:-0.1", "[0, 1)")])
def test_bad_ablation_specs_are_refused_by_name(spec, words):
    with pytest.raises(ValueError) as e:
        check_first_share(spec, 2, "--ablate-sink")
    assert "--ablate-sink" in str(e.value) and words in str(e.value)


def test_the_command_line_takes_the_ablation(tmp_path, capsys):
    from lnrecency.cli.app import main

    assert main(["probe", "--identity", "--n", "12", "--sequences", "8", "--ablate-sink", "1:mean", "--json"]) == 0
    import json

    out = json.loads(capsys.readouterr().out)
    assert out["model"]["sink_ablation"] == {"1": "mean"} and "late_slope" in out["layers"][0]
    assert main(["probe", "--identity", "--ablate-sink", "5:mean"]) == 2
    assert "--ablate-sink" in capsys.readouterr().err
    assert main(["probe", "--hf", str(tmp_path), "--ablate-sink", "1:mean"]) == 2
