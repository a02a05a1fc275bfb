"""Data type functions (array API 2024.12): ``astype``, ``can_cast``, ``finfo``, ``iinfo``,
``result_type`` (``isdtype`` lives in :mod:`tiarray._dtypes`).

``astype`` casts with tiarray's strided copy kernel (:mod:`tiarray._kernels.copy`), on
the array's device. ``result_type`` follows the promotion of the element-wise functions
(:func:`tiarray._dtypes.promote`, Python scalars by :func:`tiarray._dtypes.scalar_dtype`),
while ``can_cast`` answers for the standard's promotion lattice only: it never allows a
cast across kinds other than real floating to complex floating.
"""

from __future__ import annotations

import builtins

import numpy as np

from . import _dtypes, _runtime
from ._array_object import TiArray
from ._dtypes import DType

__all__ = ["astype", "can_cast", "finfo", "iinfo", "result_type", "finfo_object", "iinfo_object"]


def _dtype_of(x, func: str, arg: str) -> DType:
    if isinstance(x, TiArray):
        return x._dtype
    if isinstance(x, DType):
        return x
    if isinstance(x, (builtins.bool, int, float, complex)):
        raise TypeError(
            f"{func}(): argument '{arg}' must be a dtype or an array, got a Python {type(x).__name__}"
        )
    return _dtypes.to_dtype(x, func=func, arg=arg)


def astype(x, dtype, /, *, copy=True, device=None) -> TiArray:
    """Copy an array to a new dtype (and optionally device).

    Parameters
    ----------
    x : TiArray
        The array to cast.
    dtype : DType
        The dtype of the result (NumPy/torch dtypes and names are accepted too).
    copy : bool, optional
        ``True`` (default): always return a new array. ``False``: return ``x`` itself when
        it already has ``dtype`` and is on ``device``.
    device : Device or str, optional
        The device of the result (default: ``x``'s device).

    Returns
    -------
    TiArray
        A C-contiguous array with the values of ``x`` converted to ``dtype``: booleans
        become 0/1, nonzero numbers become ``True``, floating values are truncated toward
        zero when cast to integers (out-of-range values, NaN and infinities give
        unspecified integers, as the standard allows), integers wrap when narrowed.

    Raises
    ------
    TypeError
        If ``x`` is not an array, ``dtype`` is not a dtype, or a complex array would be
        cast to a real or boolean dtype (the standard forbids it; use ``real`` or ``abs``).
    ValueError
        If ``copy`` is not a bool.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.astype(ta.asarray([1.7, -1.7, 0.0]), ta.int32)
    TiArray([ 1, -1,  0], dtype=int32)
    >>> ta.astype(ta.asarray([0, 2]), ta.bool)
    TiArray([False,  True], dtype=bool)
    """
    func = "astype"
    if not isinstance(x, TiArray):
        raise TypeError(f"{func}(): argument 'x' must be a TiArray, got {type(x).__name__}")
    dt = _dtypes.to_dtype(dtype, func=func)
    if copy not in (True, False):
        raise ValueError(f"{func}(): argument 'copy' must be True or False, got {copy!r}")
    dev = x._device if device is None else _runtime.get_device(device, func=func)
    if x._dtype.kind == "c" and dt.kind != "c":
        raise TypeError(
            f"{func}(): casting a complex array ({x._dtype.name}) to {dt.name} is not allowed by the "
            "array API standard; take real(x), imag(x) or abs(x) first"
        )
    if not copy and dt is x._dtype and dev == x._device:
        return x
    from ._buffer import empty_owned
    from ._kernels.copy import copy_to_device

    src = x
    if dev != x._device:
        src = copy_to_device(x, dev)
        if dt is x._dtype:
            return src
    out = empty_owned(src._shape, dt, dev)
    if out.size == 0:
        return out
    if _dtypes.bfloat16 in (dt, src._dtype):
        if dev.kind != "cpu" or dt._np is None or src._dtype._np is None:
            raise TypeError(
                f"{func}(): bfloat16 casts are done through NumPy's ml_dtypes on the CPU; "
                f"{'ml_dtypes is not installed' if _dtypes.bfloat16._np is None else 'the array is on ' + str(dev)}"
            )
        np.copyto(out._numpy_view(), src._numpy_view(), casting="unsafe")
        return out
    from ._kernels.copy import strided_copy

    strided_copy(out, src)
    return out


