"""A ctypes mirror of XLA's FFI C ABI (``xla/ffi/api/c_api.h`` in ``jax.ffi.include_dir()``).

Only what tiarray's handlers need: answering the metadata (API version) query, reading
buffer pointers and one integer attribute from a call frame, creating an error, and
asking for the CUDA stream.

Reading speed matters: a handler runs on every call of a jitted function. ctypes
``Structure`` access costs about a microsecond per field, so this module reads memory
through ctypes arrays laid over the whole address space (``_U64[addr >> 3]`` is one
C-level index operation, ~50 ns) and uses the fixed offsets of the ABI's structs below
(LP64: pointers, ``size_t`` and ``int64_t`` are 8 bytes; the enum ``stage`` is padded to 8).
The offsets are checked against ``ctypes.Structure`` mirrors at import.

Layouts (byte offsets)::

    XLA_FFI_CallFrame: 0 struct_size, 8 extension_start, 16 api, 24 ctx, 32 stage,
        40 args  {40 struct_size, 48 ext, 56 size, 64 types, 72 args},
        80 rets  {80 struct_size, 88 ext, 96 size, 104 types, 112 rets},
        120 attrs {120 struct_size, 128 ext, 136 size, 144 types, 152 names, 160 attrs},
        168 future
    XLA_FFI_Buffer: 0 struct_size, 8 ext, 16 dtype, 24 data, 32 rank, 40 dims
    XLA_FFI_Scalar (attribute): 0 dtype, 8 value (pointer)
"""

from __future__ import annotations

import ctypes
import os
import re
import threading

__all__ = ["api_version", "make_handler", "pycapsule", "HANDLER_TYPE"]

# ----------------------------------------------------------------------------- ABI structs
_p = ctypes.c_void_p
_sz = ctypes.c_size_t


class XLA_FFI_Extension_Base(ctypes.Structure):
    _fields_ = (("struct_size", _sz), ("type", ctypes.c_int), ("next", _p))


class XLA_FFI_Api_Version(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("major_version", ctypes.c_int),
        ("minor_version", ctypes.c_int),
    )


class XLA_FFI_Metadata(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("api_version", XLA_FFI_Api_Version),
        ("traits", ctypes.c_uint32),
        ("state_type_id", ctypes.c_int64),
    )


class XLA_FFI_Metadata_Extension(ctypes.Structure):
    _fields_ = (("extension_base", XLA_FFI_Extension_Base), ("metadata", _p))


class XLA_FFI_Args(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("size", ctypes.c_int64),
        ("types", _p),
        ("args", _p),
    )


class XLA_FFI_Rets(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("size", ctypes.c_int64),
        ("types", _p),
        ("rets", _p),
    )


class XLA_FFI_Attrs(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("size", ctypes.c_int64),
        ("types", _p),
        ("names", _p),
        ("attrs", _p),
    )


class XLA_FFI_CallFrame(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("api", _p),
        ("ctx", _p),
        ("stage", ctypes.c_int),
        ("args", XLA_FFI_Args),
        ("rets", XLA_FFI_Rets),
        ("attrs", XLA_FFI_Attrs),
        ("future", _p),
    )


class XLA_FFI_Buffer(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("dtype", ctypes.c_int),
        ("data", _p),
        ("rank", ctypes.c_int64),
        ("dims", _p),
    )


class XLA_FFI_Error_Create_Args(ctypes.Structure):
    _fields_ = (
        ("struct_size", _sz),
        ("extension_start", _p),
        ("message", ctypes.c_char_p),
        ("errc", ctypes.c_int),
    )


class XLA_FFI_Stream_Get_Args(ctypes.Structure):
    _fields_ = (("struct_size", _sz), ("extension_start", _p), ("ctx", _p), ("stream", _p))


# XLA_FFI_Api: struct_size, extension_start, api_version (24 bytes), internal_api, then
# function pointers in this order.
_API_FUNCS = (
    "XLA_FFI_Error_Create",
    "XLA_FFI_Error_GetMessage",
    "XLA_FFI_Error_Destroy",
    "XLA_FFI_Handler_Register",
    "XLA_FFI_Stream_Get",
)
_API_FUNC_OFFSET = 8 + 8 + ctypes.sizeof(XLA_FFI_Api_Version) + 8  # first function pointer

_XLA_FFI_Extension_Metadata = 1
_XLA_FFI_ExecutionStage_EXECUTE = 3
_XLA_FFI_Error_Code_INTERNAL = 13

# Word offsets (in 8-byte units) used by the fast reader
_W_EXT = 1
_W_API = 2
_W_CTX = 3
_O_STAGE = 32
_W_ARGS_SIZE, _W_ARGS_PTR = 7, 9
_W_RETS_SIZE, _W_RETS_PTR = 12, 14
_W_ATTRS_SIZE, _W_ATTRS_PTR = 17, 20
_W_BUF_DATA = 3


