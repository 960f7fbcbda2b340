"""Wu et al.'s experiment (issue 51): the task as their code defines it, the stack and its probe against independent
computations, the gap's direction on planted rule-based models, the plan's decisions on planted per-seed records
(and the same machinery saying no), the cache's refusals, and the command at a tiny preset. The plan's run itself
(45 models, about 27 min) is `lnrecency experiments wu-icl`, not run here."""
from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.studies import wu_icl  # noqa: E402
from lnrecency.experiments.wu.attention_stack import AttentionStack, fixed_scale, mean_scales, probe  # noqa: E402
from lnrecency.experiments.wu.icl_task import ICLTask  # noqa: E402

TASK = ICLTask()
#: a tiny preset: every code path of a run, in about a second
TINY = replace(wu_icl.WuSettings(), seeds=(0, 1, 2), steps=12, test_size=40, probe_size=16, evals=2)


def _world(seed=0):
    return TASK.world(np.random.default_rng(seed))


def test_a_training_sequence_is_their_layout():
    w = _world()
    x, y = TASK.batch(w, 64, np.random.default_rng(1))
    assert x.shape == (64, 17, 64) and x.dtype == np.float32 and y.shape == (64,)
    for s in range(64):
        labels = [int(np.argmin(np.abs(w.label_vectors - x[s, 2 * k + 1]).sum(1))) for k in range(8)]
        assert all(np.allclose(x[s, 2 * k + 1], w.label_vectors[lab]) for k, lab in enumerate(labels))
        # two classes, each 4 times (burst); the answer's label is in context 4 times
        assert sorted(np.unique(labels, return_counts=True)[1].tolist()) in ([4, 4], [8])
        assert labels.count(int(y[s])) >= 4
    # the token scale: (mu + eps eta) / sqrt(1 + eps^2) has per-coordinate sd 1 / D
    assert abs(float(x[:, 0:16:2].std()) - 1 / 64) < 0.1 / 64


def test_the_conflict_tests_copy_the_answer_onto_the_other_item():
    w = _world()
    for a, b in (("first", "middle"), ("middle", "first"), ("first", "last"), ("last", "middle")):
        x, y = TASK.conflict(w, a, b, 50, np.random.default_rng(2))
        ia, ib = TASK.item(a), TASK.item(b)
        assert np.array_equal(x[:, 2 * ia], x[:, 2 * ib])
        # the target is item a's label: its label vector sits right after item a
        assert all(np.allclose(x[s, 2 * ia + 1], w.label_vectors[y[s]]) for s in range(50))
        # the query is a fresh token of item a's class: close to it, not equal
        assert not np.array_equal(x[:, -1], x[:, 2 * ia])
    assert (TASK.item("first"), TASK.item("middle"), TASK.item("last")) == (0, 4, 7)  # their N // 2 and -1


def test_the_task_refuses_bad_sizes():
    with pytest.raises(ValueError, match="multiple of burst"):
        ICLTask(items=6, burst=4)
    with pytest.raises(ValueError, match="position"):
        TASK.item("second")
    with pytest.raises(ValueError, match="different items"):
        TASK.conflict(_world(), "first", "first", 4, np.random.default_rng(0))


class _Rule(torch.nn.Module):
    """A planted classifier (independent of the stack): the label after the item whose content is nearest the query,
    ties (identical contents) broken toward the earliest or the latest item."""

    def __init__(self, world, earliest: bool):
        super().__init__()
        self.labels, self.earliest = torch.from_numpy(world.label_vectors), earliest

    def forward(self, x):
        items, q = x[:, 0:-1:2], x[:, -1:]
        d = ((items - q) ** 2).sum(-1)
        k = torch.arange(d.shape[1], dtype=d.dtype)
        d = d + (1e-9 if self.earliest else -1e-9) * k  # identical contents: the tie goes by position
        pick = d.argmin(1)
        lab = x[torch.arange(len(x)), 2 * pick + 1]
        return -((lab[:, None] - self.labels[None]) ** 2).sum(-1)


def test_the_gap_says_which_item_wins_in_planted_models():
    """A nearest-item rule whose ties go to the earliest item gives every gap > 0 by more than 3 standard errors of a
    gap (sqrt(2 x 0.25 / n) at most, n sequences per test); ties to the latest item, every gap < 0 by as much: the
    sign is the direction. (The pair decides only when one of its two copies is the item nearest the query.)"""
    n = 1000
    w = _world()
    sets = wu_icl.test_sets(replace(TINY, test_size=n), w, 0)
    early = wu_icl._evaluate(_Rule(w, True), sets)
    late = wu_icl._evaluate(_Rule(w, False), sets)
    se = np.sqrt(2 * 0.25 / n)
    assert all(v > 3 * se for v in early["gaps"].values()), early
    assert all(v < -3 * se for v in late["gaps"].values()), late
    assert early["plain"] > 0.95 and late["plain"] > 0.95


