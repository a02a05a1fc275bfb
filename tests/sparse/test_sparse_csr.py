"""CSR operators against dense NumPy references: every dtype, weight kind, direction, event kind."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import dense_of, events, parallel_mode, random_csr, stable_rng, tol

MODES = ["serial", "parallel"]


def _weights(w, homo, dtype, rng):
    if homo == "scalar":
        return np.asarray(rng.standard_normal(), dtype=dtype)
    if homo == "one":
        return np.asarray([rng.standard_normal()], dtype=dtype)
    return w.astype(dtype)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("homo", ["per-synapse", "scalar", "one"])
@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
@pytest.mark.parametrize("ekind", ["bool", "float"])
def test_event_csrmv_matches_dense(ekind, wdtype, homo, transpose, mode):
    rng = stable_rng(ekind, str(wdtype), homo, transpose, mode)
    m, n = 37, 53
    w0, idx, ptr, _ = random_csr(m, n, 0.2, rng)
    w = _weights(w0, homo, wdtype, rng)
    dense = dense_of(w, idx, ptr, (m, n))
    e = events(m if transpose else n, 0.3, rng, "bool" if ekind == "bool" else wdtype)
    with parallel_mode(mode):
        got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=transpose)
    ref = (dense.T if transpose else dense) @ e.astype(np.float64)
    assert got.dtype == wdtype and got.shape == ref.shape
    rtol, atol = tol(wdtype, np.abs(ref).max(initial=0))
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("homo", ["per-synapse", "scalar"])
@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
def test_csrmv_matches_dense_and_event_path(wdtype, homo, transpose, mode):
    rng = np.random.default_rng(7)
    m, n = 41, 29
    w0, idx, ptr, _ = random_csr(m, n, 0.25, rng, index_dtype=np.int64)
    w = _weights(w0, homo, wdtype, rng)
    dense = dense_of(w, idx, ptr, (m, n))
    v = rng.standard_normal(m if transpose else n).astype(wdtype)
    v[rng.random(v.shape[0]) < 0.3] = 0  # the event path skips these
    with parallel_mode(mode):
        got = sp.csrmv(w, idx, ptr, v, shape=(m, n), transpose=transpose)
        ev = sp.event_csrmv(w, idx, ptr, v, shape=(m, n), transpose=transpose)
        evb = sp.event_csrmv(w, idx, ptr, v != 0, shape=(m, n), transpose=transpose)
        mvb = sp.csrmv(w, idx, ptr, (v != 0).astype(wdtype), shape=(m, n), transpose=transpose)
    ref = (dense.T if transpose else dense) @ v.astype(np.float64)
    rtol, atol = tol(wdtype, np.abs(ref).max(initial=0))
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
    # the event path equals csrmv on the same input, bit for bit
    np.testing.assert_array_equal(ev, got)
    np.testing.assert_array_equal(evb, mvb)


def test_serial_and_parallel_agree_on_a_large_matrix():
    rng = np.random.default_rng(3)
    m, n = 3000, 2500
    w, idx, ptr, dense = random_csr(m, n, 0.01, rng, wdtype=np.float64, duplicates=False)
    for transpose in (False, True):
        e = events(m if transpose else n, 0.2, rng, "bool")
        with parallel_mode("serial"):
            a = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=transpose)
        with parallel_mode("parallel"):
            b = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=transpose)
        ref = (dense.T if transpose else dense) @ e
        np.testing.assert_allclose(a, ref, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(b, ref, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("homo", ["per-synapse", "scalar"])
def test_gather_blocks_and_long_rows(homo, index_dtype, mode):
    """The CPU gather checks the indices of blocks of rows, and of chunks of rows longer
    than ``GATHER_SYN``: short and long rows, empty ones between them, agree with the
    dense product, and the bool path agrees with csrmv on 0/1 floats to the rounding of the sum."""
    from tiarray.operators.sparse import _csr_kernels

    cap = _csr_kernels.GATHER_SYN
    rng = np.random.default_rng(11)
    n = 3 * cap
    lengths = [0, 5, cap + 1, 0, 3, 2 * cap + 7, cap, cap - 1, 1, 17, 2 * cap, 0]
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(index_dtype)
    idx = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths]).astype(index_dtype)
    m = len(lengths)
    w0 = rng.standard_normal(idx.shape[0])
    w = _weights(w0, homo, np.float64, rng)
    dense = dense_of(w, idx, ptr, (m, n))
    e = rng.random(n) < 0.3
    v = rng.standard_normal(n)
    with parallel_mode(mode):
        got = sp.csrmv(w, idx, ptr, v, shape=(m, n))
        evb = sp.event_csrmv(w, idx, ptr, e, shape=(m, n))
        mvb = sp.csrmv(w, idx, ptr, e.astype(np.float64), shape=(m, n))
    np.testing.assert_allclose(got, dense @ v, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(evb, dense @ e, rtol=1e-12, atol=1e-12)
    # the bool path and csrmv on 0/1 floats add the same terms; the order of the additions
    # is LLVM's to choose per host (bit-equal on some CPUs, 1 ulp apart here on an AMD EPYC):
    # per row, two sums of the same L terms differ by at most 2 L eps sum |w_j e_j|
    row_len = np.diff(ptr.astype(np.int64))
    bound = 2 * row_len * np.finfo(np.float64).eps * (np.abs(dense) @ e)
    assert np.all(np.abs(evb - mvb) <= bound), np.abs(evb - mvb) - bound


@pytest.mark.parametrize("index_dtypes", [(np.int32, np.int64), (np.int64, np.int32), (np.int16, np.uint8)])
def test_index_dtypes(index_dtypes):
    rng = np.random.default_rng(5)
    m, n = 20, 30
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng)
    idx = idx.astype(index_dtypes[0])
    ptr = ptr.astype(index_dtypes[1]) if ptr[-1] <= np.iinfo(index_dtypes[1]).max else ptr
    e = events(n, 0.5, rng, "bool")
    got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n))
    np.testing.assert_allclose(got, dense @ e, rtol=1e-12, atol=1e-12)


def test_mixed_float_dtypes_give_the_weights_dtype():
    rng = np.random.default_rng(11)
    m, n = 10, 12
    w, idx, ptr, dense = random_csr(m, n, 0.4, rng, wdtype=np.float32)
    v = rng.standard_normal(n)  # float64
    got = sp.csrmv(w, idx, ptr, v, shape=(m, n))
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, dense @ v, rtol=1e-5, atol=1e-5)
    got = sp.csrmv(w.astype(np.float64), idx, ptr, v.astype(np.float32), shape=(m, n))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, dense @ v.astype(np.float32), rtol=1e-12)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transpose", [False, True])
def test_edge_cases_empty_and_extreme_events(transpose, mode):
    rng = np.random.default_rng(2)
    with parallel_mode(mode):
        # empty matrices
        for m, n in [(0, 0), (0, 5), (5, 0), (3, 4)]:
            ptr = np.zeros(m + 1, np.int32)
            idx = np.zeros(0, np.int32)
            w = np.zeros(0, np.float32)
            e = np.ones(m if transpose else n, bool)
            got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=transpose)
            assert got.shape == ((n if transpose else m),) and not got.any()
        # all-zero and all-one events; rows that are all empty but one
        m, n = 50, 40
        w, idx, ptr, dense = random_csr(m, n, 0.2, rng)
        A = dense.T if transpose else dense
        k = m if transpose else n
        for e in (np.zeros(k, bool), np.ones(k, bool), np.zeros(k), np.ones(k)):
            got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=transpose)
            np.testing.assert_allclose(got, A @ e, rtol=1e-12, atol=1e-12)
        ptr1 = np.zeros(m + 1, np.int32)
        ptr1[7:] = 3
        idx1 = np.array([1, 5, 39], np.int32)
        w1 = np.array([1.0, 2.0, 4.0])
        d1 = dense_of(w1, idx1, ptr1, (m, n))
        e = np.ones(k, bool)
        got = sp.event_csrmv(w1, idx1, ptr1, e, shape=(m, n), transpose=transpose)
        np.testing.assert_allclose(got, (d1.T if transpose else d1) @ e)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("homo", [False, True])
@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
@pytest.mark.parametrize("ekind", ["bool", "float"])
def test_csrmm_and_event_csrmm_match_dense(ekind, wdtype, homo, transpose, mode):
    rng = np.random.default_rng(13)
    m, n = 23, 31
    w0, idx, ptr, _ = random_csr(m, n, 0.3, rng)
    w = _weights(w0, "scalar" if homo else "per-synapse", wdtype, rng)
    dense = dense_of(w, idx, ptr, (m, n))
    A = dense.T if transpose else dense
    for k in (1, 5, 8, 19):  # partial and full column blocks
        rows = m if transpose else n
        if ekind == "bool":
            B = rng.random((rows, k)) < 0.3
            with parallel_mode(mode):
                got = sp.event_csrmm(w, idx, ptr, B, shape=(m, n), transpose=transpose)
        else:
            B = rng.standard_normal((rows, k)).astype(wdtype)
            B[rng.random(B.shape) < 0.3] = 0
            with parallel_mode(mode):
                got = sp.csrmm(w, idx, ptr, B, shape=(m, n), transpose=transpose)
                ev = sp.event_csrmm(w, idx, ptr, B, shape=(m, n), transpose=transpose)
            np.testing.assert_array_equal(ev, got)
        ref = A @ B.astype(np.float64)
        assert got.dtype == wdtype and got.shape == ref.shape
        rtol, atol = tol(wdtype, np.abs(ref).max(initial=0))
        np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
        # column c equals the matrix-vector product of column c
        c = k // 2
        mv = sp.event_csrmv(w, idx, ptr, B[:, c], shape=(m, n), transpose=transpose)
        np.testing.assert_allclose(got[:, c], mv, rtol=rtol, atol=atol)


@pytest.mark.parametrize("two_d", [False, True])
def test_csr_sddmm_is_the_sampled_product(two_d):
    rng = np.random.default_rng(17)
    m, n = 19, 27
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng)
    if two_d:
        a = rng.standard_normal((m, 4))
        b = rng.standard_normal((n, 4))
        full = a @ b.T
    else:
        a = rng.standard_normal(m)
        b = rng.standard_normal(n)
        full = np.outer(a, b)
    got = sp.csr_sddmm(idx, ptr, a, b, shape=(m, n))
    rows = np.repeat(np.arange(m), np.diff(ptr))
    np.testing.assert_allclose(got, full[rows, idx], rtol=1e-12, atol=1e-12)
    eb = rng.random(n) < 0.5
    got = sp.csr_sddmm(idx, ptr, np.ones(m), eb, shape=(m, n))
    np.testing.assert_array_equal(got, eb[idx].astype(np.float64))


@pytest.mark.parametrize("wdtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_dense_roundtrip(wdtype, index_dtype):
    rng = np.random.default_rng(19)
    m, n = 33, 45
    d = rng.standard_normal((m, n)).astype(wdtype)
    d[rng.random((m, n)) < 0.8] = 0
    d[4] = 0  # an empty row
    w, idx, ptr = sp.csr_from_dense(d, index_dtype=index_dtype)
    assert w.dtype == wdtype and idx.dtype == index_dtype and ptr.dtype == index_dtype
    assert ptr[0] == 0 and ptr[-1] == np.count_nonzero(d)
    np.testing.assert_array_equal(sp.csr_to_dense(w, idx, ptr, shape=(m, n)), d)
    # column order within rows, like scipy
    for i in range(m):
        assert np.all(np.diff(idx[ptr[i] : ptr[i + 1]]) > 0)
    # duplicates add up; homogeneous weights broadcast
    ptr2 = np.array([0, 3, 3], np.int32)
    idx2 = np.array([1, 1, 0], np.int32)
    np.testing.assert_array_equal(
        sp.csr_to_dense(np.asarray(2.0, wdtype), idx2, ptr2, shape=(2, 2)), np.array([[2, 4], [0, 0]], wdtype)
    )
    w0, i0, p0 = sp.csr_from_dense(np.zeros((0, 3), wdtype))
    assert w0.shape == (0,) and p0.tolist() == [0]


def test_scipy_agrees():
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(23)
    S = scipy_sparse.random(200, 300, density=0.05, random_state=1, format="csr", dtype=np.float64)
    e = rng.random(300) < 0.2
    got = sp.event_csrmv(S.data, S.indices, S.indptr, e, shape=S.shape)
    np.testing.assert_allclose(got, S @ e.astype(np.float64), rtol=1e-12, atol=1e-12)
    e = rng.random(200) < 0.2
    got = sp.event_csrmv(S.data, S.indices, S.indptr, e, shape=S.shape, transpose=True)
    np.testing.assert_allclose(got, S.T @ e.astype(np.float64), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
@pytest.mark.parametrize("homo", [False, True])
def test_csr_transpose(homo, index_dtype):
    rng = np.random.default_rng(29)
    m, n = 37, 23
    w, idx, ptr, dense = random_csr(m, n, 0.25, rng, index_dtype=index_dtype)
    if homo:
        w = np.asarray(1.5)
        dense = dense_of(w, idx, ptr, (m, n))
    wt, it, pt, perm = sp.csr_transpose(w, idx, ptr, shape=(m, n), return_permutation=True)
    assert it.dtype == index_dtype and pt.dtype == index_dtype and pt.shape == (n + 1,)
    np.testing.assert_allclose(dense_of(wt, it, pt, (n, m)), dense.T, rtol=1e-12)
    if not homo:
        np.testing.assert_array_equal(wt, w[perm])
    for c in range(n):  # rows increase within each column (stable)
        assert np.all(np.diff(it[pt[c] : pt[c + 1]]) >= 0)
    # A @ e through the transpose visits only the active events' synapses: same result
    e = rng.random(n) < 0.3
    a = sp.event_csrmv(w, idx, ptr, e, shape=(m, n))
    b = sp.event_csrmv(wt, it, pt, e, shape=(n, m), transpose=True)
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    x = rng.standard_normal(m)
    np.testing.assert_allclose(
        sp.csrmv(w, idx, ptr, x, shape=(m, n), transpose=True),
        sp.csrmv(wt, it, pt, x, shape=(n, m)),
        rtol=1e-12,
    )


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ekind", ["bool", "float32", "float64"])
@pytest.mark.parametrize("m", [1, 63, 64, 65, 130, 1000])
def test_transposed_event_scan_around_block_edges(m, ekind, mode):
    # the CPU scatter tests 64 events at a time before visiting their rows: single events at
    # every block edge, in a tail shorter than a block, and none at all must all be found
    rng = np.random.default_rng(m)
    n = 17
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng, wdtype=np.float64, duplicates=False)
    dt = bool if ekind == "bool" else np.dtype(ekind)
    edges = sorted({k for b in range(0, m + 64, 64) for k in (b - 1, b, b + 1) if 0 <= k < m})
    cases = [[]] + [[k] for k in edges] + [edges, [m - 1]]
    for active in cases:
        e = np.zeros(m, dt)
        e[active] = True if ekind == "bool" else 1.5
        with parallel_mode(mode):
            got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=True)
            got_mv = sp.csrmv(w, idx, ptr, e.astype(np.float64), shape=(m, n), transpose=True)
        ref = dense.T @ e.astype(np.float64)
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0, err_msg=f"active rows {active}")
        np.testing.assert_allclose(got_mv, ref, rtol=1e-12, atol=0, err_msg=f"active rows {active}")


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_transposed_scan_treats_signed_zero_as_zero(dt):
    # a block of -0.0 is skipped like a block of +0.0 (the per-row test is vi != 0): the
    # result is +0.0 everywhere, and one nonzero entry among them is still found
    m, n = 200, 9
    rng = np.random.default_rng(11)
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng, wdtype=np.float64, duplicates=False)
    v = np.full(m, -0.0, dt)
    got = sp.csrmv(w, idx, ptr, v, shape=(m, n), transpose=True)
    assert not got.any() and not np.signbit(got).any()
    row = int(np.argmax(np.diff(ptr)))  # a row with synapses
    v[row] = 2.0
    got = sp.csrmv(w, idx, ptr, v, shape=(m, n), transpose=True)
    np.testing.assert_allclose(got, dense.T @ v.astype(np.float64), rtol=1e-12, atol=0)
