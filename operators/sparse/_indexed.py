"""Spike-index products: ``A.T @ e`` where the events are given as a list of active rows.

``ids[:count]`` lists the presynaptic neurons that spiked (e.g. ``jnp.nonzero(spikes,
size=S)[0]`` with ``count = spikes.sum()``: a fixed-size list, traceable under ``jax.jit``);
the product adds the synapses of the listed rows, without a pass over all neurons.
``e`` is the vector with ``e[i]`` = the number of times ``i`` occurs in ``ids[:count]``
(1 for the distinct ids that ``nonzero`` gives), so ``event_csrmv_indexed(...) ==
event_csrmv(..., e, transpose=True)``.
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype, UndefinedPrimal
from . import _fcn, _policy, _validate, _xp
from . import _indexed_kernels as K
from ._common import IEEE

__all__ = ["event_csrmv_indexed", "event_fcnmv_indexed", "ids_to_events"]


def _csr_outs(weights, indices, indptr, ids, count, *, shape):
    _check_weights("event_csrmv_indexed", weights, indices)
    return ShapeDtype((shape[1],), weights.dtype)


def _fcn_outs(weights, indices, ids, count, n_pre, *, shape):
    _check_weights("event_fcnmv_indexed", weights, indices)
    return ShapeDtype((shape[1],), weights.dtype)


def _check_weights(name, weights, indices):
    if weights.dtype.kind != "f" or not (weights.ndim == 0 or weights.shape == indices.shape):
        raise ValueError(
            f"{name}: argument 'weights' must have shape () or {indices.shape}, got {weights.shape}"
        )


def _csr_transpose(cts, primals, *, shape):
    (ct,) = cts
    w, idx, ptr, ids, count = primals
    if not isinstance(w, UndefinedPrimal):
        return (None,) * 5
    from . import _csr

    if len(w.shape) == 0:
        y1 = _CSR(_xp.full((), 1, w.dtype, ct), idx, ptr, ids, count, shape=shape)
        g = (ct * y1).sum().reshape(())
    else:  # dy/dw_j = ct[col_j] * e[row_j]
        e = _IDS(ids, count, n=shape[0], dtype=w.dtype.name)
        g = _csr._SDDMM(idx, ptr, e, ct, shape=shape)
    return (_xp.astype(g, w.dtype), None, None, None, None)


def _fcn_transpose(cts, primals, *, shape):
    (ct,) = cts
    w, idx, ids, count, n_pre = primals
    if not isinstance(w, UndefinedPrimal):
        return (None,) * 5
    if len(w.shape) == 0:
        y1 = _FCN(_xp.full((), 1, w.dtype, ct), idx, ids, count, n_pre, shape=shape)
        g = (ct * y1).sum().reshape(())
    else:
        e = _IDS(ids, count, n=shape[0], dtype=w.dtype.name)
        g = _fcn._OPS["fcn_sddmm"](idx, e, ct, shape=shape)
    return (_xp.astype(g, w.dtype), None, None, None, None)


def _csr_batch(args, axes, *, shape):
    """vmap over the spike lists (``ids`` and ``count``): one ``event_csrmm`` launch on the
    ``(m, batch)`` matrix of their event vectors."""
    from . import _csr, _rules

    w, idx, ptr, ids, count = args
    if all(a is None for a in axes[:3]):
        ids_b, count_b = _batched_lists(ids, count, axes[3], axes[4])
        E = _IDS(ids_b, count_b, n=shape[0], dtype=_xp.dtype_of(w).name)
        return _csr._OPS["event_csrmm"](w, idx, ptr, E, shape=shape, transpose=True), 1
    return _rules.loop_batch(_CSR, args, axes, {"shape": shape})


def _fcn_batch(args, axes, *, shape):
    from . import _rules

    w, idx, ids, count, n_pre = args
    if all(a is None for a in axes[:2]) and axes[4] is None:
        ids_b, count_b = _batched_lists(ids, count, axes[2], axes[3])
        E = _IDS(ids_b, count_b, n=shape[0], dtype=_xp.dtype_of(w).name)
        return _fcn._OPS["event_fcnmm"](w, idx, E, shape=shape, transpose=True), 1
    return _rules.loop_batch(_FCN, args, axes, {"shape": shape})


def _batched_lists(ids, count, ax_ids, ax_count):
    """``(ids (B, S), count (B,))`` from the batched (or shared) list and count."""
    if ax_ids is None:
        ids = _xp.repeat0(ids, count.shape[ax_count])
    else:
        ids = _xp.moveaxis(ids, ax_ids, 0)
    if ax_count is None:
        count = _xp.repeat0(_xp.reshape(count, ()), ids.shape[0])
    else:
        count = _xp.moveaxis(count, ax_count, 0)
    return ids, count


_CSR = Operator(
    "event_csrmv_indexed",
    kernel=K.csrmv_indexed_kernel,
    outs=_csr_outs,
    transpose=_csr_transpose,
    linear=("weights",),
    batch=_csr_batch,
    nondiff=("indices", "indptr", "ids", "count"),
    scratch=lambda w, i, p, ids, c, *, serial, shape: _policy.private_scratch(serial, shape[1], w.dtype),
    policy=_policy.indexed_policy(3),
    compile_options=IEEE,
)
_FCN = Operator(
    "event_fcnmv_indexed",
    kernel=K.fcnmv_indexed_kernel,
    outs=_fcn_outs,
    transpose=_fcn_transpose,
    linear=("weights",),
    batch=_fcn_batch,
    nondiff=("indices", "ids", "count", "n_pre"),
    scratch=lambda w, i, ids, c, n, *, serial, shape: _policy.private_scratch(serial, shape[1], w.dtype),
    policy=_policy.indexed_policy(2),
    compile_options=IEEE,
)
_IDS = Operator(
    "ids_to_events",
    kernel=K.ids_to_events_kernel,
    outs=lambda ids, count, *, n, dtype: ShapeDtype((n,) + tuple(ids.shape[:-1]), dtype),
    policy=lambda *a, **k: "serial",
    compile_options=IEEE,
)


def _spike_list(func, ids, count, m, like):
    """Validated ``(ids, count)``: a 1-D integer list and a 0-d integer count (values checked
    when concrete: ``0 <= count <= len(ids)``, ``ids[:count]`` in ``[0, m)``)."""
    ids = _validate.index_array(func, "ids", ids)
    if _validate.is_py_number(count) and not isinstance(count, int):
        raise TypeError(f"{func}(): argument 'count' must be an integer, got {count!r}")
    hc = c = None
    n_ids = int(ids.shape[0])
    if isinstance(count, (int, np.integer)) and not isinstance(count, (bool, np.bool_)):
        hc = int(count)  # made an array after the range check (2**40 overflowed an int32)
    else:
        c = _validate.as_array(func, "count", count)
        d = _validate._dtype(func, "count", c)
        if d.kind not in "iu":
            raise TypeError(f"{func}(): argument 'count' must be an integer scalar, got dtype {d.name}")
        if tuple(c.shape) not in ((), (1,)):
            raise ValueError(f"{func}(): argument 'count' must be a scalar, got shape {tuple(c.shape)}")
        c = _xp.reshape(c, ())
        if d not in (_validate._dtypes.int32, _validate._dtypes.int64):
            c = _xp.astype(c, _validate._dtypes.int64)
        h = _xp.host(c)
        hc = None if h is None else int(h)
    if hc is not None:
        if not 0 <= hc <= n_ids:
            raise ValueError(f"{func}(): argument 'count' must be in [0, len(ids)] = [0, {n_ids}], got {hc}")
        hi = _xp.host(ids)
        if hi is not None and hc:
            listed = hi[:hc]
            if listed.min() < 0 or listed.max() >= m:
                bad = int(np.argmax((listed < 0) | (listed >= m)))
                raise IndexError(
                    f"{func}(): argument 'ids' holds neuron {int(listed[bad])} at position {bad}, "
                    f"outside [0, {m}) (shape[0] = {m} rows)"
                )
    if c is None:
        c = _xp.full((), hc, "int32" if _xp.fw_of(like) != "torch" else "int64", like)
    return ids, c


def event_csrmv_indexed(weights, indices, indptr, ids, count, *, shape):
    r"""Spike-index event product ``A.T @ e`` of a CSR matrix, ``e`` given as the list ``ids[:count]``.

    .. math::

        y_c = \sum_{t < \mathrm{count}}\ \sum_{j \in \mathrm{row}\ \mathrm{ids}_t,\ c_j = c} w_j

    The synapses of the listed rows are added, nothing else is read: the cost is the
    synapses of the spiking neurons, with no pass over the ``m`` neurons (which
    :func:`event_csrmv` makes to find them). ``ids[:count]`` is the form
    ``jnp.nonzero(spikes, size=S)`` gives (``count = spikes.sum()``), traceable under
    ``jax.jit``. A repeated id adds its row once per occurrence.

    Parameters
    ----------
    weights, indices, indptr, shape
        The ``(m, n)`` CSR matrix ``A``, as in :func:`event_csrmv`.
    ids : 1-D integer array
        Row indices (presynaptic neurons); only ``ids[:count]`` is read.
    count : int or 0-d integer array
        How many entries of ``ids`` are valid (may be traced).

    Returns
    -------
    array
        Shape ``(n,)``, the dtype of ``weights``, of the inputs' framework.

    Raises
    ------
    TypeError
        Non-integer ``ids`` or ``count``; as :func:`event_csrmv` for the matrix.
    ValueError
        (Concrete values) ``count`` outside ``[0, len(ids)]``; as :func:`event_csrmv`.
    IndexError
        (Concrete values) a listed id outside ``[0, m)``. Under ``jax.jit`` the kernel
        clamps ``count`` into ``[0, len(ids)]`` and skips such ids instead.

    Notes
    -----
    Differentiable in ``weights`` (``ids`` and ``count`` are integers: no gradient).
    ``vmap`` over ``ids`` and ``count`` is one :func:`event_csrmm` launch on the matrix of
    the batch's event vectors.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_csrmv_indexed, event_csrmv
    >>> indptr = np.array([0, 2, 3, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    >>> event_csrmv_indexed(w, indices, indptr, np.array([1, 0, 0]), 2, shape=(3, 3))
    array([1., 3., 2.], dtype=float32)
    >>> event_csrmv(w, indices, indptr, np.array([True, True, False]), shape=(3, 3), transpose=True)
    array([1., 3., 2.], dtype=float32)
    """
    func = "event_csrmv_indexed"
    ids_a = _validate.as_array(func, "ids", ids)
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape, like=ids_a)
    ids_v, c = _spike_list(func, ids_a, count, m, like=ids_a)
    return _CSR(w, idx, ptr, ids_v, c, shape=(m, n))


def event_fcnmv_indexed(weights, indices, ids, count, *, shape):
    r"""Spike-index event product ``A.T @ e`` of a fixed-number matrix, ``e`` given as ``ids[:count]``.

    The fixed-number twin of :func:`event_csrmv_indexed`: ``k`` synapses per listed row,
    ``A`` as in :func:`event_fcnmv` (``indices`` of shape ``(m, k)``).

    .. math::

        y_c = \sum_{t < \mathrm{count}}\ \sum_{j:\ \mathrm{indices}[\mathrm{ids}_t, j] = c} w_{\mathrm{ids}_t, j}

    Parameters
    ----------
    weights : array of shape (), (1,) or (m, k), float32 or float64, or a Python float
    indices : array of shape (m, k), int32 or int64
    ids : 1-D integer array
        Row indices; only ``ids[:count]`` is read.
    count : int or 0-d integer array
    shape : tuple of two ints
        ``(m, n)``.

    Returns
    -------
    array
        Shape ``(n,)``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`event_csrmv_indexed` and :func:`event_fcnmv`.

    Notes
    -----
    Differentiable in ``weights``; ``vmap`` over ``ids``/``count`` is one
    :func:`event_fcnmm` launch.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_fcnmv_indexed
    >>> indices = np.array([[0, 2], [1, 1], [2, 0]])
    >>> event_fcnmv_indexed(np.float32(0.5), indices, np.array([1, 2, 0]), 2, shape=(3, 3))
    array([0.5, 1. , 0.5], dtype=float32)
    """
    func = "event_fcnmv_indexed"
    ids_a = _validate.as_array(func, "ids", ids)
    w, idx, m, n, _, _ = _fcn.fcn(func, weights, indices, shape, like=ids_a)
    ids_v, c = _spike_list(func, ids_a, count, m, like=ids_a)
    return _FCN(w, idx, ids_v, c, m, shape=(m, n))


def ids_to_events(ids, count, n, *, dtype=np.float32):
    """The event vector of a spike list: ``e[i]`` = occurrences of ``i`` in ``ids[:count]``.

    The bridge between the two event forms (a kernel: one pass over ``ids[:count]``);
    ids outside ``[0, n)`` are skipped.

    Parameters
    ----------
    ids : 1-D integer array
    count : int or 0-d integer array
    n : int
        Length of the event vector (neurons).
    dtype : dtype, optional
        float32 (default) or float64.

    Returns
    -------
    array
        ``(n,)``, of the framework of ``ids``.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import ids_to_events
    >>> ids_to_events(np.array([3, 1, 0]), 2, 5)
    array([0., 1., 0., 1., 0.], dtype=float32)
    """
    func = "ids_to_events"
    n = _validate.size(func, "n", n)
    ids_a = _validate.as_array(func, "ids", ids)
    d = np.dtype(dtype)
    if d not in _validate._FLOAT_DTYPES:
        raise TypeError(f"{func}(): argument 'dtype' must be float32 or float64, got {dtype!r}")
    ids_v, c = _spike_list(func, ids_a, count, n, like=ids_a)
    return _IDS(ids_v, c, n=n, dtype=d.name)


event_csrmv_indexed.operator = _CSR
event_fcnmv_indexed.operator = _FCN
ids_to_events.operator = _IDS
