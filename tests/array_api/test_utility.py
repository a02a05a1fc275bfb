"""Utility functions (all, any, diff) against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reductions_helpers import ALL, NUMERIC, SETTINGS, assert_same, axes, strided, tiarray_of

import tiarray as ta


@SETTINGS
@given(data=st.data())
def test_all_any(data):
    a = data.draw(strided(ALL, small=True))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = tiarray_of(a)
    assert_same(ta.all(t, axis=axis, keepdims=keepdims), np.all(a, axis=axis, keepdims=keepdims))
    assert_same(ta.any(t, axis=axis, keepdims=keepdims), np.any(a, axis=axis, keepdims=keepdims))


def test_all_any_special_values():
    # NaN and infinities are true, -0.0 is false, complex: either part
    assert bool(ta.all(ta.asarray(np.array([np.nan, np.inf, -np.inf]))))
    assert not bool(ta.any(ta.asarray(np.array([-0.0, 0.0]))))
    assert bool(ta.all(ta.asarray(np.array([1j, complex(0, np.nan), 2 + 0j]))))
    assert bool(ta.all(ta.asarray(np.zeros((0, 2)))))
    assert not bool(ta.any(ta.asarray(np.zeros((0, 2)))))
    big = np.ones(3_000_000, np.float32)
    big[2_999_999] = 0.0
    assert not bool(ta.all(ta.asarray(big)))
    assert bool(ta.any(ta.asarray(big[::-1])))


@SETTINGS
@given(data=st.data())
def test_diff(data):
    a = data.draw(strided(NUMERIC, min_dims=1, max_dims=3, small=True))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.integers(0, 4))
    kw = {}
    if data.draw(st.booleans()):
        shape = list(a.shape)
        shape[axis] = data.draw(st.integers(0, 2))
        kw["prepend"] = data.draw(st.sampled_from([1, 2])) * np.ones(shape, a.dtype)
    if data.draw(st.booleans()):
        kw["append"] = data.draw(st.sampled_from([1, 0]))
    t = tiarray_of(a)
    r = ta.diff(
        t, axis=axis, n=n, **{k: (tiarray_of(v) if isinstance(v, np.ndarray) else v) for k, v in kw.items()}
    )
    with np.errstate(all="ignore"):
        if n == 0:
            # the standard: the size is M + N1 + N2 - n (NumPy returns x alone for n=0)
            parts = [kw["prepend"]] if "prepend" in kw else []
            parts.append(a)
            if "append" in kw:
                shape = list(a.shape)
                shape[axis] = 1
                parts.append(np.full(shape, kw["append"], a.dtype))
            e = np.concatenate(parts, axis=axis)
        else:
            e = np.diff(a, axis=axis, n=n, **kw)
    if a.dtype.kind in "fc":
        assert_same(r, e.astype(a.dtype), rtol=1e-6, atol=1e-6)
    else:
        assert_same(r, e.astype(a.dtype))


def test_diff_errors():
    x = ta.asarray(np.arange(6.0).reshape(2, 3))
    with pytest.raises(ValueError, match=r"diff\(\): argument 'n'"):
        ta.diff(x, n=-1)
    with pytest.raises(TypeError, match=r"diff\(\): argument 'n'"):
        ta.diff(x, n=1.5)
    with pytest.raises(ta.AxisError, match=r"diff\(\): argument 'axis'"):
        ta.diff(x, axis=2)
    with pytest.raises(ValueError, match="prepend"):
        ta.diff(x, prepend=ta.asarray(np.zeros((3, 1))))
    with pytest.raises(TypeError, match=r"diff\(\): argument 'x' must have a numeric"):
        ta.diff(ta.asarray(np.array([True, False])))
    with pytest.raises(ValueError, match="0-d"):
        ta.diff(ta.asarray(np.float64(1.0)))
    assert ta.diff(x, n=5).shape == (2, 0)


@pytest.mark.parametrize("name", ["all", "any"])
def test_all_any_errors(name):
    f = getattr(ta, name)
    x = ta.asarray(np.ones((2, 3)))
    with pytest.raises(ta.AxisError, match=rf"{name}\(\): argument 'axis'"):
        f(x, axis=(0, 0))
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'x' must be a TiArray"):
        f([True])
