"""The exact d -> infinity theory: limit recursion (float64 / mpmath / sympy), closed forms, proofs."""
from lnrecency.theory.limit import LimitLayer, LimitTrajectory, iterate_limit, limit_scores, limit_trajectory

__all__ = ["LimitLayer", "LimitTrajectory", "iterate_limit", "limit_scores", "limit_trajectory"]
