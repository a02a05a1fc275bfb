"""Random hostile input (hypothesis) for the operator families beyond CSR products.

Fixed-number and COO products, spike-index events, delays, plasticity updates and
JIT-connectivity matrix products on drawn index arrays, counts, delays, seeds and
probabilities, mostly valid and sometimes anything. Each drawn case must either give the
dense NumPy reference's answer or raise a clear error that names the function, and a
refused case must be invalid; a crash fails the child process's current test, which
tests/core/test_hostile_input.py reports.
"""

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from hypothesis import given
from hypothesis import strategies as st

# int16 / uint32 indices may be refused (int32 / int64 taken); floats and bools must be
_IDX_DTYPES = st.sampled_from([np.int32, np.int64, np.uint32, np.int16, np.float64, np.bool_])
_TAKEN = (np.int32, np.int64)
_INTS = (np.int32, np.int64, np.uint32, np.int16)


def _ints(draw, size, lo, hi):
    """``size`` ints in ``[lo, hi)``, or (one draw in two) any of ``[lo - 3, hi + 3)``."""
    wild = draw(st.booleans())
    a, b = (lo - 3, hi + 2) if wild else (lo, max(hi - 1, lo))
    return draw(st.lists(st.integers(a, b), min_size=size, max_size=size))


def _refused(name, e, valid, dt):
    """A refused case: the error names the function, and the case is invalid (valid values in
    int16 / uint32 may be refused)."""
    assert name in str(e), f"the error does not name {name}: {e}"
    assert not (valid and dt in _TAKEN), f"a valid case was refused: {e}"


def _accepted(valid, dt):
    assert valid and dt in _INTS, "an invalid case was accepted"


def _close(got, want, terms):
    # each output sums at most `terms` products of O(1) float64 values
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-12, atol=1e-12 * (1 + terms))


# ----------------------------------------------------------------------------- fixed number


@st.composite
def fcn_case(draw):
    m, n, k = draw(st.integers(0, 5)), draw(st.integers(0, 5)), draw(st.integers(0, 4))
    rows = m if draw(st.integers(0, 5)) else draw(st.integers(0, 6))  # sometimes not shape[0]
    idx = np.array(_ints(draw, rows * k, 0, n), np.int64).reshape(rows, k)
    return m, n, idx, draw(_IDX_DTYPES), draw(st.sampled_from(["array", "scalar", "wrong-shape"]))


@pytest.mark.parametrize("op", ["fcnmv", "event_fcnmv", "fcnmm", "event_fcnmm"])
@pytest.mark.parametrize("transpose", [False, True])
@given(case=fcn_case(), seed=st.integers(0, 2**16))
def test_fixed_number_products(case, seed, op, transpose):
    m, n, idx, dt, wkind = case
    rng = np.random.default_rng(seed)
    rows, k = idx.shape
    w = {
        "array": rng.standard_normal((rows, k)),
        "scalar": 0.75,
        "wrong-shape": rng.standard_normal((rows, k + 1)),
    }
    w = w[wkind]
    length = m if transpose else n
    shape = (length,) if op.endswith("mv") else (length, 2)
    x = rng.random(shape) < 0.5 if op.startswith("event") else rng.standard_normal(shape)
    valid = rows == m and wkind != "wrong-shape" and ((idx >= 0) & (idx < n)).all()
    f = getattr(sp, op)
    try:
        got = f(w, idx.astype(dt), x, shape=(m, n), transpose=transpose)
    except (ValueError, TypeError, IndexError) as e:
        return _refused(op, e, valid, dt)
    _accepted(valid, dt)
    A = np.zeros((m, n))
    np.add.at(A, (np.repeat(np.arange(m), k), idx.reshape(-1)), np.broadcast_to(w, (m, k)).reshape(-1))
    _close(got, (A.T if transpose else A) @ x.astype(np.float64), m * k)


# ----------------------------------------------------------------------------- COO


@st.composite
def coo_case(draw):
    m, n, nnz = draw(st.integers(0, 5)), draw(st.integers(0, 5)), draw(st.integers(0, 10))
    row = _ints(draw, nnz, 0, m)
    col = _ints(draw, nnz + draw(st.sampled_from([0, 0, 0, 1, -1])) if nnz else nnz, 0, n)
    return (
        m,
        n,
        np.array(row, np.int64),
        np.array(col, np.int64),
        draw(_IDX_DTYPES),
        draw(st.sampled_from(["array", "scalar", "wrong-length"])),
    )


