"""Searching functions against NumPy (``where`` is tested with the element-wise functions)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reductions_helpers import ALL, REAL, SETTINGS, assert_same, axes, strided, tiarray_of

import tiarray as ta


@SETTINGS
@given(data=st.data())
def test_argmax_argmin(data):
    a = data.draw(strided(REAL, small=data.draw(st.booleans())))
    axis = data.draw(st.one_of(st.none(), st.integers(-a.ndim, a.ndim - 1))) if a.ndim else None
    keepdims = data.draw(st.booleans())
    t = tiarray_of(a)
    n_search = a.size if axis is None else a.shape[axis]
    n_out = 1 if axis is None else math.prod(d for i, d in enumerate(a.shape) if i != axis % a.ndim)
    for f, nf in ((ta.argmax, np.argmax), (ta.argmin, np.argmin)):
        if n_search == 0 and n_out > 0:
            with pytest.raises(ValueError, match=f.__name__):
                f(t, axis=axis, keepdims=keepdims)
            continue
        r = f(t, axis=axis, keepdims=keepdims)
        if a.size == 0:  # an empty result (NumPy refuses to search even then)
            e = np.sum(np.zeros(a.shape, np.int64), axis=axis, keepdims=keepdims)
        else:
            # NumPy: the first occurrence, NaN counting as the extreme (first NaN wins)
            e = np.asarray(nf(a, axis=axis, keepdims=keepdims))
        assert_same(r, e.astype(np.int64))


def test_argmax_long_rows_with_ties_and_nans():
    x = np.zeros(1_500_000, np.float64)
    x[[10, 700_000, 1_400_000]] = 5.0
    assert int(ta.argmax(ta.asarray(x))) == 10
    assert int(ta.argmax(ta.asarray(x[::-1]))) == 1_500_000 - 1 - 1_400_000
    x[900_000] = np.nan
    x[1_200_000] = np.nan
    assert int(ta.argmax(ta.asarray(x))) == 900_000
    assert int(ta.argmin(ta.asarray(x))) == 900_000
    y = np.arange(2_000_000, dtype=np.int32).reshape(2, 1_000_000)
    assert_same(ta.argmin(ta.asarray(y[:, ::-1]), axis=1), np.array([999_999, 999_999]))


@SETTINGS
@given(data=st.data())
def test_count_nonzero(data):
    a = data.draw(strided(ALL, small=True))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    r = ta.count_nonzero(tiarray_of(a), axis=axis, keepdims=keepdims)
    e = np.count_nonzero(a, axis=axis, keepdims=keepdims)
    assert_same(r, np.asarray(e).astype(np.int64))


@SETTINGS
@given(data=st.data())
def test_nonzero(data):
    a = data.draw(strided(ALL, min_dims=1, small=True))
    r = ta.nonzero(tiarray_of(a))
    e = np.nonzero(a)
    assert isinstance(r, tuple) and len(r) == a.ndim
    for ri, ei in zip(r, e):
        assert_same(ri, ei.astype(np.int64))


def test_nonzero_special_values_and_long_input():
    a = np.array([np.nan, -0.0, 0.0, np.inf, 1e-300])
    assert_same(ta.nonzero(ta.asarray(a))[0], np.array([0, 3, 4]))
    c = np.array([0j, complex(0, -0.0), complex(np.nan, 0), 1j])
    assert_same(ta.nonzero(ta.asarray(c))[0], np.array([2, 3]))
    x = (np.random.default_rng(0).random((600, 700)) > 0.9).astype(np.uint8)
    for got, want in zip(ta.nonzero(ta.asarray(x.T[::-1])), np.nonzero(x.T[::-1])):
        assert_same(got, want.astype(np.int64))
    with pytest.raises(ValueError, match=r"nonzero\(\).*0-d"):
        ta.nonzero(ta.asarray(np.int32(1)))


@SETTINGS
@given(data=st.data())
def test_searchsorted(data):
    x1 = data.draw(strided(REAL, min_dims=1, max_dims=1, max_side=12, small=True))
    x1 = np.sort(x1)  # NaNs last, as tiarray.sort
    dtype2 = data.draw(st.sampled_from([x1.dtype, np.dtype(np.float64), np.dtype(np.int32)]))
    if np.dtype(dtype2).kind == "i" and x1.dtype == np.uint64:
        dtype2 = x1.dtype
    x2 = data.draw(strided([dtype2], max_dims=3, small=True))
    side = data.draw(st.sampled_from(["left", "right"]))
    r = ta.searchsorted(tiarray_of(x1), tiarray_of(x2), side=side)
    assert_same(r, np.searchsorted(x1, x2, side=side).astype(np.int64))
    perm = np.asarray(data.draw(st.permutations(range(x1.shape[0]))), dtype=np.int64)
    shuffled = x1[perm]
    sorter = np.argsort(shuffled, kind="stable")
    r = ta.searchsorted(
        tiarray_of(shuffled), tiarray_of(x2), side=side, sorter=tiarray_of(sorter[::-1][::-1])
    )
    assert_same(r, np.searchsorted(shuffled, x2, side=side, sorter=sorter).astype(np.int64))


def test_searchsorted_errors():
    x1 = ta.asarray(np.array([1.0, 2.0, 3.0]))
    x2 = ta.asarray(np.array([2.0]))
    with pytest.raises(ValueError, match="side"):
        ta.searchsorted(x1, x2, side="middle")
    with pytest.raises(ValueError, match="1-d"):
        ta.searchsorted(ta.asarray(np.ones((2, 2))), x2)
    with pytest.raises(ValueError, match="sorter"):
        ta.searchsorted(x1, x2, sorter=ta.asarray(np.array([0, 1, 3])))
    with pytest.raises(ValueError, match="sorter"):
        ta.searchsorted(x1, x2, sorter=ta.asarray(np.array([0, -1, 2])))
    with pytest.raises(TypeError, match="sorter"):
        ta.searchsorted(x1, x2, sorter=ta.asarray(np.array([0.0, 1.0, 2.0])))
    with pytest.raises(TypeError, match="x2"):
        ta.searchsorted(x1, ta.asarray(np.array([1j])))
    with pytest.raises(TypeError, match="cannot be compared"):
        ta.searchsorted(ta.asarray(np.array([1], np.uint64)), ta.asarray(np.array([1], np.int64)))
    assert_same(ta.searchsorted(x1, 2.5), np.int64(2))


@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_errors(name):
    f = getattr(ta, name)
    x = ta.asarray(np.ones((2, 3)))
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'axis' must be an int or None"):
        f(x, axis=(0, 1))
    with pytest.raises(ta.AxisError, match=rf"{name}\(\): argument 'axis'"):
        f(x, axis=2)
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'x' must have a real numeric"):
        f(ta.asarray(np.ones(3, np.complex64)))
    with pytest.raises(TypeError, match="real numeric"):
        f(ta.asarray(np.ones(3, np.bool_)))
    with pytest.raises(ValueError, match="zero elements"):
        f(ta.asarray(np.ones((0, 3))), axis=0)


@pytest.mark.parametrize("n", [100, 10**6, 3 * 10**6 + 7])
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_argmax_argmin_signed_zeros_first_occurrence(n, dtype):
    """-0.0 and +0.0 are equal: the first of them is the extreme's index (the float keys
    ordered -0.0 below +0.0, so a later +0.0 won, 2026-12-05); long rows take the chunked
    kernel."""
    x = np.full(n, -1.0, dtype)
    x[10], x[n // 2] = -0.0, 0.0
    assert int(ta.argmax(ta.asarray(x))) == int(np.argmax(x)) == 10
    assert int(ta.argmin(ta.asarray(-x))) == int(np.argmin(-x)) == 10
    m = np.full((4, n // 4), -1.0, dtype)
    m[:, 3], m[:, -1] = -0.0, 0.0
    np.testing.assert_array_equal(np.asarray(ta.argmax(ta.asarray(m), axis=1)), np.argmax(m, axis=1))
