"""The views of the claims in :mod:`lnrecency.claims.trained`, one module per claim module, named like it."""
