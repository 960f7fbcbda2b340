"""An experiment's cached runs as its claims read them (:class:`CachedStudy`): its settings at the report's mode,
whether every run is cached, the runs (read, or trained when not), and what a report table or figure draws from.

The experiment's module is imported only when asked (it may need the models extra); a damaged cache raises
:class:`lnrecency.experiments.run_cache.DamagedCache`, which the registry reports as damaged, never as not run.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass

__all__ = ["CachedStudy"]


@dataclass(frozen=True)
class CachedStudy:
    """``module``: the experiment's module; ``settings``: its settings class (with ``preset(quick)``; each name may be
    dotted: an attribute of an attribute of the module, e.g. a plan declared with arms); ``cached``:
    its function settings -> every run from the cache, or None when one is missing; ``run``: its function
    (settings, progress=) -> the runs, trained where not cached."""

    module: str
    settings: str
    cached: str
    run: str

    def _get(self, name: str):  # an attribute of the module, or of one of its attributes ("plan.cached")
        obj = importlib.import_module(self.module)
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj

    def settings_for(self, quick: bool):
        return self._get(self.settings).preset(quick)

    def available(self, quick: bool = False) -> bool:
        """Whether every run of the mode's settings is cached (False without the models extra)."""
        try:
            return self._get(self.cached)(self.settings_for(quick)) is not None
        except ImportError:
            return False

    def runs(self, quick: bool, progress=None) -> tuple:
        """(settings, runs): read from the cache, or trained when one is missing."""
        st = self.settings_for(quick)
        runs = self._get(self.cached)(st)
        return st, (runs if runs is not None else self._get(self.run)(st, progress=progress))

    def for_report(self, data) -> list | None:
        """The cached runs a report table or figure draws from: None for a report rendered from stored evidence
        (``data.frozen``), without the models extra, or when a run is not cached."""
        if data.frozen:
            return None
        try:
            return self._get(self.cached)(self.settings_for(data.settings.quick))
        except ImportError:
            return None
