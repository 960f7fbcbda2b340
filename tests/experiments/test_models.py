"""lnrecency.experiments.decoders: the decoder configuration, the tasks, deterministic training and checkpoints, the
probe on
our decoders and on tiny Hugging Face models built here from configs (no download), and the commands."""
from __future__ import annotations

import contextlib
import json
import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.cli.app import main  # noqa: E402
from lnrecency.experiments.decoders.decoder import build, rotary_embedding  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.decoders.tasks import BOS, SEP, batch  # noqa: E402
from lnrecency.experiments.decoders.train import TrainSettings, load, save, train  # noqa: E402
from lnrecency.experiments.probes.probe import ProbeSettings, diag_normalise, recency_counts, row_slope_weights
from lnrecency.experiments.probes.probe_decoder import probe_decoder
from lnrecency.files.atomic import MANIFEST  # noqa: E402
from lnrecency.model.config import ModelConfig  # noqa: E402

SMALL = DecoderConfig(vocab=32, d_model=32, n_layers=2, n_heads=2, context=16)


@pytest.mark.parametrize("kw, word", [(dict(norm="batchnorm"), "norm"), (dict(d_model=30, n_heads=4), "multiple"),
                                      (dict(positions="rotary", d_model=12, n_heads=4), "even"),
                                      (dict(n_layers=0), "n_layers"), (dict(vocab=10**9), "vocab"),
                                      (dict(mlp=1), "mlp"), (dict(placement="middle"), "placement")])
def test_config_refusals(kw, word):
    with pytest.raises(ValueError, match=word):
        DecoderConfig(**kw)


def test_identity_config_is_fixed_and_round_trips():
    cfg = DecoderConfig.identity_of(ModelConfig(norm="l2", residual=True, gamma=0.5, lam=2.0), d=16, layers=3, n=8)
    assert cfg.n_heads == 1 and not cfg.mlp and cfg.residual and cfg.norm == "l2"
    assert DecoderConfig.from_dict(json.loads(json.dumps(cfg.as_dict()))) == cfg
    with pytest.raises(ValueError, match="identity decoder has"):
        cfg.replace(n_heads=2)
    with pytest.raises(ValueError, match="unknown"):
        DecoderConfig.from_dict({"vocab": 4, "wat": 1})


def test_tasks_are_what_the_readme_says():
    rng = np.random.default_rng(0)
    toks, tg = batch("induction", 12, 50, 20, rng)
    m = 5
    assert (toks[:, 0] == BOS).all() and (toks[:, 1:1 + m] == toks[:, 1 + m:1 + 2 * m]).all()
    assert toks[:, 1:].min() >= 2 and toks.max() < 20
    # targets: r_2..r_m of the second copy, at the positions that precede them
    for b in range(50):
        for p in range(12):
            want = toks[b, p + 1] if m + 1 <= p < 2 * m else -1
            assert tg[b, p] == want
    toks, tg = batch("repeats", 13, 200, 50, rng)
    for b in range(200):  # find the period: the smallest m >= 2 with toks[1 + t] = toks[1 + t mod m]
        r = toks[b, 1:]
        m = next(k for k in range(2, 7) if all(r[t] == r[t % k] for t in range(12)))
        want = [r[t] if t >= m else -1 for t in range(12)] + [-1]  # position t predicts token t + 1
        assert list(tg[b]) == want, (b, m)
    assert len({next(k for k in range(2, 7) if all(toks[b, 1 + t] == toks[b, 1 + t % k] for t in range(12)))
                for b in range(200)}) == 5  # every period 2..6 occurs
    toks, tg = batch("argmax", 9, 40, 30, rng)
    assert (toks[:, -1] == SEP).all() and (tg[:, -1] == toks[:, 1:-1].max(axis=1)).all() and (tg[:, :-1] == -1).all()
    toks, tg = batch("lookup", 11, 40, 30, rng)  # m = 4 pairs
    for b in range(40):
        keys, values = toks[b, 1:9:2], toks[b, 2:9:2]
        assert len(set(keys)) == 4 and toks[b, 9] == SEP and keys.max() < 2 + 14 <= values.min()
        assert tg[b, -1] == values[list(keys).index(toks[b, 10])]
    with pytest.raises(ValueError, match="odd length"):
        batch("lookup", 10, 2, 30, rng)


