"""Dense event products and COO products: bad input, event-driven reads, memory safety on
unvalidated indices. (Every operator against dense references on every framework is in
``test_sparse_families.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import guarded
from tiarray.operators.sparse import _coo

from tiarray import _dtypes


def test_dense_errors():
    W = np.ones((3, 4))
    with pytest.raises(
        ValueError,
        match=r"event_densemv\(\): argument 'weights' must be a 2-D matrix \(m, n\), got shape \(4,\)",
    ):
        sp.event_densemv(np.ones(4), np.ones(4, bool))
    with pytest.raises(
        TypeError, match=r"event_densemv\(\): argument 'weights' must be float32 or float64, got dtype int64"
    ):
        sp.event_densemv(W.astype(np.int64), np.ones(4, bool))
    with pytest.raises(
        ValueError,
        match=r"argument 'events' must have length weights.shape\[1\] \(transpose=False\) = 4, got 3",
    ):
        sp.event_densemv(W, np.ones(3, bool))
    with pytest.raises(
        ValueError,
        match=r"argument 'events' must have length weights.shape\[0\] \(transpose=True\) = 3, got 4",
    ):
        sp.event_densemv(W, np.ones(4, bool), transpose=True)
    with pytest.raises(
        TypeError, match=r"argument 'events' must be bool, float32 or float64, got dtype int32"
    ):
        sp.event_densemv(W, np.ones(4, np.int32))
    with pytest.raises(ValueError, match=r"event_densemm\(\): argument 'events' must be 2-D"):
        sp.event_densemm(W, np.ones(4, bool))
    with pytest.raises(TypeError, match="'transpose' must be a bool"):
        sp.event_densemv(W, np.ones(4, bool), transpose="yes")


def test_dense_reads_only_the_active_columns_and_rows():
    """Entries of W outside the active columns (rows) are never read: NaNs there do not show."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((30, 40))
    e = rng.random(40) < 0.2
    Wn = W.copy()
    Wn[:, ~e] = np.nan
    np.testing.assert_allclose(sp.event_densemv(Wn, e), W @ e, rtol=1e-12)
    s = rng.random(30) < 0.2
    Wn = W.copy()
    Wn[~s, :] = np.nan
    np.testing.assert_allclose(sp.event_densemv(Wn, s, transpose=True), W.T @ s, rtol=1e-12)
    E = rng.random((40, 3)) < 0.1
    Wn = W.copy()
    Wn[:, ~E.any(1)] = np.nan
    np.testing.assert_allclose(sp.event_densemm(Wn, E), W @ E, rtol=1e-12)
    # all-zero and all-one events, empty matrices
    for v in (False, True):
        np.testing.assert_allclose(sp.event_densemv(W, np.full(40, v)), W @ np.full(40, v), rtol=1e-12)
    assert sp.event_densemv(np.zeros((0, 5)), np.ones(5, bool)).shape == (0,)
    assert sp.event_densemv(np.zeros((3, 0)), np.ones(3, bool), transpose=True).shape == (0,)


@pytest.fixture
def coo():
    rng = np.random.default_rng(2)
    row = rng.integers(0, 6, 20).astype(np.int32)
    col = rng.integers(0, 8, 20).astype(np.int32)
    return rng.standard_normal(20), row, col


