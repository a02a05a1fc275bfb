"""Indexing functions (array API "Indexing Functions"): ``take`` and ``take_along_axis``.

Both gather with the bounds-checked kernels of :mod:`tiarray._kernels.gather`; an index
out of range raises ``IndexError`` and nothing out of bounds is ever read.
"""

from __future__ import annotations

from ._advanced_indexing import gather_axis
from ._array_object import TiArray, c_strides
from ._buffer import empty_owned
from ._kernels import gather as _g
from ._validate import check_array, normalize_axis
from ._views import broadcast_shapes, broadcast_view

__all__ = ["take", "take_along_axis"]


def _check_indices(indices, x: TiArray, func: str) -> TiArray:
    if not isinstance(indices, TiArray):
        raise TypeError(
            f"{func}(): argument 'indices' must be a TiArray of integers, got {type(indices).__name__}"
        )
    if indices._dtype.kind not in "iu":
        raise TypeError(f"{func}(): argument 'indices' must have an integer dtype, got {indices._dtype.name}")
    if indices._device != x._device:
        raise ValueError(
            f"{func}(): argument 'indices' lives on {indices._device} but 'x' lives on {x._device}; "
            "move one of them with to_device()"
        )
    return indices


def take(x, indices, /, *, axis=None) -> TiArray:
    """Elements of ``x`` at ``indices`` along an axis (``x[..., indices, ...]``).

    Parameters
    ----------
    x : TiArray
        The input array, at least 1-D.
    indices : TiArray
        Integer indices (negative ones count from the end). The standard asks for a 1-D
        array; an n-D array is accepted too (as NumPy), its shape replacing the axis.
    axis : int, optional
        The axis to select along. Required when ``x`` has more than one dimension.

    Returns
    -------
    TiArray
        A new array of shape ``x.shape[:axis] + indices.shape + x.shape[axis + 1:]``.

    Raises
    ------
    TypeError
        If ``indices`` is not an integer TiArray.
    ValueError
        If ``axis`` is missing for an n-D ``x`` (n > 1), or ``x`` is 0-d.
    IndexError
        If an index is out of range, or ``axis`` is out of range.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([10, 20, 30, 40])
    >>> ta.take(x, ta.asarray([3, 0, -1])).tolist()
    [40, 10, 40]
    """
    func = "take"
    x = check_array(x, func, "x")
    indices = _check_indices(indices, x, func)
    if x.ndim == 0:
        raise ValueError(f"{func}(): argument 'x' must have at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim != 1:
            raise ValueError(
                f"{func}(): argument 'axis' is required when 'x' has more than one dimension "
                f"(x has shape {x.shape})"
            )
        axis = 0
    axis = normalize_axis(axis, x.ndim, func)
    return gather_axis(x, indices, axis, f"{func}(): argument 'indices'")


def take_along_axis(x, indices, /, *, axis=-1) -> TiArray:
    """Pick values of ``x`` along ``axis`` at positions given by an array of the same rank.

    ``out[..., j, ...] = x[..., indices[..., j, ...], ...]``; the other axes of ``x`` and
    ``indices`` are broadcast against each other.

    Parameters
    ----------
    x : TiArray
        The input array, at least 1-D.
    indices : TiArray
        Integer indices with ``indices.ndim == x.ndim`` (negative ones count from the end).
    axis : int, optional
        The axis to select along (default: the last).

    Returns
    -------
    TiArray
        A new array; along ``axis`` it has ``indices.shape[axis]`` elements.

    Raises
    ------
    TypeError
        If ``indices`` is not an integer TiArray.
    ValueError
        If the ranks differ or the other axes do not broadcast.
    IndexError
        If an index or ``axis`` is out of range.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[10, 30, 20], [60, 40, 50]])
    >>> i = ta.asarray([[0, 2, 1], [1, 2, 0]])
    >>> ta.take_along_axis(x, i, axis=1).tolist()
    [[10, 20, 30], [40, 50, 60]]
    """
    func = "take_along_axis"
    x = check_array(x, func, "x")
    indices = _check_indices(indices, x, func)
    if x.ndim == 0:
        raise ValueError(f"{func}(): argument 'x' must have at least one dimension, got a 0-d array")
    if indices.ndim != x.ndim:
        raise ValueError(
            f"{func}(): argument 'indices' must have as many dimensions as 'x' ({x.ndim}), got {indices.ndim}"
        )
    axis = normalize_axis(axis, x.ndim, func)
    xs = list(x._shape)
    is_ = list(indices._shape)
    xs[axis] = 1
    is_[axis] = 1
    try:
        other = broadcast_shapes(tuple(xs), tuple(is_), func=func)
    except ValueError:
        raise ValueError(
            f"{func}(): the shapes of 'x' {x.shape} and 'indices' {indices.shape} do not broadcast "
            f"outside axis {axis}"
        ) from None
    out_shape = list(other)
    out_shape[axis] = indices._shape[axis]
    out_shape = tuple(out_shape)
    out = empty_owned(out_shape, x._dtype, x._device)
    if out.size == 0:
        return out
    dim = x._shape[axis]
    xshape_b = list(out_shape)
    xshape_b[axis] = dim
    xv = broadcast_view(x, tuple(xshape_b))
    iv = broadcast_view(indices, out_shape)
    factor = 2 if x._dtype.name == "complex128" else 1
    shape = list(out_shape)
    xst = [s * factor for s in xv._strides]
    yst = [s * factor for s in c_strides(out_shape)]
    ist = list(iv._strides)
    if factor == 2:
        shape.append(2)
        xst.append(1)
        yst.append(1)
        ist.append(0)
    try:
        _g.move(_g.bits_view(xv), iv, _g.bits_view(out), tuple(shape), tuple(xst), tuple(yst), tuple(ist),
                axis, dim, raw=True, scatter=False)  # fmt: skip
    except _g.IndexOutOfBounds as e:
        raise IndexError(
            f"{func}(): argument 'indices': index {e.value} is out of bounds for axis {axis} with size {dim}"
        ) from None
    return out
