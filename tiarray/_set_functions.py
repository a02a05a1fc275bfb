"""Set functions (array API 2024.12): ``unique_all``, ``unique_counts``,
``unique_inverse``, ``unique_values``.

The flattened input is sorted stably on the device (:mod:`tiarray._kernels.sort`), the
starts of runs of equal values are found and compacted by Taichi kernels
(:mod:`tiarray._kernels.select`). Values come out sorted (NaNs last). Uniqueness is
value equality: each NaN (and each complex value with a NaN part) is distinct, ``-0.0``
and ``+0.0`` are one value (the first occurrence is returned).
"""

from __future__ import annotations

from typing import NamedTuple

from ._array_object import TiArray
from ._kernels.copy import copy_array
from ._validate import check_array, check_dtype
from ._views import reshape_view

__all__ = ["UniqueAllResult", "UniqueCountsResult", "UniqueInverseResult", "unique_all", "unique_counts",
           "unique_inverse", "unique_values"]  # fmt: skip


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
