"""The command-line parser every entry point uses (``lnrecency``, ``python3 -m lnrecency.report.readme``,
``python3 -m lnrecency.report.regenerate``): argparse with its errors on one line."""
from __future__ import annotations

import argparse

__all__ = ["OneLineParser"]


class OneLineParser(argparse.ArgumentParser):
    """argparse with its errors on one line (the flag, the value, what is allowed, and where the usage is), exit 2,
    instead of a multi-line usage block above the message; no abbreviations of long flags."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")
