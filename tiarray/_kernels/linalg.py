"""Kernels of the ``linalg`` extension: norm/sum reductions and the cross product.

``_reduce`` reduces ``x`` over a set of axes (any strides) for every element of the
other axes, with one of the operations below, accumulating in ``acc`` (float64 for real
floating inputs, int64/uint64 for integers). The reduced range of each output element is
split into chunks, so a full reduction of a large array still runs in parallel; the
chunk results are combined by a second launch on the (small) partial array.

The kernels are compiled with ``fast_math=False``: infinities and NaN must survive (a
norm of an array holding ``inf`` is ``inf``; NaN propagates through max/min).
"""

import math

from .. import _dtypes, _runtime
from .._array_object import TiArray
from .._backend import ti
from .._launch import IEEE, Launcher
from ._strided import meta_arg, meta_array
from .gather import check_elements
from .gather import span as span_arg
from .reduce import task_pad

SUM, SUMABS, SUMSQ, SUMPOW, MAXABS, MINABS, COUNTNZ, MAX, MIN = range(9)
FIN_NONE, FIN_SQRT, FIN_ROOT = range(3)


@ti.func
def _combine(op: ti.template(), acc, v):
    # ti.math.isnan, not v != v: Taichi's IR simplifier folds x != x to False
    r = acc
    if ti.static(op == MAXABS or op == MAX):
        if v > acc or ti.math.isnan(v):
            r = v
        if ti.math.isnan(acc):  # NaN is sticky
            r = acc
    elif ti.static(op == MINABS or op == MIN):
        if v < acc or ti.math.isnan(v):
            r = v
        if ti.math.isnan(acc):
            r = acc
    else:
        r = acc + v  # sums propagate NaN by themselves
    return r


