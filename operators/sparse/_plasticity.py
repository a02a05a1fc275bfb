"""Plasticity on spikes: weight updates of the synapses of the neurons that spiked.

Pair-based STDP, for example, adds the postsynaptic trace to the synapses of a spiking
presynaptic neuron (``*_update_on_pre``) and the presynaptic trace to the synapses of a
spiking postsynaptic neuron (``*_update_on_post``). Each function returns the new weights
(``weights`` itself is not changed) with the updated synapses optionally clipped to
``[w_min, w_max]``; the synapses that were not updated keep their values (brainevent
clips every weight on every call). Bool spikes count as 1; a float spike scales the
trace.

Cost: only the synapses of the spiking neurons, once the result holds the weights: the
kernels' output starts from ``weights`` (``Operator(aliases=...)``). Under ``jax.jit`` XLA
passes the weights' own buffer where it may reuse it -- a ``lax.scan`` carry, a donated
argument -- so a learning step inside a scan costs the spiking neurons' synapses only; a
jitted call whose weights stay alive, and NumPy, torch and CuPy calls, copy the weights
first (one memcpy). ``*_update_on_post`` finds a column's synapses through the
*column index* of the matrix (``column_index``): built by a counting-sort kernel and
cached per array version (``_once``: JAX arrays once, torch tensors once per
``_version``, read-only NumPy arrays once; writeable NumPy arrays, traced index arrays and
the like are indexed again on every call, at the cost of a pass over all synapses).

The updates are not differentiable (a learning rule's result; ``jax.lax.stop_gradient``
or ``tensor.detach()`` their inputs to use them inside differentiated code).
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype
from . import _fcn, _policy, _validate, _xp
from . import _plasticity_kernels as K
from ._common import IEEE
from ._index import _column_index, column_index

__all__ = [
    "csr_update_on_pre",
    "csr_update_on_post",
    "fcn_update_on_pre",
    "fcn_update_on_post",
    "dense_update_on_pre",
    "dense_update_on_post",
    "column_index",
]

# Not differentiable: every input (by the kernels' parameter names, which are the public
# functions' argument names: the Operator's messages name them)
_ON_PRE = ("weights", "pre_spikes", "post_trace", "w_min", "w_max")
_ON_POST = ("weights", "post_spikes", "pre_trace", "w_min", "w_max")


def _same(w, *rest, **static):
    return ShapeDtype(w.shape, w.dtype)


def _work(*inputs, **static):
    return inputs[0].shape[0] * (inputs[0].shape[1] if len(inputs[0].shape) == 2 else 1)


# Work units of one updated synapse for the serial/parallel choice (_policy.spike_policy),
# from the break-even of the two variants alternated call by call on 2 threads (n = 10 000
# and 40 000, r = 0.01-0.1, the NumPy route; before, all three counted 1 and the serial
# variant ran where the parallel one was 1.1-1.4x faster):
# - on_pre, a spiking row's synapses in a row (a stream, the trace gathered from cache):
#   break-even near 1e5 synapses (n = 40 000, r = 0.1: serial 2430 us, parallel 1917);
_ROW_COST = 10.0
# - on_post, a spiking column's synapses anywhere in the weights (a cache miss each): near
#   3e4 (n = 40 000, r = 0.1: serial 5839 us, parallel 4128; r = 0.01: a tie);
_COLUMN_COST = 32.0
# - dense on_post reads a column (one cache line per weight): parallel won from 8e5
#   weights (n = 4000, r = 0.05: 15.7 ms serially, 14.3 in parallel); on_pre streams
#   rows, a tie at every size measured
_DENSE_COLUMN_COST = 8.0


def _update_op(name, kernel, nondiff, i_spikes, cost, **extra):
    """One Operator per public function (its name in every message), sharing kernels: the
    CSR and fixed-number updates differ only in how a row's synapses are found."""
    return Operator(name, kernel=kernel, outs=_same, aliases={"out": "weights"}, nondiff=nondiff,
                    policy=_policy.spike_policy(_work, i_spikes, cost), compile_options=IEEE, **extra)  # fmt: skip


_OPS = {
    "csr_update_on_pre": _update_op("csr_update_on_pre", K.csr_on_pre_kernel, _ON_PRE, 3, _ROW_COST,
                                    static_defaults={"fixed": False}),
    "fcn_update_on_pre": _update_op("fcn_update_on_pre", K.csr_on_pre_kernel, _ON_PRE, 3, _ROW_COST,
                                    static_defaults={"fixed": True}),
    "csr_update_on_post": _update_op("csr_update_on_post", K.csr_on_post_kernel, _ON_POST, 4, _COLUMN_COST),
    "fcn_update_on_post": _update_op("fcn_update_on_post", K.csr_on_post_kernel, _ON_POST, 4, _COLUMN_COST),
    "dense_update_on_pre": _update_op("dense_update_on_pre", K.dense_on_pre_kernel, _ON_PRE, 1, 1.0),
    "dense_update_on_post": _update_op("dense_update_on_post", K.dense_on_post_kernel, _ON_POST, 1,
                                       _DENSE_COLUMN_COST),
}  # fmt: skip


