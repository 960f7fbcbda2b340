"""No theory function runs code from a string (issue 69): every public function and class of lnrecency.theory, called
with a string of Python in each of its parameters, refuses or fails without running it; and the numeric checks that
replaced sympify refuse NaN, inf and strings while keeping numbers and sympy objects."""
from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
from fractions import Fraction

import numpy as np
import pytest
import sympy

import lnrecency.theory
from lnrecency.runtime.arguments import check_exact, check_expression, check_flag


def _public_callables():
    out = []
    for info in pkgutil.iter_modules(lnrecency.theory.__path__):
        mod = importlib.import_module(f"lnrecency.theory.{info.name}")
        for name, obj in vars(mod).items():
            if name.startswith("_") or not callable(obj) or getattr(obj, "__module__", None) != mod.__name__:
                continue
            try:
                params = list(inspect.signature(obj).parameters.values())
            except (TypeError, ValueError):
                continue
            params = [p for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
            if params:
                out.append((f"{info.name}.{name}", obj, params))
    return out


CALLABLES = _public_callables()


def test_the_battery_covers_the_sympy_entry_points():
    names = {n for n, _, _ in CALLABLES}
    assert {"sink.closed_form_layer2", "formula.compare_expressions", "proofs.coefficient_sign",
            "proofs.positive_coordinates", "formula.generator_form", "rollout.uniform_rollout"} <= names


@pytest.mark.parametrize("name,fn,params", CALLABLES, ids=[c[0] for c in CALLABLES])
def test_a_string_of_code_is_never_run(name, fn, params, tmp_path):
    canary = tmp_path / "ran"
    code = f"__import__('pathlib').Path({str(canary)!r}).touch() or 2"
    for p in params:
        kwargs = {q.name: (code if q is p else q.default) for q in params
                  if q is p or q.default is inspect.Parameter.empty}
        kwargs = {k: (code if v is inspect.Parameter.empty else v) for k, v in kwargs.items()}
        try:
            fn(**kwargs)
        except Exception:  # noqa: BLE001 - any refusal will do; what matters is that the code did not run
            pass
        assert not canary.exists(), f"{name}({p.name}=<code>) ran the string as Python"


def test_closed_form_layer2_refuses_strings_and_non_finite_values_and_keeps_numbers():
    from lnrecency.theory.sink import closed_form_layer2

    for lam, b, word in [("2", 1, "lam"), (2, "1", "b"), (math.nan, math.inf, "lam"), (1, math.inf, "b"),
                         (-1, 0, "lam"), (0, 0, "lam")]:
        with pytest.raises(ValueError, match=word):
            closed_form_layer2(True, lam=lam, b=b)
    i, j = sympy.symbols("i j", positive=True)
    s, share = closed_form_layer2(True, lam=Fraction(1, 2), b=np.float64(0.0))
    s2, _ = closed_form_layer2(True, lam=sympy.Rational(1, 2), b=0)
    assert sympy.simplify(s - s2) == 0 and share.free_symbols == {i}
    lam = sympy.Symbol("lam", positive=True)
    assert lam in closed_form_layer2(False, lam=lam)[0].free_symbols


def test_sign_of_slope_reads_a_switch_not_a_truth_value():
    from lnrecency.theory.sink import closed_form_layer2, sign_of_slope

    for bad in ("no", "", 0, 1, None):
        with pytest.raises(ValueError, match="normalised must be True or False"):
            sign_of_slope(bad)
        with pytest.raises(ValueError, match="normalised must be True or False"):
            closed_form_layer2(bad)
    assert sign_of_slope(np.bool_(True))["check"] and sign_of_slope(False)["check"]


def test_the_checks_keep_exact_types_and_refuse_the_rest():
    assert check_exact("x", Fraction(1, 3)) == sympy.Rational(1, 3)
    assert check_exact("x", 2) == sympy.Integer(2) and isinstance(check_exact("x", 2.5), sympy.Float)
    x = sympy.Symbol("x")
    assert check_expression("e", x + 1) == x + 1
    for bad in ("x", b"x", None, [1], 1j, True, sympy.nan, sympy.zoo, sympy.I):
        with pytest.raises(ValueError):
            check_exact("v", bad)
    with pytest.raises(ValueError, match="never parsed"):
        check_expression("expr", "x + 1")
    assert check_flag("f", np.bool_(False)) is False


def test_compare_expressions_refuses_a_string_and_still_compares_expressions():
    from lnrecency.theory import closed_forms as cf
    from lnrecency.theory.formula import compare_expressions

    with pytest.raises(ValueError, match="user must be a sympy expression"):
        compare_expressions("g", "i + 1", cf.i + 1)
    assert compare_expressions("g", cf.i + 1, 1 + cf.i).equal
