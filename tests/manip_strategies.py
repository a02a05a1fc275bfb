"""Hypothesis strategies shared by the manipulation, indexing, linalg and fft tests.

``arrays()`` draws a NumPy array and its TiArray *view* (``ta.asarray`` shares the
memory): random dtype, shape (0-d and zero-size included) and layout (C-contiguous,
sliced with steps, negative strides, transposed), with values from a seeded generator
(fast) that include special floats (nan, +-inf, -0.0) when asked.
"""

import numpy as np
from hypothesis import strategies as st

import tiarray as ta

INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
REAL_DTYPES = [np.float32, np.float64]
COMPLEX_DTYPES = [np.complex64, np.complex128]
FLOAT_DTYPES = REAL_DTYPES + COMPLEX_DTYPES
NUMERIC_DTYPES = INT_DTYPES + FLOAT_DTYPES
ALL_DTYPES = [np.bool_] + NUMERIC_DTYPES


def fill(
    rng: np.random.Generator, shape, dtype, *, specials: bool = False, small: bool = False
) -> np.ndarray:
    """Random values of ``dtype`` (``small``: integers in [-8, 8] so products do not overflow)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.array(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        lo, hi = (max(info.min, -8), min(info.max, 8)) if small else (info.min, info.max)
        return np.array(rng.integers(lo, hi, size=shape, endpoint=True, dtype=dtype))
    a = np.array(rng.standard_normal(shape) * 3)
    if dtype.kind == "c":
        a = a + 1j * rng.standard_normal(shape) * 3
    a = np.array(a, dtype=dtype)
    if specials and a.size:
        flat = a.reshape(-1)
        k = rng.integers(0, max(1, a.size // 4) + 1)
        idx = rng.choice(a.size, size=min(k, a.size), replace=False)
        for i in idx:
            flat[i] = rng.choice(np.array([np.nan, np.inf, -np.inf, -0.0, 0.0])).astype(dtype.type)
    return a


@st.composite
def layouts(draw, shape, dtype, *, specials=False, small=False, contiguous_only=False):
    """A NumPy array of ``shape`` in a random memory layout, with random values."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    nd = len(shape)
    kind = "c" if contiguous_only or nd == 0 else draw(st.sampled_from(["c", "c", "steps", "transposed"]))
    if kind == "c":
        return fill(rng, shape, dtype, specials=specials, small=small)
    if kind == "steps":
        steps = [draw(st.sampled_from([1, 2, -1, -2, 3])) for _ in range(nd)]
        base_shape = tuple(max(1, s * abs(k)) for s, k in zip(shape, steps))
        base = fill(rng, base_shape, dtype, specials=specials, small=small)
        sl = tuple(slice(None, None, k) for k in steps)
        v = base[sl]
        return v[tuple(slice(0, s) for s in shape)]
    perm = draw(st.permutations(range(nd)))
    inv = np.argsort(perm)
    base = fill(rng, tuple(shape[p] for p in inv), dtype, specials=specials, small=small)
    v = np.transpose(base, tuple(int(i) for i in np.argsort(inv)))
    assert v.shape == tuple(shape)
    return v


@st.composite
def arrays(draw, dtypes=ALL_DTYPES, min_dims=0, max_dims=4, min_side=0, max_side=5, shape=None, **kw):
    """``(numpy_array, tiarray_view)``."""
    dtype = draw(st.sampled_from(dtypes))
    if shape is None:
        nd = draw(st.integers(min_dims, max_dims))
        shape = tuple(draw(st.integers(min_side, max_side)) for _ in range(nd))
    shape = tuple(shape)
    if shape and not kw.get("contiguous_only") and draw(st.integers(0, 3)) == 0:
        # strides made by slicing the TiArray itself (basic indexing views)
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        steps = [draw(st.sampled_from([2, -1, -3])) for _ in shape]
        base = fill(rng, tuple(max(1, s * abs(k)) for s, k in zip(shape, steps)), dtype,
                    specials=kw.get("specials", False), small=kw.get("small", False))  # fmt: skip
        key = tuple(slice(None, None, k) for k in steps)
        crop = tuple(slice(0, s) for s in shape)
        a = base[key][crop]
        t = ta.asarray(base)[key][crop]
        assert t.shape == a.shape and t.strides == tuple(v // a.itemsize for v in a.strides)
        return a, t
    a = draw(layouts(shape, dtype, **kw))
    t = ta.asarray(a)
    assert t.ptr == a.ctypes.data or a.size == 0
    return a, t


def assert_same(r, e, *, rtol=None, exact_dtype=True, atol=None):
    """``r`` (TiArray) equals ``e`` (NumPy): shape, dtype and values (NaN == NaN)."""
    assert isinstance(r, ta.TiArray), type(r)
    e = np.asarray(e)
    assert r.shape == e.shape, (r.shape, e.shape)
    if exact_dtype:
        assert np.dtype(r.dtype) == e.dtype, (r.dtype, e.dtype)
    got = np.asarray(r)
    if rtol is None:
        np.testing.assert_array_equal(got, e)
    else:
        if atol is None:
            fin = np.abs(e[np.isfinite(e)])
            atol = rtol * (fin.max() if fin.size else 0) + 1e-300
        np.testing.assert_allclose(got, e, rtol=rtol, atol=atol)


def shares(r, a) -> bool:
    """Whether the TiArray ``r`` views memory of the NumPy array ``a``."""
    return np.shares_memory(np.asarray(r), a)