def _bound(func, name, value, dtype, like, default):
    if value is None:
        return _xp.full((), default, dtype, like)
    if _validate.is_py_number(value):
        return _xp.full((), float(value), dtype, like)
    a = _validate.float_scalar(func, name, value, like=like)
    return _xp.astype(a, dtype)


def _common(func, weights, spikes, trace, w_min, w_max, n_spikes, n_trace, sname, tname):
    """Validated spikes, trace (``pre_*`` of length ``m``, ``post_*`` of length ``n``) and bounds."""
    where = {"pre": "m (rows, presynaptic)", "post": "n (columns, postsynaptic)"}
    s = _validate.dense_operand(func, sname, spikes, n_spikes, ndim=1, allow_bool=True,
                                where=where[sname.split("_")[0]])  # fmt: skip
    tr = _validate.dense_operand(func, tname, trace, n_trace, ndim=1, allow_bool=False,
                                 where=where[tname.split("_")[0]])  # fmt: skip
    d = _xp.dtype_of(weights)
    lo = _bound(func, "w_min", w_min, d, weights, -np.inf)
    hi = _bound(func, "w_max", w_max, d, weights, np.inf)
    return s, tr, lo, hi


def _per_synapse(func, w, nnz, weights, rows=None):
    """``w`` (the validated ``weights``) as one weight per synapse, shape ``(nnz,)``. The
    validators read shape ``(1,)`` as one shared weight; with one synapse it is also one
    weight per synapse, as the caller's array says (refused before 2026-12-05). ``rows``:
    ``m`` of a fixed-number matrix, whose weights the caller gives as ``(m, k)``."""
    given = tuple(weights.shape) if hasattr(weights, "shape") else tuple(np.shape(weights))
    if nnz == 1 and tuple(w.shape) == () and len(given) >= 1 and all(e == 1 for e in given):
        return _xp.reshape(w, (1,))
    if len(w.shape) != 1 or w.shape[0] != nnz:
        want = f"(nnz,) = ({nnz},)" if rows is None else f"(shape[0], k) = ({rows}, {nnz // max(rows, 1)})"
        raise ValueError(
            f"{func}(): argument 'weights' must hold one weight per synapse, shape {want}, "
            f"got {given} (a shared weight cannot learn per synapse)"
        )
    return w


_DOC = r"""{summary}

    .. math::

        {math}

    for every synapse ``j`` {where}, with ``clip`` to ``[w_min, w_max]`` (when given). Only those
    synapses are visited{how}; the others keep their weights. The result is a new array
    (``weights`` is not changed): NumPy, torch and CuPy calls copy the weights once; under
    ``jax.jit`` the update is made in the weights' buffer where XLA may reuse it (a
    ``lax.scan`` carry, a donated argument), so that a step costs the updated synapses only.

    Parameters
    ----------
{params}
    w_min, w_max : float or 0-d array, optional
        Bounds of the updated weights (``None``: no bound).

    Returns
    -------
    array
        The new weights, of the shape and dtype of ``weights``.

    Raises
    ------
    TypeError
        Arguments of the wrong dtype; asking for a gradient (the update is not
        differentiable).
    ValueError
        Arguments of the wrong shape{extra_raise}.
    IndexError
        (Concrete values) index arrays out of range, as in the products.

    Examples
    --------
{example}
"""

_CSR_P = """    weights : array (nnz,), float32 or float64
        One weight per synapse of the CSR matrix (``indices``, ``indptr``, ``shape``).
    indices, indptr : arrays
        The CSR structure, as in :func:`event_csrmv`.
    {sname} : 1-D array (shape[{si}],), bool or float
        The spikes of the {who} neurons.
    {tname} : 1-D array (shape[{ti}],), float
        The trace of the {other} neurons.
    shape : tuple of two ints
        ``(m, n)``."""


def csr_update_on_pre(weights, indices, indptr, pre_spikes, post_trace, *, shape, w_min=None, w_max=None):
    func = "csr_update_on_pre"
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape)
    w = _per_synapse(func, w, idx.shape[0], weights)
    s, tr, lo, hi = _common(func, w, pre_spikes, post_trace, w_min, w_max, m, n, "pre_spikes", "post_trace")
    return _OPS[func](w, idx, ptr, s, tr, lo, hi)


