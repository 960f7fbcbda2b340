"""Generate the reviewer notebooks (stored without outputs) from this one script, so they stay in sync.

    python3 notebooks/make_notebooks.py          # rewrites notebooks/*.ipynb

Every code cell only calls the library (theory, numerics, lnrecency.report, lnrecency.claims); each
notebook runs in well under a minute with the report's quick settings. tests/test_notebooks.py executes
them all and checks that the stored files equal what this script generates.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the catalog, when run from a checkout

SETUP = """\
from IPython.display import Markdown, display
%matplotlib inline

from lnrecency.report.settings import ReportSettings
from lnrecency.report.data import ReportData
from lnrecency.report import claim_tables, figures, series

# The report's quick settings: small n and sample counts, so the notebook runs in seconds.
data = ReportData(ReportSettings.make(quick=True, seed=0))
print(data.settings)"""


def _notebooks() -> dict[str, list[tuple[str, str]]]:
    """Notebook name -> cells: its title, the setup cell, then the cells of every claim the catalog puts
    in it (lnrecency.claims.catalog, in catalog order)."""
    from lnrecency.claims.catalog import CATALOG, NOTEBOOK_TITLES

    out = {name: [("md", title), ("code", SETUP)] for name, title in NOTEBOOK_TITLES.items()}
    for claim in CATALOG:
        if claim.notebook is not None:
            out[claim.notebook] += list(claim.cells)
    return out


NOTEBOOKS: dict[str, list[tuple[str, str]]] = _notebooks()


def build(name: str) -> nbformat.NotebookNode:
    nb = new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for k, (kind, text) in enumerate(NOTEBOOKS[name]):
        cell = new_markdown_cell(text) if kind == "md" else new_code_cell(text)
        cell["id"] = f"{name[:2]}-{k:02d}"  # stable ids: same script, same bytes
        nb.cells.append(cell)
    return nb


def render(name: str) -> str:
    return nbformat.writes(build(name)) + "\n"


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(HERE.parent))
    from lnrecency.atomic import atomic_write_text
    for name in NOTEBOOKS:
        atomic_write_text(HERE / f"{name}.ipynb", render(name))
        print(f"wrote notebooks/{name}.ipynb")
    return 0


if __name__ == "__main__":
    sys.exit(main())
