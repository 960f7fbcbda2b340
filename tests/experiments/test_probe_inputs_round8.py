"""The probe's inputs, round 8 (issue 86, item 4): a long text without a newline is text, not a file name; a GPT-Neo
folder is read by the command line as by Python; a tokenizer that cannot be called, or returns ids that are not
integers, is refused by name before any model is read; plot(map_layer=) names map_layer; a GGUF source refused from
Python names model=, from the command line --gguf."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402
from lnrecency.cli.app import main  # noqa: E402


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=64, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=64, bos_token_id=0, eos_token_id=1))


class _Chars:
    """A character tokenizer: each character's code modulo 60, plus 2 (ids 0 and 1 are BOS and EOS)."""

    bos_token_id = 0

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": [2 + ord(c) % 60 for c in text]}


def test_a_long_text_without_a_newline_is_text(llama):
    res = lnrecency.probe_model(llama, _Chars(), texts="ab cd " * 700, n=16, sequences=8)  # 4,200 characters
    assert len(res.layers) == 2 and "text windows" in res.model["inputs"]


class _Odd:
    def __init__(self, ids):
        self.ids = ids

    def __call__(self, text, add_special_tokens=True):
        return {"input_ids": self.ids}


@pytest.mark.parametrize("tokenizer, words", [(5, "tokenizer: a int cannot be called on text"),
                                              (_Odd([None, 3]), "input_ids of list, not integer token ids"),
                                              (_Odd("abc"), "input_ids of str, not integer token ids")])
def test_a_tokenizer_that_cannot_tokenise_is_refused_by_name(llama, tokenizer, words):
    with pytest.raises(ValueError, match=words):
        lnrecency.probe_model(llama, tokenizer, texts=["w " * 400], n=16, sequences=8)


def test_plot_names_map_layer(llama):
    pytest.importorskip("matplotlib")
    res = lnrecency.probe_model(llama, n=16, sequences=8, maps=True)
    with pytest.raises(ValueError, match=r"map_layer must be an integer in \[1, 2\]; got 5"):
        res.plot(map_layer=5)


@pytest.mark.parametrize("family", ["gpt_neo", "mpt"])
def test_gpt_neo_and_mpt_folders_are_read_by_the_command_line(family, tmp_path, capsys):
    """Their configs name the heads num_heads (GPT-Neo) and n_heads, the layers n_layers (MPT)."""
    torch.manual_seed(0)
    cfg = (transformers.GPTNeoConfig(vocab_size=64, hidden_size=32, num_layers=2, num_heads=4,
                                     max_position_embeddings=64, attention_types=[[["global"], 2]])
           if family == "gpt_neo" else
           transformers.MptConfig(vocab_size=64, d_model=32, n_layers=2, n_heads=4, max_seq_len=64))
    transformers.AutoModelForCausalLM.from_config(cfg).save_pretrained(str(tmp_path / family))
    assert main(["probe", "--hf", str(tmp_path / family), "--n", "12", "--sequences", "8"]) == 0
    assert "layer 2:" in capsys.readouterr().out


def test_a_gguf_source_is_refused_in_the_callers_words(tmp_path, capsys):
    missing = str(tmp_path / "none.gguf")
    with pytest.raises(ValueError, match=r"^model='.*none.gguf' does not exist"):
        lnrecency.probe_model(missing)
    assert main(["probe", "--gguf", missing]) == 2
    assert f"--gguf '{missing}' does not exist" in capsys.readouterr().err


@pytest.mark.parametrize("name, words", [("x" * 3000, "(3000 characters) cannot name a file or folder here"),
                                         ("a\x00b", "cannot name a file or folder (it holds a NUL byte)")])
def test_a_model_name_that_cannot_be_a_path_is_refused_by_its_argument(name, words, capsys):
    """A string too long for a file name (or with a NUL byte) is refused by the argument that took it: model= from
    Python, the flag (or MODEL_DIR) from the command line; never an OSError."""
    with pytest.raises(ValueError, match=r"^model='.*" + words.replace("(", r"\(").replace(")", r"\)")):
        lnrecency.probe_model(name)
    if "\x00" in name:  # a command line cannot carry a NUL byte
        return
    for argv, flag in ((["--hf", name], "--hf '"), (["--gguf", name], "--gguf '"), ([name], "MODEL_DIR '")):
        assert main(["probe", *argv]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"error: {flag}" in err and words in err and len(err) < 400
