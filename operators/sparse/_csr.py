"""CSR operators: event-driven and dense-operand products, conversions.

Conventions (all operators):

- ``A`` is the ``(m, n) = shape`` matrix in CSR form: row ``i`` holds the synapses
  ``indptr[i]:indptr[i + 1]`` with columns ``indices[...]`` and values ``weights[...]``.
  In a network, rows are presynaptic neurons and columns postsynaptic ones.
- ``weights`` has shape ``()`` or ``(1,)`` (one weight shared by every synapse,
  "homogeneous") or ``(nnz,)``; float32 or float64; the result has its dtype.
- ``transpose=False`` computes ``A @ x`` (``x`` indexed by columns, length ``n``);
  ``transpose=True`` computes ``A.T @ x`` (``x`` indexed by rows, length ``m``): the
  spiking-network direction, where only the rows of active neurons are visited.
- Event operands are bool (a synapse counts when its event is true) or float (the
  value scales the synapse; zeros are skipped). ``event_csrmv`` equals ``csrmv`` on the
  same float input (one kernel), bit for bit outside the column route of ``A @ s``.

Every product is a :class:`tiarray.Operator` (``fn.operator``): it runs on NumPy, PyTorch,
JAX (``jit``, ``vmap``, ``grad``, ``jvp``) and CuPy arrays and TiArrays, and returns arrays
of the same kind. The public functions check and normalise their arguments (shapes and
dtypes always, values when they are concrete), then call the Operator.
"""

from __future__ import annotations

import numpy as np

from tiarray._internal import IEEE

from .._operator import Operator, ShapeDtype
from . import _csr_kernels as K
from . import _index, _policy, _rules, _validate, _xp

__all__ = [
    "event_csrmv",
    "csrmv",
    "event_csrmm",
    "csrmm",
    "csr_sddmm",
    "csr_to_dense",
    "csr_from_dense",
    "csr_transpose",
]

_F32 = np.dtype(np.float32)


# ----------------------------------------------------------------------------- outs


def _safe_weights(name, weights, indices):
    """The kernels read ``weights[j]`` for every synapse ``j``: refuse anything shorter."""
    if weights.dtype.kind != "f" or weights.dtype.itemsize not in (4, 8):
        raise TypeError(f"{name}: argument 'weights' must be float32 or float64, got {weights.dtype.name}")
    if weights.ndim == 1 and weights.shape[0] == indices.shape[0]:
        return
    if weights.ndim == 0:
        return
    raise ValueError(
        f"{name}: argument 'weights' must have shape () (one weight for every synapse) or (nnz,) = "
        f"({indices.shape[0]},), got {weights.shape}"
    )


def _product_outs(name):
    def outs(weights, indices, indptr, x, *, shape, transpose):
        _safe_weights(name, weights, indices)
        m, n = shape
        rows = n if transpose else m
        if x.ndim == 1:
            return ShapeDtype((rows,), weights.dtype)
        return ShapeDtype((rows, x.shape[1]), weights.dtype)

    return outs


# ----------------------------------------------------------------------------- rules


def _op(name):
    return _OPS[name]


_sddmm_transpose = _rules.sddmm_transpose(_op, "csrmv", "csrmm")


def _sddmm_outs(indices, indptr, a, b, *, shape):
    bd = a.dtype if b.dtype.kind == "b" else b.dtype
    dt = np.result_type(a.dtype.numpy, bd.numpy)
    return ShapeDtype((indices.shape[0],), dt)


def _todense_outs(weights, indices, indptr, *, shape):
    _safe_weights("csr_to_dense", weights, indices)
    return ShapeDtype(tuple(shape), weights.dtype)


def _todense_transpose(cts, primals, *, shape):
    (ct,) = cts
    w, idx, ptr = primals
    g = _SAMPLE(idx, ptr, ct, shape=shape)  # g[j] = ct[row_j, col_j]
    if len(w.shape) == 0:
        g = g.sum().reshape(())
    return (_xp.astype(g, w.dtype), None, None)


def _sample_transpose(cts, primals, *, shape):
    (ct,) = cts
    idx, ptr, dense = primals
    return (None, None, _xp.astype(_TODENSE(ct, idx, ptr, shape=shape), dense.dtype))


# ----------------------------------------------------------------------------- operators


