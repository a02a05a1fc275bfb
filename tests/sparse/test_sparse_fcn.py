"""Fixed-number connectivity: the generator against a pure-Python model, its statistics, bad
input, and the kernels' memory safety on unvalidated indices. (The products against dense
references on every framework are in ``test_sparse_families.py``.)"""

from __future__ import annotations

import math

import _jitc_reference as R
import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import guarded, host_op_off_cpu, parallel_mode
from tiarray.operators.sparse import _fcn, _fcn_kernels, _once

from tiarray import _dtypes


def _below(x, bound):
    return ((x >> 32) * bound) >> 32


def reference_row(seed, i, n, k, replace):
    """Row i of fixed_num_conn, written from its documented specification."""
    st = R.mix64(R.row_state(R.key_of(seed), i) ^ _fcn_kernels.FCNKEY)
    if replace:
        return sorted(_below(R.draw(st, q), n) for q in range(k))
    chosen = []
    for q, t in enumerate(range(n - k, n)):
        c = _below(R.draw(st, q), t + 1)
        chosen.append(t if c in chosen else c)
    return sorted(chosen)


@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_fixed_num_conn_matches_the_model(replace, mode):
    m, n, k = 37, 29, 11
    with parallel_mode(mode):
        idx = sp.fixed_num_conn(m, n, k, seed=2024, replace=replace)
    assert idx.shape == (m, k) and idx.dtype == np.int32 and not idx.flags.writeable
    for i in range(m):
        assert idx[i].tolist() == reference_row(2024, i, n, k, replace), i
    assert sp.fixed_num_conn(m, n, k, seed=2024, replace=replace, index_dtype=np.int64).dtype == np.int64


def test_fixed_num_conn_determinism_and_shape():
    a = sp.fixed_num_conn(100, 80, 9, seed=5)
    np.testing.assert_array_equal(a, sp.fixed_num_conn(100, 80, 9, seed=5))
    np.testing.assert_array_equal(a, sp.fixed_num_conn(100, 80, 9, seed=5 + 2**32))
    assert (a != sp.fixed_num_conn(100, 80, 9, seed=6)).any()
    # rows are independent streams: row i does not depend on the number of rows
    np.testing.assert_array_equal(sp.fixed_num_conn(300, 80, 9, seed=5)[:100], a)
    assert (np.diff(a, axis=1) > 0).all() and a.min() >= 0 and a.max() < 80
    np.testing.assert_array_equal(sp.fixed_num_conn(4, 6, 6, seed=1), np.tile(np.arange(6), (4, 1)))
    assert sp.fixed_num_conn(0, 5, 3, seed=1).shape == (0, 3)
    assert sp.fixed_num_conn(5, 0, 0, seed=1).shape == (5, 0)


def test_host_passes_through_device_arrays(monkeypatch):
    # Off the CPU the eager helpers pass their host inputs to Taichi as TiArrays on its
    # device (_xp.host_op); a 0-d seed became a (1,) array there and every CUDA call of
    # fixed_num_conn was refused (first CUDA run, 2026-12-04). That path, taken on the CPU:
    host_op_off_cpu(monkeypatch)
    m, n, k, seed = 23, 31, 7, 777
    idx = sp.fixed_num_conn(m, n, k, seed=seed)
    assert type(idx) is np.ndarray and idx.shape == (m, k)
    for i in range(m):
        assert idx[i].tolist() == reference_row(seed, i, n, k, False), i


def _within(count, expected, var, z=5.0):
    return abs(count - expected) <= z * math.sqrt(var) + 1


@pytest.mark.parametrize("replace", [False, True])
def test_fixed_num_conn_is_uniform(replace):
    """Column marginals: each column is chosen by a row with probability k / n (5 sigma)."""
    m, n, k = 4000, 300, 30
    idx = sp.fixed_num_conn(m, n, k, seed=77, replace=replace)
    counts = np.bincount(idx.reshape(-1), minlength=n)
    p = k / n
    for c in (0, 1, n // 2, n - 2, n - 1):  # both ends: the places a biased sampler shows
        assert _within(counts[c], m * p, m * p * (1 - p) * (1 if not replace else 1.2)), (c, counts[c])
    # the spread of all column counts: a chi-square statistic with n - 1 degrees of freedom
    chi2 = ((counts - m * p) ** 2 / (m * p)).sum() * (1 / (1 - p) if not replace else 1)
    assert abs(chi2 - (n - 1)) <= 6 * math.sqrt(2 * (n - 1)), chi2
    if replace:  # repeats within a row occur at the birthday rate
        rep = (np.diff(idx, axis=1) == 0).sum() / m
        want = k * (k - 1) / (2 * n)
        assert abs(rep - want) < 0.15 * want, (rep, want)


def test_fixed_num_conn_errors():
    with pytest.raises(ValueError, match=r"fixed_num_conn\(\): k = 6 distinct columns do not fit n_post = 5"):
        sp.fixed_num_conn(3, 5, 6, seed=1)
    with pytest.raises(ValueError, match="argument 'k' must be non-negative"):
        sp.fixed_num_conn(3, 5, -1, seed=1)
    with pytest.raises(TypeError, match="argument 'k' must be an int"):
        sp.fixed_num_conn(3, 5, 2.0, seed=1)
    with pytest.raises(
        TypeError, match=r"fixed_num_conn\(\): arguments \(n_pre, n_post\) must be ints, got \(3.0, 5\)"
    ):
        sp.fixed_num_conn(3.0, 5, 2, seed=1)
    with pytest.raises(ValueError, match="need n_post > 0"):
        sp.fixed_num_conn(3, 0, 2, seed=1, replace=True)
    with pytest.raises(TypeError, match="index_dtype"):
        sp.fixed_num_conn(3, 5, 2, seed=1, index_dtype=np.float32)
    with pytest.raises(TypeError, match="'seed' must be an integer"):
        sp.fixed_num_conn(3, 5, 2, seed=1.5)
    with pytest.raises(TypeError, match="'replace' must be a bool"):
        sp.fixed_num_conn(3, 5, 2, seed=1, replace=1)


@pytest.fixture
def conn():
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 8, (6, 3)).astype(np.int32)
    w = rng.standard_normal((6, 3))
    return w, idx


