"""Stable sorting along one axis: a parallel merge sort on (key, index) pairs.

Values become unsigned integer *keys* whose order is the value order: unsigned integers
as they are, signed integers with the sign bit flipped, floats with the bits of negative
numbers flipped (``-0.0`` is made ``+0.0`` first, so that signed zeros compare equal and
keep their order; every NaN becomes the largest key, so NaNs sort last). A descending
sort inverts the keys, which keeps equal elements in their original order (NaNs first).

The rows (every axis but the sorted one) are copied into contiguous key and index
buffers by a kernel that also insertion-sorts blocks of 32 elements. Merge passes then
double the sorted runs; every pass is split into segments of at most 4096 output
elements, each found by a binary search on the merge path, so that all passes are
parallel whatever the number of rows. A last kernel writes the indices (argsort) or
gathers the values (sort) into the output's layout.
"""

import math

import taichi as ti

from .. import _dtypes
from .._array_object import TiArray
from .._interop import empty_owned
from .._launch import Launcher
from .._views import collapse
from ._strided import meta_arg, meta_array, span_arg
from .reduce import dummy, get_spec, kernel_dtype

BLOCK = 32
SEGMENT = 4096

# key kinds (template values); K_NANCLASS: for complex data viewed as its real parts
# (imaginary parts one element further), 2 * isnan(re) + isnan(im): NumPy's order puts
# R + Rj first, then R + nan j, nan + R j, nan + nan j.
K_UNSIGNED, K_SIGNED, K_FLOAT, K_NANCLASS = range(4)


@ti.func
def sort_key(v, kind: ti.template(), vt: ti.template(), kt: ti.template(), desc: ti.template()):
    """The unsigned key of value ``v`` (see the module docstring)."""
    k = ti.cast(0, kt)
    top = ti.cast(ti.u32(0x80000000), kt)
    if ti.static(kt == ti.u64):
        top = ti.cast(ti.u64(0x8000000000000000), kt)
    if ti.static(kind == K_UNSIGNED):
        k = ti.cast(v, kt)
    elif ti.static(kind == K_SIGNED):
        k = ti.bit_cast(ti.cast(v, vt), kt) ^ top
    else:
        b = ti.bit_cast(ti.cast(v, vt), kt)
        mag = b & ~top
        nan_lim = ti.cast(ti.u32(0x7F800000), kt)
        if ti.static(kt == ti.u64):
            nan_lim = ti.cast(ti.u64(0x7FF0000000000000), kt)
        if mag > nan_lim:
            k = ~ti.cast(0, kt)  # NaN: the largest key
        elif mag == ti.cast(0, kt):
            k = top  # -0.0 and +0.0: the key of +0.0
        elif b & top:
            k = ~b
        else:
            k = b | top
    if ti.static(desc):
        k = ~k
    return k


@ti.func
def _isnan(v, kt: ti.template()):
    r = False
    if ti.static(kt == ti.u32):
        r = (ti.bit_cast(ti.cast(v, ti.f32), ti.u32) & ti.u32(0x7FFFFFFF)) > ti.u32(0x7F800000)
    else:
        r = (ti.bit_cast(ti.cast(v, ti.f64), ti.u64) & ti.u64(0x7FFFFFFFFFFFFFFF)) > ti.u64(
            0x7FF0000000000000
        )
    return r


@ti.func
def _row_base(meta: ti.template(), r, w: ti.template()):
    """Offset of row ``r`` in operand ``w`` (0: x, 1: out) of a meta array
    ``[x_off, out_off, nd, shape[nd], xstrides[nd], ostrides[nd], sx, so]``."""
    nd = ti.cast(meta[2], ti.i32)
    b = meta[w]
    rem = ti.cast(r, ti.i64)
    for kk in range(nd):
        d = nd - 1 - kk
        sh = meta[3 + d]
        b += (rem % sh) * meta[3 + (1 + w) * nd + d]
        rem = rem // sh
    return b


