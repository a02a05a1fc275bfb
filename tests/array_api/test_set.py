"""Set functions against NumPy's unique (each NaN distinct, as the standard says)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reductions_helpers import ALL, SETTINGS, assert_same, strided, tiarray_of

import tiarray as ta


def reference(a):
    v, i, inv, c = np.unique(a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False)
    return v, i.astype(np.int64), inv.reshape(a.shape).astype(np.int64), c.astype(np.int64)


def same_values(r, e):
    """Unique values equal NumPy's (sorted, NaNs last); a zero may be -0.0 or +0.0."""
    rn = np.asarray(r)
    assert rn.dtype == e.dtype and rn.shape == e.shape
    assert np.array_equal(rn, e, equal_nan=True), f"{rn} != {e}"


@SETTINGS
@given(data=st.data())
def test_unique_all(data):
    a = data.draw(strided(ALL, small=data.draw(st.booleans())))
    r = ta.unique_all(tiarray_of(a))
    assert r._fields == ("values", "indices", "inverse_indices", "counts")
    v, i, inv, c = reference(a)
    same_values(r.values, v)
    assert_same(r.counts, c)
    assert_same(r.inverse_indices, inv)
    # indices: a first occurrence of each value in the flattened x (for signed zeros,
    # NumPy may pick another zero than the first; the standard leaves this open)
    flat = a.reshape(-1)
    idx = np.asarray(r.indices)
    assert idx.dtype == np.int64 and idx.shape == v.shape
    if a.size:
        assert np.array_equal(flat[idx], v, equal_nan=True)
        for k, val in enumerate(v):
            if val == val:
                assert idx[k] == np.flatnonzero(flat == val)[0]


@SETTINGS
@given(data=st.data())
def test_unique_counts_inverse_values(data):
    a = data.draw(strided(ALL, small=True))
    t = tiarray_of(a)
    v, _, inv, c = reference(a)
    rc = ta.unique_counts(t)
    assert rc._fields == ("values", "counts")
    same_values(rc.values, v)
    assert_same(rc.counts, c)
    ri = ta.unique_inverse(t)
    assert ri._fields == ("values", "inverse_indices")
    same_values(ri.values, v)
    assert_same(ri.inverse_indices, inv)
    same_values(ta.unique_values(t), v)


def test_nan_and_signed_zero_semantics():
    a = np.array([np.nan, 0.0, -0.0, np.nan, 1.0, 0.0])
    r = ta.unique_all(ta.asarray(a))
    vals = np.asarray(r.values)
    assert vals.shape == (4,) and vals[0] == 0 and vals[1] == 1 and np.isnan(vals[2:]).all()
    assert r.counts.tolist() == [3, 1, 1, 1]  # signed zeros aggregate, each NaN counts once
    assert r.indices.tolist() == [1, 4, 0, 3]
    assert r.inverse_indices.tolist() == [2, 0, 0, 3, 1, 0]
    c = np.array([complex(1, np.nan), complex(1, np.nan), 1 + 0j, 1 + 0j])
    rc = ta.unique_counts(ta.asarray(c))
    assert rc.counts.tolist() == [2, 1, 1]


def test_unique_long_and_strided():
    rng = np.random.default_rng(3)
    a = rng.integers(0, 5000, (400, 300)).astype(np.int32)[:, ::-2]
    v, i, inv, c = reference(a)
    r = ta.unique_all(ta.asarray(a))
    same_values(r.values, v)
    assert_same(r.indices, i)
    assert_same(r.inverse_indices, inv)
    assert_same(r.counts, c)


def test_unique_errors():
    with pytest.raises(TypeError, match=r"unique_values\(\): argument 'x' must be a TiArray"):
        ta.unique_values(np.array([1, 2]))


@pytest.mark.parametrize("n", [7, 300, 5000])
def test_unique_complex_lexicographic(n):
    """Complex values are ordered as NumPy orders them (three stable sorts): many ties in
    each part, so that every pass must keep the order of the previous one."""
    rng = np.random.default_rng(n)
    a = (rng.integers(0, 4, n) + 1j * rng.integers(0, 4, n)).astype(np.complex64)
    a[::11] = complex(np.nan, 1)
    a[::13] = complex(2, np.nan)
    v, i, inv, c = reference(a)
    r = ta.unique_all(ta.asarray(a[::-1].copy()[::-1]))
    same_values(r.values, v)
    assert_same(r.indices, i)
    assert_same(r.inverse_indices, inv)
    assert_same(r.counts, c)
