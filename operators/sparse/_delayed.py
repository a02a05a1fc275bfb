"""Synaptic delays: a CSR product whose synapses read the events of past steps.

``history`` (shape ``(D, m)``) is a ring buffer of the presynaptic events of the last ``D``
steps (a simulation writes the events of step ``t`` to ``history[t % D]``); synapse ``j``
(row ``i``, column ``c_j``, delay ``d_j`` steps, ``0 <= d_j < D``) delivers the event of
``d_j`` steps ago:

    ``out[c] = sum_{j: c_j = c} w_j * history[(t - d_j) mod D, row_j]``.

Linear in ``weights`` and in ``history``; the two transposes are kernels of their own
(``csr_delayed_sddmm``: the weight gradient; ``csr_delayed_t``: the history gradient), and
the three Operators transpose into each other, so that second derivatives work.
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype, UndefinedPrimal
from . import _delayed_kernels as K
from . import _index, _once, _policy, _rules, _validate, _xp
from ._common import IEEE

__all__ = ["event_csrmv_delayed"]


def _main_outs(weights, indices, indptr, delays, history, t, *, shape):
    if weights.dtype.kind != "f" or not (weights.ndim == 0 or weights.shape == indices.shape):
        raise ValueError(
            f"event_csrmv_delayed: 'weights' must have shape () or {indices.shape}, got {weights.shape}"
        )
    return ShapeDtype((shape[1],), weights.dtype)


def _main_transpose(cts, primals, *, shape):
    (ct,) = cts
    w, idx, ptr, d, hist, t = primals
    res = [None] * 6
    if isinstance(hist, UndefinedPrimal):  # G[s, i] = sum_{j in row i, slot s} w_j ct[c_j]
        res[4] = _xp.astype(_T(w, idx, ptr, d, t, ct, shape=shape, depth=hist.shape[0]), hist.dtype)
    if isinstance(w, UndefinedPrimal):  # g_j = ct[c_j] history[slot_j, row_j]
        g = _SDDMM(idx, ptr, d, hist, t, ct, shape=shape)
        if len(w.shape) == 0:
            g = g.sum().reshape(())
        res[0] = _xp.astype(g, w.dtype)
    return tuple(res)


def _sddmm_transpose(cts, primals, *, shape):
    (g,) = cts
    idx, ptr, d, hist, t, ct = primals
    res = [None] * 6
    if isinstance(hist, UndefinedPrimal):
        res[3] = _xp.astype(_T(g, idx, ptr, d, t, ct, shape=shape, depth=hist.shape[0]), hist.dtype)
    if isinstance(ct, UndefinedPrimal):
        res[5] = _xp.astype(_MAIN(g, idx, ptr, d, hist, t, shape=shape), ct.dtype)
    return tuple(res)


def _t_outs(weights, indices, indptr, delays, t, ct, *, shape, depth):
    return ShapeDtype((depth, shape[0]), ct.dtype)


def _t_transpose(cts, primals, *, shape, depth):
    (G,) = cts
    w, idx, ptr, d, t, ct = primals
    res = [None] * 6
    if isinstance(w, UndefinedPrimal):
        g = _SDDMM(idx, ptr, d, G, t, ct, shape=shape)
        res[0] = _xp.astype(g.sum().reshape(()) if len(w.shape) == 0 else g, w.dtype)
    if isinstance(ct, UndefinedPrimal):
        res[5] = _xp.astype(_MAIN(w, idx, ptr, d, G, t, shape=shape), ct.dtype)
    return tuple(res)


_MAIN = Operator(
    "event_csrmv_delayed",
    kernel=K.delayed_kernel,
    outs=_main_outs,
    transpose=_main_transpose,
    linear=("weights", "history"),
    batch=lambda args, axes, **st: _rules.loop_batch(_MAIN, args, axes, st),
    nondiff=("indices", "indptr", "delays", "t"),
    scratch=lambda w, i, p, d, h, t, *, serial, shape: _policy.private_scratch(serial, shape[1], w.dtype),
    policy=_policy.delayed_policy,
    compile_options=IEEE,
)


def _sorted_transpose(cts, primals, *, shape):
    """As :func:`_main_transpose` (the delay index is a function of the structure: no cotangent)."""
    return _main_transpose(cts, primals[:6], shape=shape) + (None, None, None, None)


def _sorted_scratch(w, i, p, d, h, t, dptr, perm, cols, wsort, *, serial, shape):
    return _policy.private_scratch(serial, shape[1], w.dtype)


# The product through the delay index (``_delay_index``): the same result as ``_MAIN``
# with the work of the synapses delivered now. `python benchmarks/bench_sparse_families.py
# --families delayed`: see docs/performance.md for the measured change.
_SORTED = Operator(
    "event_csrmv_delayed_sorted",
    kernel=K.delayed_sorted_kernel,
    outs=lambda w, i, p, d, h, t, dptr, perm, cols, wsort, *, shape: _main_outs(
        w, i, p, d, h, t, shape=shape
    ),
    transpose=_sorted_transpose,
    linear=("weights", "history"),
    batch=lambda args, axes, **st: _rules.loop_batch(_SORTED, args, axes, st),
    nondiff=("indices", "indptr", "delays", "t", "dptr", "perm", "cols", "wsort"),
    scratch=_sorted_scratch,
    policy=_policy.delayed_sorted_policy,
    compile_options=IEEE,
)
_SDDMM = Operator(
    "csr_delayed_sddmm",
    kernel=K.delayed_sddmm_kernel,
    outs=lambda indices, indptr, delays, history, t, ct, *, shape: ShapeDtype((indices.shape[0],), ct.dtype),
    transpose=_sddmm_transpose,
    linear=("history", "ct"),
    nondiff=("indices", "indptr", "delays", "t"),
    policy=_policy.gather_policy(lambda i, p, d, h, t, c, shape: i.shape[0]),
    compile_options=IEEE,
)
_T = Operator(
    "csr_delayed_t",
    kernel=K.delayed_t_kernel,
    outs=_t_outs,
    transpose=_t_transpose,
    linear=("weights", "ct"),
    nondiff=("indices", "indptr", "delays", "t"),
    policy=_policy.gather_policy(lambda w, i, p, d, t, c, shape, depth: i.shape[0] + depth * shape[0] // 4),
    compile_options=IEEE,
)


def int_scalar(func, name, x, like, period):
    """A 0-d int32/int64 array (a Python int, a NumPy integer or a one-element integer array).

    A Python or NumPy integer outside int32 is taken modulo ``period`` (the ring's length:
    the kernels only use ``t mod period``), so any integer works and keeps its meaning,
    also in JAX without 64-bit types."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        v = int(x)
        if not -(2**31) <= v < 2**31:
            v %= period
        return _xp.full((), v, "int64" if _xp.fw_of(like) == "torch" else "int32", like)
    a = _validate.as_array(func, name, x)
    d = _validate._dtype(func, name, a)
    if d.kind not in "iu" or d.itemsize > 8:
        raise TypeError(f"{func}(): argument '{name}' must be an integer scalar, got dtype {d.name}")
    if tuple(a.shape) not in ((), (1,)):
        raise ValueError(f"{func}(): argument '{name}' must be a scalar, got shape {tuple(a.shape)}")
    a = _xp.reshape(a, ())
    return a if d.name in ("int32", "int64") else _xp.astype(a, "int64")


