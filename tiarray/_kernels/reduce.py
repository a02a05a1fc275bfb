"""Reductions over any set of axes: sum, prod, max, min, all, any, count, sum of squares;
and argmax/argmin.

The reduced axes are moved last *conceptually*: the input is described as an outer
walk over the kept axes (in C order, giving a C-contiguous output) and an inner walk over
the reduced axes (negative strides flipped, sorted by stride), both as (shape, strides)
in a meta array, without copying. Each walk is collapsed, so contiguous data is one axis.

:func:`_reduce` runs a parallel loop over *tasks* ``(output, chunk)``: with many outputs a
task reduces one whole output; with few outputs (e.g. a full reduction) each output is
split into chunks reduced in parallel into a partials array, which a second loop of the
same launch combines. A task walks *runs* along the last inner axis; a contiguous run
uses the loop variable itself as the array index, the only form in which LLVM sees
consecutive loads and vectorises (Taichi's 32-bit index arithmetic carries no no-wrap
flags). :func:`_reduce_cols` handles outputs that are adjacent in memory (a reduction
over leading axes), keeping 16 accumulators in registers per task.

Floating-point details, independent of the program's ``fast_math`` setting (each
specialisation is compiled with fast math on or off explicitly, :func:`launchers`):

- sums and products are compiled with fast math (LLVM may reassociate, so it vectorises);
  ``float32``/``float16`` data accumulates in ``float64`` through a multiplication by a
  runtime ``one`` (without it LLVM narrows the accumulation back to single precision);
  ``float64`` sums are pairwise: blocks of 512 combined through a binary counter;
- max/min compare monotone unsigned *keys* of the float bits, with NaN mapped to the
  extreme key: NaN propagates, and integer max/min vectorise without fast math;
- non-zero tests (all, any, count) look at the bits: Taichi compiles ``!=`` as an ordered
  comparison (``nan != 0`` is False) and folds ``v != v`` under fast math.

Complex data is read as (re, im) pairs. Plans (specialisation, meta array, launch
geometry) are cached by the arguments' metadata.
"""

import math

import numpy as np

from .. import _dtypes, _launch, _runtime
from .._array_object import MemoryKeeper, TiArray
from .._backend import ti
from .._launch import IEEE, Launcher
from .._views import collapse, real_view
from ._reduce_funcs import (  # noqa: F401  (re-exported: the kernels' names)
    _BLOCK,
    _LEVELS,
    ALL,
    ANY,
    COUNT,
    MAX,
    MIN,
    POST_DIV,
    POST_NONE,
    POST_SQRT,
    PROD,
    SQDEV,
    SUM,
    _finish,
    _fold,
    _nonzero,
    _out_base,
    _run_complex,
    _run_real,
    _step,
    _task,
    _value,
    _walk_offset,
    float_key,
    is_nan,
    key_float,
    nonzero_bits,
)
from ._strided import meta_arg, meta_array, span_arg


def launchers(kernel, name: str) -> dict:
    """``{fm: Launcher}``: the kernel compiled with Taichi's ``fast_math`` off (``False``)
    and on (``True``), whatever the program's setting.

    Floating-point sums and products need LLVM's reassociation to be vectorised; every
    other specialisation is compiled with IEEE semantics (Taichi's fast math folds
    ``v != v`` to ``False``). Both go through ``Launcher(compile_options=...)``, which
    compiles with a copy of the program's ``CompileConfig``.
    """
    return {fm: Launcher(kernel, name=name, compile_options={"fast_math": fm}) for fm in (False, True)}


