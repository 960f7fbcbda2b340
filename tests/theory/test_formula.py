"""theory.formula: safe parsing, refusals, correct formulas accepted, mutants rejected with their first (i, j)."""
from __future__ import annotations

import json

import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

from lnrecency.cli.app import main
from lnrecency.model.config import ModelConfig
from lnrecency.theory.closed_forms import alpha, gamma, i, j, lam
from lnrecency.theory.formula import MAX_LENGTH, check_formula, generator_form, in_field, is_identically_zero
from lnrecency.theory.formula_parser import parse_formula

G_NORES = "alpha + (1-alpha)*exp(lam*alpha)/(exp(lam)+(i-1)*exp(lam*alpha))"
H2_RES = ("1 + 2*gamma*(alpha + (1-alpha)*exp(lam)/(exp(lam)+(j-1)*exp(lam*alpha))) + gamma^2*(alpha + "
          "(1-alpha)*(exp(2*lam)+(j-1)*exp(2*lam*alpha))/(exp(lam)+(j-1)*exp(lam*alpha))^2)")


def test_parse_basic():
    assert parse_formula("i^2 + 1") == i ** 2 + 1  # '^' is power with power's precedence
    assert parse_formula("-a*e**lam") == -alpha * sympy.exp(lam)
    assert parse_formula("E^(2*a) / sqrt(j) - log(gamma) + pi") == \
        sympy.exp(2 * alpha) / sympy.sqrt(j) - sympy.log(gamma) + sympy.pi
    assert parse_formula("0.2*i") == sympy.Rational(1, 5) * i  # decimal literals are exact
    assert parse_formula("+alpha") == alpha


@pytest.mark.parametrize("text, words", [
    ("__import__('os')", ["calling", "__import__"]),
    ("i.__class__", ["Attribute"]),
    ("open('x')", ["calling", "open"]),
    ("[1]", ["List"]),
    ("'abc'", ["constant"]),
    ("lambda: 1", ["Lambda"]),
    ("i < j", ["Compare"]),
    ("x + 1", ["name", "'x'"]),
    ("exp(i, j)", ["exactly one"]),
    ("exp(x=1)", ["exactly one"]),
    ("i[0]", ["Subscript"]),
    ("i if j else 1", ["IfExp"]),
    ("i % 2", ["Mod"]),
    ("~i", ["Invert"]),
    ("True", ["constant"]),
    ("1j", ["constant"]),
    ("2**10**10", ["exponent"]),
    ("1/0", ["division by zero"]),
    ("i +", ["cannot parse"]),
    ("", ["empty"]),
    ("i" + "+i" * MAX_LENGTH, ["length"]),
    ("exp(" * 70 + "i" + ")" * 70, ["nesting"]),
    ("-" * 100 + "i", ["nesting"]),
])
def test_refusals(text, words):
    with pytest.raises(ValueError) as exc:
        parse_formula(text)
    for w in words:
        assert w in str(exc.value), (w, str(exc.value))


def test_not_a_string():
    with pytest.raises(ValueError, match="string"):
        parse_formula(3)


@pytest.mark.parametrize("quantity, text, params", [
    ("g", G_NORES, {}),
    ("h2", H2_RES, dict(residual=True)),
    ("h", f"sqrt({H2_RES})", dict(residual=True)),
    ("p_off", "exp(lam*a)/(exp(lam)+(i-1)*exp(lam*a))", {}),
    ("p_diag", "1/(1+(i-1)*exp(-lam*(1-a)))", {}),
    ("score", f"lam*({G_NORES})", dict(norm="none")),
])
def test_correct_formulas_accepted(quantity, text, params):
    r = check_formula(quantity, text, **params)
    assert r.equal, r.method
    assert r.method.split("; ")[-1].startswith("symbolic")


def test_score_normalised_accepted():
    h2 = "(1 + (j-1)*exp(-2*lam*(1-alpha)))/(1 + (j-1)*exp(-lam*(1-alpha)))^2"  # alpha = 0 only
    g = "exp(-lam)/(1 + (i-1)*exp(-lam))"
    text = f"lam*({g})/sqrt(({h2.replace('j', 'i')})*({h2}))"
    r = check_formula("score", text, norm="l2", alpha=0)
    assert r.equal and "symbolic" in r.method
    assert not check_formula("score", text, norm="l2").equal  # not for alpha != 0