def test_the_norms_are_torchs_and_the_ablation_fixes_only_the_scale():
    x = torch.randn(4, 17, 64)
    for norm, ref in (("layernorm", torch.nn.LayerNorm(64)), ("rmsnorm", torch.nn.RMSNorm(64))):
        m = AttentionStack(64, 2, 32, norm=norm)
        want = ref(x)
        # float32, the same formula in another order: each output within a few ulp per reduction term, at most
        # D x 2^-23 relative to the largest output
        tol = 64 * 2.0 ** -23 * float(want.abs().max())
        assert torch.allclose(m.norms[0](x), want, rtol=0, atol=tol)
        xs = np.random.default_rng(0).normal(0, 1, (8, 17, 64)).astype(np.float32)
        scales = mean_scales(m, xs)
        before = m(torch.from_numpy(xs))
        with fixed_scale(m, scales):
            fixed = m(torch.from_numpy(xs))
            # layer 1's input: every token divided by the constant instead of its own scale
            y = m.norms[0](torch.from_numpy(xs))
            c = torch.from_numpy(xs) - (torch.from_numpy(xs).mean(-1, keepdim=True) if norm == "layernorm" else 0)
            want = c / scales[0]  # the centring's mean and one division, each within D x 2^-23 of the largest
            assert torch.allclose(y, want, rtol=0, atol=64 * 2.0 ** -23 * float(want.abs().max()))
        assert not torch.allclose(before, fixed)
        assert torch.equal(m(torch.from_numpy(xs)), before)  # restored
    with pytest.raises(ValueError, match="no scale"):
        mean_scales(AttentionStack(64, 2, 32), xs)


def test_the_probe_rollout_has_the_path_counts_of_uniform_attention():
    """Zero query weights make every layer's attention uniform over the causal prefix (A_ij = 1 / i): the rollout of
    the last row T is 1 / T on every key at layer 1 and sum_{k >= j} 1 / (T k) at layer 2 (paths T -> k -> j);
    every score slope is 0."""
    m = AttentionStack(64, 2, 32)
    for a in m.attention:
        torch.nn.init.zeros_(a.query.weight)
    x, _ = TASK.batch(_world(), 32, np.random.default_rng(0))
    rows = probe(m, x, TASK.items)
    t = TASK.length
    last = 2 * (TASK.items - 1) + 1  # 1-based key of the last item's content
    # the weights are float32 softmax outputs: each 1 / i within float32's rounding 2^-24 (relative), the rollout a
    # float64 sum of at most T products of two: within T x 2^-23 relative
    tol = t * 2.0 ** -23
    assert rows[0]["rollout_first"] == pytest.approx(1 / t, rel=tol)
    assert rows[0]["rollout_last"] == pytest.approx(1 / t, rel=tol)
    assert rows[1]["rollout_first"] == pytest.approx(sum(1 / (t * k) for k in range(1, t + 1)), rel=tol)
    assert rows[1]["rollout_last"] == pytest.approx(sum(1 / (t * k) for k in range(last, t + 1)), rel=tol)
    assert all(abs(r["slope"]) < 1e-12 for r in rows)  # the scores are exactly 0 (zero query weights)
    # the mean attention to the first key over rows 2..T: the mean of 1 / i
    assert rows[0]["first_attention"] == pytest.approx(np.mean(1 / np.arange(2, t + 1)), rel=tol)


def test_the_probe_rollout_is_the_product_of_the_layers_attention():
    torch.manual_seed(0)
    m = AttentionStack(64, 3, 32, norm="layernorm", residual=True)
    x, _ = TASK.batch(_world(), 8, np.random.default_rng(3))
    rows = probe(m, x, TASK.items)
    with torch.no_grad():
        _, traces = m(torch.from_numpy(x), trace=True)
    r = traces[0][1].double()
    for layer in (2, 3):
        r = traces[layer - 1][1].double() @ r
        assert rows[layer - 1]["rollout_first"] == pytest.approx(float(r[:, -1, 0].mean()), rel=1e-9)
    s = traces[2][0][:, -1].double().numpy()[:, 2 * np.arange(1, 8)]  # item keys 2..8
    want = np.mean([np.polyfit(np.arange(2, 9), row, 1)[0] for row in s])
    assert rows[2]["slope"] == pytest.approx(want, rel=1e-6)


