"""A thread's reusable arrays for the Monte Carlo's hot loop: a chunk's raw draws and the layers' working arrays
land in memory already mapped, not in fresh pages the kernel must fault in and clear for every sub-batch (the
allocator returns large freed arrays to the system). Measured: ``benchmarks/bench_mc.py --sections breakdown``.

Each named buffer is as large as the largest request so far and is handed out as a view of that shape (contents
undefined). A pool's threads drop theirs when they end; :func:`release` drops the calling thread's.
"""
from __future__ import annotations

import math
import threading

import numpy as np

__all__ = ["buffer", "release"]

_LOCAL = threading.local()


def buffer(name: str, shape: tuple[int, ...]) -> np.ndarray:
    """This thread's float64 array ``name`` viewed as ``shape`` (C-contiguous; contents undefined)."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = {}
    size = math.prod(shape)
    flat = pool.get(name)
    if flat is None or flat.size < size:
        flat = pool[name] = np.empty(size)
    return flat[:size].reshape(shape)


def release() -> None:
    """Drop the calling thread's buffers."""
    _LOCAL.pool = None
