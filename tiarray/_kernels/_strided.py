"""Passing strided arrays to kernels: a 1-D span of memory plus offsets and strides."""

from __future__ import annotations

import numpy as np

from .._array_object import TiArray


def span_arg(x: TiArray) -> tuple[tuple, int]:
    """``((ptr, nbytes, (n,)), offset)``: the memory ``x`` touches as a 1-D kernel argument,
    and the element offset of ``x[0, ..., 0]`` in it."""
    lo, hi = x._byte_extent()
    it = x._dtype.itemsize
    n = (hi - lo) // it
    if n == 0:
        # Taichi wants a non-null pointer even when nothing is read
        return (x._ptr or 1, 0, (0,)), 0
    return (lo, hi - lo, (n,)), (x._ptr - lo) // it


def meta_array(*ints) -> np.ndarray:
    """The int64 meta array (host memory; Taichi moves it to the GPU when needed)."""
    return np.array(ints, dtype=np.int64)


def meta_arg(meta: np.ndarray) -> tuple:
    return (meta.ctypes.data, meta.nbytes, meta.shape)
