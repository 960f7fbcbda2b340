"""Trained decoders (optional extra ``models``: torch and safetensors; ``hf`` adds transformers).

Modules: ``config`` (DecoderConfig, TrainSettings; no torch), ``tasks`` (numpy), ``decoder`` (torch),
``train``, ``probe``, ``hf``, ``thesis_config`` (the thesis experiment's settings and cache; no torch) and
``thesis``. Nothing is imported here, so ``import lnrecency.models.config`` works without torch.
"""