def _product(name, kernel, mm_name=None):
    x_name = "matrix" if kernel is K.csrmm_kernel else "vector"
    return Operator(
        name,
        kernel=kernel,
        outs=_product_outs(name),
        transpose=_rules.product_transpose(_op, name, "csr_sddmm"),
        linear=("weights", x_name),
        batch=_rules.mv_batch(_op, name, mm_name) if mm_name else _rules.mm_batch(_op, name),
        nondiff=("indices", "indptr"),
        scratch=_policy.csr_scratch,
        policy=_policy.csr_policy,
        static_defaults={"transpose": False},
        # the gather's row sums vectorise across the loop only with fast_math (1.3-1.9x)
        compile_options={"fast_math": True} if kernel is K.csrmv_kernel else IEEE,
    )


_OPS: dict = {}
_OPS["event_csrmm"] = _product("event_csrmm", K.csrmm_kernel)
_OPS["csrmm"] = _product("csrmm", K.csrmm_kernel)
_OPS["event_csrmv"] = _product("event_csrmv", K.csrmv_kernel, "event_csrmm")


# event_csrmv A @ s on the CPU where the column index of the structure is cached: scatters
# the synapses of the active columns when few are active (csrmv_cols_kernel), else gathers.
# Policy and scratch are the gather's: the scatter of the few active columns runs on one thread.
_OPS["event_csrmv_cols"] = Operator(
    "event_csrmv_cols",
    kernel=K.csrmv_cols_kernel,
    linear=("weights", "vector"),
    nondiff=("indices", "indptr", "ptr_t", "perm", "rows_t", "wsort"),
    compile_options={"fast_math": True},
    **_rules.route_parts(
        _op,
        "event_csrmv",
        "csr_sddmm",
        "event_csrmm",
        "event_csrmv_cols",
        4,
        outs=_product_outs("event_csrmv"),
        scratch=_policy.csr_scratch,
        policy=_policy.csr_policy,
        fixed={"transpose": False},
    ),
)
_OPS["csrmv"] = _product("csrmv", K.csrmv_kernel, "csrmm")
_OPS["csr_sddmm"] = _SDDMM = Operator(
    "csr_sddmm",
    kernel=K.csr_sddmm_kernel,
    outs=_sddmm_outs,
    transpose=_sddmm_transpose,
    linear=("a", "b"),
    nondiff=("indices", "indptr"),
    policy=_policy.gather_policy(lambda i, p, a, b, shape: i.shape[0] * (a.shape[1] if a.ndim == 2 else 1)),
    compile_options=IEEE,
)
_TODENSE = Operator(
    "csr_to_dense",
    kernel=K.csr_to_dense_kernel,
    outs=_todense_outs,
    transpose=_todense_transpose,
    linear=("weights",),
    nondiff=("indices", "indptr"),
    policy=_policy.gather_policy(lambda w, i, p, shape: shape[0] * shape[1] // 4 + i.shape[0]),
    compile_options=IEEE,
)
_SAMPLE = Operator(
    "csr_sample",
    kernel=K.csr_sample_kernel,
    outs=lambda indices, indptr, dense, shape: ShapeDtype((indices.shape[0],), dense.dtype),
    transpose=_sample_transpose,
    linear=("dense",),
    nondiff=("indices", "indptr"),
    policy=_policy.gather_policy(lambda i, p, d, shape: i.shape[0]),
    compile_options=IEEE,
)
_COUNTS = Operator(
    "csr_from_dense_counts",
    kernel=K.dense_row_counts_kernel,
    outs=lambda dense: ShapeDtype((dense.shape[0],), "int64"),
    policy=_policy.gather_policy(lambda d: d.shape[0] * d.shape[1] // 4),
    compile_options=IEEE,
)
_FILL = Operator(
    "csr_from_dense_fill",
    kernel=K.dense_to_csr_fill_kernel,
    outs=lambda dense, indptr, nnz: (ShapeDtype((nnz,), dense.dtype), ShapeDtype((nnz,), indptr.dtype)),
    policy=_policy.gather_policy(lambda d, p, nnz: d.shape[0] * d.shape[1] // 4),
    compile_options=IEEE,
)
_COLCOUNTS = Operator(
    "csr_transpose_counts",
    kernel=K.csr_col_counts_kernel,
    outs=lambda indices, indptr, n: ShapeDtype((n,), "int64"),
    policy=lambda *a, **k: "serial",
    compile_options=IEEE,
)
_TFILL = Operator(
    "csr_transpose_fill",
    kernel=K.csr_transpose_fill_kernel,
    outs=lambda indices, indptr, indptr_t: (
        ShapeDtype(indices.shape, indices.dtype),
        ShapeDtype(indices.shape, "int64"),
        ShapeDtype((indptr_t.shape[0] - 1,), "int64"),
    ),
    policy=lambda *a, **k: "serial",
    compile_options=IEEE,
)


# ----------------------------------------------------------------------------- public functions

_XNAME = {True: "events", False: "vector"}


def _product_call(name, weights, indices, indptr, x, shape, transpose, allow_bool, ndim):
    transpose = _validate.check_bool(transpose, name, "transpose", numpy_bool=True)
    xname = ("events" if allow_bool else "matrix") if ndim == 2 else _XNAME[allow_bool]
    x = _validate.as_array(name, xname, x)
    w, idx, ptr, m, n = _validate.csr(
        name, weights, indices, indptr, shape, like_dtype=_validate.float_like(name, xname, x), like=x
    )
    if transpose:
        x = _validate.dense_operand(name, xname, x, m, ndim=ndim, allow_bool=allow_bool,
                                    where="shape[0] (transpose=True)")  # fmt: skip
    else:
        x = _validate.dense_operand(name, xname, x, n, ndim=ndim, allow_bool=allow_bool,
                                    where="shape[1] (transpose=False)")  # fmt: skip
    if name == "event_csrmv" and not transpose and m > 0 and _policy._cpu():
        cols = _index.column_route(w, idx, ptr, m, n, key=(idx, ptr), weights=weights)
        if cols is not None:
            return _OPS["event_csrmv_cols"](w, idx, ptr, x, *cols, shape=(m, n))
    return _OPS[name](w, idx, ptr, x, shape=(m, n), transpose=transpose)


def event_csrmv(weights, indices, indptr, events, *, shape, transpose=False):
    r"""Event-driven sparse matrix-vector product ``A @ events`` or ``A.T @ events``.

    With ``A`` the ``(m, n)`` CSR matrix (row ``i`` holds the synapses
    ``j in [indptr[i], indptr[i+1])``, of column ``c_j = indices[j]`` and weight ``w_j``):

    .. math::

        y_i = \sum_{j \in \mathrm{row}\ i} w_j\, e_{c_j} \quad (\text{transpose=False}),
        \qquad
        y_c = \sum_{i:\ e_i \neq 0}\ \sum_{j \in \mathrm{row}\ i,\ c_j = c} w_j\, e_i
        \quad (\text{transpose=True}).

    ``transpose=True`` is the spiking-network direction (presynaptic spikes to
    postsynaptic inputs): only the rows of active events are read. A bool event counts
    as 1; a float event scales its synapses (zeros are skipped). The result equals
    :func:`csrmv` on the same (float) input, bit for bit, except on the column route:
    on the CPU, with a structure that cannot change (read-only NumPy, JAX, torch per
    version), ``transpose=False`` with fewer than ``n / 4`` active events scatters only
    the active columns' synapses through a cached column index, adding the same terms in
    column order (``docs/sparse.md``).

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64, or a Python float
        One weight for every synapse (homogeneous), or one per synapse.
    indices : array of shape (nnz,), int32 or int64
        Column index of each synapse.
    indptr : array of shape (shape[0] + 1,), int32 or int64
        Row pointers.
    events : 1-D array, bool or float32/float64
        Length ``shape[1]`` when ``transpose=False``, ``shape[0]`` when ``True``.
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        ``False``: ``A @ events`` (length ``m``); ``True``: ``A.T @ events`` (length ``n``).

    Returns
    -------
    array
        1-D, of the inputs' framework and device (NumPy, torch, JAX, CuPy, TiArray),
        with the dtype of ``weights``.

    Raises
    ------
    TypeError
        Index arrays that are not integers, weights that are not float32/float64,
        events that are neither bool nor float, arrays of two frameworks.
    ValueError
        ``indptr`` of the wrong length or (concrete values) not starting at 0, decreasing,
        not ending at ``nnz``; ``weights`` of the wrong length; ``events`` whose length
        does not match ``shape`` and ``transpose``.
    IndexError
        (Concrete values) a column index outside ``[0, shape[1])``.

    Notes
    -----
    Differentiable (JAX ``grad``/``jvp``/``vjp``, ``torch.autograd``) in ``weights`` and in
    float ``events``; ``vmap`` over ``events`` is one :func:`event_csrmm` launch. The
    Operator is ``event_csrmv.operator`` (JAX primitive and torch op ``tiarray::event_csrmv``).

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_csrmv
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    >>> event_csrmv(w, indices, indptr, np.array([True, False, True]), shape=(2, 3))
    array([3., 0.], dtype=float32)
    >>> event_csrmv(w, indices, indptr, np.array([True, True]), shape=(2, 3), transpose=True)
    array([1., 3., 2.], dtype=float32)
    """
    return _product_call("event_csrmv", weights, indices, indptr, events, shape, transpose, True, 1)


def csrmv(weights, indices, indptr, vector, *, shape, transpose=False):
    r"""Sparse matrix-vector product ``A @ vector`` or ``A.T @ vector``.

    .. math::

        y_i = \sum_{j \in \mathrm{row}\ i} w_j\, v_{c_j} \quad (\text{transpose=False}),
        \qquad
        y_c = \sum_i \sum_{j \in \mathrm{row}\ i,\ c_j = c} w_j\, v_i \quad (\text{transpose=True}).

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64, or a Python float
        One weight for every synapse, or one per synapse.
    indices : array of shape (nnz,), int32 or int64
        Column index of each synapse.
    indptr : array of shape (shape[0] + 1,), int32 or int64
        Row pointers.
    vector : 1-D array, float32 or float64
        Length ``shape[1]`` (``transpose=False``) or ``shape[0]`` (``transpose=True``).
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        Multiply by ``A.T`` instead of ``A``.

    Returns
    -------
    array
        1-D, of the inputs' framework, with the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`event_csrmv`; a bool ``vector`` is refused (use :func:`event_csrmv`).

    Notes
    -----
    Differentiable in ``weights`` and ``vector``; ``vmap`` over ``vector`` is one
    :func:`csrmm` launch. Rows whose vector entry is zero are skipped when transposed,
    exactly as :func:`event_csrmv` does.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csrmv
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0])
    >>> csrmv(w, indices, indptr, np.array([1.0, 10.0, 100.0]), shape=(2, 3))
    array([201.,  30.])
    """
    return _product_call("csrmv", weights, indices, indptr, vector, shape, transpose, False, 1)


def event_csrmm(weights, indices, indptr, events, *, shape, transpose=False):
    r"""Event-driven product of a CSR matrix with a batch of event vectors (one per column).

    ``Y = A @ E`` (``transpose=False``) or ``Y = A.T @ E`` (``True``): column ``c`` of ``Y``
    is ``event_csrmv(weights, indices, indptr, E[:, c], ...)``.

    Parameters
    ----------
    weights, indices, indptr, shape
        The CSR matrix ``A``, as in :func:`event_csrmv`.
    events : 2-D array, bool or float32/float64
        Shape ``(shape[1], k)`` (``transpose=False``) or ``(shape[0], k)`` (``True``).
    transpose : bool, optional
        Multiply by ``A.T`` instead of ``A``.

    Returns
    -------
    array
        Shape ``(shape[0], k)`` or ``(shape[1], k)``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`event_csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import event_csrmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    >>> E = np.array([[True, False], [False, True], [True, True]])
    >>> event_csrmm(w, indices, indptr, E, shape=(2, 3))
    array([[3., 2.],
           [0., 3.]], dtype=float32)
    """
    return _product_call("event_csrmm", weights, indices, indptr, events, shape, transpose, True, 2)


def csrmm(weights, indices, indptr, matrix, *, shape, transpose=False):
    r"""Product of a CSR matrix with a dense matrix: ``A @ matrix`` or ``A.T @ matrix``.

    .. math::

        Y_{i,c} = \sum_{j \in \mathrm{row}\ i} w_j\, B_{c_j, c} \quad (\text{transpose=False}).

    Parameters
    ----------
    weights, indices, indptr, shape
        The CSR matrix ``A``, as in :func:`csrmv`.
    matrix : 2-D array, float32 or float64
        Shape ``(shape[1], k)`` (``transpose=False``) or ``(shape[0], k)`` (``True``).
    transpose : bool, optional
        Multiply by ``A.T`` instead of ``A``.

    Returns
    -------
    array
        Shape ``(shape[0], k)`` or ``(shape[1], k)``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csrmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0])
    >>> csrmm(w, indices, indptr, np.eye(3), shape=(2, 3))
    array([[1., 0., 2.],
           [0., 3., 0.]])
    """
    return _product_call("csrmm", weights, indices, indptr, matrix, shape, transpose, False, 2)


for _f in (event_csrmv, csrmv, event_csrmm, csrmm):
    _f.operator = _OPS[_f.__name__]


def csr_sddmm(indices, indptr, a, b, *, shape):
    r"""Sampled dense-dense product on the sparsity pattern of a CSR matrix.

    .. math::

        \mathrm{out}_j = \sum_c a_{\mathrm{row}(j), c}\, b_{c_j, c}
        \qquad (\text{1-D: } a_{\mathrm{row}(j)}\, b_{c_j})

    for every synapse ``j`` (row ``row(j)``, column ``c_j = indices[j]``). It is the
    gradient of :func:`csrmv` / :func:`csrmm` with respect to per-synapse weights.

    Parameters
    ----------
    indices, indptr : arrays
        The sparsity pattern of an ``(m, n) = shape`` CSR matrix.
    a : array of shape (m,) or (m, k), float32 or float64
    b : array of shape (n,) or (n, k), bool, float32 or float64
    shape : tuple of two ints

    Returns
    -------
    array
        Shape ``(nnz,)``, float64 if either operand is float64, else float32.

    Raises
    ------
    TypeError, ValueError, IndexError
        Invalid connectivity (as :func:`csrmv`), operands of the wrong shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csr_sddmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> csr_sddmm(indices, indptr, np.array([1.0, 2.0]), np.array([10.0, 20.0, 30.0]), shape=(2, 3))
    array([10., 30., 40.])
    """
    func = "csr_sddmm"
    a = _validate.as_array(func, "a", a)
    _, idx, ptr, m, n = _validate.csr(func, 0.0, indices, indptr, shape, like=a)
    nd = len(a.shape)
    if nd not in (1, 2):
        raise ValueError(f"{func}(): argument 'a' must be 1-D or 2-D, got shape {tuple(a.shape)}")
    a = _validate.dense_operand(func, "a", a, m, ndim=nd, allow_bool=False, where="shape[0]")
    b = _validate.dense_operand(func, "b", b, n, ndim=nd, allow_bool=True, where="shape[1]")
    if nd == 2 and a.shape[1] != b.shape[1]:
        raise ValueError(f"{func}(): arguments 'a' and 'b' must have the same number of columns, "
                         f"got {tuple(a.shape)} and {tuple(b.shape)}")  # fmt: skip
    return _SDDMM(idx, ptr, a, b, shape=(m, n))


csr_sddmm.operator = _SDDMM


def csr_to_dense(weights, indices, indptr, *, shape):
    r"""The dense ``(m, n)`` matrix of a CSR matrix (duplicate entries add up).

    .. math::

        D_{i,k} = \sum_{j \in \mathrm{row}\ i,\ c_j = k} w_j

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64
    indices, indptr : arrays
        int32 or int64, as in :func:`csrmv`.
    shape : tuple of two ints

    Returns
    -------
    array
        Shape ``shape``, of the inputs' framework, with the dtype of ``weights``.
        Differentiable in ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csr_to_dense
    >>> csr_to_dense(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 3]), shape=(2, 3))
    array([[1., 0., 2.],
           [0., 3., 0.]])
    """
    w, idx, ptr, m, n = _validate.csr("csr_to_dense", weights, indices, indptr, shape)
    return _TODENSE(w, idx, ptr, shape=(m, n))


csr_to_dense.operator = _TODENSE


def csr_from_dense(dense, *, index_dtype=np.int32):
    """The CSR form ``(weights, indices, indptr)`` of the nonzero entries of a dense matrix.

    An eager helper (its output size depends on the values): it runs where values are
    concrete, not under ``jax.jit``.

    Parameters
    ----------
    dense : 2-D array, float32 or float64
    index_dtype : numpy dtype, optional
        ``int32`` (default) or ``int64``, for both index arrays.

    Returns
    -------
    weights : array
        ``(nnz,)``, the dtype of ``dense``, of its framework.
    indices : array
        ``(nnz,)``, column indices in increasing order within each row.
    indptr : array
        ``(m + 1,)``.

    Raises
    ------
    TypeError
        A ``dense`` that is not float32/float64, an ``index_dtype`` that is not
        int32/int64, a traced ``dense``.
    ValueError
        A ``dense`` that is not 2-D, or with more nonzeros than ``index_dtype`` can count.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csr_from_dense
    >>> w, idx, ptr = csr_from_dense(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    >>> w, idx, ptr
    (array([1., 2., 3.]), array([0, 2, 1], dtype=int32), array([0, 2, 3], dtype=int32))
    """
    func = "csr_from_dense"
    like = _validate.as_array(func, "dense", dense)
    d = _host(func, "dense", like)
    if d.dtype not in _validate._FLOAT_DTYPES:
        raise TypeError(f"{func}(): argument 'dense' must be float32 or float64, got dtype {d.dtype}")
    if d.ndim != 2:
        raise ValueError(f"{func}(): argument 'dense' must be 2-D, got shape {d.shape}")
    idt = np.dtype(index_dtype)
    if idt not in _validate._INDEX_DTYPES:
        raise TypeError(f"{func}(): argument 'index_dtype' must be int32 or int64, got {index_dtype!r}")
    d = np.ascontiguousarray(d)
    m = d.shape[0]
    counts = _xp.host_op(_COUNTS, d)
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    if nnz > np.iinfo(idt).max or nnz >= 2**31:
        raise ValueError(f"{func}(): {nnz} nonzeros do not fit {idt} indices (Taichi arrays hold < 2**31)")
    indptr = indptr.astype(idt)
    weights, indices = _xp.host_op(_FILL, d, indptr, nnz=nnz)
    return tuple(_xp.from_numpy(a, like) for a in (weights, indices, indptr))


def _host(func, name, x):
    h = _xp.host(x)
    if h is None:
        raise TypeError(
            f"{func}(): argument '{name}' is traced (jax.jit, torch.compile); this helper's output size "
            "depends on the values: call it outside the traced function"
        )
    return h


def csr_transpose(weights, indices, indptr, *, shape, return_permutation=False):
    """The CSR form of ``A.T`` (the CSC form of ``A``), built once by two kernels.

    Use it where a product needs the other direction many times with the same
    connectivity: ``event_csrmv(*csr_transpose(w, i, p, shape=(m, n)), e, shape=(n, m),
    transpose=True)`` computes ``A @ e`` by visiting only the columns of active events
    (the synapses of the active events), instead of reading every column index as
    ``event_csrmv(w, i, p, e, shape=(m, n))`` must; and
    ``csrmv(*csr_transpose(...), x, shape=(n, m))`` computes ``A.T @ x`` as a gather. This
    is what a prebuilt transposed ``torch.sparse_csr_tensor`` does. :class:`CSR` does it
    for you.

    An eager helper: it reads the connectivity on the host (not under ``jax.jit``).

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64
    indices, indptr : arrays
        The CSR matrix ``A`` of shape ``shape``, as in :func:`csrmv`.
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    return_permutation : bool, optional
        Also return ``perm`` with ``weights_t = weights[perm]``: when only the weights
        change (learning), ``weights[perm]`` updates the transpose without a rebuild.

    Returns
    -------
    weights_t : array
        Shape ``()`` for one shared weight, else ``(nnz,)``.
    indices_t : array
        Row indices of ``A`` (column indices of ``A.T``), increasing within each column;
        the dtype of ``indices``.
    indptr_t : array
        ``(n + 1,)``, the dtype of ``indptr``.
    perm : array, optional
        ``(nnz,)`` int64, only with ``return_permutation=True``.

    All of the framework of ``indices``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`; traced inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import csr_transpose, csr_to_dense
    >>> w, i, p = np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 3])
    >>> wt, it, pt = csr_transpose(w, i, p, shape=(2, 3))
    >>> csr_to_dense(wt, it, pt, shape=(3, 2))
    array([[1., 0.],
           [0., 3.],
           [2., 0.]])
    """
    func = "csr_transpose"
    like = _validate.as_array(func, "indices", indices)
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape)
    w = _host(func, "weights", w)
    idx = np.ascontiguousarray(_host(func, "indices", idx))
    ptr = np.ascontiguousarray(_host(func, "indptr", ptr))
    counts = _xp.host_op(_COLCOUNTS, idx, ptr, n=n)
    indptr_t = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr_t[1:])
    indptr_t = indptr_t.astype(ptr.dtype)
    indices_t, perm, _ = _xp.host_op(_TFILL, idx, ptr, indptr_t)
    weights_t = w if w.ndim == 0 else w[perm]
    out = (weights_t, indices_t, indptr_t) + ((perm,) if return_permutation else ())
    return tuple(_xp.from_numpy(np.asarray(a), like) for a in out)
