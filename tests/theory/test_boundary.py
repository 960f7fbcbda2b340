"""Boundary search (lnrecency.theory.boundary, `lnrecency boundary`): against a brute-force search that
recomputes the limit for every sequence length (no prefix argument), the prefix property itself, float64
against mpmath, and the refusals."""
from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lnrecency.cli.app import main
from lnrecency.model.arithmetic import Arithmetic
from lnrecency.model.config import make_config
from lnrecency.theory.boundary import FLOAT_RESOLUTION, boundary, float64_prefix
from lnrecency.theory.limit import iterate_limit, limit_scores


def _brute_first_failing_n(layer, n_max, ordering, dps=None, **params):
    """Smallest n such that the limit *of length n* violates ``ordering`` on some row (written from
    Definition 1 directly: recency S_ij > S_ik for i >= j > k; earlier S_ij < S_ik for i > j > k)."""
    for n in range(2, n_max + 1):
        s = limit_scores(n, layer, dps=dps, **params)[layer - 1]
        for i in range(1, n + 1):
            for j in range(1, i + 1):
                for k in range(1, j):
                    if ordering == "recency" and not s[i - 1, j - 1] > s[i - 1, k - 1]:
                        return n
                    if ordering == "earlier" and j < i and not s[i - 1, j - 1] < s[i - 1, k - 1]:
                        return n
    return None


@pytest.mark.parametrize("layer, ordering, params, n_max", [
    (5, "earlier", dict(norm="none", residual=True), 14),             # C2 setting, fails at 10
    (6, "earlier", dict(norm="none", residual=True), 14),
    (3, "earlier", dict(norm="none"), 10),                            # holds
    (3, "recency", dict(norm="layernorm", lam=8.0, alpha=0.5), 10),
    (2, "recency", dict(norm="rmsnorm", residual=True, gamma=3.0, alpha=0.3), 10),
])
def test_matches_brute_force_in_mpmath(layer, ordering, params, n_max):
    b = boundary(layer, n_max, ordering=ordering, first_layer=layer, **params)[0]
    assert b.first_failing_n == _brute_first_failing_n(layer, n_max, ordering, dps=30, **params)
    assert b.first_failing_row == b.first_failing_n


@pytest.mark.parametrize("layer, params", [
    (3, dict(norm="layernorm", residual=True)),                       # first dip at row 27
    (4, dict(norm="layernorm", residual=True)),
])
def test_matches_brute_force_in_float64(layer, params):
    """Longer searches: the per-length recomputation in float64 (every difference here is far above the
    float64 resolution, so float64 decides each sign)."""
    n_max = 40
    b = boundary(layer, n_max, first_layer=layer, **params)[0]
    assert b.first_failing_n is not None and b.precision == "float64"
    assert b.first_failing_n == _brute_first_failing_n(layer, n_max, "recency", **params)
    assert min(abs(x) for x in b.differences) > 1e3 * FLOAT_RESOLUTION


def test_prefix_property():
    """Rows 1..m of a length-n limit equal the length-m limit (mpmath, 30 digits)."""
    with mpmath.workdps(30):
        long = limit_scores(12, 4, norm="layernorm", residual=True, gamma=2.0, alpha=0.4, dps=30)
        short = limit_scores(7, 4, norm="layernorm", residual=True, gamma=2.0, alpha=0.4, dps=30)
        low = np.tril(np.ones((7, 7), dtype=bool))
        gap = max(abs(a - b) for a, b in zip(long[:, :7, :7][:, low].ravel(), short[:, low].ravel()))
        assert gap < mpmath.mpf(10) ** -25


class _LongDouble(Arithmetic):
    """The float64 recursion's own code in numpy's long double (x86-64: a 64-bit significand, 2^11 times finer than
    float64's): a reference for float64's rounding error that costs what float64 costs."""

    name = "longdouble"
    dtype = np.longdouble

    def number(self, value):
        return np.longdouble(value)


def _long_double_scores(n, layers, **params):
    with np.errstate(over="ignore", invalid="ignore"):
        return np.stack([np.asarray(layer.scores) for layer in
                         iterate_limit(n, layers, make_config(None, **params), _LongDouble(), last_output=False)])


def _relative_gap(a, b, scale, n):
    low = np.tril(np.ones((n, n), dtype=bool))
    return float(np.max(np.abs(a[:, low] - b[:, low])) / np.max(np.abs(scale[:, low])))


FLOAT64_PARAMS = dict(norm="layernorm", residual=True, gamma=4.0, lam=2.0, alpha=0.3)