@pytest.mark.parametrize("op", ["coomv", "event_coomv", "coomm", "event_coomm"])
@pytest.mark.parametrize("transpose", [False, True])
@given(case=coo_case(), seed=st.integers(0, 2**16))
def test_coo_products(case, seed, op, transpose):
    m, n, row, col, dt, wkind = case
    rng = np.random.default_rng(seed)
    nnz = len(row)
    w = {"array": rng.standard_normal(nnz), "scalar": -1.25, "wrong-length": rng.standard_normal(nnz + 2)}[
        wkind
    ]
    length = m if transpose else n
    shape = (length,) if op.endswith("mv") else (length, 2)
    x = rng.random(shape) < 0.5 if op.startswith("event") else rng.standard_normal(shape)
    valid = (
        len(col) == nnz
        and wkind != "wrong-length"
        and ((row >= 0) & (row < m)).all()
        and ((col >= 0) & (col < n)).all()
    )
    f = getattr(sp, op)
    try:
        got = f(w, row.astype(dt), col.astype(dt), x, shape=(m, n), transpose=transpose)
    except (ValueError, TypeError, IndexError) as e:
        return _refused(op, e, valid, dt)
    _accepted(valid, dt)
    A = np.zeros((m, n))
    np.add.at(A, (row, col), np.broadcast_to(w, (nnz,)))
    _close(got, (A.T if transpose else A) @ x.astype(np.float64), nnz)


# ----------------------------------------------------------------------------- CSR structure


def _csr(rng, m, n, p=0.5):
    mask = rng.random((m, n)) < p
    indptr = np.concatenate([[0], np.cumsum(mask.sum(1))]).astype(np.int64)
    return np.nonzero(mask)[1].astype(np.int64), indptr


def _dense(w, indices, indptr, m, n):
    A = np.zeros((m, n))
    rows = np.repeat(np.arange(m), np.diff(indptr))
    np.add.at(A, (rows, indices), np.broadcast_to(w, indices.shape))
    return A


@st.composite
def spike_list(draw):
    m, n = draw(st.integers(0, 6)), draw(st.integers(0, 5))
    size = draw(st.integers(0, 8))
    ids = _ints(draw, size, 0, m)
    count = draw(st.integers(0, size) if draw(st.integers(0, 3)) else st.integers(-3, size + 3))
    return m, n, np.array(ids, np.int64), count, draw(_IDX_DTYPES)


@pytest.mark.parametrize("family", ["csr", "fcn"])
@given(case=spike_list(), seed=st.integers(0, 2**16))
def test_spike_index_products(case, seed, family):
    m, n, ids, count, dt = case
    rng = np.random.default_rng(seed)
    valid = 0 <= count <= len(ids) and ((ids[:count] >= 0) & (ids[:count] < m)).all()
    # repeated ids count once each time they are listed
    e = np.zeros(m)
    if valid:
        np.add.at(e, ids[:count], 1.0)
    if family == "csr":
        indices, indptr = _csr(rng, m, n)
        w = rng.standard_normal(indices.shape)
        name, call = (
            "event_csrmv_indexed",
            lambda: sp.event_csrmv_indexed(w, indices, indptr, ids.astype(dt), count, shape=(m, n)),
        )
        A = _dense(w, indices, indptr, m, n)
    else:
        k = 2 if n else 0
        idx = rng.integers(0, max(n, 1), (m, k))
        w = rng.standard_normal((m, k))
        name, call = (
            "event_fcnmv_indexed",
            lambda: sp.event_fcnmv_indexed(w, idx, ids.astype(dt), count, shape=(m, n)),
        )
        A = np.zeros((m, n))
        np.add.at(A, (np.repeat(np.arange(m), k), idx.reshape(-1)), w.reshape(-1))
    try:
        got = call()
    except (ValueError, TypeError, IndexError) as e:
        return _refused(name, e, valid, dt)
    _accepted(valid, dt)
    _close(got, A.T @ e, A.size * max(count, 1))


# ----------------------------------------------------------------------------- delays


@st.composite
def delay_case(draw):
    m, n, D = draw(st.integers(0, 5)), draw(st.integers(0, 5)), draw(st.integers(0, 4))
    t = draw(st.integers(-10, 10) if draw(st.integers(0, 3)) else st.integers(-(2**40), 2**40))
    return m, n, D, t, draw(st.integers(0, 2**16)), draw(_IDX_DTYPES), draw(st.booleans())


@given(case=delay_case())
def test_delayed_product(case):
    m, n, D, t, seed, dt, wild = case
    rng = np.random.default_rng(seed)
    indices, indptr = _csr(rng, m, n)
    nnz = len(indices)
    delays = rng.integers(-2, D + 2, nnz) if wild else rng.integers(0, max(D, 1), nnz)
    w = rng.standard_normal(nnz)
    hist = rng.random((D, m)) < 0.5
    valid = D >= 1 and ((delays >= 0) & (delays < D)).all()
    try:
        got = sp.event_csrmv_delayed(w, indices, indptr, delays.astype(dt), hist, t, shape=(m, n))
    except (ValueError, TypeError, IndexError) as e:
        return _refused("event_csrmv_delayed", e, valid, dt)
    _accepted(valid, dt)
    rows = np.repeat(np.arange(m), np.diff(indptr))
    want = np.zeros(n)
    np.add.at(want, indices, w * hist[(t - delays) % D, rows])
    _close(got, want, nnz)


