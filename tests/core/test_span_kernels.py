"""The span kernels of contiguous element-wise functions (real functions over spans of the
arrays) and the vectorisable float32 ``exp`` they use."""

from __future__ import annotations

import numpy as np
import pytest
from _ew_helpers import random_values

import tiarray as ta
from tiarray._kernels import _math
from tiarray._kernels import elementwise as E

# sizes: one serial span, just above the serial span limit, and many parallel spans with a
# remainder that is not a multiple of the span length or of a vector
SIZES = [1000, (1 << 14) + 1, 100_003, 1 << 20]


def _ref(name, *arrays):
    with np.errstate(all="ignore"):
        return getattr(np, name)(*arrays)


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize(
    "name,dtypes",
    [("add", ("float32", "float32")), ("subtract", ("int8", "int16")), ("less", ("uint32", "uint32")),
     ("multiply", ("float64", "float32")), ("logical_xor", ("bool", "bool")), ("sqrt", ("float32",)),
     ("negative", ("int64",)), ("bitwise_xor", ("uint16", "uint16"))],
)  # fmt: skip
def test_span_kernels_match_numpy(name, dtypes, n, launch_mode):
    rng = np.random.default_rng(11)
    arrays = [random_values(rng, (n,), d) for d in dtypes]
    if name == "sqrt":
        arrays[0] = np.abs(arrays[0])
    rdt = ta.result_type(*[getattr(ta, d) for d in dtypes])
    args = [a.astype(np.dtype(rdt.name)) for a in arrays]
    got = getattr(ta, name)(*[ta.asarray(a) for a in arrays])
    np.testing.assert_array_equal(np.asarray(got), _ref(name, *args))
    if len(arrays) == 2:  # broadcast operands, on either side
        one = arrays[1][:1]
        got = getattr(ta, name)(ta.asarray(arrays[0]), ta.asarray(one))
        np.testing.assert_array_equal(np.asarray(got), _ref(name, args[0], one.astype(args[0].dtype)))
        got = getattr(ta, name)(ta.asarray(arrays[0][:1]), ta.asarray(arrays[1]))
        np.testing.assert_array_equal(np.asarray(got), _ref(name, args[0][:1], args[1]))


@pytest.mark.parametrize("n", SIZES)
def test_span_where_and_python_scalars(n, launch_mode):
    rng = np.random.default_rng(12)
    a = rng.standard_normal(n).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    x, y = ta.asarray(a), ta.asarray(b)
    np.testing.assert_array_equal(np.asarray(ta.where(x > y, x, y)), np.where(a > b, a, b))
    np.testing.assert_array_equal(np.asarray(ta.where(x > 0, x, 0.0)), np.where(a > 0, a, np.float32(0)))
    np.testing.assert_array_equal(np.asarray(x * 2.5 + 1.0), a * np.float32(2.5) + np.float32(1.0))


@pytest.mark.parametrize("n", SIZES)
def test_span_exp_float32(n, launch_mode):
    rng = np.random.default_rng(13)
    a = rng.uniform(-87.0, 88.7, n).astype(np.float32)
    special = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72, 88.73, 89.5, -104.0, -1e30, 1e30, 1e-8], np.float32
    )
    a[: special.size] = special
    got = np.asarray(ta.exp(ta.asarray(a)))
    with np.errstate(over="ignore"):
        ref = np.exp(a.astype(np.float64))
        ref32 = ref.astype(np.float32)
    fin = np.isfinite(ref32) & (ref32 != 0)
    # about 1 ulp: relative error against the float64 result at most 2 ulp of float32
    assert np.max(np.abs(got[fin] - ref[fin]) / ref[fin]) < 2.4e-7
    np.testing.assert_array_equal(got[~fin], ref32[~fin])  # NaN, inf and 0 exactly
    assert got.dtype == np.float32


def _ulps(got, ref64):
    """Errors of float32 results in units of the last place of the correctly rounded result."""
    ref32 = ref64.astype(np.float32)
    return np.abs(got.astype(np.float64) - ref64) / np.spacing(np.abs(ref32)).astype(np.float64)


