"""The authors' simulations (their Figures 1-5 and appendix panels), reproduced panel by panel: the catalogue of
figures and rows (:mod:`~.catalogue`), our theory columns beside them (:mod:`~.theory_columns`), the cumulant
ceiling (:mod:`~.ceiling`), the Monte Carlo runs (:mod:`~.panels`), the tables and figures (:mod:`~.outputs`) and
the writer of ``lnrecency reproduce`` (:mod:`~.reproduce`)."""
