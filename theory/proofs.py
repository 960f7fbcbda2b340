"""Symbolic proofs about layer 2 of the limit (docs/model.md, "Worked example", "Definition 1"), closed by sympy.

Method ("sign by coefficients"). Every closed form of :mod:`theory.closed_forms` is a rational function
of i, j, alpha, gamma, E = e^lam and F = e^(lam alpha). For lam > 0 and alpha in [0, 1) put

    X = E > 0,   s = e^(lam (1 - alpha)) - 1 > 0  (so F = X / (1 + s)),
    alpha = A / (A + B) with A = alpha >= 0, B = 1 - alpha > 0,
    j = t + 1, i = t + 2 + u  with t, u >= 0  (j < i; proven for all real t, u >= 0).

Every model (lam, alpha, gamma, i, j) lands in the region X, s, B, gamma > 0, A, t, u >= 0. The
quantity is brought to numerator / denominator; a polynomial whose coefficients (rational numbers) all
have one sign, with at least one monomial free of the nonnegative variables, has that sign strictly on
the whole region. No sampling is involved. If the coefficients have mixed signs, sympy has not
established the sign: the record says so (proven=False) and no other argument is substituted.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Sequence

import sympy

from lnrecency.model.config import ModelConfig
from lnrecency.runtime.arguments import check_expression
from lnrecency.theory import closed_forms as cf

__all__ = ["Proof", "coefficient_sign", "positive_coordinates", "prove_decreasing", "prove_sign",
           "proof_h_decreasing", "proof_g_positive", "proof_diagonal", "proof_flat_without_norm",
           "proof_layer2_recency", "all_proofs", "X", "s", "A", "B", "t", "u"]

X, s, B = sympy.symbols("X s B", positive=True)
A, t, u = sympy.symbols("A t u", nonnegative=True)
POSITIVE = (X, s, B, cf.gamma)
NONNEGATIVE = (A, t, u)
COORDINATES = ("X = e^lam > 0, s = e^(lam(1-alpha)) - 1 > 0 (e^(lam alpha) = X/(1+s)), "
               "alpha = A/(A+B) with A = alpha >= 0, B = 1 - alpha > 0")


@dataclass(frozen=True)
class Proof:
    """A symbolic proof record; ``expressions`` holds the key sympy objects (by name)."""

    name: str
    statement: str
    assumptions: tuple[str, ...]
    method: str
    proven: bool
    steps: tuple[str, ...]
    expressions: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"name": self.name, "statement": self.statement, "assumptions": list(self.assumptions),
                "method": self.method, "proven": self.proven, "steps": list(self.steps),
                "expressions": {k: str(v) for k, v in self.expressions.items()}}


def positive_coordinates(expr: sympy.Expr) -> sympy.Expr:
    """Rewrite a closed form in X, s, A, B (see module docstring); lam and alpha must disappear."""
    expr = check_expression("expr", expr)
    out = expr.subs({sympy.exp(cf.alpha * cf.lam): X / (1 + s), sympy.exp(cf.lam): X})
    out = out.subs(cf.alpha, A / (A + B))
    if out.has(cf.lam) or out.has(cf.alpha):
        raise ArithmeticError(f"lam/alpha left after the change of coordinates: {out}")
    return out


def _poly_sign(p: sympy.Expr, variables: Sequence[sympy.Symbol],
               nonnegative: Sequence[sympy.Symbol]) -> tuple[int | None, str]:
    poly = sympy.Poly(sympy.expand(p), *variables)
    coeffs = poly.coeffs()
    if poly.is_zero:
        return None, "the polynomial is identically zero"
    if not all(c.is_Rational for c in coeffs):
        return None, f"non-rational coefficients: {[c for c in coeffs if not c.is_Rational][:3]}"
    signs = {1 if c > 0 else -1 for c in coeffs}
    if len(signs) != 1:
        neg = sum(1 for c in coeffs if c < 0)
        return None, f"mixed coefficient signs ({len(coeffs) - neg} positive, {neg} negative)"
    idx = [variables.index(v) for v in nonnegative if v in variables]
    if not any(all(m[k] == 0 for k in idx) for m in poly.monoms()):
        return None, "one sign, but every monomial contains a variable that may vanish (only weak sign)"
    sign = signs.pop()
    return sign, (f"{len(coeffs)} monomials, all coefficients {'positive' if sign > 0 else 'negative'}, "
                  f"one free of {', '.join(str(v) for v in nonnegative)}")


def coefficient_sign(expr: sympy.Expr, positive: Sequence[sympy.Symbol] = POSITIVE,
                     nonnegative: Sequence[sympy.Symbol] = NONNEGATIVE):
    """(sign in {+1, -1} or None, numerator, denominator, reason) of ``expr`` on the region
    positive variables > 0, nonnegative variables >= 0, by the coefficient signs of num and den."""
    expr = check_expression("expr", expr)
    variables = list(positive) + list(nonnegative)
    num, den = sympy.fraction(sympy.factor(sympy.together(expr)))
    extra = (num.free_symbols | den.free_symbols) - set(variables)
    if extra:
        return None, num, den, f"symbols outside the region's variables: {sorted(map(str, extra))}"
    sn, rn = _poly_sign(num, variables, nonnegative)
    sd, rd = _poly_sign(den, variables, nonnegative)
    if sn is None or sd is None:
        return None, num, den, f"numerator: {rn}; denominator: {rd}"
    return sn * sd, num, den, f"numerator: {rn}; denominator: {rd}"


def prove_sign(name: str, statement: str, expr: sympy.Expr, want: int, assumptions: tuple[str, ...],
               key: dict | None = None) -> Proof:
    """Proof that ``expr`` (already in positive coordinates) has sign ``want`` everywhere."""
    sign, num, den, reason = coefficient_sign(expr)
    proven = sign == want
    steps = [f"coordinates: {COORDINATES}; j = t + 1, i = t + 2 + u with t, u >= 0",
             f"factored numerator: {num}", f"factored denominator: {den}", reason]
    if not proven:
        steps.append("sympy has NOT established the sign " + (">" if want > 0 else "<") + " 0 by this "
                     "method; no other argument is substituted (not proven)")
    exprs = dict(key or {})
    exprs.update({"numerator": num, "denominator": den})
    return Proof(name, statement, assumptions, "sympy: sign of every coefficient (see theory.proofs)",
                 proven, tuple(steps), exprs)


def _assumptions(residual: bool) -> tuple[str, ...]:
    base = ("alpha in [0, 1)", "lam > 0", "integers 1 <= j < i (the proof covers real t, u >= 0)")
    return base + (("gamma > 0 (residual)",) if residual else ("no residual",))


def prove_decreasing(h2: sympy.Expr, *, residual: bool, name: str = "h_decreasing") -> Proof:
    """h2(j+1) - h2(j) < 0 for every j >= 1 (t = j - 1 >= 0); ``h2`` a closed form in j."""
    h2 = check_expression("h2", h2)
    diff = h2.subs(cf.j, t + 2) - h2.subs(cf.j, t + 1)
    return prove_sign(name, f"|x_j^(1)|^2 = h(j)^2 strictly decreases in j "
                      f"({'residual' if residual else 'no residual'})",
                      positive_coordinates(diff), -1, _assumptions(residual),
                      {"h2": h2, "difference": diff})


NORMALISED = ("l2", "rmsnorm", "layernorm")  # one limit (docs/model.md): the proofs below cover all three


def _family(config: ModelConfig, allowed: tuple[str, ...], what: str) -> bool:
    """``config``'s residual flag, after checking that its normalisation is one the proof covers (the proofs
    are symbolic in alpha, lam and gamma: config's values of these do not enter)."""
    if not isinstance(config, ModelConfig):
        raise TypeError(f"config must be a lnrecency ModelConfig; got {type(config).__name__}")
    if config.norm not in allowed:
        raise ValueError(f"{what} covers norm in {allowed}; got norm={config.norm!r}")
    return config.residual