@pytest.fixture(scope="module")
def tiny_runs(tmp_path_factory):
    from lnrecency.experiments.run_cache import using_root

    with using_root(tmp_path_factory.mktemp("wu")):
        runs = wu_icl.run_wu(TINY, workers=1)
        again = wu_icl.cached_wu(TINY)
    return runs, again


def test_a_tiny_run_is_cached_validated_and_reproducible(tiny_runs, tmp_path):
    runs, again = tiny_runs
    assert len(runs) == 27 and again == runs
    rec = runs[0]
    assert rec["plan_sha256"] == wu_icl.plan_sha256() and [e["step"] for e in rec["trajectory"]] == [0, 6, 12]
    # same seed, same bytes
    redo = wu_icl.train_run(rec["arm"], rec["norm"], rec["seed"], TINY)
    assert json.dumps({**redo, "seconds": 0}) == json.dumps({**rec, "seconds": 0})


def test_a_misfiled_or_foreign_record_is_refused(tiny_runs, tmp_path):
    from lnrecency.experiments.run_cache import DamagedCache, using_root, write

    rec = tiny_runs[0][0]
    with using_root(tmp_path):
        path = wu_icl.RUNS.path(TINY, ("depth 2", "none", 0))
        for bad, why in (({**rec, "seed": 1}, "filed as"), ({**rec, "plan_sha256": "0" * 64}, "made under the plan"),
                         ({**rec, "settings": "0" * 16}, "other settings"), ({**rec, "depth": 6}, "holds depth"),
                         ({**rec, "final": {**rec["final"], "plain": "0.4"}}, "plain"),
                         ({**rec, "final": {**rec["final"], "probe": rec["final"]["probe"][:1]}}, "probe rows")):
            write(path, bad)
            with pytest.raises(DamagedCache, match=why):
                wu_icl.cached_wu(TINY)


def _planted(gaps: dict, ablated_raise: float = 0.15, plain: float = 0.4, seeds=(0, 1, 2, 3, 4)) -> list:
    """Records with each cell's first-last gap (arm, norm) -> value, a seed-level spread of 0.02, the others 0.05."""
    rng = np.random.default_rng(7)
    runs = []
    for arm in wu_icl.ARMS:
        for norm in wu_icl.NORMS:
            for s in seeds:
                g = {"first-middle": 0.05 + 0.02 * rng.standard_normal(),
                     "first-last": gaps[(arm, norm)] + 0.02 * rng.standard_normal(), "middle-last": 0.0}
                ev = {"plain": plain, "accuracy": {}, "gaps": g}
                abl = None if norm == "none" else {**ev, "gaps": {**g, "first-last": g["first-last"] + ablated_raise
                                                                  + 0.02 * rng.standard_normal()}}
                runs.append({"arm": arm, "norm": norm, "seed": s, "trajectory": [{"step": 0, **ev}],
                             "final": {**ev, "train_accuracy": plain, "ablated": abl,
                                       "probe": [{"layer": 1, "slope": 0.0, "rollout_first": 0.1,
                                                  "rollout_last": 0.1}]}})
    return runs


PILOT = {(a, n): v for a, vals in {"depth 2": (0.19, 0.07, 0.08), "depth 6": (0.10, 0.05, 0.06),
                                   "depth 2 residual": (0.10, 0.03, 0.03)}.items() for n, v in zip(wu_icl.NORMS, vals)}


def test_the_plans_tests_on_planted_records():
    d = wu_icl.decide(_planted(PILOT), wu_icl.WuSettings())
    v = {k: x.verdict for k, (x, _) in d.items()}
    assert v == {"R1": "confirmed", "R2": "confirmed", "R3": "confirmed", "R4": "confirmed", "R5": "confirmed",
                 "R6": "confirmed", "P1": "confirmed", "P2": "confirmed", "P3": "confirmed", "P4": "confirmed",
                 "P5": "refuted", "P6": "confirmed"}
    assert all(x.family == 6 and x.fwer == 0.05 for x, _ in d.values())


def test_the_same_machinery_says_no():
    """Normalisation raising the gap, recency without normalisation, and an ablation that lowers it: every test turns
    over."""
    flipped = {k: (-0.1 if k[1] == "none" else 0.1) for k in PILOT}
    d = wu_icl.decide(_planted(flipped, ablated_raise=-0.15), wu_icl.WuSettings())
    v = {k: x.verdict for k, (x, _) in d.items()}
    assert {v[k] for k in ("R2", "R4", "R6", "P1", "P2", "P3", "P4", "P5", "P6")} == {"refuted"}


