"""Copies: the strided copy kernel (``dst[...] = src[...]`` with casting and broadcasting)
and the copies of TiArrays built on it (``copy_array``, ``copy_into``, ``copy_to_device``).

No ``from __future__ import annotations``: this module defines a kernel."""

import numpy as np

from .. import _cuda, _dtypes, _launch, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._buffer import empty_owned
from .._launch import IEEE, Launcher
from .._runtime import Device
from .._views import broadcast_view, collapse, real_view
from ._strided import meta_arg, meta_array, span_arg


@ti.kernel
def _copy(
    dst: ti.types.ndarray(ndim=1),
    src: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    nd: ti.template(),
    to_bool: ti.template(),
    dt: ti.template(),
    f2u: ti.template(),
):
    # meta = [dst_offset, src_offset, shape[nd], dst_strides[nd], src_strides[nd]]
    for i in range(n):
        rem = ti.cast(i, ti.i64)
        od = meta[0]
        os = meta[1]
        for k in ti.static(range(nd)):
            d = nd - 1 - k
            c = rem % meta[2 + d]
            rem = rem // meta[2 + d]
            od += c * meta[2 + nd + d]
            os += c * meta[2 + 2 * nd + d]
        v = src[os]
        if ti.static(to_bool):
            # not (v == 0) rather than v != 0: Taichi's != is ordered, False for NaN
            dst[od] = ti.cast(not (v == 0), ti.u8)
        elif ti.static(f2u):
            # a negative float to an unsigned type (undefined in LLVM, which saturated 32-
            # and 64-bit results but wrapped narrower ones): through int64, wrapping at
            # every width as NumPy does
            if v < 0:
                dst[od] = ti.cast(ti.cast(v, ti.i64), dt)
            else:
                dst[od] = ti.cast(v, dt)
        else:
            dst[od] = ti.cast(v, dt)


_launcher = Launcher(_copy, name="copy", compile_options=IEEE)


def strided_copy(dst: TiArray, src) -> None:
    """Copy ``src`` (broadcast to ``dst.shape``) into ``dst``, casting to ``dst.dtype``.

    Complex data is copied as (re, im) pairs; a real source fills the real parts of a
    complex destination (whose imaginary parts are set to zero); a complex source gives
    its real part to a real destination.
    """
    src = broadcast_view(src, dst._shape, func="copy")
    if dst.size == 0:
        return
    if dst._dtype.kind == "c":
        d = real_view(dst)
        if src._dtype.kind == "c":
            s = real_view(src)
        else:
            # zero the imaginary parts, then write the real parts
            imag = d._view(d._ptr + d._dtype.itemsize, dst._shape, d._strides[:-1])
            _fill_zero(imag)
            d = d._view(d._ptr, dst._shape, d._strides[:-1])
            s = src
    else:
        d = dst
        s = real_view(src)
        if src._dtype.kind == "c":
            s = s._view(s._ptr, src._shape, s._strides[:-1])  # real parts
    _run(d, s)


def _fill_zero(x: TiArray) -> None:
    z = empty_owned((), x._dtype, x._device, zero=True)
    _run(x, broadcast_view(z, x._shape))


def _run(d: TiArray, s: TiArray) -> None:
    shape, (dst_st, src_st) = collapse(d._shape, d._strides, s._strides)
    dspan, doff = span_arg(d)
    sspan, soff = span_arg(s)
    meta = meta_array(doff, soff, *shape, *dst_st, *src_st)
    n = d.size
    to_bool = d._dtype is _dtypes.bool
    dt = _dtypes.taichi_type(d._dtype)
    sd = _dtypes.bool if s._dtype is _dtypes.bool else s._dtype
    spec = _launcher.spec(
        [(d._dtype, 1, False), (sd, 1, False), (_dtypes.int64, 1, False)],
        (len(shape), to_bool, dt, s._dtype.kind == "f" and d._dtype.kind == "u"),
        serial=_launcher.use_serial(n * (d._dtype.itemsize + s._dtype.itemsize)),
    )
    spec.launch([dspan, sspan, meta_arg(meta), n])


# ----------------------------------------------------------------------------- copies of TiArrays


def copy_array(x: TiArray, dtype: _dtypes.DType | None = None, device: Device | None = None) -> TiArray:
    """A new C-contiguous, writable copy of ``x`` (optionally cast and/or on another device)."""
    dtype = x._dtype if dtype is None else dtype
    device = x._device if device is None else device
    if device != x._device:
        y = copy_to_device(x, device)
        return y if dtype is y._dtype else copy_array(y, dtype)
    out = empty_owned(x._shape, dtype, device)
    copy_into(out, x)
    return out


def copy_into(dst: TiArray, src: TiArray) -> None:
    """Copy ``src`` into ``dst`` (same shape, same device), casting to ``dst``'s dtype."""
    if dst.size == 0:
        return
    if dst._device.kind == "cpu" and dst._dtype._np is not None and src._dtype._np is not None:
        # On the CPU a copy is a memory operation: NumPy's copy loops run at memcpy speed
        # on views of the same memory (no round trip).
        np.copyto(dst._numpy_view(), src._numpy_view(), casting="unsafe")
        return
    strided_copy(dst, src)


def copy_to_device(x: TiArray, device: Device, *, stream=None) -> TiArray:
    """Copy ``x`` to another device (CPU <-> CUDA) as a C-contiguous array."""
    if device == x._device:
        return copy_array(x)
    src = x if x._is_c_contiguous() else copy_array(x)
    out = empty_owned(x._shape, x._dtype, device)
    _runtime.sync()
    _cuda.memcpy(out._ptr, src._ptr, src._nbytes())
    return out


def contiguous_for_kernel(x: TiArray):
    """A C-contiguous copy of ``x`` for a kernel argument, and a write-back callable (or
    None for a read-only ``x``) that copies the kernel's writes back after the launch."""
    tmp = copy_array(x)
    if x._readonly:
        return tmp, None
    return tmp, lambda: copy_into(x, tmp)


_launch.attach_contiguous_copy(contiguous_for_kernel)
