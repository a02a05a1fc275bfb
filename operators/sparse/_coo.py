"""COO operators: the matrix as a list of synapses ``(row[j], col[j], weights[j])`` in any order.

``A`` is the ``(m, n) = shape`` matrix with ``A[row[j], col[j]] += weights[j]`` (repeated
pairs add up); ``weights`` is one shared weight (shape ``()`` or ``(1,)``) or one per
synapse. The conventions are those of :func:`event_csrmv`: ``transpose=False`` is
``A @ x``, ``transpose=True`` is ``A.T @ x``; bool events count as 1, float events scale
(zeros are skipped); the result has the weights' dtype. Both directions read every
synapse (a COO list has no row structure to skip by), except ``event_coomv`` on the CPU
where the list cannot change: it is indexed by source once (``_index.source_route``) and a
step with few events visits the active sources' synapses only (``coomv_src_kernel``). The
rules are those of every product (``_rules``), with ``coo_sddmm`` for per-synapse weight
gradients.
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype
from . import _coo_kernels as K
from . import _index, _policy, _rules, _validate
from ._common import IEEE

__all__ = ["coomv", "event_coomv", "coomm", "event_coomm"]


def _op(name):
    return _OPS[name]


def _outs(name):
    def outs(weights, row, col, x, *, shape, transpose):
        if (
            weights.dtype.kind != "f"
            or weights.ndim > 1
            or (weights.ndim == 1 and weights.shape != row.shape)
        ):
            raise ValueError(
                f"{name}: argument 'weights' must have shape () or {row.shape}, got {weights.shape}"
            )
        if row.shape != col.shape:
            raise ValueError(
                f"{name}: arguments 'row' and 'col' must have the same shape, got {row.shape}, {col.shape}"
            )
        m, n = shape
        return ShapeDtype((n if transpose else m,) + tuple(x.shape[1:]), weights.dtype)

    return outs


def _sddmm_outs(row, col, a, b, *, shape):
    bd = a.dtype if b.dtype.kind == "b" else b.dtype
    return ShapeDtype((row.shape[0],), np.result_type(a.dtype.numpy, bd.numpy))


def _product(name, kernel, mm_name=None):
    return Operator(
        name,
        kernel=kernel,
        outs=_outs(name),
        transpose=_rules.product_transpose(_op, name, "coo_sddmm"),
        linear=("weights", "matrix" if kernel is K.coomm_kernel else "vector"),
        batch=_rules.mv_batch(_op, name, mm_name) if mm_name else _rules.mm_batch(_op, name),
        nondiff=("row", "col"),
        scratch=_policy.coo_scratch if kernel is K.coomv_kernel else None,
        policy=_policy.coo_policy,
        static_defaults={"transpose": False},
        compile_options=IEEE,
    )


_OPS: dict = {}
_OPS["event_coomm"] = _product("event_coomm", K.coomm_kernel)
_OPS["coomm"] = _product("coomm", K.coomm_kernel)
_OPS["event_coomv"] = _product("event_coomv", K.coomv_kernel, "event_coomm")
_OPS["coomv"] = _product("coomv", K.coomv_kernel, "coomm")


# event_coomv on the CPU where the source index of (row, col) is cached: adds the synapses of
# the active sources only when few are active (coomv_src_kernel), else every synapse.
_OPS["event_coomv_src"] = Operator(
    "event_coomv_src",
    kernel=K.coomv_src_kernel,
    linear=("weights", "vector"),
    nondiff=("row", "col", "ptr_s", "perm", "dst_s", "wsort"),
    compile_options=IEEE,
    **_rules.route_parts(
        _op,
        "event_coomv",
        "coo_sddmm",
        "event_coomm",
        "event_coomv_src",
        4,
        outs=_outs("event_coomv"),
        scratch=_policy.coo_scratch,
        policy=_policy.coo_policy,
    ),
)
_OPS["coo_sddmm"] = Operator(
    "coo_sddmm",
    kernel=K.coo_sddmm_kernel,
    outs=_sddmm_outs,
    transpose=_rules.sddmm_transpose(_op, "coomv", "coomm"),
    linear=("a", "b"),
    nondiff=("row", "col"),
    policy=_policy.gather_policy(lambda r, c, a, b, shape: r.shape[0] * (a.shape[1] if a.ndim == 2 else 1)),
    compile_options=IEEE,
)


def coo(func, weights, row, col, shape, *, like_dtype=None, like=None):
    """Validated ``(weights, row, col, m, n)`` of a COO matrix (one shared weight with shape ``()``)."""
    m, n = _validate.shape2(func, shape)
    r = _validate.index_array(func, "row", row)
    c = _validate.index_array(func, "col", col)
    if r.shape[0] != c.shape[0]:
        raise ValueError(
            f"{func}(): arguments 'row' and 'col' must have the same length (one entry per synapse), "
            f"got {r.shape[0]} and {c.shape[0]}"
        )
    nnz = int(r.shape[0])
    if nnz >= 2**31:
        raise ValueError(f"{func}(): at most 2**31 - 1 synapses are supported, got {nnz}")
    w = _validate._weights(func, weights, nnz, like_dtype, like if like is not None else r)
    _validate.index_range(func, "row", r, m, "row index")
    _validate.index_range(func, "col", c, n)
    return w, r, c, m, n


def _call(name, weights, row, col, x, shape, transpose, allow_bool, ndim):
    transpose = _validate.check_bool(transpose, name, "transpose", numpy_bool=True)
    xname = ("events" if allow_bool else "matrix") if ndim == 2 else ("events" if allow_bool else "vector")
    x = _validate.as_array(name, xname, x)
    w, r, c, m, n = coo(
        name, weights, row, col, shape, like_dtype=_validate.float_like(name, xname, x), like=x
    )
    length, where = (m, "shape[0] (transpose=True)") if transpose else (n, "shape[1] (transpose=False)")
    x = _validate.dense_operand(name, xname, x, length, ndim=ndim, allow_bool=allow_bool, where=where)
    if name == "event_coomv" and _policy._cpu():
        src, dst = (r, c) if transpose else (c, r)
        route = _index.source_route(w, src, dst, length, weights=weights)
        if route is not None:
            return _OPS["event_coomv_src"](w, r, c, x, *route, shape=(m, n), transpose=transpose)
    return _OPS[name](w, r, c, x, shape=(m, n), transpose=transpose)


_DOC = r"""{summary}

    ``A`` is the ``(m, n) = shape`` matrix of the synapses ``(row[j], col[j])`` with weights
    ``w_j`` (repeated pairs add up):

    .. math::

        y_i = \sum_{{j:\ r_j = i}} w_j\, x_{{c_j}} \quad (\text{{transpose=False}}), \qquad
        y_c = \sum_{{j:\ c_j = c}} w_j\, x_{{r_j}} \quad (\text{{transpose=True}}).

    Every synapse is read (synapses whose {xname} entry is zero add nothing and are
    skipped before their weight is read).{extra}

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64, or a Python float
        One weight for every synapse, or one per synapse.
    row, col : arrays of shape (nnz,), int32 or int64
        Row and column of each synapse, in any order.
    {xname} : {xshape}, {xkinds}
        ``shape[1]`` rows (``transpose=False``) or ``shape[0]`` (``transpose=True``).
    shape : tuple of two ints
        ``(m, n)``.
    transpose : bool, optional
        ``False``: ``A @ {xname}``; ``True``: ``A.T @ {xname}``.

    Returns
    -------
    array
        {rshape}, of the inputs' framework, with the dtype of ``weights``.

    Raises
    ------
    TypeError
        Index arrays that are not integers, weights not float32/float64, {xname} of another
        dtype, arrays of two frameworks.
    ValueError
        ``row`` and ``col`` of different lengths, ``weights`` of another length,
        ``{xname}`` whose length does not match ``shape`` and ``transpose``.
    IndexError
        (Concrete values) a row outside ``[0, shape[0])`` or a column outside
        ``[0, shape[1])``; under ``jax.jit`` the kernels skip such a synapse.

    Notes
    -----
    Differentiable in ``weights`` and {xdiff}; ``vmap`` over ``{xname}`` is {vmap}.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import {name}
    >>> row, col = np.array([1, 0, 1, 0]), np.array([1, 0, 1, 2])  # (1, 1) twice: adds up
    >>> w = np.array([1.0, 2.0, 3.0, 4.0], dtype=np.float32)
    >>> {name}(w, row, col, {ex1}, shape=(2, 3))
    {out1}
    >>> {name}(w, row, col, {ex2}, shape=(2, 3), transpose=True)
    {out2}
