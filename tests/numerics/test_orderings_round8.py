"""The ordering counts refuse scores with no entry (issue 86, item 5): (b, 0, 0) holds nothing whatever b, and a huge
b would otherwise allocate its (b,) counts before numpy says "array is too big"."""
from __future__ import annotations

import numpy as np
import pytest

from lnrecency.numerics.orderings import BACKENDS, ordering_counts


@pytest.mark.parametrize("b", [1, 10 ** 15])
@pytest.mark.parametrize("backend", BACKENDS)
def test_an_empty_last_axis_is_refused_by_name(b, backend):
    s = np.lib.stride_tricks.as_strided(np.empty(0), shape=(b, 0, 0), strides=(0, 0, 0))
    with pytest.raises(ValueError, match=r"s must hold at least one score \(n >= 1\)"):
        ordering_counts(s, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_broadcast_view_of_huge_b_is_refused_before_its_counts_exist(backend):
    s = np.lib.stride_tricks.as_strided(np.zeros(1), shape=(2 ** 40, 2, 2), strides=(0, 0, 0))
    with pytest.raises(ValueError, match=r"b = 1099511627776 draws: .* GiB .* pass the draws in chunks"):
        ordering_counts(s, backend=backend)
    assert ordering_counts(np.zeros((3, 2, 2)), backend=backend)[1].tolist() == [0, 0, 0]  # a small b still runs
