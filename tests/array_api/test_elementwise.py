"""Element-wise functions, ``where`` and the TiArray operators against NumPy and
array-api-strict: random shapes, dtypes, layouts (strided, transposed, negative strides,
offsets), broadcasting, Python scalars, special values, errors."""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np
import pytest
from _ew_helpers import (
    LAYOUTS,
    NP,
    SETTINGS,
    SPECIAL,
    as_layout,
    assert_close,
    dtypes_of,
    random_values,
    shapes,
)
from hypothesis import given
from hypothesis import strategies as st

import tiarray as ta
from tiarray._kernels.elementwise_ops import BINARY, UNARY

warnings.filterwarnings("ignore", category=RuntimeWarning)

# ============================================================================= references

_NP_NAMES = {
    "acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh", "atan": "arctan",
    "atanh": "arctanh", "atan2": "arctan2", "bitwise_invert": "invert", "pow": "power",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
}  # fmt: skip

# computed in float64/complex128 for lower-precision inputs (a more accurate reference)
_UPCAST = {
    "acos", "acosh", "asin", "asinh", "atan", "atanh", "cos", "cosh", "exp", "expm1", "log",
    "log1p", "log2", "log10", "sin", "sinh", "sqrt", "tan", "tanh", "reciprocal", "divide",
    "atan2", "hypot", "logaddexp", "pow", "square", "multiply", "add", "subtract",
}  # fmt: skip
_INT_IDENTITY = {"ceil", "floor", "trunc", "round"}


def np_ref(name: str, *args):
    """NumPy's answer for ``name`` on NumPy arrays of the promoted dtype."""
    dt = args[0].dtype
    if name in _INT_IDENTITY and dt.kind in "iu":
        return args[0].copy()
    f = getattr(np, _NP_NAMES.get(name, name))
    if name in _UPCAST and dt in (np.float16, np.float32, np.complex64):
        wide = np.complex128 if dt.kind == "c" else np.float64
        with np.errstate(all="ignore"):
            r = f(*[a.astype(wide) for a in args])
        out = r.dtype if r.dtype == np.bool_ else (np.dtype(np.float32) if name == "abs" else dt)
        return r.astype(out)
    if name == "divide" and dt.kind in "iu":
        return np.divide(*[a.astype(np.float64) for a in args])
    with np.errstate(all="ignore"):
        r = f(*args)
        if name == "floor_divide" and dt.kind == "f":
            # an infinite operand: floor(x1 / x2) as the standard says, where NumPy gives
            # NaN (integers rounded to float16 overflow to infinity)
            a, b = args
            inf = np.isinf(a) | np.isinf(b)
            r = np.where(inf, np.floor(a / b), r).astype(dt)
        return r


def _data(draw_data, shape, dtype, rng, name):
    a = random_values(rng, shape, dtype, scale=10.0)
    return a


# ============================================================================= unary


@pytest.mark.parametrize("name", sorted(UNARY))
@SETTINGS
@given(data=st.data())
def test_unary_matches_numpy(name, data):
    category = UNARY[name][0]
    dtype = data.draw(st.sampled_from(dtypes_of(category)), label="dtype")
    shape = data.draw(shapes, label="shape")
    layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a = random_values(rng, shape, dtype)
    x = as_layout(a, layout)
    got = getattr(ta, name)(x)
    ref = np_ref(name, a)
    assert isinstance(got, ta.TiArray) and got.is_contiguous
    assert_close(got, ref, signed_zeros=np.dtype(NP[dtype]).kind == "f")


# ============================================================================= binary


def _broadcast_pair(draw, shape):
    """A shape broadcast-compatible with ``shape`` (fewer axes, some axes 1)."""
    drop = draw(st.integers(0, len(shape)))
    s2 = list(shape[drop:])
    for i in range(len(s2)):
        if draw(st.booleans()):
            s2[i] = 1
    if draw(st.booleans()):
        return tuple(s2), shape
    return shape, tuple(s2)


