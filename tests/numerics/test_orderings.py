"""The ordering counts (numerics/orderings.py): both backends against a brute-force count written here from the
definitions, on continuous draws and on planted ties; a wrong definition is told apart by the same check."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

from lnrecency.numerics.orderings import BACKENDS, active_backend, ordering_counts


def brute_force(s: np.ndarray, strict_recency: bool = True, greater_op=np.greater):
    """greater[i, j, k] = #{draws: S_ij > S_ik} (j, k <= i) and per draw #{j < k < i: S_ik > S_ij}, by loops."""
    b, n = s.shape[0], s.shape[1]
    greater = np.zeros((n, n, n), dtype=np.int64)
    recent = np.zeros(b, dtype=np.int64)
    for t, i in itertools.product(range(b), range(n)):
        for j, k in itertools.product(range(i + 1), repeat=2):
            if j != k:
                greater[i, j, k] += bool(greater_op(s[t, i, j], s[t, i, k]))
        top = i if strict_recency else i + 1
        for j, k in itertools.combinations(range(top), 2):
            recent[t] += bool(s[t, i, k] > s[t, i, j])
    return greater, recent


def available():
    out = ["numpy"]
    try:
        from lnrecency.numerics import _orderings  # noqa: F401
        out.append("c")
    except ImportError:
        pass
    return out


def planted(seed: int, b: int = 23, n: int = 7) -> np.ndarray:
    """Masked scores with exact ties: values on a coarse grid, and one row constant in every draw."""
    rng = np.random.default_rng(seed)
    s = np.tril(rng.integers(-2, 3, size=(b, n, n)).astype(float) / 4)
    s[:, 4, :5] = 0.5
    return s


@pytest.mark.parametrize("backend", available())
@pytest.mark.parametrize("kind", ["continuous", "ties"])
def test_counts_equal_the_definition(backend, kind):
    s = np.tril(np.random.default_rng(3).standard_normal((37, 9, 9))) if kind == "continuous" else planted(4)
    g, r = ordering_counts(s, backend=backend)
    want_g, want_r = brute_force(s)
    np.testing.assert_array_equal(g, want_g)
    np.testing.assert_array_equal(r, want_r)


@pytest.mark.parametrize("backend", available())
def test_the_check_rejects_a_wrong_definition(backend):
    """The same comparison tells the counts apart from two plausible mistakes: >= for > (ties counted as
    greater), and triples that let the key reach the query (k <= i)."""
    s = planted(5)
    g, r = ordering_counts(s, backend=backend)
    wrong_g, _ = brute_force(s, greater_op=np.greater_equal)
    _, wrong_r = brute_force(s, strict_recency=False)
    assert not np.array_equal(g, wrong_g)
    assert not np.array_equal(r, wrong_r)


def test_backends_give_the_same_integers_and_add_into_a_given_array():
    s = np.tril(np.random.default_rng(6).standard_normal((181, 13, 13)))
    results = [ordering_counts(s, backend=b) for b in available()]
    for g, r in results[1:]:
        np.testing.assert_array_equal(g, results[0][0])
        np.testing.assert_array_equal(r, results[0][1])
    start = np.full((13, 13, 13), 5, dtype=np.int64)
    g, _ = ordering_counts(s, greater=start)
    assert g is start
    np.testing.assert_array_equal(g, results[0][0] + 5)
    assert active_backend() in BACKENDS


def test_bad_arguments_are_refused():
    s = np.zeros((2, 3, 3))
    with pytest.raises(ValueError, match="backend must be one of"):
        ordering_counts(s, backend="gpu")
    with pytest.raises(ValueError, match="greater must be a C-contiguous int64"):
        ordering_counts(s, greater=np.zeros((3, 3, 3)))


def test_the_extension_is_built_where_a_compiler_is():
    """CI installs with gcc and the Python headers: the compiled counts must be there, or every run there
    would silently take the several times slower numpy path."""
    import shutil
    import sysconfig

    if shutil.which("gcc") is None or not sysconfig.get_paths().get("include"):
        pytest.skip("no C compiler here: the numpy counts are the designed fallback")
    assert "c" in available()


