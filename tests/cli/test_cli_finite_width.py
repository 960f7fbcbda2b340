"""`lnrecency finite-width` and `simulate --control-variate`: schema, consistency, refusals."""
from __future__ import annotations

import json

import numpy as np

from lnrecency.cli.app import main
from lnrecency.theory.finite_width import finite_difference_c


def _json(capsys, argv):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_json_schema_and_expected(capsys):
    out = _json(capsys, ["finite-width", "--n", "4", "--layers", "3", "--residual", "--gamma", "0.5",
                         "--lam", "2", "--alpha", "0.25", "--d", "100", "--json"])
    assert {"config", "n", "layers", "c", "limit", "expected"} <= set(out)
    assert out["config"]["residual"] is True and out["n"] == 4 and out["layers"] == 3
    c, lim, exp = (np.array(out[k], dtype=float) for k in ("c", "limit", "expected"))
    assert c.shape == (3, 4, 4) and out["c"][0][0][1] is None  # null above the diagonal
    low = ~np.isnan(c)
    # JSON floats round-trip exactly and the operation is the same: equal up to one rounding
    np.testing.assert_allclose(exp[low], lim[low] + c[low] / 100, rtol=1e-15, atol=0)
    fd = finite_difference_c(4, 3, norm="layernorm", residual=True, gamma=0.5, lam=2.0, alpha=0.25)
    assert np.max(np.abs(c[low] - fd[low])) < 1e-10


def test_text_mode_and_measured_next_term(capsys):
    assert main(["finite-width", "--n", "3", "--d", "64", "--measure", "2000"]) == 0
    text = capsys.readouterr().out
    assert "first-order" in text and "measured next term at d=64" in text and "layer 2, c" in text


def test_refusals_are_one_line_exit_2(capsys):
    for argv, needle in [(["finite-width", "--n", "300", "--layers", "3"], "above the time limit"),
                         (["finite-width", "--n", "3", "--measure", "10"], "--measure needs --d"),
                         (["finite-width", "--n", "3", "--d", "1"], "d must be an integer"),
                         (["finite-width", "--digits", "0"], "--digits"),
                         (["simulate", "--norm", "layernorm", "--embedding", "normalized",
                           "--control-variate", "quadratic", "--samples", "10"], "control_variate")]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip()
        assert needle in err and len(err.splitlines()) == 1 and "Traceback" not in err


def test_simulate_control_variate_flag(capsys):
    out = _json(capsys, ["simulate", "--n", "3", "--d", "64", "--samples", "500", "--json",
                         "--control-variate", "quadratic"])
    assert out["control_variate"] == "quadratic"


def test_json_puts_null_above_the_diagonal_in_every_array(capsys):
    """c, limit and variance agree on what 'no score here' looks like (null), and nowhere else."""
    import json

    from lnrecency.cli.app import main

    assert main(["finite-width", "--n", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    for key in ("c", "limit", "variance"):
        for layer in out[key]:
            for i, row in enumerate(layer):
                assert all((x is None) == (j > i) for j, x in enumerate(row)), (key, row)
