"""Manipulation functions against NumPy, on random shapes, dtypes and memory layouts.

Views are checked to be views: the result shares the input's memory (pointer equality
or ``np.shares_memory``) and a write through the input is visible in the result.
"""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from manip_strategies import ALL_DTYPES, arrays, assert_same, fill, shares

import tiarray as ta


def _writable_copy(a):
    """A writable C-contiguous NumPy array and a TiArray view of it."""
    b = np.array(a, copy=True)
    return b, ta.asarray(b)


# ----------------------------------------------------------------------------- broadcasting


@st.composite
def broadcastable(draw):
    a, t = draw(arrays(max_dims=3, max_side=4))
    extra = draw(st.lists(st.integers(0, 3), max_size=2))
    target = list(extra) + [s if s != 1 else draw(st.integers(0, 3)) for s in a.shape]
    return a, t, tuple(target)


@given(broadcastable())
def test_broadcast_to(case):
    a, t, shape = case
    r = ta.broadcast_to(t, shape)
    assert_same(r, np.broadcast_to(a, shape))
    assert r.base is t.base
    if r.size:
        assert shares(r, a)
        expanded = math.prod(shape) > a.size
        assert r.readonly == (expanded or t.readonly)


def test_broadcast_to_errors():
    t = ta.asarray(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="broadcast_to"):
        ta.broadcast_to(t, (3, 3))
    with pytest.raises(ValueError, match="broadcast_to"):
        ta.broadcast_to(t, (3,))
    with pytest.raises(TypeError, match="argument 'x'"):
        ta.broadcast_to(np.zeros(3), (3,))


@given(st.data())
def test_broadcast_arrays(data):
    a, t = data.draw(arrays(max_dims=3, max_side=3))
    shape = tuple(data.draw(st.sampled_from([1, s])) for s in a.shape)
    b, u = data.draw(arrays(shape=shape))
    res = ta.broadcast_arrays(t, u)
    exp = np.broadcast_arrays(a, b)
    assert type(res) is tuple and len(res) == 2  # a tuple in 2025.12 (a list in 2024.12)
    for r, e in zip(res, exp):
        assert_same(r, e)
    assert res[0].base is t.base and res[1].base is u.base


def test_broadcast_arrays_errors():
    with pytest.raises(ValueError, match="broadcast_arrays"):
        ta.broadcast_arrays(ta.zeros((2, 3)), ta.zeros((4,)))


@given(st.lists(st.lists(st.integers(0, 3), max_size=4).map(tuple), max_size=5))
def test_broadcast_shapes_matches_numpy(shapes):
    """broadcast_shapes (2025.12) against numpy.broadcast_shapes, compatible or not."""
    try:
        want = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(ValueError, match="broadcast_shapes.*cannot be broadcast"):
            ta.broadcast_shapes(*shapes)
        return
    got = ta.broadcast_shapes(*shapes)
    assert type(got) is tuple and got == want
    assert ta.broadcast_shapes(*map(list, shapes)) == want  # lists are shapes too


def test_broadcast_shapes_errors():
    assert ta.broadcast_shapes() == ()
    with pytest.raises(TypeError, match=r"broadcast_shapes\(\): argument 0 must be a tuple of ints, got int"):
        ta.broadcast_shapes(3)
    with pytest.raises(TypeError, match="broadcast_shapes.*'shapes\\[1\\]' must be an int, got 2.0"):
        ta.broadcast_shapes((1,), (2.0,))
    with pytest.raises(ValueError, match="broadcast_shapes.*argument 0 must have non-negative sizes"):
        ta.broadcast_shapes((-1, 2))


# ----------------------------------------------------------------------------- views


@given(st.data())
def test_expand_dims(data):
    a, t = data.draw(arrays(max_dims=3))
    k = data.draw(st.integers(1, 3))
    m = a.ndim + k
    axes = data.draw(st.lists(st.integers(-m, m - 1), min_size=k, max_size=k, unique_by=lambda v: v % m))
    axis = axes[0] if k == 1 and data.draw(st.booleans()) else tuple(axes)
    r = ta.expand_dims(t, axis=axis)
    assert_same(r, np.expand_dims(a, axis))
    assert r.ptr == t.ptr and r.base is t.base
    assert ta.expand_dims(t, axis).shape == r.shape  # positional (the newer signature)


def test_expand_dims_errors():
    t = ta.zeros((2, 3))
    with pytest.raises(IndexError, match="expand_dims"):
        ta.expand_dims(t, axis=3)
    with pytest.raises(IndexError, match="expand_dims"):
        ta.expand_dims(t, axis=-4)
    with pytest.raises(ValueError, match="repeated"):
        ta.expand_dims(t, axis=(0, -4))
    with pytest.raises(TypeError, match="axis"):
        ta.expand_dims(t, axis=1.0)


