"""Compile-time helpers shared by the sparse kernels.

These are plain Python functions called inside ``ti.static(...)`` while Taichi compiles a
kernel: they look at an ndarray argument's element type or at the running arch. They
cost nothing at run time.

No ``from __future__ import annotations`` here: kernels import from this module.
"""

from tiarray import _internal as _core
from tiarray._internal import IEEE  # noqa: F401  (compile options of the non-vectorised kernels)

# Taichi's CPU backend splits a parallel range-for of N iterations into
# ``num_threads`` chunks of ``max(ceil(N / num_threads), 512)`` iterations (taichi 1.7,
# ``cpu_parallel_range_for``; ``ti.loop_config(block_dim=...)`` is ignored on the CPU).
# A loop ``for s in range(nt * CHUNK)`` whose body only acts when ``s % CHUNK == 0``
# therefore hands one "thread slot" to each worker. Correctness never depends on it: a
# worker that receives two slots runs both.
CHUNK = 512


def is_bool(a) -> bool:
    """Whether an ndarray argument holds booleans (passed as u8)."""
    return _core.element_type(a) == _core.ti.u8


def is_i32(a) -> bool:
    """Whether an ndarray argument holds int32 (index arrays: 32-bit comparisons suffice)."""
    return _core.element_type(a) == _core.ti.i32


def ndim(a) -> int:
    return len(a.shape)


def on_gpu() -> bool:
    """Whether kernels are being compiled for a GPU (atomics instead of private buffers)."""
    return _core.compiling_for_gpu()


def num_threads() -> int:
    """Worker threads of Taichi's CPU thread pool (``tiarray._runtime.cpu_workers``)."""
    return _core.cpu_workers()
