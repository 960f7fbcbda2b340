"""The first token's read-out fitted in shape (issue 76, item 2): the fit recovers a planted line and a planted
within-row gain, and on a small attn2 decoder its level gain is plan v3's readout_gain, its BOS-path slope the path
decomposition's, and level = gain + intercept / mean coordinate (why a line through the origin overshoots)."""
from __future__ import annotations

import numpy as np
import pytest

from lnrecency.experiments.studies import v3_paths as vp

N = 10


def test_a_planted_line_and_a_planted_within_row_gain_are_recovered():
    rng = np.random.default_rng(5)
    c = rng.normal(1.0, 0.3, size=(4, N))
    read = np.tril(np.ones((N, N), dtype=bool), -1)
    read[:, 0] = False
    line = 0.7 - 2.5 * c[:, None, :] + np.zeros((4, N, N))
    fit = vp.affine_readout(c, line, read)
    assert fit["gain"] == pytest.approx(-2.5) and fit["intercept"] == pytest.approx(0.7)
    assert fit["r2"] == pytest.approx(1.0) and fit["within"] == pytest.approx(-2.5)
    assert fit["level"] == pytest.approx(-2.5 + 0.7 / fit["mean_coordinate"])  # the origin line is off by a / mean c
    rows = line + rng.normal(0, 3, size=(4, N, 1))  # each row its own offset: only the within-row gain stays
    fit = vp.affine_readout(c, rows, read)
    assert fit["within"] == pytest.approx(-2.5) and abs(fit["gain"] + 2.5) > 0.1 and fit["r2"] < 0.9


@pytest.mark.parametrize("norm", ["layernorm", "none"])
def test_on_a_decoder_the_fit_agrees_with_the_decomposition_and_the_level_gain(norm):
    pytest.importorskip("torch")
    from lnrecency.experiments.decoders.decoder import build
    from lnrecency.experiments.decoders.decoder_config import DecoderConfig

    cfg = DecoderConfig(vocab=30, d_model=16, n_heads=2, context=N, norm=norm, positions="none", init_std=0.3)
    l2 = vp.layer2(build(cfg, 7), np.random.default_rng(3).integers(0, 30, size=(6, N)))
    shape = vp.readout_shape(l2)
    assert shape["bos_path"] == pytest.approx(vp.decompose(l2)["paths"]["bos"]["slope"], abs=1e-12)
    assert shape["level"] == pytest.approx(vp.readout_gain(l2), rel=1e-12)
    assert shape["level"] - shape["gain"] == pytest.approx(shape["intercept"] / shape["mean_coordinate"], rel=1e-9)
    assert shape["predicted_gain"] == pytest.approx(shape["gain"] * shape["coordinate_slope"], rel=1e-12)
    assert 0.0 <= shape["r2"] <= 1.0


def test_the_shaped_theory_at_the_level_gain_is_plan_v3s_published_prediction():
    import json
    from pathlib import Path

    from lnrecency.experiments.studies.thesis_text_v3 import shaped_theory

    v3 = json.loads((Path(__file__).resolve().parents[2] / "docs" / "thesis_text_v3.json").read_text())
    cell, row = v3["theory"]["bos layernorm"], v3["runs"]["bos layernorm"][0]
    shape = {"level": row["readout_gain"], "gain": row["readout_gain"] + 0.5, "within": 0.0,
             "bos_path": row["paths"]["bos"]["slope"]}
    got = shaped_theory(shape, cell["b"], 64, "layernorm")
    assert got["level"] == pytest.approx(cell["predicted_per_seed"][0], rel=1e-12)
    assert got["level"] - got["gain"] == pytest.approx(-0.5 * cell["coordinate_slope"], rel=1e-9)
    assert got["within"] == pytest.approx(cell["parameter_free"], rel=1e-12)
