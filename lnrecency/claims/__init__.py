"""Floor 7, the claims, decided. Every claim is declared once in :mod:`~.catalog` (ID, module, title, statements and
their sources, the command that fills it, family; standard library only). Its module attaches the evaluator with
:func:`lnrecency.claims.declare.claim`: one module per claim (or per group of printed lines), named by the ID a reader
sees, in :mod:`~.parameter_free` (T1, C2-C9, P1-P9, W1) and :mod:`~.trained` (TM1-TM5, S2.0-S3.3, TT1-TT4, TV1-TV6,
W2-W4, R1). Nothing here draws: what a claim shows is registered by its ID in :mod:`lnrecency.report.views`. Shared
machinery: :mod:`~.mc_checks` (Monte Carlo checks of a claim), :mod:`~.trained_rules` (how trained verdicts are
decided), :mod:`~.cached_study`. The registry (:mod:`~.registry`) imports the modules in catalogue order."""