def test_fcn_errors(conn):
    w, idx = conn
    e, v = np.ones(8, bool), np.ones(8)
    with pytest.raises(
        ValueError, match=r"fcnmv\(\): argument 'indices' must have shape \(shape\[0\], k\) = \(5, k\)"
    ):
        sp.fcnmv(w, idx, v, shape=(5, 8))
    with pytest.raises(ValueError, match=r"argument 'indices' must be 2-D, got shape \(18,\)"):
        sp.fcnmv(w, idx.reshape(-1), v, shape=(6, 8))
    with pytest.raises(
        ValueError, match=r"argument 'weights' must have shape \(\) or \(1,\).*= \(6, 3\) like"
    ):
        sp.fcnmv(w[:, :2], idx, v, shape=(6, 8))
    with pytest.raises(ValueError, match=r"argument 'weights' must have shape"):
        sp.fcnmv(w.reshape(-1), idx, v, shape=(6, 8))
    with pytest.raises(TypeError, match=r"argument 'indices' must be an integer array"):
        sp.fcnmv(w, idx.astype(float), v, shape=(6, 8))
    with pytest.raises(TypeError, match=r"argument 'weights' must be float32 or float64, got dtype int64"):
        sp.fcnmv(idx.astype(np.int64), idx, v, shape=(6, 8))
    with pytest.raises(TypeError, match=r"argument 'vector' must be float32 or float64, got bool"):
        sp.fcnmv(w, idx, e, shape=(6, 8))
    with pytest.raises(
        TypeError, match=r"argument 'events' must be bool, float32 or float64, got dtype int32"
    ):
        sp.event_fcnmv(w, idx, e.astype(np.int32), shape=(6, 8))
    with pytest.raises(
        ValueError, match=r"argument 'events' must have length shape\[0\] \(transpose=True\) = 6, got 8"
    ):
        sp.event_fcnmv(w, idx, e, shape=(6, 8), transpose=True)
    with pytest.raises(ValueError, match=r"argument 'matrix' must be 2-D"):
        sp.fcnmm(w, idx, v, shape=(6, 8))
    with pytest.raises(TypeError, match="'transpose' must be a bool"):
        sp.fcnmv(w, idx, v, shape=(6, 8), transpose=None)
    bad = idx.copy()
    bad[4, 1] = 8
    with pytest.raises(
        IndexError,
        match=r"event_fcnmv\(\): argument 'indices' holds column index 8 at position \(4, 1\), outside \[0, 8\)",
    ):
        sp.event_fcnmv(w, bad, e, shape=(6, 8))
    bad[4, 1] = -1
    with pytest.raises(IndexError, match="column index -1 at position"):
        sp.fcnmm(w, bad, np.ones((8, 2)), shape=(6, 8))


def test_value_checks_cannot_go_stale(conn, monkeypatch):
    """Writeable NumPy indices are checked on every call; read-only ones once; a torch
    tensor once per version (its in-place changes are seen)."""
    w, idx = conn
    e = np.ones(8, bool)
    _once.clear()
    calls = []
    real = _once.cached

    def counting(kind, arrays, extra, compute, *rest):
        return real(kind, arrays, extra, lambda: calls.append(kind) or compute(), *rest)

    monkeypatch.setattr(_once, "cached", counting)
    mut = idx.copy()
    sp.event_fcnmv(w, mut, e, shape=(6, 8))
    mut[0, 0] = 9  # mutated in place after a successful call: still caught
    with pytest.raises(IndexError, match="column index 9 at position \\(0, 0\\)"):
        sp.event_fcnmv(w, mut, e, shape=(6, 8))
    frozen = idx.copy()
    frozen.flags.writeable = False
    calls.clear()
    for _ in range(3):
        sp.event_fcnmv(w, frozen, e, shape=(6, 8))
    # checked once (and the column index of A @ s built once)
    assert "index_range" in calls and len(calls) == len(set(calls)), calls
    # a different number of columns is another check; a float shape is not an int shape
    with pytest.raises(IndexError):
        sp.event_fcnmv(w, frozen, e[:4], shape=(6, 4))
    with pytest.raises(TypeError, match="argument 'shape' must be a pair of ints"):
        sp.event_fcnmv(w, frozen, e, shape=(6.0, 8))
    # a read-only view of a writeable array may change through its base: checked every call
    base = idx.copy()
    view = base[:]
    view.flags.writeable = False
    calls.clear()
    sp.event_fcnmv(w, view, e, shape=(6, 8))
    base[2, 2] = 100
    with pytest.raises(IndexError, match="column index 100"):
        sp.event_fcnmv(w, view, e, shape=(6, 8))


