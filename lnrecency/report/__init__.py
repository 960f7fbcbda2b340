"""Floor 8, the reviewer report: :mod:`~.settings` (quick/default sizes), :mod:`~.data` (the library results
the report reads), :mod:`~.table_list` (the report's own tables, then every claim's, in order),
:mod:`~.figure_list` (every figure in order), :mod:`~.headline` (the counts and plain answer), :mod:`~.build`
(``build_report``, ``index.md``), :mod:`~.html` (``index.html``) and :mod:`~.readme` (the README block).
What each claim shows (tables, figures, notebook cells) is registered by its ID in :mod:`~.views`."""
from lnrecency.files.table_record import FORMATS, Table, parse_formats

__all__ = ["FORMATS", "Table", "parse_formats"]
