"""`lnrecency compare` / lnrecency.compare (issue 85, item 1): theory against simulation for a setting of one's own.

The machinery must say no: a planted wrong limit or a wrong 1/d coefficient is flagged by the same decision that
passes the true theory. The Monte Carlo column is checked against an independent numpy simulation of the model as
docs/model.md defines it, and the limit column against the closed form of docs/model.md's worked example."""
from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from lnrecency.experiments.compare import compare
from lnrecency.inference.budget import BUDGET
from lnrecency.theory.finite_width import finite_width

#: the tests' family-wise rate per call: 2e-4 (1e-4 for the means, 1e-4 for the remainder), registered in the suite's
#: budget by compare itself; the planted calls run under BUDGET.expecting_rejection (their risk is a miss, not an alarm)
SMALL = dict(d=64, n=4, layers=2, samples=20000, seed=3, fwer=2e-4)


def _planted(limit_shift: float = 0.0, c_factor: float = 1.0):
    def theory(cfg, n, layers):
        fw = finite_width(n, layers, config=cfg)
        return dataclasses.replace(fw, limit=fw.limit + limit_shift, c=fw.c * c_factor)
    return theory


@pytest.fixture(scope="module")
def truth():
    return compare(norm="layernorm", residual=True, alpha=0.3, quantities=("scores",), **SMALL)


def test_the_true_theory_agrees_everywhere(truth):
    # a false alarm here has probability at most fwer = 2e-4 (Bonferroni, module docstring), under the stated
    # remainder assumption
    assert truth.flagged() == []
    assert truth.d_ref == 8 and truth.estimator == "linear"


def test_a_wrong_limit_is_flagged():
    with BUDGET.expecting_rejection():
        res = compare(norm="layernorm", residual=True, alpha=0.3, quantities=("scores",),
                      theory=_planted(limit_shift=0.01), **SMALL)
    # every random entry (below the diagonal) differs; S_ii = lam exactly is shifted too and differs by far more
    assert len(res.flagged()) == len(res.entries)


@pytest.mark.parametrize("factor", [2.0, 0.0])
def test_a_wrong_c_is_flagged(factor):
    """c doubled, or dropped (the limit taken for the width-64 mean): at d = 8 d_ref the layer-2 entries where |c| is
    largest (0.29-0.31; layer 1's are 0.14) are flagged; the true theory passes them all (above)."""
    with BUDGET.expecting_rejection():
        res = compare(norm="layernorm", residual=True, alpha=0.3, quantities=("scores",),
                      theory=_planted(c_factor=factor), **SMALL)
    flagged = {(e.layer, e.i, e.j) for e in res.flagged()}
    assert {(2, 3, 2), (2, 4, 2), (2, 4, 3)} <= flagged, flagged


def test_the_limit_column_is_docs_models_closed_form():
    """alpha = 0, lam = 1, no residual, a fixed-length norm: S2_ij = g(i) / (h(i) h(j)), g(i) = 1/(e + i - 1),
    h(j)^2 = (e^2 + j - 1) / (e + j - 1)^2 (docs/model.md; tests/theory/test_limit.py)."""
    res = compare(norm="l2", d=64, n=5, layers=2, samples=2000, seed=0, quantities=("scores", "h"), fwer=2e-4)
    e = math.e

    def g(i):
        return 1 / (e + i - 1)

    def h(j):
        return math.sqrt((e * e + j - 1) / (e + j - 1) ** 2)

    for row in res.entries:
        if row.quantity == "scores" and row.layer == 2:
            assert row.limit == pytest.approx(g(row.i) / (h(row.i) * h(row.j)) if row.j < row.i else 1.0,
                                              rel=1e-12)
        if row.quantity == "h":
            assert row.limit == pytest.approx(h(row.j) ** 2, rel=1e-12)


