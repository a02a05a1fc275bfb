"""Statistical functions (array API 2024.12): reductions and cumulative sums/products.

Every function runs Taichi kernels on the array's device: :mod:`tiarray._kernels.reduce`
for reductions over any set of axes and :mod:`tiarray._kernels.scan` for cumulative sums
and products. Inputs may be strided, transposed or have negative strides: nothing is
copied except to cast between real and complex data.
"""

from __future__ import annotations

import math

from . import _dtypes
from ._array_object import TiArray
from ._buffer import empty_owned
from ._kernels import reduce as _kr
from ._kernels.copy import copy_array
from ._validate import check_array, check_bool, check_dtype, normalize_axes, normalize_axis
from ._views import reduced_shape

__all__ = ["cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var"]

# ----------------------------------------------------------------------------- dtype rules


def sumprod_dtype(x: TiArray, dtype, func: str) -> _dtypes.DType:
    """The result dtype of sum/prod/cumulative_sum/cumulative_prod (2024.12 rules).

    ``None``: the dtype of ``x``, except that signed integers (and bool) give the default
    integer dtype and unsigned integers the unsigned dtype of the same width.
    """
    if dtype is None:
        k = x._dtype.kind
        if k in "bi":
            return _dtypes.default_int() if x._dtype.itemsize <= _dtypes.default_int().itemsize else x._dtype
        if k == "u":
            du = _dtypes.default_uint()
            return du if x._dtype.itemsize <= du.itemsize else x._dtype
        return x._dtype
    d = _dtypes.to_dtype(dtype, func=func)
    if d not in _dtypes.NUMERIC:
        raise TypeError(f"{func}(): argument 'dtype' must be a numeric data type, got {d.name}")
    if d._ti_name is None:
        raise TypeError(f"{func}(): argument 'dtype' {d.name} is not supported by tiarray's kernels")
    if x._dtype.kind == "c" and d.kind != "c":
        raise TypeError(
            f"{func}(): argument 'dtype' must be a complex data type for complex input "
            f"({x._dtype.name}), got {d.name}; take real() or abs() first"
        )
    return d


def acc_dtype(out: _dtypes.DType) -> _dtypes.DType:
    """The accumulator of sums and products giving ``out``.

    Integers accumulate in 64 bits (the result modulo 2**bits is the same as wrapping at
    every step), floating point in double precision.
    """
    k = out.kind
    if k == "i":
        return _dtypes.int64
    if k == "u":
        return _dtypes.uint64
    if k == "f":
        return _dtypes.float64
    if k == "c":
        return _dtypes.complex128
    return _dtypes.int64


def _prepare(x: TiArray, out_dtype: _dtypes.DType) -> TiArray:
    """``x`` as the kernels read it for a result of ``out_dtype``: a real array becomes
    complex (a copy) when the result is complex, floating data becomes integers (a copy,
    cast exactly as ``astype`` casts, out-of-range values included) when the result is an
    integer; any other cast happens on the fly."""
    if out_dtype.kind == "c" and x._dtype.kind != "c":
        return copy_array(x, out_dtype)
    if out_dtype.kind in "iu" and x._dtype.kind == "f":
        return copy_array(x, out_dtype)
    return x


def _reduction(x, axis, keepdims, op, out_dtype, acc, func, *, post=_kr.POST_NONE, div=None, aux=None):
    axes = normalize_axes(axis, x.ndim, func, none_is_all=True, sort=True, lists=False)
    check_bool(keepdims, func, "keepdims")
    shape = reduced_shape(x._shape, axes, keepdims)
    m = math.prod(x._shape[i] for i in axes)
    out = empty_owned(shape, out_dtype, x._device)
    d = div(m) if div is not None else 1.0
    _kr.reduce_into(out, _prepare(x, out_dtype), axes, op, acc, post=post, div=d, aux=aux)
    return out


# ----------------------------------------------------------------------------- reductions


