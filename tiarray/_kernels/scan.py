"""Cumulative sums and products along one axis, on strided input.

The scanned axis is walked last: every other axis (collapsed where the input and the
output are both contiguous) numbers the *rows*. With many rows each row is scanned by one
task. With few long rows each row is split into chunks and one launch runs three loops:
the chunk totals (in parallel), an exclusive scan of the totals per row (serial, tiny),
and the scan of every chunk from its carry (in parallel).

``float32`` data accumulates in double precision, complex data as (re, im) pairs.
"""

import math

from .. import _dtypes, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._views import collapse, real_view
from ._strided import meta_arg, meta_array, span_arg
from .reduce import PROD, SUM, dummy, flat_arg, kernel_dtype, launchers, num_threads, task_pad

_CPU_CHUNK = 1 << 16
_CUDA_CHUNK = 1 << 12


@ti.func
def _row_bases(meta: ti.template(), r):
    """Offsets of row ``r`` in x and in out."""
    nd = ti.cast(meta[2], ti.i32)
    xb = meta[0]
    ob = meta[1]
    rem = ti.cast(r, ti.i64)
    for kk in range(nd):
        d = nd - 1 - kk
        sh = meta[3 + d]
        c = rem % sh
        rem = rem // sh
        xb += c * meta[3 + nd + d]
        ob += c * meta[3 + 2 * nd + d]
    return xb, ob


@ti.func
def _load(x: ti.template(), i, acc_t: ti.template(), widen: ti.template(), one):
    """``x[i]`` in the accumulator type (floats times the runtime ``one``, so that LLVM's
    reassociation cannot narrow a double accumulation back to single precision)."""
    v = ti.cast(x[i], acc_t)
    if ti.static(widen):
        v = v * ti.cast(one, acc_t)
    return v


@ti.func
def _mul_c(ar, ai, br, bi):
    return ar * br - ai * bi, ar * bi + ai * br


@ti.func
def _mul_first(ar, ai, vr, vi, first, initial: ti.template()):
    rr, ri = _mul_c(ar, ai, vr, vi)
    if ti.static(not initial):
        if first:
            rr, ri = vr, vi
    return rr, ri


@ti.func
def _step(x: ti.template(), i, ar, ai, first, op: ti.template(), acc_t: ti.template(), cplx: ti.template(),
          initial: ti.template(), widen: ti.template(), one):  # fmt: skip
    """The running value ``(ar, ai)`` combined with element ``x[i]`` (``x[i + 1]`` is its
    imaginary part when complex). Without an initial 1, the first complex product is the
    element itself (1 * (0 + nan j) would be NaN + NaN j): ``first`` says it is."""
    vr = _load(x, i, acc_t, widen, one)
    rr = ar
    ri = ai
    if ti.static(cplx):
        vi = _load(x, i + 1, acc_t, widen, one)
        if ti.static(op == SUM):
            rr = ar + vr
            ri = ai + vi
        else:
            rr, ri = _mul_first(ar, ai, vr, vi, first, initial)
    elif ti.static(op == SUM):
        rr = ar + vr
    else:
        rr = ar * vr
    return rr, ri


