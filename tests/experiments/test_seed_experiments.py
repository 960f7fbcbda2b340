"""Seeds 002 and 003 at small scale (lnrecency.experiments.studies.seed002 / seed003, verdicts S2.1-S2.7 and
S3.1-S3.3).

* The pieces: seed 002's sequence layout, the recency slope, the log-log slope, the law for an average of
  uncorrelated vectors, head ablation and removed positions in the decoder, the settings' refusals.
* The seeds' rows read "reproduced" / "the opposite shown" (the rules themselves:
  tests/claims/test_trained_rules.py); the task baselines (constant answer, unigram entropy) are exact.
* Both quick experiments end to end through the CLI in a temporary cache (what CI runs): every verdict rests
  on >= 3 training seeds, carries its fields and is not decisive (a smoke test); a second run reads the cache
  and prints the same JSON byte for byte.
"""
from __future__ import annotations

import json
import time

import numpy as np
import pytest

pytest.importorskip("torch")

import torch  # noqa: E402

from lnrecency.claims.trained.s2_s3_seed_experiments import LABELS, S2, S3  #noqa: E402
from lnrecency.cli.app import main  # noqa: E402
from lnrecency.experiments.decoders.decoder import build  # noqa: E402
from lnrecency.experiments.decoders.decoder_config import DecoderConfig  # noqa: E402
from lnrecency.experiments.studies.seed002 import (  # noqa: E402
    POSITIONS,
    attention_slope,
    figure1_sequences,
    log_slope,
    uncorrelated_law,
)
from lnrecency.experiments.studies.seeds_config import Seed002Settings, Seed003Settings  # noqa: E402


@pytest.mark.parametrize("pos2", POSITIONS)
def test_figure1_sequences_have_seed002_layout(pos2):
    toks, b, c = figure1_sequences(pos2, 300, 40, np.random.default_rng(pos2))
    a = toks[:, 2]
    assert (toks[:, 0] == 0).all() and (toks[:, pos2] == a).all() and (toks[:, 12] == a).all()
    assert (toks[:, 3] == b).all() and (toks[:, pos2 + 1] == c).all()
    for row in toks:  # every token distinct except the three [A]
        content = [t for q, t in enumerate(row[1:], 1) if q not in (2, pos2, 12)]
        assert len(set(content)) == len(content) and row[2] not in content and min(row[1:]) >= 2
    with pytest.raises(ValueError, match="second \\[A\\]"):
        figure1_sequences(11, 1, 40, np.random.default_rng(0))
    with pytest.raises(ValueError, match="vocab must be at least"):
        figure1_sequences(4, 1, 10, np.random.default_rng(0))


def test_slopes_read_the_direction():
    n = 10
    rec = np.tril(np.arange(1, n + 1)[None, :] * np.ones((n, 1)))  # weight grows with the key
    assert attention_slope(rec / rec.sum(1, keepdims=True)) > 0
    i, k = np.indices((n, n))
    assert attention_slope(np.where(k <= i, i + 1 - k, 0).astype(float)) < 0  # earlier-token pattern
    assert log_slope(1.0 / np.arange(1, 40)) == pytest.approx(-1.0, abs=1e-12)


def test_uncorrelated_law_is_exact_for_orthogonal_values_and_not_otherwise():
    rng = np.random.default_rng(0)
    n = 6
    w = torch.tensor(np.tril(rng.random((n, n))))
    w = w / w.sum(-1, keepdim=True)
    ortho = torch.eye(n, dtype=torch.float64) * torch.tensor(rng.random(n) + 0.5)[:, None]
    assert torch.allclose(uncorrelated_law(w, ortho), ((w @ ortho) ** 2).sum(-1))
    same = torch.ones(n, 3, dtype=torch.float64)  # perfectly correlated: the law underestimates
    assert (uncorrelated_law(w, same)[1:] < ((w @ same) ** 2).sum(-1)[1:] - 1e-6).all()


