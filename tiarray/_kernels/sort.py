"""Stable sorting along one axis, on (key, index) pairs.

Values become unsigned integer *keys* whose order is the value order: unsigned integers
as they are, signed integers with the sign bit flipped, floats with the bits of negative
numbers flipped. Every NaN becomes the largest key (NaNs sort last). For argsort (and
unique) ``-0.0`` is given the key of ``+0.0``, so that signed zeros compare equal and keep
their order. A descending sort inverts the keys, which keeps equal elements in their
original order (NaNs first).

Short rows (fewer than ``RADIX_MIN`` elements): one task per row loads the keys, sorts
groups of 8 with a sorting network in registers and merges runs (branch-free) until the
row is sorted, all in cache, then writes the output: one launch for any number of rows.

Long rows: a kernel writes the keys (and positions) of every row, then an LSD radix sort
(8- or 11-bit digits; a digit shared by all elements of every row is skipped) in chunks
processed in parallel: per-chunk histograms, a scan in (digit, chunk) order and a stable
scatter per pass. A last kernel writes the indices or decodes the keys into the output.

A sort of values (not indices) moves the keys alone and decodes them: no gather of the
input. It keeps ``-0.0`` before ``+0.0`` (the standard leaves the order of signed zeros
unspecified) and returns NaNs as one quiet NaN.
"""

import math

from .. import _dtypes
from .._array_object import TiArray
from .._backend import ti
from .._buffer import empty_owned
from .._launch import IEEE, Launcher
from .._views import collapse
from ._strided import meta_arg, meta_array, span_arg
from .reduce import dummy, kernel_dtype, task_pad

BLOCK = 8  # the first sorted runs: sorting networks in registers
# Knuth's 19-comparator network for 8 elements (checked on all 0/1 inputs in the tests)
NETWORK8 = ((0, 2), (1, 3), (4, 6), (5, 7), (0, 4), (1, 5), (2, 6), (3, 7), (0, 1), (2, 3), (4, 5), (6, 7),
            (2, 4), (3, 5), (1, 4), (3, 6), (1, 2), (3, 4), (5, 6))  # fmt: skip

# key kinds (template values); K_NANCLASS: for complex data viewed as its real parts
# (imaginary parts one element further), 2 * isnan(re) + isnan(im): NumPy's order puts
# R + Rj first, then R + nan j, nan + R j, nan + nan j.
K_UNSIGNED, K_SIGNED, K_FLOAT, K_NANCLASS = range(4)


@ti.func
def sort_key(
    v,
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
    desc: ti.template(),
    canon: ti.template() = True,
):
    """The unsigned key of value ``v`` (see the module docstring). Without ``canon``
    ``-0.0`` keeps its own key, just below ``+0.0`` (a values-only sort decodes keys)."""
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
        elif mag == ti.cast(0, kt) and ti.static(canon):
            k = top  # -0.0 and +0.0: the key of +0.0
        elif b & top:
            k = ~b
        else:
            k = b | top
    if ti.static(desc):
        k = ~k
    return k


@ti.func
def key_value(k, kind: ti.template(), vt: ti.template(), kt: ti.template(), desc: ti.template()):
    """The value (of type ``vt``) of a key made by :func:`sort_key` without ``canon``
    (every NaN comes back as one quiet NaN)."""
    top = ti.cast(ti.u32(0x80000000), kt)
    if ti.static(kt == ti.u64):
        top = ti.cast(ti.u64(0x8000000000000000), kt)
    if ti.static(desc):
        k = ~k
    v = ti.cast(0, vt)
    if ti.static(kind == K_UNSIGNED):
        v = ti.cast(k, vt)
    elif ti.static(kind == K_SIGNED):
        v = ti.bit_cast(k ^ top, vt)
    else:
        b = ~k
        if k & top:
            b = k ^ top
        v = ti.bit_cast(b, vt)
    return v


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


