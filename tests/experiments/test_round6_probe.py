"""Robustness round 6 (issue 69), the probe API: every argument and the probe's bounds checked before any input is
built (no 7.6 GiB token array before the refusal), texts= bounded like --text, a tokenizer's output checked, tokens=
read for its shape; each case beside a neighbour that must keep working."""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    t = transformers
    return t.LlamaForCausalLM(t.LlamaConfig(vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                            num_attention_heads=4, num_key_value_heads=2,
                                            max_position_embeddings=2048, bos_token_id=0, eos_token_id=1))


class _Tok:
    """A tokenizer stand-in that returns what it is given to return (and counts its calls)."""

    bos_token_id = None
    all_special_ids: list = []

    def __init__(self, out):
        self.out, self.calls = out, 0

    def __call__(self, text, add_special_tokens=True):
        self.calls += 1
        return {"input_ids": self.out if not callable(self.out) else self.out(text)}


def test_a_probe_beyond_its_bounds_is_refused_before_any_input_is_built(model):
    tracemalloc.start()
    with pytest.raises(ValueError, match="exceeds the probe's bound|would take about"):
        lnrecency.probe_model(model, n=1024, sequences=10**6)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 64 * 2**20  # the token array alone would be 7.6 GiB
    res = lnrecency.probe_model(model, n=16, sequences=8)  # the neighbour
    assert len(res.layers) == 2 and res.settings.n == 16


@pytest.mark.parametrize("texts,word", [(123, "texts must be a string or a list of strings"),
                                        ([b"bytes"], "texts must be a string or a list of strings"),
                                        (["", "  "], "texts must hold some text"),
                                        ({"a": "b"}, "texts must be a string or a list of strings")])
def test_texts_are_checked_before_the_tokenizer_runs(model, texts, word):
    tok = _Tok([2, 3])
    with pytest.raises(ValueError, match=word):
        lnrecency.probe_model(model, tok, texts=texts, n=16, sequences=8)
    assert tok.calls == 0


def test_texts_above_the_text_bound_are_refused_before_they_are_read(model):
    from lnrecency.experiments.text.text_windows import MAX_TEXT_BYTES

    tok = _Tok([2, 3])
    big = "a" * (MAX_TEXT_BYTES + 1)
    with pytest.raises(ValueError, match=f"more than {MAX_TEXT_BYTES} bytes"):
        lnrecency.probe_model(model, tok, texts=[big], n=16, sequences=8)
    assert tok.calls == 0  # refused before a piece was tokenised


@pytest.mark.parametrize("out", [[1.5, 2.0], None, ["a", "b"], [[2, 3]], "23"])
def test_a_tokenizer_that_does_not_return_integer_ids_is_refused(model, out):
    with pytest.raises(ValueError, match="the tokenizer must return a list of integer token ids"):
        lnrecency.probe_model(model, _Tok(out), texts=["w " * 500], n=16, sequences=8)


def test_a_tokenizer_returning_integer_ids_is_probed(model):
    rng = np.random.default_rng(0)
    res = lnrecency.probe_model(model, _Tok(lambda text: rng.integers(2, 64, size=len(text) // 2).tolist()),
                                texts=["w " * 500], n=16, sequences=8)
    assert res.model["inputs"].startswith("text windows") and len(res.layers) == 2


def test_tokens_set_n_and_sequences_and_refuse_what_is_not_ids(model):
    ids = np.random.default_rng(1).integers(2, 64, size=(8, 48))
    res = lnrecency.probe_model(model, tokens=ids)
    assert (res.settings.n, res.settings.sequences) == (48, 8)
    assert lnrecency.probe_model(model, tokens=ids, n=48, sequences=8).settings.n == 48
    with pytest.raises(ValueError, match="n=32 disagrees with tokens= of shape"):
        lnrecency.probe_model(model, tokens=ids, n=32)
    for bad, word in [(ids + 0.5, "integer array"), (ids.astype(bool), "integer array"), (ids[0], "integer array"),
                      ("1 2 3", "integer array"), (np.full((8, 16), 64), r"outside \[0, 63\]")]:
        with pytest.raises(ValueError, match=word):
            lnrecency.probe_model(model, tokens=bad)