def _forms(residual: bool, norm: str = "layernorm") -> cf.ClosedForms:
    return cf.closed_forms(ModelConfig(norm=norm, residual=residual))


def proof_h_decreasing(config: ModelConfig) -> Proof:
    """(a) h strictly decreasing in j (config: its residual flag; norm l2, rmsnorm or layernorm)."""
    return _h_decreasing(_family(config, NORMALISED, "proof_h_decreasing"))


def proof_g_positive(config: ModelConfig) -> Proof:
    """(c) g(i) > 0 for every i >= 1."""
    return _g_positive(_family(config, NORMALISED, "proof_g_positive"))


def proof_diagonal(config: ModelConfig) -> Proof:
    """h2(i) h2(j) - g(i)^2 > 0 for j < i: strict Cauchy-Schwarz, so S^(2)_ii = lam > S^(2)_ij."""
    return _diagonal(_family(config, NORMALISED, "proof_diagonal"))


def proof_flat_without_norm(config: ModelConfig) -> Proof:
    """(b) without normalisation (norm none) S^(2)_ij = lam g(i) does not depend on j (j < i)."""
    return _flat_without_norm(_family(config, ("none",), "proof_flat_without_norm"))


def proof_layer2_recency(config: ModelConfig) -> Proof:
    """Definition 1 at layer 2 with normalisation: S_ij > S_ik for i >= j > k >= 1."""
    return _layer2_recency(_family(config, NORMALISED, "proof_layer2_recency"))


