"""The Definition-1 profiler (lnrecency.experiments.profiler) and `lnrecency bias`: labels it must give and labels it
must refuse to give (a profiler that cannot say 'no recency' is not one)."""
from __future__ import annotations

import json

import pytest

from lnrecency.cli.app import main
from lnrecency.experiments.profiler import bias_profile, classify_signs
from lnrecency.inference.stats import PER_COMPARISON, register


@pytest.mark.parametrize("signs, label", [
    ([], "trivial"), ([1], "recency"), ([-1], "trivial"), ([1, 1, 1], "recency"),
    ([-1, -1, 1], "earlier"), ([-1, -1, -1], "earlier"), ([0, 0, 1], "flat"), ([1, -1, 1], "mixed"),
    ([1, 1, -1], "mixed"), ([0, 1, 1], "mixed"),
])
def test_classify_signs(signs, label):
    assert classify_signs(signs) == label


def test_limit_profiles_of_known_settings():
    assert set(bias_profile(2, 12, norm="layernorm").labels()[1:]) == {"recency"}
    none2 = bias_profile(2, 12, norm="none")
    assert set(none2.labels()[2:]) == {"flat"}
    assert all(r.precision.startswith("mpmath") for r in none2.rows[2:])  # exact ties need mpmath
    assert set(bias_profile(3, 12, norm="none").labels()[2:]) == {"earlier"}
    # residual + normalisation, layer 3: rows 27.. dip before the diagonal (C6)
    lab = bias_profile(3, 30, norm="layernorm", residual=True).labels()
    assert set(lab[1:26]) == {"recency"} and set(lab[26:]) == {"mixed"}


def test_profiler_refuses_false_labels():
    """Power: the claims 'recency without normalisation' and 'earlier with LayerNorm' are rejected."""
    assert "recency" not in bias_profile(2, 10, norm="none").labels()[2:]
    assert "recency" not in bias_profile(3, 10, norm="none").labels()[2:]
    assert "earlier" not in bias_profile(2, 10, norm="layernorm").labels()


SIG = PER_COMPARISON  # per profile: P(any sign of the profile wrong) <= SIG (Bonferroni inside the profile)
register("test_bias: MC profiles (significance per profile)", 3, rate=SIG)


def test_monte_carlo_profile_agrees_and_says_no():
    """d = 10^12: the MC profile reproduces the limit's labels, and says 'not recency' where the limit
    is flat (a significant sign there would be a false alarm, budgeted)."""
    rec = bias_profile(2, 5, norm="layernorm", method="mc", d=10 ** 12, samples=2000, seed=3,
                       significance=SIG)
    assert rec.labels()[1:] == ["recency"] * 4
    early = bias_profile(3, 5, norm="none", method="mc", d=10 ** 12, samples=2000, seed=4,
                         significance=SIG)
    assert early.labels()[2:] == ["earlier"] * 3
    flat = bias_profile(2, 5, norm="none", method="mc", d=10 ** 12, samples=2000, seed=5,
                        significance=SIG)
    assert flat.labels()[2:] == ["flat"] * 3
    assert rec.meta["significance"] == SIG and rec.meta["comparisons"] == 10


def test_same_seed_same_numbers():
    a = bias_profile(2, 4, method="mc", d=64, samples=500, seed=11)
    b = bias_profile(2, 4, method="mc", d=64, samples=500, seed=11)
    assert a.to_json() == b.to_json()


@pytest.mark.parametrize("kwargs, words", [
    (dict(layer=0, n=3), ["layer", "0"]),
    (dict(layer=2, n=3, method="exact"), ["method", "'exact'", "'limit'"]),
    (dict(layer=2, n=3, method="mc", samples=10, seed=1), ["d", "missing"]),
    (dict(layer=2, n=3, method="mc", d=8, samples=10, seed=1, significance=0.9), ["significance"]),
])
def test_bad_input(kwargs, words):
    with pytest.raises(ValueError) as e:
        bias_profile(**kwargs)
    for w in words:
        assert w in str(e.value)


def test_cli_json_schema(capsys):
    assert main(["bias", "--layer", "2", "--n", "5", "--norm", "none", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["layer"] == 2 and out["method"] == "limit"
    assert [r["i"] for r in out["rows"]] == [1, 2, 3, 4, 5]
    assert [r["bias"] for r in out["rows"]][2:] == ["flat"] * 3
    assert main(["bias", "--layer", "2", "--n", "4", "--method", "mc", "--d", "64", "--samples", "400",
                 "--seed", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "mc" and out["d"] == 64 and "z" in out["rows"][1]


def test_cli_errors_exit_2(capsys):
    assert main(["bias", "--layer", "2", "--n", "4", "--method", "mc"]) == 2
    assert "missing: d, samples" in capsys.readouterr().err
    assert main(["bias", "--layer", "2", "--n", "4", "--alpha", "1.5"]) == 2
