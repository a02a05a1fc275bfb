"""The ``fft`` extension against NumPy's pocketfft: every transform, every ``norm``,
``n``/``s``/``axes`` handling, precision kept, strided inputs, and errors."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from manip_strategies import COMPLEX_DTYPES, REAL_DTYPES, arrays, assert_same

import tiarray as ta
from tiarray import _runtime
from tiarray._array_object import TiArray

ONE_AXIS = {  # name: (input kind, numpy function)
    "fft": ("complex", np.fft.fft),
    "ifft": ("complex", np.fft.ifft),
    "rfft": ("real", np.fft.rfft),
    "irfft": ("complex", np.fft.irfft),
    "hfft": ("complex", np.fft.hfft),
    "ihfft": ("real", np.fft.ihfft),
}
MANY_AXES = {
    "fftn": ("complex", np.fft.fftn),
    "ifftn": ("complex", np.fft.ifftn),
    "rfftn": ("real", np.fft.rfftn),
    "irfftn": ("complex", np.fft.irfftn),
}


def _expected_dtype(kind_out, dtype):
    single = np.dtype(dtype) in (np.float32, np.complex64)
    if kind_out == "complex":
        return np.complex64 if single else np.complex128
    return np.float32 if single else np.float64


def _tol(dtype):
    return 1e-4 if np.dtype(dtype) in (np.float32, np.complex64) else 1e-10


@given(st.data())
def test_one_axis_transforms(data):
    name = data.draw(st.sampled_from(sorted(ONE_AXIS)))
    kind, npf = ONE_AXIS[name]
    dtypes = COMPLEX_DTYPES if kind == "complex" else REAL_DTYPES
    a, t = data.draw(arrays(dtypes=dtypes, min_dims=1, max_dims=3, min_side=1, max_side=6))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = data.draw(st.one_of(st.none(), st.integers(1, 9)))
    if n is None and name in ("irfft", "hfft") and a.shape[axis] == 1:
        n = 2  # the default 2 * (m - 1) would be 0
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    r = getattr(ta.fft, name)(t, n=n, axis=axis, norm=norm)
    e = npf(a, n=n, axis=axis, norm=norm)
    out_kind = "real" if name in ("irfft", "hfft") else "complex"
    assert np.dtype(r.dtype) == np.dtype(_expected_dtype(out_kind, a.dtype))
    assert_same(r, e.astype(_expected_dtype(out_kind, a.dtype)), rtol=_tol(a.dtype))


@given(st.data())
def test_many_axes_transforms(data):
    name = data.draw(st.sampled_from(sorted(MANY_AXES)))
    kind, npf = MANY_AXES[name]
    dtypes = COMPLEX_DTYPES if kind == "complex" else REAL_DTYPES
    a, t = data.draw(arrays(dtypes=dtypes, min_dims=1, max_dims=3, min_side=2, max_side=5))
    norm = data.draw(st.sampled_from(["backward", "ortho", "forward"]))
    if data.draw(st.booleans()):
        axes = tuple(data.draw(st.lists(st.integers(0, a.ndim - 1), unique=True, min_size=1)))
        s = tuple(data.draw(st.integers(1, 6)) for _ in axes) if data.draw(st.booleans()) else None
    else:
        axes, s = None, None
    r = getattr(ta.fft, name)(t, s=s, axes=axes, norm=norm)
    e = npf(a, s=s, axes=axes, norm=norm)
    out_kind = "real" if name == "irfftn" else "complex"
    assert_same(r, e.astype(_expected_dtype(out_kind, a.dtype)), rtol=_tol(a.dtype))


def test_s_minus_one_keeps_the_axis_size():
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((4, 6)) + 1j * rng.standard_normal((4, 6))).astype(np.complex128)
    t = ta.asarray(a)
    assert_same(ta.fft.fftn(t, s=(-1, 3), axes=(0, 1)), np.fft.fftn(a, s=(4, 3), axes=(0, 1)), rtol=1e-10)
    assert_same(
        ta.fft.irfftn(t, s=(2, -1), axes=(0, 1)), np.fft.irfftn(a, s=(2, 10), axes=(0, 1)), rtol=1e-10
    )


def test_round_trips():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 8)).astype(np.float32)
    t = ta.asarray(x)
    back = ta.fft.irfft(ta.fft.rfft(t), n=8)
    assert back.dtype == ta.float32
    np.testing.assert_allclose(np.asarray(back), x, rtol=1e-5, atol=1e-5)
    c = ta.asarray(x.astype(np.complex64))
    np.testing.assert_allclose(np.asarray(ta.fft.ifftn(ta.fft.fftn(c))), x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(ta.fft.hfft(ta.fft.ihfft(t), n=8)), x, rtol=1e-5, atol=1e-5)


def test_strided_input_is_read_in_place():
    rng = np.random.default_rng(2)
    a = (rng.standard_normal((6, 10)) + 1j * rng.standard_normal((6, 10)))[::2, ::-3]
    assert_same(ta.fft.fft(ta.asarray(a), axis=0), np.fft.fft(a, axis=0), rtol=1e-10)


@given(st.data())
def test_fftfreq_and_rfftfreq(data):
    n = data.draw(st.integers(1, 40))
    d = data.draw(st.sampled_from([1.0, 0.5, 2.5, -1.0, 3]))
    dtype = data.draw(st.sampled_from([None, ta.float32, ta.float64]))
    r = ta.fft.fftfreq(n, d=d, dtype=dtype)
    e = np.fft.fftfreq(n, d=d)
    want = np.float64 if dtype is None else np.dtype(dtype)
    assert_same(r, e.astype(want), rtol=1e-6)
    r = ta.fft.rfftfreq(n, d=d, dtype=dtype, device="cpu")
    assert_same(r, np.fft.rfftfreq(n, d=d).astype(want), rtol=1e-6)
    assert r.device == ta.Device("cpu")


@given(st.data())
def test_fftshift_and_ifftshift(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=3))
    if a.ndim and data.draw(st.booleans()):
        axes = tuple(
            data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), unique_by=lambda v: v % a.ndim, min_size=1))
        )
        if len(axes) == 1 and data.draw(st.booleans()):
            axes = axes[0]
    else:
        axes = None
    assert_same(ta.fft.fftshift(t, axes=axes), np.fft.fftshift(a, axes=axes))
    assert_same(ta.fft.ifftshift(t, axes=axes), np.fft.ifftshift(a, axes=axes))


def test_fftshift_of_a_0d_array_is_a_copy():
    # NumPy's fftshift fails on 0-d input; shifting no axis leaves the value as it is
    t = ta.asarray(np.float32(2.5))
    r = ta.fft.fftshift(t)
    assert r.shape == () and r.item() == 2.5 and r.ptr != t.ptr


def test_half_precision_inputs_are_transformed_in_single():
    x = np.arange(8, dtype=np.float16)
    r = ta.fft.rfft(ta.asarray(x))
    assert r.dtype == ta.complex64
    assert_same(r, np.fft.rfft(x.astype(np.float32)), rtol=1e-5)


def test_errors():
    c = ta.asarray(np.zeros(4, dtype=np.complex64))
    r = ta.asarray(np.zeros(4, dtype=np.float32))
    with pytest.raises(TypeError, match="complex floating-point"):
        ta.fft.fft(r)
    with pytest.raises(TypeError, match="complex floating-point"):
        ta.fft.irfft(r)
    with pytest.raises(TypeError, match="real floating-point"):
        ta.fft.rfft(c)
    with pytest.raises(TypeError, match="real floating-point"):
        ta.fft.ihfft(ta.asarray(np.zeros(4, dtype=np.int32)))
    with pytest.raises(ValueError, match="norm"):
        ta.fft.fft(c, norm="none")
    with pytest.raises(ValueError, match="at least 1"):
        ta.fft.fft(c, n=0)
    with pytest.raises(IndexError, match="axis"):
        ta.fft.fft(c, axis=1)
    with pytest.raises(ValueError, match="same length"):
        ta.fft.fftn(c, s=(2, 2), axes=(0,))
    with pytest.raises(ValueError, match="repeated"):
        ta.fft.fftn(ta.asarray(np.zeros((2, 2), np.complex64)), axes=(0, 0))
    with pytest.raises(ValueError, match="'d'"):
        ta.fft.fftfreq(4, d=0.0)
    with pytest.raises(TypeError, match="real floating-point"):
        ta.fft.fftfreq(4, dtype=ta.int32)
    with pytest.raises(ValueError, match="at least 1"):
        ta.fft.rfftfreq(0)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn", "irfft", "irfftn", "hfft"])
def test_transforms_refuse_cuda_arrays(name):
    host = ta.zeros((4,), dtype=ta.complex64)
    x = TiArray._new(host.ptr, host.shape, host.strides, host.dtype, _runtime.Device("cuda", 0), host, False)
    with pytest.raises(NotImplementedError, match=r"to_device\('cpu'\)"):
        getattr(ta.fft, name)(x)
