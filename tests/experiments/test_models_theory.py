"""The trained-decoder world checked against the parameter-free one, with calibrated tolerances.

1. The identity decoder (W = I, lnrecency.experiments.decoders) against an *independent* Monte Carlo of the
parameter-free
   stack (lnrecency.numerics, the d-independent Gram sampler, another seed): every expected score agrees
   within k standard errors of the difference (normal basis, k from the suite's budget); a decoder with a
   wrong inverse temperature is rejected by the same test.
2. The random-W theory at initialisation (lnrecency.experiments.studies.thesis): E_W S_ij^2 = s^4 |y_i|^2 |y_j|^2,
checked by
   the mean over independent (seed, head) units of R = sum S^2 / (s^4 sum |y_i|^2 |y_j|^2) within k SE of 1; the
   same check with a wrong s is rejected.
3. The probe's phase test on an exact null (layer 1 of the identity decoder, alpha = 0: the tokens are
   exchangeable, so E S_ij is the same for every j < i at every d): its false-alarm rate is at most the rate it
   is run at (Clopper-Pearson).
"""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from lnrecency.experiments.decoders.decoder import build  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.probes.probe import ProbeSettings
from lnrecency.experiments.probes.probe_decoder import probe_decoder  # noqa: E402
from lnrecency.inference.stats import BUDGET, clopper_pearson_interval, register  # noqa: E402
from lnrecency.model.config import ModelConfig  # noqa: E402
from lnrecency.numerics import simulate_scores  # noqa: E402

N, LAYERS, B = 6, 3, 3000
SETTINGS = [(ModelConfig(norm="layernorm"), 32), (ModelConfig(norm="l2", residual=True, gamma=0.5, alpha=0.3), 16),
            (ModelConfig(norm="none", lam=0.5), 64)]


def _z_identity_vs_mc(decoder_cfg: ModelConfig, mc_cfg: ModelConfig, d: int) -> np.ndarray:
    """z of (decoder mean - MC mean) for every S^(l)_ij (j <= i) with a positive SE."""
    model = build(DecoderConfig.identity_of(decoder_cfg, d=d, layers=LAYERS, n=N), 0)
    pr = probe_decoder(model, ProbeSettings(n=N, sequences=B, seed=101, chunk=500))
    sim = simulate_scores(N, LAYERS, d, B, seed=202, method="gram", config=mc_cfg)
    got = np.stack([lp.heads[0].mean_logit for lp in pr.layers])
    se = np.stack([lp.heads[0].mean_logit_se for lp in pr.layers])
    tot = np.sqrt(se ** 2 + sim.stderr ** 2)
    live = np.isfinite(tot) & (tot > 1e-12)  # S_ii = lam exactly under a normalisation: no randomness
    return (got - sim.mean)[live] / tot[live]


@pytest.mark.parametrize("mc, d", SETTINGS)
def test_identity_decoder_agrees_with_independent_monte_carlo(mc, d):
    z = _z_identity_vs_mc(mc, mc, d)
    k = register(f"identity decoder vs MC [{mc.label()}, d={d}]", z.size, sided=2, family=True)
    assert np.max(np.abs(z)) <= k, (np.max(np.abs(z)), k)


def test_a_wrong_identity_decoder_is_rejected():
    """The same test with the decoder at lam = 1.25 against the Monte Carlo at lam = 1 (LayerNorm, d = 32)."""
    mc, d = SETTINGS[0]
    z = _z_identity_vs_mc(mc.replace(lam=1.25), mc, d)
    with BUDGET.expecting_rejection():  # a miss is this test's risk, not a false alarm
        k = register("identity decoder vs MC [wrong lam]", z.size, sided=2, family=True)
    assert np.max(np.abs(z)) > k


def _ratios(norm: str, sigma_claimed: float, seeds=range(8)) -> np.ndarray:
    """(layer, unit) values of R for 2-layer attention-only decoders at initialisation (unit = seed x head)."""
    from lnrecency.experiments.studies.thesis import ThesisSettings, init_second_moment

    st = ThesisSettings(archs=("attn2",), norms=(norm,), probe_sequences=128)
    out = []
    for seed in seeds:
        model = build(st.decoder("attn2", norm), seed)
        model.eval()
        out.append(init_second_moment(model, st, sigma_claimed))
    return np.array(out).transpose(1, 0, 2).reshape(2, -1)


@pytest.mark.parametrize("norm", ["layernorm", "rmsnorm", "none"])
def test_init_second_moment_law(norm):
    """E_W[R] = 1 exactly for Gaussian W independent of the layer input (the thesis module's derivation).
    The mean of 32 independent units (8 seeds x 4 heads) is compared with 1 at k SE (normal basis)."""
    r = _ratios(norm, 0.02)
    k = register(f"init E S^2 law [{norm}]", r.shape[0], sided=2, family=True)
    for layer in range(r.shape[0]):
        mean, se = r[layer].mean(), r[layer].std(ddof=1) / np.sqrt(r.shape[1])
        assert abs(mean - 1.0) <= k * se, (layer + 1, mean, se, k)


def test_init_second_moment_law_rejects_a_wrong_scale():
    """Claiming s = 0.022 (10% off; the prediction scales as s^4, so E R = 0.68) is rejected."""
    r = _ratios("layernorm", 0.022)
    with BUDGET.expecting_rejection():
        k = register("init E S^2 law [wrong s]", r.shape[0], sided=2, family=True)
    assert any(abs(r[q].mean() - 1.0) > k * r[q].std(ddof=1) / np.sqrt(r.shape[1]) for q in range(r.shape[0]))


def test_phase_test_false_alarm_rate_on_an_exact_null():
    """Layer 1, alpha = 0: every j < i has the same E S_ij. Run at rate 0.2 per layer, the test may call the
    layer non-flat in at most 20% of independent probes (Bonferroni makes it conservative); the 400 probes'
    Clopper-Pearson lower bound (at the suite's exact rate) must not exceed 0.2."""
    model = build(DecoderConfig.identity_of(ModelConfig(norm="layernorm"), d=16, layers=1, n=8), 0)
    runs = 400
    alarms = sum(probe_decoder(model, ProbeSettings(n=8, sequences=64, seed=s, rate=0.2, chunk=64)).layers[0].phase
                 != "flat" for s in range(runs))
    register("phase test false-alarm rate", 1, basis="exact")
    low, _ = clopper_pearson_interval(alarms, runs)
    assert low <= 0.2, (alarms, runs)
    assert alarms > 0  # the test does fire at this rate (it is not vacuous)
