"""Argument checks shared by every function of tiarray (and by ``tiarray.operators``).

Each check raises with a message naming the function, the argument, what was expected and
what was received: ``TypeError`` for types and dtypes, ``ValueError`` for values,
:class:`AxisError` (a ``ValueError`` and an ``IndexError``) for axes.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes, _runtime
from ._array_object import TiArray

__all__ = [
    "AxisError", "check_array", "check_same_device", "check_int", "normalize_axis", "normalize_axes",
    "check_bool", "check_copy", "check_dtype",
]  # fmt: skip


class AxisError(ValueError, IndexError):
    """An ``axis`` argument is out of range or repeated.

    Subclasses both ``ValueError`` and ``IndexError``, like ``numpy.exceptions.AxisError``,
    so code written for either library catches it.
    """


def check_array(x, func: str, arg: str = "x", *, on_device: bool = False) -> TiArray:
    """``x`` if it is a TiArray, else ``TypeError``; ``on_device``: it must also live on the
    device Taichi computes on (``ValueError`` otherwise)."""
    if not isinstance(x, TiArray):
        raise TypeError(f"{func}(): argument '{arg}' must be a TiArray, got {type(x).__name__}")
    if on_device:
        dev = _runtime.current_device()
        if x._device != dev:
            raise ValueError(
                f"{func}(): argument '{arg}' lives on {x._device} but Taichi computes on {dev}; "
                f"move it with x.to_device({dev.kind!r}) first"
            )
    return x


def check_same_device(arrays, func: str, arg: str = "arrays") -> None:
    """All ``arrays`` (TiArrays) live on one device, else ``ValueError``."""
    if not arrays:
        return
    d = arrays[0]._device
    for a in arrays[1:]:
        if a._device != d:
            raise ValueError(
                f"{func}(): the arrays of argument '{arg}' live on different devices ({d} and {a._device}); "
                "move them to one device with to_device()"
            )


def check_int(v, func: str, arg: str) -> int:
    """``v`` as a Python int (anything with ``__index__`` but a bool), else ``TypeError``."""
    if isinstance(v, bool):
        raise TypeError(f"{func}(): argument '{arg}' must be an int, got {v!r}")
    try:
        return operator.index(v)
    except TypeError:
        raise TypeError(f"{func}(): argument '{arg}' must be an int, got {v!r}") from None


def normalize_axis(axis, ndim: int, func: str, arg: str = "axis") -> int:
    """One axis in ``[-ndim, ndim)`` as a non-negative int; :class:`AxisError` when out of
    range, ``TypeError`` if not an int."""
    a = check_int(axis, func, arg)
    if not -ndim <= a < ndim:
        raise AxisError(
            f"{func}(): argument '{arg}' is {a}, out of range for an array of {ndim} dimension(s) "
            f"(expected an int in [{-ndim}, {ndim}))"
        )
    return a + ndim if a < 0 else a


def normalize_axes(
    axis, ndim: int, func: str, arg: str = "axis", *, none_is_all: bool, sort: bool, lists: bool
) -> tuple:
    """An int or a tuple of ints as a tuple of distinct non-negative axes.

    ``none_is_all``: ``None`` means every axis (else it is refused); ``sort``: the axes in
    increasing order (else in the order given); ``lists``: a list is accepted as a tuple.
    Repeated axes raise :class:`AxisError`.
    """
    if axis is None and none_is_all:
        return tuple(range(ndim))
    if isinstance(axis, tuple) or (lists and isinstance(axis, list)):
        out = []
        for a in axis:
            if isinstance(a, bool) or not hasattr(a, "__index__"):
                raise TypeError(
                    f"{func}(): argument '{arg}' must be {_axes_kinds(none_is_all, lists)}, got {axis!r}"
                )
            out.append(normalize_axis(a, ndim, func, arg))
        if len(set(out)) != len(out):
            raise AxisError(f"{func}(): argument '{arg}' has repeated axes: {axis!r}")
        return tuple(sorted(out)) if sort else tuple(out)
    if isinstance(axis, bool) or not hasattr(axis, "__index__"):
        raise TypeError(f"{func}(): argument '{arg}' must be {_axes_kinds(none_is_all, lists)}, got {axis!r}")
    return (normalize_axis(axis, ndim, func, arg),)


def _axes_kinds(none_is_all: bool, lists: bool) -> str:
    seq = "a tuple or list of ints" if lists else "a tuple of ints"
    return f"None, an int or {seq}" if none_is_all else f"an int or {seq}"


def check_bool(v, func: str, arg: str, *, numpy_bool: bool = False) -> bool:
    """``v`` if it is a Python bool (or, with ``numpy_bool``, a NumPy bool), else ``TypeError``."""
    if isinstance(v, bool):
        return v
    if numpy_bool and isinstance(v, np.bool_):
        return bool(v)
    raise TypeError(f"{func}(): argument '{arg}' must be a bool, got {v!r}")


def check_copy(copy, func: str) -> None:
    """``ValueError`` unless ``copy`` is one of the standard's ``True``, ``False``, ``None``."""
    if copy not in (None, True, False):
        raise ValueError(f"{func}(): argument 'copy' must be True, False or None, got {copy!r}")


def check_dtype(
    dtype: _dtypes.DType, category: str, func: str, arg: str = "x", *, kernels: bool = True
) -> None:
    """``TypeError`` unless ``dtype`` belongs to ``category`` (a key of ``_dtypes.CATEGORIES``);
    ``kernels``: the function computes with Taichi kernels, which cannot take bfloat16."""
    if dtype not in _dtypes.CATEGORIES[category]:
        article = "an" if category[0] in "aeiou" else "a"
        raise TypeError(f"{func}(): argument '{arg}' must have {article} {category} dtype, got {dtype.name}")
    if kernels and dtype._ti_name is None:
        raise TypeError(
            f"{func}(): argument '{arg}' has dtype {dtype.name}, which Taichi cannot compute on; "
            "convert it to float32 first"
        )
