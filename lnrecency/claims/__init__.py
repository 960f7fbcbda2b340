"""Floor 7, the claims: one module per claim, named by the ID a reader sees (``t1_theorem1``,
``c2_no_normalisation`` ... ``c9_finite_width``, ``p1_p7_printed_formulas``, ``p8_p9_printed_numeric``,
``tm1_tm5_trained_decoders``, ``s2_0_premise``, ``s2_s3_seed_experiments``); each declares itself (evaluator,
report tables, figures, notebook cells) with :func:`lnrecency.claims.declare.claim`. Shared machinery:
:mod:`~.mc_checks` (Monte Carlo checks of a claim), :mod:`~.tables_and_plots` (report tables and plots),
:mod:`~.trained_rules` (how trained verdicts are decided), :mod:`~.notebook_cells`. The registry
(:mod:`~.registry`) imports them in order; every ID list derives from it."""