def test_square_root_step():
    # sqrt(h2) with h2 = N / Z^2 unsplit: sympy cannot cancel sqrt(N/Z^2) - sqrt(N)/Z, squares agree
    r = check_formula("h", f"sqrt({H2_RES})", residual=True, lam=2)
    assert r.equal and "user^2 - derived^2" in r.method
    r = check_formula("h", f"-sqrt({H2_RES})", residual=True, lam=2)
    assert not r.equal and r.first_difference.user.startswith("-")


def test_config_substitution():
    cfg = ModelConfig(norm="l2", residual=True, alpha=0.25, lam=2.0, gamma=0.5)
    assert check_formula("h2", H2_RES, config=cfg).equal
    r = check_formula("h2", "1", config=cfg)
    assert "alpha=1/4" in r.method and not r.equal


@pytest.mark.parametrize("mutant, first", [
    ("alpha + (1-alpha)*exp(lam*alpha)/(exp(lam)+(i-2)*exp(lam*alpha))", (2, 1)),   # changed constant
    ("(1-alpha)*exp(lam*alpha)/(exp(lam)+(i-1)*exp(lam*alpha))", (2, 1)),           # dropped term
    ("alpha + (1-alpha)*exp(2*lam*alpha)/(exp(lam)+(i-1)*exp(lam*alpha))", (2, 1)),  # wrong exponent
    ("-alpha + (1-alpha)*exp(lam*alpha)/(exp(lam)+(i-1)*exp(lam*alpha))", (2, 1)),  # swapped sign
])
def test_mutants_rejected(mutant, first):
    r = check_formula("g", mutant)
    assert not r.equal
    d = r.first_difference
    assert (d.i, d.j) == first and d.difference is not None
    assert abs(sympy.Float(d.user) - sympy.Float(d.derived) - sympy.Float(d.difference)) < 1e-5


def test_first_difference_late_index():
    # equal for i <= 10, different from i = 11 on: the scan must find (11, 1)
    r = check_formula("g", G_NORES + " + (i-1)*(i-2)*(i-3)*(i-4)*(i-5)*(i-6)*(i-7)*(i-8)*(i-9)*(i-10)/10^20")
    assert not r.equal and (r.first_difference.i, r.first_difference.j) == (11, 1)


def test_unknown_quantity_and_params():
    with pytest.raises(ValueError, match="quantity"):
        check_formula("weights", "1")
    with pytest.raises(ValueError, match="alpha"):
        check_formula("g", "1", alpha=1.5)


