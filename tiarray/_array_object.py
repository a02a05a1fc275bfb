"""The TiArray type.

A TiArray is a view: a pointer to its first element, a shape, strides (in elements, may
be negative or zero), a dtype, a device, a read-only flag, and an *owner*, the object that
keeps the memory alive. The owner is whatever produced the memory: tiarray's own aligned
allocation, a Taichi ndarray, a NumPy array, a torch tensor, or an imported DLPack tensor.
Views (slices, transposes, reshapes of contiguous data) share the owner.

TiArray never subclasses a framework's array and is never constructed directly: use
:func:`tiarray.asarray`, :func:`tiarray.from_dlpack` or a creation function.
"""

from __future__ import annotations

import operator
import os

import numpy as np

from . import _dtypes
from ._runtime import Device

__all__ = ["TiArray", "MemoryKeeper"]

_API_VERSIONS = ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12")
# The versions whose differences tiarray implements: 2025.12 returns tuples where 2024.12
# returned lists (meshgrid, broadcast_arrays, __array_namespace_info__().devices()).
_SELECTABLE_VERSIONS = ("2024.12", "2025.12")


def _api_version_from_env() -> str:
    """The array API version of this process: ``TIARRAY_ARRAY_API_VERSION``, default 2025.12."""
    v = os.environ.get("TIARRAY_ARRAY_API_VERSION", "").strip() or "2025.12"
    if v not in _SELECTABLE_VERSIONS:
        raise ValueError(
            f"tiarray: environment variable TIARRAY_ARRAY_API_VERSION must be one of "
            f"{', '.join(_SELECTABLE_VERSIONS)}, got {v!r}"
        )
    return v


#: The array API version tiarray implements in this process (``tiarray.__array_api_version__``).
API_VERSION = _api_version_from_env()


def api_sequence(items) -> list | tuple:
    """``items`` as the standard's sequence type of this version: a tuple from 2025.12 on, a
    list before (``meshgrid``, ``broadcast_arrays``, ``Info.devices``)."""
    return tuple(items) if API_VERSION >= "2025.12" else list(items)


class _ArrayInterface:
    """Hands a pointer to NumPy (``np.asarray`` keeps this object, and so the owner, alive)."""

    __slots__ = ("__array_interface__", "_owner")

    def __init__(self, iface, owner):
        self.__array_interface__ = iface
        self._owner = owner


class MemoryKeeper:
    """An owner for memory whose user-visible owner can let go of it: a torch tensor's
    storage can be swapped (``set_``, ``.data = ...``) or reallocated (``resize_``) under
    a view. ``base`` is the object users see (``TiArray.base``), ``storage`` what really
    owns the memory (held, so a swap cannot free it), ``data`` the address the view was
    made from; ``check`` refuses a view whose memory was reallocated since."""

    __slots__ = ("base", "storage", "data")

    def __init__(self, base, storage, data: int):
        self.base = base
        self.storage = storage
        self.data = data

    def check(self) -> None:
        if self.storage.data_ptr() != self.data:
            raise RuntimeError(
                f"tiarray: the memory of this array was freed: the {type(self.base).__name__} it views "
                "was resized in place (resize_) after the view was made; make a new view with "
                "tiarray.asarray(tensor)"
            )


_NAMESPACE: list = [None]  # the tiarray module (set by tiarray/__init__ once it is complete)


def attach_namespace(module) -> None:
    _NAMESPACE[0] = module


_C_STRIDES: dict = {}


def c_strides(shape) -> tuple:
    """The C-contiguous strides (in elements) of ``shape`` (cached: results of a program
    come in few shapes)."""
    cached = type(shape) is tuple
    if cached:
        st = _C_STRIDES.get(shape)
        if st is not None:
            return st
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= s if s > 1 else 1
    st = tuple(reversed(strides))
    if cached and len(_C_STRIDES) < 4096:
        _C_STRIDES[shape] = st
    return st


