"""A reviewer's own formula against the derived closed form.

``parse_formula`` builds a sympy expression by walking Python's ``ast`` of the text (never eval,
sympify or parse_expr of user text); only arithmetic in the symbols of :mod:`theory.closed_forms` is
accepted. ``check_formula`` decides ``user == derived``. The mpmath scan of step 3 runs first on the rows
i <= ``FIRST_ROWS``: a formula that differs there is answered "differs" without symbolic work. Then:

1. symbolically: every exp(c m) (c rational) is written X_m^(c L_m) with a positive generator
   X_m = exp(m / L_m), so the difference is a rational function in i, j, alpha, lam, gamma, X_m and
   square roots, and ``sympy.cancel(user - derived) == 0`` proves equality;
2. for the square-root quantities h and score (> 0 everywhere, theory.proofs):
   cancel(user^2 - derived^2) == 0 plus user = derived at one point (user continuous, domain connected);
3. otherwise the rest of the pairs 1 <= j < i <= 64 are scanned at mpmath precision (``DPS`` digits) at the given
   parameters (symbolic ones at the points of ``SAMPLE_POINTS``); the first pair with
   |user - derived| > 10^(-TOL_DIGITS) max(1, |derived|) is reported. Without a differing pair the
   formula is reported equal "on the grid", and ``method`` says the symbolic step was inconclusive.
   (The scan runs only over the indices the formulas contain: (i, 1) for formulas free of j.)
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, replace
from typing import Any

import mpmath
import sympy

from lnrecency.model.config import ModelConfig, as_fraction, make_config
from lnrecency.runtime.arguments import check_choice, check_expression
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.formula_parser import parse_formula

__all__ = ["QUANTITIES", "FormulaCheck", "parse_formula", "check_formula", "compare_expressions",
           "generator_form",
           "is_identically_zero", "MAX_LENGTH"]

from lnrecency.choices import QUANTITIES  # noqa: E402 (for the parser)

POSITIVE_QUANTITIES = ("h", "score")  # > 0 for every model (theory.proofs): the squares step applies
from lnrecency.choices import MAX_FORMULA_LENGTH as MAX_LENGTH  # noqa: E402

GRID_MAX = 64
FIRST_ROWS = 8  # rows i <= 8 scanned before the symbolic checks, the rest only when they do not decide
DPS = 60
TOL_DIGITS = 45
SAMPLE_POINTS = (  # values for parameters left symbolic, used only by the grid scan
    {"alpha": sympy.Rational(1, 3), "lam": sympy.Integer(1), "gamma": sympy.Integer(1)},
    {"alpha": sympy.Integer(0), "lam": sympy.Rational(5, 2), "gamma": sympy.Rational(7, 5)},
    {"alpha": sympy.Rational(9, 10), "lam": sympy.Rational(1, 2), "gamma": sympy.Rational(1, 3)},
)


@dataclass(frozen=True)
class Difference:
    """Where a formula first differs from the derived one: query i, key j, the parameters (alpha, lam, gamma,
    as exact text), both values and their difference (decimal text; None where a side is undefined there,
    or where only the certified difference is known)."""

    i: int
    j: int
    user: str | None
    derived: str | None
    difference: str | None
    params: dict

    def to_json(self) -> dict:
        return {"i": self.i, "j": self.j, "user": self.user, "derived": self.derived,
                "difference": self.difference, "params": dict(self.params)}


@dataclass(frozen=True)
class FormulaCheck:
    """Result of ``check_formula``; ``first_difference``: None or the :class:`Difference` found."""

    quantity: str
    expression: sympy.Expr
    derived: sympy.Expr
    equal: bool
    method: str
    first_difference: Difference | None = None
    typed: sympy.Expr | None = None  # the formula as given, before reading j as i (or i as j)

    def to_json(self) -> dict:
        return {"quantity": self.quantity, "typed": str(self.typed if self.typed is not None
                                                        else self.expression),
                "expression": str(self.expression),
                "derived": str(self.derived), "equal": self.equal, "method": self.method,
                "first_difference": None if self.first_difference is None else self.first_difference.to_json()}


def generator_form(expr: sympy.Expr) -> sympy.Expr:
    """Replace every exp(sum c m) by prod X_m^(c L_m): a rational expression in positive generators."""
    expr = check_expression("expr", expr)
    atoms = list(expr.atoms(sympy.exp))
    if expr.has(sympy.E):
        atoms.append(sympy.E)
    split = {}
    coeffs: dict[sympy.Expr, list] = {}
    for atom in atoms:
        arg = sympy.Integer(1) if atom == sympy.E else atom.args[0]
        terms = [t.as_coeff_Mul(rational=True) for t in sympy.Add.make_args(sympy.expand(arg))]
        split[atom] = terms
        for c, m in terms:
            coeffs.setdefault(m, []).append(c)
    gens = {}
    for m, cs in coeffs.items():
        lcm = functools.reduce(sympy.ilcm, [sympy.Rational(c).q for c in cs], 1)
        gens[m] = (sympy.Dummy("X", positive=True), lcm)
    repl = {a: sympy.Mul(*[gens[m][0] ** (c * gens[m][1]) for c, m in terms]) for a, terms in split.items()}
    return expr.xreplace(repl)


class _NotRational(Exception):
    """The generator form has a part outside the field Q(symbols): a float, a non-integer power, a function."""


def in_field(expr: sympy.Expr):
    """``expr`` (a rational expression in its free symbols) as an element of the field Q(symbols), built
    bottom-up: every sum, product and integer power is carried out in the field with its gcds cancelled, so
    the nested expressions of the exact limit never have to be expanded as a whole (which
    ``sympy.cancel`` does). Raises _NotRational outside the field, ZeroDivisionError on a zero divisor."""
    expr = check_expression("expr", expr)
    syms = sorted(expr.free_symbols, key=sympy.default_sort_key)
    ring = sympy.polys.fields.field(syms or [sympy.Dummy("t")], sympy.QQ)
    k, gens = ring[0], dict(zip(syms, ring[1:]))
    memo: dict = {}

    def ev(e):
        if e in memo:
            return memo[e]
        if e.is_Rational:
            r = k(sympy.QQ(int(e.p), int(e.q)))
        elif e.is_Symbol:
            r = gens[e]
        elif e.is_Add or e.is_Mul:
            parts = [ev(a) for a in e.args]
            r = parts[0]
            for p in parts[1:]:
                r = r + p if e.is_Add else r * p
        elif e.is_Pow and e.exp.is_Integer:
            r = ev(e.base) ** int(e.exp)
        else:
            raise _NotRational(type(e).__name__)
        memo[e] = r
        return r

    return ev(expr)


def is_identically_zero(expr: sympy.Expr) -> bool:
    """Exact test of expr == 0 with every exp(sum c m) read as powers of independent positive generators
    (:func:`generator_form`): in the rational function field when the form is rational there, else by
    ``sympy.cancel`` (the same answer, by expansion)."""
    form = generator_form(expr)
    try:
        return in_field(form) == 0
    except (_NotRational, ZeroDivisionError):
        pass
    try:
        return sympy.cancel(form) == 0
    except sympy.polys.polyerrors.BasePolynomialError:
        return False


def _certified_difference(diff: sympy.Expr, subs: dict) -> tuple[str, dict] | None:
    """The exact difference at (i, j) = (2, 1) and the first grid point, if sympy's evalf can certify 15
    significant digits of a nonzero value (``strict``: it raises rather than return unverified digits);
    a certified nonzero value proves the formulas differ, however small (e.g. exp(-200))."""
    point = {cf.i: 2, cf.j: 1}
    point.update({s: subs.get(s, SAMPLE_POINTS[0][s.name]) for s in (cf.alpha, cf.lam, cf.gamma)})
    try:
        value = diff.subs(point).evalf(15, maxn=4000, strict=True)
    except Exception:  # precision exhausted or not a number: no certificate
        return None
    if not value.is_comparable or value == 0:
        return None
    return str(value), {s.name: str(v) for s, v in point.items() if s not in (cf.i, cf.j)}


def _parameters(config: ModelConfig | None, params: dict) -> tuple[ModelConfig, dict]:
    """Validated configuration and the numeric substitutions: all of alpha/lam/gamma with a config,
    else only those given as keywords (the others stay symbolic)."""
    cfg = make_config(config, **params)
    given = ("alpha", "lam", "gamma") if config is not None else [p for p in ("alpha", "lam", "gamma")
                                                                 if p in params]
    subs = {}
    for name in given:
        q = as_fraction(getattr(cfg, name))
        subs[getattr(cf, name)] = sympy.Rational(q.numerator, q.denominator)
    return cfg, subs


EXP_ARGUMENT_MAX = 2 ** 24  # |x| beyond this: exp(x) overflows any comparison at DPS digits, or is 0 to it


def _bounded_exp(x):
    """mpmath exp for the scan, bounded in work: exp(x) for x > 2^24 (a number of more than 7 million
    digits) is +inf (an overflow: the point is not comparable unless an outer exp(-inf) = 0 takes it back
    to a finite value); for x < -2^24 it is 0, below the scan's
    tolerance relative to anything else by more than 7 million digits. mpmath would otherwise spend
    minutes on the argument reduction of, e.g., exp(-exp(exp(exp(2))))."""
    if isinstance(x, mpmath.mpf) and mpmath.isfinite(x) and abs(x) > EXP_ARGUMENT_MAX:
        return mpmath.inf if x > 0 else mpmath.mpf(0)
    return mpmath.exp(x)


def _mp_value(f, args) -> Any:
    try:
        v = f(*args)
    except (ZeroDivisionError, ValueError, OverflowError, TypeError):
        return None
    v = mpmath.mpmathify(v)
    if isinstance(v, mpmath.mpc):
        if v.imag != 0:
            return None
        v = v.real
    return None if not mpmath.isfinite(v) else v


def _number_text(x, digits: int) -> str:
    """mpmath number as text; beyond 1e+-1000 only its order of magnitude (no 1,000-digit exponents)."""
    if x != 0 and abs(mpmath.mag(x)) > 3322:
        return f"{'-' if x < 0 else ''}about 2^{int(mpmath.mag(x))}"
    return mpmath.nstr(x, digits)


def _grid_pairs(free: set, grid_max: int) -> list[tuple[int, int]]:
    """The scan's (i, j), 1 <= j < i <= grid_max, in order (i, then j, ascending), restricted to the
    indices the formulas depend on: for formulas free of j only (i, 1), free of i only (j + 1, j), free of
    both only (2, 1). The first differing pair is the full grid's first, since the skipped pairs repeat a
    value already compared."""
    has_i, has_j = cf.i in free, cf.j in free
    if has_i and has_j:
        return [(qi, qj) for qi in range(2, grid_max + 1) for qj in range(1, qi)]
    if has_i:
        return [(qi, 1) for qi in range(2, grid_max + 1)]
    if has_j:
        return [(qj + 1, qj) for qj in range(1, grid_max)]
    return [(2, 1)]


def _scan(user: sympy.Expr, derived: sympy.Expr, subs: dict,
          grid_max: int = GRID_MAX) -> tuple[dict | None, int]:
    """First (i, j), 1 <= j < i <= grid_max, where user and derived differ; and the points compared."""
    free = [s for s in (cf.alpha, cf.lam, cf.gamma) if s not in subs]
    points = []
    for p in SAMPLE_POINTS:
        point = dict(subs)
        point.update({s: p[s.name] for s in free})
        if point not in points:
            points.append(point)
    syms = (cf.i, cf.j, cf.alpha, cf.lam, cf.gamma)
    fu = sympy.lambdify(syms, user, modules=[{"exp": _bounded_exp}, "mpmath"])
    fd = sympy.lambdify(syms, derived, modules=[{"exp": _bounded_exp}, "mpmath"])
    tol = mpmath.mpf(10) ** (-TOL_DIGITS)
    count = 0
    with mpmath.workdps(DPS):
        par = [[mpmath.mpf(v.p) / v.q for v in (pt[cf.alpha], pt[cf.lam], pt[cf.gamma])] for pt in points]
        for qi, qj in _grid_pairs(user.free_symbols | derived.free_symbols, grid_max):
            for pt, pv in zip(points, par):
                count += 1
                args = (mpmath.mpf(qi), mpmath.mpf(qj), *pv)
                u, d = _mp_value(fu, args), _mp_value(fd, args)
                if u is not None and d is not None and abs(u - d) <= tol * max(1, abs(d)):
                    continue
                return (Difference(i=qi, j=qj, user=None if u is None else _number_text(u, 20),
                                   derived=None if d is None else _number_text(d, 20),
                                   difference=None if u is None or d is None else _number_text(u - d, 6),
                                   params={s.name: str(pt[s]) for s in (cf.alpha, cf.lam, cf.gamma)}),
                        count)
    return None, count


def check_formula(quantity: str, text: str, *, config: ModelConfig | None = None,
                  **params: Any) -> FormulaCheck:
    """Is the formula ``text`` the derived closed form of ``quantity`` (see module docstring)?

    Model keywords: norm, residual choose the closed form; alpha, lam, gamma given (or all of them,
    with ``config``) are substituted exactly (floats by their decimal repr), the others stay symbolic.
    """
    check_choice("quantity", quantity, QUANTITIES)
    cfg, subs = _parameters(config, params)
    user = typed = parse_formula(text)
    derived = getattr(cf.closed_forms(cfg), quantity).subs(subs)
    notes = []
    if quantity in ("h", "h2") and user.has(cf.i) and not user.has(cf.j):
        user, notes = user.subs(cf.i, cf.j), ["formula written in i, read as a function of j"]
    if quantity in ("p_diag", "p_off", "g") and user.has(cf.j) and not user.has(cf.i):
        user, notes = user.subs(cf.j, cf.i), ["formula written in j, read as a function of i"]
    return replace(compare_expressions(quantity, user, derived, subs, notes=notes), typed=typed)


def compare_expressions(label: str, user: sympy.Expr, derived: sympy.Expr, subs: dict | None = None, *,
                        notes: list[str] | None = None) -> FormulaCheck:
    """Decide ``user == derived`` (steps 1-3 of the module docstring); ``subs`` maps alpha/lam/gamma to
    exact numbers (the other symbols stay symbolic; grid values from SAMPLE_POINTS)."""
    subs = dict(subs or {})
    user, derived = check_expression("user", user).subs(subs), check_expression("derived", derived).subs(subs)
    quantity = label
    fixed = ", ".join(f"{s.name}={v}" for s, v in subs.items()) or "none"
    prefix = f"parameters substituted: {fixed}; " + "".join(n + "; " for n in (notes or []))
    # the mpmath scan of the first rows first: a formula that differs there is answered without symbolic
    # work (which can be slow: exact generators with huge exponents for decimal parameters); the rest of
    # the grid only when no symbolic identity decides (the same first difference: the rows scanned first
    # are the grid's first rows)
    found = _scan(user, derived, subs, grid_max=min(FIRST_ROWS, GRID_MAX))[0]
    if found is None and is_identically_zero(user - derived):
        return FormulaCheck(quantity, user, derived, True,
                            prefix + "symbolic: cancel(user - derived) == 0")
    if found is None and label in POSITIVE_QUANTITIES and is_identically_zero(user ** 2 - derived ** 2):
        return FormulaCheck(quantity, user, derived, True,
                            prefix + "symbolic: cancel(user^2 - derived^2) == 0 and user = derived at "
                            "(i, j) = (2, 1) (derived > 0 everywhere, user continuous, domain connected)")
    diff, count = (found, 0) if found is not None else _scan(user, derived, subs)
    if diff is not None:
        return FormulaCheck(quantity, user, derived, False,
                            prefix + f"first differing (i, j) found by an mpmath scan at {DPS} digits "
                            f"(tolerance 1e-{TOL_DIGITS} relative)", diff)
    certified = _certified_difference(user - derived, subs)
    if certified is not None:  # below the scan's tolerance, yet exactly nonzero
        value, params = certified
        return FormulaCheck(quantity, user, derived, False,
                            prefix + f"the difference at (i, j) = (2, 1) is {value}, nonzero with 15 digits "
                            f"certified by sympy evalf (strict), below the grid scan's tolerance",
                            Difference(i=2, j=1, user=None, derived=None, difference=value, params=params))
    return FormulaCheck(quantity, user, derived, True,
                        prefix + f"symbolic simplification inconclusive; equal at all {count} points "
                        f"compared (1 <= j < i <= {GRID_MAX} in the indices they depend on, mpmath {DPS} digits, "
                        f"tolerance 1e-{TOL_DIGITS} "
                        "relative): numerical evidence, not a proof")
