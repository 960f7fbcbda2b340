"""Names the command line offers (flag choices, defaults, help text), defined here once so that the parser
reads them without importing numpy, sympy, scipy, matplotlib or torch: ``lnrecency --help`` and the refusal
of a bad flag answer at once (benchmarks/bench_startup.py). The modules that implement each name import it
from here; tests/model/test_config.py checks that the implementations agree."""
from __future__ import annotations

#: lnrecency.theory.boundary: the orderings a row can be claimed to have (Definition 1)
ORDERINGS = ("recency", "earlier", "flat")
#: lnrecency.theory.boundary: the longest prefix recomputed in mpmath (its cost grows like L n^3 mpmath operations)
MPMATH_MAX_N = 160

#: lnrecency.theory.formula: the quantities a reviewer's formula can be checked against
QUANTITIES = ("p_diag", "p_off", "g", "h", "h2", "score")
QUANTITY_HELP = {
    "p_diag": "layer-1 weight P_ii (in i)",
    "p_off": "layer-1 weight P_ik, k < i (in i)",
    "g": "<x_i^(1), x_j^(1)>, j < i (in i)",
    "h": "|x_j^(1)| (in j, or in i)",
    "h2": "|x_j^(1)|^2 (in j, or in i)",
    "score": "layer-2 score S^(2)_ij, j < i (in i and j)",
}
ALLOWED = ("numbers, the names i, j, alpha (alias a), lam, gamma, e/E, pi, the functions exp, sqrt, "
           "log, the operators + - * / ** ^ and unary minus")
#: lnrecency.theory.formula: the longest formula read (characters)
MAX_FORMULA_LENGTH = 2000

#: lnrecency.experiments.compare: the quantities compared, and the scores' control variates offered (the quadratic one's
#: mean uses c, the coefficient under test)
COMPARE_QUANTITIES = ("scores", "output-norm", "output-variance", "h")
COMPARE_ESTIMATORS = ("linear", "none")

#: lnrecency.experiments.authors.reproduce: the keys of FIGURES, in its order
FIGURE_KEYS = ("1", "2", "3", "4", "5", "A1", "A2", "v1-l2norm", "v1-l2norm_alpha", "v1-layernorm")
#: lnrecency.experiments.authors.reproduce: draws per (row, d) by convention (S = 50 costs ~25x more per draw)
DEFAULT_SAMPLES = {"authors-v2": 400_000, "authors-v1": 20_000}

def id_ranges(ids: tuple[str, ...]) -> str:
    """Ids listed compactly for a help text, runs of consecutive numbers with one prefix joined:
    ("C2", "C3", "C4", "P1") -> "C2..C4, P1"."""
    import re

    out: list[list] = []
    for cid in ids:
        m = re.fullmatch(r"(.*?)(\d+)", cid)
        head, num = (m.group(1), int(m.group(2))) if m else (cid, None)
        if out and num is not None and out[-1][0] == head and out[-1][2] == num - 1:
            out[-1][2] = num
        else:
            out.append([head, num, num])
    return ", ".join(f"{h}{a}" if a == b else f"{h}{a}..{h}{b}" for h, a, b in out)
