"""The probe's printout (issue 85, item 4): a layer is labelled recency or earlier only where its slope interval
excludes 0 (the rule in the header, the row test beside it), BOS as the model has it, and positions on alone said."""
from __future__ import annotations

import re

import pytest

from lnrecency.cli.app import main
from lnrecency.experiments.probes.tidy import slope_label


@pytest.mark.parametrize("lo, hi, label", [(0.01, 0.03, "recency"), (-0.03, -0.001, "earlier"),
                                           (-0.02, 0.034, "no sign"), (0.0, 0.1, "no sign")])
def test_the_label_follows_the_interval(lo, hi, label):
    assert slope_label(lo, hi) == label


def _layers(out: str) -> list[tuple[str, float, float]]:
    return [(m.group(1), float(m.group(2)), float(m.group(3))) for m in
            re.finditer(r"^layer \d+: (recency|earlier|no sign)\s+slope \S+ \(SE \S+; interval at the test's k = "
                        r"\S+: \[(\S+), (\S+)\]\)", out, re.M)]


def test_every_layer_line_labels_by_its_interval_and_the_header_states_the_rule(capsys):
    assert main(["probe", "--identity", "--layers", "3"]) == 0
    out = capsys.readouterr().out
    assert "labels: 'recency' / 'earlier' where the layer's slope interval" in out
    rows = _layers(out)
    assert len(rows) == 3 and {label for label, _, _ in rows} >= {"no sign", "recency"}
    for label, lo, hi in rows:
        assert label == slope_label(lo, hi)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    transformers = pytest.importorskip("transformers")
    import torch

    out = {}
    for bos in (None, 1):
        torch.manual_seed(0)
        cfg = transformers.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                       num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64,
                                       bos_token_id=bos)
        path = tmp_path_factory.mktemp(f"llama{bos}")
        transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(str(path))
        out[bos] = str(path)
    return out


def test_bos_as_the_model_has_it(tiny, capsys):
    assert main(["probe", "--hf", tiny[None], "--n", "12", "--sequences", "16"]) == 0
    head = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("probe: n ="))
    assert "no BOS, the first key out of slopes and RP (the model adds none)" in head and "BOS first" not in head
    assert main(["probe", "--hf", tiny[1], "--n", "12", "--sequences", "16"]) == 0
    head = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("probe: n ="))
    assert "BOS first, its key out of slopes and RP" in head


def test_positions_on_alone_is_said(tiny, capsys):
    assert main(["probe", "--hf", tiny[1], "--n", "12", "--sequences", "16"]) == 0
    assert "(on only: the paper's question compares positions on and off" in capsys.readouterr().out
    assert main(["probe", "--hf", tiny[1], "--n", "12", "--sequences", "16", "--positions", "both"]) == 0
    out = capsys.readouterr().out
    assert "on only" not in out and "positions off (same windows)" in out
