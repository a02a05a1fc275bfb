"""Reductions over the leading axis of row-major data (``sum(x, axis=0)`` of a C-contiguous
matrix and the like), which run in ``tiarray._kernels.colreduce`` on the CPU: rows added
into a row of accumulators by a vectorised real function, tiles of columns, row chunks in
parallel. Results against NumPy in float64; NaN, signed zeros and infinities as the
general kernels give them."""

from __future__ import annotations

import numpy as np
import pytest

import tiarray as ta
from tiarray._kernels import reduce as R

SHAPES = [(37, 20), (1000, 1000), (3001, 2500), (64, 70_001)]  # serial, parallel, several tiles


def _plan_kind(x, axes):
    """Which kernel reduce_into planned for ``x`` (``'rows'`` for colreduce)."""
    R._PLANS.clear()
    ta.sum(x, axis=axes)
    return {p.cols for p in R._PLANS.values()}


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sum_mean_prod_max_min_over_axis0(shape, dtype):
    rng = np.random.default_rng(sum(shape))
    a = rng.standard_normal(shape).astype(dtype)
    x = ta.asarray(a)
    ref = a.astype(np.float64)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(np.asarray(ta.sum(x, axis=0)), ref.sum(axis=0), rtol=rtol, atol=rtol * 10)
    np.testing.assert_allclose(np.asarray(ta.mean(x, axis=0)), ref.mean(axis=0), rtol=rtol, atol=rtol)
    np.testing.assert_array_equal(np.asarray(ta.max(x, axis=0)), a.max(axis=0))
    np.testing.assert_array_equal(np.asarray(ta.min(x, axis=0)), a.min(axis=0))
    small = (1.0 + a[:20] / 100).astype(dtype)  # products of 20 rows near 1
    np.testing.assert_allclose(
        np.asarray(ta.prod(ta.asarray(small), axis=0)), small.astype(np.float64).prod(axis=0), rtol=rtol * 10
    )
    assert ta.sum(x, axis=0).dtype == x.dtype
    assert _plan_kind(x, 0) == {"rows"}


@pytest.mark.parametrize("shape", [(37, 20), (3001, 2500)])
def test_special_values(shape):
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shape).astype(np.float32)
    a[5, 3] = np.nan  # a NaN in one column: that column's max/min/sum is NaN
    a[:, 4] = -0.0
    a[0, 4] = 0.0  # max(-0, +0) is +0, min -0
    a[7, 6] = np.inf
    a[8, 7] = -np.inf
    x = ta.asarray(a)
    got_max = np.asarray(ta.max(x, axis=0))
    got_min = np.asarray(ta.min(x, axis=0))
    got_sum = np.asarray(ta.sum(x, axis=0))
    assert np.isnan(got_max[3]) and np.isnan(got_min[3]) and np.isnan(got_sum[3])
    assert got_max[4] == 0 and not np.signbit(got_max[4])
    assert got_min[4] == 0 and np.signbit(got_min[4])
    assert got_max[6] == np.inf and got_sum[6] == np.inf
    assert got_min[7] == -np.inf and got_sum[7] == -np.inf
    keep = [c for c in range(shape[1]) if c not in (3, 4, 6, 7)]
    np.testing.assert_array_equal(got_max[keep], a.max(axis=0)[keep])
    np.testing.assert_allclose(got_sum[keep], a.astype(np.float64).sum(axis=0)[keep], rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize(
    "view",
    [lambda a: a[:, 100:1700], lambda a: a[::-1], lambda a: a[::3], lambda a: a[10:-10, ::1]],
    ids=["column-slice", "reversed-rows", "every-third-row", "offset"],
)
def test_views(view):
    rng = np.random.default_rng(4)
    base = rng.standard_normal((2001, 1800)).astype(np.float32)
    a = view(base)
    x = view(ta.asarray(base))
    np.testing.assert_allclose(
        np.asarray(ta.sum(x, axis=0)), a.astype(np.float64).sum(axis=0), rtol=1e-5, atol=1e-4
    )
    np.testing.assert_array_equal(np.asarray(ta.max(x, axis=0)), a.max(axis=0))
    assert _plan_kind(x, 0) == {"rows"}


def test_leading_axes_of_3d_and_keepdims():
    rng = np.random.default_rng(5)
    a = rng.standard_normal((300, 40, 50))
    x = ta.asarray(a)
    # another summation order than NumPy's: absolute error against the sum of magnitudes
    np.testing.assert_allclose(np.asarray(ta.sum(x, axis=0)), a.sum(axis=0), rtol=1e-12, atol=1e-12 * 300)
    np.testing.assert_allclose(
        np.asarray(ta.sum(x, axis=(0, 1))), a.sum(axis=(0, 1)), rtol=1e-12, atol=1e-11 * 300
    )
    np.testing.assert_allclose(
        np.asarray(ta.max(x, axis=0, keepdims=True)), a.max(axis=0, keepdims=True), rtol=0
    )
    assert _plan_kind(x, (0, 1)) == {"rows"}


def test_other_dtypes_and_ops_keep_the_general_kernels():
    x = ta.asarray(np.ones((500, 300), np.int32))
    assert _plan_kind(x, 0) == {True}  # integers: the general column kernel
    np.testing.assert_array_equal(np.asarray(ta.sum(x, axis=0)), np.full(300, 500))
    f = ta.asarray(np.arange(500 * 300, dtype=np.float32).reshape(500, 300) % 7)
    np.testing.assert_allclose(
        np.asarray(ta.var(f, axis=0)), (np.arange(500 * 300).reshape(500, 300) % 7).var(axis=0), rtol=1e-5
    )
