"""The probe, round 3 (issue 77): one engine behind the command line and Python (the same windows and numbers for
the same seed; positions on and off on the same windows with the paired difference), one vocabulary (each shared
flag is lnrecency.probe_model's argument of the same name and default), every argument honoured or refused by name
for every kind of input, the maps as arrays, a plot, the index convention. Tiny models built from configs."""
from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402
from lnrecency.experiments.probes.model_inputs import SHARED_FLAGS  # noqa: E402

N, SEQ, V = 16, 8, 64


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, bos_token_id=0, eos_token_id=1))


@pytest.fixture(scope="module")
def folder(llama, tmp_path_factory):
    path = tmp_path_factory.mktemp("hf") / "llama"
    llama.save_pretrained(path, safe_serialization=True)
    return path


def test_each_shared_flag_is_the_python_argument_of_the_same_name_and_default():
    from lnrecency.cli.app import build_parser
    from lnrecency.experiments.probes.model_probe import probe_model

    _, parser, _ = build_parser().commands["probe"]
    flags = {a.dest: a for a in parser._actions if a.option_strings}
    params = inspect.signature(probe_model).parameters
    for name in SHARED_FLAGS + ("max_seconds",):
        assert "--" + name.replace("_", "-") in flags[name].option_strings, name
        assert name in params and params[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert flags[name].default == params[name].default, (name, flags[name].default, params[name].default)
    assert params["positions"].default == "on" and set(flags["positions"].choices) == {"on", "off", "zero", "both"}


def test_the_command_line_and_python_probe_the_same_windows_to_the_bit(folder, llama, capsys):
    from lnrecency.cli.app import main

    assert main(["probe", "--hf", str(folder), "--n", str(N), "--sequences", str(SEQ), "--positions", "both",
                 "--seed", "3", "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    py = lnrecency.probe_model(folder, n=N, sequences=SEQ, positions="both", seed=3)
    obj = lnrecency.probe_model(llama, n=N, sequences=SEQ, positions="both", seed=3)
    assert cli["model"]["inputs_sha256"] == py.model["inputs_sha256"] == obj.model["inputs_sha256"]
    slopes = [lp["recency_slope"] for lp in cli["layers"]]
    assert slopes == [lp.slope for lp in py.layers] == [lp.slope for lp in obj.layers]
    assert cli["positions_difference"] == py.positions_difference()
    other = lnrecency.probe_model(llama, n=N, sequences=SEQ, seed=4)  # the neighbour: another seed, other windows
    assert other.model["inputs_sha256"] != obj.model["inputs_sha256"]


def test_positions_both_is_on_and_off_on_the_same_windows_with_the_paired_se(llama):
    both = lnrecency.probe_model(llama, n=N, sequences=SEQ, positions="both")
    on = lnrecency.probe_model(llama, n=N, sequences=SEQ, positions="on")
    off = lnrecency.probe_model(llama, n=N, sequences=SEQ, positions="off")
    assert both.model["inputs_sha256"] == on.model["inputs_sha256"] == off.model["inputs_sha256"]
    for d, a, b in zip(both.positions_difference(), on.layers, off.layers):
        per = a.slope_values - b.slope_values
        assert (d["on"], d["off"]) == (a.slope, b.slope)
        assert d["difference"] == pytest.approx(a.slope - b.slope, abs=1e-15)
        assert d["difference_se"] == pytest.approx(per.std(ddof=1) / np.sqrt(SEQ), rel=1e-12)
        # paired: the SE of the difference is not the unpaired sqrt(se_on^2 + se_off^2)
        assert d["difference_se"] != pytest.approx(np.hypot(a.slope_se, b.slope_se), rel=1e-3)
    with pytest.raises(ValueError, match="positions='both'"):
        on.positions_difference()


@pytest.mark.parametrize("kw,word", [
    (dict(device="meta"), "device='meta' holds no weights"), (dict(device=3.5), "device must be a torch device"),
    (dict(batch_size=0), "batch_size must be"), (dict(slopes_only="yes"), "slopes_only must be"),
    (dict(max_seconds=-1), "max_seconds must be"), (dict(positions="zero"), "a GGUF model's are RoPE"),
    (dict(tokenizer=object()), "tokenizer: a GGUF model carries its own tokenizer"),
    (dict(maps=True, slopes_only=True), "give one"), (dict(tokens=np.zeros((3, N), dtype=int)), "tokens must hold"),
])
def test_a_gguf_model_honours_or_refuses_every_argument_by_name_before_it_is_read(kw, word, tmp_path):
    missing = tmp_path / "absent.gguf"  # never opened: each refusal comes first
    with pytest.raises(ValueError, match=word) as got:
        lnrecency.probe_model(missing, **kw)
    assert "--" not in str(got.value) and "absent.gguf" not in str(got.value)


def test_python_refusals_name_python_arguments(llama, tmp_path):
    with pytest.raises(ValueError, match=r"tokens must hold at least 8 sequences \(rows\); got an array of shape"):
        lnrecency.probe_model(llama, tokens=np.full((3, N), 5))
    with pytest.raises(ValueError, match="max_model_mib applies to a GGUF model"):
        lnrecency.probe_model(llama, max_model_mib=10)
    with pytest.raises(ValueError, match="texts= is the text itself"):
        (tmp_path / "t.txt").write_text("w1 w2")
        lnrecency.probe_model(llama, texts=str(tmp_path / "t.txt"))
    with pytest.raises(ValueError, match=r"with max_seconds \(--max-seconds on the command line\)"):
        lnrecency.probe_model(llama, n=64, sequences=10**6, max_seconds=1.0)
    assert len(lnrecency.probe_model(llama, tokens=np.full((8, N), 5)).layers) == 2  # the neighbour: 8 rows


class _NoIds:
    bos_token_id = None
    all_special_ids: list = []

    def __init__(self, out):
        self.out = out

    def __call__(self, text, add_special_tokens=True):
        return self.out


@pytest.mark.parametrize("out", [None, object()])
def test_a_tokenizer_returning_no_input_ids_is_refused_by_name(llama, out):
    with pytest.raises(ValueError, match="tokenizer: _NoIds returned .* no input_ids"):
        lnrecency.probe_model(llama, _NoIds(out), texts=["w " * 400], n=N, sequences=SEQ)


def test_a_folder_without_a_tokenizer_on_text_is_refused_before_its_weights_are_read(folder, capsys, monkeypatch):
    from lnrecency.cli.app import main
    from lnrecency.experiments.probes import hf

    def never(*args, **kwargs):
        raise AssertionError("the weights were read")
    monkeypatch.setattr(hf, "load_hf", never)
    with pytest.raises(ValueError, match="has no tokenizer"):
        lnrecency.probe_model(folder, tokens="text")
    assert main(["probe", "--hf", str(folder), "--tokens", "text"]) == 2
    err = capsys.readouterr().err
    assert "has no tokenizer" in err and err.count("\n") == 1 and "Traceback" not in err


def test_maps_as_arrays_in_the_frame_and_the_json(llama):
    res = lnrecency.probe_model(llama, n=N, sequences=SEQ, maps=True)
    m = res.maps()
    assert m["head_mean_logit"].shape == m["head_mean_logit_se"].shape == (2, 4, N, N)
    assert m["mean_logit"].shape == m["diag_normalised"].shape == (2, N, N)
    below = np.tril(np.ones((N, N), dtype=bool))
    assert np.isnan(m["mean_logit"][:, ~below]).all() and np.isfinite(m["mean_logit"][:, below]).all()
    # the same float64 logits averaged in another order (over heads, then windows): within (SEQ + heads) eps of their
    # largest size
    bound = (SEQ + 4) * np.finfo(float).eps * np.nanmax(np.abs(m["mean_logit"]))
    assert np.allclose(m["head_mean_logit"].mean(1)[:, below], m["mean_logit"][:, below], rtol=0, atol=bound)
    df = res.to_frame(maps=True)
    cells = df[(df.measure == "mean_logit") & (df.level == "head")]
    assert len(cells) == 2 * 4 * N * (N + 1) // 2 and cells["query"].min() == 1 and cells["key"].max() == N
    row = cells[(cells.layer == 2) & (cells.head_index == 3) & (cells["query"] == 5) & (cells.key == 2)]
    assert float(row.value.iloc[0]) == m["head_mean_logit"][1, 2, 4, 1]
    head = res.to_json()["layers"][1]["heads"][2]
    assert head["mean_logit"][4][1] == m["head_mean_logit"][1, 2, 4, 1] and head["mean_logit"][1][4] is None
    plain = lnrecency.probe_model(llama, n=N, sequences=SEQ)  # the neighbour: no per-head maps kept
    assert "head_mean_logit" not in plain.maps() and plain.to_json()["layers"][0]["heads"][0]["mean_logit"] is None
    with pytest.raises(ValueError, match="kept no mean logit maps"):
        lnrecency.probe_model(llama, n=N, sequences=SEQ, slopes_only=True).maps()


def test_layers_count_from_one_and_the_plot(llama, tmp_path, capsys):
    res = lnrecency.probe_model(llama, n=N, sequences=SEQ, positions="both", progress=True)
    assert "probe: 8/8 sequences" in capsys.readouterr().err  # progress lines where stderr is not a terminal
    assert res.layer(1) is res.layers[0] and res.layer(1).heads[0].head == 1
    with pytest.raises(ValueError, match=r"layers count from 1: res.layer\(1\) is the first"):
        res.layer(0)
    fig = res.plot(path=tmp_path / "probe.png")
    assert (tmp_path / "probe.png").stat().st_size > 1000 and len(fig.axes) == 3  # slopes, map, its colour bar
    slopes = fig.axes[0]
    assert [t.get_text() for t in slopes.get_legend().get_texts()][1] == "positions off (same windows)"


def test_the_docstring_example_runs():
    import doctest

    from lnrecency.experiments.probes import model_probe

    runner = doctest.DocTestRunner()
    for t in doctest.DocTestFinder().find(model_probe.probe_model, "probe_model", globs={}):
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 4


def test_no_function_in_the_probe_path_exceeds_its_line_budget():
    import ast
    import tomllib
    from pathlib import Path

    root = Path(lnrecency.__file__).parent
    cap = tomllib.loads((root.parent / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["lnrecency"][
        "size-budgets"]["probe-function-lines"]
    files = [root / "cli/commands/decoders/probe.py"] + [root / "experiments/probes" / f for f in (
        "probe.py", "model_probe.py", "model_inputs.py", "gguf_probe.py", "tidy.py", "probe_decoder.py",
        "attention_checks.py", "logit_tap.py", "probe_costs.py", "probe_sums.py")]
    long = [(f.name, node.name, node.end_lineno - node.lineno + 1) for f in files
            for node in ast.walk(ast.parse(f.read_text())) if isinstance(node, ast.FunctionDef)
            and node.end_lineno - node.lineno + 1 > cap]
    assert long == []


def test_the_command_lines_refusals_come_before_torch_in_under_a_second(tmp_path):
    """Each refusal of a real model's probe flag (by its Python argument's check, read as the flag) in one fresh
    interpreter: exit 2, one line naming the flag, no torch or transformers loaded, within a second of main()."""
    import os
    import subprocess
    import sys
    import textwrap

    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": 512,
                                                "num_hidden_layers": 2, "num_attention_heads": 4}))
    cases = {"--batch-size must be": ["--hf", str(hf), "--batch-size", "0"],
             "--tokens must be one of 'random', 'text'": ["--hf", str(hf), "--tokens", "task"],
             "--sequences must be an integer in [8,": ["--hf", str(hf), "--sequences", "3"],
             "--tokens task needs a trained model": ["--identity", "--tokens", "task"],
             "MODEL_DIR must be a checkpoint folder": [str(hf)],
             "--ablate-sink: layer 3 is not one of the model's layers": ["--identity", "--ablate-sink", "3:0"],
             "--text '": ["--gguf", str(tmp_path / "m.gguf"), "--tokens", "text", "--text", str(tmp_path / "no")]}
    script = textwrap.dedent(f"""
        import contextlib, io, json, sys, time
        from lnrecency.cli.app import main
        out = {{}}
        for key, argv in json.loads({json.dumps(json.dumps(cases))}).items():
            err = io.StringIO()
            t = time.perf_counter()
            with contextlib.redirect_stderr(err):
                rc = main(["probe", *argv])
            out[key] = [rc, err.getvalue(), time.perf_counter() - t,
                        [m for m in ("torch", "transformers") if m in sys.modules]]
        print(json.dumps(out))
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "LNRECENCY_CACHE": str(tmp_path / "cache")})
    assert done.returncode == 0, done.stderr[-2000:]
    for key, (rc, err, seconds, heavy) in json.loads(done.stdout.strip().splitlines()[-1]).items():
        assert rc == 2 and key in err and err.count("\n") == 1 and heavy == [], (key, err, heavy)
        assert seconds < 1.0, (key, seconds)