def _check_layout():
    o = XLA_FFI_CallFrame
    assert ctypes.sizeof(ctypes.c_void_p) == 8, "tiarray's XLA FFI handlers need a 64-bit platform"
    assert o.stage.offset == _O_STAGE
    assert o.args.offset + XLA_FFI_Args.size.offset == _W_ARGS_SIZE * 8
    assert o.args.offset + XLA_FFI_Args.args.offset == _W_ARGS_PTR * 8
    assert o.rets.offset + XLA_FFI_Rets.size.offset == _W_RETS_SIZE * 8
    assert o.rets.offset + XLA_FFI_Rets.rets.offset == _W_RETS_PTR * 8
    assert o.attrs.offset + XLA_FFI_Attrs.size.offset == _W_ATTRS_SIZE * 8
    assert o.attrs.offset + XLA_FFI_Attrs.attrs.offset == _W_ATTRS_PTR * 8
    assert XLA_FFI_Buffer.data.offset == _W_BUF_DATA * 8
    assert XLA_FFI_Metadata_Extension.metadata.offset == 24


_check_layout()

# ----------------------------------------------------------------------------- memory views
# ctypes arrays over the address space: indexing reads (or writes) one value in C.
_U64 = (ctypes.c_uint64 * (1 << 58)).from_address(0)
_I64 = (ctypes.c_int64 * (1 << 58)).from_address(0)
_I32 = (ctypes.c_int32 * (1 << 59)).from_address(0)
_U32 = (ctypes.c_uint32 * (1 << 59)).from_address(0)
_I16 = (ctypes.c_int16 * (1 << 60)).from_address(0)
_U16 = (ctypes.c_uint16 * (1 << 60)).from_address(0)
_I8 = (ctypes.c_int8 * (1 << 60)).from_address(0)
_U8 = (ctypes.c_uint8 * (1 << 60)).from_address(0)
_F32 = (ctypes.c_float * (1 << 59)).from_address(0)
_F64 = (ctypes.c_double * (1 << 58)).from_address(0)

# XLA_FFI_DataType code -> (ctypes view, shift, itemsize) for reading host scalars
SCALAR_VIEWS = {
    1: (_U8, 0, 1),  # PRED
    2: (_I8, 0, 1),
    3: (_I16, 1, 2),
    4: (_I32, 2, 4),
    5: (_I64, 3, 8),
    6: (_U8, 0, 1),
    7: (_U16, 1, 2),
    8: (_U32, 2, 4),
    9: (_U64, 3, 8),
    11: (_F32, 2, 4),
    12: (_F64, 3, 8),
}
# numpy dtype name -> XLA_FFI_DataType
XLA_DTYPE = {
    "bool": 1,
    "int8": 2,
    "int16": 3,
    "int32": 4,
    "int64": 5,
    "uint8": 6,
    "uint16": 7,
    "uint32": 8,
    "uint64": 9,
    "float16": 10,
    "float32": 11,
    "float64": 12,
    "bfloat16": 16,
    "complex64": 15,
    "complex128": 18,
}


# ----------------------------------------------------------------------------- API version


def api_version() -> tuple[int, int]:
    """``(XLA_FFI_API_MAJOR, XLA_FFI_API_MINOR)`` of the installed jaxlib's header."""
    try:
        import jax.ffi

        path = os.path.join(jax.ffi.include_dir(), "xla", "ffi", "api", "c_api.h")
        with open(path) as f:
            text = f.read()
        major = int(re.search(r"#define XLA_FFI_API_MAJOR (\d+)", text).group(1))
        minor = int(re.search(r"#define XLA_FFI_API_MINOR (\d+)", text).group(1))
        return major, minor
    except Exception:  # pragma: no cover - header missing from an unusual install
        return 0, 1


# ----------------------------------------------------------------------------- errors, stream


def _api_func(api: int, name: str, restype=ctypes.c_void_p):
    addr = _U64[(api + _API_FUNC_OFFSET + 8 * _API_FUNCS.index(name)) >> 3]
    return ctypes.CFUNCTYPE(restype, ctypes.c_void_p)(addr)


def create_error(api: int, message: str) -> int:
    """An ``XLA_FFI_Error*`` carrying ``message`` (XLA raises it in Python as a runtime error)."""
    args = XLA_FFI_Error_Create_Args(
        ctypes.sizeof(XLA_FFI_Error_Create_Args),
        None,
        message.encode("utf-8", "replace"),
        _XLA_FFI_Error_Code_INTERNAL,
    )
    return _api_func(api, "XLA_FFI_Error_Create")(ctypes.addressof(args))


