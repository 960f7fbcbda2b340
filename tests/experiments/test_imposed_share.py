"""Plan v4's imposed layer-1 share (issue 76): the first key's share of attention set row by row in a layer, kept
through training (gradients flow around it), the other layers untouched, and a stop at a held-out evaluation."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.decoders.decoder import build, impose_first_share, imposed_weights  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings  # noqa: E402

CFG = DecoderConfig(vocab=16, d_model=16, n_layers=2, n_heads=2, context=8, norm="none")
PROFILE = [1.0, 0.8, 0.6, 0.5, 0.4, 0.3, 0.25, 0.2]


def _shares(model, tokens):
    _, traces = model(tokens, trace=True)
    return [tr.weights for tr in traces]  # (B, H, n, n) per layer


def test_the_weights_are_the_share_and_the_renormalised_softmax():
    s = torch.randn(3, 2, 6, 6, dtype=torch.float64)
    share = torch.tensor([1.0, 0.9, 0.5, 0.0, 0.3, 0.7], dtype=torch.float64)
    w = imposed_weights(s, share)
    for r in range(6):
        want = np.zeros((3, 2, 6))
        want[..., 0] = 1.0 if r == 0 else share[r]
        if r:
            e = np.exp(s[..., r, 1:r + 1].numpy())
            want[..., 1:r + 1] = (1 - share[r].item()) * e / e.sum(-1, keepdims=True)
        # float64 on both sides, values in [0, 1]: each side's exp, sum over <= 6 terms and one division round to at
        # most (6 + 3) eps, so the two differ by at most twice that
        np.testing.assert_allclose(w[..., r, :].numpy(), want, rtol=0, atol=2 * (6 + 3) * np.finfo(np.float64).eps)


def test_a_trained_model_keeps_the_imposed_share_in_its_layer_only():
    from lnrecency.experiments.decoders.train import train

    tokens = torch.from_numpy(np.random.default_rng(0).integers(0, 16, size=(4, 8)))
    free = _shares(build(CFG, 0), tokens)[0][..., 1:, 0]
    assert not torch.allclose(free, torch.tensor(PROFILE[1:])[:, None].T.expand_as(free), atol=1e-3)  # not by chance
    st = TrainSettings(task="induction", steps=6, n=8, batch=4, warmup=1, eval_every=3, eval_sequences=4)
    res = train(CFG, st, first_share={0: PROFILE})
    w1, w2 = _shares(res.model, tokens)
    want = torch.tensor(PROFILE[1:], dtype=w1.dtype).expand(4, 2, 7)
    # float32 weights in [0, 1]: the share goes through a bonus logit and a softmax over <= 8 keys, each rounding to at
    # most (8 + 2) eps32 (1.2e-6); the profile as float32 is exact to its own rounding
    bound = (8 + 2) * torch.finfo(torch.float32).eps
    assert torch.allclose(w1[..., 1:, 0], want, rtol=0, atol=bound)  # every head, every window, every row
    assert torch.allclose(w1.sum(-1), torch.ones(4, 2, 8), rtol=0, atol=bound)
    assert not torch.allclose(w2[..., 1:, 0], want, atol=1e-3)  # layer 2 keeps its own softmax
    plain = train(CFG, st)  # the imposed share changed the training: the weights differ from a free run's
    assert not torch.equal(plain.model.blocks[0].attn.q.weight, res.model.blocks[0].attn.q.weight)
    assert all(np.isfinite(e["train_loss"]) for e in res.log[1:])


def test_training_stops_at_the_first_evaluation_the_rule_accepts():
    from lnrecency.experiments.decoders.train import train

    st = TrainSettings(task="induction", steps=20, n=8, batch=4, warmup=1, eval_every=2, eval_sequences=4)
    res = train(CFG, st, stop=lambda entry: entry["step"] >= 6)
    assert res.stopped == "target" and res.log[-1]["step"] == 6


@pytest.mark.parametrize("shares, words", [({2: PROFILE}, "layer index"), ({0: PROFILE[:5]}, "at least context"),
                                           ({0: [1.0] + [1.5] * 7}, "in \\[0, 1\\]"), ({True: PROFILE}, "layer")])
def test_a_bad_profile_is_refused_by_name(shares, words):
    with pytest.raises(ValueError, match=f"^shares: .*{words}"):
        impose_first_share(build(CFG, 0), shares)


def test_an_imposed_share_survives_a_checkpoint_and_the_probe_reads_it(tmp_path):
    """Issue 82, item 4: train.save records the imposed share in config.json ("interventions") and train.load
    restores it, so the probe of a reloaded model gives the slope of the model as trained, to the bit; a checkpoint
    whose recorded intervention is malformed or unknown is refused by name."""
    import json

    import lnrecency
    from lnrecency.experiments.decoders.train import load, save, train

    st = TrainSettings(task="induction", steps=4, n=8, batch=4, warmup=1, eval_every=0)
    res = train(CFG, st, first_share={0: PROFILE})
    save(res, tmp_path / "ck")
    meta = json.loads((tmp_path / "ck" / "config.json").read_text())
    assert meta["interventions"] == {"imposed_first_share": {"0": PROFILE}}
    model, _ = load(tmp_path / "ck")
    assert torch.equal(model.blocks[0].attn.imposed, res.model.blocks[0].attn.imposed)
    assert model.blocks[1].attn.imposed is None
    before = lnrecency.probe_model(res, sequences=16)
    after = lnrecency.probe_model(str(tmp_path / "ck"), sequences=16)
    assert [lay.slope for lay in after.layers] == [lay.slope for lay in before.layers]
    for bad, words in (({"imposed_first_share": {"0": [2.0] * 8}}, "shares in \\[0, 1\\]"),
                       ({"frozen_scale": {}}, "keys among imposed_first_share"),
                       ({"imposed_first_share": {"9": PROFILE}}, "layer index must be an integer")):
        meta["interventions"] = bad
        (tmp_path / "ck" / "config.json").write_text(json.dumps(meta))
        with pytest.raises(ValueError, match=words):
            load(tmp_path / "ck")
