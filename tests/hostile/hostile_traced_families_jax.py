"""The families beyond CSR products on garbage traced under ``jax.jit``, where no value is
checked: index arrays, ``ids`` and ``count``, ``delays`` and ``t``, ``row`` / ``col``, seeds
and probabilities. The kernels must stay inside their arrays whatever the values (the
documented clamp / skip): no crash (the parent reports a dead child as a failure), and no
result larger than reading only the arrays could give (a stray read of other memory shows
as a NaN, an infinity or a huge value). Where the result for garbage is documented
(``count`` clamped into ``[0, len(ids)]``, ids outside ``[0, m)`` skipped), it is checked."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import tiarray.operators.sparse as sp

jax.config.update("jax_enable_x64", True)

M, N, K = 6, 5, 3
BAD_VALUES = np.array([-1, M, N, 10**6, -(10**6), 2**31 - 1, -(2**31), 7, 3, 0], np.int64)


def _garbage(shape, seed):
    """int32 values, half of them garbage (out of range for any of these shapes)."""
    rng = np.random.default_rng(seed)
    good = rng.integers(0, min(M, N), shape)
    bad = rng.choice(BAD_VALUES, shape)
    return np.where(rng.random(shape) < 0.5, bad, good).astype(np.int32)


def _bounded(y, bound):
    y = np.asarray(y)
    assert np.isfinite(y).all(), y
    assert (np.abs(y) <= bound * (1 + 1e-12) + 1e-12).all(), (np.abs(y).max(), bound)


W_FCN = np.linspace(0.5, 1.5, M * K).reshape(M, K)
X_MV = {False: np.linspace(-1, 1, N), True: np.linspace(-1, 1, M)}


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("op", ["fcnmv", "event_fcnmv", "fcnmm", "event_fcnmm"])
@pytest.mark.parametrize("transpose", [False, True])
def test_fixed_number_products(op, transpose, seed):
    x = X_MV[transpose]
    x = x if op.endswith("mv") else np.stack([x, -x], 1)
    x = x != 0 if op.startswith("event") else x
    f = jax.jit(lambda i, x: getattr(sp, op)(jnp.asarray(W_FCN), i, x, shape=(M, N), transpose=transpose))
    for _ in range(3):
        y = f(jnp.asarray(_garbage((M, K), seed)), jnp.asarray(x))
        assert y.shape == ((N if transpose else M),) + x.shape[1:]
        _bounded(y, np.abs(W_FCN).sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("op", ["coomv", "event_coomv", "coomm", "event_coomm"])
@pytest.mark.parametrize("transpose", [False, True])
def test_coo_products(op, transpose, seed):
    w = np.linspace(0.5, 1.5, 12)
    x = X_MV[transpose]
    x = x if op.endswith("mv") else np.stack([x, -x], 1)
    x = x != 0 if op.startswith("event") else x
    f = jax.jit(lambda r, c, x: getattr(sp, op)(jnp.asarray(w), r, c, x, shape=(M, N), transpose=transpose))
    y = f(jnp.asarray(_garbage(12, seed)), jnp.asarray(_garbage(12, seed + 100)), jnp.asarray(x))
    _bounded(y, np.abs(w).sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("family", ["csr", "fcn"])
def test_spike_index_products(family, seed):
    rng = np.random.default_rng(seed)
    ids = _garbage(8, seed)
    ptr = np.array([0, 2, 3, 5, 5, 8, 9], np.int32)
    idx = np.array([0, 4, 2, 1, 3, 0, 2, 4, 1], np.int32)
    w = np.linspace(0.5, 1.5, 9)
    fcn = rng.integers(0, N, (M, K)).astype(np.int32)
    if family == "csr":
        A = np.zeros((M, N))
        np.add.at(A, (np.repeat(np.arange(M), np.diff(ptr)), idx), w)
        f = jax.jit(lambda i, c: sp.event_csrmv_indexed(jnp.asarray(w), idx, ptr, i, c, shape=(M, N)))
    else:
        A = np.zeros((M, N))
        np.add.at(A, (np.repeat(np.arange(M), K), fcn.reshape(-1)), W_FCN.reshape(-1))
        f = jax.jit(lambda i, c: sp.event_fcnmv_indexed(jnp.asarray(W_FCN), fcn, i, c, shape=(M, N)))
    for count in (-(2**31), -3, 0, 5, 8, 9, 10**6, 2**31 - 1):
        y = np.asarray(f(jnp.asarray(ids), jnp.asarray(count, jnp.int32)))
        c = min(max(count, 0), len(ids))  # documented: count clamped, ids outside [0, m) skipped
        e = np.zeros(M)
        listed = ids[:c]
        np.add.at(e, listed[(listed >= 0) & (listed < M)], 1.0)
        np.testing.assert_allclose(y, A.T @ e, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_delayed_product(seed):
    """Garbage delays, t and indices; from seed 3 on a garbage indptr too."""
    ptr = np.array([0, 2, 3, 5, 5, 8, 9], np.int32)
    w = np.linspace(0.5, 1.5, 9)
    hist = np.random.default_rng(seed).random((4, M)) < 0.5
    f = jax.jit(
        lambda d, t, i, p: sp.event_csrmv_delayed(jnp.asarray(w), i, p, d, jnp.asarray(hist), t, shape=(M, N))
    )
    p = _garbage(7, seed + 3) if seed >= 3 else ptr
    for t in (-(2**31), -1, 0, 3, 2**31 - 1):
        y = f(
            jnp.asarray(_garbage(9, seed)), jnp.asarray(t, jnp.int32), jnp.asarray(_garbage(9, seed + 7)), p
        )
        _bounded(y, np.abs(w).sum())


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("fn", ["fcn_update_on_pre", "fcn_update_on_post"])
def test_fixed_number_updates(fn, seed):
    pre = fn.endswith("pre")
    s = np.arange(M if pre else N) % 2 == 0
    tr = np.linspace(-1, 1, N if pre else M)
    f = jax.jit(lambda i: getattr(sp, fn)(jnp.asarray(W_FCN), i, s, tr, shape=(M, N)))
    y = np.asarray(f(jnp.asarray(_garbage((M, K), seed))))
    assert y.shape == W_FCN.shape
    # each weight moves by at most one trace value
    _bounded(y - W_FCN, np.abs(tr).max())


@pytest.mark.parametrize("dist", ["homo", "uniform", "normal"])
@pytest.mark.parametrize("event", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_jitc_matrix_products(dist, event, transpose):
    params = {"homo": (0.5,), "uniform": (-0.3, 0.8), "normal": (0.1, 0.4)}[dist]
    x = np.stack([X_MV[transpose], -X_MV[transpose]], 1)
    x = x != 0 if event else x
    name = f"jitc_{'event_' if event else ''}mm_prob_{dist}"
    f = jax.jit(
        lambda p, s: getattr(sp, name)(jnp.asarray(x), *params, p, s, shape=(M, N), transpose=transpose)
    )
    for prob in (float("nan"), -1.0, 2.0, float("inf"), 0.0, 1.0):
        for seed in (-(2**31), 0, 2**31 - 1):
            y = np.asarray(f(jnp.asarray(prob), jnp.asarray(seed, jnp.int32)))
            assert y.shape == ((N if transpose else M), 2)
            if dist != "normal":  # (normal weights are unbounded)
                _bounded(y, max(M, N) * 0.8)
            else:
                assert np.isfinite(y).all()
