"""Views of other libraries' memory: NumPy, torch, Taichi ndarrays, DLPack capsules.

``view_of(obj)`` is a TiArray sharing ``obj``'s memory, without copying. Import paths,
fastest first:

==================  ===============================================================
NumPy ndarray       pointer, shape and strides read from the array; it is the owner
torch.Tensor        ``data_ptr()``, ``shape``, ``stride()``; the tensor is the owner
ti.ndarray          Taichi's data pointer; the ndarray is the owner
ti.field            the address of its root buffer plus the field's offset, shape and
(scalar, Vector,    strides read from its SNode tree (vector/matrix element axes last);
Matrix)             the field is the owner. Only dense SNode trees are one strided array:
                    other layouts raise (``copy=True`` copies them through ``to_numpy``)
JAX, CuPy, array-   ``__dlpack__`` (versioned when offered): the imported managed tensor
api-strict, any     is the owner and its deleter runs when the last TiArray view dies
``__dlpack__``
CUDA array          ``__cuda_array_interface__`` (numba's device arrays, PyCUDA, ...: CUDA
interface           memory without ``__dlpack__``); the object is the owner
buffer protocol     through a NumPy view (``memoryview``)
==================  ===============================================================

Every layout a strided array can have is taken without copying: C-contiguous,
transposed, sliced, negative and zero strides. Only memory whose strides are not a
whole number of elements (a field of a NumPy structured array, say) cannot be described
by element strides (``view_of`` returns None; ``asarray`` then copies). Copies,
Python scalars and sequences are :mod:`tiarray._interchange`'s job (a layer above).
"""

from __future__ import annotations

import sys

import numpy as np

from . import _backend, _cuda, _dlpack, _dtypes, _runtime
from ._array_object import MemoryKeeper, TiArray, c_strides
from ._detect import framework_of, is_jax_tracer
from ._hostptr import numpy_data_ptr
from ._runtime import CPU, Device

__all__ = ["view_of", "numpy_data_ptr", "device_from_dl", "dl_pair"]

_DL_DEVICE = {1: "cpu", 2: "cuda", 13: "cuda"}  # kDLCPU, kDLCUDA, kDLCUDAManaged


def dl_pair(dev, func: str, what: str) -> tuple:
    """``dev`` checked to be a DLPack ``(device_type, device_id)`` pair of ints."""
    ok = isinstance(dev, (tuple, list)) and len(dev) == 2
    ok = ok and all(isinstance(v, (int, np.integer)) and not isinstance(v, (bool, np.bool_)) for v in dev)
    if not ok:
        raise BufferError(
            f"{func}(): {what} must be a DLPack (device_type, device_id) pair of ints, got {dev!r}"
        )
    return (int(dev[0]), int(dev[1]))


def device_from_dl(dev: tuple, func: str) -> Device:
    kind = _DL_DEVICE.get(dev[0])
    if kind is None:
        names = {3: "CUDA host (pinned)", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 10: "ROCm", 14: "oneAPI"}
        raise BufferError(
            f"{func}(): memory on DLPack device type {dev[0]} ({names.get(dev[0], 'unknown')}) is not "
            "supported; tiarray takes CPU and CUDA memory"
        )
    return CPU if kind == "cpu" else Device("cuda", dev[1])


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


def _torch_pin(storage) -> None:
    """Make a CPU torch storage non-resizable (``Tensor.numpy()`` does this to a tensor's
    storage; an alias as bytes does it for every dtype, bfloat16 included)."""
    torch = sys.modules["torch"]
    torch.empty(0, dtype=torch.uint8).set_(storage).numpy()