# ----------------------------------------------------------------------------- plasticity


@st.composite
def update_case(draw):
    m, n = draw(st.integers(0, 5)), draw(st.integers(0, 5))
    nnz = draw(st.integers(0, 10))
    indices = _ints(draw, nnz, 0, n)
    cuts = sorted(draw(st.lists(st.integers(0, nnz), min_size=max(m - 1, 0), max_size=max(m - 1, 0))))
    indptr = [0, *cuts, nnz] if m else [0]
    if draw(st.integers(0, 4)) == 0:  # sometimes any indptr
        indptr = draw(st.lists(st.integers(-2, nnz + 2), min_size=0, max_size=m + 3))
    return (
        m,
        n,
        np.array(indices, np.int64),
        np.array(indptr, np.int64),
        draw(_IDX_DTYPES),
        draw(st.booleans()),
    )


def _csr_valid(m, n, indices, indptr):
    if len(indptr) != m + 1 or indptr[0] != 0 or indptr[-1] != len(indices):
        return False
    return bool((np.diff(indptr) >= 0).all() and ((indices >= 0) & (indices < n)).all())


@pytest.mark.parametrize("fn", ["csr_update_on_pre", "csr_update_on_post"])
@given(case=update_case(), seed=st.integers(0, 2**16))
def test_csr_updates(case, seed, fn):
    m, n, indices, indptr, dt, clip = case
    rng = np.random.default_rng(seed)
    pre = fn.endswith("pre")
    w = rng.standard_normal(len(indices))
    s = rng.random(m if pre else n) < 0.5
    tr = rng.standard_normal(n if pre else m)
    kw = {"w_min": -0.5, "w_max": 0.5} if clip else {}
    valid = _csr_valid(m, n, indices, indptr)
    keep = w.copy()
    try:
        got = getattr(sp, fn)(w, indices.astype(dt), indptr.astype(dt), s, tr, shape=(m, n), **kw)
    except (ValueError, TypeError, IndexError) as e:
        return _refused(fn, e, valid, dt)
    _accepted(valid, dt)
    np.testing.assert_array_equal(w, keep)  # the caller's weights are not changed
    rows = np.repeat(np.arange(m), np.diff(indptr))
    spk, other = (s[rows], tr[indices]) if pre else (s[indices], tr[rows])
    want = np.where(spk, w + other, w)
    if clip:
        want = np.where(spk, np.clip(want, -0.5, 0.5), w)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-15)


# ----------------------------------------------------------------------------- JIT connectivity


@st.composite
def jitc_case(draw):
    m, n = draw(st.integers(0, 6)), draw(st.integers(0, 6))
    prob = draw(
        st.floats(0, 1) if draw(st.integers(0, 3)) else st.one_of(st.floats(-0.5, 1.5), st.just(float("nan")))
    )
    seed = draw(st.integers(-(2**40), 2**40) if draw(st.booleans()) else st.integers(0, 100))
    return m, n, prob, seed, draw(st.sampled_from(["homo", "uniform", "normal"])), draw(st.booleans())


@pytest.mark.parametrize("transpose", [False, True])
@given(case=jitc_case(), x_seed=st.integers(0, 2**16))
def test_jitc_matrix_products(case, x_seed, transpose):
    m, n, prob, seed, dist, event = case
    rng = np.random.default_rng(x_seed)
    params = tuple(
        np.float64(p) for p in {"homo": (0.5,), "uniform": (-0.3, 0.8), "normal": (0.1, 0.4)}[dist]
    )
    length = m if transpose else n
    x = rng.random((length, 3)) < 0.5 if event else rng.standard_normal((length, 3))
    name = f"jitc_{'event_' if event else ''}mm_prob_{dist}"
    valid = 0 <= prob <= 1  # (False for NaN)
    try:
        got = getattr(sp, name)(x, *params, prob, seed, shape=(m, n), transpose=transpose)
    except (ValueError, TypeError, IndexError) as e:
        return _refused(name, e, valid, np.int32)
    assert valid, "an invalid case was accepted"
    A = getattr(sp, f"jitc_todense_prob_{dist}")(*params, prob, seed, shape=(m, n))
    _close(got, (A.T if transpose else A) @ x.astype(np.float64), max(m, n))
