"""Data type functions: astype, can_cast, finfo, iinfo, result_type, isdtype, against NumPy
and array-api-strict."""

from __future__ import annotations

import numpy as np
import pytest
from _ew_helpers import LAYOUTS, NP, SETTINGS, as_layout, random_values
from hypothesis import given
from hypothesis import strategies as st

import tiarray as ta

STANDARD = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float32", "float64", "complex64", "complex128"]  # fmt: skip
WITH_F16 = STANDARD + ["float16"]


def _strict(name):
    import array_api_strict as xp

    return getattr(xp, name)


# ============================================================================= astype


def _castable_values(rng, shape, src, dst):
    """Values of ``src`` whose conversion to ``dst`` is defined (in range, not NaN, for
    float -> int casts, which the standard leaves undefined otherwise)."""
    a = random_values(rng, shape, src, scale=100.0)
    sk, dk = np.dtype(NP[src]).kind, np.dtype(NP[dst]).kind
    if sk in "fc" and dk in "iu":
        info = np.iinfo(NP[dst])
        a = np.clip(np.nan_to_num(a.real), max(info.min, -100), min(info.max, 100)).astype(NP[src])
    if sk in "iu" and dk == "f" and NP[dst] == np.float16:
        a = (a.astype(np.int64) % 1000).astype(NP[src])
    return a


@SETTINGS
@given(data=st.data())
def test_astype_matches_numpy(data):
    src = data.draw(st.sampled_from(WITH_F16), label="src")
    dst = data.draw(st.sampled_from(WITH_F16), label="dst")
    shape = data.draw(st.sampled_from([(), (0,), (7,), (3, 4), (2, 3, 2)]), label="shape")
    layout = data.draw(st.sampled_from(LAYOUTS), label="layout")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    a = _castable_values(rng, shape, src, dst)
    x = as_layout(a, layout)
    if np.dtype(NP[src]).kind == "c" and np.dtype(NP[dst]).kind != "c":
        with pytest.raises(TypeError, match="astype.*complex"):
            ta.astype(x, getattr(ta, dst))
        return
    got = ta.astype(x, getattr(ta, dst))
    assert got.dtype == getattr(ta, dst) and got.shape == a.shape and got.is_contiguous
    with np.errstate(all="ignore"):
        ref = a.astype(NP[dst])
    np.testing.assert_array_equal(np.asarray(got), ref)
    assert got.ptr != x.ptr or a.size == 0


def test_astype_copy_and_device():
    x = ta.asarray(np.arange(3.0))
    assert ta.astype(x, ta.float64, copy=False) is x
    y = ta.astype(x, ta.float64)
    assert y is not x and y.ptr != x.ptr
    np.testing.assert_array_equal(np.asarray(y), np.arange(3.0))
    assert ta.astype(x, ta.float64, device="cpu", copy=False) is x
    assert ta.astype(x, "float32").dtype == ta.float32  # dtype-likes are accepted
    with pytest.raises(TypeError, match="astype.*'x'"):
        ta.astype(np.arange(3), ta.int8)
    with pytest.raises(ValueError, match="copy"):
        ta.astype(x, ta.int8, copy=None)
    with pytest.raises(TypeError, match="complex"):
        ta.astype(ta.asarray([1j]), ta.bool)


def test_astype_special_values():
    a = np.array([np.nan, np.inf, -np.inf, -0.0, 0.5, 65504.0, 1e6])
    np.testing.assert_array_equal(np.asarray(ta.astype(ta.asarray(a), ta.float32)), a.astype(np.float32))
    np.testing.assert_array_equal(np.asarray(ta.astype(ta.asarray(a), ta.float16)), a.astype(np.float16))
    np.testing.assert_array_equal(np.asarray(ta.astype(ta.asarray(a), ta.bool)), a.astype(bool))
    got = np.asarray(ta.astype(ta.asarray(a), ta.complex64))
    np.testing.assert_array_equal(got, a.astype(np.complex64))
    assert np.signbit(got.real[3]) and not np.signbit(got.imag[3])


# ============================================================================= can_cast, result_type


@pytest.mark.parametrize("src", STANDARD)
@pytest.mark.parametrize("dst", STANDARD)
def test_can_cast_matches_array_api_strict(src, dst):
    import array_api_strict as xp

    assert ta.can_cast(getattr(ta, src), getattr(ta, dst)) == xp.can_cast(_strict(src), _strict(dst))
    x = ta.zeros(1, dtype=getattr(ta, src))
    assert ta.can_cast(x, getattr(ta, dst)) == xp.can_cast(_strict(src), _strict(dst))


