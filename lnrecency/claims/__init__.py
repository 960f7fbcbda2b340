"""Floor 7, the claims. Every claim is declared once in :mod:`~.catalog` (ID, module, title, statements and their
sources, the command that fills it, family; standard library only). Its module attaches the evaluator, report tables,
figures and notebook cells with :func:`lnrecency.claims.declare.claim`: one module per claim (or per group of
printed lines), named by the ID a reader sees, in :mod:`~.parameter_free` (T1, C2-C9, P1-P9) and :mod:`~.trained`
(TM1-TM5, S2.0-S3.3, TT1-TT4, TV1-TV6, R1). Shared machinery: :mod:`~.mc_checks` (Monte Carlo checks of a claim),
:mod:`~.tables_and_plots` (report tables and plots), :mod:`~.trained_rules` (how trained verdicts are decided),
:mod:`~.notebook_cells`. The registry (:mod:`~.registry`) imports the modules in catalogue order."""
