"""P1-P7: the authors' printed derivation (docs/model.md, "The authors' printed derivation"), checked exactly.

Printed setting: unit-norm inputs with E<x_i, x_j> = a, l2 normalisation, lam = 1, residual with
gamma = 1 (P6, P7: no residual). Formulas are typed as docs/model.md prints them, with '*' made explicit
(the parser has no implicit multiplication); both texts are in the evidence. Every formula goes
through theory.formula (check_formula / compare_expressions): exact symbolic equality, else the first
differing (i, j). P4's numbers are compared with the exact limit (mpmath, 30 digits); P5 and P7 use
the coefficient-sign prover of theory.proofs.
"""
from __future__ import annotations

from decimal import ROUND_DOWN, ROUND_HALF_EVEN, Decimal
from typing import TYPE_CHECKING, Callable

import mpmath
import sympy

from lnrecency.claims.catalog import declared, result_source
from lnrecency.claims.declare import claim
from lnrecency.inference.evidence import Evidence, item, ladder, record
from lnrecency.inference.qualifiers import Qualifiers
from lnrecency.inference.verdicts import ClaimResult
from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.formula import check_formula, compare_expressions
from lnrecency.theory.formula_parser import parse_formula
from lnrecency.theory.limit import limit_scores
from lnrecency.theory.proofs import coefficient_sign

if TYPE_CHECKING:
    from lnrecency.theory.formula import Difference

RES = {"norm": "l2", "residual": True, "lam": 1, "gamma": 1}
NORES = {"norm": "l2", "residual": False, "lam": 1}
SETTING_RES = {"norm": "l2", "residual": True, "gamma": 1, "lam": 1, "alpha": "a symbolic in [0, 1)"}
SETTING_NORES = {"norm": "l2", "residual": False, "lam": 1, "alpha": "a symbolic in [0, 1)"}

# (printed as in docs/model.md, typed with explicit '*')
P1_DIAG = ("e/(e+(i-1)e^a)", "e/(e+(i-1)*e^a)")
P1_OFF = ("e^a/(e+(i-1)e^a)", "e^a/(e+(i-1)*e^a)")
P2 = ("2(2ae + e^a(1 + a(2i-3))) / (e+(i-1)e^a)", "2*(2*a*e + e^a*(1 + a*(2*i-3))) / (e+(i-1)*e^a)")
P3 = ("[(2e+(i-1)e^a)^2 + 2(2e+(i-1)e^a) e^a a (i-1) + e^(2a) (i-1)(1+(i-2)a)] / (e+(i-1)e^a)^2",
      "((2*e+(i-1)*e^a)^2 + 2*(2*e+(i-1)*e^a)*e^a*a*(i-1) + e^(2*a)*(i-1)*(1+(i-2)*a)) / (e+(i-1)*e^a)^2")
P4_NUMBERS = {(2, 1): "0.154", (3, 1): "0.132", (3, 2): "0.150"}
P6_G = ("(ea + e^a(1 + a(i-2))) / (e+(i-1)e^a)", "(e*a + e^a*(1 + a*(i-2))) / (e+(i-1)*e^a)")
P6_H2 = ("(e^2 + 2e^(1+a) a (i-1) + e^(2a)(i-1)(1 + a(i-2))) / (e+(i-1)e^a)^2",
         "(e^2 + 2*e^(1+a)*a*(i-1) + e^(2*a)*(i-1)*(1 + a*(i-2))) / (e+(i-1)*e^a)^2")
P7 = ("(a-1) e^a (2e^3 - 2e^(2+a)(i-1) + e^(3a) i(i-1)) / ((e+i e^a)^2 (e+(i-1)e^a)^2)",
      "(a-1)*e^a*(2*e^3 - 2*e^(2+a)*(i-1) + e^(3*a)*i*(i-1)) / ((e+i*e^a)^2*(e+(i-1)*e^a)^2)")
P7_CORRECTED = "(a-1)*e^a*(2*e^3 + 2*e^(2+a)*(i-1) + e^(3*a)*i*(i-1)) / ((e+i*e^a)^2*(e+(i-1)*e^a)^2)"


@record
class PrintedFormula(Evidence):
    """A printed line (as printed and as typed) with the outcome of its check, the fields of
    lnrecency.theory.formula.FormulaCheck the evidence keeps."""

    quantity: str | None = item(omit_none=True)
    printed: str
    typed: str
    equal: bool
    method: str
    derived: str | None = item(omit_none=True)
    first_difference: Difference | None  # None or the first differing point

    @property
    def verdict(self) -> str:
        """What the row reads, re-decided from the check stored with it."""
        return ladder(self.equal)