@pytest.mark.parametrize("backend", available())
def test_the_fused_pass_equals_its_definition(backend):
    """accumulate: the counts exactly, and sum_b d_ij, sum_b d_ij d_ik (upper halves) to rounding, against
    numpy written here from the definition; mirror fills the lower halves from the upper ones only."""
    from lnrecency.numerics.orderings import accumulate, mirror

    rng = np.random.default_rng(8)
    b, n = 41, 9
    s = np.tril(rng.standard_normal((b, n, n)) + 2.0)
    ref = np.tril(rng.standard_normal((n, n)))
    sum1, cross = np.zeros((n, n)), np.zeros((n, n, n))
    greater, recent = np.zeros((n, n, n), dtype=np.int64), np.zeros(b, dtype=np.int64)
    accumulate(s, ref, sum1, cross, greater, recent, backend=backend)
    dev = s - ref
    lower = np.tril(np.ones((n, n), dtype=bool))
    # two summation orders of b = 41 terms of size ~3: |difference| <= b eps max|term| ~ 3e-14 absolute, far
    # below the 1e-12 relative bound on sums of size ~100 (sum1) and the 1e-11 / 1e-12 bounds on cross moments
    np.testing.assert_allclose(sum1[lower], dev.sum(0)[lower], rtol=1e-12)
    want = np.einsum("bij,bik->ijk", dev, dev)
    for i in range(n):
        got = mirror(cross)[i, : i + 1, : i + 1]
        np.testing.assert_allclose(got, want[i, : i + 1, : i + 1], rtol=1e-11, atol=1e-12)
        assert np.all(np.tril(cross[i], -1) == 0)  # only the upper halves are written
    want_g, want_r = brute_force(s)
    np.testing.assert_array_equal(greater, want_g)
    np.testing.assert_array_equal(recent, want_r)
    garbage = cross + np.tril(np.full((n, n), 7.0), -1)  # whatever the lower halves hold
    np.testing.assert_array_equal(mirror(garbage), mirror(cross))
    assert not np.allclose(garbage + garbage.swapaxes(-1, -2), mirror(cross))  # a naive mirror would not do


@pytest.mark.parametrize("b", [3, 8, 41])
@pytest.mark.parametrize("wide", ["avx512", "portable"])
def test_each_compiled_path_counts_the_definition(b, wide, monkeypatch):
    """The AVX-512 counts (8 draws a comparison, a masked tail for b not a multiple of 8) and the portable loops
    (LNRECENCY_NO_AVX512 set) give the brute-force integers, ties included; on a CPU without AVX-512 both runs take
    the portable loops."""
    if "c" not in available():
        pytest.skip("no compiled extension here")
    from lnrecency.numerics.orderings import accumulate

    if wide == "portable":
        monkeypatch.setenv("LNRECENCY_NO_AVX512", "1")
    s = planted(9, b=b, n=7)
    g, r = ordering_counts(s, backend="c")
    want_g, want_r = brute_force(s)
    np.testing.assert_array_equal(g, want_g)
    np.testing.assert_array_equal(r, want_r)
    greater, recent = np.zeros((7, 7, 7), dtype=np.int64), np.zeros(b, dtype=np.int64)
    accumulate(s, np.zeros((7, 7)), np.zeros((7, 7)), np.zeros((7, 7, 7)), greater, recent, backend="c")
    np.testing.assert_array_equal(greater, want_g)
    np.testing.assert_array_equal(recent, want_r)


@pytest.mark.parametrize("b", [1, 4, 13])
def test_the_compiled_row_moments_add_in_draw_order(b):
    """The compiled pass takes four draws a sweep over a row's block of cross moments, but every element must
    still add its draws' products one after another in draw order: the same bits as the plain loop written here
    (float64 scalars, no fused multiply-add). A pass that summed the draws in another order (partial sums per
    lane, a tree) would differ in the last bits and fail."""
    if "c" not in available():
        pytest.skip("no compiled extension here")
    from lnrecency.numerics.orderings import accumulate

    rng = np.random.default_rng(12)
    n = 6
    s = np.tril(rng.standard_normal((b, n, n)) * np.exp(rng.uniform(-3, 3, size=(b, n, n))))
    ref = np.tril(rng.standard_normal((n, n)))
    sum1, cross = np.zeros((n, n)), np.zeros((n, n, n))
    accumulate(s, ref, sum1, cross, np.zeros((n, n, n), dtype=np.int64), np.zeros(b, dtype=np.int64), backend="c")
    want_sum, want_cross = np.zeros((n, n)), np.zeros((n, n, n))
    for t in range(b):
        for i in range(n):
            d = [float(s[t, i, j]) - float(ref[i, j]) for j in range(i + 1)]
            for j in range(i + 1):
                want_sum[i, j] = float(want_sum[i, j]) + d[j]
                for k in range(j, i + 1):
                    want_cross[i, j, k] = float(want_cross[i, j, k]) + d[j] * d[k]
    assert np.array_equal(sum1, want_sum)
    upper = np.triu(np.ones((n, n), dtype=bool))
    for i in range(n):
        assert np.array_equal(cross[i][upper], want_cross[i][upper])
    if b >= 4:  # the check can tell: the same sums added pairwise differ in the last bits here
        shuffled = np.zeros((n, n, n))
        dev = s - ref
        for i in range(n):
            v = dev[:, i, : i + 1]
            shuffled[i, : i + 1, : i + 1] = (v[0::2].T @ v[0::2]) + (v[1::2].T @ v[1::2])
        assert not all(np.array_equal(shuffled[i][upper], want_cross[i][upper]) for i in range(n))


