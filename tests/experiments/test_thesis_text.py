"""The thesis on text (lnrecency.experiments.studies.thesis_text, claims TT1-TT4): BOS-first windows, the
pre-registered plan's hash in the key, the four primary tests decided by Holm over themselves only (and able
to say no), the matched-loss points, the learning gate, and a tiny end-to-end run on a small corpus."""
from __future__ import annotations

import hashlib

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("tokenizers")

from lnrecency.claims.trained.tt1_tt4_thesis_text import decide  # noqa: E402
from lnrecency.experiments.plans import declaration  # noqa: E402
from lnrecency.experiments.studies import thesis_text as tt  # noqa: E402


def _corpus(folder, files=30):
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", "gamma", "delta", "key", "value", "def", "return", "self", "print"]
    for q in range(files):
        (folder / f"f{q:02d}.txt").write_text(" ".join(rng.choice(words, size=600)) + "\n")


@pytest.fixture()
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LNRECENCY_CACHE", str(tmp_path / "cache"))
    return tmp_path


def test_windows_put_bos_first_and_shift_the_targets(cache):
    from lnrecency.experiments.text.corpus import load_corpus

    _corpus(cache / "c")
    data = tt.BosCorpusData(load_corpus(cache / "c"))
    toks, targets = data.train(16, 5, np.random.default_rng(1))
    assert toks.shape == targets.shape == (5, 16) and (toks[:, 0] == data.bos).all()
    assert data.bos == data.vocab - 1 and not (toks[:, 1:] == data.bos).any()
    assert np.array_equal(toks[:, 1:], targets[:, :-1])
    assert 0 < tt.unigram_entropy(data) < np.log(data.vocab)


def test_the_plan_is_shipped_and_its_hash_keys_the_results(tmp_path, monkeypatch):
    text = tt.plan_path().read_text()
    assert "Primary family" in text and "H4" in text and "Holm" in text
    assert tt.plan_sha256() == hashlib.sha256(tt.plan_path().read_bytes()).hexdigest()
    st = tt.TextThesisSettings()
    key = st.key()
    (tmp_path / tt.plan_path().name).write_text(text + "\nan amendment\n")
    monkeypatch.setattr(declaration, "DATA", tmp_path)  # the declaration reads its plan text from there
    assert st.key() != key  # a changed plan is a new cache key: old results never read as the new plan's


def _run(arch, norm, seed, slope2, loss=4.0, trajectory=None):
    layers = [{"layer": 1, "slope": 0.0}, {"layer": 2, "slope": slope2}]
    traj = trajectory or [{"step": 1465, "tokens": 3_000_320, "heldout_loss": loss, "text": layers}]
    return {"arch": arch, "norm": norm, "seed": seed, "log": [{"heldout_loss": loss}], "unigram": 6.2,
            "final": {"text": layers, "random": layers}, "trajectory": traj}


def _arms(ln, rms, none, none_loss=5.0, ln_traj=None):
    runs = [_run("attn2", "layernorm", q, v, trajectory=ln_traj and ln_traj(v)) for q, v in enumerate(ln)]
    runs += [_run("attn2", "rmsnorm", q, v) for q, v in enumerate(rms)]
    runs += [_run("attn2", "none", q, v, loss=none_loss) for q, v in enumerate(none)]
    return runs


def _traj(v):
    """A LayerNorm run that passes the none arm's final loss (5.0) after 1M tokens, with slope v/2 there."""
    lay = [{"layer": 1, "slope": 0.0}]
    return [{"step": 488, "tokens": 1_000_000, "heldout_loss": 4.9, "text": lay + [{"layer": 2, "slope": v / 2}]},
            {"step": 1465, "tokens": 3_000_320, "heldout_loss": 4.0, "text": lay + [{"layer": 2, "slope": v}]}]


def test_the_primary_tests_reproduce_on_a_planted_effect_and_say_no_on_its_reverse():
    st = tt.TextThesisSettings()
    rng = np.random.default_rng(2)
    ln = 0.005 + 0.0006 * rng.standard_normal(8)
    none = 0.0005 * rng.standard_normal(8)
    rms = ln + 0.0003 * rng.standard_normal(8)
    got = decide(_arms(ln, rms, none, ln_traj=_traj), st)
    assert {k: d.verdict for k, (d, _) in got.items()} == {"H1": "confirmed", "H2": "confirmed", "H3": "confirmed",
                                                             "H4": "confirmed"}
    assert all(d.family == 4 and d.fwer == 0.05 for d, _ in got.values())
    m = tt.matched(_arms(ln, rms, none, ln_traj=_traj), st)
    assert m["target"] == 5.0 and {p["tokens"] for p in m["layernorm"]} == {1_000_000}
    # the reverse: LayerNorm below 0 and below none, RMSNorm far from LayerNorm
    rev = decide(_arms(-ln, -ln + 0.01, none, ln_traj=_traj), st)
    assert {k: d.verdict for k, (d, _) in rev.items()} == {"H1": "refuted", "H2": "refuted", "H3": "refuted",
                                                             "H4": "refuted"}


def test_runs_below_the_gate_and_unreached_matched_losses_decide_nothing():
    st = tt.TextThesisSettings()
    ln = [0.004, 0.005, 0.006]
    runs = _arms(ln, ln, [0.0, 0.001, -0.001], none_loss=6.0)  # none at 6.0 > 6.2 - 0.5: not learned
    got = decide(runs, st)
    assert got["H2"][0] is None and "fewer than 3 learned" in got["H2"][1]
    assert got["H1"][0] is not None  # LayerNorm's own test still runs
    runs = _arms(ln, ln, [0.0, 0.001, -0.001], none_loss=3.0)  # none ends below every LayerNorm evaluation
    got = decide(runs, st)
    assert got["H3"][0] is None and "reached" in got["H3"][1]
    # the plan: fewer than 3 learned runs decide nothing, even 2 with a large effect (its neighbour, 3, decides)
    got = decide(_arms([0.2, 0.21], [0.2, 0.21], [0.0, 0.001]), st)
    assert all(d is None for d, _ in got.values()), got
    assert all("fewer than 3" in got[h][1] for h in ("H1", "H2", "H4")), got


def test_a_tiny_run_end_to_end_is_cached_and_read_back(cache):
    _corpus(cache / "c")
    st = tt.TextThesisSettings(primary_seeds=(0, 1, 2), secondary_seeds=(), archs=("attn2",), steps=4, warmup=1,
                               eval_every=2, eval_sequences=8, probe_windows=8, n=16, corpus=str(cache / "c"))
    runs = tt.run_thesis_text(st, workers=1)
    assert len(runs) == 9 and all(r["plan_sha256"] == tt.plan_sha256() for r in runs)
    assert [e["tokens"] for e in runs[0]["trajectory"]] == [0, 2 * 32 * 16, 4 * 32 * 16]
    assert all(len(r["final"]["random"]) == 2 and r["final"]["text"][1]["sink"] is not None for r in runs)
    assert tt.cached_runs(st) == runs
    again = tt.run_thesis_text(st, workers=1)
    assert again == runs
