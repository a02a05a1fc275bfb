"""Taichi kernels of the push form of synaptic delays (``csr_delay_deliver``) and its transposes.

``ring`` (shape ``(L, n)``) holds the input still to arrive at each of the next ``L`` steps;
an event of row ``i`` at step ``t`` adds ``w_j`` (times a float event) into
``ring[(t + d_j) mod L, c_j]`` for each of its synapses ``j`` (column ``c_j``, delay ``d_j``).

- ``deliver_kernel``: the delivery, into ``out``, which starts with ``ring``'s values (the
  Operator's ``aliases``; both flattened to ``(L * n,)``, with ``n`` an argument): only the
  synapses of rows with an event are visited. Synapses with a column outside ``[0, n)`` or a
  delay outside ``[0, L)`` (possible only where values were not checked, under ``jax.jit``)
  are skipped.
- ``deliver_sddmm_kernel`` (weight gradient): ``g_j = ct[(t + d_j) mod L, c_j] e_{row_j}``.
- ``deliver_t_kernel`` (event gradient): ``g_i = sum_{j in row i} w_j ct[(t + d_j) mod L, c_j]``.

Rows write overlapping cells of ``out``: GPUs add with atomics; the CPU delivers on one
thread with plain adds. Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import is_bool, ndim, on_gpu
from ._csr_kernels import EVENT_BLOCK, _block_mask, _bounds, _nonzero, _pop_lowest, _valid
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


DELIVER_CHUNK = 256  # synapses whose ring cells one pass computes before the adds (a scratch buffer)


@ti.real_func
def _deliver_run_w(
    weights: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    buf: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    a: ti.i32,
    b: ti.i32,
    t0: ti.i32,
    L: ti.i32,
    n: ti.i32,
    scale: ti.f64,
):
    """``out[((t0 + d_j) mod L) n + c_j] += w_j scale`` over the synapses ``[a, b)``, in chunks:
    first each synapse's cell of the flat ring (``-1``: skipped), a loop LLVM vectorises, then
    the read-modify-writes with nothing else between them (brainevent's numba kernel does the
    same; the cells' loads no longer wait behind the stores). A real function: the pointers
    arrive in registers (inlined, every store reloads them, see ``_csr_kernels._scatter_row``)."""
    sc = ti.cast(scale, out.get_type().element_type)
    base = a
    while base < b:
        m = ti.min(DELIVER_CHUNK, b - base)
        for k in range(m):
            c = indices[base + k]
            d = delays[base + k]
            s = t0 + ti.cast(d, ti.i32)
            if s >= L:
                s -= L
            cell = s * n + ti.cast(c, ti.i32)
            if not (c >= 0 and c < n and d >= 0 and d < L):
                cell = -1
            buf[k] = cell
        for k in range(m):
            cell = buf[k]
            if cell >= 0:
                out[cell] = out[cell] + ti.cast(weights[base + k], out.get_type().element_type) * sc
        base += m


@ti.real_func
def _deliver_run_h(
    indices: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    buf: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    a: ti.i32,
    b: ti.i32,
    t0: ti.i32,
    L: ti.i32,
    n: ti.i32,
    value: ti.f64,
):
    """:func:`_deliver_run_w` with one weight for every synapse (``value`` = weight x event).

    The first pass is written out in both real functions on purpose: moved into a ``ti.func``
    that they call, Taichi 1.7's compiler segfaults (as a vectorised event-block test called from
    a real function did); one real function with a weight flag puts a branch in the adds."""
    v = ti.cast(value, out.get_type().element_type)
    base = a
    while base < b:
        m = ti.min(DELIVER_CHUNK, b - base)
        for k in range(m):
            c = indices[base + k]
            d = delays[base + k]
            s = t0 + ti.cast(d, ti.i32)
            if s >= L:
                s -= L
            cell = s * n + ti.cast(c, ti.i32)
            if not (c >= 0 and c < n and d >= 0 and d < L):
                cell = -1
            buf[k] = cell
        for k in range(m):
            cell = buf[k]
            if cell >= 0:
                out[cell] = out[cell] + v
        base += m


@ti.real_func
def _deliver_cells_w(
    weights: ti.types.ndarray(ndim=1),
    cells: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    a: ti.i32,
    b: ti.i32,
    t0n: ti.i32,
    LN: ti.i32,
    scale: ti.f64,
):
    """``out[(cells_j + t0 n) mod L n] += w_j scale`` over ``[a, b)``: ``cells`` (``d_j n + c_j``,
    cached for a structure that cannot change) makes a synapse's ring cell one add and one
    wrap, with no column or delay read (``_deliver._cells``)."""
    sc = ti.cast(scale, out.get_type().element_type)
    for j in range(a, b):
        cell = cells[j] + t0n
        if cell >= LN:
            cell -= LN
        if cell >= 0 and cell < LN:
            out[cell] = out[cell] + ti.cast(weights[j], out.get_type().element_type) * sc


@ti.real_func
def _deliver_cells_h(
    cells: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1), a: ti.i32, b: ti.i32, t0n: ti.i32, LN: ti.i32,
    value: ti.f64,
):  # fmt: skip
    """:func:`_deliver_cells_w` with one weight for every synapse (``value`` = weight x event)."""
    v = ti.cast(value, out.get_type().element_type)
    for j in range(a, b):
        cell = cells[j] + t0n
        if cell >= LN:
            cell -= LN
        if cell >= 0 and cell < LN:
            out[cell] = out[cell] + v


@ti.func
def _deliver_event(events: ti.template(), weights: ti.template(), indices: ti.template(), indptr: ti.template(),
                   delays: ti.template(), cells: ti.template(), out: ti.template(), buf: ti.template(), cached,
                   r, nnz, t0, L, n):  # fmt: skip
    """The synapses of row ``r`` deliver its event (if nonzero) into the ring (CPU, one thread)."""
    e = events[r]
    if _nonzero(events, e):
        a, b = _bounds(indptr, r, nnz)
        sc = ti.cast(_scale(events, e, out.get_type().element_type), ti.f64)
        if cached:
            if ti.static(ndim(weights) == 0):
                _deliver_cells_h(cells, out, a, b, t0 * n, L * n, ti.cast(weights[None], ti.f64) * sc)
            else:
                _deliver_cells_w(weights, cells, out, a, b, t0 * n, L * n, sc)
        elif ti.static(ndim(weights) == 0):
            _deliver_run_h(indices, delays, buf, out, a, b, t0, L, n, ti.cast(weights[None], ti.f64) * sc)
        else:
            _deliver_run_w(weights, indices, delays, buf, out, a, b, t0, L, n, sc)


@ti.kernel
def deliver_kernel(
    ring: ti.types.ndarray(ndim=1),
    events: ti.types.ndarray(ndim=1),
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    delays: ti.types.ndarray(ndim=1),
    t: ti.types.ndarray(ndim=0),
    n: ti.i32,
    cells: ti.types.ndarray(ndim=1),
    out: ti.types.ndarray(ndim=1),
    buf: ti.types.ndarray(ndim=1),
):
    """``out[((t + d_j) mod L) n + c_j] += w_j e_{row_j}`` over the synapses of rows with an
    event, ``out`` the ring ``(L, n)`` flattened (it starts as ``ring``'s copy, ``aliases``).

    CPU: one thread with plain read-modify-writes (a float atomic add is a compare-and-swap
    loop; event-driven work is small), the events scanned 64 at a time as in the CSR
    scatter, each active row's synapses through :func:`_deliver_run_w` (``buf``: its chunk of
    ring cells, ``DELIVER_CHUNK`` long), or, where ``cells`` holds one cell per synapse (a
    structure that cannot change), through :func:`_deliver_cells_w`. GPU: one thread per row,
    atomic adds (``buf`` and ``cells`` unused)."""
    L = out.shape[0] // ti.max(n, 1)
    nnz = ti.min(indices.shape[0], delays.shape[0])
    m = ti.min(events.shape[0], indptr.shape[0] - 1)
    if L > 0 and n > 0:
        t0 = _start(t[None], L)
        if ti.static(on_gpu()):
            for i in range(m):
                e = events[i]
                if _nonzero(events, e):
                    a, b = _bounds(indptr, i, nnz)
                    sc = _scale(events, e, out.get_type().element_type)
                    for j in range(a, b):
                        c = indices[j]
                        d = delays[j]
                        if _valid(c, n) and _valid(d, L):
                            s = t0 + ti.cast(d, ti.i32)
                            if s >= L:
                                s -= L
                            v = _weight(weights, j, out.get_type().element_type) * sc
                            ti.atomic_add(out[s * n + ti.cast(c, ti.i32)], v)
        else:
            cached = cells.shape[0] >= nnz
            for _ in range(1):
                i = 0
                while i < m:
                    k = ti.min(i + EVENT_BLOCK, m)
                    if k - i == EVENT_BLOCK:
                        mask = _block_mask(events, 0, i)
                        while mask != 0:
                            q, mask2 = _pop_lowest(mask)
                            mask = mask2
                            _deliver_event(events, weights, indices, indptr, delays, cells, out, buf, cached,
                                           i + q, nnz, t0, L, n)  # fmt: skip
                    else:
                        for r in range(i, k):
                            _deliver_event(events, weights, indices, indptr, delays, cells, out, buf, cached,
                                           r, nnz, t0, L, n)  # fmt: skip
                    i = k


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