@record
class PrintedFormulas(Evidence):
    checks: tuple[PrintedFormula, ...]

    @property
    def equal(self) -> bool:
        return all(c.equal for c in self.checks)

    @property
    def verdict(self) -> str:
        """What the row reads, re-decided from the checks stored with it."""
        return ladder(self.equal)


@record
class PrintedNumber(Evidence):
    """A number printed in Figure 1 against the exact limit, at the printed precision."""

    i: int
    j: int
    printed: str
    exact: str
    exact_6_digits: str
    rounded_3_decimals: str
    truncated_3_decimals: str
    agrees_at_3_decimals: bool
    agrees_when_truncated: bool
    within_one_unit_of_last_digit: bool
    agrees_at_2_decimals: bool
    abs_error_of_printed: str


@record
class ScoreFormulaEvidence(Evidence):
    formula: PrintedFormula
    numbers: tuple[PrintedNumber, ...]
    exact_values_from: str
    summary: str

    @property
    def verdict(self) -> str:
        """Decided here once (the evaluator reads it): the formula exact and every printed number rounded or
        truncated from the exact value."""
        return ladder(self.formula.equal and all(n.agrees_at_3_decimals or n.agrees_when_truncated
                                                 for n in self.numbers))


@record
class CoefficientSign(Evidence):
    coefficient: str
    sign: int
    sympy: str


@record
class NumeratorEvidence(Evidence):
    numerator: str
    degree_in_j: int
    coefficients_c0_c1_c2: tuple[CoefficientSign, ...]
    method: str

    @property
    def verdict(self) -> str:
        """Decided here once (the evaluator reads it): three coefficients in j, each negative for every alpha."""
        return ladder(len(self.coefficients_c0_c1_c2) == 3 and all(c.sign == -1 for c in self.coefficients_c0_c1_c2))


@record
class DifferenceEvidence(Evidence):
    printed: str
    typed: str
    equal: bool
    method: str
    first_difference: Difference | None
    derived_difference: str
    corrected_expression: str
    corrected_equal: bool
    corrected_method: str
    error: str

    @property
    def verdict(self) -> str:
        """What the row reads (the line as printed and its conclusion < 0), re-decided from what is stored with it."""
        return ladder(self.equal and self.conclusion_lt_0_holds)
    conclusion_lt_0_holds: bool
    conclusion_proof: str
    printed_expression_nonnegative_at_a0_for_i: list


def _formula_evidence(quantity: str, printed: tuple[str, str], params: dict) -> PrintedFormula:
    r = check_formula(quantity, printed[1], **params)
    return PrintedFormula(quantity=quantity, printed=printed[0], typed=printed[1], equal=r.equal, method=r.method,
                        derived=str(r.derived), first_difference=r.first_difference)


# the statements are typed once, in the catalogue: the printed formulas this module checks must be the ones they quote
for _cid, _printed in (("P2", P2[0]), ("P3", P3[0]), ("P6", P6_G[0]), ("P6", P6_H2[0]), ("P7", P7[0])):
    if _printed not in declared(_cid).text("s1"):
        raise ValueError(f"{_cid}'s statement in lnrecency/claims/catalog.py must quote {_printed!r}, the printed "
                         f"formula this module checks")


def _result(cid: str, setting, verdict: str, ev, finding: str) -> ClaimResult:
    """A printed line's verdict row on its statement as the catalogue types it (once), its source read from there,
    its qualifiers from its evidence (issue 75): an exact decision, where the line and our derivation agree or where
    they first differ."""
    statement = declared(cid).text("s1")
    return ClaimResult(cid, result_source(cid, statement), statement, setting, verdict, ev, finding,
                       _qualifiers(cid, verdict, ev))


def _qualifiers(cid: str, verdict: str, ev) -> Qualifiers:
    if cid == "P4":  # the formula and each printed number: what holds, and (when refuted) what fails
        odd = [n for n in ev.numbers if not n.agrees_at_3_decimals]
        wrong = [f"printed {n.printed} is {n.exact_6_digits} misprinted" for n in odd if not n.agrees_when_truncated]
        truncated = "".join(f"; printed {n.printed} is {n.exact_6_digits} truncated" for n in odd
                            if n.agrees_when_truncated)
        holds = ("exactly: the formula equals our sympy derivation" + truncated) if ev.formula.equal else ""
        fails = "; ".join(wrong + ([] if ev.formula.equal else ["the formula differs from our sympy derivation"]))
        return Qualifiers(holds=holds, fails=fails, exact=True)
    if cid == "P5":
        return Qualifiers(holds="exactly: all three coefficients negative for every alpha in [0, 1)", exact=True) \
            if verdict == "confirmed" else Qualifiers(fails="a coefficient is not negative everywhere", exact=True)
    if cid == "P7" and verdict != "confirmed":
        return Qualifiers(fails="by a sign typo in the middle term; corrected, the line and its conclusion hold",
                          exact=True)
    if verdict == "confirmed":
        return Qualifiers(holds="exactly: equals our sympy derivation for every alpha in [0, 1)", exact=True)
    return Qualifiers(fails="differs from our sympy derivation", exact=True)


