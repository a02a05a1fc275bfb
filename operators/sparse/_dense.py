"""Dense event products: a dense weight matrix ``W`` of shape ``(m, n)`` times events.

``event_densemv(W, e)`` is ``W @ e`` (``e`` of length ``n``) and, with ``transpose=True``,
``e @ W = W.T @ e`` (``e`` of length ``m``, the spiking direction: presynaptic events
``e`` to postsynaptic inputs). Only the columns (rows) of ``W`` of nonzero events are
read; bool events count as 1, float events scale (the conventions of :func:`event_csrmv`,
with ``A = W``). The result has the dtype of ``W``.
"""

from __future__ import annotations

from .._operator import Operator, ShapeDtype, UndefinedPrimal
from . import _dense_kernels as K
from . import _policy, _rules, _validate, _xp
from ._common import IEEE

__all__ = ["event_densemv", "event_densemm"]


def _op(name):
    return _OPS[name]


def _outs(weights, events, *, transpose):
    if weights.dtype.kind != "f" or weights.ndim != 2:
        raise TypeError(f"event_dense: 'weights' must be a 2-D float matrix, got {weights}")
    m, n = weights.shape
    return ShapeDtype((n if transpose else m,) + tuple(events.shape[1:]), weights.dtype)


def _scratch(weights, events, *, serial, transpose):
    return ShapeDtype((events.shape[0] + 1,), "int32")


def _transpose_rule(name):
    def rule(cts, primals, *, transpose):
        (ct,) = cts
        w, x = primals
        res = [None, None]
        if isinstance(x, UndefinedPrimal):  # d<ct, W x>/dx = W^T ct
            res[1] = _xp.astype(_OPS[name](w, ct, transpose=not transpose), x.dtype)
        if isinstance(w, UndefinedPrimal):
            xf = _xp.astype(x, w.dtype) if _rules.is_bool(x) else x
            a, b = (xf, ct) if transpose else (ct, xf)  # y = W x: dW = ct x^T; y = W^T x: dW = x ct^T
            g = a[:, None] * b[None, :] if len(x.shape) == 1 else a @ b.T
            res[0] = _xp.astype(g, w.dtype)
        return tuple(res)

    return rule


def _product(name, kernel, mm_name=None):
    return Operator(
        name,
        kernel=kernel,
        outs=_outs,
        transpose=_transpose_rule(name),
        linear=("weights", "events"),
        batch=_rules.mv_batch(_op, name, mm_name) if mm_name else _rules.mm_batch(_op, name),
        scratch=_scratch,
        policy=_policy.dense_policy,
        static_defaults={"transpose": False},
        compile_options=IEEE,
    )


_OPS: dict = {}
_OPS["event_densemm"] = _product("event_densemm", K.densemm_kernel)
_OPS["event_densemv"] = _product("event_densemv", K.densemv_kernel, "event_densemm")


def dense_matrix(func, weights, *, like=None):
    """A validated 2-D float32/float64 weight matrix and its shape."""
    w = _validate.as_array(func, "weights", weights)
    _validate.plain_tensor(func, "weights", w)
    d = _validate._dtype(func, "weights", w)
    if d not in _validate._FLOATS:
        raise TypeError(f"{func}(): argument 'weights' must be float32 or float64, got dtype {d.name}")
    if len(w.shape) != 2:
        raise ValueError(
            f"{func}(): argument 'weights' must be a 2-D matrix (m, n), got shape {tuple(w.shape)}"
        )
    m, n = (int(s) for s in w.shape)
    if m * n >= 2**31:
        raise ValueError(f"{func}(): at most 2**31 - 1 weights are supported, got {m} x {n}")
    return w, m, n


def _call(name, weights, events, transpose, ndim):
    transpose = _validate.check_bool(transpose, name, "transpose", numpy_bool=True)
    w, m, n = dense_matrix(name, weights)
    length, where = (
        (m, "weights.shape[0] (transpose=True)") if transpose else (n, "weights.shape[1] (transpose=False)")
    )
    e = _validate.dense_operand(name, "events", events, length, ndim=ndim, allow_bool=True, where=where)
    return _OPS[name](w, e, transpose=transpose)


def event_densemv(weights, events, *, transpose=False):
    r"""Event-driven dense matrix-vector product ``W @ events`` or ``events @ W``.

    .. math::

        y_i = \sum_{j:\ e_j \neq 0} W_{ij}\, e_j \quad (\text{transpose=False}), \qquad
        y_j = \sum_{i:\ e_i \neq 0} e_i\, W_{ij} \quad (\text{transpose=True})

    Only the columns (``transpose=False``) or rows (``transpose=True``, the spiking
    direction: contiguous rows, added with vectorised loops) of ``W`` that belong to
    nonzero events are read. A bool event counts as 1; a float event scales its column or
    row.

    Parameters
    ----------
    weights : 2-D array (m, n), float32 or float64
        The dense matrix ``W`` (rows: presynaptic neurons).
    events : 1-D array, bool or float32/float64
        Length ``n`` (``transpose=False``) or ``m`` (``transpose=True``).
    transpose : bool, optional
        ``False``: ``W @ events`` (length ``m``); ``True``: ``events @ W`` (length ``n``).

    Returns
    -------
    array
        1-D, of the inputs' framework, with the dtype of ``weights``.

    Raises
    ------
    TypeError
        ``weights`` not float32/float64, ``events`` neither bool nor float, arrays of two
        frameworks.
    ValueError
        ``weights`` not 2-D, ``events`` of the wrong length.

    Notes
    -----
    Differentiable in ``weights`` (``dW = ct e^T``, or ``e ct^T`` transposed) and in float
    ``events``; ``vmap`` over ``events`` is one :func:`event_densemm` launch. Cost: one
    pass over the events, then ``m`` (or ``n``) times the number of active events.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_densemv
    >>> W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    >>> event_densemv(W, np.array([True, False, True]))
    array([ 4., 10.], dtype=float32)
    >>> event_densemv(W, np.array([False, True]), transpose=True)
    array([4., 5., 6.], dtype=float32)
    """
    return _call("event_densemv", weights, events, transpose, 1)


def event_densemm(weights, events, *, transpose=False):
    r"""Event-driven product of a dense matrix with a batch of event vectors (the columns of ``events``).

    ``W @ E`` (``transpose=False``, ``E`` of shape ``(n, K)``) or ``W.T @ E`` (``E`` of shape
    ``(m, K)``); column ``c`` of the result is :func:`event_densemv` of column ``c``. Only
    the columns (rows) of ``W`` whose row of ``E`` has a nonzero entry are read.

    Parameters
    ----------
    weights : 2-D array (m, n), float32 or float64
    events : 2-D array, bool or float32/float64
        ``(n, K)`` or ``(m, K)``.
    transpose : bool, optional
        Multiply by ``W.T``.

    Returns
    -------
    array
        ``(m, K)`` or ``(n, K)``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError
        As :func:`event_densemv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_densemm
    >>> W = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
    >>> event_densemm(W, np.array([[True, False], [False, False], [True, True]]))
    array([[ 4.,  3.],
           [10.,  6.]], dtype=float32)
    """
    return _call("event_densemm", weights, events, transpose, 2)


for _f in (event_densemv, event_densemm):
    _f.operator = _OPS[_f.__name__]
