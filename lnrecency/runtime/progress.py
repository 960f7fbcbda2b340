"""Progress of a long run: a bar on a terminal, one line every few seconds otherwise (nohup, CI, a notebook's
``!lnrecency``), nothing when switched off."""
from __future__ import annotations

import sys
import time

__all__ = ["Progress", "LINE_EVERY"]

#: seconds between two progress lines when stderr is not a terminal
LINE_EVERY = 10.0


class Progress:
    """``Progress(total, desc, enabled)``: ``update(k, note=)`` after k more units; ``close()``.

    ``enabled=None`` shows progress (a tqdm bar on a terminal, else periodic lines on stderr); False shows
    nothing."""

    def __init__(self, total: int, desc: str, unit: str = "it", enabled: bool | None = None):
        self.total, self.desc, self.unit, self.done = total, desc, unit, 0
        self.start = self.last = time.monotonic()
        self.enabled = enabled is not False
        self.bar = None
        if self.enabled and sys.stderr.isatty():
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False)

    def update(self, k: int = 1, note: str = "") -> None:
        self.done += k
        if self.bar is not None:
            if note:
                self.bar.set_postfix_str(note, refresh=False)
            self.bar.update(k)
            return
        now = time.monotonic()
        if self.enabled and (now - self.last >= LINE_EVERY or self.done == self.total):
            self.last = now
            extra = f" ({note})" if note else ""
            print(f"{self.desc}: {self.done}/{self.total} {self.unit}{extra}, {now - self.start:.0f} s",
                  file=sys.stderr, flush=True)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
