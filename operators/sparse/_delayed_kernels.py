"""Taichi kernels of the delayed event product and of its two transposes.

``history`` (shape ``(D, m)``) is a ring buffer of past events: row ``s`` holds the events
of the step written at slot ``s``. Synapse ``j`` of row ``i`` (column ``c_j``, delay
``d_j``) reads ``history[(t - d_j) mod D, i]``, with the mathematical modulo (in
``[0, D)`` for every integer ``t``, ``d_j``): no delay value can address memory outside
``history``.

- ``delayed_kernel``: ``out[c] = sum_j w_j history[(t - d_j) mod D, row_j]``. A row whose
  neuron has no event in any of the ``D`` slots is skipped after ``D`` reads (no synapse
  read); the others read every synapse's delay and event. CPU: rows split by synapse
  count between the thread slots, private outputs (the CSR scatter scheme).
- ``delayed_sorted_kernel``: the same product through the delay index (``dptr``, ``perm``,
  ``cols``: each row's synapses grouped by delay, delay-major): each slot of ``history`` is
  scanned 64 rows at a time and an event visits the synapses that read its slot now.
- ``delayed_sddmm_kernel`` (weight gradient): ``g_j = ct[c_j] history[(t - d_j) mod D, row_j]``.
- ``delayed_t_kernel`` (history gradient): ``G[(t - d_j) mod D, row_j] += w_j ct[c_j]``;
  row ``i`` writes only column ``i`` of ``G``, so rows run in parallel without atomics.

Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import CHUNK, is_bool, ndim, on_gpu
from ._csr_kernels import (
    EVENT_BLOCK,
    _add_blocks,
    _block_mask,
    _bounds,
    _nonzero,
    _pop_lowest,
    _scatter_row,
    _scatter_row_homo,
    _slot_rows,
    _valid,
)


@ti.func
def _mod(x, D):
    """``x mod D`` in ``[0, D)`` (``D > 0``), as i64, whichever sign convention ``%`` has."""
    r = ti.cast(x, ti.i64) % D
    if r < 0:
        r += D
    return r


@ti.func
def _slot(t, d, D):
    """``(t - d) mod D`` in ``[0, D)`` (``D > 0``), for any 64-bit integers: each is reduced
    first, so that ``t - d`` cannot overflow (``t = -2**63`` gave a wrong slot, 2026-12-05)."""
    DD = ti.cast(D, ti.i64)
    return ti.cast(_mod(_mod(t, DD) - _mod(d, DD), DD), ti.i32)


@ti.func
def _slot_of(tm, d, D):
    """``(tm - d) mod D`` in ``[0, D)`` for ``tm`` in ``[0, D)`` (``t mod D``) and any integer ``d``,
    without a division for a delay in ``[0, D)``. The direct kernel took a 64-bit ``%`` (a
    division) per synapse: without it a call took 27 % less (n = 40 000, k = 80, D = 8, bool
    history at r = 0.01 / 0.05 / 0.1: 2.39 / 8.77 / 13.7 ms to 1.73 / 6.44 / 10.3, minima, /tmp
    A/B). A delay outside ``[0, D)`` (unchecked under ``jax.jit``) is reduced first, on a
    branch that valid delays never take. The real functions write this out: called from
    one, it read wrong slots (Taichi 1.7)."""
    DD = ti.cast(D, ti.i64)
    dd = ti.cast(d, ti.i64)
    if dd < 0 or dd >= DD:
        dd = dd % DD
        if dd < 0:
            dd += DD
    r = ti.cast(tm, ti.i64) - dd
    return ti.cast(ti.select(r < 0, r + DD, r), ti.i32)


@ti.real_func
def _delayed_row(
    weights: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    history: ti.types.ndarray(ndim=2),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    i: ti.i32,
    t: ti.i64,
):
    """``target[off + c_j] += w_j history[(t - d_j) mod D, i]`` over the synapses ``[a, b)`` of row ``i``, ``t`` in ``[0, D)``
    (a real function: the pointers arrive in registers, see ``_csr_kernels._scatter_row``)."""
    D = ti.cast(history.shape[0], ti.i64)
    for j in range(a, b):
        k = indices[j]
        if k >= 0 and k < n_out:
            dd = ti.cast(delays[j], ti.i64)  # _slot_of, written out (see there)
            if dd < 0 or dd >= D:
                dd = dd % D
                if dd < 0:
                    dd += D
            r = t - dd
            v = history[ti.cast(ti.select(r < 0, r + D, r), ti.i32), i]
            if _nonzero(history, v):
                q = off + ti.cast(k, ti.i32)
                if ti.static(is_bool(history)):
                    target[q] = target[q] + weights[j]
                else:
                    target[q] = target[q] + weights[j] * ti.cast(v, target.get_type().element_type)


@ti.real_func
def _delayed_row_homo(
    indices: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    history: ti.types.ndarray(ndim=2),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    i: ti.i32,
    t: ti.i64,
    w0: ti.f64,
):
    """:func:`_delayed_row` with one weight ``w0`` for every synapse."""
    D = ti.cast(history.shape[0], ti.i64)
    w = ti.cast(w0, target.get_type().element_type)
    for j in range(a, b):
        k = indices[j]
        if k >= 0 and k < n_out:
            dd = ti.cast(delays[j], ti.i64)  # _slot_of, written out (see there)
            if dd < 0 or dd >= D:
                dd = dd % D
                if dd < 0:
                    dd += D
            r = t - dd
            v = history[ti.cast(ti.select(r < 0, r + D, r), ti.i32), i]
            if _nonzero(history, v):
                q = off + ti.cast(k, ti.i32)
                if ti.static(is_bool(history)):
                    target[q] = target[q] + w
                else:
                    target[q] = target[q] + w * ti.cast(v, target.get_type().element_type)


@ti.func
def _row_active(history: ti.template(), i):
    """Whether neuron ``i`` has an event in any slot of ``history``."""
    nz = False
    for s in range(history.shape[0]):
        if _nonzero(history, history[s, i]):
            nz = True
    return nz


@ti.func
def _delayed_active_row(weights: ti.template(), indices: ti.template(), indptr: ti.template(), delays: ti.template(),
                        history: ti.template(), target: ti.template(), off, n_out, nnz, t, i):  # fmt: skip
    """Row ``i`` (with an event in the window) delivers what its synapses read."""
    a, b = _bounds(indptr, i, nnz)
    if ti.static(ndim(weights) == 0):  # a real function cannot take a 0-d array: a number
        _delayed_row_homo(
            indices, delays, history, target, off, a, b, n_out, i, t, ti.cast(weights[None], ti.f64)
        )
    else:
        _delayed_row(weights, indices, delays, history, target, off, a, b, n_out, i, t)


@ti.func
def _delayed_rows(weights: ti.template(), indices: ti.template(), indptr: ti.template(), delays: ti.template(),
                  history: ti.template(), target: ti.template(), off, lo, hi, n_out, nnz, t):  # fmt: skip
    """The rows ``[lo, hi)`` with an event in any slot, ``EVENT_BLOCK`` rows at a time: the OR of
    the slots' bit masks, whose set bits are visited in order (as ``_csr_kernels._scatter_rows``)."""
    i0 = lo
    while i0 < hi:
        e = ti.min(i0 + EVENT_BLOCK, hi)
        if e - i0 == EVENT_BLOCK:
            m = ti.cast(0, ti.u64)
            for s in range(history.shape[0]):
                m |= _block_mask(history, s, i0)
            while m != 0:
                k, m2 = _pop_lowest(m)
                m = m2
                _delayed_active_row(
                    weights, indices, indptr, delays, history, target, off, n_out, nnz, t, i0 + k
                )
        else:
            for i in range(i0, e):
                if _row_active(history, i):
                    _delayed_active_row(
                        weights, indices, indptr, delays, history, target, off, n_out, nnz, t, i
                    )
        i0 = e