@ti.kernel
def _reduce(
    out: ti.types.ndarray(ndim=1),
    part: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    aux: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n_out: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i64,
    m: ti.i64,
    div: ti.f64,
    one: ti.f64,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    out_t: ti.template(),
    cplx: ti.template(),
    post: ti.template(),
    pairwise: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    widen: ti.template(),
    direct: ti.template(),
    serial2: ti.template(),
    xbits: ti.template(),
    ocplx: ti.template(),
    pad: ti.template(),
):
    # meta = [offset, ndo, ndi, oshape[ndo], ostrides[ndo], ishape[ndi], istrides[ndi]], in
    # elements of x (real elements for complex data, whose pairs sit at off, off + 1).
    # acc_t: the accumulator (the unsigned key_t for a float max/min: fkey); val_t: the
    # float type values are compared in (float max/min), else acc_t; widen: floats are
    # accumulated through `* one` (see _value). direct: one chunk per output, written to
    # out at once; otherwise the chunks' accumulators go to part, and a second loop
    # (serial if serial2) combines them.
    for s_ in range(n_out * n_chunks * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (see task_pad)
            t = s_ // pad
            ar, ai = _task(
                x,
                aux,
                meta,
                t,
                n_chunks,
                chunk,
                m,
                one,
                op,
                acc_t,
                val_t,
                cplx,
                pairwise,
                key_t,
                fkey,
                widen,
                xbits,
            )
            if ti.static(direct):
                _finish(out, t, ar, ai, div, acc_t, val_t, out_t, ocplx, post, key_t, fkey)
            else:
                if ti.static(ocplx):
                    part[2 * t] = ar
                    part[2 * t + 1] = ai
                else:
                    part[t] = ar
    if ti.static(not direct):
        if ti.static(serial2):
            ti.loop_config(serialize=True)
        for o in range(n_out):
            b = o * n_chunks
            ar = part[b * (2 if ti.static(ocplx) else 1)]
            ai = ti.cast(0, acc_t)
            if ti.static(ocplx):
                ai = part[2 * b + 1]
            for c in range(1, n_chunks):
                br = part[(b + c) * (2 if ti.static(ocplx) else 1)]
                bi = ti.cast(0, acc_t)
                if ti.static(ocplx):
                    bi = part[2 * (b + c) + 1]
                ar, ai = _fold(op, acc_t, ocplx, ar, ai, br, bi)
            _finish(out, o, ar, ai, div, acc_t, val_t, out_t, ocplx, post, key_t, fkey)


_launchers = launchers(_reduce, "reduce")
_launcher = _launchers[False]


_COL_W = 16  # outputs per task of a column reduction (accumulators held in registers)


@ti.kernel
def _reduce_cols(
    out: ti.types.ndarray(ndim=1),
    part: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    aux: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n_rest: ti.i32,
    Lf: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i64,
    m: ti.i64,
    div: ti.f64,
    one: ti.f64,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    out_t: ti.template(),
    post: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    widen: ti.template(),
    serial2: ti.template(),
    xbits: ti.template(),
    pad: ti.template(),
):
    # Reductions whose outputs are contiguous in x (the last kept axis has stride 1, the
    # reduced axes larger strides; e.g. a sum over axis 0 of a C-contiguous matrix). A
    # task takes _COL_W adjacent outputs (accumulators in registers) and a chunk of the
    # reduced positions, reading _COL_W adjacent elements per position (one cache line).
    # part[c * n_out + o]: chunk c's accumulator of output o; a second loop combines the
    # chunks and writes out.
    n_out = n_rest * Lf
    ntile = (Lf + _COL_W - 1) // _COL_W
    for s_ in range(n_rest * ntile * n_chunks * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (see task_pad)
            t = s_ // pad
            c = t % n_chunks
            q = t // n_chunks
            tile = q % ntile
            rr = q // ntile
            ndo = ti.cast(meta[1], ti.i32)
            ndi = ti.cast(meta[2], ti.i32)
            ish = 3 + 2 * ndo
            base = meta[0]
            rem = ti.cast(rr, ti.i64)
            for kk in range(ndo - 1):
                d = ndo - 2 - kk
                sh = meta[3 + d]
                base += (rem % sh) * meta[3 + ndo + d]
                rem = rem // sh
            g0 = tile * _COL_W
            cnt = ti.min(_COL_W, Lf - g0)
            ob = rr * Lf + g0
            start = ti.cast(c, ti.i64) * chunk
            end = ti.min(start + chunk, m)
            L = meta[ish + ndi - 1]
            sL = meta[ish + 2 * ndi - 1]
            mu = ti.Vector([ti.cast(0, acc_t)] * _COL_W, dt=acc_t)
            if ti.static(op == SQDEV):
                for a in ti.static(range(_COL_W)):
                    mu[a] = ti.cast(aux[ob + ti.min(a, cnt - 1)], acc_t)
            acc = ti.Vector([ti.cast(0, acc_t)] * _COL_W, dt=acc_t)
            if ti.static(op == PROD or op == ALL):
                acc = ti.Vector([ti.cast(1, acc_t)] * _COL_W, dt=acc_t)
            if ti.static(op == MAX or op == MIN):
                off0, j0 = _walk_offset(meta, base, start, ndi, ish)
                lo0 = ti.cast(off0 + j0 * sL + g0, ti.i32)
                for a in ti.static(range(_COL_W)):
                    acc[a] = _value(x, lo0 + ti.min(a, cnt - 1), op, acc_t, val_t, key_t, fkey, False, one)
            pos = start
            while pos < end:
                off, j = _walk_offset(meta, base, pos, ndi, ish)
                r = ti.min(L - j, end - pos)
                off += j * sL + g0
                for k in range(ti.cast(r, ti.i32)):
                    lo = ti.cast(off + k * sL, ti.i32)
                    for a in ti.static(range(_COL_W)):
                        i = lo + ti.min(a, cnt - 1)  # the lanes past the last output re-read it
                        if ti.static(op == ALL or op == ANY or op == COUNT):
                            acc[a] = _step(op, acc_t, acc[a], _nonzero(x, i, False, acc_t, xbits), mu[a])
                        else:
                            acc[a] = _step(
                                op,
                                acc_t,
                                acc[a],
                                _value(x, i, op, acc_t, val_t, key_t, fkey, widen, one),
                                mu[a],
                            )
                pos += r
            for a in ti.static(range(_COL_W)):
                if a < cnt:
                    part[c * n_out + ob + a] = acc[a]
    if ti.static(serial2):
        ti.loop_config(serialize=True)
    for o in range(n_out):
        ar = part[o]
        for c in range(1, n_chunks):
            ar, _ = _fold(op, acc_t, False, ar, ti.cast(0, acc_t), part[c * n_out + o], ti.cast(0, acc_t))
        _finish(out, o, ar, ti.cast(0, acc_t), div, acc_t, val_t, out_t, False, post, key_t, fkey)


_cols_launchers = launchers(_reduce_cols, "reduce_columns")
_cols_launcher = _cols_launchers[False]


# ----------------------------------------------------------------------------- planning

# CPU: a task reduces at least this many elements when one output is split into chunks.
_CPU_CHUNK = 1 << 16
_CUDA_CHUNK = 1 << 12


# Taichi 1.7's CPU backend hands a parallel range-for whose bounds are run-time values to
# its thread pool in blocks of 512 iterations (``cpu_block_dim_adaptive``; a
# ``ti.loop_config(block_dim=...)`` is ignored): a loop of a few hundred heavy tasks runs
# on one thread. The task loops therefore iterate ``tasks * pad`` times and act on every
# ``pad``-th iteration, so that each block holds one task (``tiarray.operators``' sparse
# kernels use the same device, their ``CHUNK``). An empty iteration costs a few
# nanoseconds, so padding is for tasks of at least ``_PAD_MIN_WORK`` elements.
_PAD = 512
_PAD_MIN_WORK = 1 << 14
_PAD_MAX_TASKS = 4096


def task_pad(tasks: int, work_per_task: int, serial: bool) -> int:
    """The ``pad`` of a task loop: 512 when its tasks are few and heavy (on the CPU), else 1."""
    if serial or not _runtime.is_cpu() or tasks >= _PAD_MAX_TASKS or work_per_task < _PAD_MIN_WORK:
        return 1
    return _PAD


num_threads = _runtime.cpu_workers  # the parallelism the planners aim at


def flat_arg(a: TiArray) -> tuple:
    """A C-contiguous TiArray as a 1-D kernel argument (complex: the real pairs)."""
    n = a.size * (2 if a._dtype.kind == "c" else 1)
    return (a._ptr or 1, a._nbytes(), (n,))


def kernel_dtype(dtype: _dtypes.DType) -> _dtypes.DType:
    """The dtype a kernel sees for data of ``dtype`` (the component dtype of complex)."""
    return _dtypes.finfo_dtype(dtype)


_dummies: dict = {}


def dummy(dtype: _dtypes.DType, device) -> TiArray:
    """A one-element array standing in for an unused array parameter."""
    key = (dtype, device)
    d = _dummies.get(key)
    if d is None:
        from .._buffer import empty_owned

        d = _dummies[key] = empty_owned((1,), dtype, device, zero=True)
    return d


def split_axes(x: TiArray, axes: tuple, *, reorder: bool = True):
    """Describe ``x`` as an outer walk over the kept axes and an inner walk over ``axes``.

    Returns ``(span, offset, (oshape, ostrides), (ishape, istrides), cplx)`` with strides in
    elements of the span (real elements for complex data). With ``reorder`` the inner walk
    may visit elements in any order (reductions that commute): negative strides are
    flipped and axes sorted by stride so that the walk is as contiguous as possible.
    """
    cplx = x._dtype.kind == "c"
    xr = real_view(x) if cplx else x
    strides = xr._strides[:-1] if cplx else xr._strides
    span, off = span_arg(xr)
    kept = [i for i in range(x.ndim) if i not in axes]
    red = [i for i in range(x.ndim) if i in axes]
    oshape, (ost,) = collapse(tuple(x._shape[i] for i in kept), tuple(strides[i] for i in kept))
    ish = [x._shape[i] for i in red]
    ist = [strides[i] for i in red]
    if reorder:
        for k in range(len(red)):
            if ist[k] < 0 and ish[k] > 0:
                off += (ish[k] - 1) * ist[k]
                ist[k] = -ist[k]
        order = sorted(range(len(red)), key=lambda k: -ist[k])
        ish = [ish[k] for k in order]
        ist = [ist[k] for k in order]
    ishape, (ist2,) = collapse(tuple(ish), tuple(ist))
    return span, off, (oshape, ost), (ishape, ist2), cplx


def _meta(off, outer, inner) -> np.ndarray:
    (oshape, ost), (ishape, ist) = outer, inner
    return meta_array(off, len(oshape), len(ishape), *oshape, *ost, *ishape, *ist)


_KEY_DTYPE = {4: _dtypes.uint32, 8: _dtypes.uint64}


def float_bits(dtype: _dtypes.DType) -> int:
    """Bits of a (component of a) floating dtype, 0 for other dtypes (a template value)."""
    k = kernel_dtype(dtype)
    return 8 * k.itemsize if k.kind == "f" else 0


def _types(op, x_dtype, acc_dtype):
    """(accumulator kernel dtype, the template tail (val_t, key_t, fkey, widen), fast
    math) of ``op`` on ``x_dtype``."""
    acc_k = kernel_dtype(acc_dtype)
    if op in (MAX, MIN) and x_dtype.kind == "f":
        val = _dtypes.float64 if x_dtype is _dtypes.float64 else _dtypes.float32
        key = _KEY_DTYPE[val.itemsize]
        return key, (_dtypes.taichi_type(val), _dtypes.taichi_type(key), True, False), False
    fm = op in (SUM, PROD, SQDEV) and acc_k.kind == "f"
    acc_t = _dtypes.taichi_type(acc_k)
    return acc_k, (acc_t, ti.u32, False, fm), fm


class _Plan:
    """Everything about a reduction that depends only on the arguments' metadata."""

    __slots__ = ("spec", "meta", "meta_v", "lo", "nbytes", "n", "n_out", "n_chunks", "chunk", "m",
                 "part_n", "acc_k", "aux_k", "cols", "n_rest", "Lf", "rows_args")  # fmt: skip


_PLANS: dict = {}
_runtime.register_cache(_PLANS.clear)
_program = _runtime.program
_CACHES = _runtime.CACHES
_PLAN_CAP = 512


def _plan(x: TiArray, axes: tuple, op: int, acc_dtype, out_dtype, n_out: int, post: int) -> _Plan:
    span, off, outer, inner, cplx = split_axes(x, axes)
    m = math.prod(inner[0]) if x.size else 0
    acc_k, tail, fm = _types(op, x._dtype, acc_dtype)
    acc_t = _dtypes.taichi_type(acc_k)
    out_k = kernel_dtype(out_dtype)
    x_k = kernel_dtype(x._dtype)
    pairwise = op in (SUM, SQDEV) and acc_k is _dtypes.float64 and x_k is _dtypes.float64
    total_bytes = n_out * max(m, 1) * x._dtype.itemsize
    # real data: vectorised chunk loops (complex ones are not)
    serial = _launcher.use_serial(total_bytes, None if cplx else _launch.STREAM)
    on_cpu = _runtime.is_cpu()
    chunk_len = _CPU_CHUNK if on_cpu else _CUDA_CHUNK
    many_out = n_out >= (8 * num_threads() if on_cpu else 8192)
    if serial or many_out or m <= chunk_len:
        n_chunks = 1
        chunk_len = max(m, 1)
    else:
        if on_cpu:  # about 8 tasks per thread: few enough to pad, enough to balance
            chunk_len = max(chunk_len, -(-m // (8 * num_threads() * max(n_out, 1))))
        n_chunks = -(-m // chunk_len)
    direct = n_chunks == 1
    pad = task_pad(n_out * n_chunks, chunk_len, serial)
    ocplx = cplx and op in (SUM, PROD)  # complex results (all/any/count are real)
    aux_k = kernel_dtype(acc_dtype) if op == SQDEV else acc_k
    p = _Plan()
    if _columns(x, outer, inner, cplx, m):
        if _rows_ok(x, outer, inner, op, on_cpu):
            return _plan_rows(p, x, span, off, outer, inner, op, acc_k, tail, out_k, post, n_out, m)
        return _plan_columns(p, x, span, off, outer, inner, op, acc_k, tail, fm, out_k, post, n_out, m, aux_k)
    p.cols = False
    p.spec = _launchers[fm].spec(
        [(out_k, 1, False), (acc_k, 1, False), (x_k, 1, False), (aux_k, 1, False), (_dtypes.int64, 1, False)],
        (op, acc_t, tail[0], _dtypes.taichi_type(out_k), cplx, post, pairwise, *tail[1:], direct, n_out <= 64,
         float_bits(x._dtype), ocplx, pad),
        serial=serial,
    )  # fmt: skip
    p.meta = _meta(off, outer, inner)
    p.meta_v = meta_arg(p.meta)
    p.lo = span[0] - x._ptr
    p.nbytes = span[1]
    p.n = span[2][0]
    p.n_out, p.n_chunks, p.chunk, p.m = n_out, n_chunks, chunk_len, m
    p.part_n = 0 if direct else n_out * n_chunks * (2 if ocplx else 1)
    p.acc_k, p.aux_k = acc_k, aux_k
    return p


_COL_MIN_M = 8  # reduced elements per output below which the plain kernel is as good


def _columns(x, outer, inner, cplx, m) -> bool:
    """Whether the outputs are contiguous in x and the reduction is across them."""
    (oshape, ost), (_, ist) = outer, inner
    if cplx or x.size == 0 or m < _COL_MIN_M or oshape[-1] < 16 or ost[-1] != 1:
        return False
    return min(abs(s) for s in ist) > 1


def _rows_ok(x, outer, inner, op, on_cpu) -> bool:
    """Whether ``colreduce`` (rows added into a row of accumulators) handles this reduction:
    one kept axis of contiguous outputs, one reduced axis, float data, on the CPU."""
    return (
        on_cpu
        and op in (SUM, PROD, MAX, MIN)
        and len(outer[0]) == 1
        and len(inner[0]) == 1
        and kernel_dtype(x._dtype) in (_dtypes.float32, _dtypes.float64)
    )


def _plan_rows(p, x, span, off, outer, inner, op, acc_k, tail, out_k, post, n_out, m):
    from . import colreduce

    L = outer[0][0]
    S = inner[1][0]
    nct = -(-L // colreduce._TW)
    serial = _cols_launcher.use_serial(n_out * m * x._dtype.itemsize, _launch.STREAM)
    nrc = 1
    if not serial:  # about 4 tasks per thread
        nrc = max(1, min(-(-4 * num_threads() // nct), m // 64))
    rch = -(-m // nrc)
    nrc = -(-m // rch)
    ln = colreduce.launcher(
        op, _dtypes.taichi_type(kernel_dtype(x._dtype)), _dtypes.taichi_type(acc_k), _dtypes.taichi_type(out_k), post,
        tail[0], tail[1], tail[2],
    )  # fmt: skip
    p.spec = ln.spec(
        [(out_k, 1, False), (acc_k, 1, False), (kernel_dtype(x._dtype), 1, False)], (), serial=serial
    )
    p.cols = "rows"
    p.lo = span[0] - x._ptr
    p.nbytes = span[1]
    p.n = span[2][0]
    p.rows_args = [off, S, m, L, rch, nrc, task_pad(nct * nrc, rch * min(L, colreduce._TW), serial)]
    p.part_n = nrc * L
    p.acc_k = acc_k
    p.n_out = n_out
    return p


def _plan_columns(p, x, span, off, outer, inner, op, acc_k, tail, fm, out_k, post, n_out, m, aux_k):
    Lf = outer[0][-1]
    n_rest = n_out // Lf
    tasks = n_rest * -(-Lf // _COL_W)
    on_cpu = _runtime.is_cpu()
    want = 8 * num_threads() if on_cpu else 8192
    serial = _cols_launcher.use_serial(n_out * m * x._dtype.itemsize)
    n_chunks = 1
    if not serial and tasks < want:
        n_chunks = max(1, min(-(-want // tasks), m // 256))
    chunk = -(-m // n_chunks)
    n_chunks = -(-m // chunk)
    p.cols = True
    p.spec = _cols_launchers[fm].spec(
        [(out_k, 1, False), (acc_k, 1, False), (kernel_dtype(x._dtype), 1, False), (aux_k, 1, False),
         (_dtypes.int64, 1, False)],
        (op, _dtypes.taichi_type(acc_k), tail[0], _dtypes.taichi_type(out_k), post, *tail[1:], n_out <= 64,
         float_bits(x._dtype), task_pad(tasks * n_chunks, chunk * min(Lf, _COL_W), serial)),
        serial=serial,
    )  # fmt: skip
    p.meta = _meta(off, outer, inner)
    p.meta_v = meta_arg(p.meta)
    p.lo = span[0] - x._ptr
    p.nbytes = span[1]
    p.n = span[2][0]
    p.n_out, p.n_chunks, p.chunk, p.m = n_out, n_chunks, chunk, m
    p.n_rest, p.Lf = n_rest, Lf
    p.part_n = n_out * n_chunks
    p.acc_k, p.aux_k = acc_k, aux_k
    return p


def reduce_into(
    out: TiArray,
    x: TiArray,
    axes: tuple,
    op: int,
    acc_dtype: _dtypes.DType,
    *,
    post: int = POST_NONE,
    div: float = 1.0,
    aux: TiArray | None = None,
) -> None:
    """Reduce ``x`` over ``axes`` with ``op`` into the C-contiguous ``out``.

    ``out`` holds the kept axes in C order (its shape may add or drop axes of size one)
    and may have any dtype the kernel casts to. ``acc_dtype`` is the accumulator dtype
    (complex when ``x`` is complex and ``op`` is SUM or PROD; the dtype of ``x`` for
    MAX/MIN). ``aux`` (SQDEV only) holds one value per output, in ``acc_dtype``.

    Plans (the kernel specialisation, meta array and launch geometry) are cached by the
    arguments' metadata, so that a repeated call only allocates and launches.
    """
    n_out = out.size
    if n_out == 0:
        return
    if x._owner.__class__ is MemoryKeeper:
        x._owner.check()
    key = (x._shape, x._strides, x._dtype, x._device, axes, op, acc_dtype, out._dtype, n_out, post,
           _launch._SERIAL_THRESHOLD[0])  # fmt: skip
    if _program() is not _CACHES.prog:
        _runtime.ensure_init()
    p = _PLANS.get(key)
    if p is None:
        p = _plan(x, axes, op, acc_dtype, out._dtype, n_out, post)
        if len(_PLANS) >= _PLAN_CAP:
            _PLANS.clear()
        _PLANS[key] = p
    device = x._device
    if p.part_n:
        from .._buffer import empty_owned

        part = empty_owned((p.part_n,), p.acc_k, device)
    else:
        part = dummy(p.acc_k, device)
    if p.cols == "rows":
        p.spec.launch(
            [
                flat_arg(out),
                flat_arg(part),
                ((x._ptr + p.lo) or 1, p.nbytes, (p.n,)),
                *p.rows_args,
                float(div),
            ]
        )
        return
    if aux is None:
        aux = dummy(p.aux_k, device)
    if p.cols:
        p.spec.launch(
            [flat_arg(out), flat_arg(part), ((x._ptr + p.lo) or 1, p.nbytes, (p.n,)), flat_arg(aux), p.meta_v,
             p.n_rest, p.Lf, p.n_chunks, p.chunk, p.m, float(div), 1.0]
        )  # fmt: skip
        return
    p.spec.launch(
        [flat_arg(out), flat_arg(part), ((x._ptr + p.lo) or 1, p.nbytes, (p.n,)), flat_arg(aux), p.meta_v,
         p.n_out, p.n_chunks, p.chunk, p.m, float(div), 1.0]
    )  # fmt: skip


# ----------------------------------------------------------------------------- argmax/argmin


@ti.func
def _arg_key(v, key_t: ti.template(), fkey: ti.template()):
    """An argmax/argmin key: -0.0's float key as +0.0's, since the two are equal values and
    the first of them wins (the keys order -0.0 below +0.0: argmax([-0.0, 0.0]) was 1)."""
    r = v
    if ti.static(fkey):
        if ti.static(key_t == ti.u32):
            r = ti.select(v == ti.u32(0x7FFFFFFF), ti.u32(0x80000000), v)
        else:
            r = ti.select(v == ti.u64(0x7FFFFFFFFFFFFFFF), ti.u64(0x8000000000000000), v)
    return r


@ti.kernel
def _argreduce(
    out: ti.types.ndarray(dtype=ti.i64, ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n_out: ti.i32,
    m: ti.i64,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    pad: ti.template(),
):
    # One task per output over its whole run (many outputs, or short runs; few outputs
    # over long runs go to _argreduce_chunks). Walks the reduced axes in C order (no
    # reordering): the index of an element is its position in that walk. Strict
    # comparisons keep the first occurrence; NaN is the extreme key (the first NaN wins,
    # as in NumPy).
    for s_ in range(n_out * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (see task_pad)
            o = s_ // pad
            ndi = ti.cast(meta[2], ti.i32)
            ish = 3 + 2 * ti.cast(meta[1], ti.i32)
            base = _out_base(meta, o)
            L = meta[ish + ndi - 1]
            sL = meta[ish + 2 * ndi - 1]
            best = ti.cast(0, acc_t)
            bidx = ti.cast(0, ti.i64)
            if m > 0:
                off0, j0 = _walk_offset(meta, base, 0, ndi, ish)
                best = _arg_key(
                    _value(x, ti.cast(off0 + j0 * sL, ti.i32), op, acc_t, val_t, key_t, fkey, False, 1.0),
                    key_t,
                    fkey,
                )
            pos = ti.cast(0, ti.i64)
            while pos < m:
                off, j = _walk_offset(meta, base, pos, ndi, ish)
                r = ti.min(L - j, m - pos)
                lo = ti.cast(off + j * sL, ti.i32)
                s = ti.cast(sL, ti.i32)
                for k in range(ti.cast(r, ti.i32)):
                    v = _arg_key(
                        _value(x, lo + k * s, op, acc_t, val_t, key_t, fkey, False, 1.0), key_t, fkey
                    )
                    better = v > best
                    if ti.static(op == MIN):
                        better = v < best
                    if better:
                        best = v
                        bidx = pos + k
                pos += r
            out[o] = bidx


_arg_launcher = Launcher(_argreduce, name="argreduce", compile_options=IEEE)


@ti.kernel
def _argreduce_chunks(
    out: ti.types.ndarray(dtype=ti.i64, ndim=1),
    pval: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n_out: ti.i32,
    n_chunks: ti.i32,
    chunk: ti.i64,
    m: ti.i64,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    xbits: ti.template(),
    pad: ti.template(),
):
    # Few outputs over long runs, in three passes: each chunk's extreme key, computed like
    # a max/min reduction (branch-free, vectorised); per output, the first chunk holding
    # the extreme; then the first position of that chunk holding it. Equal keys are equal
    # values (NaN has one key: the first NaN wins, as in NumPy).
    for s_ in range(n_out * n_chunks * pad):
        if s_ % pad == 0:  # one task per block of Taichi's CPU pool (see task_pad)
            t = s_ // pad
            ar, _ = _task(x, x, meta, t, n_chunks, chunk, m, 1.0, op, acc_t, val_t, False, False, key_t, fkey,
                          False, xbits)  # fmt: skip
            pval[t] = ar
    for o in range(n_out):
        b = o * n_chunks
        best = _arg_key(ti.cast(pval[b], acc_t), key_t, fkey)
        cb = 0
        for c in range(1, n_chunks):
            v = _arg_key(ti.cast(pval[b + c], acc_t), key_t, fkey)
            better = v > best
            if ti.static(op == MIN):
                better = v < best
            if better:
                best = v
                cb = c
        ndi = ti.cast(meta[2], ti.i32)
        ish = 3 + 2 * ti.cast(meta[1], ti.i32)
        base = _out_base(meta, o)
        L = meta[ish + ndi - 1]
        sL = meta[ish + 2 * ndi - 1]
        start = ti.cast(cb, ti.i64) * chunk
        end = ti.min(start + chunk, m)
        found = start
        pos = start
        while pos < end:
            off, j = _walk_offset(meta, base, pos, ndi, ish)
            r = ti.min(L - j, end - pos)
            lo = ti.cast(off + j * sL, ti.i32)
            st = ti.cast(sL, ti.i32)
            hit = -1
            for k in range(ti.cast(r, ti.i32)):
                if (
                    _arg_key(_value(x, lo + k * st, op, acc_t, val_t, key_t, fkey, False, 1.0), key_t, fkey)
                    == best
                ):
                    hit = k
                    break
            if hit >= 0:
                found = pos + hit
                pos = end
            else:
                pos += r
        out[o] = found


_argc_launcher = Launcher(_argreduce_chunks, name="argreduce_chunks", compile_options=IEEE)


def argreduce_into(out: TiArray, x: TiArray, axes: tuple, is_max: bool) -> None:
    """Index of the first maximum (``is_max``) or minimum of ``x`` over ``axes`` (walked in
    C order) into the C-contiguous int64 ``out``. ``x`` must be real and the reduction
    non-empty."""
    n_out = out.size
    if n_out == 0:
        return
    span, off, outer, inner, _ = split_axes(x, axes, reorder=False)
    m = math.prod(inner[0])
    device = x._device
    acc_dtype = _dtypes.int32 if x._dtype.kind in "iu" and x._dtype.itemsize < 4 else x._dtype
    acc_k, tail, _ = _types(MAX, x._dtype, acc_dtype)
    acc_t = _dtypes.taichi_type(acc_k)
    serial = _arg_launcher.use_serial(n_out * m * x._dtype.itemsize)
    on_cpu = _runtime.is_cpu()
    chunk_len = _CPU_CHUNK if on_cpu else _CUDA_CHUNK
    many_out = n_out >= (8 * num_threads() if on_cpu else 8192)
    if serial or many_out or m <= chunk_len:
        n_chunks, chunk_len = 1, max(m, 1)
    else:
        if on_cpu:
            chunk_len = max(chunk_len, -(-m // (8 * num_threads() * n_out)))
        n_chunks = -(-m // chunk_len)
    meta = _meta(off, outer, inner)
    if n_chunks == 1:
        spec = _arg_launcher.spec(
            [(_dtypes.int64, 1, False), (kernel_dtype(x._dtype), 1, False), (_dtypes.int64, 1, False)],
            (MAX if is_max else MIN, acc_t, tail[0], tail[1], tail[2], task_pad(n_out, chunk_len, serial)),
            serial=serial,
        )
        spec.launch([flat_arg(out), span, meta_arg(meta), n_out, m])
        return
    from .._buffer import empty_owned

    pval = empty_owned((n_out * n_chunks,), acc_k, device)
    spec = _argc_launcher.spec(
        [(_dtypes.int64, 1, False), (acc_k, 1, False), (kernel_dtype(x._dtype), 1, False),
         (_dtypes.int64, 1, False)],
        (MAX if is_max else MIN, acc_t, tail[0], tail[1], tail[2], float_bits(x._dtype),
         task_pad(n_out * n_chunks, chunk_len, serial)),
        serial=serial,
    )  # fmt: skip
    spec.launch([flat_arg(out), flat_arg(pval), span, meta_arg(meta), n_out, n_chunks, chunk_len, m])
