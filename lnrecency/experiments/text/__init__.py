"""Local text for language models and probes: the corpus reader and its BPE tokenizer (``corpus``), windows of
text in a model's own tokenizer (``text_windows``), and a ``train lm`` model's own corpus for the probe
(``lm_inputs``). No download: corpora are local files."""
