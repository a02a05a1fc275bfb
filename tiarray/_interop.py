"""Getting arrays in (``asarray``, ``from_dlpack``) and out (``__dlpack__``), without copying.

Import paths, fastest first:

==================  ===============================================================
NumPy ndarray       pointer, shape and strides read from the array; it is the owner
torch.Tensor        ``data_ptr()``, ``shape``, ``stride()``; the tensor is the owner
ti.ndarray          Taichi's data pointer; the ndarray is the owner
JAX, CuPy, array-   ``__dlpack__`` (versioned when offered): the imported managed tensor
api-strict, any     is the owner and its deleter runs when the last TiArray view dies
``__dlpack__``
buffer protocol     through a NumPy view (``memoryview``)
scalars, sequences  copied into new memory (there is nothing to share)
==================  ===============================================================

Every layout a strided array can have is taken without copying: C-contiguous,
transposed, sliced, negative and zero strides. Only memory whose strides are not a
whole number of elements (a field of a NumPy structured array, say) cannot be described
by element strides, and is copied (``copy=False`` then raises ``ValueError``).
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import _backend, _dlpack, _dtypes, _runtime
from ._array_object import TiArray, c_strides
from ._buffer import alloc
from ._detect import framework_of, is_jax_tracer
from ._runtime import CPU, Device

__all__ = ["asarray", "from_dlpack"]

_DL_DEVICE = {1: "cpu", 2: "cuda", 13: "cuda"}  # kDLCPU, kDLCUDA, kDLCUDAManaged


def _device_from_dl(dev: tuple, func: str) -> Device:
    kind = _DL_DEVICE.get(dev[0])
    if kind is None:
        names = {3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm", 14: "oneAPI"}
        raise BufferError(
            f"{func}(): memory on DLPack device type {dev[0]} ({names.get(dev[0], 'unknown')}) is not "
            "supported; tiarray takes CPU and CUDA memory"
        )
    return CPU if kind == "cpu" else Device("cuda", dev[1])


# ----------------------------------------------------------------------------- owned arrays


def empty_owned(shape: tuple, dtype: _dtypes.DType, device: Device, *, zero: bool = False) -> TiArray:
    """A new C-contiguous array in memory tiarray owns."""
    n = 1
    for s in shape:
        n *= s
    nbytes = n * dtype.itemsize
    ptr, owner = alloc(nbytes, device, zero=zero)
    t = TiArray._new(ptr, shape, c_strides(shape), dtype, device, owner, False)
    if device.kind == "cpu" and dtype._np is not None:
        t._npv = owner.buf[:nbytes].view(dtype._np).reshape(shape)  # cheaper than building one later
    return t


def copy_array(x: TiArray, dtype: _dtypes.DType | None = None, device: Device | None = None) -> TiArray:
    """A new C-contiguous, writable copy of ``x`` (optionally cast and/or on another device)."""
    dtype = x._dtype if dtype is None else dtype
    device = x._device if device is None else device
    if device != x._device:
        y = copy_to_device(x, device)
        return y if dtype is y._dtype else copy_array(y, dtype)
    out = empty_owned(x._shape, dtype, device)
    copy_into(out, x)
    return out


def copy_into(dst: TiArray, src: TiArray) -> None:
    """Copy ``src`` into ``dst`` (same shape, same device), casting to ``dst``'s dtype."""
    if dst.size == 0:
        return
    if dst._device.kind == "cpu" and dst._dtype._np is not None and src._dtype._np is not None:
        # On the CPU a copy is a memory operation: NumPy's copy loops run at memcpy speed
        # on views of the same memory (no round trip).
        np.copyto(dst._numpy_view(), src._numpy_view(), casting="unsafe")
        return
    from ._kernels.copy import strided_copy

    strided_copy(dst, src)


def copy_to_device(x: TiArray, device: Device, *, stream=None) -> TiArray:
    """Copy ``x`` to another device (CPU <-> CUDA) as a C-contiguous array."""
    if device == x._device:
        return copy_array(x)
    from . import _cuda

    src = x if x._is_c_contiguous() else copy_array(x)
    out = empty_owned(x._shape, x._dtype, device)
    _runtime.sync()
    _cuda.memcpy(out._ptr, src._ptr, src._nbytes())
    return out


# ----------------------------------------------------------------------------- import

_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof


def _data_ptr_slow(a) -> int:
    if a.flags.writeable:
        try:
            return _addressof(_from_buffer(a))
        except (TypeError, ValueError, BufferError):  # size 0, exotic buffers
            pass
    return a.__array_interface__["data"][0]


