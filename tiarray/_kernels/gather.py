"""Gather and scatter: the kernels of advanced indexing, ``take`` and ``take_along_axis``.

All kernels move raw bits: data of any dtype is viewed as the unsigned integer type of
its item size (``float32`` as ``uint32``, ``complex128`` as pairs of ``uint64``, ...), so
one compiled kernel serves every dtype of a given size.

Every index is bounds-checked inside the kernel: an out-of-range index is never
dereferenced; the kernel records it in a small error array and the caller raises
``IndexError``.

The layout of the general gather/scatter (``_move``): the output (or, for a scatter, the
value array) has ``nd`` axes; one of them, ``p``, is the *advanced* axis. For each output
element with coordinates ``c``::

    i   = idx_base + sum_d c[d] * ist[d]                 # where its index lives
    v   = idx[i]                                          # raw index or precomputed offset
    src = x_base + sum_{d != p} c[d] * xst[d] + f(v)      # f(v) = wrap(v) * xst[p] or v
    dst = y_base + sum_d c[d] * yst[d]

and ``y[dst] = x[src]`` (gather) or ``x[src] = y[dst]`` (scatter).
"""

import numpy as np

from .. import _dtypes, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._buffer import empty_owned
from .._launch import IEEE, Launcher
from .._views import collapse, real_view
from ._strided import meta_arg, meta_array, span_arg
from .copy import copy_array

# meta layout of _move: [x_base, y_base, idx_base, adv_dim, shape[nd], xst[nd], yst[nd], ist[nd], err, bad]
_H = 4


@ti.kernel
def _move(
    x: ti.types.ndarray(ndim=1),
    idx: ti.types.ndarray(ndim=1),
    y: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    bs: ti.i32,
    nblocks: ti.i32,
    nd: ti.template(),
    p: ti.template(),
    raw: ti.template(),
    scatter: ti.template(),
):
    # Blocks of `bs` consecutive output elements; coordinates are decomposed once per block
    # and then advanced like an odometer (no integer division per element). The layout is
    # read into registers first: stores to x/y could alias `meta` as far as LLVM knows.
    for blk in range(nblocks):
        shape = ti.Vector([meta[_H + d] for d in ti.static(range(nd))], dt=ti.i64)
        xst = ti.Vector([meta[_H + nd + d] for d in ti.static(range(nd))], dt=ti.i64)
        yst = ti.Vector([meta[_H + 2 * nd + d] for d in ti.static(range(nd))], dt=ti.i64)
        ist = ti.Vector([meta[_H + 3 * nd + d] for d in ti.static(range(nd))], dt=ti.i64)
        dim = meta[3]
        lo = blk * bs
        hi = ti.min(lo + bs, n)
        c = ti.Vector([0] * nd, dt=ti.i64)
        rem = ti.cast(lo, ti.i64)
        ox = meta[0]
        oy = meta[1]
        oi = meta[2]
        for k in ti.static(range(nd)):
            d = ti.static(nd - 1 - k)
            c[d] = rem % shape[d]
            rem = rem // shape[d]
            if ti.static(d != p):
                ox += c[d] * xst[d]
            oy += c[d] * yst[d]
            oi += c[d] * ist[d]
        pst = xst[p]
        bad = 0
        badv = ti.cast(0, ti.i64)
        last = ti.static(nd - 1)
        for i in range(lo, hi):
            v = ti.cast(idx[oi], ti.i64)
            src = ox
            if ti.static(raw):
                if v < 0:
                    v += dim
                if v < 0 or v >= dim:
                    bad = 1
                    badv = ti.cast(idx[oi], ti.i64)
                    v = 0  # never dereferenced: reads/writes element 0 of the axis instead
                src += v * pst
            else:
                src += v
            if ti.static(raw):
                if bad == 0:
                    if ti.static(scatter):
                        x[src] = y[oy]
                    else:
                        y[oy] = x[src]
            else:
                if ti.static(scatter):
                    x[src] = y[oy]
                else:
                    y[oy] = x[src]
            # advance the odometer by one element
            c[last] += 1
            if ti.static(last != p):
                ox += xst[last]
            oy += yst[last]
            oi += ist[last]
            for k in ti.static(range(nd - 1)):
                d = ti.static(nd - 1 - k)
                if c[d] == shape[d]:
                    c[d] = 0
                    c[d - 1] += 1
                    if ti.static(d != p):
                        ox -= shape[d] * xst[d]
                    if ti.static(d - 1 != p):
                        ox += xst[d - 1]
                    oy += yst[d - 1] - shape[d] * yst[d]
                    oi += ist[d - 1] - shape[d] * ist[d]
        if bad != 0:
            meta[_H + 4 * nd] = 1
            meta[_H + 4 * nd + 1] = badv


