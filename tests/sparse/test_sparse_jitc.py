"""Just-in-time connectivity: the matrix against an integer reference model, every product
against the dense matrix, determinism, transpose consistency and statistics."""

from __future__ import annotations

import math

import _jitc_reference as R
import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import host_op_off_cpu, parallel_mode

DISTS = {"homo": (0.7,), "uniform": (-0.5, 1.5), "normal": (0.3, 1.2)}
MODES = ["serial", "parallel"]


def _todense(dist, params, prob, seed, shape, **kw):
    return getattr(sp, f"jitc_todense_prob_{dist}")(*params, prob, seed, shape=shape, **kw)


@pytest.mark.parametrize("wdtype", ["float32", "float64"])
@pytest.mark.parametrize("dist", list(DISTS))
@pytest.mark.parametrize("prob", [0.03, 0.3, 0.8])
def test_todense_matches_the_reference_model(dist, wdtype, prob):
    shape = (41, 67)
    params = [np.asarray(x, wdtype) for x in DISTS[dist]]
    A = _todense(dist, params, prob, 12345, shape)
    w2 = DISTS[dist][-1] if dist != "homo" else 0.0
    ref = R.todense(shape, prob, 12345, dist, DISTS[dist][0], w2, wdtype)
    assert A.dtype == wdtype and A.shape == shape
    # connectivity: bit-identical (integer arithmetic only)
    np.testing.assert_array_equal(A != 0, ref != 0)
    if dist == "homo" or wdtype == "float64":
        np.testing.assert_allclose(A, ref, rtol=1e-14, atol=1e-14)
    else:
        np.testing.assert_allclose(A, ref, rtol=1e-6, atol=1e-6)
    # the transposed matrix is exactly the transpose
    At = _todense(dist, params, prob, 12345, shape, transpose=True)
    np.testing.assert_array_equal(At, A.T)


