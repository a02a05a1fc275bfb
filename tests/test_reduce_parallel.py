"""Reductions large enough to run as padded parallel task loops on the CPU.

Taichi 1.7 hands a parallel loop over a run-time number of iterations to its thread pool
in blocks of 512, so the reduction kernels pad their task loops (one task per block, see
``tiarray._kernels.reduce._pad``). These arrays are big enough for that path (several
MiB, a few heavy tasks); the results must equal NumPy's whatever the task split.
"""

from __future__ import annotations

import numpy as np
import pytest

import tiarray as ta
from tiarray._kernels import reduce as R

SIZES = [1_000_003, 3 * 2**20 + 5]


def test_padding_is_chosen_for_few_heavy_tasks_only():
    from tiarray import _runtime

    _runtime.ensure_init()
    assert R._pad(16, 1 << 16, serial=False) == (R._PAD if _runtime.is_cpu() else 1)
    assert R._pad(16, 1 << 16, serial=True) == 1  # serial variants have no pool
    assert R._pad(10_000, 1 << 16, serial=False) == 1  # enough blocks already
    assert R._pad(16, 8, serial=False) == 1  # tasks too light for empty iterations


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_full_reductions(n, dtype):
    rng = np.random.default_rng(n)
    if np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
    else:
        x = rng.integers(-1000, 1000, n).astype(dtype)
    x[n - 1] = 5000  # the maximum in the last task
    x[7] = -5000  # the minimum in the first
    t = ta.asarray(x)
    assert float(ta.max(t)) == x.max()
    assert float(ta.min(t)) == x.min()
    assert int(ta.argmax(t)) == int(np.argmax(x))
    assert int(ta.argmin(t)) == int(np.argmin(x))
    s = float(ta.sum(t))
    ref = float(x.astype(np.float64).sum())
    assert s == pytest.approx(ref, rel=1e-5, abs=1e-2)
    assert int(ta.count_nonzero(t)) == int(np.count_nonzero(x))
    assert bool(ta.all(t)) == bool(np.all(x))


@pytest.mark.parametrize("where", [0, 500_000, 1_000_002])
def test_nan_propagates_from_any_task(where):
    x = np.random.default_rng(1).standard_normal(1_000_003).astype(np.float32)
    x[where] = np.nan
    t = ta.asarray(x)
    assert np.isnan(float(ta.max(t)))
    assert np.isnan(float(ta.min(t)))
    assert np.isnan(float(ta.sum(t)))
    assert int(ta.argmax(t)) == where  # NumPy: the first NaN


def test_few_large_outputs_and_column_reductions():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((6, 400_001)).astype(np.float32)  # 6 outputs of 400 001
    t = ta.asarray(a)
    np.testing.assert_array_equal(np.asarray(ta.max(t, axis=1)), a.max(axis=1))
    np.testing.assert_array_equal(np.asarray(ta.argmin(t, axis=1)), a.argmin(axis=1))
    np.testing.assert_allclose(np.asarray(ta.sum(t, axis=1)), a.astype(np.float64).sum(axis=1), rtol=1e-5)
    b = rng.standard_normal((50_000, 40)).astype(np.float32)  # a reduction over rows: columns kernel
    tb = ta.asarray(b)
    np.testing.assert_array_equal(np.asarray(ta.max(tb, axis=0)), b.max(axis=0))
    np.testing.assert_allclose(np.asarray(ta.sum(tb, axis=0)), b.astype(np.float64).sum(axis=0), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(ta.mean(tb, axis=0)), b.astype(np.float64).mean(axis=0), rtol=1e-5)
