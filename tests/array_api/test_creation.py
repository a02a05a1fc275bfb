"""Creation functions computed by tiarray kernels: arange, linspace, eye, meshgrid, tril,
triu, against NumPy."""

from __future__ import annotations

import numpy as np
import pytest
from _ew_helpers import LAYOUTS, NP, SETTINGS, as_layout, random_values
from hypothesis import given
from hypothesis import strategies as st

import tiarray as ta

# ============================================================================= arange


@SETTINGS
@given(
    start=st.integers(-50, 50),
    stop=st.none() | st.integers(-50, 50),
    step=st.integers(-7, 7).filter(lambda s: s != 0),
    dtype=st.sampled_from([None, "int8", "int32", "int64", "uint16", "float32", "float64"]),
)
def test_arange_integers_match_numpy(start, stop, step, dtype):
    args = (start,) if stop is None else (start, stop, step)
    exact = np.arange(*args)  # int64
    if dtype is not None and np.dtype(NP[dtype]).kind in "iu":
        info = np.iinfo(NP[dtype])
        if exact.size and (exact.min() < info.min or exact.max() > info.max):
            with pytest.raises(OverflowError, match="arange"):
                ta.arange(*args, dtype=getattr(ta, dtype))
            return
    ref = exact.astype(NP[dtype or "int64"])
    got = ta.arange(*args, dtype=None if dtype is None else getattr(ta, dtype))
    assert got.dtype == (ta.int64 if dtype is None else getattr(ta, dtype))
    np.testing.assert_array_equal(np.asarray(got), ref)


@SETTINGS
@given(
    start=st.floats(-100, 100),
    span=st.floats(-100, 100),
    step=st.floats(0.01, 10) | st.floats(-10, -0.01),
    dtype=st.sampled_from([None, "float32", "float64"]),
)
def test_arange_floats_match_numpy(start, span, step, dtype):
    stop = start + span
    ref = np.arange(start, stop, step)  # float64, as the default dtype
    got = ta.arange(start, stop, step, dtype=None if dtype is None else getattr(ta, dtype))
    assert got.shape == ref.shape
    np.testing.assert_allclose(np.asarray(got), ref.astype(NP[dtype or "float64"]), rtol=1e-6, atol=1e-4)


def test_arange_errors_and_edges():
    assert ta.arange(0).shape == (0,)
    assert ta.arange(5, 1).shape == (0,)
    assert ta.arange(2**40, 2**40 + 3).tolist() == [2**40, 2**40 + 1, 2**40 + 2]
    assert ta.arange(1.0).dtype == ta.float64
    with pytest.raises(ValueError, match="arange.*step"):
        ta.arange(0, 5, 0)
    with pytest.raises(TypeError, match="arange.*'start'"):
        ta.arange("5")
    with pytest.raises(TypeError, match="arange.*'dtype'"):
        ta.arange(5, dtype=ta.complex64)
    with pytest.raises(OverflowError, match="int8"):
        ta.arange(0, 300, dtype=ta.int8)


# ============================================================================= linspace


@SETTINGS
@given(
    start=st.floats(-1e3, 1e3),
    stop=st.floats(-1e3, 1e3),
    num=st.integers(0, 50),
    endpoint=st.booleans(),
    dtype=st.sampled_from([None, "float32", "float64"]),
)
def test_linspace_matches_numpy(start, stop, num, endpoint, dtype):
    ref = np.linspace(start, stop, num, endpoint=endpoint, dtype=None if dtype is None else NP[dtype])
    got = ta.linspace(
        start, stop, num, endpoint=endpoint, dtype=None if dtype is None else getattr(ta, dtype)
    )
    assert got.dtype == (ta.float64 if dtype is None else getattr(ta, dtype))
    np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-6 if dtype == "float32" else 1e-13, atol=1e-9)
    if endpoint and num > 1:
        assert np.asarray(got)[-1] == ref[-1]  # exactly stop