_NONNEG_SECOND = {"bitwise_left_shift", "bitwise_right_shift", "pow"}


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_matches_numpy(name, data):
    category = BINARY[name][0]
    names = dtypes_of(category)
    if name == "nextafter":
        names = [d for d in names if d != "float16"]
    d1 = data.draw(st.sampled_from(names), label="dtype1")
    d2 = data.draw(st.sampled_from(names), label="dtype2") if data.draw(st.booleans()) else d1
    try:
        rdt = ta.result_type(getattr(ta, d1), getattr(ta, d2))
    except TypeError:
        with pytest.raises(TypeError, match=name):
            getattr(ta, name)(ta.zeros(2, dtype=getattr(ta, d1)), ta.zeros(2, dtype=getattr(ta, d2)))
        return
    s1, s2 = _broadcast_pair(data.draw, data.draw(shapes, label="shape"))
    layouts = (data.draw(st.sampled_from(LAYOUTS)), data.draw(st.sampled_from(LAYOUTS)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a = random_values(rng, s1, d1)
    b = random_values(rng, s2, d2)
    npr = NP[rdt.name]
    if name in _NONNEG_SECOND and np.dtype(npr).kind in "iu":
        bits = 8 * np.dtype(npr).itemsize
        b = (np.abs(b.astype(np.int64)) % (bits if name != "pow" else 5)).astype(b.dtype)
    got = getattr(ta, name)(as_layout(a, layouts[0]), as_layout(b, layouts[1]))
    ref = np_ref(name, a.astype(npr), b.astype(npr))
    signed = np.dtype(npr).kind == "f" and name not in ("maximum", "minimum")
    assert_close(got, ref, signed_zeros=signed)


_SCALARS = {
    "b": [True, False],
    "i": [0, 3, -2, 7],
    "u": [0, 3, 7],
    "f": [1.5, -0.25, 2.0, 0.0],
    "c": [1 + 2j, -0.5j],
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int8", "int32", "uint8", "int64"])
@pytest.mark.parametrize("exponent", [2, 1, -1, 2.0, 1.0, -1.0, 3])
def test_small_powers_take_the_simple_paths_with_pow_results(dtype, exponent):
    """``x ** 2``, ``x ** 1`` and (floating) ``x ** -1`` are one product, a copy, one
    division: the results (values, signed zeros, NaN, infinities, wrap-around, dtype) are
    those of pow; other exponents keep pow (``3``: libm's, about 1 ulp)."""
    kind = np.dtype(dtype).kind
    if kind != "f" and (type(exponent) is float or exponent < 0):
        return  # float exponents promote integer arrays, negative ones are integer pow: not fast paths
    rng = np.random.default_rng(3)
    a = random_values(rng, (1000,), dtype)
    if kind == "f":
        a[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-3]
    x = ta.asarray(a)
    with np.errstate(all="ignore"):
        want = np.power(a, np.asarray(exponent, dtype=a.dtype))
    for got in (x**exponent, ta.pow(x, exponent)):
        assert got.dtype == x.dtype
        g = np.asarray(got)
        if exponent == 3 and kind == "f":
            np.testing.assert_allclose(g, want, rtol=2e-3 if dtype == "float16" else 2e-6)
        else:
            np.testing.assert_array_equal(g, want)
            np.testing.assert_array_equal(np.signbit(g), np.signbit(want))
    y = x**1
    y[0] = 7  # a new array, not a view of x
    assert np.asarray(x)[0] == a[0]


def test_half_power_keeps_pow_semantics():
    """``x ** 0.5`` is pow, not sqrt: ``(-0) ** 0.5 = +0`` and ``(-inf) ** 0.5 = +inf``
    (C99 Annex F; NumPy's own fast path gives sqrt's -0 and NaN there)."""
    x = ta.asarray(np.array([-0.0, -np.inf, 4.0, 2.0], np.float32))
    got = np.asarray(x**0.5)
    np.testing.assert_array_equal(got[:3], [0.0, np.inf, 2.0])
    assert not np.signbit(got[0])
    np.testing.assert_allclose(got[3], np.sqrt(np.float32(2.0)), rtol=2e-7)


@pytest.mark.parametrize("name", sorted(BINARY))
@SETTINGS
@given(data=st.data())
def test_binary_with_python_scalar(name, data):
    """A Python scalar takes the array's dtype (array API 2024.12), on either side."""
    category = BINARY[name][0]
    names = [d for d in dtypes_of(category) if d != "float16"]
    dtype = data.draw(st.sampled_from(names), label="dtype")
    kind = np.dtype(NP[dtype]).kind
    choices = list(_SCALARS[kind])
    if kind in "fc":
        choices += _SCALARS["i"]  # ints go with floating arrays
    if name in _NONNEG_SECOND:
        choices = [c for c in choices if not (isinstance(c, (int, float)) and c < 0)]
    s = data.draw(st.sampled_from(choices), label="scalar")
    left = data.draw(st.booleans(), label="scalar_first")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    shape = data.draw(shapes, label="shape")
    a = random_values(rng, shape, dtype)
    if name in _NONNEG_SECOND and kind in "iu" and left:
        bits = 8 * a.dtype.itemsize
        a = (np.abs(a.astype(np.int64)) % (bits if name != "pow" else 5)).astype(a.dtype)
    x = ta.asarray(a)
    got = getattr(ta, name)(s, x) if left else getattr(ta, name)(x, s)
    sd = ta._dtypes.scalar_dtype(s, x.dtype)
    rdt = NP[ta.result_type(x.dtype, sd).name]
    sv = np.asarray(s, dtype=NP[sd.name]).astype(rdt)
    av = a.astype(rdt)
    ref = np_ref(name, *((np.broadcast_to(sv, a.shape), av) if left else (av, np.broadcast_to(sv, a.shape))))
    assert_close(got, ref)


# ============================================================================= special values

# Deviations from NumPy that the array API standard asks for (or leaves open), by function:
# they are checked against the standard's own special-case lists below.
_SPECIAL_SKIP_REAL = {"floor_divide"}


def _grid_real(dtype):
    with np.errstate(over="ignore"):
        return np.array(SPECIAL, dtype=np.float64).astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(n for n, r in UNARY.items() if "f" in "".join(r[2]) and n != "sign"))
def test_unary_special_values_real(name, dtype):
    a = _grid_real(NP[dtype])
    got = getattr(ta, name)(ta.asarray(a))
    with np.errstate(all="ignore"):
        ref = np_ref(name, a)
    assert_close(got, ref, signed_zeros=True, rtol=1e-5 if dtype == "float32" else 1e-13)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(
    "name", sorted(n for n, r in BINARY.items() if "f" in "".join(r[2]) and n not in _SPECIAL_SKIP_REAL)
)
def test_binary_special_values_real(name, dtype):
    v = _grid_real(NP[dtype])
    a, b = (g.ravel() for g in np.meshgrid(v, v))
    got = getattr(ta, name)(ta.asarray(a), ta.asarray(b))
    ref = np_ref(name, a, b)
    signed = name not in ("maximum", "minimum")
    assert_close(got, ref, signed_zeros=signed, rtol=1e-5 if dtype == "float32" else 1e-13)


def test_floor_divide_special_cases_follow_the_standard():
    inf, nan = math.inf, math.nan
    # (x1, x2, expected) from the standard's list for floor_divide
    cases = [
        (nan, 1.0, nan), (1.0, nan, nan), (inf, inf, nan), (-inf, inf, nan), (0.0, 0.0, nan),
        (-0.0, 0.0, nan), (0.0, 2.0, 0.0), (-0.0, 2.0, -0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, 0.0),
        (2.0, 0.0, inf), (2.0, -0.0, -inf), (-2.0, 0.0, -inf), (-2.0, -0.0, inf),
        (inf, 2.0, inf), (inf, -2.0, -inf), (-inf, 2.0, -inf), (-inf, -2.0, inf),
        (2.0, inf, 0.0), (2.0, -inf, -0.0), (-2.0, inf, -0.0), (-2.0, -inf, 0.0),
        (7.0, 2.0, 3.0), (-7.0, 2.0, -4.0), (7.0, -2.0, -4.0), (1e300, 1e-300, inf),
    ]  # fmt: skip
    a, b, e = (np.array(c) for c in zip(*cases))
    for dt in (np.float32, np.float64):
        got = np.asarray(ta.floor_divide(ta.asarray(a.astype(dt)), ta.asarray(b.astype(dt))))
        exp = e.astype(dt)
        if dt == np.float32:
            exp[-1] = np.inf  # 1e300 overflows float32 anyway
        np.testing.assert_array_equal(got, exp)
        num = ~np.isnan(exp)  # the sign of a NaN is not specified
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(exp[num]))


def test_remainder_special_cases_follow_the_standard():
    inf, nan = math.inf, math.nan
    cases = [
        (nan, 1.0, nan), (inf, 2.0, nan), (-inf, -2.0, nan), (inf, inf, nan), (0.0, 0.0, nan),
        (2.0, 0.0, nan), (0.0, 2.0, 0.0), (-0.0, 2.0, 0.0), (0.0, -2.0, -0.0), (-0.0, -2.0, -0.0),
        (2.0, inf, 2.0), (2.0, -inf, -inf), (-2.0, inf, inf), (-2.0, -inf, -2.0),
        (7.0, -2.0, -1.0), (-7.0, 2.0, 1.0), (5.5, 2.0, 1.5), (1e300, 3.0, math.fmod(1e300, 3.0)),
    ]  # fmt: skip
    a, b, e = (np.array(c) for c in zip(*cases))
    got = np.asarray(ta.remainder(ta.asarray(a), ta.asarray(b)))
    np.testing.assert_array_equal(got, e)
    num = ~np.isnan(e)
    np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(e[num]))