@given(st.data())
def test_flip(data):
    a, t = data.draw(arrays(max_dims=4))
    if a.ndim and data.draw(st.booleans()):
        axis = tuple(data.draw(st.lists(st.integers(0, a.ndim - 1), unique=True, min_size=1)))
        if len(axis) == 1 and data.draw(st.booleans()):
            axis = axis[0] - a.ndim
    else:
        axis = None
    r = ta.flip(t, axis=axis)
    assert_same(r, np.flip(a, axis))
    assert r.base is t.base
    if a.size:
        assert shares(r, a)


def test_flip_is_a_view_that_sees_writes():
    b, t = _writable_copy(np.arange(12.0).reshape(3, 4))
    r = ta.flip(t, axis=1)
    b[0, 0] = 100.0
    assert np.asarray(r)[0, -1] == 100.0
    assert np.asarray(r).strides == (32, -8)


@given(st.data())
def test_permute_dims_and_moveaxis(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=4))
    perm = tuple(data.draw(st.permutations(range(a.ndim))))
    r = ta.permute_dims(t, perm)
    assert_same(r, np.transpose(a, perm))
    assert r.ptr == t.ptr and r.base is t.base
    k = data.draw(st.integers(1, a.ndim))
    src = data.draw(st.lists(st.integers(0, a.ndim - 1), unique=True, min_size=k, max_size=k))
    dst = data.draw(
        st.lists(st.integers(-a.ndim, a.ndim - 1), unique_by=lambda v: v % a.ndim, min_size=k, max_size=k)
    )
    r = ta.moveaxis(t, tuple(src), tuple(dst))
    assert_same(r, np.moveaxis(a, src, dst))
    assert r.ptr == t.ptr
    r = ta.moveaxis(t, src[0], dst[0])
    assert_same(r, np.moveaxis(a, src[0], dst[0]))


def test_permute_dims_errors():
    t = ta.zeros((2, 3, 4))
    with pytest.raises(ValueError, match="permute_dims"):
        ta.permute_dims(t, (0, 1))
    with pytest.raises(ValueError, match="repeated"):
        ta.permute_dims(t, (0, 1, 1))
    with pytest.raises(IndexError, match="permute_dims"):
        ta.permute_dims(t, (0, 1, 3))
    with pytest.raises(ValueError, match="same number"):
        ta.moveaxis(t, (0, 1), (0,))


@given(st.data())
def test_squeeze(data):
    nd = data.draw(st.integers(1, 4))
    shape = tuple(data.draw(st.sampled_from([1, 1, 2, 3, 0])) for _ in range(nd))
    a, t = data.draw(arrays(shape=shape))
    ones = [i for i, s in enumerate(shape) if s == 1]
    if not ones:
        with pytest.raises(ValueError, match="squeeze"):
            ta.squeeze(t, axis=[i for i, s in enumerate(shape) if s != 1][0])
        return
    axes = tuple(data.draw(st.lists(st.sampled_from(ones), unique=True, min_size=1)))
    r = ta.squeeze(t, axis=axes if len(axes) > 1 else axes[0])
    assert_same(r, np.squeeze(a, axes))
    assert r.ptr == t.ptr


@given(st.data())
def test_unstack(data):
    a, t = data.draw(arrays(min_dims=1, max_dims=3))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    res = ta.unstack(t, axis=axis)
    assert isinstance(res, tuple) and len(res) == a.shape[axis]
    for i, r in enumerate(res):
        assert_same(r, np.take(a, i, axis=axis))
        if r.size:
            assert shares(r, a)


def test_unstack_errors():
    with pytest.raises(ValueError, match="unstack"):
        ta.unstack(ta.asarray(1.0))
    with pytest.raises(IndexError, match="unstack"):
        ta.unstack(ta.zeros((2, 3)), axis=2)


# ----------------------------------------------------------------------------- reshape


@given(st.data())
def test_reshape(data):
    a, t = data.draw(arrays(max_dims=4, max_side=4))
    n = a.size
    # a random factorisation of the size, maybe with a -1
    dims = []
    rest = n
    for _ in range(data.draw(st.integers(0, 3))):
        divs = [d for d in range(1, rest + 1) if rest % d == 0] if rest else [0, 1, 2]
        d = data.draw(st.sampled_from(divs))
        dims.append(d)
        rest = rest // d if d else rest
    dims.append(rest if 0 not in dims else data.draw(st.integers(0, 3)))
    shape = tuple(dims)
    if math.prod(shape) != n:
        with pytest.raises(ValueError, match="reshape"):
            ta.reshape(t, shape)
        return
    if n and data.draw(st.booleans()):
        i = data.draw(st.integers(0, len(shape) - 1))
        shape = shape[:i] + (-1,) + shape[i + 1 :]
    expected = np.reshape(a, shape)
    r = ta.reshape(t, shape)
    assert_same(r, expected)
    view_possible = np.shares_memory(expected, a) or a.size == 0
    if t.is_contiguous:
        assert r.ptr == t.ptr
    if view_possible and a.size:
        assert shares(r, a)
        r2 = ta.reshape(t, shape, copy=False)
        assert_same(r2, expected)
    if not view_possible:
        with pytest.raises(ValueError, match="copy=False"):
            ta.reshape(t, shape, copy=False)
    c = ta.reshape(t, shape, copy=True)
    assert_same(c, expected)
    if a.size:
        assert not shares(c, a)


