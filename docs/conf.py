"""Sphinx configuration of the lnrecency documentation (Sphinx + MyST: the pages are Markdown, as in the
repository; autodoc reads the API from the docstrings; myst-nb renders the notebooks without running them).

Built in CI with warnings as errors (tests/report/test_docs.py runs ``sphinx-build -W``). Before the build, the
claim pages (docs/claims/) and the notebook copies (docs/notebooks/) are generated: one page per claim from
the claim registry and the verdict snapshot docs/verdicts.json (written by ``python3 -m
lnrecency.report.readme``, with the README's headline).
"""
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import build_pages  # noqa: E402 (docs/build_pages.py)

build_pages.generate(HERE)

project = "lnrecency"
author = "the lnrecency authors"
copyright = "2026, the lnrecency authors"
from lnrecency import __version__ as release  # noqa: E402

version = release
extensions = ["myst_nb", "sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
myst_enable_extensions = ["dollarmath", "deflist"]
myst_heading_anchors = 3
nb_execution_mode = "off"  # the notebooks run in the test suite (tests/report/test_notebooks.py), not here
source_suffix = {".md": "myst-nb", ".ipynb": "myst-nb"}
exclude_patterns = ["_build", "build_pages.py", "verdicts.json"]
autodoc_member_order = "bysource"
autodoc_typehints = "none"
autodoc_default_options = {"members": True, "undoc-members": False}
html_theme = "alabaster"
html_title = f"lnrecency {release}"
html_theme_options = {"page_width": "1100px", "sidebar_width": "250px"}
suppress_warnings = ["myst.header"]  # pages moved from the README keep their heading levels


def _plain_docstring(app, what, name, obj, options, lines):
    """The docstrings are plain text with ASCII mathematics (|h|, S_ij, x^2), not reStructuredText: show
    each as preformatted text, as written, so that nothing in it is read as markup."""
    text = [line.rstrip() for line in lines]
    while text and not text[-1]:
        text.pop()
    if not text:
        return
    lines[:] = ["::", ""] + ["    " + line if line else "" for line in text] + [""]


def _notebook_links(app, docname, source):
    """A claim page links the repository's notebook (../../notebooks/X.ipynb: it resolves in a checkout and on
    GitHub); in the site the same link goes to the notebook's rendered copy (docs/notebooks/X.ipynb)."""
    if docname.startswith("claims/"):
        source[0] = source[0].replace("](../../notebooks/", "](../notebooks/")


def setup(app):
    app.connect("autodoc-process-docstring", _plain_docstring)
    app.connect("source-read", _notebook_links)