def sum(x, /, *, axis=None, dtype=None, keepdims=False) -> TiArray:
    """Sum of the elements of ``x`` over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of a numeric data type.
    axis : int or tuple of ints, optional
        Axes to reduce (negative values count from the end). Default: all axes.
    dtype : DType, optional
        Data type of the result; ``x`` is cast to it before summing. Default: the dtype
        of ``x``, except that signed integers (and bool) sum to the default integer dtype
        (``int64``) and unsigned integers to ``uint64``.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The sums; ``0`` for an empty reduction.

    Raises
    ------
    TypeError
        If ``x`` is not a numeric TiArray, ``dtype`` is not numeric, or ``dtype`` is real
        for complex ``x``.
    AxisError
        (a ``ValueError`` and ``IndexError``) if an axis is out of range or repeated.

    Notes
    -----
    Integer sums wrap around on overflow. ``float32`` data is accumulated in double
    precision and ``float64`` data pairwise, so rounding errors stay as small as NumPy's.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = ta.asarray(np.arange(6, dtype=np.int32).reshape(2, 3))
    >>> ta.sum(x)
    TiArray(15, dtype=int64)
    >>> ta.sum(x, axis=0, dtype=ta.float32).tolist()
    [3.0, 5.0, 7.0]
    """
    func = "sum"
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "numeric", func)
    out_dtype = sumprod_dtype(x, dtype, func)
    return _reduction(x, axis, keepdims, _kr.SUM, out_dtype, acc_dtype(out_dtype), func)


def prod(x, /, *, axis=None, dtype=None, keepdims=False) -> TiArray:
    """Product of the elements of ``x`` over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of a numeric data type.
    axis : int or tuple of ints, optional
        Axes to reduce (negative values count from the end). Default: all axes.
    dtype : DType, optional
        Data type of the result (``x`` is cast to it first). Default: as :func:`sum`.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The products; ``1`` for an empty reduction.

    Raises
    ------
    TypeError
        If ``x`` is not a numeric TiArray or ``dtype`` is not acceptable (see :func:`sum`).
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.prod(ta.asarray(np.array([[1.0, 2.0], [3.0, 4.0]])), axis=1).tolist()
    [2.0, 12.0]
    """
    func = "prod"
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "numeric", func)
    out_dtype = sumprod_dtype(x, dtype, func)
    return _reduction(x, axis, keepdims, _kr.PROD, out_dtype, acc_dtype(out_dtype), func)


def _minmax(x, axis, keepdims, op, func):
    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "real numeric", func)
    axes = normalize_axes(axis, x.ndim, func, none_is_all=True, sort=True, lists=False)
    if x.size == 0 and math.prod(reduced_shape(x._shape, axes, False)) != 0:
        raise ValueError(
            f"{func}(): the reduction is over zero elements (input shape {x._shape}, axis={axis!r}) "
            f"and has no identity; the {func} of nothing is undefined"
        )
    acc = x._dtype
    if x._dtype.kind in "iu" and x._dtype.itemsize < 4:
        acc = _dtypes.int32  # Taichi's LLVM backend has no 8-bit max/min
    return _reduction(x, axes, keepdims, op, x._dtype, acc, func)


