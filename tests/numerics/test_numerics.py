"""numerics.simulate_scores: reproducibility, chunking, layout, bad input, streaming moments, the limit."""
import math

import numpy as np
import pytest

from lnrecency.inference.stats import PER_COMPARISON, register
from lnrecency.model.config import ModelConfig
from lnrecency.numerics import Estimate, Proportion, estimate_memory, sample_instances, simulate_scores
from lnrecency.numerics.chunks import Accumulator, ChunkSummary, layer_moments
from lnrecency.theory.finite_width import finite_width

SMALL = dict(n=5, layers=3, d=12, samples=600)


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_same_seed_same_bytes_and_seed_matters(method):
    a = simulate_scores(**SMALL, seed=7, method=method)
    b = simulate_scores(**SMALL, seed=7, method=method)
    c = simulate_scores(**SMALL, seed=8, method=method)
    for name in ("mean", "stderr", "output_sq_norm_mean", "output_var_stderr", "cross_moments",
                 "greater_counts"):
        assert getattr(a, name).tobytes() == getattr(b, name).tobytes()
    assert not np.array_equal(a.mean[1], c.mean[1], equal_nan=True)


def test_progress_bar_quiet_off_terminal(capsys):
    simulate_scores(**SMALL, seed=0)  # pytest's captured stderr is not a terminal
    assert capsys.readouterr().err == ""
    simulate_scores(**SMALL, seed=0, progress=True)
    assert "simulate d=12" in capsys.readouterr().err


def test_worker_threads_do_not_change_a_byte():
    one = simulate_scores(**SMALL, seed=9, chunk=50, workers=1)
    three = simulate_scores(**SMALL, seed=9, chunk=50, workers=3)
    for name in ("mean", "stderr", "output_var_mean", "cross_moments", "greater_counts"):
        assert getattr(one, name).tobytes() == getattr(three, name).tobytes()


