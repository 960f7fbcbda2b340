"""Robustness round 6 (issue 69), the command line: each refusal is one line naming the flag and the value, exit 2,
before the heavy libraries load (torch for the probe, matplotlib and scipy for the report); each with a neighbour that
is still accepted."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from lnrecency.experiments.probes.declared_sizes import check_context, declared_context
from lnrecency.experiments.probes.probe_settings import check_first_share


def _hf_folder(tmp_path, context=512):
    d = tmp_path / "hf"
    d.mkdir()
    (d / "config.json").write_text(json.dumps({"model_type": "llama", "max_position_embeddings": context,
                                               "num_hidden_layers": 2, "num_attention_heads": 4}))
    return d


@pytest.fixture(scope="module")
def refusals(tmp_path_factory):
    """Every case run in one fresh interpreter: (exit status, stderr, the heavy modules loaded by then) per case."""
    tmp = tmp_path_factory.mktemp("r6")
    hf = _hf_folder(tmp)
    (tmp / "empty.txt").write_text("")
    (tmp / "afile").write_text("x")
    (tmp / "out").mkdir()
    cases = {
        "sink nan": ["probe", "--identity", "--layers", "2", "--ablate-sink", "1:nan"],
        "sink one": ["probe", "--identity", "--layers", "2", "--ablate-sink", "1:1"],
        "sink colon": ["probe", "--identity", "--layers", "2", "--ablate-sink", ":"],
        "sink twice": ["probe", "--identity", "--layers", "2", "--ablate-sink", "1:0,1:0.5"],
        "sink zero": ["probe", "--identity", "--layers", "2", "--ablate-sink", "0:0"],
        "sink deep": ["probe", "--identity", "--layers", "2", "--ablate-sink", "3:0"],
        "sink model": [str(tmp / "nomodel"), "--ablate-sink", "1:nan"],
        "hf context": ["probe", "--hf", str(hf), "--n", "1024"],
        "text empty": ["probe", "--hf", str(hf), "--tokens", "text", "--text", str(tmp / "empty.txt")],
        "text proc": ["probe", "--hf", str(hf), "--tokens", "text", "--text", "/proc/self/pagemap"],
        "from missing": ["report", "--from", str(tmp / "MISSING"), "--out", str(tmp / "o1")],
        "evidence is out": ["report", "--out", str(tmp / "out"), "--evidence-out", str(tmp / "out")],
        "out is a file": ["report", "--out", str(tmp / "afile")],
        "cache empty": ["report", "--cache", "", "--out", str(tmp / "o2")],
        "cache env file": ["report", "--out", str(tmp / "o3")],
    }
    cases["sink model"] = ["probe"] + cases["sink model"]
    script = textwrap.dedent(f"""
        import contextlib, io, json, os, sys
        from lnrecency.cli.app import main
        out = {{}}
        for name, argv in json.loads({json.dumps(json.dumps(cases))}).items():
            if name == "cache env file":
                os.environ["LNRECENCY_CACHE"] = {str(tmp / "afile")!r}
            err = io.StringIO()
            with contextlib.redirect_stderr(err):
                rc = main(argv)
            os.environ.pop("LNRECENCY_CACHE", None)
            heavy = sorted(m for m in ("torch", "matplotlib", "scipy", "transformers") if m in sys.modules)
            out[name] = [rc, err.getvalue(), heavy]
        print(json.dumps(out))
    """)
    env = {k: v for k, v in os.environ.items() if k != "LNRECENCY_CACHE"}
    env["LNRECENCY_CACHE"] = str(tmp / "cache")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("case,needle", [
    ("sink nan", "--ablate-sink '1:nan': a share must be"), ("sink one", "--ablate-sink '1:1': a share must be"),
    ("sink colon", "--ablate-sink ':': each item must be LAYER:SHARE"),
    ("sink twice", "--ablate-sink '1:0,1:0.5': layer 1 is given twice"),
    ("sink zero", "--ablate-sink: layer 0 is not one of the model's layers (they count from 1)"),
    ("sink deep", "--ablate-sink: layer 3 is not one of the model's layers 1..2"),
    ("sink model", "--ablate-sink '1:nan'"),
    ("hf context", "--n must be <= the model's context 512 (its config.json); got 1024"),
    ("text empty", "--text '"), ("text proc", "--text '/proc/self/pagemap' is empty"),
    ("from missing", "--from: '"), ("evidence is out", "--evidence-out '"),
    ("out is a file", "--out must be a directory"), ("cache empty", "--cache: empty path"),
    ("cache env file", "($LNRECENCY_CACHE) is not a folder"),
])
def test_refused_in_one_line_before_the_heavy_imports(refusals, case, needle):
    rc, err, heavy = refusals[case]
    assert rc == 2 and needle in err and err.count("\n") == 1, (case, err)
    assert heavy == [], (case, heavy)


def test_the_neighbours_are_accepted(tmp_path):
    assert check_first_share("1:0,2:mean", 2, "--ablate-sink") == {1: 0.0, 2: "mean"}
    assert check_first_share({1: 0.5}, None) == {1: 0.5}
    hf = _hf_folder(tmp_path, context=512)
    check_context(hf, 512)
    assert declared_context(hf) == 512 and declared_context(tmp_path) is None
    with pytest.raises(ValueError, match="n must be <= the model's context 512"):
        check_context(hf, 513)


@pytest.mark.parametrize("argv", [["-m", "lnrecency.report.readme", "--refresh", "ZZ99"],
                                  ["-m", "lnrecency.report.regenerate", "--bogus"]])
def test_the_maintainers_scripts_refuse_in_one_line(argv, tmp_path):
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "error:" in done.stderr, done.stderr