def _import_torch(t, func: str, copy, want: Device | None = None) -> TiArray:
    if t.is_quantized:
        raise TypeError(
            f"{func}(): quantized torch tensors are not supported (dtype {t.dtype}); dequantize first"
        )
    if getattr(t, "is_nested", False):  # strided layout, but no sizes (torch raised its own internal error)
        raise TypeError(
            f"{func}(): nested torch tensors are not supported (their rows differ in length); convert each "
            "row, or pad them: torch.nested.to_padded_tensor(t, 0.0)"
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
    # the storage, not only the tensor, owns the memory: set_() or .data = ... give the
    # tensor another storage and would free this one under the view (a segfault before)
    storage = t.untyped_storage()
    if device is CPU and storage.resizable():
        # resize_() would reallocate the storage and free the view's memory: as for
        # tensor.numpy(), whose NumPy view pins it the same way, it now raises instead
        # (once per storage, ~4 us; CUDA storages are checked at use, MemoryKeeper.check)
        _torch_pin(storage)
    owner = MemoryKeeper(t, storage, storage.data_ptr())
    if device is not CPU:
        # The work torch queued on its current stream (the kernel that wrote the tensor, say)
        # comes before Taichi's kernels, which run on the legacy default stream: what a DLPack
        # producer does when asked for stream 1. An event, the host does not wait.
        s = sys.modules["torch"].cuda.current_stream(dev).cuda_stream
        if s:  # 0: the legacy default stream itself, already in order
            _cuda.stream_wait(_cuda.LEGACY_STREAM, s)
    return TiArray._new(t.data_ptr(), tuple(t.shape), tuple(t.stride()), dt, device, owner, False)


def _import_taichi_ndarray(nd, func: str) -> TiArray:
    """A view of a ``ti.ndarray``'s memory; a vector/matrix ndarray's element axes last
    (``ti.Vector.ndarray(3, ti.f32, (n,))`` is an ``(n, 3)`` TiArray, as its ``to_numpy()``).
    quadrants ndarrays never come here, under either backend: they are classified
    "quadrants" first (:func:`_import_quadrants`)."""
    try:
        ptr, shape, strides, npdt = _backend.ndarray_layout(nd)
    except RuntimeError as e:
        raise ValueError(
            f"{func}(): argument 'obj' is a {type(nd).__name__} of a Taichi runtime that no longer runs: {e}. "
            "Create it again after ti.init()"
        ) from None
    dt = _dtypes.to_dtype(npdt, func=func)
    return TiArray._new(ptr, shape, strides, dt, _runtime.current_device(), nd, False)


def _refuse_struct_field(f, func: str, what: str) -> None:
    """A Struct field (Taichi's or quadrants'): members of different dtypes, not one array."""
    if not hasattr(f, "vars"):
        raise TypeError(
            f"{func}(): argument 'obj' is a {what}, whose members may differ in dtype and shape; "
            "pass its members (obj.<name>), each a scalar, vector or matrix field"
        )


def _import_taichi_field(f, func: str, copy) -> TiArray:
    """A view of a field's memory (zero-copy) where it is one dense strided array."""
    _refuse_struct_field(f, func, type(f).__name__)
    try:
        lay = _backend.field_layout(f)
    except RuntimeError as e:
        # a reset runtime, a destroyed SNode tree, a field Taichi cannot lay out yet (not placed,
        # its FieldsBuilder not finalized): the reason says which
        raise ValueError(f"{func}(): argument 'obj', a {type(f).__name__}, cannot be read: {e}") from None
    except TypeError as e:  # an element type without a NumPy dtype (quantized): no view, no copy
        raise TypeError(f"{func}(): argument 'obj', a {type(f).__name__}, cannot be read: {e}") from None
    if isinstance(lay, str):
        if copy is True:
            return _import_numpy(_backend.field_to_numpy(f), func)
        raise ValueError(
            f"{func}(): the {type(f).__name__} (shape {tuple(f.shape)}) cannot be shared without a copy: {lay}. "
            "Only fields in dense SNodes (ti.field(..., shape=...), ti.root.dense(...).place(...)) are one "
            f"strided array; pass copy=True for a copy"
        )
    ptr, shape, bstrides, npdt = lay
    dt = _dtypes.to_dtype(npdt, func=func)
    item = dt.itemsize
    strides = tuple(s // item for s in bstrides)
    return TiArray._new(ptr, shape, strides, dt, _runtime.current_device(), f, False)


def _import_quadrants(x, func: str, copy, want: Device | None) -> TiArray:
    """A view of a quadrants ndarray's or field's memory (its pointer read directly)."""
    qd = _backend.qd_memory
    kind = qd.kind(x)
    what = type(x).__name__
    if kind == "field":
        _refuse_struct_field(x, func, f"quadrants {what}")
    try:
        if kind == "ndarray":
            lay = qd.ndarray_layout(x)
        else:
            lay = qd.field_layout(x)
    except RuntimeError as e:
        if kind == "field":  # the reason says which: a reset runtime, a destroyed tree, not laid out yet
            raise ValueError(
                f"{func}(): argument 'obj' is a quadrants {what} that cannot be read: {e}"
            ) from None
        raise ValueError(
            f"{func}(): argument 'obj' is a quadrants {what} of a runtime that no longer runs: {e}. "
            "Create it again after qd.init()"
        ) from None
    except TypeError as e:  # a field element type without a NumPy dtype (quantized)
        raise TypeError(f"{func}(): argument 'obj' is a quadrants {what} that cannot be read: {e}") from None
    device = Device("cuda", 0) if qd.arch_is_gpu() else CPU
    if device.kind == "cuda" and want != CPU and _runtime.current_device().kind != "cuda":
        raise ValueError(
            f"{func}(): argument 'obj' is a quadrants {what} on the GPU (quadrants runs on CUDA) but tiarray's "
            "Taichi runs on the CPU, so tiarray cannot compute on it. Start tiarray on the GPU with "
            "tiarray.init('cuda') before any other tiarray call, start quadrants on the CPU "
            "(qd.init(arch=qd.cpu)), or pass device='cpu' for a copy"
        )
    if isinstance(lay, str):
        if copy is True:
            return _import_numpy(qd.field_to_numpy(x), func)
        raise ValueError(
            f"{func}(): the quadrants {what} cannot be shared without a copy: {lay}. Only fields in dense SNodes "
            "are one strided array; pass copy=True for a copy"
        )
    ptr, shape, strides, npdt = lay
    dt = _dtypes.to_dtype(npdt, func=func)
    if kind == "field":
        strides = tuple(s // dt.itemsize for s in strides)
    return TiArray._new(ptr, shape, strides, dt, device, x, False)


def _import_dlpack(x, func: str, copy, device: Device | None) -> TiArray:
    """Import through ``__dlpack__``, asking for the versioned protocol first."""
    producer = type(x).__name__
    dev_fn = getattr(x, "__dlpack_device__", None)
    src_dev = None
    if dev_fn is not None:
        try:
            dev = dev_fn()
        except Exception as e:
            raise BufferError(
                f"{func}(): the producer ({producer}) failed in __dlpack_device__(): {type(e).__name__}: {e}"
            ) from e
        src_dev = device_from_dl(dl_pair(dev, func, f"the result of {producer}.__dlpack_device__()"), func)
        _check_device_usable(src_dev, device, func)
    kwargs = {}
    if src_dev is not None and src_dev.kind == "cuda":
        # Taichi works on the legacy default stream: the producer makes its data ready there.
        kwargs["stream"] = 1
    try:
        try:
            cap = x.__dlpack__(max_version=_dlpack.DLPACK_VERSION, **kwargs)
        except TypeError:
            # a producer of the legacy protocol (no max_version keyword)
            cap = x.__dlpack__(**kwargs)
    except BufferError as e:
        raise BufferError(f"{func}(): the producer ({producer}) refused to export: {e}") from e
    except Exception as e:
        raise BufferError(
            f"{func}(): the producer ({producer}) failed in __dlpack__(): {type(e).__name__}: {e}"
        ) from e
    if type(cap).__name__ != "PyCapsule":
        raise BufferError(
            f"{func}(): {producer}.__dlpack__() must return a DLPack capsule, got {type(cap).__name__}"
        )
    t = _from_capsule(cap, func, device)
    if src_dev is not None and t._device != src_dev:
        raise BufferError(
            f"{func}(): {producer}.__dlpack_device__() says {src_dev}, but its capsule describes memory on "
            f"{t._device}"
        )
    return t


def _import_cuda_array_interface(obj, func: str, want: Device | None) -> TiArray:
    """A view of CUDA memory described by ``__cuda_array_interface__`` (version 2 or 3), for
    producers without ``__dlpack__`` (numba's device arrays, PyCUDA). The producer's stream
    (version 3) is ordered before Taichi's legacy default stream, as DLPack's would be."""
    producer = type(obj).__name__
    try:
        cai = obj.__cuda_array_interface__
    except Exception as e:
        raise BufferError(
            f"{func}(): the producer ({producer}) failed in __cuda_array_interface__: {type(e).__name__}: {e}"
        ) from e

    def bad(what):
        return BufferError(f"{func}(): {producer}.__cuda_array_interface__ is malformed: {what}, got {cai!r}")

    if not isinstance(cai, dict):
        raise bad("expected a dict")
    try:
        shape = tuple(cai["shape"])
        typestr = cai["typestr"]
        ptr, readonly = cai["data"]
    except (KeyError, TypeError, ValueError):
        raise bad("'shape', 'typestr' and 'data' (pointer, read-only) are required") from None
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise bad("'shape' must hold non-negative ints")
    if not isinstance(ptr, int) or isinstance(ptr, bool) or ptr < 0 or (ptr == 0 and 0 not in shape):
        raise bad("'data' must hold a non-null pointer (an int) for a non-empty array")
    if cai.get("mask") is not None:
        raise TypeError(
            f"{func}(): {producer} is a masked array (its interface has a 'mask'); tiarray has no masks"
        )
    try:
        npd = np.dtype(typestr)
    except TypeError:
        raise bad("'typestr' is not a NumPy type string") from None
    dt = _dtypes.to_dtype(npd, func=func)
    item = npd.itemsize
    bstrides = cai.get("strides")
    if bstrides is None:  # C-contiguous
        strides = c_strides(shape)
    else:
        bstrides = tuple(bstrides)
        if len(bstrides) != len(shape) or not all(
            isinstance(b, int) and not isinstance(b, bool) for b in bstrides
        ):
            raise bad("'strides' must be None or one int per dimension")
        if any(b % item for b in bstrides):
            raise ValueError(
                f"{func}(): {producer}'s strides {bstrides} (bytes) are not whole numbers of its {item}-byte "
                "elements; tiarray cannot describe that memory"
            )
        strides = tuple(b // item for b in bstrides)
    stream = cai.get("stream")
    if stream is not None and (stream == 0 or not isinstance(stream, int) or isinstance(stream, bool)):
        raise bad("'stream' must be None or a non-zero int (0 is disallowed by the interface)")
    device = Device("cuda", 0)  # the interface names no device: the GPU Taichi runs on
    _check_device_usable(device, want, func)
    if stream is not None and stream != _cuda.LEGACY_STREAM:
        _cuda.stream_wait(_cuda.LEGACY_STREAM, stream)
    return TiArray._new(ptr, shape, strides, dt, device, obj, bool(readonly))


def _check_device_usable(src: Device, want: Device | None, func: str) -> None:
    """CUDA memory needs a CUDA runtime, unless the caller asked for a copy to the CPU."""
    if src.kind == "cuda" and want != CPU and _runtime.current_device().kind != "cuda":
        raise ValueError(
            f"{func}(): the input lives on {src} but Taichi runs on the CPU, so tiarray cannot compute on it. "
            "Start tiarray on the GPU with tiarray.init('cuda') before any other tiarray call, or pass "
            "device='cpu' to copy it to host memory"
        )


def _from_capsule(cap, func: str, want: Device | None = None) -> TiArray:
    t = _dlpack.import_capsule(cap, func=func)
    device = device_from_dl(t.device, func)
    # refused here, at import, not by the first operation that touches the memory
    _check_device_usable(device, want, func)
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
    if fw == "taichi_field":
        return _import_taichi_field(obj, func, copy)
    if fw == "quadrants":
        return _import_quadrants(obj, func, copy, want)
    if hasattr(obj, "__dlpack__"):
        return _import_dlpack(obj, func, copy, want)
    if hasattr(obj, "__cuda_array_interface__"):
        return _import_cuda_array_interface(obj, func, want)
    if type(obj).__name__ == "PyCapsule":
        return _from_capsule(obj, func, want)
    if hasattr(obj, "__array_interface__") or hasattr(obj, "__array__"):
        return None
    try:
        mv = memoryview(obj)
    except TypeError:
        return None
    return _import_numpy(np.asarray(mv), func)