def csr_update_on_post(weights, indices, indptr, post_spikes, pre_trace, *, shape, w_min=None, w_max=None):
    func = "csr_update_on_post"
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape)
    w = _per_synapse(func, w, idx.shape[0], weights)
    s, tr, lo, hi = _common(func, w, post_spikes, pre_trace, w_min, w_max, n, m, "post_spikes", "pre_trace")
    ptr_t, perm, rows_t = _column_index(idx, ptr, m, n, fixed=False)
    return _OPS[func](w, ptr_t, perm, rows_t, s, tr, lo, hi)


def fcn_update_on_pre(weights, indices, pre_spikes, post_trace, *, shape, w_min=None, w_max=None):
    func = "fcn_update_on_pre"
    w, idx, m, n, k, _ = _fcn.fcn(func, weights, indices, shape)
    w = _per_synapse(func, w, m * k, weights, rows=m)
    s, tr, lo, hi = _common(func, w, pre_spikes, post_trace, w_min, w_max, m, n, "pre_spikes", "post_trace")
    return _xp.reshape(_OPS[func](w, idx, idx, s, tr, lo, hi, fixed=True), (m, k))


def fcn_update_on_post(weights, indices, post_spikes, pre_trace, *, shape, w_min=None, w_max=None):
    func = "fcn_update_on_post"
    w, idx, m, n, k, base = _fcn.fcn(func, weights, indices, shape)
    w = _per_synapse(func, w, m * k, weights, rows=m)
    s, tr, lo, hi = _common(func, w, post_spikes, pre_trace, w_min, w_max, n, m, "post_spikes", "pre_trace")
    # keyed on the (m, k) array, not on the flattened view made per call
    ptr_t, perm, rows_t = _column_index(idx, None, m, n, fixed=True, key=(base,))
    return _xp.reshape(_OPS[func](w, ptr_t, perm, rows_t, s, tr, lo, hi), (m, k))


def dense_update_on_pre(weights, pre_spikes, post_trace, *, w_min=None, w_max=None):
    from ._dense import dense_matrix

    func = "dense_update_on_pre"
    w, m, n = dense_matrix(func, weights)
    s, tr, lo, hi = _common(func, w, pre_spikes, post_trace, w_min, w_max, m, n, "pre_spikes", "post_trace")
    return _OPS[func](w, s, tr, lo, hi)


def dense_update_on_post(weights, post_spikes, pre_trace, *, w_min=None, w_max=None):
    from ._dense import dense_matrix

    func = "dense_update_on_post"
    w, m, n = dense_matrix(func, weights)
    s, tr, lo, hi = _common(func, w, post_spikes, pre_trace, w_min, w_max, n, m, "post_spikes", "pre_trace")
    return _OPS[func](w, s, tr, lo, hi)