@ti.func
def _load_key(
    x: ti.template(),
    o,
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
    desc: ti.template(),
    canon: ti.template(),
):
    key = ti.cast(0, kt)
    if ti.static(kind == K_NANCLASS):
        key = ti.cast(2 * ti.cast(_isnan(x[o], kt), ti.i32) + ti.cast(_isnan(x[o + 1], kt), ti.i32), kt)
    else:
        key = sort_key(x[o], kind, vt, kt, desc, canon)
    return key


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
    with_idx: ti.template(),
    canon: ti.template(),
):
    # The keys (and positions) of every row, in blocks of blk elements (the radix sort's
    # input). gather: row element k is x[perm[r * L + k]] (a second sort on permuted data).
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
            keys[base + k] = _load_key(x, ti.cast(xb + e * sx, ti.i32), kind, vt, kt, desc, canon)
            if ti.static(with_idx):
                idx[base + k] = e


@ti.func
def _merge_runs(
    dk: ti.template(),
    di: ti.template(),
    sk: ti.template(),
    si: ti.template(),
    base,
    L,
    w,
    with_idx: ti.template(),
):
    """Merge the runs [2kw, 2kw + w) and [2kw + w, 2kw + 2w) of a row (stable, branch-free).

    The two candidates stay in registers and only the side taken is reloaded: one load on
    the dependency chain per output (Taichi reloads array pointers after every store)."""
    a0 = 0
    while a0 < L:
        a1 = ti.min(a0 + w, L)
        b1 = ti.min(a0 + 2 * w, L)
        na = a1 - a0
        nb = b1 - a1
        i = 0
        j = 0
        # with nb == 0 the B candidate is clamped onto run A and never taken
        ka = sk[base + a0]
        kb = sk[base + a1 + ti.min(0, nb - 1)]
        xa = 0
        xb = 0
        if ti.static(with_idx):
            xa = si[base + a0]
            xb = si[base + a1 + ti.min(0, nb - 1)]
        for k in range(na + nb):
            take_a = (j >= nb) | ((i < na) & (ka <= kb))
            dk[base + a0 + k] = ti.select(take_a, ka, kb)
            if ti.static(with_idx):
                di[base + a0 + k] = ti.select(take_a, xa, xb)
            t = ti.cast(take_a, ti.i32)
            i += t
            j += 1 - t
            nxt = base + ti.select(take_a, a0 + ti.min(i, na - 1), a1 + ti.min(j, nb - 1))
            v = sk[nxt]
            ka = ti.select(take_a, v, ka)
            kb = ti.select(take_a, kb, v)
            if ti.static(with_idx):
                vi = si[nxt]
                xa = ti.select(take_a, vi, xa)
                xb = ti.select(take_a, xb, vi)
        a0 += 2 * w


