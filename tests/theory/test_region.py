"""lnrecency.theory.region: the ends of the set where an ordering holds, checked independently.

* Each end is bracketed by two exactly decided points (lnrecency.theory.boundary) on opposite sides, the
  bracket at most 1e-6 wide; values beyond the bracket on each side are decided independently here and
  agree with the side the region assigns them.
* Known points of the audit (LayerNorm, residual gamma = 1, lam = 0.3, layer 3): alpha = 0.01 fails first at
  row 24 and alpha = 0.03 at row 93 (n <= 120), so both lie in the failing set; the end is just above 0.03.
* A planted narrow failure (width 1e-5, far below the scan spacing) is found by the dip search, both ends.
* A wrong end is rejected: the predicate at a point just past a claimed end contradicts a shifted claim.
"""
from __future__ import annotations

import pytest

from lnrecency.model.config import ModelConfig
from lnrecency.theory import region as region_mod
from lnrecency.theory.boundary import boundary
from lnrecency.theory.region import region

CFG = ModelConfig(norm="layernorm", residual=True, gamma=1.0, lam=0.3)


def holds(cfg: ModelConfig, layer: int, n_max: int) -> bool:
    return boundary(layer, n_max, config=cfg, first_layer=layer)[0].holds


@pytest.fixture(scope="module")
def alpha_region():
    return region(3, 120, "alpha", config=CFG, hi=0.2)


def test_alpha_end_is_certified(alpha_region):
    r = alpha_region
    assert len(r.ends) == 1
    e = r.ends[0]
    assert e.hi - e.lo <= 1e-6
    assert not holds(CFG.replace(alpha=e.lo), 3, 120) and holds(CFG.replace(alpha=e.hi), 3, 120)
    assert not holds(CFG.replace(alpha=e.lo - 1e-6), 3, 120) and holds(CFG.replace(alpha=e.hi + 1e-6), 3, 120)
    assert r.fails[0][0] == 0.0 and abs(r.fails[0][1] - e.value) < 1e-12 and r.holds[0][1] == 0.2


def test_alpha_region_contains_the_audit_points(alpha_region):
    for alpha, row in ((0.01, 24), (0.03, 93)):
        assert boundary(3, 120, config=CFG.replace(alpha=alpha), first_layer=3)[0].first_failing_row == row
        assert any(a <= alpha <= b for a, b in alpha_region.fails)
    assert 0.03 < alpha_region.ends[0].value < 0.032


def test_a_wrong_end_is_rejected(alpha_region):
    """A claimed end 1e-4 above the certified one: the exact predicate just below the claim says the ordering
    already holds there, contradicting 'fails below the claimed end'."""
    claimed = alpha_region.ends[0].value + 1e-4
    assert holds(CFG.replace(alpha=claimed - 5e-5), 3, 120)


def test_planted_narrow_failure_is_found(monkeypatch):
    lo_f, hi_f = 0.400000, 0.400010

    class Fake:
        def __init__(self, *a):
            pass

        def __call__(self, p, layers):
            bad = lo_f < p < hi_f
            return {L: (not bad, 7 if bad else None) for L in layers}

    def fake_margins(cfg, layers, n_max, ordering):
        return {L: abs(float(cfg.alpha) - 0.400005) - 0.000005 for L in layers}

    monkeypatch.setattr(region_mod, "_Predicate", Fake)
    monkeypatch.setattr(region_mod, "margins", fake_margins)
    r = region(2, 10, "alpha", config=ModelConfig())
    assert len(r.ends) == 2
    assert abs(r.ends[0].value - lo_f) < 1e-7 and abs(r.ends[1].value - hi_f) < 1e-7
    assert len(r.fails) == 1 and r.holds[0][0] == 0.0 and r.holds[-1][1] == 0.999


@pytest.mark.parametrize("kw, word", [(dict(parameter="beta"), "parameter"), (dict(tol=1e-3), "tol"),
                                      (dict(parameter="gamma"), "residual"), (dict(lo=0.5, hi=0.1), "below"),
                                      (dict(hi=1.5), "alpha")])
def test_refusals(kw, word):
    args = dict(parameter="alpha")
    args.update(kw)
    with pytest.raises(ValueError, match=word):
        region(2, 10, args.pop("parameter"), config=ModelConfig(), **args)
