"""Reductions large enough to run as padded parallel task loops on the CPU.

Taichi 1.7 hands a parallel loop over a run-time number of iterations to its thread pool
in blocks of 512, so the reduction kernels pad their task loops (one task per block, see
``tiarray._kernels.reduce.task_pad``). These arrays are big enough for that path (several
MiB, a few heavy tasks); the results must equal NumPy's whatever the task split.
"""

from __future__ import annotations

import numpy as np
import pytest

import tiarray as ta
from tiarray._kernels import reduce as R

SIZES = [1_000_003, 3 * 2**20 + 5]


# these tests are about the parallel (padded, chunked) kernels
pytestmark = pytest.mark.usefixtures("parallel_kernels")


def test_padding_is_chosen_for_few_heavy_tasks_only():
    from tiarray import _runtime

    _runtime.ensure_init()
    assert R.task_pad(16, 1 << 16, serial=False) == (R._PAD if _runtime.is_cpu() else 1)
    assert R.task_pad(16, 1 << 16, serial=True) == 1  # serial variants have no pool
    assert R.task_pad(10_000, 1 << 16, serial=False) == 1  # enough blocks already
    assert R.task_pad(16, 8, serial=False) == 1  # tasks too light for empty iterations


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


def test_linalg_reductions_split_into_padded_chunks():
    x = np.random.default_rng(3).standard_normal(2_000_003)
    x[1_999_999] = -50.0
    t = ta.asarray(x)
    assert float(ta.linalg.vector_norm(t)) == pytest.approx(np.linalg.norm(x), rel=1e-12)
    assert float(ta.linalg.vector_norm(t, ord=np.inf)) == 50.0
    assert float(ta.linalg.vector_norm(t, ord=1)) == pytest.approx(np.abs(x).sum(), rel=1e-12)
    assert float(ta.vecdot(t, t)) == pytest.approx(float(x @ x), rel=1e-12)


def test_nonzero_and_unique_over_padded_chunks():
    rng = np.random.default_rng(4)
    m = rng.random(1_500_007) < 0.3
    m[-1] = True
    (idx,) = ta.nonzero(ta.asarray(m))
    np.testing.assert_array_equal(np.asarray(idx), np.nonzero(m)[0])
    m2 = m[:1_500_002].reshape(-1, 7)
    got = ta.nonzero(ta.asarray(m2))
    for g, r in zip(got, np.nonzero(m2)):
        np.testing.assert_array_equal(np.asarray(g), r)
    v = rng.integers(0, 5000, 1_200_000)
    u = ta.unique_values(ta.asarray(v))
    np.testing.assert_array_equal(np.sort(np.asarray(u)), np.unique(v))
    r = ta.unique_all(ta.asarray(v))
    order = np.argsort(np.asarray(r.values))
    np.testing.assert_array_equal(np.asarray(r.values)[order], np.unique(v))
    np.testing.assert_array_equal(np.asarray(r.values)[np.asarray(r.inverse_indices)], v)
    np.testing.assert_array_equal(np.asarray(r.counts)[order], np.unique(v, return_counts=True)[1])


@pytest.mark.parametrize(
    "make",
    [
        lambda rng: rng.random(1_000_003) < 0.5,  # mixed
        lambda rng: np.zeros(1_000_003, bool),  # nothing
        lambda rng: np.ones(1_000_003, bool),  # everything
        lambda rng: np.concatenate(
            [np.zeros(600_000, bool), rng.random(400_003) < 0.01]
        ),  # empty chunks first
        lambda rng: (rng.random(3_000_000) < 0.5)[::-3],  # reversed, strided
    ],
    ids=["mixed", "none", "all", "sparse-tail", "reversed-strided"],
)
def test_nonzero_1d_branch_free_write(make):
    """1-D nonzero writes positions branch-free, stopping at each chunk's end."""
    m = make(np.random.default_rng(6))
    (idx,) = ta.nonzero(ta.asarray(m))
    np.testing.assert_array_equal(np.asarray(idx), np.nonzero(m)[0])
    f = np.where(m, np.float32(np.nan), np.float32(-0.0))  # NaN is non-zero, -0.0 is zero
    (idx,) = ta.nonzero(ta.asarray(f))
    np.testing.assert_array_equal(np.asarray(idx), np.nonzero(m)[0])
    assert int(ta.count_nonzero(ta.asarray(f))) == int(np.count_nonzero(m))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.int16])
