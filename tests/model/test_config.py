"""ModelConfig and size validation: one place, clear errors."""
import math
from fractions import Fraction

import numpy as np
import pytest
import sympy

from lnrecency.model.config import ModelConfig, make_config
from lnrecency.runtime.arguments import check_int


def test_defaults():
    c = ModelConfig()
    assert (c.norm, c.residual, c.gamma, c.lam, c.alpha, c.embedding) == (
        "layernorm", False, 1.0, 1.0, 0.0, "gaussian")
    assert c.normalisation.scales and not ModelConfig(norm="none").normalisation.scales


@pytest.mark.parametrize("kwargs, words", [
    (dict(alpha=1.0), ["alpha", "1.0", "[0, 1)"]),
    (dict(alpha=-0.1), ["alpha", "-0.1", "[0, 1)"]),
    (dict(alpha=math.nan), ["alpha", "finite"]),
    (dict(alpha=math.inf), ["alpha", "finite"]),
    (dict(lam=0.0), ["lam", "(0, inf)"]),
    (dict(lam=-1), ["lam"]),
    (dict(gamma=0), ["gamma", "(0, inf)"]),
    (dict(gamma="1"), ["gamma", "real number"]),
    (dict(alpha=True), ["alpha", "real number"]),
    (dict(alpha=sympy.Symbol("a")), ["alpha", "real number"]),
    (dict(norm="batchnorm"), ["norm", "'batchnorm'", "'layernorm'"]),
    (dict(embedding="uniform"), ["embedding", "'uniform'", "'gaussian'"]),
    (dict(residual=1), ["residual", "bool"]),
])
def test_bad_values_name_argument_value_and_allowed(kwargs, words):
    with pytest.raises(ValueError) as e:
        ModelConfig(**kwargs)
    for w in words:
        assert w in str(e.value)


@pytest.mark.parametrize("value", [0, -3, 2.5, 2.0, True, "3", None, np.float64(3)])
def test_check_int_rejects(value):
    with pytest.raises(ValueError, match="n must be an integer"):
        check_int("n", value)


def test_check_int_accepts_numpy_integers():
    assert check_int("layers", np.int64(3)) == 3


def test_exact_types_survive():
    c = ModelConfig(alpha=Fraction(1, 5), lam=sympy.Rational(3, 2))
    assert c.alpha == Fraction(1, 5) and c.lam == sympy.Rational(3, 2)


def test_make_config_one_rule_and_unknown():
    """config= or keywords, never both: the conflict is named, not silently resolved."""
    assert make_config(ModelConfig(alpha=0.2)).alpha == 0.2
    assert make_config(lam=2.0).lam == 2.0
    with pytest.raises(ValueError, match="not both; got config= and lam=2.0"):
        make_config(ModelConfig(alpha=0.2), lam=2.0)
    with pytest.raises(ValueError, match="unknown model parameter"):
        make_config(temperature=2)


@pytest.mark.parametrize("call", ["limit_scores", "limit_trajectory", "simulate_scores", "bias_profile"])
def test_every_public_entry_point_refuses_config_and_keywords(call):
    from lnrecency.experiments.profiler import bias_profile
    from lnrecency.numerics import simulate_scores
    from lnrecency.theory import limit_scores, limit_trajectory

    cfg = ModelConfig(alpha=0.3)
    run = {"limit_scores": lambda **kw: limit_scores(4, 2, **kw),
           "limit_trajectory": lambda **kw: limit_trajectory(4, 2, **kw),
           "simulate_scores": lambda **kw: simulate_scores(4, 2, 16, 10, seed=0, **kw),
           "bias_profile": lambda **kw: bias_profile(2, 4, **kw)}[call]
    with pytest.raises(ValueError, match="not both"):
        run(config=cfg, alpha=0.3)  # even an equal value is a conflict: one source of truth


def test_parser_names_agree_with_their_implementations():
    """lnrecency.choices holds what the parser offers without importing numerical libraries; each name
    must be the implementation's own (a figure or normalisation added in one place and not the other fails)."""
    from lnrecency import choices
    from lnrecency.experiments.authors.catalogue import FIGURES
    from lnrecency.experiments.authors.reproduce import DEFAULT_SAMPLES
    from lnrecency.model.config import NORMS
    from lnrecency.model.layers import NORMALISATIONS
    from lnrecency.theory import boundary, formula

    assert NORMS == tuple(NORMALISATIONS)
    assert choices.FIGURE_KEYS == tuple(FIGURES)
    assert DEFAULT_SAMPLES is choices.DEFAULT_SAMPLES
    assert boundary.ORDERINGS is choices.ORDERINGS and formula.QUANTITIES is choices.QUANTITIES


def test_parser_imports_no_numerical_library():
    """`lnrecency --help` builds every command's parser; it must not import numpy, sympy, scipy,
    matplotlib or torch (benchmarks/bench_startup.py times it)."""
    import subprocess
    import sys

    code = ("import sys; from lnrecency.cli.app import build_parser; build_parser(); "
            "print(sorted(m for m in ('numpy', 'sympy', 'scipy', 'matplotlib', 'torch', 'mpmath') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]", out
