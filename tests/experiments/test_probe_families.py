"""The probe for the field (issue 68): never a wrong number, on any family built in memory from a config (nothing
downloaded). A sliding window or local layer shorter than n (Mistral, GPT-Neo) and an encoder (BERT) never return a
slope; encoder-decoder (T5) and state-space (Mamba) models are refused by name; the device is the model's (meta
refused, a CUDA run where a GPU is at hand); the default n fits the model; the rows are tidy."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

import lnrecency  # noqa: E402
from lnrecency.experiments.probes.model_probe import declared_window  # noqa: E402

V = 64


def _mistral(window):
    torch.manual_seed(0)
    return transformers.MistralForCausalLM(transformers.MistralConfig(
        vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=128, sliding_window=window, bos_token_id=0, eos_token_id=1))


def _neo(window):
    torch.manual_seed(0)
    return transformers.GPTNeoForCausalLM(transformers.GPTNeoConfig(
        vocab_size=V, hidden_size=32, num_layers=2, num_heads=4, attention_types=[[["global", "local"], 1]],
        window_size=window, max_position_embeddings=128, bos_token_id=0, eos_token_id=1))


@pytest.fixture(scope="module")
def llama():
    torch.manual_seed(0)
    return transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=V, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=24, bos_token_id=0, eos_token_id=1))


@pytest.mark.parametrize("build,field", [(_mistral, "sliding_window"), (_neo, "window_size")])
def test_a_window_shorter_than_n_is_refused_and_a_probe_within_it_measures(build, field):
    model = build(8)
    assert declared_window(model.config)[0] == 8
    with pytest.raises(ValueError, match=f"n=32 is longer than the model's attention window 8 \\(config {field}"):
        lnrecency.probe_model(model, n=32, sequences=8)
    res = lnrecency.probe_model(model, sequences=8)  # the default n shrinks to the window
    assert res.settings.n == 8 and all(np.isfinite(lp.slope) and abs(lp.slope) < 1 for lp in res.layers)
    wide = build(64)  # the neighbour: a window longer than n leaves every key in
    assert declared_window(wide.config)[0] == 64 and len(lnrecency.probe_model(wide, n=16, sequences=8).layers) == 2


def test_a_mask_hidden_from_the_config_is_caught_in_the_weights():
    """A window the config does not declare (the check reads the weights themselves): a key inside the causal
    triangle with weight exactly 0 is refused, never read as log(0)."""
    from lnrecency.experiments.probes.model_probe import check_attention_weights

    p = torch.softmax(torch.randn(1, 2, 6, 6).masked_fill(~torch.ones(6, 6, dtype=torch.bool).tril(), -torch.inf), -1)
    check_attention_weights(p, 1, "m")
    p[0, 1, 5, 0] = 0.0
    with pytest.raises(ValueError, match="gives key 1 no weight at all for query 6 \\(head 2\\)"):
        check_attention_weights(p, 1, "m")


def test_an_encoder_never_returns_a_slope():
    torch.manual_seed(0)
    bert = transformers.BertForMaskedLM(transformers.BertConfig(
        vocab_size=V, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64,
        max_position_embeddings=64))
    with pytest.raises(ValueError, match="BertForMaskedLM .*is an encoder"):
        lnrecency.probe_model(bert, n=16, sequences=8)
    # named as something else, its weights still show it: attention above the diagonal is refused
    from lnrecency.experiments.probes.model_probe import check_attention_weights

    with pytest.raises(ValueError, match="attends to later keys .*not a causal decoder"):
        check_attention_weights(torch.full((1, 1, 4, 4), 0.25), 1, "m")


def test_encoder_decoder_and_state_space_models_are_refused_by_name():
    t5 = transformers.T5ForConditionalGeneration(transformers.T5Config(
        vocab_size=V, d_model=32, d_kv=8, d_ff=64, num_layers=1, num_heads=4))
    with pytest.raises(ValueError, match="T5ForConditionalGeneration .*encoder-decoder"):
        lnrecency.probe_model(t5, n=16, sequences=8)
    mamba = transformers.MambaForCausalLM(transformers.MambaConfig(vocab_size=V, hidden_size=32, num_hidden_layers=2,
                                                                   state_size=4))
    with pytest.raises(ValueError, match="MambaForCausalLM .*no attention heads"):
        lnrecency.probe_model(mamba, n=16, sequences=8)
    with pytest.raises(ValueError, match="model must be a transformers causal LM"):
        lnrecency.probe_model(object(), n=16, sequences=8)


def test_a_vocabulary_of_special_tokens_only_is_refused(llama):
    torch.manual_seed(0)
    tiny = transformers.LlamaForCausalLM(transformers.LlamaConfig(
        vocab_size=2, hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=4,
        num_key_value_heads=2, max_position_embeddings=32, bos_token_id=0, eos_token_id=1))
    with pytest.raises(ValueError, match="no content token"):
        lnrecency.probe_model(tiny, n=16, sequences=8)


def test_the_default_n_fits_the_models_context(llama):
    res = lnrecency.probe_model(llama, sequences=8)
    assert res.settings.n == 24  # the default 64, cut to max_position_embeddings
    with pytest.raises(ValueError, match="n must be <= the model's context 24"):
        lnrecency.probe_model(llama, n=32, sequences=8)


def test_the_device_is_the_models(llama):
    res = lnrecency.probe_model(llama, n=16, sequences=8, device="cpu")
    assert res.model["device"] == "cpu"
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="device='cuda': no CUDA device is available here"):
            lnrecency.probe_model(llama, n=16, sequences=8, device="cuda")
    with pytest.raises(ValueError, match="device must be a torch device"):
        lnrecency.probe_model(llama, n=16, sequences=8, device="tpu-of-mine")
    with torch.device("meta"):
        ghost = transformers.LlamaForCausalLM(llama.config)
    with pytest.raises(ValueError, match="meta device"):
        lnrecency.probe_model(ghost, n=16, sequences=8)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no GPU here (a CUDA run where one is at hand)")
def test_a_cuda_model_is_probed_on_its_device_with_the_cpus_slopes(llama):
    import copy

    on_gpu = copy.deepcopy(llama).to("cuda", torch.float64)
    on_cpu = copy.deepcopy(llama).to(torch.float64)
    a = lnrecency.probe_model(on_gpu, n=16, sequences=8)
    b = lnrecency.probe_model(on_cpu, n=16, sequences=8)
    assert a.model["device"].startswith("cuda")
    # both float64 models, the same weights: they differ by summation order only. Each logit is a chain of dot
    # products of length <= intermediate_size per layer, so its rounding is at most layers x 64 x eps64 x |S| (|S| < 4
    # in this tiny model, as the bridge test takes), and a slope is sum_j w_ij S_ij: the bound is that times the
    # largest sum_j |w_ij|, the direct fit's bound with float64's eps and the depth's accumulation
    from lnrecency.inference.recency_slope import row_slope_weights

    cfg = llama.config
    bound = (2 * np.finfo(np.float64).eps * cfg.num_hidden_layers * cfg.intermediate_size * 4
             * float(np.abs(row_slope_weights(16, 1)).sum(1).max()))
    assert np.allclose([lp.slope for lp in a.layers], [lp.slope for lp in b.layers], rtol=0, atol=bound)


def test_the_frame_is_long_and_tidy(llama):
    pd = pytest.importorskip("pandas")
    df = lnrecency.probe_model(llama, n=16, sequences=8).to_frame()
    assert list(df.columns) == ["layer", "level", "head_index", "measure", "value", "se"]
    assert not isinstance(getattr(df, "head"), pd.Series)  # no column shadows DataFrame.head
    means = df[df.level == "layer mean"]
    assert means.head_index.isna().all() and set(means.measure) == {"slope", "rp", "sink"}
    heads = df[(df.level == "head") & (df.measure == "slope")]
    assert sorted(heads.head_index.unique()) == [1, 2, 3, 4] and len(heads) == 8
    assert not df.value.isna().any()


def _word_tokenizer(tmp_path):
    """A word-level tokenizer saved to and read back from a folder (TransformerLens reloads it by its path)."""
    from tokenizers import Tokenizer, pre_tokenizers
    from tokenizers import models as tok_models

    tok = Tokenizer(tok_models.WordLevel({"<s>": 0, "</s>": 1, **{f"w{q}": q + 2 for q in range(V - 2)}},
                                         unk_token="</s>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<s>", eos_token="</s>").save_pretrained(
        tmp_path / "tok")
    return transformers.AutoTokenizer.from_pretrained(tmp_path / "tok")


def test_nnsight_wraps_the_transformers_model_and_gives_its_slopes(llama, tmp_path):
    """nnsight's LanguageModel runs the transformers model it wraps: the probe reads that model, to the bit."""
    nnsight = pytest.importorskip("nnsight")
    ids = np.random.default_rng(3).integers(2, V, size=(8, 16))
    want = [lp.slope for lp in lnrecency.probe_model(llama, tokens=ids).layers]
    res = lnrecency.probe_model(nnsight.LanguageModel(llama, tokenizer=_word_tokenizer(tmp_path)), tokens=ids)
    assert [lp.slope for lp in res.layers] == want and res.model["wrapper"] == "nnsight LanguageModel"