def can_cast(from_, to, /) -> builtins.bool:
    """Whether ``from_`` can be cast to ``to`` by the standard's type promotion rules.

    Parameters
    ----------
    from_ : DType or TiArray
        The source dtype (or an array of it).
    to : DType
        The target dtype.

    Returns
    -------
    bool
        True when promoting ``from_`` with ``to`` gives ``to`` in the standard's lattice:
        within a kind to a wider type, unsigned to a wider signed integer, real floating
        to complex floating of at least the same precision. Casts across kinds (bool to
        int, int to float) are False, although tiarray's arithmetic promotes them.

    Raises
    ------
    TypeError
        If an argument is not a dtype (or, for ``from_``, an array).

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.can_cast(ta.int8, ta.int16), ta.can_cast(ta.int16, ta.int8)
    (True, False)
    >>> ta.can_cast(ta.uint8, ta.int16), ta.can_cast(ta.int32, ta.float64)
    (True, False)
    """
    f = _dtype_of(from_, "can_cast", "from_")
    if isinstance(to, TiArray):
        raise TypeError("can_cast(): argument 'to' must be a dtype, got an array")
    t = _dtype_of(to, "can_cast", "to")
    if f is t:
        return True
    kf, kt = f.kind, t.kind
    if kf == "b" or kt == "b":
        return False
    if kf in "iu" and kt in "iu":
        try:
            return _dtypes.promote(f, t) is t
        except TypeError:
            return False
    if kf in "iu" or kt in "iu":
        return False
    if kf == "c" and kt == "f":
        return False
    return _dtypes.promote(f, t) is t


class finfo_object:
    """Machine limits of a floating-point dtype (returned by :func:`finfo`).

    Attributes
    ----------
    bits : int
        Bits per number (per real component for complex dtypes).
    eps : float
        Difference between 1.0 and the next representable number.
    max, min : float
        Largest and smallest (most negative) finite numbers.
    smallest_normal : float
        Smallest positive normal number.
    dtype : DType
        The real floating dtype described (``float32`` for ``complex64``).
    """

    __slots__ = ("bits", "eps", "max", "min", "smallest_normal", "dtype")

    def __init__(self, bits, eps, max, min, smallest_normal, dtype):
        self.bits = bits
        self.eps = eps
        self.max = max
        self.min = min
        self.smallest_normal = smallest_normal
        self.dtype = dtype

    def __repr__(self) -> str:
        return (
            f"finfo(bits={self.bits}, eps={self.eps}, max={self.max}, min={self.min}, "
            f"smallest_normal={self.smallest_normal}, dtype={self.dtype.name})"
        )