@ti.kernel
def _gather1(
    x: ti.types.ndarray(ndim=1),
    idx: ti.types.ndarray(ndim=1),
    y: ti.types.ndarray(ndim=1),
    err: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    xo: ti.i32,
    xs: ti.i32,
    yo: ti.i32,
    ys: ti.i32,
    io: ti.i32,
    is_: ti.i32,
    dim: ti.i64,
    unit: ti.template(),
):
    """``y[i] = x[wrap(idx[i])]`` on 1-D strided operands: the common case of ``take`` and
    ``x[int_array]``, without the odometer of ``_move``. Offsets fit in 32 bits (every
    operand spans fewer than 2**31 elements). Branch-free: an invalid index reads element
    0 of the axis (``dim > 0`` is checked by the caller) and is reported in ``err``.

    ``unit``: every offset is 0 and every stride 1. Taichi reloads each kernel argument
    from the launch context after every store (it cannot rule out aliasing), so fewer
    arguments per element is measurably faster."""
    for i in range(n):
        raw = ti.cast(0, ti.i64)
        if ti.static(unit):
            raw = ti.cast(idx[i], ti.i64)
        else:
            raw = ti.cast(idx[io + i * is_], ti.i64)
        v = raw
        if v < 0:
            v += dim
        ok = v >= 0 and v < dim
        if ti.static(unit):
            y[i] = x[ti.select(ok, ti.cast(v, ti.i32), 0)]
        else:
            y[yo + i * ys] = x[xo + ti.select(ok, ti.cast(v, ti.i32), 0) * xs]
        if not ok:
            err[0] = 1
            err[1] = raw