@pytest.mark.parametrize("n", SIZES)
def test_span_tanh_float32(n, launch_mode):
    rng = np.random.default_rng(14)
    a = np.concatenate([rng.uniform(-12, 12, n), rng.uniform(-0.7, 0.7, n), rng.uniform(-1e-4, 1e-4, n)])
    a = a.astype(np.float32)
    special = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, 0.625, -0.625, 44.0, -45.0, 1e30, 1e-45, -1e-45, 1e-38],
        np.float32,
    )
    a[: special.size] = special
    got = np.asarray(ta.tanh(ta.asarray(a)))
    ref = np.tanh(a.astype(np.float64))
    fin = ~np.isnan(a)
    assert _ulps(got[fin], ref[fin]).max() <= 2.0  # Cephes tanhf: about 2 ulp
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:5], [1.0, -1.0, 0.0, -0.0])
    np.testing.assert_array_equal(np.signbit(got[1:5]), [False, True, False, True])
    assert got.dtype == np.float32


@pytest.mark.parametrize("n", SIZES)
def test_span_log_float32(n, launch_mode):
    rng = np.random.default_rng(15)
    a = np.concatenate([rng.uniform(0, 10, n), 10.0 ** rng.uniform(-45, 38.5, n), rng.uniform(0.5, 2.0, n)])
    a = a.astype(np.float32)
    special = np.array(
        [
            np.nan,
            np.inf,
            -np.inf,
            0.0,
            -0.0,
            -1.0,
            -1e-45,
            1e-45,
            1.0,
            3.4028235e38,
            1.1754942e-38,
            0.70710677,
        ],
        np.float32,
    )
    a[: special.size] = special
    got = np.asarray(ta.log(ta.asarray(a)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log(a.astype(np.float64))
        ref32 = np.log(a)
    fin = np.isfinite(ref) & (a != 1)
    assert _ulps(got[fin], ref[fin]).max() <= 1.5  # Cephes logf: about 1 ulp (subnormals too)
    special_got = got[: special.size]
    np.testing.assert_array_equal(
        special_got[~np.isfinite(ref32[: special.size])],
        ref32[: special.size][~np.isfinite(ref32[: special.size])],
    )
    assert got[special.size - 4] == 0.0  # log(1) is exactly 0
    assert got.dtype == np.float32


@pytest.mark.parametrize("n", [(1 << 14) + 1, 100_003, 1 << 20])
@pytest.mark.parametrize("name", ["sin", "cos"])
def test_span_sin_cos_float32(name, n, launch_mode):
    from tiarray._kernels import elementwise_plan as EF

    rng = np.random.default_rng(17)
    a = np.concatenate(
        [
            rng.uniform(-10, 10, n),
            rng.uniform(-1e4, 1e4, n),
            rng.uniform(-1.3e7, 1.3e7, n),
            rng.uniform(-1e-3, 1e-3, n),
        ]
    ).astype(np.float32)
    a[:6] = [0.0, -0.0, np.pi / 2, -np.pi, 1.3e7, -1e-45]
    key = (name, ta.float32)
    EF._PLANS.pop(key, None)
    got = np.asarray(getattr(ta, name)(ta.asarray(a)))
    assert ("v", (1,), False) in EF._PLANS[key].specs or ("v", (1,), True) in EF._PLANS[
        key
    ].specs  # span path
    ref = getattr(np, name)(a.astype(np.float64))
    assert _ulps(got, ref).max() <= 2.0  # Cephes sinf/cosf with a float64 reduction: about 1.5 ulp
    if name == "sin":
        np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])


def test_sin_cos_float32_outside_the_polynomial_range_use_libm():
    """Infinite, NaN or huge arguments anywhere in the array: the plain (libm) kernels."""
    rng = np.random.default_rng(18)
    a = rng.uniform(-100, 100, 50_000).astype(np.float32)
    for bad in (np.inf, np.nan, 3e7, -1e30):
        b = a.copy()
        b[123] = bad
        for name in ("sin", "cos"):
            with np.errstate(invalid="ignore"):
                got = np.asarray(getattr(ta, name)(ta.asarray(b)))
                ref = getattr(np, name)(b.astype(np.float64))
            fin = np.isfinite(ref)
            assert _ulps(got[fin], ref[fin]).max() <= 2.0
            np.testing.assert_array_equal(np.isnan(got), np.isnan(ref))


