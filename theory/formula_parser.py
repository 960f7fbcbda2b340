"""A reviewer's formula read safely: ``parse_formula`` builds a sympy expression by walking Python's ``ast`` of the
text (never eval, sympify or parse_expr of user text). Only numbers, the symbols of
:mod:`lnrecency.theory.closed_forms`, exp / sqrt / log and arithmetic are accepted, with bounds on length,
depth, exponents, degree and digits checked while building."""
from __future__ import annotations

import ast
import math
from typing import Any

import sympy

from lnrecency.choices import ALLOWED
from lnrecency.choices import MAX_FORMULA_LENGTH as MAX_LENGTH
from lnrecency.theory import closed_forms as cf

MAX_DEPTH = 60


MAX_EXPONENT = 32


MAX_DEGREE = 96  # bound on the polynomial degree the formula can expand to (nested powers multiply)


MAX_DIGITS = 1000  # bound on the decimal digits of a number sympy forms while building the formula


_NAMES = {"i": cf.i, "j": cf.j, "alpha": cf.alpha, "a": cf.alpha, "lam": cf.lam, "gamma": cf.gamma,
          "e": sympy.E, "E": sympy.E, "pi": sympy.pi}


_FUNCS = {"exp": sympy.exp, "sqrt": sympy.sqrt, "log": sympy.log}


_BINOPS = {ast.Add: lambda x, y: x + y, ast.Sub: lambda x, y: x - y, ast.Mult: lambda x, y: x * y,
           ast.Div: lambda x, y: x / y, ast.Pow: None}


def _refuse(what: str) -> ValueError:
    return ValueError(f"formula: {what} is not allowed; allowed are {ALLOWED}")


def _power(base: sympy.Expr, expo: sympy.Expr) -> sympy.Expr:
    if expo.is_Number and abs(expo) > MAX_EXPONENT:
        raise ValueError(f"formula: numeric exponent {expo} is not allowed; |exponent| must be "
                         f"<= {MAX_EXPONENT}")
    return sympy.Pow(base, expo)


def _sized(expr: sympy.Expr) -> sympy.Expr:
    """``expr``, refused when sympy formed a rational with more than MAX_DIGITS digits while building it
    (exp(log(2)*10^9) evaluates to the integer 2^(10^9))."""
    limit = MAX_DIGITS * 3.33
    for r in expr.atoms(sympy.Rational):
        if max(int(r.p).bit_length(), int(r.q).bit_length()) > limit:
            raise ValueError(f"formula: a number with more than {MAX_DIGITS} digits is not allowed (sympy "
                             f"evaluates exact powers such as exp(log(2)*10^9) to integers)")
    return expr


def _check_exp_powers(arg: sympy.Expr) -> None:
    """exp(c*log(x)) is the power x^c (sympy evaluates it so): the numeric-exponent rule applies to c."""
    for term in sympy.Add.make_args(arg):
        coeff, rest = term.as_coeff_Mul()
        if coeff.is_Number and abs(coeff) > MAX_EXPONENT and rest.is_number and any(
                isinstance(f, sympy.log) for f in sympy.Mul.make_args(rest)):
            raise ValueError(f"formula: exp({coeff}*log(...)) is a power with exponent {coeff}, not allowed; "
                             f"|exponent| must be <= {MAX_EXPONENT}")


def _build(node: ast.AST, depth: int) -> sympy.Expr:
    return _sized(_build_node(node, depth))


def _build_node(node: ast.AST, depth: int) -> sympy.Expr:
    if depth > MAX_DEPTH:
        raise ValueError(f"formula: nesting deeper than {MAX_DEPTH} levels is not allowed")
    if isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool) or not isinstance(v, (int, float)):
            raise _refuse(f"the constant {v!r} ({type(v).__name__})")
        if isinstance(v, float) and not math.isfinite(v):
            raise _refuse(f"the non-finite number {v!r}")
        return sympy.Integer(v) if isinstance(v, int) else sympy.Rational(repr(v))
    if isinstance(node, ast.Name):
        if node.id not in _NAMES:
            raise _refuse(f"the name {node.id!r}")
        return _NAMES[node.id]
    if isinstance(node, ast.UnaryOp):
        if isinstance(node.op, ast.USub):
            return -_build(node.operand, depth + 1)
        if isinstance(node.op, ast.UAdd):
            return _build(node.operand, depth + 1)
        raise _refuse(f"the unary operator {type(node.op).__name__}")
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise _refuse(f"the operator {type(node.op).__name__}")
        left, right = _build(node.left, depth + 1), _build(node.right, depth + 1)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        if isinstance(node.op, ast.Div) and right == 0:
            raise ValueError("formula: division by zero")
        return _BINOPS[type(node.op)](left, right)
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCS:
            name = node.func.id if isinstance(node.func, ast.Name) else type(node.func).__name__
            raise _refuse(f"calling {name!r}")
        if node.keywords or len(node.args) != 1 or isinstance(node.args[0], ast.Starred):
            raise _refuse(f"{node.func.id} with other than exactly one positional argument")
        arg = _build(node.args[0], depth + 1)
        if node.func.id == "exp":
            _check_exp_powers(arg)
        return _FUNCS[node.func.id](arg)
    raise _refuse(f"the syntax {type(node).__name__}")


def parse_formula(text: Any) -> sympy.Expr:
    """sympy expression of an arithmetic formula in i, j, alpha (a), lam, gamma; '^' means power."""
    if not isinstance(text, str):
        raise ValueError(f"formula must be a string; got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"formula: length {len(text)} is not allowed; at most {MAX_LENGTH} characters")
    if not text.strip():
        raise ValueError("formula: the empty formula is not allowed")
    try:
        tree = ast.parse(text.strip().replace("^", "**"), mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        where = f" at character {exc.offset}" if getattr(exc, "offset", None) else ""
        shown = text.strip() if len(text.strip()) <= 60 else text.strip()[:57] + "..."
        raise ValueError(f"formula: cannot parse {shown!r}: {getattr(exc, 'msg', None) or type(exc).__name__}"
                         f"{where}; allowed are {ALLOWED}") from None
    undefined = (f"formula: {text.strip()[:80]!r} is undefined (it contains a division by zero, log(0) or 0 times "
                 f"an infinity); allowed are finite expressions")
    try:
        expr = sympy.sympify(_build(tree.body, 0))
    except TypeError:  # a NaN compared while building (exp(0*log(0)): the bounds on exponents compare it)
        raise ValueError(undefined) from None
    if expr.has(sympy.zoo, sympy.nan, sympy.oo, -sympy.oo):
        raise ValueError(undefined)
    degree = polynomial_degree(expr)
    if degree > MAX_DEGREE:
        raise ValueError(f"formula: its expanded degree can reach {degree:g} (nested powers multiply their "
                         f"exponents), above the limit {MAX_DEGREE}")
    return expr


def polynomial_degree(expr: sympy.Expr) -> float:
    """An upper bound on the total polynomial degree that expanding ``expr`` can produce (the cost of the
    symbolic comparison): powers multiply, products add, sums and function arguments keep the maximum."""
    if expr.is_Atom:
        return 1.0 if expr.is_Symbol else 0.0
    if expr.is_Pow:
        expo = expr.exp
        return polynomial_degree(expr.base) * (float(abs(expo)) if expo.is_Number else float(MAX_EXPONENT))
    parts = [polynomial_degree(a) for a in expr.args]
    if expr.is_Mul:
        return float(sum(parts))
    return float(max(parts, default=0.0))
