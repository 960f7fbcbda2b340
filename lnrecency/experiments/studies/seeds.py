"""The seeds' experiments by name: one entry point over :mod:`lnrecency.experiments.studies.seed002` and
:mod:`lnrecency.experiments.studies.seed003` (settings: :mod:`lnrecency.experiments.studies.seeds_config`)."""
from __future__ import annotations

from lnrecency.experiments.studies.seeds_config import EXPERIMENTS

__all__ = ["run_experiment"]


def run_experiment(experiment: str, settings, *, use_cache: bool = True, progress: bool | None = False,
                   workers: int | None = None, scheduler: str = "local") -> list[dict]:
    """Every run of ``experiment`` ("seed002" / "seed003") under ``settings``: trained, or read from the cache
    (imports torch)."""
    if experiment == "seed002":
        from lnrecency.experiments.studies.seed002 import run_seed002 as runner
    elif experiment == "seed003":
        from lnrecency.experiments.studies.seed003 import run_seed003 as runner
    else:
        raise ValueError(f"experiment must be one of {sorted(EXPERIMENTS)}; got {experiment!r}")
    return runner(settings, use_cache=use_cache, progress=progress, workers=workers, scheduler=scheduler)