def event_csrmv_delayed(weights, indices, indptr, delays, history, t, *, shape):
    r"""Event product with synaptic delays: each synapse delivers the event of ``delay`` steps ago.

    .. math::

        y_c = \sum_{j:\ c_j = c} w_j\ h_{(t - d_j) \bmod D,\ \mathrm{row}(j)}

    for the ``(m, n) = shape`` CSR matrix (``indices``, ``indptr``, ``weights``) with one
    delay ``d_j`` per synapse, and ``history`` (shape ``(D, m)``) a ring buffer of the
    presynaptic events of the last ``D`` steps: the events of step ``t`` are
    ``history[t % D]`` (written before the call), so delay 0 is the current step. This is
    ``A.T @ e`` with a delay-dependent ``e`` (the spiking direction).

    Work: the ``D x m`` history is scanned (64 entries at a time) and each event visits only
    the synapses it delivers now, through a *delay index* (each row's synapses grouped by
    delay) built once and cached while the structure cannot change (JAX arrays, torch
    tensors per ``_version``, read-only NumPy arrays; see :func:`column_index`). A traced or
    writeable structure runs the direct kernel instead, which reads every synapse of the
    neurons with an event in the window (about 10x slower at n = 40 000, D = 8, r = 0.05):
    under ``jax.jit``, close over the connectivity rather than passing it as an argument.

    Parameters
    ----------
    weights, indices, indptr, shape
        The CSR matrix, as in :func:`event_csrmv` (rows: presynaptic neurons).
    delays : array of shape (nnz,), integer
        Delay of each synapse in steps, in ``[0, D)``.
    history : 2-D array (D, m), bool or float32/float64
        The events of the last ``D`` steps; float events scale their synapses.
    t : int or 0-d integer array
        The current step (may be traced); slot ``(t - d) mod D`` is read for delay ``d``.

    Returns
    -------
    array
        Shape ``(n,)``, the dtype of ``weights``.

    Raises
    ------
    TypeError
        Non-integer ``delays`` or ``t``; ``history`` neither bool nor float; as
        :func:`event_csrmv`.
    ValueError
        ``delays`` not of length ``nnz``; ``history`` not 2-D, with ``D = 0`` rows or not
        ``shape[0]`` columns; as :func:`event_csrmv`.
    IndexError
        (Concrete values) a delay outside ``[0, D)``. Under ``jax.jit`` every delay is
        taken modulo ``D`` (the kernel never reads outside ``history``).

    Notes
    -----
    Differentiable in ``weights`` and in float ``history`` (``delays`` and ``t`` are
    integers). ``vmap`` runs one call per batch element (``lax.map``).

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_csrmv_delayed
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 1, 1]); w = np.array([1.0, 2.0, 3.0])
    >>> delays = np.array([0, 2, 1])              # synapse 1 is two steps late
    >>> history = np.zeros((3, 2), bool)
    >>> history[1, 0] = True                      # neuron 0 spiked at step 1
    >>> [event_csrmv_delayed(w, indices, indptr, delays, history, t, shape=(2, 2)).tolist() for t in (1, 2, 3)]
    [[1.0, 0.0], [0.0, 0.0], [0.0, 2.0]]
    """
    func = "event_csrmv_delayed"
    h = _validate.as_array(func, "history", history)
    hd = _validate._dtype(func, "history", h)
    # a Python-number weight takes a float history's dtype, as in event_csrmv
    w, idx, ptr, m, n = _validate.csr(
        func, weights, indices, indptr, shape, like_dtype=hd if hd in _validate._FLOATS else None, like=h
    )
    if hd is not _validate._BOOL and hd not in _validate._FLOATS:
        raise TypeError(f"{func}(): argument 'history' must be bool, float32 or float64, got dtype {hd.name}")
    if len(h.shape) != 2 or h.shape[1] != m or h.shape[0] < 1:
        raise ValueError(
            f"{func}(): argument 'history' must have shape (D, shape[0]) = (D, {m}) with D >= 1 steps, "
            f"got {tuple(h.shape)}"
        )
    D = int(h.shape[0])
    d = _validate.index_array(func, "delays", delays)
    if d.shape[0] != idx.shape[0]:
        raise ValueError(
            f"{func}(): argument 'delays' must have one delay per synapse, length nnz = {idx.shape[0]}, "
            f"got {d.shape[0]}"
        )
    _validate.index_range(func, "delays", d, D, "delay")
    tt = int_scalar(func, "t", t, like=h, period=D)
    index = _delay_index(idx, ptr, d, m, D)
    if index is None:  # no index to build once: the direct kernel
        return _MAIN(w, idx, ptr, d, h, tt, shape=(m, n))
    dptr, perm, cols = index
    wsort = _index.index_weights("delay_weights", w, (idx, ptr, d), perm, (m, D))
    return _SORTED(w, idx, ptr, d, h, tt, dptr, perm, cols, wsort, shape=(m, n))


