"""This project's decoders through the one engine (issue 77, item 1): a checkpoint folder, a TrainResult, a bare
Decoder and the identity decoder all go through lnrecency.probe_model, from Python and from the command line, with
the same windows for the same seed (whatever the batch size), streamed layer by layer (exactly the numbers of the
reader that held every layer), positions on and off on the same windows, and every argument honoured or refused by
name. Tiny models: a 5-step training run and the identity decoder at small n."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import lnrecency  # noqa: E402
from lnrecency.cli.app import main  # noqa: E402

N, SEQ = 10, 16


@pytest.fixture(scope="module")
def trained():
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings
    from lnrecency.experiments.decoders.train import train

    cfg = DecoderConfig(vocab=32, d_model=32, n_layers=2, n_heads=4, context=N, positions="learned")
    return train(cfg, TrainSettings(task="argmax", steps=5, n=N, batch=8, eval_every=0))


@pytest.fixture(scope="module")
def checkpoint(trained, tmp_path_factory):
    from lnrecency.experiments.decoders.train import save

    return save(trained, tmp_path_factory.mktemp("ck") / "ck")


def _slopes(res):
    return [lp.slope for lp in res.layers]


def test_the_command_line_and_python_probe_a_checkpoint_with_the_same_windows_to_the_bit(checkpoint, capsys):
    assert main(["probe", str(checkpoint), "--sequences", str(SEQ), "--seed", "4", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    py = lnrecency.probe_model(checkpoint, sequences=SEQ, seed=4)
    assert cli["model"]["inputs_sha256"] == py.model["inputs_sha256"]
    assert [lp["recency_slope"] for lp in cli["layers"]] == _slopes(py)
    assert cli["settings"]["tokens"] == py.settings.tokens == "task" and cli["beside"]["tokens"] == "random"
    assert py.settings.n == N  # the decoders' default window, shortened to the context
    assert py.model["streamed"] and py.inputs.shape == (SEQ, N)


def test_a_train_result_a_checkpoint_and_the_same_windows_as_ids_agree(trained, checkpoint):
    from_result = lnrecency.probe_model(trained, sequences=SEQ)
    from_folder = lnrecency.probe_model(checkpoint, sequences=SEQ)
    assert from_result.model["inputs_sha256"] == from_folder.model["inputs_sha256"]
    assert _slopes(from_result) == _slopes(from_folder)
    given = lnrecency.probe_model(trained.model, tokens=from_folder.inputs)  # the bare decoder, on the same ids
    assert given.settings.tokens == "given" and np.array_equal(given.inputs, from_folder.inputs)
    assert _slopes(given) == _slopes(from_folder)


def _logits(model, ids, step):
    """Every layer's logits of the windows ``ids`` run ``step`` windows at a time, one thread (as the probe)."""
    from lnrecency.experiments.decoders.train import deterministic

    out = []
    with deterministic(1), torch.no_grad():
        for a in range(0, len(ids), step):
            out.append(torch.stack([tr.logits for tr in model(torch.from_numpy(ids[a:a + step]), trace=True)[1]]))
    return torch.cat(out, 1).double()


def test_the_windows_do_not_depend_on_the_batch_size(trained, checkpoint):
    """The same seed draws the same windows at any batch size. The slopes then differ only as far as the float32
    logits do when the forward runs in other batches (BLAS blocks by batch): a layer's slope is a linear functional
    of the logits whose weights per row sum in absolute value to at most max_i sum_j |w_ij|, so it moves by at most
    that times the largest logit difference (measured here on the same windows), plus the float64 sums' order
    (70 eps of the slope)."""
    from lnrecency.inference.recency_slope import row_slope_weights

    a = lnrecency.probe_model(checkpoint, sequences=70, seed=1)  # two blocks of windows
    b = lnrecency.probe_model(checkpoint, sequences=70, seed=1, batch_size=3)
    assert a.model["inputs_sha256"] == b.model["inputs_sha256"] and np.array_equal(a.inputs, b.inputs)
    moved = float((_logits(trained.model, a.inputs, 64) - _logits(trained.model, a.inputs, 3)).abs().max())
    bound = moved * float(np.abs(row_slope_weights(N, 1)).sum(1).max())
    for x, y in zip(_slopes(a), _slopes(b)):
        assert abs(x - y) <= bound + 70 * 2.3e-16 * abs(x)