def test_training_is_byte_identical_per_seed(tmp_path):
    st = TrainSettings(steps=15, n=16, batch=8, eval_every=5)
    a = save(train(SMALL, st), tmp_path / "a")
    b = save(train(SMALL, st), tmp_path / "b")
    c = save(train(SMALL, st.__class__(**{**st.__dict__, "seed": 1})), tmp_path / "c")
    wa, wb, wc = ((p / "model.safetensors").read_bytes() for p in (a, b, c))
    assert wa == wb and wa != wc
    assert (a / "train_log.json").read_text() == (b / "train_log.json").read_text()


def test_checkpoint_round_trip_and_refusals(tmp_path):
    res = train(SMALL.replace(positions="learned", mlp=True, norm="rmsnorm", placement="both"),
                TrainSettings(steps=3, n=16, batch=4, eval_every=0))
    save(res, tmp_path / "ck")
    model, meta = load(tmp_path / "ck")
    x = torch.from_numpy(np.random.default_rng(1).integers(0, 32, size=(3, 16)))
    with torch.no_grad():
        assert torch.equal(model(x)[0], res.model(x)[0])
    assert meta["training"]["steps"] == 3 and set(meta["files"]) == {p.name for p in (tmp_path / "ck").iterdir()
                                                                     if p.name != MANIFEST}
    with pytest.raises(ValueError, match="checkpoint folder"):
        load(tmp_path / "missing")
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "config.json").write_text("{not json")
    (tmp_path / "bad" / "model.safetensors").write_bytes(b"")
    with pytest.raises(ValueError, match="not valid JSON"):
        load(tmp_path / "bad")


def test_interrupted_training_leaves_no_checkpoint(tmp_path, monkeypatch):
    import lnrecency.experiments.decoders.train as tr

    calls = {"n": 0}
    real = tr.batch

    def interrupt(*a, **k):
        calls["n"] += 1
        if calls["n"] == 4:
            raise KeyboardInterrupt
        return real(*a, **k)

    monkeypatch.setattr(tr, "batch", interrupt)
    monkeypatch.chdir(tmp_path)
    assert main(["train", "induction", "--steps", "10", "--n", "16", "--width", "32", "--vocab", "32",
                 "--eval-every", "0", "--out", "ck"]) == 130
    assert list(tmp_path.iterdir()) == []  # no checkpoint, no hidden staging folder


def test_rotary_is_relative():
    q = torch.randn(1, 1, 1, 8, dtype=torch.float64).expand(1, 1, 6, 8)
    k = torch.randn(1, 1, 1, 8, dtype=torch.float64).expand(1, 1, 6, 8)
    s = rotary_embedding(q) @ rotary_embedding(k).transpose(-1, -2)
    assert torch.allclose(torch.linalg.norm(rotary_embedding(q), dim=-1), torch.linalg.norm(q, dim=-1))
    for off in range(6):  # the score of a fixed (q, k) pair depends on the offset only
        d = torch.diagonal(s[0, 0], -off)
        assert torch.allclose(d, d[0].expand_as(d), atol=1e-12)


