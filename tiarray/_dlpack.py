"""DLPack in pure ctypes: exporting TiArrays as capsules and importing capsules.

The ABI mirrored here is dlpack.h 1.x (``DLManagedTensorVersioned``) plus the legacy
``DLManagedTensor``. Rules this module keeps (see the DLPack and array API specs):

- A capsule is named ``"dltensor_versioned"`` (or ``"dltensor"``); whoever consumes it
  renames it ``"used_..."`` and becomes responsible for calling its deleter exactly once.
- The capsule destructor calls the deleter only if the capsule was never consumed.
- Everything a live export needs (the ctypes structs, the shape and stride arrays, and
  the exported array itself, which keeps the memory alive) is held in ``_LIVE`` until the
  deleter runs, so memory stays valid exactly as long as a consumer holds it.
- The deleter and the capsule destructor are native where a C++ compiler builds them
  (``_dlpack_release.cpp``, compiled at the first export and cached, ``tiarray._cbuild``):
  consumers call them while an exception propagates, and a ctypes callback then replaced
  that exception by a SystemError and never released the export. Without a compiler (or
  with ``TIARRAY_NATIVE=0``) they are ctypes callbacks, with that limitation. Both kinds
  live as long as the process and do nothing once the interpreter is finalising.
- ``jax.ffi.pycapsule`` rewrites ``ctypes.pythonapi.PyCapsule_New.argtypes`` globally,
  so this module binds its own prototypes of the capsule functions.
"""

from __future__ import annotations

import ctypes
import os
import sys
import threading

from . import _cbuild, _cuda, _dtypes

__all__ = ["export_capsule", "import_capsule", "DLPACK_VERSION"]

DLPACK_VERSION = (1, 1)
FLAG_READ_ONLY = 1 << 0
FLAG_IS_COPIED = 1 << 1

kDLCPU, kDLCUDA, kDLCUDAHost, kDLCUDAManaged = 1, 2, 3, 13


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)

DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _Deleter),
]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", _Deleter),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# Private prototypes of the capsule API (see the module docstring).
_api = ctypes.pythonapi
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _api)
)
_PyCapsule_GetPointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api)
)
_PyCapsule_SetName = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _api)
)
_PyCapsule_IsValid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
# Used inside the capsule destructor, where the capsule is a raw PyObject* being freed.
_PyCapsule_IsValid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _api)
)
_PyCapsule_GetPointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _api)
)
_PyErr_Clear = ctypes.PYFUNCTYPE(None)(("PyErr_Clear", _api))
_PyCapsule_GetName = ctypes.PYFUNCTYPE(ctypes.c_char_p, ctypes.py_object)(("PyCapsule_GetName", _api))

_MAX_NDIM = 64  # NumPy's limit; a larger ndim in a capsule is garbage

_NAME_V = b"dltensor_versioned"
_NAME_L = b"dltensor"
_USED_V = b"used_dltensor_versioned"
_USED_L = b"used_dltensor"

# address of a live exported managed tensor -> everything it needs
_LIVE: dict[int, tuple] = {}
_live_lock = threading.Lock()


# The callbacks below may run while the interpreter finalises (a consumer's array dies
# when its module is cleared): they reach nothing through module globals, which are
# None by then, only through default arguments bound now.


def _release(
    addr: int, _fin=sys.is_finalizing, _live=_LIVE, _lock=_live_lock, _ctx=_cuda.taichi_context, _gpu=kDLCUDA
) -> None:
    if _fin():
        return
    with _lock:
        entry = _live.pop(addr, None)
    # Dropped outside the lock: freeing the exported array can run other deleters
    # (an export of an import of an export...), which take the lock again. Consumers
    # call the deleter on any thread: CUDA memory is freed under Taichi's context.
    if entry is not None and entry[0].dl_tensor.device.device_type == _gpu:
        with _ctx():
            del entry
    else:
        del entry


def _deleter_py(addr, _release=_release):
    # Called by the consumer (or by our capsule destructor) with the managed tensor.
    if addr:
        _release(addr)


_deleter = _Deleter(_deleter_py)


_CapsuleDestructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Foreign deleters are called with the GIL held (NumPy's takes it again, others need not).
_PyDeleter = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def _capsule_destructor_py(
    capsule,
    _fin=sys.is_finalizing,
    _valid=_PyCapsule_IsValid_raw,
    _get=_PyCapsule_GetPointer_raw,
    _clear=_PyErr_Clear,
    _names=(_NAME_V, _NAME_L),
    _release=_release,
):
    if _fin():
        return
    # Only an unconsumed capsule still owns the tensor.
    for name in _names:
        if _valid(capsule, name):
            addr = _get(capsule, name)
            if addr:
                _release(addr)
            return
    _clear()


_capsule_destructor = _CapsuleDestructor(_capsule_destructor_py)
_DESTRUCTOR_PTR = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value

# Consumers may call these after this module's globals are cleared at shutdown: the
# ctypes thunks and the functions the native callbacks call must never be freed, so they
# get one reference nothing ever drops.
_IMMORTAL = (_deleter, _capsule_destructor, _release, _capsule_destructor_py)
for _f in _IMMORTAL:
    ctypes.pythonapi.Py_IncRef(ctypes.py_object(_f))
del _f


# ----------------------------------------------------------------------------- native callbacks

RELEASE_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_dlpack_release.cpp")
_RELEASE_FLAGS = ("-O2", "-std=c++17", "-shared", "-fPIC")
_release_lock = threading.Lock()
_callbacks = None  # (deleter, capsule destructor address), chosen at the first export
_release_reason = "not tried yet (built at the first export)"


def _api_names() -> tuple:
    """The C API functions the native callbacks call, in ``tiarray_dlpack_init``'s order."""
    fin = "Py_IsFinalizing" if hasattr(ctypes.pythonapi, "Py_IsFinalizing") else "_Py_IsFinalizing"
    return (
        fin, "PyGILState_Ensure", "PyGILState_Release", "PyErr_Fetch", "PyErr_Restore", "PyLong_FromVoidPtr",
        "PyObject_CallFunctionObjArgs", "Py_DecRef", "PyErr_WriteUnraisable",
    )  # fmt: skip


# Run in a fresh interpreter on a new build (no tiarray import): the library loads, takes the
# C API, and both callbacks call their Python function with the address, from a thread
# without the GIL (a CDLL call releases it), also when that function raises.
_RELEASE_CHECK = """
import ctypes, sys
lib = ctypes.CDLL(sys.argv[1])
names = sys.argv[2].split(",")
api = (ctypes.c_uint64 * len(names))(*[ctypes.cast(getattr(ctypes.pythonapi, n), ctypes.c_void_p).value for n in names])
seen = []
def release(a):
    seen.append(("deleter", a))
    if a == 3:
        raise ValueError("reported, not raised")
def capsule(a):
    seen.append(("capsule", a))
lib.tiarray_dlpack_init.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
assert lib.tiarray_dlpack_init(api, release, capsule) == 0
for f in (lib.tiarray_dlpack_deleter, lib.tiarray_dlpack_capsule_destructor):
    f.argtypes = [ctypes.c_void_p]
    f.restype = None
lib.tiarray_dlpack_deleter(4096)
lib.tiarray_dlpack_capsule_destructor(8192)
lib.tiarray_dlpack_deleter(3)
lib.tiarray_dlpack_deleter(None)
assert seen == [("deleter", 4096), ("capsule", 8192), ("deleter", 3)], seen
"""


def _check_release(so: str) -> str:
    return _cbuild.check(_RELEASE_CHECK, so, ",".join(_api_names()), timeout=60)


def _load_native():
    """The native ``(deleter, capsule destructor address)``; RuntimeError saying why not."""
    if _cbuild.off_by_env():
        raise RuntimeError("turned off (TIARRAY_NATIVE=0)")
    if not (sys.platform.startswith("linux") or sys.platform == "darwin"):
        raise RuntimeError(f"built on Linux and macOS only, this is {sys.platform}")
    cxx = _cbuild.compiler()
    if cxx is None:
        raise RuntimeError("no C++ compiler (set CXX, or install g++ or clang++)")
    directory = os.path.join(
        _cbuild.cache_root(), "dlpack-" + _cbuild.tag(RELEASE_SOURCE, cxx, _RELEASE_FLAGS)
    )

    def make(so):
        _cbuild.build(cxx, RELEASE_SOURCE, so, _RELEASE_FLAGS)
        return _check_release(so)

    so, verdict = _cbuild.prepared(directory, "dlpack_release.so", make)
    if verdict != "ok":
        raise RuntimeError(verdict)
    lib = ctypes.CDLL(so)
    names = _api_names()
    api = (ctypes.c_uint64 * len(names))(
        *[ctypes.cast(getattr(ctypes.pythonapi, n), ctypes.c_void_p).value for n in names]
    )
    lib.tiarray_dlpack_init.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.py_object]
    if lib.tiarray_dlpack_init(api, _release, _capsule_destructor_py) != 0:
        raise RuntimeError("the C API functions it needs were not found")
    deleter = _Deleter(ctypes.cast(lib.tiarray_dlpack_deleter, ctypes.c_void_p).value)
    destructor = ctypes.cast(lib.tiarray_dlpack_capsule_destructor, ctypes.c_void_p).value
    _IMMORTAL_LIBS.append(lib)
    return deleter, destructor


