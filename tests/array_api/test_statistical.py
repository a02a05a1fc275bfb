"""Statistical functions against NumPy: random shapes, dtypes, axes, strides, special values."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from reductions_helpers import (
    ALL,
    COMPLEX,
    FLOATS,
    INTS,
    NUMERIC,
    REAL,
    SETTINGS,
    assert_same,
    axes,
    strided,
    sum_abs,
    tiarray_of,
)

import tiarray as ta

# NumPy's warnings while computing the references
pytestmark = [
    pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:Degrees of freedom:RuntimeWarning"),
    pytest.mark.filterwarnings("ignore:invalid value encountered:RuntimeWarning"),
]


def default_sum_dtype(dtype):
    """The 2024.12 default result dtype of sum/prod/cumulative_sum/cumulative_prod."""
    dtype = np.dtype(dtype)
    if dtype.kind == "i":
        return np.dtype(np.int64)
    if dtype.kind == "u":
        return np.dtype(np.uint64)
    return dtype


def norm_axis(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return tuple(sorted(a % ndim for a in axis))
    return (axis % ndim,)


# ----------------------------------------------------------------------------- sum / prod


@SETTINGS
@given(data=st.data())
def test_sum(data):
    a = data.draw(strided(NUMERIC))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    r = ta.sum(tiarray_of(a), axis=axis, keepdims=keepdims)
    want = default_sum_dtype(a.dtype)
    if a.dtype.kind in "iu":
        # integer sums wrap around in the result dtype: exact
        e = np.sum(a, axis=axis, keepdims=keepdims, dtype=want)
        assert_same(r, e)
    else:
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        e = np.sum(a.astype(wide), axis=axis, keepdims=keepdims).astype(a.dtype)
        eps = np.finfo(a.dtype).eps
        assert_same(r, e, rtol=4 * eps, atol=4 * eps, scale=sum_abs(a, axis, keepdims))


@SETTINGS
@given(data=st.data())
def test_sum_with_dtype(data):
    a = data.draw(strided(INTS + FLOATS, special=False, small=True))
    dtype = data.draw(
        st.sampled_from([ta.int8, ta.int32, ta.uint16, ta.int64, ta.float32, ta.float64, ta.complex128])
    )
    axis = data.draw(axes(a.ndim))
    r = ta.sum(tiarray_of(a), axis=axis, dtype=dtype)
    npd = np.dtype(dtype)
    # the standard: x is cast to dtype first (float -> int truncates, ints wrap)
    e = np.sum(a.astype(npd), axis=axis, dtype=npd)
    if npd.kind in "iu":
        assert_same(r, e)
    else:
        assert_same(r, e, rtol=1e-6, atol=1e-6)


@SETTINGS
@given(data=st.data())
def test_prod(data):
    a = data.draw(strided(NUMERIC, max_side=4, small=True))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    r = ta.prod(tiarray_of(a), axis=axis, keepdims=keepdims)
    want = default_sum_dtype(a.dtype)
    if a.dtype.kind in "iu":
        assert_same(r, np.prod(a, axis=axis, keepdims=keepdims, dtype=want))
    else:
        wide = np.complex128 if a.dtype.kind == "c" else np.float64
        e = successive_product(a.astype(wide), axis, keepdims).astype(a.dtype)
        assert_same(r, e, rtol=1e-5 if a.dtype in (np.float32, np.complex64) else 1e-12, atol=1e-30)


def successive_product(a, axis, keepdims):
    """The product as successive multiplications x0 * x1 * ... (the standard's special
    cases; NumPy's multiply.reduce starts from 1 + 0j, turning 0 + nan j into NaN + NaN j,
    its cumprod does not)."""
    red = norm_axis(axis, a.ndim)
    kept = [i for i in range(a.ndim) if i not in red]
    m = math.prod(a.shape[i] for i in red)
    b = np.transpose(a, kept + list(red)).reshape(tuple(a.shape[i] for i in kept) + (m,))
    e = np.cumprod(b, axis=-1)[..., -1] if m else np.ones(b.shape[:-1], a.dtype)
    if keepdims:
        e = e.reshape(tuple(1 if i in red else d for i, d in enumerate(a.shape)))
    return np.asarray(e)


def test_empty_sum_and_prod_are_identities():
    z = ta.asarray(np.zeros((0, 3), np.float32))
    assert_same(ta.sum(z, axis=0), np.zeros(3, np.float32))
    assert_same(ta.prod(z, axis=0), np.ones(3, np.float32))
    assert_same(ta.sum(ta.asarray(np.zeros((2, 0), np.int16)), axis=1), np.zeros(2, np.int64))
    assert_same(ta.prod(ta.asarray(np.zeros(0, np.complex64))), np.complex64(1))
    assert not np.signbit(float(ta.sum(ta.asarray(np.zeros(0)))))


def test_float32_sum_survives_large_magnitude_cancellation():
    # 1e8 + 1 is not representable in float32: summing in float32 in any order loses
    # the ones; tiarray accumulates float32 in float64 and gets the exact answer.
    pattern = np.array([1e8, 1.0, -1e8, 1.0], np.float32)
    x = np.tile(pattern, 250_000)  # 1e6 elements: the parallel two-pass path
    exact = 500_000.0
    r = float(ta.sum(ta.asarray(x)))
    assert r == exact
    numpy_err = abs(float(np.sum(x)) - exact)
    assert abs(r - exact) <= numpy_err
    # strided and reversed too
    assert float(ta.sum(ta.asarray(x[::-1]))) == exact
    assert float(ta.sum(ta.asarray(x.reshape(1000, 1000).T), axis=None)) == exact


def test_float64_sum_is_pairwise_accurate():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(3_000_000) * 1e3 + 1e6
    exact = math.fsum(x.tolist())
    r = float(ta.sum(ta.asarray(x)))
    numpy_err = abs(float(np.sum(x)) - exact)
    # comparable to NumPy's pairwise summation (well under a naive loop's ~n * eps)
    assert abs(r - exact) <= 8 * numpy_err + 1e-16 * abs(exact) * 50


def test_sum_of_signed_zeros_and_nan_inf():
    assert float(ta.sum(ta.asarray(np.array([np.inf, 1.0])))) == np.inf
    assert math.isnan(float(ta.sum(ta.asarray(np.array([np.inf, -np.inf])))))
    assert math.isnan(float(ta.sum(ta.asarray(np.array([1.0, np.nan])))))


# ----------------------------------------------------------------------------- max / min


@SETTINGS
@given(data=st.data())
def test_max_min(data):
    a = data.draw(strided(REAL))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    t = tiarray_of(a)
    red = norm_axis(axis, a.ndim)
    empty = a.size == 0 and math.prod(d for i, d in enumerate(a.shape) if i not in red) > 0
    for f, nf in ((ta.max, np.max), (ta.min, np.min)):
        if empty:
            with pytest.raises(ValueError, match=f.__name__):
                f(t, axis=axis, keepdims=keepdims)
            continue
        r = f(t, axis=axis, keepdims=keepdims)
        if a.size == 0:
            # an empty result (NumPy refuses when the reduced length is 0, even then)
            e = np.sum(np.zeros(a.shape, a.dtype), axis=axis, keepdims=keepdims, dtype=a.dtype)
            assert e.size == 0
        else:
            e = nf(a, axis=axis, keepdims=keepdims)
        # signed zeros: either is allowed by the standard
        rn = np.asarray(r)
        assert rn.dtype == e.dtype and rn.shape == np.shape(e)
        assert np.array_equal(rn, e, equal_nan=a.dtype.kind == "f")


def test_max_propagates_nan_in_parallel_path():
    x = np.arange(2_000_000, dtype=np.float32)
    x[1_234_567] = np.nan
    assert math.isnan(float(ta.max(ta.asarray(x))))
    assert math.isnan(float(ta.min(ta.asarray(x))))
    x[1_234_567] = -np.inf
    assert float(ta.min(ta.asarray(x))) == -np.inf
    assert float(ta.max(ta.asarray(x))) == 1_999_999.0


# ----------------------------------------------------------------------------- mean / var / std


@SETTINGS
@given(data=st.data())
def test_mean(data):
    a = data.draw(strided(FLOATS + COMPLEX + INTS, small=True))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    r = ta.mean(tiarray_of(a), axis=axis, keepdims=keepdims)
    out = np.dtype(np.float64) if a.dtype.kind in "iu" else a.dtype
    wide = np.complex128 if a.dtype.kind == "c" else np.float64
    m = math.prod(a.shape[i] for i in norm_axis(axis, a.ndim))
    with np.errstate(all="ignore"):
        if a.dtype.kind == "c":
            # the standard: real special cases apply to each component independently
            # (NumPy's complex division mixes them, e.g. mean([inf j]) = nan + inf j)
            re = np.asarray(np.sum(a.real.astype(np.float64), axis=axis, keepdims=keepdims) / m)
            e = np.empty(re.shape, np.complex128)
            e.real = re
            e.imag = np.sum(a.imag.astype(np.float64), axis=axis, keepdims=keepdims) / m
        else:
            e = np.mean(a.astype(wide), axis=axis, keepdims=keepdims)
    eps = np.finfo(out).eps
    assert_same(
        r, np.asarray(e).astype(out), rtol=8 * eps, atol=8 * eps / max(m, 1), scale=sum_abs(a, axis, keepdims)
    )


@SETTINGS
@given(data=st.data())
def test_var_std(data):
    a = data.draw(strided(FLOATS + INTS, special=True, small=True))
    axis = data.draw(axes(a.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1, 1.5, 0.0]))
    t = tiarray_of(a)
    out = np.dtype(np.float64) if a.dtype.kind in "iu" else a.dtype
    m = math.prod(a.shape[i] for i in norm_axis(axis, a.ndim))
    for f, nf in ((ta.var, np.var), (ta.std, np.std)):
        r = f(t, axis=axis, correction=correction, keepdims=keepdims)
        with np.errstate(all="ignore"):
            e = np.asarray(nf(a.astype(np.float64), axis=axis, ddof=correction, keepdims=keepdims))
        if m - correction <= 0:
            # the standard: NaN (NumPy gives inf or NaN)
            e = np.full(e.shape, np.nan)
        assert_same(r, e.astype(out), rtol=1e-4 if out == np.float32 else 1e-10, atol=1e-5)


def test_var_two_pass_accuracy():
    x = (np.arange(1000, dtype=np.float64) % 7) + 1e9  # large mean, small spread
    assert float(ta.var(ta.asarray(x))) == pytest.approx(np.var(x % 1e9), rel=1e-9)


# ----------------------------------------------------------------------------- cumulative


@SETTINGS
@given(data=st.data())
def test_cumulative_sum_prod(data):
    a = data.draw(strided(NUMERIC, min_dims=1, max_dims=3, small=True))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    include_initial = data.draw(st.booleans())
    t = tiarray_of(a)
    ax = axis % a.ndim
    want = default_sum_dtype(a.dtype)
    for f, nf, ident in ((ta.cumulative_sum, np.cumsum, 0), (ta.cumulative_prod, np.cumprod, 1)):
        r = f(t, axis=axis, include_initial=include_initial)
        b = a
        if include_initial:
            shape = list(a.shape)
            shape[ax] = 1
            b = np.concatenate([np.full(shape, ident, a.dtype), a], axis=ax)
        if want.kind in "iu":
            assert_same(r, nf(b, axis=ax, dtype=want))
        else:
            wide = np.complex128 if a.dtype.kind == "c" else np.float64
            with np.errstate(all="ignore"):
                e = nf(b.astype(wide), axis=ax).astype(want)
            assert_same(r, e, rtol=1e-5 if want in (np.float32, np.complex64) else 1e-12, atol=1e-5)


def test_cumulative_defaults_and_long_rows():
    x = np.random.default_rng(1).standard_normal(1_000_003).astype(np.float32)
    r = np.asarray(ta.cumulative_sum(ta.asarray(x[::-1])))
    e = np.cumsum(x[::-1].astype(np.float64))
    assert np.abs(r - e).max() < 1e-3
    r = ta.cumulative_sum(ta.asarray(np.array([1, 2, 3], np.int8)), dtype=ta.int8)
    assert_same(r, np.array([1, 3, 6], np.int8))
    assert ta.cumulative_sum(ta.asarray(np.array([True, True]).astype(np.uint8))).dtype == ta.uint64


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean", "std", "var"])
def test_bad_axis(name):
    f = getattr(ta, name)
    x = ta.asarray(np.ones((2, 3)))
    with pytest.raises(ta.AxisError, match=rf"{name}\(\): argument 'axis'"):
        f(x, axis=2)
    with pytest.raises(IndexError):  # AxisError is an IndexError and a ValueError
        f(x, axis=-3)
    with pytest.raises(ta.AxisError, match="repeated"):
        f(x, axis=(0, -2))
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'axis'"):
        f(x, axis=1.0)
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'axis'"):
        f(x, axis=True)
    with pytest.raises(TypeError, match="keepdims"):
        f(x, keepdims=1)


@pytest.mark.parametrize(
    "name, dtype",
    [("sum", np.bool_), ("prod", np.bool_), ("max", np.complex64), ("min", np.bool_), ("mean", np.bool_),
     ("var", np.complex128), ("std", np.bool_), ("cumulative_sum", np.bool_)],
)  # fmt: skip
def test_wrong_dtype_category(name, dtype):
    f = getattr(ta, name)
    x = ta.asarray(np.zeros((2, 2), dtype))
    kw = {"axis": 0} if name.startswith("cumulative") else {}
    with pytest.raises(TypeError, match=rf"{name}\(\): argument 'x' must have a"):
        f(x, **kw)


def test_other_errors():
    x = ta.asarray(np.ones((2, 3), np.complex64))
    with pytest.raises(TypeError, match="complex"):
        ta.sum(x, dtype=ta.float32)
    with pytest.raises(TypeError, match="argument 'x' must be a TiArray"):
        ta.sum(np.ones(3))
    with pytest.raises(TypeError, match="correction"):
        ta.var(ta.asarray(np.ones(3)), correction="1")
    with pytest.raises(ValueError, match="axis' is required"):
        ta.cumulative_sum(ta.asarray(np.ones((2, 2))))
    with pytest.raises(ValueError, match="0-d"):
        ta.cumulative_prod(ta.asarray(np.float64(1.0)))
    with pytest.raises(TypeError, match="dtype"):
        ta.prod(ta.asarray(np.ones(3)), dtype=ta.bool)
    with pytest.raises(ValueError, match="zero elements"):
        ta.max(ta.asarray(np.zeros((0, 2))), axis=0)
    # an empty output is fine: nothing is reduced
    assert ta.max(ta.asarray(np.zeros((0, 2))), axis=1).shape == (0,)


def test_zero_d_and_empty_axis_tuple():
    s = ta.asarray(np.float32(2.5))
    assert_same(ta.sum(s), np.float32(2.5))
    assert_same(ta.max(s, axis=()), np.float32(2.5))
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    assert_same(ta.sum(ta.asarray(x), axis=()), x.astype(np.int64))
    assert_same(ta.mean(ta.asarray(np.zeros(0, np.float32))), np.float32(np.nan))


def test_all_dtypes_listed():
    # the strategies cover every dtype of the standard
    assert {np.dtype(d).name for d in ALL} == {
        d.name for d in ta.__array_namespace_info__().dtypes().values()
    }


# ----------------------------------------------------------------------------- layouts


@pytest.mark.parametrize(
    "shape, axis",
    [
        ((40, 37), 0),
        ((9, 3, 50), (0, 1)),
        ((100_000, 16), 0),
        ((3000, 70), 0),
        ((17, 5, 33), 1),
        ((8, 16), 0),
    ],
)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.uint64])
def test_reductions_across_contiguous_outputs(shape, axis, dtype):
    """Reductions over leading axes of C-contiguous data: the outputs are adjacent in
    memory (the column kernel, with its chunked variant for tall inputs)."""
    rng = np.random.default_rng(sum(shape))
    a = (rng.standard_normal(shape) * 10).astype(dtype)
    if a.dtype.kind == "f":
        a.reshape(-1)[::97] = np.nan
        a.reshape(-1)[5::89] = -np.inf
    t = ta.asarray(a)
    for f, nf in ((ta.max, np.max), (ta.min, np.min)):
        assert_same(f(t, axis=axis), nf(a, axis=axis))
    if a.dtype.kind in "iu":
        assert_same(ta.sum(t, axis=axis), np.sum(a, axis=axis, dtype=default_sum_dtype(a.dtype)))
        assert_same(ta.prod(t, axis=axis), np.prod(a, axis=axis, dtype=default_sum_dtype(a.dtype)))
    else:
        e = np.sum(a.astype(np.float64), axis=axis).astype(a.dtype)
        assert_same(ta.sum(t, axis=axis), e, rtol=1e-6, atol=1e-6, scale=sum_abs(a, axis))
        b = np.nan_to_num(a, nan=0.5, neginf=-3.0)
        tb = ta.asarray(b)
        assert_same(
            ta.mean(tb, axis=axis), np.mean(b.astype(np.float64), axis=axis).astype(a.dtype), rtol=1e-5
        )
        assert_same(ta.std(tb, axis=axis, correction=1), np.std(b.astype(np.float64), axis=axis, ddof=1).astype(a.dtype),
                    rtol=1e-4)  # fmt: skip
    assert_same(ta.count_nonzero(t, axis=axis), np.count_nonzero(a, axis=axis).astype(np.int64))
    assert_same(ta.any(t, axis=axis), np.any(a, axis=axis))
    assert_same(ta.all(t, axis=axis), np.all(a, axis=axis))