def test_float64_error_far_below_resolution():
    """The float64 recursion's error at n = 96, 6 layers, relative to max |S| (the scale of the resolution
    rule), is two orders below FLOAT_RESOLUTION (measured 2.4e-15). The reference is the same recursion in long
    double, itself checked against mpmath at 30 digits at n = 24 (measured: 3e-19 there, against float64's 4e-16):
    its own error is then below a hundredth of the float64 error it measures. Where long double is no finer than
    float64 (some platforms), the reference is mpmath at n = 96 (half a minute)."""
    n, layers = 96, 6
    f = limit_scores(n, layers, **FLOAT64_PARAMS)
    if np.finfo(np.longdouble).eps > 1e-18:  # long double is float64 here: mpmath, as slow as it is
        reference = limit_scores(n, layers, dps=30, **FLOAT64_PARAMS).astype(float)
    else:
        small = 24
        mp = limit_scores(small, layers, dps=30, **FLOAT64_PARAMS)
        mp = np.vectorize(lambda x: np.longdouble(mpmath.nstr(x, 25)) if x == x else np.longdouble("nan"),
                          otypes=[np.longdouble])(mp)
        f_small = limit_scores(small, layers, **FLOAT64_PARAMS)
        ld_error = _relative_gap(_long_double_scores(small, layers, **FLOAT64_PARAMS), mp, f_small, small)
        assert ld_error < 1e-2 * _relative_gap(f_small, mp, f_small, small), ld_error  # a reference, not float64
        reference = _long_double_scores(n, layers, **FLOAT64_PARAMS)
    err = _relative_gap(f, reference, f, n)
    assert 0 < err < 1e-2 * FLOAT_RESOLUTION, err  # 0 would mean the reference rounded as float64 does


def test_flat_layer_two_without_normalisation_and_false_claims_rejected():
    assert boundary(2, 30, ordering="flat", first_layer=2, norm="none")[0].holds   # exactly flat (mpmath)
    # the same machinery says no: recency without normalisation, earlier with LayerNorm, flat at layer 3
    assert boundary(3, 30, first_layer=3, norm="none")[0].first_failing_n == 2   # S_22 < S_21
    assert boundary(2, 30, ordering="earlier", first_layer=2, norm="layernorm")[0].first_failing_n == 3
    assert not boundary(3, 30, ordering="flat", first_layer=3, norm="none")[0].holds


def test_undecided_rows_are_reported_not_guessed(capsys):
    """Layer 2 without normalisation is exactly flat: every row needs mpmath; beyond MPMATH_MAX_N rows
    the search stops and says where (the claim holds on the rows before)."""
    from lnrecency.theory.boundary import MPMATH_MAX_N

    b = boundary(2, MPMATH_MAX_N + 40, ordering="flat", first_layer=2, norm="none")[0]
    assert b.undecided_from is not None and b.undecided_from > MPMATH_MAX_N // 2
    assert not b.holds and b.first_failing_n is None and b.holds_up_to == b.undecided_from - 1
    assert b.to_json()["undecided_from"] == b.undecided_from


def test_cli_json(capsys):
    assert main(["boundary", "--layer", "3", "--n-max", "40", "--residual", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["n_max"] == 40 and out["ordering"] == "recency" and out["config"]["residual"] is True
    by = {r["layer"]: r for r in out["layers"]}
    assert set(by) == {1, 2, 3}
    assert by[2] == {"layer": 2, "first_failing_n": None, "first_failing_row": None, "holds_up_to": None}
    assert by[3]["first_failing_n"] == by[3]["first_failing_row"] == by[3]["holds_up_to"] + 1
    assert by[3]["first_failing_n"] == _brute_first_failing_n(3, 40, "recency", norm="layernorm",
                                                             residual=True)


@pytest.mark.parametrize("argv, words", [
    (["--layer", "0", "--n-max", "10"], ["--layer must be", "0"]),  # the library's layers
    (["--layer", "3", "--n-max", "1"], ["--n-max must be", "1"]),
    (["--layer", "3", "--n-max", "10", "--from-layer", "4"], ["--from-layer must be", "4"]),  # first_layer
    (["--layer", "3", "--n-max", "10000000"], ["--n-max 10000000", "above the limit 1024 MiB"]),
])
def test_cli_refusals(capsys, argv, words):
    assert main(["boundary", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("lnrecency boundary: error:") and err.count("\n") == 1
    for w in words:
        assert w in err


@settings(max_examples=25, deadline=None)
@given(layers=st.integers(1, 5), n=st.integers(2, 60), lam=st.sampled_from([0.3, 1.0, 3.0, 8.0]),
       alpha=st.sampled_from([0.0, 0.25, 0.75]), residual=st.booleans(),
       norm=st.sampled_from(["layernorm", "none"]), ordering=st.sampled_from(["recency", "earlier", "flat"]))
def test_vectorised_prefix_equals_the_per_row_rule(layers, n, lam, alpha, residual, norm, ordering):
    """The one-pass float64 prefix (``float64_prefix``) stops at the first row the per-row rule would stop
    at: undecided in float64, or failing ``ordering`` (the rule written out here row by row)."""
    s = limit_scores(n, layers, lam=lam, alpha=alpha, residual=residual, norm=norm)
    for layer in range(1, layers + 1):
        expect = n + 1
        for i in range(2, n + 1):
            row = s[layer - 1, i - 1, :i]
            d = np.diff(row)
            decided = np.all(np.isfinite(row)) and np.all(np.abs(d) > FLOAT_RESOLUTION * np.max(np.abs(row)))
            holds = {"recency": bool(np.all(d > 0)), "earlier": bool(np.all(d[:-1] < 0)),
                     "flat": i <= 2}[ordering]
            if not (decided and holds):
                expect = i
                break
        assert float64_prefix(s[layer - 1], ordering) == expect