_IMMORTAL_LIBS: list = []  # the loaded library stays mapped: exports made through it may outlive us


def _export_callbacks():
    """The deleter and capsule destructor of new exports: native where they build, else ctypes."""
    global _callbacks, _release_reason
    cb = _callbacks
    if cb is not None:
        return cb
    with _release_lock:
        if _callbacks is None:
            try:
                _callbacks = _load_native()
                _release_reason = "native"
            except Exception as e:
                _callbacks = (_deleter, _DESTRUCTOR_PTR)
                _release_reason = f"{type(e).__name__}: {e}"
        return _callbacks


def release_status() -> str:
    """``"native"`` when exports use the native deleter, else why they use the ctypes one."""
    return _release_reason


def export_capsule(
    ptr: int,
    shape,
    strides,
    dtype: _dtypes.DType,
    device,
    owner,
    *,
    readonly: bool,
    versioned: bool,
    copied: bool = False,
):
    """A DLPack capsule describing memory at ``ptr`` (strides in elements), kept alive by ``owner``.

    ``device`` is a ``(device_type, device_id)`` pair.
    """
    ndim = len(shape)
    shape_arr = (ctypes.c_int64 * max(ndim, 1))(*shape)
    strides_arr = (ctypes.c_int64 * max(ndim, 1))(*strides)
    if versioned:
        m = DLManagedTensorVersioned()
        m.version.major, m.version.minor = DLPACK_VERSION
        m.flags = (FLAG_READ_ONLY if readonly else 0) | (FLAG_IS_COPIED if copied else 0)
        name = _NAME_V
    else:
        m = DLManagedTensor()
        name = _NAME_L
    t = m.dl_tensor
    t.data = ptr
    t.device.device_type, t.device.device_id = device
    t.ndim = ndim
    code, bits = dtype._dl
    t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
    t.shape = shape_arr
    # Strides are always given: consumers may reject a byte_offset or an empty tensor
    # without them, and they cost nothing.
    t.strides = strides_arr
    t.byte_offset = 0
    deleter, destructor = _export_callbacks()
    m.deleter = deleter
    addr = ctypes.addressof(m)
    with _live_lock:
        _LIVE[addr] = (m, shape_arr, strides_arr, owner)
    return _PyCapsule_New(addr, name, destructor)


def live_exports() -> int:
    """How many exported capsules or consumer-held exports are alive (for tests)."""
    return len(_LIVE)


class DLPackOwner:
    """Owns an imported DLPack managed tensor; calls its deleter when garbage collected."""

    __slots__ = ("_addr", "_deleter", "__weakref__")

    def __init__(self, addr: int, deleter):
        self._addr = addr
        self._deleter = deleter

    def __del__(self, _fin=sys.is_finalizing):
        if self._deleter is not None and not _fin():
            d, self._deleter = self._deleter, None
            d(self._addr)