_EX = {
    "csr_update_on_pre": """    >>> import numpy as np
    >>> from tiarray.operators import csr_update_on_pre
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1]); w = np.array([0.5, 0.5, 0.5])
    >>> csr_update_on_pre(w, indices, indptr, np.array([True, False]), np.array([0.1, 0.2, 0.7]),
    ...                   shape=(2, 3), w_max=1.0)
    array([0.6, 1. , 0.5])""",
    "csr_update_on_post": """    >>> import numpy as np
    >>> from tiarray.operators import csr_update_on_post
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1]); w = np.array([0.5, 0.5, 0.5])
    >>> csr_update_on_post(w, indices, indptr, np.array([False, True, True]), np.array([-0.1, -0.3]),
    ...                    shape=(2, 3), w_min=0.3)
    array([0.5, 0.4, 0.3])""",
    "fcn_update_on_pre": """    >>> import numpy as np
    >>> from tiarray.operators import fcn_update_on_pre
    >>> indices = np.array([[0, 2], [1, 2]]); w = np.full((2, 2), 0.5)
    >>> fcn_update_on_pre(w, indices, np.array([False, True]), np.array([0.1, 0.2, 0.3]), shape=(2, 3))
    array([[0.5, 0.5],
           [0.7, 0.8]])""",
    "fcn_update_on_post": """    >>> import numpy as np
    >>> from tiarray.operators import fcn_update_on_post
    >>> indices = np.array([[0, 2], [1, 2]]); w = np.full((2, 2), 0.5)
    >>> fcn_update_on_post(w, indices, np.array([False, False, True]), np.array([0.1, 0.2]), shape=(2, 3))
    array([[0.5, 0.6],
           [0.5, 0.7]])""",
    "dense_update_on_pre": """    >>> import numpy as np
    >>> from tiarray.operators import dense_update_on_pre
    >>> dense_update_on_pre(np.zeros((2, 3)), np.array([False, True]), np.array([0.1, 0.2, 0.3]))
    array([[0. , 0. , 0. ],
           [0.1, 0.2, 0.3]])""",
    "dense_update_on_post": """    >>> import numpy as np
    >>> from tiarray.operators import dense_update_on_post
    >>> dense_update_on_post(np.zeros((2, 3)), np.array([True, False, False]), np.array([0.1, 0.2]))
    array([[0.1, 0. , 0. ],
           [0.2, 0. , 0. ]])""",
}
_PRE_MATH = r"w_j \leftarrow \mathrm{clip}(w_j + s_{\mathrm{row}(j)}\ \mathrm{post\_trace}_{\mathrm{col}(j)})"
_POST_MATH = r"w_j \leftarrow \mathrm{clip}(w_j + s_{\mathrm{col}(j)}\ \mathrm{pre\_trace}_{\mathrm{row}(j)})"
_SPECS = {
    "csr_update_on_pre": ("Plasticity on presynaptic spikes, CSR weights: add the postsynaptic trace to the "
                          "synapses of spiking rows.", _PRE_MATH, "of a row whose neuron spiked", "",
                          _CSR_P.format(sname="pre_spikes", si=0, who="presynaptic (row)", tname="post_trace", ti=1,
                                        other="postsynaptic (column)")),
    "csr_update_on_post": ("Plasticity on postsynaptic spikes, CSR weights: add the presynaptic trace to the "
                           "synapses of spiking columns.", _POST_MATH, "of a column whose neuron spiked",
                           " through the cached column index (:func:`column_index`), not by a scan of all synapses",
                           _CSR_P.format(sname="post_spikes", si=1, who="postsynaptic (column)", tname="pre_trace",
                                         ti=0, other="presynaptic (row)")),
    "fcn_update_on_pre": ("Plasticity on presynaptic spikes, fixed-number weights (the ``k`` synapses of each "
                          "spiking row).", _PRE_MATH, "of a row whose neuron spiked", "",
                          "    weights : array (m, k), float\n    indices : array (m, k), integer\n"
                          "        As in :func:`event_fcnmv`.\n    pre_spikes : 1-D array (m,), bool or float\n"
                          "    post_trace : 1-D array (n,), float\n    shape : tuple of two ints"),
    "fcn_update_on_post": ("Plasticity on postsynaptic spikes, fixed-number weights.", _POST_MATH,
                           "of a column whose neuron spiked",
                           " through the cached column index of ``indices`` (as :func:`column_index`)",
                           "    weights : array (m, k), float\n    indices : array (m, k), integer\n"
                           "    post_spikes : 1-D array (n,), bool or float\n    pre_trace : 1-D array (m,), float\n"
                           "    shape : tuple of two ints"),
    "dense_update_on_pre": ("Plasticity on presynaptic spikes, dense weights: ``W[i, :] += s_i post_trace``.",
                            r"W_{ij} \leftarrow \mathrm{clip}(W_{ij} + s_i\ \mathrm{post\_trace}_j)",
                            "``(i, j)`` of a spiking row ``i``", " (whole rows)",
                            "    weights : 2-D array (m, n), float\n    pre_spikes : 1-D array (m,), bool or float\n"
                            "    post_trace : 1-D array (n,), float"),
    "dense_update_on_post": ("Plasticity on postsynaptic spikes, dense weights: ``W[:, j] += s_j pre_trace``.",
                             r"W_{ij} \leftarrow \mathrm{clip}(W_{ij} + s_j\ \mathrm{pre\_trace}_i)",
                             "``(i, j)`` of a spiking column ``j``", " (whole columns)",
                             "    weights : 2-D array (m, n), float\n    post_spikes : 1-D array (n,), bool or float\n"
                             "    pre_trace : 1-D array (m,), float"),
}  # fmt: skip

for _f in (csr_update_on_pre, csr_update_on_post, fcn_update_on_pre, fcn_update_on_post, dense_update_on_pre,
           dense_update_on_post):  # fmt: skip
    _summary, _math, _where, _how, _params = _SPECS[_f.__name__]
    _f.__doc__ = _DOC.format(summary=_summary, math=_math, where=_where, how=_how, params=_params,
                             extra_raise="; ``weights`` that are not one per synapse" if "dense" not in _f.__name__
                             else "", example=_EX[_f.__name__])  # fmt: skip
    _f.operator = _OPS[_f.__name__]
