"""Reviewer outputs: theory-vs-simulation tables (Markdown, CSV, LaTeX, JSON), figures, the report pipeline.

Modules: :mod:`~lnrecency.tables` (the Table record and its writers), :mod:`~.atomic` (atomic
files), :mod:`~.settings` (quick/default sizes), :mod:`~.data` (cached library results),
:mod:`~.claim_tables` (the report's own tables; every table in order), :mod:`~.figures` (every figure in
order; each claim declares its tables and figures in its own module, lnrecency.claims.declare),
:mod:`~.build` (``build_report`` and ``index.md``).
"""
from lnrecency.tables import FORMATS, Table, parse_formats

__all__ = ["FORMATS", "Table", "parse_formats"]
