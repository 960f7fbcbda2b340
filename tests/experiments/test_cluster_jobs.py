"""Experiments on a Dask cluster (issue 76, item 3): each training one task on an existing cluster (here a
``distributed.LocalCluster`` of 2 processes, reached by its address as a remote one would be), the same bytes as the
local worker processes, a worker lost mid-run costing that run only (run again, or named), and ``--scheduler``
refused by name before torch or Dask load."""
from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

pytest.importorskip("distributed")
pytest.importorskip("torch")

from lnrecency.experiments.decoders.parallel import check_scheduler, run_jobs  # noqa: E402


def _die_unless(marker: str, times: int, value: int) -> int:
    """A job that kills its worker process the first ``times`` times it runs (counted in the file ``marker``)."""
    path = Path(marker)
    seen = int(path.read_text()) if path.exists() else 0
    if seen < times:
        # written whole, then renamed: another job reading the same marker never sees it half written (it read '')
        tmp = path.with_name(f"{path.name}.{os.getpid()}")
        tmp.write_text(str(seen + 1))
        os.replace(tmp, path)
        os._exit(1)  # the worker is lost mid-run, as a killed machine would be
    return value * 10


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    import cloudpickle
    import dask
    import distributed

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # the workers need not import this test module
    root = tmp_path_factory.mktemp("cluster_cache")
    old = os.environ.get("LNRECENCY_CACHE")
    os.environ["LNRECENCY_CACHE"] = str(root)  # the workers' cache (read by the processes the cluster starts)
    try:
        with dask.config.set({"distributed.scheduler.allowed-failures": 0}):  # a lost worker fails its tasks
            lc = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                          silence_logs=logging.CRITICAL)
        with lc:
            yield lc.scheduler_address, root
    finally:
        if old is None:
            os.environ.pop("LNRECENCY_CACHE", None)
        else:
            os.environ["LNRECENCY_CACHE"] = old


def _outputs(root: Path) -> dict:
    """Every record of the cache without its wall time, and every weights file, as bytes."""
    out = {}
    for path in sorted(root.rglob("*")):
        if path.suffix == ".json" and path.parent.name == "thesis-text-v2":
            rec = json.loads(path.read_text())
            rec.pop("seconds")  # the one field that is a measurement of the machine, not of the run
            out[path.name] = json.dumps(rec, sort_keys=True).encode()
        elif path.name == "model.safetensors":
            out[f"{path.parent.name}/{path.name}"] = path.read_bytes()
    return out


def test_a_quick_experiment_on_the_cluster_gives_the_bytes_of_local_workers(cluster, tmp_path):
    import numpy as np

    from lnrecency.experiments.studies import thesis_text_v2 as v2
    from lnrecency.experiments.studies.thesis_text import TextThesisSettings

    address, root = cluster
    rng = np.random.default_rng(3)
    words = ["alpha", "beta", "gamma", "delta", "key", "value", "def", "return"]
    for q in range(12):
        (tmp_path / f"f{q:02d}.txt").write_text(" ".join(rng.choice(words, size=300)) + "\n")
    base = TextThesisSettings(primary_seeds=(0,), secondary_seeds=(), archs=("attn2",), steps=8, warmup=2,
                              eval_every=4, eval_sequences=8, probe_windows=8, n=16, corpus=str(tmp_path))
    st = v2.V2Settings(seeds=(0,), bos=(False,), base=base)
    on_cluster = v2.run_v2(st, use_cache=False, scheduler=address)
    first = _outputs(root)
    assert len(first) == 6  # 3 records and 3 weights files, all from the cluster's workers
    # the local path (here in this process: its bytes do not depend on the number of local workers,
    # tests/experiments/test_thesis.py), the same entries written again
    locally = v2.run_v2(st, use_cache=False, workers=1)
    assert _outputs(root) == first
    assert [{k: v for k, v in r.items() if k != "seconds"} for r in on_cluster] == \
        [{k: v for k, v in r.items() if k != "seconds"} for r in locally]


def test_a_lost_worker_costs_its_run_only(cluster, tmp_path):
    address, _ = cluster
    once, always = str(tmp_path / "once"), str(tmp_path / "always")
    finished = []
    # lost once: run again (alone), and its record comes back
    assert run_jobs(_die_unless, [(once, 1, 1), (once, 0, 2)], scheduler=address,
                    done=lambda q, rec: finished.append(q)) == [10, 20]
    assert Path(once).read_text() == "1" and sorted(finished) == [0, 1]
    finished.clear()
    # lost every time: named after the other run finished (and was handed on), even when they shared the worker
    with pytest.raises(RuntimeError, match=r"1 of 2 runs failed on the cluster .*: run-a \(KilledWorker"):
        run_jobs(_die_unless, [(always, 99, 1), (once, 0, 3)], scheduler=address,
                 done=lambda q, rec: finished.append((q, rec)), label=lambda args: "run-a" if args[1] else "run-b")
    assert finished == [(1, 30)]


def test_nothing_to_run_reaches_no_cluster():
    assert run_jobs(_die_unless, [], scheduler="tcp://127.0.0.1:1") == []  # no connection tried (it would time out)


@pytest.mark.parametrize("bad", ["", "bogus", "http://x:1", "tcp://", " local", "tcp://a b", None, 3])
def test_a_bad_scheduler_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="^scheduler must be 'local'"):
        check_scheduler(bad)


def test_the_flag_is_refused_before_torch_and_dask(tmp_path):
    import subprocess

    code = ("import sys; from lnrecency.cli.app import main; rc = main(['experiments', 'thesis-text-v2', '--quick', "
            "'--scheduler', 'udp://h:1']); assert 'torch' not in sys.modules and 'distributed' not in sys.modules; "
            "sys.exit(rc)")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert res.returncode == 2, res.stderr
    assert res.stderr.startswith("lnrecency experiments: error: --scheduler must be 'local'") and \
        res.stderr.count("\n") == 1