@pytest.mark.parametrize("dist", list(DISTS))
def test_todense_of_parameters_is_made_where_taichi_runs(monkeypatch, dist):
    # Only parameters, no data arrays: where Taichi runs on CUDA the matrix is made on the
    # device and returned as NumPy (before, the NumPy route refused the call, asking to move
    # arrays the caller never passed). That path (_xp.host_op off the CPU), taken on the CPU:
    from tiarray.operators.sparse import _xp

    host_op_off_cpu(monkeypatch)
    calls = []
    host_op = _xp.host_op
    monkeypatch.setattr(_xp, "host_op", lambda *a, **k: calls.append(1) or host_op(*a, **k))
    shape, params = (23, 31), DISTS[dist]
    A = getattr(sp, f"jitc_todense_prob_{dist}")(*params, 0.2, 99, shape=shape)
    assert calls and type(A) is np.ndarray and A.shape == shape
    w2 = params[-1] if dist != "homo" else 0.0
    ref = R.todense(shape, 0.2, 99, dist, params[0], w2, A.dtype.name)
    np.testing.assert_array_equal(A != 0, ref != 0)
    np.testing.assert_allclose(A, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
@pytest.mark.parametrize("dist", list(DISTS))
def test_products_match_the_dense_matrix(dist, wdtype, transpose, mode):
    rng = np.random.default_rng(3)
    shape = (53, 71)
    params = [np.asarray(x, wdtype) for x in DISTS[dist]]
    A = _todense(dist, params, 0.2, 77, shape).astype(np.float64)
    M = A.T if transpose else A
    k = shape[0] if transpose else shape[1]
    v = rng.standard_normal(k).astype(wdtype)
    v[rng.random(k) < 0.3] = 0
    e = rng.random(k) < 0.3
    rtol, atol = (2e-5, 2e-5) if wdtype == np.float32 else (1e-12, 1e-12)
    with parallel_mode(mode):
        y = getattr(sp, f"jitc_mv_prob_{dist}")(v, *params, 0.2, 77, shape=shape, transpose=transpose)
        yv = getattr(sp, f"jitc_event_mv_prob_{dist}")(v, *params, 0.2, 77, shape=shape, transpose=transpose)
        ye = getattr(sp, f"jitc_event_mv_prob_{dist}")(e, *params, 0.2, 77, shape=shape, transpose=transpose)
        yf = getattr(sp, f"jitc_mv_prob_{dist}")(
            e.astype(wdtype), *params, 0.2, 77, shape=shape, transpose=transpose
        )
    assert y.dtype == wdtype
    np.testing.assert_allclose(y, M @ v.astype(np.float64), rtol=rtol, atol=atol * 10)
    np.testing.assert_allclose(ye, M @ e, rtol=rtol, atol=atol * 10)
    # the event variants equal the plain products on the same float input
    np.testing.assert_array_equal(yv, y)
    np.testing.assert_array_equal(ye, yf)


def test_determinism_and_seed_forms():
    shape = (30, 40)
    a = sp.jitc_todense_prob_homo(1.0, 0.25, 5, shape=shape)
    b = sp.jitc_todense_prob_homo(1.0, 0.25, 5, shape=shape)
    np.testing.assert_array_equal(a, b)
    for seed in (np.int32(5), np.int64(5), np.uint32(5), np.array(5), np.array([5], np.int32), 5 + 2**32):
        np.testing.assert_array_equal(sp.jitc_todense_prob_homo(1.0, 0.25, seed, shape=shape), a)
    c = sp.jitc_todense_prob_homo(1.0, 0.25, 6, shape=shape)
    assert (a != c).any()
    # a row of the matrix does not depend on the number of rows (rows are independent streams)
    big = sp.jitc_todense_prob_homo(1.0, 0.25, 5, shape=(60, 40))
    np.testing.assert_array_equal(big[:30], a)


def test_distributions_share_the_connectivity():
    shape = (64, 48)
    h = sp.jitc_todense_prob_homo(np.float64(0.5), 0.2, 11, shape=shape)
    n0 = sp.jitc_todense_prob_normal(np.float64(0.5), np.float64(0.0), 0.2, 11, shape=shape)
    u0 = sp.jitc_todense_prob_uniform(np.float64(0.5), np.float64(0.5), 0.2, 11, shape=shape)
    np.testing.assert_array_equal(n0, h)
    np.testing.assert_array_equal(u0, h)
    idx, ptr = sp.fixed_prob_csr(shape[0], shape[1], 0.2, 11)
    np.testing.assert_array_equal(sp.csr_to_dense(np.float64(0.5), idx, ptr, shape=shape), h)


def _binomial_ok(k, n, p, z=5.0):
    """|k - np| within z standard deviations (z = 5: a false alarm once in ~2 million runs)."""
    sd = math.sqrt(n * p * (1 - p))
    return abs(k - n * p) <= z * sd + 1


@pytest.mark.parametrize("prob", [0.001, 0.02, 0.3, 0.5, 0.7, 0.97])
def test_density_is_binomial(prob):
    m, n = 4000, 1500
    idx, ptr = sp.fixed_prob_csr(m, n, prob, 2024)
    total = int(ptr[-1])
    assert _binomial_ok(total, m * n, np.float32(prob)), (total, m * n * prob)
    # no position bias: first, middle and last column each connect with probability p
    cols = np.bincount(idx, minlength=n)
    for c in (0, 1, n // 2, n - 1):
        assert _binomial_ok(int(cols[c]), m, np.float32(prob)), (c, cols[c], m * prob)
    # rows: the variance of the row counts is the binomial one (chi-square style bound)
    counts = np.diff(ptr)
    var = counts.var()
    expect = n * prob * (1 - prob)
    assert abs(var - expect) <= 6 * expect * math.sqrt(2 / m) + 0.05, (var, expect)
    # columns are sorted and in range
    assert idx.min(initial=0) >= 0 and idx.max(initial=0) < n
    for i in range(0, m, 97):
        assert np.all(np.diff(idx[ptr[i] : ptr[i + 1]]) > 0)


def test_gaps_are_geometric():
    # the gap before the first connection of a row is Geometric(p): P(G >= g) = (1 - p)^g
    p = 0.05
    m, n = 20000, 400
    idx, ptr = sp.fixed_prob_csr(m, n, p, 99)
    counts = np.diff(ptr)
    first = np.where(counts > 0, idx[np.minimum(ptr[:-1], len(idx) - 1)], n)
    for g in (1, 5, 20, 60):
        k = int((first >= g).sum())
        assert _binomial_ok(k, m, (1 - np.float32(p)) ** g), (g, k, m * (1 - p) ** g)


def test_weight_statistics():
    shape = (400, 500)
    u = sp.jitc_todense_prob_uniform(-1.0, 3.0, 0.3, 4, shape=shape)
    vals = u[u != 0]
    assert vals.min() >= -1.0 and vals.max() < 3.0
    sem = 4.0 / math.sqrt(12 * vals.size)
    assert abs(vals.mean() - 1.0) < 5 * sem
    g = sp.jitc_todense_prob_normal(np.float64(2.0), np.float64(0.5), 0.3, 4, shape=shape)
    vals = g[g != 0]
    assert abs(vals.mean() - 2.0) < 5 * 0.5 / math.sqrt(vals.size)
    assert abs(vals.std() - 0.5) < 5 * 0.5 / math.sqrt(2 * vals.size)
    # the normal weights of a row are not the draws that placed its columns
    assert abs(np.corrcoef(vals[:-1], vals[1:])[0, 1]) < 5 / math.sqrt(vals.size)


def test_probability_edge_cases():
    shape = (20, 30)
    assert not sp.jitc_todense_prob_homo(1.0, 0.0, 1, shape=shape).any()
    assert (sp.jitc_todense_prob_homo(1.0, 1.0, 1, shape=shape) == 1).all()
    v = np.ones(30, np.float32)
    np.testing.assert_array_equal(
        sp.jitc_mv_prob_homo(v, 2.0, 1.0, 1, shape=shape), np.full(20, 60.0, np.float32)
    )
    np.testing.assert_array_equal(sp.jitc_mv_prob_homo(v, 2.0, 0.0, 1, shape=shape), np.zeros(20, np.float32))
    # tiny probabilities: still Bernoulli, mostly empty
    idx, ptr = sp.fixed_prob_csr(10000, 1000, 1e-6, 5)
    assert ptr[-1] <= 40
    # empty shapes
    assert sp.jitc_mv_prob_homo(np.zeros(0, np.float32), 1.0, 0.5, 1, shape=(4, 0)).tolist() == [0, 0, 0, 0]
    assert sp.jitc_mv_prob_homo(np.zeros(5, np.float32), 1.0, 0.5, 1, shape=(0, 5)).shape == (0,)
    assert (
        sp.jitc_event_mv_prob_homo(np.zeros(0, bool), 1.0, 0.5, 1, shape=(0, 5), transpose=True).tolist()
        == [0] * 5
    )
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ValueError, match="prob"):
            sp.jitc_mv_prob_homo(v, 1.0, bad, 1, shape=shape)


def test_fixed_prob_csr_large_and_dtypes():
    idx, ptr = sp.fixed_prob_csr(100_000, 2000, 0.005, 8, index_dtype=np.int64)
    assert idx.dtype == np.int64 and ptr.dtype == np.int64 and ptr.shape == (100_001,)
    assert _binomial_ok(int(ptr[-1]), 100_000 * 2000, np.float32(0.005))
    idx32, ptr32 = sp.fixed_prob_csr(100_000, 2000, 0.005, 8)
    np.testing.assert_array_equal(idx32, idx)
    np.testing.assert_array_equal(ptr32, ptr)
    # the rows of the big matrix are the rows of the jitc matrix
    rng = np.random.default_rng(1)
    e = rng.random(100_000) < 0.01
    a = sp.event_csrmv(np.float32(1.0), idx32, ptr32, e, shape=(100_000, 2000), transpose=True)
    b = sp.jitc_event_mv_prob_homo(e, np.float32(1.0), 0.005, 8, shape=(100_000, 2000), transpose=True)
    np.testing.assert_array_equal(a, b)


def test_argument_errors():
    v = np.ones(30, np.float32)
    with pytest.raises(ValueError, match=r"'vector' must have length shape\[1\] \(transpose=False\) = 30"):
        sp.jitc_mv_prob_homo(np.ones(29, np.float32), 1.0, 0.1, 1, shape=(20, 30))
    with pytest.raises(ValueError, match=r"'events' must have length shape\[0\] \(transpose=True\) = 20"):
        sp.jitc_event_mv_prob_homo(np.ones(30, bool), 1.0, 0.1, 1, shape=(20, 30), transpose=True)
    with pytest.raises(TypeError, match="'seed' must be an integer"):
        sp.jitc_mv_prob_homo(v, 1.0, 0.1, 1.5, shape=(20, 30))
    with pytest.raises(TypeError, match="'weight' must be a float32 or float64 scalar"):
        sp.jitc_mv_prob_homo(v, np.array(1, np.int32), 0.1, 1, shape=(20, 30))
    with pytest.raises(ValueError, match="'w_low' must be a scalar"):
        sp.jitc_mv_prob_uniform(v, np.ones(2), 1.0, 0.1, 1, shape=(20, 30))
    with pytest.raises(TypeError, match="'vector' must be float32 or float64, got bool"):
        sp.jitc_mv_prob_homo(np.ones(30, bool), 1.0, 0.1, 1, shape=(20, 30))
    with pytest.raises(TypeError, match="'shape' must be a pair of ints"):
        sp.jitc_mv_prob_homo(v, 1.0, 0.1, 1, shape=30)
    with pytest.raises(TypeError, match="'transpose' must be a bool"):
        sp.jitc_mv_prob_homo(v, 1.0, 0.1, 1, shape=(20, 30), transpose="yes")
