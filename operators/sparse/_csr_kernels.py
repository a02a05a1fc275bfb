"""Taichi kernels of the CSR operators.

Every kernel follows the operator convention of :class:`tiarray.Operator`: its parameters
are the operator's inputs in order, then its outputs (zero-filled before the launch),
then an optional ``scratch`` buffer (zero-filled, not returned), then the static
(``ti.template()``) parameters named like the operator's keyword arguments.

The matrix is ``A`` of shape ``(m, n)`` in CSR form (``weights``, ``indices``,
``indptr``); ``weights`` has ndim 0 (one weight for every synapse, the "homogeneous"
case) or ndim 1 (one per synapse). Sizes are read from the arrays, never from a
template, so one compiled kernel serves every shape.

Safety: every ``indptr`` range is clamped to ``[0, nnz]``; every column index is
checked against the length of the array it addresses (scatters skip an invalid one,
gathers clamp it into range branch-free, which keeps the row loop vectorised, or check
a whole block of indices before reading them unclamped, see ``_gather_rows``). Invalid
connectivity thus gives wrong numbers (the Python layer rejects it with a clear error
when values are concrete) but never an out-of-bounds read or write.

The CPU gather (``transpose=False``) splits the rows into ``nt`` slots of about
``nnz / nt`` synapses each (``_split_rows``), one per worker.

CPU scatter kernels (``transpose=True``) run over ``nt`` row blocks, one per thread
slot (see ``_common.CHUNK``): block 0 adds into ``out`` and block ``t > 0`` into row
``t - 1`` of ``scratch`` (shape ``((nt - 1) * len(out),)``); a final loop adds the
blocks up. An empty ``scratch`` means one block: the serial algorithm without the
reduction. Plain (non-atomic) adds are used: each block owns its buffer. On GPUs the
scatter is one thread per row with atomic adds and ``scratch`` is ignored.

No ``from __future__ import annotations`` here: Taichi reads the annotations.
"""

from tiarray._internal import ti

from ._common import CHUNK, is_bool, is_i32, ndim, num_threads, on_gpu

# Columns of the dense operand handled together by the csrmm kernels (register block).
CB = 8
# Synapses of a CPU gather whose column indices are checked together (_gather_rows).
GATHER_SYN = 4096
# Events a CPU scatter tests together before visiting their rows one by one (_scatter_rows).
EVENT_BLOCK = 64

# ----------------------------------------------------------------------------- helpers


@ti.func
def _bounds(indptr: ti.template(), i, nnz):
    """The clamped synapse range ``[a, b)`` of row ``i``."""
    a = ti.cast(ti.min(ti.max(indptr[i], 0), nnz), ti.i32)
    b = ti.cast(ti.min(ti.max(indptr[i + 1], 0), nnz), ti.i32)
    return a, ti.max(a, b)


@ti.func
def _valid(k, n):
    """Whether the column index ``k`` (any integer type) addresses ``[0, n)``."""
    return (k >= 0) and (k < n)