def test_reshape_errors():
    t = ta.zeros((2, 3))
    with pytest.raises(ValueError, match="only one -1"):
        ta.reshape(t, (-1, -1))
    with pytest.raises(ValueError, match="cannot reshape"):
        ta.reshape(t, (4, -1))
    with pytest.raises(ValueError, match="copy"):
        ta.reshape(t, (6,), copy="yes")
    with pytest.raises(TypeError, match="shape"):
        ta.reshape(t, "6")


# ----------------------------------------------------------------------------- copies


@given(st.data())
def test_concat(data):
    dtype = data.draw(st.sampled_from(ALL_DTYPES))
    nd = data.draw(st.integers(1, 3))
    base = [data.draw(st.integers(0, 3)) for _ in range(nd)]
    axis = data.draw(st.integers(-nd, nd - 1))
    parts = []
    for _ in range(data.draw(st.integers(1, 3))):
        shape = list(base)
        shape[axis] = data.draw(st.integers(0, 3))
        parts.append(data.draw(arrays(dtypes=[dtype], shape=tuple(shape))))
    r = ta.concat(tuple(t for _, t in parts), axis=axis)
    assert_same(r, np.concatenate([a for a, _ in parts], axis=axis))
    r = ta.concat([t for _, t in parts], axis=None)
    assert_same(r, np.concatenate([a.reshape(-1) for a, _ in parts]))


@pytest.mark.parametrize(
    "d1, d2, expected",
    [("int8", "int16", "int16"), ("uint8", "int8", "int16"), ("float32", "float64", "float64"),
     ("complex64", "float64", "complex128"), ("bool", "bool", "bool"), ("uint32", "int64", "int64")],
)  # fmt: skip
def test_concat_and_stack_promote(d1, d2, expected):
    a = np.ones((2, 2), dtype=d1)
    b = np.zeros((2, 2), dtype=d2)
    r = ta.concat((ta.asarray(a), ta.asarray(b)))
    assert r.dtype.name == expected
    assert_same(r, np.concatenate((a, b)).astype(expected))
    r = ta.stack((ta.asarray(a), ta.asarray(b)), axis=1)
    assert r.dtype.name == expected
    assert_same(r, np.stack((a, b), axis=1).astype(expected))


def test_concat_errors():
    with pytest.raises(ValueError, match="at least one"):
        ta.concat(())
    with pytest.raises(TypeError, match="tuple or list"):
        ta.concat(ta.zeros(3))
    with pytest.raises(ValueError, match="shapes must match"):
        ta.concat((ta.zeros((2, 3)), ta.zeros((2, 4))), axis=0)
    with pytest.raises(ValueError, match="number of dimensions"):
        ta.concat((ta.zeros((2, 3)), ta.zeros(3)))
    with pytest.raises(ValueError, match="0-d"):
        ta.concat((ta.asarray(1.0), ta.asarray(2.0)))
    with pytest.raises(TypeError, match="no common type"):
        ta.concat((ta.zeros(2, dtype=ta.uint64), ta.zeros(2, dtype=ta.int64)))


@given(st.data())
def test_stack(data):
    a0, t0 = data.draw(arrays(max_dims=3))
    parts = [(a0, t0)] + [
        data.draw(arrays(dtypes=[a0.dtype.type], shape=a0.shape)) for _ in range(data.draw(st.integers(0, 2)))
    ]
    axis = data.draw(st.integers(-a0.ndim - 1, a0.ndim))
    r = ta.stack([t for _, t in parts], axis=axis)
    assert_same(r, np.stack([a for a, _ in parts], axis=axis))


def test_stack_errors():
    with pytest.raises(ValueError, match="same shape"):
        ta.stack((ta.zeros(2), ta.zeros(3)))
    with pytest.raises(IndexError, match="stack"):
        ta.stack((ta.zeros(2), ta.zeros(2)), axis=2)


@given(st.data())
def test_tile(data):
    a, t = data.draw(arrays(max_dims=3, max_side=3))
    reps = tuple(data.draw(st.lists(st.integers(0, 3), max_size=4)))
    r = ta.tile(t, reps)
    assert_same(r, np.tile(a, reps))