# complex: NumPy (glibc) follows C99 Annex G like the standard. Where Annex G leaves the sign
# of an infinity or of a NaN's partner open, only NaN-ness and infiniteness are compared.
_COMPLEX_GRID_SKIP = {
    "expm1",  # NumPy computes exp(z) - 1 naively; checked against the standard below
    "log1p",  # likewise log(1 + z)
    "sign",  # NumPy's z / |z| gives 1j for nan + inf j; the standard says NaN + NaN j
    "reciprocal",  # NumPy gives nan + nan j for 1 / 0; we follow complex division (inf + nan j)
    "square",  # NumPy fuses a*a - b*b (FMA); we compute the components as the standard's table
}


def _complex_grid(dtype):
    v = np.array(SPECIAL[::2] + [np.inf, -np.inf, np.nan, -0.0])
    re, im = np.meshgrid(v, v)
    return (re + 1j * im).ravel().astype(dtype)


def _assert_complex_special(got, ref, z):
    g, r = np.asarray(got), np.asarray(ref)
    assert g.dtype == r.dtype
    if g.dtype == np.bool_:
        np.testing.assert_array_equal(g, r)
        return
    single = g.dtype in (np.float32, np.complex64)
    if g.dtype.kind == "f":
        g, r = g.astype(np.complex128), r.astype(np.complex128)
    loose = ~np.isfinite(z)  # an input with a NaN or infinite part
    for gp, rp in ((g.real, r.real), (g.imag, r.imag)):
        assert np.array_equal(np.isnan(gp), np.isnan(rp)), (z[np.isnan(gp) != np.isnan(rp)], gp, rp)
        assert np.array_equal(np.isinf(gp), np.isinf(rp)), z[np.isinf(gp) != np.isinf(rp)]
        strict_inf = np.isinf(rp) & ~loose
        assert np.array_equal(gp[strict_inf], rp[strict_inf])
    fin = np.isfinite(g) & np.isfinite(r)
    scale = np.abs(r[fin].astype(np.complex128))
    tol = (1e-5 if single else 1e-12) * scale + 1e-30
    assert np.all(np.abs(g[fin] - r[fin]) <= tol), (z[fin][np.abs(g[fin] - r[fin]) > tol], g[fin], r[fin])


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize(
    "name", sorted(n for n, r in UNARY.items() if "c" in "".join(r[2]) and n not in _COMPLEX_GRID_SKIP)
)
def test_unary_special_values_complex(name, dtype):
    z = _complex_grid(NP[dtype])
    got = getattr(ta, name)(ta.asarray(z))
    f = getattr(np, _NP_NAMES.get(name, name))
    with np.errstate(all="ignore"):
        ref = f(z)
    _assert_complex_special(got, ref, z)


def _c(a, b):
    return complex(a, b)


