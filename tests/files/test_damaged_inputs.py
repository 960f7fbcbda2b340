"""Inputs from outside are data (issue 33): a damaged checkpoint, model config, evidence store or cache is
either read correctly or refused with a ValueError whose message is one line naming the file; never another
exception (a traceback), never a hang, never a model built beyond its size limit.

Hypothesis corrupts each kind of input: truncation at any byte, a value of any JSON type put in place of any
field (type swaps), deep nesting, NaN and overflowing numbers, huge sizes. The guarantee checked is the same
for every kind: :func:`outcome` returns "ok" or "refused", and a refusal names the file.
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

torch = pytest.importorskip("torch")
pytest.importorskip("safetensors")

from lnrecency.experiments.decoders.decoder_config import DecoderConfig, TrainSettings  # noqa: E402
from lnrecency.experiments.decoders.train import load, save, train  # noqa: E402

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8)
FAST = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def outcome(call, path: Path) -> str:
    """"ok" when ``call()`` returns, "refused" for a one-line ValueError naming ``path`` (a file, or the folder
    holding the input); anything else fails."""
    try:
        call()
    except ValueError as exc:
        text = str(exc)
        assert "\n" not in text, text
        assert str(path) in text or path.name in text, f"the refusal does not name the file: {text}"
        return "refused"
    return "ok"


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ck") / "ck"
    cfg = DecoderConfig(vocab=16, d_model=16, n_layers=1, n_heads=2, context=8, positions="learned", mlp=True)
    save(train(cfg, TrainSettings(steps=2, n=8, batch=2, eval_every=0)), out)
    return out


def _copy(src: Path, tmp: Path) -> Path:
    dst = tmp / "copy"
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


@FAST
@given(cut=st.floats(0.0, 0.999))
def test_truncated_weights_are_refused(checkpoint, tmp_path, cut):
    d = _copy(checkpoint, tmp_path)
    w = d / "model.safetensors"
    data = w.read_bytes()
    w.write_bytes(data[:int(cut * len(data))])
    assert outcome(lambda: load(d), d) == "refused"


@FAST
@given(key=st.sampled_from(["format", "decoder", "training", "decoder.vocab", "decoder.d_model", "decoder.n_layers",
                            "decoder.n_heads", "decoder.context", "decoder.mlp", "decoder.norm", "decoder.placement",
                            "decoder.positions", "decoder.residual", "decoder.init_std", "decoder.identity",
                            "training.task"]),
       value=JSON_VALUES, drop=st.booleans())
def test_config_type_swaps_are_read_or_refused(checkpoint, tmp_path, key, value, drop):
    d = _copy(checkpoint, tmp_path)
    cfg_path = d / "config.json"
    meta = json.loads(cfg_path.read_text())
    *parents, last = key.split(".")
    node = meta
    for p in parents:
        node = node[p]
    if drop:
        del node[last]
    else:
        node[last] = value
    cfg_path.write_text(json.dumps(meta))
    result = outcome(lambda: load(d), d)
    if drop:  # every field is required: nothing is filled in with a default
        assert result == "refused", key
    elif result == "ok":  # accepted only as a value the field allows (the same rules as DecoderConfig)
        assert key.startswith("decoder.") or key == "training.task", (key, value)


@FAST
@given(depth=st.integers(9, 200_000), nan=st.sampled_from(["NaN", "Infinity", "-Infinity", "1e400"]))
def test_nesting_and_non_finite_numbers_are_refused(checkpoint, tmp_path, depth, nan):
    d = _copy(checkpoint, tmp_path)
    cfg_path = d / "config.json"
    cfg_path.write_text("[" * depth + "]" * depth)
    assert outcome(lambda: load(d), d) == "refused"
    text = (checkpoint / "config.json").read_text().replace('"init_std": 0.02', f'"init_std": {nan}')
    cfg_path.write_text(text)
    assert outcome(lambda: load(d), d) == "refused"


@FAST
@given(field=st.sampled_from(["vocab", "d_model", "n_layers", "context"]), factor=st.integers(2, 10**6))
def test_huge_sizes_are_refused_before_allocation(checkpoint, tmp_path, field, factor):
    """Sizes within or beyond the flag limits: refused from the configuration or the header, never built."""
    import resource

    d = _copy(checkpoint, tmp_path)
    cfg_path = d / "config.json"
    meta = json.loads(cfg_path.read_text())
    meta["decoder"][field] = meta["decoder"][field] * factor
    cfg_path.write_text(json.dumps(meta))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert outcome(lambda: load(d), d) == "refused"
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 256, f"refusing {field} x {factor} grew the process by {grown_mib:.0f} MiB"


def test_nan_weight_is_refused(checkpoint, tmp_path):
    from safetensors.torch import load_file, save_file

    d = _copy(checkpoint, tmp_path)
    w = d / "model.safetensors"
    state = load_file(str(w))
    name = sorted(state)[0]
    state[name].view(-1)[0] = float("nan")
    save_file(state, str(w))
    with pytest.raises(ValueError, match="NaN or infinite"):
        load(d)


# -- the evidence store -------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A small store of real records (a simulation, a config, a fraction, a tuple)."""
    from fractions import Fraction

    from lnrecency.files.store import dumps
    from lnrecency.model.config import ModelConfig
    from lnrecency.numerics import simulate_scores

    out = tmp_path_factory.mktemp("store")
    sim = simulate_scores(4, 2, 16, 20, seed=1, method="gram", progress=False)
    text, blob = dumps({"k": [sim, ModelConfig(lam=2.0), Fraction(1, 3), (1, "a", None)]})
    (out / "evidence.json").write_text(text)
    (out / "arrays.npz").write_bytes(blob)
    return out