def test_runs_below_the_gate_decide_nothing():
    runs = _planted(PILOT)
    for r in runs:
        if r["arm"] == "depth 6" and r["norm"] == "none":
            r["final"]["plain"] = wu_icl.GATE - 0.01
    d = wu_icl.decide(runs, wu_icl.WuSettings())
    assert d["R3"][0] is None and d["R4"][0] is None and d["P2"][0] is None and "learning gate" in d["P2"][1]
    assert d["R1"][0].family == 6  # the undecided keep their places in the family
    cell = wu_icl.summary(runs, wu_icl.WuSettings())["depth 6 none"]
    assert cell["seeds"] == [] and cell["not_learned"] == [0, 1, 2, 3, 4]


def test_the_command_prints_both_families(tiny_runs, monkeypatch, capsys, tmp_path):
    from lnrecency.cli.app import main
    from lnrecency.experiments.run_cache import using_root

    monkeypatch.setattr(wu_icl.WuSettings, "preset", classmethod(lambda cls, quick: TINY))
    with using_root(tmp_path):
        for rec in tiny_runs[0]:
            from lnrecency.experiments.run_cache import write

            write(wu_icl.RUNS.path(TINY, (rec["arm"], rec["norm"], rec["seed"])), rec)
        assert main(["experiments", "wu-icl", "--quick", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert list(out["tests"]) == [*wu_icl.REPRODUCTION, *(f"P{k}" for k in range(1, 7))]
    assert {t["verdict"] for t in out["tests"].values()} == {"not decisive (quick run)"}
    assert out["plan_sha256"] == wu_icl.plan_sha256() and set(out["cells"]) == {
        f"{a} {n}" for a in wu_icl.ARMS for n in wu_icl.NORMS}


def test_the_claims_read_the_cached_runs(tiny_runs, monkeypatch, tmp_path):
    """W2-W4 from the cache: one row per plan test (6 + 4 + 2), each deciding its declared statement with the source
    the catalogue gives it; tiny runs pass no gate, so every row says why it is not decided."""
    from lnrecency.claims.catalog import declared, statement_source
    from lnrecency.claims.registry import evaluate
    from lnrecency.experiments.run_cache import using_root, write

    monkeypatch.setattr(wu_icl.WuSettings, "preset", classmethod(lambda cls, quick: TINY))
    with using_root(tmp_path):
        for rec in tiny_runs[0]:
            write(wu_icl.RUNS.path(TINY, (rec["arm"], rec["norm"], rec["seed"])), rec)
        rows = evaluate(["W2", "W3", "W4"])
    assert [r.setting.case for r in rows] == [*wu_icl.REPRODUCTION, *(f"P{k}" for k in range(1, 7))]
    assert [r.id for r in rows] == ["W2"] * 6 + ["W3"] * 4 + ["W4"] * 2
    assert {statement_source(r.id, r.statement) for r in rows if r.id == "W2"} == {"prior work (Wu et al., ICML 2025)"}
    assert {statement_source(r.id, r.statement) for r in rows if r.id != "W2"} == {"the project's own formulations"}
    assert all(declared(r.id).family.startswith("Wu et al.") for r in rows)
    # one label, one meaning (issue 66): a test that did not learn is not decided, never "the opposite shown"
    assert {r.verdict for r in rows} == {"inconclusive"}
    assert all("learning gate" in r.finding and r.finding.startswith("not decided") for r in rows)


def test_one_label_has_one_meaning():
    """Issue 66: an R test (their result) reads "reproduced" only when confirmed, "the opposite shown" only when
    refuted (significant the other way); not significant after Holm, or not learned (no decision), is
    "inconclusive". Our P tests keep confirmed / refuted / inconclusive; a quick run decides nothing."""
    from types import SimpleNamespace

    from lnrecency.claims.trained.w2_w4_wu_icl import label

    said = {v: label("R5", SimpleNamespace(verdict=v), False) for v in ("confirmed", "refuted", "inconclusive")}
    assert said == {"confirmed": "reproduced", "refuted": "the opposite shown", "inconclusive": "inconclusive"}
    assert label("R3", None, False) == "inconclusive"
    assert label("P5", SimpleNamespace(verdict="refuted"), False) == "refuted"
    assert label("R1", SimpleNamespace(verdict="confirmed"), True) == "inconclusive"
