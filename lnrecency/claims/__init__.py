"""Claim checks: one module per claim of docs/model.md (see registry.py); printed.py and printed_numeric.py check the
authors' printed derivation P1-P9."""
