"""Hypothesis strategies and comparisons shared by the reduction/search/sort/set tests.

Arrays are drawn as NumPy arrays (with NaN, infinities and signed zeros for floating
dtypes), then viewed through random slices (steps of +-1 and +-2, offsets) and axis
permutations, so that the TiArray made from them with ``tiarray.asarray`` views strided,
offset, negative-stride or transposed memory without a copy.
"""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tiarray as ta

# The number of examples is the loaded profile's (conftest.py: HYPOTHESIS_PROFILE).
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
)

INTS = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOATS = [np.float32, np.float64]
COMPLEX = [np.complex64, np.complex128]
REAL = INTS + FLOATS
NUMERIC = REAL + COMPLEX
ALL = [np.bool_] + NUMERIC

SPECIAL_FLOATS = [np.nan, np.inf, -np.inf, -0.0, 0.0]


def elements(dtype, *, special: bool = True, small: bool = False):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return st.booleans()
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        if small:
            lo, hi = (0 if dtype.kind == "u" else -3), 3
            return st.integers(lo, hi)
        return st.integers(int(info.min), int(info.max))
    width = 32 if dtype in (np.float32, np.complex64) else 64
    bound = 3.0 if small else 1e4
    real = st.floats(-bound, bound, width=width)
    if special:
        real = st.one_of(real, real, real, st.sampled_from(SPECIAL_FLOATS))
    if dtype.kind == "f":
        return real
    return st.builds(complex, real, real)


@st.composite
def strided(draw, dtypes=ALL, *, min_dims=0, max_dims=4, max_side=5, special=True, small=False, min_side=0):
    """A NumPy array viewed through random slices and a permutation of its axes."""
    dtype = np.dtype(draw(st.sampled_from(dtypes)))
    shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side))
    steps = [draw(st.sampled_from([1, 1, -1, 2, -2])) for _ in shape]
    base_shape = tuple(s * abs(k) + draw(st.integers(0, 1)) for s, k in zip(shape, steps))
    base = draw(hnp.arrays(dtype, base_shape, elements=elements(dtype, special=special, small=small)))
    key = []
    for s, k, b in zip(shape, steps, base_shape):
        if k > 0:
            start = b - s * k
            key.append(slice(start, start + s * k, k))
        else:
            start = b - 1
            stop = start + s * k
            key.append(slice(start, stop if stop >= 0 else None, k))
    view = base[tuple(key) + (Ellipsis,)]  # a 0-d view stays an array
    assert view.shape == shape, (view.shape, shape)
    if view.ndim > 1 and draw(st.booleans()):
        view = view.transpose(draw(st.permutations(range(view.ndim))))
    return view


@st.composite
def axes(draw, ndim: int, *, allow_none=True, allow_tuple=True):
    """None, an int or a tuple of distinct ints (possibly negative) valid for ``ndim``."""
    options = []
    if allow_none:
        options.append(st.none())
    if ndim > 0:
        options.append(st.integers(-ndim, ndim - 1))
        if allow_tuple:
            options.append(
                st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim).map(
                    lambda ax: tuple(a - ndim if i % 2 else a for i, a in enumerate(ax))
                )
            )
    elif allow_tuple:
        options.append(st.just(()))
    return draw(st.one_of(*options))


def np_axis(axis):
    """The axis argument as NumPy takes it (a tuple stays a tuple)."""
    return axis


def tiarray_of(a: np.ndarray):
    """A TiArray viewing ``a`` (no copy)."""
    t = ta.asarray(a)
    assert t.ptr == a.__array_interface__["data"][0] or a.size == 0
    return t


def to_numpy(t) -> np.ndarray:
    return np.asarray(t)


def assert_same(r, e, *, dtype=None, rtol=0.0, atol=0.0, scale=None):
    """``r`` (TiArray) equals ``e`` (NumPy) in shape, dtype and values (NaN == NaN).

    ``scale``: an array broadcastable to ``e`` of magnitudes (e.g. sums of |x|) that the
    absolute tolerance ``atol`` is relative to.
    """
    rn = to_numpy(r)
    e = np.asarray(e)
    assert rn.shape == e.shape, f"shape {rn.shape} != {e.shape}"
    want = np.dtype(dtype) if dtype is not None else e.dtype
    assert rn.dtype == want, f"dtype {rn.dtype} != {want}"
    if rtol == 0 and atol == 0:
        if rn.dtype.kind in "fc":
            assert np.array_equal(rn, e, equal_nan=True), f"\n{rn}\n!=\n{e}"
        else:
            assert np.array_equal(rn, e), f"\n{rn}\n!=\n{e}"
        return
    tol = atol * (np.asarray(scale) if scale is not None else 1.0)
    for part in (np.real, np.imag) if rn.dtype.kind == "c" else (lambda v: v,):
        a = part(rn).astype(np.float64)
        b = part(e).astype(np.float64)
        same_nan = np.isnan(a) == np.isnan(b)
        assert same_nan.all(), f"NaN mismatch\n{rn}\n{e}"
        fin = np.isfinite(b)
        assert np.array_equal(a[~fin & ~np.isnan(b)], b[~fin & ~np.isnan(b)]), f"inf mismatch\n{rn}\n{e}"
        with np.errstate(invalid="ignore"):
            err = np.abs(a - b)
        bound = rtol * np.abs(b) + np.broadcast_to(tol, b.shape)
        bad = fin & (err > bound)
        assert not bad.any(), f"values differ (max err {err[fin].max() if fin.any() else 0})\n{rn}\n{e}"


def sum_abs(a: np.ndarray, axis, keepdims=False):
    """Sum of magnitudes (the scale of a sum's rounding error), ignoring non-finite values."""
    m = np.abs(a.astype(np.complex128 if a.dtype.kind == "c" else np.float64))
    m = np.where(np.isfinite(m), m, 0.0)
    return np.sum(m, axis=axis, keepdims=keepdims)


def check_docstring(func):
    """A public function's docstring has the numpy-style sections tiarray requires."""
    doc = func.__doc__ or ""
    for section in ("Parameters", "Returns", "Raises", "Examples"):
        assert f"\n    {section}\n    ---" in doc, f"{func.__name__}: no {section} section"
