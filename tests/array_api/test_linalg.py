"""Linear algebra: matmul/tensordot/vecdot/matrix_transpose and the ``linalg`` extension,
against NumPy, on random shapes, dtypes and layouts (transposed, negative strides,
broadcast batch axes)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from manip_strategies import FLOAT_DTYPES, NUMERIC_DTYPES, arrays, assert_same, fill, layouts

import tiarray as ta
from tiarray import _runtime
from tiarray._array_object import TiArray

la = ta.linalg


def _tol(dtype) -> float:
    d = np.dtype(dtype)
    if d.kind in "iub":
        return None
    return 2e-4 if d in (np.float32, np.complex64) else 1e-10


# ----------------------------------------------------------------------------- matmul


@st.composite
def matmul_operands(draw):
    dtype = draw(st.sampled_from(NUMERIC_DTYPES))
    m, k, n = (draw(st.sampled_from([0, 1, 2, 3, 5, 8, 17, 33, 40])) for _ in range(3))
    batch = tuple(draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2))))
    b1 = tuple(draw(st.sampled_from([1, s])) for s in batch)[draw(st.integers(0, len(batch))) :]
    b2 = tuple(draw(st.sampled_from([1, s])) for s in batch)[draw(st.integers(0, len(batch))) :]
    v1 = draw(st.integers(0, 5)) == 0
    v2 = draw(st.integers(0, 5)) == 0
    s1 = (k,) if v1 else b1 + (m, k)
    s2 = (k,) if v2 else b2 + (k, n)
    a = draw(layouts(s1, dtype, small=True))
    b = draw(layouts(s2, dtype, small=True))
    return a, b


@given(matmul_operands())
def test_matmul(ops):
    a, b = ops
    r = ta.matmul(ta.asarray(a), ta.asarray(b))
    assert_same(r, np.matmul(a, b), rtol=_tol(a.dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64, np.complex128, np.float16,
                                   np.uint8])  # fmt: skip
@pytest.mark.parametrize("shape", [(64, 64, 64), (100, 130, 70), (128, 40, 96), (37, 300, 19)])
def test_matmul_packed_path(dtype, shape):
    m, k, n = shape
    rng = np.random.default_rng(m + k + n)
    a = fill(rng, (m, k), dtype, small=True)
    b = fill(rng, (k, n), dtype, small=True)
    e = np.matmul(a, b)
    tol = 2e-2 if dtype == np.float16 else _tol(dtype)
    assert_same(ta.matmul(ta.asarray(a), ta.asarray(b)), e, rtol=tol)
    # transposed and negative-stride operands are read in place by the packing kernels
    at = np.ascontiguousarray(a.T).T
    bn = np.ascontiguousarray(b[::-1])[::-1]
    assert_same(ta.matmul(ta.asarray(at), ta.asarray(bn)), e, rtol=tol)


def test_matmul_batched_packed_with_shared_rhs():
    rng = np.random.default_rng(3)
    a = fill(rng, (3, 2, 48, 40), np.float32)
    b = fill(rng, (40, 32), np.float32)
    assert_same(ta.matmul(ta.asarray(a), ta.asarray(b)), a @ b, rtol=2e-4)
    b2 = fill(rng, (2, 40, 33), np.float64)
    assert_same(ta.matmul(ta.asarray(a[0]), ta.asarray(b2)), a[0].astype(np.float64) @ b2, rtol=1e-6)


def test_matmul_mixed_dtypes_promote():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    b = np.arange(6, dtype=np.int16).reshape(3, 2)
    r = ta.matmul(ta.asarray(a), ta.asarray(b))
    assert r.dtype == ta.int16
    assert_same(r, a @ b)
    c = (np.arange(6) * 1j).astype(np.complex64).reshape(3, 2)
    r = ta.matmul(ta.asarray(a.astype(np.float64)), ta.asarray(c))
    assert r.dtype == ta.complex128
    assert_same(r, a.astype(np.float64) @ c, rtol=1e-12)


def test_matmul_integer_overflow_wraps():
    a = np.full((2, 40), 100, dtype=np.int8)
    b = np.full((40, 16), 3, dtype=np.int8)
    assert_same(ta.matmul(ta.asarray(a), ta.asarray(b)), a @ b)  # NumPy wraps too


def test_matmul_cached_plans_follow_the_operands():
    """The direct path caches a plan per operand geometry; later calls with the same
    geometry (other data, other base addresses, views with offsets and negative strides)
    must read their own operands (a new runtime rebuilds the plan: test_runtime)."""
    from tiarray._kernels import matmul as mm

    rng = np.random.default_rng(7)
    mm._PLANS.clear()
    for _ in range(3):  # same shapes, fresh buffers and data each time
        a = rng.standard_normal((6, 5)).astype(np.float32)
        v = rng.standard_normal(5).astype(np.float32)
        np.testing.assert_allclose(np.asarray(ta.matmul(ta.asarray(a), ta.asarray(v))), a @ v, rtol=1e-5)
    assert len(mm._PLANS) == 1
    big = rng.standard_normal((12, 9, 7))
    tb = ta.asarray(big)
    rhs = rng.standard_normal((7, 3))
    for i in range(4):  # one geometry, four base addresses; reversed rows and a column offset
        va, na = tb[i, ::-1, 1:6], big[i, ::-1, 1:6]
        np.testing.assert_allclose(np.asarray(ta.matmul(va, ta.asarray(rhs[1:6]))), na @ rhs[1:6], rtol=1e-12)
    # batched with a broadcast rhs: offsets come from the plan
    a3 = rng.standard_normal((4, 3, 5)).astype(np.float32)
    b3 = rng.standard_normal((1, 5, 2)).astype(np.float32)
    for _ in range(2):
        np.testing.assert_allclose(
            np.asarray(ta.matmul(ta.asarray(a3), ta.asarray(b3))), a3 @ b3, rtol=1e-5, atol=1e-6
        )


def test_matmul_errors():
    with pytest.raises(ValueError, match="contracted"):
        ta.matmul(ta.zeros((2, 3)), ta.zeros((4, 2)))
    with pytest.raises(ValueError, match="at least one dimension"):
        ta.matmul(ta.asarray(1.0), ta.zeros(3))
    with pytest.raises(TypeError, match="numeric"):
        ta.matmul(ta.zeros((2, 2), dtype=ta.bool), ta.zeros((2, 2), dtype=ta.bool))
    with pytest.raises(ValueError, match="batch dimensions"):
        ta.matmul(ta.zeros((2, 2, 3)), ta.zeros((3, 3, 2)))
    with pytest.raises(TypeError, match="argument 'x2'"):
        ta.matmul(ta.zeros((2, 2)), np.zeros((2, 2)))


@given(arrays(min_dims=2, max_dims=4))
def test_matrix_transpose_is_a_view(case):
    a, t = case
    r = ta.matrix_transpose(t)
    assert_same(r, np.matrix_transpose(a))
    assert r.ptr == t.ptr and r.base is t.base
    assert r.strides == t.strides[:-2] + (t.strides[-1], t.strides[-2])


def test_matrix_transpose_error():
    with pytest.raises(ValueError, match="two dimensions"):
        ta.matrix_transpose(ta.zeros(3))


@given(st.data())
def test_vecdot(data):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    k = data.draw(st.integers(0, 6))
    s1 = tuple(data.draw(st.integers(1, 3)) for _ in range(data.draw(st.integers(0, 2))))
    s2 = tuple(data.draw(st.sampled_from([1, s])) for s in s1)
    axis = data.draw(st.integers(-min(len(s1), len(s2)) - 1, -1))
    sh1 = list(s1)
    sh1.insert(len(s1) + 1 + axis, k)
    sh2 = list(s2)
    sh2.insert(len(s2) + 1 + axis, k)
    a = data.draw(layouts(tuple(sh1), dtype, small=True))
    b = data.draw(layouts(tuple(sh2), dtype, small=True))
    r = ta.vecdot(ta.asarray(a), ta.asarray(b), axis=axis)
    assert_same(r, np.vecdot(a, b, axis=axis), rtol=_tol(dtype))


def test_vecdot_conjugates_the_first_argument():
    a = np.array([1 + 2j, 3 - 1j])
    b = np.array([2 - 1j, 1j])
    assert ta.vecdot(ta.asarray(a), ta.asarray(b)).item() == pytest.approx(np.sum(np.conj(a) * b))
    with pytest.raises(ValueError, match="same size"):
        ta.vecdot(ta.zeros((2, 3)), ta.zeros((2, 4)))


@given(st.data())
def test_tensordot(data):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    a, t = data.draw(arrays(dtypes=[dtype], min_dims=0, max_dims=3, max_side=4, small=True))
    n = data.draw(st.integers(0, a.ndim))
    contracted = a.shape[a.ndim - n :]
    free = tuple(data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 2))))
    b = data.draw(layouts(contracted + free, dtype, small=True))
    assert_same(ta.tensordot(t, ta.asarray(b), axes=n), np.tensordot(a, b, axes=n), rtol=_tol(dtype))
    if a.ndim >= 1:
        perm = data.draw(st.permutations(range(a.ndim)))
        ax1 = list(perm[: data.draw(st.integers(1, a.ndim))])
        b2 = data.draw(layouts(tuple(a.shape[i] for i in ax1) + free, dtype, small=True))
        ax2 = list(range(len(ax1)))
        assert_same(
            ta.tensordot(t, ta.asarray(b2), axes=(ax1, ax2)),
            np.tensordot(a, b2, axes=(ax1, ax2)),
            rtol=_tol(dtype),
        )


def test_tensordot_errors():
    with pytest.raises(ValueError, match="differ in size"):
        ta.tensordot(ta.zeros((2, 3)), ta.zeros((4, 3)), axes=([1], [0]))
    with pytest.raises(ValueError, match="same length"):
        ta.tensordot(ta.zeros((2, 3)), ta.zeros((3, 2)), axes=([1, 0], [0]))
    with pytest.raises(ValueError, match="cannot contract"):
        ta.tensordot(ta.zeros((2, 3)), ta.zeros((3,)), axes=2)


# ----------------------------------------------------------------------------- norms


@given(st.data())
def test_vector_norm(data):
    a, t = data.draw(arrays(dtypes=FLOAT_DTYPES, max_dims=3, specials=True))
    ord_ = data.draw(st.sampled_from([2, 1, math.inf, -math.inf, 0, 3, 0.5, -1, -2.5]))
    if a.ndim and data.draw(st.booleans()):
        axis = tuple(data.draw(st.lists(st.integers(0, a.ndim - 1), unique=True, min_size=1)))
    else:
        axis = None
    keepdims = data.draw(st.booleans())
    n_red = a.size if axis is None else math.prod(a.shape[d] for d in axis)
    if n_red == 0 and ord_ in (math.inf, -math.inf):
        with pytest.raises(ValueError, match="vector_norm"):
            la.vector_norm(t, axis=axis, keepdims=keepdims, ord=ord_)
        return
    with np.errstate(all="ignore"):
        e = np.linalg.vector_norm(a, axis=axis, keepdims=keepdims, ord=ord_)
    r = la.vector_norm(t, axis=axis, keepdims=keepdims, ord=ord_)
    assert np.dtype(r.dtype) == np.finfo(a.dtype).dtype
    assert_same(r, e, rtol=2e-5 if a.dtype in (np.float32, np.complex64) else 1e-10)


def test_vector_norm_large_parallel_reduction():
    rng = np.random.default_rng(5)
    x = fill(rng, (400_001,), np.float32)
    for o in (2, 1, math.inf, -math.inf, 0, 3):
        assert_same(la.vector_norm(ta.asarray(x), ord=o), np.linalg.vector_norm(x, ord=o), rtol=1e-5)
    y = fill(rng, (3, 70_000), np.complex128)
    assert_same(la.vector_norm(ta.asarray(y), axis=1), np.linalg.vector_norm(y, axis=1), rtol=1e-10)


def test_vector_norm_special_values():
    x = ta.asarray([1.0, np.inf, 2.0])
    assert la.vector_norm(x).item() == np.inf
    assert la.vector_norm(x, ord=math.inf).item() == np.inf
    assert math.isnan(la.vector_norm(ta.asarray([1.0, np.nan]), ord=math.inf).item())
    assert math.isnan(la.vector_norm(ta.asarray([np.nan, 1.0]), ord=-math.inf).item())
    assert la.vector_norm(ta.asarray([0.0, 3.0]), ord=-1).item() == 0.0


def test_vector_norm_errors():
    with pytest.raises(TypeError, match="floating-point"):
        la.vector_norm(ta.asarray([1, 2]))
    with pytest.raises(TypeError, match="ord"):
        la.vector_norm(ta.asarray([1.0]), ord="fro")


@given(st.data())
def test_matrix_norm(data):
    a, t = data.draw(arrays(dtypes=FLOAT_DTYPES, min_dims=2, max_dims=4, min_side=1, max_side=4))
    ord_ = data.draw(st.sampled_from(["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf]))
    keepdims = data.draw(st.booleans())
    r = la.matrix_norm(t, ord=ord_, keepdims=keepdims)
    e = np.linalg.matrix_norm(a, ord=ord_, keepdims=keepdims)
    assert_same(r, e, rtol=2e-5 if a.dtype in (np.float32, np.complex64) else 1e-10)


def test_matrix_norm_errors():
    with pytest.raises(ValueError, match="'ord'"):
        la.matrix_norm(ta.zeros((2, 2)), ord=3)
    with pytest.raises(ValueError, match="two dimensions"):
        la.matrix_norm(ta.zeros(3))
    with pytest.raises(ValueError, match="no columns"):
        la.matrix_norm(ta.zeros((2, 0)), ord=1)


# ----------------------------------------------------------------------------- trace, diagonal, outer, cross


@given(st.data())
def test_diagonal_and_trace(data):
    a, t = data.draw(arrays(dtypes=NUMERIC_DTYPES, min_dims=2, max_dims=4, max_side=5))
    offset = data.draw(st.integers(-6, 6))
    d = la.diagonal(t, offset=offset)
    assert_same(d, np.linalg.diagonal(a, offset=offset))
    assert d.base is t.base
    if d.size:
        assert np.shares_memory(np.asarray(d), a)
    r = la.trace(t, offset=offset)
    e = np.trace(a, offset=offset, axis1=-2, axis2=-1)
    kind = a.dtype.kind
    expected_dtype = (
        {"i": np.int64, "u": np.uint64}.get(kind, a.dtype)
        if a.dtype.itemsize < 8 or kind in "fc"
        else a.dtype
    )
    assert np.dtype(r.dtype) == np.dtype(expected_dtype)
    assert_same(r, np.asarray(e).astype(expected_dtype), rtol=_tol(a.dtype))


def test_trace_dtype_argument():
    a = np.arange(9, dtype=np.int32).reshape(3, 3)
    r = la.trace(ta.asarray(a), dtype=ta.float32)
    assert r.dtype == ta.float32 and r.item() == 12.0
    with pytest.raises(TypeError, match="numeric"):
        la.trace(ta.zeros((2, 2), dtype=ta.bool))


@given(st.data())
def test_outer(data):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    a, t = data.draw(arrays(dtypes=[dtype], min_dims=1, max_dims=1, max_side=7, small=True))
    b, u = data.draw(arrays(dtypes=[dtype], min_dims=1, max_dims=1, max_side=7, small=True))
    assert_same(la.outer(t, u), np.outer(a, b), rtol=_tol(dtype))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_outer_keeps_the_sign_of_zero_products(dtype):
    """out[i, j] is the product x1[i] * x2[j] itself: 0 * -1 is -0.0 (a GEMM with inner
    size 1 accumulates from +0 and loses it)."""
    a = np.array([0.0, -0.0, 2.0, -3.5]).astype(dtype)
    b = np.array([-1.0, 0.0, -0.0, 4.0, np.inf]).astype(dtype)
    got = np.asarray(la.outer(ta.asarray(a), ta.asarray(b)))
    with np.errstate(invalid="ignore"):
        ref = np.multiply.outer(a, b)
    np.testing.assert_array_equal(got, ref)
    for g, r in ((got.real, ref.real), (got.imag, ref.imag)) if got.dtype.kind == "c" else ((got, ref),):
        num = ~np.isnan(r)  # a NaN's sign bit is not specified
        np.testing.assert_array_equal(np.signbit(g[num]), np.signbit(r[num]))


@given(st.data())
def test_cross(data):
    dtype = data.draw(st.sampled_from(NUMERIC_DTYPES))
    s1 = tuple(data.draw(st.integers(0, 3)) for _ in range(data.draw(st.integers(0, 2))))
    s2 = tuple(data.draw(st.sampled_from([1, s])) for s in s1)
    axis = data.draw(st.integers(-len(s1) - 1, -1)) if len(s1) == len(s2) else -1
    sh1 = list(s1)
    sh1.insert(len(s1) + 1 + axis, 3)
    sh2 = list(s2)
    sh2.insert(len(s2) + 1 + axis, 3)
    a = data.draw(layouts(tuple(sh1), dtype, small=True))
    b = data.draw(layouts(tuple(sh2), dtype, small=True))
    r = la.cross(ta.asarray(a), ta.asarray(b), axis=axis)
    with np.errstate(all="ignore"):
        e = np.cross(a, b, axis=axis)
    tol = _tol(dtype)
    # differences of products cancel: the error scales with |a| |b|, not with |a x b|
    scale = (np.abs(a).max() if a.size else 0) * (np.abs(b).max() if b.size else 0)
    assert_same(r, e, rtol=tol, atol=None if tol is None else tol * scale + 1e-300)


def test_cross_errors():
    with pytest.raises(ValueError, match="size 3"):
        la.cross(ta.zeros(2), ta.zeros(2))
    with pytest.raises(ValueError, match="negative axis"):
        la.cross(ta.zeros(3), ta.zeros(3), axis=0)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 7, -1, -2])
@pytest.mark.parametrize("dtype", [np.float64, np.complex64, np.int32])
def test_matrix_power(n, dtype):
    rng = np.random.default_rng(n + 10)
    a = fill(rng, (2, 4, 4), dtype, small=True)
    if np.dtype(dtype).kind in "iu":
        a = (a % 3).astype(dtype)
        if n < 0:
            with pytest.raises(TypeError, match="floating-point"):
                la.matrix_power(ta.asarray(a), n)
            return
    else:
        a = a + 4 * np.eye(4, dtype=dtype)
    e = np.linalg.matrix_power(a, n)
    r = la.matrix_power(ta.asarray(a), n)
    assert_same(r, e.astype(dtype), rtol=None if np.dtype(dtype).kind in "iu" else 1e-4)
    if n == 1:
        assert r.ptr != ta.asarray(a).ptr  # a new array


# ----------------------------------------------------------------------------- LAPACK-backed


def _spd(rng, batch, n, dtype):
    m = fill(rng, batch + (n, n), dtype)
    return (m @ np.conj(np.swapaxes(m, -1, -2)) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_decompositions(dtype):
    rng = np.random.default_rng(7)
    tol = 1e-3 if dtype in (np.float32, np.complex64) else 1e-9
    spd = _spd(rng, (2,), 4, dtype)
    t = ta.asarray(spd)
    assert_same(la.cholesky(t), np.linalg.cholesky(spd), rtol=tol)
    assert_same(la.cholesky(t, upper=True), np.linalg.cholesky(spd, upper=True), rtol=tol)
    assert_same(la.det(t), np.linalg.det(spd), rtol=tol)
    s, ld = la.slogdet(t)
    s2, ld2 = np.linalg.slogdet(spd)
    assert_same(s, s2, rtol=tol)
    assert_same(ld, ld2, rtol=tol)
    assert_same(la.inv(t), np.linalg.inv(spd), rtol=tol)
    w, v = la.eigh(t)
    w2, _ = np.linalg.eigh(spd)
    assert_same(w, w2, rtol=tol)
    recon = np.asarray(v) @ (np.asarray(w)[..., None] * np.conj(np.swapaxes(np.asarray(v), -1, -2)))
    np.testing.assert_allclose(recon, spd, rtol=tol * 10, atol=tol * 10)
    assert_same(la.eigvalsh(t), w2, rtol=tol)
    g = fill(rng, (3, 5, 4), dtype)
    tg = ta.asarray(g)
    for mode in ("reduced", "complete"):
        q, r = la.qr(tg, mode=mode)
        q2, r2 = np.linalg.qr(g, mode=mode)
        assert_same(q, q2, rtol=tol)
        assert_same(r, r2, rtol=tol)
    for full in (True, False):
        U, S, Vh = la.svd(tg, full_matrices=full)
        U2, S2, Vh2 = np.linalg.svd(g, full_matrices=full)
        assert U.shape == U2.shape and Vh.shape == Vh2.shape
        assert_same(S, S2, rtol=tol)
        k = S2.shape[-1]
        recon = np.asarray(U)[..., :k] @ (np.asarray(S)[..., None] * np.asarray(Vh)[..., :k, :])
        np.testing.assert_allclose(recon, g, rtol=tol * 10, atol=tol * 10)
    assert_same(la.svdvals(tg), np.linalg.svd(g, compute_uv=False), rtol=tol)
    eps = np.finfo(dtype).eps
    assert_same(la.pinv(tg), np.linalg.pinv(g, rcond=5 * eps), rtol=tol * 10)
    assert_same(la.pinv(tg, rtol=0.5), np.linalg.pinv(g, rcond=0.5), rtol=tol * 10)
    assert_same(la.matrix_rank(tg), np.linalg.matrix_rank(g).astype(np.int64))


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_eig_and_eigvals_of_general_matrices(dtype):
    """eig/eigvals (2025.12): complex results of the input's precision, A v = v diag(w)
    per matrix of a stack, eigenvalues those of NumPy's eigvals in float64/complex128."""
    rng = np.random.default_rng(11)
    n = 5
    a = fill(rng, (3, n, n), dtype)
    a[1] = np.triu(a[1])  # real eigenvalues: still a complex result
    cd = np.complex128 if dtype in (np.float64, np.complex128) else np.complex64
    w, v = la.eig(ta.asarray(a))
    assert isinstance(la.eig(ta.asarray(a)), la.EigResult)
    assert w.dtype == ta.asarray(np.zeros(0, cd)).dtype and v.dtype == w.dtype
    assert w.shape == (3, n) and v.shape == (3, n, n)
    wn, vn = np.asarray(w).astype(np.complex128), np.asarray(v).astype(np.complex128)
    a64 = a.astype(np.complex128)
    eps = np.finfo(cd).eps if dtype is not np.float16 else np.finfo(np.float32).eps
    for i in range(3):
        # backward error of an eigenpair from a stable solver: |A v - w v| <= c n eps |A|
        res = a64[i] @ vn[i] - vn[i] * wn[i][None, :]
        assert np.abs(res).max() <= 50 * n * eps * np.abs(a64[i]).sum(axis=1).max()
        np.testing.assert_allclose(np.linalg.norm(vn[i], axis=0), 1.0, rtol=50 * eps)
        ref = np.linalg.eigvals(a64[i])
        # the eigenvalues as a set (LAPACK's order is unspecified by the standard)
        dist = np.abs(wn[i][:, None] - ref[None, :]).min(axis=1)
        assert dist.max() <= 1e3 * n * eps * np.abs(a64[i]).sum(axis=1).max()
    ev = la.eigvals(ta.asarray(a))
    assert ev.dtype == w.dtype and ev.shape == (3, n)
    np.testing.assert_allclose(np.asarray(ev), np.asarray(w), rtol=10 * eps, atol=10 * eps)
    # one matrix at a time gives the stack's result (the suite's stack test)
    np.testing.assert_array_equal(np.asarray(la.eigvals(ta.asarray(a[2]))), np.asarray(ev)[2])
    rot = la.eig(ta.asarray(np.array([[0.0, -1.0], [1.0, 0.0]], dtype=dtype))).eigenvalues
    np.testing.assert_allclose(
        sorted(np.asarray(rot).tolist(), key=lambda z: z.imag), [-1j, 1j], atol=10 * eps
    )
    assert la.eig(ta.asarray(np.zeros((2, 0, 0), dtype))).eigenvalues.shape == (2, 0)


