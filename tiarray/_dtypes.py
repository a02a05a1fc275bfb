"""Data types: the array API dtype objects, their NumPy/Taichi/DLPack twins, and promotion.

Every dtype rule of tiarray lives here: the objects themselves, the categories used by
``isdtype`` and by each function's input check, and the type-promotion lattice used by
``result_type`` and by every binary operation.

Promotion follows the array API standard (2024.12) within a kind (bool, signed and
unsigned integers, real floating, complex floating). Mixed-kind promotion, which the
standard leaves to implementations, follows JAX and PyTorch: the result is the dtype of
the higher kind (``int32 + float32 -> float32``, ``float64 + complex64 -> complex128``).
There is no value-based casting. ``uint64`` with a signed integer has no integer type
that can hold both and raises ``TypeError``.
"""

from __future__ import annotations

import sys

import numpy as np

from ._backend import ti

__all__ = [
    "DType",
    "bool",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "float16",
    "bfloat16",
    "float32",
    "float64",
    "complex64",
    "complex128",
]

_builtin_bool = bool

# DLPack type codes (dlpack.h, DLDataTypeCode)
DL_INT, DL_UINT, DL_FLOAT, DL_BFLOAT, DL_COMPLEX, DL_BOOL = 0, 1, 2, 4, 5, 6


class DType:
    """An array data type.

    The objects ``tiarray.float32``, ``tiarray.int64`` ... are the only instances; compare
    them with ``==`` or ``is``. ``np.dtype(tiarray.float32)`` gives the NumPy twin.

    Attributes
    ----------
    name : str
        The array API name, e.g. ``"float32"``.
    kind : str
        ``"b"`` bool, ``"i"`` signed integer, ``"u"`` unsigned integer, ``"f"`` real
        floating, ``"c"`` complex floating (as in NumPy).
    itemsize : int
        Bytes per element.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.float32.itemsize
    4
    >>> ta.float32 == ta.float32, ta.float32 == ta.float64
    (True, False)
    """

    __slots__ = ("name", "kind", "itemsize", "_np", "_dl", "_ti_name")

    def __init__(self, name: str, kind: str, itemsize: int, np_dtype, dl: tuple, ti_name):
        self.name = name
        self.kind = kind
        self.itemsize = itemsize
        self._np = np_dtype
        self._dl = dl  # (code, bits)
        self._ti_name = ti_name

    def __repr__(self) -> str:
        return f"tiarray.{self.name}"

    __str__ = __repr__

    def __reduce__(self):
        return (_dtype_by_name, (self.name,))

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype with the same memory layout (``bfloat16`` needs ``ml_dtypes``)."""
        if self._np is None:
            raise TypeError(
                f"{self.name} has no NumPy dtype: install ml_dtypes (it comes with JAX) to view "
                f"{self.name} data from NumPy"
            )
        return self._np

    def __array__(self):  # pragma: no cover - defensive, dtypes are not arrays
        raise TypeError("a tiarray DType is not an array")

    @property
    def dtype(self):
        """``np.dtype(ta.float32)`` works through this attribute (NumPy's dtype protocol)."""
        return self.numpy


class _BFloat16(DType):
    """bfloat16, whose NumPy twin comes from ``ml_dtypes`` (it ships with JAX). Importing
    ml_dtypes costs 0.3-0.9 s, more than the rest of ``import tiarray``, so it is imported
    the first time bfloat16's NumPy dtype is asked for (``_np``), not with tiarray."""

    __slots__ = ("_np_value", "_np_tried")

    @property
    def _np(self):
        if not self._np_tried:
            self._load_np()
        return self._np_value

    @_np.setter
    def _np(self, value):
        self._np_value = value
        self._np_tried = value is not None

    def _load_np(self) -> None:
        try:
            import ml_dtypes

            npd = np.dtype(ml_dtypes.bfloat16)
        except Exception:  # pragma: no cover - depends on the environment
            npd = None
        self._np_value = npd
        self._np_tried = True
        if npd is not None:
            _BY_NP[npd] = self


bool = DType("bool", "b", 1, np.dtype(np.bool_), (DL_BOOL, 8), "u8")
int8 = DType("int8", "i", 1, np.dtype(np.int8), (DL_INT, 8), "i8")
int16 = DType("int16", "i", 2, np.dtype(np.int16), (DL_INT, 16), "i16")
int32 = DType("int32", "i", 4, np.dtype(np.int32), (DL_INT, 32), "i32")
int64 = DType("int64", "i", 8, np.dtype(np.int64), (DL_INT, 64), "i64")
uint8 = DType("uint8", "u", 1, np.dtype(np.uint8), (DL_UINT, 8), "u8")
uint16 = DType("uint16", "u", 2, np.dtype(np.uint16), (DL_UINT, 16), "u16")
uint32 = DType("uint32", "u", 4, np.dtype(np.uint32), (DL_UINT, 32), "u32")
uint64 = DType("uint64", "u", 8, np.dtype(np.uint64), (DL_UINT, 64), "u64")
float16 = DType("float16", "f", 2, np.dtype(np.float16), (DL_FLOAT, 16), "f16")
bfloat16 = _BFloat16("bfloat16", "f", 2, None, (DL_BFLOAT, 16), None)
float32 = DType("float32", "f", 4, np.dtype(np.float32), (DL_FLOAT, 32), "f32")
float64 = DType("float64", "f", 8, np.dtype(np.float64), (DL_FLOAT, 64), "f64")
complex64 = DType("complex64", "c", 8, np.dtype(np.complex64), (DL_COMPLEX, 64), "f32")
complex128 = DType("complex128", "c", 16, np.dtype(np.complex128), (DL_COMPLEX, 128), "f64")

ALL_DTYPES = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float16, bfloat16, float32, float64, complex64, complex128,
)  # fmt: skip
# The dtypes of the array API standard (float16/bfloat16 are tiarray extensions).
STANDARD_DTYPES = (
    bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
    float32, float64, complex64, complex128,
)  # fmt: skip