# (function, input, expected) from the standard's special-case lists; None: sign unspecified
_COMPLEX_SPEC_CASES = [
    ("expm1", _c(0.0, 0.0), _c(0.0, 0.0)),
    ("expm1", _c(-0.0, 0.0), _c(0.0, 0.0)),  # +0 real part: not the real expm1(-0) = -0
    ("expm1", _c(-0.0, -0.0), _c(0.0, -0.0)),  # the conjugate of the case above
    ("acosh", _c(1.0, math.nan), _c(math.nan, math.nan)),
    ("tanh", _c(math.inf, 2.0), _c(1.0, 0.0)),  # +0 although sin(2 * 2) < 0 (C99's sign)
    ("tanh", _c(math.inf, 0.5), _c(1.0, 0.0)),
    ("tanh", _c(math.inf, -2.0), _c(1.0, -0.0)),  # tanh(conj(z)) = conj(tanh(z))
    ("tanh", _c(-math.inf, 2.0), _c(-1.0, 0.0)),  # tanh(-z) = -tanh(z)
    ("expm1", _c(math.inf, 0.0), _c(math.inf, 0.0)),
    ("expm1", _c(-math.inf, 1.0), _c(-1.0 + 0.0 * math.cos(1.0), 0.0 * math.sin(1.0))),
    ("expm1", _c(1.0, math.inf), _c(math.nan, math.nan)),
    ("expm1", _c(math.nan, 0.0), _c(math.nan, 0.0)),
    ("expm1", _c(math.nan, 1.0), _c(math.nan, math.nan)),
    ("log1p", _c(-1.0, 0.0), _c(-math.inf, 0.0)),
    ("log1p", _c(1.0, math.inf), _c(math.inf, math.pi / 2)),
    ("log1p", _c(-math.inf, 1.0), _c(math.inf, math.pi)),
    ("log1p", _c(math.inf, 1.0), _c(math.inf, 0.0)),
    ("log1p", _c(math.nan, math.inf), _c(math.inf, math.nan)),
    ("log1p", _c(math.nan, 1.0), _c(math.nan, math.nan)),
    ("sign", _c(0.0, -0.0), _c(0.0, 0.0)),
    ("sign", _c(math.nan, math.inf), _c(math.nan, math.nan)),
    ("sign", _c(3.0, -4.0), _c(0.6, -0.8)),
    ("square", _c(math.inf, 0.0), _c(math.inf, math.nan)),
    ("square", _c(2.0, 3.0), _c(-5.0, 12.0)),
]


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name,z,expected", _COMPLEX_SPEC_CASES)
def test_complex_special_cases_from_the_standard(name, z, expected, dtype):
    got = complex(np.asarray(getattr(ta, name)(ta.asarray(np.array([z], dtype=NP[dtype]))))[0])
    for g, e in ((got.real, expected.real), (got.imag, expected.imag)):
        if math.isnan(e):
            assert math.isnan(g), (name, z, got)
        else:
            assert g == pytest.approx(e, rel=1e-6, abs=1e-12), (name, z, got)
            if e == 0:
                assert math.copysign(1, g) == math.copysign(1, e), (name, z, got)


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("re", [0.0, -0.0])
def test_acosh_of_zero_plus_nan_j(re, dtype):
    """The standard: acosh(+0 + NaN j) = NaN +- pi/2 j (the sign of the imaginary part is
    unspecified); FreeBSD's and glibc's cacosh give NaN + NaN j."""
    got = complex(np.asarray(ta.acosh(ta.asarray(np.array([_c(re, math.nan)], dtype=NP[dtype]))))[0])
    assert math.isnan(got.real)
    assert abs(got.imag) == pytest.approx(math.pi / 2, rel=1e-6), got


@pytest.mark.parametrize("dtype", ["complex64", "complex128"])
@pytest.mark.parametrize("name", ["add", "subtract", "multiply", "divide", "equal", "not_equal", "pow"])
def test_binary_complex_matches_numpy(name, dtype):
    rng = np.random.default_rng(1)
    a = random_values(rng, (40,), dtype, scale=3.0)
    b = random_values(rng, (40,), dtype, scale=3.0)
    b[:5] = np.array([2, -3, 0.5, 4, 1]).astype(b.dtype)  # integer exponents for pow
    a[-1] = b[-1]  # equal pair
    assert_close(getattr(ta, name)(ta.asarray(a), ta.asarray(b)), np_ref(name, a, b))
    # mixed real/complex operands promote to complex
    r = a.real.copy()
    expect = np_ref(name, r.astype(NP[dtype]), b)
    assert_close(getattr(ta, name)(ta.asarray(r), ta.asarray(b)), expect)


# ============================================================================= exact semantics


def test_round_half_to_even_and_signed_zero():
    a = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999999999999994, -0.3, 4503599627370497.0, np.nan])
    for dt in (np.float32, np.float64, np.float16):
        x = a.astype(dt)
        got = np.asarray(ta.round(ta.asarray(x)))
        np.testing.assert_array_equal(got, np.round(x))
        np.testing.assert_array_equal(np.signbit(got), np.signbit(np.round(x)))
    z = np.array([2.5 - 1.5j, -0.5 + 3.5j], dtype=np.complex128)
    np.testing.assert_array_equal(np.asarray(ta.round(ta.asarray(z))), np.round(z))


def test_log2_log10_exact_on_powers():
    p2 = 2.0 ** np.arange(-60, 60)
    np.testing.assert_array_equal(np.asarray(ta.log2(ta.asarray(p2))), np.arange(-60, 60).astype(float))
    p10 = 10.0 ** np.arange(0, 23)
    np.testing.assert_array_equal(np.asarray(ta.log10(ta.asarray(p10))), np.arange(0, 23).astype(float))
    f = (10.0 ** np.arange(0, 10)).astype(np.float32)
    np.testing.assert_array_equal(np.asarray(ta.log10(ta.asarray(f))), np.arange(0, 10).astype(np.float32))


