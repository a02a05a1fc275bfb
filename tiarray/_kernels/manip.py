"""Small kernels of the manipulation functions: the index expansion of ``repeat``."""

import numpy as np

from .. import _dtypes
from .._array_object import TiArray
from .._backend import ti
from .._launch import IEEE, Launcher
from ._strided import meta_arg
from .gather import span as span_arg

# the largest repeat total (an int64 sum that cannot wrap; no such array can be allocated)
_REPEAT_LIMIT = 1 << 62


@ti.kernel
def _scan(
    rep: ti.types.ndarray(ndim=1),
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
):
    """Exclusive prefix sum of the (strided) repeat counts; meta = [offset, stride, total, bad]:
    bad = 1 for a negative count, 2 for a total past ``_REPEAT_LIMIT`` (the int64 sum wrapped:
    2**62 four times gave an empty result, 2026-12-05; a uint64 count past 2**63 read as
    negative)."""
    ti.loop_config(serialize=True)
    for _ in range(1):
        acc = ti.cast(0, ti.i64)
        off = meta[0]
        st = meta[1]
        for i in range(n):
            v = rep[off + i * st]
            r = ti.cast(v, ti.i64)
            if ti.static(rep.get_type().element_type in (ti.u8, ti.u16, ti.u32, ti.u64)):
                if ti.cast(v, ti.u64) > ti.u64(_REPEAT_LIMIT):
                    meta[3] = 2
                    r = 0
            elif r < 0:
                meta[3] = 1
                r = 0
            if r > ti.i64(_REPEAT_LIMIT) - acc:
                meta[3] = 2
                r = 0
            starts[i] = acc
            acc += r
        meta[2] = acc


@ti.kernel
def _expand(
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    out: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    total: ti.i64,
):
    """``out[starts[i]:starts[i+1]] = i`` (the index array of ``repeat``)."""
    for i in range(n):
        lo = starts[i]
        hi = total
        if i + 1 < n:
            hi = starts[i + 1]
        for j in range(ti.cast(hi - lo, ti.i32)):
            out[lo + j] = i


@ti.kernel
def _freq(
    out: ti.types.ndarray(ndim=1), n: ti.i64, scale: ti.f64, m: ti.i32, half: ti.template(), dt: ti.template()
):
    """The sample frequencies of fft (``half``: of rfft): ``k * scale`` with ``k`` wrapped."""
    for i in range(m):
        v = ti.cast(i, ti.i64)
        if ti.static(not half):
            if v >= (n + 1) // 2:
                v -= n
        out[i] = ti.cast(ti.cast(v, ti.f64) * scale, dt)


_freq_l = Launcher(_freq, name="fftfreq", compile_options=IEEE)


def frequencies(out: TiArray, n: int, scale: float, half: bool) -> None:
    """Fill the 1-D contiguous ``out`` with the fft (or rfft) sample frequencies."""
    m = out.size
    spec = _freq_l.spec(
        [(out._dtype, 1, False)], (half, _dtypes.taichi_type(out._dtype)), serial=_freq_l.use_serial(8 * m)
    )
    spec.launch([(out._ptr, out._nbytes(), (m,)), n, scale, m])


_scan_l = Launcher(_scan, name="repeat_scan", compile_options=IEEE)
_expand_l = Launcher(_expand, name="repeat_expand", compile_options=IEEE)


def repeat_index(rep: TiArray, func: str) -> TiArray:
    """The int64 index array ``[0]*rep[0] + [1]*rep[1] + ...`` on ``rep``'s device."""
    from .._buffer import empty_owned

    n = rep.size
    starts = empty_owned((max(n, 1),), _dtypes.int64, rep._device)
    meta = np.zeros(4, dtype=np.int64)
    span, off = span_arg(rep)
    meta[0] = off
    meta[1] = rep._strides[0] if rep.ndim else 0
    sd = _dtypes.uint8 if rep._dtype is _dtypes.bool else rep._dtype
    if n:
        _scan_l.spec(
            [(sd, 1, False), (_dtypes.int64, 1, False), (_dtypes.int64, 1, False)], (), serial=True
        ).launch([span, (starts._ptr, starts._nbytes(), starts._shape), meta_arg(meta), n])
    if meta[3] == 1:
        raise ValueError(f"{func}(): argument 'repeats' must not contain negative values")
    if meta[3] == 2:
        raise ValueError(
            f"{func}(): argument 'repeats' sums to more than {_REPEAT_LIMIT} elements: the result cannot be allocated"
        )
    total = int(meta[2])
    out = empty_owned((total,), _dtypes.int64, rep._device)
    if total:
        spec = _expand_l.spec(
            [(_dtypes.int64, 1, False), (_dtypes.int64, 1, False)],
            (),
            serial=_expand_l.use_serial(8 * (n + total)),
        )
        spec.launch(
            [(starts._ptr, starts._nbytes(), starts._shape), (out._ptr, out._nbytes(), (total,)), n, total]
        )
    return out