def test_the_extension_checks_every_size_product_for_overflow():
    """Issue 78, item 2: sizes whose byte counts wrap around a 64-bit integer (2^61 draws, n = 2^21), with buffers
    the wrapped products match, are refused with a ValueError naming the buffer, not a segfault (run in a child: the
    old module crashed with exit 139 on each, checked against it); a negative size likewise. The valid neighbour:
    b = 0 draws with empty buffers counts nothing."""
    import subprocess
    import sys

    path = pytest.importorskip("lnrecency.numerics._orderings").__file__
    code = (  # the extension alone, loaded from its file (not the package: no numpy, no scipy in the child)
        "import importlib.util as u\n"
        f"spec = u.spec_from_file_location('_orderings', {path!r})\n"
        "o = u.module_from_spec(spec)\nspec.loader.exec_module(o)\n"
        "e = bytearray\n"  # the calls that crashed the old module (exit 139), buffers sized to the wrapped products
        "for call in (lambda: o.counts(b'', 2**61, 2, e(64), e(), e()), lambda: o.counts(b'', 0, 2**21, e(), e(), e()),"
        " lambda: o.accumulate(b'', 2**61, 2, bytes(32), e(32), e(64), e(64), e(), e()),"
        " lambda: o.accumulate(b'', 0, 2**21, b'', e(), e(), e(), e(), e()),"
        " lambda: o.counts(b'', -1, 2, e(), e(), e())):\n"
        "    try:\n        call()\n    except ValueError as exc:\n        print(exc)\n"
        "o.counts(b'', 0, 1, e(8), e(), e())\nprint('ok')\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr[-500:]
    lines = run.stdout.splitlines()
    assert lines[-1] == "ok" and len(lines) == 6, lines
    assert "counts: b=2305843009213693952, n=2: the size of s overflows" in lines[0]
    assert "the size of greater overflows" in lines[1] and "accumulate:" in lines[2] and "overflows" in lines[2]
    assert lines[3].startswith("accumulate: ")
    assert "b and n must be >= 0; got b=-1" in lines[4]


@pytest.mark.parametrize("backend", available())
def test_wrong_shapes_and_layouts_are_named(backend):
    """Issue 78, item 8: scores that are not (b, n, n), and a non-contiguous or read-only output, are refused by
    name before the extension is called; the valid neighbour counts."""
    from lnrecency.numerics.orderings import accumulate

    with pytest.raises(ValueError, match=r"s must be a real array of shape \(b, n, n\).*\(3, 4, 5\)"):
        ordering_counts(np.zeros((3, 4, 5)), backend=backend)
    b, n = 2, 3
    s = np.random.default_rng(0).standard_normal((b, n, n))
    out = dict(ref=np.zeros((n, n)), sum1=np.zeros((n, n)), cross=np.zeros((n, n, n)),
               greater=np.zeros((n, n, n), dtype=np.int64), recent=np.zeros(b, dtype=np.int64))
    bad = dict(out, sum1=np.zeros((n, 2 * n))[:, ::2])
    with pytest.raises(ValueError, match=r"sum1 must be a C-contiguous float64 array of shape \(3, 3\), writeable; "
                                         r"got float64 \(3, 3\), not C-contiguous"):
        accumulate(s, backend=backend, **bad)
    accumulate(s, backend=backend, **out)
    assert out["greater"].sum() == b * (1 + 3)  # each draw: rows 1 and 2 order 1 and 3 pairs (no ties)
