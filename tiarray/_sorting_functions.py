"""Sorting functions (array API 2024.12): ``sort`` and ``argsort``, stable.

Both run a parallel merge sort in Taichi kernels (:mod:`tiarray._kernels.sort`) on the
array's device, reading strided input in place.
"""

from __future__ import annotations

from . import _dtypes
from ._array_object import TiArray
from ._buffer import empty_owned
from ._kernels.sort import sort_into
from ._validate import check_array, check_bool, check_dtype, normalize_axis

__all__ = ["argsort", "sort"]


def _prepare(x, axis, descending, stable, func):
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "real numeric", func)
    axis = normalize_axis(axis, x.ndim, func)
    check_bool(descending, func, "descending")
    check_bool(stable, func, "stable")
    return x, axis


def sort(x, /, *, axis=-1, descending=False, stable=True) -> TiArray:
    """A sorted copy of ``x`` along an axis.

    The sort is always stable (``stable=False`` is accepted and sorts stably too). NaNs
    sort after every number (before every number when ``descending``); ``-0.0`` and
    ``+0.0`` compare equal and keep their relative order.

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type, with at least one dimension.
    axis : int, optional
        The axis to sort along. Default: ``-1``.
    descending : bool, optional
        Sort in descending order (equal elements keep their order). Default: ``False``.
    stable : bool, optional
        Whether equal elements must keep their relative order. Default: ``True``.

    Returns
    -------
    TiArray
        The sorted array (same shape and dtype as ``x``, C-contiguous).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype (bool and complex are refused),
        or ``descending``/``stable`` are not bools.
    AxisError
        If ``axis`` is out of range (a 0-d array has no axis to sort).

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.sort(ta.asarray(np.array([3.0, np.nan, 1.0, 2.0]))).tolist()
    [1.0, 2.0, 3.0, nan]
    >>> ta.sort(ta.asarray(np.array([[3, 1], [0, 5]])), axis=0, descending=True).tolist()
    [[3, 5], [0, 1]]
    """
    func = "sort"
    x, axis = _prepare(x, axis, descending, stable, func)
    out = empty_owned(x._shape, x._dtype, x._device)
    sort_into(out, x, axis, descending=descending, values=True)
    return out


def argsort(x, /, *, axis=-1, descending=False, stable=True) -> TiArray:
    """The indices that sort ``x`` along an axis.

    Stable (equal elements keep their relative order, also when ``descending``). NaNs
    sort after every number (first when ``descending``).

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type, with at least one dimension.
    axis : int, optional
        The axis to sort along. Default: ``-1``.
    descending : bool, optional
        Indices of a descending sort. Default: ``False``.
    stable : bool, optional
        Whether equal elements must keep their relative order. Default: ``True``.

    Returns
    -------
    TiArray
        ``int64`` indices along ``axis``, with the shape of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype, or ``descending``/``stable``
        are not bools.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.argsort(ta.asarray(np.array([2, 1, 2, 0]))).tolist()
    [3, 1, 0, 2]
    >>> ta.argsort(ta.asarray(np.array([2, 1, 2, 0])), descending=True).tolist()
    [0, 2, 1, 3]
    """
    func = "argsort"
    x, axis = _prepare(x, axis, descending, stable, func)
    out = empty_owned(x._shape, _dtypes.default_index(), x._device)
    sort_into(out, x, axis, descending=descending, values=False)
    return out