class iinfo_object:
    """Machine limits of an integer dtype (returned by :func:`iinfo`).

    Attributes
    ----------
    bits : int
    max, min : int
        The largest and smallest representable values.
    dtype : DType
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, bits, max, min, dtype):
        self.bits = bits
        self.max = max
        self.min = min
        self.dtype = dtype

    def __repr__(self) -> str:
        return f"iinfo(bits={self.bits}, max={self.max}, min={self.min}, dtype={self.dtype.name})"


_FINFO: dict = {}
_IINFO: dict = {}


def finfo(type, /) -> finfo_object:
    """Machine limits of a floating-point dtype.

    Parameters
    ----------
    type : DType or TiArray
        A real or complex floating dtype (or an array of one).

    Returns
    -------
    finfo_object
        ``bits``, ``eps``, ``max``, ``min``, ``smallest_normal`` (Python floats) and
        ``dtype``; for a complex dtype, those of its real component dtype.

    Raises
    ------
    TypeError
        If the dtype is not floating-point.

    Examples
    --------
    >>> import tiarray as ta
    >>> fi = ta.finfo(ta.float32)
    >>> fi.bits, fi.eps
    (32, 1.1920928955078125e-07)
    >>> ta.finfo(ta.complex128).dtype
    tiarray.float64
    """
    d = _dtype_of(type, "finfo", "type")
    if d.kind not in "fc":
        raise TypeError(f"finfo(): argument 'type' must be a floating-point dtype, got {d.name}")
    r = _FINFO.get(d)
    if r is None:
        rd = _dtypes.finfo_dtype(d)
        fi = np.finfo(rd.numpy)
        r = _FINFO[d] = finfo_object(
            int(fi.bits), float(fi.eps), float(fi.max), float(fi.min), float(fi.smallest_normal), rd
        )
    return r


def iinfo(type, /) -> iinfo_object:
    """Machine limits of an integer dtype.

    Parameters
    ----------
    type : DType or TiArray
        An integer dtype (or an array of one).

    Returns
    -------
    iinfo_object
        ``bits``, ``max``, ``min`` (Python ints) and ``dtype``.

    Raises
    ------
    TypeError
        If the dtype is not an integer dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> ii = ta.iinfo(ta.int8)
    >>> ii.min, ii.max, ii.bits
    (-128, 127, 8)
    """
    d = _dtype_of(type, "iinfo", "type")
    if d.kind not in "iu":
        raise TypeError(f"iinfo(): argument 'type' must be an integer dtype, got {d.name}")
    r = _IINFO.get(d)
    if r is None:
        ii = np.iinfo(d.numpy)
        r = _IINFO[d] = iinfo_object(int(ii.bits), int(ii.max), int(ii.min), d)
    return r


def result_type(*arrays_and_dtypes) -> DType:
    """The dtype that results from type promotion of arrays, dtypes and Python scalars.

    Parameters
    ----------
    *arrays_and_dtypes : TiArray, DType or Python scalar
        At least one array or dtype. Python scalars (``bool``, ``int``, ``float``,
        ``complex``) take a dtype from the others as in the element-wise functions.

    Returns
    -------
    DType
        The promoted dtype, as computed by the element-wise functions: the standard's
        rules within a kind, JAX/PyTorch's rule (the higher kind wins) across kinds.

    Raises
    ------
    TypeError
        If the dtypes cannot be promoted (``uint64`` with a signed integer), an argument
        is neither an array, a dtype nor a Python scalar, or a Python scalar is
        incompatible.
    ValueError
        If no array or dtype is given.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.result_type(ta.int8, ta.uint8)
    tiarray.int16
    >>> ta.result_type(ta.asarray([1.0], dtype=ta.float32), 2)
    tiarray.float32
    """
    func = "result_type"
    dtypes, scalars = [], []
    for a in arrays_and_dtypes:
        if isinstance(a, TiArray):
            dtypes.append(a._dtype)
        elif isinstance(a, DType):
            dtypes.append(a)
        elif isinstance(a, (builtins.bool, int, float, complex)):
            scalars.append(a)
        else:
            try:
                dtypes.append(_dtypes.to_dtype(a, func=func, arg="arrays_and_dtypes"))
            except TypeError:
                raise TypeError(
                    f"{func}(): arguments must be arrays, dtypes or Python scalars, got {type(a).__name__}"
                ) from None
    if not dtypes:
        raise ValueError(f"{func}(): at least one array or dtype is required")
    try:
        r = _dtypes.result_type_of(dtypes)
        for s in scalars:
            r = _dtypes.promote(r, _dtypes.scalar_dtype(s, r))
    except TypeError as e:
        raise TypeError(f"{func}(): {e}") from None
    return r