def test_vecdot_of_long_vectors_splits_into_chunks(dtype):
    n = 3 * 2**16 + 11
    rng = np.random.default_rng(5)
    x = (rng.standard_normal(n) * 50).astype(dtype)
    y = (rng.standard_normal(n) * 50).astype(dtype)
    got = ta.vecdot(ta.asarray(x), ta.asarray(y))
    assert got.shape == () and got.dtype == ta.asarray(x).dtype
    if np.dtype(dtype).kind == "f":
        ref = float(np.vecdot(x.astype(np.float64), y.astype(np.float64)))
        assert float(got) == pytest.approx(ref, rel=1e-6 if dtype == np.float32 else 1e-12, abs=1e-3)
    else:
        assert int(got) == int(np.vecdot(x, y))  # integer products wrap, as in NumPy
    # strided operands take the general path and agree
    xs, ys = x[::2], y[::2]
    got_s = ta.vecdot(ta.asarray(x)[::2], ta.asarray(y)[::2])
    if np.dtype(dtype).kind == "f":
        assert float(got_s) == pytest.approx(
            float(np.vecdot(xs.astype(np.float64), ys.astype(np.float64))), rel=1e-5, abs=1e-2
        )
    else:
        assert int(got_s) == int(np.vecdot(xs, ys))


@pytest.mark.parametrize(
    "case",
    ["strided", "reversed", "complex", "two_axes", "var", "prod", "bool"],
)
def test_padded_path_on_other_layouts_and_operations(case):
    rng = np.random.default_rng(6)
    if case == "strided":
        base = rng.standard_normal(4_000_010).astype(np.float32)
        x = base[3::2]
        t = ta.asarray(base)[3::2]
        np.testing.assert_allclose(float(ta.sum(t)), x.astype(np.float64).sum(), rtol=1e-5, atol=1e-2)
        assert float(ta.max(t)) == x.max() and int(ta.argmin(t)) == int(x.argmin())
    elif case == "reversed":
        base = rng.standard_normal(2_000_000)
        t = ta.asarray(base)[::-1]
        assert float(ta.min(t)) == base.min() and int(ta.argmax(t)) == int(base[::-1].argmax())
    elif case == "complex":
        z = (rng.standard_normal(1_000_001) + 1j * rng.standard_normal(1_000_001)).astype(np.complex64)
        got = complex(ta.sum(ta.asarray(z)))
        ref = complex(z.astype(np.complex128).sum())
        assert abs(got - ref) <= 1e-5 * abs(z).sum()
    elif case == "two_axes":
        a = rng.standard_normal((3, 700, 900)).astype(np.float32)
        t = ta.asarray(a)
        np.testing.assert_allclose(
            np.asarray(ta.sum(t, axis=(1, 2))), a.astype(np.float64).sum(axis=(1, 2)), rtol=1e-5, atol=1e-2
        )
        np.testing.assert_array_equal(np.asarray(ta.max(t, axis=(0, 2))), a.max(axis=(0, 2)))
    elif case == "var":
        x = rng.standard_normal(3_000_000) * 3 + 1e4
        t = ta.asarray(x)
        assert float(ta.var(t)) == pytest.approx(x.var(), rel=1e-9)
        assert float(ta.std(t, correction=1)) == pytest.approx(x.std(ddof=1), rel=1e-9)
        assert float(ta.mean(t)) == pytest.approx(x.mean(), rel=1e-12)
    elif case == "prod":
        x = 1 + rng.standard_normal(1_500_000) * 1e-4
        assert float(ta.prod(ta.asarray(x))) == pytest.approx(np.prod(x), rel=1e-9)
    else:
        m = np.zeros(5_000_001, bool)
        m[4_999_999] = True
        t = ta.asarray(m)
        assert bool(ta.any(t)) and not bool(ta.all(t))
        assert int(ta.count_nonzero(t)) == 1
        assert int(ta.argmax(ta.astype(t, ta.int8))) == 4_999_999


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint16])
def test_argmax_argmin_first_occurrence_across_chunks(dtype):
    x = np.zeros(2_000_003, dtype)
    for i in (1_500_000, 300_001, 300_000, 1_999_999):  # ties in several chunks
        x[i] = 5
    x[700_000] = 0 if np.dtype(dtype).kind == "u" else -3
    x[1_800_000] = x[700_000]
    t = ta.asarray(x)
    assert int(ta.argmax(t)) == 300_000
    assert int(ta.argmin(t)) == int(np.argmin(x))
    rows = np.stack([x, x[::-1].copy(), np.roll(x, 12345)])
    tr = ta.asarray(rows)
    np.testing.assert_array_equal(np.asarray(ta.argmax(tr, axis=1)), np.argmax(rows, axis=1))
    np.testing.assert_array_equal(np.asarray(ta.argmin(tr, axis=1)), np.argmin(rows, axis=1))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64])