def _verdict(ok: bool) -> str:
    return ladder(ok)


def _formula_finding(*checks: PrintedFormula) -> str:
    """Why a printed formula is confirmed or refuted: the method of the comparison, or where it differs."""
    parts = []
    for c in checks:
        if c.equal:
            parts.append(f"{c.quantity or 'the expression'} equals our sympy derivation exactly ({c.method})")
        else:
            d = c.first_difference
            where = (f": first at i = {d.i}, j = {d.j}: printed {d.user}, derived {d.derived}" if d is not None
                     else "")
            parts.append(f"{c.quantity or 'the expression'} differs from our derivation{where} ({c.method})")
    return "; ".join(parts) + "."


def p1() -> ClaimResult:
    ev = PrintedFormulas(checks=(_formula_evidence("p_diag", P1_DIAG, RES), _formula_evidence("p_off", P1_OFF, RES)))
    return _result("P1", SETTING_RES, _verdict(ev.equal), ev, _formula_finding(*ev.checks))


def p2() -> ClaimResult:
    ev = _formula_evidence("g", P2, RES)
    return _result("P2", SETTING_RES, _verdict(ev.equal), ev, _formula_finding(ev))


def p3() -> ClaimResult:
    ev = _formula_evidence("h2", P3, RES)
    return _result("P3", SETTING_RES, _verdict(ev.equal), ev,
                       _formula_finding(ev))


def _decimal(x: mpmath.mpf) -> Decimal:
    return Decimal(mpmath.nstr(x, 30, strip_zeros=False))


def p4(printed_numbers: dict | None = None) -> ClaimResult:
    """P4: the formula S = g/(h h) exactly, and Figure 1's numbers judged at the precision printed: a printed
    value agrees when it is the exact value rounded or truncated to the printed number of decimals (both ways of
    printing at that precision; the figure is a plot label). 0.150 for 0.150818 agrees (truncated); 0.149 or 0.152
    do not, though within one unit of the last digit."""
    printed_numbers = P4_NUMBERS if printed_numbers is None else printed_numbers
    g = P2[1]
    h2_i, h2_j = P3[1], P3[1].replace("i", "j")
    formula = f"({g}) / sqrt(({h2_i}) * ({h2_j}))"
    fr = check_formula("score", formula, **RES)
    exact = limit_scores(3, 2, norm="l2", residual=True, gamma=1, lam=1, alpha=0, dps=30)[1]
    numbers = []
    for (qi, qj), printed in printed_numbers.items():
        value = _decimal(exact[qi - 1, qj - 1])
        unit = Decimal(1).scaleb(Decimal(printed).as_tuple().exponent)  # the printed precision (0.001 for 0.150)
        rounded = value.quantize(unit, ROUND_HALF_EVEN)
        truncated = value.quantize(unit, ROUND_DOWN)
        two = value.quantize(Decimal("0.01"), ROUND_HALF_EVEN)
        ok = rounded == Decimal(printed)
        within = abs(value - Decimal(printed)) < unit
        numbers.append(PrintedNumber(
            i=qi, j=qj, printed=printed, exact=mpmath.nstr(exact[qi - 1, qj - 1], 15),
            exact_6_digits=mpmath.nstr(exact[qi - 1, qj - 1], 6), rounded_3_decimals=str(rounded),
            truncated_3_decimals=str(truncated), agrees_at_3_decimals=ok,
            agrees_when_truncated=truncated == Decimal(printed), within_one_unit_of_last_digit=bool(within),
            agrees_at_2_decimals=two == Decimal(printed).quantize(Decimal("0.01")),
            abs_error_of_printed=mpmath.nstr(abs(exact[qi - 1, qj - 1] - mpmath.mpf(printed)), 3)))
    def how(n: PrintedNumber) -> str:
        return ("rounded" if n.agrees_at_3_decimals else "truncated" if n.agrees_when_truncated else
                f"neither rounded ({n.rounded_3_decimals}) nor truncated ({n.truncated_3_decimals})")

    summary = ("printed numbers judged at the precision printed (the exact value rounded or truncated to the "
               "printed decimals): " + ", ".join(f"S_{n.i}{n.j} = {n.printed} is {n.exact_6_digits} {how(n)}"
                                                   for n in numbers)
               + "; all agree at 2 decimals" * all(n.agrees_at_2_decimals for n in numbers))
    ev = ScoreFormulaEvidence(
        formula=PrintedFormula(printed="S^(2)_ij = g(i)/(h(i)h(j)) with g = P2, h^2 = P3", typed=formula,
                             equal=fr.equal, method=fr.method, first_difference=fr.first_difference),
        numbers=tuple(numbers), exact_values_from="theory.limit (mpmath, 30 digits), n = 3, a = 0", summary=summary)
    return _result("P4", dict(SETTING_RES, alpha=0, n=3), ev.verdict, ev,
                       _p4_lead(fr.equal, numbers) + ". The formula S = g/(h h) " + (
                           "is exact (" + fr.method + "); " if fr.equal else "differs from our derivation; ")
                       + summary + ".")