def test_cli(capsys):
    assert main(["check-formula", "g", G_NORES, "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["equal"] is True and out["quantity"] == "g"
    assert main(["check-formula", "g", "alpha", "--json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert out["equal"] is False and out["first_difference"]["i"] == 2
    assert main(["check-formula", "g", "__import__('os').system('true')"]) == 2
    assert "not allowed" in capsys.readouterr().err
    assert main(["check-formula", "h2", H2_RES, "--residual", "--gamma", "0.5"]) == 0
    assert "gamma=1/2" in capsys.readouterr().out


def test_nested_powers_are_refused_before_expansion():
    """((j+1)^32+1)^32 passes the per-exponent check but would expand to degree 1024 (> 9 GB before)."""
    import time

    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="expanded degree can reach 1024"):
        parse_formula("((j+1)**32+1)**32")
    assert time.perf_counter() - t0 < 1.0


def test_undefined_formulas_are_refused():
    for text in ("log(0)", "1/(i-i)", "log(0)*j"):
        with pytest.raises(ValueError, match="undefined|division by zero"):
            parse_formula(text)


def test_a_tiny_constant_difference_is_decided_exactly():
    """exp(-200) is below any numerical tolerance, yet the difference is a nonzero constant: unequal."""
    r = check_formula("p_diag", "exp(lam)/((i-1)*exp(alpha*lam)+exp(lam)) + exp(-200)")
    assert not r.equal and "1.38389652673674e-87" in r.method and "certified" in r.method
    assert check_formula("p_diag", "exp(lam)/((i-1)*exp(alpha*lam)+exp(lam))").equal


def test_messages_echo_what_was_typed_and_say_why(capsys, tmp_path, monkeypatch):
    import io

    assert main(["check-formula", "p_off", "exp(lam*alpha)/(exp(lam)+(j-1)*exp(lam*alpha))"]) == 0
    out = capsys.readouterr().out
    assert "your formula:  exp(alpha*lam)/((j - 1)" in out and "read as:" in out
    assert main(["check-formula", "h", "(j+*2"]) == 2
    err = capsys.readouterr().err
    assert "invalid syntax at character 4" in err and len(err.strip().splitlines()) == 1
    assert main(["check-formula", "h", "exp(exp(8))"]) == 1
    out = capsys.readouterr().out
    assert "about 2^4301" in out and "None" not in out
    f = tmp_path / "f.txt"
    f.write_text("exp(lam)/((i-1)*exp(alpha*lam)+exp(lam))\n")
    assert main(["check-formula", "p_diag", f"@{f}"]) == 0
    monkeypatch.setattr("sys.stdin", io.StringIO("exp(lam)/((i-1)*exp(alpha*lam)+exp(lam))"))
    assert main(["check-formula", "p_diag", "-"]) == 0
    assert main(["check-formula", "p_diag", "@/no/such/file"]) == 2
    assert "cannot be read" in capsys.readouterr().err


# -- the exact zero test: field arithmetic, with sympy.cancel as the fallback and the cross-check ------
_X, _Y = sympy.symbols("x y", positive=True)
_LEAVES = st.sampled_from([_X, _Y, sympy.exp(_X), sympy.exp(_X / 3), sympy.exp(_X * _Y), sympy.Integer(2),
                           sympy.Rational(-3, 7), sympy.E])


def _trees(leaves):
    return st.recursive(leaves, lambda sub: st.one_of(
        st.builds(lambda a, b: a + b, sub, sub), st.builds(lambda a, b: a * b, sub, sub),
        st.builds(lambda a, b: a / (b * b + 1), sub, sub), st.builds(lambda a: a ** 2, sub)), max_leaves=8)


@given(a=_trees(_LEAVES), b=_trees(_LEAVES))
def test_field_zero_test_agrees_with_cancel(a, b):
    """(a + b)^2 - a^2 - 2ab - b^2 is zero (an identity: no oracle needed), and adding 10^-30 makes it nonzero;
    on a - b, zero or not, the field decides as sympy.cancel does: random expressions with exp atoms (generators)
    and E. (sympy.cancel on the expanded identity itself was 85% of this test's time and tested sympy, not us.)"""
    zero = (a + b) ** 2 - a ** 2 - 2 * a * b - b ** 2
    assert in_field(generator_form(zero)) == 0
    assert is_identically_zero(zero)
    assert not is_identically_zero(zero + sympy.Rational(1, 10 ** 30))
    assert is_identically_zero(a - b) == (sympy.cancel(generator_form(a - b)) == 0)


def test_zero_test_outside_the_field_falls_back():
    assert is_identically_zero(sympy.exp(sympy.Rational(1, 3)) ** 3 - sympy.E)  # e^(1/3) = X, e = X^3
    assert not is_identically_zero(sympy.exp(_X) - sympy.exp(2 * _X))
    assert is_identically_zero(sympy.sqrt(2) * sympy.sqrt(8) - 4)  # sympy evaluates it to 0 on its own
    assert not is_identically_zero(sympy.sqrt(_X) - _X)  # non-integer power: cancel decides
    assert is_identically_zero(sympy.Float(0.5) * _X - _X / 2)  # a float: cancel decides


def test_nested_exponentials_are_answered_quickly():
    """exp of exp of exp ...: the mpmath scan bounds exp (|x| > 2^24: +inf or 0) instead of spending minutes on
    the argument reduction; the answers stay right."""
    import time

    from lnrecency.theory.formula import check_formula

    t0 = time.perf_counter()
    assert not check_formula("h", "1/j+exp(-exp(exp(exp(i))))").equal  # 1/j is not h
    assert not check_formula("h", "exp(exp(exp(exp(exp(1)))))").equal
    assert time.perf_counter() - t0 < 5


@pytest.mark.parametrize("index, first", [(i, (40, 1)), (j, (41, 40))])
def test_scan_over_one_index_finds_the_full_grids_first_difference(index, first):
    """A formula that differs from the derived one only where its single index is 40 (by exp(0) = 1 there,
    by exp(-200) < 1e-86, far below the 1e-45 tolerance, at the neighbours): the grid is scanned i by i, j
    by j, so the first differing pair of the full grid is (40, 1) for a formula in i and (41, 40) for one
    in j; the scan restricted to the index the formulas contain must report the same pair."""
    from lnrecency.theory.formula import compare_expressions

    derived = 1 / (1 + index)
    user = derived + sympy.exp(-200 * (index - 40) ** 2)
    r = compare_expressions("h", user, derived, {alpha: sympy.Integer(0), lam: sympy.Integer(1),
                                                 gamma: sympy.Integer(1)})
    assert not r.equal and (r.first_difference.i, r.first_difference.j) == first
    assert compare_expressions("h", derived, derived, {alpha: sympy.Integer(0), lam: sympy.Integer(1),
                                                       gamma: sympy.Integer(1)}).equal
