"""The experiments on trained and real decoders, each a design and its run, cached through
:mod:`lnrecency.experiments.run_cache`: the thesis on the induction task (``thesis_config``, ``thesis``), the thesis
on text (``thesis_text``), the seeds' experiments (``seeds_config``, ``seed002``, ``seed003``, ``seeds``) and the
real pretrained decoders (``pretrained``)."""
