"""Random hostile input (hypothesis): index arrays, shapes, strides and dtypes.

Each drawn case must either give the reference's answer or raise a clear error (one
that names the function); a crash fails the child process's current test, which
tests/core/test_hostile_input.py reports. References: a dense product built with NumPy
for the sparse operators, NumPy itself for strided views.
"""

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from hypothesis import given
from hypothesis import strategies as st
from numpy.lib.stride_tricks import as_strided

import tiarray as ta

_IDX_DTYPES = st.sampled_from([np.int32, np.int64, np.uint32, np.int16, np.float64, np.bool_])


@st.composite
def csr_case(draw):
    m = draw(st.integers(0, 6))
    n = draw(st.integers(0, 6))
    nnz = draw(st.integers(0, 12))
    # mostly valid, sometimes anything: out-of-range and negative columns, a wrong indptr
    indices = draw(st.lists(st.integers(-3, n + 2) if draw(st.booleans()) else st.integers(0, max(n - 1, 0)),
                            min_size=nnz, max_size=nnz))  # fmt: skip
    if draw(st.booleans()):
        cuts = sorted(draw(st.lists(st.integers(0, nnz), min_size=max(m - 1, 0), max_size=max(m - 1, 0))))
        indptr = [0, *cuts, nnz] if m else [0]
        if m == 0 and nnz:
            indptr = [0]
    else:
        indptr = draw(st.lists(st.integers(-2, nnz + 2), min_size=0, max_size=m + 3))
    dt = draw(_IDX_DTYPES)
    wkind = draw(st.sampled_from(["array", "scalar", "wrong-length"]))
    return m, n, indices, indptr, dt, wkind


def _dense(w, indices, indptr, m, n):
    a = np.zeros((m, n))
    for i in range(m):
        for j in range(indptr[i], indptr[i + 1]):
            a[i, indices[j]] += w[j] if np.ndim(w) else w
    return a


def _valid(m, n, indices, indptr):
    if len(indptr) != m + 1 or (indptr and (indptr[0] != 0 or indptr[-1] != len(indices))):
        return False
    if any(b < a for a, b in zip(indptr, indptr[1:])):
        return False
    return all(0 <= c < n for c in indices)


@pytest.mark.parametrize("event", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@given(case=csr_case(), seed=st.integers(0, 2**16))
def test_csr_products_on_random_index_arrays(case, seed, event, transpose):
    m, n, indices, indptr, dt, wkind = case
    rng = np.random.default_rng(seed)
    nnz = len(indices)
    w = {"array": rng.standard_normal(nnz), "scalar": 1.5, "wrong-length": rng.standard_normal(nnz + 2)}[
        wkind
    ]
    length = m if transpose else n
    v = rng.random(length) < 0.5 if event else rng.standard_normal(length)
    idx = np.array(indices).astype(dt)
    ptr = np.array(indptr).astype(dt)
    f = sp.event_csrmv if event else sp.csrmv
    name = f.__name__
    try:
        got = np.asarray(f(w, idx, ptr, v, shape=(m, n), transpose=transpose))
    except (ValueError, TypeError, IndexError) as e:
        assert name in str(e), f"the error does not name {name}: {e}"
        ok = (
            _valid(m, n, indices, indptr)
            and wkind != "wrong-length"
            and np.issubdtype(dt, np.integer)
            and dt not in (np.int16, np.uint32)
        )
        # a refused case must be invalid (valid int16/uint32 indices may be refused: int32/int64 taken)
        assert not ok, f"a valid case was refused: {e}"
        return
    assert _valid(m, n, indices, indptr) and wkind != "wrong-length", "an invalid case was accepted"
    a = _dense(w, indices, indptr, m, n)
    want = (a.T if transpose else a) @ v.astype(np.float64)
    # each output sums at most nnz products of O(1) values: a few ulps of that sum
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12 * (1 + nnz))


@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=4),
    steps=st.lists(st.integers(-3, 3), min_size=4, max_size=4),
    dtype=st.sampled_from([np.float32, np.float64, np.int8, np.int64, np.uint16, np.bool_, np.complex64]),
)
def test_any_strided_numpy_view_is_shared_and_computed_on(shape, steps, dtype):
    # views with zero, negative and gapped strides inside one buffer, built with as_strided
    base = (np.arange(4096) % 7).astype(dtype)
    it = base.itemsize
    shape = tuple(shape)
    strides = tuple(s * it for s in steps[: len(shape)])
    # start in the middle so that negative strides stay inside the buffer
    start = 2048
    x = as_strided(base[start:], shape=shape, strides=strides)
    t = ta.asarray(x)
    assert t.shape == x.shape and t.ptr == (x.ctypes.data if x.size else t.ptr)
    np.testing.assert_array_equal(np.asarray(t), x)
    if dtype is not np.bool_:
        np.testing.assert_array_equal(np.asarray(t + t), x + x)
    np.testing.assert_array_equal(np.asarray(ta.reshape(t, (-1,))), x.reshape(-1))
    if x.size and dtype is not np.bool_:  # (the standard's sum takes numeric dtypes only)
        # at most 256 elements below 7: integer sums are exact, float32 ones within a few ulps
        assert complex(ta.sum(t)) == pytest.approx(complex(x.sum()), rel=1e-6)
