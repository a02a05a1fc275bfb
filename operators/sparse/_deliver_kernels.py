"""Taichi kernels of the push form of synaptic delays (``csr_delay_deliver``) and its transposes.

``ring`` (shape ``(L, n)``) holds the input still to arrive at each of the next ``L`` steps;
an event of row ``i`` at step ``t`` adds ``w_j`` (times a float event) into
``ring[(t + d_j) mod L, c_j]`` for each of its synapses ``j`` (column ``c_j``, delay ``d_j``).

- ``deliver_kernel``: the delivery, into ``out``, which starts with ``ring``'s values (the
  Operator's ``aliases``): only the synapses of rows with an event are visited. Synapses
  with a column outside ``[0, n)`` or a delay outside ``[0, L)`` (possible only where values
  were not checked, under ``jax.jit``) are skipped.
- ``deliver_sddmm_kernel`` (weight gradient): ``g_j = ct[(t + d_j) mod L, c_j] e_{row_j}``.
- ``deliver_t_kernel`` (event gradient): ``g_i = sum_{j in row i} w_j ct[(t + d_j) mod L, c_j]``.

Rows write overlapping cells of ``out``: GPUs add with atomics; the CPU delivers on one
thread with plain adds. Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import is_bool, ndim, on_gpu
from ._csr_kernels import EVENT_BLOCK, _block_active, _bounds, _nonzero, _valid
from ._plasticity_kernels import _scale


@ti.func
def _start(t, L):
    """``t mod L`` in ``[0, L)`` (``L > 0``), for any integer ``t``."""
    r = ti.cast(t, ti.i64) % ti.cast(L, ti.i64)
    if r < 0:
        r += ti.cast(L, ti.i64)
    return ti.cast(r, ti.i32)


@ti.func
def _weight(weights: ti.template(), j, dt: ti.template()):
    w = ti.cast(0, dt)
    if ti.static(ndim(weights) == 0):
        w = ti.cast(weights[None], dt)
    else:
        w = ti.cast(weights[j], dt)
    return w


@ti.func
def _deliver_row(weights: ti.template(), indices: ti.template(), delays: ti.template(), out: ti.template(),
                 sc, a, b, t0, L, n, atomic: ti.template()):  # fmt: skip
    """A row's synapses ``[a, b)``: ``out[(t0 + d_j) mod L, c_j] += w_j sc``."""
    for j in range(a, b):
        c = indices[j]
        d = delays[j]
        if _valid(c, n) and _valid(d, L):
            s = t0 + ti.cast(d, ti.i32)
            if s >= L:
                s -= L
            v = _weight(weights, j, out.get_type().element_type) * sc
            q = ti.cast(c, ti.i32)
            if ti.static(atomic):
                ti.atomic_add(out[s, q], v)
            else:
                out[s, q] = out[s, q] + v


@ti.kernel
def deliver_kernel(
    ring: ti.types.ndarray(ndim=2),
    events: ti.types.ndarray(ndim=1),
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=2),
):
    """``out[(t + d_j) mod L, c_j] += w_j e_{row_j}`` over the synapses of rows with an event.

    CPU: one thread with plain read-modify-writes (a float atomic add is a compare-and-swap
    loop; event-driven work is small), the events scanned 64 at a time as in the CSR
    scatter. GPU: one thread per row, atomic adds."""
    L = out.shape[0]
    n = out.shape[1]
    nnz = ti.min(indices.shape[0], delays.shape[0])
    m = ti.min(events.shape[0], indptr.shape[0] - 1)
    if L > 0:
        t0 = _start(t[None], L)
        if ti.static(on_gpu()):
            for i in range(m):
                e = events[i]
                if _nonzero(events, e):
                    a, b = _bounds(indptr, i, nnz)
                    sc = _scale(events, e, out.get_type().element_type)
                    _deliver_row(weights, indices, delays, out, sc, a, b, t0, L, n, True)
        else:
            for _ in range(1):
                i = 0
                while i < m:
                    k = ti.min(i + EVENT_BLOCK, m)
                    active = True
                    if k - i == EVENT_BLOCK:
                        active = _block_active(events, 0, i)
                    if active:
                        for r in range(i, k):
                            e = events[r]
                            if _nonzero(events, e):
                                a, b = _bounds(indptr, r, nnz)
                                sc = _scale(events, e, out.get_type().element_type)
                                _deliver_row(weights, indices, delays, out, sc, a, b, t0, L, n, False)
                    i = k


@ti.func
def _deliver_segment(weights: ti.template(), perm: ti.template(), cols: ti.template(), out: ti.template(),
                     sc, a, b, s, n):  # fmt: skip
    """Synapses ``[a, b)`` of the row-major index, all of one delay, their weights read through
    ``perm`` (weights that may change): ``out[s, cols[q]] += weights[perm[q]] sc``."""
    for q in range(a, b):
        c = cols[q]
        if _valid(c, n):
            cc = ti.cast(c, ti.i32)
            out[s, cc] = out[s, cc] + ti.cast(weights[perm[q]], out.get_type().element_type) * sc


