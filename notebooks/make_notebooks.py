"""Generate the reviewer notebooks (stored without outputs) from this one script, so they stay in sync.

    python3 notebooks/make_notebooks.py          # rewrites notebooks/*.ipynb

Every code cell only calls the library (theory, numerics, lnrecency.report, lnrecency.claims); each
notebook runs in well under a minute with the report's quick settings. tests/report/test_notebooks.py executes
them all and checks that the stored files equal what this script generates.
"""
from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the claims, when run from a checkout

SETUP = """\
import os

from IPython.display import display
%matplotlib inline

from lnrecency.report.build import read_evidence
from lnrecency.report.data import ReportData
from lnrecency.report.settings import ReportSettings

# The report's quick settings: small n and sample counts, so the notebook runs in seconds. With LNRECENCY_EVIDENCE
# naming a folder written by `lnrecency verify --quick --out DIR`, it renders that stored evidence instead of
# computing it (as `lnrecency report --from DIR` does).
stored = os.environ.get("LNRECENCY_EVIDENCE")
data = read_evidence(stored) if stored else ReportData(ReportSettings.make(quick=True, seed=0))
print(data.settings)"""

#: notebook name -> its opening Markdown cell (the claims' cells follow, in catalog order)
NOTEBOOK_TITLES: dict[str, str] = {
    "01_theorem1_layernorm_recency":
        "# Theorem 1: LayerNorm induces layer-2 recency\n\n"
        "Source: the paper's Theorem 1 (seed 000): with N(0, I/d) embeddings, stacked LayerNorm and "
        "causal attention, d >> 1, the layer-2 scores grow with the key index j. In the d -> infinity "
        "limit S^(2)_ij = g(i) / (h(i) h(j)) for j < i, so recency is exactly 'h strictly decreasing'.",
    "02_no_normalisation_baseline":
        "# Without normalisation: flat layer 2, earlier-token bias from layer 3\n\n"
        "Prior work (Wu et al., ICML 2025) proves that stacked causal attention concentrates the attention "
        "rollout (the product of the layers' weights) on earlier tokens; that is a statement about the "
        "rollout, not about one layer's scores. In the limit the layer-2 score without normalisation is g(i), "
        "independent of the key j (flat); the scores favour earlier keys from layer 3 (our claim C2).",
    "03_residual_and_anisotropy":
        "# Residual connections and anisotropic embeddings\n\n"
        "The paper: residual connections weaken but do not remove the recency bias, and embedding "
        "anisotropy alpha (E<x_i, x_j> = alpha) 'can amplify it'. Below: h(j) for several alpha with "
        "and without residual (the second version's Figures 2 and 5), the layer-2 scores, and the "
        "gap S_(n,n-1) - S_(n,1) against alpha, in absolute and relative terms.",
    "04_deeper_layers_and_finite_width":
        "# Deeper layers, single instances and finite width\n\n"
        "What happens at layers 3 and 4 with LayerNorm; how often a single random draw at width d "
        "orders the scores like their expectation; and how fast E_d[S] approaches the limit.",
    "05_seeds_output_norm_and_variance":
        "# Seeds 002 and 003: shrinking outputs and vanishing variance\n\n"
        "Seed 002: the average of weakly correlated vectors gets shorter as more are averaged, so the "
        "attention output shrinks with position (in the limit |o_i|^2 = sum_k P_ik^2). Seed 003: the "
        "per-coordinate variance of the attention output decays with sequence length, and a "
        "LayerNorm right after attention keeps it fixed.",
    "06_printed_derivation":
        "# The authors' printed derivation, line by line (P1-P9)\n\n"
        "The first version of the paper (arXiv 2509.21042v1, Sec. 3.2 and App. A) printed the layer-1 "
        "weights, g(i), h(i)^2, the layer-2 score and the monotonicity arguments. Each line is checked "
        "against the project's own sympy derivation and exact limit.",
    "07_authors_simulations_and_boundaries":
        "# The authors' simulations, and where each claim holds\n\n"
        "The paper's Figure 1 rerun in the authors' own convention (authors-v2: their token scale, "
        "1/sqrt(E) score scale and residual, mapped exactly onto our model), with the recency "
        "probability RP +- SE of every panel beside our limit; then the boundary of recency in the "
        "sequence length, the decision in alpha a grid cannot make, and the phase diagram.",
    "08_trained_decoders":
        "# The thesis in trained decoders\n\n"
        "The theory assumes W_Q = W_K = W_V = I, no MLP and no training. Here NoPE decoders are trained on the "
        "induction task (3 architectures x LayerNorm / RMSNorm / none x 3 seeds) and probed with the theory's "
        "diagnostics at initialisation, at matched held-out loss and after training. Verdicts TM1-TM5 "
        "(source: trained models, our formulation).",
    "09_seed_experiments":
        "# Seeds 002 and 003, reproduced at small scale\n\n"
        "Seed 002's induction-head experiments (its Figures 1, 3-6 and the norm mechanism) and seed 003's "
        "vanishing variance and post-attention LayerNorm, on small decoders trained here on CPU with at least 3 "
        "training seeds. Verdicts S2.1-S2.7 and S3.1-S3.3 (source: trained models, seed text: the seed texts' "
        "statements, tested on our models); each says its scale.",
}


