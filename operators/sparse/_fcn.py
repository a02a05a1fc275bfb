"""Fixed-number connectivity (FCN): every presynaptic neuron has exactly ``k`` synapses.

The ``(m, n) = shape`` matrix ``A`` is given by ``indices`` of shape ``(m, k)``: row ``i``
has the synapses ``(i, indices[i, j])`` with weights ``weights[i, j]`` (or one shared
weight), and ``A[i, indices[i, j]] += weights[i, j]`` (a repeated column adds up). It is
CSR without ``indptr`` (``indptr = k * arange(m + 1)``): the kernels are the CSR kernels'
row functions with fixed bounds, and the conventions are those of :func:`event_csrmv`
(``transpose=False`` is ``A @ x``, ``transpose=True`` is ``A.T @ x``, the spiking
direction; bool events count as 1, float events scale; the result has the weights' dtype).

The Operators take ``indices`` and per-synapse ``weights`` flattened (``(m * k,)``, a view);
the public functions flatten them, so gradients come back in the shape given.
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype
from . import _fcn_kernels as K
from . import _index, _policy, _rules, _validate, _xp
from ._common import IEEE

__all__ = ["fcnmv", "event_fcnmv", "fcnmm", "event_fcnmm", "fixed_num_conn"]


def _op(name):
    return _OPS[name]


def _check_flat(name, weights, indices, m):
    if weights.dtype.kind != "f" or weights.dtype.itemsize not in (4, 8):
        raise TypeError(f"{name}: argument 'weights' must be float32 or float64, got {weights.dtype.name}")
    nnz = indices.shape[0]
    if weights.ndim not in (0, 1) or (weights.ndim == 1 and weights.shape[0] != nnz):
        raise ValueError(f"{name}: argument 'weights' must have shape () or ({nnz},), got {weights.shape}")
    if (m == 0 and nnz != 0) or (m > 0 and nnz % m != 0):
        raise ValueError(f"{name}: {nnz} synapses do not make {m} rows of equal length")


def _product_outs(name):
    def outs(weights, indices, x, *, shape, transpose):
        m, n = shape
        _check_flat(name, weights, indices, m)
        rows = n if transpose else m
        return ShapeDtype((rows,) + tuple(x.shape[1:]), weights.dtype)

    return outs


def _sddmm_outs(indices, a, b, *, shape):
    bd = a.dtype if b.dtype.kind == "b" else b.dtype
    return ShapeDtype((indices.shape[0],), np.result_type(a.dtype.numpy, bd.numpy))


def _product(name, kernel, mm_name=None):
    return Operator(
        name,
        kernel=kernel,
        outs=_product_outs(name),
        transpose=_rules.product_transpose(_op, name, "fcn_sddmm"),
        linear=("weights", "matrix" if kernel is K.fcnmm_kernel else "vector"),
        batch=_rules.mv_batch(_op, name, mm_name) if mm_name else _rules.mm_batch(_op, name),
        nondiff=("indices",),
        scratch=_policy.fcn_scratch,
        policy=_policy.fcn_policy,
        static_defaults={"transpose": False},
        # the gather's row sums vectorise across the loop only with fast_math (as csrmv)
        compile_options={"fast_math": True} if kernel is K.fcnmv_kernel else IEEE,
    )


_OPS: dict = {}
_OPS["event_fcnmm"] = _product("event_fcnmm", K.fcnmm_kernel)
_OPS["fcnmm"] = _product("fcnmm", K.fcnmm_kernel)
_OPS["event_fcnmv"] = _product("event_fcnmv", K.fcnmv_kernel, "event_fcnmm")
_OPS["fcnmv"] = _product("fcnmv", K.fcnmv_kernel, "fcnmm")


# event_fcnmv A @ s on the CPU where the column index of `indices` is cached: scatters the
# synapses of the active columns when few are active (fcnmv_cols_kernel), else gathers.
# Policy and scratch are the gather's: the scatter of the few active columns runs on one thread.
_OPS["event_fcnmv_cols"] = Operator(
    "event_fcnmv_cols",
    kernel=K.fcnmv_cols_kernel,
    linear=("weights", "vector"),
    nondiff=("indices", "ptr_t", "perm", "rows_t", "wsort"),
    compile_options={"fast_math": True},
    **_rules.route_parts(
        _op,
        "event_fcnmv",
        "fcn_sddmm",
        "event_fcnmm",
        "event_fcnmv_cols",
        3,
        outs=_product_outs("event_fcnmv"),
        scratch=_policy.fcn_scratch,
        policy=_policy.fcn_policy,
        fixed={"transpose": False},
    ),
)
_OPS["fcn_sddmm"] = Operator(
    "fcn_sddmm",
    kernel=K.fcn_sddmm_kernel,
    outs=_sddmm_outs,
    transpose=_rules.sddmm_transpose(_op, "fcnmv", "fcnmm"),
    linear=("a", "b"),
    nondiff=("indices",),
    policy=_policy.gather_policy(lambda i, a, b, shape: i.shape[0] * (a.shape[1] if a.ndim == 2 else 1)),
    compile_options=IEEE,
)
_CONN = Operator(
    "fixed_num_conn",
    kernel=K.fixed_num_conn_kernel,
    outs=lambda seed, n_cols, m, k, index_dtype, replace: ShapeDtype((m, k), index_dtype),
    policy=_policy.gather_policy(lambda seed, n_cols, m, k, index_dtype, replace: m * k * 8),
    compile_options=IEEE,
)


# ----------------------------------------------------------------------------- validation


def fcn(func, weights, indices, shape, *, like_dtype=None, like=None):
    """Validated, flattened ``(weights, indices, m, n, k, indices2d)`` of a fixed-number matrix.

    ``weights`` comes back with shape ``()`` (one shared weight) or ``(m * k,)``,
    ``indices`` with shape ``(m * k,)`` (views); ``indices2d`` is the validated ``(m, k)``
    array they view, the caller's own where no conversion was needed (the key of caches: a
    flattened view is a new object per call, under ``jax.jit`` a tracer). Values are checked
    when concrete (``_validate.index_range``).
    """
    m, n = _validate.shape2(func, shape)
    idx = _validate.index_array(func, "indices", indices, ndim=2)
    if idx.shape[0] != m:
        raise ValueError(
            f"{func}(): argument 'indices' must have shape (shape[0], k) = ({m}, k), got {tuple(idx.shape)}"
        )
    k = int(idx.shape[1])
    if m * k >= 2**31:
        raise ValueError(f"{func}(): at most 2**31 - 1 synapses are supported, got {m} x {k}")
    w = _validate.number_weight(weights, like_dtype, like if like is not None else idx)
    if w is None:
        w = _validate.as_array(func, "weights", weights)
        _validate.plain_tensor(func, "weights", w)
        d = _validate._dtype(func, "weights", w)
        if d not in _validate._FLOATS:
            raise TypeError(f"{func}(): argument 'weights' must be float32 or float64, got dtype {d.name}")
        ws = tuple(w.shape)
        if ws in ((), (1,)):
            w = _xp.reshape(w, ()) if ws else w
        elif ws == (m, k):
            w = _xp.reshape(w, (m * k,))
        else:
            raise ValueError(
                f"{func}(): argument 'weights' must have shape () or (1,) (one weight for every synapse) or "
                f"(shape[0], k) = ({m}, {k}) like 'indices', got {ws}"
            )
    _validate.index_range(func, "indices", idx, n)
    return w, _xp.reshape(idx, (m * k,)), m, n, k, idx


def _product_call(name, weights, indices, x, shape, transpose, allow_bool, ndim):
    transpose = _validate.check_bool(transpose, name, "transpose", numpy_bool=True)
    xname = ("events" if allow_bool else "matrix") if ndim == 2 else ("events" if allow_bool else "vector")
    x = _validate.as_array(name, xname, x)
    w, idx, m, n, _, base = fcn(
        name, weights, indices, shape, like_dtype=_validate.float_like(name, xname, x), like=x
    )
    length, where = (m, "shape[0] (transpose=True)") if transpose else (n, "shape[1] (transpose=False)")
    x = _validate.dense_operand(name, xname, x, length, ndim=ndim, allow_bool=allow_bool, where=where)
    if name == "event_fcnmv" and not transpose and m > 0 and _policy._cpu():
        cols = _index.column_route(w, idx, None, m, n, key=(base,), weights=weights)
        if cols is not None:
            return _OPS["event_fcnmv_cols"](w, idx, x, *cols, shape=(m, n))
    return _OPS[name](w, idx, x, shape=(m, n), transpose=transpose)


# ----------------------------------------------------------------------------- public functions

_DOC = r"""{summary}

    ``A`` is the ``(m, n) = shape`` fixed-number matrix: row ``i`` has the ``k`` synapses
    ``(i, indices[i, j])`` of weights ``weights[i, j]`` (repeated columns add up):

    .. math::

        y_i = \sum_{{j<k}} w_{{ij}}\, x_{{c_{{ij}}}} \quad (\text{{transpose=False}}), \qquad
        y_c = \sum_{{i{nz}}} \sum_{{j:\ c_{{ij}} = c}} w_{{ij}}\, x_i \quad (\text{{transpose=True}})

    with ``c_ij = indices[i, j]``.{extra}

    Parameters
    ----------
    weights : array of shape (), (1,) or (m, k), float32 or float64, or a Python float
        One weight for every synapse, or one per synapse (the layout of ``indices``).
    indices : array of shape (m, k), int32 or int64
        Column index of each synapse (e.g. from :func:`fixed_num_conn`).
    {xname} : {xshape}, {xkinds}
        ``shape[1]`` rows (``transpose=False``) or ``shape[0]`` (``transpose=True``).
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        ``False``: ``A @ {xname}``; ``True``: ``A.T @ {xname}``{tnote}.

    Returns
    -------
    array
        {rshape}, of the inputs' framework, with the dtype of ``weights``.

    Raises
    ------
    TypeError
        Index arrays that are not integers, weights that are not float32/float64, {xname}
        of another dtype, arrays of two frameworks.
    ValueError
        ``indices`` not of shape ``(shape[0], k)``, ``weights`` of another shape than
        ``indices``, ``{xname}`` whose length does not match ``shape`` and ``transpose``.
    IndexError
        (Concrete values) a column index outside ``[0, shape[1])``. Under ``jax.jit`` the
        kernels clamp (gathers) or skip (scatters) such an index instead.

    Notes
    -----
    Differentiable (JAX, torch) in ``weights`` and {xdiff}; ``vmap`` over ``{xname}`` is
    {vmap}. The Operator is ``{name}.operator``.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import {name}
    >>> indices = np.array([[0, 2], [1, 1]])  # row 1 has column 1 twice
    >>> w = np.array([[1.0, 2.0], [3.0, 4.0]], dtype=np.float32)
    >>> {name}(w, indices, {ex1}, shape=(2, 3))
    {out1}
    >>> {name}(w, indices, {ex2}, shape=(2, 3), transpose=True)
    {out2}
