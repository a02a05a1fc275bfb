"""Manipulation functions (array API "Manipulation Functions").

Views wherever the data need not move: ``broadcast_to``, ``broadcast_arrays``,
``expand_dims``, ``flip``, ``moveaxis``, ``permute_dims``, ``squeeze``, ``unstack`` and
``reshape`` (when the strides allow it) return arrays sharing the input's memory. The
others build a new array with strided copies (``concat``, ``stack``, ``tile``, ``roll``,
``repeat`` with an integer count) or a gather (``repeat`` with an array of counts).
"""

from __future__ import annotations

import math
import operator

from . import _dtypes
from ._array_object import TiArray, api_sequence, c_strides
from ._validate import check_array, check_copy, check_int, check_same_device, normalize_axes, normalize_axis
from ._views import broadcast_shapes as _broadcast_shapes
from ._views import broadcast_view, reshape_view

__all__ = [
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis",
    "permute_dims", "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
]  # fmt: skip


# ----------------------------------------------------------------------------- helpers


def _shape_arg(shape, func: str, arg: str = "shape") -> tuple:
    if isinstance(shape, TiArray):
        shape = tuple(shape.tolist())
    try:
        return (operator.index(shape),)
    except TypeError:
        pass
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        raise TypeError(
            f"{func}(): argument '{arg}' must be an int or a tuple of ints, got {shape!r}"
        ) from None


def _result_dtype(arrays, func: str) -> _dtypes.DType:
    try:
        return _dtypes.result_type_of([a._dtype for a in arrays])
    except TypeError as e:
        raise TypeError(
            f"{func}(): the dtypes {', '.join(a._dtype.name for a in arrays)} have no common type: {e}"
        ) from None


def _array_list(arrays, func: str) -> list:
    if isinstance(arrays, TiArray) or not isinstance(arrays, (tuple, list)):
        raise TypeError(
            f"{func}(): argument 'arrays' must be a tuple or list of TiArrays, got {type(arrays).__name__}"
        )
    if len(arrays) == 0:
        raise ValueError(f"{func}(): argument 'arrays' must contain at least one array")
    for i, a in enumerate(arrays):
        check_array(a, func, f"arrays[{i}]")
    arrays = list(arrays)
    check_same_device(arrays, func)
    return arrays


# ----------------------------------------------------------------------------- broadcasting


def broadcast_to(x, /, shape) -> TiArray:
    """Broadcast ``x`` to ``shape`` (a view: no data is copied).

    Parameters
    ----------
    x : TiArray
        The array to broadcast.
    shape : tuple of ints
        The target shape; ``x``'s shape must be broadcast-compatible with it.

    Returns
    -------
    TiArray
        A view with zero strides on the broadcast axes. It is read-only when an axis was
        expanded, since its elements alias each other.

    Raises
    ------
    ValueError
        If ``x`` cannot be broadcast to ``shape``.

    Examples
    --------
    >>> import tiarray as ta
    >>> y = ta.broadcast_to(ta.asarray([1, 2, 3]), (2, 3))
    >>> y.shape, y.strides
    ((2, 3), (0, 1))
    """
    func = "broadcast_to"
    x = check_array(x, func)
    shape = _shape_arg(shape, func)
    if any(s < 0 for s in shape):
        raise ValueError(f"{func}(): argument 'shape' must not have negative sizes, got {shape}")
    v = broadcast_view(x, shape, func=func)
    if v is x:
        return x._view(x._ptr, x._shape, x._strides)
    return _readonly_if_expanded(v, x)


def _readonly_if_expanded(v: TiArray, x: TiArray) -> TiArray:
    expanded = v.size > x.size
    if expanded and not v._readonly:
        return TiArray._new(v._ptr, v._shape, v._strides, v._dtype, v._device, v._owner, True)
    return v