@ti.kernel
def delayed_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    history: ti.types.ndarray(ndim=2),
    t: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``out[c] = sum_j w_j history[(t - d_j) mod D, row_j]`` (``delays`` as long as ``indices``)."""
    nnz = ti.min(indices.shape[0], delays.shape[0])
    n_out = out.shape[0]
    n_rows = ti.min(indptr.shape[0] - 1, history.shape[1])
    if history.shape[0] > 0:
        tt = ti.cast(_slot(t[None], 0, history.shape[0]), ti.i64)  # t mod D: t - d_j cannot overflow
        if ti.static(on_gpu()):
            for i in range(n_rows):
                if _row_active(history, i):
                    a, b = _bounds(indptr, i, nnz)
                    for j in range(a, b):
                        k = indices[j]
                        if _valid(k, n_out):
                            v = history[_slot_of(tt, delays[j], history.shape[0]), i]
                            if _nonzero(history, v):
                                wj = ti.cast(0, out.get_type().element_type)
                                if ti.static(ndim(weights) == 0):
                                    wj = weights[None]
                                else:
                                    wj = weights[j]
                                if ti.static(not is_bool(history)):
                                    wj = wj * ti.cast(v, out.get_type().element_type)
                                ti.atomic_add(out[ti.cast(k, ti.i32)], wj)
        else:
            nt = 1
            if n_out > 0:
                nt = scratch.shape[0] // n_out + 1
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    q = s // CHUNK
                    lo, hi = _slot_rows(indptr, n_rows, nnz, q, nt)
                    if q == 0:
                        _delayed_rows(
                            weights, indices, indptr, delays, history, out, 0, lo, hi, n_out, nnz, tt
                        )
                    else:
                        _delayed_rows(weights, indices, indptr, delays, history, scratch, (q - 1) * n_out, lo, hi,
                                      n_out, nnz, tt)  # fmt: skip
            for c in range(ti.select(nt > 1, n_out, 0)):
                _add_blocks(out, scratch, nt, n_out, c)


# ----------------------------------------------------------------------------- delay-sorted


@ti.real_func
def _sorted_row(
    weights: ti.types.ndarray(ndim=1),
    cols: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    target: ti.types.ndarray(ndim=1),
    off: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n_out: ti.i32,
    v: ti.f64,
):
    """``target[off + cols[j]] += v w[perm[j]]`` over the delay segment ``[a, b)`` of one row."""
    s = ti.cast(v, target.get_type().element_type)
    for j in range(a, b):
        k = cols[j]
        if k >= 0 and k < n_out:
            q = off + ti.cast(k, ti.i32)
            target[q] = target[q] + weights[ti.cast(perm[j], ti.i32)] * s


@ti.func
def _segment(dptr: ti.template(), i, d, m, nnz):
    """Synapses ``[a, b)`` of row ``i`` with delay ``d`` in the delay index (delay-major: the
    segments of one delay lie in row order), clamped into ``[0, nnz]``."""
    q = ti.cast(d, ti.i64) * m + i
    a = ti.cast(ti.min(ti.max(dptr[q], 0), nnz), ti.i32)
    b = ti.cast(ti.min(ti.max(dptr[q + 1], 0), nnz), ti.i32)
    return a, ti.max(a, b)


@ti.func
def _sorted_event(weights: ti.template(), dptr: ti.template(), perm: ti.template(), cols: ti.template(),
                  wsort: ti.template(), history: ti.template(), target: ti.template(), off, n_out, nnz, s, r, d):  # fmt: skip
    """The synapses of row ``r`` with delay ``d`` deliver the event ``history[s, r]`` (if nonzero)."""
    v = history[s, r]
    if _nonzero(history, v):
        a, b = _segment(dptr, r, d, history.shape[1], nnz)
        if b > a:
            x = ti.cast(1.0, ti.f64)
            if ti.static(not is_bool(history)):
                x = ti.cast(v, ti.f64)
            if ti.static(ndim(weights) == 0):
                _scatter_row_homo(cols, target, off, a, b, n_out, ti.cast(weights[None], ti.f64) * x)
            elif wsort.shape[0] >= b:  # the weights in the index's order
                _scatter_row(wsort, cols, target, off, a, b, n_out, x)
            else:
                _sorted_row(weights, cols, perm, target, off, a, b, n_out, x)


@ti.func
def _sorted_rows(weights: ti.template(), dptr: ti.template(), perm: ti.template(), cols: ti.template(),
                 wsort: ti.template(), history: ti.template(), target: ti.template(), off, lo, hi, n_out, nnz, tm):  # fmt: skip
    """The rows ``[lo, hi)`` of one thread slot: each slot ``s`` of the history is scanned
    ``EVENT_BLOCK`` rows at a time, and an event of row ``i`` delivers the synapses of ``i``
    whose delay reads slot ``s`` at this step.

    A full block becomes a bit mask of its events (:func:`_block_mask`) whose set bits are
    visited in order: a branch per event instead of a compare-and-branch per row, which
    at a few percent of events mispredicted about once per event."""
    D = history.shape[0]
    for s in range(D):
        d = tm - s  # the delay whose synapses read slot s now: (t - s) mod D
        if d < 0:
            d += D
        i = lo
        while i < hi:
            e = ti.min(i + EVENT_BLOCK, hi)
            if e - i == EVENT_BLOCK:
                m = _block_mask(history, s, i)
                while m != 0:
                    k, m2 = _pop_lowest(m)
                    m = m2
                    _sorted_event(
                        weights, dptr, perm, cols, wsort, history, target, off, n_out, nnz, s, i + k, d
                    )
            else:
                for r in range(i, e):
                    _sorted_event(weights, dptr, perm, cols, wsort, history, target, off, n_out, nnz, s, r, d)
            i = e


@ti.kernel
def delayed_sorted_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    history: ti.types.ndarray(ndim=2),
    t: ti.types.ndarray(ndim=0),
    dptr: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    cols: ti.types.ndarray(ndim=1),
    wsort: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``delayed_kernel`` through the delay index (``dptr``, ``perm``, ``cols``: the synapses of
    each row grouped by delay): an event in slot ``s`` of row ``i`` visits only the synapses
    whose delay makes them read slot ``s`` at step ``t``, so the work is the synapses delivered
    now, plus the ``D x m`` reads of ``history``. ``wsort`` (empty, or ``weights[perm]``: the
    weights in the index's order, contiguous per segment) spares the indirect weight reads."""
    nnz = ti.min(perm.shape[0], cols.shape[0])
    if ti.static(ndim(weights) == 1):
        nnz = ti.min(nnz, weights.shape[0])
    n_out = out.shape[0]
    D = history.shape[0]
    n_rows = ti.min(indptr.shape[0] - 1, history.shape[1])
    if ti.cast(dptr.shape[0], ti.i64) < ti.cast(D, ti.i64) * history.shape[1] + 1:
        n_rows = 0  # not an index of this history (internal arrays: never the case)
    tm = 0
    if D > 0:
        tm = _slot(t[None], 0, D)
    if D > 0:
        if ti.static(on_gpu()):
            for i in range(n_rows):
                for s in range(D):
                    v = history[s, i]
                    if _nonzero(history, v):
                        d = tm - s
                        if d < 0:
                            d += D
                        a, b = _segment(dptr, i, d, history.shape[1], nnz)
                        for j in range(a, b):
                            k = cols[j]
                            if _valid(k, n_out):
                                wj = ti.cast(0, out.get_type().element_type)
                                if ti.static(ndim(weights) == 0):
                                    wj = weights[None]
                                else:
                                    wj = weights[ti.cast(perm[j], ti.i32)]
                                if ti.static(not is_bool(history)):
                                    wj = wj * ti.cast(v, out.get_type().element_type)
                                ti.atomic_add(out[ti.cast(k, ti.i32)], wj)
        else:
            nt = 1
            if n_out > 0:
                nt = scratch.shape[0] // n_out + 1
            for s in range(nt * CHUNK):
                if s % CHUNK == 0:
                    q = s // CHUNK
                    lo, hi = _slot_rows(indptr, n_rows, nnz, q, nt)
                    if q == 0:
                        _sorted_rows(
                            weights, dptr, perm, cols, wsort, history, out, 0, lo, hi, n_out, nnz, tm
                        )
                    else:
                        _sorted_rows(weights, dptr, perm, cols, wsort, history, scratch, (q - 1) * n_out, lo, hi,
                                     n_out, nnz, tm)  # fmt: skip
            for c in range(ti.select(nt > 1, n_out, 0)):
                _add_blocks(out, scratch, nt, n_out, c)