@pytest.mark.parametrize("kind", ["bool", "float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
def test_dense_event_list_scans_blocks(kind, transpose):
    """The event list is scanned 64 events at a time (a block without an event is skipped):
    events on the edges of the blocks and in the short last block, ``-0.0`` (zero) and NaN
    (not zero) each give the dense product."""
    rng = np.random.default_rng(3)
    m = 200  # three full blocks of 64 and a tail of 8
    dt = np.float64 if kind == "float64" else np.float32
    W = rng.standard_normal((m, m)).astype(dt)
    on = [0, 63, 64, 127, 191, 192, 199]
    e = np.zeros(m, dtype=bool if kind == "bool" else dt)
    if kind == "bool":
        e[on] = True
    else:
        e[:] = -0.0
        e[on] = rng.standard_normal(len(on))
        e[130] = np.nan  # alone in the third block
    ref = (W.astype(np.float64).T if transpose else W.astype(np.float64)) @ e.astype(np.float64)
    got = sp.event_densemv(W, e, transpose=transpose)
    # per element: the sum of <= 8 terms in the weights' precision
    tol = (
        8
        * np.finfo(dt).eps
        * ((np.abs(W).T if transpose else np.abs(W)) @ np.abs(np.nan_to_num(e.astype(np.float64))))
    )
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    fin = ~np.isnan(ref)
    assert np.all(np.abs(got[fin] - ref[fin]) <= tol[fin] + 1e-30)


def test_coo_errors(coo):
    w, row, col = coo
    v, e = np.ones(8), np.ones(8, bool)
    with pytest.raises(
        ValueError, match=r"coomv\(\): arguments 'row' and 'col' must have the same length .* got 20 and 19"
    ):
        sp.coomv(w, row, col[:-1], v, shape=(6, 8))
    with pytest.raises(
        ValueError,
        match=r"coomv\(\): argument 'weights' must have shape \(\) or \(1,\) .* \(nnz,\) = \(20,\), got \(19,\)",
    ):
        sp.coomv(w[:-1], row, col, v, shape=(6, 8))
    with pytest.raises(TypeError, match=r"argument 'row' must be an integer array"):
        sp.coomv(w, row.astype(float), col, v, shape=(6, 8))
    with pytest.raises(ValueError, match=r"argument 'col' must be 1-D"):
        sp.coomv(w, row, col.reshape(4, 5), v, shape=(6, 8))
    with pytest.raises(TypeError, match=r"argument 'vector' must be float32 or float64, got bool"):
        sp.coomv(w, row, col, e, shape=(6, 8))
    with pytest.raises(
        ValueError, match=r"argument 'events' must have length shape\[0\] \(transpose=True\) = 6, got 8"
    ):
        sp.event_coomv(w, row, col, e, shape=(6, 8), transpose=True)
    bad = row.copy()
    bad[7] = 6
    with pytest.raises(
        IndexError, match=r"event_coomv\(\): argument 'row' holds row index 6 at position 7, outside \[0, 6\)"
    ):
        sp.event_coomv(w, bad, col, e, shape=(6, 8))
    bad = col.copy()
    bad[3] = -2
    with pytest.raises(
        IndexError, match=r"coomm\(\): argument 'col' holds column index -2 at position 3, outside \[0, 8\)"
    ):
        sp.coomm(w, row, bad, np.ones((8, 2)), shape=(6, 8))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("blocks", [1, 2])
def test_coo_kernel_stays_in_bounds_on_garbage_indices(transpose, blocks):
    m, n = 10, 12
    row = np.array([0, -5, 11, 12, 2**31 - 1, -(2**31), 3, 1000, 5, 7, 9, 1], np.int32)
    col = np.array([3, 2**31 - 1, -1, 11, 12, 0, 5, 4, -(2**31), 1000, 2, 11], np.int32)
    w = np.arange(1.0, 13.0, dtype=np.float32)
    n_in, n_out = (m, n) if transpose else (n, m)
    vbuf = np.full(n_in + 128, np.nan, np.float32)
    x = vbuf[64 : 64 + n_in]
    x[:] = 1
    buf, out = guarded(n_out, np.float32)
    sbuf, scratch = guarded((blocks - 1) * n_out, np.float32)
    spec = _coo._OPS["coomv"]._launcher("cpu").spec(
        [(_dtypes.float32, 1, False), (_dtypes.int32, 1, False), (_dtypes.int32, 1, False),
         (_dtypes.float32, 1, False), (_dtypes.float32, 1, False), (_dtypes.float32, 1, False)],
        (transpose,), serial=blocks == 1,
    )  # fmt: skip

    def arg(a):
        return (a.ctypes.data, a.nbytes, a.shape)

    spec.launch([arg(w), arg(row), arg(col), arg(x), arg(out), arg(scratch)])
    assert np.isfinite(out).all()
    for b, o in ((buf, out), (sbuf, scratch)):
        np.testing.assert_array_equal(b[:64], 12345.0)
        np.testing.assert_array_equal(b[64 + o.shape[0] :], 12345.0)
    # the valid synapses (0, 3), (3, 5), (9, 2) and (1, 11) were added, the others skipped
    ref = np.zeros(n_out)
    for r, c, wj in ((0, 3, 1.0), (3, 5, 7.0), (9, 2, 11.0), (1, 11, 12.0)):
        ref[c if transpose else r] += wj
    np.testing.assert_array_equal(out, ref)
