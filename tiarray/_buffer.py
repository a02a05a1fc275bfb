"""Memory that tiarray owns: allocation on the CPU and on CUDA.

CPU memory is a 64-byte aligned slice of a NumPy byte buffer. It is not a Taichi
ndarray because Taichi's CPU allocation costs about 40 us and always zero-fills on one
thread (0.4 s for 400 MB); Taichi kernels take CPU memory by pointer at no cost, so
nothing is lost. The alignment is what lets JAX import it without a silent copy.

CUDA memory is a Taichi ndarray of bytes (Taichi's allocator, on Taichi's device and
context), whose data pointer is read with ``get_ndarray_data_ptr_as_int``.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from . import _backend, _cuda, _dtypes, _runtime
from ._array_object import TiArray, c_strides
from ._hostptr import numpy_data_ptr
from ._runtime import Device

__all__ = ["alloc", "empty_owned", "ALIGNMENT"]

ALIGNMENT = 64


# Large host buffers are recycled: a fresh buffer costs its page faults on first touch
# (about 1 ms per 10 MB written by a Taichi kernel, more than the kernel itself), and
# element-wise code allocates a result of the same size call after call. Buffers of at
# least _POOL_MIN bytes whose owner dies wait here, up to _POOL_LIMIT bytes in total, for
# an allocation of the same size (zero-filled allocations never use them).
_POOL: dict = {}
_POOL_BYTES = [0]
_POOL_MIN = 1 << 20
_POOL_LIMIT = 1 << 28


class HostAllocation:
    """Owner of an aligned host allocation (keeps the NumPy byte buffer alive)."""

    __slots__ = ("buf", "raw", "__weakref__")

    def __init__(self, buf, raw=None):
        self.buf = buf
        self.raw = raw  # the whole (unaligned) buffer, recycled when this owner dies

    def __repr__(self) -> str:
        return f"<tiarray host allocation of {self.buf.nbytes} bytes>"

    def __del__(self, _fin=sys.is_finalizing, _refs=sys.getrefcount):
        raw = self.raw
        if raw is None or _fin():
            return
        self.buf = None
        # A NumPy view made from this memory (np.asarray(t), and anything built on it:
        # torch.from_numpy, a slice...) has `raw` as its base and outlives this owner:
        # such memory must never be handed out again. Here the only references are
        # self.raw, the local name and getrefcount's argument.
        if _refs(raw) > 3:
            return
        n = raw.nbytes
        if _POOL_BYTES[0] + n <= _POOL_LIMIT:
            _POOL.setdefault(n, []).append(raw)
            _POOL_BYTES[0] += n


def _pooled(n: int):
    lst = _POOL.get(n)
    if lst:
        try:
            raw = lst.pop()
        except IndexError:  # another thread took it
            return None
        _POOL_BYTES[0] -= n
        return raw
    return None


# Small host buffers are cut from shared 64 KiB slabs (one lock and one slice per buffer,
# no NumPy allocation). A slab's address is read once; each buffer is a 64-byte aligned slice of it (a NumPy
# view, so the slab lives as long as any of its buffers). Zero-filled buffers do not use
# slabs.
_SMALL_MAX = 1024
_SLAB_BYTES = 1 << 16
_slab_lock = threading.Lock()
_slab = [None, 0, _SLAB_BYTES]  # the aligned slab, its address, the next free offset


def _small(n: int) -> tuple[int, np.ndarray]:
    size = (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT
    with _slab_lock:
        slab, base, off = _slab
        if off + size > _SLAB_BYTES:
            raw = np.empty(_SLAB_BYTES + ALIGNMENT, np.uint8)
            addr = numpy_data_ptr(raw)
            a = (-addr) % ALIGNMENT
            slab, base, off = raw[a : a + _SLAB_BYTES], addr + a, 0
            _slab[0], _slab[1] = slab, base
        _slab[2] = off + size
    return base + off, slab[off : off + n]


class DeviceAllocation:
    """Owner of a CUDA allocation made by Taichi (a ``ti.ndarray`` of bytes)."""

    __slots__ = ("ndarray", "ptr", "nbytes", "__weakref__")

    def __init__(self, ndarray, ptr, nbytes):
        self.ndarray = ndarray
        self.ptr = ptr
        self.nbytes = nbytes

    def __repr__(self) -> str:
        return f"<tiarray CUDA allocation of {self.nbytes} bytes>"

    def __del__(self, _fin=sys.is_finalizing, _ctx=_cuda.taichi_context):
        # freed under Taichi's context: the last reference may die on any thread (see
        # _cuda.taichi_context: on a consumer's worker thread Taichi aborted the process)
        nd, self.ndarray = self.ndarray, None
        if nd is None or _fin():
            return
        with _ctx():
            del nd


def alloc(nbytes: int, device: Device, *, zero: bool = False) -> tuple[int, object]:
    """Allocate ``nbytes`` on ``device``; returns ``(pointer, owner)``.

    ``zero=True`` gives zero-filled memory (calloc'd pages on the CPU, which cost nothing
    until touched).
    """
    if device.kind == "cpu":
        n = max(int(nbytes), 1)
        if n <= _SMALL_MAX and not zero:
            addr, buf = _small(n)
            return addr, HostAllocation(buf)
        big = n >= _POOL_MIN and not zero
        raw = _pooled(n + ALIGNMENT) if big else None
        if raw is None:
            raw = (np.zeros if zero else np.empty)(n + ALIGNMENT, np.uint8)
        addr = numpy_data_ptr(raw)
        off = (-addr) % ALIGNMENT
        buf = raw[off : off + n]
        return addr + off, HostAllocation(buf, raw if big else None)
    return _alloc_cuda(int(nbytes), device)


def _alloc_cuda(nbytes: int, device: Device):
    cur = _runtime.current_device()
    if cur != device:
        raise RuntimeError(
            f"cannot allocate on {device}: Taichi runs on {cur}. Start tiarray with "
            "tiarray.init('cuda') (or ti.init(arch=ti.cuda)) to use CUDA memory"
        )
    n = max(nbytes, 1)
    # Round up so that 8-byte element types stay aligned in the byte array.
    nd, ptr = _backend.alloc_bytes((n + 7) // 8 * 8)
    # Taichi's ndarray allocation zero-fills already.
    return ptr, DeviceAllocation(nd, ptr, n)


def empty_owned(shape: tuple, dtype: _dtypes.DType, device: Device, *, zero: bool = False) -> TiArray:
    """A new C-contiguous array in memory tiarray owns."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    ptr, owner = alloc(nbytes, device, zero=zero)
    t = TiArray._new(ptr, shape, c_strides(shape), dtype, device, owner, False)
    if device.kind == "cpu" and dtype._np is not None:
        t._npv = owner.buf[:nbytes].view(dtype._np).reshape(shape)  # cheaper than building one later
    return t
