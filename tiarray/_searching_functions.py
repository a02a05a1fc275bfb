"""Searching functions (array API 2024.12): argmax, argmin, count_nonzero, nonzero,
searchsorted. (``where`` lives with the element-wise functions.)

All run Taichi kernels on the array's device, on strided inputs without copying.
"""

from __future__ import annotations

import math

from . import _dtypes
from ._array_object import TiArray
from ._buffer import empty_owned
from ._kernels import reduce as _kr
from ._validate import check_array, check_bool, check_dtype, normalize_axes, normalize_axis
from ._views import reduced_shape

__all__ = ["argmax", "argmin", "count_nonzero", "nonzero", "searchsorted"]


def _arg(x, axis, keepdims, is_max: bool, func: str) -> TiArray:
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "real numeric", func)
    check_bool(keepdims, func, "keepdims")
    if axis is None:
        axes = tuple(range(x.ndim))
    else:
        if isinstance(axis, tuple):
            raise TypeError(f"{func}(): argument 'axis' must be an int or None, got {axis!r}")
        axes = (normalize_axis(axis, x.ndim, func),)
    m = math.prod(x._shape[i] for i in axes)
    n_out = math.prod(reduced_shape(x._shape, axes, False))
    if m == 0 and n_out != 0:
        raise ValueError(
            f"{func}(): the search is over zero elements (input shape {x._shape}, axis={axis!r}); "
            f"an empty sequence has no {'maximum' if is_max else 'minimum'}"
        )
    out = empty_owned(reduced_shape(x._shape, axes, keepdims), _dtypes.default_index(), x._device)
    _kr.argreduce_into(out, x, axes, is_max)
    return out


