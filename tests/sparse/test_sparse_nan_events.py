"""A NaN event is an event: it reaches the result as in the dense product, on every route that
skips zero events (Taichi's ``v != 0`` is an ordered compare, false for NaN, so the kernels
used to skip NaN events silently and return finite numbers where ``A.T @ x`` is NaN).

Each case compares the NaN pattern and the finite values with a float64 dense reference;
``-0.0`` entries (zero events, skipped) sit beside the NaN."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp

M, N = 150, 130  # more than two event blocks of 64 (a block holding only the NaN is scanned)


def _matrix(rng):
    A = (rng.random((M, N)) < 0.2) * rng.standard_normal((M, N))
    A[70, :] = rng.standard_normal(N)  # the NaN row reaches every column
    A[:, 70] = rng.standard_normal(M)
    return A.astype(np.float32)


def _events(rng, n, kind):
    e = np.full(n, -0.0, np.float32)
    e[[3, 100]] = rng.standard_normal(2)
    e[70] = np.nan if kind == "nan" else 1.0
    return e


def _check(got, ref):
    got = np.asarray(got, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref)), (np.isnan(got).sum(), np.isnan(ref).sum())
    fin = ~np.isnan(ref)
    np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-5, atol=1e-5)


def _csr(A):
    rows, cols = np.nonzero(A)
    indptr = np.searchsorted(rows, np.arange(A.shape[0] + 1)).astype(np.int32)
    return A[rows, cols], cols.astype(np.int32), indptr


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize(
    "op", ["csrmv", "event_csrmv", "coomv", "event_coomv", "fcnmv", "event_fcnmv", "event_densemv"]
)
def test_nan_events_propagate(op, transpose):
    rng = np.random.default_rng(11)
    A = _matrix(rng)
    e = _events(rng, M if transpose else N, "nan")
    A64 = A.astype(np.float64)
    ref = None
    if op.endswith("fcnmv"):
        k = 5
        idx = np.stack([rng.choice(N, k, replace=False) for _ in range(M)]).astype(np.int32)
        idx[:, 0] = 70  # every row reads the NaN event (transpose=False)
        w = rng.standard_normal((M, k)).astype(np.float32)
        got = getattr(sp, op)(w, idx, e, shape=(M, N), transpose=transpose)
        # the sparse product: only the k synapses of a row meet its event
        rows = np.repeat(np.arange(M), k)
        w64, e64 = w.ravel().astype(np.float64), e.astype(np.float64)
        if transpose:
            ref = np.zeros(N)
            np.add.at(ref, idx.ravel(), w64 * e64[rows])
        else:
            ref = np.zeros(M)
            np.add.at(ref, rows, w64 * e64[idx.ravel()])
    elif op.endswith("densemv"):
        got = sp.event_densemv(A, e, transpose=transpose)
    else:
        data, cols, indptr = _csr(A)
        if op.endswith("coomv"):
            rows = np.repeat(np.arange(M), np.diff(indptr)).astype(np.int32)
            got = getattr(sp, op)(data, rows, cols, e, shape=(M, N), transpose=transpose)
        else:
            got = getattr(sp, op)(data, cols, indptr, e, shape=(M, N), transpose=transpose)
    if ref is None:  # row and column 70 of A are dense: the dense product is the sparse one
        ref = (A64.T if transpose else A64) @ e.astype(np.float64)
    assert np.isnan(ref).any()
    _check(got, ref)


def test_nan_events_propagate_in_mm_and_delays():
    rng = np.random.default_rng(12)
    A = _matrix(rng)
    data, cols, indptr = _csr(A)
    E = np.stack([_events(rng, M, "nan"), _events(rng, M, "one")], axis=1)
    ref = A.astype(np.float64).T @ E.astype(np.float64)
    _check(sp.event_csrmm(data, cols, indptr, E, shape=(M, N), transpose=True), ref)
    # delays all 0: the product of the current slot's events
    hist = np.zeros((2, M), np.float32)
    hist[1] = _events(rng, M, "nan")
    delays = np.zeros(len(cols), np.int32)
    got = sp.event_csrmv_delayed(data, cols, indptr, delays, hist, 1, shape=(M, N))
    _check(got, A.astype(np.float64).T @ hist[1].astype(np.float64))
