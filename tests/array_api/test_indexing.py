"""Advanced indexing, ``take`` and ``take_along_axis`` against NumPy.

Keys are drawn at random from integer arrays (broadcast against each other, negative
values included), boolean masks, 0-d booleans, integers, slices, ``None`` and ``...``, in
any order, so that NumPy's rules for where the advanced axes go are exercised; arrays
come in every layout (strided, negative strides, transposed). Index arrays are given as
TiArrays, NumPy arrays or lists.
"""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from manip_strategies import ALL_DTYPES, INT_DTYPES, arrays, assert_same, fill

import tiarray as ta


def _to_key(data, key_np):
    """The same key for tiarray: arrays as TiArrays, NumPy arrays or lists."""
    out = []
    for k in key_np if isinstance(key_np, tuple) else (key_np,):
        if isinstance(k, np.ndarray):
            how = data.draw(st.sampled_from(["ta", "ta", "np", "list"]))
            if how == "ta":
                k = ta.asarray(k)
            elif how == "list" and k.ndim > 0 and k.size > 0:
                k = k.tolist()
        out.append(k)
    return tuple(out) if isinstance(key_np, tuple) else out[0]


@st.composite
def index_arrays(draw, n, bshape):
    """An integer index array broadcastable to ``bshape`` with values in [-n, n)."""
    shape = tuple(draw(st.sampled_from([1, s])) for s in bshape)
    shape = shape[draw(st.integers(0, len(shape))) :]
    dt = draw(st.sampled_from([np.int64, np.int32, np.int8, np.uint8, np.int16, np.uint16]))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    if n == 0:
        return np.zeros(shape, dtype=dt) if 0 in shape else None
    lo = 0 if np.dtype(dt).kind == "u" else -n
    hi = min(n, np.iinfo(dt).max + 1)
    lo = max(lo, np.iinfo(dt).min)
    v = rng.integers(lo, hi, size=shape).astype(dt)
    if v.ndim and draw(st.booleans()):
        v = v[..., ::-1] if v.shape[-1] else v  # a negative-stride index array
    return v


@st.composite
def keys(draw, shape):
    """A random advanced-indexing key for an array of ``shape`` (NumPy form)."""
    nd = len(shape)
    bshape = tuple(draw(st.integers(0, 3)) for _ in range(draw(st.integers(0, 2))))
    comps = []
    axis = 0
    used_ellipsis = False
    while axis < nd:
        kind = draw(
            st.sampled_from(["slice", "int", "arr", "arr", "mask", "none", "bool0", "ellipsis", "stop"])
        )
        n = shape[axis]
        if kind == "stop":
            break
        if kind == "slice":
            start = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            stop = draw(st.one_of(st.none(), st.integers(-n - 1, n + 1)))
            step = draw(st.sampled_from([None, 1, 2, -1, -2]))
            comps.append(slice(start, stop, step))
            axis += 1
        elif kind == "int":
            if n == 0:
                continue
            comps.append(draw(st.integers(-n, n - 1)))
            axis += 1
        elif kind == "arr":
            a = draw(index_arrays(n, bshape))
            if a is None:
                continue
            comps.append(a)
            axis += 1
        elif kind == "mask":
            k = draw(st.integers(1, nd - axis))
            rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
            comps.append(rng.random(shape[axis : axis + k]) < 0.5)
            axis += k
        elif kind == "none":
            comps.append(None)
        elif kind == "bool0":
            comps.append(
                draw(st.sampled_from([True, False, np.bool_(True), np.array(True), np.array(False)]))
            )
        elif kind == "ellipsis" and not used_ellipsis:
            used_ellipsis = True
            skip = draw(st.integers(0, nd - axis))
            comps.append(Ellipsis)
            axis += skip
    if not any(isinstance(c, np.ndarray) and c.ndim > 0 or isinstance(c, (bool, np.bool_)) for c in comps):
        # make it advanced
        comps.append(np.array([0], dtype=np.int64) if axis < nd and shape[axis] else np.array(True))
    return tuple(comps)


def _get_both(a, t, key_np, key_ta):
    try:
        e = a[key_np]
    except IndexError:
        with pytest.raises(IndexError):
            t[key_ta]
        return None
    r = t[key_ta]
    assert_same(r, e)
    return e


@given(st.data())
def test_getitem_advanced_random_keys(data):
    a, t = data.draw(arrays(max_dims=4, max_side=4))
    key = data.draw(keys(a.shape))
    _get_both(a, t, key, _to_key(data, key))


