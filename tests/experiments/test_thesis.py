"""The thesis experiment (lnrecency.experiments.studies.thesis) and its verdicts TM1-TM5
(lnrecency.claims.trained.tm1_tm5_trained_decoders).

* The quick experiment end to end, in a temporary cache: every run probed on both variants along training,
  the cache makes a second run train nothing, every verdict row carries its fields (training_seeds, learned,
  interval, rule, probe, trajectory), and quick rows are never decisive ("quick run: not decisive").
* Parallel workers give the same bytes as one.
* The matched-loss stage is the linear interpolation between the evaluations that bracket the target.
* The verdict rules on synthetic results: each TM statement is refuted when the numbers say so, undecided
  when the models did not learn or the two probe variants disagree.
"""
from __future__ import annotations

import json
import time

import pytest

pytest.importorskip("torch")

from lnrecency.claims.registry import CLAIMS  # noqa: E402
from lnrecency.claims.trained import tm1_tm5_trained_decoders as trained  # noqa: E402
from lnrecency.cli.app import main  # noqa: E402
from lnrecency.experiments.decoders.train import converged  # noqa: E402
from lnrecency.experiments.studies.thesis import ThesisResults, ThesisSettings, is_cached, run_thesis  # noqa: E402
from lnrecency.experiments.studies.thesis_config import matched_stage  # noqa: E402

FIELDS = {"training_seeds", "learned", "interval", "rule", "probe", "trajectory"}


#: a test-only quick preset: the --quick code path (3 seeds x 3 normalisations, the convergence rule, every probe
#: variant and stage) at the size these assertions need; the user-facing --quick is 400 steps
TINY = ThesisSettings(archs=("attn2",), seeds=(0, 1, 2), steps=60, min_steps=20, eval_every=20,
                      probe_sequences=32, trajectory_sequences=16)


@pytest.fixture(scope="module")
def quick(trained_cache):
    with pytest.MonkeyPatch.context() as mp:  # for the module's tests: evaluate(quick=True) and the CLI read it
        mp.setattr(ThesisSettings, "preset", classmethod(lambda cls, q: TINY if q else cls()))
        st = ThesisSettings.preset(True)
        assert not is_cached(st)
        # one process: a pool's start costs more than these tiny runs (a pool gives the same bytes:
        # test_parallel_workers_give_the_same_bytes)
        res = run_thesis(st, workers=1)
        assert is_cached(st)
        yield res


@pytest.mark.slow
def test_quick_experiment_and_cache(quick, trained_cache):
    st = quick.settings
    assert len(quick.runs) == len(st.archs) * len(st.norms) * len(st.seeds) and len(st.seeds) >= 3
    for r in quick.runs:
        assert r["stopped"] in ("converged", "cap") and r["log"][-1]["step"] <= st.steps
        assert [e["step"] for e in r["trajectory"]] == [e["step"] for e in r["log"] if e["heldout_loss"] is not None]
        lay = r["final"]["layers"][1]
        assert lay["sink"] is not None and 0.0 <= lay["sink"] <= 1.0  # BOS first: its share is reported
        rnd = r["final"]["random"]["layers"][1]  # the neutral control starts with BOS as well
        assert rnd["sink"] is not None and 0.0 <= rnd["sink"] <= 1.0
        assert "slope" in r["final"]["bos-response"]["layers"][1]  # the diagnostic, recorded apart
        m = quick.matched(r)
        if m["reached"]:  # interpolated to the target between its two bracketing evaluations
            assert m["heldout_loss"] == pytest.approx(m["target_loss"]) or m["bracket"][0][0] == m["bracket"][1][0]
        else:  # a run that never got down to the target: its last evaluation, left out of TM5
            assert m["heldout_loss"] == r["log"][-1]["heldout_loss"] > m["target_loss"]
    start = time.perf_counter()
    again = run_thesis(st)  # every run from the cache: no training
    assert time.perf_counter() - start < 5.0
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(quick.to_json(), sort_keys=True)


@pytest.mark.slow
def test_parallel_workers_give_the_same_bytes(trained_cache):
    # 3 jobs (the design's fewest seeds) on 2 workers, so that one worker runs two jobs in turn, at the fewest steps
    # with a trajectory (two evaluations): the bytes are the assertion
    st = ThesisSettings(archs=("attn2",), norms=("layernorm",), seeds=(0, 1, 2), steps=20, min_steps=0,
                        eval_every=10, probe_sequences=16, trajectory_sequences=8)
    one = run_thesis(st, use_cache=False, workers=1)
    two = run_thesis(st, use_cache=False, workers=2)
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in one.runs]
    assert json.dumps(strip) == json.dumps([{k: v for k, v in r.items() if k != "seconds"} for r in two.runs])


