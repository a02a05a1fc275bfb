"""Sorting against NumPy's stable sort: every dtype, axis, direction, stride; NaN, -0.0."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reductions_helpers import REAL, SETTINGS, assert_same, strided, tiarray_of

import tiarray as ta
from tiarray._kernels import sort as _ks


def ref_argsort(a, axis, descending):
    """NumPy's stable argsort; descending keeps equal elements in order (NaNs first)."""
    if not descending:
        return np.argsort(a, axis=axis, kind="stable")
    res = np.flip(np.argsort(np.flip(a, axis=axis), axis=axis, kind="stable"), axis=axis)
    return a.shape[axis] - 1 - res


def check(a, axis, descending):
    t = tiarray_of(a)
    e = ref_argsort(a, axis, descending)
    assert_same(ta.argsort(t, axis=axis, descending=descending), e.astype(np.int64))
    s = ta.sort(t, axis=axis, descending=descending, stable=True)
    es = np.take_along_axis(a, e, axis=axis)
    # values equal (-0.0 == +0.0: the standard leaves the order of signed zeros open;
    # tiarray's sort puts -0.0 first, its argsort keeps them in order) ...
    assert_same(s, es)
    # ... and no zero changed sign: the same number of -0.0 along every row
    if a.dtype.kind == "f" and a.size:
        neg0 = lambda v: np.sum((v == 0) & np.signbit(v), axis=axis)  # noqa: E731
        assert np.array_equal(neg0(np.asarray(s)), neg0(a))


@SETTINGS
@given(data=st.data())
def test_sort_argsort(data):
    a = data.draw(strided(REAL, min_dims=1, small=data.draw(st.booleans())))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    check(a, axis, data.draw(st.booleans()))


@pytest.mark.parametrize("algorithm", ["merge", "radix"])
@SETTINGS
@given(data=st.data())
def test_sort_both_algorithms(algorithm, data):
    """Both algorithms whatever the row length (the radix sort is used from RADIX_MIN)."""
    a = data.draw(strided(REAL, min_dims=1, max_dims=2, max_side=70, small=True))
    old = _ks.RADIX_MIN
    _ks.RADIX_MIN = 1 if algorithm == "radix" else 1 << 30
    try:
        check(a, data.draw(st.integers(-a.ndim, a.ndim - 1)), data.draw(st.booleans()))
    finally:
        _ks.RADIX_MIN = old


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint64, np.int64])
def test_long_rows(dtype):
    rng = np.random.default_rng(7)
    a = (rng.standard_normal((3, 70_000)) * 50).astype(dtype)
    if a.dtype.kind == "f":
        a[0, ::1000] = np.nan
        a[1, ::777] = -0.0
    for v, axis in ((a, -1), (a.T[::-1], 0), (a[:, ::-3], 1)):
        for descending in (False, True):
            check(v, axis, descending)


def test_sorting_network_sorts_every_01_input():
    import itertools

    for bits in itertools.product([0, 1], repeat=_ks.BLOCK):
        v = list(bits)
        for i, j in _ks.NETWORK8:
            if v[i] > v[j]:
                v[i], v[j] = v[j], v[i]
        assert v == sorted(v)


def test_sort_special_values():
    a = np.array([np.nan, 1.0, -np.inf, -0.0, 0.0, np.inf, np.nan, -1.0])
    assert_same(ta.sort(ta.asarray(a)), np.sort(a, kind="stable"))
    assert_same(ta.argsort(ta.asarray(a)), np.argsort(a, kind="stable"))
    d = np.asarray(ta.sort(ta.asarray(a), descending=True))
    assert np.isnan(d[:2]).all() and list(d[2:]) == [np.inf, 1.0, 0.0, -0.0, -1.0, -np.inf]
    assert list(np.signbit(d[4:6])) == [False, True]  # descending: +0.0 before -0.0
    # stability of equal keys in both directions
    b = np.array([2, 1, 2, 1, 2], np.int8)
    assert ta.argsort(ta.asarray(b)).tolist() == [1, 3, 0, 2, 4]
    assert ta.argsort(ta.asarray(b), descending=True).tolist() == [0, 2, 4, 1, 3]
    assert ta.sort(ta.asarray(np.zeros((3, 0))), axis=1).shape == (3, 0)


def test_sort_errors():
    with pytest.raises(TypeError, match=r"sort\(\): argument 'x' must have a real numeric"):
        ta.sort(ta.asarray(np.array([1j])))
    with pytest.raises(TypeError, match=r"argsort\(\): argument 'x' must have a real numeric"):
        ta.argsort(ta.asarray(np.array([True])))
    with pytest.raises(ta.AxisError, match=r"sort\(\): argument 'axis'"):
        ta.sort(ta.asarray(np.ones((2, 2))), axis=2)
    with pytest.raises(ta.AxisError):
        ta.sort(ta.asarray(np.float64(1.0)))
    with pytest.raises(TypeError, match="descending"):
        ta.sort(ta.asarray(np.ones(2)), descending="yes")
    with pytest.raises(TypeError, match="stable"):
        ta.argsort(ta.asarray(np.ones(2)), stable=None)
    with pytest.raises(TypeError, match="must be a TiArray"):
        ta.sort([3, 1, 2])