#: notebook name -> the docs page it is made from: its Markdown and its ```python blocks, cell by cell, in order (the
#: page is the one source; tests/experiments/test_model_probe.py runs the page's code, test_notebooks.py the notebook)
PAGE_NOTEBOOKS: dict[str, str] = {"10_probe_your_model": "docs/probe-your-model.md"}


def page_cells(page: str) -> list[tuple[str, str]]:
    """A Markdown page as notebook cells: the text between code blocks as Markdown, each ```python block as code. An
    image the page shows beside it (``](name.png)``) is linked from the notebooks folder (``](../docs/name.png)``)."""
    import re

    text = (HERE.parent / page).read_text(encoding="utf-8")
    folder = Path(page).parent.name
    text = re.sub(r"\]\(([\w.-]+\.png)\)", lambda m: f"](../{folder}/{m.group(1)})", text)
    cells = []
    for k, part in enumerate(text.split("```python")):
        code, md = part.split("```", 1) if k else ("", part)
        if code.strip():
            cells.append(("code", code.strip("\n")))
        if md.strip():
            cells.append(("md", md.strip("\n")))
    return cells


def _notebooks() -> dict[str, list[tuple[str, str]]]:
    """Notebook name -> cells: its title, the setup cell, then the cells every claim's views register for it
    (lnrecency.report.views; in the registry's order). A code cell is the body of a function of the claim's
    view module, with the imports of the names it reads (lnrecency.report.views.cells.cell_source)."""
    from lnrecency.report.views.cells import cell_source
    from lnrecency.report.views.registry import VIEW_LIST as CATALOG

    out = {name: [("md", title), ("code", SETUP)] for name, title in NOTEBOOK_TITLES.items()}
    for claim in CATALOG:
        if claim.notebook is not None:
            if claim.notebook not in out:
                raise ValueError(f"claim {claim.id} names notebook {claim.notebook!r}, which has no title here")
            out[claim.notebook] += [("md", c) if isinstance(c, str) else ("code", cell_source(c)) for c in claim.cells]
    for name, page in PAGE_NOTEBOOKS.items():
        out[name] = page_cells(page)
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
    """Write every notebook; ``--check``: write nothing, exit 1 if a stored notebook differs from its render."""
    sys.path.insert(0, str(HERE.parent))
    from lnrecency.files.atomic import atomic_write_text
    check = "--check" in (sys.argv[1:] if argv is None else argv)
    stale = []
    for name in NOTEBOOKS:
        path = HERE / f"{name}.ipynb"
        text = render(name)
        if check:
            if not path.is_file() or path.read_text(encoding="utf-8") != text:
                stale.append(path.name)
            continue
        atomic_write_text(path, text)
        print(f"wrote notebooks/{name}.ipynb")
    if stale:
        print("out of date: " + ", ".join(stale), file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
