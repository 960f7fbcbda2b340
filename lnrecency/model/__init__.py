"""Floor 3, the model M(norm, residual, lam, gamma, alpha): :mod:`~.config` (ModelConfig, validated once),
:mod:`~.layers` (each normalisation and update rule once, its map on vectors at finite d beside its map on Gram
matrices at d -> infinity), :mod:`~.arithmetic` (the number systems those maps run in: float64, mpmath, sympy,
Taylor jets) and :mod:`~.authors_presets` (the authors' simulation conventions as presets)."""
