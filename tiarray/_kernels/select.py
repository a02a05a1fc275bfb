"""Kernels with data-dependent output (nonzero, unique) and searchsorted, diff.

Data-dependent sizes are found on the device: a first launch counts per chunk and scans
the counts (one serial loop over a few hundred chunk counts), the host reads the total,
allocates the output, and a second launch writes it, every chunk from its offset.
"""

import math

from .. import _dtypes, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._buffer import empty_owned
from .._launch import IEEE, Launcher
from .._views import collapse, real_view
from ._strided import meta_arg, meta_array, span_arg
from .reduce import dummy, flat_arg, float_bits, kernel_dtype, nonzero_bits, task_pad
from .sort import K_FLOAT, sort_key

_CPU_CHUNK = 1 << 16
_CUDA_CHUNK = 1 << 12


def _chunking(n: int, launcher: Launcher, nbytes: int):
    """(serial, n_chunks, chunk) for a pass over ``n`` positions."""
    serial = launcher.use_serial(nbytes)
    chunk = _CPU_CHUNK if _runtime.is_cpu() else _CUDA_CHUNK
    if serial or n <= chunk:
        return serial, 1, max(n, 1)
    return serial, -(-n // chunk), chunk


def _read_int(a: TiArray, i: int) -> int:
    """One element of a small device array, on the host."""
    _runtime.sync()
    return int(a._host()[i])


# ----------------------------------------------------------------------------- nonzero


@ti.func
def _nz_at(x: ti.template(), off, cplx: ti.template(), xbits: ti.template()):
    nz = nonzero_bits(x[off], xbits)
    if ti.static(cplx):
        nz = nz or nonzero_bits(x[off + 1], xbits)
    return nz


@ti.func
def _decode(meta: ti.template(), p, nd):
    """Offset in x of C-order position ``p`` (meta = [off, nd, shape[nd], strides[nd]])."""
    off = meta[0]
    q = ti.cast(p, ti.i64)
    for kk in range(nd):
        d = nd - 1 - kk
        sh = meta[2 + d]
        off += (q % sh) * meta[2 + nd + d]
        q = q // sh
    return off


@ti.kernel
def _nz_count(
    part: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i64,
    n_chunks: ti.i32,
    chunk: ti.i64,
    cplx: ti.template(),
    xbits: ti.template(),
    pad: ti.template(),
):
    # part[c] = non-zeros before chunk c, part[n_chunks] = all of them. Runs follow the
    # last axis: one decode per run.
    for s_ in range((n_chunks) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            c = s_ // pad
            nd = ti.cast(meta[1], ti.i32)
            L = meta[1 + nd]
            sL = meta[1 + 2 * nd]
            start = ti.cast(c, ti.i64) * chunk
            end = ti.min(start + chunk, n)
            cnt = ti.cast(0, ti.i64)
            pos = start
            while pos < end:
                j = pos % L
                off = _decode(meta, pos - j, nd)
                r = ti.min(L - j, end - pos)
                for k in range(ti.cast(r, ti.i32)):
                    # branch-free: a data-dependent branch mispredicts on mixed data
                    cnt += ti.cast(_nz_at(x, ti.cast(off + (j + k) * sL, ti.i32), cplx, xbits), ti.i64)
                pos += r
            part[c] = cnt
    ti.loop_config(serialize=True)
    for _ in range(1):
        acc = ti.cast(0, ti.i64)
        for c in range(n_chunks):
            v = part[c]
            part[c] = acc
            acc += v
        part[n_chunks] = acc


@ti.kernel
def _nz_write(
    out: ti.types.ndarray(dtype=ti.i64, ndim=1),
    part: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i64,
    n_chunks: ti.i32,
    chunk: ti.i64,
    cplx: ti.template(),
    xbits: ti.template(),
    pad: ti.template(),
    one_d: ti.template(),
):
    # out[d * nnz + i]: coordinate d of the i-th non-zero element (C order). For 1-D input
    # (one_d) the coordinate is the position itself: written branch-free (store every
    # position, advance the cursor by the non-zero test) below the chunk's end, instead of
    # a division per coordinate.
    for s_ in range((n_chunks) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            c = s_ // pad
            nd = ti.cast(meta[1], ti.i32)
            L = meta[1 + nd]
            sL = meta[1 + 2 * nd]
            nnz = part[n_chunks]
            start = ti.cast(c, ti.i64) * chunk
            end = ti.min(start + chunk, n)
            w = part[c]
            pos = start
            while pos < end:
                j = pos % L
                off = _decode(meta, pos - j, nd)
                r = ti.min(L - j, end - pos)
                if ti.static(one_d):
                    wend = part[c + 1]  # part[n_chunks] is nnz
                    for k in range(ti.cast(r, ti.i32)):
                        nz = _nz_at(x, ti.cast(off + (j + k) * sL, ti.i32), cplx, xbits)
                        if w < wend:
                            out[ti.cast(w, ti.i32)] = pos + k
                        w += ti.cast(nz, ti.i64)
                else:
                    for k in range(ti.cast(r, ti.i32)):
                        if _nz_at(x, ti.cast(off + (j + k) * sL, ti.i32), cplx, xbits):
                            q = pos + k
                            for kk in range(nd):
                                d = nd - 1 - kk
                                sh = meta[2 + d]
                                out[ti.cast(d * nnz + w, ti.i32)] = q % sh
                                q = q // sh
                            w += 1
                pos += r


_nz_count_launcher = Launcher(_nz_count, name="nonzero_count", compile_options=IEEE)
_nz_write_launcher = Launcher(_nz_write, name="nonzero_write", compile_options=IEEE)


def nonzero(x: TiArray) -> TiArray:
    """The C-order coordinates of the non-zero elements of ``x`` (ndim >= 1), as an int64
    array of shape ``(ndim, nnz)``."""
    cplx = x._dtype.kind == "c"
    xr = real_view(x) if cplx else x
    strides = xr._strides[:-1] if cplx else xr._strides
    span, off = span_arg(xr)
    n = x.size
    dev = x._device
    meta = meta_array(off, x.ndim, *x._shape, *strides)
    serial, n_chunks, chunk = _chunking(n, _nz_count_launcher, n * x._dtype.itemsize)
    part = empty_owned((n_chunks + 1,), _dtypes.int64, dev)
    xk = (kernel_dtype(x._dtype), 1, False)
    i64 = (_dtypes.int64, 1, False)
    tpl = (cplx, float_bits(x._dtype), task_pad(n_chunks, chunk, serial))
    if n == 0:
        return empty_owned((x.ndim, 0), _dtypes.int64, dev)
    _nz_count_launcher.spec([i64, xk, i64], tpl, serial=serial).launch(
        [flat_arg(part), span, meta_arg(meta), n, n_chunks, chunk]
    )
    nnz = _read_int(part, n_chunks)
    out = empty_owned((x.ndim, nnz), _dtypes.int64, dev)
    if nnz:
        _nz_write_launcher.spec([i64, i64, xk, i64], (*tpl, x.ndim == 1), serial=serial).launch(
            [flat_arg(out), flat_arg(part), span, meta_arg(meta), n, n_chunks, chunk]
        )
    return out


# ----------------------------------------------------------------------------- unique


@ti.func
def _same(x: ti.template(), a, b, cplx: ti.template()):
    """Whether elements ``a`` and ``b`` of the flat ``x`` are equal (IEEE: NaN differs from
    everything, -0.0 equals 0.0)."""
    r = False
    if ti.static(cplx):
        r = x[2 * a] == x[2 * b] and x[2 * a + 1] == x[2 * b + 1]
    else:
        r = x[a] == x[b]
    return r


@ti.func
def _starts_group(x: ti.template(), perm: ti.template(), i, cplx: ti.template()):
    """Whether sorted position ``i`` starts a new group. (Taichi evaluates both operands
    of ``or``: the guard must be an ``if``.)"""
    r = True
    if i > 0:
        r = not _same(x, perm[i], perm[i - 1], cplx)
    return r


@ti.kernel
def _uq_count(
    part: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i32,
    cplx: ti.template(),
    pad: ti.template(),
):
    # part[c]: group starts (in sorted order) before chunk c; part[n_chunks]: all groups
    for s_ in range((n_chunks) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            c = s_ // pad
            start = c * chunk
            end = ti.min(start + chunk, n)
            cnt = ti.cast(0, ti.i64)
            for i in range(start, end):
                if _starts_group(x, perm, i, cplx):
                    cnt += 1
            part[c] = cnt
    ti.loop_config(serialize=True)
    for _ in range(1):
        acc = ti.cast(0, ti.i64)
        for c in range(n_chunks):
            v = part[c]
            part[c] = acc
            acc += v
        part[n_chunks] = acc


@ti.kernel
def _uq_write(
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    inverse: ti.types.ndarray(dtype=ti.i64, ndim=1),
    part: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i32,
    cplx: ti.template(),
    want_inverse: ti.template(),
    pad: ti.template(),
):
    # starts[g]: sorted position where group g starts; inverse[perm[i]] = group of i
    for s_ in range((n_chunks) * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            c = s_ // pad
            start = c * chunk
            end = ti.min(start + chunk, n)
            g = part[c] - 1
            for i in range(start, end):
                if _starts_group(x, perm, i, cplx):
                    g += 1
                    starts[ti.cast(g, ti.i32)] = i
                if ti.static(want_inverse):
                    inverse[perm[i]] = g


@ti.kernel
def _uq_groups(
    values: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(dtype=ti.i64, ndim=1),
    counts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    starts: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    nu: ti.i32,
    cplx: ti.template(),
    want_indices: ti.template(),
    want_counts: ti.template(),
):
    # the value, first index and size of every group (the stable sort puts the first
    # occurrence of a value first in its group)
    for g in range(nu):
        s = ti.cast(starts[g], ti.i32)
        e = n
        if g + 1 < nu:
            e = ti.cast(starts[g + 1], ti.i32)
        p = perm[s]
        if ti.static(cplx):
            values[2 * g] = x[2 * p]
            values[2 * g + 1] = x[2 * p + 1]
        else:
            values[g] = x[p]
        if ti.static(want_indices):
            indices[g] = p
        if ti.static(want_counts):
            counts[g] = e - s


_uq_count_launcher = Launcher(_uq_count, name="unique_count", compile_options=IEEE)
_uq_write_launcher = Launcher(_uq_write, name="unique_write", compile_options=IEEE)
_uq_groups_launcher = Launcher(_uq_groups, name="unique_groups", compile_options=IEEE)


def unique(xf: TiArray, *, want_indices: bool, want_inverse: bool, want_counts: bool):
    """Unique values of the C-contiguous 1-d ``xf`` (sorted; each NaN distinct).

    Returns ``(values, indices, inverse, counts)`` (None for those not wanted); the
    indices, inverse and counts are int64.
    """
    from .sort import sort_pairs

    n = xf.size
    dev = xf._device
    cplx = xf._dtype.kind == "c"
    if n == 0:
        z = empty_owned((0,), _dtypes.int64, dev)
        return empty_owned((0,), xf._dtype, dev), z, z, z
    if cplx:
        # NumPy's complex order by three stable sorts: by the imaginary part, the real
        # part, then the NaN class (values with NaN parts go last)
        xr = real_view(xf)
        im = xr._view(xr._ptr + xr._dtype.itemsize, (n,), (2,))
        re = xr._view(xr._ptr, (n,), (2,))
        _, p1, _, _ = sort_pairs(im, 0)
        _, p2, _, _ = sort_pairs(re, 0, perm=p1)
        _, perm, _, _ = sort_pairs(re, 0, perm=p2, nan_class=True)
    else:
        _, perm, _, _ = sort_pairs(xf, 0)
    xk = (kernel_dtype(xf._dtype), 1, False)
    i64 = (_dtypes.int64, 1, False)
    i32 = (_dtypes.int32, 1, False)
    serial, n_chunks, chunk = _chunking(n, _uq_count_launcher, n * (xf._dtype.itemsize + 4))
    part = empty_owned((n_chunks + 1,), _dtypes.int64, dev)
    _uq_count_launcher.spec([i64, xk, i32], (cplx, task_pad(n_chunks, chunk, serial)), serial=serial).launch(
        [flat_arg(part), flat_arg(xf), flat_arg(perm), n, n_chunks, chunk]
    )
    nu = _read_int(part, n_chunks)
    starts = empty_owned((nu,), _dtypes.int64, dev)
    inverse = empty_owned((n,), _dtypes.int64, dev) if want_inverse else dummy(_dtypes.int64, dev)
    _uq_write_launcher.spec(
        [i64, i64, i64, xk, i32], (cplx, want_inverse, task_pad(n_chunks, chunk, serial)), serial=serial
    ).launch(
        [
            flat_arg(starts),
            flat_arg(inverse),
            flat_arg(part),
            flat_arg(xf),
            flat_arg(perm),
            n,
            n_chunks,
            chunk,
        ]
    )
    values = empty_owned((nu,), xf._dtype, dev)
    indices = empty_owned((nu,), _dtypes.int64, dev) if want_indices else dummy(_dtypes.int64, dev)
    counts = empty_owned((nu,), _dtypes.int64, dev) if want_counts else dummy(_dtypes.int64, dev)
    _uq_groups_launcher.spec(
        [xk, i64, i64, i64, xk, i32],
        (cplx, want_indices, want_counts),
        serial=_uq_groups_launcher.use_serial(nu * 24),
    ).launch(
        [
            flat_arg(values),
            flat_arg(indices),
            flat_arg(counts),
            flat_arg(starts),
            flat_arg(xf),
            flat_arg(perm),
            n,
            nu,
        ]
    )
    return (
        values,
        indices if want_indices else None,
        inverse if want_inverse else None,
        counts if want_counts else None,
    )


# ----------------------------------------------------------------------------- searchsorted


@ti.kernel
def _searchsorted(
    out: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x1: ti.types.ndarray(ndim=1),
    sorter: ti.types.ndarray(ndim=1),
    x2: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    M: ti.i32,
    n2: ti.i32,
    right: ti.template(),
    has_sorter: ti.template(),
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
):
    # meta = [x1_off, x1_stride, sorter_off, sorter_stride, x2_off, nd, shape[nd], strides[nd]]
    # Values are compared through the sort keys of their common dtype: the order of sort().
    for t in range(n2):
        nd = ti.cast(meta[5], ti.i32)
        off = meta[4]
        q = ti.cast(t, ti.i64)
        for kk in range(nd):
            d = nd - 1 - kk
            sh = meta[6 + d]
            off += (q % sh) * meta[6 + nd + d]
            q = q // sh
        v = sort_key(x2[ti.cast(off, ti.i32)], kind, vt, kt, False)
        lo = 0
        hi = M
        while lo < hi:
            mid = (lo + hi) // 2
            e = ti.cast(mid, ti.i64)
            if ti.static(has_sorter):
                e = ti.cast(sorter[ti.cast(meta[2] + mid * meta[3], ti.i32)], ti.i64)
            k = sort_key(x1[ti.cast(meta[0] + e * meta[1], ti.i32)], kind, vt, kt, False)
            go_right = k < v
            if ti.static(right):
                go_right = k <= v
            if go_right:
                lo = mid + 1
            else:
                hi = mid
        out[t] = lo


_ss_launcher = Launcher(_searchsorted, name="searchsorted", compile_options=IEEE)


def searchsorted(out: TiArray, x1: TiArray, x2: TiArray, common: _dtypes.DType, right: bool, sorter) -> None:
    """Insertion points of ``x2`` in the sorted 1-d ``x1`` into the C-contiguous ``out``."""
    from .sort import key_kind

    if out.size == 0:
        return
    kind, vt, kd = key_kind(common)
    s1, o1 = span_arg(x1)
    shape, (st2,) = collapse(x2._shape, x2._strides)
    s2, o2 = span_arg(x2)
    if sorter is not None:
        ss, so = span_arg(sorter)
        sst = sorter._strides[0]
        sk = kernel_dtype(sorter._dtype)
    else:
        d = dummy(_dtypes.int64, x1._device)
        ss, so, sst, sk = flat_arg(d), 0, 0, _dtypes.int64
    meta = meta_array(o1, x1._strides[0], so, sst, o2, len(shape), *shape, *st2)
    M = x1._shape[0]
    n2 = out.size
    spec = _ss_launcher.spec(
        [(_dtypes.int64, 1, False), (kernel_dtype(x1._dtype), 1, False), (sk, 1, False),
         (kernel_dtype(x2._dtype), 1, False), (_dtypes.int64, 1, False)],
        (bool(right), sorter is not None, kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd)),
        serial=_ss_launcher.use_serial(n2 * 8 * max(1, int(math.log2(max(M, 2)))))
    )  # fmt: skip
    spec.launch([flat_arg(out), s1, ss, s2, meta_arg(meta), M, n2])


# ----------------------------------------------------------------------------- isin


@ti.kernel
def _isin(
    out: ti.types.ndarray(dtype=ti.u8, ndim=1),
    x1: ti.types.ndarray(ndim=1),
    s: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    M: ti.i32,
    n1: ti.i32,
    invert: ti.template(),
    kind: ti.template(),
    vt: ti.template(),
    kt: ti.template(),
):
    # meta = [x1_off, nd, shape[nd], strides[nd]]; s: the sorted, C-contiguous values of x2.
    # Equality through the canonical sort keys of the common dtype: -0.0 == +0.0, and a NaN
    # (the largest float key) is in nothing.
    for t in range(n1):
        nd = ti.cast(meta[1], ti.i32)
        off = _decode(meta, t, nd)
        v = sort_key(x1[ti.cast(off, ti.i32)], kind, vt, kt, False)
        lo = 0
        hi = M
        while lo < hi:
            mid = (lo + hi) // 2
            if sort_key(s[mid], kind, vt, kt, False) < v:
                lo = mid + 1
            else:
                hi = mid
        found = False
        if lo < M:
            found = sort_key(s[lo], kind, vt, kt, False) == v
        if ti.static(kind == K_FLOAT):
            if v == ~ti.cast(0, kt):
                found = False
        if ti.static(invert):
            found = not found
        r = ti.u8(0)
        if found:
            r = ti.u8(1)
        out[t] = r


_isin_launcher = Launcher(_isin, name="isin", compile_options=IEEE)


def isin(out: TiArray, x1: TiArray, s: TiArray, common: _dtypes.DType, invert: bool) -> None:
    """Whether each element of ``x1`` is in the sorted, C-contiguous 1-d ``s`` (both compared
    in the real or bool dtype ``common``) into the C-contiguous bool ``out`` (shape of x1)."""
    from .sort import key_kind

    n1 = out.size
    if n1 == 0:
        return
    kind, vt, kd = key_kind(common)
    s1, o1 = span_arg(x1)
    shape, (st1,) = collapse(x1._shape, x1._strides)
    meta = meta_array(o1, len(shape), *shape, *st1)
    M = s._shape[0]
    sd = flat_arg(s) if M else flat_arg(dummy(_sig(common), x1._device))
    spec = _isin_launcher.spec(
        [(_dtypes.uint8, 1, False), (_sig(x1._dtype), 1, False), (_sig(common), 1, False),
         (_dtypes.int64, 1, False)],
        (bool(invert), kind, _dtypes.taichi_type(vt), _dtypes.taichi_type(kd)),
        serial=_isin_launcher.use_serial(n1 * 8 * max(1, int(math.log2(max(M, 2)))))
    )  # fmt: skip
    spec.launch([flat_arg(out), s1, sd, meta_arg(meta), M, n1])


def _sig(d: _dtypes.DType) -> _dtypes.DType:
    """The element type a kernel parameter sees for real or bool data (bool: u8)."""
    return _dtypes.uint8 if d is _dtypes.bool else d


# ----------------------------------------------------------------------------- diff


@ti.kernel
def _sub(
    out: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    ct: ti.template(),
    out_t: ti.template(),
):
    # out[t] = x[a + off(t)] - x[b + off(t)]: meta = [a, b, nd, shape[nd], strides[nd]];
    # computed in ct (integers wrap when cast back to out_t)
    for t in range(n):
        nd = ti.cast(meta[2], ti.i32)
        off = ti.cast(0, ti.i64)
        q = ti.cast(t, ti.i64)
        for kk in range(nd):
            d = nd - 1 - kk
            sh = meta[3 + d]
            off += (q % sh) * meta[3 + nd + d]
            q = q // sh
        hi = ti.cast(x[ti.cast(meta[0] + off, ti.i32)], ct)
        lo = ti.cast(x[ti.cast(meta[1] + off, ti.i32)], ct)
        out[t] = ti.cast(hi - lo, out_t)


_sub_launcher = Launcher(_sub, name="diff", compile_options=IEEE)


def forward_difference(x: TiArray, axis: int) -> TiArray:
    """``x[1:] - x[:-1]`` along ``axis`` (a new C-contiguous array of x's dtype)."""
    shape = list(x._shape)
    shape[axis] = max(shape[axis] - 1, 0)
    out = empty_owned(tuple(shape), x._dtype, x._device)
    if out.size == 0:
        return out
    cplx = x._dtype.kind == "c"
    xr = real_view(x) if cplx else x
    sh = tuple(shape) + ((2,) if cplx else ())
    st = xr._strides
    span, off = span_arg(xr)
    step = st[axis]
    cshape, (cst,) = collapse(sh, st)
    meta = meta_array(off + step, off, len(cshape), *cshape, *cst)
    k = kernel_dtype(x._dtype)
    if k.kind == "f":
        ct = _dtypes.float32 if k.itemsize < 4 else k
    elif k.kind in "iu" and k.itemsize < 4:
        ct = _dtypes.int32
    else:
        ct = k
    n = out.size * (2 if cplx else 1)
    spec = _sub_launcher.spec(
        [(k, 1, False), (k, 1, False), (_dtypes.int64, 1, False)],
        (_dtypes.taichi_type(ct), _dtypes.taichi_type(k)),
        serial=_sub_launcher.use_serial(n * 3 * k.itemsize),
    )
    spec.launch([flat_arg(out), span, meta_arg(meta), n])
    return out