@ti.kernel
def delayed_sddmm_kernel(
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    history: ti.types.ndarray(ndim=2),
    t: ti.types.ndarray(ndim=0),
    ct: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = ct[c_j] * history[(t - d_j) mod D, row_j]`` (0 for an invalid synapse)."""
    nnz = ti.min(ti.min(indices.shape[0], delays.shape[0]), out.shape[0])
    n_rows = ti.min(indptr.shape[0] - 1, history.shape[1])
    tt = _slot(t[None], 0, ti.max(history.shape[0], 1))  # t mod D
    for i in range(ti.select(history.shape[0] > 0, n_rows, 0)):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            r = ti.cast(0, out.get_type().element_type)
            if _valid(k, ct.shape[0]):
                v = history[_slot_of(tt, delays[j], history.shape[0]), i]
                r = ti.cast(ct[ti.cast(k, ti.i32)], out.get_type().element_type) * ti.cast(
                    v, out.get_type().element_type
                )
            out[j] = r


@ti.kernel
def delayed_t_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    ct: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=2),
):
    """``out[(t - d_j) mod D, row_j] += w_j ct[c_j]``: the transpose in ``history`` (``out`` is ``(D, m)``)."""
    nnz = ti.min(indices.shape[0], delays.shape[0])
    n_rows = ti.min(indptr.shape[0] - 1, out.shape[1])
    tt = _slot(t[None], 0, ti.max(out.shape[0], 1))  # t mod D
    for i in range(ti.select(out.shape[0] > 0, n_rows, 0)):
        a, b = _bounds(indptr, i, nnz)
        for j in range(a, b):
            k = indices[j]
            if _valid(k, ct.shape[0]):
                wj = ti.cast(0, out.get_type().element_type)
                if ti.static(ndim(weights) == 0):
                    wj = ti.cast(weights[None], out.get_type().element_type)
                else:
                    wj = ti.cast(weights[j], out.get_type().element_type)
                s = _slot_of(tt, delays[j], out.shape[0])
                out[s, i] = out[s, i] + wj * ti.cast(ct[ti.cast(k, ti.i32)], out.get_type().element_type)
