"""Random CSR matrices for the row-partitioned product tests (on ``_sparse_helpers``)."""

import numpy as np
from _sparse_helpers import dense_of
from _sparse_helpers import random_csr as _random_csr

__all__ = ["random_csr", "dense"]


def random_csr(m, n, density, rng, *, homogeneous=False, dtype=np.float32, index_dtype=np.int32):
    """``(weights, indices, indptr)``: random rows (some empty, some with repeated columns),
    per-synapse weights or one homogeneous weight (shape ``()``)."""
    w, i, p, _ = _random_csr(m, n, density, rng, wdtype=dtype, index_dtype=index_dtype)
    if homogeneous:
        w = np.asarray(0.5, dtype)
    return w, i, p


def dense(weights, indices, indptr, shape):
    """The dense float64 matrix (duplicates add up, homogeneous weights broadcast)."""
    return dense_of(weights, indices, indptr, shape)
