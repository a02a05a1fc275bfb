"""Synaptic delays in push form: each event adds its synapses' weights into an arrival ring.

``ring`` (shape ``(L, n)``) holds the input still to arrive at each of the next ``L``
steps, slot ``s`` for the steps ``t`` with ``t mod L = s``. At step ``t`` the events of the
presynaptic neurons are delivered into the slots their synapses' delays point to:

    ``ring_new[(t + d_j) mod L, c_j] += w_j e_{row_j}``,

and a simulation reads (and clears) slot ``t mod L`` as the input of step ``t``. This is the
same simulation as :func:`event_csrmv_delayed` (which reads a history of past events
instead), but each event costs its own synapses once, when it happens, and nothing else
is read: brainevent's ``csr_delay_deliver`` is this form.

The result starts from ``ring`` (``Operator(aliases={"out": "ring"})``): under ``jax.jit``
with the ring a ``lax.scan`` carry (or a donated argument) the delivery is made in the
ring's own buffer; NumPy, torch and CuPy calls copy the ring once.

Affine in ``ring`` (identity), linear in ``weights`` and in float ``events``; the two
transposes are Operators of their own (``csr_delay_deliver_sddmm``: the weight gradient;
``csr_delay_deliver_t``: the event gradient).
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype, UndefinedPrimal
from . import _deliver_kernels as K
from . import _once, _policy, _rules, _validate, _xp
from ._common import IEEE
from ._delayed import int_scalar

__all__ = ["csr_delay_deliver"]

_STRUCT = ("indices", "indptr", "delays", "t")


def _outs(ring, events, weights, indices, indptr, delays, t, n, cells, *, shape):
    return ShapeDtype(ring.shape, ring.dtype)


def _scratch(ring, events, weights, indices, indptr, delays, t, n, cells, *, serial, shape):
    # the CPU kernel's chunk of ring cells (_deliver_kernels._deliver_run_w)
    return ShapeDtype((K.DELIVER_CHUNK,), "int32")


def _zeros_like(x):
    return _xp.full(tuple(x.shape), 0, _xp.dtype_of(x).name, x)


def _jvp(primals, tangents, *, shape):
    ring, e, w, idx, ptr, d, t, n, cells = primals
    tr, te, tw = tangents[:3]
    out = tr
    for ev, wt in ((e, tw), (te, w)):
        if ev is None or wt is None:
            continue
        part = _DELIVER(_zeros_like(ring), ev, wt, idx, ptr, d, t, n, cells, shape=shape)
        out = part if out is None else out + part
    return out


def _transpose(cts, primals, *, shape):
    (ct,) = cts
    ring, e, w, idx, ptr, d, t, n, cells = primals
    res = [None] * 9
    if isinstance(ring, UndefinedPrimal):
        res[0] = ct
    ct2 = _xp.reshape(ct, (ct.shape[0] // shape[1], shape[1])) if shape[1] else None  # the ring (L, n)
    if isinstance(w, UndefinedPrimal):  # g_j = ct[(t + d_j) mod L, c_j] e_row(j)
        if ct2 is None:
            g = _xp.full((idx.shape[0],), 0, _xp.dtype_of(ct).name, ct)
        else:
            g = _SDDMM(e, idx, ptr, d, t, ct2, shape=shape)
        res[2] = _xp.astype(g.sum().reshape(()) if len(w.shape) == 0 else g, w.dtype)
    if isinstance(e, UndefinedPrimal):  # g_i = sum_{j in row i} w_j ct[(t + d_j) mod L, c_j]
        if ct2 is None:
            g = _xp.full((shape[0],), 0, _xp.dtype_of(ct).name, ct)
        else:
            g = _T(w, idx, ptr, d, t, ct2, shape=shape)
        res[1] = _xp.astype(g, e.dtype)
    return tuple(res)


def _sddmm_transpose(cts, primals, *, shape):
    (g,) = cts
    e, idx, ptr, d, t, ct = primals
    res = [None] * 6
    if isinstance(ct, UndefinedPrimal):
        res[5] = _deliver_2d(
            _xp.full(tuple(ct.shape), 0, _xp.dtype_of(g).name, g), e, g, idx, ptr, d, t, shape
        )
    if isinstance(e, UndefinedPrimal):
        res[0] = _xp.astype(_T(g, idx, ptr, d, t, ct, shape=shape), e.dtype)
    return tuple(res)


def _t_transpose(cts, primals, *, shape):
    (g,) = cts
    w, idx, ptr, d, t, ct = primals
    res = [None] * 6
    if isinstance(ct, UndefinedPrimal):
        res[5] = _deliver_2d(
            _xp.full(tuple(ct.shape), 0, _xp.dtype_of(w).name, w), g, w, idx, ptr, d, t, shape
        )
    if isinstance(w, UndefinedPrimal):
        gw = _SDDMM(g, idx, ptr, d, t, ct, shape=shape)
        res[0] = _xp.astype(gw.sum().reshape(()) if len(w.shape) == 0 else gw, w.dtype)
    return tuple(res)


# ``jax.jit`` of a scan that carries the ring: XLA passes the ring's buffer as the output
# (no copy) where nothing reads the old ring after the call, as for its own in-place ops.
# The kernel sees the ring flattened, ``(L * n,)``, and ``n``: a cell of a flat array is one
# address, and the CPU kernel's two passes over a row's synapses run 0.9-1.6x faster than
# through a 2-D index or the delay index (``python benchmarks/bench_sparse_families.py
# --families delayed``, docs/performance.md).
_DELIVER = Operator(
    "csr_delay_deliver",
    kernel=K.deliver_kernel,
    outs=_outs,
    scratch=_scratch,
    aliases={"out": "ring"},
    jvp=_jvp,
    transpose=_transpose,
    linear=("ring", "events", "weights"),
    batch=lambda args, axes, **st: _rules.loop_batch(_DELIVER, args, axes, st),
    nondiff=_STRUCT + ("n", "cells"),
    policy=lambda *inputs, **static: "serial",  # the CPU kernel delivers on one thread
    compile_options=IEEE,
)


def _cells(indices, delays, L, n):
    """``delays * n + indices`` (int32), each synapse's cell of the flattened ring at ``t = 0``:
    the kernel's cell at step ``t`` is then one add and one wrap (``(cells + (t mod L) n) mod
    L n``), with no column or delay read. Cached per version of the two arrays (``_once``;
    NumPy for JAX arrays: constants of the computation). None where they are traced or may
    change (the kernel then computes each cell, checking it), off the CPU, or where ``L n``
    passes int32. Only called after the range checks (columns in ``[0, n)``, delays in
    ``[0, L)``): every cell is in ``[0, L n)``."""
    arrays = (indices, delays)

    def build():
        hi, hd = (np.asarray(_xp.host(a)).astype(np.int64) for a in arrays)
        c = (hd * n + hi).astype(np.int32)
        return c if _xp.fw_of(indices) in ("numpy", "jax") else _xp.from_numpy(c, indices)

    if L * n >= 2**31 or not _policy._cpu():
        return None
    return _once.cached("deliver_cells", arrays, (L, n), build, lambda: None)


def _deliver_2d(ring, events, weights, indices, indptr, delays, t, shape, cells=None):
    """:data:`_DELIVER` on a ring ``(L, n)``: flattened in, reshaped out (views, no copies)."""
    L, n = ring.shape
    if cells is None:
        cells = _xp.full((0,), 0, "int32", indices)
    flat = _xp.reshape(ring, (L * n,))
    out = _DELIVER(flat, events, weights, indices, indptr, delays, t, int(n), cells, shape=shape)
    return _xp.reshape(out, (L, n))


_SDDMM = Operator(
    "csr_delay_deliver_sddmm",
    kernel=K.deliver_sddmm_kernel,
    outs=lambda events, indices, indptr, delays, t, ct, *, shape: ShapeDtype((indices.shape[0],), ct.dtype),
    transpose=_sddmm_transpose,
    linear=("events", "ct"),
    nondiff=_STRUCT,
    policy=_policy.gather_policy(lambda e, i, p, d, t, c, shape: i.shape[0]),
    compile_options=IEEE,
)
_T = Operator(
    "csr_delay_deliver_t",
    kernel=K.deliver_t_kernel,
    outs=lambda weights, indices, indptr, delays, t, ct, *, shape: ShapeDtype((shape[0],), ct.dtype),
    transpose=_t_transpose,
    linear=("weights", "ct"),
    nondiff=_STRUCT,
    policy=_policy.gather_policy(lambda w, i, p, d, t, c, shape: i.shape[0]),
    compile_options=IEEE,
)


def csr_delay_deliver(ring, events, weights, indices, indptr, delays, t, *, shape):
    r"""Deliver the events of step ``t`` into an arrival ring, each synapse ``delay`` steps ahead.

    .. math::

        R'_{(t + d_j) \bmod L,\ c_j} = R_{(t + d_j) \bmod L,\ c_j} + w_j\, e_{\mathrm{row}(j)}

    for the ``(m, n) = shape`` CSR matrix (``indices``, ``indptr``, ``weights``; rows are
    presynaptic neurons) with one delay ``d_j`` per synapse and ``ring`` (shape ``(L, n)``)
    the input still to arrive at the next ``L`` steps. A simulation step reads slot
    ``t mod L`` after the delivery (delay 0 arrives at once) and clears it for step
    ``t + L``. Only the synapses of the neurons with an event are visited (the push form of
    :func:`event_csrmv_delayed`, which reads a history of past events instead; brainevent's
    ``csr_delay_deliver``).

    The result is a new array (``ring`` is not changed): NumPy, torch and CuPy calls copy
    the ring once; under ``jax.jit`` the delivery is made in the ring's own buffer where
    XLA may reuse it (the ring carried by ``lax.scan``, a donated argument).

    Parameters
    ----------
    ring : 2-D array (L, n), float32 or float64
        Input to arrive in each of the next ``L`` steps (slot ``s`` for ``t mod L = s``).
    events : 1-D array (m,), bool or float
        The presynaptic events of step ``t``; float events scale their synapses.
    weights, indices, indptr, shape
        The CSR matrix, as in :func:`event_csrmv`; ``weights`` of the dtype of ``ring``.
    delays : array of shape (nnz,), integer
        Delay of each synapse in steps, in ``[0, L)``.
    t : int or 0-d integer array
        The current step (may be traced).

    Returns
    -------
    array
        The new ring, shape ``(L, n)``, the dtype of ``ring``.

    Raises
    ------
    TypeError
        Non-integer ``delays`` or ``t``; ``ring`` not float or of another dtype than
        ``weights``; ``events`` neither bool nor float; as :func:`event_csrmv`.
    ValueError
        ``ring`` not ``(L, shape[1])`` with ``L >= 1``; ``events`` not of length ``shape[0]``;
        ``delays`` not of length ``nnz``; as :func:`event_csrmv`.
    IndexError
        (Concrete values) a delay outside ``[0, L)``. Under ``jax.jit`` such synapses are
        skipped (the kernel never writes outside ``ring``).

    Notes
    -----
    Differentiable in ``ring`` (identity), ``weights`` and float ``events``. ``vmap`` runs one
    call per batch element (``lax.map``).

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csr_delay_deliver
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 1, 1]); w = np.array([1.0, 2.0, 3.0])
    >>> delays = np.array([0, 2, 1])                # synapse 1 arrives two steps late
    >>> ring = np.zeros((3, 2))
    >>> csr_delay_deliver(ring, np.array([True, False]), w, indices, indptr, delays, 1, shape=(2, 2))
    array([[0., 2.],
           [1., 0.],
           [0., 0.]])
    """
    func = "csr_delay_deliver"
    r = _validate.as_array(func, "ring", ring)
    rd = _validate._dtype(func, "ring", r)
    # a Python-number weight takes the ring's float dtype
    w, idx, ptr, m, n = _validate.csr(
        func, weights, indices, indptr, shape, like_dtype=rd if rd in _validate._FLOATS else None, like=r
    )
    wd = _xp.dtype_of(w)
    if rd not in _validate._FLOATS or rd is not wd:
        raise TypeError(
            f"{func}(): argument 'ring' must be float32 or float64 of the dtype of 'weights' ({wd.name}), "
            f"got dtype {rd.name}"
        )
    if len(r.shape) != 2 or r.shape[1] != n or r.shape[0] < 1:
        raise ValueError(
            f"{func}(): argument 'ring' must have shape (L, shape[1]) = (L, {n}) with L >= 1 slots, "
            f"got {tuple(r.shape)}"
        )
    L = int(r.shape[0])
    e = _validate.as_array(func, "events", events)
    ed = _validate._dtype(func, "events", e)
    if ed is not _validate._BOOL and ed not in _validate._FLOATS:
        raise TypeError(f"{func}(): argument 'events' must be bool, float32 or float64, got dtype {ed.name}")
    if tuple(e.shape) != (m,):
        raise ValueError(
            f"{func}(): argument 'events' must have shape (shape[0],) = ({m},), got {tuple(e.shape)}"
        )
    d = _validate.index_array(func, "delays", delays)
    if d.shape[0] != idx.shape[0]:
        raise ValueError(
            f"{func}(): argument 'delays' must have one delay per synapse, length nnz = {idx.shape[0]}, "
            f"got {d.shape[0]}"
        )
    _validate.index_range(func, "delays", d, L, "delay")
    tt = int_scalar(func, "t", t, like=r, period=L)
    return _deliver_2d(r, e, w, idx, ptr, d, tt, (m, n), _cells(idx, d, L, n))
