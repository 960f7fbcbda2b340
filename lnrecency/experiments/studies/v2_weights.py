"""The final weights of every plan-v2 model (issue 67): what the path decomposition and plan v3's interventions
read.

Plan v2's BOS runs are plan version 1's attn2 runs, whose weights version 1 keeps
(:func:`lnrecency.experiments.studies.thesis_text.model_path`). Its no-BOS runs (and the BOS runs of a setting
version 1 did not train, such as the quick preset) kept only their records; their weights are trained again here
with the same configuration, training settings and seed (the trainer is deterministic on the CPU) and kept beside
the records, in ``thesis-text-v2/<key>-<bos|nobos>-<norm>-<seed>-model``. A
retrained model is accepted only when its final held-out loss equals the one its cached record states (to float
rounding, :data:`LOSS_TOLERANCE`): the weights are then those of the run the plan decided from.
"""
from __future__ import annotations

from dataclasses import asdict

from lnrecency.experiments.studies.thesis_text_v2 import (
    V2Settings,
    cached_v2,
    plain_corpus_data,
    plan_sha256,
    weights_path,
)

__all__ = ["weights_path", "train_weights", "load_model", "missing", "ensure_weights", "LOSS_TOLERANCE"]

#: the largest |final held-out loss of the retrained model - the record's| accepted (float32 training, the same
#: operations in the same order: the two agree to the last bit on one machine; 1e-5 allows another CPU's BLAS)
LOSS_TOLERANCE = 1e-5


def _record(st: V2Settings, bos: bool, norm: str, seed: int) -> dict:
    runs = cached_v2(st)
    if runs is None:
        raise FileNotFoundError("plan v2's runs are not all cached: run `lnrecency experiments thesis-text-v2` first")
    return next(r for r in runs if (r["bos"], r["norm"], r["seed"]) == (bos, norm, seed))


def train_weights(bos: bool, norm: str, seed: int, st: V2Settings) -> dict:
    """Train the run (bos, norm, seed) again, check its final held-out loss against the cached record and keep its
    weights (a worker's job). Returns {"bos", "norm", "seed", "loss", "record_loss", "seconds"}."""
    from lnrecency.experiments.decoders.train import save, train
    from lnrecency.experiments.run_cache import DamagedCache, make_folder
    from lnrecency.experiments.studies.thesis_text_v2 import corpus_data

    rec = _record(st, bos, norm, seed)
    target = weights_path(st, bos, norm, seed)
    make_folder(target.parent)
    if target.is_symlink() or (target.exists() and not target.is_dir()):
        raise DamagedCache(f"cache entry {str(target)!r} is not a folder lnrecency wrote; remove it and run again")
    data = corpus_data(st.base.corpus) if bos else plain_corpus_data(st.base.corpus)
    cfg, ts = st.base.decoder("attn2", norm, data.vocab), st.base.training(seed)
    arm = "BOS" if bos else "no-BOS"
    if rec["config"] != cfg.as_dict() or rec["training"] != asdict(ts):
        raise ValueError(f"the cached record of {arm} {norm} seed {seed} is of another configuration")
    res = train(cfg, ts, data=data)
    said = rec["log"][-1]["heldout_loss"]
    if abs(res.final_heldout - said) > LOSS_TOLERANCE:
        raise ValueError(f"{arm} {norm} seed {seed}: the retrained model's final held-out loss "
                         f"{res.final_heldout:.8f} differs from the record's {said:.8f} by more than "
                         f"{LOSS_TOLERANCE:g}")
    save(res, target, extra={"plan_sha256": plan_sha256(), "record_heldout_loss": said})
    return {"bos": bos, "norm": norm, "seed": seed, "loss": res.final_heldout, "record_loss": said,
            "seconds": res.seconds}


def load_model(st: V2Settings, bos: bool, norm: str, seed: int):
    """The final model of one plan-v2 run, read by the checkpoint reader and checked to be of that run (its
    configuration and training, and its final held-out loss the record's)."""
    from lnrecency.experiments.decoders.train import load

    folder = weights_path(st, bos, norm, seed)
    if not folder.is_dir() or folder.is_symlink():
        raise FileNotFoundError(f"no weights for plan v2's {'BOS' if bos else 'no-BOS'} {norm} seed {seed} at "
                                f"{str(folder)!r}: run python3 -m lnrecency.experiments.studies.v2_weights")
    model, meta = load(folder)
    rec = _record(st, bos, norm, seed)
    if meta.get("decoder") != rec["config"] or meta.get("training") != rec["training"]:
        raise ValueError(f"the weights {str(folder)!r} are not of the run they are filed under")
    got, said = meta.get("final_heldout_loss"), rec["log"][-1]["heldout_loss"]
    if not isinstance(got, float) or abs(got - said) > LOSS_TOLERANCE:
        raise ValueError(f"the weights {str(folder)!r} end at held-out loss {got!r}, the record at {said!r}")
    return model


def missing(st: V2Settings) -> list[tuple[bool, str, int]]:
    """The runs (bos, norm, seed) whose weights are not kept."""
    return [job for job in st.jobs() if not weights_path(st, *job).is_dir()]


def ensure_weights(st: V2Settings | None = None, *, workers: int = 2, progress: bool | None = None,
                   scheduler: str = "local") -> list[dict]:
    """Train the runs whose weights are not kept, ``workers`` at a time (about 35 min on 2 cores for the 24 no-BOS
    runs of the default settings; seconds for the quick preset), or each one task on the Dask cluster at
    ``scheduler`` (its workers write the weights into their ``LNRECENCY_CACHE``)."""
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor

    from lnrecency.runtime.child import worker_init
    from lnrecency.runtime.progress import Progress

    st = st or V2Settings()
    todo = sorted(missing(st), key=lambda job: job[1] == "layernorm")  # the quick ones first
    if not todo:
        return []
    plain_corpus_data(st.base.corpus)
    out = []
    bar = Progress(len(todo), "v2 weights", "runs", enabled=progress)
    if scheduler != "local":
        from lnrecency.experiments.decoders.parallel import run_jobs

        def done(q: int, row: dict) -> None:
            bar.update(1, f"{row['norm']} {row['seed']}")
        try:
            return run_jobs(train_weights, [(*job, st) for job in todo], scheduler=scheduler, done=done,
                            label=lambda args: f"{'BOS' if args[0] else 'no-BOS'} {args[1]} seed {args[2]}")
        finally:
            bar.close()
    with ProcessPoolExecutor(max_workers=workers, mp_context=mp.get_context("fork"), initializer=worker_init) as pool:
        for fut in [pool.submit(train_weights, *job, st) for job in todo]:
            out.append(fut.result())
            bar.update(1, f"{out[-1]['norm']} {out[-1]['seed']}")
    bar.close()
    return out


if __name__ == "__main__":
    for row in ensure_weights(progress=True):
        print(row, flush=True)