def test_a_transformerlens_bridge_is_read_through_its_hooks_with_the_transformers_models_slopes(llama, tmp_path):
    """TransformerLens 4's TransformerBridge (its attention replaced by its own hooked one): the scores from
    blocks.L.attn.hook_attn_scores and the weights from hook_pattern give the transformers model's slopes, within
    the float32 rounding of the logits (the same bound as the direct fit: 2 eps32 x |S| x sum_j |w_ij|)."""
    import copy

    tl = pytest.importorskip("transformer_lens")
    from lnrecency.inference.recency_slope import row_slope_weights

    ids = np.random.default_rng(3).integers(2, V, size=(8, 16))
    want = [lp.slope for lp in lnrecency.probe_model(llama, tokens=ids).layers]
    bridge = tl.TransformerBridge.boot_transformers("meta-llama/Llama-3.2-1B", hf_model=copy.deepcopy(llama),
                                                    tokenizer=_word_tokenizer(tmp_path))
    res = lnrecency.probe_model(bridge, tokens=ids)
    assert res.model["wrapper"] == "TransformerLens TransformerBridge" and res.model["streamed"]
    bound = 2 * np.finfo(np.float32).eps * 4 * float(np.abs(row_slope_weights(16, 1)).sum(1).max())
    assert np.allclose([lp.slope for lp in res.layers], want, rtol=0, atol=bound)
    with pytest.raises(ValueError, match="positions='off' is not available through a TransformerLens bridge"):
        lnrecency.probe_model(bridge, tokens=ids, positions="off")


