"""CSR structures whose values were never checked: a NumPy ``indptr`` changed in place after
its first (checked) use, whose check tiarray remembers. The kernels must stay inside their
arrays whatever the values (the documented clamp); the results are unspecified.

``column_index``'s counting sort wrote past ``perm`` and ``rows_t`` when rows overlapped (an
unsorted ``indptr``): heap corruption in ``column_index`` and ``csr_update_on_post``,
2026-12-05. The JAX twin, with a traced ``indptr``, is ``hostile_traced_jax``.
"""

import numpy as np
import pytest
import tiarray.operators.sparse as sp

M, N = 6, 5


def _structure(seed):
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, 4, M)
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    indices = rng.integers(0, N, int(indptr[-1])).astype(np.int32)
    return indices, indptr, rng


def _garble(indptr, rng):
    """Overlapping, decreasing, negative and huge row bounds (the ends kept: only the middle
    of ``indptr`` is what a first check saw)."""
    nnz = int(indptr[-1])
    choices = np.array([-(10**6), -1, 0, nnz // 2, nnz, nnz + 1, 10**6, 2**31 - 1], np.int64)
    indptr[1:-1] = rng.choice(choices, M - 1).astype(np.int32)


def _check_column_index(ptr_t, perm, rows_t, nnz):
    ptr_t, perm, rows_t = (np.asarray(a) for a in (ptr_t, perm, rows_t))
    assert ptr_t.shape == (N + 1,) and perm.shape == (nnz,) and rows_t.shape == (nnz,)
    assert ptr_t[0] == 0 and np.all(np.diff(ptr_t) >= 0) and ptr_t[-1] <= nnz
    k = int(ptr_t[-1])
    assert np.all((perm[:k] >= 0) & (perm[:k] < nnz)) and np.all((rows_t[:k] >= 0) & (rows_t[:k] < M))


@pytest.mark.parametrize("seed", range(40))
def test_column_index_of_a_garbled_indptr_stays_in_its_arrays(seed):
    indices, indptr, rng = _structure(seed)
    _check_column_index(*sp.column_index(indices, indptr, shape=(M, N)), len(indices))  # checked here
    _garble(indptr, rng)
    for _ in range(3):
        _check_column_index(*sp.column_index(indices, indptr, shape=(M, N)), len(indices))


@pytest.mark.parametrize("seed", range(40))
def test_plasticity_on_a_garbled_indptr_stays_in_its_arrays(seed):
    indices, indptr, rng = _structure(seed)
    w = rng.random(len(indices))
    w0 = w.copy()
    post, pre = np.ones(N, bool), np.ones(M, bool)
    sp.csr_update_on_post(w, indices, indptr, post, np.ones(M), shape=(M, N))
    sp.csr_update_on_pre(w, indices, indptr, pre, np.ones(N), shape=(M, N))
    _garble(indptr, rng)
    for _ in range(3):
        a = sp.csr_update_on_post(w, indices, indptr, post, np.ones(M), shape=(M, N))
        b = sp.csr_update_on_pre(w, indices, indptr, pre, np.ones(N), shape=(M, N))
        assert a.shape == b.shape == w.shape
    np.testing.assert_array_equal(w, w0)  # the input is never written
