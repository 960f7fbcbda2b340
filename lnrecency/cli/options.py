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


def png_path(flag: str, value: str):
    """A figure's file named on the command line: a .png in an existing folder, not a folder or a link (ValueError
    naming ``flag`` and the value); returned as a Path."""
    from pathlib import Path

    fig = Path(value)
    if fig.suffix != ".png" or not fig.parent.is_dir() or fig.is_symlink() or fig.is_dir():
        raise ValueError(f"{flag} {value!r}: must name a .png file in an existing folder (not a folder or a link)")
    return fig
