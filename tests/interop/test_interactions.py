"""Functions of different sections applied to each other's results, and the edge shapes
every function must take (0-d, zero-size), against array-api-strict (set to tiarray's
version, 2025.12).

The per-section suites test each function on random layouts; this file tests what falls
between them: operators on views made by the manipulation functions, reductions on
zero-stride (broadcast) views, sorting of negative-stride views, ``x[mask] = value`` with
the promotion rules, ``copy=``/``device=`` keywords, and the namespace-wide behaviour on
0-d and zero-size arrays.
"""

import array_api_strict as xps
import numpy as np
import pytest

import tiarray as ta

xps.set_array_api_strict_flags(api_version=ta.__array_api_version__)


def _same(got, want, rtol=1e-12):
    """A tiarray result against an array-api-strict result (arrays, tuples, scalars)."""
    if isinstance(want, (tuple, list)):
        assert type(got) is type(want), (type(got), type(want))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            _same(g, w, rtol)
        return
    assert isinstance(got, ta.TiArray), type(got)
    w = np.asarray(want)
    g = np.asarray(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype.name == str(want.dtype).split(".")[-1], (got.dtype, want.dtype)
    np.testing.assert_allclose(g, w, rtol=rtol, equal_nan=True) if w.dtype.kind in "fc" else (
        np.testing.assert_array_equal(g, w)
    )


def _both(f, *np_arrays):
    """Run ``f(xp, *arrays)`` with tiarray and with array-api-strict; results or the
    exception type must agree."""
    tx = [ta.asarray(a) for a in np_arrays]
    sx = [xps.asarray(a) for a in np_arrays]
    try:
        want = f(xps, *sx)
    except Exception as e:
        with pytest.raises(type(e)):
            f(ta, *tx)
        return
    _same(f(ta, *tx), want)


# ----------------------------------------------------------------------------- 0-d, zero-size

EDGE_SHAPES = [(), (0,), (2, 0), (0, 3), (1, 1)]

UNARY_EDGE = {
    "exp": lambda xp, x: xp.exp(x),
    "abs": lambda xp, x: xp.abs(x),
    "negative-op": lambda xp, x: -x,
    "add-scalar": lambda xp, x: x + 1.5,
    "matmul-T": lambda xp, x: x @ xp.matrix_transpose(x) if x.ndim >= 2 else x @ x,
    "sum": lambda xp, x: xp.sum(x),
    "sum-axis": lambda xp, x: xp.sum(x, axis=-1) if x.ndim else xp.sum(x, axis=()),
    "prod": lambda xp, x: xp.prod(x),
    "mean": lambda xp, x: xp.mean(x, axis=0) if x.ndim and x.shape[-1] else xp.mean(xp.ones(1)),
    "max-nonempty": lambda xp, x: (
        xp.max(x, axis=0) if x.ndim == 2 and x.shape[1] == 0 else xp.max(x[None, ...])
    ),
    "std": lambda xp, x: (
        xp.std(x, correction=0, axis=0) if x.ndim == 2 and x.shape[0] else xp.std(xp.ones(2))
    ),
    "cumulative_sum": lambda xp, x: (
        xp.cumulative_sum(x, axis=0) if x.ndim else xp.cumulative_sum(x[None, ...])
    ),
    "cumulative_prod-initial": lambda xp, x: xp.cumulative_prod(xp.reshape(x, (-1,)), include_initial=True),
    "diff": lambda xp, x: xp.diff(x, axis=-1) if x.ndim else xp.diff(x[None, ...]),
    "all": lambda xp, x: xp.all(x),
    "any-axis": lambda xp, x: xp.any(x, axis=0, keepdims=True) if x.ndim else xp.any(x),
    "count_nonzero": lambda xp, x: xp.count_nonzero(x),
    "argmax-axis": lambda xp, x: (
        xp.argmax(x, axis=1) if x.ndim == 2 and x.shape[1] else xp.argmax(x[None, ...])
    ),
    "nonzero": lambda xp, x: xp.nonzero(x) if x.ndim else xp.nonzero(x[None, ...]),
    "where": lambda xp, x: xp.where(x > 0, x, -x),
    "sort": lambda xp, x: xp.sort(x, axis=0) if x.ndim else xp.sort(x[None, ...]),
    "argsort-desc": lambda xp, x: xp.argsort(x, descending=True) if x.ndim else xp.argsort(x[None, ...]),
    "unique_values": lambda xp, x: xp.unique_values(x),
    "unique_counts": lambda xp, x: tuple(xp.unique_counts(x)),
    "searchsorted": lambda xp, x: xp.searchsorted(xp.sort(xp.reshape(x, (-1,))), x),
    "reshape": lambda xp, x: xp.reshape(x, (-1,)),
    "permute": lambda xp, x: xp.permute_dims(x, tuple(range(x.ndim))[::-1]),
    "flip": lambda xp, x: xp.flip(x),
    "roll": lambda xp, x: xp.roll(x, 1),
    "concat-none": lambda xp, x: xp.concat([x, x], axis=None),
    "stack": lambda xp, x: xp.stack([x, x], axis=-1),
    "expand_squeeze": lambda xp, x: xp.squeeze(xp.expand_dims(x, axis=0), axis=0),
    "broadcast_to": lambda xp, x: xp.broadcast_to(x, (2,) + x.shape),
    "tile": lambda xp, x: xp.tile(x, (2,) * max(x.ndim, 1)),
    "repeat": lambda xp, x: xp.repeat(xp.reshape(x, (-1,)), 2),
    "take": lambda xp, x: xp.take(xp.reshape(x, (-1,)), xp.asarray([], dtype=xp.int64)),
    "mask-get": lambda xp, x: x[x > 0],
    "astype": lambda xp, x: xp.astype(x, xp.float32),
    "clip": lambda xp, x: xp.clip(x, 0.0, 1.0),
    "tensordot-0": lambda xp, x: xp.tensordot(x, x, axes=0),
    "linalg.vector_norm": lambda xp, x: xp.linalg.vector_norm(x),
    "fft.fft": lambda xp, x: xp.fft.fft(xp.astype(xp.reshape(x, (-1,)), xp.complex128)),
}


@pytest.mark.parametrize("shape", EDGE_SHAPES, ids=str)
@pytest.mark.parametrize("name", sorted(UNARY_EDGE))
def test_edge_shapes_against_array_api_strict(name, shape):
    a = np.linspace(-1.5, 2.0, int(np.prod(shape))).reshape(shape)
    _both(UNARY_EDGE[name], a)


# ----------------------------------------------------------------------------- views + writes

O = np.arange(12.0).reshape(3, 4)
SQ = np.arange(9.0).reshape(3, 3)


def _write(f_ta, f_np, base):
    """Apply a writing operation to a TiArray and to a NumPy copy of the same data."""
    t, n = ta.asarray(base.copy()), base.copy()
    f_ta(t)
    f_np(n)
    np.testing.assert_array_equal(np.asarray(t), n)


def _iadd(a, b):
    a += b


def _imul(a, b):
    a *= b


def _isub(a, b):
    a -= b


def _imatmul(a, b):
    a @= b


def _set(a, key, v):
    a[key] = v


WRITES = {
    # in-place operators through views made by the manipulation functions
    "reshape view +=": (lambda t: _iadd(ta.reshape(t, (4, 3)), 1.0), lambda n: _iadd(n.reshape(4, 3), 1.0), O),
    "permute view *=": (lambda t: _imul(ta.permute_dims(t, (1, 0)), 2.0), lambda n: _imul(n.T, 2.0), O),
    "flip view +=": (lambda t: _iadd(ta.flip(t, axis=1), ta.asarray([1.0, 2.0, 3.0, 4.0])),
                     lambda n: _iadd(n[:, ::-1], np.array([1.0, 2.0, 3.0, 4.0])), O),
    "mT view -= bcast": (lambda t: _isub(t.mT, ta.broadcast_to(t[0][:, None], (4, 3))),
                         lambda n: _isub(n.T, np.broadcast_to(n[0][:, None], (4, 3)).copy()), O),
    "squeeze/expand view +=": (lambda t: _iadd(ta.squeeze(ta.expand_dims(t, axis=0), axis=0)[1], 5.0),
                               lambda n: _iadd(n[1], 5.0), O),
    # operands that overlap the written array with another layout
    "x += x.T": (lambda t: _iadd(t, t.T), lambda n: _iadd(n, n.T.copy()), SQ),
    "x[1:] += x[:-1]": (lambda t: _iadd(t[1:], t[:-1]), lambda n: _iadd(n[1:], n[:-1].copy()), SQ),
    "x @= x": (lambda t: _imatmul(t, t), lambda n: _iadd(n, n @ n - n), SQ),
    "x[1:] = x[:-1]": (lambda t: _set(t, slice(1, None), t[:-1]), lambda n: _set(n, slice(1, None), n[:-1]), SQ),
    "x[:, ::-1] = x": (lambda t: _set(t, (slice(None), slice(None, None, -1)), t),
                       lambda n: _set(n, (slice(None), slice(None, None, -1)), n.copy()), SQ),
    "x[...] = x.mT": (lambda t: _set(t, Ellipsis, ta.matrix_transpose(t)), lambda n: _set(n, Ellipsis, n.T.copy()), SQ),
    "flip(x)[...] = x": (lambda t: _set(ta.flip(t), Ellipsis, t), lambda n: _set(n[::-1, ::-1], Ellipsis, n.copy()), SQ),
    "reshape view shift": (lambda t: _set(ta.reshape(t, (9,)), slice(1, None), ta.reshape(t, (9,))[:-1] * 2),
                           lambda n: _set(n.reshape(9), slice(1, None), n.reshape(9)[:-1] * 2), SQ),
    # boolean masks and integer arrays with values made by other functions
    "x[mask] = flip(x)[mask]": (lambda t: _set(t, t > 3, ta.flip(t)[t > 3]),
                                lambda n: _set(n, n > 3, n[::-1, ::-1][n > 3]), SQ),
    "x[mask] = sort(...)": (lambda t: _set(t, t > 5, ta.sort(ta.asarray([9.0, 7.0, 8.0]))),
                            lambda n: _set(n, n > 5, np.sort([9.0, 7.0, 8.0])), SQ),
    "x[mask] = python int": (lambda t: _set(t, t < 2, 7), lambda n: _set(n, n < 2, 7), SQ),
    "x[int array] = x[int array]": (lambda t: _set(t, ta.asarray([2, 0]), t[ta.asarray([0, 2])]),
                                    lambda n: _set(n, [2, 0], n[[0, 2]]), SQ),
    "permute view[1:3] = row": (lambda t: _set(ta.permute_dims(t, (1, 0)), slice(1, 3), ta.asarray([1.0, 2.0, 3.0])),
                                lambda n: _set(n.T, slice(1, 3), np.array([1.0, 2.0, 3.0])), O),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(WRITES))
def test_writes_through_views_and_overlaps(name):
    f_ta, f_np, base = WRITES[name]
    _write(f_ta, f_np, base)


def test_broadcast_views_are_read_only():
    b = ta.broadcast_to(ta.asarray([1.0, 2.0]), (3, 2))
    with pytest.raises(ValueError, match=r"__iadd__.*read-only \(a broadcast view"):
        b += 1.0
    with pytest.raises(ValueError, match=r"__setitem__.*read-only \(a broadcast view"):
        b[0] = 1.0
    x, y = ta.broadcast_arrays(ta.asarray([[1.0], [2.0]]), ta.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(ValueError, match="read-only"):
        x[0, 0] = 5.0


def test_broadcast_arrays_returns_the_sequence_type_of_the_version():
    tx = ta.broadcast_arrays(ta.asarray([[1.0], [2.0]]), ta.asarray([1.0, 2.0, 3.0]))
    sx = xps.broadcast_arrays(xps.asarray([[1.0], [2.0]]), xps.asarray([1.0, 2.0, 3.0]))
    _same(tx, sx)


# ----------------------------------------------------------------------------- reductions and sorting on views

ROW = np.array([3.0, -1.0, 2.0, np.nan, 0.5])


def _bcast(xp, x):
    return xp.broadcast_to(x, (7,) + x.shape)  # a zero stride on axis 0


VIEW_FUNCS = {
    "sum bcast axis0": lambda xp, x: xp.sum(_bcast(xp, x), axis=0),
    "max bcast axis1": lambda xp, x: xp.max(_bcast(xp, x), axis=1),
    "min bcast all": lambda xp, x: xp.min(_bcast(xp, x)),
    "prod bcast keepdims": lambda xp, x: xp.prod(_bcast(xp, x), axis=(0, 1), keepdims=True),
    "mean bcast": lambda xp, x: xp.mean(_bcast(xp, x), axis=0),
    "var bcast": lambda xp, x: xp.var(_bcast(xp, x), axis=0, correction=1),
    "argmax bcast": lambda xp, x: xp.argmax(_bcast(xp, xp.where(xp.isnan(x), 0.0, x)), axis=1),
    "cumulative_sum bcast": lambda xp, x: xp.cumulative_sum(_bcast(xp, x), axis=0),
    "cumulative_prod flip": lambda xp, x: xp.cumulative_prod(xp.flip(x), include_initial=True),
    "sort flip": lambda xp, x: xp.sort(xp.flip(x)),
    "sort flip descending": lambda xp, x: xp.sort(xp.flip(x), descending=True),
    "argsort flip stable": lambda xp, x: xp.argsort(xp.flip(xp.round(x)), stable=True),
    "sort bcast axis0": lambda xp, x: xp.sort(_bcast(xp, x), axis=0),
    "sort permuted": lambda xp, x: xp.sort(xp.permute_dims(_bcast(xp, x), (1, 0)), axis=0),
    "searchsorted flip": lambda xp, x: xp.searchsorted(xp.sort(xp.flip(x)), xp.flip(x), side="right"),
    "unique flip": lambda xp, x: xp.unique_values(xp.flip(xp.where(xp.isnan(x), 1.0, x))),
    "nonzero flip": lambda xp, x: xp.nonzero(xp.flip(_bcast(xp, x) > 0.7, axis=1)),
    "count_nonzero bcast": lambda xp, x: xp.count_nonzero(_bcast(xp, x), axis=1),
    "diff flip": lambda xp, x: xp.diff(xp.flip(x), n=2),
    "matmul bcast": lambda xp, x: xp.matmul(_bcast(xp, xp.where(xp.isnan(x), 0.0, x)), xp.flip(xp.ones(5))),
    "take flip": lambda xp, x: xp.take(xp.flip(x), xp.asarray([4, 0, 2])),
    "take_along_axis argsort": lambda xp, x: xp.take_along_axis(
        _bcast(xp, x), xp.argsort(_bcast(xp, x), axis=1), axis=1
    ),
    "concat flip bcast": lambda xp, x: xp.concat([xp.flip(x), _bcast(xp, x)[0, ...]]),
    "stack permuted": lambda xp, x: xp.stack([xp.permute_dims(_bcast(xp, x), (1, 0))] * 2, axis=1),
    "mask of a bcast": lambda xp, x: _bcast(xp, x)[_bcast(xp, x) > 0],
}


@pytest.mark.parametrize("name", sorted(VIEW_FUNCS))
def test_functions_on_views_made_by_other_functions(name):
    _both(VIEW_FUNCS[name], ROW)


# ----------------------------------------------------------------------------- copy= and device=


def test_copy_keywords():
    a = np.arange(6.0).reshape(2, 3)
    x = ta.asarray(a)
    assert np.shares_memory(np.asarray(ta.asarray(x, copy=False)), a)
    assert not np.shares_memory(np.asarray(ta.asarray(x, copy=True)), a)
    # astype: copy=False returns the array itself when nothing changes, also for a view
    assert ta.astype(x, ta.float64, copy=False) is x
    v = x.T
    assert ta.astype(v, ta.float64, copy=False) is v
    c = ta.astype(v, ta.float64)  # copy=True by default
    assert not np.shares_memory(np.asarray(c), a) and np.array_equal(np.asarray(c), a.T)
    assert ta.astype(x, ta.float32, copy=False).dtype == ta.float32  # a cast copies anyway
    # reshape: a view, a copy on request, and copy=False refuses what needs one
    assert np.shares_memory(np.asarray(ta.reshape(x, (3, 2))), a)
    assert not np.shares_memory(np.asarray(ta.reshape(x, (3, 2), copy=True)), a)
    with pytest.raises(ValueError, match=r"reshape\(\).*copy=False"):
        ta.reshape(x.T, (6,), copy=False)
    with pytest.raises(ValueError, match=r"asarray\(\).*copy=False"):
        ta.asarray([1.0, 2.0], copy=False)
    y = ta.from_dlpack(a, copy=True)
    assert not np.shares_memory(np.asarray(y), a)


def test_device_keywords_everywhere_the_standard_has_them():
    info = ta.__array_namespace_info__()
    dev = info.default_device()
    x = ta.asarray([1.0, 2.0])
    made = {
        "asarray": ta.asarray([1, 2], device=dev),
        "arange": ta.arange(3, device=dev),
        "empty": ta.empty(2, device=dev),
        "empty_like": ta.empty_like(x, device=dev),
        "eye": ta.eye(2, device=dev),
        "from_dlpack": ta.from_dlpack(np.ones(2), device=dev),
        "full": ta.full(2, 3.0, device=dev),
        "full_like": ta.full_like(x, 3.0, device=dev),
        "linspace": ta.linspace(0, 1, 3, device=dev),
        "ones": ta.ones(2, device=dev),
        "ones_like": ta.ones_like(x, device=dev),
        "zeros": ta.zeros(2, device=dev),
        "zeros_like": ta.zeros_like(x, device=dev),
        "astype": ta.astype(x, ta.float32, device=dev),
        "fft.fftfreq": ta.fft.fftfreq(4, device=dev),
        "fft.rfftfreq": ta.fft.rfftfreq(4, device=dev),
        "to_device": x.to_device(dev),
    }
    for name, r in made.items():
        assert r.device == dev, name
    assert x.to_device(dev) is x
    for name, f in {
        "zeros": lambda: ta.zeros(2, device="tpu"),
        "astype": lambda: ta.astype(x, ta.float32, device="tpu"),
        "fft.fftfreq": lambda: ta.fft.fftfreq(4, device="tpu"),
        "to_device": lambda: x.to_device("tpu"),
        "info.dtypes": lambda: info.dtypes(device="tpu"),
    }.items():
        with pytest.raises(ValueError, match="tpu"):
            f()
        assert name


def test_capabilities_are_honest():
    caps = ta.__array_namespace_info__().capabilities()
    assert caps["boolean indexing"] and caps["data-dependent shapes"]
    x = ta.asarray([3.0, -1.0, 2.0])
    assert x[x > 0].shape == (2,)  # boolean indexing
    assert ta.nonzero(x > 0)[0].shape == (2,) and ta.unique_values(x).shape == (3,)  # data-dependent shapes
    n = caps["max dimensions"]
    big = ta.ones((1,) * (n - 1) + (2,))
    assert big.ndim == n
    assert float(ta.sum(big + big)) == 4.0
    assert ta.sort(ta.permute_dims(big, tuple(range(n))[::-1]), axis=0).shape == (2,) + (1,) * (n - 1)
    assert ta.reshape(big, (2,)).shape == (2,)


# ----------------------------------------------------------------------------- dtype= of reductions and astype


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "uint32", "uint64", "int8", "int32", "int64"])
def test_reduction_dtype_casts_as_astype_does(dtype):
    # found by HYPOTHESIS_PROFILE=thorough: sum(float32 [-2, 0], dtype=uint16) gave 65535
    # (the kernel's on-the-fly cast saturated) where astype gives 65534 (NumPy's wrap)
    a = np.array([[-2.0, 0.5, -1.0], [3.7, -3.7, 100.0]], np.float32)
    x, d = ta.asarray(a), getattr(ta, dtype)
    cast = a.astype(dtype)  # in range of int64: NumPy truncates and wraps
    np.testing.assert_array_equal(np.asarray(ta.astype(x, d)), cast)
    np.testing.assert_array_equal(np.asarray(ta.sum(x, axis=1, dtype=d)), cast.sum(axis=1, dtype=dtype))
    np.testing.assert_array_equal(np.asarray(ta.prod(x.T, axis=0, dtype=d)), cast.T.prod(axis=0, dtype=dtype))
    np.testing.assert_array_equal(
        np.asarray(ta.cumulative_sum(ta.flip(x, axis=1), axis=1, dtype=d)),
        np.cumsum(cast[:, ::-1], axis=1, dtype=dtype),
    )


