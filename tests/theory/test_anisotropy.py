"""theory.anisotropy: the batched scan is the one-at-a-time jets; its derivative is mpmath's; a gap that does not
depend on alpha has no roots (rounding is not a sign change)."""
import numpy as np
import pytest

from lnrecency.model.config import make_config
from lnrecency.theory import anisotropy
from lnrecency.theory.limit import limit_scores

LN = make_config(norm="layernorm", residual=True, gamma=0.3, lam=8.0)


@pytest.mark.parametrize("measure", anisotropy.MEASURES)
def test_scan_matches_one_alpha_at_a_time(measure):
    gaps, slopes = anisotropy.scan_gaps(8, LN, measure)
    one = np.array([anisotropy.gap_and_slope(8, LN, measure, a) for a in anisotropy.SCAN[::20]])
    # the same operations batched: they can differ only in the summation order of the matrix products. Higham's bound
    # for one product of length n is n eps times the sum of |terms|; the recursion's 2 layers take 4 products each
    # (Gram, softmax weights, output, residual) and the jets' derivative 2 per product: 16 n eps of the largest
    # |value| per row, with a factor 4 for the quotient rule of the relative and spread measures
    bound = 4 * 16 * 8 * np.finfo(float).eps
    for got, ref in ((gaps[::20], one[:, 0]), (slopes[::20], one[:, 1])):
        assert np.max(np.abs(got - ref)) <= bound * np.max(np.abs(ref))
    # and the bound tells apart the neighbouring alpha's values (the batch read one row off would fail)
    assert np.max(np.abs(slopes[1::20] - one[:, 1])) > bound * np.max(np.abs(one[:, 1]))


def test_slope_is_the_derivative_of_the_limit():
    # central difference of the float64 limit at alpha = 0.3 (step 1e-5: error ~1e-10, far below the slope)
    def gap(a):
        row = limit_scores(8, 2, config=LN.replace(alpha=a))[1, 7]
        return row[6] - row[0]

    h = 1e-5
    diff = (gap(0.3 + h) - gap(0.3 - h)) / (2 * h)
    _, slope = anisotropy.gap_and_slope(8, LN, "absolute", 0.3)
    assert abs(slope - diff) < 1e-7 * (1 + abs(slope))
    # and a wrong derivative (the measure's other sign convention) is told apart
    assert abs(-slope - diff) > 1e-3


def test_constant_gap_has_no_roots():
    # no normalisation, with the residual: row n's gap is 0 up to rounding at every alpha; before, rounding's
    # sign changes were taken for roots (and one bracket failed inside scipy)
    flat = make_config(norm="none", residual=True)
    for measure in anisotropy.MEASURES:
        got = anisotropy.decide_alpha(16, flat, measure)
        assert got.slope_roots == () and got.amplified == () and got.slope_sign == 0


def test_scan_arguments_are_refused_with_their_name():
    for n, measure, match in ((float("nan"), "absolute", "n must be"), (True, "absolute", "n must be"),
                              ("8", "absolute", "n must be"), (8, "spred", "measure must be")):
        with pytest.raises(ValueError, match=match):
            anisotropy.scan_gaps(n, LN, measure)
    with pytest.raises(MemoryError, match="use a smaller n"):
        anisotropy.decide_alpha(10**7, LN)
