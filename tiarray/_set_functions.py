"""Set functions (array API 2025.12): ``isin``, ``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``.

The flattened input is sorted stably on the device (:mod:`tiarray._kernels.sort`), the
starts of runs of equal values are found and compacted by Taichi kernels
(:mod:`tiarray._kernels.select`). Values come out sorted (NaNs last). Uniqueness is
value equality: each NaN (and each complex value with a NaN part) is distinct, ``-0.0``
and ``+0.0`` are one value (the first occurrence is returned).

``isin`` sorts the flattened ``x2`` the same way and looks every element of ``x1`` up by
binary search (one Taichi kernel reading ``x1`` strided), in the promoted dtype of the two.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _dtypes
from ._array_object import TiArray
from ._buffer import empty_owned
from ._kernels.copy import copy_array
from ._validate import check_array, check_bool, check_dtype, check_same_device
from ._views import reshape_view

__all__ = ["UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "isin", "unique_all",
           "unique_counts", "unique_inverse", "unique_values"]  # fmt: skip


class UniqueAllResult(NamedTuple):
    """``(values, indices, inverse_indices, counts)`` of :func:`unique_all`."""

    values: TiArray
    indices: TiArray
    inverse_indices: TiArray
    counts: TiArray


class UniqueCountsResult(NamedTuple):
    """``(values, counts)`` of :func:`unique_counts`."""

    values: TiArray
    counts: TiArray


class UniqueInverseResult(NamedTuple):
    """``(values, inverse_indices)`` of :func:`unique_inverse`."""

    values: TiArray
    inverse_indices: TiArray


def _unique(x, func, *, indices, inverse, counts):
    from ._kernels.select import unique

    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "all", func)
    flat = reshape_view(x, (x.size,)) if x._is_c_contiguous() else None
    if flat is None or not flat._is_c_contiguous():
        flat = reshape_view(copy_array(x), (x.size,))
    vals, idx, inv, cnt = unique(flat, want_indices=indices, want_inverse=inverse, want_counts=counts)
    if inv is not None:
        inv = reshape_view(inv, x._shape)
    return vals, idx, inv, cnt


def unique_all(x, /) -> UniqueAllResult:
    """Unique values of ``x`` with their first indices, inverse indices and counts.

    Parameters
    ----------
    x : TiArray
        Input array of any data type; flattened (C order) if multi-dimensional.

    Returns
    -------
    UniqueAllResult
        A namedtuple ``(values, indices, inverse_indices, counts)``: the sorted unique
        values (1-d, dtype of ``x``); the index in the flattened ``x`` of each value's
        first occurrence; for every element of ``x`` the index of its value in
        ``values`` (shape of ``x``); the number of occurrences of each value. Indices and
        counts are ``int64``. Each NaN is its own value with count one.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> r = ta.unique_all(ta.asarray(np.array([3, 1, 3, 2])))
    >>> r.values.tolist(), r.indices.tolist(), r.inverse_indices.tolist(), r.counts.tolist()
    ([1, 2, 3], [1, 3, 0], [2, 0, 2, 1], [1, 1, 2])
    """
    return UniqueAllResult(*_unique(x, "unique_all", indices=True, inverse=True, counts=True))


def unique_counts(x, /) -> UniqueCountsResult:
    """Unique values of ``x`` and the number of times each occurs.

    Parameters
    ----------
    x : TiArray
        Input array of any data type; flattened (C order) if multi-dimensional.

    Returns
    -------
    UniqueCountsResult
        A namedtuple ``(values, counts)``: the sorted unique values and their ``int64``
        counts (each NaN counted on its own).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> r = ta.unique_counts(ta.asarray(np.array([2.0, np.nan, 2.0, np.nan])))
    >>> r.values.tolist(), r.counts.tolist()
    ([2.0, nan, nan], [2, 1, 1])
    """
    v, _, _, c = _unique(x, "unique_counts", indices=False, inverse=False, counts=True)
    return UniqueCountsResult(v, c)


def unique_inverse(x, /) -> UniqueInverseResult:
    """Unique values of ``x`` and the indices that rebuild ``x`` from them.

    Parameters
    ----------
    x : TiArray
        Input array of any data type; flattened (C order) if multi-dimensional.

    Returns
    -------
    UniqueInverseResult
        A namedtuple ``(values, inverse_indices)``: the sorted unique values, and for
        every element of ``x`` the ``int64`` index of its value (shape of ``x``), so that
        ``values[inverse_indices]`` equals ``x`` (up to the sign of zeros).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> r = ta.unique_inverse(ta.asarray(np.array([[5, 4], [4, 5]])))
    >>> r.values.tolist(), r.inverse_indices.tolist()
    ([4, 5], [[1, 0], [0, 1]])
    """
    v, _, inv, _ = _unique(x, "unique_inverse", indices=False, inverse=True, counts=False)
    return UniqueInverseResult(v, inv)


def unique_values(x, /) -> TiArray:
    """The unique values of ``x``, sorted.

    Parameters
    ----------
    x : TiArray
        Input array of any data type; flattened (C order) if multi-dimensional.

    Returns
    -------
    TiArray
        A 1-d array of the unique values (dtype of ``x``), ascending, NaNs last (each
        NaN kept: NaN is not equal to NaN).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.unique_values(ta.asarray(np.array([3, 1, 3, 1]))).tolist()
    [1, 3]
    """
    return _unique(x, "unique_values", indices=False, inverse=False, counts=False)[0]


# ----------------------------------------------------------------------------- isin

_MAX_ELEMENTS = (1 << 31) - 1  # the isin kernel and the sort index with 32 bits


def _isin_operand(x, func: str, arg: str):
    """A TiArray argument checked, or a Python scalar passed through."""
    if isinstance(x, (bool, int, float, np.bool_)) and not isinstance(x, TiArray):
        return x
    if not isinstance(x, TiArray):
        raise TypeError(
            f"{func}(): argument '{arg}' must be a TiArray or a Python scalar, got {type(x).__name__}"
        )
    x = check_array(x, func, arg, on_device=True)
    check_dtype(x._dtype, "all", func, arg)
    if x._dtype.kind == "c":
        raise TypeError(
            f"{func}(): argument '{arg}' must have a real numeric or boolean dtype, got {x._dtype.name}"
        )
    if x.size > _MAX_ELEMENTS:
        raise ValueError(
            f"{func}(): argument '{arg}' has {x.size} elements; at most {_MAX_ELEMENTS} are supported"
        )
    return x


def _scalar_operand(v, other: TiArray, func: str, arg: str):
    """A Python scalar next to the array ``other`` as a 0-d TiArray of ``other``'s dtype, or
    None when no element of that dtype equals it (an int out of the integer dtype's range)."""
    from ._interchange import asarray

    d = other._dtype
    if type(v) is bool or isinstance(v, np.bool_):
        ok = d.kind == "b"
    elif isinstance(v, int):
        ok = d.kind in "iuf"
        if d.kind in "iu":
            info = np.iinfo(d.numpy)
            if not info.min <= v <= info.max:
                return None
    else:  # float
        ok = d.kind == "f"
    if not ok:
        raise TypeError(
            f"{func}(): argument '{arg}' is a Python {type(v).__name__}, which cannot be compared with "
            f"the {d.name} array (expected an int, a float for a floating-point array or a bool for a "
            "boolean array)"
        )
    return asarray(v, dtype=d, device=other._device)


def _u8(x: TiArray) -> TiArray:
    """A bool array's bytes seen as uint8 (the sort and search keys of bool data)."""
    return TiArray._new(x._ptr, x._shape, x._strides, _dtypes.uint8, x._device, x._owner, True)


def isin(x1, x2, /, *, invert=False) -> TiArray:
    """Whether each element of ``x1`` is in ``x2`` (array API 2025.12).

    Parameters
    ----------
    x1 : TiArray or Python scalar
        The elements to test, any shape, a real numeric or boolean dtype (the standard asks
        for integers; floating-point and boolean arrays work too). A Python ``int`` (or a
        ``float``/``bool`` next to a floating-point/boolean ``x2``) gives a 0-d result.
    x2 : TiArray or Python scalar
        The values to look for, any shape (flattened); at least one of ``x1`` and ``x2``
        must be an array.
    invert : bool, optional
        If True, test whether each element is *not* in ``x2``. Default: False.

    Returns
    -------
    TiArray
        A bool array of the shape of ``x1`` (``()`` for a scalar ``x1``). Elements are
        compared by value (:func:`equal`) in the promoted dtype of ``x1`` and ``x2``:
        ``-0.0`` equals ``+0.0`` and a NaN is in nothing.

    Raises
    ------
    TypeError
        If neither argument is an array, an argument is complex, ``bfloat16`` or an
        unsupported scalar, the dtypes cannot be promoted, or ``invert`` is not a bool.
    ValueError
        If the arrays live on different devices or one has 2**31 elements or more.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = ta.asarray(np.array([[1, 2], [3, 4]]))
    >>> ta.isin(x, ta.asarray(np.array([4, 1, 7]))).tolist()
    [[True, False], [False, True]]
    >>> ta.isin(x, 3, invert=True).tolist()
    [[True, True], [False, True]]
    """
    from ._kernels.select import isin as _isin
    from ._kernels.sort import sort_pairs

    func = "isin"
    invert = check_bool(invert, func, "invert")
    if not isinstance(x1, TiArray) and not isinstance(x2, TiArray):
        raise TypeError(
            f"{func}(): at least one of 'x1' and 'x2' must be a TiArray, got {type(x1).__name__} "
            f"and {type(x2).__name__}"
        )
    x1 = _isin_operand(x1, func, "x1")
    x2 = _isin_operand(x2, func, "x2")
    if not isinstance(x1, TiArray):
        x1 = _scalar_operand(x1, x2, func, "x1")
        if x1 is None:  # no element of x2 can equal it: look a zero up in nothing
            x1 = _scalar_operand(0, x2, func, "x1")
            x2 = empty_owned((0,), x2._dtype, x2._device)
    elif not isinstance(x2, TiArray):
        x2 = _scalar_operand(x2, x1, func, "x2")
        if x2 is None:
            x2 = empty_owned((0,), x1._dtype, x1._device)
    check_same_device([x1, x2], func)
    try:
        common = _dtypes.promote(x1._dtype, x2._dtype)
    except TypeError as e:
        raise TypeError(
            f"{func}(): x1 ({x1._dtype.name}) and x2 ({x2._dtype.name}) cannot be compared: {e}"
        ) from None
    dev = x1._device
    out = empty_owned(x1._shape, _dtypes.bool, dev)
    if out.size == 0:
        return out
    if common is _dtypes.bool:
        x1, x2, common = _u8(x1), _u8(x2), _dtypes.uint8
    n2 = x2.size
    srt = empty_owned((n2,), common, dev)
    if n2:
        flat = x2 if x2._dtype is common and x2._is_c_contiguous() else copy_array(x2, common)
        sort_pairs(reshape_view(flat, (n2,)), 0, with_idx=False, out=srt)
    _isin(out, x1, srt, common, invert)
    return out