def _p4_lead(formula_equal: bool, numbers: list) -> str:
    """P4's finding in plain words, first: the formula, then any printed number that is not rounded."""
    odd = [n for n in numbers if not n.agrees_at_3_decimals]
    return ("Formula " + ("exact" if formula_equal else "wrong") + ", " + (
        "numbers rounded correctly" if not odd else ", ".join(
            f"S_{n.i}{n.j} {'truncated' if n.agrees_when_truncated else 'wrong'} ({n.exact_6_digits} printed "
            f"{n.printed})" for n in odd)))


def p5_numerator() -> tuple[sympy.Expr, list[sympy.Expr]]:
    """N(j) = (h(j+1)^2 - h(j)^2) Z_j^2 Z_(j+1)^2 (residual, lam = gamma = 1) and its coefficients
    [c0, c1, c2, ...] in j; Z_j = e + (j-1) e^a."""
    h2 = cf.closed_forms(ModelConfig(norm="layernorm", residual=True)).h2.subs({cf.lam: 1, cf.gamma: 1})
    zj = sympy.E + (cf.j - 1) * sympy.exp(cf.alpha)
    num = sympy.cancel((h2.subs(cf.j, cf.j + 1) - h2) * zj ** 2 * zj.subs(cf.j, cf.j + 1) ** 2)
    poly = sympy.Poly(sympy.expand(num), cf.j)
    return num, [sympy.factor(c) for c in reversed(poly.all_coeffs())]


def _lam1_coordinates(expr: sympy.Expr) -> tuple[sympy.Expr, tuple, tuple]:
    """lam = 1: e^a = X/(1+w), e = X with w = e^(1-a) - 1 > 0 for a < 1; a = A/(A+B), A >= 0, B > 0."""
    X, w, B = sympy.symbols("X w B", positive=True)
    A = sympy.Symbol("A", nonnegative=True)
    out = expr.subs(sympy.exp(cf.alpha), sympy.E / (1 + w))
    out = out.replace(lambda e: isinstance(e, sympy.exp) and e.args[0].is_Integer,
                      lambda e: X ** e.args[0])
    out = out.xreplace({sympy.E: X}).subs(cf.alpha, A / (A + B))
    if out.has(sympy.E) or out.has(sympy.exp) or out.has(cf.alpha):
        raise ArithmeticError(f"e, exp or alpha left after the change of coordinates: {out}")
    return out, (X, w, B), (A,)


def p5() -> ClaimResult:
    num, coeffs = p5_numerator()
    signs, details = [], []
    for c in coeffs:
        expr, pos, nonneg = _lam1_coordinates(c)
        sign, n, d, reason = coefficient_sign(expr, pos, nonneg)
        signs.append(sign)
        details.append(CoefficientSign(coefficient=str(c), sign=sign, sympy=reason))
    ok = len(coeffs) == 3 and all(s == -1 for s in signs)
    ev = NumeratorEvidence(numerator=str(sympy.factor(num)), degree_in_j=len(coeffs) - 1,
                           coefficients_c0_c1_c2=tuple(details),
                           method="sympy: each coefficient rewritten with e^a = e/(1+w), w = e^(1-a) - 1 > 0, "
                                  "a = A/(A+B); the sign of every monomial coefficient "
                                  "(theory.proofs.coefficient_sign)")
    finding = (f"The numerator is of degree {len(coeffs) - 1} in j with coefficient signs "
               f"{', '.join({-1: 'negative', 1: 'positive', 0: 'zero'}.get(q, 'undecided') for q in signs)} for every "
               f"0 <= a < 1 (each coefficient rewritten with e^a = e/(1+w), w = e^(1-a) - 1 > 0, a = A/(A+B): every "
               f"monomial's sign decided by sympy), so h(j) strictly decreases." if ok else
               f"The numerator's coefficients in j do not all have the printed sign: {signs}.")
    return _result("P5", SETTING_RES, ev.verdict, ev, finding)