@ti.kernel
def _load_sort(
    keys: ti.types.ndarray(ndim=1),
    idx: ti.types.ndarray(dtype=ti.i32, ndim=1),
    x: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(dtype=ti.i32, ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    R: ti.i32,
    L: ti.i32,
    blk: ti.i32,
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
    desc: ti.template(),
    gather: ti.template(),
    blocksort: ti.template(),
):
    # Keys of every row, each block of BLOCK elements insertion-sorted (stable) if
    # blocksort. gather: row element k is x[perm[r * L + k]] (a second sort on permuted data).
    nb = (L + blk - 1) // blk
    for t in range(R * nb):
        r = t // nb
        b = t - r * nb
        nd = ti.cast(meta[2], ti.i32)
        sx = meta[3 + 3 * nd]
        xb = _row_base(meta, r, 0)
        lo = b * blk
        hi = ti.min(lo + blk, L)
        base = r * L
        for k in range(lo, hi):
            e = k
            if ti.static(gather):
                e = perm[base + k]
            o = ti.cast(xb + e * sx, ti.i32)
            key = ti.cast(0, kt)
            if ti.static(kind == K_NANCLASS):
                key = ti.cast(
                    2 * ti.cast(_isnan(x[o], kt), ti.i32) + ti.cast(_isnan(x[o + 1], kt), ti.i32), kt
                )
            else:
                key = sort_key(x[o], kind, vt, kt, desc)
            j = k
            if ti.static(blocksort):
                # (Taichi evaluates both operands of `and`: the bound check is separate)
                while j > lo:
                    if keys[base + j - 1] > key:
                        keys[base + j] = keys[base + j - 1]
                        idx[base + j] = idx[base + j - 1]
                        j -= 1
                    else:
                        break
            keys[base + j] = key
            idx[base + j] = e


@ti.kernel
def _merge(
    dk: ti.types.ndarray(ndim=1),
    di: ti.types.ndarray(dtype=ti.i32, ndim=1),
    sk: ti.types.ndarray(ndim=1),
    si: ti.types.ndarray(dtype=ti.i32, ndim=1),
    R: ti.i32,
    L: ti.i32,
    w: ti.i32,
    P: ti.i32,
):
    # Merge the sorted runs [2kw, 2kw + w) and [2kw + w, 2kw + 2w) of every row of
    # (sk, si) into (dk, di); segment s of a row makes outputs [sP, sP + P) (P divides 2w).
    ns = (L + P - 1) // P
    for t in range(R * ns):
        r = t // ns
        s = t - r * ns
        base = r * L
        o0 = s * P
        a0 = (o0 // (2 * w)) * (2 * w)
        a1 = ti.min(a0 + w, L)
        b1 = ti.min(a0 + 2 * w, L)
        na = a1 - a0
        nb = b1 - a1
        d = o0 - a0
        # merge path: the smallest i with B[d - i - 1] < A[i] (ties take A first: stable)
        lo = ti.max(0, d - nb)
        hi = ti.min(d, na)
        while lo < hi:
            mid = (lo + hi) // 2
            if sk[base + a1 + d - mid - 1] < sk[base + a0 + mid]:
                hi = mid
            else:
                lo = mid + 1
        i = lo
        j = d - lo
        cnt = ti.min(P, na + nb - d)
        for k in range(cnt):
            take_a = j >= nb
            if i < na and j < nb:
                take_a = sk[base + a0 + i] <= sk[base + a1 + j]
            if take_a:
                dk[base + o0 + k] = sk[base + a0 + i]
                di[base + o0 + k] = si[base + a0 + i]
                i += 1
            else:
                dk[base + o0 + k] = sk[base + a1 + j]
                di[base + o0 + k] = si[base + a1 + j]
                j += 1


RADIX_BITS = 11
_BUCKETS = 1 << RADIX_BITS


@ti.kernel
def _radix_hist(
    cnt: ti.types.ndarray(dtype=ti.i32, ndim=1),
    keys: ti.types.ndarray(ndim=1),
    R: ti.i32,
    L: ti.i32,
    C: ti.i32,
    chunk: ti.i32,
    shift: ti.i32,
    kt: ti.template(),
):
    # cnt[(r * C + c) * _BUCKETS + d]: elements of chunk c of row r whose digit is d
    for t in range(R * C):
        for d in range(_BUCKETS):
            cnt[t * _BUCKETS + d] = 0
        r = t // C
        c = t - r * C
        lo = c * chunk
        hi = ti.min(lo + chunk, L)
        base = r * L
        sh = ti.cast(shift, kt)
        for k in range(lo, hi):
            d = ti.cast((keys[base + k] >> sh) & ti.cast(_BUCKETS - 1, kt), ti.i32)
            cnt[t * _BUCKETS + d] += 1


@ti.kernel
def _radix_scan(
    cnt: ti.types.ndarray(dtype=ti.i32, ndim=1),
    flag: ti.types.ndarray(dtype=ti.i32, ndim=1),
    R: ti.i32,
    L: ti.i32,
    C: ti.i32,
    serial: ti.template(),
):
    # counts -> exclusive offsets, per row in (digit, chunk) order (a stable scatter);
    # flag[0] stays 1 if in every row one digit holds all elements (the pass is a no-op)
    flag[0] = 1
    if ti.static(serial):
        ti.loop_config(serialize=True)
    for r in range(R):
        acc = 0
        for d in range(_BUCKETS):
            tot = 0
            for c in range(C):
                i = (r * C + c) * _BUCKETS + d
                v = cnt[i]
                cnt[i] = acc
                acc += v
                tot += v
            if tot != 0 and tot != L:
                flag[0] = 0


@ti.kernel
def _radix_scatter(
    dk: ti.types.ndarray(ndim=1),
    di: ti.types.ndarray(dtype=ti.i32, ndim=1),
    sk: ti.types.ndarray(ndim=1),
    si: ti.types.ndarray(dtype=ti.i32, ndim=1),
    cnt: ti.types.ndarray(dtype=ti.i32, ndim=1),
    R: ti.i32,
    L: ti.i32,
    C: ti.i32,
    chunk: ti.i32,
    shift: ti.i32,
    kt: ti.template(),
):
    for t in range(R * C):
        r = t // C
        c = t - r * C
        lo = c * chunk
        hi = ti.min(lo + chunk, L)
        base = r * L
        sh = ti.cast(shift, kt)
        for k in range(lo, hi):
            key = sk[base + k]
            d = ti.cast((key >> sh) & ti.cast(_BUCKETS - 1, kt), ti.i32)
            p = cnt[t * _BUCKETS + d]
            cnt[t * _BUCKETS + d] = p + 1
            dk[base + p] = key
            di[base + p] = si[base + k]


_FIN_BLOCK = 1024


@ti.kernel
def _finish(
    out: ti.types.ndarray(ndim=1),
    idx: ti.types.ndarray(dtype=ti.i32, ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    R: ti.i32,
    L: ti.i32,
    values: ti.template(),
    out_t: ti.template(),
):
    # out[row, k] = idx[row, k] (argsort) or x[row, idx[row, k]] (sort), in out's layout.
    nb = (L + _FIN_BLOCK - 1) // _FIN_BLOCK
    for t in range(R * nb):
        r = t // nb
        b = t - r * nb
        nd = ti.cast(meta[2], ti.i32)
        sx = meta[3 + 3 * nd]
        so = meta[4 + 3 * nd]
        xb = _row_base(meta, r, 0)
        ob = _row_base(meta, r, 1)
        for k in range(b * _FIN_BLOCK, ti.min(b * _FIN_BLOCK + _FIN_BLOCK, L)):
            i = idx[r * L + k]
            o = ti.cast(ob + k * so, ti.i32)
            if ti.static(values):
                out[o] = ti.cast(x[ti.cast(xb + i * sx, ti.i32)], out_t)
            else:
                out[o] = ti.cast(i, out_t)


_load_launcher = Launcher(_load_sort, name="sort_load")
_hist_launcher = Launcher(_radix_hist, name="radix_hist")
_scan_launcher = Launcher(_radix_scan, name="radix_scan")
_scatter_launcher = Launcher(_radix_scatter, name="radix_scatter")
_merge_launcher = Launcher(_merge, name="sort_merge")
_finish_launcher = Launcher(_finish, name="sort_finish")


def key_kind(dtype: _dtypes.DType):
    """(kind, value taichi type, key dtype) of the sort keys of ``dtype``."""
    if dtype.kind == "f":
        vt = _dtypes.float64 if dtype.itemsize == 8 else _dtypes.float32
        kd = _dtypes.uint64 if dtype.itemsize == 8 else _dtypes.uint32
        return K_FLOAT, vt, kd
    if dtype.kind == "i":
        vt = _dtypes.int64 if dtype.itemsize == 8 else _dtypes.int32
        kd = _dtypes.uint64 if dtype.itemsize == 8 else _dtypes.uint32
        return K_SIGNED, vt, kd
    if dtype.kind in "ub":
        kd = _dtypes.uint64 if dtype.itemsize == 8 else _dtypes.uint32
        return K_UNSIGNED, kd, kd
    raise TypeError(f"cannot sort {dtype.name} data")


def _rows_meta(x: TiArray, axis: int, out: TiArray | None):
    """Meta array of the rows of ``x`` (and of ``out``, with the same shape) along ``axis``."""
    others = [i for i in range(x.ndim) if i != axis]
    ost = out._strides if out is not None else (0,) * x.ndim
    shape, (xs, os_) = collapse(
        tuple(x._shape[i] for i in others),
        tuple(x._strides[i] for i in others),
        tuple(ost[i] for i in others),
    )
    xspan, xoff = span_arg(x)
    if out is not None:
        ospan, ooff = span_arg(out)
    else:
        ospan, ooff = None, 0
    meta = meta_array(xoff, ooff, len(shape), *shape, *xs, *os_, x._strides[axis], ost[axis])
    return xspan, ospan, meta, math.prod(shape)


def sort_pairs(
    x: TiArray, axis: int, *, descending: bool = False, perm: TiArray | None = None, nan_class: bool = False
):
    """Stable sort of ``x`` along ``axis`` (a real array): the (keys, indices) buffers.

    Returns ``(keys, idx, R, L)``: C-contiguous arrays of ``R * L`` sorted keys and int32
    indices (positions along ``axis``), row after row. With ``perm`` (int32, ``R * L``)
    row element ``k`` is taken at position ``perm[k]`` (``x`` must then be 1-d): the
    second pass of a sort on two keys. ``nan_class``: ``x`` holds the real parts of
    complex data and the key is its NaN class (see ``K_NANCLASS``).
    """
    L = x._shape[axis]
    xspan, _, meta, R = _rows_meta(x, axis, None)
    kind, vt, kd = key_kind(x._dtype)
    if nan_class:
        kind = K_NANCLASS
        # the span must also hold the imaginary part of the last element
        xspan, off = span_arg(x._view(x._ptr, x._shape + (2,), x._strides + (1,)))
        meta[0] = off
    dev = x._device
    n = R * L
    if n >= 1 << 31:
        raise ValueError(f"sort: {n} elements are more than Taichi's 32-bit indexing allows")
    keys = empty_owned((n,), kd, dev)
    idx = empty_owned((n,), _dtypes.int32, dev)
    if n == 0:
        return keys, idx, R, L
    serial = _load_launcher.use_serial(n * 8)
    radix = L >= RADIX_MIN
    xk = kernel_dtype(x._dtype)
    pm = perm if perm is not None else dummy(_dtypes.int32, dev)
    spec = get_spec(
        _load_launcher,
        [(kd, 1, False), (_dtypes.int32, 1, False), (xk, 1, False), (_dtypes.int32, 1, False),
         (_dtypes.int64, 1, False)],
        (kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd), bool(descending), perm is not None, not radix),
        serial=serial,
        fm=False,
    )  # fmt: skip
    from .reduce import flat_arg

    spec.launch(
        [flat_arg(keys), flat_arg(idx), xspan, flat_arg(pm), meta_arg(meta), R, L, 4096 if radix else BLOCK]
    )
    if radix:
        return _radix(keys, idx, R, L, kd, serial) + (R, L)
    w = BLOCK
    if w >= L:
        return keys, idx, R, L
    k2 = empty_owned((n,), kd, dev)
    i2 = empty_owned((n,), _dtypes.int32, dev)
    mspec = get_spec(
        _merge_launcher,
        [(kd, 1, False), (_dtypes.int32, 1, False), (kd, 1, False), (_dtypes.int32, 1, False)],
        (),
        serial=serial,
        fm=False,
    )
    src, dst = (keys, idx), (k2, i2)
    while w < L:
        P = min(SEGMENT, 2 * w)
        mspec.launch([flat_arg(dst[0]), flat_arg(dst[1]), flat_arg(src[0]), flat_arg(src[1]), R, L, w, P])
        src, dst = dst, src
        w *= 2
    return src[0], src[1], R, L


RADIX_MIN = 1024
_RADIX_CHUNK = 1 << 16


def _radix(keys, idx, R, L, kd, serial):
    """LSD radix sort (11-bit digits) of every row of (keys, idx); returns the sorted pair."""
    from .reduce import flat_arg

    dev = keys._device
    n = R * L
    C = -(-L // _RADIX_CHUNK)
    chunk = -(-L // C)
    cnt = empty_owned((R * C * _BUCKETS,), _dtypes.int32, dev)
    flag = empty_owned((1,), _dtypes.int32, dev)
    kt = _dtypes.taichi_type(kd)
    i32 = (_dtypes.int32, 1, False)
    kk = (kd, 1, False)
    hist = get_spec(_hist_launcher, [i32, kk], (kt,), serial=serial, fm=False)
    scan = get_spec(_scan_launcher, [i32, i32], (R <= 64,), serial=serial, fm=False)
    scat = get_spec(_scatter_launcher, [kk, i32, kk, i32, i32], (kt,), serial=serial, fm=False)
    k2 = empty_owned((n,), kd, dev)
    i2 = empty_owned((n,), _dtypes.int32, dev)
    src, dst = (keys, idx), (k2, i2)
    for shift in range(0, 8 * kd.itemsize, RADIX_BITS):
        hist.launch([flat_arg(cnt), flat_arg(src[0]), R, L, C, chunk, shift])
        scan.launch([flat_arg(cnt), flat_arg(flag), R, L, C])
        if int(flag._host()[0]):
            continue  # every row has a single digit here: the pass would not move anything
        scat.launch(
            [
                flat_arg(dst[0]),
                flat_arg(dst[1]),
                flat_arg(src[0]),
                flat_arg(src[1]),
                flat_arg(cnt),
                R,
                L,
                C,
                chunk,
                shift,
            ]
        )
        src, dst = dst, src
    return src


def sort_into(out: TiArray, x: TiArray, axis: int, *, descending: bool, values: bool) -> None:
    """Sorted values (``values``) or argsort indices of ``x`` along ``axis`` into ``out``."""
    if out.size == 0:
        return
    _, idx, R, L = sort_pairs(x, axis, descending=descending)
    xspan, ospan, meta, _ = _rows_meta(x, axis, out)
    from .reduce import flat_arg

    ok = kernel_dtype(out._dtype)
    spec = get_spec(
        _finish_launcher,
        [
            (ok, 1, False),
            (_dtypes.int32, 1, False),
            (kernel_dtype(x._dtype), 1, False),
            (_dtypes.int64, 1, False),
        ],
        (bool(values), _dtypes.taichi_type(ok)),
        serial=_finish_launcher.use_serial(out.size * (out._dtype.itemsize + 4)),
        fm=False,
    )
    spec.launch([ospan, flat_arg(idx), xspan, meta_arg(meta), R, L])
