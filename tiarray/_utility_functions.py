"""Utility functions (array API 2024.12): ``all``, ``any``, ``diff``."""

from __future__ import annotations

import builtins

from . import _dtypes
from ._array_object import TiArray
from ._buffer import empty_owned
from ._kernels import reduce as _kr
from ._kernels.copy import copy_into
from ._validate import check_array, check_bool, check_dtype, check_int, normalize_axes, normalize_axis
from ._views import reduced_shape

__all__ = ["all", "any", "diff"]


def _logical(x, axis, keepdims, op, func):
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "all", func)
    axes = normalize_axes(axis, x.ndim, func, none_is_all=True, sort=True, lists=False)
    check_bool(keepdims, func, "keepdims")
    out = empty_owned(reduced_shape(x._shape, axes, keepdims), _dtypes.bool, x._device)
    _kr.reduce_into(out, x, axes, op, _dtypes.int32)
    return out


def all(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Whether every element is true (non-zero) over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of any data type. NaN and infinities are true; a complex element is
        true when either part is non-zero; ``-0.0`` is false.
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        A ``bool`` array; ``True`` for an empty reduction.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.all(ta.asarray(np.array([[1, 0], [2, 3]])), axis=1).tolist()
    [False, True]
    """
    return _logical(x, axis, keepdims, _kr.ALL, "all")


def any(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Whether any element is true (non-zero) over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of any data type (truth as in :func:`all`).
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        A ``bool`` array; ``False`` for an empty reduction.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.any(ta.asarray(np.array([[0, 0], [0, 3]])), axis=0).tolist()
    [False, True]
    """
    return _logical(x, axis, keepdims, _kr.ANY, "any")


def _as_part(v, x: TiArray, axis: int, func: str, arg: str) -> TiArray:
    """``prepend``/``append`` as an array to concatenate with ``x`` along ``axis``."""
    if isinstance(v, (bool, int, float, complex)):
        from ._interchange import asarray
        from ._views import broadcast_view

        dt = _dtypes.scalar_dtype(v, x._dtype)
        shape = list(x._shape)
        shape[axis] = 1
        return broadcast_view(asarray(v, dtype=dt, device=x._device), tuple(shape), func=func)
    v = check_array(v, func, arg, on_device=True)
    if v.ndim != x.ndim or builtins.any(
        a != b for i, (a, b) in enumerate(zip(v._shape, x._shape)) if i != axis
    ):
        raise ValueError(
            f"{func}(): argument '{arg}' must have the shape of x {x._shape} except along axis {axis}, "
            f"got {v._shape}"
        )
    return v


def diff(x, /, *, axis=-1, n=1, prepend=None, append=None) -> TiArray:
    """The n-th forward difference along an axis: ``out[i] = x[i + 1] - x[i]``, n times.

    Parameters
    ----------
    x : TiArray
        Input array of a numeric data type, with at least one dimension.
    axis : int, optional
        The axis along which to take differences. Default: ``-1``.
    n : int, optional
        How many times to difference (``n >= 0``). Default: ``1``.
    prepend, append : TiArray or Python scalar, optional
        Values joined to ``x`` along ``axis`` before differencing: arrays with the shape
        of ``x`` except along ``axis``, or scalars (one value along ``axis``). The dtypes
        are promoted with ``x``'s (the standard leaves mixed dtypes to implementations).

    Returns
    -------
    TiArray
        The differences; the size along ``axis`` is ``M + N1 + N2 - n`` (zero if
        negative). Integer differences wrap around on overflow.

    Raises
    ------
    TypeError
        If ``x`` is not a numeric TiArray (bool is refused: subtraction of booleans is
        undefined), or ``n`` is not an int.
    ValueError
        If ``n`` is negative, ``x`` is 0-d, or ``prepend``/``append`` have incompatible
        shapes.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.diff(ta.asarray(np.array([1, 4, 9, 16]))).tolist()
    [3, 5, 7]
    >>> ta.diff(ta.asarray(np.array([1, 4, 9, 16])), n=2, prepend=0).tolist()
    [2, 2, 2]
    """
    from ._kernels.select import forward_difference

    func = "diff"
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "numeric", func)
    if x.ndim == 0:
        raise ValueError(f"{func}(): argument 'x' must have at least one dimension, got a 0-d array")
    axis = normalize_axis(axis, x.ndim, func)
    n = check_int(n, func, "n")
    if n < 0:
        raise ValueError(f"{func}(): argument 'n' must be non-negative, got {n}")
    parts = []
    if prepend is not None:
        parts.append(_as_part(prepend, x, axis, func, "prepend"))
    parts.append(x)
    if append is not None:
        parts.append(_as_part(append, x, axis, func, "append"))
    if len(parts) > 1:
        dt = _dtypes.result_type_of(p._dtype for p in parts)
        if dt not in _dtypes.NUMERIC:
            raise TypeError(f"{func}(): prepend/append must be numeric, got {[p._dtype.name for p in parts]}")
        shape = list(x._shape)
        shape[axis] = sum(p._shape[axis] for p in parts)
        a = empty_owned(tuple(shape), dt, x._device)
        pos = 0
        it = dt.itemsize
        for p in parts:
            k = p._shape[axis]
            if k:
                view = a._view(a._ptr + pos * a._strides[axis] * it, p._shape, a._strides)
                copy_into(view, p)
            pos += k
        x = a
    for _ in range(n):
        if x._shape[axis] == 0:
            break
        x = forward_difference(x, axis)
    if n == 0 and len(parts) == 1:
        from ._kernels.copy import copy_array

        x = copy_array(x)
    return x
