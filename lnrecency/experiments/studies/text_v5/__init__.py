"""Plan v5 of the thesis on text (issue 83): the flat share (F), LayerNorm taken apart (P), the training stage (T)."""