@ti.func
def _split_rows(indptr: ti.template(), n_rows, nnz, t, nt):
    """First row of block ``t`` of ``nt`` blocks holding about ``nnz / nt`` synapses each."""
    r = 0
    if t >= nt:
        r = n_rows
    elif t > 0:
        target = ti.cast(ti.cast(nnz, ti.i64) * t // nt, ti.i64)
        lo = 0
        hi = n_rows
        while lo < hi:
            mid = (lo + hi) // 2
            if ti.cast(indptr[mid], ti.i64) < target:
                lo = mid + 1
            else:
                hi = mid
        r = lo
    return r


@ti.func
def _slot_rows(indptr: ti.template(), n_rows, nnz, t, nt):
    """The rows ``[lo, hi)`` of thread slot ``t`` of ``nt`` (``hi >= lo`` whatever ``indptr`` holds)."""
    lo = _split_rows(indptr, n_rows, nnz, t, nt)
    return lo, ti.max(lo, _split_rows(indptr, n_rows, nnz, t + 1, nt))


@ti.func
def _add_blocks(out: ti.template(), scratch: ti.template(), nt, n_out, c):
    """``out[c] += sum_t scratch[(t - 1) * n_out + c]``: the private outputs of thread blocks
    ``1 .. nt - 1`` of a CPU scatter added into block 0's (the body of the kernels' last loop,
    which must stay in the kernel: the serial variant serialises the kernel's own loops)."""
    acc = out[c]
    for t in range(1, nt):
        acc += scratch[(t - 1) * n_out + c]
    out[c] = acc


# ----------------------------------------------------------------------------- csrmv


@ti.func
def _clamp_index(indices: ti.template(), j, n_in):
    """``indices[j]`` clamped into ``[0, n_in)`` (``n_in > 0``), branch-free so the gather vectorises.

    Valid indices are unchanged; an invalid one (possible only where values were not
    validated, e.g. under ``jax.jit``) reads an arbitrary valid element instead of memory
    outside the array. int32 indices are compared as u32 (negative ones become huge):
    32-bit lanes, twice as many per vector as the u64 comparison int64 indices need.
    """
    r = 0
    if ti.static(is_i32(indices)):
        r = ti.cast(ti.min(ti.cast(indices[j], ti.u32), ti.cast(n_in - 1, ti.u32)), ti.i32)
    else:
        r = ti.cast(ti.min(ti.cast(indices[j], ti.u64), ti.cast(n_in - 1, ti.u64)), ti.i32)
    return r


@ti.func
def _as_value(vector: ti.template(), k, dt: ti.template()):
    """``vector[k]`` as a number of type ``dt``; bool (u8) events count as 0/1."""
    r = ti.cast(0, dt)
    if ti.static(is_bool(vector)):
        r = ti.cast(vector[k] != 0, dt)
    else:
        r = ti.cast(vector[k], dt)
    return r


@ti.func
def _nonzero(x: ti.template(), v):
    """Whether ``v``, an element of the array ``x``, is an event: not ``+-0.0`` / ``0``. NaN is
    an event (it propagates into the result, as in the dense product). Taichi's ``v != 0`` is
    LLVM's *ordered* compare, false for NaN: NaN events were silently skipped. Floats are
    therefore tested on their bits without the sign: masked, not
    shifted out, which debug mode reported as a shift overflow on every negative event."""
    r = False
    if ti.static(x.get_type().element_type == ti.f32):
        r = (ti.bit_cast(ti.cast(v, ti.f32), ti.u32) & ti.u32(0x7FFFFFFF)) != 0
    elif ti.static(x.get_type().element_type == ti.f64):
        r = (ti.bit_cast(ti.cast(v, ti.f64), ti.u64) & ti.u64(0x7FFFFFFFFFFFFFFF)) != 0
    else:
        r = v != 0
    return r


@ti.func
def _stage_events(vector: ti.template(), staged: ti.template(), n):
    """``staged[j] = 1 or 0`` (``vector[j] != 0``) for ``j < n``, in the staged array's type (one
    thread; top level of a CPU kernel, before the gather that reads ``staged``).

    A gather of bool (u8) events cannot vectorise: x86 has no byte gather, so every synapse
    is a scalar load and an insert, where a gather of 32/64-bit numbers is one instruction
    per vector. Measured on an Intel Xeon (AVX-512; ``event_fcnmv`` ``A @ s``, n = 4000,
    k = 80, r = 0.05, ``jax.jit``, ``python benchmarks/bench_sparse_families.py --families
    fcn --n 4000``): median 632 us with u8 events, 430 us staged (minimum 526 and 227).
    Staging costs one pass over the n events.
    """
    ti.loop_config(serialize=True)
    for j in range(n):
        staged[j] = ti.cast(vector[j] != 0, staged.get_type().element_type)


@ti.func
def _index(indices: ti.template(), j, n_in, checked: ti.template()):
    """``indices[j]`` as an i32, clamped into range unless the caller ``checked`` it."""
    r = 0
    if ti.static(checked):
        r = ti.cast(indices[j], ti.i32)
    else:
        r = _clamp_index(indices, j, n_in)
    return r


@ti.func
def _row_sum(weights: ti.template(), indices: ti.template(), vector: ti.template(), a, b, n_in,
             checked: ti.template()):  # fmt: skip
    """The raw sum of one row's synapses ``[a, b)`` (``n_in > 0``), finished by :func:`_finish`.

    ``checked``: every ``indices[j]`` of ``[a, b)`` is known to be in ``[0, n_in)``, so
    the loop reads them unclamped. LLVM then keeps each index a scalar that feeds its
    load's address, while a clamped index is computed in a vector register whose every
    lane must be moved back to a scalar one before the load.

    Bool events are used as 0/1 numbers (``w * 1`` and ``w * 0``), which makes the result
    equal to ``csrmv`` on the float version of the events. The kernels that call this are
    compiled with ``fast_math`` (``csrmv_kernel``'s Operators): LLVM then vectorises the
    sum across the loop (the order of the additions changes, not their set). A
    homogeneous weight multiplies the row sum once and reads no weight array; with bool
    events that sum is an integer count (exact; ``csrmv``'s float sum of the same 0/1
    values is the same number while it stays below ``2**24``).
    """
    dt = weights.get_type().element_type
    acc = _zero_sum(weights, vector)
    for j in range(a, b):
        if ti.static(ndim(weights) == 0 and is_bool(vector)):
            acc += ti.cast(vector[_index(indices, j, n_in, checked)] != 0, ti.i32)
        elif ti.static(ndim(weights) == 0):
            acc += _as_value(vector, _index(indices, j, n_in, checked), dt)
        else:
            acc += weights[j] * _as_value(vector, _index(indices, j, n_in, checked), dt)
    return acc


@ti.func
def _zero_sum(weights: ti.template(), vector: ti.template()):
    """The zero of :func:`_row_sum`'s accumulator: an i32 count or a number of the weights' type."""
    if ti.static(ndim(weights) == 0 and is_bool(vector)):
        return 0
    else:
        return ti.cast(0, weights.get_type().element_type)


@ti.func
def _finish(weights: ti.template(), acc):
    """A row's result from its raw sum: times the shared weight, if there is one."""
    res = ti.cast(acc, weights.get_type().element_type)
    if ti.static(ndim(weights) == 0):
        res = weights[None] * res
    return res


@ti.func
def _gather_row(weights: ti.template(), indices: ti.template(), vector: ti.template(), a, b, n_in):
    """``sum_j A[i, j] * vector[j]`` over the synapses ``[a, b)`` of one row, indices clamped (GPUs)."""
    res = ti.cast(0, weights.get_type().element_type)
    if n_in > 0:
        res = _finish(weights, _row_sum(weights, indices, vector, a, b, n_in, False))
    return res


@ti.func
def _indices_below(indices: ti.template(), a, b, n_in):
    """Whether every ``indices[j]`` of ``[a, b)`` is in ``[0, n_in)`` (a vectorised max)."""
    ok = False
    if ti.static(is_i32(indices)):
        mx = ti.cast(0, ti.u32)
        for j in range(a, b):
            mx = ti.max(mx, ti.cast(indices[j], ti.u32))
        ok = mx < ti.cast(n_in, ti.u32)
    else:
        mx = ti.cast(0, ti.u64)
        for j in range(a, b):
            mx = ti.max(mx, ti.cast(indices[j], ti.u64))
        ok = mx < ti.cast(n_in, ti.u64)
    return ok


@ti.func
def _checked_sum(weights: ti.template(), indices: ti.template(), vector: ti.template(), a, b, n_in):
    """:func:`_row_sum` over ``[a, b)``: checked first, then read unclamped if all indices are valid."""
    acc = _zero_sum(weights, vector)
    if _indices_below(indices, a, b, n_in):
        acc = _row_sum(weights, indices, vector, a, b, n_in, True)
    else:
        acc = _row_sum(weights, indices, vector, a, b, n_in, False)
    return acc


@ti.func
def _gather_block(weights: ti.template(), indices: ti.template(), indptr: ti.template(), vector: ti.template(),
                  out: ti.template(), r0, r1, nnz, n_in, checked: ti.template()):  # fmt: skip
    """``out[i]`` for the rows ``[r0, r1)``, their indices read as :func:`_row_sum`'s ``checked`` says."""
    for i in range(r0, r1):
        a, b = _bounds(indptr, i, nnz)
        out[i] = _finish(weights, _row_sum(weights, indices, vector, a, b, n_in, checked))


@ti.func
def _gather_rows(weights: ti.template(), indices: ti.template(), indptr: ti.template(), vector: ti.template(),
                 out: ti.template(), lo, hi, nnz, n_in):  # fmt: skip
    """``out[i] = (A @ vector)[i]`` for the rows ``[lo, hi)`` (CPU, one thread).

    Consecutive rows are grouped into blocks of at most ``GATHER_SYN`` synapses. Each
    block first checks the column indices of all its synapses (one vectorised pass, which
    leaves them in the L1 cache) and then gathers its rows unclamped when they are all in
    range, clamped otherwise (invalid input: the same results as without the check). A
    block's range is the union of its rows' clamped ranges, so a non-monotone ``indptr``
    cannot send a row outside what was checked. A row longer than ``GATHER_SYN`` is
    summed in chunks of that size, each checked on its own, so that the indices are still
    in the cache when the gather reads them again.
    """
    if n_in > 0:
        r0 = lo
        while r0 < hi:
            ja, jb = _bounds(indptr, r0, nnz)
            r1 = r0 + 1
            while r1 < hi:
                a, b = _bounds(indptr, r1, nnz)
                if ti.max(jb, b) - ti.min(ja, a) > GATHER_SYN:
                    break
                ja = ti.min(ja, a)
                jb = ti.max(jb, b)
                r1 += 1
            if jb - ja > GATHER_SYN:  # one long row
                acc = _zero_sum(weights, vector)
                c = ja
                while c < jb:
                    e = ti.min(c + GATHER_SYN, jb)
                    acc += _checked_sum(weights, indices, vector, c, e, n_in)
                    c = e
                out[r0] = _finish(weights, acc)
            elif _indices_below(indices, ja, jb, n_in):
                _gather_block(weights, indices, indptr, vector, out, r0, r1, nnz, n_in, True)
            else:
                _gather_block(weights, indices, indptr, vector, out, r0, r1, nnz, n_in, False)
            r0 = r1


@ti.real_func
def _scatter_row(
    weights: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    scale: ti.f64,
):
    """``target[off + k] += weights[j] * scale`` over the synapses ``[a, b)`` of one row.

    A real function (compiled as its own LLVM function): the array pointers arrive in
    registers. Inlined into the kernel, every store to ``target`` would force reloading
    the three array pointers from the argument buffer (LLVM cannot prove they do not
    alias), which costs about 30% of the scatter.
    """
    sc = ti.cast(scale, weights.get_type().element_type)
    for j in range(a, b):
        k = indices[j]
        if k >= 0 and k < n_out:
            x = off + ti.cast(k, ti.i32)
            target[x] = target[x] + weights[j] * sc


@ti.real_func
def _scatter_row_homo(
    indices: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    value: ti.f64,
):
    """``target[off + k] += value`` over the synapses ``[a, b)`` of one row (one shared weight)."""
    v = ti.cast(value, target.get_type().element_type)
    for j in range(a, b):
        k = indices[j]
        if k >= 0 and k < n_out:
            x = off + ti.cast(k, ti.i32)
            target[x] = target[x] + v


@ti.func
def _scatter_span(weights: ti.template(), indices: ti.template(), vector: ti.template(), vi, target: ti.template(),
                  off, a, b, n_out):  # fmt: skip
    """``target[off + k] += A[i, k] * vi`` over the synapses ``[a, b)`` of one row whose event
    ``vi`` (an element of ``vector``: bool counts as 1) is nonzero. Plain read-modify-writes:
    the caller owns ``target`` (one thread slot, CPU)."""
    scale = ti.cast(1, weights.get_type().element_type)
    if ti.static(not is_bool(vector)):
        scale = ti.cast(vi, weights.get_type().element_type)
    if ti.static(ndim(weights) == 0):
        _scatter_row_homo(indices, target, off, a, b, n_out, ti.cast(weights[None] * scale, ti.f64))
    else:
        _scatter_row(weights, indices, target, off, a, b, n_out, ti.cast(scale, ti.f64))


@ti.func
def _scatter_span_atomic(weights: ti.template(), indices: ti.template(), vector: ti.template(), vi,
                         out: ti.template(), a, b, n_out):  # fmt: skip
    """:func:`_scatter_span` with atomic adds into ``out`` (GPUs: one thread per row)."""
    scale = ti.cast(1, weights.get_type().element_type)
    if ti.static(not is_bool(vector)):
        scale = ti.cast(vi, weights.get_type().element_type)
    for j in range(a, b):
        k = indices[j]
        if _valid(k, n_out):
            if ti.static(ndim(weights) == 0):
                ti.atomic_add(out[ti.cast(k, ti.i32)], weights[None] * scale)
            else:
                ti.atomic_add(out[ti.cast(k, ti.i32)], weights[j] * scale)


@ti.func
def _at(vector: ti.template(), s, i):
    """``vector[i]``, or ``vector[s, i]`` for a 2-D one (row ``s`` of a spike history)."""
    if ti.static(ndim(vector) == 2):
        return vector[s, i]
    else:
        return vector[i]


@ti.func
def _block_mask(vector: ti.template(), s, i0):
    """A ``u64`` whose bit ``k`` is set where ``vector[i0 + k]`` (of row ``s`` for a 2-D
    ``vector``) is nonzero, ``k < EVENT_BLOCK`` (the test of :func:`_nonzero`)."""
    m = ti.cast(0, ti.u64)
    for k in range(EVENT_BLOCK):
        m |= ti.cast(_nonzero(vector, _at(vector, s, i0 + k)), ti.u64) << ti.cast(k, ti.u64)
    return m


@ti.func
def _pop_lowest(m):
    """``(k, m')``: the position ``k`` (an i32) of the lowest set bit of the nonzero ``u64``
    ``m``, and ``m`` without it."""
    low = m & (~m + ti.cast(1, ti.u64))
    return ti.cast(63 - ti.math.clz(low), ti.i32), m & (m - ti.cast(1, ti.u64))


@ti.func
def _scatter_rows(weights: ti.template(), indices: ti.template(), indptr: ti.template(), vector: ti.template(),
                  target: ti.template(), off, lo, hi, n_out, nnz):  # fmt: skip
    """``target[off + k] += A[i, k] * vector[i]`` for the rows ``[lo, hi)`` with ``vector[i] != 0``.

    Runs inside one thread slot: plain (non-atomic) read-modify-writes. The events are
    scanned ``EVENT_BLOCK`` at a time: a full block becomes a bit mask of its events
    (:func:`_block_mask`, vectorised) whose set bits are visited in order, so a step in
    which few neurons fire costs about ``n / 8`` byte reads and a branch per event, not a
    compare-and-branch per row (which, at a few percent of events, mispredicted about once
    per event).
    """
    i = lo
    while i < hi:
        e = ti.min(i + EVENT_BLOCK, hi)
        if e - i == EVENT_BLOCK:
            m = _block_mask(vector, 0, i)
            while m != 0:
                k, m2 = _pop_lowest(m)
                m = m2
                r = i + k
                a, b = _bounds(indptr, r, nnz)
                _scatter_span(weights, indices, vector, vector[r], target, off, a, b, n_out)
        else:
            for r in range(i, e):
                vi = vector[r]
                if _nonzero(vector, vi):
                    a, b = _bounds(indptr, r, nnz)
                    _scatter_span(weights, indices, vector, vi, target, off, a, b, n_out)
        i = e


@ti.func
def _gather_slot(weights: ti.template(), indices: ti.template(), indptr: ti.template(), vector: ti.template(),
                 scratch: ti.template(), out: ti.template(), t, nt, n_rows, nnz):  # fmt: skip
    """Thread slot ``t`` of ``nt`` of the CPU row gather ``out = A @ vector``: its rows of about
    ``nnz / nt`` synapses, bool events read as the numbers staged in ``scratch`` when they were
    (:func:`_stage_events`)."""
    n_in = vector.shape[0]
    lo, hi = _slot_rows(indptr, n_rows, nnz, t, nt)
    if ti.static(is_bool(vector)):
        if scratch.shape[0] >= n_in:
            _gather_rows(weights, indices, indptr, scratch, out, lo, hi, nnz, n_in)
        else:
            _gather_rows(weights, indices, indptr, vector, out, lo, hi, nnz, n_in)
    else:
        _gather_rows(weights, indices, indptr, vector, out, lo, hi, nnz, n_in)


# ----------------------------------------------------------------------------- A @ s by columns

# The column route of the event products' A @ s (csrmv_cols_kernel, fcnmv_cols_kernel)
# scatters the synapses of the active columns through the column index when fewer than
# 1 / COLS_RATIO of the events are active, and gathers every row otherwise. A scattered
# synapse (one serial read-modify-write at a random row) cost about 3 gathered ones
# (two threads, vectorised): break-even near r = 0.3 (n = 4000-40 000, docs/sparse.md).
COLS_RATIO = 4
# ... and 1 / COLS_RATIO_PERM where the weights are read through perm (weights that may
# change: a random read per synapse more). That route was 2.2x as fast as the gather at r = 0.05
# and about even at r = 0.1 (n = 40 000, `python benchmarks/bench_sparse.py --ops event_csrmv`,
# 'ti torch', 2026-12-05 21:37).
COLS_RATIO_PERM = 10


@ti.func
def _count_events(vector: ti.template(), n):
    """The number of nonzero events of ``vector[:n]`` (one thread; :func:`_nonzero`'s test)."""
    cnt = 0
    i = 0
    while i + EVENT_BLOCK <= n:
        c = 0
        for q in range(EVENT_BLOCK):
            c += ti.cast(_nonzero(vector, vector[i + q]), ti.i32)
        cnt += c
        i += EVENT_BLOCK
    while i < n:
        cnt += ti.cast(_nonzero(vector, vector[i]), ti.i32)
        i += 1
    return cnt


@ti.real_func
def _scatter_col_perm(
    weights: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    rows: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    a: ti.i32,
    b: ti.i32,
    scale: ti.f64,
):
    """``target[rows[j]] += weights[perm[j]] * scale`` over ``[a, b)`` of a column index (the
    weights in synapse order: ones that may change, not reordered once). Out-of-range rows
    and positions are skipped (an index made stale by a write the cache could not see)."""
    sc = ti.cast(scale, weights.get_type().element_type)
    n_out = target.shape[0]
    nnz = weights.shape[0]
    for j in range(a, b):
        r = rows[j]
        p = perm[j]
        if r >= 0 and r < n_out and p >= 0 and p < nnz:
            target[r] = target[r] + weights[p] * sc


@ti.func
def _col_event(weights: ti.template(), vector: ti.template(), ptr_t: ti.template(), perm: ti.template(),
               rows_t: ti.template(), wsort: ti.template(), out: ti.template(), c, n_out):  # fmt: skip
    """Column ``c``'s synapses (rows ``rows_t[ptr_t[c]:ptr_t[c + 1]]``) add its event into ``out``:
    the event itself (one shared weight: ``out`` holds the raw sums, as the gather's) or times
    the synapse's weight (``wsort`` in index order, else ``weights[perm]``)."""
    a = ti.cast(ptr_t[c], ti.i32)
    b = ti.cast(ptr_t[c + 1], ti.i32)
    scale = ti.cast(1, ti.f64)
    if ti.static(not is_bool(vector)):
        scale = ti.cast(vector[c], ti.f64)
    if ti.static(ndim(weights) == 0):
        _scatter_row_homo(rows_t, out, 0, a, b, n_out, scale)
    elif wsort.shape[0] == perm.shape[0]:
        _scatter_row(wsort, rows_t, out, 0, a, b, n_out, scale)
    else:
        _scatter_col_perm(weights, perm, rows_t, out, a, b, scale)


@ti.func
def _use_columns(weights: ti.template(), vector: ti.template(), ptr_t: ti.template(), perm: ti.template(),
                 wsort: ti.template()):  # fmt: skip
    """Whether the column route scatters: few events (fewer still when the weights are read
    through ``perm``), and a column index of ``len(vector)`` columns."""
    n_in = vector.shape[0]
    ratio = COLS_RATIO
    if ti.static(ndim(weights) != 0):
        if wsort.shape[0] != perm.shape[0]:
            ratio = COLS_RATIO_PERM
    return _count_events(vector, n_in) * ratio < n_in and ptr_t.shape[0] == n_in + 1


@ti.func
def _scatter_cols(weights: ti.template(), vector: ti.template(), ptr_t: ti.template(), perm: ti.template(),
                  rows_t: ti.template(), wsort: ti.template(), out: ti.template()):  # fmt: skip
    """``out[row] += A[row, c] * vector[c]`` over the synapses of the columns ``c`` with a nonzero
    event (one thread; raw sums with a shared weight), scanned in 64-event blocks as
    :func:`_scatter_rows`."""
    n_in = vector.shape[0]
    n_rows = out.shape[0]
    i0 = 0
    while i0 < n_in:
        e = ti.min(i0 + EVENT_BLOCK, n_in)
        if e - i0 == EVENT_BLOCK:
            msk = _block_mask(vector, 0, i0)
            while msk != 0:
                b, m2 = _pop_lowest(msk)
                msk = m2
                _col_event(weights, vector, ptr_t, perm, rows_t, wsort, out, i0 + b, n_rows)
        else:
            for c in range(i0, e):
                if _nonzero(vector, vector[c]):
                    _col_event(weights, vector, ptr_t, perm, rows_t, wsort, out, c, n_rows)
        i0 = e


@ti.func
def _route_scatter(weights: ti.template(), vector: ti.template(), ptr_t: ti.template(), perm: ti.template(),
                   rows_t: ti.template(), wsort: ti.template(), out: ti.template(), cols):  # fmt: skip
    """The scatter of a column / source route when ``cols`` (top level of a kernel, after the
    other route's loops): the active columns' synapses on one thread, then the raw sums
    times a shared weight (as :func:`_finish`). Shared by ``csrmv_cols_kernel``,
    ``fcnmv_cols_kernel`` and ``coomv_src_kernel``."""
    ti.loop_config(serialize=True)
    for _ in range(ti.select(cols, 1, 0)):
        _scatter_cols(weights, vector, ptr_t, perm, rows_t, wsort, out)
    if ti.static(ndim(weights) == 0):
        for i in range(ti.select(cols, out.shape[0], 0)):
            out[i] = weights[None] * out[i]


@ti.kernel
def csrmv_cols_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    ptr_t: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    rows_t: ti.types.ndarray(ndim=1),
    wsort: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``out = A @ vector`` of ``event_csrmv`` on the CPU, with the column index of ``A``
    (``ptr_t, perm, rows_t``; ``wsort``: the weights in its order, or empty).

    Counts the events first (one pass). Fewer than ``n / COLS_RATIO`` active: one thread
    scatters the synapses of the active columns only (:func:`_scatter_cols`). Otherwise
    the row gather of ``csrmv_kernel``. The two add in different orders (columns, rows),
    except for one shared weight with bool events (exact integer counts in both).
    """
    nnz = indices.shape[0]
    n_in = vector.shape[0]
    n_rows = ti.min(out.shape[0], indptr.shape[0] - 1)
    nt = ti.static(num_threads())
    cols = _use_columns(weights, vector, ptr_t, perm, wsort)
    if ti.static(is_bool(vector)):  # bool events are gathered as numbers (_stage_events)
        _stage_events(vector, scratch, ti.select(scratch.shape[0] >= n_in and not cols, n_in, 0))
    for s in range(ti.select(cols, 0, nt * CHUNK)):
        if s % CHUNK == 0:
            _gather_slot(weights, indices, indptr, vector, scratch, out, s // CHUNK, nt, n_rows, nnz)
    _route_scatter(weights, vector, ptr_t, perm, rows_t, wsort, out, cols)


@ti.kernel
def csrmv_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    vector: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = A @ vector`` (``transpose=False``) or ``out = A.T @ vector`` (``True``).

    ``vector`` is bool (u8: a synapse counts when its event is nonzero) or float (the
    value weights the synapse); rows whose ``vector`` entry is zero are skipped when
    scattering. Shared by ``csrmv`` and ``event_csrmv``.
    """
    nnz = indices.shape[0]
    if ti.static(not transpose):
        n_in = vector.shape[0]
        n_rows = ti.min(out.shape[0], indptr.shape[0] - 1)
        if ti.static(on_gpu()):
            for i in range(n_rows):
                a, b = _bounds(indptr, i, nnz)
                out[i] = _gather_row(weights, indices, vector, a, b, n_in)
        else:
            # one slot of about nnz / nt synapses per worker (see _common.CHUNK)
            nt = ti.static(num_threads())
            if ti.static(is_bool(vector)):  # bool events are gathered as numbers (_stage_events)
                _stage_events(vector, scratch, ti.select(scratch.shape[0] >= n_in, n_in, 0))
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    _gather_slot(weights, indices, indptr, vector, scratch, out, s // CHUNK, nt, n_rows, nnz)
    else:
        n_out = out.shape[0]
        n_rows = ti.min(vector.shape[0], indptr.shape[0] - 1)
        if ti.static(on_gpu()):
            for i in range(n_rows):
                vi = vector[i]
                if _nonzero(vector, vi):
                    a, b = _bounds(indptr, i, nnz)
                    _scatter_span_atomic(weights, indices, vector, vi, out, a, b, n_out)
        else:
            nt = 1
            if n_out > 0:
                nt = scratch.shape[0] // n_out + 1
            # one block (serial, or no scratch) is one iteration, not CHUNK: Taichi's launch
            # of the no-spike n=4000 step went from 2.04 to 1.82 us (from Python, load 0.7)
            for s in range(ti.select(nt > 1, nt * CHUNK, 1)):
                if s % CHUNK == 0:
                    t = s // CHUNK
                    lo, hi = _slot_rows(indptr, n_rows, nnz, t, nt)
                    if t == 0:
                        _scatter_rows(weights, indices, indptr, vector, out, 0, lo, hi, n_out, nnz)
                    else:
                        _scatter_rows(
                            weights, indices, indptr, vector, scratch, (t - 1) * n_out, lo, hi, n_out, nnz
                        )
            for k in range(ti.select(nt > 1, n_out, 0)):
                _add_blocks(out, scratch, nt, n_out, k)


# ----------------------------------------------------------------------------- csrmm


@ti.func
def _mm_value(wj, m, wdt: ti.template(), boolean: ti.template()):
    r = ti.cast(0, wdt)
    if ti.static(boolean):
        r = ti.select(m != 0, wj, ti.cast(0, wdt))
    else:
        r = wj * ti.cast(m, wdt)
    return r


@ti.func
def _mm_weight(weights: ti.template(), j):
    wj = ti.cast(0, weights.get_type().element_type)
    if ti.static(ndim(weights) == 0):
        wj = weights[None]
    else:
        wj = weights[j]
    return wj


@ti.func
def _mm_gather_row(weights: ti.template(), indices: ti.template(), matrix: ti.template(), out: ti.template(), i,
                   a, b, n_in):  # fmt: skip
    """``out[i, :] = sum_{j in [a, b)} w_j matrix[indices[j], :]``, ``CB`` columns at a time in registers
    (invalid column indices are skipped)."""
    K = matrix.shape[1]
    nb = (K + CB - 1) // CB
    boolean = ti.static(is_bool(matrix))
    for cb in range(nb):
        c0 = cb * CB
        acc = ti.Vector.zero(weights.get_type().element_type, CB)
        if c0 + CB <= K:
            for j in range(a, b):
                k = indices[j]
                if _valid(k, n_in):
                    kk = ti.cast(k, ti.i32)
                    wj = _mm_weight(weights, j)
                    for c in ti.static(range(CB)):
                        acc[c] += _mm_value(wj, matrix[kk, c0 + c], weights.get_type().element_type, boolean)
            for c in ti.static(range(CB)):
                out[i, c0 + c] = acc[c]
        else:
            for j in range(a, b):
                k = indices[j]
                if _valid(k, n_in):
                    kk = ti.cast(k, ti.i32)
                    wj = _mm_weight(weights, j)
                    for c in ti.static(range(CB)):
                        if c0 + c < K:
                            acc[c] += _mm_value(
                                wj, matrix[kk, c0 + c], weights.get_type().element_type, boolean
                            )
            for c in ti.static(range(CB)):
                if c0 + c < K:
                    out[i, c0 + c] = acc[c]


@ti.func
def _mm_scatter_atomic(weights: ti.template(), indices: ti.template(), matrix: ti.template(), m,
                       out: ti.template(), c, a, b, n_out):  # fmt: skip
    """``out[k, c] += A[i, k] * m`` (atomic) over the synapses ``[a, b)`` of row ``i`` (GPUs)."""
    for j in range(a, b):
        k = indices[j]
        if _valid(k, n_out):
            v = _mm_value(
                _mm_weight(weights, j), m, weights.get_type().element_type, ti.static(is_bool(matrix))
            )
            ti.atomic_add(out[ti.cast(k, ti.i32), c], v)


@ti.func
def _mm_scatter_col(weights: ti.template(), indices: ti.template(), matrix: ti.template(), m,
                    scratch: ti.template(), off, a, b, n_out):  # fmt: skip
    """``scratch[off + k] += A[i, k] * m`` over the synapses ``[a, b)`` of row ``i`` (CPU: one column of a
    column-major output, owned by the calling thread slot)."""
    scale = ti.cast(1, weights.get_type().element_type)
    if ti.static(not is_bool(matrix)):
        scale = ti.cast(m, weights.get_type().element_type)
    if ti.static(ndim(weights) == 0):
        _scatter_row_homo(indices, scratch, off, a, b, n_out, ti.cast(weights[None] * scale, ti.f64))
    else:
        _scatter_row(weights, indices, scratch, off, a, b, n_out, ti.cast(scale, ti.f64))


@ti.kernel
def csrmm_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    matrix: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=2),
    scratch: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = A @ matrix`` or ``out = A.T @ matrix`` for a dense ``matrix`` of shape ``(., K)``.

    ``matrix`` may be bool (a batch of event vectors, one per column). The gather handles
    ``CB`` columns at a time in registers. The CPU scatter works column by column, each an
    event scatter (only the rows whose entry is nonzero) into a contiguous column of
    ``scratch`` (``K * len(out)`` elements, column-major, zero-filled), with the columns
    split between threads; a last loop transposes ``scratch`` into ``out``. Scattering into
    the ``(n, K)`` output directly writes one cache line per synapse and column.
    """
    nnz = indices.shape[0]
    K = matrix.shape[1]
    if ti.static(not transpose):
        n_in = matrix.shape[0]
        for i in range(ti.min(out.shape[0], indptr.shape[0] - 1)):
            a, b = _bounds(indptr, i, nnz)
            _mm_gather_row(weights, indices, matrix, out, i, a, b, n_in)
    else:
        n_out = out.shape[0]
        n_rows = ti.min(matrix.shape[0], indptr.shape[0] - 1)
        if ti.static(on_gpu()):
            for i, c in ti.ndrange(n_rows, K):
                m = matrix[i, c]
                if _nonzero(matrix, m):
                    a, b = _bounds(indptr, i, nnz)
                    _mm_scatter_atomic(weights, indices, matrix, m, out, c, a, b, n_out)
        else:
            nt = ti.min(ti.static(num_threads()), K)
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    t = s // CHUNK
                    for c in range(t * K // nt, (t + 1) * K // nt):
                        for i in range(n_rows):
                            m = matrix[i, c]
                            if _nonzero(matrix, m):
                                a, b = _bounds(indptr, i, nnz)
                                _mm_scatter_col(weights, indices, matrix, m, scratch, c * n_out, a, b, n_out)
            for k in range(n_out):
                for c in range(K):
                    out[k, c] = scratch[c * n_out + k]


# ----------------------------------------------------------------------------- sddmm


@ti.kernel
def csr_sddmm_kernel(
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(),
    b: ti.types.ndarray(),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = sum_c a[row(j), c] * b[indices[j], c]`` (1-D ``a``, ``b``: ``a[row(j)] * b[indices[j]]``).

    The sampled dense-dense product: the gradient of a CSR product with respect to its
    per-synapse weights. Synapses with an invalid column index get 0.
    """
    nnz = indices.shape[0]
    n_rows = ti.min(a.shape[0], indptr.shape[0] - 1)
    n_b = b.shape[0]
    for i in range(n_rows):
        lo, hi = _bounds(indptr, i, nnz)
        for j in range(lo, hi):
            k = indices[j]
            r = ti.cast(0, out.get_type().element_type)
            if _valid(k, n_b):
                kk = ti.cast(k, ti.i32)
                if ti.static(ndim(a) == 1):
                    r = ti.cast(a[i], out.get_type().element_type) * ti.cast(
                        b[kk], out.get_type().element_type
                    )
                else:
                    for c in range(a.shape[1]):
                        r += ti.cast(a[i, c], out.get_type().element_type) * ti.cast(
                            b[kk, c], out.get_type().element_type
                        )
            out[j] = r


# ----------------------------------------------------------------------------- conversions


@ti.kernel
def csr_to_dense_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=2),
):
    """``out[i, indices[j]] += weights[j]`` (duplicates add up, like SciPy)."""
    nnz = indices.shape[0]
    n_rows = ti.min(out.shape[0], indptr.shape[0] - 1)
    n_cols = out.shape[1]
    for i in range(n_rows):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            if _valid(k, n_cols):
                kk = ti.cast(k, ti.i32)
                if ti.static(ndim(weights) == 0):
                    out[i, kk] = out[i, kk] + weights[None]
                else:
                    out[i, kk] = out[i, kk] + weights[j]