def test_head_ablation_and_removed_positions():
    cfg = DecoderConfig(vocab=20, d_model=16, n_layers=2, n_heads=4, context=12, positions="learned")
    model = build(cfg, 0).eval()
    toks = torch.randint(0, 20, (3, 12), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        kept, _ = model(toks, keep_heads={0: [1]})
        ref = build(cfg, 0).eval()
        w = ref.blocks[0].attn.o.weight
        dh = cfg.head_dim
        for h in (0, 2, 3):  # zero the other heads' columns of W_O: the same function
            w[:, h * dh:(h + 1) * dh] = 0.0
        same, _ = ref(toks)
        assert torch.equal(kept, same)  # the same products, exact zeros either way
        nopos, _ = model(toks, positions=False)
        ref2 = build(cfg, 0).eval()
        ref2.pos.weight.zero_()
        assert torch.equal(nopos, ref2(toks)[0])
        assert not torch.allclose(nopos, model(toks)[0], atol=1e-4)


def test_settings_refuse_too_few_seeds_and_short_tests():
    with pytest.raises(ValueError, match="at least 3 training seeds"):
        Seed002Settings(seeds=(0, 1))
    with pytest.raises(ValueError, match="short < long"):
        Seed002Settings(short=48, long=7)
    with pytest.raises(ValueError, match="8 times"):
        Seed003Settings(test_factors=(1, 2, 4))
    with pytest.raises(ValueError, match="at least 3 training seeds"):
        Seed003Settings(seeds=(0, 0, 1))


def test_seed_rows_are_reproduced_or_not_never_confirmed():
    """A seed's statement about someone else's model: the same machinery, with the seeds' words."""
    from lnrecency.claims.trained_rules import Part, decide_parts, part_verdict
    from lnrecency.inference.stats import SeedTest

    yes = Part("a", "a", SeedTest((0.3, 0.4, 0.35)), learned=3, seeds=3, labels=LABELS)
    no = Part("b", "b", SeedTest((0.3, 0.4, 0.35), side="below"), learned=3, seeds=3, labels=LABELS)
    decide_parts([yes, no], 0.05, quick=False)
    assert part_verdict(yes) == "reproduced" and part_verdict(no) == "the opposite shown"


def test_task_baselines_are_exact():
    """target_entropy and constant_answer_accuracy against an exhaustive enumeration of every argmax sequence
    (K values, m positions) and of every lookup value, written out here."""
    import itertools
    import math

    from lnrecency.experiments.decoders.tasks import constant_answer_accuracy, target_entropy

    for big, m in ((5, 3), (6, 4), (4, 1)):
        counts = np.zeros(big)
        for seq in itertools.product(range(big), repeat=m):
            counts[max(seq)] += 1
        p = counts / counts.sum()
        n, vocab = m + 2, big + 2
        assert target_entropy("argmax", n, vocab) == pytest.approx(-sum(q * math.log(q) for q in p if q > 0),
                                                                   abs=1e-12)
        assert constant_answer_accuracy("argmax", n, vocab) == pytest.approx(p[-1], abs=1e-12)
    assert target_entropy("induction", 32, 64) == pytest.approx(math.log(62))
    assert target_entropy("lookup", 9, 14) == pytest.approx(math.log(6))  # 12 content tokens: 6 keys, 6 values
    assert constant_answer_accuracy("lookup", 9, 14) == pytest.approx(1 / 6)
    # the audit's number: 128 values, 126 of them at 8 x 16 tokens
    assert constant_answer_accuracy("argmax", 128, 130) == pytest.approx(1 - (127 / 128) ** 126)


def test_unknown_experiment_is_refused(capsys):
    assert main(["experiments", "seed004"]) == 2
    assert "seed004" in capsys.readouterr().err


#: test-only presets for the end-to-end run: the same code path as --quick (3 seeds, every task, architecture and
#: trajectory point), at the size its assertions need (fields, seeds, labels, the cache's bytes)
TINY = {"seed002": Seed002Settings(vocab=32, d_model=32, n_heads=4, n_train=24, steps=60, samples=24,
                                   random_sequences=24, seeds=(0, 1, 2)),
        "seed003": Seed003Settings(d_model=16, steps=40, batch=8, test_sequences=16, seeds=(0, 1, 2))}


@pytest.mark.slow
@pytest.mark.parametrize("experiment, ids", [("seed002", S2), ("seed003", S3)])
def test_quick_experiment_through_the_cli(trained_cache, capsys, monkeypatch, experiment, ids):
    cls = Seed002Settings if experiment == "seed002" else Seed003Settings
    monkeypatch.setattr(cls, "preset", classmethod(lambda c, quick: TINY[experiment] if quick else c()))
    # one process: the tiny jobs cost less than starting a pool of workers per task (parallel runs give the same
    # bytes, tests/experiments/test_thesis.py)
    assert main(["experiments", experiment, "--quick", "--json", "--workers", "1"]) == 0
    first = capsys.readouterr().out
    out = json.loads(first)
    assert out["experiment"] == experiment
    assert {v["id"] for v in out["verdicts"]} == set(ids)
    for v in out["verdicts"]:
        assert v["training_seeds"] >= 3
        assert {"training_seeds", "learned", "interval", "rule", "probe", "trajectory"} <= set(v)
        assert v["setting"]["scale"] and v["setting"]["breaks"] and v["setting"]["seed_setting"]
        # quick is a smoke test, and a seed's statement is never confirmed or refuted
        assert v["verdict"] == "inconclusive" and v["finding"].startswith("quick run: not decisive")
        assert set(v["trajectory"]) == {"quarter", "half", "final"}
    start = time.perf_counter()
    assert main(["experiments", experiment, "--quick", "--json"]) == 0
    assert time.perf_counter() - start < 20.0  # from the cache: nothing is trained
    assert capsys.readouterr().out == first