def test_the_streamed_decoder_probe_equals_the_reader_that_held_every_layer(trained):
    """probe_decoder reads the blocks one at a time (Decoder.layers); the same probe over the model's forward
    traces (all layers at once, as before it streamed) gives exactly the same numbers."""
    from lnrecency.experiments.decoders.train import deterministic
    from lnrecency.experiments.probes.probe import ProbeSettings, probe
    from lnrecency.experiments.probes.probe_decoder import probe_decoder, token_inputs

    model = trained.model
    st = ProbeSettings(n=N, sequences=SEQ, seed=2, tokens="task", chunk=5)
    streamed = probe_decoder(model, st, task="argmax")
    make = token_inputs(model, st, "argmax")

    def traces_of(start, stop):
        with torch.no_grad():
            _, tr = model(make(start, stop), trace=True)
        return [{"logits": t.logits, "weights": t.weights, "values": t.values, "head_out": t.head_out,
                 "normed": t.normed, "attn_out": t.attn_out, "mid": t.mid, "mlp_in": t.mlp_in, "out": t.out}
                for t in tr]
    with deterministic(1):  # one thread, as the probe: the same float32 sums
        held = probe(traces_of, n_layers=2, n_heads=4, settings=st, model_info={}, assumptions={}, width=32)
    for a, b in zip(streamed.layers, held.layers):
        assert (a.slope, a.rp, a.sink) == (b.slope, b.rp, b.sink)
        assert np.array_equal(a.heads[1].norm_profile, b.heads[1].norm_profile)
        assert np.array_equal(a.mean_logit, b.mean_logit, equal_nan=True)


def _own_layer1(model, ids, positions: bool) -> tuple[float, np.ndarray]:
    """Layer 1's slope from the weights in float64, by numpy: S = (W_Q y)(W_K y)^T / sqrt(d_head) on y the first
    LayerNorm of the token (plus, with positions, the position) embeddings; per row i a least-squares slope over the
    earlier keys 2..i-1 (the BOS key out) for rows with at least 3 such keys, rows weighted by their keys, heads
    averaged. Returns (the slope, the head-mean logits (B, n, n))."""
    cfg = model.cfg
    with torch.no_grad():
        x = model.tok.weight.double()[torch.from_numpy(ids)]
        if positions:
            x = x + model.pos.weight.double()[:ids.shape[1]]
        ln = model.blocks[0].pre
        y = torch.nn.functional.layer_norm(x, (cfg.d_model,), ln.weight.double(), ln.bias.double(), ln.eps)
        at, dh = model.blocks[0].attn, cfg.head_dim
        q = (y @ at.q.weight.double().T).reshape(*ids.shape, cfg.n_heads, dh).numpy()
        k = (y @ at.k.weight.double().T).reshape(*ids.shape, cfg.n_heads, dh).numpy()
    s = np.einsum("bihd,bjhd->bhij", q, k).mean(1) / np.sqrt(dh)  # head-mean logits (B, n, n)
    per_seq = []
    for b in range(ids.shape[0]):
        num = den = 0.0
        for i in range(ids.shape[1]):
            keys = np.arange(1, i)  # 0-based: the earlier keys 1..i-1 (key 0, the BOS, out)
            if keys.size >= 3:
                num += keys.size * np.polyfit(keys, s[b, i, keys], 1)[0]
                den += keys.size
        per_seq.append(num / den)
    return float(np.mean(per_seq)), s


def _model_logits(model, ids, positions: bool) -> np.ndarray:
    """The model's own float32 layer-1 logits, head-mean, as the probe reads them."""
    with torch.no_grad():
        tr = next(model.layers(torch.from_numpy(ids), positions=positions))[2]
    return tr.logits.double().mean(1).numpy()


