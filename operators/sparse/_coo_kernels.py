"""Taichi kernels of the COO operators.

A COO matrix lists its synapses in any order: synapse ``j`` is ``(row[j], col[j])`` of
weight ``weights[j]`` (or one shared weight); repeated pairs add up. Both directions are
the same scatter with the roles of the two index arrays swapped: ``A @ x`` adds
``w_j x[col_j]`` into ``out[row_j]``, ``A.T @ x`` adds ``w_j x[row_j]`` into ``out[col_j]``
(``src``/``dst`` below). Synapses whose source value is zero are skipped (events).

CPU, in parallel: the synapses are cut into ``nt`` equal ranges, one per thread slot
(``_common.CHUNK``); slot 0 adds into ``out``, slot ``t`` into row ``t - 1`` of the
zero-filled ``scratch``, and a last loop adds the rows up (as the CSR scatter). The
per-range loop is a real function (pointers in registers). GPUs: one thread per synapse,
atomic adds. Invalid indices (``src`` or ``dst`` outside its range) are skipped.

Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import CHUNK, is_bool, ndim, num_threads, on_gpu
from ._csr_kernels import _add_blocks, _nonzero, _route_scatter, _use_columns, _valid


@ti.real_func
def _coo_span(
    weights: ti.types.ndarray(ndim=1),
    dst: ti.types.ndarray(ndim=1),
    src: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    n_in: ti.i32,
):
    """``target[off + dst[j]] += weights[j] * x[src[j]]`` for ``j`` in ``[a, b)`` (nonzero ``x`` only)."""
    for j in range(a, b):
        s = src[j]
        d = dst[j]
        if s >= 0 and s < n_in and d >= 0 and d < n_out:
            v = x[ti.cast(s, ti.i32)]
            if _nonzero(x, v):
                q = off + ti.cast(d, ti.i32)
                if ti.static(is_bool(x)):
                    target[q] = target[q] + weights[j]
                else:
                    target[q] = target[q] + weights[j] * ti.cast(v, weights.get_type().element_type)


@ti.real_func
def _coo_span_homo(
    dst: ti.types.ndarray(ndim=1),
    src: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    n_in: ti.i32,
    w0: ti.f64,
):
    """:func:`_coo_span` with one weight ``w0`` for every synapse."""
    w = ti.cast(w0, target.get_type().element_type)
    for j in range(a, b):
        s = src[j]
        d = dst[j]
        if s >= 0 and s < n_in and d >= 0 and d < n_out:
            v = x[ti.cast(s, ti.i32)]
            if _nonzero(x, v):
                q = off + ti.cast(d, ti.i32)
                if ti.static(is_bool(x)):
                    target[q] = target[q] + w
                else:
                    target[q] = target[q] + w * ti.cast(v, target.get_type().element_type)


@ti.func
def _span(weights: ti.template(), dst: ti.template(), src: ti.template(), x: ti.template(), target: ti.template(),
          off, a, b, n_out, n_in):  # fmt: skip
    if ti.static(ndim(weights) == 0):
        _coo_span_homo(dst, src, x, target, off, a, b, n_out, n_in, ti.cast(weights[None], ti.f64))
    else:
        _coo_span(weights, dst, src, x, target, off, a, b, n_out, n_in)


@ti.kernel
def coomv_kernel(
    weights: ti.types.ndarray(),
    row: ti.types.ndarray(ndim=1),
    col: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = A @ vector`` (``transpose=False``) or ``A.T @ vector``; shared by ``coomv`` and
    ``event_coomv``."""
    nnz = ti.min(row.shape[0], col.shape[0])
    n_out = out.shape[0]
    n_in = vector.shape[0]
    if ti.static(on_gpu()):
        for j in range(nnz):
            s = col[j]
            d = row[j]
            if ti.static(transpose):
                s = row[j]
                d = col[j]
            if _valid(s, n_in) and _valid(d, n_out):
                v = vector[ti.cast(s, ti.i32)]
                if _nonzero(vector, v):
                    wj = ti.cast(0, out.get_type().element_type)
                    if ti.static(ndim(weights) == 0):
                        wj = weights[None]
                    else:
                        wj = weights[j]
                    if ti.static(not is_bool(vector)):
                        wj = wj * ti.cast(v, out.get_type().element_type)
                    ti.atomic_add(out[ti.cast(d, ti.i32)], wj)
    else:
        _cpu_slots(weights, row, col, vector, out, scratch, transpose, True)