def _ulps64(got, x, fn):
    """float64 errors in ulps against ``fn`` evaluated in long double where that is wider
    (x86: 64-bit mantissa), else against NumPy's float64 result (then ~1 ulp looser)."""
    ref = fn(x.astype(np.longdouble))
    r64 = ref.astype(np.float64)
    return (np.abs(got.astype(np.longdouble) - ref) / np.spacing(np.abs(r64)).astype(np.longdouble)).astype(
        np.float64
    )


_SLACK64 = 0.0 if np.finfo(np.longdouble).nmant > 52 else 1.0


@pytest.mark.parametrize("n", SIZES)
def test_span_exp_tanh_float64(n, launch_mode):
    rng = np.random.default_rng(16)
    x = np.concatenate([rng.uniform(-740, 709.7, n), rng.uniform(-1, 1, n), rng.uniform(-1e-8, 1e-8, n)])
    special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 709.79, 710.0, -745.2, -746.0, 1e-320, 0.625])
    x[: special.size] = special
    with np.errstate(over="ignore", under="ignore"):
        got = np.asarray(ta.exp(ta.asarray(x)))
        ref = np.exp(x)
    normal = np.isfinite(ref) & (np.abs(ref) > np.finfo(np.float64).tiny)
    assert _ulps64(got[normal], x[normal], np.exp).max() <= 2.0 + _SLACK64  # Cephes exp: about 1 ulp
    np.testing.assert_array_equal(
        got[: special.size][~normal[: special.size]], ref[: special.size][~normal[: special.size]]
    )
    t = np.concatenate([rng.uniform(-25, 25, n), rng.uniform(-0.7, 0.7, n), rng.uniform(-1e-6, 1e-6, n)])
    t[: special.size] = special
    got = np.asarray(ta.tanh(ta.asarray(t)))
    ok = ~np.isnan(t) & (t != 0)
    assert _ulps64(got[ok], t[ok], np.tanh).max() <= 2.0 + _SLACK64
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:5], [1.0, -1.0, 0.0, -0.0])
    np.testing.assert_array_equal(np.signbit(got[3:5]), [False, True])


@pytest.mark.parametrize("n", SIZES)
def test_span_log_float64(n, launch_mode):
    rng = np.random.default_rng(19)
    x = np.concatenate(
        [rng.uniform(0, 10, n), 10.0 ** rng.uniform(-323, 308, n), 1 + rng.uniform(-1e-6, 1e-6, n)]
    )
    special = np.array(
        [np.nan, np.inf, -np.inf, 0.0, -0.0, -1.0, 5e-324, 1.0, 1.7976931348623157e308, 0.7071067811865476]
    )
    x[: special.size] = special
    got = np.asarray(ta.log(ta.asarray(x)))
    with np.errstate(divide="ignore", invalid="ignore"):
        ref = np.log(x)
    ok = np.isfinite(ref) & (ref != 0)
    assert _ulps64(got[ok], x[ok], np.log).max() <= 1.0 + _SLACK64  # fdlibm's log: under 1 ulp
    np.testing.assert_array_equal(
        got[: special.size][~ok[: special.size]], ref[: special.size][~ok[: special.size]]
    )