# meta layout of _offsets: [idx_base, adv_dim, adv_stride, shape[nd], ist[nd]]
@ti.kernel
def _offsets(
    idx: ti.types.ndarray(ndim=1),
    off: ti.types.ndarray(dtype=ti.i64, ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    err: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    nd: ti.template(),
    first: ti.template(),
    raw: ti.template(),
):
    """``off[b] (+)= wrap(idx[b]) * stride`` over the broadcast index shape (C order)."""
    for b in range(n):
        rem = ti.cast(b, ti.i64)
        oi = meta[0]
        for k in ti.static(range(nd)):
            d = ti.static(nd - 1 - k)
            c = rem % meta[3 + d]
            rem = rem // meta[3 + d]
            oi += c * meta[3 + nd + d]
        v = ti.cast(idx[oi], ti.i64)
        if ti.static(raw):
            dim = meta[1]
            if v < 0:
                v += dim
            if v < 0 or v >= dim:
                err[0] = 1
                err[1] = ti.cast(idx[oi], ti.i64)
                v = 0
            v *= meta[2]
        if ti.static(first):
            off[b] = v
        else:
            off[b] += v


@ti.kernel
def _check(
    idx: ti.types.ndarray(ndim=1), err: ti.types.ndarray(dtype=ti.i64, ndim=1), n: ti.i32, dim: ti.i64
):
    """Record an index outside ``[-dim, dim)`` (validation before a scatter writes anything)."""
    for i in range(n):
        v = ti.cast(idx[i], ti.i64)
        if v < -dim or v >= dim:
            err[0] = 1
            err[1] = v


# ----------------------------------------------------------------------------- boolean masks


@ti.kernel
def _mask_count(
    mask: ti.types.ndarray(dtype=ti.u8, ndim=1),
    counts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    bs: ti.i32,
    nblocks: ti.i32,
):
    """Number of true elements in each block of ``bs`` elements (mask is contiguous)."""
    for blk in range(nblocks):
        lo = blk * bs
        hi = ti.min(lo + bs, n)
        s = 0
        for i in range(lo, hi):
            s += ti.cast(mask[i] != 0, ti.i32)
        counts[blk] = s


# meta of _mask_offsets: [base, shape[nd], strides[nd]]
@ti.kernel
def _mask_offsets(
    mask: ti.types.ndarray(dtype=ti.u8, ndim=1),
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    off: ti.types.ndarray(dtype=ti.i64, ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    bs: ti.i32,
    nblocks: ti.i32,
    nd: ti.template(),
):
    """For the k-th true element (C order), its element offset ``sum c[d] * strides[d]``."""
    for blk in range(nblocks):
        lo = blk * bs
        hi = ti.min(lo + bs, n)
        pos = starts[blk]
        for i in range(lo, hi):
            if mask[i] != 0:
                rem = ti.cast(i, ti.i64)
                o = meta[0]
                for k in ti.static(range(nd)):
                    d = ti.static(nd - 1 - k)
                    c = rem % meta[1 + d]
                    rem = rem // meta[1 + d]
                    o += c * meta[1 + nd + d]
                off[pos] = o
                pos += 1


# meta of _mask_select: [x_base, x_row_stride, x_col_stride, ncols, count (out, one block)]
@ti.kernel
def _mask_select(
    x: ti.types.ndarray(ndim=1),
    mask: ti.types.ndarray(dtype=ti.u8, ndim=1),
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    y: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    bs: ti.i32,
    nblocks: ti.i32,
    scalar_rows: ti.template(),
    scatter: ti.template(),
):
    """``y[k, :] = x[r_k, :]`` (or the reverse) for the k-th true row ``r_k`` of the mask.

    ``x`` rows are ``x_base + r * row_stride + j * col_stride``; ``y`` is contiguous.
    """
    for blk in range(nblocks):
        lo = blk * bs
        hi = ti.min(lo + bs, n)
        pos = starts[blk]
        xb = meta[0]
        rs = meta[1]
        if ti.static(scalar_rows):
            for i in range(lo, hi):
                if mask[i] != 0:
                    if ti.static(scatter):
                        x[xb + i * rs] = y[pos]
                    else:
                        y[pos] = x[xb + i * rs]
                    pos += 1
        else:
            cs = meta[2]
            nc = ti.cast(meta[3], ti.i32)
            for i in range(lo, hi):
                if mask[i] != 0:
                    for j in range(nc):
                        if ti.static(scatter):
                            x[xb + i * rs + j * cs] = y[pos * nc + j]
                        else:
                            y[pos * nc + j] = x[xb + i * rs + j * cs]
                    pos += 1
        if nblocks == 1:
            meta[4] = pos  # the number of rows (one pass over a small mask, see mask_compact)


# meta of _mask_fill: [x_base, x_row_stride, x_col_stride, ncols]
@ti.kernel
def _mask_fill(
    x: ti.types.ndarray(ndim=1),
    mask: ti.types.ndarray(dtype=ti.u8, ndim=1),
    v: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
):
    """``x[r, :] = v[:]`` for every true row ``r`` of the mask (``v`` has ``ncols`` items)."""
    for i in range(n):
        if mask[i] != 0:
            xb = meta[0] + i * meta[1]
            for j in range(ti.cast(meta[3], ti.i32)):
                x[xb + j * meta[2]] = v[j]


_move_l = Launcher(_move, name="gather", compile_options=IEEE)
_offsets_l = Launcher(_offsets, name="index_offsets", compile_options=IEEE)
_gather1_l = Launcher(_gather1, name="gather_1d", compile_options=IEEE)
_check_l = Launcher(_check, name="index_check", compile_options=IEEE)
_count_l = Launcher(_mask_count, name="mask_count", compile_options=IEEE)
_mask_offsets_l = Launcher(_mask_offsets, name="mask_offsets", compile_options=IEEE)
_select_l = Launcher(_mask_select, name="mask_select", compile_options=IEEE)
_fill_l = Launcher(_mask_fill, name="mask_fill", compile_options=IEEE)

_UINT = {1: _dtypes.uint8, 2: _dtypes.uint16, 4: _dtypes.uint32, 8: _dtypes.uint64}
_BLOCK = 8192
_MOVE_BLOCK = 2048


def bits_view(x: TiArray) -> TiArray:
    """``x`` as unsigned integers of its item size (complex128: a trailing axis of 2 uint64)."""
    if x._dtype is _dtypes.complex128:
        r = real_view(x)
        return TiArray._new(r._ptr, r._shape, r._strides, _dtypes.uint64, r._device, r._owner, r._readonly)
    u = _UINT[x._dtype.itemsize]
    return TiArray._new(x._ptr, x._shape, x._strides, u, x._device, x._owner, x._readonly)


def _index_sig(d: _dtypes.DType) -> _dtypes.DType:
    return _dtypes.uint8 if d is _dtypes.bool else d


def _err() -> np.ndarray:
    return np.zeros(2, dtype=np.int64)


class IndexOutOfBounds(Exception):
    """Raised by the helpers below with the offending index value; callers re-raise IndexError."""

    def __init__(self, value):
        super().__init__(value)
        self.value = int(value)


def move(
    x: TiArray,
    idx: TiArray,
    y: TiArray,
    shape: tuple,
    xst: tuple,
    yst: tuple,
    ist: tuple,
    p: int,
    adv_dim: int,
    *,
    raw: bool,
    scatter: bool,
) -> None:
    """Run ``_move`` (see the module docstring). ``x``/``y`` are bit views of equal dtype;
    ``xst[p]`` is the advanced axis' stride (raw mode). Raises IndexOutOfBounds."""
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return
    xs, xo = span(x)
    ys, yo = span(y)
    is_, io = span(idx)
    nd = len(shape)
    meta = np.array((xo, yo, io, adv_dim, *shape, *xst, *yst, *ist, 0, 0), dtype=np.int64)
    it = x._dtype.itemsize
    idt = idx._dtype
    serial = _move_l.use_serial(n * (2 * it + idt.itemsize))
    key = (x._dtype, idt, nd, p, raw, scatter, serial)
    spec = _move_specs.get(key)
    if _runtime.program() is not _runtime.CACHES.prog:
        _runtime.ensure_init()
    if spec is None:
        spec = _move_l.spec(
            [
                (x._dtype, 1, False),
                (_index_sig(idt), 1, False),
                (y._dtype, 1, False),
                (_dtypes.int64, 1, False),
            ],
            (nd, p, raw, scatter),
            serial=serial,
        )
        _move_specs[key] = spec
    bs = _MOVE_BLOCK
    spec.launch([xs, is_, ys, (meta.ctypes.data, meta.nbytes, meta.shape), n, bs, -(-n // bs)])
    if meta[-2]:
        raise IndexOutOfBounds(meta[-1])


_move_specs: dict = {}
_runtime.register_cache(_move_specs.clear)


def gather1(x: TiArray, idx: TiArray, y: TiArray, xst: int, yst: int, ist: int, dim: int) -> None:
    """``y[i * yst] = x[wrap(idx[i * ist]) * xst]`` for ``i < y.size`` (bit views). Raises
    IndexOutOfBounds."""
    n = y.size
    if n == 0:
        return
    if dim == 0:
        # every index is out of range, and the kernel must not read the empty axis
        raise IndexOutOfBounds(int(idx._view(idx._ptr, (), ()).item()))
    xs, xo = span(x)
    ys, yo = span(y)
    is_, io = span(idx)
    err = np.zeros(2, dtype=np.int64)
    idt = idx._dtype
    unit = xo == 0 and yo == 0 and io == 0 and xst == 1 and yst == 1 and ist == 1
    spec = _gather1_l.spec(
        [(x._dtype, 1, False), (_index_sig(idt), 1, False), (y._dtype, 1, False), (_dtypes.int64, 1, False)],
        (unit,),
        serial=_gather1_l.use_serial(n * (2 * x._dtype.itemsize + idt.itemsize)),
    )
    spec.launch([xs, is_, ys, (err.ctypes.data, 16, (2,)), n, xo, xst, yo, yst, io, ist, dim])
    if err[0]:
        raise IndexOutOfBounds(err[1])


_MAX_ELEMENTS = 2**31 - 1


def check_elements(n: int, what: str = "an array") -> None:
    """Taichi indexes ndarrays with 32-bit integers: refuse spans it cannot address (rather
    than let an index wrap around)."""
    if n > _MAX_ELEMENTS:
        raise ValueError(
            f"{what} spans {n} elements; Taichi kernels index memory with 32-bit integers "
            f"(at most {_MAX_ELEMENTS} elements per operand)"
        )


def span(x: TiArray) -> tuple:
    """``span_arg`` with a shortcut for C-contiguous arrays, refusing spans too large for
    Taichi's 32-bit indices."""
    if x._is_c_contiguous():
        n = x.size
        if n:
            check_elements(n)
            return (x._ptr, n * x._dtype.itemsize, (n,)), 0
    sp, off = span_arg(x)
    check_elements(sp[2][0])
    return sp, off


def check_bounds(idx: TiArray, dim: int) -> None:
    """Raise IndexOutOfBounds if the contiguous 1-D ``idx`` holds an index outside ``[-dim, dim)``."""
    n = idx.size
    if n == 0:
        return
    err = _err()
    spec = _check_l.spec(
        [(_index_sig(idx._dtype), 1, False), (_dtypes.int64, 1, False)],
        (),
        serial=_check_l.use_serial(n * idx._dtype.itemsize),
    )
    spec.launch([(idx._ptr, idx._nbytes(), (n,)), meta_arg(err), n, dim])
    if err[0]:
        raise IndexOutOfBounds(err[1])


def offsets(idx: TiArray, off: TiArray, bshape: tuple, ist: tuple, dim: int, stride: int, *, first: bool,
            raw: bool = True) -> None:  # fmt: skip
    """``off (+)= wrap(idx) * stride`` over ``bshape`` (``idx`` strides ``ist``, broadcast)."""
    n = off.size
    if n == 0:
        return
    shape, (ist_c,) = collapse(tuple(bshape), tuple(ist))
    is_, io = span(idx)
    meta = meta_array(io, dim, stride, *shape, *ist_c)
    err = _err()
    spec = _offsets_l.spec(
        [(_index_sig(idx._dtype), 1, False), (_dtypes.int64, 1, False), (_dtypes.int64, 1, False),
         (_dtypes.int64, 1, False)],
        (len(shape), first, raw),
        serial=_offsets_l.use_serial(n * 16),
    )  # fmt: skip
    spec.launch([is_, (off._ptr, off._nbytes(), (n,)), meta_arg(meta), meta_arg(err), n])
    if err[0]:
        raise IndexOutOfBounds(err[1])


def _flat_mask(mask: TiArray) -> TiArray:
    """A C-contiguous ``uint8`` view (or copy) of a boolean mask, flattened."""
    if not mask._is_c_contiguous():
        mask = copy_array(mask)
    n = mask.size
    return TiArray._new(mask._ptr, (n,), (1,), _dtypes.uint8, mask._device, mask._owner, True)


def mask_starts(mask: TiArray):
    """``(flat_mask, starts, count, bs, nblocks)``: per-block start positions of the true elements."""
    m = _flat_mask(mask)
    n = m.size
    bs = _BLOCK
    nblocks = max(1, -(-n // bs))
    counts = np.zeros(nblocks, dtype=np.int64)
    if n:
        spec = _count_l.spec(
            [(_dtypes.uint8, 1, False), (_dtypes.int64, 1, False)], (), serial=_count_l.use_serial(n)
        )
        spec.launch([(m._ptr, n, (n,)), meta_arg(counts), n, bs, nblocks])
    starts = np.zeros(nblocks, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    count = int(starts[-1] + counts[-1])
    return m, starts, count, bs, nblocks


def mask_offsets(mask: TiArray, strides: tuple, base: int = 0):
    """The element offsets (int64, on the host or device of ``mask``) of the true elements of
    ``mask`` within an array with ``strides`` over the mask's axes, in C order."""
    m, starts, count, bs, nblocks = mask_starts(mask)
    off = empty_owned((count,), _dtypes.int64, mask._device)
    if count:
        shape = mask._shape
        nd = max(1, len(shape))
        meta = meta_array(base, *(shape or (1,)), *(strides or (0,)))
        n = m.size
        spec = _mask_offsets_l.spec(
            [(_dtypes.uint8, 1, False), (_dtypes.int64, 1, False), (_dtypes.int64, 1, False),
             (_dtypes.int64, 1, False)],
            (nd,),
            serial=_mask_offsets_l.use_serial(n + 8 * count),
        )  # fmt: skip
        spec.launch([(m._ptr, n, (n,)), meta_arg(starts), (off._ptr, off._nbytes(), (count,)), meta_arg(meta),
                     n, bs, nblocks])  # fmt: skip
    return off


def mask_select(x: TiArray, m: TiArray, starts, count: int, bs: int, nblocks: int, y: TiArray,
                row_stride: int, col_stride: int, ncols: int, base: int, *, scatter: bool) -> None:  # fmt: skip
    """Copy the selected rows of ``x`` (bit view) to/from contiguous ``y`` (bit view).

    ``base`` is the element offset of row 0 in ``x``'s span."""
    n = m.size
    if n == 0 or count == 0 or ncols == 0:
        return
    xs, xo = span(x)
    meta = meta_array(xo + base, row_stride, col_stride, ncols, 0)
    it = x._dtype.itemsize
    spec = _select_l.spec(
        [(x._dtype, 1, False), (_dtypes.uint8, 1, False), (_dtypes.int64, 1, False), (y._dtype, 1, False),
         (_dtypes.int64, 1, False)],
        (ncols == 1, scatter),
        serial=_select_l.use_serial(n + 2 * it * count * ncols),
    )  # fmt: skip
    spec.launch([xs, (m._ptr, n, (n,)), meta_arg(starts), (y._ptr, y._nbytes(), (y.size,)), meta_arg(meta),
                 n, bs, nblocks])  # fmt: skip


def mask_compact(x: TiArray, m: TiArray, y: TiArray, row_stride: int, col_stride: int, ncols: int) -> int:
    """One serial pass: copy the selected rows of ``x`` (bit view) into ``y`` (bit view, room
    for every row) and return their number. For small arrays, where a second launch (the
    count pass of :func:`mask_starts`) costs more than the work."""
    n = m.size
    if n == 0:
        return 0
    xs, xo = span(x)
    meta = meta_array(xo, row_stride, col_stride, ncols, 0)
    starts = np.zeros(1, dtype=np.int64)
    spec = _select_l.spec(
        [(x._dtype, 1, False), (_dtypes.uint8, 1, False), (_dtypes.int64, 1, False), (y._dtype, 1, False),
         (_dtypes.int64, 1, False)],
        (ncols == 1, False),
        serial=True,
    )  # fmt: skip
    spec.launch([xs, (m._ptr, n, (n,)), meta_arg(starts), (y._ptr, y._nbytes(), (y.size,)), meta_arg(meta),
                 n, n, 1])  # fmt: skip
    return int(meta[4])


def mask_fill(x: TiArray, m: TiArray, v: TiArray, row_stride: int, col_stride: int, ncols: int,
              base: int) -> None:  # fmt: skip
    """``x[r, :] = v`` for the true rows ``r`` of the flat mask ``m`` (``x``, ``v`` bit views,
    ``v`` contiguous with ``ncols`` elements)."""
    n = m.size
    if n == 0 or ncols == 0:
        return
    xs, xo = span(x)
    meta = meta_array(xo + base, row_stride, col_stride, ncols)
    spec = _fill_l.spec(
        [(x._dtype, 1, False), (_dtypes.uint8, 1, False), (v._dtype, 1, False), (_dtypes.int64, 1, False)],
        (),
        serial=_fill_l.use_serial(n * (1 + x._dtype.itemsize)),
    )
    spec.launch([xs, (m._ptr, n, (n,)), (v._ptr, v._nbytes(), (v.size,)), meta_arg(meta), n])