def test_positions_both_switches_the_learned_embeddings_off_on_the_same_windows(trained):
    """Positions on and off, each against our own float64 computation from the weights. The model runs in float32:
    a slope is a linear functional of the head-mean logits whose row weights sum in absolute value to at most
    max_i sum_j |w_ij| (averaging rows and windows keeps the bound), so the probe's slope may differ from ours by
    that times the largest difference between the model's float32 logits and ours (measured on the same windows),
    plus float64 rounding (1e-12 of the slope). The two states differ by far more (the switch acts), and the paired
    difference is reported with its SE."""
    from lnrecency.inference.recency_slope import row_slope_weights

    model = trained.model
    res = lnrecency.probe_model(trained, sequences=SEQ, positions="both")
    ids = res.inputs
    norm1 = float(np.abs(row_slope_weights(N, 1)).sum(1).max())
    own = {}
    for state, on in (("on", True), ("off", False)):
        slope, s = _own_layer1(model, ids, on)
        tol = norm1 * float(np.abs(np.tril(_model_logits(model, ids, on) - s)).max()) + 1e-12 * abs(slope)
        own[state] = (slope, tol)
    got = {"on": res.layer(1).slope, "off": res.positions_off.layer(1).slope}
    for state in ("on", "off"):
        assert abs(got[state] - own[state][0]) <= own[state][1], state
    assert abs(own["on"][0] - own["off"][0]) > 100 * (own["on"][1] + own["off"][1])  # the check can say no
    d = res.positions_difference()[0]
    assert abs(d["difference"] - (own["on"][0] - own["off"][0])) <= own["on"][1] + own["off"][1]
    assert d["difference_se"] > 0
    assert res.model["positions"]["scheme"] == "learned" and "left out" in res.model["positions"]["state"]