@pytest.mark.parametrize("n", [1000, 100_003])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_span_log1p_expm1(dtype, n, launch_mode):
    """Kahan's forms on the vectorised exp/log: a few ulp; special values as NumPy's."""
    rng = np.random.default_rng(20)
    tiny = -40 if dtype == np.float32 else -300
    x1 = np.concatenate(
        [rng.uniform(-0.999, 10, n), 10.0 ** rng.uniform(tiny, 30, n), -(10.0 ** rng.uniform(tiny, -0.01, n))]
    ).astype(dtype)
    xe = np.concatenate(
        [
            rng.uniform(-80, 80, n),
            rng.uniform(-1, 1, n),
            10.0 ** rng.uniform(tiny, 0, n) * rng.choice([-1, 1], n),
        ]
    ).astype(dtype)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -2.0, 100.0, -1000.0], dtype)
    x1[: special.size] = special
    xe[: special.size] = special
    g1 = np.asarray(ta.log1p(ta.asarray(x1)))
    ge = np.asarray(ta.expm1(ta.asarray(xe)))
    with np.errstate(all="ignore"):
        r1, re = np.log1p(x1), np.expm1(xe)
    for got, x, ref, fn in ((g1, x1, r1, np.log1p), (ge, xe, re, np.expm1)):
        ok = np.isfinite(ref) & (ref != 0)
        if dtype == np.float32:
            err = _ulps(got[ok], fn(x[ok].astype(np.float64)))
        else:
            err = _ulps64(got[ok], x[ok], fn) - _SLACK64
        assert err.max() <= 3.0, fn.__name__
        np.testing.assert_array_equal(got[: special.size], ref[: special.size])
        np.testing.assert_array_equal(np.signbit(got[:2]), [False, True])


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_span_maximum_minimum(dtype, n, launch_mode):
    """Branch-free maximum/minimum (span kernels): NaN from either side propagates, equal
    values (signed zeros) give NumPy's choice of operand."""
    rng = np.random.default_rng(21)
    a = rng.standard_normal(n).astype(dtype)
    b = rng.standard_normal(n).astype(dtype)
    k = min(n, 8)
    a[:k] = [np.nan, 0.0, -0.0, 1.0, np.inf, -np.inf, np.nan, 0.0][:k]
    b[:k] = [1.0, -0.0, 0.0, np.nan, 1.0, np.nan, np.nan, 0.0][:k]
    for f, g in ((ta.maximum, np.maximum), (ta.minimum, np.minimum)):
        got = np.asarray(f(ta.asarray(a), ta.asarray(b)))
        want = g(a, b)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    np.testing.assert_array_equal(np.asarray(ta.maximum(ta.asarray(a), 0.0)), np.maximum(a, dtype(0)))


def test_exp_float32_subnormal_results_in_the_calling_thread():
    # serial (small) launches run in the calling thread, whose FP environment keeps
    # subnormals; results between 2**-149 and 2**-126 come out as NumPy's
    a = np.array([-87.5, -90.0, -100.0, -103.0, -103.9], np.float32)
    got = np.asarray(ta.exp(ta.asarray(a)))
    ref = np.exp(a)
    assert np.all(got > 0)
    np.testing.assert_allclose(got, ref, rtol=1e-2)  # a subnormal has few significant bits


def test_exp_float16_uses_the_float32_polynomial():
    a = np.linspace(-10, 10, 50_001).astype(np.float16)
    got = np.asarray(ta.exp(ta.asarray(a)))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(got, np.exp(a.astype(np.float64)).astype(np.float16))


def test_span_op_admits_only_branch_free_operations():
    from tiarray._internal import ti

    assert E.span_op(E.exp_f, ti.f32) is E.exp_f32_simd
    assert E.span_op(E.tanh_f, ti.f32) is E.tanh_f32_simd
    assert E.span_op(E.log_f, ti.f32) is E.log_f32_simd
    assert E.span_op(E.log_f, ti.f64) is E.log_f64_simd
    assert E.span_op(E.exp_f, ti.f64) is E.exp_f64_simd
    assert E.span_op(E.tanh_f, ti.f64) is E.tanh_f64_simd
    assert E.span_op(E.sin_f, ti.f64) is E.sin_f  # libm's sin: a call, no branch
    assert E.span_op(E.sin_f, ti.f32) is E.sin_f32_simd
    assert E.range_limit(E.sin_f, ti.f32) > 1e7 and E.range_limit(E.exp_f, ti.f32) is None
    assert E.span_op(E.where_r, ti.f32) is E.where_select
    assert E.span_op(E.add_r, ti.f32) is E.add_r
    # run-time branches, here or in a function called: Taichi 1.7 cannot inline them into
    # a real function
    assert E.span_op(E.floor_divide_i, ti.i32) is None
    assert E.span_op(E.sinh_f, ti.f32) is None  # calls expm1, which branches
    assert E.span_op(E.expm1_f, ti.f32) is E.expm1_simd  # ... but has a branch-free variant
    assert E._branch_free(_math.expm1_poly, set()) and not E._branch_free(_math.expm1, set())
    assert E._branch_free(_math.exp_f32_poly, set())