@ti.kernel
def csr_sample_kernel(
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    dense: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = dense[row(j), indices[j]]``: the transpose of ``csr_to_dense`` in the weights
    (synapses with an invalid column index get 0)."""
    nnz = indices.shape[0]
    n_rows = ti.min(dense.shape[0], indptr.shape[0] - 1)
    n_cols = dense.shape[1]
    for i in range(n_rows):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            r = ti.cast(0, out.get_type().element_type)
            if _valid(k, n_cols):
                r = ti.cast(dense[i, ti.cast(k, ti.i32)], out.get_type().element_type)
            out[j] = r


@ti.kernel
def dense_row_counts_kernel(dense: ti.types.ndarray(ndim=2), counts: ti.types.ndarray(ndim=1)):
    """``counts[i]`` = number of nonzero entries in row ``i``."""
    for i in range(dense.shape[0]):
        c = 0
        for k in range(dense.shape[1]):
            if _nonzero(dense, dense[i, k]):
                c += 1
        counts[i] = c


@ti.kernel
def dense_to_csr_fill_kernel(
    dense: ti.types.ndarray(ndim=2),
    indptr: ti.types.ndarray(ndim=1),
    weights: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
):
    """Write the nonzero entries of each row at ``indptr[i]`` (column order)."""
    for i in range(dense.shape[0]):
        p = ti.cast(indptr[i], ti.i32)
        for k in range(dense.shape[1]):
            x = dense[i, k]
            if _nonzero(dense, x):
                weights[p] = ti.cast(x, weights.get_type().element_type)
                indices[p] = ti.cast(k, indices.get_type().element_type)
                p += 1


@ti.kernel
def csr_col_counts_kernel(
    indices: ti.types.ndarray(ndim=1), indptr: ti.types.ndarray(ndim=1), counts: ti.types.ndarray(ndim=1)
):
    """``counts[c]`` = synapses in column ``c`` (pass 1 of ``csr_transpose``)."""
    nnz = indices.shape[0]
    n_cols = counts.shape[0]
    n_rows = indptr.shape[0] - 1
    ti.loop_config(serialize=True)
    for i in range(n_rows):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            if _valid(k, n_cols):
                kk = ti.cast(k, ti.i32)
                counts[kk] = counts[kk] + 1


@ti.kernel
def csr_transpose_fill_kernel(
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    indptr_t: ti.types.ndarray(ndim=1),
    indices_t: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    cursor: ti.types.ndarray(ndim=1),
):
    """Pass 2 of ``csr_transpose``: rows in increasing order within each column (serial, stable)."""
    nnz = indices.shape[0]
    n_cols = indptr_t.shape[0] - 1
    n_rows = indptr.shape[0] - 1
    nnz_t = indices_t.shape[0]
    ti.loop_config(serialize=True)
    for i in range(n_rows):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            if _valid(k, n_cols):
                kk = ti.cast(k, ti.i32)
                p = ti.cast(indptr_t[kk], ti.i64) + ti.cast(cursor[kk], ti.i64)
                if p >= 0 and p < nnz_t:
                    pp = ti.cast(p, ti.i32)
                    indices_t[pp] = ti.cast(i, indices_t.get_type().element_type)
                    perm[pp] = ti.cast(j, perm.get_type().element_type)
                cursor[kk] = cursor[kk] + 1
