"""Strided copy with casting and broadcasting: ``dst[...] = src[...]``."""

from .. import _dtypes
from .._array_object import TiArray
from .._backend import ti
from .._launch import IEEE, Launcher
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
    from .._interop import empty_owned

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