def broadcast_arrays(*arrays) -> tuple:
    """Broadcast arrays against each other (views: no data is copied).

    Parameters
    ----------
    *arrays : TiArray
        The arrays to broadcast.

    Returns
    -------
    tuple of TiArray
        One view per input, all of the broadcast shape (read-only where expanded); a tuple,
        as the 2025.12 standard says (a list under ``TIARRAY_ARRAY_API_VERSION=2024.12``).

    Raises
    ------
    ValueError
        If the shapes are not broadcast-compatible or the devices differ.

    Examples
    --------
    >>> import tiarray as ta
    >>> a, b = ta.broadcast_arrays(ta.asarray([[1], [2]]), ta.asarray([10, 20, 30]))
    >>> a.shape, b.shape
    ((2, 3), (2, 3))
    """
    func = "broadcast_arrays"
    for i, a in enumerate(arrays):
        check_array(a, func, f"arrays[{i}]")
    check_same_device(list(arrays), func)
    shape = _broadcast_shapes(*(a._shape for a in arrays), func=func)
    return api_sequence(_readonly_if_expanded(broadcast_view(a, shape, func=func), a) for a in arrays)


def broadcast_shapes(*shapes) -> tuple:
    """The shape that arrays of ``shapes`` broadcast to (array API 2025.12).

    Parameters
    ----------
    *shapes : tuple of int
        Any number of shapes (tuples or lists of non-negative ints).

    Returns
    -------
    tuple of int
        The broadcast shape; ``()`` when no shape is given.

    Raises
    ------
    TypeError
        If a shape is not a sequence of ints.
    ValueError
        If a size is negative or the shapes cannot be broadcast together.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.broadcast_shapes((2, 1), (3,), (1, 1, 1))
    (1, 2, 3)
    """
    func = "broadcast_shapes"
    norm = []
    for i, s in enumerate(shapes):
        if not isinstance(s, (tuple, list)):
            raise TypeError(f"{func}(): argument {i} must be a tuple of ints, got {type(s).__name__}")
        t = tuple(check_int(d, func, f"shapes[{i}]") for d in s)
        if any(d < 0 for d in t):
            raise ValueError(f"{func}(): argument {i} must have non-negative sizes, got {t}")
        norm.append(t)
    return _broadcast_shapes(*norm, func=func)


# ----------------------------------------------------------------------------- views


def expand_dims(x, /, axis=0) -> TiArray:
    """Insert axes of size one (a view).

    Parameters
    ----------
    x : TiArray
        The input array, of ``N`` dimensions.
    axis : int or tuple of ints, optional
        Position(s) of the new axes in the result, each in ``[-M, M)`` with
        ``M = N + len(axis)`` (``M = N + 1`` for an int). Default ``0``. Accepted by
        position or keyword (the 2024.12 signature and the newer one with tuples).

    Returns
    -------
    TiArray
        A view with ``N + len(axis)`` dimensions.

    Raises
    ------
    IndexError
        If a position is out of range (an :class:`AxisError`, also a ``ValueError``) or
        positions repeat.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([1, 2])
    >>> ta.expand_dims(x, axis=1).shape, ta.expand_dims(x, axis=(0, 2)).shape
    ((2, 1), (1, 2, 1))
    """
    func = "expand_dims"
    x = check_array(x, func)
    n_new = len(axis) if isinstance(axis, (tuple, list)) else 1
    m = x.ndim + n_new
    axes = normalize_axes(axis, m, func, none_is_all=False, sort=False, lists=True)
    shape, strides = [], []
    it = iter(zip(x._shape, x._strides))
    for i in range(m):
        if i in axes:
            shape.append(1)
            strides.append(0)
        else:
            s, st = next(it)
            shape.append(s)
            strides.append(st)
    return x._view(x._ptr, tuple(shape), tuple(strides))


def squeeze(x, /, axis) -> TiArray:
    """Remove axes of size one (a view).

    Parameters
    ----------
    x : TiArray
        The input array.
    axis : int or tuple of ints
        The axes to remove; each must have size one.

    Returns
    -------
    TiArray
        A view without those axes.

    Raises
    ------
    ValueError
        If an axis does not have size one.
    IndexError
        If an axis is out of range (an :class:`AxisError`, also a ``ValueError``).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.squeeze(ta.zeros((1, 3, 1)), axis=(0, 2)).shape
    (3,)
    """
    func = "squeeze"
    x = check_array(x, func)
    axes = normalize_axes(axis, x.ndim, func, none_is_all=False, sort=False, lists=True)
    for a in axes:
        if x._shape[a] != 1:
            raise ValueError(
                f"{func}(): cannot remove axis {a} of size {x._shape[a]}; only axes of size 1 can be squeezed"
            )
    keep = [i for i in range(x.ndim) if i not in axes]
    return x._view(x._ptr, tuple(x._shape[i] for i in keep), tuple(x._strides[i] for i in keep))