# meta: [x_off, n_red, chunk, nchunks, out_shape[no], out_strides[no], red_shape[nr], red_strides[nr]]
@ti.kernel
def _reduce(
    x: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    p: ti.f64,
    no: ti.template(),
    nr: ti.template(),
    op: ti.template(),
    acc_t: ti.template(),
    cplx: ti.template(),
    fin: ti.template(),
    pad: ti.template(),
):
    """``out[o * nchunks + c] = reduce_{r in chunk c} f(x[o, r])`` (complex SUM: pairs)."""
    for s_ in range(n * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (reduce.task_pad)
            t = s_ // pad
            nchunks = meta[3]
            c = t % nchunks
            o = t // nchunks
            base = meta[0]
            rem = o
            for k in ti.static(range(no)):
                d = ti.static(no - 1 - k)
                cc = rem % meta[4 + d]
                rem = rem // meta[4 + d]
                base += cc * meta[4 + no + d]
            r0 = ti.cast(c * meta[2], ti.i32)
            r1 = ti.cast(ti.min(c * meta[2] + meta[2], meta[1]), ti.i32)
            # odometer over the reduced axes, starting at r0
            ci = ti.Vector([0] * nr, dt=ti.i64)
            rem = r0
            off = base
            for k in ti.static(range(nr)):
                d = ti.static(nr - 1 - k)
                ci[d] = rem % meta[4 + 2 * no + d]
                rem = rem // meta[4 + 2 * no + d]
                off += ci[d] * meta[4 + 2 * no + nr + d]
            init = ti.cast(0, acc_t)
            if ti.static(op == MINABS):
                init = ti.cast(math.inf, acc_t)
            elif ti.static(op == MAXABS):
                init = ti.cast(0, acc_t)
            elif ti.static(op == MAX):
                init = (
                    ti.cast(-math.inf, acc_t)
                    if ti.static(acc_t == ti.f64 or acc_t == ti.f32)
                    else ti.cast(0, acc_t)
                )
            elif ti.static(op == MIN):
                init = (
                    ti.cast(math.inf, acc_t)
                    if ti.static(acc_t == ti.f64 or acc_t == ti.f32)
                    else ti.cast(0, acc_t)
                )
            acc = init
            acc_im = ti.cast(0, acc_t)
            first = True
            for r in range(r0, r1):
                v = ti.cast(0, acc_t)
                if ti.static(cplx):
                    re = ti.cast(x[2 * off], acc_t)
                    im = ti.cast(x[2 * off + 1], acc_t)
                    if ti.static(op == SUM):
                        acc += re
                        acc_im += im
                    else:
                        sq = re * re + im * im
                        if ti.static(op == SUMSQ):
                            v = sq
                        elif ti.static(op == SUMPOW):
                            v = ti.pow(sq, p * 0.5)
                        elif ti.static(op == COUNTNZ):
                            # `==`, not `!=`: Taichi emits an ordered compare, and NaN counts as non-zero
                            v = ti.select(re == 0 and im == 0, ti.cast(0, acc_t), ti.cast(1, acc_t))
                        else:
                            v = ti.sqrt(sq)
                        acc = _combine(op, acc, v)
                else:
                    xv = ti.cast(x[off], acc_t)
                    if ti.static(op == SUM or op == MAX or op == MIN):
                        v = xv
                    elif ti.static(op == SUMSQ):
                        v = xv * xv
                    elif ti.static(op == SUMPOW):
                        v = ti.pow(ti.abs(xv), p)
                    elif ti.static(op == COUNTNZ):
                        v = ti.select(xv == 0, ti.cast(0, acc_t), ti.cast(1, acc_t))
                    else:
                        v = ti.abs(xv)
                    if ti.static(op == MAX or op == MIN):
                        if first:
                            acc = v
                    acc = _combine(op, acc, v)
                first = False
                # advance
                last = ti.static(nr - 1)
                ci[last] += 1
                off += meta[4 + 2 * no + nr + last]
                for k in ti.static(range(nr - 1)):
                    d = ti.static(nr - 1 - k)
                    if ci[d] == meta[4 + 2 * no + d]:
                        ci[d] = 0
                        ci[d - 1] += 1
                        off += (
                            meta[4 + 2 * no + nr + d - 1] - meta[4 + 2 * no + d] * meta[4 + 2 * no + nr + d]
                        )
            if ti.static(fin == FIN_SQRT):
                acc = ti.sqrt(acc)
            elif ti.static(fin == FIN_ROOT):
                acc = ti.pow(acc, 1.0 / p)
            if ti.static(cplx and op == SUM):
                out[2 * t] = acc
                out[2 * t + 1] = acc_im
            else:
                out[t] = acc


_reduce_l = Launcher(_reduce, name="linalg_reduce", compile_options=IEEE)

_CHUNK = 1 << 16


def acc_dtype(dtype: _dtypes.DType, op: int) -> _dtypes.DType:
    """The accumulation dtype of a reduction of ``dtype`` (real part for complex)."""
    if dtype.kind in "fc":
        return _dtypes.float64
    if op in (SUM, MAX, MIN):
        return _dtypes.uint64 if dtype.kind in "ub" else _dtypes.int64
    return _dtypes.float64


def reduce(x: TiArray, red_axes: tuple, op: int, *, p: float = 0.0, fin: int = FIN_NONE) -> TiArray:
    """Reduce ``x`` over ``red_axes``; returns a new contiguous array of the other axes (in
    order) with the accumulation dtype (complex SUM: the complex of it)."""
    from .._buffer import empty_owned

    if x._dtype is _dtypes.bfloat16 or x._dtype is _dtypes.float16:
        from .copy import copy_array

        x = copy_array(x, _dtypes.float32)
    keep = [d for d in range(x.ndim) if d not in red_axes]
    out_shape = tuple(x._shape[d] for d in keep)
    out_str = tuple(x._strides[d] for d in keep)
    red_shape = tuple(x._shape[d] for d in red_axes)
    red_str = tuple(x._strides[d] for d in red_axes)
    cplx = x._dtype.kind == "c"
    acc = acc_dtype(x._dtype, op)
    out_dtype = _dtypes.complex128 if (cplx and op == SUM) else acc
    n_out = math.prod(out_shape)
    n_red = math.prod(red_shape)
    out = empty_owned(out_shape, out_dtype, x._device)
    if n_out == 0:
        return out
    if n_red == 0:
        # the identity of each operation (max/min of nothing is refused by the callers)
        ident = {SUMABS: 0.0, SUMSQ: 0.0, SUMPOW: 0.0, COUNTNZ: 0.0, SUM: 0, MAXABS: 0.0, MINABS: math.inf}
        from .._views import broadcast_view
        from .copy import copy_into

        v = ident.get(op, 0)
        if fin == FIN_ROOT and p < 0 and op == SUMPOW:
            v = math.inf  # an empty sum is 0, and 0 ** (1 / p) is inf for p < 0
        z = _scalar(v, out_dtype, x._device)
        copy_into(out, broadcast_view(z, out_shape))
        return out
    nchunks = max(1, min(-(-n_red // _CHUNK), 64)) if n_out < 64 else 1
    chunk = -(-n_red // nchunks)
    two_pass = nchunks > 1
    if two_pass:
        part = empty_owned((n_out, nchunks), out_dtype, x._device)
        _launch(x, part, out_shape, out_str, red_shape, red_str, n_red, chunk, nchunks, op, p, FIN_NONE, cplx)
        # combine the partial results of each output element
        comb = {SUMABS: SUM, SUMSQ: SUM, SUMPOW: SUM, COUNTNZ: SUM, SUM: SUM, MAXABS: MAX, MINABS: MIN,
                MAX: MAX, MIN: MIN}[op]  # fmt: skip
        _launch(part, out, out_shape, _cstr(out_shape, nchunks), (nchunks,), (1,), nchunks, nchunks, 1, comb, p,
                fin, cplx and op == SUM)  # fmt: skip
    else:
        _launch(x, out, out_shape, out_str, red_shape, red_str, n_red, n_red, 1, op, p, fin, cplx)
    return out


def _cstr(shape: tuple, inner: int) -> tuple:
    st = []
    acc = inner
    for s in reversed(shape):
        st.append(acc)
        acc *= s
    return tuple(reversed(st))


def _scalar(v, dtype, device) -> TiArray:
    from .._buffer import empty_owned
    from .copy import copy_to_device

    host = empty_owned((), dtype, _runtime.CPU)
    host._numpy_view()[()] = v
    return host if device == _runtime.CPU else copy_to_device(host, device)


def _launch(x, out, out_shape, out_str, red_shape, red_str, n_red, chunk, nchunks, op, p, fin, cplx):
    no = max(1, len(out_shape))
    nr = max(1, len(red_shape))
    osh = out_shape or (1,)
    ost = out_str or (0,)
    rsh = red_shape or (1,)
    rst = red_str or (0,)
    span, off = span_arg(x)
    xd = x._dtype
    if cplx:
        xd = _dtypes.finfo_dtype(xd)
        rit = xd.itemsize
        span = (span[0], span[1], (span[1] // rit,))
        check_elements(span[2][0])
    if xd is _dtypes.bool:
        xd = _dtypes.uint8
    meta = meta_array(off, n_red, chunk, nchunks, *osh, *ost, *rsh, *rst)
    n = math.prod(out_shape) * nchunks
    acc = acc_dtype(x._dtype, op) if x._dtype.kind != "c" else _dtypes.float64
    od = out._dtype if out._dtype.kind != "c" else _dtypes.float64
    nout = out.size * (2 if out._dtype.kind == "c" else 1)
    serial = _reduce_l.use_serial(x.size * x._dtype.itemsize)
    spec = _reduce_l.spec(
        [(xd, 1, False), (od, 1, False), (_dtypes.int64, 1, False)],
        (no, nr, op, _dtypes.taichi_type(acc), cplx, fin, task_pad(n, chunk, serial)),
        serial=serial,
    )
    spec.launch([span, (out._ptr, out._nbytes(), (nout,)), meta_arg(meta), n, float(p)])


# ----------------------------------------------------------------------------- cross


# meta: [a_off, b_off, a_ax_stride, b_ax_stride, shape[nd], a_strides[nd], b_strides[nd]]
@ti.kernel
def _cross(
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    nd: ti.template(),
    ct: ti.template(),
    cplx: ti.template(),
):
    """``out[..., 0:3] = a[..., 0:3] x b[..., 0:3]`` (output contiguous, the axis last)."""
    for t in range(n):
        rem = ti.cast(t, ti.i64)
        oa = meta[0]
        ob = meta[1]
        for k in ti.static(range(nd)):
            d = ti.static(nd - 1 - k)
            cc = rem % meta[4 + d]
            rem = rem // meta[4 + d]
            oa += cc * meta[4 + nd + d]
            ob += cc * meta[4 + 2 * nd + d]
        sa = meta[2]
        sb = meta[3]
        if ti.static(cplx):
            ar = ti.Vector([ti.cast(a[2 * (oa + i * sa)], ct) for i in ti.static(range(3))])
            ai = ti.Vector([ti.cast(a[2 * (oa + i * sa) + 1], ct) for i in ti.static(range(3))])
            br = ti.Vector([ti.cast(b[2 * (ob + i * sb)], ct) for i in ti.static(range(3))])
            bi = ti.Vector([ti.cast(b[2 * (ob + i * sb) + 1], ct) for i in ti.static(range(3))])
            for i in ti.static(range(3)):
                j = ti.static((i + 1) % 3)
                k2 = ti.static((i + 2) % 3)
                # a_j * b_k - a_k * b_j, complex
                re = (ar[j] * br[k2] - ai[j] * bi[k2]) - (ar[k2] * br[j] - ai[k2] * bi[j])
                im = (ar[j] * bi[k2] + ai[j] * br[k2]) - (ar[k2] * bi[j] + ai[k2] * br[j])
                out[2 * (3 * t + i)] = re
                out[2 * (3 * t + i) + 1] = im
        else:
            av = ti.Vector([ti.cast(a[oa + i * sa], ct) for i in ti.static(range(3))])
            bv = ti.Vector([ti.cast(b[ob + i * sb], ct) for i in ti.static(range(3))])
            for i in ti.static(range(3)):
                j = ti.static((i + 1) % 3)
                k2 = ti.static((i + 2) % 3)
                out[3 * t + i] = av[j] * bv[k2] - av[k2] * bv[j]


_cross_l = Launcher(_cross, name="linalg_cross", compile_options=IEEE)


def cross(a: TiArray, b: TiArray, out: TiArray, shape: tuple, ct: _dtypes.DType) -> None:
    """``a``, ``b``: views with the cross axis last (size 3), broadcast to ``shape + (3,)``;
    ``out`` contiguous of shape ``shape + (3,)`` and dtype ``ct`` (the compute type)."""
    n = math.prod(shape)
    if n == 0:
        return
    nd = max(1, len(shape))
    sh = shape or (1,)
    ast = a._strides[:-1] or (0,)
    bst = b._strides[:-1] or (0,)
    cplx = ct.kind == "c"
    sa, oa = span_arg(a)
    sb, ob = span_arg(b)
    rd = _dtypes.finfo_dtype(ct)

    def fix(span, x):
        d = x._dtype
        if d.kind == "c":
            d = _dtypes.finfo_dtype(d)
            span = (span[0], span[1], (span[1] // d.itemsize,))
            check_elements(span[2][0])
        return span, d

    sa, da = fix(sa, a)
    sb, db = fix(sb, b)
    meta = meta_array(oa, ob, a._strides[-1], b._strides[-1], *sh, *ast, *bst)
    nout = out.size * (2 if cplx else 1)
    spec = _cross_l.spec(
        [(da, 1, False), (db, 1, False), (rd, 1, False), (_dtypes.int64, 1, False)],
        (nd, _dtypes.taichi_type(rd), cplx),
        serial=_cross_l.use_serial(n * 9 * ct.itemsize),
    )
    spec.launch([sa, sb, (out._ptr, out._nbytes(), (nout,)), meta_arg(meta), n])