@ti.real_func
def _deliver_run(
    wsort: ti.types.ndarray(ndim=1),
    cols: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=2),
    s: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n: ti.i32,
    scale: ti.f64,
):
    """``out[s, cols[q]] += wsort[q] scale`` over ``[a, b)``: :func:`_deliver_segment` with the
    weights already in index order, as a real function (the pointers arrive in registers; inlined,
    every store reloads them, see ``_csr_kernels._scatter_row``)."""
    sc = ti.cast(scale, out.get_type().element_type)
    for q in range(a, b):
        c = cols[q]
        if c >= 0 and c < n:
            cc = ti.cast(c, ti.i32)
            out[s, cc] = out[s, cc] + ti.cast(wsort[q], out.get_type().element_type) * sc


@ti.real_func
def _deliver_run_homo(
    cols: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=2),
    s: ti.i32,
    a: ti.i32,
    b: ti.i32,
    n: ti.i32,
    value: ti.f64,
):
    """:func:`_deliver_run` with one weight for every synapse (``value`` = weight x event)."""
    v = ti.cast(value, out.get_type().element_type)
    for q in range(a, b):
        c = cols[q]
        if c >= 0 and c < n:
            cc = ti.cast(c, ti.i32)
            out[s, cc] = out[s, cc] + v


@ti.kernel
def deliver_sorted_kernel(
    ring: ti.types.ndarray(ndim=2),
    events: ti.types.ndarray(ndim=1),
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    rptr: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    cols: ti.types.ndarray(ndim=1),
    wsort: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=2),
):
    """``deliver_kernel`` through the row-major delay index (``_delayed._delay_index(...,
    row_major=True)``): row ``i``'s synapses of delay ``k`` are ``rptr[i L + k] .. rptr[i L + k + 1]``
    (columns ``cols``, positions ``perm``, weights ``wsort`` in that order when not empty),
    so an event reads one run of synapses and writes each delay's into one row of the ring,
    with no delay read per synapse. CPU only (one thread, plain adds)."""
    L = out.shape[0]
    n = out.shape[1]
    m = ti.min(events.shape[0], (rptr.shape[0] - 1) // ti.max(L, 1))
    nq = ti.min(perm.shape[0], cols.shape[0])
    for _ in range(1):
        if L > 0:
            t0 = _start(t[None], L)
            i = 0
            while i < m:
                kk = ti.min(i + EVENT_BLOCK, m)
                active = True
                if kk - i == EVENT_BLOCK:
                    active = _block_active(events, 0, i)
                if active:
                    for r in range(i, kk):
                        e = events[r]
                        if _nonzero(events, e):
                            sc = _scale(events, e, out.get_type().element_type)
                            for k in range(L):
                                a = ti.cast(ti.min(ti.max(rptr[r * L + k], 0), nq), ti.i32)
                                b = ti.cast(ti.min(ti.max(rptr[r * L + k + 1], 0), nq), ti.i32)
                                s = t0 + k
                                if s >= L:
                                    s -= L
                                if a < b:
                                    if ti.static(ndim(weights) == 0):
                                        _deliver_run_homo(cols, out, s, a, b, n,
                                                          ti.cast(weights[None], ti.f64) * ti.cast(sc, ti.f64))  # fmt: skip
                                    elif wsort.shape[0] > 0:
                                        _deliver_run(wsort, cols, out, s, a, b, n, ti.cast(sc, ti.f64))
                                    else:
                                        _deliver_segment(weights, perm, cols, out, sc, a, b, s, n)
                i = kk


@ti.kernel
def deliver_sddmm_kernel(
    events: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    ct: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=1),
):
    """``out[j] = ct[(t + d_j) mod L, c_j] e_{row_j}`` (the weight gradient; 0 where skipped)."""
    L = ct.shape[0]
    n = ct.shape[1]
    nnz = ti.min(ti.min(indices.shape[0], delays.shape[0]), out.shape[0])
    if L > 0:
        t0 = _start(t[None], L)
        for i in range(ti.min(events.shape[0], indptr.shape[0] - 1)):
            e = events[i]
            if _nonzero(events, e):
                a, b = _bounds(indptr, i, nnz)
                sc = ti.cast(1, out.get_type().element_type)
                if ti.static(not is_bool(events)):
                    sc = ti.cast(e, out.get_type().element_type)
                for j in range(a, b):
                    c = indices[j]
                    d = delays[j]
                    if _valid(c, n) and _valid(d, L):
                        s = t0 + ti.cast(d, ti.i32)
                        if s >= L:
                            s -= L
                        out[j] = ti.cast(ct[s, ti.cast(c, ti.i32)], out.get_type().element_type) * sc


@ti.kernel
def deliver_t_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    ct: ti.types.ndarray(ndim=2),
    out: ti.types.ndarray(ndim=1),
):
    """``out[i] = sum_{j in row i} w_j ct[(t + d_j) mod L, c_j]`` (the event gradient)."""
    L = ct.shape[0]
    n = ct.shape[1]
    nnz = ti.min(indices.shape[0], delays.shape[0])
    if L > 0:
        t0 = _start(t[None], L)
        for i in range(ti.min(out.shape[0], indptr.shape[0] - 1)):
            a, b = _bounds(indptr, i, nnz)
            acc = ti.cast(0, out.get_type().element_type)
            for j in range(a, b):
                c = indices[j]
                d = delays[j]
                if _valid(c, n) and _valid(d, L):
                    s = t0 + ti.cast(d, ti.i32)
                    if s >= L:
                        s -= L
                    acc += _weight(weights, j, out.get_type().element_type) * ti.cast(
                        ct[s, ti.cast(c, ti.i32)], out.get_type().element_type
                    )
            out[i] = acc
