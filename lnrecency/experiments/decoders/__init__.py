"""Trained decoders (optional extra ``models``: torch and safetensors; ``hf`` adds transformers).

Modules: ``decoder_config`` (DecoderConfig, TrainSettings; no torch), ``tasks`` (numpy), ``decoder`` (torch),
``train``, ``probe`` (the diagnostics on any traces) and ``probe_decoder`` (the probe on our decoders), ``hf``
(Hugging Face models as data), ``corpus`` (local text), ``parallel`` (trainings in worker processes),
``thesis_config`` / ``thesis`` and ``seeds_config`` / ``seed002`` / ``seed003`` / ``seeds`` (the experiments).
Nothing is imported here, so ``import lnrecency.experiments.decoders.decoder_config`` works without torch.
"""