def test_value_checks_see_torch_in_place_changes(torch, conn):
    w, idx = conn
    t = torch.as_tensor(idx.copy())
    e = torch.ones(8, dtype=torch.bool)
    tw = torch.as_tensor(w)
    sp.event_fcnmv(tw, t, e, shape=(6, 8))
    t[1, 1] = 8  # bumps t._version
    with pytest.raises(IndexError, match=r"column index 8 at position \(1, 1\)"):
        sp.event_fcnmv(tw, t, e, shape=(6, 8))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("blocks", [1, 2])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_kernels_stay_in_bounds_on_garbage_indices(transpose, blocks, index_dtype):
    """Unvalidated indices (as under jax.jit): no write outside the output, no read outside the
    vector (it sits between NaN sentinels: one stray read would make a NaN)."""
    m, n, k = 10, 12, 4
    idx = np.array([0, -5, 11, 12, 2**31 - 1, -(2**31), 3, 1000, 5, 7] * k, index_dtype)
    w = np.arange(1.0, m * k + 1, dtype=np.float32)
    n_in = m if transpose else n
    vbuf = np.full(n_in + 128, np.nan, np.float32)
    x = vbuf[64 : 64 + n_in]
    x[:] = 1
    n_out = n if transpose else m
    buf, out = guarded(n_out, np.float32)
    sbuf, scratch = guarded((blocks - 1) * n_out if transpose else 0, np.float32)
    dt_i = _dtypes.int32 if index_dtype == np.int32 else _dtypes.int64
    spec = _fcn._OPS["fcnmv"]._launcher("cpu").spec(
        [(_dtypes.float32, 1, False), (dt_i, 1, False), (_dtypes.float32, 1, False),
         (_dtypes.float32, 1, False), (_dtypes.float32, 1, False)],
        (transpose,), serial=blocks == 1,
    )  # fmt: skip

    def arg(a):
        return (a.ctypes.data, a.nbytes, a.shape)

    spec.launch([arg(w), arg(idx), arg(x), arg(out), arg(scratch)])
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(buf[:64], 12345.0)
    np.testing.assert_array_equal(buf[64 + n_out :], 12345.0)
    np.testing.assert_array_equal(sbuf[:64], 12345.0)
    np.testing.assert_array_equal(sbuf[64 + scratch.shape[0] :], 12345.0)


def test_long_rows_are_gathered_in_checked_chunks():
    """Rows longer than a checked block (GATHER_SYN) and blocks of many short rows."""
    from tiarray.operators.sparse import _csr_kernels

    rng = np.random.default_rng(0)
    for m, n, k in ((3, 50, 2 * _csr_kernels.GATHER_SYN + 7), (5000, 40, 3)):
        idx = rng.integers(0, n, (m, k)).astype(np.int32)
        w = rng.standard_normal((m, k)).astype(np.float32)
        v = rng.standard_normal(n).astype(np.float32)
        ref = (w.astype(np.float64) * v.astype(np.float64)[idx]).sum(1)
        scale = (np.abs(w.astype(np.float64)) * np.abs(v.astype(np.float64))[idx]).sum(1)
        for mode in ("serial", "parallel"):
            with parallel_mode(mode):
                got = sp.fcnmv(w, idx, v, shape=(m, n))
            assert (np.abs(got - ref) <= (k + 2) * np.finfo(np.float32).eps * scale).all()


@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_parallel_and_serial_kernels_agree(mode):
    rng = np.random.default_rng(1)
    m, n, k = 700, 300, 40
    idx = sp.fixed_num_conn(m, n, k, seed=3)
    w = rng.standard_normal((m, k))
    A = np.zeros((m, n))
    np.add.at(A, (np.repeat(np.arange(m), k), idx.reshape(-1)), w.reshape(-1))
    e = rng.random(m) < 0.2
    E = rng.random((m, 5)) < 0.2
    with parallel_mode(mode):
        np.testing.assert_allclose(sp.event_fcnmv(w, idx, e, shape=(m, n), transpose=True), A.T @ e, rtol=1e-12,
                                   atol=1e-12)  # fmt: skip
        np.testing.assert_allclose(sp.event_fcnmm(w, idx, E, shape=(m, n), transpose=True), A.T @ E, rtol=1e-12,
                                   atol=1e-12)  # fmt: skip
        v = rng.standard_normal(n)
        np.testing.assert_allclose(sp.fcnmv(w, idx, v, shape=(m, n)), A @ v, rtol=1e-12, atol=1e-12)
