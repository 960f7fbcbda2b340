"""The rollout and sink-limit functions refuse bad arguments by name before any work (issue 69), and their
neighbours keep answering."""
from __future__ import annotations

import math

import numpy as np
import pytest

from lnrecency.theory.rollout import rollout_of, rollout_seconds, uniform_rollout
from lnrecency.theory.sink import sink_limit


@pytest.mark.parametrize("weights,word", [(np.ones(3), "shape"), (np.ones((2, 3)), "shape"),
                                          (np.ones((1, 2, 3)), "shape"), (np.ones((0, 2, 2)), "shape"),
                                          ("abc", "real array"), (np.full((1, 2, 2), np.nan), "finite"),
                                          (np.array([[[True]]]), "real array")])
def test_rollout_of_refuses_what_is_not_a_stack_of_square_weights(weights, word):
    with pytest.raises(ValueError, match=word):
        rollout_of(weights)


@pytest.mark.parametrize("gamma,word", [(math.nan, "finite"), (-1.0, r"\(0, inf\)"), (0.0, r"\(0, inf\)"),
                                        ("x", "real number"), (math.inf, "finite"), (True, "real number")])
def test_the_residual_weight_is_checked(gamma, word):
    with pytest.raises(ValueError, match="gamma.*" + word):
        uniform_rollout(64, 2, gamma=gamma)
    with pytest.raises(ValueError, match="gamma"):
        rollout_of(np.eye(3)[None], gamma=gamma)


def test_rollout_neighbours_keep_working():
    r = uniform_rollout(64, 2)
    assert math.isclose(r[1, -1, -1], 1 / 64 ** 2) and np.allclose(r.sum(axis=-1), 1)
    rg = uniform_rollout(8, 3, gamma=0.5)
    assert np.allclose(rg.sum(axis=-1), 1) and np.isfinite(rg).all()
    p = np.tril(np.ones((4, 4))) / np.arange(1, 5)[:, None]
    assert np.allclose(rollout_of(np.stack([p, p])), uniform_rollout(4, 2))
    assert np.allclose(rollout_of([[[1.0]]], gamma=1), [[[1.0]]])  # a list of lists is an array


def test_a_rollout_too_large_is_refused_before_it_allocates_or_runs(monkeypatch):
    with pytest.raises(MemoryError, match="n=20000"):
        uniform_rollout(20000, 2)
    with pytest.raises(ValueError, match="n=3000 over 40 layer"):
        uniform_rollout(3000, 40)
    # the estimate that refused is the one --max-seconds lifts
    assert rollout_seconds(3000, 40) > 20
    monkeypatch.setenv("LNRECENCY_MAX_SECONDS", "1e9")
    from lnrecency.runtime import timelimit

    assert timelimit.time_limit(20.0) == 1e9


def test_sink_slope_counts_layers_from_one_and_refuses_the_rest():
    s = sink_limit(32, 2, b=1.0)
    assert s.slope(1) != s.slope(2)
    for bad in (0, 3, -1, 1.0, True):
        with pytest.raises(ValueError, match="layer must be an integer"):
            s.slope(bad)