@ti.kernel
def _sort_rows(
    out: ti.types.ndarray(ndim=1),
    ka: ti.types.ndarray(ndim=1),
    ia: ti.types.ndarray(dtype=ti.i32, ndim=1),
    kb: ti.types.ndarray(ndim=1),
    ib: ti.types.ndarray(dtype=ti.i32, ndim=1),
    x: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(dtype=ti.i32, ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    R: ti.i32,
    L: ti.i32,
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
    out_t: ti.template(),
    desc: ti.template(),
    gather: ti.template(),
    with_idx: ti.template(),
    canon: ti.template(),
    write_out: ti.template(),
    values: ti.template(),
):
    # One task sorts one (short) row: groups of BLOCK keys sorted by a network, then merge
    # passes between (ka, ia) and (kb, ib), all in cache; the sorted row ends in (ka, ia)
    # and, with write_out, goes to out (decoded values, or the indices).
    for r in range(R):
        nd = ti.cast(meta[2], ti.i32)
        sx = meta[3 + 3 * nd]
        xb = _row_base(meta, r, 0)
        base = r * L
        for g in range((L + BLOCK - 1) // BLOCK):
            # a group of 8 sorted by a network on (key, position) pairs in registers: the
            # position breaks ties, which makes it stable; the padding sorts last
            kv = ti.Vector([~ti.cast(0, kt)] * BLOCK, dt=kt)
            iv = ti.Vector([0x7FFFFFFF] * BLOCK, dt=ti.i32)
            g0 = g * BLOCK
            cnt = ti.min(BLOCK, L - g0)
            for q in ti.static(range(BLOCK)):
                if q < cnt:
                    e = g0 + q
                    if ti.static(gather):
                        e = perm[base + g0 + q]
                    kv[q] = _load_key(x, ti.cast(xb + e * sx, ti.i32), kind, vt, kt, desc, canon)
                    iv[q] = g0 + q  # ties break on the position in this pass's order
            for p in ti.static(NETWORK8):
                a = kv[p[0]]
                b = kv[p[1]]
                swap = a > b
                if ti.static(with_idx):
                    swap = swap | ((a == b) & (iv[p[0]] > iv[p[1]]))
                kv[p[0]] = ti.select(swap, b, a)
                kv[p[1]] = ti.select(swap, a, b)
                if ti.static(with_idx):
                    ia_ = iv[p[0]]
                    ib_ = iv[p[1]]
                    iv[p[0]] = ti.select(swap, ib_, ia_)
                    iv[p[1]] = ti.select(swap, ia_, ib_)
            for q in ti.static(range(BLOCK)):
                if q < cnt:
                    ka[base + g0 + q] = kv[q]
                    if ti.static(with_idx):
                        e = iv[q]
                        if ti.static(gather):
                            e = perm[base + e]
                        ia[base + g0 + q] = e
        w = BLOCK
        src = 0
        while w < L:
            if src == 0:
                _merge_runs(kb, ib, ka, ia, base, L, w, with_idx)
            else:
                _merge_runs(ka, ia, kb, ib, base, L, w, with_idx)
            src = 1 - src
            w *= 2
        if src == 1:
            for k in range(L):
                ka[base + k] = kb[base + k]
                if ti.static(with_idx):
                    ia[base + k] = ib[base + k]
        if ti.static(write_out):
            so = meta[4 + 3 * nd]
            ob = _row_base(meta, r, 1)
            for k in range(L):
                o = ti.cast(ob + k * so, ti.i32)
                if ti.static(values):
                    out[o] = ti.cast(key_value(ka[base + k], kind, vt, kt, desc), out_t)
                else:
                    out[o] = ti.cast(ia[base + k], out_t)


RADIX_BITS_SHORT = 8  # digits of rows shorter than RADIX_LONG (fewer buckets per row)
RADIX_BITS_LONG = 11
RADIX_LONG = 1 << 16


@ti.func
def _digit(key, sh, kt: ti.template(), bits: ti.template()):
    """The radix digit of ``key`` at shift ``sh`` (``bits`` wide), as an i32 index."""
    return ti.cast((key >> sh) & ti.cast((1 << bits) - 1, kt), ti.i32)


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
    bits: ti.template(),
    pad: ti.template(),
):
    # cnt[(r * C + c) * 2**bits + d]: elements of chunk c of row r whose digit is d
    for s_ in range((R * C) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            t = s_ // pad
            for d in range(1 << bits):
                cnt[t * (1 << bits) + d] = 0
            r = t // C
            c = t - r * C
            lo = c * chunk
            hi = ti.min(lo + chunk, L)
            base = r * L
            sh = ti.cast(shift, kt)
            for k in range(lo, hi):
                cnt[t * (1 << bits) + _digit(keys[base + k], sh, kt, bits)] += 1


@ti.kernel
def _radix_scan(
    cnt: ti.types.ndarray(dtype=ti.i32, ndim=1),
    flag: ti.types.ndarray(dtype=ti.i32, ndim=1),
    R: ti.i32,
    L: ti.i32,
    C: ti.i32,
    serial: ti.template(),
    bits: ti.template(),
):
    # counts -> exclusive offsets, per row in (digit, chunk) order (a stable scatter);
    # flag[0] stays 1 if in every row one digit holds all elements (the pass is a no-op)
    flag[0] = 1
    if ti.static(serial):
        ti.loop_config(serialize=True)
    for r in range(R):
        acc = 0
        for d in range(1 << bits):
            tot = 0
            for c in range(C):
                i = (r * C + c) * (1 << bits) + d
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
    with_idx: ti.template(),
    bits: ti.template(),
    pad: ti.template(),
):
    for s_ in range((R * C) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            t = s_ // pad
            r = t // C
            c = t - r * C
            lo = c * chunk
            hi = ti.min(lo + chunk, L)
            base = r * L
            sh = ti.cast(shift, kt)
            for k in range(lo, hi):
                key = sk[base + k]
                d = _digit(key, sh, kt, bits)
                p = cnt[t * (1 << bits) + d]
                cnt[t * (1 << bits) + d] = p + 1
                dk[base + p] = key
                if ti.static(with_idx):
                    di[base + p] = si[base + k]


_FIN_BLOCK = 1024


@ti.kernel
def _finish(
    out: ti.types.ndarray(ndim=1),
    idx: ti.types.ndarray(dtype=ti.i32, ndim=1),
    keys: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    R: ti.i32,
    L: ti.i32,
    values: ti.template(),
    out_t: ti.template(),
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
    desc: ti.template(),
):
    # out[row, k] = idx[row, k] (argsort) or the value of keys[row, k] (sort), in out's
    # layout (both buffers are read in order).
    nb = (L + _FIN_BLOCK - 1) // _FIN_BLOCK
    for t in range(R * nb):
        r = t // nb
        b = t - r * nb
        nd = ti.cast(meta[2], ti.i32)
        so = meta[4 + 3 * nd]
        ob = _row_base(meta, r, 1)
        for k in range(b * _FIN_BLOCK, ti.min(b * _FIN_BLOCK + _FIN_BLOCK, L)):
            o = ti.cast(ob + k * so, ti.i32)
            if ti.static(values):
                out[o] = ti.cast(key_value(keys[r * L + k], kind, vt, kt, desc), out_t)
            else:
                out[o] = ti.cast(idx[r * L + k], out_t)


_load_launcher = Launcher(_load_sort, name="sort_load", compile_options=IEEE)
_hist_launcher = Launcher(_radix_hist, name="radix_hist", compile_options=IEEE)
_scan_launcher = Launcher(_radix_scan, name="radix_scan", compile_options=IEEE)
_scatter_launcher = Launcher(_radix_scatter, name="radix_scatter", compile_options=IEEE)
_rows_launcher = Launcher(_sort_rows, name="sort_rows", compile_options=IEEE)
_finish_launcher = Launcher(_finish, name="sort_finish", compile_options=IEEE)


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
    x: TiArray,
    axis: int,
    *,
    descending: bool = False,
    perm: TiArray | None = None,
    nan_class: bool = False,
    with_idx: bool = True,
    out: TiArray | None = None,
):
    """Stable sort of ``x`` along ``axis`` (a real array).

    Returns ``(keys, idx, R, L)``: C-contiguous arrays of ``R * L`` sorted keys and int32
    indices (positions along ``axis``), row after row. With ``perm`` (int32, ``R * L``)
    row element ``k`` is taken at position ``perm[k]`` (``x`` must then be 1-d): the
    second pass of a sort on two keys. ``nan_class``: ``x`` holds the real parts of
    complex data and the key is its NaN class (see ``K_NANCLASS``). Without ``with_idx``
    only keys are sorted (``idx`` is a placeholder) and ``-0.0`` sorts before ``+0.0``:
    the sorted values are decoded from the keys. With ``out`` (the shape of ``x``) the
    result is written there too: the decoded values without ``with_idx``, else the
    indices.
    """
    from .reduce import flat_arg

    L = x._shape[axis]
    xspan, ospan, meta, R = _rows_meta(x, axis, out)
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
    idx = empty_owned((n,), _dtypes.int32, dev) if with_idx else dummy(_dtypes.int32, dev)
    if n == 0:
        return keys, idx, R, L
    serial = _load_launcher.use_serial(n * 8)
    xk = kernel_dtype(x._dtype)
    pm = perm if perm is not None else dummy(_dtypes.int32, dev)
    i32 = (_dtypes.int32, 1, False)
    kk = (kd, 1, False)
    ok = kernel_dtype(out._dtype) if out is not None else _dtypes.int32
    if L < RADIX_MIN:
        k2 = empty_owned((n,), kd, dev) if L > BLOCK else keys
        i2 = empty_owned((n,), _dtypes.int32, dev) if L > BLOCK and with_idx else idx
        o = ospan if out is not None else flat_arg(dummy(_dtypes.int32, dev))
        spec = _rows_launcher.spec(
        [(ok, 1, False), kk, i32, kk, i32, (xk, 1, False), i32, (_dtypes.int64, 1, False)],
            (kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd), _dtypes.taichi_type(ok), bool(descending),
             perm is not None, with_idx, with_idx, out is not None, not with_idx),
            serial=serial
        )  # fmt: skip
        spec.launch(
            [
                o,
                flat_arg(keys),
                flat_arg(idx),
                flat_arg(k2),
                flat_arg(i2),
                xspan,
                flat_arg(pm),
                meta_arg(meta),
                R,
                L,
            ]
        )
        return keys, idx, R, L
    spec = _load_launcher.spec(
        [kk, i32, (xk, 1, False), i32, (_dtypes.int64, 1, False)],
        (kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd), bool(descending), perm is not None, with_idx,
         with_idx),
        serial=serial
    )  # fmt: skip
    spec.launch([flat_arg(keys), flat_arg(idx), xspan, flat_arg(pm), meta_arg(meta), R, L, 4096])
    keys, idx = _radix(keys, idx, R, L, kd, serial, with_idx)
    if out is not None:
        spec = _finish_launcher.spec(
        [(ok, 1, False), i32, kk, (_dtypes.int64, 1, False)],
            (not with_idx, _dtypes.taichi_type(ok), kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd),
             bool(descending)),
            serial=_finish_launcher.use_serial(n * (out._dtype.itemsize + 4))
        )  # fmt: skip
        spec.launch([ospan, flat_arg(idx), flat_arg(keys), meta_arg(meta), R, L])
    return keys, idx, R, L