@functools.lru_cache(maxsize=None)
def _h_decreasing(residual: bool) -> Proof:
    return prove_decreasing(_forms(residual).h2, residual=residual,
                            name=f"h_decreasing[{'residual' if residual else 'no residual'}]")


@functools.lru_cache(maxsize=None)
def _g_positive(residual: bool) -> Proof:
    g = _forms(residual).g
    return prove_sign(f"g_positive[{'residual' if residual else 'no residual'}]",
                      "g(i) = <x_i^(1), x_j^(1)> > 0 (j < i)",
                      positive_coordinates(g.subs(cf.i, t + 1)), 1, _assumptions(residual), {"g": g})


@functools.lru_cache(maxsize=None)
def _diagonal(residual: bool) -> Proof:
    c = _forms(residual)
    expr = c.h2.subs(cf.j, t + 2 + u) * c.h2.subs(cf.j, t + 1) - c.g.subs(cf.i, t + 2 + u) ** 2
    return prove_sign(f"diagonal[{'residual' if residual else 'no residual'}]",
                      "h(i)^2 h(j)^2 - g(i)^2 > 0 for j < i, so the normalised score S_ij < S_ii = lam",
                      positive_coordinates(expr), 1, _assumptions(residual),
                      {"gram_minor": expr})


@functools.lru_cache(maxsize=None)
def _flat_without_norm(residual: bool) -> Proof:
    score = _forms(residual, "none").score
    derivative = sympy.simplify(sympy.diff(score, cf.j))
    proven = derivative == 0
    return Proof(f"flat_without_norm[{'residual' if residual else 'no residual'}]",
                 "norm = none: S^(2)_ij is the same for all j < i (flat layer 2)",
                 _assumptions(residual), "sympy: diff(S^(2)_ij, j) == 0 identically", proven,
                 (f"S^(2)_ij = {score}", f"d/dj S^(2)_ij = {derivative}"),
                 {"score": score, "derivative": derivative})


@functools.lru_cache(maxsize=None)
def _layer2_recency(residual: bool) -> Proof:
    parts = (_h_decreasing(residual), _g_positive(residual), _diagonal(residual))
    proven = all(p.proven for p in parts)
    steps = ("for k < j < i: S_ij / S_ik = h(k) / h(j) > 1 since S_ij = lam g(i)/(h(i) h(j)), "
             "lam > 0, g(i) > 0 and h strictly decreasing",
             "for j = i > k: S_ii = lam > S_ik by strict Cauchy-Schwarz (the Gram minor is > 0)") + tuple(
        f"{p.name}: {'proven' if p.proven else 'NOT proven'}" for p in parts)
    c = _forms(residual, "l2")
    return Proof(f"layer2_recency[{'residual' if residual else 'no residual'}]",
                 "l2 / rmsnorm / layernorm limit: layer 2 has recency bias on every row i >= 2",
                 _assumptions(residual), "composition of " + ", ".join(p.name for p in parts), proven,
                 steps, {"score": c.score})


def all_proofs() -> tuple[Proof, ...]:
    """Every proof of this module, without and with residual."""
    out = []
    for residual in (False, True):
        ln, none = ModelConfig(norm="layernorm", residual=residual), ModelConfig(norm="none", residual=residual)
        out += [proof_h_decreasing(ln), proof_g_positive(ln), proof_diagonal(ln),
                proof_flat_without_norm(none), proof_layer2_recency(ln)]
    return tuple(out)
