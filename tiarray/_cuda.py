"""A few CUDA driver calls through ctypes: copies and stream ordering.

Taichi launches its CUDA kernels on the legacy default stream (stream 0). Other
frameworks work on their own streams: torch on its current stream (the legacy default
unless the user changes it), JAX/XLA and CuPy on non-blocking streams. Whenever memory
crosses from one to the other, the consumer's stream must wait for the producer's work.
This module does that with events (``cuEventRecord`` on the producer stream,
``cuStreamWaitEvent`` on the consumer stream), so the host never blocks.

Loaded lazily: nothing here runs on a machine without CUDA.
"""

from __future__ import annotations

import ctypes
import threading

__all__ = ["memcpy", "stream_wait", "LEGACY_STREAM", "PER_THREAD_STREAM"]

LEGACY_STREAM = 0x1  # CU_STREAM_LEGACY
PER_THREAD_STREAM = 0x2  # CU_STREAM_PER_THREAD
_CU_EVENT_DISABLE_TIMING = 0x2

_lib = None
_lock = threading.Lock()


def _cuda():
    global _lib
    if _lib is None:
        with _lock:
            if _lib is None:
                try:
                    lib = ctypes.CDLL("libcuda.so.1")
                except OSError as e:  # pragma: no cover - needs a machine without CUDA driver
                    raise RuntimeError(f"the CUDA driver (libcuda.so.1) could not be loaded: {e}") from None
                lib.cuMemcpy.argtypes = [ctypes.c_uint64, ctypes.c_uint64, ctypes.c_size_t]
                lib.cuMemcpyAsync.argtypes = [
                    ctypes.c_uint64,
                    ctypes.c_uint64,
                    ctypes.c_size_t,
                    ctypes.c_void_p,
                ]
                lib.cuEventCreate.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint]
                lib.cuEventRecord.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
                lib.cuStreamWaitEvent.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_uint]
                lib.cuEventDestroy_v2.argtypes = [ctypes.c_void_p]
                lib.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
                lib.cuCtxSynchronize.argtypes = []
                _lib = lib
    return _lib


def _check(rc: int, what: str) -> None:
    if rc != 0:
        raise RuntimeError(f"CUDA driver call {what} failed with error {rc}")


def memcpy(dst: int, src: int, nbytes: int) -> None:
    """Copy ``nbytes`` between any two addresses (unified addressing), in stream order of
    the legacy default stream, and wait for it."""
    if nbytes:
        _check(_cuda().cuMemcpy(dst, src, nbytes), "cuMemcpy")


def _stream_handle(stream) -> int:
    if stream is None or stream == 1:
        return LEGACY_STREAM
    if stream == 2:
        return PER_THREAD_STREAM
    if stream == 0:
        raise BufferError("stream=0 is ambiguous and not allowed by the array API; use 1 or 2")
    return int(stream)


def stream_wait(consumer, producer=LEGACY_STREAM) -> None:
    """Make stream ``consumer`` wait for the work queued so far on ``producer``."""
    c = _stream_handle(consumer)
    p = _stream_handle(producer)
    if c == p:
        return
    lib = _cuda()
    ev = ctypes.c_void_p()
    _check(lib.cuEventCreate(ctypes.byref(ev), _CU_EVENT_DISABLE_TIMING), "cuEventCreate")
    try:
        _check(lib.cuEventRecord(ev, ctypes.c_void_p(p)), "cuEventRecord")
        _check(lib.cuStreamWaitEvent(ctypes.c_void_p(c), ev, 0), "cuStreamWaitEvent")
    finally:
        lib.cuEventDestroy_v2(ev)
