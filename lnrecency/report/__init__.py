"""Reviewer outputs: theory-vs-simulation tables (Markdown, CSV, LaTeX, JSON), figures, the report pipeline.

Modules: :mod:`~lnrecency.tables` (the Table record and its writers), :mod:`~.atomic` (atomic
files), :mod:`~.settings` (quick/default sizes), :mod:`~.data` (cached library results),
:mod:`~.series` (curves), :mod:`~.claim_tables` (table builders), :mod:`~.figures` (figure builders),
:mod:`~.build` (``build_report`` and ``index.md``).
"""
from lnrecency.tables import FORMATS, Table, parse_formats

__all__ = ["FORMATS", "Table", "parse_formats"]
