"""A small CSR product with the signature of ``tiarray.operators.sparse.event_csrmv``.

``csrmv_standin(weights, indices, indptr, x, *, shape, transpose=False)``: ``A @ x`` or
``A.T @ x`` for the ``(m, n) = shape`` CSR matrix, weights per synapse ``(nnz,)`` or
shared (``()``/``(1,)``), ``x`` float or bool; the result has the weights' dtype. It
stands in for the library operator in the distributed tests (any operator of this
signature works with ``tiarray.operators.distributed``), and is checked against a dense
NumPy product (``dense``).
"""

import numpy as np
import taichi as ti

import tiarray as ta

nd = ti.types.ndarray


@ti.kernel
def _csrmv(
    w: nd(ndim=1), idx: nd(ndim=1), ptr: nd(ndim=1), x: nd(ndim=1), out: nd(ndim=1), transpose: ti.template()
):
    hom = w.shape[0] == 1
    for r in range(ptr.shape[0] - 1):
        for j in range(ptr[r], ptr[r + 1]):
            wj = w[0] if hom else w[j]
            if ti.static(transpose):
                if x[r] != 0:
                    ti.atomic_add(out[idx[j]], wj * x[r])
            else:
                out[r] += wj * x[idx[j]]


def _outs(w, idx, ptr, x, shape, transpose):
    return ta.ShapeDtype((shape[1] if transpose else shape[0],), w.dtype)


_op = ta.Operator(
    "csrmv_standin", kernel=_csrmv, outs=_outs, nondiff=("idx", "ptr"), static_defaults={"transpose": False}
)


def csrmv_standin(weights, indices, indptr, x, *, shape, transpose=False):
    if weights.ndim == 0:
        weights = weights.reshape(1)
    return _op(weights, indices, indptr, x, shape=tuple(int(s) for s in shape), transpose=bool(transpose))


def random_csr(m, n, density, rng, *, homogeneous=False, dtype=np.float32, index_dtype=np.int32):
    """A random CSR matrix: ``(weights, indices, indptr)``."""
    mask = rng.random((m, n)) < density
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(index_dtype)
    indices = np.nonzero(mask)[1].astype(index_dtype)
    weights = np.asarray(0.5, dtype) if homogeneous else rng.standard_normal(indices.size).astype(dtype)
    return weights, indices, indptr


def dense(weights, indices, indptr, shape):
    """The dense matrix of a CSR matrix (duplicates add up)."""
    A = np.zeros(shape, np.float64)
    w = np.broadcast_to(np.asarray(weights, np.float64).reshape(-1), indices.shape)
    for r in range(shape[0]):
        for j in range(indptr[r], indptr[r + 1]):
            A[r, indices[j]] += w[j]
    return A