def p6() -> ClaimResult:
    ev = PrintedFormulas(checks=(_formula_evidence("g", P6_G, NORES), _formula_evidence("h2", P6_H2, NORES)))
    return _result("P6", SETTING_NORES, _verdict(ev.equal), ev, _formula_finding(*ev.checks))


def p7() -> ClaimResult:
    h2 = cf.closed_forms(ModelConfig(norm="layernorm")).h2.subs(cf.lam, 1).subs(cf.j, cf.i)
    derived = h2.subs(cf.i, cf.i + 1) - h2
    printed = compare_expressions("h'(i+1)^2 - h'(i)^2", parse_formula(P7[1]), derived)
    corrected = compare_expressions("h'(i+1)^2 - h'(i)^2", parse_formula(P7_CORRECTED), derived)
    # sign of the derived difference (i = t + 1, t >= 0)
    t = sympy.Symbol("t", nonnegative=True)
    expr, pos, nonneg = _lam1_coordinates(derived.subs(cf.i, t + 1))
    sign, _, _, reason = coefficient_sign(expr, pos, nonneg + (t,))
    # where the printed expression is >= 0 at a = 0 (it should be < 0 everywhere)
    f = sympy.lambdify(cf.i, parse_formula(P7[1]).subs(cf.alpha, 0), "mpmath")
    with mpmath.workdps(30):
        positive_at = [q for q in range(1, 200) if f(mpmath.mpf(q)) >= 0]
    ev = DifferenceEvidence(
        printed=P7[0], typed=P7[1], equal=printed.equal, method=printed.method,
        first_difference=printed.first_difference, derived_difference=str(sympy.factor(derived)),
        corrected_expression=P7_CORRECTED, corrected_equal=corrected.equal, corrected_method=corrected.method,
        error="sign of the middle term: -2e^(2+a)(i-1) is printed, +2e^(2+a)(i-1) is correct",
        conclusion_lt_0_holds=sign == -1, conclusion_proof=reason,
        printed_expression_nonnegative_at_a0_for_i=positive_at)
    verdict = ladder(printed.equal and sign == -1)
    if printed.equal:
        finding = "The printed expression equals our derivation" + (
            "; its sign is negative for every i >= 1 and 0 <= a < 1 (sympy)." if sign == -1 else
            ", but the conclusion < 0 is not proved.")
    else:
        d = printed.first_difference
        at = (f" (printed and derived differ first at i = {d.i}, alpha = {d.params.get('alpha')}: {d.user} "
              f"against {d.derived})" if d is not None else "")
        finding = (f"A sign typo: {ev.error}{at}. The "
                   f"corrected expression {P7_CORRECTED} equals our derivation ({corrected.method}). The printed "
                   f"conclusion (< 0) "
                   + ("still holds with the correction, for every i >= 1 and 0 <= a < 1 (" + reason + ")"
                      if sign == -1 else "is not proved for the corrected expression")
                   + (f"; the expression as printed is not even negative: >= 0 at a = 0 for i = "
                      f"{', '.join(map(str, positive_at[:5]))}{' ...' if len(positive_at) > 5 else ''}"
                      if positive_at else "") + ".")
    return _result("P7", SETTING_NORES, verdict, ev, finding)


def evaluate_printed_symbolic() -> list[ClaimResult]:
    """ClaimResults P1..P7 (source "printed derivation")."""
    return [p1(), p2(), p3(), p4(), p5(), p6(), p7()]


# ---- the claim's report tables, figures and notebook cells ----------------------------------------


def _single(line: Callable[[], ClaimResult]) -> Callable[..., list[ClaimResult]]:
    """The evaluator of one printed line (the registry's protocol: ``fn(*, quick, progress) -> [ClaimResult]``)."""
    def evaluate_line(*, quick: bool = False, progress=None) -> list[ClaimResult]:
        return [line()]
    evaluate_line.__qualname__ = evaluate_line.__name__ = f"evaluate_{line.__name__}"
    return evaluate_line


# one evaluator per printed line: asking for P3 evaluates P3 only
claim("P1")(_single(p1))
for _line in (p2, p3, p4, p5, p6, p7):
    claim(f"P{_line.__name__[1:]}")(_single(_line))
