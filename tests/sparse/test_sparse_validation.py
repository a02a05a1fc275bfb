"""Bad input to the sparse operators: clear errors in eager calls, and kernels that never
touch memory outside their arrays when values were not validated."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import guarded, random_csr
from tiarray.operators.sparse import _csr, _validate

from tiarray import _dtypes


@pytest.fixture
def csr():
    rng = np.random.default_rng(0)
    w, idx, ptr, dense = random_csr(6, 8, 0.4, rng, duplicates=False)
    return w, idx, ptr, dense


OPS = [
    ("event_csrmv", lambda n: np.ones(n, bool)),
    ("csrmv", lambda n: np.ones(n)),
    ("event_csrmm", lambda n: np.ones((n, 2), bool)),
    ("csrmm", lambda n: np.ones((n, 2))),
]


@pytest.mark.parametrize("op,make", OPS)
def test_shape_errors(op, make, csr):
    w, idx, ptr, _ = csr
    f = getattr(sp, op)
    with pytest.raises(
        ValueError, match=rf"{op}\(\): argument 'indptr' must have length shape\[0\] \+ 1 = 7, got 6"
    ):
        f(w, idx, ptr[:-1], make(8), shape=(6, 8))
    with pytest.raises(
        ValueError,
        match=rf"{op}\(\): argument 'weights' must have shape \(\) or \(1,\).*\(nnz,\) = \({len(idx)},\), got \({len(idx) - 1},\)",
    ):
        f(w[:-1], idx, ptr, make(8), shape=(6, 8))
    name = "events" if op.startswith("event") else ("vector" if op.endswith("mv") else "matrix")
    with pytest.raises(
        ValueError, match=rf"argument '{name}' must have length shape\[1\] \(transpose=False\) = 8, got 6"
    ):
        f(w, idx, ptr, make(6), shape=(6, 8))
    with pytest.raises(
        ValueError, match=rf"argument '{name}' must have length shape\[0\] \(transpose=True\) = 6, got 8"
    ):
        f(w, idx, ptr, make(8), shape=(6, 8), transpose=True)
    with pytest.raises(TypeError, match=rf"{op}\(\): argument 'shape' must be a pair of ints"):
        f(w, idx, ptr, make(8), shape=(6, 8, 1))
    with pytest.raises(ValueError, match="non-negative"):
        f(w, idx, ptr, make(8), shape=(-6, 8))


def test_dtype_errors(csr):
    w, idx, ptr, _ = csr
    e = np.ones(8, bool)
    with pytest.raises(
        TypeError,
        match=r"event_csrmv\(\): argument 'indices' must be an integer array \(int32 or int64\), got dtype float64",
    ):
        sp.event_csrmv(w, idx.astype(float), ptr, e, shape=(6, 8))
    with pytest.raises(TypeError, match="argument 'indptr' must be an integer array"):
        sp.event_csrmv(w, idx, ptr.astype(np.float32), e, shape=(6, 8))
    with pytest.raises(TypeError, match="argument 'indices' must be an integer array"):
        sp.event_csrmv(w, idx.astype(bool), ptr, e, shape=(6, 8))
    with pytest.raises(TypeError, match="argument 'weights' must be float32 or float64, got dtype int64"):
        sp.event_csrmv(w.astype(np.int64), idx, ptr, e, shape=(6, 8))
    with pytest.raises(
        TypeError, match="argument 'events' must be bool, float32 or float64, got dtype int32"
    ):
        sp.event_csrmv(w, idx, ptr, e.astype(np.int32), shape=(6, 8))
    with pytest.raises(TypeError, match="argument 'vector' must be float32 or float64, got bool"):
        sp.csrmv(w, idx, ptr, e, shape=(6, 8))
    with pytest.raises(ValueError, match="argument 'events' must be 1-D"):
        sp.event_csrmv(w, idx, ptr, np.ones((8, 1), bool), shape=(6, 8))
    with pytest.raises(ValueError, match="argument 'indices' must be 1-D"):
        sp.event_csrmv(w, idx.reshape(1, -1), ptr, e, shape=(6, 8))
    with pytest.raises(TypeError, match="'transpose' must be a bool"):
        sp.event_csrmv(w, idx, ptr, e, shape=(6, 8), transpose=1)


def test_value_errors(csr):
    w, idx, ptr, _ = csr
    e = np.ones(8, bool)
    bad = idx.copy()
    bad[3] = 8
    with pytest.raises(
        IndexError,
        match=r"event_csrmv\(\): argument 'indices' holds column index 8 at position 3, outside \[0, 8\)",
    ):
        sp.event_csrmv(w, bad, ptr, e, shape=(6, 8))
    bad[3] = -1
    with pytest.raises(IndexError, match="column index -1 at position 3"):
        sp.event_csrmv(w, bad, ptr, e, shape=(6, 8), transpose=True and False)
    p2 = ptr.copy()
    p2[-1] += 1
    with pytest.raises(
        ValueError, match=rf"argument 'indptr' must start at 0 and end at nnz = len\(indices\) = {len(idx)}"
    ):
        sp.event_csrmv(w, idx, p2, e, shape=(6, 8))
    p3 = ptr.copy()
    p3[2], p3[3] = p3[3] + 1, p3[2]
    with pytest.raises(ValueError, match=r"argument 'indptr' must be non-decreasing, got indptr\[2\]"):
        sp.event_csrmv(w, idx, p3, e, shape=(6, 8))
    p4 = ptr.copy()
    p4[0] = 1
    with pytest.raises(ValueError, match="must start at 0"):
        sp.event_csrmv(w, idx, p4, e, shape=(6, 8))
    big = idx.astype(np.int64)
    big[0] = 2**33  # would alias a valid index if truncated to 32 bits
    with pytest.raises(IndexError, match=f"column index {2**33}"):
        sp.event_csrmv(w, big, ptr, e, shape=(6, 8))
    with pytest.raises(ValueError, match="too large for int64"):
        sp.event_csrmv(w, idx.astype(np.uint64) + np.uint64(2**63), ptr, e, shape=(6, 8))


def test_values_are_checked_once_per_connectivity(csr, monkeypatch):
    w, idx, ptr, dense = csr
    e = np.ones(8, bool)
    calls = []
    real_diff = np.diff
    monkeypatch.setattr(_validate.np, "diff", lambda *a, **k: calls.append(1) or real_diff(*a, **k))
    sp.event_csrmv(w, idx, ptr, e, shape=(6, 8))
    assert len(calls) == 1  # checked...
    sp.event_csrmv(w, idx, ptr, e, shape=(6, 8), transpose=False)
    sp.csrmv(w, idx, ptr, np.ones(8), shape=(6, 8))
    assert len(calls) == 1  # ...and remembered for this pair of arrays
    # another array with bad values is caught even though it has the same shape
    bad = idx.copy()
    bad[0] = 100
    with pytest.raises(IndexError):
        sp.event_csrmv(w, bad, ptr, e, shape=(6, 8))
    # a different number of columns is a different check
    with pytest.raises(IndexError):
        sp.event_csrmv(w, idx, ptr, np.ones(3, bool), shape=(6, 3))
    # a new array at a recycled id is checked again (the weak references are dead)
    del bad
    again = idx.copy()
    again[1] = -3
    with pytest.raises(IndexError):
        sp.event_csrmv(w, again, ptr, e, shape=(6, 8))


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("blocks", [1, 2])
def test_kernels_never_write_outside_their_arrays(transpose, blocks):
    """Unvalidated garbage connectivity (as under jax.jit) must stay memory-safe."""
    m, n = 10, 12
    idx = np.array([0, -5, 11, 12, 2**31 - 1, -(2**31), 3, 1000, 5, 7], np.int32)
    ptr = np.array([0, 3, 2, 9, 10**6, -4, 10, 10, 3, 10, 10], np.int32)  # decreasing, beyond nnz, negative
    w = np.arange(1.0, 11.0, dtype=np.float32)
    x = np.ones(m if transpose else n, bool)
    n_out = n if transpose else m
    buf, out = guarded(n_out, np.float32)
    sbuf, scratch = guarded((blocks - 1) * n_out, np.float32)
    spec = _csr._OPS["event_csrmv"]._launcher("cpu").spec(
        [(_dtypes.float32, 1, False), (_dtypes.int32, 1, False), (_dtypes.int32, 1, False),
         (_dtypes.bool, 1, False), (_dtypes.float32, 1, False), (_dtypes.float32, 1, False)],
        (transpose,), serial=blocks == 1,
    )  # fmt: skip

    def arg(a):
        return (a.ctypes.data, a.nbytes, a.shape)

    spec.launch([arg(w), arg(idx), arg(ptr), arg(x), arg(out), arg(scratch)])
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(buf[:64], 12345.0)
    np.testing.assert_array_equal(buf[64 + n_out :], 12345.0)
    np.testing.assert_array_equal(sbuf[:64], 12345.0)
    np.testing.assert_array_equal(sbuf[64 + scratch.shape[0] :], 12345.0)


@pytest.mark.parametrize("blocks", [1, 2])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_never_reads_outside_the_vector(index_dtype, blocks):
    """A gather over unvalidated indices (as under jax.jit) reads only inside ``vector``.

    The vector sits between NaN sentinels: a single read outside it would make a NaN.
    Blocks of valid indices (read unclamped after their check) sit next to blocks with
    invalid ones (clamped), and one row is long enough to be checked in chunks."""
    from tiarray.operators.sparse import _csr_kernels

    rng = np.random.default_rng(5)
    n, cap = 50, _csr_kernels.GATHER_SYN
    bad = np.array([-1, n, n + 1, 2**31 - 1, -(2**31), 10**6], np.int64)
    rows = [rng.integers(0, n, 7), rng.integers(0, n, 3), bad[:3], rng.integers(0, n, 2 * cap + 5)]
    rows[3][cap + 9] = n  # one invalid index in the second chunk of the long row
    rows += [rng.integers(0, n, 4) for _ in range(40)]  # more blocks, all valid
    rows[20] = np.concatenate([rows[20], bad[3:]])
    idx = np.concatenate(rows).astype(index_dtype)  # every value fits in int32
    ptr = np.concatenate([[0], np.cumsum([len(r) for r in rows])]).astype(index_dtype)
    m = len(rows)
    w = rng.random(idx.shape[0]).astype(np.float32) + 0.5
    buf = np.full(n + 128, np.nan, np.float32)
    vec = buf[64 : 64 + n]
    vec[:] = rng.random(n)
    obuf, out = guarded(m, np.float32)
    dt_i = _dtypes.int32 if index_dtype == np.int32 else _dtypes.int64
    spec = _csr._OPS["csrmv"]._launcher("cpu").spec(
        [(_dtypes.float32, 1, False), (dt_i, 1, False), (dt_i, 1, False),
         (_dtypes.float32, 1, False), (_dtypes.float32, 1, False), (_dtypes.float32, 1, False)],
        (False,), serial=blocks == 1,
    )  # fmt: skip

    def arg(a):
        return (a.ctypes.data, a.nbytes, a.shape)

    scratch = np.zeros(0, np.float32)
    spec.launch([arg(w), arg(idx), arg(ptr), arg(vec), arg(out), arg(scratch)])
    assert np.isfinite(out).all()
    np.testing.assert_array_equal(obuf[:64], 12345.0)
    np.testing.assert_array_equal(obuf[64 + m :], 12345.0)
    # rows whose indices are all valid are exact, whatever their neighbours hold
    for r in (0, 1, 5, 30, m - 1):
        a, b = int(ptr[r]), int(ptr[r + 1])
        want = np.dot(w[a:b].astype(np.float64), vec[idx[a:b]].astype(np.float64))
        np.testing.assert_allclose(out[r], want, rtol=1e-5)


def test_sddmm_and_dense_errors(csr):
    w, idx, ptr, _ = csr
    with pytest.raises(
        ValueError, match=r"csr_sddmm\(\): argument 'a' must have length shape\[0\] = 6, got 5"
    ):
        sp.csr_sddmm(idx, ptr, np.ones(5), np.ones(8), shape=(6, 8))
    with pytest.raises(ValueError, match="same number of columns"):
        sp.csr_sddmm(idx, ptr, np.ones((6, 2)), np.ones((8, 3)), shape=(6, 8))
    with pytest.raises(TypeError, match=r"csr_from_dense\(\): argument 'dense' must be float32 or float64"):
        sp.csr_from_dense(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="must be 2-D"):
        sp.csr_from_dense(np.ones(3))
    with pytest.raises(TypeError, match="index_dtype"):
        sp.csr_from_dense(np.ones((2, 2)), index_dtype=np.int16)
    with pytest.raises(TypeError, match="index_dtype"):
        sp.fixed_prob_csr(3, 3, 0.5, 1, index_dtype=np.float32)


def test_in_place_weight_updates_are_seen(csr):
    w, idx, ptr, dense = csr
    e = np.ones(8, bool)
    for weights in (w.copy(), np.asarray([0.5]), np.asarray(0.5), w.copy()[::-1].copy()[::-1]):
        y0 = sp.event_csrmv(weights, idx, ptr, e, shape=(6, 8))
        weights *= 2  # plasticity: the same array, new values
        y1 = sp.event_csrmv(weights, idx, ptr, e, shape=(6, 8))
        np.testing.assert_allclose(y1, 2 * y0, rtol=1e-12)
    # a non-contiguous weight array is copied for the kernel: updates are still seen
    big = np.repeat(w, 2)
    view = big[::2]
    y0 = sp.event_csrmv(view, idx, ptr, e, shape=(6, 8))
    big *= 3
    np.testing.assert_allclose(sp.event_csrmv(view, idx, ptr, e, shape=(6, 8)), 3 * y0, rtol=1e-12)


def test_remembered_results_do_not_outlive_their_checks(csr):
    # issue 18: the validation cache was keyed on array identity and the shape tuple, so
    # (5.0, 7) passed after (5, 7), and arrays changed in place kept a stale result
    w, idx, ptr, _ = csr
    e = np.ones(6, bool)
    sp.event_csrmv(w, idx, ptr, e, shape=(6, 8), transpose=True)
    with pytest.raises(TypeError, match=r"event_csrmv\(\): argument 'shape' must be a pair of ints"):
        sp.event_csrmv(w, idx, ptr, e, shape=(6.0, 8), transpose=True)
    with pytest.raises(TypeError, match="argument 'shape' must be a pair of ints"):
        sp.event_csrmv(w, idx, ptr, e, shape=(6, 8.0), transpose=True)
    # a NumPy array reshaped in place is checked again
    w2 = w.copy()
    sp.event_csrmv(w2, idx, ptr, e, shape=(6, 8), transpose=True)
    w2.shape = (1, len(w))
    with pytest.raises(ValueError, match="argument 'weights' must have shape"):
        sp.event_csrmv(w2, idx, ptr, e, shape=(6, 8), transpose=True)


def test_torch_arrays_changed_in_place_are_checked_again(torch, csr):
    w, idx, ptr, dense = csr
    tw, ti_, tp = torch.as_tensor(w.copy()), torch.as_tensor(idx.copy()), torch.as_tensor(ptr.copy())
    e = torch.ones(6, dtype=torch.bool)
    ref = dense.T @ np.ones(6)
    np.testing.assert_allclose(
        sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True).cpu().numpy(), ref
    )
    tp.resize_(5)  # indptr shorter than shape[0] + 1: a stale result would read past its end
    with pytest.raises(ValueError, match=r"argument 'indptr' must have length shape\[0\] \+ 1 = 7, got 5"):
        sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True)
    tp.set_(torch.as_tensor(ptr.copy()))  # new storage: checked (and valid) again
    np.testing.assert_allclose(
        sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True).cpu().numpy(), ref
    )
    ti_[0] = 100  # an in-place write makes an index invalid: checked again
    with pytest.raises(IndexError, match="column index 100 at position 0"):
        sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True)
    ti_[0] = int(idx[0])
    tw.data = tw.data.to(torch.int32)  # a new dtype behind the same tensor object
    with pytest.raises(TypeError, match="argument 'weights' must be float32 or float64"):
        sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True)


def test_non_arrays_get_errors_naming_the_argument(csr):
    w, idx, ptr, dense = csr
    e = np.ones(6, bool)
    with pytest.raises(TypeError, match=r"event_csrmv\(\): argument 'events' must be an array, got None"):
        sp.event_csrmv(w, idx, ptr, None, shape=(6, 8), transpose=True)
    with pytest.raises(
        TypeError, match=r"argument 'events' must be an array of numbers or bools, got list holding str"
    ):
        sp.event_csrmv(w, idx, ptr, ["a"] * 6, shape=(6, 8), transpose=True)
    with pytest.raises(
        TypeError, match=r"argument 'weights' must be an array of numbers or bools, got list holding dict"
    ):
        sp.event_csrmv([{}] * len(idx), idx, ptr, e, shape=(6, 8), transpose=True)
    # lists are arrays like NumPy's, for weights as for indices and events (it raised
    # AttributeError for list weights)
    got = sp.event_csrmv(w.tolist(), idx.tolist(), ptr.tolist(), e.tolist(), shape=(6, 8), transpose=True)
    np.testing.assert_allclose(got, dense.T @ np.ones(6))
    got = sp.event_csrmv(w.tolist(), idx, ptr, e, shape=(6, 8), transpose=True)  # twice: the cache path
    np.testing.assert_allclose(got, dense.T @ np.ones(6))


def test_unsupported_operand_dtypes_name_the_function_and_argument():
    # object operands reached the dtype table's own error ("tiarray(): argument 'dtype' ...")
    v = np.ones(2, object)
    cases = [
        ("fcnmv", "vector", lambda: sp.fcnmv(np.float32(1), np.array([[0, 1]]), v, shape=(1, 2))),
        ("event_fcnmv", "events", lambda: sp.event_fcnmv(np.float32(1), np.array([[0, 1]]), v, shape=(1, 2))),
        ("coomv", "vector", lambda: sp.coomv(np.float32(1), np.array([0]), np.array([1]), v, shape=(1, 2))),
        (
            "csrmv",
            "vector",
            lambda: sp.csrmv(np.float32(1), np.array([1]), np.array([0, 1]), v, shape=(1, 2)),
        ),
    ]
    for func, arg, call in cases:
        with pytest.raises(
            TypeError, match=rf"^{func}\(\): argument '{arg}' has an unsupported dtype object"
        ):
            call()
    with pytest.raises(
        TypeError, match=r"fixed_num_conn\(\): argument 'index_dtype' must be int32 or int64, got 'foo'"
    ):
        sp.fixed_num_conn(5, 3, 2, 1, index_dtype="foo")


def test_torch_inference_tensors(torch, csr):
    # inference tensors have no version counter: reading it raised a raw RuntimeError from
    # every CSR operator's remembered check (2026-12-05)
    w, idx, ptr, dense = csr
    with torch.inference_mode():
        tw, ti_, tp = torch.as_tensor(w), torch.as_tensor(idx), torch.as_tensor(ptr)
        e = torch.as_tensor(np.arange(6) % 2 == 0)
        for _ in range(2):  # checked, then remembered
            got = sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True)
            np.testing.assert_allclose(got.numpy(), dense.T @ e.numpy(), rtol=1e-12)
            got = sp.csr_update_on_pre(tw, ti_, tp, e, torch.ones(8, dtype=tw.dtype), shape=(6, 8))
            rows = np.repeat(np.arange(6), np.diff(ptr))
            np.testing.assert_allclose(got.numpy(), w + e.numpy()[rows], rtol=1e-12)
        tp.resize_(5)  # changed in place: shape and strides are compared, as for NumPy arrays
        with pytest.raises(
            ValueError, match=r"argument 'indptr' must have length shape\[0\] \+ 1 = 7, got 5"
        ):
            sp.event_csrmv(tw, ti_, tp, e, shape=(6, 8), transpose=True)


@pytest.mark.parametrize("weights", ["per synapse", "shape (1,)"])
def test_validated_arrays_are_not_kept_alive(weights):
    """The memo of validated ``(weights, indices, indptr)`` holds them weakly. It held the
    validated result, so every array a product was called with stayed alive until 255 later
    calls pushed it out: a network's connectivity and weights per call (2026-12-05)."""
    import gc
    import weakref

    m, n = 40, 30
    rng = np.random.default_rng(3)
    refs = []
    for _ in range(3):
        w, idx, ptr, dense = random_csr(m, n, 0.2, rng, duplicates=False)
        if weights == "shape (1,)":
            w = np.array([0.5])
            dense = 0.5 * (dense != 0)  # one synapse per cell (no duplicates)
        refs += [weakref.ref(a) for a in (w, idx, ptr)]
        e = rng.random(m) < 0.5
        for _ in range(2):  # the second call is the memo's hit: the same result
            got = sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=True)
            np.testing.assert_allclose(got, dense.T @ e, rtol=1e-12, atol=1e-12)
        del w, idx, ptr, dense, got
    gc.collect()
    assert [r() is None for r in refs] == [True] * len(refs)