def test_eig_errors():
    for f in (la.eig, la.eigvals):
        with pytest.raises(TypeError, match=f"linalg.{f.__name__}.*floating-point"):
            f(ta.asarray([[1, 2], [3, 4]]))
        with pytest.raises(ValueError, match="square"):
            f(ta.zeros((2, 3)))
        with pytest.raises(np.linalg.LinAlgError, match=f"linalg.{f.__name__}"):
            f(ta.asarray([[np.nan, 0.0], [0.0, 1.0]]))


def test_decompositions_read_strided_views_without_copy():
    rng = np.random.default_rng(8)
    spd = _spd(rng, (), 5, np.float64)
    big = np.zeros((10, 10))
    big[::2, ::2] = spd
    t = ta.asarray(big)[::2, ::2]
    assert_same(la.inv(t), np.linalg.inv(spd), rtol=1e-9)
    assert_same(la.det(ta.matrix_transpose(t)), np.linalg.det(spd.T), rtol=1e-9)


def test_solve():
    rng = np.random.default_rng(9)
    a = _spd(rng, (2,), 4, np.float64)
    b1 = fill(rng, (4,), np.float64)
    r = la.solve(ta.asarray(a), ta.asarray(b1))
    assert r.shape == (2, 4)
    assert_same(r, np.linalg.solve(a, np.broadcast_to(b1[:, None], (2, 4, 1)))[..., 0], rtol=1e-9)
    b2 = fill(rng, (4, 3), np.float64)
    assert_same(la.solve(ta.asarray(a), ta.asarray(b2)), np.linalg.solve(a, b2), rtol=1e-9)
    b3 = fill(rng, (3, 1, 4, 2), np.float32)
    r = la.solve(ta.asarray(a), ta.asarray(b3))
    assert r.dtype == ta.float64 and r.shape == (3, 2, 4, 2)
    assert_same(r, np.linalg.solve(a, b3.astype(np.float64)), rtol=1e-9)
    with pytest.raises(ValueError, match="x2"):
        la.solve(ta.asarray(a), ta.zeros(3))
    with pytest.raises(np.linalg.LinAlgError, match="solve"):
        la.solve(ta.zeros((2, 2)), ta.zeros(2))