class TiArray:
    """An n-dimensional array that Taichi kernels compute on and every framework can share.

    Create one with :func:`tiarray.asarray`, :func:`tiarray.from_dlpack` or a creation
    function such as :func:`tiarray.zeros`; the constructor is not public.

    A TiArray implements the Python array API standard (2024.12) and DLPack: pass it to
    ``np.from_dlpack``, ``torch.from_dlpack``, ``jax.dlpack.from_dlpack`` or
    ``cupy.from_dlpack`` to share its memory without a copy, and ``np.asarray(t)`` gives a
    NumPy view of CPU data.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = np.arange(6.0).reshape(2, 3)
    >>> t = ta.asarray(x)          # no copy
    >>> t.shape, t.dtype, t.device
    ((2, 3), tiarray.float64, Device('cpu'))
    >>> np.shares_memory(np.from_dlpack(t), x)
    True
    """

    __slots__ = (
        "_ptr",
        "_shape",
        "_strides",
        "_dtype",
        "_device",
        "_owner",
        "_readonly",
        "_npv",
        "__weakref__",
    )

    # Let NumPy defer to us in mixed expressions (np_array + tiarray -> TiArray).
    __array_priority__ = 100

    def __new__(cls, *args, **kwargs):
        raise TypeError(
            "TiArray cannot be constructed directly; use tiarray.asarray(obj), tiarray.from_dlpack(obj) "
            "or a creation function such as tiarray.zeros(shape)"
        )

    @classmethod
    def _new(
        cls, ptr: int, shape: tuple, strides: tuple, dtype, device: Device, owner, readonly: bool = False
    ):
        self = object.__new__(cls)
        self._ptr = ptr
        self._shape = shape
        self._strides = strides
        self._dtype = dtype
        self._device = device
        self._owner = owner
        self._readonly = readonly
        self._npv = None
        return self

    def _view(self, ptr: int, shape: tuple, strides: tuple) -> TiArray:
        """A view sharing this array's memory, owner and flags."""
        return TiArray._new(ptr, shape, strides, self._dtype, self._device, self._owner, self._readonly)

    # ------------------------------------------------------------------ attributes

    @property
    def dtype(self) -> _dtypes.DType:
        """The data type of the elements."""
        return self._dtype

    @property
    def device(self) -> Device:
        """The device where the memory lives."""
        return self._device

    @property
    def ndim(self) -> int:
        """The number of dimensions."""
        return len(self._shape)

    @property
    def shape(self) -> tuple:
        """The shape, a tuple of ints."""
        return self._shape

    @property
    def size(self) -> int:
        """The number of elements."""
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def strides(self) -> tuple:
        """Strides in *elements* (as DLPack, unlike NumPy's bytes). May be negative or zero."""
        return self._strides

    @property
    def ptr(self) -> int:
        """The address of the first element (``x[0, ..., 0]``)."""
        return self._ptr

    @property
    def readonly(self) -> bool:
        """Whether writing is forbidden (e.g. the array views an immutable JAX buffer)."""
        return self._readonly

    @property
    def base(self):
        """The object that owns the memory (NumPy array, torch tensor, Taichi ndarray, ...)."""
        o = self._owner
        return o.base if o.__class__ is MemoryKeeper else o

    @property
    def T(self) -> TiArray:
        """The transpose of a 2-D array (a view)."""
        if self.ndim != 2:
            raise ValueError(f"TiArray.T: expected a 2-D array, got {self.ndim}-D; use permute_dims or mT")
        return self._view(self._ptr, self._shape[::-1], self._strides[::-1])

    @property
    def mT(self) -> TiArray:
        """The transpose of the last two axes (a view)."""
        if self.ndim < 2:
            raise ValueError(f"TiArray.mT: expected at least 2 dimensions, got {self.ndim}")
        sh, st = self._shape, self._strides
        return self._view(self._ptr, sh[:-2] + (sh[-1], sh[-2]), st[:-2] + (st[-1], st[-2]))

    def _nbytes(self) -> int:
        if self._owner.__class__ is MemoryKeeper:
            self._owner.check()
        return self.size * self._dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of element data (``size * itemsize``)."""
        return self._nbytes()

    def _is_c_contiguous(self) -> bool:
        acc = 1
        for s, st in zip(reversed(self._shape), reversed(self._strides)):
            if s == 0:
                return True
            if s != 1 and st != acc:
                return False
            acc *= s
        return True

    @property
    def is_contiguous(self) -> bool:
        """Whether the elements are C-contiguous (row-major, no gaps)."""
        return self._is_c_contiguous()

    def _byte_extent(self) -> tuple[int, int]:
        """(lowest, one-past-highest) byte address the view touches."""
        if self._owner.__class__ is MemoryKeeper:
            self._owner.check()
        if self.size == 0:
            return self._ptr, self._ptr
        lo = hi = 0
        for s, st in zip(self._shape, self._strides):
            if st > 0:
                hi += (s - 1) * st
            else:
                lo += (s - 1) * st
        it = self._dtype.itemsize
        return self._ptr + lo * it, self._ptr + (hi + 1) * it

    # ------------------------------------------------------------------ protocols

    def __array_namespace__(self, /, *, api_version: str | None = None):
        """The array API namespace of TiArrays: the ``tiarray`` module.

        ``api_version`` may name any version up to the one this process implements
        (``tiarray.__array_api_version__``, 2025.12 unless ``TIARRAY_ARRAY_API_VERSION``
        says 2024.12); a later or unknown one is a ``ValueError``."""
        if api_version is not None:
            supported = tuple(v for v in _API_VERSIONS if v <= API_VERSION)
            if api_version not in supported:
                raise ValueError(
                    f"TiArray.__array_namespace__(): unsupported api_version {api_version!r}; "
                    f"supported: {', '.join(supported)}"
                    + (
                        f" (set TIARRAY_ARRAY_API_VERSION={api_version} before importing tiarray)"
                        if api_version in _SELECTABLE_VERSIONS
                        else ""
                    )
                )
        return _NAMESPACE[0]

    def __dlpack_device__(self) -> tuple:
        """``(device_type, device_id)`` as DLPack (1 = CPU, 2 = CUDA)."""
        return self._device.dlpack

    def _numpy_view(self) -> np.ndarray:
        """A NumPy array on the same memory (CPU only)."""
        npv = self._npv
        if npv is not None:
            return npv
        if self._owner.__class__ is MemoryKeeper:
            self._owner.check()
        if self._device.kind != "cpu":
            raise TypeError(
                f"a NumPy view needs CPU memory; this array lives on {self._device}. "
                "Use x.to_device('cpu') first (a copy)."
            )
        npd = self._dtype.numpy
        it = npd.itemsize
        iface = {
            "data": (self._ptr, self._readonly),
            "shape": self._shape,
            "strides": tuple(s * it for s in self._strides),
            "typestr": npd.str if npd.kind != "V" else f"|V{it}",
            "version": 3,
        }
        npv = np.asarray(_ArrayInterface(iface, self._owner))
        if npv.dtype != npd:
            npv = npv.view(npd)
        self._npv = npv
        return npv

    def __array__(self, dtype=None, copy=None):
        """NumPy's protocol: ``np.asarray(t)`` is a view of CPU memory (no copy)."""
        if self._device.kind != "cpu":
            if copy is False:
                raise ValueError(
                    f"TiArray.__array__(): the array lives on {self._device}; NumPy needs a copy to host "
                    "but copy=False was given"
                )
            a = self.to_device("cpu")._numpy_view()
        else:
            a = self._numpy_view()
        if dtype is not None and np.dtype(dtype) != a.dtype:
            if copy is False:
                raise ValueError("TiArray.__array__(): a dtype change needs a copy but copy=False was given")
            return a.astype(dtype)
        if copy:
            return a.copy()
        return a

    def _host(self) -> np.ndarray:
        """A NumPy array with the values (a view on the CPU, a copy from a GPU)."""
        if self._device.kind == "cpu":
            return self._numpy_view()
        return self.to_device("cpu")._numpy_view()

    # ------------------------------------------------------------------ Python protocols

    def __repr__(self) -> str:
        try:
            body = np.array2string(self._host(), separator=", ", prefix="TiArray(")
        except TypeError:
            body = "<data not viewable>"
        extra = "" if self._device.kind == "cpu" else f", device={self._device}"
        ro = ", readonly" if self._readonly else ""
        return f"TiArray({body}, dtype={self._dtype.name}{extra}{ro})"

    def __str__(self) -> str:
        return str(self._host())

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d TiArray")
        return self._shape[0]

    def __iter__(self):
        if not self._shape:
            raise TypeError("iteration over a 0-d TiArray")
        for i in range(self._shape[0]):
            yield self[i]

    def _scalar(self, func: str):
        if self.size != 1:
            raise TypeError(
                f"{func}() of a TiArray needs exactly one element (a 0-d array), got shape {self._shape}"
            )
        return self._host().reshape(()).item()

    def item(self):
        """The single element as a Python scalar."""
        return self._scalar("item")

    def tolist(self):
        """The data as nested Python lists."""
        return self._host().tolist()

    def __bool__(self) -> bool:
        return bool(self._scalar("bool"))

    def __int__(self) -> int:
        v = self._scalar("int")
        if isinstance(v, complex):
            raise TypeError("int() of a complex TiArray")
        return int(v)

    def __float__(self) -> float:
        v = self._scalar("float")
        if isinstance(v, complex):
            raise TypeError("float() of a complex TiArray; use real() or abs() first")
        return float(v)

    def __complex__(self) -> complex:
        return complex(self._scalar("complex"))

    def __index__(self) -> int:
        if self._dtype.kind not in "iu":
            raise TypeError(f"only integer TiArrays can be used as an index, got dtype {self._dtype.name}")
        return operator.index(self._scalar("index"))

    # Attached by the layers that implement them (they need copies, kernels, the namespace):
    # __dlpack__ and to_device (tiarray._interchange), __getitem__ and __setitem__
    # (tiarray._indexing), the arithmetic, comparison and bitwise dunders
    # (tiarray._array_operators), __array_namespace__'s namespace (tiarray/__init__).


TiArray.__hash__ = None  # arrays are mutable and compare elementwise
