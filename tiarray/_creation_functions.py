"""Creation functions (array API "Creation Functions")."""

from __future__ import annotations

import math
import operator

from . import _dtypes, _runtime
from ._array_object import TiArray
from ._interop import asarray, copy_into, empty_owned, from_dlpack
from ._views import broadcast_view

__all__ = [
    "asarray", "from_dlpack", "empty", "empty_like", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like",
]  # fmt: skip


def normalize_shape(shape, func: str) -> tuple:
    """A shape argument as a tuple of non-negative ints, with a clear error otherwise."""
    if isinstance(shape, TiArray):
        shape = shape.tolist()
    try:
        shape = (operator.index(shape),)
    except TypeError:
        try:
            shape = tuple(operator.index(s) for s in shape)
        except TypeError:
            raise TypeError(
                f"{func}(): argument 'shape' must be an int or a tuple of ints, got {shape!r}"
            ) from None
    for s in shape:
        if s < 0:
            raise ValueError(f"{func}(): argument 'shape' must not have negative sizes, got {shape}")
    n = math.prod(shape)
    if n * 16 >= 1 << 62:
        raise ValueError(f"{func}(): shape {shape} has {n} elements, too many to allocate")
    return shape


def _dtype_or(dtype, default_kind: str, func: str) -> _dtypes.DType:
    if dtype is None:
        from ._info import default_dtypes_plain

        return default_dtypes_plain()[default_kind]
    return _dtypes.to_dtype(dtype, func=func)


def empty(shape, *, dtype=None, device=None) -> TiArray:
    """An array of ``shape`` with uninitialised contents.

    Parameters
    ----------
    shape : int or tuple of ints
    dtype : DType, optional
        Default: the default real floating dtype (``float64``).
    device : Device or str, optional
        Default: the device Taichi computes on.

    Returns
    -------
    TiArray

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.empty((2, 3), dtype=ta.int32).shape
    (2, 3)
    """
    shape = normalize_shape(shape, "empty")
    dt = _dtype_or(dtype, "real floating", "empty")
    return empty_owned(shape, dt, _runtime.get_device(device, func="empty"))


def zeros(shape, *, dtype=None, device=None) -> TiArray:
    """An array of ``shape`` filled with zeros (lazily zeroed pages on the CPU).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.zeros(3)
    TiArray([0., 0., 0.], dtype=float64)
    """
    shape = normalize_shape(shape, "zeros")
    dt = _dtype_or(dtype, "real floating", "zeros")
    return empty_owned(shape, dt, _runtime.get_device(device, func="zeros"), zero=True)


def full(shape, fill_value, *, dtype=None, device=None) -> TiArray:
    """An array of ``shape`` filled with ``fill_value``.

    The dtype defaults to that of ``fill_value``: bool, the default integer, real
    floating or complex floating dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.full((2,), 7)
    TiArray([7, 7], dtype=int64)
    """
    shape = normalize_shape(shape, "full")
    if isinstance(fill_value, TiArray):
        if fill_value.ndim != 0:
            raise TypeError(
                f"full(): argument 'fill_value' must be a scalar, got a {fill_value.ndim}-D array"
            )
        fill_value = fill_value.item()
    if not isinstance(fill_value, (bool, int, float, complex)):
        raise TypeError(
            f"full(): argument 'fill_value' must be a bool, int, float or complex, got {type(fill_value).__name__}"
        )
    dev = _runtime.get_device(device, func="full")
    if dtype is None:
        v = asarray(fill_value)
        dt = v._dtype
    else:
        dt = _dtypes.to_dtype(dtype, func="full")
        if isinstance(fill_value, complex) and dt.kind != "c":
            raise TypeError(f"full(): a complex fill_value needs a complex dtype, got {dt.name}")
        if isinstance(fill_value, float) and dt.kind in "biu":
            raise TypeError(f"full(): a float fill_value needs a floating dtype, got {dt.name}")
        v = asarray(fill_value, dtype=dt)
    out = empty_owned(shape, dt, dev)
    if dev != v._device:
        v = v.to_device(dev)
    copy_into(out, broadcast_view(v, shape))
    return out


def ones(shape, *, dtype=None, device=None) -> TiArray:
    """An array of ``shape`` filled with ones.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.ones(2, dtype=ta.int8)
    TiArray([1, 1], dtype=int8)
    """
    dt = _dtype_or(dtype, "real floating", "ones")
    return full(shape, True if dt.kind == "b" else 1, dtype=dt, device=device)


def _like(x, dtype, device, func):
    if not isinstance(x, TiArray):
        raise TypeError(f"{func}(): argument 'x' must be a TiArray, got {type(x).__name__}")
    dt = x._dtype if dtype is None else _dtypes.to_dtype(dtype, func=func)
    dev = x._device if device is None else _runtime.get_device(device, func=func)
    return dt, dev


def empty_like(x, /, *, dtype=None, device=None) -> TiArray:
    """An uninitialised array with the shape (and by default dtype and device) of ``x``."""
    dt, dev = _like(x, dtype, device, "empty_like")
    return empty_owned(x.shape, dt, dev)


def zeros_like(x, /, *, dtype=None, device=None) -> TiArray:
    """An array of zeros with the shape (and by default dtype and device) of ``x``."""
    dt, dev = _like(x, dtype, device, "zeros_like")
    return empty_owned(x.shape, dt, dev, zero=True)


def ones_like(x, /, *, dtype=None, device=None) -> TiArray:
    """An array of ones with the shape (and by default dtype and device) of ``x``."""
    dt, dev = _like(x, dtype, device, "ones_like")
    return ones(x.shape, dtype=dt, device=dev)


def full_like(x, /, fill_value, *, dtype=None, device=None) -> TiArray:
    """An array filled with ``fill_value``, with the shape (and by default dtype and device) of ``x``."""
    dt, dev = _like(x, dtype, device, "full_like")
    return full(x.shape, fill_value, dtype=dt, device=dev)
