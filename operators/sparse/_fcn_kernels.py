"""Taichi kernels of the fixed-number connectivity (FCN) operators.

Every row ``i`` of the ``(m, n)`` matrix holds exactly ``k`` synapses. The operators pass
``indices`` and per-synapse ``weights`` flattened, row-major: row ``i`` is the synapses
``[i * k, (i + 1) * k)``, and ``k = len(indices) // m``. That is CSR with the implicit
``indptr = k * arange(m + 1)``, so the kernels call the CSR kernels' per-row functions
with those bounds (``_csr_kernels``: the same clamping of invalid column indices, the
same block check of a gather's indices, the same real-function scatter, the same
private-block parallel scatter). No ``indptr`` is read: 4 bytes per row less, and rows
cannot be malformed.

Kernel convention as in ``_csr_kernels``: inputs, outputs, scratch, statics. No ``from
__future__ import annotations`` here.
"""

from tiarray._internal import ti

from ._common import CHUNK, is_bool, ndim, num_threads, on_gpu
from ._csr_kernels import (
    EVENT_BLOCK,
    GATHER_SYN,
    _add_blocks,
    _block_mask,
    _checked_sum,
    _finish,
    _gather_row,
    _indices_below,
    _mm_gather_row,
    _mm_scatter_atomic,
    _mm_scatter_col,
    _nonzero,
    _pop_lowest,
    _route_scatter,
    _row_sum,
    _scatter_span,
    _scatter_span_atomic,
    _stage_events,
    _use_columns,
    _valid,
    _zero_sum,
)
from ._jitc_kernels import _draw, _key, _mix64, _row_state

# the row stream of fixed_num_conn: row i's state of the JITC generator, xor this key
FCNKEY = 0x5851F42D4C957F2D


@ti.func
def _row_k(nnz, n_rows):
    """Synapses per row: ``nnz // n_rows`` (0 without rows). ``i * k + k <= nnz`` for every row ``i``."""
    return nnz // ti.max(n_rows, 1)