def test_identity_decoder_is_the_monte_carlo_on_the_same_draws():
    """Same seed, same embeddings (numerics' direct sampler): the decoder and simulate_scores compute the same
    function, so the means agree to float64 rounding (implementation consistency, not a statistical check)."""
    from lnrecency.numerics import simulate_scores

    for mc in (ModelConfig(norm="layernorm", lam=2.0), ModelConfig(norm="none", residual=True, gamma=0.5, alpha=0.3),
               ModelConfig(norm="l2", residual=True, embedding="normalized", alpha=0.2)):
        model = build(DecoderConfig.identity_of(mc, d=24, layers=3, n=6), 0)
        pr = probe_decoder(model, ProbeSettings(n=6, sequences=300, seed=5, chunk=64))
        sim = simulate_scores(6, 3, 24, 300, seed=5, method="direct", config=mc)
        got = np.stack([lp.heads[0].mean_logit for lp in pr.layers])
        assert np.nanmax(np.abs(got - sim.mean)) < 1e-12
        osq = np.stack([lp.heads[0].norm_profile for lp in pr.layers])
        assert np.max(np.abs(osq - sim.output_sq_norm_mean)) < 1e-12
        # the probe's per-instance RP (torch) and the Monte Carlo's (numerics) count the same triples
        for lp in pr.layers:
            rp = sim.recency_probability(lp.layer)
            assert abs(lp.rp - rp.mean) < 1e-12 and abs(lp.rp_se - rp.stderr) < 1e-12