def test_learned_positions_off_as_position_zero_or_as_zeros():
    """GPT-2's learned positions, off two ways: every position id 0 (position 0's embedding on every token) or the
    embedding replaced by zeros. Both leave a repeated token nothing to order; they are different models, so their
    slopes on random tokens differ; "zero" is refused for a scheme without a learned embedding."""
    torch.manual_seed(0)
    gpt2 = transformers.GPT2LMHeadModel(transformers.GPT2Config(vocab_size=V, n_embd=32, n_layer=2, n_head=4,
                                                                n_positions=64, bos_token_id=0, eos_token_id=1))
    repeated = np.full((8, 16), 5)
    for how in ("off", "zero"):
        res = lnrecency.probe_model(gpt2, tokens=repeated, positions=how)
        assert res.model["positions"]["state"].startswith(how) and max(abs(lp.slope) for lp in res.layers) < 1e-9
    ids = np.random.default_rng(4).integers(2, V, size=(8, 16))
    off, zero = (lnrecency.probe_model(gpt2, tokens=ids, positions=how) for how in ("off", "zero"))
    assert [lp.slope for lp in off.layers] != [lp.slope for lp in zero.layers]
    with torch.no_grad():  # the hook is gone after the probe: the model is as it was
        assert gpt2.transformer.wpe(torch.arange(3)).abs().sum() > 0
    with pytest.raises(ValueError, match="positions='zero' replaces a learned absolute position embedding"):
        lnrecency.probe_model(_mistral(64), n=16, sequences=8, positions="zero")


def test_refusals_from_python_name_the_argument_not_a_flag(tmp_path):
    for bad, word in [(tmp_path, "model must be a local Hugging Face model folder with a config.json"),
                      (tmp_path / "none", "model must be a local Hugging Face model folder")]:
        with pytest.raises(ValueError, match=word) as got:
            lnrecency.probe_model(bad)
        assert "--" not in str(got.value).split(";")[0]
