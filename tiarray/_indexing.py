"""``x[key]`` and ``x[key] = value``.

Basic indexing (integers, slices, ``...``, ``None``) returns a view and never copies.
Advanced indexing (integer arrays, boolean masks, sequences) is handled by
:mod:`tiarray._advanced_indexing` and returns a new array.
"""

from __future__ import annotations

import operator

import numpy as np

from ._advanced_indexing import as_value, getitem_advanced, setitem_advanced
from ._array_object import TiArray
from ._kernels.copy import copy_into
from ._views import broadcast_view

__all__ = ["getitem", "setitem", "normalize_basic_key"]


def _is_basic_component(k) -> bool:
    if k is None or k is Ellipsis or isinstance(k, slice):
        return True
    if isinstance(k, bool):
        return False  # a Python bool is a 0-d boolean mask
    if isinstance(k, (int, np.integer)):
        return True
    if isinstance(k, TiArray) and k.ndim == 0 and k._dtype.kind in "iu":
        return True
    return False


def normalize_basic_key(key):
    """The key as a tuple if it is basic indexing, else None."""
    if not isinstance(key, tuple):
        key = (key,)
    for k in key:
        if not _is_basic_component(k):
            return None
    return key


def _basic(x: TiArray, key: tuple, func: str) -> TiArray:
    n_ell = sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError(f"{func}: an index can have only one Ellipsis (...)")
    n_real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if n_real > x.ndim:
        raise IndexError(f"{func}: too many indices: the array is {x.ndim}-D but {n_real} were given")
    if n_ell == 0:
        key = key + (Ellipsis,)
    ptr = x._ptr
    it = x._dtype.itemsize
    shape, strides = [], []
    axis = 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
        elif k is Ellipsis:
            n = x.ndim - n_real
            shape.extend(x._shape[axis : axis + n])
            strides.extend(x._strides[axis : axis + n])
            axis += n
        elif isinstance(k, slice):
            d, st = x._shape[axis], x._strides[axis]
            start, stop, step = k.indices(d)
            cnt = len(range(start, stop, step))
            if cnt:
                ptr += start * st * it
            shape.append(cnt)
            # an axis of one element has no stride to speak of: a step past 2**60 made one the
            # array interface could not state (int64 overflow of its byte stride, 2026-12-05);
            # it gets 0 there, as NumPy's (its own overflows to 0), and NumPy's stride elsewhere
            stride = st * step
            if cnt <= 1 and not -(1 << 63) <= stride * it < (1 << 63):
                stride = 0
            strides.append(stride)
            axis += 1
        else:
            i = operator.index(k)
            d = x._shape[axis]
            if not -d <= i < d:
                raise IndexError(f"{func}: index {i} is out of bounds for axis {axis} with size {d}")
            if i < 0:
                i += d
            ptr += i * x._strides[axis] * it
            axis += 1
    return x._view(ptr, tuple(shape), tuple(strides))


def getitem(x: TiArray, key):
    bkey = normalize_basic_key(key)
    if bkey is not None:
        return _basic(x, bkey, "TiArray.__getitem__")
    return getitem_advanced(x, key)


def setitem(x: TiArray, key, value) -> None:
    if x._readonly:
        raise ValueError(
            "TiArray.__setitem__: the array is read-only (a broadcast view, or a view of memory its producer "
            "does not let others write, e.g. a JAX array); copy it first with tiarray.asarray(x, copy=True)"
        )
    bkey = normalize_basic_key(key)
    if bkey is None:
        setitem_advanced(x, key, value)
        return
    view = _basic(x, bkey, "TiArray.__setitem__")
    v = as_value(value, x, "TiArray.__setitem__")
    copy_into(view, broadcast_view(v, view._shape, func="TiArray.__setitem__"))


TiArray.__getitem__ = getitem
TiArray.__setitem__ = setitem