def _walk(tree, path=()):
    """Every (path, value) of a JSON tree."""
    yield path, tree
    if isinstance(tree, dict):
        for k, v in tree.items():
            yield from _walk(v, path + (k,))
    elif isinstance(tree, list):
        for k, v in enumerate(tree):
            yield from _walk(v, path + (k,))


@FAST
@given(data=st.data(), value=JSON_VALUES)
def test_store_type_swaps_are_read_or_refused(store, tmp_path, data, value):
    from lnrecency.files.store import loads

    d = _copy(store, tmp_path)
    tree = json.loads((d / "evidence.json").read_text())
    paths = [p for p, _ in _walk(tree) if p]
    where = data.draw(st.sampled_from(paths))
    node = tree
    for p in where[:-1]:
        node = node[p]
    node[where[-1]] = value
    (d / "evidence.json").write_text(json.dumps(tree))
    outcome(lambda: loads(d), d)


@FAST
@given(cut=st.floats(0.0, 0.999), which=st.sampled_from(["evidence.json", "arrays.npz"]))
def test_truncated_store_is_refused(store, tmp_path, cut, which):
    from lnrecency.files.store import loads

    d = _copy(store, tmp_path)
    f = d / which
    data = f.read_bytes()
    body = data.rstrip(b"\n") if which == "evidence.json" else data  # a cut through the final newline only
    f.write_bytes(data[:int(cut * len(body))])                       # leaves the JSON whole: not a truncation
    assert outcome(lambda: loads(d), d) == "refused"


def test_store_special_values_are_refused(store, tmp_path):
    """A Fraction with denominator 0, a stored NaN, a float stored as a string or a list, deep nesting,
    a FIFO in place of evidence.json, a non-zip arrays file: each one line."""
    import os

    from lnrecency.files.store import loads

    cases = {
        "fraction0": lambda t: t.replace('{"__fraction__":[1,3]}', '{"__fraction__":[1,0]}'),
        "nan": lambda t: t.replace('{"__fraction__":[1,3]}', '{"__float__":"nan"}'),
        "deep": lambda t: "[" * 100_000 + "]" * 100_000,
    }
    for name, change in cases.items():
        d = _copy(store, tmp_path)
        (d / "evidence.json").write_text(change((d / "evidence.json").read_text()))
        assert outcome(lambda: loads(d), d) == "refused", name
    # a float field of a record stored as a string / a list
    d = _copy(store, tmp_path)
    tree = json.loads((d / "evidence.json").read_text())
    for path, node in _walk(tree):
        if isinstance(node, dict) and node.get("__tag__") == "ModelConfig":  # the store names records by tag
            node["fields"]["alpha"] = "0.5"
    (d / "evidence.json").write_text(json.dumps(tree))
    with pytest.raises(ValueError, match="alpha"):
        loads(d)
    d = _copy(store, tmp_path)
    os.remove(d / "evidence.json")
    os.mkfifo(d / "evidence.json")
    assert outcome(lambda: loads(d), d) == "refused"  # refused at once, not read (a FIFO would hang)
    d = _copy(store, tmp_path)
    (d / "arrays.npz").write_bytes(b"not a zip archive at all")
    with pytest.raises(ValueError, match="not a zip archive"):
        loads(d)


# -- experiment caches ---------------------------------------------------------------------------------------
@FAST
@given(value=JSON_VALUES, deep=st.integers(0, 100_000))
def test_cache_files_are_read_or_refused(tmp_path, value, deep):
    from lnrecency.experiments.run_cache import read as read_cached_run

    f = tmp_path / "run.json"
    f.write_text("[" * deep + json.dumps(value) + "]" * deep)
    result = outcome(lambda: read_cached_run(f, required=("slopes",)), f)
    assert result == "refused" or (deep == 0 and isinstance(value, dict) and "slopes" in value)


def test_full_disk_during_checkpoint_write_leaves_nothing(tmp_path, monkeypatch):
    """The weights' write fails as on a full disk (safetensors raises its own error): one OSError line, and
    no checkpoint folder, partial or hidden, is left behind."""
    import safetensors.torch as sft

    res = train(DecoderConfig(vocab=16, d_model=16, n_layers=1, n_heads=2, context=8),
                TrainSettings(steps=1, n=8, batch=2, eval_every=0))

    def full(*args, **kwargs):
        raise RuntimeError("No space left on device (os error 28)")

    monkeypatch.setattr(sft, "save_file", full)
    with pytest.raises(OSError, match="cannot write the checkpoint.*No space left"):
        save(res, tmp_path / "ck")
    assert list(tmp_path.iterdir()) == []