@ti.func
def _cpu_slots(weights: ti.template(), row: ti.template(), col: ti.template(), vector: ti.template(),
               out: ti.template(), scratch: ti.template(), transpose: ti.template(), run):  # fmt: skip
    """The CPU scatter over every synapse, one range per thread slot (top level of a kernel;
    nothing when ``run`` is false)."""
    nnz = ti.min(row.shape[0], col.shape[0])
    n_out = out.shape[0]
    n_in = vector.shape[0]
    nt = 1
    if n_out > 0:
        nt = scratch.shape[0] // n_out + 1
    for s in range(ti.select(run, nt * CHUNK, 0)):
        if s % CHUNK == 0:
            t = s // CHUNK
            a = ti.cast(ti.cast(nnz, ti.i64) * t // nt, ti.i32)
            b = ti.cast(ti.cast(nnz, ti.i64) * (t + 1) // nt, ti.i32)
            off = ti.max(t - 1, 0) * n_out
            if ti.static(transpose):
                if t == 0:
                    _span(weights, col, row, vector, out, 0, a, b, n_out, n_in)
                else:
                    _span(weights, col, row, vector, scratch, off, a, b, n_out, n_in)
            else:
                if t == 0:
                    _span(weights, row, col, vector, out, 0, a, b, n_out, n_in)
                else:
                    _span(weights, row, col, vector, scratch, off, a, b, n_out, n_in)
    for c in range(ti.select(run and nt > 1, n_out, 0)):
        _add_blocks(out, scratch, nt, n_out, c)


@ti.kernel
def coomv_src_kernel(
    weights: ti.types.ndarray(),
    row: ti.types.ndarray(ndim=1),
    col: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    ptr_s: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    dst_s: ti.types.ndarray(ndim=1),
    wsort: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``event_coomv`` on the CPU with the *source index* of the synapses (``ptr_s, perm,
    dst_s``: each source's synapses and their destinations, sources being columns for
    ``A @ x`` and rows for ``A.T @ x``; ``wsort``: the weights in its order, or empty).

    Counts the events first. Fewer than ``len(vector) / COLS_RATIO`` active (``/
    COLS_RATIO_PERM`` when the weights are read through ``perm``): one thread adds the
    synapses of the active sources only (:func:`_scatter_cols`), so a step costs the active
    synapses, not all ``nnz``. Otherwise the scatter over every synapse of
    ``coomv_kernel``. The sums are added in another order (sources, not list order), except
    for one shared weight and bool events (exact integer counts)."""
    cols = _use_columns(weights, vector, ptr_s, perm, wsort)
    _cpu_slots(weights, row, col, vector, out, scratch, transpose, not cols)
    _route_scatter(weights, vector, ptr_s, perm, dst_s, wsort, out, cols)


@ti.func
def _mm_add(weights: ti.template(), matrix: ti.template(), out: ti.template(), j, s, d, c):
    m = matrix[s, c]
    if _nonzero(matrix, m):
        wj = ti.cast(0, out.get_type().element_type)
        if ti.static(ndim(weights) == 0):
            wj = weights[None]
        else:
            wj = weights[j]
        if ti.static(not is_bool(matrix)):
            wj = wj * ti.cast(m, out.get_type().element_type)
        if ti.static(on_gpu()):
            ti.atomic_add(out[d, c], wj)
        else:
            out[d, c] = out[d, c] + wj


@ti.kernel
def coomm_kernel(
    weights: ti.types.ndarray(),
    row: ti.types.ndarray(ndim=1),
    col: ti.types.ndarray(ndim=1),
    matrix: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=2),
    transpose: ti.template(),
):
    """``out = A @ matrix`` or ``A.T @ matrix`` (``matrix`` bool or float); CPU: the columns are
    split between the thread slots (each slot owns its output columns)."""
    nnz = ti.min(row.shape[0], col.shape[0])
    n_out = out.shape[0]
    n_in = matrix.shape[0]
    K = ti.min(matrix.shape[1], out.shape[1])
    if ti.static(on_gpu()):
        for j, c in ti.ndrange(nnz, K):
            s = col[j]
            d = row[j]
            if ti.static(transpose):
                s = row[j]
                d = col[j]
            if _valid(s, n_in) and _valid(d, n_out):
                _mm_add(weights, matrix, out, j, ti.cast(s, ti.i32), ti.cast(d, ti.i32), c)
    else:
        nt = ti.min(ti.static(num_threads()), K)
        for q in range(nt * CHUNK):
            if q % CHUNK == 0:
                t = q // CHUNK
                for j in range(nnz):
                    s = col[j]
                    d = row[j]
                    if ti.static(transpose):
                        s = row[j]
                        d = col[j]
                    if _valid(s, n_in) and _valid(d, n_out):
                        for c in range(t * K // nt, (t + 1) * K // nt):
                            _mm_add(weights, matrix, out, j, ti.cast(s, ti.i32), ti.cast(d, ti.i32), c)


@ti.kernel
def coo_sddmm_kernel(
    row: ti.types.ndarray(ndim=1),
    col: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(),
    b: ti.types.ndarray(),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = sum_c a[row[j], c] * b[col[j], c]`` (1-D: ``a[row[j]] * b[col[j]]``): the
    per-synapse weight gradient. Synapses with an invalid index get 0."""
    n_a = a.shape[0]
    n_b = b.shape[0]
    for j in range(ti.min(ti.min(row.shape[0], col.shape[0]), out.shape[0])):
        r = row[j]
        c = col[j]
        acc = ti.cast(0, out.get_type().element_type)
        if _valid(r, n_a) and _valid(c, n_b):
            rr = ti.cast(r, ti.i32)
            cc = ti.cast(c, ti.i32)
            if ti.static(ndim(a) == 1):
                acc = ti.cast(a[rr], out.get_type().element_type) * ti.cast(
                    b[cc], out.get_type().element_type
                )
            else:
                for q in range(a.shape[1]):
                    acc += ti.cast(a[rr, q], out.get_type().element_type) * ti.cast(
                        b[cc, q], out.get_type().element_type
                    )
        out[j] = acc