@given(st.data())
def test_getitem_integer_array_one_axis(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=3, min_side=1, max_side=6))
    axis = data.draw(st.integers(0, a.ndim - 1))
    bshape = tuple(data.draw(st.integers(0, 4)) for _ in range(data.draw(st.integers(1, 2))))
    idx = data.draw(index_arrays(a.shape[axis], bshape))
    key = (slice(None),) * axis + (idx,)
    assert_same(t[_to_key(data, key)], a[key])


@given(st.data())
def test_getitem_boolean_mask(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=4, max_side=4))
    k = data.draw(st.integers(1, a.ndim))
    start = data.draw(st.integers(0, a.ndim - k))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mask = rng.random(a.shape[start : start + k]) < data.draw(st.sampled_from([0.0, 0.3, 1.0]))
    if data.draw(st.booleans()) and mask.ndim:
        mask = np.flip(mask, axis=0)  # a non-contiguous mask
    key = (slice(None),) * start + (mask,)
    assert_same(t[_to_key(data, key)], a[key])
    assert_same(t[ta.asarray(mask)] if start == 0 else t[key[:-1] + (ta.asarray(mask),)], a[key])


@pytest.mark.parametrize(
    "shape, mshape",
    [((1,), (0,)), ((3,), (0,)), ((3, 4), (0,)), ((3, 4), (0, 4)), ((3, 4), (3, 0)), ((1, 2, 5), (0, 0))],
)
def test_boolean_mask_with_a_size_0_axis_selects_nothing(shape, mshape):
    """The standard: each mask axis has the array's size *or 0* (an IndexError otherwise);
    the reference is array-api-strict."""
    import array_api_strict as xps

    a = np.arange(float(np.prod(shape))).reshape(shape)
    m = np.zeros(mshape, dtype=bool)
    ref = xps.asarray(a)[xps.asarray(m)]
    t = ta.asarray(a.copy())
    got = t[ta.asarray(m)]
    assert got.shape == ref.shape and got.dtype == ta.float64
    t[ta.asarray(m)] = -1.0  # selects nothing: writes nothing
    np.testing.assert_array_equal(np.asarray(t), a)
    bad = tuple(d + 1 for d in shape[: len(mshape)])
    with pytest.raises(IndexError, match="the axis size or 0"):
        t[ta.asarray(np.zeros(bad, dtype=bool))]


def test_getitem_zero_d_booleans_and_python_bools():
    a = np.arange(24.0).reshape(2, 3, 4)
    t = ta.asarray(a)
    for key in [True, False, (True, [0, 1]), (slice(None), True, [0, 2]), (np.array(True),), (0, True),
                (Ellipsis, False), ([1, 0], True)]:  # fmt: skip
        assert_same(t[key], a[key])
    z = ta.asarray(np.float32(3.0))
    assert_same(z[True], np.float32(3.0)[True])
    assert_same(z[ta.asarray(False)], np.asarray(np.float32(3.0))[np.array(False)])


def test_getitem_numpy_placement_rules():
    b = np.arange(120).reshape(2, 3, 4, 5)
    t = ta.asarray(b)
    i3 = [0, 1, 2]
    cases = [
        (slice(None), i3, Ellipsis, i3, slice(None)),  # an Ellipsis between: advanced axes first
        (slice(None), i3, None, i3, slice(None)),  # None between: first
        (slice(None), 1, None, i3),  # int and array separated by None
        (slice(None), 1, i3),  # adjacent int and array: in place
        (0, slice(None), [0, 1]),  # separated by a slice: first
        (None, [0], 0),
        (slice(None), [[0], [2]], [1, 3]),
        (slice(None, None, -1), [2, 0]),
    ]
    for key in cases:
        assert_same(t[key], b[key])