class ImportedTensor:
    """What a capsule describes, read out once (strides in elements, None if C-contiguous)."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "device", "readonly", "owner", "dl_dtype")

    def __init__(self, ptr, shape, strides, dtype, device, readonly, owner, dl_dtype):
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.device = device
        self.readonly = readonly
        self.owner = owner
        self.dl_dtype = dl_dtype


def _c_strides(shape):
    strides = []
    acc = 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def import_capsule(capsule, *, func: str = "from_dlpack") -> ImportedTensor:
    """Consume a DLPack capsule (versioned or legacy) and describe its tensor."""
    if type(capsule).__name__ != "PyCapsule":
        raise TypeError(f"{func}(): expected a DLPack capsule, got {type(capsule).__name__}")
    if _PyCapsule_IsValid(capsule, _NAME_V):
        addr = _PyCapsule_GetPointer(capsule, _NAME_V)
        m = DLManagedTensorVersioned.from_address(addr)
        if m.version.major > DLPACK_VERSION[0]:
            raise BufferError(
                f"{func}(): the producer made a DLPack {m.version.major}.{m.version.minor} capsule; "
                f"tiarray understands DLPack {DLPACK_VERSION[0]}.x"
            )
        readonly = bool(m.flags & FLAG_READ_ONLY)
        used = _USED_V
        deleter = m.deleter
    elif _PyCapsule_IsValid(capsule, _NAME_L):
        addr = _PyCapsule_GetPointer(capsule, _NAME_L)
        m = DLManagedTensor.from_address(addr)
        readonly = False
        used = _USED_L
        deleter = m.deleter
    else:
        _PyErr_Clear()
        if _PyCapsule_IsValid(capsule, _USED_V) or _PyCapsule_IsValid(capsule, _USED_L):
            raise BufferError(
                f"{func}(): the DLPack capsule was already consumed (a capsule can be imported once); "
                "call __dlpack__() again for a new one"
            )
        _PyErr_Clear()
        name = _PyCapsule_GetName(capsule)
        _PyErr_Clear()
        raise TypeError(
            f"{func}(): expected a DLPack capsule (named 'dltensor_versioned' or 'dltensor'), got a "
            f"capsule named {name.decode(errors='replace') if name is not None else None!r}"
        )
    # Take ownership before anything can fail, so that the deleter always runs once.
    _PyCapsule_SetName(capsule, used)
    deleter_fn = _PyDeleter(ctypes.cast(deleter, ctypes.c_void_p).value) if deleter else None
    owner = DLPackOwner(addr, deleter_fn)
    t = m.dl_tensor
    ndim = t.ndim
    if not 0 <= ndim <= _MAX_NDIM:
        raise BufferError(f"{func}(): the DLPack capsule has ndim = {ndim}; expected 0 to {_MAX_NDIM}")
    if ndim and not t.shape:
        raise BufferError(f"{func}(): the DLPack capsule has ndim = {ndim} but no shape (a NULL pointer)")
    shape = tuple(t.shape[i] for i in range(ndim))
    if any(d < 0 for d in shape):
        raise BufferError(f"{func}(): the DLPack capsule has a negative shape {shape}")
    size = 1
    for d in shape:
        size *= d
    if size and not t.data:
        raise BufferError(
            f"{func}(): the DLPack capsule describes {size} element(s) of shape {shape} at address NULL"
        )
    code, bits, lanes = t.dtype.code, t.dtype.bits, t.dtype.lanes
    dtype = _dtypes.from_dlpack_dtype(code, bits, lanes)
    if dtype is None:
        raise TypeError(
            f"{func}(): DLPack dtype (code={code}, bits={bits}, lanes={lanes}) is not supported by "
            f"tiarray; supported: {', '.join(d.name for d in _dtypes.ALL_DTYPES)}"
        )
    if t.strides and ndim:
        strides = tuple(t.strides[i] for i in range(ndim))
    else:
        strides = _c_strides(shape)
    ptr = (t.data or 0) + t.byte_offset
    device = (t.device.device_type, t.device.device_id)
    return ImportedTensor(ptr, shape, strides, dtype, device, readonly, owner, (code, bits))
