"""theory.proofs: every proof closes in sympy, the prover says no to false statements, and the proven
statements agree with the exact limit recursion (an independent computation)."""
from __future__ import annotations

import json

import numpy as np
import pytest
import sympy

from lnrecency.model.config import ModelConfig
from lnrecency.theory import closed_forms as cf
from lnrecency.theory.limit import limit_trajectory
from lnrecency.theory.proofs import (
    A,
    B,
    X,
    all_proofs,
    coefficient_sign,
    positive_coordinates,
    proof_diagonal,
    proof_flat_without_norm,
    proof_g_positive,
    proof_h_decreasing,
    proof_layer2_recency,
    prove_decreasing,
    prove_sign,
    s,
    t,
    u,
)


def test_all_proofs_closed_by_sympy():
    proofs = all_proofs()
    assert len(proofs) == 10 and len({p.name for p in proofs}) == 10
    for p in proofs:
        assert p.proven, (p.name, p.steps)
        assert "NOT" not in " ".join(p.steps)
        json.dumps(p.to_json())


@pytest.mark.parametrize("residual", [False, True])
def test_recency_composition(residual):
    ln = ModelConfig(norm="layernorm", residual=residual)
    p = proof_layer2_recency(ln)
    assert p.proven and all(q.proven for q in (proof_h_decreasing(ln), proof_g_positive(ln), proof_diagonal(ln)))
    assert proof_flat_without_norm(ModelConfig(norm="none", residual=residual)).expressions["derivative"] == 0
    # a proof refuses a family it does not cover (and raw parameters)
    with pytest.raises(ValueError, match="proof_flat_without_norm covers norm in"):
        proof_flat_without_norm(ln)
    with pytest.raises(ValueError, match="proof_layer2_recency covers norm in"):
        proof_layer2_recency(ModelConfig(norm="none", residual=residual))
    with pytest.raises(TypeError, match="ModelConfig"):
        proof_h_decreasing(residual)


def test_coefficient_sign_unit():
    assert coefficient_sign(s + t + 1)[0] == 1
    assert coefficient_sign(-(s * X + 2 * B) / (A + B))[0] == -1
    assert coefficient_sign(s - t)[0] is None                        # mixed signs
    assert coefficient_sign(t + A)[0] is None                        # may vanish: only weak sign
    assert coefficient_sign(s + sympy.Symbol("z"))[0] is None        # unknown symbol
    assert coefficient_sign(sympy.sqrt(2) * s)[0] is None            # non-rational coefficient


# ---- power: the same prover rejects false statements ----
H2 = cf.closed_forms(ModelConfig(norm="layernorm")).h2
H2R = cf.closed_forms(ModelConfig(norm="layernorm", residual=True)).h2
E_, F_ = sympy.exp(cf.lam), sympy.exp(cf.lam * cf.alpha)


@pytest.mark.parametrize("name, expr, residual", [
    ("increasing function", cf.j / (cf.j + 1), False),
    ("h2 plus a slow increase", H2 + cf.j / 100, False),
    ("sign flipped in h2", (1 - cf.alpha) * (E_ ** 2 - (cf.j - 1) * F_ ** 2) / (E_ + (cf.j - 1) * F_) ** 2
     + cf.alpha, False),
    ("residual h2 with the gamma term's sign flipped",
     H2R - 4 * cf.gamma * (1 - cf.alpha) * E_ / (E_ + (cf.j - 1) * F_),
     True),
    ("constant", sympy.Integer(1), False),
    ("1/h2 (increasing)", 1 / H2, False),
])
def test_power_prover_rejects_non_decreasing(name, expr, residual):
    p = prove_decreasing(expr, residual=residual)
    assert not p.proven, name
    assert any("NOT established" in step for step in p.steps)


def test_power_wrong_sign_rejected():
    g = positive_coordinates(cf.closed_forms(ModelConfig(norm="layernorm", residual=True)).g.subs(cf.i, t + 1))
    assert not prove_sign("g<0", "g < 0 (false)", g, -1, ()).proven
    ln = cf.closed_forms(ModelConfig(norm="layernorm"))
    minor = ln.h2.subs(cf.j, t + 1) ** 2 - ln.g.subs(cf.i, t + 2 + u) ** 2 * 100
    assert not prove_sign("false minor", "false", positive_coordinates(minor), 1, ()).proven


# ---- the proven statements against the exact recursion (independent of the closed forms) ----
CONFIGS = [dict(alpha=a, lam=lam, gamma=gm) for a in (0.0, 0.5, 0.95) for lam in (0.3, 1.0, 6.0)
           for gm in (0.2, 1.0, 4.0)]


@pytest.mark.parametrize("residual", [False, True])
def test_statements_hold_on_the_recursion(residual):
    for params in CONFIGS:
        traj = limit_trajectory(40, 2, norm="l2", residual=residual, **params)
        h2 = np.diagonal(traj.layers[0].next_gram)
        assert np.all(np.diff(h2) < 0), params
        s2 = traj.layers[1].scores
        for row in range(1, 40):
            assert np.all(np.diff(s2[row, : row + 1]) > 0), (params, row)
        # flat without normalisation; float64 sums of <= 2n^2 nonnegative terms: relative rounding
        # <= (2n + 10) u = 1e-14 for n = 40, so equal entries agree to 1e-13
        flat = limit_trajectory(40, 2, norm="none", residual=residual, **params).layers[1].scores
        for row in range(2, 40):
            off = flat[row, :row]
            assert np.ptp(off) <= 1e-13 * abs(off).max(), (params, row)