"""


def fcnmv(weights, indices, vector, *, shape, transpose=False):
    return _product_call("fcnmv", weights, indices, vector, shape, transpose, False, 1)


def event_fcnmv(weights, indices, events, *, shape, transpose=False):
    return _product_call("event_fcnmv", weights, indices, events, shape, transpose, True, 1)


def fcnmm(weights, indices, matrix, *, shape, transpose=False):
    return _product_call("fcnmm", weights, indices, matrix, shape, transpose, False, 2)


def event_fcnmm(weights, indices, events, *, shape, transpose=False):
    return _product_call("event_fcnmm", weights, indices, events, shape, transpose, True, 2)


_DOCS = {
    "fcnmv": dict(
        summary="Fixed-number sparse matrix-vector product ``A @ vector`` or ``A.T @ vector``.",
        nz="",
        extra="",
        xname="vector",
        xshape="1-D array",
        xkinds="float32 or float64",
        tnote="",
        rshape="1-D",
        xdiff="``vector``",
        vmap="one :func:`fcnmm` launch",
        ex1="np.array([1.0, 10.0, 100.0], np.float32)",
        out1="array([201.,  70.], dtype=float32)",
        ex2="np.array([1.0, 1.0], np.float32)",
        out2="array([1., 7., 2.], dtype=float32)",
    ),
    "event_fcnmv": dict(
        summary="Event-driven fixed-number product ``A @ events`` or ``A.T @ events``.",
        nz=r":\ x_i \neq 0",
        extra=" ``transpose=True`` visits only the rows of nonzero events: the\n    spiking direction, "
        "``k`` synapses per spike. A bool event counts as 1; a float event\n    scales its synapses. "
        "The result equals :func:`fcnmv` on the float events. On the CPU, with ``indices``\n    that "
        "cannot change (read-only NumPy, JAX, torch per version), ``transpose=False`` with\n    fewer "
        "than ``n / 4`` active events scatters only the active columns' synapses through\n    a cached "
        "column index (the sums then come in another order; ``docs/sparse.md``).",
        xname="events",
        xshape="1-D array",
        xkinds="bool or float32/float64",
        tnote=", visiting only the rows of nonzero events",
        rshape="1-D",
        xdiff="float ``events`` (bool events have no gradient)",
        vmap="one :func:`event_fcnmm` launch",
        ex1="np.array([True, False, True])",
        out1="array([3., 0.], dtype=float32)",
        ex2="np.array([False, True])",
        out2="array([0., 7., 0.], dtype=float32)",
    ),
    "fcnmm": dict(
        summary="Product of a fixed-number matrix with a dense matrix: ``A @ matrix`` or ``A.T @ matrix``.",
        nz="",
        extra=" Column ``c`` of the result is :func:`fcnmv` of column ``c`` of ``matrix``.",
        xname="matrix",
        xshape="2-D array",
        xkinds="float32 or float64",
        tnote="",
        rshape="Shape ``(m, K)`` or ``(n, K)``",
        xdiff="``matrix``",
        vmap="folded into its columns",
        ex1="np.eye(3, dtype=np.float32)",
        out1="array([[1., 0., 2.],\n           [0., 7., 0.]], dtype=float32)",
        ex2="np.eye(2, dtype=np.float32)",
        out2="array([[1., 0.],\n           [0., 7.],\n           [2., 0.]], dtype=float32)",
    ),
    "event_fcnmm": dict(
        summary="Event-driven product of a fixed-number matrix with a batch of event vectors (columns).",
        nz=r":\ x_i \neq 0",
        extra=" Column ``c`` of the result is :func:`event_fcnmv` of column ``c``.",
        xname="events",
        xshape="2-D array",
        xkinds="bool or float32/float64",
        tnote=", visiting only the nonzero events",
        rshape="Shape ``(m, K)`` or ``(n, K)``",
        xdiff="float ``events``",
        vmap="folded into its columns",
        ex1="np.array([[True], [False], [True]])",
        out1="array([[3.],\n           [0.]], dtype=float32)",
        ex2="np.array([[True, False], [False, True]])",
        out2="array([[1., 0.],\n           [0., 7.],\n           [2., 0.]], dtype=float32)",
    ),
}

for _f in (fcnmv, event_fcnmv, fcnmm, event_fcnmm):
    _f.__doc__ = _DOC.format(name=_f.__name__, **_DOCS[_f.__name__])
    _f.operator = _OPS[_f.__name__]


def fixed_num_conn(n_pre, n_post, k, seed, *, replace=False, index_dtype=np.int32):
    """Fixed-number connectivity generated by a kernel: ``k`` postsynaptic columns per row.

    Row ``i`` draws its columns from the counter-based generator of the just-in-time
    connectivity (row ``i``'s stream under a key of its own; integer arithmetic only), so
    the result is a pure function of ``(n_pre, n_post, k, seed, replace)``, the same on
    every device and independent of the number of rows (row ``i`` does not change when
    rows are added). Columns increase within each row.

    ``replace=False``: ``k`` distinct columns (``k <= n_post``), every ``k``-subset equally
    likely (Floyd's algorithm). ``replace=True``: ``k`` independent uniform columns (a
    column may repeat; its synapses add up). Uniform integers in ``[0, b)`` are the high
    32 bits of a draw times ``b``, shifted (a bias below ``b / 2**32``).

    Parameters
    ----------
    n_pre, n_post : int
        Rows (presynaptic neurons) and columns (postsynaptic neurons).
    k : int
        Synapses per row.
    seed : int
        32-bit seed (taken modulo 2**32).
    replace : bool, optional
        Draw with replacement.
    index_dtype : numpy dtype, optional
        ``int32`` (default) or ``int64``.

    Returns
    -------
    numpy.ndarray
        ``(n_pre, k)``, **read-only** (it promises not to change, so the fixed-number
        operators check its values once; ``.copy()`` gives a writeable array).

    Raises
    ------
    TypeError
        Non-integer sizes or seed, an ``index_dtype`` that is not int32/int64.
    ValueError
        Negative sizes, ``k > n_post`` without replacement, ``k > 0`` with ``n_post == 0``,
        more than 2**31 - 1 synapses.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import fixed_num_conn, event_fcnmv
    >>> idx = fixed_num_conn(1000, 500, 20, seed=1)
    >>> idx.shape, bool((np.diff(idx, axis=1) > 0).all()), bool(idx.max() < 500)
    ((1000, 20), True, True)
    >>> bool((fixed_num_conn(1000, 500, 20, seed=1) == idx).all())
    True
    >>> spikes = np.zeros(1000, bool); spikes[:10] = True
    >>> float(event_fcnmv(np.float32(1.0), idx, spikes, shape=(1000, 500), transpose=True).sum())
    200.0
    """
    func = "fixed_num_conn"
    m, n = _validate.shape2(func, (n_pre, n_post), "arguments (n_pre, n_post)")
    try:
        import operator

        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{func}(): argument 'k' must be an int, got {k!r}") from None
    replace = _validate.check_bool(replace, func, "replace", numpy_bool=True)
    if k < 0:
        raise ValueError(f"{func}(): argument 'k' must be non-negative, got {k}")
    if not replace and k > n:
        raise ValueError(f"{func}(): k = {k} distinct columns do not fit n_post = {n} (use replace=True)")
    if k > 0 and n == 0 and m > 0:
        raise ValueError(f"{func}(): k = {k} synapses per row need n_post > 0")
    if m * k >= 2**31:
        raise ValueError(f"{func}(): {m} x {k} synapses exceed 2**31 - 1")
    try:
        idt = np.dtype(index_dtype)
    except TypeError:
        idt = None
    if idt not in _validate._INDEX_DTYPES:
        raise TypeError(f"{func}(): argument 'index_dtype' must be int32 or int64, got {index_dtype!r}")
    s = np.asarray(_xp.host(_validate.int_scalar(func, "seed", seed, like=np.zeros(()))))
    out = _xp.host_op(_CONN, s, np.asarray(n, np.int64), m=m, k=k, index_dtype=idt.name, replace=replace)
    if not out.flags.owndata:  # own the memory, so that read-only means unchanging (_once)
        out = out.copy()
    out.flags.writeable = False
    return out
