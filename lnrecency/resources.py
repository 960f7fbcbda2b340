"""What this machine offers a computation before it starts: memory (refusals are decided before allocating)."""
from __future__ import annotations

__all__ = ["available_memory"]


def available_memory() -> int:
    """MemAvailable from /proc/meminfo (bytes); 4 GiB when unknown."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 4 * 2**30