"""


def coomv(weights, row, col, vector, *, shape, transpose=False):
    return _call("coomv", weights, row, col, vector, shape, transpose, False, 1)


def event_coomv(weights, row, col, events, *, shape, transpose=False):
    return _call("event_coomv", weights, row, col, events, shape, transpose, True, 1)


def coomm(weights, row, col, matrix, *, shape, transpose=False):
    return _call("coomm", weights, row, col, matrix, shape, transpose, False, 2)


def event_coomm(weights, row, col, events, *, shape, transpose=False):
    return _call("event_coomm", weights, row, col, events, shape, transpose, True, 2)


_DOCS = {
    "coomv": dict(
        summary="COO sparse matrix-vector product ``A @ vector`` or ``A.T @ vector``.",
        extra="",
        xname="vector",
        xshape="1-D array",
        xkinds="float32 or float64",
        rshape="1-D",
        xdiff="``vector``",
        vmap="one :func:`coomm` launch",
        ex1="np.array([1.0, 10.0, 100.0], np.float32)",
        out1="array([402.,  40.], dtype=float32)",
        ex2="np.array([1.0, 10.0], np.float32)",
        out2="array([ 2., 40.,  4.], dtype=float32)",
    ),
    "event_coomv": dict(
        summary="Event-driven COO product ``A @ events`` or ``A.T @ events``.",
        extra=" A bool event counts as 1, a float event scales its synapses.\n\n"
        "    On the CPU, where ``row`` and ``col`` cannot change (read-only NumPy, JAX arrays,\n"
        "    also closed over in ``jax.jit``, torch tensors per version), the synapses are\n"
        "    indexed by source once, and a call with fewer than a quarter of the events active\n"
        "    (a tenth where the weights may change and are read through the index) reads the\n"
        "    active sources' synapses only, not every synapse (the same sums, added in another\n"
        "    order).",
        xname="events",
        xshape="1-D array",
        xkinds="bool or float32/float64",
        rshape="1-D",
        xdiff="float ``events``",
        vmap="one :func:`event_coomm` launch",
        ex1="np.array([False, True, True])",
        out1="array([4., 4.], dtype=float32)",
        ex2="np.array([True, False])",
        out2="array([2., 0., 4.], dtype=float32)",
    ),
    "coomm": dict(
        summary="Product of a COO matrix with a dense matrix: ``A @ matrix`` or ``A.T @ matrix``.",
        extra=" Column ``c`` of the result is :func:`coomv` of column ``c`` of ``matrix``.",
        xname="matrix",
        xshape="2-D array",
        xkinds="float32 or float64",
        rshape="``(m, K)`` or ``(n, K)``",
        xdiff="``matrix``",
        vmap="folded into its columns",
        ex1="np.eye(3, dtype=np.float32)",
        out1="array([[2., 0., 4.],\n           [0., 4., 0.]], dtype=float32)",
        ex2="np.eye(2, dtype=np.float32)",
        out2="array([[2., 0.],\n           [0., 4.],\n           [4., 0.]], dtype=float32)",
    ),
    "event_coomm": dict(
        summary="Event-driven product of a COO matrix with a batch of event vectors (the columns).",
        extra=" Column ``c`` of the result is :func:`event_coomv` of column ``c``.",
        xname="events",
        xshape="2-D array",
        xkinds="bool or float32/float64",
        rshape="``(m, K)`` or ``(n, K)``",
        xdiff="float ``events``",
        vmap="folded into its columns",
        ex1="np.array([[True], [True], [False]])",
        out1="array([[2.],\n           [4.]], dtype=float32)",
        ex2="np.array([[True, False], [False, True]])",
        out2="array([[2., 0.],\n           [0., 4.],\n           [4., 0.]], dtype=float32)",
    ),
}

for _f in (coomv, event_coomv, coomm, event_coomm):
    _f.__doc__ = _DOC.format(name=_f.__name__, **_DOCS[_f.__name__])
    _f.operator = _OPS[_f.__name__]