def get_stream(api: int, ctx: int) -> int:
    """The CUDA stream XLA runs this call on (``XLA_FFI_Stream_Get``)."""
    args = XLA_FFI_Stream_Get_Args(ctypes.sizeof(XLA_FFI_Stream_Get_Args), None, ctx, None)
    err = _api_func(api, "XLA_FFI_Stream_Get")(ctypes.addressof(args))
    if err:
        raise RuntimeError("XLA_FFI_Stream_Get failed")
    return args.stream or 0


# ----------------------------------------------------------------------------- handlers

HANDLER_TYPE = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)

# A private prototype of PyCapsule_New: ``jax.ffi.pycapsule`` builds the same capsule
# (unnamed, no destructor) but sets ``ctypes.pythonapi.PyCapsule_New.argtypes`` for the
# whole process, which breaks other users of that shared function object.
_PyCapsule_New = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi)
)


def pycapsule(fn) -> object:
    """A PyCapsule holding the C function pointer of ``fn`` (what ``register_ffi_target`` takes):
    a ctypes callback, kept alive as long as XLA may call it, or the address of a C function."""
    addr = fn if isinstance(fn, int) else ctypes.cast(fn, ctypes.c_void_p).value
    return _PyCapsule_New(addr, None, None)


def error_create_offset() -> int:
    """The byte offset of ``XLA_FFI_Error_Create`` in ``XLA_FFI_Api`` (for the native handler)."""
    return _API_FUNC_OFFSET + 8 * _API_FUNCS.index("XLA_FFI_Error_Create")


# ctypes runs a callback on a thread without a Python thread state (XLA's worker threads)
# under PyGILState_Ensure/Release: a new thread state, its frame stack mmap'ed, is made
# and destroyed on every call. One extra PyGILState_Ensure per thread, never released,
# keeps the thread's state alive, so later calls only take the GIL (XLA's pool threads
# live as long as the process). `python benchmarks/bench_operators.py`, the row "scan(1000)
# of event_csrmv(transpose=True), n=4000, 0 active rows" (load 1.4): 15.0 us per step
# before, 6.9 after; the handler with a no-op body went from 10.3 to 1.6 us.
_PyGILState_Ensure = ctypes.PYFUNCTYPE(ctypes.c_int)(("PyGILState_Ensure", ctypes.pythonapi))
_pinned_threads: set = set()


def _pin_thread_state(ident: int) -> None:
    """Keep the calling thread's Python thread state for the life of the process."""
    _PyGILState_Ensure()  # nested in the callback's own Ensure: the GIL is held already
    _pinned_threads.add(ident)


def make_handler(run, describe_error):
    """A C-callable XLA FFI handler around ``run(frame, api, ctx, arg_bufs, ret_bufs, attr_id)``.

    The handler answers XLA's metadata query (API version, no traits), ignores every
    stage but EXECUTE, reads the buffer pointers and the first attribute (a scalar
    int64, the record id), calls ``run``, and turns a Python exception into an XLA FFI
    error with the message ``describe_error(attr_id, exc)``.
    """
    major, minor = api_version()
    U64, I32 = _U64, _I32
    pinned, pin, get_ident = _pinned_threads, _pin_thread_state, threading.get_ident

    def handler(frame):
        ident = get_ident()
        if ident not in pinned:
            pin(ident)
        w = frame >> 3
        ext = U64[w + _W_EXT]
        if ext:
            # extension chain: answer the metadata query (XLA asks once, at registration)
            e = ext
            while e:
                if I32[(e + 8) >> 2] == _XLA_FFI_Extension_Metadata:
                    md = U64[(e >> 3) + 3]
                    I32[(md + 24) >> 2] = major
                    I32[(md + 28) >> 2] = minor
                    I32[(md + 32) >> 2] = 0  # traits
                    return None
                e = U64[(e >> 3) + 2]
        if I32[(frame + _O_STAGE) >> 2] != _XLA_FFI_ExecutionStage_EXECUTE:
            return None
        rid = -1
        try:
            fr = U64[w + _W_ARGS_SIZE : w + _W_ATTRS_PTR + 1]
            # fr indices: 0 args.size, 2 args.args, 5 rets.size, 7 rets.rets, 10 attrs.size, 13 attrs.attrs
            a = fr[2] >> 3
            r = fr[7] >> 3
            rid = U64[U64[(U64[fr[13] >> 3] >> 3) + 1] >> 3]
            run(rid, U64[w + _W_API], U64[w + _W_CTX], U64[a : a + fr[0]], U64[r : r + fr[5]])
        except BaseException as exc:  # never let an exception cross into C
            try:
                return create_error(U64[w + _W_API], describe_error(rid, exc))
            except BaseException:  # pragma: no cover - last resort
                return None
        return None

    return HANDLER_TYPE(handler)