@pytest.mark.parametrize("d1", STANDARD)
@pytest.mark.parametrize("d2", STANDARD)
def test_result_type_matches_array_api_strict_within_kinds(d1, d2):
    import array_api_strict as xp

    try:
        want = xp.result_type(_strict(d1), _strict(d2))
    except TypeError:
        want = None
    try:
        got = ta.result_type(getattr(ta, d1), ta.zeros(1, dtype=getattr(ta, d2)))
    except TypeError:
        assert want is None
        assert {d1, d2} & {"uint64"}
        return
    if want is not None:
        assert _strict(got.name) == want
    else:
        # across kinds tiarray picks the dtype of the higher kind (JAX/PyTorch convention)
        order = "biufc"
        k1, k2 = np.dtype(NP[d1]).kind, np.dtype(NP[d2]).kind
        hi = d1 if order.index(k1) >= order.index(k2) else d2
        assert got.kind == np.dtype(NP[hi]).kind


@pytest.mark.parametrize("name", STANDARD)
@pytest.mark.parametrize("scalar", [True, 3, -2, 2.5, 1j])
def test_result_type_with_python_scalars_matches_array_api_strict(name, scalar):
    import array_api_strict as xp

    try:
        want = xp.result_type(_strict(name), scalar)
    except (TypeError, OverflowError):
        want = None
    try:
        got = ta.result_type(getattr(ta, name), scalar)
    except (TypeError, OverflowError):
        assert want is None
        return
    if want is not None:
        assert _strict(got.name) == want, (name, scalar, got)
    else:  # combinations the standard leaves open: the JAX/PyTorch choice
        assert got == ta.result_type(getattr(ta, name), ta._dtypes.scalar_dtype(scalar, getattr(ta, name)))


def test_result_type_errors():
    with pytest.raises(ValueError, match="at least one"):
        ta.result_type()
    with pytest.raises(ValueError, match="at least one"):
        ta.result_type(1, 2.0)
    with pytest.raises(TypeError, match="result_type"):
        ta.result_type(ta.uint64, ta.int8)
    with pytest.raises(TypeError, match="result_type"):
        ta.result_type(ta.float32, "not a dtype")
    assert ta.result_type(ta.float32, np.float64) == ta.float64


# ============================================================================= finfo, iinfo, isdtype


@pytest.mark.parametrize("name", ["float16", "float32", "float64", "complex64", "complex128"])
def test_finfo_matches_numpy(name):
    fi = ta.finfo(getattr(ta, name))
    ref = np.finfo(NP[name])
    assert fi.bits == ref.bits
    assert fi.eps == float(ref.eps) and fi.max == float(ref.max) and fi.min == float(ref.min)
    assert fi.smallest_normal == float(ref.smallest_normal)
    assert fi.dtype == getattr(ta, str(ref.dtype))
    assert all(isinstance(v, float) for v in (fi.eps, fi.max, fi.min, fi.smallest_normal))
    assert ta.finfo(ta.zeros(1, dtype=getattr(ta, name))).bits == ref.bits


@pytest.mark.parametrize("name", ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"])
def test_iinfo_matches_numpy(name):
    ii = ta.iinfo(getattr(ta, name))
    ref = np.iinfo(NP[name])
    assert (ii.bits, ii.min, ii.max) == (ref.bits, int(ref.min), int(ref.max))
    assert ii.dtype == getattr(ta, name)
    assert ta.iinfo(ta.zeros(1, dtype=getattr(ta, name))).max == int(ref.max)


def test_finfo_iinfo_errors():
    with pytest.raises(TypeError, match="finfo.*floating-point.*int32"):
        ta.finfo(ta.int32)
    with pytest.raises(TypeError, match="iinfo.*integer.*float32"):
        ta.iinfo(ta.float32)
    with pytest.raises(TypeError, match="iinfo.*bool"):
        ta.iinfo(ta.bool)


@pytest.mark.parametrize("name", STANDARD)
@pytest.mark.parametrize(
    "kind",
    ["bool", "signed integer", "unsigned integer", "integral", "real floating", "complex floating", "numeric",
     ("integral", "real floating")],
)  # fmt: skip
def test_isdtype_matches_array_api_strict(name, kind):
    import array_api_strict as xp

    assert ta.isdtype(getattr(ta, name), kind) == xp.isdtype(_strict(name), kind)