_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NP = {d._np: d for d in ALL_DTYPES if d is not bfloat16}  # bfloat16's joins when loaded
_BY_DL = {d._dl: d for d in ALL_DTYPES}


def _dtype_by_name(name: str) -> DType:
    return _BY_NAME[name]


# ----------------------------------------------------------------------------- categories

SIGNED_INTEGER = (int8, int16, int32, int64)
UNSIGNED_INTEGER = (uint8, uint16, uint32, uint64)
INTEGER = SIGNED_INTEGER + UNSIGNED_INTEGER
REAL_FLOATING = (float16, bfloat16, float32, float64)
COMPLEX_FLOATING = (complex64, complex128)
FLOATING = REAL_FLOATING + COMPLEX_FLOATING
NUMERIC = INTEGER + FLOATING
REAL_NUMERIC = INTEGER + REAL_FLOATING
INTEGER_OR_BOOL = (bool,) + INTEGER
ALL = (bool,) + NUMERIC

# Names used in function tables (``_elementwise_functions`` etc.) and error messages.
CATEGORIES = {
    "all": ALL,
    "numeric": NUMERIC,
    "real numeric": REAL_NUMERIC,
    "integer": INTEGER,
    "integer or boolean": INTEGER_OR_BOOL,
    "boolean": (bool,),
    "floating-point": FLOATING,
    "real floating-point": REAL_FLOATING,
    "complex floating-point": COMPLEX_FLOATING,
}

# The default dtypes of the namespace (``__array_namespace_info__().default_dtypes()``): the
# one table every function that picks a dtype reads.
DEFAULTS = {"real floating": float64, "complex floating": complex128, "integral": int64, "indexing": int64}


def default_float() -> DType:
    return DEFAULTS["real floating"]


def default_int() -> DType:
    return DEFAULTS["integral"]


def default_index() -> DType:
    return DEFAULTS["indexing"]


def default_uint() -> DType:
    """The unsigned integer dtype with as many bits as the default integer dtype."""
    return {1: uint8, 2: uint16, 4: uint32, 8: uint64}[DEFAULTS["integral"].itemsize]


# isdtype kinds (array API)
_ISDTYPE_KINDS = {
    "bool": (bool,),
    "signed integer": SIGNED_INTEGER,
    "unsigned integer": UNSIGNED_INTEGER,
    "integral": INTEGER,
    "real floating": REAL_FLOATING,
    "complex floating": COMPLEX_FLOATING,
    "numeric": NUMERIC,
}


def isdtype(dtype, kind) -> _builtin_bool:
    """Whether ``dtype`` is of the given ``kind`` (array API ``isdtype``).

    Parameters
    ----------
    dtype : DType
        The dtype to test.
    kind : DType, str or tuple
        A dtype, one of ``"bool"``, ``"signed integer"``, ``"unsigned integer"``,
        ``"integral"``, ``"real floating"``, ``"complex floating"``, ``"numeric"``,
        or a tuple of those.

    Returns
    -------
    bool

    Raises
    ------
    TypeError
        If ``dtype`` is not a tiarray dtype or ``kind`` is not a valid kind.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.isdtype(ta.int8, "integral"), ta.isdtype(ta.float32, ("bool", "numeric"))
    (True, True)
    """
    if not isinstance(dtype, DType):
        raise TypeError(f"isdtype(): argument 'dtype' must be a tiarray dtype, got {dtype!r}")
    if isinstance(kind, tuple):
        return any(isdtype(dtype, k) for k in kind)
    if isinstance(kind, DType):
        return dtype is kind
    if isinstance(kind, str):
        try:
            return dtype in _ISDTYPE_KINDS[kind]
        except KeyError:
            raise ValueError(
                f"isdtype(): unknown kind {kind!r}; expected one of {sorted(_ISDTYPE_KINDS)}"
            ) from None
    raise TypeError(f"isdtype(): argument 'kind' must be a dtype, a string or a tuple, got {kind!r}")


# ----------------------------------------------------------------------------- conversion