@ti.kernel
def _scan(
    out: ti.types.ndarray(ndim=1),
    part: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n_rows: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i64,
    M: ti.i64,
    one: ti.f64,
    op: ti.template(),
    acc_t: ti.template(),
    out_t: ti.template(),
    cplx: ti.template(),
    initial: ti.template(),
    direct: ti.template(),
    serial2: ti.template(),
    widen: ti.template(),
    pad: ti.template(),
):
    # meta = [x_off, out_off, nd, shape[nd], xstrides[nd], ostrides[nd], sx, so]: the rows'
    # shape and strides, then the strides along the scanned axis (elements of x and of
    # out, real elements for complex data). out has M + initial entries along the axis.
    u = ti.static(2 if cplx else 1)
    ident = ti.cast(1 if ti.static(op == PROD) else 0, acc_t)
    if ti.static(not direct):
        # chunk totals
        for s_ in range(n_rows * n_chunks * pad):
            if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
                t = s_ // pad
                r = t // n_chunks
                c = t - r * n_chunks
                nd = ti.cast(meta[2], ti.i32)
                sx = ti.cast(meta[3 + 3 * nd], ti.i32)
                xb, ob = _row_bases(meta, r)
                start = ti.cast(c, ti.i64) * chunk
                end = ti.min(start + chunk, M)
                lo = ti.cast(xb + start * sx, ti.i32)
                ar = ident
                ai = ti.cast(0, acc_t)
                for k in range(ti.cast(end - start, ti.i32)):
                    ar, ai = _step(
                        x, lo + k * sx, ar, ai, c == 0 and k == 0, op, acc_t, cplx, initial, widen, one
                    )
                part[u * t] = ar
                if ti.static(cplx):
                    part[u * t + 1] = ai
        # exclusive scan of the totals of each row: part[t] becomes the carry into chunk t
        if ti.static(serial2):
            ti.loop_config(serialize=True)
        for r in range(n_rows):
            cr = ident
            ci = ti.cast(0, acc_t)
            for c in range(n_chunks):
                t = r * n_chunks + c
                vr = part[u * t]
                vi = ti.cast(0, acc_t)
                if ti.static(cplx):
                    vi = part[u * t + 1]
                part[u * t] = cr
                if ti.static(cplx):
                    part[u * t + 1] = ci
                if ti.static(op == SUM):
                    cr += vr
                    ci += vi
                elif ti.static(cplx):
                    cr, ci = _mul_c(cr, ci, vr, vi)
                else:
                    cr *= vr
    # the scans
    for s_ in range(n_rows * n_chunks * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            t = s_ // pad
            r = t // n_chunks
            c = t - r * n_chunks
            nd = ti.cast(meta[2], ti.i32)
            sx = ti.cast(meta[3 + 3 * nd], ti.i32)
            so = ti.cast(meta[4 + 3 * nd], ti.i32)
            xb, ob = _row_bases(meta, r)
            start = ti.cast(c, ti.i64) * chunk
            end = ti.min(start + chunk, M)
            ar = ident
            ai = ti.cast(0, acc_t)
            if ti.static(not direct):
                ar = part[u * t]
                if ti.static(cplx):
                    ai = part[u * t + 1]
            if ti.static(initial):
                if c == 0:
                    o0 = ti.cast(ob, ti.i32)
                    out[o0] = ti.cast(ident, out_t)
                    if ti.static(cplx):
                        out[o0 + 1] = ti.cast(0, out_t)
            lo = ti.cast(xb + start * sx, ti.i32)
            olo = ti.cast(ob + (start + (1 if ti.static(initial) else 0)) * so, ti.i32)
            for k in range(ti.cast(end - start, ti.i32)):
                j = olo + k * so
                ar, ai = _step(
                    x, lo + k * sx, ar, ai, c == 0 and k == 0, op, acc_t, cplx, initial, widen, one
                )
                out[j] = ti.cast(ar, out_t)
                if ti.static(cplx):
                    out[j + 1] = ti.cast(ai, out_t)


_launchers = launchers(_scan, "scan")
_launcher = _launchers[False]


def scan_into(
    out: TiArray, x: TiArray, axis: int, op: int, acc_dtype: _dtypes.DType, include_initial: bool
) -> None:
    """Cumulative ``op`` (SUM or PROD) of ``x`` along ``axis`` into ``out``.

    ``out`` has the shape of ``x`` except ``M + include_initial`` along ``axis`` and may
    have any layout; ``acc_dtype`` is the accumulator (complex for complex data).
    """
    if out.size == 0:
        return
    cplx = x._dtype.kind == "c"
    if cplx != (out._dtype.kind == "c"):
        raise TypeError("scan_into(): x and out must both be complex or both real")
    xr = real_view(x) if cplx else x
    orr = real_view(out) if cplx else out
    xst = xr._strides[:-1] if cplx else xr._strides
    ost = orr._strides[:-1] if cplx else orr._strides
    M = x._shape[axis]
    others = [i for i in range(x.ndim) if i != axis]
    shape, (xs, os_) = collapse(
        tuple(x._shape[i] for i in others), tuple(xst[i] for i in others), tuple(ost[i] for i in others)
    )
    n_rows = math.prod(shape)
    xspan, xoff = span_arg(xr)
    ospan, ooff = span_arg(orr)
    meta = meta_array(xoff, ooff, len(shape), *shape, *xs, *os_, xst[axis], ost[axis])
    acc_k = kernel_dtype(acc_dtype)
    widen = acc_k.kind == "f"
    device = x._device
    serial = _launcher.use_serial((x.size + out.size) * out._dtype.itemsize)
    on_cpu = _runtime.is_cpu()
    chunk_len = _CPU_CHUNK if on_cpu else _CUDA_CHUNK
    many_rows = n_rows >= (8 * num_threads() if on_cpu else 8192)
    if serial or many_rows or M <= chunk_len:
        n_chunks, chunk_len = 1, max(M, 1)
    else:
        n_chunks = -(-M // chunk_len)
    direct = n_chunks == 1
    if direct:
        part = dummy(acc_k, device)
    else:
        from .._buffer import empty_owned

        part = empty_owned((n_rows * n_chunks * (2 if cplx else 1),), acc_k, device)
    spec = _launchers[widen].spec(
        [(kernel_dtype(out._dtype), 1, False), (acc_k, 1, False), (kernel_dtype(x._dtype), 1, False),
         (_dtypes.int64, 1, False)],
        (op, _dtypes.taichi_type(acc_k), _dtypes.taichi_type(kernel_dtype(out._dtype)), cplx,
         bool(include_initial), direct, n_rows <= 64, widen, task_pad(n_rows * n_chunks, chunk_len, serial)),
        serial=serial,
    )  # fmt: skip
    spec.launch([ospan, flat_arg(part), xspan, meta_arg(meta), n_rows, n_chunks, chunk_len, M, 1.0])
