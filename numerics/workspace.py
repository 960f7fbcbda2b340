"""A thread's reusable arrays for the Monte Carlo's hot loop: a chunk's raw draws and the layers' working arrays
land in memory already mapped, not in fresh pages the kernel must fault in and clear for every sub-batch (the
allocator returns large freed arrays to the system). Measured: ``benchmarks/bench_mc.py --sections breakdown``.

Each named buffer is as large as the largest request so far and is handed out as a view of that shape (contents
undefined). A pool's threads drop theirs when they end; :func:`release` drops the calling thread's. A call that
keeps arrays across steps (a generator: ``forward(reuse=True)``) :func:`take` s them out of the pool and
:func:`give_back` s them when it ends, so two such calls alive at once in one thread never share an array.
"""
from __future__ import annotations

import math
import threading

import numpy as np

__all__ = ["buffer", "release", "take", "give_back"]

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


def take(name: str, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(flat array, its view as ``shape``) owned by the caller until :func:`give_back`: this thread's array ``name``
    taken out of the pool (a new one when it is absent, lent to another live call, or too small)."""
    pool = getattr(_LOCAL, "pool", None)
    size = math.prod(shape)
    flat = pool.pop(name, None) if pool is not None else None
    if flat is None or flat.size < size:
        flat = np.empty(size)
    return flat, flat[:size].reshape(shape)


def give_back(name: str, flat: np.ndarray) -> None:
    """Return an array :func:`take` lent to the calling thread's pool (the larger one is kept)."""
    pool = getattr(_LOCAL, "pool", None)
    if pool is None:
        pool = _LOCAL.pool = {}
    held = pool.get(name)
    if held is None or held.size < flat.size:
        pool[name] = flat


def release() -> None:
    """Drop the calling thread's buffers."""
    _LOCAL.pool = None