def to_dtype(obj, *, func: str = "tiarray", arg: str = "dtype") -> DType:
    """Convert a dtype-like object (DType, NumPy dtype/type, torch/jax dtype, name) to a DType."""
    if isinstance(obj, DType):
        return obj
    if isinstance(obj, str):
        d = _BY_NAME.get(obj)
        if d is not None:
            return d
    try:
        npd = np.dtype(obj)
    except Exception:
        npd = None
        # torch dtypes (torch.float32) are not understood by np.dtype
        name = str(obj).rsplit(".", 1)[-1]
        d = _BY_NAME.get(name)
        if d is not None and type(obj).__module__.startswith("torch"):
            return d
    if npd is not None:
        d = from_numpy_dtype(npd)
        if d is not None:
            return d
    raise TypeError(
        f"{func}(): argument '{arg}' must be a dtype supported by tiarray "
        f"({', '.join(d.name for d in ALL_DTYPES)}), got {obj!r}"
    )


def from_numpy_dtype(npd) -> DType | None:
    """The DType of a NumPy dtype, or None if tiarray has no such dtype."""
    d = _BY_NP.get(npd)
    if d is None and not bfloat16._np_tried and "ml_dtypes" in sys.modules:
        # a bfloat16 NumPy array exists only once ml_dtypes is imported
        bfloat16._load_np()
        d = _BY_NP.get(npd)
    return d


def from_dlpack_dtype(code: int, bits: int, lanes: int = 1) -> DType | None:
    if lanes != 1:
        return None
    return _BY_DL.get((code, bits))


def taichi_type(dtype: DType):
    """The Taichi primitive type storing one element (one component of a complex)."""
    if dtype._ti_name is None:
        raise TypeError(f"{dtype.name} is stored and exchanged by tiarray but Taichi cannot compute on it")
    return getattr(ti, dtype._ti_name)


# ----------------------------------------------------------------------------- promotion

_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_FLOAT_OF_COMPLEX = {complex64: float32, complex128: float64}
_COMPLEX_OF_FLOAT = {float16: complex64, bfloat16: complex64, float32: complex64, float64: complex128}


def _int_promote(a: DType, b: DType) -> DType:
    if a.kind == b.kind:
        return a if a.itemsize >= b.itemsize else b
    u, s = (a, b) if a.kind == "u" else (b, a)
    if s.itemsize > u.itemsize:
        return s
    if u.itemsize == 8:
        raise TypeError(f"no integer dtype can hold both {u.name} and {s.name}")
    return {1: int16, 2: int32, 4: int64}[u.itemsize]


def _float_promote(a: DType, b: DType) -> DType:
    if a is b:
        return a
    if {a, b} == {float16, bfloat16}:
        return float32
    return a if a.itemsize >= b.itemsize else b


def promote(a: DType, b: DType) -> DType:
    """The result dtype of a binary operation on arrays of dtypes ``a`` and ``b``."""
    if a is b:
        return a
    ka, kb = _KIND_RANK[a.kind], _KIND_RANK[b.kind]
    if ka == kb:
        if ka == 0:
            return a
        if ka == 1:
            return _int_promote(a, b)
        if ka == 2:
            return _float_promote(a, b)
        return a if a.itemsize >= b.itemsize else b
    # mixed kinds (an extension of the standard, as in JAX and PyTorch)
    if ka < kb:
        a, b, ka, kb = b, a, kb, ka
    # now a has the higher kind
    if ka == 3 and kb == 2:
        fa = _FLOAT_OF_COMPLEX[a]
        return _COMPLEX_OF_FLOAT[_float_promote(fa, b)]
    return a


def result_type_of(dtypes) -> DType:
    it = iter(dtypes)
    r = next(it)
    for d in it:
        r = promote(r, d)
    return r


def scalar_dtype(value, other: DType) -> DType:
    """The dtype a Python scalar takes next to an array of dtype ``other`` (array API rules).

    ``bool`` with a bool array stays bool; an ``int`` takes the array's dtype for integer
    and floating arrays; a ``float`` takes the array's dtype for floating arrays and the
    default floating dtype for integer arrays (the JAX/PyTorch convention); a ``complex``
    takes the complex dtype matching a floating array's precision.
    """
    t = type(value)
    if t is _builtin_bool or isinstance(value, np.bool_):
        return other
    if isinstance(value, (int, np.integer)):
        if other.kind == "b":
            return DEFAULTS["integral"]
        return other
    if isinstance(value, (float, np.floating)):
        if other.kind in "fc":
            return other
        return DEFAULTS["real floating"]
    if isinstance(value, (complex, np.complexfloating)):
        if other.kind == "c":
            return other
        if other.kind == "f":
            return _COMPLEX_OF_FLOAT[other]
        return DEFAULTS["complex floating"]
    raise TypeError(f"expected a Python scalar (bool, int, float, complex), got {type(value).__name__}")


def finfo_dtype(dtype: DType) -> DType:
    """The real dtype of a complex dtype; the dtype itself otherwise."""
    return _FLOAT_OF_COMPLEX.get(dtype, dtype)
