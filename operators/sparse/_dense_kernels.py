"""Taichi kernels of the dense event products and of the dense plasticity updates.

``weights`` is a dense ``(m, n)`` matrix ``W`` (row-major). Event products read only the
columns (``W @ e``) or rows (``e @ W``) of the active events: a first loop (one thread)
lists the nonzero events in ``scratch`` (their indices, and their number in the last
element), the next loops work from that list.

- ``W @ e`` (``transpose=False``): rows in parallel, each the sum of its active columns.
- ``e @ W`` (``transpose=True``): the output columns are cut into one range per thread
  slot (``_common.CHUNK``), each range into tiles of ``TILE`` columns; every active row
  is added to a tile by a real function (its loop vectorises: the pointers arrive in
  registers, see ``_csr_kernels._scatter_row``). No atomics, no private outputs.

Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import CHUNK, is_bool, num_threads, on_gpu
from ._csr_kernels import EVENT_BLOCK, _block_mask, _nonzero, _pop_lowest

TILE = 1024  # output columns of e @ W kept in L1 while the active rows are added


@ti.func
def _value(x: ti.template(), i, dt: ti.template()):
    r = ti.cast(0, dt)
    if ti.static(is_bool(x)):
        r = ti.cast(x[i] != 0, dt)
    else:
        r = ti.cast(x[i], dt)
    return r


@ti.real_func
def _axpy_row(
    weights: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=1),
    i: ti.i32,
    j0: ti.i32,
    j1: ti.i32,
    scale: ti.f64,
):
    """``out[j] += scale * weights[i, j]`` for ``j`` in ``[j0, j1)``."""
    s = ti.cast(scale, weights.get_type().element_type)
    for j in range(j0, j1):
        out[j] = out[j] + s * weights[i, j]


@ti.kernel
def densemv_kernel(
    weights: ti.types.ndarray(ndim=2),
    events: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    active: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = W @ events`` (``transpose=False``) or ``events @ W`` (``True``), reading only the
    columns / rows of nonzero events. ``active`` (int32, ``len(events) + 1``) is scratch."""
    ne = ti.min(events.shape[0], active.shape[0] - 1)
    for _ in range(1):  # one thread lists the active events, EVENT_BLOCK at a time
        na = 0
        j0 = 0
        while j0 < ne:
            j1 = ti.min(j0 + EVENT_BLOCK, ne)
            rows = True  # the events of [j0, j1) still to be tested one by one
            if j1 - j0 == EVENT_BLOCK:  # a whole block only: the tail is not read past its end
                m = _block_mask(events, 0, j0)
                if ti.static(on_gpu()):  # an empty block skipped, rows tested (no bit scan on GPUs)
                    rows = m != 0
                else:
                    rows = False
                    while m != 0:
                        b, m2 = _pop_lowest(m)
                        m = m2
                        active[na] = j0 + b
                        na += 1
            if rows:
                for j in range(j0, j1):
                    if _nonzero(events, events[j]):
                        active[na] = j
                        na += 1
            j0 = j1
        active[active.shape[0] - 1] = na
    if ti.static(not transpose):
        n_rows = ti.min(out.shape[0], weights.shape[0])
        n_cols = weights.shape[1]
        for i in range(n_rows):
            na = active[active.shape[0] - 1]
            acc = ti.cast(0, weights.get_type().element_type)
            for t in range(na):
                j = active[t]
                if j < n_cols:
                    if ti.static(is_bool(events)):
                        acc += weights[i, j]
                    else:
                        acc += weights[i, j] * ti.cast(events[j], weights.get_type().element_type)
            out[i] = acc
    else:
        n_cols = ti.min(out.shape[0], weights.shape[1])
        n_rows = weights.shape[0]
        nt = ti.static(num_threads())
        for s in range(nt * CHUNK):
            if s % CHUNK == 0:
                t = s // CHUNK
                lo = t * n_cols // nt
                hi = (t + 1) * n_cols // nt
                na = active[active.shape[0] - 1]
                j0 = lo
                while j0 < hi:
                    j1 = ti.min(j0 + TILE, hi)
                    for q in range(na):
                        i = active[q]
                        if i < n_rows:
                            _axpy_row(
                                weights,
                                out,
                                i,
                                j0,
                                j1,
                                ti.cast(_value(events, i, weights.get_type().element_type), ti.f64),
                            )
                    j0 = j1


@ti.kernel
def densemm_kernel(
    weights: ti.types.ndarray(ndim=2),
    events: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=2),
    active: ti.types.ndarray(ndim=1),
    transpose: ti.template(),
):
    """``out = W @ E`` or ``W.T @ E`` for a batch of event vectors (the columns of ``E``), reading
    only the rows of ``W`` (or columns) whose row of ``E`` has a nonzero entry."""
    ne = ti.min(events.shape[0], active.shape[0] - 1)
    K = events.shape[1]
    for _ in range(1):
        na = 0
        for j in range(ne):
            nz = False
            for c in range(K):
                if _nonzero(events, events[j, c]):
                    nz = True
            if nz:
                active[na] = j
                na += 1
        active[active.shape[0] - 1] = na
    if ti.static(not transpose):
        n_cols = weights.shape[1]
        for i, c in ti.ndrange(ti.min(out.shape[0], weights.shape[0]), ti.min(K, out.shape[1])):
            na = active[active.shape[0] - 1]
            acc = ti.cast(0, weights.get_type().element_type)
            for t in range(na):
                j = active[t]
                if j < n_cols:
                    acc += weights[i, j] * _value2(events, j, c, weights.get_type().element_type)
            out[i, c] = acc
    else:
        n_rows = weights.shape[0]
        for j, c in ti.ndrange(ti.min(out.shape[0], weights.shape[1]), ti.min(K, out.shape[1])):
            na = active[active.shape[0] - 1]
            acc = ti.cast(0, weights.get_type().element_type)
            for t in range(na):
                i = active[t]
                if i < n_rows:
                    acc += weights[i, j] * _value2(events, i, c, weights.get_type().element_type)
            out[j, c] = acc


@ti.func
def _value2(x: ti.template(), i, c, dt: ti.template()):
    r = ti.cast(0, dt)
    if ti.static(is_bool(x)):
        r = ti.cast(x[i, c] != 0, dt)
    else:
        r = ti.cast(x[i, c], dt)
    return r
