"""Claim checks: one module per claim of docs/model.md, each declaring itself (its evaluator, report tables,
figures and notebook cells) with :func:`lnrecency.claims.declare.claim`; printed.py and printed_numeric.py check
the authors' printed derivation P1-P9; trained.py and seeds_trained.py the trained decoders. The registry
(registry.py) imports them in order."""