def _independent(d: int, n: int, draws: int, rng) -> np.ndarray:
    """Layer-2 scores of M(none, no residual, lam 1, alpha 0) by plain numpy, as docs/model.md defines the model."""
    x = rng.standard_normal((draws, n, d)) / math.sqrt(d)
    mask = np.tril(np.ones((n, n), bool))
    s1 = np.where(mask, x @ x.transpose(0, 2, 1), -np.inf)
    p = np.exp(s1 - s1.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    o = p @ x
    return o @ o.transpose(0, 2, 1)


def test_the_monte_carlo_column_agrees_with_an_independent_simulation():
    """Two independent estimates of E S2_ij (compare's, and plain numpy on other draws): their difference within
    k SE of the difference, k at a family-wise false-alarm rate of 1e-6 over the row's entries (Bonferroni)."""
    from lnrecency.inference.budget import k_for

    d, n, draws = 16, 4, 40000
    res = compare(norm="none", d=d, n=n, layers=2, samples=draws, seed=1, quantities=("scores",), estimator="none",
                  fwer=2e-4)
    s2 = _independent(d, n, draws, np.random.default_rng(12345))
    rows = [e for e in res.entries if e.quantity == "scores" and e.layer == 2 and e.j < e.i]
    k = k_for(1e-6 / len(rows))
    for e in rows:
        vals = s2[:, e.i - 1, e.j - 1]
        se = math.hypot(e.se, vals.std(ddof=1) / math.sqrt(draws))
        assert abs(e.mc - vals.mean()) <= k * se, (e.i, e.j, e.mc, vals.mean(), se)
    # and the same check says no to a planted offset of 10 SE
    e = rows[0]
    vals = s2[:, e.i - 1, e.j - 1] + 10 * e.se * math.sqrt(draws)
    assert abs(e.mc - vals.mean()) > k * math.hypot(e.se, vals.std(ddof=1) / math.sqrt(draws))


def test_output_variance_has_no_theory_without_centring_and_says_so():
    res = compare(norm="rmsnorm", d=32, n=3, layers=1, samples=500, seed=0, quantities=("output-variance",),
                  fwer=2e-4)
    assert {e.decision for e in res.entries} == {"no theory"}
    assert all(e.limit is None and e.tolerance is None for e in res.entries)
    assert "n/a" in res.table("output-variance", 1).to_markdown()


def test_h_against_alpha_and_the_frame(truth):
    res = compare(norm="layernorm", d=64, n=4, layers=1, samples=2000, seed=0, quantities=("h",),
                  alphas=(0.0, 0.3, 0.6), fwer=2e-4)
    t = res.table("h", 1)
    assert [r[0] for r in t.rows] == [0.0] * 4 + [0.3] * 4 + [0.6] * 4
    pd = pytest.importorskip("pandas")
    frame = res.to_frame()
    assert isinstance(frame, pd.DataFrame) and len(frame) == 12 and set(frame["decision"]) <= {"agrees", "differs"}


def test_same_seed_same_bytes(truth):
    again = compare(norm="layernorm", residual=True, alpha=0.3, quantities=("scores",), **SMALL)
    assert json.dumps(again.to_json()) == json.dumps(truth.to_json())


@pytest.mark.parametrize("kw, words", [
    (dict(residual=True, quantities=("h",)), "quantity 'h' with the residual"),
    (dict(quantities=("nope",)), "quantity must be one of"),
    (dict(n=65), "n must be an integer in [2, 64]"),
    (dict(fwer=0.0), "fwer must be in"),
    (dict(d=64, d_ref=65), "d_ref must be an integer in"),
    (dict(alphas=(0.2, 1.0)), "alpha must be in"),
])
def test_bad_arguments_are_refused_by_name(kw, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace("[", r"\[")):
        compare(**{"samples": 200, "fwer": 2e-4, **kw})


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "lnrecency.cli.app", "compare", *args], capture_output=True,
                          text=True, timeout=120)


def test_the_command_prints_what_python_returns(tmp_path):
    out = _cli("--norm", "layernorm", "--residual", "--alpha", "0.3", "--d", "64", "--n", "4", "--samples",
               "20000", "--seed", "3", "--fwer", "2e-4", "--quantity", "scores", "--format", "json", "--out",
               str(tmp_path / "t"), "--figure", str(tmp_path / "f.png"))
    assert out.returncode == 0, out.stderr
    res = compare(norm="layernorm", residual=True, alpha=0.3, quantities=("scores",), **SMALL)
    assert json.loads(out.stdout) == json.loads(json.dumps(res.to_json()))
    names = sorted(p.name for p in (tmp_path / "t").iterdir() if not p.name.startswith("."))
    assert names == sorted(["compare.json"] + [f"compare_scores_layer{k}.{f}" for k in (1, 2)
                                               for f in ("md", "csv", "tex", "json")])
    assert (tmp_path / "f.png").read_bytes()[:4] == b"\x89PNG"
    assert "0 of 20 entries differ" in out.stderr and "about" in out.stderr  # the plan, announced


@pytest.mark.parametrize("args, words", [
    (("--alphas", "0,0.3", "--alpha", "0.2"), "--alphas 0,0.3 replaces --alpha"),
    (("--quantity", "foo"), "--quantity must be one of"),
    (("--samples", "100000000"), "above the time limit 600 s"),
    (("--figure", "x.pdf"), "--figure 'x.pdf'"),
])
def test_the_command_refuses_in_one_line(args, words):
    out = _cli(*args)
    assert out.returncode == 2 and words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
