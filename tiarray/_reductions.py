"""Argument checking shared by reductions, scans, searching, sorting and set functions."""

from __future__ import annotations

import operator

from . import _dtypes, _runtime
from ._array_object import TiArray

__all__ = ["AxisError", "check_array", "normalize_axes", "normalize_axis", "reduced_shape"]


class AxisError(ValueError, IndexError):
    """An ``axis`` argument is out of range or repeated.

    Subclasses both ``ValueError`` and ``IndexError``, like ``numpy.exceptions.AxisError``,
    so code written for either library catches it.
    """


def check_array(x, func: str, arg: str = "x") -> TiArray:
    """``x`` if it is a TiArray on the device Taichi computes on, else a clear error."""
    if not isinstance(x, TiArray):
        raise TypeError(f"{func}(): argument '{arg}' must be a TiArray, got {type(x).__name__}")
    dev = _runtime.current_device()
    if x._device != dev:
        raise ValueError(
            f"{func}(): argument '{arg}' lives on {x._device} but Taichi computes on {dev}; "
            f"move it with x.to_device({dev.kind!r}) first"
        )
    return x


def check_dtype(x: TiArray, category: str, func: str, arg: str = "x") -> None:
    """Raise ``TypeError`` unless ``x.dtype`` belongs to ``category`` (see ``_dtypes.CATEGORIES``)."""
    if x._dtype not in _dtypes.CATEGORIES[category]:
        raise TypeError(f"{func}(): argument '{arg}' must have a {category} data type, got {x._dtype.name}")
    if x._dtype._ti_name is None:
        raise TypeError(f"{func}(): {x._dtype.name} is not supported by tiarray's kernels")


def _index(v, func: str, arg: str) -> int:
    if isinstance(v, bool):
        raise TypeError(f"{func}(): argument '{arg}' must be an int, got a bool")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{func}(): argument '{arg}' must be an int, got {v!r}") from None


def normalize_axis(axis, ndim: int, func: str, arg: str = "axis") -> int:
    """One axis in ``[-ndim, ndim)`` as a non-negative int."""
    a = _index(axis, func, arg)
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{func}(): argument '{arg}' is {a}, out of range for an array of {ndim} dimension(s) "
            f"(expected an int in [{-ndim}, {ndim}))"
        )
    return a + ndim if a < 0 else a


def normalize_axes(axis, ndim: int, func: str, arg: str = "axis") -> tuple:
    """``None``, an int or a tuple of ints as a sorted tuple of distinct non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        out = []
        for a in axis:
            if isinstance(a, bool) or not hasattr(a, "__index__"):
                raise TypeError(
                    f"{func}(): argument '{arg}' must be None, an int or a tuple of ints, got {axis!r}"
                )
            out.append(normalize_axis(a, ndim, func, arg))
        if len(set(out)) != len(out):
            raise AxisError(f"{func}(): argument '{arg}' has repeated axes: {axis!r}")
        return tuple(sorted(out))
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"{func}(): argument '{arg}' must be None, an int or a tuple of ints, got {axis!r}")
    return (normalize_axis(axis, ndim, func, arg),)


def check_bool(v, func: str, arg: str) -> bool:
    if not isinstance(v, bool):
        raise TypeError(f"{func}(): argument '{arg}' must be a bool, got {v!r}")
    return v


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    """The shape of a reduction of ``shape`` over ``axes``."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def default_int() -> _dtypes.DType:
    from ._info import default_dtypes_plain

    return default_dtypes_plain()["integral"]


def default_index() -> _dtypes.DType:
    from ._info import default_dtypes_plain

    return default_dtypes_plain()["indexing"]


def default_float() -> _dtypes.DType:
    from ._info import default_dtypes_plain

    return default_dtypes_plain()["real floating"]


def default_uint() -> _dtypes.DType:
    """The unsigned integer dtype with as many bits as the default integer dtype."""
    return {1: _dtypes.uint8, 2: _dtypes.uint16, 4: _dtypes.uint32, 8: _dtypes.uint64}[default_int().itemsize]


def to_dtype(dtype, func: str, arg: str = "dtype") -> _dtypes.DType:
    return _dtypes.to_dtype(dtype, func=func, arg=arg)
