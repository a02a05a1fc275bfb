"""A few CUDA driver calls through ctypes: copies, stream ordering, Taichi's context.

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

__all__ = ["memcpy", "stream_wait", "taichi_context", "LEGACY_STREAM", "PER_THREAD_STREAM"]

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
                lib.cuDeviceGet.argtypes = [ctypes.POINTER(ctypes.c_int), ctypes.c_int]
                lib.cuDevicePrimaryCtxRetain.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
                lib.cuCtxGetCurrent.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
                lib.cuCtxPushCurrent_v2.argtypes = [ctypes.c_void_p]
                lib.cuCtxPopCurrent_v2.argtypes = [ctypes.POINTER(ctypes.c_void_p)]
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


# ----------------------------------------------------------------------------- Taichi's context

_taichi_ctx: list = []  # [CUcontext] once looked up


class taichi_context:
    """Taichi's CUDA context current on this thread for a ``with`` block, when another
    context or none is.

    Taichi runs on device 0's primary context (``CUDAContext``: ``cuDevicePrimaryCtxRetain``,
    made current on the thread that started it) and frees memory without making it current:
    a TiArray or a DLPack export dropped on a thread with no context (a consumer's worker
    thread: JAX's, first CUDA run, 2026-12-04) made Taichi's ``cuMemFreeAsync`` fail with
    CUDA_ERROR_INVALID_CONTEXT, and Taichi aborted the process. Used only where CUDA memory
    is freed: one ``cuCtxGetCurrent`` when the context is already current.
    """

    __slots__ = ("pushed",)

    def __enter__(self):
        self.pushed = False
        lib = _cuda()
        if not _taichi_ctx:
            dev = ctypes.c_int()
            ctx = ctypes.c_void_p()
            _check(lib.cuDeviceGet(ctypes.byref(dev), 0), "cuDeviceGet")
            # Taichi retains it for its lifetime; one more reference, never released
            _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
            _taichi_ctx.append(ctx.value)
        cur = ctypes.c_void_p()
        if lib.cuCtxGetCurrent(ctypes.byref(cur)) == 0 and cur.value == _taichi_ctx[0]:
            return self
        self.pushed = lib.cuCtxPushCurrent_v2(ctypes.c_void_p(_taichi_ctx[0])) == 0
        return self

    def __exit__(self, *exc):
        if self.pushed:
            _cuda().cuCtxPopCurrent_v2(ctypes.byref(ctypes.c_void_p()))
        return False