RADIX_MIN = 1024
_RADIX_CHUNK = 1 << 16


def _radix(keys, idx, R, L, kd, serial, with_idx):
    """LSD radix sort of every row of (keys, idx); returns the sorted pair. Long rows use
    11-bit digits (3 passes for 32-bit keys), shorter ones 8-bit digits (4 passes, but
    8 times fewer buckets to clear and scan per row)."""
    from .reduce import flat_arg

    dev = keys._device
    n = R * L
    C = -(-L // _RADIX_CHUNK)
    chunk = -(-L // C)
    bits = RADIX_BITS_LONG if L >= RADIX_LONG else RADIX_BITS_SHORT
    cnt = empty_owned((R * C * (1 << bits),), _dtypes.int32, dev)
    flag = empty_owned((1,), _dtypes.int32, dev)
    kt = _dtypes.taichi_type(kd)
    i32 = (_dtypes.int32, 1, False)
    kk = (kd, 1, False)
    pad = task_pad(R * C, chunk, serial)
    hist = _hist_launcher.spec([i32, kk], (kt, bits, pad), serial=serial)
    scan = _scan_launcher.spec([i32, i32], (R <= 64, bits), serial=serial)
    scat = _scatter_launcher.spec([kk, i32, kk, i32, i32], (kt, with_idx, bits, pad), serial=serial)
    k2 = empty_owned((n,), kd, dev)
    i2 = empty_owned((n,), _dtypes.int32, dev) if with_idx else idx
    src, dst = (keys, idx), (k2, i2)
    for shift in range(0, 8 * kd.itemsize, bits):
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
    """Sorted values (``values``) or argsort indices of ``x`` along ``axis`` into ``out``.

    A values-only sort moves keys alone and decodes them (no gather of the input).
    """
    if out.size == 0:
        return
    sort_pairs(x, axis, descending=descending, with_idx=not values, out=out)
