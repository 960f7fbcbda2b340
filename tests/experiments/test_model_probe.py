"""lnrecency.probe_model (issue 53): any transformers causal LM built in memory from a config (no download): the
per-layer slopes equal a direct fit on transformers' own output_attentions logits; positions off by the model's
scheme (RoPE: LLaMA; learned: GPT-2; ALiBi: BLOOM) make a repeated token's logits equal at every position; an
unknown scheme is refused by name; text through the model's tokenizer; tidy rows without NaN; the command line's
`--hf DIR --tokens text` is the same entry point."""
from __future__ import annotations

import csv

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402
from lnrecency.experiments.probes.probe import MIN_KEYS  # noqa: E402

N, SEQ, VOCAB = 16, 8, 64


def _models():
    torch.manual_seed(0)
    t = transformers
    return {
        "rope": t.LlamaForCausalLM(t.LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64,
                                                 num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
                                                 max_position_embeddings=64, bos_token_id=0, eos_token_id=1)),
        "learned": t.GPT2LMHeadModel(t.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                                  bos_token_id=0, eos_token_id=1)),
        "alibi": t.BloomForCausalLM(t.BloomConfig(vocab_size=VOCAB, hidden_size=32, n_layer=2, n_head=4,
                                                  bos_token_id=0, eos_token_id=1)),
    }


@pytest.fixture(scope="module")
def models():
    return _models()


def _direct_layer_slopes(model, ids: np.ndarray) -> list[float]:
    """The layer slope written again from its docs: head-mean log attention weights; per row i with at least MIN_KEYS
    keys strictly below the query and after the first key, the least-squares slope over those keys 2..i-1 (1-based);
    rows weighted by their keys; mean over sequences."""
    model.set_attn_implementation("eager")
    model.eval()  # no attention dropout (a model built from a config starts in training mode)
    with torch.no_grad():
        out = model(input_ids=torch.from_numpy(ids), attention_mask=torch.ones(ids.shape, dtype=torch.long),
                    output_attentions=True)
    slopes = []
    for att in out.attentions:
        s = torch.log(att.double()).mean(1).numpy()  # (B, n, n)
        per_seq = []
        for b in range(ids.shape[0]):
            num = den = 0.0
            for i in range(N):
                keys = np.arange(1, i)  # 0-based keys 1..i-1: the first key and the query's own left out
                if keys.size < MIN_KEYS:
                    continue
                slope = np.polyfit(keys, s[b, i, keys], 1)[0]
                num, den = num + keys.size * slope, den + keys.size
            per_seq.append(num / den)
        slopes.append(float(np.mean(per_seq)))
    return slopes


@pytest.mark.parametrize("scheme", ["rope", "learned", "alibi"])
def test_slopes_equal_a_direct_fit_and_positions_off_flattens_a_repeated_token(models, scheme):
    model = models[scheme]
    rng = np.random.default_rng(1)
    ids = rng.integers(2, VOCAB, size=(SEQ, N))
    ids[:, 0] = 0
    res = lnrecency.probe_model(model, tokens=ids, n=N, sequences=SEQ)
    assert res.model["positions"] == {"scheme": scheme, "state": "on"}
    got = [lp.slope for lp in res.layers]
    want = _direct_layer_slopes(model, ids)
    if res.model["streamed"]:
        # the probe read the exact float32 logits S through the tap, the fit log P of the float32 weights: each entry
        # carries at most one float32 rounding of its value (|S| here below 4), so a row's slope moves by at most
        # 2 eps32 x 4 x sum_j |w_ij| (the fit's weights), averaged over rows: a derived bound, not a fitted one
        from lnrecency.inference.recency_slope import row_slope_weights

        bound = 2 * np.finfo(np.float32).eps * 4 * float(np.abs(row_slope_weights(N, 1)).sum(1).max())
        assert np.allclose(got, want, rtol=0, atol=bound), (got, want, bound)
    else:
        # the same float32 weights, read by two float64 computations: they differ by summation order only (~1e-15)
        assert np.allclose(got, want, rtol=1e-9, atol=1e-12), (got, want)
    repeated = np.full((SEQ, N), 5)
    off = lnrecency.probe_model(model, tokens=repeated, positions="off", n=N, sequences=SEQ)
    on = lnrecency.probe_model(model, tokens=repeated, positions="on", n=N, sequences=SEQ)
    assert off.model["positions"]["scheme"] == scheme and off.model["positions"]["state"].startswith("off")
    assert max(abs(lp.slope) for lp in off.layers) < 1e-9  # every position alike: nothing to order
    assert max(abs(lp.slope) for lp in on.layers) > 1e-6  # the neighbour: positions on do order them


def test_an_unknown_positional_scheme_is_refused_by_name(models):
    model = models["rope"]
    model.config.position_embedding_type = "relative_key"
    try:
        with pytest.raises(ValueError, match="relative_key"):
            lnrecency.probe_model(model, positions="off", n=N, sequences=SEQ)
    finally:
        del model.config.position_embedding_type