@given(st.data())
def test_getitem_all_dtypes(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    a, t = data.draw(arrays(dtypes=[dtype], shape=(3, 4)))
    assert_same(t[[2, 0, -1]], a[[2, 0, -1]])
    assert_same(t[:, [1, 1]], a[:, [1, 1]])
    m = np.array([True, False, True])
    assert_same(t[m], a[m])


def test_getitem_large_mask_and_take_fast_paths():
    rng = np.random.default_rng(0)
    x = fill(rng, (300_001,), np.float32)
    m = x > 0.3
    t = ta.asarray(x)
    assert_same(t[ta.asarray(m)], x[m])
    idx = rng.integers(-x.size, x.size, size=200_000)
    assert_same(ta.take(t, ta.asarray(idx)), np.take(x, idx))
    x2 = fill(rng, (1000, 37), np.complex128)[:, ::2]
    m2 = rng.random(1000) < 0.5
    assert_same(ta.asarray(x2)[m2], x2[m2])


# ----------------------------------------------------------------------------- setitem


@given(st.data())
def test_setitem_advanced(data):
    a, _ = data.draw(
        arrays(min_dims=1, max_dims=3, max_side=4, dtypes=[np.float64, np.int32, np.complex64, np.bool_])
    )
    a = np.array(a)  # writable, contiguous
    kind = data.draw(st.sampled_from(["arr", "arr2", "mask", "mask_col", "mixed"]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    if kind == "arr" and a.shape[0]:
        idx = rng.permutation(a.shape[0])[: data.draw(st.integers(0, a.shape[0]))] - a.shape[0] * data.draw(
            st.integers(0, 1)
        )
        key = (idx,)
    elif kind == "arr2" and a.ndim >= 2 and a.shape[0] and a.shape[1]:
        k = min(a.shape[0], a.shape[1])
        key = (rng.permutation(a.shape[0])[:k], rng.permutation(a.shape[1])[:k])
    elif kind == "mask_col" and a.ndim >= 2:
        key = (slice(None), rng.random(a.shape[1]) < 0.5)
    elif kind == "mixed" and a.ndim >= 2 and a.shape[1]:
        key = (slice(None, None, -1), rng.permutation(a.shape[1])[:2])
    else:
        key = (rng.random(a.shape[: data.draw(st.integers(1, a.ndim))]) < 0.5,)
    target = a[key]
    vshape = target.shape[data.draw(st.integers(0, target.ndim)) :]
    if data.draw(st.booleans()) and vshape:
        vshape = (1,) + vshape[1:]
    value = fill(rng, vshape, a.dtype)
    if data.draw(st.booleans()) and not vshape:
        value = value.item()
    e = a.copy()
    e[key] = value
    t = ta.asarray(a.copy())
    t[_to_key(data, key)] = value if not isinstance(value, np.ndarray) else ta.asarray(value)
    assert_same(t, e)


def test_setitem_mask_fill_and_select():
    a = np.arange(24.0).reshape(4, 6)
    t = ta.asarray(a.copy())
    m = a > 10
    t[ta.asarray(m)] = -1.0
    e = a.copy()
    e[m] = -1.0
    assert_same(t, e)
    vals = np.arange(m.sum()) * 10.0
    t[m] = ta.asarray(vals)
    e[m] = vals
    assert_same(t, e)
    rows = np.array([True, False, True, False])
    t[rows] = ta.asarray(np.arange(6.0))
    e[rows] = np.arange(6.0)
    assert_same(t, e)


def test_setitem_overlapping_value_is_read_first():
    a = np.arange(10.0)
    t = ta.asarray(a.copy())
    t[[1, 2, 3, 4]] = t[0:4]
    e = a.copy()
    e[[1, 2, 3, 4]] = e[0:4].copy()
    assert_same(t, e)


def test_setitem_out_of_bounds_writes_nothing():
    t = ta.zeros(5)
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 0 with size 5"):
        t[[1, 7]] = 1.0
    assert t.tolist() == [0.0] * 5
    with pytest.raises(IndexError, match="out of bounds"):
        t[[1, -6]] = ta.asarray([1.0, 2.0])
    assert t.tolist() == [0.0] * 5
    t2 = ta.zeros((3, 3))
    with pytest.raises(IndexError, match="out of bounds"):
        t2[[0, 1], [0, 3]] = 1.0
    assert t2.tolist() == [[0.0] * 3] * 3


def test_setitem_errors():
    t = ta.zeros((3, 4))
    with pytest.raises(ValueError, match="argument 'value'"):
        t[[0, 1]] = ta.zeros(3)
    with pytest.raises(TypeError, match="complex"):
        t[[0]] = 1j
    ro = ta.broadcast_to(ta.zeros(4), (3, 4))
    with pytest.raises(ValueError, match="read-only"):
        ro[[0]] = 1.0


# ----------------------------------------------------------------------------- errors


def test_getitem_errors():
    t = ta.asarray(np.arange(12.0).reshape(3, 4))
    with pytest.raises(IndexError, match=r"argument 'key': index 3 is out of bounds for axis 0 with size 3"):
        t[[0, 3]]
    with pytest.raises(IndexError, match=r"index -5 is out of bounds for axis 1 with size 4"):
        t[:, [-5]]
    with pytest.raises(IndexError, match="float64 array"):
        t[ta.asarray([1.0])]
    with pytest.raises(IndexError, match="valid indices"):
        t[[0], 1.5]
    with pytest.raises(IndexError, match="boolean index did not match"):
        t[np.ones(4, dtype=bool)]
    with pytest.raises(IndexError, match="too many indices"):
        t[[0], [0], [0]]
    with pytest.raises(IndexError, match="one Ellipsis"):
        t[..., [0], ...]
    with pytest.raises(IndexError, match="could not be broadcast"):
        t[[0, 1], [0, 1, 2]]


# ----------------------------------------------------------------------------- take


@given(st.data())
def test_take(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=3, min_side=1, max_side=6))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    idx_np = np.asarray(
        data.draw(st.lists(st.integers(-n, n - 1), max_size=8)),
        dtype=data.draw(st.sampled_from([np.int64, np.int32, np.int16])),
    )
    if data.draw(st.booleans()) and idx_np.size > 1:
        idx_np = idx_np[::-1]
    r = ta.take(t, ta.asarray(idx_np), axis=axis)
    assert_same(r, np.take(a, idx_np, axis=axis))
    if a.ndim == 1:
        assert_same(ta.take(t, ta.asarray(idx_np)), np.take(a, idx_np))


def test_take_nd_indices_and_errors():
    a = np.arange(12).reshape(3, 4)
    t = ta.asarray(a)
    i = np.array([[0, -1], [2, 1]])
    assert_same(ta.take(t, ta.asarray(i), axis=1), np.take(a, i, axis=1))
    with pytest.raises(ValueError, match="'axis' is required"):
        ta.take(t, ta.asarray([0]))
    with pytest.raises(
        IndexError, match=r"take\(\): argument 'indices': index 4 is out of bounds for axis 1"
    ):
        ta.take(t, ta.asarray([0, 4]), axis=1)
    with pytest.raises(TypeError, match="integer dtype"):
        ta.take(t, ta.asarray([0.0]), axis=0)
    with pytest.raises(TypeError, match="TiArray of integers"):
        ta.take(t, [0], axis=0)
    with pytest.raises(IndexError, match="axis"):
        ta.take(t, ta.asarray([0]), axis=2)
    with pytest.raises(ValueError, match="at least one dimension"):
        ta.take(ta.asarray(1.0), ta.asarray([0]))


@given(st.data())
def test_take_along_axis(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=3, min_side=1, max_side=5))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    ishape = [data.draw(st.sampled_from([1, s])) for s in a.shape]
    ishape[axis] = data.draw(st.integers(0, 6))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    idx = rng.integers(-n, n, size=ishape).astype(data.draw(st.sampled_from(INT_DTYPES[:4])))
    r = ta.take_along_axis(t, ta.asarray(idx), axis=axis)
    assert_same(r, np.take_along_axis(a, idx, axis=axis))


def test_take_along_axis_sorts_with_argsort_and_errors():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 7))
    i = np.argsort(a, axis=1)
    assert_same(ta.take_along_axis(ta.asarray(a), ta.asarray(i), axis=1), np.sort(a, axis=1))
    t = ta.asarray(a)
    with pytest.raises(ValueError, match="as many dimensions"):
        ta.take_along_axis(t, ta.asarray([0]))
    with pytest.raises(IndexError, match="out of bounds for axis 1 with size 7"):
        ta.take_along_axis(t, ta.asarray(np.full((4, 1), 7)), axis=1)
    with pytest.raises(ValueError, match="do not broadcast"):
        ta.take_along_axis(t, ta.asarray(np.zeros((3, 1), dtype=np.int64)), axis=1)


def test_indexing_an_empty_axis_reads_nothing():
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        ta.take(ta.zeros(0), ta.asarray([0]))
    with pytest.raises(IndexError, match="out of bounds for axis 0 with size 0"):
        ta.zeros((0, 3))[[0]]
    with pytest.raises(IndexError, match="out of bounds"):
        ta.zeros((2, 0))[:, [-1]]
    assert_same(ta.zeros((0, 3))[:, [1, 2]], np.zeros((0, 2)))


@pytest.mark.parametrize(
    "key", [np.s_[:: 2**61], np.s_[:: -(2**62)], np.s_[3 :: 2**70], np.s_[:: 2**61, :: -(2**62)]]
)
def test_slices_with_huge_steps_read_back(key):
    """A step past 2**60 gave a one-element view whose byte stride overflowed int64: NumPy,
    copies and repr of it raised OverflowError (2026-12-05)."""
    a = np.arange(12.0).reshape(3, 4) if isinstance(key, tuple) else np.arange(10.0)
    v = ta.asarray(a)[key]
    np.testing.assert_array_equal(np.asarray(v), a[key])
    np.testing.assert_array_equal(np.asarray(ta.asarray(v, copy=True)), a[key])
    assert "TiArray" in repr(v)