def max(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Maximum of the elements of ``x`` over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type.
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The maxima, with the dtype of ``x``. NaN propagates: a reduction over a NaN is NaN.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype (bool and complex are refused).
    ValueError
        If a reduction is over zero elements (the maximum of nothing is undefined).
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.max(ta.asarray(np.array([[1, 5], [7, 2]])), axis=1).tolist()
    [5, 7]
    >>> float(ta.max(ta.asarray(np.array([1.0, np.nan, 3.0]))))
    nan
    """
    return _minmax(x, axis, keepdims, _kr.MAX, "max")


def min(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Minimum of the elements of ``x`` over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of a real numeric data type.
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The minima, with the dtype of ``x``. NaN propagates.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real numeric dtype.
    ValueError
        If a reduction is over zero elements.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.min(ta.asarray(np.array([[1, 5], [7, 2]])), axis=0).tolist()
    [1, 2]
    """
    return _minmax(x, axis, keepdims, _kr.MIN, "min")


def _float_result(x: TiArray, func: str, *, allow_complex: bool) -> _dtypes.DType:
    cat = "numeric" if allow_complex else "real numeric"
    check_dtype(x._dtype, cat, func)
    if x._dtype.kind in "iu":
        return _dtypes.default_float()
    return x._dtype


def mean(x, /, *, axis=None, keepdims=False) -> TiArray:
    """Arithmetic mean of the elements of ``x`` over the given axes.

    Parameters
    ----------
    x : TiArray
        Input array of a floating-point data type (real or complex). Integer input is
        accepted too (as the standard allows) and gives the default floating dtype.
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The means, with the dtype of ``x`` (``float64`` for integer input). NaN for a
        reduction over zero elements (``NaN + NaN j`` for complex input).

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray or has a boolean dtype.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.mean(ta.asarray(np.array([[1.0, 2.0], [3.0, 5.0]])), axis=0).tolist()
    [2.0, 3.5]
    """
    func = "mean"
    x = check_array(x, func, on_device=True)
    out_dtype = _float_result(x, func, allow_complex=True)
    return _reduction(
        x, axis, keepdims, _kr.SUM, out_dtype, acc_dtype(out_dtype), func, post=_kr.POST_DIV, div=float
    )


def _check_correction(correction, func):
    if isinstance(correction, bool) or not isinstance(correction, (int, float)):
        try:
            import numpy as np

            if isinstance(correction, (np.integer, np.floating)):
                return float(correction)
        except ImportError:  # pragma: no cover
            pass
        raise TypeError(f"{func}(): argument 'correction' must be an int or a float, got {correction!r}")
    return float(correction)


def _var(x, axis, correction, keepdims, func, post):
    x = check_array(x, func, on_device=True)
    out_dtype = _float_result(x, func, allow_complex=False)
    c = _check_correction(correction, func)
    axes = normalize_axes(axis, x.ndim, func, none_is_all=True, sort=True, lists=False)
    check_bool(keepdims, func, "keepdims")
    m = math.prod(x._shape[i] for i in axes)
    acc = acc_dtype(out_dtype)
    means = empty_owned(reduced_shape(x._shape, axes, False), acc, x._device)
    _kr.reduce_into(means, x, axes, _kr.SUM, acc, post=_kr.POST_DIV, div=float(m))
    denom = m - c
    div = denom if denom > 0 else math.nan  # the standard: NaN when M - correction <= 0
    out = empty_owned(reduced_shape(x._shape, axes, keepdims), out_dtype, x._device)
    _kr.reduce_into(out, x, axes, _kr.SQDEV, acc, post=post, div=div, aux=means)
    return out


def var(x, /, *, axis=None, correction=0.0, keepdims=False) -> TiArray:
    """Variance of the elements of ``x`` over the given axes.

    Computed in two passes (the mean, then the mean squared deviation from it), in double
    precision for ``float32`` data.

    Parameters
    ----------
    x : TiArray
        Input array of a real floating-point data type (integer input gives ``float64``).
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    correction : int or float, optional
        Degrees of freedom adjustment: the divisor is ``M - correction`` for ``M``
        elements. ``1`` gives the unbiased sample variance. Default: ``0``.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The variances; NaN where ``M - correction <= 0``.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real dtype (bool and complex are refused) or
        ``correction`` is not a number.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = ta.asarray(np.array([1.0, 2.0, 3.0, 4.0]))
    >>> float(ta.var(x)), float(ta.var(x, correction=1))
    (1.25, 1.6666666666666667)
    """
    return _var(x, axis, correction, keepdims, "var", _kr.POST_DIV)


def std(x, /, *, axis=None, correction=0.0, keepdims=False) -> TiArray:
    """Standard deviation of the elements of ``x`` over the given axes.

    The square root of :func:`var`.

    Parameters
    ----------
    x : TiArray
        Input array of a real floating-point data type (integer input gives ``float64``).
    axis : int or tuple of ints, optional
        Axes to reduce. Default: all axes.
    correction : int or float, optional
        Degrees of freedom adjustment (divisor ``M - correction``). Default: ``0``.
    keepdims : bool, optional
        Keep the reduced axes as axes of size one. Default: ``False``.

    Returns
    -------
    TiArray
        The standard deviations; NaN where ``M - correction <= 0``.

    Raises
    ------
    TypeError
        If ``x`` is not a TiArray of a real dtype or ``correction`` is not a number.
    AxisError
        If an axis is out of range or repeated.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> float(ta.std(ta.asarray(np.array([1.0, 3.0]))))
    1.0
    """
    return _var(x, axis, correction, keepdims, "std", _kr.POST_SQRT)


# ----------------------------------------------------------------------------- scans


def _cumulative(x, axis, dtype, include_initial, op, func):
    from ._kernels.scan import scan_into

    x = check_array(x, func, on_device=True)
    check_dtype(x._dtype, "numeric", func)
    if x.ndim == 0:
        raise ValueError(f"{func}(): expected an array with at least one dimension, got a 0-d array")
    if axis is None:
        if x.ndim > 1:
            raise ValueError(
                f"{func}(): argument 'axis' is required for a {x.ndim}-d array (it may be omitted only "
                "for 1-d arrays)"
            )
        axis = 0
    else:
        axis = normalize_axis(axis, x.ndim, func)
    check_bool(include_initial, func, "include_initial")
    out_dtype = sumprod_dtype(x, dtype, func)
    shape = list(x._shape)
    shape[axis] += 1 if include_initial else 0
    out = empty_owned(tuple(shape), out_dtype, x._device)
    scan_into(out, _prepare(x, out_dtype), axis, op, acc_dtype(out_dtype), include_initial)
    return out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False) -> TiArray:
    """Cumulative sum of the elements of ``x`` along an axis.

    Parameters
    ----------
    x : TiArray
        Input array of a numeric data type, with at least one dimension.
    axis : int, optional
        The axis to accumulate along; required when ``x`` has more than one dimension.
    dtype : DType, optional
        Data type of the result; ``x`` is cast to it first. Default: as :func:`sum`
        (signed integers give ``int64``, unsigned integers ``uint64``).
    include_initial : bool, optional
        Start the result with the additive identity (zero), making the axis one longer.

    Returns
    -------
    TiArray
        The running sums (C-contiguous).

    Raises
    ------
    TypeError
        If ``x`` is not a numeric TiArray or ``dtype`` is not acceptable.
    ValueError
        If ``x`` is 0-d, or ``axis`` is missing for a multi-dimensional ``x``.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.cumulative_sum(ta.asarray(np.array([1, 2, 3]))).tolist()
    [1, 3, 6]
    >>> ta.cumulative_sum(ta.asarray(np.array([[1, 2], [3, 4]])), axis=0, include_initial=True).tolist()
    [[0, 0], [1, 2], [4, 6]]
    """
    return _cumulative(x, axis, dtype, include_initial, _kr.SUM, "cumulative_sum")


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False) -> TiArray:
    """Cumulative product of the elements of ``x`` along an axis.

    Parameters
    ----------
    x : TiArray
        Input array of a numeric data type, with at least one dimension.
    axis : int, optional
        The axis to accumulate along; required when ``x`` has more than one dimension.
    dtype : DType, optional
        Data type of the result; ``x`` is cast to it first. Default: as :func:`prod`.
    include_initial : bool, optional
        Start the result with the multiplicative identity (one).

    Returns
    -------
    TiArray
        The running products (C-contiguous).

    Raises
    ------
    TypeError
        If ``x`` is not a numeric TiArray or ``dtype`` is not acceptable.
    ValueError
        If ``x`` is 0-d, or ``axis`` is missing for a multi-dimensional ``x``.
    AxisError
        If ``axis`` is out of range.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> ta.cumulative_prod(ta.asarray(np.array([1.0, 2.0, 3.0])), include_initial=True).tolist()
    [1.0, 1.0, 2.0, 6.0]
    """
    return _cumulative(x, axis, dtype, include_initial, _kr.PROD, "cumulative_prod")
