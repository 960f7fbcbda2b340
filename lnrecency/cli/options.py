"""What a command's ``run`` receives: its parsed options as a frozen dataclass.

:func:`lnrecency.cli.app.arguments_type` derives, for each command, a subclass of :class:`Options` with one field
per option the command declared in ``add_arguments`` (its ``dest``, typed by its converter). The values cannot be
changed on the way from the parser to ``run``, and a command reads only what it declared.
"""
from __future__ import annotations

import dataclasses


@dataclasses.dataclass(frozen=True, kw_only=True)
class Options:
    """Base of every command's parsed options (a frozen, keyword-only dataclass)."""

    #: the subcommand's name as typed (``verify``, ``check-formula``, ...)
    command: str


def require_extra(extra: str = "models") -> None:
    """A clear refusal when the optional torch extra (``models``, or ``hf`` which includes it) is missing."""
    try:
        import safetensors  # noqa: F401
        import torch  # noqa: F401
    except ImportError:
        raise ValueError(f"this command needs the '{extra}' extra: python3 -m pip install -e '.[{extra}]'") from None
