"""The Taichi kernel of the column index (``_index``).

``column_index_kernel`` builds it by a counting sort (one thread, stable: rows increase
within each column). Kernel convention as in ``_csr_kernels``; no ``from __future__ import
annotations``.
"""

from tiarray._internal import ti

from ._csr_kernels import _bounds, _valid


@ti.kernel
def column_index_kernel(
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    ptr_t: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    rows_t: ti.types.ndarray(ndim=1),
    fixed: ti.template(),
):
    """The column index ``ptr_t`` (n + 1), ``perm``, ``rows_t`` (nnz) of a CSR matrix, or
    (``fixed``) of a fixed-number one, whose ``indptr`` then holds one element: the number of
    rows ``m`` (rows of ``len(indices) // m`` synapses). Synapses with an invalid column are
    left out (``perm`` then ends with zeros past ``ptr_t[n]``).

    An ``indptr`` that is not sorted (never checked: traced, or changed in place after its
    check) makes rows overlap, so a synapse can be visited more than once: only the first
    ``len(perm)`` visits are indexed, the same ones in both passes, so that the fill never
    writes past ``perm`` and ``rows_t`` (it did: heap corruption, 2026-12-05)."""
    nnz = indices.shape[0]
    n_cols = ptr_t.shape[0] - 1
    cap = ti.min(perm.shape[0], rows_t.shape[0])
    for _ in range(1):  # one thread: a counting sort
        m = indptr.shape[0] - 1
        k = 0
        if ti.static(fixed):
            m = ti.cast(indptr[0], ti.i32)
            k = nnz // ti.max(m, 1)
        seen = 0
        for i in range(m):
            a = i * k
            b = a + k
            if ti.static(not fixed):
                a, b = _bounds(indptr, i, nnz)
            for j in range(a, ti.min(b, nnz)):
                c = indices[j]
                if _valid(c, n_cols) and seen < cap:
                    ptr_t[ti.cast(c, ti.i32) + 1] += 1
                    seen += 1
        for c in range(n_cols):
            ptr_t[c + 1] += ptr_t[c]
        # fill: ptr_t[c] is column c's cursor
        seen = 0
        for i in range(m):
            a = i * k
            b = a + k
            if ti.static(not fixed):
                a, b = _bounds(indptr, i, nnz)
            for j in range(a, ti.min(b, nnz)):
                c = indices[j]
                if _valid(c, n_cols) and seen < cap:
                    seen += 1
                    cc = ti.cast(c, ti.i32)
                    q = ti.cast(ptr_t[cc], ti.i32)
                    perm[q] = ti.cast(j, perm.get_type().element_type)
                    rows_t[q] = ti.cast(i, rows_t.get_type().element_type)
                    ptr_t[cc] += 1
        # the fill advanced ptr_t[c] to the start of column c + 1: shift back
        for c2 in range(n_cols):
            c = n_cols - c2
            ptr_t[c] = ptr_t[c - 1]
        if n_cols >= 0:
            ptr_t[0] = 0