def test_cache_key_reads_the_probe_settings():
    from dataclasses import asdict

    from lnrecency.experiments.studies.thesis_config import probe_fields

    for quick_mode in (True, False):
        st = ThesisSettings.preset(quick_mode)
        assert probe_fields(st, "attn2", "none", 1) == asdict(st.probing("attn2", "none", 1))
        assert st.probe_seed("attn2", "none", 1) != st.probe_seed("attn2", "none", 2)  # a probe seed per run


def test_quick_verdicts_carry_their_fields_and_decide_nothing(quick):
    results = trained.evaluate(quick=True)
    assert {r.id for r in results} == set(trained.STATEMENTS)
    for r in results:
        data = r.to_json()
        assert FIELDS <= set(data) and data["training_seeds"] >= 3
        if r.id in trained.SECONDARY_IDS:  # a secondary row reads "secondary", never a verdict
            assert r.verdict == "secondary" and r.finding.startswith("Secondary (an interval, not a verdict)")
            assert "quick run: not decisive" in r.finding
        else:
            assert r.verdict == "inconclusive" and r.finding.startswith("quick run: not decisive")


def test_experiments_command_json(quick, capsys):
    assert main(["experiments", "thesis", "--quick", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["experiment"] == "thesis" and out["verdicts"]
    assert all(v["training_seeds"] >= 3 and FIELDS <= set(v) for v in out["verdicts"])
    assert {v["id"] for v in out["verdicts"]} == {"TM1", "TM2", "TM3", "TM4", "TM5"}
    assert all(v["verdict"] not in ("confirmed", "refuted") for v in out["verdicts"])
    assert len(out["runs"]) == 9 and set(trained_stages()) <= set(out["runs"][0]["layers"])


def trained_stages():
    return ("init", "quarter", "half", "final", "matched")


def test_convergence_rule():
    from lnrecency.experiments.decoders.decoder_config import TrainSettings

    st = TrainSettings(steps=1000, converge=0.01, min_steps=200, eval_every=100)
    log = [{"step": s, "heldout_loss": 4.0 - 0.001 * s} for s in range(0, 600, 100)]
    assert not converged(log, st)  # 3.6 vs 3.7 at step 400: 2.7% better
    flat = log + [{"step": 600, "heldout_loss": 3.5}, {"step": 700, "heldout_loss": 3.49},
                  {"step": 800, "heldout_loss": 3.49}]
    assert converged(flat, st)  # 3.49 vs 3.5 at step 600 (<= 0.8 * 800): 0.3% better
    assert not converged(flat[:2], st)  # before min_steps
    stuck = [{"step": s, "heldout_loss": 4.0 - 1e-6 * s} for s in range(0, 900, 100)]  # a plateau at init
    assert not converged(stuck, st)  # never stopped at its initial loss
    learned_then_flat = stuck[:3] + [{"step": s, "heldout_loss": 2.0} for s in range(300, 900, 100)]
    assert converged(learned_then_flat, st)  # the neighbour: a plateau after learning stops


def test_matched_stage_interpolates_between_the_bracketing_evaluations():
    def run(norm, losses, slopes):
        traj = [{"step": 10 * q, "heldout_loss": lo, "task": [{"slope": s, "slope_se": 0.0, "rp": 0.5}],
                 "random": [{"slope": -s, "slope_se": 0.0, "rp": 0.5}],
                 "bos-response": [{"slope": 2 * s, "slope_se": 0.0, "rp": 0.5}]}
                for q, (lo, s) in enumerate(zip(losses, slopes))]
        return {"arch": "attn2", "norm": norm, "seed": 0, "trajectory": traj,
                "log": [{"step": e["step"], "heldout_loss": e["heldout_loss"]} for e in traj]}
    a = run("layernorm", [4.0, 3.0, 2.0], [0.0, 1.0, 2.0])
    b = run("none", [4.0, 3.5, 2.5], [0.0, -1.0, -2.0])
    m = matched_stage([a, b])
    assert m[("none", 0)]["target_loss"] == 2.5
    got = m[("layernorm", 0)]
    # target 2.5 between 3.0 (step 10, slope 1) and 2.0 (step 20, slope 2): halfway
    assert got["step"] == pytest.approx(15.0) and got["task"]["layers"][0]["slope"] == pytest.approx(1.5)
    assert got["random"]["layers"][0]["slope"] == pytest.approx(-1.5) and got["heldout_loss"] == pytest.approx(2.5)
    assert got["bos-response"]["layers"][0]["slope"] == pytest.approx(3.0)


# ------------------------------------------------------------------------------------------------------
# The verdict rules on synthetic results: they can say no
# ------------------------------------------------------------------------------------------------------
def _fake(slopes: dict, *, random: dict | None = None, matched: dict | None = None, ratio: float = 1.0,
          rp: dict | None = None, loss: float = 1.5, init_slope: float = 1e-4) -> ThesisResults:
    """Results of 5 seeds with layer-2 slopes ``slopes[norm]`` at the end (``random[norm]`` on random tokens,
    default the same; ``matched[norm]`` at the last evaluations, default the same), RP ``rp[norm]``."""
    st = ThesisSettings(archs=("attn2",), steps=100, min_steps=0, eval_every=50)
    runs = []
    for norm, values in slopes.items():
        for seed, v in enumerate(values):
            mv = (matched or slopes)[norm][seed]
            rv = (random or slopes)[norm][seed]
            r = (rp or {}).get(norm, [0.5] * len(values))[seed]

            def layers(s2, r2=0.5, sink=0.1):
                return [{"layer": 1, "slope": 1e-4 * (seed - 2), "slope_se": 0.0, "rp": 0.5, "sink": sink},
                        {"layer": 2, "slope": s2, "slope_se": 0.0, "rp": r2, "sink": sink}]
            init = {"layers": layers(init_slope * (seed - 2)), "random": {"layers": layers(init_slope * (seed - 2))},
                    "second_moment_ratio": [[ratio + 0.01 * (seed - 2)] * 4] * 2}
            final = {"layers": layers(v, r), "random": {"layers": layers(rv, r, None)}}
            traj = [{"step": s, "heldout_loss": lo, "task": layers(t), "random": layers(t)}
                    for s, lo, t in ((0, 4.1, 0.0), (50, 3.0, mv),
                                     (100, loss.get(norm, 1.5) if isinstance(loss, dict) else loss, v))]
            runs.append({"arch": "attn2", "norm": norm, "seed": seed, "induction_score": 0.1, "stopped": "cap",
                         "log": [{"step": e["step"], "heldout_loss": e["heldout_loss"]} for e in traj],
                         "init": init, "final": final, "trajectory": traj})
    return ThesisResults(st, runs)


def _verdicts(monkeypatch, res, cid):
    """The decisions the machinery reaches. TM1-TM3 and TM5 are secondary (the synthetic task cannot test the
    thesis): their rows read inconclusive, and the decisions their tests reach are read from the parts."""
    monkeypatch.setattr(trained, "_results", lambda quick, progress: (res, ""))
    rows = CLAIMS[cid].evaluate(quick=False)
    if cid not in trained.SECONDARY_IDS:
        return {r.verdict for r in rows}
    assert {r.verdict for r in rows} == {"secondary"}
    parts = [p for _, ps in trained.decided_parts(res)[cid] for p in ps]
    if all(p.decidable or p.status == trained.SECONDARY for p in parts):
        assert all("secondary" in r.finding for r in rows)
    return {p.decision.verdict if p.status == trained.SECONDARY else "inconclusive" for p in parts}


POS = [0.50, 0.55, 0.45, 0.52, 0.48]
NEG = [-0.50, -0.55, -0.45, -0.52, -0.48]


def test_tm1_tm2_confirmed_and_refuted_by_the_sign(monkeypatch):
    res = _fake({"layernorm": POS, "rmsnorm": POS, "none": NEG})
    assert _verdicts(monkeypatch, res, "TM1") == {"confirmed"}
    assert _verdicts(monkeypatch, res, "TM2") == {"confirmed"}
    wrong = _fake({"layernorm": NEG, "rmsnorm": POS, "none": POS})
    assert _verdicts(monkeypatch, wrong, "TM1") == {"refuted"}
    assert _verdicts(monkeypatch, wrong, "TM2") == {"refuted"}
    noisy = _fake({"layernorm": [-0.5, 0.6, 0.1, -0.2, 0.3], "rmsnorm": POS, "none": NEG})
    assert _verdicts(monkeypatch, noisy, "TM1") == {"inconclusive"}


def test_unstable_and_not_learned_decide_nothing(monkeypatch):
    flip = _fake({"layernorm": POS, "rmsnorm": POS, "none": NEG},
                 random={"layernorm": NEG, "rmsnorm": POS, "none": NEG})
    monkeypatch.setattr(trained, "_results", lambda quick, progress: (flip, ""))
    (r,) = CLAIMS["TM1"].evaluate(quick=False)
    assert r.verdict == "secondary" and "unstable" in r.finding
    unlearned = _fake({"layernorm": POS, "rmsnorm": POS, "none": NEG}, loss=3.9)
    monkeypatch.setattr(trained, "_results", lambda quick, progress: (unlearned, ""))
    (r,) = CLAIMS["TM1"].evaluate(quick=False)
    assert r.verdict == "secondary" and "not decided: not learned" in r.finding
    assert r.to_json()["learned"] == 0


def test_tm3_equivalence_within_the_margin_only(monkeypatch):
    same = _fake({"layernorm": POS, "rmsnorm": POS, "none": NEG},
                 rp={"layernorm": [0.90, 0.91, 0.89, 0.90, 0.905], "rmsnorm": [0.90, 0.905, 0.895, 0.90, 0.90]})
    assert _verdicts(monkeypatch, same, "TM3") == {"confirmed"}
    apart = _fake({"layernorm": POS, "rmsnorm": POS, "none": NEG},
                  rp={"layernorm": [0.90, 0.91, 0.89, 0.90, 0.905], "rmsnorm": [0.60, 0.61, 0.59, 0.60, 0.605]})
    assert _verdicts(monkeypatch, apart, "TM3") == {"refuted"}


def test_tm4_refuted_by_a_wrong_second_moment_or_a_positional_init(monkeypatch):
    flat = {"layernorm": POS, "rmsnorm": POS, "none": NEG}
    assert _verdicts(monkeypatch, _fake(flat, ratio=1.0), "TM4") == {"confirmed"}
    assert _verdicts(monkeypatch, _fake(flat, ratio=0.7), "TM4") == {"refuted"}
    # a slope of 0.1 per key at initialisation (3 nats across the row): outside the margin, refuted
    assert _verdicts(monkeypatch, _fake(flat, init_slope=0.05 + 1e-3), "TM4") != {"confirmed"}


def test_tm5_refuted_when_the_difference_reverses_at_matched_loss(monkeypatch):
    final = {"layernorm": POS, "rmsnorm": POS, "none": NEG}
    assert _verdicts(monkeypatch, _fake(final), "TM5") == {"confirmed"}
    # none ends at loss 3.0: every run is matched at step 50, where the order is reversed
    reversed_ = {"layernorm": NEG, "rmsnorm": POS, "none": POS}
    res = _fake(final, matched=reversed_, loss={"none": 3.0})
    assert _verdicts(monkeypatch, res, "TM5") == {"refuted"}
    assert res.matched(res.select("attn2", "layernorm")[0])["step"] == 50


def test_a_damaged_cached_run_is_refused_naming_its_file(quick, trained_cache, capsys):
    """A cached run is data: a NaN in it, another JSON type, deep nesting or a missing key gives exit 2 and one
    line naming the file (nothing is decided from it), and the valid file reads again once restored."""
    from lnrecency.experiments.studies.thesis_config import cache_path

    st = quick.settings
    path = cache_path(st, "attn2", "none", st.seeds[0])
    good = path.read_text()
    rec = json.loads(good)
    bad_nan = dict(rec, final={**rec["final"], "layers": [{**rec["final"]["layers"][0], "slope": float("nan")}]})
    deep: object = 0
    for _ in range(200):
        deep = [deep]
    cases = [json.dumps(bad_nan), "[1, 2]", "\"text\"", json.dumps({**rec, "x": deep}),
             json.dumps({k: v for k, v in rec.items() if k != "trajectory"}), "{not json"]
    try:
        for text in cases:
            path.write_text(text)
            assert main(["experiments", "thesis", "--quick", "--json"]) == 2
            err = capsys.readouterr().err
            assert str(path) in err and err.count("\n") == 1, err
    finally:
        path.write_text(good)
    assert main(["experiments", "thesis", "--quick", "--json"]) == 0
    capsys.readouterr()