def test_text_through_the_tokenizer_and_tidy_rows(models, tmp_path):
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tok_models

    words = [f"w{q}" for q in range(VOCAB - 2)]
    tok = Tokenizer(tok_models.WordLevel({"<s>": 0, "</s>": 1, **{w: q + 2 for q, w in enumerate(words)}},
                                         unk_token="</s>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>")
    rng = np.random.default_rng(2)
    text = " ".join(rng.choice(words, size=4000))
    res = lnrecency.probe_model(models["rope"], fast, texts=[text], n=N, sequences=SEQ)
    assert res.model["inputs"] == "text windows, no BOS" and len(res.layers) == 2  # its tokenizer adds none
    rows = res.records()
    slopes = [r for r in rows if r["measure"] == "slope"]
    assert len(slopes) == 2 * (1 + 4) and all(r["value"] is not None and r["se"] is not None for r in slopes)
    assert {r["level"] for r in rows} == {"layer mean", "head"}
    assert all(r["head_index"] is None for r in rows if r["level"] == "layer mean")
    assert all(isinstance(r["value"], (int, float)) and np.isfinite(r["value"]) for r in rows)
    # the layer slope is the layer mean's row, not a head 0
    assert [r["value"] for r in slopes if r["level"] == "layer mean"] == [lp.slope for lp in res.layers]
    share = res.gu_sink()
    assert share == np.mean([r["value"] for r in rows if r["measure"] == "gu_sink_above_eps"])
    res.to_csv(tmp_path / "probe.csv")
    with open(tmp_path / "probe.csv") as f:
        back = list(csv.DictReader(f))
    assert len(back) == len(rows) and "nan" not in (tmp_path / "probe.csv").read_text().lower()
    with pytest.raises(ValueError, match="tokenizer"):
        lnrecency.probe_model(models["rope"], texts=[text], n=N, sequences=SEQ)
    with pytest.raises(ValueError, match="shape"):
        lnrecency.probe_model(models["rope"], tokens=np.zeros((3, 3), dtype=int), n=N, sequences=SEQ)


def test_the_command_line_reads_a_local_folder_on_text(models, tmp_path, capsys):
    import json

    from lnrecency.cli.app import main

    folder = tmp_path / "llama"
    models["rope"].save_pretrained(folder, safe_serialization=True)
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tok_models

    words = [f"w{q}" for q in range(VOCAB - 2)]
    tok = Tokenizer(tok_models.WordLevel({"<s>": 0, "</s>": 1, **{w: q + 2 for q, w in enumerate(words)}},
                                         unk_token="</s>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>").save_pretrained(
        folder)
    text = tmp_path / "text.txt"
    text.write_text(" ".join(np.random.default_rng(3).choice(words, size=3000)))
    assert main(["probe", "--hf", str(folder), "--tokens", "text", "--text", str(text), "--n", str(N),
                 "--sequences", str(SEQ), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["model"]["positions"]["scheme"] == "rope" and len(out["layers"]) == 2


def test_the_docs_example_runs(tmp_path, monkeypatch):
    """docs/probe-your-model.md's example, every code block in order, executed as it stands (on a tiny model built
    from a config); notebooks/10_probe_your_model.ipynb is the same page, executed by tests/report/test_notebooks.py."""
    from pathlib import Path

    page = (Path(__file__).resolve().parents[2] / "docs" / "probe-your-model.md").read_text(encoding="utf-8")
    code = "\n".join(block.split("```", 1)[0] for block in page.split("```python")[1:])
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    ns = {}
    exec(compile(code, "docs/probe-your-model.md", "exec"), ns)
    assert ns["csv_path"].read_text().startswith("layer,level,head_index,measure,value,se")
    assert list(ns["wide"].columns) == ["slope", "sink"] and len(ns["wide"]) == 2  # the page shows a table


def test_the_command_line_writes_the_tidy_rows_as_csv(tmp_path, capsys):
    from lnrecency.cli.app import main

    out = tmp_path / "rows.csv"
    assert main(["probe", "--identity", "--n", "8", "--sequences", "8", "--csv", str(out)]) == 0
    with open(out) as f:
        rows = list(csv.DictReader(f))
    assert rows and rows[0]["layer"] == "1" and "nan" not in out.read_text().lower()
    assert main(["probe", "--identity", "--csv", str(tmp_path / "no" / "x.csv")]) == 2
    assert "--csv" in capsys.readouterr().err


def test_bos_at_probe_time_first_none_and_refused(models):
    """Probe-time BOS (issue 50): "first" puts the model's BOS first (here its convention too), "none" content tokens
    only; a model that declares no BOS refuses "first" by name; tokens= are probed as given."""
    model = models["learned"]
    kw = dict(n=N, sequences=SEQ)
    own, first, none = (lnrecency.probe_model(model, bos=b, **kw) for b in ("model", "first", "none"))
    assert "BOS first" in own.model["inputs"] and "BOS first" in first.model["inputs"]
    assert "BOS first" not in none.model["inputs"]
    assert [lp.slope for lp in own.layers] == [lp.slope for lp in first.layers]
    assert [lp.slope for lp in none.layers] != [lp.slope for lp in own.layers]
    t = transformers
    bare = t.GPT2LMHeadModel(t.GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=4, n_positions=64,
                                          bos_token_id=None, eos_token_id=None))
    with pytest.raises(ValueError, match=r"bos \(--bos on the command line\) first: this model declares no BOS"):
        lnrecency.probe_model(bare, bos="first", **kw)
    with pytest.raises(ValueError, match="bos must be one of"):
        lnrecency.probe_model(model, bos="yes", **kw)
    with pytest.raises(ValueError, match="tokens= are probed as given"):
        lnrecency.probe_model(model, tokens=np.zeros((SEQ, N), dtype=np.int64), bos="none", **kw)
