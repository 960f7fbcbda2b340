"""Phase diagrams (lnrecency.experiments.sweep) and Dask (lnrecency.runtime.distributed): a local cluster of two worker
processes gives the same bytes as one process, for the sweep and for chunked Monte Carlo; phases agree
with the Definition-1 profiler (lnrecency.experiments.profiler, a separate classification path)."""
from __future__ import annotations

import pytest

from lnrecency.cli.app import main
from lnrecency.experiments.profiler import bias_profile
from lnrecency.experiments.sweep import SweepGrid, phase_rows, sweep
from lnrecency.model.config import ModelConfig

GRID = SweepGrid(residual=((False, 1.0), (True, 1.0)), lams=(0.3, 1.0), alphas=(0.0, 0.5), layers=4, n_max=40)


def test_dask_local_cluster_gives_the_same_bytes(tmp_path):
    pytest.importorskip("distributed")
    a, b = tmp_path / "dask", tmp_path / "one"
    common = ["sweep", "--residual", "both", "--gamma", "1", "--lam", "0.3,1", "--alpha", "0,0.5", "--layers", "4",
              "--n-max", "40", "--no-progress"]
    assert main([*common, "--out", str(a), "--scheduler", "local", "--workers", "2"]) == 0
    assert main([*common, "--out", str(b), "--scheduler", "none"]) == 0
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name


def test_chunked_monte_carlo_on_dask_is_byte_identical():
    pytest.importorskip("distributed")
    from lnrecency.numerics import simulate_scores
    from lnrecency.runtime.distributed import executor

    kw = dict(n=5, layers=2, d=64, samples=4000, seed=3, method="gram", norm="layernorm", chunk=500)
    one = simulate_scores(**kw, workers=1)
    with executor("local", 2) as ex:
        two = simulate_scores(**kw, executor=ex)
    for field in ("mean", "stderr", "cross_moments", "greater_counts", "recency_mean", "recency_stderr"):
        assert getattr(one, field).tobytes() == getattr(two, field).tobytes(), field


def test_phases_agree_with_the_definition1_profiler():
    rows = sweep(GRID, scheduler="none", progress=False)
    assert len(rows) == GRID.size() * 3
    for r in rows:
        cfg = ModelConfig(norm="layernorm", residual=r.residual, gamma=r.gamma or 1.0, lam=r.lam,
                          alpha=r.alpha)
        labels = bias_profile(r.layer, GRID.n_max, config=cfg).labels()
        if r.phase == "recency":
            assert set(labels[1:]) == {"recency"}
        elif r.phase == "earlier":
            assert set(labels[2:]) == {"earlier"}
        else:
            first = r.recency_first_failing_n
            assert set(labels[1:first - 1]) <= {"recency"} and labels[first - 1] != "recency"
    # the C6 counterexample row: residual gamma = 1, lam = 1, alpha = 0 fails recency at layer 3, row 27
    r = [r for r in rows if (r.residual, r.lam, r.alpha, r.layer) == (True, 1.0, 0.0, 3)][0]
    assert r.phase == "recency, then mixed" and r.recency_first_failing_n == 27


def test_phase_rows_say_no_without_normalisation():
    """The same classification labels no-normalisation layers >= 3 earlier, not recency."""
    rows = phase_rows(ModelConfig(norm="none"), 4, 30)
    assert [r.phase for r in rows if r.layer >= 3] == ["earlier", "earlier"]


@pytest.mark.parametrize("argv, words", [
    (["--alpha", "1"], ["alpha", "1"]),
    (["--lam", "0,1"], ["lam", "0"]),
    (["--layers", "1"], ["layers", "1"]),
])
def test_refusals(tmp_path, capsys, argv, words):
    assert main(["sweep", *argv, "--out", str(tmp_path / "s"), "--scheduler", "none"]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words)
    assert not (tmp_path / "s").exists()


def test_unparsable_list_is_a_usage_error(tmp_path, capsys):
    with pytest.raises(SystemExit) as e:
        main(["sweep", "--lam", "x", "--out", str(tmp_path / "s")])
    assert e.value.code == 2 and "--lam" in capsys.readouterr().err


def test_unreachable_scheduler_is_a_clear_error(tmp_path, capsys):
    pytest.importorskip("distributed")
    assert main(["sweep", "--layers", "2", "--n-max", "5", "--lam", "1", "--alpha", "0", "--out",
                 str(tmp_path / "s"), "--scheduler", "tcp://127.0.0.1:9"]) == 2
    err = capsys.readouterr().err
    assert "tcp://127.0.0.1:9" in err and err.count("\n") == 1


def test_interrupted_sweep_leaves_no_partial_output(tmp_path, monkeypatch):
    import lnrecency.experiments.sweep as sw

    calls = []

    def boom(cfg, layers, n_max):
        calls.append(cfg)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return []

    monkeypatch.setattr(sw, "phase_rows", boom)
    with pytest.raises(KeyboardInterrupt):
        sw.write_sweep(tmp_path / "s", GRID, scheduler="none", progress=False)
    assert list(tmp_path.iterdir()) == []  # neither the folder nor a staging folder


def test_boundary_curves_points_are_certified_ends(tmp_path):
    """`sweep --curves`: every curve point's failing set [0, a*] and every axis end are checked independently here
    by the exact boundary search on both sides (1e-5 away), and the files are written with the sweep."""
    import json

    from lnrecency.experiments.sweep import SweepGrid, write_sweep
    from lnrecency.model.config import ModelConfig
    from lnrecency.theory.boundary import boundary

    grid = SweepGrid(residual=((True, 1.0),), lams=(0.3, 8.0), alphas=(0.0,), layers=3, n_max=40)
    files = write_sweep(tmp_path / "sw", grid, scheduler="none", progress=False, curves=(3,), curve_points=3)
    assert {"boundary_curves.json", "boundary_curves.png", "boundary_curves.pdf"} <= {p.name for p in files}
    points = json.loads((tmp_path / "sw" / "boundary_curves.json").read_text())

    def holds(**kw):
        return boundary(3, 40, config=ModelConfig(norm="layernorm", residual=True, **kw), first_layer=3)[0].holds

    assert any(p["over"] == "lam" and not p.get("axis") and p["fails"] for p in points)
    for p in points:
        fixed = {"gamma": p["gamma"], "lam": p["lam"]}
        if p.get("axis"):
            for e in p["ends"]:
                below = {**fixed, p["over"]: e["value"] - 1e-5, "alpha": 0.0}
                above = {**fixed, p["over"]: e["value"] + 1e-5, "alpha": 0.0}
                assert holds(**below) == e["holds_below"] and holds(**above) != e["holds_below"]
            continue
        for a, b in p["fails"]:
            assert not holds(**fixed, alpha=(a + b) / 2)
            if b < 0.999:
                assert holds(**fixed, alpha=b + 1e-5)
