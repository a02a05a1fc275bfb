"""Helpers of the element-wise, data type and creation tests: layouts, values, comparisons."""

from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

import tiarray as ta

# Kernels compile on first use (a fraction of a second each): no deadline. The number of
# examples is the loaded profile's (conftest.py: HYPOTHESIS_PROFILE=ci, dev or thorough).
SETTINGS = settings(
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

NP = {
    "bool": np.bool_, "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
    "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
    "float16": np.float16, "float32": np.float32, "float64": np.float64,
    "complex64": np.complex64, "complex128": np.complex128,
}  # fmt: skip

SPECIAL = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 3.0, 0.1, 1e-8, 30.0, 700.0, -700.0, 1e300,
           -1e300, np.inf, -np.inf, np.nan]  # fmt: skip


def dtypes_of(category: str) -> list[str]:
    """The dtype names of a category (bfloat16 left out: Taichi cannot compute on it)."""
    return [d.name for d in ta._dtypes.CATEGORIES[category] if d is not ta.bfloat16]


# ----------------------------------------------------------------------------- values


def random_values(rng: np.random.Generator, shape, dtype: str, *, scale: float = 10.0, special: bool = False):
    """Values of ``dtype``; floating ones moderate (``|x| <= scale``), optionally mixed with
    special values (NaN, infinities, signed zeros)."""
    npd = np.dtype(NP[dtype])
    n = int(np.prod(shape))
    if npd.kind == "b":
        return rng.integers(0, 2, size=shape).astype(bool)
    if npd.kind in "iu":
        info = np.iinfo(npd)
        return rng.integers(info.min, info.max, size=shape, dtype=npd, endpoint=True)
    if npd.kind == "f":
        v = rng.uniform(-scale, scale, size=n)
        if special and n:
            k = rng.integers(0, n + 1)
            v[rng.choice(n, size=k, replace=True)] = rng.choice(SPECIAL, size=k)
        return v.astype(npd).reshape(shape)
    re = random_values(rng, shape, "float64", scale=scale, special=special)
    im = random_values(rng, shape, "float64", scale=scale, special=special)
    return (re + 1j * im).astype(npd)


# ----------------------------------------------------------------------------- layouts

LAYOUTS = ["contiguous", "step", "reversed", "offset", "transposed"]


def as_layout(a: np.ndarray, layout: str) -> ta.TiArray:
    """A TiArray with the values of ``a`` whose memory layout is ``layout``, made by slicing
    a TiArray that views a NumPy array (so the strides come from tiarray's indexing)."""
    if layout == "contiguous" or a.ndim == 0:
        return ta.asarray(np.array(a, order="C", copy=True))
    if layout == "step":  # every other element of the last axis
        base = np.zeros(a.shape[:-1] + (2 * a.shape[-1],), a.dtype)
        base[..., ::2] = a
        return ta.asarray(base)[..., ::2]
    if layout == "reversed":  # negative stride on the first axis
        return ta.asarray(np.ascontiguousarray(a[::-1]))[::-1]
    if layout == "offset":  # a view that starts inside its buffer
        base = np.zeros((a.shape[0] + 1,) + a.shape[1:], a.dtype)
        base[1:] = a
        return ta.asarray(base)[1:]
    if layout == "transposed":
        if a.ndim < 2:
            return as_layout(a, "reversed")
        return ta.asarray(np.ascontiguousarray(np.swapaxes(a, -1, -2))).mT
    raise ValueError(layout)


shapes = st.sampled_from([(), (0,), (1,), (5,), (3, 4), (2, 0), (2, 3, 2), (1, 7)])


# ----------------------------------------------------------------------------- comparison


def tolerances(dtype) -> tuple[float, float]:
    d = np.dtype(dtype)
    if d in (np.float16,):
        return 2e-3, 1e-4
    if d in (np.float32, np.complex64):
        return 3e-5, 1e-6
    return 1e-11, 1e-13


def assert_close(got, ref, *, rtol=None, atol=None, signed_zeros=False, equal_nan=True):
    """``got`` (TiArray) equals ``ref`` (NumPy): same dtype and shape; NaNs and infinities in
    the same places; finite values within ``rtol * |ref| + atol`` (the modulus for complex);
    optionally the signs of zeros."""
    g = np.asarray(got)
    r = np.asarray(ref)
    assert g.dtype == r.dtype, f"dtype {g.dtype} != {r.dtype}"
    assert g.shape == r.shape, f"shape {g.shape} != {r.shape}"
    if g.dtype.kind in "biu":
        np.testing.assert_array_equal(g, r)
        return
    rt, at = tolerances(g.dtype)
    rtol = rt if rtol is None else rtol
    atol = at if atol is None else atol
    if g.dtype.kind == "c":
        parts = [(g.real, r.real), (g.imag, r.imag)]
        scale = np.abs(r.astype(np.complex128))
    else:
        parts = [(g, r)]
        scale = np.abs(r.astype(np.float64))
    for gp, rp in parts:
        gp64, rp64 = gp.astype(np.float64), rp.astype(np.float64)
        bad_nan = np.isnan(gp64) != np.isnan(rp64)
        inf = np.isinf(rp64) | np.isinf(gp64)
        bad_inf = inf & ~(gp64 == rp64)
        fin = np.isfinite(rp64) & np.isfinite(gp64) & np.isfinite(scale)
        with np.errstate(invalid="ignore"):
            bad_val = fin & ~(np.abs(gp64 - rp64) <= rtol * scale + atol)
        bad = bad_nan | bad_inf | bad_val
        if signed_zeros:
            z = (gp64 == 0) & (rp64 == 0)
            bad |= z & (np.signbit(gp64) != np.signbit(rp64))
        if bad.any():
            idx = np.argwhere(bad)[:5]
            raise AssertionError(
                f"{int(bad.sum())} of {bad.size} elements differ; e.g. at {idx.tolist()}: "
                f"got {gp[tuple(idx.T)]!r}, expected {rp[tuple(idx.T)]!r}"
            )