# ----------------------------------------------------------------------------- NumPy operands


def test_operators_take_numpy_operands_alike():
    # every binary operator converts a NumPy operand (zero-copy) the same way; @ refused
    # one where + took it
    a = np.arange(6.0).reshape(2, 3)
    m = np.linspace(-1.0, 1.0, 6).reshape(3, 2)
    x = ta.asarray(a)
    for got, want in [
        (x + m.T, a + m.T),
        (m.T - x, m.T - a),
        (x @ m, a @ m),
        (m @ x, m @ a),
        (x * np.float32(2.0), a * 2.0),
    ]:
        assert isinstance(got, ta.TiArray)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-15)
    y = ta.asarray(np.eye(3))
    y @= 2.0 * np.eye(3)
    np.testing.assert_array_equal(np.asarray(y), 2.0 * np.eye(3))
    with pytest.raises(ValueError, match="matmul"):
        x @ m.T


def test_creation_takes_numpy_scalars():
    # generic code computes fill values with NumPy (np.float32(...), np.int64(...))
    for v, dt in [(np.float32(1.5), ta.float64), (np.int64(3), ta.int64), (np.bool_(True), ta.bool)]:
        t = ta.full((2,), v)
        assert t.dtype == dt and np.asarray(t).tolist() == [v.item()] * 2
    assert ta.full_like(ta.zeros(2, dtype=ta.float32), np.float64(2.5)).dtype == ta.float32
    with pytest.raises(TypeError, match="fill_value"):
        ta.full(2, np.datetime64("2020-01-01"))