# ``PyArrayObject`` starts with ob_refcnt, ob_type, then the ``data`` pointer: reading it
# straight from the object costs ~0.1 us, ``ctypes``/``__array_interface__`` 0.3-1.5 us.
_from_address = ctypes.c_void_p.from_address
_PTR_OFFSET = 2 * ctypes.sizeof(ctypes.c_void_p)


def _layout_ok() -> bool:
    try:
        for a in (np.arange(3.0), np.zeros((2, 3), np.int8)[1:], np.arange(4)[::2]):
            if (_from_address(id(a) + _PTR_OFFSET).value or 0) != a.__array_interface__["data"][0]:
                return False
        return True
    except Exception:  # pragma: no cover - exotic interpreters
        return False


if _layout_ok():

    def numpy_data_ptr(a) -> int:
        """Address of the first element of a NumPy array (read from the array object)."""
        return _from_address(id(a) + _PTR_OFFSET).value or 0

else:  # pragma: no cover - every CPython we know lays PyArrayObject out this way
    numpy_data_ptr = _data_ptr_slow


def _import_numpy(x: np.ndarray, func: str) -> TiArray | None:
    dt = _dtypes.from_numpy_dtype(x.dtype)
    if dt is None:
        raise TypeError(
            f"{func}(): NumPy dtype {x.dtype} is not supported by tiarray; supported: "
            f"{', '.join(d.name for d in _dtypes.ALL_DTYPES)}"
        )
    it = x.itemsize
    bstrides = x.strides
    strides = tuple(s // it for s in bstrides)
    if any(s % it for s in bstrides):
        return None  # not representable with element strides: needs a copy
    t = TiArray._new(numpy_data_ptr(x), x.shape, strides, dt, CPU, x, not x.flags.writeable)
    if type(x) is np.ndarray:  # not a subclass (np.matrix, masked arrays)
        t._npv = x
    return t


_TORCH_DTYPES: dict = {}


def _torch_dtype(t, func: str) -> _dtypes.DType:
    d = _TORCH_DTYPES.get(t.dtype)
    if d is None:
        name = str(t.dtype).rsplit(".", 1)[-1]
        d = _dtypes._BY_NAME.get(name)
        if d is None:
            raise TypeError(
                f"{func}(): torch dtype {t.dtype} is not supported by tiarray; supported: "
                f"{', '.join(x.name for x in _dtypes.ALL_DTYPES)}"
            )
        _TORCH_DTYPES[t.dtype] = d
    return d


def _import_torch(t, func: str, copy, want: Device | None = None) -> TiArray:
    if t.is_quantized:
        raise TypeError(
            f"{func}(): quantized torch tensors are not supported (dtype {t.dtype}); dequantize first"
        )
    if t.layout.__repr__() != "torch.strided":
        raise TypeError(f"{func}(): torch tensors with layout {t.layout} are not supported; use .to_dense()")
    dt = _torch_dtype(t, func)
    dev = t.device
    if dev.type == "cpu":
        device = CPU
    elif dev.type == "cuda":
        device = Device("cuda", dev.index or 0)
    else:
        raise TypeError(
            f"{func}(): torch tensors on device '{dev}' are not supported; tiarray takes cpu and cuda"
        )
    _check_device_usable(device, want, func)
    if t.requires_grad:
        raise TypeError(
            f"{func}(): the tensor requires grad; a TiArray view would bypass autograd. Pass "
            "tensor.detach() to share memory, or call a tiarray.Operator, which is differentiable"
        )
    if t.is_conj() or t.is_neg():
        if copy is False:
            raise ValueError(
                f"{func}(): the tensor has a lazy conjugate/negative bit; its values exist only after "
                "resolve_conj()/resolve_neg(), which copies, but copy=False was given"
            )
        t = t.resolve_conj().resolve_neg()
    return TiArray._new(t.data_ptr(), tuple(t.shape), tuple(t.stride()), dt, device, t, False)


def _import_taichi_ndarray(nd, func: str) -> TiArray:
    if nd.element_shape:
        raise TypeError(f"{func}(): Taichi vector/matrix ndarrays are not supported; use a scalar ndarray")
    dt = _dtypes.to_dtype(_backend.ndarray_numpy_dtype(nd), func=func)
    ptr = _backend.ndarray_ptr(nd)
    shape = tuple(nd.shape)
    return TiArray._new(ptr, shape, c_strides(shape), dt, _runtime.current_device(), nd, False)


def _import_dlpack(x, func: str, copy, device: Device | None) -> TiArray:
    """Import through ``__dlpack__``, asking for the versioned protocol first."""
    dev_fn = getattr(x, "__dlpack_device__", None)
    src_dev = None
    if dev_fn is not None:
        src_dev = _device_from_dl(tuple(dev_fn()), func)
        _check_device_usable(src_dev, device, func)
    kwargs = {}
    if src_dev is not None and src_dev.kind == "cuda":
        # Taichi works on the legacy default stream: the producer makes its data ready there.
        kwargs["stream"] = 1
    try:
        cap = x.__dlpack__(max_version=_dlpack.DLPACK_VERSION, **kwargs)
    except TypeError:
        # a producer of the legacy protocol (no max_version keyword)
        cap = x.__dlpack__(**kwargs)
    except BufferError as e:
        raise BufferError(f"{func}(): the producer ({type(x).__name__}) refused to export: {e}") from e
    return _from_capsule(cap, func)


def _check_device_usable(src: Device, want: Device | None, func: str) -> None:
    """CUDA memory needs a CUDA runtime, unless the caller asked for a copy to the CPU."""
    if src.kind == "cuda" and want != CPU and _runtime.current_device().kind != "cuda":
        raise ValueError(
            f"{func}(): the input lives on {src} but Taichi runs on the CPU, so tiarray cannot compute on it. "
            "Start tiarray on the GPU with tiarray.init('cuda') before any other tiarray call, or pass "
            "device='cpu' to copy it to host memory"
        )


def _from_capsule(cap, func: str) -> TiArray:
    t = _dlpack.import_capsule(cap, func=func)
    device = _device_from_dl(t.device, func)
    return TiArray._new(t.ptr, t.shape, t.strides, t.dtype, device, t.owner, t.readonly)


def view_of(obj, func: str, copy=None, want: Device | None = None) -> TiArray | None:
    """A TiArray sharing ``obj``'s memory, or None if ``obj`` has no memory to share.

    Raises for array objects that cannot be shared (unsupported dtype, device, ...).
    """
    fw = framework_of(obj)
    if fw == "tiarray":
        return obj
    if fw == "numpy":
        return _import_numpy(obj, func)
    if fw == "torch":
        return _import_torch(obj, func, copy, want)
    if fw == "jax":
        if is_jax_tracer(obj):
            raise TypeError(
                f"{func}(): got a traced JAX value (inside jax.jit, vmap or grad); it has no memory yet. "
                "Call a tiarray.Operator inside traced code: it becomes a JAX primitive"
            )
        t = _import_dlpack(obj, func, copy, want)
        t._readonly = True  # JAX arrays are immutable (JAX's capsules are legacy: no flag)
        return t
    if fw == "taichi":
        return _import_taichi_ndarray(obj, func)
    if hasattr(obj, "__dlpack__"):
        return _import_dlpack(obj, func, copy, want)
    if type(obj).__name__ == "PyCapsule":
        return _from_capsule(obj, func)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        return None
    try:
        mv = memoryview(obj)
    except TypeError:
        return None
    return _import_numpy(np.asarray(mv), func)


_SCALAR_TYPES = (bool, int, float, complex)


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> TiArray:
    """Convert ``obj`` to a TiArray, sharing its memory whenever possible.

    Parameters
    ----------
    obj : array-like
        A TiArray, NumPy array, torch tensor, JAX array, CuPy array, array-api-strict
        array, ``ti.ndarray``, any object with ``__dlpack__``, an object with the buffer
        protocol, a Python scalar, or a nested sequence of those.
    dtype : DType, optional
        The dtype of the result; a different dtype than ``obj``'s needs a copy.
    device : Device or str, optional
        The device of the result; a different device than ``obj``'s needs a copy.
    copy : bool, optional
        ``True``: always copy. ``None``: copy only if needed. ``False``: never copy, and
        raise ``ValueError`` if a copy is needed.

    Returns
    -------
    TiArray
        A view of ``obj``'s memory (read-only if ``obj`` is immutable, e.g. a JAX array)
        or, when a copy was made, a new array tiarray owns.

    Raises
    ------
    TypeError
        For objects that are not arrays, unsupported dtypes (e.g. quantized tensors),
        traced JAX values, torch tensors that require grad.
    ValueError
        If ``copy=False`` and a copy is needed.
    BufferError
        If a DLPack producer refuses to export, or a capsule was already consumed.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = np.arange(4, dtype=np.float32)
    >>> t = ta.asarray(x)
    >>> t.ptr == x.ctypes.data        # the same memory
    True
    >>> ta.asarray([1, 2, 3]).dtype
    tiarray.int64
    """
    func = "asarray"
    if copy not in (None, True, False):
        raise ValueError(f"{func}(): argument 'copy' must be True, False or None, got {copy!r}")
    want_dtype = None if dtype is None else _dtypes.to_dtype(dtype, func=func)
    want_device = None if device is None else _runtime.get_device(device, func=func)

    x = None
    if not isinstance(obj, _SCALAR_TYPES):
        x = view_of(obj, func, copy, want_device)
        if x is None and (hasattr(obj, "__array_interface__") or hasattr(obj, "__array__")):
            try:
                arr = np.asarray(obj, copy=False if copy is False else None)
            except ValueError as e:
                raise ValueError(
                    f"{func}(): {type(obj).__name__} cannot be converted without a copy: {e}"
                ) from e
            except Exception as e:
                raise TypeError(f"{func}(): could not convert {type(obj).__name__} to an array: {e}") from e
            x = _import_numpy(arr, func)
    if x is None:
        # Python scalars, nested sequences, and strided memory we cannot describe.
        if copy is False:
            raise ValueError(
                f"{func}(): a {type(obj).__name__} has no memory that can be shared without a copy, "
                "but copy=False was given"
            )
        return _from_python(obj, want_dtype, want_device, func)

    if want_device is not None and want_device != x._device:
        if copy is False:
            raise ValueError(
                f"{func}(): the input lives on {x._device}, device={want_device} needs a copy, "
                "but copy=False was given"
            )
        x = copy_to_device(x, want_device)
        copied = True
    else:
        copied = False
    if want_dtype is not None and want_dtype is not x._dtype:
        if copy is False:
            raise ValueError(
                f"{func}(): the input has dtype {x._dtype.name}, dtype={want_dtype.name} needs a copy, "
                "but copy=False was given"
            )
        return copy_array(x, want_dtype)
    if copy and not copied:
        return copy_array(x)
    return x


def _default_for(kind):
    return _dtypes.DEFAULTS[kind]


def _infer_dtype(obj) -> _dtypes.DType | None:
    """The array API dtype of a Python scalar or nested sequence (None: let NumPy decide)."""
    kinds = set()

    def walk(o, depth=0):
        if depth > 64:
            raise ValueError("asarray(): sequence nested too deeply")
        if isinstance(o, bool) or isinstance(o, np.bool_):
            kinds.add("b")
        elif isinstance(o, (int, np.integer)):
            kinds.add("i")
        elif isinstance(o, (float, np.floating)):
            kinds.add("f")
        elif isinstance(o, (complex, np.complexfloating)):
            kinds.add("c")
        elif isinstance(o, (list, tuple)):
            for e in o:
                walk(e, depth + 1)
        else:
            kinds.add("?")

    walk(obj)
    if "?" in kinds:
        return None
    if "c" in kinds:
        return _default_for("complex floating")
    if "f" in kinds:
        return _default_for("real floating")
    if "i" in kinds:
        return _default_for("integral")
    if "b" in kinds:
        return _dtypes.bool
    return _default_for("real floating")  # empty sequence


def _from_python(obj, dtype, device, func) -> TiArray:
    if dtype is None:
        dtype = _infer_dtype(obj)
    try:
        if dtype is not None:
            if dtype.kind in "iu" and not isinstance(obj, np.ndarray):
                _check_int_range(obj, dtype, func)
            arr = np.asarray(obj, dtype=dtype.numpy)
        else:
            arr = np.asarray(obj)
    except (OverflowError, ValueError, TypeError) as e:
        raise TypeError(f"{func}(): could not convert {type(obj).__name__} to an array: {e}") from None
    if arr.dtype == object or _dtypes.from_numpy_dtype(arr.dtype) is None:
        raise TypeError(
            f"{func}(): expected an array, a Python scalar or a nested sequence of numbers, "
            f"got {type(obj).__name__}"
        )
    dt = _dtypes.from_numpy_dtype(arr.dtype)
    host = empty_owned(arr.shape, dt, CPU)
    if host.size:
        np.copyto(host._numpy_view(), arr)
    dev = device if device is not None else _runtime.current_device()
    if dev != CPU:
        return copy_to_device(host, dev)
    return host


def _check_int_range(obj, dtype, func):
    info = np.iinfo(dtype.numpy)

    def walk(o):
        if isinstance(o, (list, tuple)):
            for e in o:
                walk(e)
        elif isinstance(o, int) and not isinstance(o, bool):
            if not info.min <= o <= info.max:
                raise OverflowError(f"Python int {o} does not fit in {dtype.name}")

    walk(obj)


def from_dlpack(x, /, *, device=None, copy=None) -> TiArray:
    """Import an object that implements DLPack (``__dlpack__`` and ``__dlpack_device__``).

    Parameters
    ----------
    x : object
        Any DLPack producer: a NumPy array, torch tensor, JAX array, CuPy array, a TiArray...
    device : Device or str, optional
        Where the result must live; another device than ``x``'s needs a copy.
    copy : bool, optional
        ``True`` always copies, ``False`` never copies (``ValueError`` if needed).

    Returns
    -------
    TiArray

    Raises
    ------
    TypeError
        If ``x`` does not implement DLPack.
    BufferError
        If the producer refuses to export or the dtype/device is not supported.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = np.ones(3)
    >>> ta.from_dlpack(x).ptr == x.ctypes.data
    True
    """
    func = "from_dlpack"
    if isinstance(x, TiArray):
        t = x
    else:
        if not hasattr(x, "__dlpack__"):
            raise TypeError(
                f"{func}(): argument 'x' must implement the DLPack protocol (__dlpack__), "
                f"got {type(x).__name__}"
            )
        fw = framework_of(x)
        if fw == "numpy":
            t = _import_numpy(x, func)  # same memory, without building a capsule
            if t is None:
                raise BufferError(f"{func}(): NumPy array with strides not a multiple of its itemsize")
        elif fw == "torch":
            t = _import_torch(x, func, copy, None if device is None else _runtime.get_device(device))
        else:
            t = view_of(x, func, copy, None if device is None else _runtime.get_device(device))
    return asarray(t, device=device, copy=copy)


# ----------------------------------------------------------------------------- kernels


def asarray_for_kernel(obj, *, func: str, arg: str):
    """A C-contiguous TiArray for a kernel argument, and a write-back callable or None.

    Non-contiguous writable inputs are copied to a contiguous buffer, and copied back
    after the launch (the callable), so kernels may write to them.
    """
    x = view_of(obj, func) if not isinstance(obj, TiArray) else obj
    if x is None:
        raise TypeError(f"{func}(): argument '{arg}' must be an array, got {type(obj).__name__}")
    if x._is_c_contiguous():
        return x, None
    tmp = copy_array(x)
    if x._readonly:
        return tmp, None
    return tmp, lambda: copy_into(x, tmp)


# ----------------------------------------------------------------------------- export


def export_dlpack(x: TiArray, *, stream, max_version, dl_device, copy):
    versioned = max_version is not None and tuple(max_version)[0] >= 1
    copied = False
    if dl_device is not None:
        want = _device_from_dl(tuple(dl_device), "__dlpack__")
        if want != x._device:
            if copy is False:
                raise BufferError(
                    f"__dlpack__(): the array is on {x._device}, dl_device asks for {want}; that needs a copy "
                    "but copy=False was given"
                )
            x = copy_to_device(x, want)
            copied = True
    if not copy and any(st < 0 for st, d in zip(x._strides, x._shape) if d > 1):
        # PyTorch aborts the process on negative DLPack strides (a C++ exception escapes
        # at::fromDLPack), and JAX cannot take them either: refuse cleanly instead.
        raise BufferError(
            "__dlpack__(): the array has negative strides, which DLPack consumers such as PyTorch "
            "cannot represent; use np.asarray(x) for a NumPy view, or export a copy "
            "(x.__dlpack__(copy=True) or tiarray.asarray(x, copy=True))"
        )
    if copy and not copied:
        x = copy_array(x)
        copied = True
    if x._device.kind == "cpu":
        if stream is not None and stream != -1:
            raise BufferError(f"__dlpack__(): stream must be None for CPU memory, got {stream!r}")
    elif stream != -1:
        from . import _cuda

        _cuda.stream_wait(stream)
    return _dlpack.export_capsule(
        x._ptr, x._shape, x._strides, x._dtype, x._device.dlpack, x,
        readonly=x._readonly, versioned=versioned, copied=copied,
    )  # fmt: skip
