"""The views of the claims in :mod:`lnrecency.claims.parameter_free`, one module per claim module, named like it."""