def test_matrix_vector_products_row_dot_path(dtype):
    rng = np.random.default_rng(7)

    def mk(shape):
        return (rng.standard_normal(shape) * 10).astype(dtype)

    def check(got, ref):
        got = np.asarray(got)
        if np.dtype(dtype).kind == "f":
            scale = np.max(np.abs(ref)) + 1
            tol = 1e-5 if dtype == np.float32 else 1e-12
            np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * scale)
        else:
            np.testing.assert_array_equal(got, ref)

    def ref_mv(A, v):
        if np.dtype(dtype).kind == "f":
            return (A.astype(np.float64) @ v.astype(np.float64)).astype(dtype)
        return A @ v

    for M, K in ((300, 2000), (5, 70_000), (1, 3), (40, 1)):
        A, v = mk((M, K)), mk(K)
        check(ta.asarray(A) @ ta.asarray(v), ref_mv(A, v))
    W = mk((64, 900))  # rows that are not adjacent: a column slice of a wider matrix
    A, v = W[:, :700], mk(700)
    check(ta.asarray(W)[:, :700] @ ta.asarray(v), ref_mv(A, v))
    B = mk((3, 50, 400))  # a batch of matrices times one vector
    v = mk(400)
    check(ta.asarray(B) @ ta.asarray(v), ref_mv(B, v))
    At = mk((500, 300)).T  # transposed: not contiguous along k, the general kernel
    v = mk(500)
    check(ta.asarray(At.T.copy()).T @ ta.asarray(v), ref_mv(At, v))
    R = mk((2000, 64))  # vecdot of many rows
    S = mk((2000, 64))
    ref = (
        np.sum(R.astype(np.float64) * S, axis=1).astype(dtype)
        if np.dtype(dtype).kind == "f"
        else np.vecdot(R, S)
    )
    check(ta.vecdot(ta.asarray(R), ta.asarray(S)), ref)


def test_matrix_vector_product_propagates_nan_and_inf():
    A = np.ones((600, 1000), np.float32)
    A[3, 500] = np.nan
    A[7, 10] = np.inf
    v = np.ones(1000, np.float32)
    got = np.asarray(ta.asarray(A) @ ta.asarray(v))
    assert np.isnan(got[3]) and np.isposinf(got[7])
    np.testing.assert_array_equal(np.delete(got, [3, 7]), np.full(598, 1000, np.float32))


