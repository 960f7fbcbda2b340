"""The authors' conventions as presets (lnrecency.model.authors_presets): a direct simulation written in their
convention (our own numpy transcription of their notebooks, below) agrees in distribution with the preset
at small d; a wrong mapping is rejected by the same tests; RP agrees with a brute-force count and with
values printed in the authors' published figure.

Tests: two-sample Kolmogorov-Smirnov at level PER_COMPARISON per statistic (asymptotic p-value, registered
on the normal basis) and mean checks |MC_a - MC_b| <= k sqrt(SE_a^2 + SE_b^2) with k two-sided at
PER_COMPARISON, registered.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from lnrecency.experiments.authors.catalogue import printed_rp
from lnrecency.experiments.authors.theory_columns import authors_h, limit_h
from lnrecency.inference.stats import PER_COMPARISON, family_k, register
from lnrecency.model.authors_presets import convention_record, preset
from lnrecency.model.config import ModelConfig
from lnrecency.numerics import sample_instances, simulate_scores

SAMPLES = 20000


def _causal_softmax(a):
    n = a.shape[-1]
    a = np.where(np.tril(np.ones((n, n), bool)), a, -np.inf)
    a = a - a.max(axis=-1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(axis=-1, keepdims=True)


def _layernorm(x, eps=1e-12):  # torch.nn.LayerNorm without affine: biased variance
    mu = x.mean(-1, keepdims=True)
    return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + eps)


def authors_v2_scores(alpha, layernorm, residual, d, n, layers, samples, seed):
    """concept/simulation.ipynb (starmpcc/layernorm_recency_bias): run_layers + SimpleResModel."""
    rng = np.random.default_rng(seed)
    l = math.sqrt(alpha / (1 - alpha))
    out = (rng.standard_normal((samples, n, d)) + l * rng.standard_normal((samples, 1, d))) / math.sqrt(d)
    scores = []
    for _ in range(layers):
        hidden = _layernorm(out) if layernorm else out
        attn = hidden @ hidden.swapaxes(1, 2) / math.sqrt(d)
        scores.append(attn)
        new = _causal_softmax(attn) @ hidden
        out = new + out if residual else new
    return np.stack(scores, axis=1)  # (samples, layers, n, n)


def authors_v1_scores(alpha, layernorm, d, n, layers, samples, seed):
    """concept/simulation.ipynb (starmpcc/causal_mask_encodes_positional): unit-norm tokens, always residual."""
    rng = np.random.default_rng(seed)
    l = math.sqrt(alpha / (1 - alpha))
    v = rng.standard_normal((samples, n, d)) + l * rng.standard_normal((samples, 1, d))
    out = v / np.linalg.norm(v, axis=-1, keepdims=True)
    scores = []
    for _ in range(layers):
        hidden = _layernorm(out) if layernorm else out / (np.linalg.norm(out, axis=-1, keepdims=True) + 1e-12)
        attn = hidden @ hidden.swapaxes(1, 2)
        if layernorm:
            attn = attn / math.sqrt(d)
        scores.append(attn)
        out = _causal_softmax(attn) @ hidden + out
    return np.stack(scores, axis=1)


def _statistics(s):
    return {"S2_43": s[:, 1, 3, 2], "S2_42-S2_41": s[:, 1, 3, 1] - s[:, 1, 3, 0], "S3_54": s[:, 2, 4, 3]}


CASES = [
    ("authors-v2", dict(norm="layernorm", residual=True, alpha=0.5), 8),
    ("authors-v2", dict(norm="layernorm", residual=False, alpha=0.3), 8),
    ("authors-v2", dict(norm="none", residual=True, alpha=0.5), 8),
    ("authors-v2", dict(norm="none", residual=False, alpha=0.0), 16),
    ("authors-v1", dict(norm="layernorm", residual=True, alpha=0.4), 8),
    ("authors-v1", dict(norm="none", residual=True, alpha=0.2), 8),
]


def _theirs(conv, kw, d, seed):
    if conv == "authors-v2":
        return authors_v2_scores(kw["alpha"], kw["norm"] == "layernorm", kw["residual"], d, 5, 3, SAMPLES, seed)
    return authors_v1_scores(kw["alpha"], kw["norm"] == "layernorm", d, 5, 3, SAMPLES, seed)


def _pvalues(theirs, cfg, d, seed):
    ours = sample_instances(5, 3, d, SAMPLES, seed=seed, method="direct", config=cfg).scores
    a, b = _statistics(theirs), _statistics(ours)
    return {k: stats.ks_2samp(a[k], b[k]).pvalue for k in a}


@pytest.mark.parametrize("conv, kw, d", CASES)
def test_preset_equals_authors_simulation_in_distribution(conv, kw, d):
    register(f"tests/conventions KS {conv} {sorted(kw.items())} d={d}", 3, rate=PER_COMPARISON)
    cfg = preset(conv, d=d, **kw)
    p = _pvalues(_theirs(conv, kw, d, 1), cfg, d, (2, d))
    assert min(p.values()) > PER_COMPARISON, p


@pytest.mark.parametrize("wrong", [
    # v2 LayerNorm + residual with the residual weight sqrt(d) (forgetting the token scale 1/(1 - alpha))
    ("authors-v2", dict(norm="layernorm", residual=True, alpha=0.5), 8,
     lambda c, d: c.replace(gamma=math.sqrt(d))),
    # v2 without LayerNorm with lam = 1/sqrt(d) (forgetting the factor 1/(1 - alpha))
    ("authors-v2", dict(norm="none", residual=True, alpha=0.5), 8, lambda c, d: c.replace(lam=1 / math.sqrt(d))),
    # v1 LayerNorm with residual weight 1 (the closed form's, not the simulation's)
    ("authors-v1", dict(norm="layernorm", residual=True, alpha=0.4), 8, lambda c, d: c.replace(gamma=1.0)),
])
def test_a_wrong_mapping_is_rejected(wrong):
    conv, kw, d, spoil = wrong
    p = _pvalues(_theirs(conv, kw, d, 3), spoil(preset(conv, d=d, **kw), d), d, (4, d))
    assert min(p.values()) < PER_COMPARISON, p


def test_record_states_the_equivalent_configuration():
    rec = convention_record("authors-v2", norm="layernorm", residual=True, alpha=0.5, d=64)
    assert rec["equivalent_config"]["lam"] == 8.0
    assert rec["equivalent_config"]["gamma"] == pytest.approx(math.sqrt(32))
    assert rec["authors_setting"]["sequence_length"] == 10
    with pytest.raises(ValueError, match="alpha"):
        preset("authors-v2", norm="layernorm", residual=False, alpha=1.0, d=16)
    with pytest.raises(ValueError, match="norm"):
        preset("authors-v2", norm="l2", residual=False, alpha=0.0, d=16)


def _rp_brute(scores):
    """Per draw: the fraction of triples j < k < i with S_ik > S_ij (1-indexed), by plain loops."""
    n = scores.shape[-1]
    trip = [(i, j, k) for i in range(n) for k in range(i) for j in range(k)]
    return np.mean([scores[..., i, k] > scores[..., i, j] for i, j, k in trip], axis=0)


def test_rp_equals_brute_force_count():
    cfg = preset("authors-v2", norm="layernorm", residual=False, alpha=0.5, d=16)
    sim = simulate_scores(7, 2, 16, 3000, seed=9, method="gram", config=cfg)
    inst = sample_instances(7, 2, 16, 3000, seed=9, method="gram", config=cfg)
    for layer in (1, 2):
        per_draw = _rp_brute(inst.scores[:, layer - 1])
        est = sim.recency_probability(layer)
        assert est.mean == pytest.approx(per_draw.mean(), abs=1e-12)
        assert est.stderr == pytest.approx(per_draw.std(ddof=1) / math.sqrt(per_draw.size), rel=1e-9)
    # the honest SE exceeds the binomial one that treats the 35 triples of a draw as independent (by 1.7x
    # here: the triples of one draw are positively correlated)
    p = per_draw.mean()
    assert est.stderr > 1.5 * math.sqrt(p * (1 - p) / (per_draw.size * 35))


# RP printed on every panel of the authors' five simulation figures (lnrecency/data/authors_rp.json: the text
# "RP=..." of each panel of figures/*.pdf in starmpcc/layernorm_recency_bias, 4 decimals, B = 10^7 draws).
PRINTED = printed_rp()
RP_SAMPLES = 20000


def _compare(rows, k):
    """Per panel: |RP_ours - RP_printed| <= k sqrt(SE^2 + SE_theirs^2) + 5e-5 (rounding to 4 decimals);
    SE_theirs = our per-draw spread scaled to their 10^7 draws. Returns the failing panels."""
    bad = []
    for r in rows:
        theirs = r["RP SE"] * math.sqrt(RP_SAMPLES / 1e7)
        if abs(r["RP"] - r["RP printed"]) > k * math.hypot(r["RP SE"], theirs) + 5e-5:
            bad.append(r)
    return bad


def _panels(monkeypatch=None, spoil=None, table=False):
    from lnrecency.experiments.authors import outputs, panels

    if spoil is not None:
        real = panels.panel_config
        monkeypatch.setattr(panels, "panel_config", lambda row, d: spoil(real(row, d), row, d))
    figs, runs = panels.run_panels("all", samples=RP_SAMPLES, seed=7, progress=False)
    t = outputs.panel_table(figs, runs)
    rows = [dict(zip(t.columns, r)) for r in t.rows]
    for f, printed in PRINTED.items():
        assert [r["RP printed"] for r in rows if r["authors_file"] == f] == printed, f
    return (rows, t) if table else rows


@pytest.mark.slow  # 20 s or more (the marker's definition, pyproject.toml)
def test_rp_agrees_with_every_panel_the_authors_printed():
    """All 84 panels of the five figures, in the authors-v2 preset (gram sampler). The same runs count how
    many of the printed values each theory predicts (no draw enters a theory, only the tolerance)."""
    from lnrecency.experiments.authors.outputs import theory_count

    rows, table = _panels(table=True)
    assert len(rows) == sum(map(len, PRINTED.values())) == 84
    # one family-wise decision (Bonferroni over the panels: the layers of one run share its draws)
    k = register("tests/conventions: RP vs the authors' 84 printed panels", len(rows), rate=PER_COMPARISON,
                 family=True)
    assert _compare(rows, k) == []
    _, counts = theory_count(table)
    # measured (seed 7, 20000 draws for the tolerance): limit 29, first order 37, Edgeworth 45 of 84; the
    # layer-1 panels (RP = 1/2 by exchangeability) are 28 of them. The skewness term must not lose any.
    assert counts["limit"] < counts["first order"] < counts["Edgeworth"]


def test_rp_comparison_rejects_a_wrong_residual_weight():
    """The same comparison with the residual weight sqrt(d) (the token scale 1/(1 - alpha) forgotten) fails on the
    residual panels with alpha > 0. Only the residual panels are simulated again: the wrong weight leaves every
    other panel's configuration, seed and draws as in the acceptance test above, which passes them; the
    comparison's k is the acceptance test's (84 panels)."""
    import itertools

    from lnrecency.experiments.authors import panels
    from lnrecency.experiments.authors.catalogue import LAYERS, HeatmapFigure, run_seed

    sims, rows = {}, []
    for f in panels.select_figures("all", "authors-v2"):
        if not isinstance(f, HeatmapFigure):
            continue
        for q, (row, d, layer) in enumerate(itertools.product(f.rows, f.dims, f.layers)):  # panel_table's order
            if not row.residual:
                continue
            if (row, d) not in sims:
                cfg = panels.panel_config(row, d).replace(gamma=math.sqrt(d))
                sims[(row, d)] = simulate_scores(row.n, LAYERS, d, RP_SAMPLES, seed=run_seed(7, row, d),
                                                 method="gram", config=cfg)
            rp = sims[(row, d)].recency_probability(layer)
            rows.append({"RP": rp.mean, "RP SE": rp.stderr, "RP printed": PRINTED[f.file][q], "alpha": row.alpha,
                         "residual": True})
    assert {r["alpha"] > 0 for r in rows} == {True, False}  # both kinds of residual panel are there
    bad = _compare(rows, family_k(sum(map(len, PRINTED.values()))))  # the acceptance test's k
    assert bad and all(r["alpha"] > 0 for r in bad)


def test_authors_h_curve_is_our_limit_with_residual_weight_one():
    j = np.arange(1, 11)
    for alpha in (0.0, 0.4, 0.8):
        for r in (0, 1):
            ours = limit_h(10, ModelConfig(norm="layernorm", residual=bool(r), lam=8.0, alpha=alpha))
            np.testing.assert_allclose(authors_h(j, alpha, r), ours, rtol=1e-12)  # float64 rounding
        # ... and not the residual weight of their simulation
        assert np.max(np.abs(authors_h(j, alpha, 1) - limit_h(10, ModelConfig(norm="layernorm", residual=True, lam=8.0,
                                                                              alpha=alpha,
                                                                           gamma=math.sqrt(64 * (1 - alpha)))))) > 0.1


def test_cli_json_states_the_convention_and_rp(capsys):
    from lnrecency.cli.app import main

    assert main(["simulate", "--convention", "authors-v2", "--alpha", "0.5", "--d", "16", "--n", "10",
                 "--layers", "2", "--samples", "2000", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["convention"]["equivalent_config"] == out["config"]
    assert out["config"]["lam"] == 4.0 and out["config"]["norm"] == "layernorm"
    rp = out["recency_probability"]
    assert [r["layer"] for r in rp] == [1, 2] and all(r["stderr"] > 0 for r in rp)
    for cmd in (["limit", "--n", "6"], ["finite-width", "--n", "5", "--layers", "2"],
                ["bias", "--layer", "2", "--n", "6"], ["boundary", "--layer", "2", "--n-max", "12"]):
        assert main([*cmd, "--convention", "authors-v1", "--norm", "none", "--alpha", "0.2", "--d", "64",
                     "--json"]) == 0
        rec = json.loads(capsys.readouterr().out)["convention"]
        assert rec["equivalent_config"]["norm"] == "l2" and rec["equivalent_config"]["residual"] is True


@pytest.mark.parametrize("argv, words", [
    (["limit", "--convention", "authors-v2"], ["--d"]),
    (["limit", "--convention", "authors-v2", "--d", "16", "--lam", "2"], ["--lam 2"]),
    (["simulate", "--convention", "authors-v2", "--d", "16", "--norm", "l2"], ["norm", "l2"]),
    (["simulate", "--convention", "authors-v2", "--d", "16", "--alpha", "1"], ["alpha"]),
    (["limit", "--ln-scaling"], ["--ln-scaling", "authors-v1"]),
])
def test_cli_refusals(capsys, argv, words):
    from lnrecency.cli.app import main

    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error:" in err
    for w in words:
        assert w in err
