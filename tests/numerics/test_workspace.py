"""The hot loop's reused arrays (numerics/workspace.py) change where numbers are written, never the numbers: the
layers with and without reuse, a chunk's draws written into a given array and drawn fresh, the embedding written
into a given array; and a reused layer's arrays really are overwritten by the next (the contract callers keep)."""
from __future__ import annotations

import threading

import numpy as np
import pytest

from lnrecency.model.config import make_config
from lnrecency.numerics import workspace
from lnrecency.numerics.forward import forward
from lnrecency.numerics.samplers import Representation, draw_range, embed

CONFIGS = [dict(norm="l2", residual=True, alpha=0.2, embedding="normalized"),
           dict(norm="none", residual=False),
           dict(norm="layernorm", residual=True, gamma=0.5, lam=2.0, alpha=0.3),
           dict(norm="rmsnorm", residual=True, embedding="gaussian", alpha=0.1),
           dict(norm="none", residual=True, gamma=2.0)]


@pytest.mark.parametrize("params", CONFIGS, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_the_layers_give_the_same_bits_with_reused_arrays(params):
    cfg = make_config(None, **params)
    rep = Representation(6, 16, "gram")
    x = embed(draw_range(rep, 4, 0, 9), cfg, 16)
    before = x.copy()
    plain = [(s.copy(), o.copy()) for s, o in forward(x, cfg, 3, rep.u)]
    reused = [(s.copy(), o.copy()) for s, o in forward(x, cfg, 3, rep.u, reuse=True)]
    for (s0, o0), (s1, o1) in zip(plain, reused):
        assert np.array_equal(s0, s1) and np.array_equal(o0, o1)
    assert np.array_equal(x, before)  # the input is never written
    workspace.release()


def test_a_reused_layer_is_overwritten_by_the_next():
    """Why reuse is opt-in: a caller that kept layer 1's arrays would read layer 2's numbers."""
    cfg = make_config(None, norm="l2", residual=True, alpha=0.2, embedding="normalized")
    rep = Representation(5, 12, "direct")
    x = embed(draw_range(rep, 1, 0, 4), cfg, 12)
    kept = list(forward(x, cfg, 2, rep.u, reuse=True))
    assert kept[0][0] is kept[1][0] or np.shares_memory(kept[0][0], kept[1][0])
    fresh = list(forward(x, cfg, 2, rep.u))
    assert not np.shares_memory(fresh[0][0], fresh[1][0])
    assert not np.array_equal(fresh[0][0], fresh[1][0])
    workspace.release()


def test_two_live_reused_calls_in_one_thread_share_no_array():
    """Issue 78, item 6: two forward(reuse=True) generators stepped in turn in one thread each compute from their
    own state (before, the second overwrote the first's working arrays from layer 2 on); the neighbour: one call
    after the other ends gets the pool's arrays back."""
    cfg = make_config(None, norm="layernorm", residual=True, alpha=0.2)
    rep = Representation(5, 12, "gram")
    xa, xb = (embed(draw_range(rep, 2, start, start + 3), cfg, 12) for start in (0, 3))
    want = [[(s.copy(), o.copy()) for s, o in forward(x, cfg, 3, rep.u)] for x in (xa, xb)]
    ga, gb = forward(xa, cfg, 3, rep.u, reuse=True), forward(xb, cfg, 3, rep.u, reuse=True)
    got = [[], []]
    for _ in range(3):
        for q, g in enumerate((ga, gb)):
            s, o = next(g)
            got[q].append((s.copy(), o.copy()))
    for q in (0, 1):
        assert all(np.array_equal(s0, s1) and np.array_equal(o0, o1) for (s0, o0), (s1, o1) in zip(want[q], got[q]))
    ga.close()
    gb.close()
    first = next(forward(xa, cfg, 1, rep.u, reuse=True))[0]
    assert np.shares_memory(first, next(forward(xa, cfg, 1, rep.u, reuse=True))[0])  # the pool's array, again
    workspace.release()


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_draws_and_embeddings_written_into_given_arrays_are_the_same_bits(method):
    rep = Representation(7, 20, method)
    size = rep.block_size()
    cfg = make_config(None, norm="l2", alpha=0.2, embedding="normalized")
    for start, stop in [(0, size), (3, 2 * size + 5), (size, size + 1)]:  # whole blocks, parts of blocks
        fresh = draw_range(rep, (2, 9), start, stop)
        given = draw_range(rep, (2, 9), start, stop, out=np.full((stop - start, rep.m, rep.dim), np.nan))
        assert np.array_equal(fresh, given)
        out = np.full((stop - start, rep.n, rep.dim), np.nan)
        assert np.array_equal(embed(fresh, cfg, 20), embed(fresh, cfg, 20, out=out))
    with pytest.raises(ValueError, match="out must be a C-contiguous float64 array of shape"):
        draw_range(rep, 1, 0, 3, out=np.zeros((2, rep.m, rep.dim)))


def test_each_thread_has_its_own_buffers():
    mine = workspace.buffer("t", (3, 4))
    seen = []
    worker = threading.Thread(target=lambda: seen.append(workspace.buffer("t", (3, 4))))
    worker.start()
    worker.join()
    assert not np.shares_memory(mine, seen[0])
    assert np.shares_memory(workspace.buffer("t", (2, 2)), mine)  # a smaller request is a view of the same array
    workspace.release()
    assert not np.shares_memory(workspace.buffer("t", (3, 4)), mine)
    workspace.release()


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_randoms_counts_what_a_draw_fills(method):
    """Representation.randoms (quoted by the benchmark's table) is the number of coordinates a draw fills with a
    random value: nonzero with probability 1, the Bartlett form's zeros above its diagonal left out."""
    rep = Representation(7, 20, method)
    raw = rep.draw(np.random.default_rng(0), 5)
    assert np.all(np.count_nonzero(raw.reshape(5, -1), axis=1) == rep.randoms)
    assert rep.randoms == (2 * 8 + 8 * 7 // 2 if method == "gram" else 8 * 20)