def test_lapack_errors():
    with pytest.raises(TypeError, match="floating-point"):
        la.inv(ta.asarray([[1, 2], [3, 4]]))
    with pytest.raises(ValueError, match="square"):
        la.det(ta.zeros((2, 3)))
    with pytest.raises(ValueError, match="two dimensions"):
        la.svd(ta.zeros(3))
    with pytest.raises(np.linalg.LinAlgError, match="cholesky"):
        la.cholesky(ta.asarray([[-1.0, 0.0], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="mode"):
        la.qr(ta.zeros((2, 2)), mode="r")


def _fake_cuda_array(shape, dtype=ta.float64):
    """A TiArray that claims to live on CUDA (never dereferenced: the functions must refuse it
    before touching memory)."""
    host = ta.zeros(shape, dtype=dtype)
    return TiArray._new(host.ptr, host.shape, host.strides, dtype, _runtime.Device("cuda", 0), host, False)


@pytest.mark.parametrize("name", ["cholesky", "det", "eig", "eigvals", "eigh", "eigvalsh", "inv", "slogdet", "svd",
                                  "svdvals", "pinv", "matrix_rank", "qr"])  # fmt: skip
def test_lapack_functions_refuse_cuda_arrays(name):
    x = _fake_cuda_array((2, 2))
    with pytest.raises(NotImplementedError, match=r"to_device\('cpu'\)"):
        getattr(la, name)(x)