@ti.func
def _fcn_gather_rows(weights: ti.template(), indices: ti.template(), vector: ti.template(), out: ti.template(),
                     lo, hi, k, n_in):  # fmt: skip
    """``out[i] = (A @ vector)[i]`` for the rows ``[lo, hi)`` (CPU, one thread).

    Rows are grouped into blocks of at most ``GATHER_SYN`` synapses whose column indices are
    checked in one vectorised pass, then gathered unclamped (all valid) or clamped; a row
    longer than that is summed in checked chunks (as ``_csr_kernels._gather_rows``).
    """
    if n_in > 0:
        per = ti.max(GATHER_SYN // ti.max(k, 1), 1)
        r0 = lo
        while r0 < hi:
            r1 = ti.min(r0 + per, hi)
            if k > GATHER_SYN:  # one long row
                acc = _zero_sum(weights, vector)
                c = r0 * k
                while c < r0 * k + k:
                    e = ti.min(c + GATHER_SYN, r0 * k + k)
                    acc += _checked_sum(weights, indices, vector, c, e, n_in)
                    c = e
                out[r0] = _finish(weights, acc)
            elif _indices_below(indices, r0 * k, r1 * k, n_in):
                for i in range(r0, r1):
                    out[i] = _finish(
                        weights, _row_sum(weights, indices, vector, i * k, i * k + k, n_in, True)
                    )
            else:
                for i in range(r0, r1):
                    out[i] = _finish(
                        weights, _row_sum(weights, indices, vector, i * k, i * k + k, n_in, False)
                    )
            r0 = r1


@ti.func
def _fcn_gather_slot(weights: ti.template(), indices: ti.template(), vector: ti.template(), scratch: ti.template(),
                     out: ti.template(), t, nt, k):  # fmt: skip
    """Thread slot ``t`` of ``nt`` of the CPU row gather ``out = A @ vector`` (its share of the
    rows), bool events read as the numbers staged in ``scratch`` when they were."""
    n_in = vector.shape[0]
    n_rows = out.shape[0]
    lo = t * n_rows // nt
    hi = (t + 1) * n_rows // nt
    if ti.static(is_bool(vector)):
        if scratch.shape[0] >= n_in:
            _fcn_gather_rows(weights, indices, scratch, out, lo, hi, k, n_in)
        else:
            _fcn_gather_rows(weights, indices, vector, out, lo, hi, k, n_in)
    else:
        _fcn_gather_rows(weights, indices, vector, out, lo, hi, k, n_in)


@ti.func
def _fcn_scatter_rows(weights: ti.template(), indices: ti.template(), vector: ti.template(), target: ti.template(),
                      off, lo, hi, k, n_out):  # fmt: skip
    """``target[off + c] += A[i, c] * vector[i]`` for the rows ``[lo, hi)`` with ``vector[i] != 0``;
    the events are scanned ``EVENT_BLOCK`` at a time, as ``_csr_kernels._scatter_rows``."""
    i0 = lo
    while i0 < hi:
        e = ti.min(i0 + EVENT_BLOCK, hi)
        if e - i0 == EVENT_BLOCK:
            m = _block_mask(vector, 0, i0)
            while m != 0:
                b, m2 = _pop_lowest(m)
                m = m2
                i = i0 + b
                _scatter_span(weights, indices, vector, vector[i], target, off, i * k, i * k + k, n_out)
        else:
            for i in range(i0, e):
                vi = vector[i]
                if _nonzero(vector, vi):
                    _scatter_span(weights, indices, vector, vi, target, off, i * k, i * k + k, n_out)
        i0 = e


@ti.kernel
def fcnmv_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = A @ vector`` (``transpose=False``) or ``A.T @ vector`` (``True``; rows whose
    ``vector`` entry is zero are skipped). Shared by ``fcnmv`` and ``event_fcnmv``."""
    nnz = indices.shape[0]
    if ti.static(not transpose):
        n_in = vector.shape[0]
        n_rows = out.shape[0]
        k = _row_k(nnz, n_rows)
        if ti.static(on_gpu()):
            for i in range(n_rows):
                out[i] = _gather_row(weights, indices, vector, i * k, i * k + k, n_in)
        else:
            nt = ti.static(num_threads())
            if ti.static(is_bool(vector)):  # bool events are gathered as numbers (_stage_events)
                _stage_events(vector, scratch, ti.select(scratch.shape[0] >= n_in, n_in, 0))
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    _fcn_gather_slot(weights, indices, vector, scratch, out, s // CHUNK, nt, k)
    else:
        n_out = out.shape[0]
        n_rows = vector.shape[0]
        k = _row_k(nnz, n_rows)
        if ti.static(on_gpu()):
            for i in range(n_rows):
                vi = vector[i]
                if _nonzero(vector, vi):
                    _scatter_span_atomic(weights, indices, vector, vi, out, i * k, i * k + k, n_out)
        else:
            nt = 1
            if n_out > 0:
                nt = scratch.shape[0] // n_out + 1
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    t = s // CHUNK
                    lo = t * n_rows // nt
                    hi = (t + 1) * n_rows // nt
                    if t == 0:
                        _fcn_scatter_rows(weights, indices, vector, out, 0, lo, hi, k, n_out)
                    else:
                        _fcn_scatter_rows(
                            weights, indices, vector, scratch, (t - 1) * n_out, lo, hi, k, n_out
                        )
            for c in range(ti.select(nt > 1, n_out, 0)):
                _add_blocks(out, scratch, nt, n_out, c)


@ti.kernel
def fcnmv_cols_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    ptr_t: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    rows_t: ti.types.ndarray(ndim=1),
    wsort: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``out = A @ vector`` of ``event_fcnmv`` on the CPU, with the column index of ``A``
    (``ptr_t, perm, rows_t``; ``wsort``: the weights in its order, or empty).

    Counts the events first (one pass over ``n`` bytes or numbers). Fewer than ``n /
    COLS_RATIO`` active: one thread scatters the synapses of the active columns (a
    column's events scanned in 64-event blocks, as ``_scatter_rows``), so a step costs the
    active synapses, not all ``m k``. Otherwise the row gather of ``fcnmv_kernel``. Both
    give ``A @ vector`` with zero events skipped; the sums are added in another order
    (column, not row order), except for one shared weight and bool events, where both count
    in exact integers. Measured: ``python benchmarks/bench_sparse_families.py --families
    fcn`` (docs/performance.md).
    """
    nnz = indices.shape[0]
    n_in = vector.shape[0]
    n_rows = out.shape[0]
    k = _row_k(nnz, n_rows)
    nt = ti.static(num_threads())
    cols = _use_columns(weights, vector, ptr_t, perm, wsort)
    if ti.static(is_bool(vector)):  # bool events are gathered as numbers (_stage_events)
        _stage_events(vector, scratch, ti.select(scratch.shape[0] >= n_in and not cols, n_in, 0))
    for s in range(ti.select(cols, 0, nt * CHUNK)):
        if s % CHUNK == 0:
            _fcn_gather_slot(weights, indices, vector, scratch, out, s // CHUNK, nt, k)
    _route_scatter(weights, vector, ptr_t, perm, rows_t, wsort, out, cols)


@ti.kernel
def fcnmm_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    matrix: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=2),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = A @ matrix`` or ``A.T @ matrix`` (``matrix`` bool or float, shape ``(., K)``); the CPU
    scatter works column by column into the column-major ``scratch``, as ``csrmm_kernel``."""
    nnz = indices.shape[0]
    K = matrix.shape[1]
    if ti.static(not transpose):
        n_in = matrix.shape[0]
        k = _row_k(nnz, out.shape[0])
        for i in range(out.shape[0]):
            _mm_gather_row(weights, indices, matrix, out, i, i * k, i * k + k, n_in)
    else:
        n_out = out.shape[0]
        n_rows = matrix.shape[0]
        k = _row_k(nnz, n_rows)
        if ti.static(on_gpu()):
            for i, c in ti.ndrange(n_rows, K):
                m = matrix[i, c]
                if _nonzero(matrix, m):
                    _mm_scatter_atomic(weights, indices, matrix, m, out, c, i * k, i * k + k, n_out)
        else:
            nt = ti.min(ti.static(num_threads()), K)
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    t = s // CHUNK
                    for c in range(t * K // nt, (t + 1) * K // nt):
                        for i in range(n_rows):
                            m = matrix[i, c]
                            if _nonzero(matrix, m):
                                _mm_scatter_col(weights, indices, matrix, m, scratch, c * n_out, i * k,
                                                i * k + k, n_out)  # fmt: skip
            for c2 in range(n_out):
                for c in range(K):
                    out[c2, c] = scratch[c * n_out + c2]


@ti.kernel
def fcn_sddmm_kernel(
    indices: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(),
    b: ti.types.ndarray(),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = sum_c a[i, c] * b[indices[j], c]`` for synapse ``j`` of row ``i = j // k`` (1-D:
    ``a[i] * b[indices[j]]``): the per-synapse weight gradient. Invalid column indices give 0."""
    nnz = indices.shape[0]
    n_rows = a.shape[0]
    k = _row_k(nnz, n_rows)
    n_b = b.shape[0]
    for i in range(n_rows):
        for j in range(i * k, i * k + k):
            c = indices[j]
            r = ti.cast(0, out.get_type().element_type)
            if _valid(c, n_b):
                cc = ti.cast(c, ti.i32)
                if ti.static(ndim(a) == 1):
                    r = ti.cast(a[i], out.get_type().element_type) * ti.cast(
                        b[cc], out.get_type().element_type
                    )
                else:
                    for q in range(a.shape[1]):
                        r += ti.cast(a[i, q], out.get_type().element_type) * ti.cast(
                            b[cc, q], out.get_type().element_type
                        )
            out[j] = r


# ----------------------------------------------------------------------------- fixed_num_conn


@ti.func
def _below(x, bound):
    """A uniform integer in ``[0, bound)`` from the 64-bit draw ``x`` (``bound < 2**31``): the high
    word times ``bound``, shifted (bias below ``bound / 2**32``), integer arithmetic only."""
    return ti.cast(((x >> ti.u64(32)) * ti.cast(bound, ti.u64)) >> ti.u64(32), ti.i64)


@ti.func
def _insert_sorted(out: ti.template(), i, filled, c):
    """Insert column ``c`` into the sorted ``out[i, :filled]`` (shifting the larger ones)."""
    p = filled
    while p > 0:
        if ti.cast(out[i, p - 1], ti.i64) <= c:
            break
        out[i, p] = out[i, p - 1]
        p -= 1
    out[i, p] = ti.cast(c, out.get_type().element_type)


@ti.func
def _contains(out: ti.template(), i, filled, c):
    """Whether the sorted ``out[i, :filled]`` holds ``c`` (binary search)."""
    lo = 0
    hi = filled
    while lo < hi:
        mid = (lo + hi) // 2
        if ti.cast(out[i, mid], ti.i64) < c:
            lo = mid + 1
        else:
            hi = mid
    found = False
    if lo < filled:
        found = ti.cast(out[i, lo], ti.i64) == c
    return found


@ti.kernel
def fixed_num_conn_kernel(
    seed: ti.types.ndarray(ndim=0),
    n_cols: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=2),
    replace: ti.template(),
):
    """Row ``i`` of ``out`` (shape ``(m, k)``): ``k`` columns of ``[0, n_cols)``, increasing.

    The row's draws are those of the JITC generator's row ``i`` under the key ``FCNKEY``
    (``_jitc_kernels``: integer arithmetic, the same on every device). ``replace=True``:
    ``k`` independent uniform columns, sorted. ``replace=False`` (``k <= n_cols``): ``k``
    distinct columns by Floyd's algorithm (for ``t`` in ``n - k .. n - 1``: draw ``c``
    uniform in ``[0, t]``; take ``c``, or ``t`` if ``c`` is taken), which picks every
    ``k``-subset with the same probability; kept sorted by insertion.
    """
    key = _key(seed)
    n = ti.cast(n_cols[None], ti.i64)
    k = out.shape[1]
    for i in range(ti.select(n > 0, out.shape[0], 0)):
        st = _mix64(_row_state(key, i) ^ ti.u64(FCNKEY))
        if ti.static(replace):
            for q in range(k):
                _insert_sorted(out, i, q, _below(_draw(st, ti.cast(q, ti.u64)), n))
        else:
            kk = ti.cast(ti.min(ti.cast(k, ti.i64), n), ti.i32)
            n32 = ti.cast(n, ti.i32)
            q = 0
            for t in range(n32 - kk, n32):
                c = _below(_draw(st, ti.cast(q, ti.u64)), ti.cast(t, ti.i64) + 1)
                if _contains(out, i, q, c):
                    c = ti.cast(t, ti.i64)
                _insert_sorted(out, i, q, c)
                q += 1
