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
  value scales the synapse; zeros are skipped). For every input, ``event_csrmv`` equals
  ``csrmv`` on the same float input: they share one kernel.
"""

from __future__ import annotations

import numpy as np

from . import _csr_kernels as K
from . import _policy, _validate
from ._run import launcher_for, run

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

_L_MV = launcher_for(K.csrmv_kernel, "csrmv")
_L_MM = launcher_for(K.csrmm_kernel, "csrmm")
_L_SDDMM = launcher_for(K.csr_sddmm_kernel, "csr_sddmm")
_L_TODENSE = launcher_for(K.csr_to_dense_kernel, "csr_to_dense")
_L_COUNTS = launcher_for(K.dense_row_counts_kernel, "csr_from_dense.counts")
_L_COLCOUNTS = launcher_for(K.csr_col_counts_kernel, "csr_transpose.counts")
_L_TFILL = launcher_for(K.csr_transpose_fill_kernel, "csr_transpose.fill")
_L_FILL = launcher_for(K.dense_to_csr_fill_kernel, "csr_from_dense.fill")


def _mv(func, weights, indices, indptr, x, shape, transpose, allow_bool):
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"{func}(): argument 'transpose' must be a bool, got {transpose!r}")
    transpose = bool(transpose)
    xa = x if isinstance(x, np.ndarray) else None
    like = xa.dtype if xa is not None else None
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape, like_dtype=like)
    if transpose:
        x = _validate.dense_operand(func, _XNAME[allow_bool], x, m, ndim=1, allow_bool=allow_bool,
                                    where="shape[0] (transpose=True)")  # fmt: skip
        n_out = n
        blocks = _policy.scatter_blocks(idx.shape[0], x)
        serial = blocks == 1
        scratch = ((blocks - 1) * n_out,)
    else:
        x = _validate.dense_operand(func, _XNAME[allow_bool], x, n, ndim=1, allow_bool=allow_bool,
                                    where="shape[1] (transpose=False)")  # fmt: skip
        n_out = m
        serial = _policy.gather_serial(idx.shape[0])
        scratch = (0,)
    (out,) = run(_L_MV, (w, idx, ptr, x), [((n_out,), w.dtype)], (transpose,), serial=serial,
                 scratch=(scratch, w.dtype))  # fmt: skip
    return out


_XNAME = {True: "events", False: "vector"}


def event_csrmv(weights, indices, indptr, events, *, shape, transpose=False):
    """Event-driven sparse matrix-vector product ``A @ events`` or ``A.T @ events``.

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64
        One weight for every synapse, or one per synapse.
    indices : array of shape (nnz,), int32 or int64
        Column index of each synapse.
    indptr : array of shape (shape[0] + 1,), int32 or int64
        Row pointers.
    events : array, bool or float32/float64
        Length ``shape[1]`` when ``transpose=False``, ``shape[0]`` when ``True``. A
        bool event switches its synapses on; a float event scales them (zeros skipped).
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        ``False``: ``A @ events`` (length ``m``); ``True``: ``A.T @ events`` (length
        ``n``), visiting only the rows whose event is nonzero.

    Returns
    -------
    numpy.ndarray
        1-D, the dtype of ``weights``.

    Raises
    ------
    TypeError
        Index arrays that are not integers, weights that are not float32/float64,
        events that are neither bool nor float.
    ValueError
        ``indptr`` of the wrong length or not starting at 0 / non-decreasing / ending
        at ``nnz``; ``weights`` of the wrong length; ``events`` whose length does not
        match ``shape`` and ``transpose``.
    IndexError
        A column index outside ``[0, shape[1])``.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import event_csrmv
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    >>> event_csrmv(w, indices, indptr, np.array([True, False, True]), shape=(2, 3))
    array([3., 0.], dtype=float32)
    >>> event_csrmv(w, indices, indptr, np.array([True, True]), shape=(2, 3), transpose=True)
    array([1., 3., 2.], dtype=float32)
    """
    return _mv("event_csrmv", weights, indices, indptr, events, shape, transpose, True)


def csrmv(weights, indices, indptr, vector, *, shape, transpose=False):
    """Sparse matrix-vector product ``A @ vector`` or ``A.T @ vector``.

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64
        One weight for every synapse, or one per synapse.
    indices : array of shape (nnz,), int32 or int64
        Column index of each synapse.
    indptr : array of shape (shape[0] + 1,), int32 or int64
        Row pointers.
    vector : array, float32 or float64
        Length ``shape[1]`` (``transpose=False``) or ``shape[0]`` (``transpose=True``).
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        Multiply by ``A.T`` instead of ``A``.

    Returns
    -------
    numpy.ndarray
        1-D, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`event_csrmv`; a bool ``vector`` is refused (use :func:`event_csrmv`).

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csrmv
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0])
    >>> csrmv(w, indices, indptr, np.array([1.0, 10.0, 100.0]), shape=(2, 3))
    array([201.,  30.])
    """
    return _mv("csrmv", weights, indices, indptr, vector, shape, transpose, False)


def _mm(func, weights, indices, indptr, x, shape, transpose, allow_bool):
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"{func}(): argument 'transpose' must be a bool, got {transpose!r}")
    transpose = bool(transpose)
    like = x.dtype if isinstance(x, np.ndarray) else None
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape, like_dtype=like)
    name = "events" if allow_bool else "matrix"
    if transpose:
        x = _validate.dense_operand(
            func, name, x, m, ndim=2, allow_bool=allow_bool, where="shape[0] (transpose=True)"
        )
        n_out = n
        work = (
            idx.shape[0] * np.count_nonzero(x) / max(m, 1) if idx.shape[0] >= _policy._SCATTER_PAR[0] else 0
        )
        serial = work < _policy._SCATTER_PAR[0] or x.shape[1] < 2
        scratch = x.shape[1] * n_out
    else:
        x = _validate.dense_operand(
            func, name, x, n, ndim=2, allow_bool=allow_bool, where="shape[1] (transpose=False)"
        )
        n_out = m
        serial = _policy.gather_serial(idx.shape[0] * max(x.shape[1], 1))
        scratch = 0
    (out,) = run(_L_MM, (w, idx, ptr, x), [((n_out, x.shape[1]), w.dtype)], (transpose,), serial=serial,
                 scratch=((scratch,), w.dtype))  # fmt: skip
    return out


def event_csrmm(weights, indices, indptr, events, *, shape, transpose=False):
    """Event-driven product of a CSR matrix with a batch of event vectors (one per column).

    Parameters
    ----------
    weights, indices, indptr, shape
        The CSR matrix ``A``, as in :func:`event_csrmv`.
    events : 2-D array, bool or float32/float64
        Shape ``(shape[1], k)`` (``transpose=False``) or ``(shape[0], k)``
        (``transpose=True``); column ``c`` is one event vector.
    transpose : bool, optional
        Multiply by ``A.T`` instead of ``A``.

    Returns
    -------
    numpy.ndarray
        Shape ``(shape[0], k)`` or ``(shape[1], k)``, the dtype of ``weights``. Column
        ``c`` equals ``event_csrmv(..., events[:, c], ...)``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`event_csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import event_csrmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0], dtype=np.float32)
    >>> E = np.array([[True, False], [False, True], [True, True]])
    >>> event_csrmm(w, indices, indptr, E, shape=(2, 3))
    array([[3., 2.],
           [0., 3.]], dtype=float32)
    """
    return _mm("event_csrmm", weights, indices, indptr, events, shape, transpose, True)


def csrmm(weights, indices, indptr, matrix, *, shape, transpose=False):
    """Product of a CSR matrix with a dense matrix: ``A @ matrix`` or ``A.T @ matrix``.

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
    numpy.ndarray
        Shape ``(shape[0], k)`` or ``(shape[1], k)``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csrmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> w = np.array([1.0, 2.0, 3.0])
    >>> csrmm(w, indices, indptr, np.eye(3), shape=(2, 3))
    array([[1., 0., 2.],
           [0., 3., 0.]])
    """
    return _mm("csrmm", weights, indices, indptr, matrix, shape, transpose, False)


def csr_sddmm(indices, indptr, a, b, *, shape):
    """Sampled dense-dense product on the sparsity pattern of a CSR matrix.

    ``out[j] = sum_c a[row(j), c] * b[indices[j], c]`` for every synapse ``j`` (row
    ``row(j)``); with 1-D ``a`` and ``b`` the sampled outer product
    ``a[row(j)] * b[indices[j]]``. It is the gradient of :func:`csrmv` / :func:`csrmm`
    with respect to per-synapse weights.

    Parameters
    ----------
    indices, indptr : arrays
        The sparsity pattern of an ``(m, n) = shape`` CSR matrix.
    a : array of shape (m,) or (m, k), float32 or float64
    b : array of shape (n,) or (n, k), bool, float32 or float64
    shape : tuple of two ints

    Returns
    -------
    numpy.ndarray
        Shape ``(nnz,)``, the dtype of ``a`` (float64 if either operand is float64).

    Raises
    ------
    TypeError, ValueError, IndexError
        Invalid connectivity (as :func:`csrmv`), operands of the wrong shape or dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csr_sddmm
    >>> indptr = np.array([0, 2, 3]); indices = np.array([0, 2, 1])
    >>> csr_sddmm(indices, indptr, np.array([1.0, 2.0]), np.array([10.0, 20.0, 30.0]), shape=(2, 3))
    array([10., 30., 40.])
    """
    func = "csr_sddmm"
    _, idx, ptr, m, n = _validate.csr(func, 0.0, indices, indptr, shape)
    nd = np.ndim(a)
    if nd not in (1, 2):
        raise ValueError(f"{func}(): argument 'a' must be 1-D or 2-D, got shape {np.shape(a)}")
    a = _validate.dense_operand(func, "a", a, m, ndim=nd, allow_bool=False, where="shape[0]")
    b = _validate.dense_operand(func, "b", b, n, ndim=nd, allow_bool=True, where="shape[1]")
    if nd == 2 and a.shape[1] != b.shape[1]:
        raise ValueError(f"{func}(): arguments 'a' and 'b' must have the same number of columns, "
                         f"got {a.shape} and {b.shape}")  # fmt: skip
    odt = np.result_type(a.dtype, b.dtype if b.dtype != np.bool_ else a.dtype)
    work = idx.shape[0] * (a.shape[1] if nd == 2 else 1)
    (out,) = run(_L_SDDMM, (idx, ptr, a, b), [((idx.shape[0],), odt)], (), serial=_policy.gather_serial(work))
    return out


def csr_to_dense(weights, indices, indptr, *, shape):
    """The dense ``(m, n)`` matrix of a CSR matrix (duplicate entries add up).

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64
    indices, indptr : arrays
        int32 or int64, as in :func:`csrmv`.
    shape : tuple of two ints

    Returns
    -------
    numpy.ndarray
        Shape ``shape``, the dtype of ``weights``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csr_to_dense
    >>> csr_to_dense(np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 3]), shape=(2, 3))
    array([[1., 0., 2.],
           [0., 3., 0.]])
    """
    w, idx, ptr, m, n = _validate.csr("csr_to_dense", weights, indices, indptr, shape)
    (out,) = run(_L_TODENSE, (w, idx, ptr), [((m, n), w.dtype)], (), serial=_policy.gather_serial(m * n // 4))
    return out


def csr_from_dense(dense, *, index_dtype=np.int32):
    """The CSR form ``(weights, indices, indptr)`` of the nonzero entries of a dense matrix.

    Parameters
    ----------
    dense : 2-D array, float32 or float64
    index_dtype : numpy dtype, optional
        ``int32`` (default) or ``int64``, for both index arrays.

    Returns
    -------
    weights : numpy.ndarray
        ``(nnz,)``, the dtype of ``dense``.
    indices : numpy.ndarray
        ``(nnz,)``, column indices in increasing order within each row.
    indptr : numpy.ndarray
        ``(m + 1,)``.

    Raises
    ------
    TypeError
        A ``dense`` that is not float32/float64, an ``index_dtype`` that is not int32/int64.
    ValueError
        A ``dense`` that is not 2-D, or with more nonzeros than ``index_dtype`` can count.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csr_from_dense
    >>> w, idx, ptr = csr_from_dense(np.array([[1.0, 0.0, 2.0], [0.0, 3.0, 0.0]]))
    >>> w, idx, ptr
    (array([1., 2., 3.]), array([0, 2, 1], dtype=int32), array([0, 2, 3], dtype=int32))
    """
    func = "csr_from_dense"
    d = _validate._array(func, "dense", dense)
    if d.dtype not in _validate._FLOAT_DTYPES:
        raise TypeError(f"{func}(): argument 'dense' must be float32 or float64, got dtype {d.dtype}")
    if d.ndim != 2:
        raise ValueError(f"{func}(): argument 'dense' must be 2-D, got shape {d.shape}")
    idt = np.dtype(index_dtype)
    if idt not in _validate._INDEX_DTYPES:
        raise TypeError(f"{func}(): argument 'index_dtype' must be int32 or int64, got {index_dtype!r}")
    d = np.ascontiguousarray(d)
    m, n = d.shape
    serial = _policy.gather_serial(m * n // 4)
    (counts,) = run(_L_COUNTS, (d,), [((m,), np.int64)], (), serial=serial)
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    if nnz > np.iinfo(idt).max or nnz >= 2**31:
        raise ValueError(f"{func}(): {nnz} nonzeros do not fit {idt} indices (Taichi arrays hold < 2**31)")
    indptr = indptr.astype(idt)
    weights, indices = run(_L_FILL, (d, indptr), [((nnz,), d.dtype), ((nnz,), idt)], (), serial=serial)
    return weights, indices, indptr


def csr_transpose(weights, indices, indptr, *, shape, return_permutation=False):
    """The CSR form of ``A.T`` (the CSC form of ``A``), built once by two kernels.

    Use it where a product needs the other direction many times with the same
    connectivity: ``event_csrmv(*csr_transpose(w, i, p, shape=(m, n)), e, shape=(n, m),
    transpose=True)`` computes ``A @ e`` by visiting only the columns of active events
    (the synapses of the active events), instead of reading every column index as
    ``event_csrmv(w, i, p, e, shape=(m, n))`` must; and
    ``csrmv(*csr_transpose(...), x, shape=(n, m))`` computes ``A.T @ x`` as a gather. This
    is what a prebuilt transposed ``torch.sparse_csr_tensor`` does.

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
    weights_t : numpy.ndarray
        Shape ``()`` for one shared weight, else ``(nnz,)``.
    indices_t : numpy.ndarray
        Row indices of ``A`` (column indices of ``A.T``), increasing within each column;
        the dtype of ``indices``.
    indptr_t : numpy.ndarray
        ``(n + 1,)``, the dtype of ``indptr``.
    perm : numpy.ndarray, optional
        ``(nnz,)`` int64, only with ``return_permutation=True``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.sparse import csr_transpose, csr_to_dense
    >>> w, i, p = np.array([1.0, 2.0, 3.0]), np.array([0, 2, 1]), np.array([0, 2, 3])
    >>> wt, it, pt = csr_transpose(w, i, p, shape=(2, 3))
    >>> csr_to_dense(wt, it, pt, shape=(3, 2))
    array([[1., 0.],
           [0., 3.],
           [2., 0.]])
    """
    func = "csr_transpose"
    w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape)
    nnz = idx.shape[0]
    (counts,) = run(_L_COLCOUNTS, (idx, ptr), [((n,), np.int64)], (), serial=True)
    indptr_t = np.zeros(n + 1, np.int64)
    np.cumsum(counts, out=indptr_t[1:])
    indptr_t = indptr_t.astype(ptr.dtype)
    indices_t, perm, _ = run(
        _L_TFILL,
        (idx, ptr, indptr_t),
        [((nnz,), idx.dtype), ((nnz,), np.int64), ((n,), np.int64)],
        (),
        serial=True,
    )
    weights_t = w if w.ndim == 0 else w[perm]
    if return_permutation:
        return weights_t, indices_t, indptr_t, perm
    return weights_t, indices_t, indptr_t