def test_the_identity_decoder_from_the_command_line_and_python_agree(capsys):
    from lnrecency.experiments.decoders.decoder import build
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig
    from lnrecency.model.config import ModelConfig

    assert main(["probe", "--identity", "--n", "8", "--sequences", "16", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    model = build(DecoderConfig.identity_of(ModelConfig(), d=64, layers=2, n=8), 0)
    py = lnrecency.probe_model(model, n=8, sequences=16)
    assert [lp["recency_slope"] for lp in cli["layers"]] == _slopes(py)
    assert py.settings.tokens == "theory" and py.inputs is None and py.model["kind"] == "identity"


def test_slopes_only_and_maps_are_honoured(trained):
    """slopes_only reads the same slopes from running sums, float64 either way, the same float32 logits in another
    order: a window's head or layer slope sums N^2 terms omega_i w_ij S_ij whose absolute values add up to at most
    max|S| max_i sum_j |w_ij| (the row weights omega sum to 1), then SEQ windows are averaged; reordering such a
    float64 sum moves it by at most (N^2 + SEQ) eps64 of that. It keeps no RP; maps keeps each head's mean logit map,
    and only then."""
    from lnrecency.inference.recency_slope import row_slope_weights

    full = lnrecency.probe_model(trained, sequences=SEQ)
    slim = lnrecency.probe_model(trained, sequences=SEQ, slopes_only=True)
    with torch.no_grad():
        top = max(float(tr.logits.abs().max()) for _, _, tr in trained.model.layers(torch.from_numpy(full.inputs)))
    bound = (N * N + SEQ) * np.finfo(np.float64).eps * top * float(np.abs(row_slope_weights(N, 1)).sum(1).max())
    assert np.allclose(_slopes(full), _slopes(slim), rtol=0, atol=bound)
    heads = [[h.recency_slope for h in lp.heads] for lp in full.layers]
    assert np.allclose(heads, [[h.recency_slope for h in lp.heads] for lp in slim.layers], rtol=0, atol=bound)
    assert min(abs(s) for s in _slopes(full)) > 1e3 * bound  # the slopes are far above it: a wrong sum would show
    assert np.isnan(slim.layer(1).rp) and not np.isnan(full.layer(1).rp)
    assert full.layer(1).heads[0].mean_logit is None
    kept = lnrecency.probe_model(trained, sequences=SEQ, maps=True)
    assert kept.maps()["head_mean_logit"].shape == (2, 4, N, N)


@pytest.mark.parametrize("kw, word", [
    ({"device": "meta"}, "device='meta'"),
    ({"device": "nowhere"}, "device must be a torch device or its name"),
    ({"tokenizer": object()}, "tokenizer"),
    ({"texts": "some text"}, "texts"),
    ({"tokens": "text"}, "tokens='text' needs a model with its own tokenizer"),
    ({"positions": "zero", "bare": True}, "tokens='task' needs the model's task"),
    ({"tokens": "task", "bare": True}, "tokens='task' needs the model's task"),
    ({"ablate_sink": "3:0"}, "ablate_sink: layer 3 is not one of the model's layers 1..2"),
    ({"bos": "none", "tokens": "random"}, "bos='none' with tokens='random'"),
    ({"n": N + 1}, f"n must be <= the model's context {N}"),
    ({"max_model_mib": 10.0}, "max_model_mib applies to a GGUF model"),
])
def test_every_argument_is_honoured_or_refused_by_name_for_a_decoder(trained, kw, word):
    kw = dict(kw)
    model = trained.model if kw.pop("bare", False) else trained
    if kw.get("positions") == "zero":  # a bare decoder without its task: the refusal of the task comes first
        kw["tokens"] = "task"
    tokenizer = kw.pop("tokenizer", None)
    with pytest.raises(ValueError, match=None) as err:
        lnrecency.probe_model(model, tokenizer, sequences=SEQ, **kw)
    assert word in str(err.value)


def test_decoder_only_arguments_are_refused_by_name_for_a_transformers_model():
    transformers = pytest.importorskip("transformers")
    torch.manual_seed(0)
    llama = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=1, max_position_embeddings=32, bos_token_id=0))
    for kw, word in (({"tokens": "task"}, "tokens='task' goes with this project's decoders"),
                     ({"ablate_sink": "1:0"}, "ablate_sink goes with this project's decoders")):
        with pytest.raises(ValueError) as err:
            lnrecency.probe_model(llama, n=8, sequences=8, **kw)
        assert word in str(err.value)


def test_the_command_line_announces_the_plan_and_shows_progress_off_a_terminal(checkpoint, capsys):
    """Every source announces its plan and shows progress lines on stderr when it is not a terminal (here: captured),
    a decoder as a transformers model does."""
    assert main(["probe", str(checkpoint), "--sequences", str(SEQ)]) == 0
    err = capsys.readouterr().err
    assert f"probe: a decoder of this project, 2 layers x 4 heads, {SEQ} windows of n = {N} (task)" in err
    assert f"probe: {SEQ}/{SEQ} sequences" in err


def test_fewer_windows_than_a_step_are_read_as_asked():
    """sequences below the step size: exactly that many windows are drawn and enter the sums (a first step of a whole
    chunk once read 64 windows for 16 asked, and reported 64/16 in its progress)."""
    from lnrecency.experiments.probes.probe import ProbeSettings, probe

    calls = []

    def traces_of(start, stop):
        calls.append((start, stop))
        s = torch.zeros(stop - start, 1, 6, 6, dtype=torch.float64)
        p = torch.tril(torch.ones(6, 6, dtype=torch.float64)) / torch.arange(1, 7, dtype=torch.float64)[:, None]
        return [{"logits": s, "weights": p.expand(stop - start, 1, 6, 6).clone()}]
    res = probe(traces_of, n_layers=1, n_heads=1, settings=ProbeSettings(n=6, sequences=9, chunk=64), model_info={},
                assumptions={})
    assert calls == [(0, 9)] and len(res.layer(1).slope_values) == 9
