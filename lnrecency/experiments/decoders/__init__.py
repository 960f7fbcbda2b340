"""Our own decoders (optional extra ``models``: torch and safetensors): the model, its configuration, training,
checkpoints, and independent trainings in worker processes.

Modules: ``decoder_config`` (DecoderConfig, TrainSettings; no torch), ``tasks`` (the training tasks; numpy),
``decoder`` (the torch model), ``train`` (deterministic CPU training and checkpoints), ``grouped`` (K seeds as one
grouped model), ``parallel`` (trainings in worker processes). Nothing is imported here, so
``import lnrecency.experiments.decoders.decoder_config`` works without torch.
"""