def _same_within_rounding(r, ref) -> None:
    """The same 600 draws summed in another order (chunks, or sub-batches of a pass): only float64 rounding differs.
    A sum of N = 600 terms has relative rounding error <= N * 2^-53 = 7e-14; 1e-12 leaves a margin. M2 (and the SE,
    the cross moments) loses up to mean^2 / var more digits to cancellation, hence 1e-9; atol covers S_ii (variance
    0). The ordering counts are integers: equal."""
    np.testing.assert_allclose(r.mean, ref.mean, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(r.stderr, ref.stderr, rtol=1e-9, atol=1e-14)
    np.testing.assert_allclose(r.cross_moments, ref.cross_moments, rtol=1e-9, atol=1e-12)
    np.testing.assert_array_equal(r.greater_counts, ref.greater_counts)


@pytest.mark.parametrize("method", ["direct", "gram"])
def test_chunk_invariance_within_rounding(method):
    ref = simulate_scores(**SMALL, seed=3, method=method, chunk=600)
    for chunk in (1, 7, 64):
        r = simulate_scores(**SMALL, seed=3, method=method, chunk=chunk)
        assert r.chunk == chunk
        _same_within_rounding(r, ref)


def test_the_forward_batch_rule():
    """Short sequences pass up to FORWARD_BATCH_MAX draws at once, long ones FORWARD_BATCH_MIN (the authors' n = 50
    at d = 64: what the fixed batch was); never more than FORWARD_BATCH_BYTES of working arrays above the minimum;
    monotone in n; the memory estimate counts the batch the rule sets."""
    from lnrecency.numerics import chunks
    from lnrecency.numerics.samplers import Representation

    assert chunks.forward_batch(5, 12) == chunks.FORWARD_BATCH_MAX
    assert chunks.forward_batch(50, 64) == chunks.FORWARD_BATCH_MIN == 32
    sizes = [chunks.forward_batch(n, Representation(n, 64, "gram").dim) for n in range(2, 80)]
    assert sizes == sorted(sizes, reverse=True) and len(set(sizes)) > 3
    for n in range(2, 80):
        dim = Representation(n, 64, "gram").dim
        b = chunks.forward_batch(n, dim)
        assert b == chunks.FORWARD_BATCH_MIN or b * chunks.forward_bytes(n, dim) <= chunks.FORWARD_BATCH_BYTES

    # the estimate counts the pass the rule sets: 512 draws at n = 5, against 32 with the rule pinned
    import lnrecency.numerics.simulate as simulate

    rule = estimate_memory(5, 3, 12, method="direct", chunk=600)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(simulate, "forward_batch", lambda n, dim: 32)
        pinned = estimate_memory(5, 3, 12, method="direct", chunk=600)
    assert rule - pinned == (512 - 32) * chunks.forward_bytes(5, 12)


@pytest.mark.parametrize("cv", ["none", "linear"])
def test_the_forward_batch_changes_only_rounding(cv, monkeypatch):
    """The same draws through the layers 32 at a time instead of the rule's 512: without a control variate (the
    moments summed per sub-batch) only float64 rounding differs (_same_within_rounding); with one (the moments
    taken over the whole chunk) not a byte: a draw's pass does not depend on the draws beside it."""
    from lnrecency.numerics import chunks

    kwargs = dict(SMALL, seed=4, chunk=600, control_variate=cv, norm="layernorm", residual=True, alpha=0.2)
    ref = simulate_scores(**kwargs)
    assert chunks.forward_batch(SMALL["n"], SMALL["d"]) == 512
    monkeypatch.setattr(chunks, "forward_batch", lambda n, dim: 32)
    r = simulate_scores(**kwargs)
    if cv != "none":
        for name in ("mean", "stderr", "cross_moments", "greater_counts"):
            assert getattr(r, name).tobytes() == getattr(ref, name).tobytes(), name
        return
    assert r.mean.tobytes() != ref.mean.tobytes()  # the sub-batches did change (else this test tests nothing)
    _same_within_rounding(r, ref)


def test_shapes_nan_layout_and_exact_diagonal():
    r = simulate_scores(**SMALL, seed=1, norm="l2", lam=2.5)
    assert r.mean.shape == r.stderr.shape == (3, 5, 5) and r.mean.dtype == np.float64
    upper = np.triu(np.ones((5, 5), bool), 1)
    assert np.isnan(r.mean[:, upper]).all() and np.isnan(r.stderr[:, upper]).all()
    assert np.isfinite(r.mean[:, ~upper]).all()
    np.testing.assert_allclose(np.diagonal(r.mean, axis1=1, axis2=2), 2.5, rtol=1e-14)  # S_ii = lam
    assert r.output_sq_norm_mean.shape == r.output_var_stderr.shape == (3, 5)
    assert isinstance(r.config, ModelConfig) and r.config.lam == 2.5 and r.samples == 600
    assert r.d == 12 and r.seed == 1 and r.method == "gram"  # the default, as on the command line


def test_config_argument_overrides_keywords():
    cfg = ModelConfig(norm="none", residual=True, gamma=0.5)
    r = simulate_scores(**SMALL, seed=1, config=cfg)
    assert r.config is cfg


def test_rmsnorm_is_l2_at_every_d():
    a = simulate_scores(**SMALL, seed=4, norm="l2")
    b = simulate_scores(**SMALL, seed=4, norm="rmsnorm")
    np.testing.assert_array_equal(a.mean, b.mean)


def test_layernorm_is_not_l2_at_finite_d():
    """Same draws: the layernorm and l2 means differ by far more than rounding at d = 12."""
    a = simulate_scores(**SMALL, seed=4, norm="l2")
    b = simulate_scores(**SMALL, seed=4, norm="layernorm")
    assert np.nanmax(np.abs(a.mean - b.mean)) > 1e-3


@pytest.mark.parametrize("kwargs, words", [
    (dict(d=1), ["d", "layernorm", ">= 2", "1"]),
    (dict(d=0, norm="l2"), ["d", "in [1, ", "0"]),
    (dict(samples=1), ["samples", "in [2, ", "1"]),
    (dict(chunk=0), ["chunk", ">= 1", "0"]),
    (dict(chunk=-3), ["chunk", "-3"]),
    (dict(n=0), ["n", "0"]),
    (dict(layers=0), ["layers"]),
    (dict(method="exact"), ["method", "'exact'", "'gram'"]),
    (dict(seed=-1), ["seed", "-1"]),
    (dict(seed=1.5), ["seed", "1.5"]),
    (dict(alpha=1.0), ["alpha", "[0, 1)"]),
    (dict(embedding="uniform"), ["embedding", "'uniform'"]),
    (dict(paired="yes"), ["paired"]),
    (dict(workers=0), ["workers", "0"]),
])
def test_bad_input_raises_value_error_naming_argument(kwargs, words):
    args = dict(n=4, layers=2, d=8, samples=10, seed=0)
    args.update(kwargs)
    with pytest.raises(ValueError) as info:
        simulate_scores(**args)
    for w in words:
        assert w in str(info.value)


def test_memory_refused_before_any_work():
    # paired accumulators alone: 16 * 4 * 400^3 bytes = 4 GB > the 1 GiB limit given here.
    with pytest.raises(MemoryError, match="paired=False"):
        simulate_scores(400, 4, 64, 10, seed=0, memory_limit=2**30)
    with pytest.raises(MemoryError, match="chunk=100000"):
        simulate_scores(50, 4, 64, 10, seed=0, chunk=100000, memory_limit=2**30)
    with pytest.raises(MemoryError, match="gram"):  # one direct sample at d = 10^9 is 400 GB
        simulate_scores(50, 2, 10**9, 10, seed=0, method="direct", paired=False)
    assert estimate_memory(50, 4, 10**9, method="gram") < 2**25  # the gram method does not grow with d


def test_streaming_moments_match_numpy_on_known_data():
    """Chan merging of means, SEs, row cross-moments and counts equals the one-pass numpy answer."""
    rng = np.random.default_rng(0)
    n, layers, total = 4, 1, 203
    data = np.tril(rng.normal(size=(total, n, n)) + 3.0)  # zeros above the diagonal, like forward()
    acc = Accumulator(n, layers, paired=True)
    zero = (np.zeros((1, n)), np.zeros((1, n)))
    for lo in range(0, total, 37):
        chunk = data[lo:lo + 37]
        mean, m2, cross, greater, recent = layer_moments(chunk, paired=True)
        rp = (recent[:, None] / 4.0).mean(0), ((recent[:, None] / 4.0 - (recent[:, None] / 4.0).mean(0)) ** 2).sum(0)
        acc.merge(ChunkSummary(len(chunk), mean[None], m2[None], zero, zero, cross[None], greater[None], rp))
    m = acc.scores
    np.testing.assert_allclose(m.mean[0], data.mean(0), rtol=1e-13)
    np.testing.assert_allclose(m.stderr()[0], data.std(0, ddof=1) / math.sqrt(total), rtol=1e-11, atol=1e-15)
    i, j, k = 3, 2, 0
    diff = data[:, i, j] - data[:, i, k]
    c = acc.cross_moments()[0, i]
    var = (c[j, j] + c[k, k] - 2 * c[j, k]) / (total - 1)
    np.testing.assert_allclose(var, diff.var(ddof=1), rtol=1e-11)
    assert acc.greater[0, i, j, k] == int(np.sum(diff > 0))
    # per-draw recency fraction over the 4 triples j < k < i <= 4 (0-based rows 2, 3): merged mean and SE
    per_draw = np.mean([data[:, r, b] > data[:, r, a] for r in range(4) for b in range(r) for a in range(b)], axis=0)
    np.testing.assert_allclose(acc.recency.mean[0], per_draw.mean(), rtol=1e-13)
    np.testing.assert_allclose(acc.recency.stderr()[0], per_draw.std(ddof=1) / math.sqrt(total), rtol=1e-11)


def test_paired_difference_and_proportion_from_instances():
    """paired_difference/prob_greater agree with the per-instance draws of sample_instances."""
    kw = dict(n=4, layers=2, d=10, samples=500, seed=5, method="gram", norm="layernorm")
    r = simulate_scores(**kw)
    inst = sample_instances(**kw)
    diff = inst.scores[:, 1, 3, 2] - inst.scores[:, 1, 3, 0]
    est = r.paired_difference(2, 4, 3, 1)
    assert isinstance(est, Estimate) and est.samples == 500
    np.testing.assert_allclose(est.mean, diff.mean(), rtol=1e-10)
    np.testing.assert_allclose(est.stderr, diff.std(ddof=1) / math.sqrt(500), rtol=1e-8)
    p = r.prob_greater(2, 4, 3, 1)
    assert isinstance(p, Proportion) and p.count == int(np.sum(diff > 0)) and p.samples == 500
    lo, hi = p.confidence_interval(0.95)
    assert lo <= p.estimate <= hi
    lo2, hi2 = p.confidence_interval(0.95, method="exact")
    assert lo2 <= p.estimate <= hi2
    np.testing.assert_allclose(r.output_sq_norm_mean, inst.output_sq_norm.mean(0), rtol=1e-10)


def test_paired_methods_need_paired_accumulators_and_valid_indices():
    r = simulate_scores(4, 2, 8, 20, seed=0, paired=False)
    with pytest.raises(ValueError, match="paired=True"):
        r.paired_difference(2, 4, 3, 1)
    with pytest.raises(ValueError, match="paired=True"):
        r.prob_greater(2, 4, 3, 1)
    r = simulate_scores(4, 2, 8, 20, seed=0)
    with pytest.raises(ValueError, match="k"):
        r.paired_difference(2, 3, 3, 4)  # k > i
    with pytest.raises(ValueError, match="layer"):
        r.prob_greater(3, 4, 3, 1)
    with pytest.raises(ValueError, match="differ"):
        r.paired_difference(2, 4, 2, 2)


def test_estimate_interval_and_zscore():
    e = Estimate(1.0, 0.1, 10**6)
    lo, hi = e.confidence_interval(0.95)
    assert lo == pytest.approx(1 - 0.196, abs=1e-4) and hi == pytest.approx(1 + 0.196, abs=1e-4)
    assert e.zscore(0.5) == pytest.approx(5.0)
    with pytest.raises(ValueError, match="level"):
        e.confidence_interval(1.5)


# Mean vs the first-order theory at large width with the d-independent sampler.
# Tolerance: K standard errors around limit + c/d, one family-wise decision per configuration at the
# two-sided rate PER_COMPARISON (Bonferroni over its 45 random entries: K = 5.6 each; registered in the
# suite's budget) (c from lnrecency.theory.finite_width), plus REMAINDER / d^2 for the O(1/d^2)
# remainder: its measured coefficient is < 20 on every configuration of proofs_check/test_finite_width.py,
# so REMAINDER = 1e3 is a 50x margin and REMAINDER / d^2 = 1e-9 at d = 10^6 (SE ~ 7e-6).
RATE, REMAINDER, D_LARGE = PER_COMPARISON, 1e3, 10**6
LARGE_CONFIGS = [dict(norm="layernorm"), dict(norm="l2", residual=True, alpha=0.2, lam=2.0,
                                             embedding="normalized")]


def _within(r, prediction, d, k):
    low = np.tril(np.ones(prediction.shape[1:], bool))
    dev = np.abs(r.mean - prediction)[:, low]
    return np.all(dev <= k * r.stderr[:, low] + REMAINDER / d ** 2)


@pytest.mark.parametrize("params", LARGE_CONFIGS)
def test_mean_matches_limit_at_large_d(params):
    r = simulate_scores(6, 3, D_LARGE, 20000, seed=11, method="gram", paired=False, **params)
    # only random entries are comparisons: under a normalisation the diagonal S_ii = lam is exact (SE at float
    # rounding), a deterministic check with no false-alarm risk
    low = np.tril(np.ones((6, 6), bool))
    random_entries = int((r.stderr[:, low] > 1e-12 * np.maximum(1.0, np.abs(r.mean[:, low]))).sum())
    assert random_entries == 3 * 15  # the 3 x 6 diagonal entries are the deterministic ones
    k = register(f"tests/mean-vs-limit d=1e6 {sorted(params.items())}", random_entries, rate=RATE, sided=2,
                 family=True)
    assert r.representation == "bartlett"
    fw = finite_width(6, 3, config=r.config)
    assert _within(r, fw.expected(D_LARGE), D_LARGE, k)
    # The same comparison rejects a wrong claim: a limit off by 2e-4 on one entry (the tolerance there
    # is about 5.6 * 7e-6) ...
    wrong = fw.expected(D_LARGE)
    wrong[1, 4, 2] += 2e-4
    assert not _within(r, wrong, D_LARGE, k)
    # ... and "E_d S equals the limit" (no 1/d term) at d = 64, where the O(1/d) bias is resolved.
    small = simulate_scores(6, 3, 64, 20000, seed=11, method="gram", paired=False, **params)
    assert not _within(small, fw.limit, math.inf, k)


def test_cli_simulate_prints_mean_and_stderr(capsys):
    import json

    from lnrecency.cli.app import main

    assert main(["simulate", "--n", "3", "--layers", "2", "--d", "16", "--samples", "50", "--json",
                 "--norm", "l2", "--embedding", "normalized"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["config"]["embedding"] == "normalized" and len(out["mean"]) == 2
    assert out["mean"][1][0][1] is None and out["stderr"][1][2][0] > 0
    assert main(["simulate", "--n", "3", "--samples", "50", "--d", "16"]) == 0
    assert "+-" in capsys.readouterr().out
    assert main(["simulate", "--d", "1", "--samples", "10"]) == 2
    assert "d must be an integer >= 2" in capsys.readouterr().err


def test_the_library_and_the_command_line_default_to_the_same_method():
    """simulate_scores, sample_instances and `lnrecency simulate` draw the same stream when no method is given
    (the command line's gram): read from their signatures and the parser, and the draws compared."""
    import inspect

    from lnrecency.cli.app import build_parser
    from lnrecency.numerics import sample_instances

    cli = build_parser().parse_args(["simulate", "--n", "4"]).method
    assert inspect.signature(simulate_scores).parameters["method"].default == cli
    assert inspect.signature(sample_instances).parameters["method"].default == cli
    r = simulate_scores(4, 2, 10, 300, seed=2, norm="layernorm", paired=False)
    inst = sample_instances(4, 2, 10, 300, seed=2, norm="layernorm")
    assert r.method == cli and r.representation == "bartlett"
    # the same 300 draws averaged in two orders: |difference| <= 300 eps max|S| ~ 7e-14 with |S| <= 1 here
    np.testing.assert_allclose(r.mean[1][np.tril_indices(4)], inst.scores[:, 1].mean(0)[np.tril_indices(4)],
                               rtol=1e-12)
