"""Linear algebra functions (array API "Linear Algebra Functions"): ``matmul``,
``tensordot``, ``vecdot``, ``matrix_transpose``.

``matmul`` runs a packed, register-blocked GEMM (:mod:`tiarray._kernels.matmul`) for
products of reasonable size and a direct kernel (one dot product per output element) for
small, thin or many tiny batched products. Every operand layout (transposed, sliced,
negative strides, broadcast batch axes) is read in place by the packing kernels: nothing
is made contiguous first.

Accumulation happens in the compute type of the result dtype: ``float32`` for
``float16``/``bfloat16``/``float32``, ``float64``, ``int32`` for signed integers up to 32
bits (wrapping, which equals the wrap-around of the narrower result type), ``uint32`` for
unsigned ones, ``int64``/``uint64``, and pairs of reals for complex dtypes.
"""

from __future__ import annotations

import math

import numpy as np

from . import _dtypes
from ._array_object import TiArray, c_strides
from ._buffer import empty_owned
from ._kernels import matmul as _mm
from ._kernels.copy import copy_array, copy_into
from ._manipulation_functions import permute_dims, reshape
from ._validate import AxisError, check_array, normalize_axis
from ._views import broadcast_shapes

__all__ = ["matmul", "tensordot", "vecdot", "matrix_transpose"]

# a product is packed when each side is at least this and M*N*K at least _PACK_WORK
_PACK_MIN = 8
_PACK_WORK = 32 * 32 * 32

_COMPUTE = {
    "float16": _dtypes.float32, "bfloat16": _dtypes.float32, "float32": _dtypes.float32,
    "float64": _dtypes.float64, "complex64": _dtypes.complex64, "complex128": _dtypes.complex128,
    "int8": _dtypes.int32, "int16": _dtypes.int32, "int32": _dtypes.int32, "int64": _dtypes.int64,
    "uint8": _dtypes.uint32, "uint16": _dtypes.uint32, "uint32": _dtypes.uint32, "uint64": _dtypes.uint64,
}  # fmt: skip


def _numeric(x: TiArray, func: str, arg: str) -> None:
    if x._dtype.kind == "b":
        raise TypeError(f"{func}(): argument '{arg}' must have a numeric dtype, got bool")


def _promote(a: TiArray, b: TiArray, func: str) -> _dtypes.DType:
    try:
        return _dtypes.promote(a._dtype, b._dtype)
    except TypeError as e:
        raise TypeError(
            f"{func}(): the dtypes {a._dtype.name} and {b._dtype.name} have no common type: {e}"
        ) from None


def _same_device(a: TiArray, b: TiArray, func: str) -> None:
    if a._device != b._device:
        raise ValueError(
            f"{func}(): arguments 'x1' and 'x2' live on different devices ({a._device} and {b._device}); "
            "move one with to_device()"
        )


def _kernel_operand(x: TiArray, ct: _dtypes.DType) -> TiArray:
    """bfloat16 has no Taichi type: such operands are converted to float32 first; a real
    operand of a complex product is converted to the complex compute type."""
    if x._dtype is _dtypes.bfloat16:
        x = copy_array(x, _dtypes.float32)
    if ct.kind == "c" and x._dtype.kind != "c":
        x = copy_array(x, ct)
    return x


def _batch_offsets(bshape: tuple, shape: tuple, strides: tuple) -> np.ndarray:
    """Element offsets of each batch element (C order over ``bshape``) of an operand whose
    batch axes are ``shape``/``strides`` (broadcast against ``bshape``)."""
    nd = len(bshape)
    off = np.zeros(bshape, dtype=np.int64) if nd else np.zeros((), dtype=np.int64)
    pad = nd - len(shape)
    for d in range(nd):
        if d < pad:
            continue
        s, st = shape[d - pad], strides[d - pad]
        if s == 1 or st == 0:
            continue
        idx = np.arange(bshape[d], dtype=np.int64) * st
        off = off + idx.reshape((-1,) + (1,) * (nd - d - 1))
    return np.ascontiguousarray(off).reshape(-1)


