"""The sparse operators on TiArrays: TiArrays in, TiArrays out, equal to a dense float64 reference.

The eager TiArray route runs generated code per signature, one runner per CPU variant with
the per-call policy choosing (the serial and parallel variants are forced below through
``set_thresholds``); new event values, new arrays and strided views on one signature must
each reach the kernel.
"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import random_csr, stable_rng, tol

import tiarray as ta


@pytest.fixture(params=["serial", "parallel"])
def variant(request):
    old = sp.set_thresholds()
    big = 1 << 62
    th = big if request.param == "serial" else 0
    sp.set_thresholds(gather=th, scatter=th)
    yield request.param
    sp.set_thresholds(**old)


def _check(got, want, dtype=np.float64):
    assert isinstance(got, ta.TiArray), type(got)
    rtol, atol = tol(dtype, float(np.abs(want).max(initial=1.0)))
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("transpose", [False, True])
def test_csr_products_on_tiarrays(variant, transpose):
    rng = stable_rng("tiarray-csr", transpose)
    m, n = 70, 50
    w, idx, ptr, A = random_csr(m, n, 0.2, rng)
    tw, tidx, tptr = (ta.asarray(a) for a in (w, idx, ptr))
    k = m if transpose else n
    for rate in (0.05, 0.5, 0.0, 1.0):  # one signature, new values every call
        s = rng.random(k) < rate
        want = (A.T if transpose else A) @ s
        _check(sp.event_csrmv(tw, tidx, tptr, ta.asarray(s), shape=(m, n), transpose=transpose), want)
        x = rng.standard_normal(k)
        want = (A.T if transpose else A) @ x
        _check(sp.csrmv(tw, tidx, tptr, ta.asarray(x), shape=(m, n), transpose=transpose), want)
    from tiarray._internal import debug_mode

    plans = [p for key, p in sp.event_csrmv.operator._plans.items() if key[0] == "tiarray"]
    assert plans and all((p.runner is None) == debug_mode() for p in plans)  # generated code ran
    # a strided and a reversed view of the events (the policy and the kernel read their own elements)
    base = rng.random(2 * k) < 0.3
    for view, ref in ((ta.asarray(base)[::2], base[::2]), (ta.asarray(base[:k])[::-1], base[:k][::-1])):
        want = (A.T if transpose else A) @ ref
        _check(sp.event_csrmv(tw, tidx, tptr, view, shape=(m, n), transpose=transpose), want)


def test_fixed_number_and_coo_products_on_tiarrays(variant):
    rng = stable_rng("tiarray-fcn")
    m, n, k = 60, 45, 7
    idx = rng.integers(0, n, (m, k)).astype(np.int32)
    w = rng.standard_normal((m, k)).astype(np.float32)
    A = np.zeros((m, n))
    np.add.at(A, (np.repeat(np.arange(m), k), idx.ravel()), w.ravel().astype(np.float64))
    row = np.repeat(np.arange(m, dtype=np.int32), k)
    for _ in range(3):
        s = rng.random(m) < 0.3
        got = sp.event_fcnmv(ta.asarray(w), ta.asarray(idx), ta.asarray(s), shape=(m, n), transpose=True)
        _check(got, A.T @ s, np.float32)
        got = sp.event_coomv(
            ta.asarray(w.ravel()),
            ta.asarray(row),
            ta.asarray(idx.ravel()),
            ta.asarray(s),
            shape=(m, n),
            transpose=True,
        )
        _check(got, A.T @ s, np.float32)


def test_delays_and_plasticity_on_tiarrays(variant):
    rng = stable_rng("tiarray-delay")
    m, n, D = 40, 30, 4
    w, idx, ptr, _ = random_csr(m, n, 0.3, rng)
    delays = rng.integers(0, D, idx.shape[0]).astype(np.int32)
    rows = np.repeat(np.arange(m), np.diff(ptr))
    tw, tidx, tptr, td = (ta.asarray(a) for a in (w, idx, ptr, delays))
    for t in (3, 4, 9):
        hist = rng.random((D, m)) < 0.3
        want = np.zeros(n)
        np.add.at(want, idx, w * hist[(t - delays) % D, rows])
        _check(sp.event_csrmv_delayed(tw, tidx, tptr, td, ta.asarray(hist), t, shape=(m, n)), want)
    post = rng.random(n) < 0.4
    trace = rng.random(m)
    want = w.copy()
    sel = post[idx]
    want[sel] = np.clip(want[sel] + trace[rows[sel]], -0.5, 0.5)
    got = sp.csr_update_on_post(
        tw, tidx, tptr, ta.asarray(post), ta.asarray(trace), shape=(m, n), w_min=-0.5, w_max=0.5
    )
    _check(got, want)
    np.testing.assert_array_equal(np.asarray(tw), w)  # the weights themselves are not written