def _delay_index(idx, ptr, d, m, D):
    """The synapses of each row grouped by delay: ``(dptr, perm, cols)`` with row ``i``'s
    synapses of delay ``k`` at ``perm[dptr[k m + i] : dptr[k m + i + 1]]`` (delay-major;
    positions in ``indices``, increasing) and ``cols`` their columns; ``None`` where the structure is traced
    or may change between calls (``_once.stamp``): those calls use the direct kernel.

    Built on the host (a stable sort) once per version of the three arrays (``_once``), in
    the framework of ``indices`` (NumPy for JAX arrays: constants of the computation).
    Delays are taken modulo ``D``, as the direct kernel reads them.
    """
    arrays = (idx, ptr, d)

    def build():
        hi, hp, hd = (np.asarray(_xp.host(a)) for a in arrays)  # validated: indptr 0 .. nnz, sorted
        rows = np.repeat(np.arange(m, dtype=np.int64), np.diff(hp.astype(np.int64)))
        dm = np.mod(hd.astype(np.int64), D)
        key = dm * m + rows  # delay-major: a slot's rows in order
        perm = np.argsort(key, kind="stable").astype(np.int32)
        dptr = np.zeros(m * D + 1, np.int64)
        np.cumsum(np.bincount(key, minlength=m * D), out=dptr[1:])
        cols = np.ascontiguousarray(hi[perm])
        res = (dptr, perm, cols)
        if _xp.fw_of(idx) in ("numpy", "jax"):
            return res
        return tuple(_xp.from_numpy(r, idx) for r in res)

    # traced, or arrays that may change (writeable NumPy, CuPy, TiArrays): no index, since
    # building it (a sort) on every call would cost more than the direct kernel saves
    return _once.cached("delay_index", arrays, (m, D), build, lambda: None)


event_csrmv_delayed.operator = _MAIN