def _product(a: TiArray, b: TiArray, bshape: tuple, M: int, N: int, K: int, rdtype: _dtypes.DType,
             *, conj_a: bool = False, func: str = "matmul") -> TiArray:  # fmt: skip
    """``out[..., M, N] = a[..., M, K] @ b[..., K, N]`` over the broadcast batch ``bshape``."""
    out_shape = tuple(bshape) + (M, N)
    device = a._device
    nbatch = math.prod(bshape)
    if nbatch * M * N == 0:
        return empty_owned(out_shape, rdtype, device)
    if K == 0:
        return empty_owned(out_shape, rdtype, device, zero=True)
    ct = _COMPUTE[rdtype.name]
    a = _kernel_operand(a, ct)
    b = _kernel_operand(b, ct)
    out = empty_owned(out_shape, rdtype, device)
    packed = min(M, N, K) >= _PACK_MIN and M * N * K >= _PACK_WORK and not conj_a
    if not packed:
        buf = out if ct is rdtype else empty_owned(out_shape, ct, device)
        _mm.direct(a, b, buf, bshape, M, N, K, ct, _batch_offsets, conj_a=conj_a)
        if buf is not out:
            copy_into(out, buf)
        return out
    aoffs = _batch_offsets(bshape, a._shape[:-2], a._strides[:-2])
    boffs = _batch_offsets(bshape, b._shape[:-2], b._strides[:-2])
    MR, NR = _mm.blocking(ct)
    cplx = ct.kind == "c"
    Mr = 2 * M if cplx else M
    b_shared = bool(np.all(boffs == boffs[0])) if nbatch > 1 else True
    direct_out = ct is rdtype and not cplx and M % MR == 0 and N % NR == 0
    if direct_out:
        _mm.packed(a, b, out._ptr, nbatch * M * N // NR, N // NR, aoffs, boffs, b_shared, M, N, K, ct)
        return out
    rct = _dtypes.finfo_dtype(ct)
    Mp = -(-Mr // MR) * MR
    Np = -(-N // NR) * NR
    tmp = empty_owned((nbatch, Mp, Np), rct, device)
    _mm.packed(a, b, tmp._ptr, nbatch * Mp * Np // NR, Np // NR, aoffs, boffs, b_shared, M, N, K, ct)
    o3 = out._view(out._ptr, (nbatch, M, N), c_strides((nbatch, M, N)))
    if cplx:
        from ._views import real_view

        rv = real_view(o3)
        re = rv._view(rv._ptr, (nbatch, M, N), rv._strides[:-1])
        im = rv._view(rv._ptr + rct.itemsize, (nbatch, M, N), rv._strides[:-1])
        copy_into(re, tmp._view(tmp._ptr, (nbatch, M, N), tmp._strides))
        copy_into(im, tmp._view(tmp._ptr + M * Np * rct.itemsize, (nbatch, M, N), tmp._strides))
    else:
        copy_into(o3, tmp._view(tmp._ptr, (nbatch, M, N), tmp._strides))
    return out


def matmul(x1, x2, /) -> TiArray:
    """Matrix product of two arrays (``x1 @ x2``), batched and broadcast.

    Parameters
    ----------
    x1 : TiArray
        First operand, at least 1-D, numeric. A 1-D ``x1`` is a row vector (its added axis
        is removed from the result).
    x2 : TiArray
        Second operand, at least 1-D, numeric. A 1-D ``x2`` is a column vector.

    Returns
    -------
    TiArray
        Shape ``broadcast(x1.shape[:-2], x2.shape[:-2]) + (M, N)`` (without the axes added
        for 1-D operands), dtype from the type promotion rules.

    Raises
    ------
    ValueError
        If an operand is 0-d, the contracted sizes differ, the batch axes do not broadcast,
        or the devices differ.
    TypeError
        If an operand is not a numeric TiArray.

    Examples
    --------
    >>> import tiarray as ta
    >>> a = ta.asarray([[1.0, 2.0], [3.0, 4.0]])
    >>> ta.matmul(a, ta.asarray([1.0, 1.0])).tolist()
    [3.0, 7.0]
    """
    func = "matmul"
    x1 = check_array(x1, func, "x1")
    x2 = check_array(x2, func, "x2")
    _numeric(x1, func, "x1")
    _numeric(x2, func, "x2")
    _same_device(x1, x2, func)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(
            f"{func}(): arguments must have at least one dimension, got shapes {x1.shape} and {x2.shape}; "
            "use multiply for scalars"
        )
    rdtype = _promote(x1, x2, func)
    a, b = x1, x2
    if a.ndim == 1:
        a = a._view(a._ptr, (1,) + a._shape, (0,) + a._strides)
    if b.ndim == 1:
        b = b._view(b._ptr, b._shape + (1,), b._strides + (0,))
    M, K = a._shape[-2:]
    K2, N = b._shape[-2:]
    if K != K2:
        raise ValueError(
            f"{func}(): the contracted dimensions differ: x1 has shape {x1.shape} (last axis {K}) and x2 has "
            f"shape {x2.shape} ({'only axis' if x2.ndim == 1 else 'second-to-last axis'} {K2})"
        )
    try:
        bshape = broadcast_shapes(a._shape[:-2], b._shape[:-2], func=func)
    except ValueError:
        raise ValueError(
            f"{func}(): the batch dimensions of x1 {x1.shape} and x2 {x2.shape} cannot be broadcast together"
        ) from None
    out = _product(a, b, bshape, M, N, K, rdtype)
    shape = out._shape
    if x1.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if x2.ndim == 1:
        shape = shape[:-1]
    if shape != out._shape:
        out = out._view(out._ptr, shape, c_strides(shape))
    return out


def matrix_transpose(x, /) -> TiArray:
    """Transpose the last two axes (a view: the strides are swapped).

    Parameters
    ----------
    x : TiArray
        An array with at least two dimensions.

    Returns
    -------
    TiArray
        A view of shape ``(..., N, M)``.

    Raises
    ------
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.matrix_transpose(ta.asarray([[1, 2, 3]])).tolist()
    [[1], [2], [3]]
    """
    func = "matrix_transpose"
    x = check_array(x, func)
    if x.ndim < 2:
        raise ValueError(f"{func}(): argument 'x' must have at least two dimensions, got shape {x.shape}")
    sh, st = x._shape, x._strides
    return x._view(x._ptr, sh[:-2] + (sh[-1], sh[-2]), st[:-2] + (st[-1], st[-2]))


def vecdot(x1, x2, /, *, axis=-1) -> TiArray:
    """Vector dot product along an axis: ``sum(conj(x1) * x2, axis=axis)``, broadcast.

    Parameters
    ----------
    x1 : TiArray
        First operand (numeric); complex values are conjugated.
    x2 : TiArray
        Second operand (numeric), broadcast-compatible with ``x1``.
    axis : int, optional
        The axis of the product, counted on the broadcast shape; it must be negative (or
        a non-negative axis valid for both operands) and the operands must have the same
        size along it. Default ``-1``.

    Returns
    -------
    TiArray
        The broadcast shape without ``axis``, dtype from the type promotion rules.

    Raises
    ------
    ValueError
        If the sizes along ``axis`` differ or the shapes do not broadcast.
    TypeError
        If an operand is not numeric.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.vecdot(ta.asarray([1j, 2.0]), ta.asarray([1j, 1.0])).item()
    (3+0j)
    """
    func = "vecdot"
    x1 = check_array(x1, func, "x1")
    x2 = check_array(x2, func, "x2")
    _numeric(x1, func, "x1")
    _numeric(x2, func, "x2")
    _same_device(x1, x2, func)
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"{func}(): arguments must have at least one dimension")
    rdtype = _promote(x1, x2, func)
    nd = min(x1.ndim, x2.ndim)
    if axis is None or isinstance(axis, bool):
        raise TypeError(f"{func}(): argument 'axis' must be an int, got {axis!r}")
    ax = int(axis)
    if ax >= 0:
        if ax >= nd:
            normalize_axis(ax, nd, func)  # raises
        ax = ax - nd  # counted from the end, the same for both operands
    elif ax < -nd:
        normalize_axis(ax, nd, func)  # raises
    a = _move_last(x1, x1.ndim + ax)
    b = _move_last(x2, x2.ndim + ax)
    K = a._shape[-1]
    if b._shape[-1] != K:
        raise ValueError(
            f"{func}(): x1 and x2 must have the same size along axis {axis}, got {x1.shape} and {x2.shape}"
        )
    try:
        bshape = broadcast_shapes(a._shape[:-1], b._shape[:-1], func=func)
    except ValueError:
        raise ValueError(
            f"{func}(): the shapes {x1.shape} and {x2.shape} cannot be broadcast together"
        ) from None
    from ._kernels import matmul as _mm

    if (
        a.ndim == 1
        and b.ndim == 1
        and K >= _mm.DOT_MIN_K
        and (rdtype.kind in "iu" or rdtype in (_dtypes.float32, _dtypes.float64))
        and a._dtype is rdtype
        and b._dtype is rdtype
        and a._is_c_contiguous()
        and b._is_c_contiguous()
    ):
        return _mm.long_dot(a, b, rdtype)  # split into chunks reduced in parallel
    # (..., 1, K) @ (..., K, 1) with the conjugate of x1
    a2 = a._view(a._ptr, a._shape[:-1] + (1, K), a._strides[:-1] + (0, a._strides[-1]))
    b2 = b._view(b._ptr, b._shape[:-1] + (K, 1), b._strides[:-1] + (b._strides[-1], 0))
    conj = rdtype.kind == "c" and x1._dtype.kind == "c"
    out = _product(a2, b2, bshape, 1, 1, K, rdtype, conj_a=conj, func=func)
    return out._view(out._ptr, bshape, c_strides(bshape))


def _move_last(x: TiArray, axis: int) -> TiArray:
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    return x._view(x._ptr, tuple(x._shape[d] for d in order), tuple(x._strides[d] for d in order))


def tensordot(x1, x2, /, *, axes=2) -> TiArray:
    """Tensor contraction over the given axes.

    Parameters
    ----------
    x1 : TiArray
        First operand (numeric).
    x2 : TiArray
        Second operand (numeric).
    axes : int or (sequence of ints, sequence of ints), optional
        An int ``n`` contracts the last ``n`` axes of ``x1`` with the first ``n`` of
        ``x2``; a pair of sequences lists the axes of each, in matching order. Default 2.

    Returns
    -------
    TiArray
        The free axes of ``x1`` followed by the free axes of ``x2``.

    Raises
    ------
    ValueError
        If the contracted axes differ in size or ``axes`` is invalid.
    TypeError
        If an operand is not numeric.

    Examples
    --------
    >>> import tiarray as ta
    >>> a = ta.reshape(ta.asarray(list(range(6))), (2, 3))
    >>> ta.tensordot(a, a, axes=([0], [0])).tolist()
    [[9, 12, 15], [12, 17, 22], [15, 22, 29]]
    """
    func = "tensordot"
    x1 = check_array(x1, func, "x1")
    x2 = check_array(x2, func, "x2")
    _numeric(x1, func, "x1")
    _numeric(x2, func, "x2")
    _same_device(x1, x2, func)
    rdtype = _promote(x1, x2, func)
    if isinstance(axes, bool):
        raise TypeError(f"{func}(): argument 'axes' must be an int or a pair of sequences, got {axes!r}")
    if isinstance(axes, int):
        if axes < 0:
            raise ValueError(f"{func}(): argument 'axes' must be non-negative, got {axes}")
        if axes > x1.ndim or axes > x2.ndim:
            raise ValueError(
                f"{func}(): cannot contract {axes} axes of arrays with {x1.ndim} and {x2.ndim} dimensions"
            )
        ax1 = tuple(range(x1.ndim - axes, x1.ndim))
        ax2 = tuple(range(axes))
    else:
        try:
            s1, s2 = axes
            s1 = [s1] if isinstance(s1, int) else list(s1)
            s2 = [s2] if isinstance(s2, int) else list(s2)
        except (TypeError, ValueError):
            raise TypeError(
                f"{func}(): argument 'axes' must be an int or a pair of sequences, got {axes!r}"
            ) from None
        if len(s1) != len(s2):
            raise ValueError(f"{func}(): the two sequences of 'axes' must have the same length, got {axes!r}")
        ax1 = tuple(normalize_axis(a, x1.ndim, func, "axes") for a in s1)
        ax2 = tuple(normalize_axis(a, x2.ndim, func, "axes") for a in s2)
        if len(set(ax1)) != len(ax1) or len(set(ax2)) != len(ax2):
            raise AxisError(f"{func}(): argument 'axes' repeats an axis: {axes!r}")
    for a1, a2 in zip(ax1, ax2):
        if x1._shape[a1] != x2._shape[a2]:
            raise ValueError(
                f"{func}(): contracted axes differ in size: axis {a1} of x1 has {x1._shape[a1]}, "
                f"axis {a2} of x2 has {x2._shape[a2]}"
            )
    free1 = [d for d in range(x1.ndim) if d not in ax1]
    free2 = [d for d in range(x2.ndim) if d not in ax2]
    M = math.prod(x1._shape[d] for d in free1)
    K = math.prod(x1._shape[d] for d in ax1)
    N = math.prod(x2._shape[d] for d in free2)
    a = reshape(permute_dims(x1, tuple(free1) + ax1), (M, K))
    b = reshape(permute_dims(x2, ax2 + tuple(free2)), (K, N))
    out = _product(a, b, (), M, N, K, rdtype, func=func)
    shape = tuple(x1._shape[d] for d in free1) + tuple(x2._shape[d] for d in free2)
    return out._view(out._ptr, shape, c_strides(shape))