def test_probe_helpers():
    n = 7
    w = row_slope_weights(n)
    s = np.tril(np.add.outer(np.zeros(n), 0.5 * np.arange(1, n + 1)))  # S_ij = j / 2: slope 1/2 on every row
    assert np.allclose((w * s).sum(1)[2:], 0.5) and np.allclose((w * s).sum(1)[:2], 0.0)
    t = torch.from_numpy(s)[None]
    total = sum((i - 1) * (i - 2) // 2 for i in range(3, n + 1))
    assert float(recency_counts(t)[0]) == total and float(recency_counts(-t)[0]) == 0
    m = np.tril(np.arange(16.0).reshape(4, 4))
    dn = diag_normalise(m)
    for off in range(4):
        assert abs(np.nanmean(np.diagonal(dn, -off))) < 1e-12
    assert np.isnan(dn[0, 1])


def test_probe_json_schema_and_phases(capsys):
    assert main(["probe", "--identity", "--norm", "none", "--layers", "3", "--n", "6", "--d", "256",
                 "--sequences", "2000", "--maps", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [lay["layer"] for lay in out["layers"]] == [1, 2, 3]
    head = out["layers"][0]["heads"][0]
    assert head["head"] == 1 and head["mean_logit"][0][1] is None and head["mean_logit"][1][0] is not None
    for key in ("recency_slope", "recency_slope_se", "rp", "rp_se", "mean_logit_se"):
        assert key in head
    # the limit: no normalisation, layer 3 has earlier-token bias (C2); layer 1 is flat below the diagonal
    assert out["layers"][2]["phase"] == "earlier" and out["layers"][0]["phase"] == "flat"
    assert main(["probe", "--identity", "--n", "6", "--sequences", "2000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layers"][1]["phase"] == "recency"  # Theorem 1


@pytest.mark.parametrize("argv, word", [
    (["probe"], "exactly one"), (["probe", "x", "--identity"], "exactly one"),
    (["probe", "--identity", "--n", "2"], "n must"), (["probe", "--identity", "--sequences", "10**30"], "invalid"),
    (["probe", "--identity", "--d", "100000"], "--d"), (["probe", "nowhere"], "checkpoint folder"),
    (["probe", "--identity", "--no-rope", "--positions", "both"], "--no-rope is the deprecated spelling"),
    (["probe", "--identity", "--positions", "zero"], "--positions zero replaces learned"),
    (["probe", "nowhere", "--alpha", "0.5"], "go with"),
    (["train", "copy", "--out", "x"], "task"), (["train", "induction", "--norm", "l2", "--out", "x"], "norm"),
    (["train", "induction", "--out", ""], "--out"), (["train", "induction", "--steps", "0", "--out", "x"], "steps"),
    (["experiments", "seed004"], "experiment"), (["verify", "--lines", "-1"], "--lines"),
    (["probe", "--identity", "--bos", "none"], "--bos none: goes with"), (["probe", "--gguf", "x", "--bos", "yes"],
                                                                           "--bos must be one of"),
])
def test_cli_refusals(argv, word, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) if word == "invalid" else contextlib.nullcontext():
        assert main(argv) == 2
    err = capsys.readouterr().err
    assert word in err and "Traceback" not in err
    assert not (tmp_path / "x").exists()


# --------------------------------------------------------------------------------------------------------
# Hugging Face causal LMs, built here from configs (nothing downloaded)
# --------------------------------------------------------------------------------------------------------
transformers = pytest.importorskip("transformers")


def _tiny(kind: str, path) -> str:
    torch.manual_seed(0)
    if kind == "llama":
        cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64)
    elif kind == "gpt2":
        cfg = transformers.GPT2Config(vocab_size=64, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                      bos_token_id=0, eos_token_id=0)
    else:
        cfg = transformers.GPTNeoXConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                         num_attention_heads=4, max_position_embeddings=64)
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(str(path))
    return str(path)


@pytest.mark.parametrize("kind", ["llama", "gpt2", "gpt_neox"])
def test_hf_probe_runs_on_tiny_models(kind, tmp_path, capsys):
    path = _tiny(kind, tmp_path / kind)
    assert main(["probe", "--hf", path, "--n", "12", "--sequences", "32", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["model_type"] == kind and len(out["layers"]) == 2
    assert len(out["layers"][0]["heads"]) == 4 and out["logits"].startswith("exact pre-softmax logits")
    assert (out["assumptions"]["w_qk"] is not None) == (kind != "gpt_neox")


def test_hf_log_weights_are_the_logits_up_to_a_row_constant(tmp_path):
    """The probe's HF logits (log P) against the true layer-1 logits computed by hand from q_proj / k_proj of
    the tiny LLaMA with rotary embeddings off: they differ by a constant per row, so row slopes agree."""
    from lnrecency.experiments.probes.hf import load_hf, rope_off
    from lnrecency.experiments.probes.probe import row_slope_weights

    path = _tiny("llama", tmp_path / "llama")
    model = load_hf(path)
    ids = torch.from_numpy(np.random.default_rng(0).integers(0, 64, size=(2, 10)))
    with torch.no_grad(), rope_off(model, True):
        out = model(input_ids=ids, output_attentions=True, output_hidden_states=True)
        layer = model.model.layers[0]
        y = layer.input_layernorm(out.hidden_states[0])
        q = layer.self_attn.q_proj(y).view(2, 10, 4, 8).transpose(1, 2)
        k = layer.self_attn.k_proj(y).view(2, 10, 2, 8).transpose(1, 2).repeat_interleave(2, dim=1)
        true = (q @ k.transpose(-1, -2)) / math.sqrt(8)
    logp = torch.log(out.attentions[0].double())
    mask = torch.ones(10, 10, dtype=torch.bool).tril()
    diff = (logp - true.double()).masked_fill(~mask, float("nan"))
    spread = np.nanmax(diff.numpy(), axis=-1) - np.nanmin(diff.numpy(), axis=-1)
    assert spread.max() < 1e-4  # float32 model: the constant per row holds to float32 rounding
    w = torch.from_numpy(row_slope_weights(10))
    assert torch.allclose(torch.einsum("bhij,ij->bhi", logp.masked_fill(~mask, 0), w),
                          torch.einsum("bhij,ij->bhi", true.double().masked_fill(~mask, 0), w), atol=1e-4)
    # with rotary embeddings on, the same hand computation (without RoPE) no longer matches
    with torch.no_grad():
        on = model(input_ids=ids, output_attentions=True)
    d2 = (torch.log(on.attentions[0].double()) - true.double()).masked_fill(~mask, float("nan")).numpy()
    assert (np.nanmax(d2, -1) - np.nanmin(d2, -1)).max() > 1e-3


def test_train_and_probe_commands(tmp_path, capsys):
    ck = tmp_path / "ck"
    assert main(["train", "argmax", "--steps", "5", "--n", "10", "--width", "32", "--vocab", "32",
                 "--positions", "learned", "--out", str(ck), "--json"]) == 0
    meta = json.loads(capsys.readouterr().out)
    assert meta["training"]["task"] == "argmax" and meta["decoder"]["positions"] == "learned"
    assert main(["probe", str(ck), "--n", "10", "--sequences", "16", "--tokens", "task"]) == 0
    text = capsys.readouterr().out
    assert "layer 1:" in text and "layer 2:" in text and "assumptions:" in text
    assert main(["probe", str(ck), "--n", "11", "--sequences", "16"]) == 2  # beyond the context
    assert "context" in capsys.readouterr().err
    # probe-time BOS (issue 50): --bos none reads the task without its BOS, beside it the task with BOS
    runs = {}
    for flags in (["--bos", "none"], ["--tokens", "task-no-bos"]):
        assert main(["probe", str(ck), "--n", "10", "--sequences", "16", "--json", *flags]) == 0
        runs[flags[0]] = json.loads(capsys.readouterr().out)
    assert runs["--bos"]["settings"]["tokens"] == "task-no-bos" and runs["--bos"]["beside"]["tokens"] == "task"
    assert [x["recency_slope"] for x in runs["--bos"]["layers"]] == [x["recency_slope"]
                                                                     for x in runs["--tokens"]["layers"]]
    assert main(["probe", str(ck), "--n", "10", "--tokens", "random", "--bos", "none"]) == 2
    assert "--bos none with --tokens random" in capsys.readouterr().err


def test_probe_leaves_the_bos_key_out_of_slopes_and_rp():
    """Logits S_ij = j for keys j >= 1 and a huge S_i0 (a BOS sink): on BOS-first inputs the slope is exactly
    1 and RP exactly 1 (the BOS key is out); read with the BOS key in, the sink drags both down. Rows enter
    the slope weighted by their number of keys (MIN_KEYS at least)."""
    from lnrecency.experiments.probes.probe import MIN_KEYS, probe, row_weights

    n, B = 12, 8
    s = torch.arange(n, dtype=torch.float64)[None, :].expand(n, n).clone()
    s[:, 0] = 100.0
    s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))
    logits = s.expand(B, 1, n, n).clone()
    weights = torch.softmax(logits, -1)
    logits = logits.masked_fill(torch.isinf(logits), 0.0)

    def traces_of(start, stop):
        return [{"logits": logits[: stop - start], "weights": weights[: stop - start]}]

    def run(tokens):
        return probe(traces_of, n_layers=1, n_heads=1, settings=ProbeSettings(n=n, sequences=B, tokens=tokens),
                     model_info={}, assumptions={}).layers[0]
    with_bos = run("task")
    assert with_bos.slope == pytest.approx(1.0, abs=1e-12) and with_bos.rp == pytest.approx(1.0, abs=1e-12)
    assert with_bos.sink == pytest.approx(float(weights[0, 0, 1:, 0].mean()), abs=1e-12)
    control = run("random")  # the neutral control starts with BOS too: its key is out as well
    assert control.slope == pytest.approx(1.0, abs=1e-12) and control.sink == pytest.approx(with_bos.sink)
    # read with the BOS key in (weights over keys 0..i-1), the sink drags the slope down
    w_in, omega_in = row_slope_weights(n, 0), row_weights(n, 0)
    slope_in = float((omega_in * (torch.from_numpy(w_in) * logits[0, 0]).sum(-1).numpy()).sum())
    assert slope_in < 0.5
    w = row_weights(n, 1)
    assert w.sum() == pytest.approx(1.0) and (w[: MIN_KEYS + 1] == 0).all() and w[-1] > w[MIN_KEYS + 1]


def test_hf_folders_are_data_custom_code_never_runs(tmp_path, capsys, monkeypatch):
    """A folder whose config names custom code (auto_map) with a module that would write a file: refused
    before transformers is called, and the file never appears (also with 'y' on stdin). Pickle weights are
    refused by name; weights that do not match the config are refused."""
    import io
    import shutil

    path = tmp_path / "evil"
    _tiny("llama", path)
    marker = tmp_path / "pwned"
    (path / "modeling_evil.py").write_text(f"open({str(marker)!r}, 'w').write('ran')\n")
    cfg = json.loads((path / "config.json").read_text())
    cfg["auto_map"] = {"AutoModelForCausalLM": "modeling_evil.EvilModel", "AutoConfig": "modeling_evil.EvilConfig"}
    (path / "config.json").write_text(json.dumps(cfg))
    monkeypatch.setattr("sys.stdin", io.StringIO("y\n"))
    assert main(["probe", "--hf", str(path), "--n", "8", "--sequences", "8", "--json"]) == 2
    assert "custom code" in capsys.readouterr().err and not marker.exists()
    cfg.pop("auto_map")
    cfg["model_type"] = "evil"
    (path / "config.json").write_text(json.dumps(cfg))
    assert main(["probe", "--hf", str(path), "--n", "8", "--sequences", "8"]) == 2
    assert "model_type" in capsys.readouterr().err and not marker.exists()
    # pickle weights only: refused by name
    pick = tmp_path / "pickle"
    _tiny("llama", pick)
    (pick / "model.safetensors").unlink()
    torch.save({}, pick / "pytorch_model.bin")
    assert main(["probe", "--hf", str(pick), "--n", "8", "--sequences", "8"]) == 2
    assert "pickle" in capsys.readouterr().err
    # weights that do not match the config (a deeper config than the checkpoint): refused
    other = tmp_path / "mismatch"
    _tiny("llama", other)
    cfg = json.loads((other / "config.json").read_text())
    cfg["num_hidden_layers"] = 3
    (other / "config.json").write_text(json.dumps(cfg))
    assert main(["probe", "--hf", str(other), "--n", "8", "--sequences", "8"]) == 2
    assert "do not match" in capsys.readouterr().err
    shutil.rmtree(path)


@pytest.mark.parametrize("case", ["int32 weights", "int8 weights", "bool weights", "sparse generation_config",
                                  "NaN in generation_config", "deep tokenizer_config"])
def test_hf_side_files_and_weight_dtypes_are_validated_before_use(tmp_path, capsys, case):
    """Integer and boolean weights are refused for HF folders as for checkpoints; every JSON file transformers
    would read is checked (regular file, size before reading, depth, finite numbers). One line, exit 2, the file
    named. The legitimate neighbour (the same folder untouched) probes."""
    from safetensors.torch import load_file, save_file

    path = _tiny("llama", tmp_path / "m")
    folder = tmp_path / "m"
    if case.endswith("weights"):
        dtype = {"int32": torch.int32, "int8": torch.int8, "bool": torch.bool}[case.split()[0]]
        w = load_file(str(folder / "model.safetensors"))
        name = sorted(w)[0]
        w[name] = w[name].to(dtype)
        save_file(w, str(folder / "model.safetensors"), metadata={"format": "pt"})
        needle = "floating-point"
    elif case.startswith("sparse"):
        with open(folder / "generation_config.json", "wb") as fh:
            fh.write(b'{"a": 1}')
            fh.truncate(1_500_000_000)
        needle = "generation_config.json"
    elif case.startswith("NaN"):
        (folder / "generation_config.json").write_text('{"temperature": NaN}')
        needle = "generation_config.json"
    else:
        (folder / "tokenizer_config.json").write_text("[" * 5000 + "]" * 5000)
        needle = "tokenizer_config.json"
    capsys.readouterr()  # the model's own save messages
    assert main(["probe", "--hf", path, "--n", "8", "--sequences", "8"]) == 2
    err = capsys.readouterr().err.strip()
    assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_hf_the_legitimate_neighbour_still_probes(tmp_path, capsys):
    path = _tiny("llama", tmp_path / "m")
    (tmp_path / "m" / "generation_config.json").write_text('{"temperature": 0.7, "do_sample": false}')
    assert main(["probe", "--hf", path, "--n", "8", "--sequences", "8", "--json"]) == 0


def test_the_random_control_is_neutral_and_the_bos_response_is_apart():
    """The random variant holds no special token after its first BOS; a planted model whose only positional signal
    is a BOS reaction (each query attends to the latest BOS before it) reads flat on the neutral control (slope
    exactly 0) and positive on the BOS-response diagnostic, where scattered BOS keys sit closer to later queries."""
    from lnrecency.experiments.decoders.tasks import BOS_RATE, bos_response_tokens, random_tokens
    from lnrecency.experiments.probes.probe import probe
    from lnrecency.inference.stats import PER_COMPARISON, k_for

    rng = np.random.default_rng(5)
    toks = random_tokens(64, 400, 64, rng)
    assert (toks[:, 0] == BOS).all() and not np.isin(toks[:, 1:], (BOS, SEP)).any()
    scattered = bos_response_tokens(64, 400, 64, rng)
    assert (scattered[:, 0] == BOS).all() and abs((scattered[:, 2:] == BOS).mean() - BOS_RATE) < 0.005
    n, B = 64, 1024

    def planted(kind):
        def traces_of(start, stop):
            r = np.random.default_rng([7, start])
            t = (random_tokens if kind == "random" else bos_response_tokens)(n, stop - start, 64, r)
            is_bos = torch.from_numpy(t == BOS)
            idx = torch.arange(n).expand(stop - start, n)
            last = torch.cummax(torch.where(is_bos, idx, torch.zeros_like(idx)), dim=1).values  # latest BOS <= i
            s = 5.0 * (idx[:, None, :] == last[:, :, None]).to(torch.float64)  # row i: key j is the latest BOS
            s = s.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf"))[:, None]
            w = torch.softmax(s, -1)
            return [{"logits": s.masked_fill(torch.isinf(s), 0.0), "weights": w}]
        return probe(traces_of, n_layers=1, n_heads=1, settings=ProbeSettings(n=n, sequences=B, tokens=kind),
                     model_info={}, assumptions={}).layers[0]

    neutral, response = planted("random"), planted("bos-response")
    assert neutral.slope == 0.0 and neutral.slope_se == 0.0  # only the BOS key reacts, and it is left out
    k = k_for(PER_COMPARISON, sided=1)  # a one-sided claim at the suite's per-comparison rate
    assert response.slope > k * response.slope_se, (response.slope, response.slope_se)


def test_row_regions_split_the_layer_slope_and_no_bos_keeps_every_key():
    """Planted head-mean logits whose rows of the first copy fall (slope -1 per key) and of the second rise
    (+1): the region slopes are exactly -1 and +1 and the layer slope is their key-weighted balance; the
    training distribution without BOS leaves no key out (bos_first False)."""
    from lnrecency.experiments.probes.probe import probe, row_weights
    from lnrecency.experiments.probes.probe_decoder import induction_regions

    n, B = 13, 8
    regions = induction_regions(n)
    assert regions == {"first copy": list(range(2, 8)), "second copy": list(range(8, 14))}
    assert induction_regions(12, bos=False) == {"first copy": list(range(1, 7)), "second copy": list(range(7, 13))}
    j = torch.arange(n, dtype=torch.float64)
    s = torch.zeros(n, n, dtype=torch.float64)
    for i in range(n):
        s[i] = (-1.0 if i + 1 in regions["first copy"] else 1.0) * j
    s[:, 0] = 0.0
    logits = s.expand(B, 1, n, n).clone()
    weights = torch.softmax(logits.masked_fill(~torch.ones(n, n, dtype=torch.bool).tril(), float("-inf")), -1)
    lay = probe(lambda a, b: [{"logits": logits[: b - a], "weights": weights[: b - a]}], n_layers=1, n_heads=1,
                settings=ProbeSettings(n=n, sequences=B, tokens="task"), model_info={}, assumptions={},
                regions=regions).layers[0]
    assert lay.regions["first copy"][0] == pytest.approx(-1.0, abs=1e-12)
    assert lay.regions["second copy"][0] == pytest.approx(1.0, abs=1e-12)
    w = row_weights(n, 1)
    first = sum(w[r - 1] for r in regions["first copy"])
    assert lay.slope == pytest.approx(-first + (1 - first), abs=1e-12)
    assert not ProbeSettings(n=n, tokens="task-no-bos").bos_first and ProbeSettings(n=n, tokens="task").bos_first
