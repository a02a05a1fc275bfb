"""CUDA driver calls the adapters need around a Taichi launch (ctypes, loaded lazily).

Taichi launches its CUDA kernels on the legacy default stream. A framework's work runs
on its own stream (XLA's from the FFI call frame, torch's and CuPy's current stream), so
each launch is bracketed by :func:`order`: before it, the legacy stream waits for the work
queued on the framework's stream (inputs ready, outputs zero-filled); after it, the
framework's stream waits for the kernel. Both waits are CUDA events: the host never
blocks. Scalars that live on the GPU are the exception: a Taichi scalar argument is a
host value, so :func:`read_scalar` copies it to the host and synchronises the stream.
"""

from __future__ import annotations

import ctypes
import threading

from tiarray._internal import cuda as _cuda

__all__ = ["memset_async", "memcpy_async", "read_scalar", "order"]

_fns = None
_lock = threading.Lock()
_host = threading.local()


def _lib():
    global _fns
    if _fns is None:
        with _lock:
            if _fns is None:
                lib = _cuda._cuda()
                memset = lib.cuMemsetD8Async
                memset.argtypes = [ctypes.c_uint64, ctypes.c_ubyte, ctypes.c_size_t, ctypes.c_void_p]
                memcpy = lib.cuMemcpyAsync
                memcpy.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
                dtoh = lib.cuMemcpyDtoHAsync_v2
                dtoh.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
                sync = lib.cuStreamSynchronize
                sync.argtypes = [ctypes.c_void_p]
                _fns = (memset, memcpy, dtoh, sync)
    return _fns


def _check(rc, what):
    if rc != 0:
        raise RuntimeError(f"CUDA driver call {what} failed with error {rc}")


def memset_async(ptr: int, nbytes: int, stream: int) -> None:
    """Zero ``nbytes`` at device address ``ptr`` in the order of ``stream``."""
    if nbytes:
        _check(_lib()[0](ptr, 0, nbytes, stream or None), "cuMemsetD8Async")


def memcpy_async(dst: int, src: int, nbytes: int, stream: int) -> None:
    """Copy ``nbytes`` between device addresses in the order of ``stream``."""
    if nbytes:
        _check(_lib()[1](dst, src, nbytes, stream or None), "cuMemcpyAsync")


def read_scalar(ptr: int, view, shift: int, itemsize: int, stream: int):
    """The value of a 0-d device buffer (copied to the host; synchronises ``stream``)."""
    buf = getattr(_host, "buf", None)
    if buf is None:
        buf = _host.buf = (ctypes.c_uint64 * 1)()
    fns = _lib()
    _check(fns[2](ctypes.addressof(buf), ptr, itemsize, stream or None), "cuMemcpyDtoHAsync")
    _check(fns[3](stream or None), "cuStreamSynchronize")
    return view[ctypes.addressof(buf) >> shift]


def order(stream: int, *, before: bool) -> None:
    """Order Taichi's legacy-stream launch after (``before=True``) or before the work on ``stream``."""
    if stream in (0, _cuda.LEGACY_STREAM):  # the legacy stream itself: already ordered
        return
    if before:
        _cuda.stream_wait(_cuda.LEGACY_STREAM, stream)
    else:
        _cuda.stream_wait(stream, _cuda.LEGACY_STREAM)