def test_tile_errors():
    with pytest.raises(ValueError, match="non-negative"):
        ta.tile(ta.zeros(2), (-1,))


@given(st.data())
def test_roll(data):
    a, t = data.draw(arrays(max_dims=4))
    if a.ndim == 0 or data.draw(st.booleans()):
        shift = data.draw(st.integers(-20, 20))
        assert_same(ta.roll(t, shift), np.roll(a, shift))
        return
    k = data.draw(st.integers(1, 5))
    axes = tuple(data.draw(st.lists(st.integers(-a.ndim, a.ndim - 1), min_size=k, max_size=k)))
    if data.draw(st.booleans()):
        shift = tuple(data.draw(st.lists(st.integers(-9, 9), min_size=k, max_size=k)))
    else:
        shift = data.draw(st.integers(-9, 9))
    assert_same(ta.roll(t, shift, axis=axes), np.roll(a, shift, axis=axes))
    assert_same(ta.roll(t, 3, axis=axes[0]), np.roll(a, 3, axis=axes[0]))


def test_roll_errors():
    with pytest.raises(ValueError, match="same length"):
        ta.roll(ta.zeros((2, 2)), (1, 2), axis=(0,))
    with pytest.raises(TypeError, match="shift"):
        ta.roll(ta.zeros(3), (1,))


@given(st.data())
def test_repeat(data):
    a, t = data.draw(arrays(max_dims=3, max_side=4))
    axis = None if a.ndim == 0 or data.draw(st.booleans()) else data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.size if axis is None else a.shape[axis]
    choice = data.draw(st.sampled_from(["int", "array", "array1"]))
    if choice == "int":
        reps = data.draw(st.integers(0, 3))
        r = ta.repeat(t, reps, axis=axis)
        e = np.repeat(a, reps, axis=axis)
    else:
        k = n if choice == "array" else 1
        rep_np = np.asarray(data.draw(st.lists(st.integers(0, 3), min_size=k, max_size=k)), dtype=np.int64)
        r = ta.repeat(t, ta.asarray(rep_np), axis=axis)
        e = np.repeat(a, rep_np, axis=axis)
    assert_same(r, e)


def test_repeat_errors():
    t = ta.asarray([1, 2, 3])
    with pytest.raises(ValueError, match="non-negative"):
        ta.repeat(t, -1)
    with pytest.raises(ValueError, match="negative"):
        ta.repeat(t, ta.asarray([1, -1, 2]))
    with pytest.raises(ValueError, match="one count per element"):
        ta.repeat(t, ta.asarray([1, 2]))
    with pytest.raises(TypeError, match="integer dtype"):
        ta.repeat(t, ta.asarray([1.0, 2.0, 3.0]))
    with pytest.raises(TypeError, match="repeats"):
        ta.repeat(t, 1.5)


def test_copies_are_new_memory():
    rng = np.random.default_rng(0)
    a = fill(rng, (3, 4), np.float32)
    t = ta.asarray(a)
    for r in (ta.concat((t, t)), ta.stack((t,)), ta.tile(t, (1,)), ta.roll(t, 1), ta.repeat(t, 1)):
        assert not shares(r, a)
        assert r.is_contiguous


def test_repeat_and_reshape_sizes_past_int64():
    """repeat summed its counts in int64 and wrapped (four counts of 2**62 gave an empty
    array, 2026-12-05); reshape took sizes past int64 beside a zero ((2**64, 0) came out of
    DLPack as (0, 0)). NumPy refuses both."""
    x = ta.asarray([1.0, 2.0, 3.0, 4.0])
    for reps in ([2**62] * 4, [2**63 - 1, 2**63 - 1, 3, 0], [2**62, 2**62, 0, 0]):
        with pytest.raises(ValueError, match=r"repeat\(\): argument 'repeats' sums to more than"):
            ta.repeat(x, ta.asarray(reps))
    with pytest.raises(ValueError, match=r"repeat\(\): argument 'repeats' sums to more than"):
        ta.repeat(x, ta.asarray(np.array([2**63, 1, 1, 1], np.uint64)))  # not 'negative'
    with pytest.raises(ValueError, match=r"repeat\(\): 4 elements repeated 4611686018427387904 times"):
        ta.repeat(x, 2**62)
    assert_same(
        ta.repeat(x, ta.asarray(np.array([1, 0, 2, 3], np.uint64))), np.repeat(np.asarray(x), [1, 0, 2, 3])
    )
    z = ta.zeros((0,))
    for shape in ((2**64, 0), (2**63 - 1, 0), (2**32, 2**32, 0)):
        with pytest.raises(ValueError, match=r"reshape\(\): argument 'shape' .* is too large"):
            ta.reshape(z, shape)
    assert ta.reshape(z, (2**31, 0, 2**31)).shape == (2**31, 0, 2**31)
