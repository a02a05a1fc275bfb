"""CSR structures traced under ``jax.jit``, whose values are never checked: the kernels must
stay inside their arrays whatever the values (the documented clamp). ``column_index`` wrote
past ``perm`` and ``rows_t`` for an unsorted ``indptr`` (heap corruption, 2026-12-05); the
NumPy twin is ``hostile_unchecked_structure``."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tiarray.operators.sparse as sp

M, N = 4, 3
INDICES = np.array([0, 2, 1, 2, 0], np.int32)
BAD = [
    [0, 10**6, -(10**6), 10**6, 5],
    [0, -(10**6), 3, 3, 5],
    [0, 2, 3, 3, 2**31 - 1],
    [5, 0, 5, 0, 5],
    [0, 5, 0, 5, 0],
    [-(2**31), 2**31 - 1, -(2**31), 2**31 - 1, 0],
]


@pytest.mark.parametrize("indptr", BAD)
def test_traced_column_index_stays_in_its_arrays(indptr):
    f = jax.jit(lambda p: sp.column_index(jnp.asarray(INDICES), p, shape=(M, N)))
    for _ in range(5):
        ptr_t, perm, rows_t = (np.asarray(a) for a in f(jnp.asarray(indptr, jnp.int32)))
        assert ptr_t[0] == 0 and np.all(np.diff(ptr_t) >= 0) and ptr_t[-1] <= len(INDICES)
        k = int(ptr_t[-1])
        assert np.all((perm[:k] >= 0) & (perm[:k] < len(INDICES))) and np.all(
            (rows_t[:k] >= 0) & (rows_t[:k] < M)
        )


@pytest.mark.parametrize("indptr", BAD)
def test_traced_plasticity_stays_in_its_arrays(indptr):
    w = jnp.arange(1.0, 6.0)
    f = jax.jit(
        lambda p: (
            sp.csr_update_on_post(w, jnp.asarray(INDICES), p, jnp.ones(N, bool), jnp.ones(M), shape=(M, N)),
            sp.csr_update_on_pre(w, jnp.asarray(INDICES), p, jnp.ones(M, bool), jnp.ones(N), shape=(M, N)),
        )
    )
    for _ in range(5):
        a, b = f(jnp.asarray(indptr, jnp.int32))
        assert a.shape == b.shape == (5,)