def assert_scan_within_bound(got, x):
    """Every element of a float cumulative sum within the bound of its error analysis.

    tiarray accumulates in double precision (float32 widened, complex as (re, im) pairs)
    and rounds once to the output type. Whatever the order of the additions (chunked
    scans add chunk carries), the k-th partial sum of a float64 accumulation is within
    gamma_k * S_k of the exact one, gamma_k = k u / (1 - k u), u = 2^-53, S_k = sum of |x_i|
    up to k; the output rounding adds u_out * |s_k|. The reference is an extended-precision
    cumulative sum (np.longdouble), whose own error bound is added too. A shifted
    (exclusive) scan or an offset on some elements is far outside this bound.
    """
    parts = [(got.real, x.real), (got.imag, x.imag)] if np.iscomplexobj(x) else [(got, x)]
    u_out = np.finfo(got.real.dtype).eps / 2
    k = np.arange(1, x.shape[-1] + 1, dtype=np.float64)
    u_ld = np.finfo(np.longdouble).eps / 2
    for g, v in parts:
        ref = np.cumsum(v.astype(np.longdouble))
        s_abs = np.cumsum(np.abs(v).astype(np.float64))
        gamma = k * 2.0**-53 / (1 - k * 2.0**-53) + k * float(u_ld) / (1 - k * float(u_ld))
        bound = gamma * s_abs + u_out * np.abs(ref.astype(np.float64))
        err = np.abs(g.astype(np.longdouble) - ref).astype(np.float64)
        bad = np.flatnonzero(err > bound)
        assert bad.size == 0, (bad[:5], err[bad[:5]], bound[bad[:5]])


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.complex64])
def test_cumulative_sum_and_prod_over_padded_chunks(dtype):
    rng = np.random.default_rng(8)
    n = 1_000_003
    if np.dtype(dtype).kind == "c":
        x = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dtype)
    elif np.dtype(dtype).kind == "f":
        x = rng.standard_normal(n).astype(dtype)
    else:
        x = rng.integers(-100, 100, n).astype(dtype)
    t = ta.asarray(x)
    got = np.asarray(ta.cumulative_sum(t))
    if np.dtype(dtype).kind in "fc":
        assert_scan_within_bound(got, x)
    else:
        np.testing.assert_array_equal(got, np.cumsum(x))
    got0 = np.asarray(ta.cumulative_sum(t, include_initial=True))
    assert got0[0] == 0 and got0.shape == (n + 1,)
    np.testing.assert_array_equal(got0[1:], got)
    m = x[: 4 * 250_000].reshape(4, 250_000)  # a few long rows
    gm = np.asarray(ta.cumulative_sum(ta.asarray(m), axis=1))
    if np.dtype(dtype).kind in "fc":
        for row_got, row in zip(gm, m):
            assert_scan_within_bound(row_got, row)
    else:
        np.testing.assert_array_equal(gm, np.cumsum(m, axis=1))
    if np.dtype(dtype).kind != "c":
        p = 1 + rng.standard_normal(n) * 1e-6
        gp = np.asarray(ta.cumulative_prod(ta.asarray(p)))
        np.testing.assert_allclose(gp, np.cumprod(p), rtol=1e-9)


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_radix_sort_over_padded_chunks_is_stable(dtype):
    rng = np.random.default_rng(9)
    n = 1_300_001  # 20 chunks of the radix passes
    if np.dtype(dtype).kind == "f":
        x = rng.integers(-50, 50, n).astype(dtype)  # many ties
        x[::1000] = np.nan
        x[5] = -0.0
    else:
        x = rng.integers(0, 200, n).astype(dtype)
    t = ta.asarray(x)
    np.testing.assert_array_equal(np.asarray(ta.sort(t)), np.sort(x, kind="stable"))
    np.testing.assert_array_equal(np.asarray(ta.argsort(t)), np.argsort(x, kind="stable"))
    y = np.where(np.isnan(x), 0, x) if np.dtype(dtype).kind == "f" else x  # NaN order: test_sorting
    np.testing.assert_array_equal(
        np.asarray(ta.argsort(ta.asarray(y), descending=True)),
        np.argsort(-y.astype(np.float64), kind="stable"),
    )
