"""Finite-width Monte Carlo of the parameter-free attention stack: direct and d-independent
(Bartlett/Gram) samplers, streaming means and standard errors, paired orderings, convergence in d."""
from lnrecency.inference.stats import Estimate, Proportion
from lnrecency.numerics.convergence import (
                                  ConvergenceResult,
                                  OrderingEvidence,
                                  OrderingSearch,
                                  RateFit,
                                  convergence_in_d,
                                  smallest_d_for_ordering,
)
from lnrecency.numerics.simulate import (
                                  METHODS,
                                  Instances,
                                  ScoreSimulation,
                                  estimate_memory,
                                  sample_instances,
                                  simulate_scores,
)

__all__ = ["METHODS", "ScoreSimulation", "estimate_memory", "simulate_scores", "Instances", "sample_instances",
           "Estimate", "Proportion",
           "ConvergenceResult", "RateFit", "convergence_in_d", "OrderingEvidence", "OrderingSearch",
           "smallest_d_for_ordering"]
