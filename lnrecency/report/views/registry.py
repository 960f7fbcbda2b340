"""Every claim's views in report order: the view modules imported in the claims' order (a claim module's views live
in the module of the same name under :mod:`lnrecency.report.views`; a claim may show nothing of its own), then the
sections that hold no verdict. The report's table and figure lists and the notebooks derive from :data:`VIEW_LIST`."""
from __future__ import annotations

import importlib
import importlib.util

from lnrecency.claims import catalog
from lnrecency.claims.registry import CATALOG, MODULES
from lnrecency.report.views.outputs import VIEWS, View

__all__ = ["SECTIONS", "VIEW_MODULES", "VIEW_LIST"]

#: the view modules of no single claim (notebook sections), after the claims' own
SECTIONS: tuple[str, ...] = ("section_boundaries",)


def _view_modules() -> tuple[str, ...]:
    """The claim modules' view modules, each as its claims declare (catalog ``view=``): a claim that declares a view
    whose module is missing or misspelt, or a view module for claims that declare none, is refused here, naming
    both, before any report is built."""
    out = []
    for m in MODULES:
        name = f"lnrecency.report.views.{m}"
        exists = importlib.util.find_spec(name) is not None
        claims = [c for c in catalog.CATALOG if c.module == m]
        wants = any(c.view for c in claims)
        if wants and not exists:
            raise RuntimeError(f"claim {', '.join(c.id for c in claims)} declares a view, but there is no module "
                               f"lnrecency/report/views/{m.replace('.', '/')}.py (missing or misspelt); write it, or "
                               f"declare view=False in lnrecency/claims/catalog.py")
        if exists and not wants:
            raise RuntimeError(f"lnrecency/report/views/{m.replace('.', '/')}.py exists, but claim "
                               f"{', '.join(c.id for c in claims)} declares view=False")
        if exists:
            out.append(m)
    return tuple(out) + SECTIONS


#: the modules under lnrecency.report.views that register views, in report order
VIEW_MODULES: tuple[str, ...] = _view_modules()


def _views() -> tuple[View, ...]:
    for m in VIEW_MODULES:
        importlib.import_module(f"lnrecency.report.views.{m}")
    strays = sorted({v.module for v in VIEWS.values()} - {f"lnrecency.report.views.{m}" for m in VIEW_MODULES})
    if strays:
        raise RuntimeError(f"views registered outside lnrecency.report.views.registry.VIEW_MODULES: {strays}")
    unknown = sorted(v.id for v in VIEWS.values() if not v.section and v.id not in {c.id for c in CATALOG})
    if unknown:
        raise RuntimeError(f"views registered for claims the registry does not know: {unknown}")
    order = {c.id: q for q, c in enumerate(CATALOG)}
    return tuple(sorted(VIEWS.values(), key=lambda v: (v.section, order.get(v.id, 0))))


#: every claim's and section's views, in report order
VIEW_LIST: tuple[View, ...] = _views()
