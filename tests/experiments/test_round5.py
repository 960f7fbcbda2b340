"""Robustness round 5 (issue 54): caches written without following links, never outside the cache root; a whole
run holds its output folder's lock; sizes read from a model file checked for sign and range; text tokenised in
bounded pieces with the same ids; a cached run's own fields checked against its key and its plan; stale staging
files removed; workers die with a SIGKILLed parent. Each family with its planted cases and a legitimate neighbour."""
from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from lnrecency.experiments import run_cache
from tests.files.gguf_bytes import ARR, STR, U32, gguf, kv, tiny_llama, wheel


@pytest.fixture
def root(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


# -- the cache never follows a planted link --------------------------------------------------------------------

def test_a_symlinked_cache_folder_is_refused_and_the_users_folder_kept(root, tmp_path):
    user = tmp_path / "user"
    user.mkdir()
    (user / "x.json").write_text("mine")
    root.mkdir()
    (root / "runs").symlink_to(user)
    with pytest.raises(run_cache.DamagedCache, match="symbolic link.*remove the link"):
        run_cache.write(run_cache.entry("runs", "x.json"), {"seed": 1})
    assert (user / "x.json").read_text() == "mine" and sorted(p.name for p in user.iterdir()) == ["x.json"]
    # the neighbour: a plain folder is made and written
    (root / "runs").unlink()
    run_cache.write(run_cache.entry("runs", "x.json"), {"seed": 1})
    assert run_cache.read(run_cache.entry("runs", "x.json")) == {"seed": 1}


def test_a_cache_entry_that_is_a_link_or_a_folder_is_refused(root, tmp_path):
    (root / "seeds").mkdir(parents=True)
    target = tmp_path / "elsewhere.json"
    target.write_text("keep")
    (root / "seeds" / "a.json").symlink_to(target)
    with pytest.raises(run_cache.DamagedCache, match="not a plain file"):
        run_cache.write(root / "seeds" / "a.json", {"x": 1})
    assert target.read_text() == "keep"
    (root / "seeds" / "b.json").mkdir()
    with pytest.raises(run_cache.DamagedCache, match="not a plain file"):
        run_cache.write(root / "seeds" / "b.json", {"x": 1})


def test_gguf_staging_never_writes_through_a_planted_link(tmp_path):
    from lnrecency.files.gguf_source import open_source, stage

    model = tiny_llama()
    w = wheel(tmp_path / "p-1.0.0-py3-none-any.whl", "p", {"m.gguf": model})
    src = open_source(w)
    base = tmp_path / "gguf"
    base.mkdir()
    user = tmp_path / "user"
    user.mkdir()
    (user / "model.gguf").write_bytes(b"the user's file")
    (base / src.sha256).symlink_to(user)
    with pytest.raises(FileExistsError, match="symbolic link"):
        stage(src, base)
    assert (user / "model.gguf").read_bytes() == b"the user's file"
    # a plain GGUF file: its link folder planted as a link to the user's folder
    plain = tmp_path / "m.gguf"
    plain.write_bytes(model)
    name = "file-" + hashlib.sha256(os.path.realpath(plain).encode()).hexdigest()[:24]
    (base / name).symlink_to(user)
    with pytest.raises(FileExistsError, match="symbolic link"):
        stage(open_source(plain), base)
    assert (user / "model.gguf").read_bytes() == b"the user's file" and not (user / "model.gguf").is_symlink()
    # the neighbours: with the links gone both stage
    (base / src.sha256).unlink()
    (base / name).unlink()
    assert stage(src, base).read_bytes() == model
    assert stage(open_source(plain), base).read_bytes() == model


def test_a_dead_runs_staging_part_is_removed_by_the_next_run(tmp_path):
    from lnrecency.files.gguf_source import open_source, stage

    model = tiny_llama()
    src = open_source(wheel(tmp_path / "p-1.0.0-py3-none-any.whl", "p", {"m.gguf": model}))
    folder = tmp_path / "gguf" / src.sha256
    folder.mkdir(parents=True)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = folder / f".model.gguf.{int(dead.stdout)}.part"
    stale.write_bytes(b"x" * 1000)
    live = folder / f".model.gguf.{os.getppid()}.part"  # a live process's part is not touched
    live.write_bytes(b"y")
    assert stage(src, tmp_path / "gguf").read_bytes() == model
    assert not stale.exists() and live.exists()


# -- sizes read from a model file ------------------------------------------------------------------------------

def _llama(**extra) -> bytes:
    meta = [kv("general.architecture", STR, "llama"), kv("llama.block_count", U32, 1),
            kv("llama.embedding_length", U32, 4), kv("llama.attention.head_count", U32, 2),
            kv("tokenizer.ggml.tokens", ARR, (STR, [f"t{i}" for i in range(8)]))]
    meta += [kv(k, kind, v) for k, (kind, v) in extra.items()]
    return gguf(meta, [("token_embd.weight", (4, 8), 0, 0), ("blk.0.attn_q.weight", (4, 4), 0, 128)],
                bytes(128 + 64))


@pytest.mark.parametrize("field, value, words", [
    ("llama.attention.key_length", 2**31, "key_length must be an integer in"),
    ("llama.attention.head_count_kv", 0, "head_count_kv must be an integer in"),
    ("llama.attention.head_count_kv", 3, "head_count_kv must be an integer in"),
    ("tokenizer.ggml.bos_token_id", 8, "bos_token_id must be a token id in [0, 7]"),
])
def test_model_sizes_are_checked_for_sign_and_range_before_any_estimate(tmp_path, field, value, words):
    pytest.importorskip("transformers")
    from lnrecency.experiments.probes.gguf import check_header
    from lnrecency.files.gguf_source import open_source

    bad = tmp_path / "bad.gguf"
    bad.write_bytes(_llama(**{field: (U32, value)}))
    with pytest.raises(ValueError, match=words.replace("[", r"\[").replace("]", r"\]")):
        check_header(open_source(bad))
    good = tmp_path / "good.gguf"  # the neighbour: values in range are read
    good.write_bytes(_llama(**{"llama.attention.key_length": (U32, 2), "llama.attention.head_count_kv": (U32, 1),
                               "tokenizer.ggml.bos_token_id": (U32, 7)}))
    m = check_header(open_source(good))
    assert (m.head_dim, m.kv_heads, m.bos) == (2, 1, 7)


# -- text in bounded pieces ------------------------------------------------------------------------------------

def test_text_is_tokenised_piece_by_piece_with_the_same_ids():
    pytest.importorskip("tokenizers")
    from tokenizers import ByteLevelBPETokenizer

    from lnrecency.experiments.text.text_windows import pieces, token_stream

    text = "".join(f"def f{q}(x):\n    return x  +  {q}\n\n  spaced   words here\n" for q in range(400))
    bpe = ByteLevelBPETokenizer()
    bpe.train_from_iterator([text], vocab_size=300, show_progress=False)
    tok = bpe._tokenizer
    whole = tok.encode(text).ids
    for limit in (64, 500, 4096):
        parts = pieces(text, limit)
        assert "".join(parts) == text and max(map(len, parts)) <= limit and len(parts) > 1
        assert [i for p in parts for i in tok.encode(p).ids] == whole
    assert pieces(text, len(text)) == [text]
    assert pieces("a" * 10, 3) == ["aaa", "aaa", "aaa", "a"]  # no place to cut: cut at the limit
    ids = token_stream(lambda p: tok.encode(p).ids, [text[:900], text[900:]])
    assert ids.dtype.name == "int32" and ids.tolist() == tok.encode(text[:900] + "\n\n" + text[900:]).ids


# -- a cached run's fields against its key and its plan --------------------------------------------------------

def _text_run(arch="attn2", norm="layernorm", seed=0, **change):
    from lnrecency.experiments.studies.thesis_text import plan_sha256

    layer = {"layer": 1, "slope": 0.1, "slope_se": 0.01, "rp": 0.6, "sink": 0.3}
    rec = {"arch": arch, "norm": norm, "seed": seed, "unigram": 6.0, "plan_sha256": plan_sha256(),
           "log": [{"step": 10, "train_loss": 5.0, "heldout_loss": None}, {"step": 20, "train_loss": 4.0,
                                                                           "heldout_loss": 4.5}],
           "trajectory": [{"step": 20, "tokens": 100, "heldout_loss": 4.5, "text": [layer]}],
           "final": {"text": [layer], "random": [layer]}}
    rec.update(change)
    return rec


@pytest.mark.parametrize("change, words", [
    ({"arch": "attn3"}, "filed as arch attn2"),
    ({"seed": 7}, "filed as arch attn2, norm layernorm, seed 0"),
    ({"plan_sha256": "0" * 64}, "another|not plan v1 as shipped"),
    ({"trajectory": [{"step": 20, "tokens": 100, "heldout_loss": None, "text": []}]}, "heldout_loss: null"),
    ({"final": {"text": [], "random": []}}, "final.text: an empty list"),
    ({"unigram": "6"}, "unigram: a string"),
])
def test_a_cached_text_run_that_contradicts_its_key_or_plan_is_damaged(root, change, words):
    from lnrecency.experiments.studies import thesis_text as tt
    from lnrecency.experiments.studies.thesis_text import RUN_KEYS, RUN_SHAPE

    path = run_cache.entry("thesis-text", "k-attn2-layernorm-0.json")
    run_cache.write(path, _text_run())
    check = tt.RUNS.check(("attn2", "layernorm", 0))
    assert run_cache.read(path, RUN_KEYS, shape=RUN_SHAPE, check=check)["seed"] == 0  # the neighbour
    run_cache.write(path, _text_run(**change))
    with pytest.raises(run_cache.DamagedCache, match=words):
        run_cache.read(path, RUN_KEYS, shape=RUN_SHAPE, check=check)


# -- the output lock covers the whole run ----------------------------------------------------------------------

def test_a_second_run_on_the_same_out_is_refused_at_once(tmp_path):
    from lnrecency.cli.app import main
    from lnrecency.files.atomic import holding_output, staged_directory

    out = tmp_path / "a" / "b" / "out"
    with holding_output(out):  # a first run holds it from its start
        t0 = time.perf_counter()
        code = subprocess.run([sys.executable, "-m", "lnrecency.cli.app", "reproduce", "--figure", "1", "--out",
                               str(out)], capture_output=True, text=True, timeout=120)
        assert code.returncode == 2 and "another lnrecency run is writing" in code.stderr
        assert time.perf_counter() - t0 < 30
        with staged_directory(out) as stage:  # the holder itself publishes under its own lock
            assert stage.is_dir()
    assert not (tmp_path / "a").exists()  # nothing published: the folders made for the lock are gone
    assert main(["limit", "--n", "3"]) == 0  # a command without --out takes no lock


# -- workers die with their parent -----------------------------------------------------------------------------

def test_workers_die_with_a_sigkilled_parent(tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(textwrap.dedent("""
        import time
        from lnrecency.experiments.decoders.parallel import run_jobs
        if __name__ == "__main__":  # the spawned workers import this file
            run_jobs(time.sleep, [(600,), (600,)], workers=2)
    """))
    parent = subprocess.Popen([sys.executable, str(script)], start_new_session=True)
    try:
        deadline = time.time() + 30
        kids: list[int] = []
        while time.time() < deadline and len(kids) < 2:
            time.sleep(0.5)
            out = subprocess.run(["pgrep", "-P", str(parent.pid)], capture_output=True, text=True).stdout
            kids = [int(p) for p in out.split()]
        assert kids, "the pool started no worker"
        time.sleep(2)  # the workers past their initializer
        os.kill(parent.pid, signal.SIGKILL)
        parent.wait()
        deadline = time.time() + 10
        while time.time() < deadline and any(_alive(k) for k in kids):
            time.sleep(0.2)
        assert not any(_alive(k) for k in kids), "a worker outlived its SIGKILLed parent"
    finally:
        os.killpg(parent.pid, signal.SIGKILL) if _alive(parent.pid) else None


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_thesis_seed_and_pretrained_records_are_checked_against_their_keys(root):
    """Every experiment's records go through the one reader: a thesis run or a seed run whose own fields
    contradict the file it is filed under, and a pretrained cache naming a model the experiment does not know,
    are damaged (the neighbours read back)."""
    import json

    from lnrecency.experiments.studies import seeds_config, thesis_config
    from lnrecency.experiments.studies.pretrained import PretrainedSettings, cached

    layer = {"layer": 1, "slope": 0.1}
    run = {"arch": "attn2", "norm": "none", "seed": 3, "log": [], "trajectory": [], "init": {"layers": [layer]},
           "final": {"layers": [layer]}, "induction_score": 0.1, "stopped": None}
    path = run_cache.entry("runs", "r.json")
    run_cache.write(path, run)
    keys, shape, check = thesis_config.RUN_KEYS, thesis_config.RUN_SHAPE, thesis_config.run_check
    assert run_cache.read(path, keys, shape=shape, check=check("attn2", "none", 3))
    with pytest.raises(run_cache.DamagedCache, match="filed as arch attn2, norm layernorm"):
        run_cache.read(path, keys, shape=shape, check=check("attn2", "layernorm", 3))
    run_cache.write(path, {**run, "final": {"layers": []}})
    with pytest.raises(run_cache.DamagedCache, match="final.layers: an empty list"):
        run_cache.read(path, keys, shape=shape, check=check("attn2", "none", 3))
    seed = run_cache.entry("seeds", "s.json")
    run_cache.write(seed, {"seed": 2, "log": [], "task": "argmax", "arch": "post"})
    assert run_cache.read(seed, check=seeds_config.run_check(("argmax", "post", 2)))
    with pytest.raises(run_cache.DamagedCache, match="filed as"):
        run_cache.read(seed, check=seeds_config.run_check(("argmax", "pre", 2)))
    st = PretrainedSettings()
    pre = run_cache.entry("pretrained", f"pretrained-{st.key()}.json")
    from lnrecency.experiments.studies.pretrained import CONDITIONS

    lay = {"layer": 1, "slope": 0.1, "slope_se": 0.01, "sink": None, "rollout_first": 0.5, "rollout_last": 0.1,
           "rollout_residual_first": 0.4}
    run = {"model": {"perplexity": None}, "gu_sink": None, "layers": [lay], "window_slopes": [[0.1], [0.2], [0.1]]}
    good = {"name": "x", "package": "p", "sha256": "a" * 64,
            "runs": {f"{t}/{'off' if o else 'on'}": run for t, o in CONDITIONS}}
    run_cache.write(pre, {"settings": json.loads(json.dumps(st.__dict__)), "models": {"smollm2-135m": good}})
    assert cached(st)["models"]["smollm2-135m"]["sha256"] == "a" * 64
    run_cache.write(pre, {"settings": json.loads(json.dumps(st.__dict__)), "models": {"../evil": good}})
    with pytest.raises(run_cache.DamagedCache, match="not a known model"):
        cached(st)


def test_a_linked_gguf_cache_folder_is_refused_before_the_load(root, tmp_path):
    """$LNRECENCY_CACHE/gguf itself a link to a user's folder: the probe is refused (one line naming it) before
    anything is staged, and the user's folder is left as it was."""
    pytest.importorskip("transformers")
    from lnrecency.experiments.probes.gguf_probe import open_model
    from lnrecency.experiments.probes.probe import ProbeSettings

    model = tmp_path / "m.gguf"
    model.write_bytes(tiny_llama())
    user = tmp_path / "user"
    user.mkdir()
    root.mkdir()
    (root / "gguf").symlink_to(user)
    with pytest.raises(run_cache.DamagedCache, match="symbolic link"):
        open_model(model, plan=[(ProbeSettings(n=8, sequences=8), False)])
    assert list(user.iterdir()) == []
