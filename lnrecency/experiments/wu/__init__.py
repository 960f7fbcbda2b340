"""Wu et al.'s behavioural experiment (ICML 2025, "On the Emergence of Position Bias in Transformers"; code
``xinyiwu98/position-bias-in-attention``), rebuilt here from its description and code: the in-context
classification task (``icl_task``; numpy only) and their stack of causal attention layers with an MLP head, with a
normalisation that can be inserted (``attention_stack``; torch). The study that trains and decides it is
:mod:`lnrecency.experiments.studies.wu_icl`. Nothing is imported here."""