def argmax(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Indices of the maximum values along an axis (the first occurrence).

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type.
    axis : int, optional
        The axis to search. Default: the flattened array (C order).
    keepdims : bool, optional
        Keep the searched axis (all axes when ``axis`` is None) as size one.

    Returns
    -------
    TiArray
        ``int64`` indices. NaN counts as the maximum (the first NaN's index is returned).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype, or ``axis`` is not an int.
    ValueError
        If the search is over zero elements.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = ta.asarray(np.array([[1, 9, 9], [4, 2, 4]]))
    >>> ta.argmax(x, axis=1).tolist()
    [1, 0]
    >>> int(ta.argmax(x))
    1
    """
    return _arg(x, axis, keepdims, True, "argmax")


def argmin(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Indices of the minimum values along an axis (the first occurrence).

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type.
    axis : int, optional
        The axis to search. Default: the flattened array (C order).
    keepdims : bool, optional
        Keep the searched axis (all axes when ``axis`` is None) as size one.

    Returns
    -------
    TiArray
        ``int64`` indices. NaN counts as the minimum (the first NaN's index is returned).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype, or ``axis`` is not an int.
    ValueError
        If the search is over zero elements.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.argmin(ta.asarray(np.array([[3, 1], [0, 5]])), axis=0).tolist()
    [1, 0]
    """
    return _arg(x, axis, keepdims, False, "argmin")


def count_nonzero(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Number of non-zero elements over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of any data type. A complex element is non-zero when either part is;
        NaN is non-zero; ``-0.0`` is zero.
    axis : int or tuple of ints, optional
        Axes to count over. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The counts, ``int64`` (the default index dtype).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.count_nonzero(ta.asarray(np.array([[0, 1, 2], [0, 0, 3]])), axis=1).tolist()
    [2, 1]
    """
    func = "count_nonzero"
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "all", func)
    axes = normalize_axes(axis, x.ndim, func, none_is_all=True, sort=True, lists=False)
    check_bool(keepdims, func, "keepdims")
    out = empty_owned(reduced_shape(x._shape, axes, keepdims), _dtypes.default_index(), x._device)
    _kr.reduce_into(out, x, axes, _kr.COUNT, _dtypes.int64)
    return out


def nonzero(x, /) -> tuple:
    """Indices of the non-zero elements, one array per dimension.

    Parameters
    ----------
    x : TiArray
        Input array with at least one dimension. Complex elements are non-zero when
        either part is; NaN is non-zero; ``-0.0`` is zero.

    Returns
    -------
    tuple of TiArray
        ``x.ndim`` ``int64`` arrays of the same length: the coordinates of the non-zero
        elements along each dimension, in row-major (C) order. The output size depends on
        the data: the count is computed on the device first.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.
    ValueError
        If ``x`` is 0-d (the standard forbids it).

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> rows, cols = ta.nonzero(ta.asarray(np.array([[0, 7], [3, 0]])))
    >>> rows.tolist(), cols.tolist()
    ([0, 1], [1, 0])
    """
    from ._kernels.select import nonzero as _nz

    func = "nonzero"
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "all", func)
    if x.ndim == 0:
        raise ValueError(
            f"{func}(): argument 'x' must have at least one dimension, got a 0-d array "
            "(use nonzero(reshape(x, (1,))) or bool(x))"
        )
    coords = _nz(x)
    nnz = coords._shape[1]
    return tuple(coords._view(coords._ptr + d * nnz * 8, (nnz,), (1,)) for d in range(x.ndim))


def searchsorted(x1, x2, /, *, side="left", sorter=None) -> TiArray:
    """Insertion indices that keep the sorted ``x1`` sorted.

    Parameters
    ----------
    x1 : TiArray
        One-dimensional array of a real numeric data type, sorted ascending (in the order
        of :func:`sort`: NaNs last), unless ``sorter`` is given.
    x2 : TiArray or Python scalar
        The values to insert, any shape, a real numeric data type. ``x1`` and ``x2``
        are compared in their promoted data type.
    side : {"left", "right"}, optional
        ``"left"``: the first index ``i`` with ``v <= x1[i]``; ``"right"``: the first with
        ``v < x1[i]``. Default: ``"left"``.
    sorter : TiArray, optional
        Integer indices that sort ``x1`` ascending (e.g. from :func:`argsort`).

    Returns
    -------
    TiArray
        ``int64`` indices with the shape of ``x2``.

    Raises
    ------
    TypeError
        If an argument is not a TiArray of a real numeric dtype (``sorter``: an integer
        dtype), or the dtypes of ``x1`` and ``x2`` cannot be promoted.
    ValueError
        If ``x1`` is not 1-d, ``side`` is not "left"/"right", ``sorter`` has the wrong
        shape or holds an index outside ``[0, len(x1))``, or the arrays are on other
        devices.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x1 = ta.asarray(np.array([1.0, 2.0, 2.0, 5.0]))
    >>> ta.searchsorted(x1, ta.asarray(np.array([2.0, 3.0, 9.0]))).tolist()
    [1, 3, 4]
    >>> ta.searchsorted(x1, ta.asarray(np.array([2.0])), side="right").tolist()
    [3]
    """
    from ._kernels.select import searchsorted as _ss

    func = "searchsorted"
    x1 = check_array(x1, func, "x1", on_device=True)
    check_dtype(x1._dtype, "real numeric", func, "x1")
    if isinstance(x2, (int, float)) and not isinstance(x2, bool):
        from ._interchange import asarray

        x2 = asarray(x2, dtype=_dtypes.scalar_dtype(x2, x1._dtype), device=x1._device)
    x2 = check_array(x2, func, "x2", on_device=True)
    check_dtype(x2._dtype, "real numeric", func, "x2")
    if x1.ndim != 1:
        raise ValueError(f"{func}(): argument 'x1' must be 1-d, got {x1.ndim}-d (shape {x1._shape})")
    if side not in ("left", "right"):
        raise ValueError(f"{func}(): argument 'side' must be 'left' or 'right', got {side!r}")
    try:
        common = _dtypes.promote(x1._dtype, x2._dtype)
    except TypeError as e:
        raise TypeError(
            f"{func}(): x1 ({x1._dtype.name}) and x2 ({x2._dtype.name}) cannot be compared: {e}"
        ) from None
    if sorter is not None:
        sorter = check_array(sorter, func, "sorter", on_device=True)
        check_dtype(sorter._dtype, "integer", func, "sorter")
        if sorter._shape != x1._shape:
            raise ValueError(
                f"{func}(): argument 'sorter' must have the shape of x1 {x1._shape}, got {sorter._shape}"
            )
        if sorter.size:
            lo = _arg_extreme(sorter, _kr.MIN)
            hi = _arg_extreme(sorter, _kr.MAX)
            if lo < 0 or hi >= x1._shape[0]:
                raise ValueError(
                    f"{func}(): argument 'sorter' holds indices in [{lo}, {hi}], outside [0, {x1._shape[0]})"
                )
    out = empty_owned(x2._shape, _dtypes.default_index(), x1._device)
    _ss(out, x1, x2, common, side == "right", sorter)
    return out


def _arg_extreme(x: TiArray, op: int) -> int:
    """The max or min of an integer array, as a Python int."""
    acc = _dtypes.int32 if x._dtype.itemsize < 4 else x._dtype
    out = empty_owned((), x._dtype, x._device)
    _kr.reduce_into(out, x, tuple(range(x.ndim)), op, acc)
    return int(out._host())
