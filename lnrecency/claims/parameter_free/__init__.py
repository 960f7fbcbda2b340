"""Claims about the parameter-free model, decided exactly (sympy, the d -> infinity limit) and by Monte Carlo at
finite width: Theorem 1 (``t1_theorem1``), our formulations C2-C9, the first version's printed derivation P1-P9.
One module per claim (or per group of printed lines), named by the ID a reader sees."""