def permute_dims(x, /, axes) -> TiArray:
    """Permute the axes (a view: strides are permuted, nothing is copied).

    Parameters
    ----------
    x : TiArray
        The input array.
    axes : tuple of ints
        A permutation of ``(0, 1, ..., x.ndim - 1)`` (negative values allowed).

    Returns
    -------
    TiArray
        A view whose axis ``i`` is axis ``axes[i]`` of ``x``.

    Raises
    ------
    ValueError
        If ``axes`` is not a permutation of the axes.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.permute_dims(ta.zeros((2, 3, 4)), (2, 0, 1)).shape
    (4, 2, 3)
    """
    func = "permute_dims"
    x = check_array(x, func)
    if not isinstance(axes, (tuple, list)):
        raise TypeError(f"{func}(): argument 'axes' must be a tuple of ints, got {axes!r}")
    if len(axes) != x.ndim:
        raise ValueError(
            f"{func}(): argument 'axes' must have {x.ndim} entries (one per axis), got {tuple(axes)}"
        )
    norm = normalize_axes(tuple(axes), x.ndim, func, "axes", none_is_all=False, sort=False, lists=True)
    return x._view(x._ptr, tuple(x._shape[a] for a in norm), tuple(x._strides[a] for a in norm))


def moveaxis(x, source, destination, /) -> TiArray:
    """Move axes to new positions, keeping the others in order (a view).

    Parameters
    ----------
    x : TiArray
        The input array.
    source : int or tuple of ints
        The axes to move.
    destination : int or tuple of ints
        Their positions in the result (as many as ``source``).

    Returns
    -------
    TiArray
        A view.

    Raises
    ------
    ValueError
        If ``source`` and ``destination`` differ in length or repeat axes.
    IndexError
        If an axis is out of range (an :class:`AxisError`, also a ``ValueError``).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.moveaxis(ta.zeros((2, 3, 4)), 0, -1).shape
    (3, 4, 2)
    """
    func = "moveaxis"
    x = check_array(x, func)
    src = normalize_axes(source, x.ndim, func, "source", none_is_all=False, sort=False, lists=True)
    dst = normalize_axes(destination, x.ndim, func, "destination", none_is_all=False, sort=False, lists=True)
    if len(src) != len(dst):
        raise ValueError(
            f"{func}(): arguments 'source' and 'destination' must have the same number of axes, "
            f"got {source!r} and {destination!r}"
        )
    order = [a for a in range(x.ndim) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return x._view(x._ptr, tuple(x._shape[a] for a in order), tuple(x._strides[a] for a in order))


def flip(x, /, *, axis=None) -> TiArray:
    """Reverse the order of elements along axes (a view with negative strides).

    Parameters
    ----------
    x : TiArray
        The input array.
    axis : int or tuple of ints, optional
        The axes to flip; all of them by default.

    Returns
    -------
    TiArray
        A view.

    Raises
    ------
    IndexError
        If an axis is out of range (an :class:`AxisError`, also a ``ValueError``).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.flip(ta.asarray([1, 2, 3])).tolist()
    [3, 2, 1]
    """
    func = "flip"
    x = check_array(x, func)
    axes = (
        tuple(range(x.ndim))
        if axis is None
        else normalize_axes(axis, x.ndim, func, none_is_all=False, sort=False, lists=True)
    )
    ptr = x._ptr
    strides = list(x._strides)
    it = x._dtype.itemsize
    for a in axes:
        n = x._shape[a]
        if n > 1:
            ptr += (n - 1) * strides[a] * it
            strides[a] = -strides[a]
    return x._view(ptr, x._shape, tuple(strides))


def unstack(x, /, *, axis=0) -> tuple:
    """Split an array into views along an axis.

    Parameters
    ----------
    x : TiArray
        The input array, at least 1-D.
    axis : int, optional
        The axis to split along (default 0).

    Returns
    -------
    tuple of TiArray
        ``x.shape[axis]`` views, each without that axis.

    Raises
    ------
    ValueError
        If ``x`` is 0-d.
    IndexError
        If ``axis`` is out of range (an :class:`AxisError`, also a ``ValueError``).

    Examples
    --------
    >>> import tiarray as ta
    >>> [a.tolist() for a in ta.unstack(ta.asarray([[1, 2], [3, 4]]), axis=1)]
    [[1, 3], [2, 4]]
    """
    func = "unstack"
    x = check_array(x, func)
    if x.ndim == 0:
        raise ValueError(f"{func}(): argument 'x' must have at least one dimension, got a 0-d array")
    a = normalize_axis(axis, x.ndim, func)
    shape = x._shape[:a] + x._shape[a + 1 :]
    strides = x._strides[:a] + x._strides[a + 1 :]
    step = x._strides[a] * x._dtype.itemsize
    return tuple(x._view(x._ptr + i * step, shape, strides) for i in range(x._shape[a]))


# ----------------------------------------------------------------------------- reshape


def reshape(x, /, shape, *, copy=None) -> TiArray:
    """Give an array a new shape with the same elements in C order.

    Parameters
    ----------
    x : TiArray
        The input array.
    shape : tuple of ints
        The new shape; one entry may be ``-1`` (inferred).
    copy : bool, optional
        ``True``: always copy. ``False``: never copy (``ValueError`` if the strides of
        ``x`` do not allow a view). ``None`` (default): a view when possible, else a copy.

    Returns
    -------
    TiArray
        A view of ``x`` (C-contiguous data, or strides that split/merge cleanly) or a
        new C-contiguous array.

    Raises
    ------
    ValueError
        If the sizes do not match, more than one ``-1`` is given, or ``copy=False`` and a
        view is impossible.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([[1, 2, 3], [4, 5, 6]])
    >>> y = ta.reshape(x, (3, -1))
    >>> y.shape, y.ptr == x.ptr
    ((3, 2), True)
    """
    func = "reshape"
    x = check_array(x, func)
    check_copy(copy, func)
    shape = _infer_shape(_shape_arg(shape, func), x.size, x._shape, func)
    if copy:
        from ._kernels.copy import copy_array

        out = copy_array(x)
        return out._view(out._ptr, shape, c_strides(shape))
    v = reshape_view(x, shape)
    if v is x:
        v = x._view(x._ptr, x._shape, x._strides)
    if v is not None:
        return v
    if copy is False:
        raise ValueError(
            f"{func}(): cannot reshape an array of shape {x.shape} and strides {x.strides} to {shape} "
            "without copying, but copy=False was given"
        )
    from ._kernels.copy import copy_array

    out = copy_array(x)
    return out._view(out._ptr, shape, c_strides(shape))


def _infer_shape(shape: tuple, size: int, old: tuple, func: str) -> tuple:
    neg = [i for i, s in enumerate(shape) if s < 0]
    if any(shape[i] != -1 for i in neg):
        raise ValueError(
            f"{func}(): argument 'shape' may only contain non-negative sizes and one -1, got {shape}"
        )
    if len(neg) > 1:
        raise ValueError(f"{func}(): argument 'shape' can have only one -1, got {shape}")
    if math.prod(s for s in shape if s > 0) > (1 << 62):
        # with a zero size anywhere the element count is 0, but such a shape cannot be stated
        # in int64 (DLPack, the array interface): (2**64, 0) came out as (0, 0), 2026-12-05
        raise ValueError(
            f"{func}(): argument 'shape' {shape} is too large (its nonzero sizes multiply past 2**62)"
        )
    known = math.prod(s for s in shape if s >= 0)
    if neg:
        if known == 0 or size % known:
            raise ValueError(
                f"{func}(): cannot reshape an array of shape {old} (size {size}) into shape {shape}"
            )
        shape = tuple(size // known if s == -1 else s for s in shape)
    elif known != size:
        raise ValueError(f"{func}(): cannot reshape an array of shape {old} (size {size}) into shape {shape}")
    return shape


def _flat(x: TiArray) -> TiArray:
    """``x`` as 1-D: a view when C-contiguous, else a contiguous copy."""
    return reshape(x, (x.size,))


# ----------------------------------------------------------------------------- copies


def concat(arrays, /, *, axis=0) -> TiArray:
    """Join arrays along an existing axis.

    Parameters
    ----------
    arrays : tuple or list of TiArray
        Arrays with the same shape except along ``axis`` (and the same ndim).
    axis : int or None, optional
        The axis to join along (default 0). ``None`` flattens the arrays first.

    Returns
    -------
    TiArray
        A new array of the arrays' promoted dtype (type promotion rules).

    Raises
    ------
    ValueError
        If shapes or ranks differ outside ``axis``, the arrays are 0-d (with an int
        axis), or the devices differ.
    TypeError
        If the dtypes have no common type.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.concat((ta.asarray([1, 2]), ta.asarray([3]))).tolist()
    [1, 2, 3]
    """
    from ._buffer import empty_owned
    from ._kernels.copy import copy_into

    func = "concat"
    arrays = _array_list(arrays, func)
    dtype = _result_dtype(arrays, func)
    if axis is None:
        arrays = [_flat(a) for a in arrays]
        axis = 0
    nd = arrays[0].ndim
    if nd == 0:
        raise ValueError(f"{func}(): 0-d arrays cannot be joined along an axis; use axis=None or stack()")
    for i, a in enumerate(arrays):
        if a.ndim != nd:
            raise ValueError(
                f"{func}(): all arrays must have the same number of dimensions; arrays[0] has {nd}, "
                f"arrays[{i}] has {a.ndim}"
            )
    ax = normalize_axis(axis, nd, func)
    base = arrays[0]._shape
    for i, a in enumerate(arrays):
        for d in range(nd):
            if d != ax and a._shape[d] != base[d]:
                raise ValueError(
                    f"{func}(): the shapes must match except along axis {ax}; arrays[0] has shape {base}, "
                    f"arrays[{i}] has shape {a._shape}"
                )
    total = sum(a._shape[ax] for a in arrays)
    shape = base[:ax] + (total,) + base[ax + 1 :]
    out = empty_owned(shape, dtype, arrays[0]._device)
    pos = 0
    step = out._strides[ax] * dtype.itemsize
    for a in arrays:
        n = a._shape[ax]
        if n and a.size:
            dst = out._view(out._ptr + pos * step, a._shape, out._strides)
            copy_into(dst, a)
        pos += n
    return out


def stack(arrays, /, *, axis=0) -> TiArray:
    """Join arrays of the same shape along a new axis.

    Parameters
    ----------
    arrays : tuple or list of TiArray
        Arrays of one shape.
    axis : int, optional
        The position of the new axis in the result, in ``[-N-1, N]`` (default 0).

    Returns
    -------
    TiArray
        A new array of the arrays' promoted dtype, with one more dimension.

    Raises
    ------
    ValueError
        If the shapes or devices differ.
    TypeError
        If the dtypes have no common type.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.stack((ta.asarray([1, 2]), ta.asarray([3, 4])), axis=1).tolist()
    [[1, 3], [2, 4]]
    """
    from ._buffer import empty_owned
    from ._kernels.copy import copy_into

    func = "stack"
    arrays = _array_list(arrays, func)
    dtype = _result_dtype(arrays, func)
    base = arrays[0]._shape
    for i, a in enumerate(arrays):
        if a._shape != base:
            raise ValueError(
                f"{func}(): all arrays must have the same shape; arrays[0] has shape {base}, "
                f"arrays[{i}] has shape {a._shape}"
            )
    ax = normalize_axis(axis, len(base) + 1, func)
    shape = base[:ax] + (len(arrays),) + base[ax:]
    out = empty_owned(shape, dtype, arrays[0]._device)
    st = out._strides
    vshape = shape[:ax] + shape[ax + 1 :]
    vstr = st[:ax] + st[ax + 1 :]
    step = st[ax] * dtype.itemsize
    if out.size:
        for i, a in enumerate(arrays):
            copy_into(out._view(out._ptr + i * step, vshape, vstr), a)
    return out


def tile(x, repetitions, /) -> TiArray:
    """Repeat an array along each axis.

    Parameters
    ----------
    x : TiArray
        The input array.
    repetitions : tuple of ints
        Non-negative repetition counts per axis; if shorter than ``x.ndim``, ones are
        prepended; if longer, ``x`` gets leading axes of size one.

    Returns
    -------
    TiArray
        A new array with ``max(x.ndim, len(repetitions))`` dimensions.

    Raises
    ------
    ValueError
        If a repetition is negative.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.tile(ta.asarray([1, 2]), (2, 2)).tolist()
    [[1, 2, 1, 2], [1, 2, 1, 2]]
    """
    from ._buffer import empty_owned
    from ._kernels.copy import copy_into

    func = "tile"
    x = check_array(x, func)
    reps = _shape_arg(repetitions, func, "repetitions")
    if any(r < 0 for r in reps):
        raise ValueError(f"{func}(): argument 'repetitions' must be non-negative, got {reps}")
    nd = max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    xs = (1,) * (nd - x.ndim) + x._shape
    xst = (0,) * (nd - x.ndim) + x._strides
    # x as (1, d0, 1, d1, ...) broadcast to (r0, d0, r1, d1, ...), copied, then merged
    big = tuple(v for r, d in zip(reps, xs) for v in (r, d))
    bst = tuple(v for s in xst for v in (0, s))
    src = x._view(x._ptr, big, bst)
    out = empty_owned(big, x._dtype, x._device)
    if out.size:
        copy_into(out, src)
    shape = tuple(r * d for r, d in zip(reps, xs))
    return out._view(out._ptr, shape, c_strides(shape))


def roll(x, /, shift, *, axis=None) -> TiArray:
    """Shift elements cyclically along axes.

    Parameters
    ----------
    x : TiArray
        The input array.
    shift : int or tuple of ints
        The number of places to shift (negative: backwards). With a tuple ``axis``, an
        int applies to every axis, a tuple gives one shift per axis.
    axis : int or tuple of ints, optional
        The axes to roll. ``None`` (default) rolls the flattened array and restores the
        shape.

    Returns
    -------
    TiArray
        A new array.

    Raises
    ------
    ValueError
        If ``shift`` and ``axis`` are tuples of different lengths.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.roll(ta.asarray([1, 2, 3, 4]), 1).tolist()
    [4, 1, 2, 3]
    """
    from ._buffer import empty_owned

    func = "roll"
    x = check_array(x, func)
    if axis is None:
        try:
            s = operator.index(shift)
        except TypeError:
            raise TypeError(
                f"{func}(): argument 'shift' must be an int when 'axis' is None, got {shift!r}"
            ) from None
        flat = _flat(x)
        out = empty_owned((x.size,), x._dtype, x._device)
        _roll_into(out, flat, {0: s})
        return out._view(out._ptr, x._shape, c_strides(x._shape))
    axes = list(axis) if isinstance(axis, (tuple, list)) else [axis]
    if isinstance(shift, (tuple, list)):
        shifts = [operator.index(s) for s in shift]
        if not isinstance(axis, (tuple, list)) or len(shifts) != len(axes):
            raise ValueError(
                f"{func}(): arguments 'shift' and 'axis' must have the same length, got {shift!r} and {axis!r}"
            )
    else:
        try:
            shifts = [operator.index(shift)] * len(axes)
        except TypeError:
            raise TypeError(
                f"{func}(): argument 'shift' must be an int or a tuple of ints, got {shift!r}"
            ) from None
    total: dict = {}
    for a, s in zip(axes, shifts):
        a = normalize_axis(a, x.ndim, func)
        total[a] = total.get(a, 0) + s
    out = empty_owned(x._shape, x._dtype, x._device)
    _roll_into(out, x, total)
    return out


def _roll_into(out: TiArray, x: TiArray, shifts: dict) -> None:
    """``out = roll(x)``: one strided block copy per combination of the two pieces of each
    rolled axis (at most 2**k copies for k rolled axes; more axes are rolled one by one)."""
    from ._kernels.copy import copy_array, copy_into

    if out.size == 0:
        return
    shifts = {a: s % x._shape[a] for a, s in shifts.items() if x._shape[a] and s % x._shape[a]}
    if not shifts:
        copy_into(out, x)
        return
    items = sorted(shifts.items())
    if len(items) > 4:
        first, rest = dict(items[:4]), dict(items[4:])
        tmp = copy_array(x)
        _roll_into(tmp, x, first)
        _roll_into(out, tmp, rest)
        return
    it = x._dtype.itemsize
    import itertools

    for pieces in itertools.product((0, 1), repeat=len(items)):
        src_ptr, dst_ptr = x._ptr, out._ptr
        shape = list(x._shape)
        for (a, s), piece in zip(items, pieces):
            n = x._shape[a]
            if piece == 0:  # x[0 : n-s] -> out[s : n]
                cnt, so, do = n - s, 0, s
            else:  # x[n-s : n] -> out[0 : s]
                cnt, so, do = s, n - s, 0
            shape[a] = cnt
            src_ptr += so * x._strides[a] * it
            dst_ptr += do * out._strides[a] * it
        shape = tuple(shape)
        copy_into(out._view(dst_ptr, shape, out._strides), x._view(src_ptr, shape, x._strides))


def repeat(x, repeats, /, *, axis=None) -> TiArray:
    """Repeat each element of an array.

    Parameters
    ----------
    x : TiArray
        The input array.
    repeats : int or TiArray
        The number of repetitions: one count for all elements, or a 1-D integer array
        of counts, one per element along ``axis`` (length 1 broadcasts).
    axis : int, optional
        The axis along which to repeat. ``None`` (default) flattens ``x`` first.

    Returns
    -------
    TiArray
        A new array; along ``axis`` (or flattened) it has ``sum(repeats)`` elements.

    Raises
    ------
    ValueError
        If a count is negative or ``repeats`` has the wrong length.
    TypeError
        If ``repeats`` is not an int or an integer array.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.repeat(ta.asarray([1, 2, 3]), 2).tolist()
    [1, 1, 2, 2, 3, 3]
    >>> ta.repeat(ta.asarray([1, 2, 3]), ta.asarray([0, 1, 2])).tolist()
    [2, 3, 3]
    """
    from ._buffer import empty_owned
    from ._kernels.copy import copy_into

    func = "repeat"
    x = check_array(x, func)
    if axis is None:
        x = _flat(x)
        ax = 0
    else:
        if x.ndim == 0:
            raise ValueError(f"{func}(): a 0-d array can only be repeated with axis=None")
        ax = normalize_axis(axis, x.ndim, func)
    n = x._shape[ax]
    if isinstance(repeats, TiArray):
        if repeats._dtype.kind not in "iu":
            raise TypeError(
                f"{func}(): argument 'repeats' must have an integer dtype, got {repeats._dtype.name}"
            )
        if repeats.ndim > 1:
            raise ValueError(f"{func}(): argument 'repeats' must be 0-d or 1-D, got shape {repeats.shape}")
        if repeats._device != x._device:
            raise ValueError(f"{func}(): argument 'repeats' lives on {repeats._device}, 'x' on {x._device}")
        if repeats.ndim == 1 and repeats.size != 1:
            if repeats.size != n:
                raise ValueError(
                    f"{func}(): argument 'repeats' must have one count per element along the axis ({n}) "
                    f"or a single count, got {repeats.size}"
                )
            from ._indexing_functions import take
            from ._kernels.manip import repeat_index

            idx = repeat_index(repeats, func)
            return take(x, idx, axis=ax)
        repeats = int(repeats._scalar(func))
    if isinstance(repeats, bool):
        raise TypeError(f"{func}(): argument 'repeats' must be an int or an integer array, got a bool")
    try:
        r = operator.index(repeats)
    except TypeError:
        raise TypeError(
            f"{func}(): argument 'repeats' must be an int or an integer array, got {repeats!r}"
        ) from None
    if r < 0:
        raise ValueError(f"{func}(): argument 'repeats' must be non-negative, got {r}")
    if n * r * math.prod(x._shape[:ax] + x._shape[ax + 1 :]) > (1 << 62):
        raise ValueError(f"{func}(): {n} elements repeated {r} times cannot be allocated")
    # x as (..., n, 1, ...) broadcast to (..., n, r, ...), copied, then merged
    big = x._shape[: ax + 1] + (r,) + x._shape[ax + 1 :]
    bst = x._strides[: ax + 1] + (0,) + x._strides[ax + 1 :]
    out = empty_owned(big, x._dtype, x._device)
    if out.size:
        copy_into(out, x._view(x._ptr, big, bst))
    shape = x._shape[:ax] + (n * r,) + x._shape[ax + 1 :]
    return out._view(out._ptr, shape, c_strides(shape))
