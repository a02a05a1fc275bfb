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


# ----------------------------------------------------------------------------- isin (2025.12)

# pairs of dtypes the standard promotes (same kind), and bool with bool
_ISIN_PAIRS = [(np.int64, np.int64), (np.int8, np.uint8), (np.uint16, np.int32), (np.uint64, np.uint8),
               (np.int8, np.int64), (np.float32, np.float64), (np.float64, np.float64), (np.float32, np.float32),
               (np.bool_, np.bool_)]  # fmt: skip


def _np_isin(a, b, invert=False):
    """NumPy's isin in the promoted dtype (value equality: -0.0 == +0.0, NaN in nothing)."""
    common = np.result_type(a.dtype, b.dtype)
    return np.isin(a.astype(common), b.astype(common), invert=invert)


@SETTINGS
@given(data=st.data())
def test_isin_matches_numpy(data):
    d1, d2 = data.draw(st.sampled_from(_ISIN_PAIRS))
    if data.draw(st.booleans()):
        d1, d2 = d2, d1
    a = data.draw(strided([d1], small=True))
    b = data.draw(strided([d2], small=True, max_dims=2, max_side=9))
    invert = data.draw(st.booleans())
    r = ta.isin(tiarray_of(a), tiarray_of(b), invert=invert)
    assert_same(r, _np_isin(a, b, invert))


@pytest.mark.parametrize("n2", [0, 1, 7, 1500, 70000])  # the network sort and the radix sort
def test_isin_long_x2_and_special_floats(n2):
    rng = np.random.default_rng(n2)
    b = rng.integers(-50, 50, size=n2).astype(np.float64)
    b[: n2 // 10] = np.nan
    b[n2 // 10 : n2 // 5] = -0.0
    a = np.concatenate([np.arange(-60.0, 60.0), [np.nan, 0.0, -0.0, np.inf, -np.inf]]).reshape(5, 25)[:, ::-2]
    got = ta.isin(ta.asarray(a), ta.asarray(b))
    assert_same(got, np.isin(a, b))
    assert_same(ta.isin(ta.asarray(a), ta.asarray(b), invert=True), np.isin(a, b, invert=True))
    ints = rng.integers(-(2**62), 2**62, size=n2)
    probe = np.concatenate([ints[:50], ints[:50] + 1])
    assert_same(ta.isin(ta.asarray(probe), ta.asarray(ints)), np.isin(probe, ints))


def test_isin_scalars():
    x = np.array([[1, 2], [3, 300]], dtype=np.int16)
    t = ta.asarray(x)
    assert_same(ta.isin(t, 3), np.isin(x, 3))
    assert_same(ta.isin(t, 3, invert=True), np.isin(x, 3, invert=True))
    assert_same(ta.isin(300, t), np.isin(300, x))  # a 0-d result
    assert ta.isin(5, t).shape == () and ta.isin(5, t).dtype == ta.bool
    # an int no element of the dtype can equal: nothing matches
    i8 = np.array([-128, 0, 127], dtype=np.int8)
    assert_same(ta.isin(ta.asarray(i8), 1000), np.zeros(3, bool))
    assert_same(ta.isin(ta.asarray(i8), -1000, invert=True), np.ones(3, bool))
    assert_same(ta.isin(1000, ta.asarray(i8)), np.array(False))
    f = np.array([0.5, -0.0, np.nan])
    assert_same(ta.isin(ta.asarray(f), 0.0), np.array([False, True, False]))
    assert_same(ta.isin(ta.asarray(f), 2), np.isin(f, 2))
    assert_same(ta.isin(ta.asarray(np.array([True, False])), True), np.array([True, False]))


def test_isin_errors():
    t = ta.asarray(np.array([1, 2]))
    with pytest.raises(TypeError, match="isin.*at least one of 'x1' and 'x2' must be a TiArray"):
        ta.isin(1, 2)
    with pytest.raises(TypeError, match="isin.*'x2' must be a TiArray or a Python scalar, got list"):
        ta.isin(t, [1, 2])
    with pytest.raises(TypeError, match="isin.*'x2' is a Python float"):
        ta.isin(t, 1.5)
    with pytest.raises(
        TypeError, match="isin.*'x1' must have a real numeric or boolean dtype, got complex128"
    ):
        ta.isin(ta.asarray(np.array([1j])), t)
    with pytest.raises(TypeError, match="isin.*cannot be compared"):
        ta.isin(ta.asarray(np.array([1], np.uint64)), ta.asarray(np.array([1], np.int64)))
    with pytest.raises(TypeError, match="isin.*'invert' must be a bool"):
        ta.isin(t, t, invert=1)