def test_linspace_complex_and_errors():
    got = ta.linspace(1 + 2j, -3 + 0.5j, 7)
    assert got.dtype == ta.complex128
    np.testing.assert_allclose(np.asarray(got), np.linspace(1 + 2j, -3 + 0.5j, 7), rtol=1e-14)
    got = ta.linspace(0, 1j, 4, endpoint=False, dtype=ta.complex64)
    np.testing.assert_allclose(np.asarray(got), np.linspace(0, 1j, 4, endpoint=False).astype(np.complex64))
    assert ta.linspace(2.0, 5.0, 1).tolist() == [2.0]
    with pytest.raises(TypeError, match="linspace.*complex dtype"):
        ta.linspace(0, 1j, 3, dtype=ta.float64)
    with pytest.raises(TypeError, match="linspace.*floating"):
        ta.linspace(0, 1, 3, dtype=ta.int32)
    with pytest.raises(ValueError, match="linspace.*'num'"):
        ta.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="linspace.*'num'"):
        ta.linspace(0, 1, 2.5)


# ============================================================================= eye


@SETTINGS
@given(
    n=st.integers(0, 6),
    m=st.none() | st.integers(0, 6),
    k=st.integers(-7, 7),
    dtype=st.sampled_from(["bool", "int8", "uint32", "float32", "float64", "complex64", "complex128"]),
)
def test_eye_matches_numpy(n, m, k, dtype):
    got = ta.eye(n, m, k=k, dtype=getattr(ta, dtype))
    ref = np.eye(n, m, k=k, dtype=NP[dtype])
    assert got.dtype == getattr(ta, dtype)
    np.testing.assert_array_equal(np.asarray(got), ref)


def test_eye_default_and_errors():
    assert ta.eye(3).dtype == ta.float64
    with pytest.raises(ValueError, match="eye"):
        ta.eye(-1)
    with pytest.raises(TypeError, match="eye"):
        ta.eye(2.5)


# ============================================================================= meshgrid


@SETTINGS
@given(
    lens=st.lists(st.integers(0, 4), min_size=1, max_size=3),
    indexing=st.sampled_from(["xy", "ij"]),
    dtype=st.sampled_from(["int16", "float32", "complex64", "bool"]),
    layout=st.sampled_from(LAYOUTS),
)
def test_meshgrid_matches_numpy(lens, indexing, dtype, layout):
    rng = np.random.default_rng(0)
    arrays = [random_values(rng, (n,), dtype) for n in lens]
    got = ta.meshgrid(*[as_layout(a, layout) for a in arrays], indexing=indexing)
    ref = np.meshgrid(*arrays, indexing=indexing)
    assert len(got) == len(ref)
    for g, r in zip(got, ref):
        assert g.dtype == getattr(ta, dtype) and g.is_contiguous
        np.testing.assert_array_equal(np.asarray(g), r)


def test_meshgrid_errors():
    assert ta.meshgrid() == ()  # a tuple in 2025.12
    with pytest.raises(TypeError, match="meshgrid.*one dtype"):
        ta.meshgrid(ta.asarray([1, 2]), ta.asarray([1.0]))
    with pytest.raises(ValueError, match="meshgrid.*one-dimensional"):
        ta.meshgrid(ta.zeros((2, 2)))
    with pytest.raises(ValueError, match="indexing"):
        ta.meshgrid(ta.zeros(2), indexing="xx")


# ============================================================================= tril, triu


@SETTINGS
@given(
    shape=st.sampled_from([(3, 3), (2, 5), (5, 2), (2, 3, 4), (0, 3), (2, 0, 2), (1, 1)]),
    k=st.integers(-6, 6),
    dtype=st.sampled_from(["bool", "int8", "int64", "float32", "float64", "complex128"]),
    layout=st.sampled_from(LAYOUTS),
    upper=st.booleans(),
)
def test_tril_triu_match_numpy(shape, k, dtype, layout, upper):
    rng = np.random.default_rng(1)
    a = random_values(rng, shape, dtype)
    x = as_layout(a, layout)
    got = (ta.triu if upper else ta.tril)(x, k=k)
    ref = (np.triu if upper else np.tril)(a, k=k)
    assert got.dtype == x.dtype and got.is_contiguous
    np.testing.assert_array_equal(np.asarray(got), ref)


def test_tril_errors():
    with pytest.raises(ValueError, match="tril.*2 dimensions"):
        ta.tril(ta.zeros(3))
    with pytest.raises(TypeError, match="triu.*'k'"):
        ta.triu(ta.zeros((2, 2)), k=0.5)
    with pytest.raises(TypeError, match="tril.*'x'"):
        ta.tril(np.zeros((2, 2)))
