"""Creation functions (array API "Creation Functions")."""

from __future__ import annotations

import math
import operator

import numpy as np

from . import _dtypes, _runtime
from ._array_object import TiArray, api_sequence
from ._buffer import empty_owned
from ._interchange import asarray, from_dlpack
from ._kernels.copy import copy_into
from ._views import broadcast_view

__all__ = [
    "asarray", "from_dlpack", "empty", "empty_like", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like",
    "arange", "linspace", "eye", "meshgrid", "tril", "triu",
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
        return _dtypes.DEFAULTS[default_kind]
    return _dtypes.to_dtype(dtype, func=func)


def empty(shape, *, dtype=None, device=None) -> TiArray:
    """An array of ``shape`` with uninitialised contents.

    Parameters
    ----------
    shape : int or tuple of ints
        The shape of the result.
    dtype : DType, optional
        Default: the default real floating dtype (``float64``).
    device : Device or str, optional
        Default: the device Taichi computes on.

    Returns
    -------
    TiArray
        A new array; its contents are whatever the memory held.

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a tuple of ints, or ``dtype`` is not a dtype.
    ValueError
        If ``shape`` has a negative size, or ``device`` is not a device of the runtime.

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

    Parameters
    ----------
    shape : int or tuple of ints
        The shape of the result.
    dtype : DType, optional
        Default: the default real floating dtype (``float64``).
    device : Device or str, optional
        Default: the device Taichi computes on.

    Returns
    -------
    TiArray

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a tuple of ints, or ``dtype`` is not a dtype.
    ValueError
        If ``shape`` has a negative size, or ``device`` is not a device of the runtime.

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

    Parameters
    ----------
    shape : int or tuple of ints
        The shape of the result.
    fill_value : bool, int, float or complex
        The value of every element (a 0-d TiArray or a NumPy scalar is accepted).
    dtype : DType, optional
        Default: that of ``fill_value``: ``bool``, the default integer, real floating or
        complex floating dtype.
    device : Device or str, optional
        Default: the device Taichi computes on.

    Returns
    -------
    TiArray

    Raises
    ------
    TypeError
        If ``fill_value`` is not a scalar, or is of a kind ``dtype`` cannot hold (a float
        for an integer dtype, a complex for a real one).
    OverflowError
        If an int ``fill_value`` does not fit ``dtype``.
    ValueError
        If ``shape`` has a negative size.

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
    elif isinstance(fill_value, np.generic) and fill_value.dtype.kind in "biufc":
        fill_value = fill_value.item()  # a NumPy scalar: its Python value
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

    Parameters
    ----------
    shape : int or tuple of ints
        The shape of the result.
    dtype : DType, optional
        Default: the default real floating dtype (``float64``).
    device : Device or str, optional
        Default: the device Taichi computes on.

    Returns
    -------
    TiArray

    Raises
    ------
    TypeError
        If ``shape`` is not an int or a tuple of ints, or ``dtype`` is not a dtype.
    ValueError
        If ``shape`` has a negative size.

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
    """An uninitialised array with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : TiArray
        The array whose shape (and by default dtype and device) the result takes.
    dtype : DType, optional
        Default: ``x.dtype``.
    device : Device or str, optional
        Default: ``x.device``.

    Returns
    -------
    TiArray
        A new array; its contents are whatever the memory held.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray or ``dtype`` is not a dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[1, 2, 3]])
    >>> ta.empty_like(x).shape
    (1, 3)
    """
    dt, dev = _like(x, dtype, device, "empty_like")
    return empty_owned(x.shape, dt, dev)


def zeros_like(x, /, *, dtype=None, device=None) -> TiArray:
    """An array of zeros with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : TiArray
        The array whose shape (and by default dtype and device) the result takes.
    dtype : DType, optional
        Default: ``x.dtype``.
    device : Device or str, optional
        Default: ``x.device``.

    Returns
    -------
    TiArray
        Zeros.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray or ``dtype`` is not a dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[1, 2, 3]])
    >>> ta.zeros_like(x, dtype=ta.float32)
    TiArray([[0., 0., 0.]], dtype=float32)
    """
    dt, dev = _like(x, dtype, device, "zeros_like")
    return empty_owned(x.shape, dt, dev, zero=True)


def ones_like(x, /, *, dtype=None, device=None) -> TiArray:
    """An array of ones with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : TiArray
        The array whose shape (and by default dtype and device) the result takes.
    dtype : DType, optional
        Default: ``x.dtype``.
    device : Device or str, optional
        Default: ``x.device``.

    Returns
    -------
    TiArray
        Ones.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray or ``dtype`` is not a dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[1, 2, 3]])
    >>> ta.ones_like(x)
    TiArray([[1, 1, 1]], dtype=int64)
    """
    dt, dev = _like(x, dtype, device, "ones_like")
    return ones(x.shape, dtype=dt, device=dev)


def full_like(x, /, fill_value, *, dtype=None, device=None) -> TiArray:
    """An array filled with ``fill_value``, with the shape (and by default dtype and device) of ``x``.

    Parameters
    ----------
    x : TiArray
        The array whose shape (and by default dtype and device) the result takes.
    fill_value : bool, int, float or complex
        The value of every element.
    dtype : DType, optional
        Default: ``x.dtype``.
    device : Device or str, optional
        Default: ``x.device``.

    Returns
    -------
    TiArray
        Every element is ``fill_value``.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray or ``dtype`` is not a dtype.
        Also if ``fill_value`` is of a kind the dtype cannot hold (see :func:`full`).
    OverflowError
        If an int ``fill_value`` does not fit the dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[1, 2, 3]])
    >>> ta.full_like(x, 7)
    TiArray([[7, 7, 7]], dtype=int64)
    """
    dt, dev = _like(x, dtype, device, "full_like")
    return full(x.shape, fill_value, dtype=dt, device=dev)


# ---- api-elementwise: arange, linspace, eye, meshgrid, tril, triu (Taichi kernels)

_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


def _real_scalar(v, func: str, arg: str):
    if isinstance(v, TiArray):
        if v.ndim != 0:
            raise TypeError(f"{func}(): argument '{arg}' must be a scalar, got a {v.ndim}-D array")
        v = v.item()
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{func}(): argument '{arg}' must be an int or a float, got {v!r}")
    return v


def _kernel_span(out: TiArray) -> tuple:
    """``(ptr, nbytes, (n,))`` of a new C-contiguous array (complex as real pairs)."""
    n = out.size * (2 if out._dtype.kind == "c" else 1)
    return (out._ptr, out._nbytes(), (n,))


def _storage(dtype: _dtypes.DType) -> _dtypes.DType:
    return _dtypes.finfo_dtype(dtype) if dtype.kind == "c" else dtype


def _check_size(n: int, func: str) -> None:
    if n > (1 << 31) - 1:
        raise ValueError(f"{func}(): {n} elements; Taichi kernels index at most 2**31 - 1 elements")


def arange(start, /, stop=None, step=1, *, dtype=None, device=None) -> TiArray:
    """Evenly spaced values ``start, start + step, ...`` up to (excluding) ``stop``.

    Parameters
    ----------
    start : int or float
        The first value, or the end of the interval if ``stop`` is None (then the
        interval starts at 0).
    stop : int or float, optional
        The end of the interval (excluded).
    step : int or float, optional
        The spacing (default 1); must not be 0.
    dtype : DType, optional
        Default: the default integer dtype (int64) if ``start``, ``stop`` and ``step``
        are all ints, else the default real floating dtype (float64).
    device : Device or str, optional

    Returns
    -------
    TiArray
        A 1-D array of ``ceil((stop - start) / step)`` elements (0 if that is negative),
        element ``i`` being ``start + i * step`` computed in float64 (or int64 for
        integer dtypes) and converted to ``dtype``.

    Raises
    ------
    TypeError
        If an argument is not an int or a float, or ``dtype`` is complex or bool.
    ValueError
        If ``step`` is 0.
    OverflowError
        If the values do not fit an integer ``dtype``.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.arange(5)
    TiArray([0, 1, 2, 3, 4], dtype=int64)
    >>> ta.arange(1.0, 2.0, 0.25)
    TiArray([1.  , 1.25, 1.5 , 1.75], dtype=float64)
    """
    func = "arange"
    start = _real_scalar(start, func, "start")
    if stop is None:
        start, stop = 0, start
    stop = _real_scalar(stop, func, "stop")
    step = _real_scalar(step, func, "step")
    if step == 0:
        raise ValueError(f"{func}(): argument 'step' must not be 0")
    all_int = all(isinstance(v, int) for v in (start, stop, step))
    dt = _dtype_or(dtype, "integral" if all_int else "real floating", func)
    if dt.kind in "bc":
        raise TypeError(f"{func}(): argument 'dtype' must be a real numeric dtype, got {dt.name}")
    if all_int:
        n = max(0, -((start - stop) // step))  # ceil((stop - start) / step), exactly
    else:
        q = (stop - start) / step
        if math.isnan(q) or q == math.inf:
            raise ValueError(
                f"{func}(): (stop - start) / step must be a finite number of elements, got {q} "
                f"(start={start!r}, stop={stop!r}, step={step!r})"
            )
        n = max(0, math.ceil(q))
    _check_size(n, func)
    dev = _runtime.get_device(device, func=func)
    out = empty_owned((n,), dt, dev)
    if n == 0:
        return out
    from ._kernels import creation as _ck

    if dt.kind in "iu":
        if all_int:
            info = np.iinfo(dt.numpy)
            last = start + (n - 1) * step
            if not (info.min <= start <= info.max and info.min <= last <= info.max):
                raise OverflowError(f"{func}(): the values {start} ... {last} do not fit in {dt.name}")
            s0 = (start + (1 << 63)) % (1 << 64) - (1 << 63)
            spec = _ck.arange_int.spec([(dt, 1, False)], (_dtypes.taichi_type(dt),))
            spec.launch([_kernel_span(out), n, s0, int(step)])
            return out
    spec = _ck.arange_float.spec(
        [(dt, 1, False)], (_dtypes.taichi_type(dt),), serial=_ck.arange_float.use_serial(out._nbytes())
    )
    spec.launch([_kernel_span(out), n, float(start), float(step)])
    return out


def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True) -> TiArray:
    """``num`` evenly spaced values over ``[start, stop]`` (or ``[start, stop)``).

    Parameters
    ----------
    start, stop : int, float or complex
        The ends of the interval.
    num : int
        The number of values (>= 0).
    dtype : DType, optional
        A real or complex floating dtype. Default: the default complex floating dtype
        (complex128) if ``start`` or ``stop`` is complex, else the default real floating
        dtype (float64).
    device : Device or str, optional
    endpoint : bool, optional
        Whether ``stop`` is the last value (default True).

    Returns
    -------
    TiArray
        A 1-D array; element ``i`` is ``start + i * (stop - start) / div`` with ``div``
        ``num - 1`` (``endpoint``) or ``num``, computed in float64 and converted to
        ``dtype``; with ``endpoint`` the last element is exactly ``stop``.

    Raises
    ------
    TypeError
        If ``start``/``stop`` are not numbers, ``num`` is not an int, ``dtype`` is not
        floating, or a complex interval is asked for in a real dtype.
    ValueError
        If ``num`` is negative.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linspace(0, 1, 5)
    TiArray([0.  , 0.25, 0.5 , 0.75, 1.  ], dtype=float64)
    >>> ta.linspace(0, 1, 4, endpoint=False)
    TiArray([0.  , 0.25, 0.5 , 0.75], dtype=float64)
    """
    func = "linspace"
    vals = []
    for name, v in (("start", start), ("stop", stop)):
        if isinstance(v, TiArray):
            if v.ndim != 0:
                raise TypeError(f"{func}(): argument '{name}' must be a scalar, got a {v.ndim}-D array")
            v = v.item()
        if isinstance(v, bool) or not isinstance(v, (int, float, complex)):
            raise TypeError(f"{func}(): argument '{name}' must be an int, a float or a complex, got {v!r}")
        vals.append(complex(v) if isinstance(v, complex) else float(v))
    try:
        num = operator.index(num)
    except TypeError:
        raise TypeError(f"{func}(): argument 'num' must be an int, got {num!r}") from None
    if num < 0:
        raise ValueError(f"{func}(): argument 'num' must be >= 0, got {num}")
    if endpoint not in (True, False):
        raise TypeError(f"{func}(): argument 'endpoint' must be a bool, got {endpoint!r}")
    is_c = any(isinstance(v, complex) for v in vals)
    dt = _dtype_or(dtype, "complex floating" if is_c else "real floating", func)
    if dt.kind not in "fc":
        raise TypeError(f"{func}(): argument 'dtype' must be a floating-point dtype, got {dt.name}")
    if is_c and dt.kind != "c":
        raise TypeError(f"{func}(): a complex interval needs a complex dtype, got {dt.name}")
    _check_size(num, func)
    dev = _runtime.get_device(device, func=func)
    out = empty_owned((num,), dt, dev)
    if num == 0:
        return out
    a, b = complex(vals[0]), complex(vals[1])
    div = (num - 1) if endpoint else num
    step = (b - a) / div if div > 0 else 0j
    from ._kernels import creation as _ck

    sd = _storage(dt)
    spec = _ck.linspace.spec(
        [(sd, 1, False)],
        (dt.kind == "c", _dtypes.taichi_type(sd)),
        serial=_ck.linspace.use_serial(out._nbytes()),
    )
    spec.launch(
        [
            _kernel_span(out),
            num,
            a.real,
            a.imag,
            step.real,
            step.imag,
            b.real,
            b.imag,
            int(endpoint and num > 1),
        ]
    )
    return out


def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None) -> TiArray:
    """A 2-D array with ones on the ``k``-th diagonal and zeros elsewhere.

    Parameters
    ----------
    n_rows : int
        Number of rows.
    n_cols : int, optional
        Number of columns (default ``n_rows``).
    k : int, optional
        The diagonal: 0 the main one, positive above it, negative below it.
    dtype : DType, optional
        Default: the default real floating dtype (float64).
    device : Device or str, optional

    Returns
    -------
    TiArray
        An ``(n_rows, n_cols)`` array.

    Raises
    ------
    TypeError
        If a size or ``k`` is not an int.
    ValueError
        If a size is negative.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.eye(2, 3, k=1, dtype=ta.int32)
    TiArray([[0, 1, 0],
             [0, 0, 1]], dtype=int32)
    """
    func = "eye"
    try:
        n_rows = operator.index(n_rows)
        n_cols = n_rows if n_cols is None else operator.index(n_cols)
        k = operator.index(k)
    except TypeError:
        raise TypeError(
            f"{func}(): 'n_rows', 'n_cols' and 'k' must be ints, got {n_rows!r}, {n_cols!r}, {k!r}"
        ) from None
    shape = normalize_shape((n_rows, n_cols), func)
    dt = _dtype_or(dtype, "real floating", func)
    _check_size(n_rows * n_cols, func)
    dev = _runtime.get_device(device, func=func)
    out = empty_owned(shape, dt, dev, zero=True)
    r0, c0 = max(0, -k), max(0, k)
    d = max(0, min(n_rows - r0, n_cols - c0))
    if d == 0:
        return out
    from ._kernels import creation as _ck

    spec = _ck.eye.spec([(_storage(dt), 1, False)], (dt.kind == "c", _dtypes.taichi_type(dt)))
    spec.launch([_kernel_span(out), d, r0, c0, n_cols])
    return out


def meshgrid(*arrays, indexing="xy") -> tuple:
    """Coordinate matrices from coordinate vectors.

    Parameters
    ----------
    *arrays : TiArray
        One-dimensional arrays of one dtype, on one device.
    indexing : {"xy", "ij"}, optional
        Cartesian (default: the first two output axes are swapped) or matrix indexing.

    Returns
    -------
    tuple of TiArray
        One new array per input, all of shape ``(len(x1), len(x0), len(x2), ...)``
        (``"xy"``) or ``(len(x0), len(x1), ...)`` (``"ij"``); array ``i`` repeats input
        ``i`` along the other axes. A tuple, as the 2025.12 standard says (a list under
        ``TIARRAY_ARRAY_API_VERSION=2024.12``).

    Raises
    ------
    TypeError
        If an argument is not an array or the dtypes differ.
    ValueError
        If an array is not one-dimensional, ``indexing`` is invalid or the arrays are on
        different devices.

    Examples
    --------
    >>> import tiarray as ta
    >>> X, Y = ta.meshgrid(ta.asarray([1, 2, 3]), ta.asarray([4, 5]))
    >>> X
    TiArray([[1, 2, 3],
             [1, 2, 3]], dtype=int64)
    >>> Y
    TiArray([[4, 4, 4],
             [5, 5, 5]], dtype=int64)
    """
    func = "meshgrid"
    if indexing not in ("xy", "ij"):
        raise ValueError(f"{func}(): argument 'indexing' must be 'xy' or 'ij', got {indexing!r}")
    xs = []
    for i, a in enumerate(arrays):
        if not isinstance(a, TiArray):
            raise TypeError(f"{func}(): argument {i} must be a TiArray, got {type(a).__name__}")
        if a.ndim != 1:
            raise ValueError(f"{func}(): argument {i} must be one-dimensional, got shape {a.shape}")
        xs.append(a)
    if not xs:
        return api_sequence(())
    if len({a._dtype for a in xs}) > 1:
        raise TypeError(
            f"{func}(): the arrays must have one dtype, got {', '.join(a._dtype.name for a in xs)}"
        )
    if len({a._device for a in xs}) > 1:
        raise ValueError(f"{func}(): the arrays must be on one device")
    n = len(xs)
    lens = [a.shape[0] for a in xs]
    shape = list(lens)
    if indexing == "xy" and n > 1:
        shape[0], shape[1] = shape[1], shape[0]
    shape = tuple(shape)
    from ._kernels.copy import strided_copy

    outs = []
    for i, a in enumerate(xs):
        ax = i
        if indexing == "xy" and n > 1 and i < 2:
            ax = 1 - i
        strides = [0] * n
        strides[ax] = a._strides[0]
        v = a._view(a._ptr, shape, tuple(strides))
        out = empty_owned(shape, a._dtype, a._device)
        if out.size:
            strided_copy(out, v)
        outs.append(out)
    return api_sequence(outs)


def _tri(x, k, lower: bool, func: str) -> TiArray:
    if not isinstance(x, TiArray):
        raise TypeError(f"{func}(): argument 'x' must be a TiArray, got {type(x).__name__}")
    if x.ndim < 2:
        raise ValueError(f"{func}(): argument 'x' must have at least 2 dimensions, got shape {x.shape}")
    try:
        k = operator.index(k)
    except TypeError:
        raise TypeError(f"{func}(): argument 'k' must be an int, got {k!r}") from None
    if x._dtype is _dtypes.bfloat16:
        raise TypeError(f"{func}(): bfloat16 is not supported by Taichi kernels")
    out = empty_owned(x._shape, x._dtype, x._device)
    n = out.size
    if n == 0:
        return out
    _check_size(n, func)
    from ._kernels import creation as _ck
    from ._kernels._strided import meta_arg, meta_array, span_arg

    span, off = span_arg(x)
    if x._dtype.kind == "c":
        span = (span[0], span[1], (span[2][0] * 2,))
    meta = meta_array(off, *x._shape, *x._strides, k)
    sd = _storage(x._dtype)
    spec = _ck.tri.spec(
        [(sd, 1, False), (sd, 1, False), (_dtypes.int64, 1, False)],
        (x.ndim, lower, x._dtype.kind == "c", _dtypes.taichi_type(x._dtype)),
        serial=_ck.tri.use_serial(2 * out._nbytes()),
    )
    spec.launch([_kernel_span(out), span, meta_arg(meta), n])
    return out


def tril(x, /, *, k=0) -> TiArray:
    """The lower triangle of each matrix in ``x`` (elements above the ``k``-th diagonal zeroed).

    Parameters
    ----------
    x : TiArray
        An array of at least 2 dimensions (a stack of matrices in the last two axes).
    k : int, optional
        The diagonal above which to zero: 0 the main diagonal, positive above it,
        negative below it.

    Returns
    -------
    TiArray
        A new array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` is not an array or ``k`` not an int.
    ValueError
        If ``x`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.tril(ta.ones((3, 3), dtype=ta.int8))
    TiArray([[1, 0, 0],
             [1, 1, 0],
             [1, 1, 1]], dtype=int8)
    """
    return _tri(x, k, True, "tril")


def triu(x, /, *, k=0) -> TiArray:
    """The upper triangle of each matrix in ``x`` (elements below the ``k``-th diagonal zeroed).

    Parameters
    ----------
    x : TiArray
        An array of at least 2 dimensions (a stack of matrices in the last two axes).
    k : int, optional
        The diagonal below which to zero: 0 the main diagonal, positive above it,
        negative below it.

    Returns
    -------
    TiArray
        A new array of ``x``'s shape and dtype.

    Raises
    ------
    TypeError
        If ``x`` is not an array or ``k`` not an int.
    ValueError
        If ``x`` has fewer than 2 dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.triu(ta.ones((3, 3), dtype=ta.int8), k=1)
    TiArray([[0, 1, 1],
             [0, 0, 1],
             [0, 0, 0]], dtype=int8)
    """
    return _tri(x, k, False, "triu")


# ---- end api-elementwise