@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_integer_division_and_overflow(dtype):
    info = np.iinfo(NP[dtype])
    signed = info.min < 0
    vals = [info.min, info.max, 0, 1, 7, 100 % (info.max + 1)] + ([-1, -7] if signed else [])
    a, b = (g.ravel().astype(NP[dtype]) for g in np.meshgrid(vals, vals))
    x, y = ta.asarray(a), ta.asarray(b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(np.asarray(ta.floor_divide(x, y)), np.floor_divide(a, b))  # // 0 -> 0
        np.testing.assert_array_equal(np.asarray(ta.remainder(x, y)), np.remainder(a, b))
        np.testing.assert_array_equal(np.asarray(ta.add(x, y)), a + b)  # wraps
        np.testing.assert_array_equal(np.asarray(ta.multiply(x, y)), a * b)
        np.testing.assert_array_equal(np.asarray(ta.negative(x)), -a)
        np.testing.assert_array_equal(np.asarray(ta.abs(x)), np.abs(a))
        np.testing.assert_array_equal(np.asarray(ta.square(x)), np.square(a))
    bits = 8 * np.dtype(NP[dtype]).itemsize
    sh = np.array([0, 1, bits - 1, bits, bits + 5], dtype=NP[dtype])
    base = np.full(sh.shape, info.min if signed else info.max, dtype=NP[dtype])
    np.testing.assert_array_equal(
        np.asarray(ta.bitwise_left_shift(ta.asarray(base), ta.asarray(sh))), np.left_shift(base, sh)
    )
    np.testing.assert_array_equal(
        np.asarray(ta.bitwise_right_shift(ta.asarray(base), ta.asarray(sh))), np.right_shift(base, sh)
    )


def test_integer_pow_negative_exponent_is_defined():
    a = np.array([2, 1, -1, -1, 0, 5])
    e = np.array([-1, -3, -2, -3, 3, 0])
    got = np.asarray(ta.pow(ta.asarray(a), ta.asarray(e)))
    np.testing.assert_array_equal(got, [0, 1, 1, -1, 0, 1])


def test_complex64_pow_is_rounded_from_wider_intermediates():
    # found by HYPOTHESIS_PROFILE=thorough: (2.74-4.60j)**56 overflows complex64; repeated
    # multiplication in float32 gave NaN where the rounded exact result is (inf - inf j)
    z = np.array([2.7392337 - 4.6042657j, 1 + 1j, 0.5 - 3j, 1e-30 + 1e-30j], np.complex64)
    for e in (56, 37, 3, -5):
        got = np.asarray(ta.pow(ta.asarray(z), ta.asarray(np.int8(e))))
        want = np.power(z.astype(np.complex128), e).astype(np.complex64)
        assert got.dtype == np.complex64
        np.testing.assert_allclose(got, want, rtol=3e-6)
        assert (np.isinf(got.real) == np.isinf(want.real)).all() and not np.isnan(got[:3]).any()


def test_integer_operands_are_rounded_to_the_promoted_dtype_first():
    # found by HYPOTHESIS_PROFILE=thorough: float16 data is computed in float32, complex64
    # pow in float64; an int16 (int64) operand must first become float16 (float32), as the
    # promotion says: (-4.594) ** int16(-21843) is +0, since -21843 is -21840 in float16
    a = np.array([-4.594, 1.5, -1.0], np.float16)
    e = np.array([-21843, 3, 2049], np.int16)
    got = np.asarray(ta.pow(ta.asarray(a), ta.asarray(e)))
    want = np.power(a.astype(np.float64), e.astype(np.float16).astype(np.float64)).astype(np.float16)
    np.testing.assert_array_equal(got, want)
    assert np.signbit(got).tolist() == np.signbit(want).tolist()
    np.testing.assert_array_equal(
        np.asarray(ta.add(ta.asarray(a), ta.asarray(e))),
        (a.astype(np.float32) + e.astype(np.float16)).astype(np.float16),
    )
    z = np.array([0.2364325 + 9.009274j, 1.0000001 + 0j], np.complex64)
    k = np.array([149690573, 2**30 + 1], np.int64)
    got = np.asarray(ta.pow(ta.asarray(z), ta.asarray(k)))
    want = np.power(z.astype(np.complex128), k.astype(np.complex64).astype(np.complex128)).astype(
        np.complex64
    )
    np.testing.assert_array_equal(np.signbit(got.real), np.signbit(want.real))
    np.testing.assert_array_equal(np.signbit(got.imag), np.signbit(want.imag))


def test_bool_invert_is_logical_not():
    b = np.array([True, False])
    np.testing.assert_array_equal(np.asarray(ta.bitwise_invert(ta.asarray(b))), ~b)
    np.testing.assert_array_equal(np.asarray(~ta.asarray(b)), ~b)


def test_nan_comparisons():
    a = np.array([np.nan, 1.0, np.nan])
    b = np.array([np.nan, np.nan, 1.0])
    x, y = ta.asarray(a), ta.asarray(b)
    np.testing.assert_array_equal(np.asarray(x != y), [True, True, True])
    np.testing.assert_array_equal(np.asarray(x == y), [False, False, False])
    np.testing.assert_array_equal(np.asarray(ta.maximum(x, y)), [np.nan] * 3)
    np.testing.assert_array_equal(np.asarray(ta.minimum(y, x)), [np.nan] * 3)


# ============================================================================= where, clip


@SETTINGS
@given(data=st.data())
def test_where_matches_numpy(data):
    d1 = data.draw(st.sampled_from(dtypes_of("all")), label="d1")
    d2 = data.draw(st.sampled_from(dtypes_of("all")), label="d2")
    try:
        rdt = ta.result_type(getattr(ta, d1), getattr(ta, d2))
    except TypeError:
        return
    shape = data.draw(shapes, label="shape")
    sc, s1 = _broadcast_pair(data.draw, shape)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    c = random_values(rng, sc, "bool")
    a = random_values(rng, s1, d1)
    b = random_values(rng, shape, d2)
    lay = data.draw(st.sampled_from(LAYOUTS))
    got = ta.where(as_layout(c, lay), as_layout(a, "contiguous"), as_layout(b, lay))
    ref = np.where(c, a.astype(NP[rdt.name]), b.astype(NP[rdt.name]))
    assert_close(got, ref, rtol=0, atol=0)


def test_where_scalars_and_errors():
    x = ta.asarray([1.0, -2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(ta.where(x > 0, x, 0)), [1.0, 0.0, 3.0])
    np.testing.assert_array_equal(np.asarray(ta.where(x > 0, 7, x)), [7.0, -2.0, 7.0])
    assert ta.where(x > 0, x, 0).dtype == ta.float64
    with pytest.raises(TypeError, match="where.*condition.*boolean"):
        ta.where(x, x, x)
    with pytest.raises(TypeError, match="where.*Python scalar"):
        ta.where(x > 0, 1, 2)
    with pytest.raises(ValueError, match="where"):
        ta.where(ta.asarray([True, False]), x, x)


@SETTINGS
@given(data=st.data())
def test_clip_matches_array_api_strict(data):
    import array_api_strict as xp

    dtype = data.draw(st.sampled_from([d for d in dtypes_of("real numeric") if d != "float16"]))
    shape = data.draw(shapes)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    a = random_values(rng, shape, dtype)
    kind = np.dtype(NP[dtype]).kind
    lo_kind = data.draw(st.sampled_from(["none", "scalar", "array"]))
    hi_kind = data.draw(st.sampled_from(["none", "scalar", "array"]))

    def bound(k, sign):
        if k == "none":
            return None, None
        if k == "scalar":
            v = sign * (3 if kind in "iu" else 2.5)
            if kind == "u":
                v = abs(v) * (1 if sign > 0 else 0)
            return v, v
        arr = random_values(rng, shape[1:], dtype)
        arr = np.minimum(arr, 0) if sign < 0 else np.maximum(arr, 0)
        return ta.asarray(arr), xp.asarray(arr)

    lo, slo = bound(lo_kind, -1)
    hi, shi = bound(hi_kind, 1)
    got = ta.clip(as_layout(a, data.draw(st.sampled_from(LAYOUTS))), lo, hi)
    ref = xp.clip(xp.asarray(a), slo, shi)
    assert_close(got, np.asarray(ref), rtol=0, atol=0)


def test_clip_nan_and_errors():
    x = ta.asarray([np.nan, -5.0, 5.0, 0.5])
    got = np.asarray(ta.clip(x, 0.0, 1.0))
    np.testing.assert_array_equal(got, [np.nan, 0.0, 1.0, 0.5])
    got = np.asarray(ta.clip(x, ta.asarray([np.nan, 0.0, 0.0, 0.0]), None))
    np.testing.assert_array_equal(np.isnan(got), [True, False, False, False])
    with pytest.raises(TypeError, match="clip.*'min'.*integer"):
        ta.clip(ta.asarray([1, 2]), 0.5)
    with pytest.raises(TypeError, match="clip.*'x'.*real numeric"):
        ta.clip(ta.asarray([1 + 1j]), 0)
    # Python int bounds outside the dtype's range are clamped to it
    i8 = ta.asarray(np.array([-100, 100], dtype=np.int8))
    np.testing.assert_array_equal(np.asarray(ta.clip(i8, -1000, 1000)), [-100, 100])
    assert ta.clip(i8, 0, 10).dtype == ta.int8
    assert ta.clip(i8).dtype == ta.int8


# ============================================================================= large arrays (parallel kernels)


def test_large_strided_inputs_use_the_parallel_kernels():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((600, 400)).astype(np.float32)
    b = rng.standard_normal((400,)).astype(np.float32)
    x = ta.asarray(a)
    assert_close(ta.add(x.mT, x.mT), a.T + a.T)
    assert_close(ta.multiply(x[::-1, ::2], ta.asarray(b)[::2]), a[::-1, ::2] * b[::2])
    assert_close(ta.exp(x[:, 1:]), np.exp(a[:, 1:].astype(np.float64)).astype(np.float32))
    assert_close(ta.where(x > 0, x, 0.0), np.where(a > 0, a, np.float32(0)))
    big = rng.standard_normal(300_001)
    assert_close(ta.sin(ta.asarray(big)[::3]), np.sin(big[::3]))
    c = (rng.standard_normal((300, 300)) + 1j * rng.standard_normal((300, 300))).astype(np.complex64)
    assert_close(ta.sqrt(ta.asarray(c).mT), np.sqrt(c.T.astype(np.complex128)).astype(np.complex64))


def test_recycled_result_buffers_are_not_shared_with_live_views():
    """Large results reuse freed buffers (tiarray._buffer's pool); memory still referenced
    (a NumPy view, a TiArray view, an exported capsule) is never handed out again."""
    n = 1 << 19  # 2 MiB of float32
    x = ta.asarray(np.arange(n, dtype=np.float32))
    r = ta.add(x, 1.0)
    view = np.asarray(r)
    tail = r[n // 2 :]
    cap = np.from_dlpack(ta.multiply(x, 3.0))
    del r
    for k in range(4):
        s = ta.add(x, float(10 + k))
        np.testing.assert_array_equal(np.asarray(s)[:3], [10 + k, 11 + k, 12 + k])
        del s
    np.testing.assert_array_equal(view[:3], [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(np.asarray(tail)[:2], [n // 2 + 1, n // 2 + 2])
    np.testing.assert_array_equal(cap[:3], [0.0, 3.0, 6.0])


@pytest.mark.parametrize("n", [8192, 3 * 8192 + 5])
@pytest.mark.parametrize(
    "name,dtypes",
    [("add", ("float32", "float32")), ("multiply", ("int8", "int16")), ("less", ("uint32", "uint32")),
     ("floor_divide", ("int64", "int64")), ("logical_xor", ("bool", "bool")), ("exp", ("float64",)),
     ("isnan", ("float16",)), ("copysign", ("float32", "float64"))],
)  # fmt: skip
def test_lane_blocked_kernels(name, dtypes, n):
    """Contiguous real data of at least 8192 elements runs in blocks of 8 plus a tail."""
    rng = np.random.default_rng(7)
    arrays = [random_values(rng, (n,), d) for d in dtypes]
    if name == "floor_divide":
        arrays[1][::3] = 0
    rdt = NP[ta.result_type(*[getattr(ta, d) for d in dtypes]).name]
    got = getattr(ta, name)(*[ta.asarray(a) for a in arrays])
    assert_close(got, np_ref(name, *[a.astype(rdt) for a in arrays]))
    if len(arrays) == 2:  # one operand broadcast from a single element
        got = getattr(ta, name)(ta.asarray(arrays[0]), ta.asarray(arrays[1][:1]))
        assert_close(
            got, np_ref(name, arrays[0].astype(rdt), np.broadcast_to(arrays[1][:1], (n,)).astype(rdt))
        )


# ============================================================================= operators


def _arr(a):
    return ta.asarray(np.asarray(a))


_BINOPS = [
    ("__add__", np.add), ("__sub__", np.subtract), ("__mul__", np.multiply),
    ("__truediv__", np.true_divide), ("__floordiv__", np.floor_divide), ("__mod__", np.remainder),
    ("__pow__", np.power), ("__lt__", np.less), ("__le__", np.less_equal), ("__gt__", np.greater),
    ("__ge__", np.greater_equal), ("__eq__", np.equal), ("__ne__", np.not_equal),
]  # fmt: skip


@pytest.mark.parametrize("op,ref", _BINOPS)
def test_operators_match_numpy(op, ref):
    a = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
    b = np.array([2.0, -0.5, 3.0])
    x, y = _arr(a), _arr(b)
    with np.errstate(all="ignore"):
        assert_close(getattr(x, op)(y), ref(a, b))
        assert_close(getattr(x, op)(2), ref(a, np.float64(2)))
        if op[2:-2] not in ("lt", "le", "gt", "ge", "eq", "ne"):
            rop = "__r" + op[2:]
            assert_close(getattr(x, rop)(3.0), ref(np.float64(3.0), a))
            assert_close(getattr(y, rop)(x), ref(a, b))  # reflected with an array


def test_bitwise_and_unary_operators():
    a = np.array([12, -3, 7], dtype=np.int32)
    x = _arr(a)
    np.testing.assert_array_equal(np.asarray(x & 6), a & 6)
    np.testing.assert_array_equal(np.asarray(6 | x), 6 | a)
    np.testing.assert_array_equal(np.asarray(x ^ x), a ^ a)
    np.testing.assert_array_equal(np.asarray(x << 2), a << 2)
    np.testing.assert_array_equal(np.asarray(x >> 1), a >> 1)
    np.testing.assert_array_equal(np.asarray(1 << _arr(np.array([1, 2], np.int32))), [2, 4])
    np.testing.assert_array_equal(np.asarray(-x), -a)
    np.testing.assert_array_equal(np.asarray(+x), a)
    np.testing.assert_array_equal(np.asarray(abs(x)), np.abs(a))
    np.testing.assert_array_equal(np.asarray(~x), ~a)


def test_operators_with_numpy_and_torch_operands():
    a = np.arange(6.0).reshape(2, 3)
    x = _arr(a)
    r = x + a
    assert isinstance(r, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(r), a + a)
    r2 = a * x  # numpy defers to TiArray.__rmul__ (__array_priority__)
    assert isinstance(r2, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(r2), a * a)
    np.testing.assert_array_equal(np.asarray(ta.add(a, x)), a + a)
    assert (x == object()) is False
    assert (x != None) is True  # noqa: E711


def test_operators_with_torch_operands(torch):
    a = np.arange(6.0).reshape(2, 3)
    x = _arr(a)
    t = torch.arange(6.0, dtype=torch.float64).reshape(2, 3)
    r3 = ta.multiply(x, t)
    assert isinstance(r3, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(r3), a * a)


def test_inplace_operators():
    a = np.arange(12, dtype=np.float64).reshape(3, 4)
    buf = a.copy()
    x = ta.asarray(buf)
    x += 1
    np.testing.assert_array_equal(buf, a + 1)  # written in place, in the NumPy buffer
    x *= ta.asarray(np.array([1.0, 2.0, 3.0, 4.0]))
    np.testing.assert_array_equal(buf, (a + 1) * [1.0, 2.0, 3.0, 4.0])
    # a strided view is updated in place
    buf2 = np.zeros((4, 6))
    v = ta.asarray(buf2)[::2, 1::2]
    v -= 5.0
    expect = np.zeros((4, 6))
    expect[::2, 1::2] = -5.0
    np.testing.assert_array_equal(buf2, expect)
    # aliasing: x += x.T reads the original values
    sq = np.arange(16.0).reshape(4, 4)
    s = ta.asarray(sq.copy())
    s += s.mT
    np.testing.assert_array_equal(np.asarray(s), sq + sq.T)
    # integer in-place floor division and shifts keep the dtype
    i = ta.asarray(np.array([7, -7, 9], dtype=np.int16))
    i //= 2
    i <<= 1
    assert i.dtype == ta.int16
    np.testing.assert_array_equal(np.asarray(i), (np.array([7, -7, 9], np.int16) // 2) << 1)


def test_inplace_errors():
    x = ta.asarray(np.arange(4, dtype=np.int32))
    with pytest.raises(TypeError, match="must keep the dtype"):
        x /= 2
    with pytest.raises(TypeError, match="must keep the dtype"):
        x += ta.asarray(np.ones(4, dtype=np.int64))
    with pytest.raises(ValueError, match="must keep the shape"):
        x += ta.asarray(np.ones((2, 4), dtype=np.int32))
    ro = ta.asarray(np.arange(3.0))
    ro._readonly = True  # as a JAX array's view
    with pytest.raises(ValueError, match="read-only"):
        ro += 1


def test_matmul_operator_delegates_to_tiarray_matmul(monkeypatch):
    calls = []

    def fake_matmul(a, b):
        calls.append((a, b))
        return ta.asarray(np.asarray(a) @ np.asarray(b))

    monkeypatch.setattr(sys.modules["tiarray"], "matmul", fake_matmul, raising=False)
    a = ta.asarray(np.eye(2))
    b = ta.asarray(np.arange(4.0).reshape(2, 2))
    np.testing.assert_array_equal(np.asarray(a @ b), np.arange(4.0).reshape(2, 2))
    np.testing.assert_array_equal(np.asarray(np.arange(4.0).reshape(2, 2) @ a), np.arange(4.0).reshape(2, 2))
    assert calls[0] == (a, b) and calls[1][1] is a
    with pytest.raises(TypeError):
        a @ 2  # noqa: B018


# ============================================================================= promotion


_STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
             "float32", "float64", "complex64", "complex128"]  # fmt: skip


@pytest.mark.parametrize("d1", _STANDARD)
@pytest.mark.parametrize("d2", _STANDARD)
def test_promotion_matches_array_api_strict(d1, d2):
    """Within the standard's lattice the result dtype is array-api-strict's; across kinds
    (left to implementations) tiarray promotes to the higher kind, as JAX and PyTorch."""
    import array_api_strict as xp

    x = ta.zeros(2, dtype=getattr(ta, d1))
    y = ta.zeros(2, dtype=getattr(ta, d2))
    try:
        s = xp.result_type(getattr(xp, d1), getattr(xp, d2))
        strict = next(n for n in _STANDARD if getattr(xp, n) == s)
    except TypeError:
        strict = None
    if {d1, d2} & {"uint64"} and {d1, d2} & {"int8", "int16", "int32", "int64"}:
        assert strict is None
        with pytest.raises(TypeError):
            ta.add(x, y) if "bool" not in (d1, d2) else ta.equal(x, y)
        return
    got = ta.where(ta.asarray([True, False]), x, y).dtype
    assert ta.result_type(x, y) == got
    if strict is not None:
        assert got.name == strict
    else:  # across kinds: the dtype of the higher kind (complex > real floating > integer > bool)
        kinds = "biufc"
        hi = max((d1, d2), key=lambda d: kinds.index(np.dtype(NP[d]).kind))
        if {np.dtype(NP[d1]).kind, np.dtype(NP[d2]).kind} == {"f", "c"}:
            return  # real with complex is in the standard's lattice
        assert got.name == hi or (np.dtype(NP[hi]).kind in "iu" and got.kind in "iu")


def test_python_scalars_keep_signed_zeros_and_nan():
    x = ta.asarray([1.0, -1.0])
    assert np.signbit(np.asarray(x * 0.0)).tolist() == [False, True]
    assert np.signbit(np.asarray(x * -0.0)).tolist() == [True, False]
    assert np.signbit(np.asarray(ta.copysign(x, -0.0))).all()
    assert np.isnan(np.asarray(x + float("nan"))).all()
    assert np.asarray(x * 2).tolist() == [2.0, -2.0] and np.asarray(x * 2.0).tolist() == [2.0, -2.0]


def test_python_scalar_rules():
    i8 = ta.asarray(np.array([1, 2], dtype=np.int8))
    f32 = ta.asarray(np.array([1, 2], dtype=np.float32))
    assert (i8 + 1).dtype == ta.int8
    assert (f32 + 1).dtype == ta.float32
    assert (f32 * 2.5).dtype == ta.float32
    assert (f32 * 1j).dtype == ta.complex64
    assert (ta.asarray([True]) & True).dtype == ta.bool
    with pytest.raises(OverflowError, match="add.*does not fit.*int8"):
        i8 + 300  # noqa: B018
    # past the float range: NumPy's own OverflowError, without the function's name before
    with pytest.raises(
        OverflowError, match=r"equal\(\): argument 'x2': a Python int of 311 digits .* float32"
    ):
        f32 == 2**1030  # noqa: B015
    with pytest.raises(TypeError, match="at least one argument must be an array"):
        ta.add(1, 2)


# ============================================================================= errors


def test_dtype_category_errors_name_function_and_argument():
    f = ta.asarray([1.0, 2.0])
    i = ta.asarray([1, 2])
    with pytest.raises(
        TypeError, match=r"bitwise_and\(\): argument 'x1' must have an integer or boolean dtype, got float64"
    ):
        ta.bitwise_and(f, i)
    with pytest.raises(TypeError, match=r"bitwise_and\(\): argument 'x2'"):
        ta.bitwise_and(i, f)
    with pytest.raises(TypeError, match=r"sin\(\): argument 'x' must have a floating-point dtype, got int64"):
        ta.sin(i)
    with pytest.raises(TypeError, match=r"add\(\): argument 'x1'.*numeric.*bool"):
        ta.add(ta.asarray([True]), ta.asarray([False]))
    with pytest.raises(TypeError, match=r"logical_and\(\)"):
        ta.logical_and(i, i)
    with pytest.raises(TypeError, match=r"less\(\).*complex128"):
        ta.less(ta.asarray([1j]), ta.asarray([1j]))
    with pytest.raises(TypeError, match=r"sin\(\): argument 'x' must be an array"):
        ta.sin(1.0)
    with pytest.raises(TypeError, match="no common dtype"):
        ta.add(ta.asarray(np.array([1], np.uint64)), ta.asarray(np.array([1], np.int64)))


def test_shape_and_device_errors():
    with pytest.raises(ValueError, match=r"add\(\).*cannot be broadcast"):
        ta.add(ta.zeros((2, 3)), ta.zeros((4,)))
    x = ta.zeros(3)
    fake = ta.TiArray._new(x.ptr, (3,), (1,), ta.float64, ta.Device("cuda", 0), x, False)
    with pytest.raises(ValueError, match=r"add\(\).*different devices"):
        ta.add(x, fake)


def test_float16_and_bfloat16():
    h = np.array([0.5, 1.5, -2.25], dtype=np.float16)
    got = ta.exp(ta.asarray(h))
    assert got.dtype == ta.float16
    assert_close(got, np.exp(h.astype(np.float64)).astype(np.float16))
    with pytest.raises(TypeError, match="nextafter.*float16"):
        ta.nextafter(ta.asarray(h), ta.asarray(h))
    if ta.bfloat16._np is not None:
        b = ta.asarray(np.zeros(2, dtype=ta.bfloat16.numpy))
        with pytest.raises(TypeError, match="bfloat16"):
            ta.exp(b)


def test_zero_size_and_zero_dim():
    z = ta.zeros((0, 3))
    assert ta.exp(z).shape == (0, 3)
    assert ta.add(z, ta.zeros(3)).shape == (0, 3)
    s = ta.asarray(2.0)
    r = ta.multiply(s, s)
    assert r.shape == () and float(r) == 4.0


# ============================================================================= completeness

# The standard's element-wise section (2024.12), which the kernel tables must cover exactly;
# tests/array_api/test_namespace.py checks the namespace as a whole against array-api-strict.
STANDARD_ELEMENTWISE = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "clip", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
    "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
    "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
]  # fmt: skip


def test_tables_cover_the_standard_exactly():
    from tiarray._kernels import elementwise as kernels
    from tiarray._kernels.elementwise_ops import _CLIP_IMPLS, _IMPLS, _WHERE_IMPLS

    assert sorted(set(UNARY) | set(BINARY) | {"clip"}) == sorted(STANDARD_ELEMENTWISE)
    ops = {op for impls in [*_IMPLS.values(), *_CLIP_IMPLS.values(), _WHERE_IMPLS] for op in impls.values()}
    assert all(callable(getattr(kernels, op, None)) for op in ops), sorted(
        o for o in ops if not hasattr(kernels, o)
    )
    # every dtype kind of a function's category has an operation
    for name, (category, rule, impls) in {**UNARY, **BINARY}.items():
        kinds = {d.kind for d in ta._dtypes.CATEGORIES[category]}
        if rule == "float":  # integers are computed in the default real floating dtype
            kinds = {"f" if k in "iu" else k for k in kinds}
        assert kinds <= set("".join(impls)), (name, kinds)
    assert ta.e == math.e and ta.pi == math.pi and ta.newaxis is None
    assert math.isinf(ta.inf) and math.isnan(ta.nan)
