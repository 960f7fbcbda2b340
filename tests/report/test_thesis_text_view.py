"""Issue 78, item 7: the report's thesis-text table from a cache whose runs' final held-out loss is null (a stored
NaN is refused, so a diverged run records none): the mean is over the runs that recorded one and says how many did
not, or reads "none recorded"; before, np.mean of None raised a TypeError and stopped `report --quick`."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from lnrecency.claims.trained.tt1_tt4_thesis_text import settings_for
from lnrecency.report.views.trained import tt1_tt4_thesis_text as view


def _runs(st, losses):
    layers = [{"layer": 1, "slope": 0.001}, {"layer": 2, "slope": 0.002}]
    return [{"arch": arch, "norm": norm, "seed": seed, "log": [{"step": 1, "heldout_loss": losses(norm, seed)}],
             "unigram": 6.2, "final": {"text": layers, "random": layers}, "trajectory": []}
            for arch in st.archs for norm in ("layernorm", "rmsnorm", "none") for seed in (0, 1, 2)]


@pytest.mark.parametrize("losses, layernorm_cell", [
    (lambda norm, seed: None if norm == "none" or seed == 0 else 4.0, "4.000 (1 of 3 runs without one)"),
    (lambda norm, seed: 4.0, "4.000"),  # the valid neighbour: every run recorded its loss
])
def test_a_null_final_loss_is_left_out_of_the_mean(monkeypatch, losses, layernorm_cell):
    st = settings_for(True)
    monkeypatch.setattr(view, "_runs", lambda data: _runs(st, losses))
    data = SimpleNamespace(settings=SimpleNamespace(quick=True), verdicts=lambda ids: {cid: [] for cid in ids})
    table = view.text_table(data)
    cells = {(row[0], row[1]): row[3] for row in table.rows}
    assert cells[(st.archs[0], "layernorm")] == layernorm_cell
    assert cells[(st.archs[0], "none")] == ("none recorded" if layernorm_cell != "4.000" else "4.000")
