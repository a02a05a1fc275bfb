"""tiarray's native XLA FFI handler on the CPU (``_ffi_cpu.cpp``): build it, check it, feed it.

Inside ``jax.jit`` every Operator call is an XLA custom call. The Python handler
(:func:`_xla_ffi.make_handler`) costs 5-10 us per call on a 2-CPU machine; most of a small
spiking-network step. The native handler repeats launches that Python has prepared, without
Python: see the C++ file for what it does. This module

- compiles the C++ file with the machine's C++ compiler (``$CXX``, else ``c++``/``g++``/
  ``clang++``) the first time JAX runs an Operator on the CPU, into a cache directory
  (``tiarray._cbuild``: one per source, compiler, Python and backend version). pip installs
  nothing for it: without a compiler every call takes the Python handler, as before;
- checks the build once per cache entry in a subprocess (Taichi's launch through the
  pointers tiarray reads, the launch lock, a jitted Operator end to end), so that a
  mismatch with an unusual Taichi or Python build fails in that process, never in the
  user's: the verdict is kept beside the library;
- describes each record to the native table (:func:`register`): per CPU variant a launch
  context of its own and where that context keeps each argument, found by setting marker
  values through Taichi's Python API and reading them back (see :func:`_slots`).

``TIARRAY_NATIVE=0`` turns it off; :func:`status` says whether it runs and why not.
Everything that changes the native table runs under tiarray's launch lock, which the native
handler takes too (the same ``RLock`` object, locked natively through CPython's C API).
(No ``from __future__ import annotations``: the check defines a Taichi kernel.)
"""

import ctypes
import os
import sys
import threading

from tiarray import _internal as _core

from .._variant_rule import THRESHOLDS
from . import _xla_ffi

__all__ = ["status", "load", "register", "clear", "stats", "set_enabled"]

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_ffi_cpu.cpp")
MAX_PARAMS = 64  # kMaxParams
MAX_RECORDS = 1 << 16  # kMaxRecords
_PROBE_TIMEOUT = 120.0  # the check takes a few seconds; JAX's first CPU lowering waits for it
_FLAGS = ("-O3", "-std=c++17", "-shared", "-fPIC", "-pthread")

_lock = threading.Lock()
_lib = None
_handler_addr = 0
_reason = "not tried yet (it is built when JAX first runs an Operator on the CPU)"
_tried = False
_cpp = None  # backend: C++ object behind a Taichi Python object
_keep: dict = {}  # rid -> the launch contexts the native table holds


def status() -> str:
    """``"native"`` when the native handler runs, else why it does not."""
    return "native" if _lib is not None else _reason


_off_by_env = _core.cbuild.off_by_env
_compiler = _core.cbuild.compiler
_cache_root = _core.cbuild.cache_root


def _tag(compiler: str) -> str:
    return _core.cbuild.tag(SOURCE, compiler, _FLAGS, _core.ti.__version__)


def _check(so: str) -> str:
    """'ok', or why the library must not be used: :func:`_probe` in a subprocess."""
    # the CPU handler is checked on the CPU, also where JAX would default to a GPU
    env = dict(os.environ, TIARRAY_NATIVE="0", TIARRAY_ARCH="cpu", JAX_PLATFORMS="cpu")
    code = (
        "import sys; from tiarray.operators._adapters import _native; sys.exit(_native._probe(sys.argv[1]))"
    )
    return _core.cbuild.check(code, so, timeout=_PROBE_TIMEOUT, env=env)


def _prepared(compiler: str, directory: str) -> tuple:
    """``(library, verdict)``: built and checked once per directory (``tiarray._cbuild``)."""

    def make(so):
        _core.cbuild.build(compiler, SOURCE, so, _FLAGS)
        return _check(so)

    return _core.cbuild.prepared(directory, "ffi_cpu.so", make)


def _sym(lib, name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = argtypes
    return f


def _open(so: str):
    lib = ctypes.CDLL(so)
    P, I, I64, D, U8P, U64P = (
        ctypes.c_void_p, ctypes.c_int, ctypes.c_int64, ctypes.c_double,
        ctypes.POINTER(ctypes.c_uint8), ctypes.POINTER(ctypes.c_uint64),
    )  # fmt: skip
    _sym(lib, "tiarray_ffi_init", I, P, P, P, P, P, P, I, I, I64)
    _sym(lib, "tiarray_ffi_enable", None, I)
    _sym(lib, "tiarray_ffi_set_record", I, I64, I, I, I, U8P, U8P, I, I, D, D, I, I, I, ctypes.c_char, I, I64)
    U64 = ctypes.c_uint64
    _sym(lib, "tiarray_ffi_set_variant", None, I64, I, P, P, P, U64P, U64P, P, U64, U64, U64)
    _sym(lib, "tiarray_ffi_ready", None, I64)
    _sym(lib, "tiarray_ffi_clear", None)
    _sym(lib, "tiarray_ffi_stats", None, ctypes.POINTER(ctypes.c_int64))
    _sym(lib, "tiarray_ffi_probe_launch", None, P, P, P)
    _sym(lib, "tiarray_ffi_probe_lock", None)
    _sym(lib, "tiarray_ffi_probe_unlock", None)
    return lib


def _lock_spec(rlock):
    """``(lock, acquire, release)``: the C lock inside tiarray's launch lock (a C ``_thread.RLock``:
    ``{PyObject_HEAD; PyThread_type_lock rlock_lock; ...}`` up to Python 3.13) and CPython's
    functions that take and release it without the GIL."""
    if type(rlock).__module__ != "_thread":
        raise RuntimeError(
            f"tiarray's launch lock is a {type(rlock).__module__}.{type(rlock).__name__}, not _thread's"
        )
    if sys.version_info >= (3, 14):  # RLock holds a _PyRecursiveMutex there: not checked yet
        raise RuntimeError(f"not checked on Python {sys.version_info[0]}.{sys.version_info[1]}")
    api = ctypes.pythonapi
    lock = ctypes.c_void_p.from_address(id(rlock) + object.__basicsize__).value
    acquire = ctypes.cast(api.PyThread_acquire_lock, ctypes.c_void_p).value
    release = ctypes.cast(api.PyThread_release_lock, ctypes.c_void_p).value
    if not (lock and acquire and release):
        raise RuntimeError("tiarray's launch lock has no C lock where CPython keeps it")
    return lock, acquire, release


def _check_lock(lib, rlock) -> None:
    """The native lock must be the launch lock: held natively, Python cannot take it."""
    if rlock._is_owned():  # taking its C lock natively now would wait for ourselves
        raise RuntimeError("loaded while this thread holds tiarray's launch lock")
    lib.tiarray_ffi_probe_lock()
    try:
        got = rlock.acquire(blocking=False)
        if got:
            rlock.release()
            raise RuntimeError("the native lock is not tiarray's launch lock")
    finally:
        lib.tiarray_ffi_probe_unlock()
    if not rlock.acquire(blocking=False):
        raise RuntimeError("tiarray's launch lock stayed taken after the native release")
    rlock.release()


def _init(lib, fallback_addr: int) -> None:
    nl = _core.native_launch()
    if nl is None:
        raise RuntimeError(f"the {_core.ti.__name__} backend exports no native launch")
    global _cpp
    launch, _cpp = nl
    rlock = _core.launch_lock
    lock, acquire, release = _lock_spec(rlock)
    major, minor = _xla_ffi.api_version()
    lib.tiarray_ffi_init(
        launch, fallback_addr, lock, acquire, release, ctypes.addressof(THRESHOLDS),
        major, minor, _xla_ffi.error_create_offset(),
    )  # fmt: skip
    _check_lock(lib, rlock)


def load(fallback) -> int:
    """The native handler's address, with ``fallback`` (a ctypes XLA FFI handler, kept alive
    by the caller) for the calls it hands to Python; 0 where it cannot run (:func:`status`)."""
    global _lib, _handler_addr, _reason, _tried
    with _lock:
        if _tried:
            return _handler_addr
        _tried = True
        try:
            if _off_by_env():
                raise RuntimeError("turned off (TIARRAY_NATIVE=0)")
            if _core.native_launch() is None:
                raise RuntimeError(f"the {_core.ti.__name__} backend exports no native launch")
            if not sys.platform.startswith("linux") or ctypes.sizeof(ctypes.c_void_p) != 8:
                raise RuntimeError(f"built for 64-bit Linux only, this is {sys.platform}")
            compiler = _compiler()
            if compiler is None:
                cxx = os.environ.get("CXX")
                raise RuntimeError(
                    f"no C++ compiler (CXX={cxx!r} is not found)" if cxx else
                    "no C++ compiler (set CXX, or install g++ or clang++)"
                )  # fmt: skip
            so, verdict = _prepared(compiler, os.path.join(_cache_root(), "native-" + _tag(compiler)))
            if verdict != "ok":
                raise RuntimeError(verdict)
            lib = _open(so)
            _init(lib, ctypes.cast(fallback, ctypes.c_void_p).value)
            lib.tiarray_ffi_enable(1)
            _core.on_finalize(clear)  # before Taichi frees the program the table points into
            _lib = lib
            _handler_addr = ctypes.cast(lib.tiarray_ffi_handler, ctypes.c_void_p).value
            _reason = "native"
        except Exception as e:  # unavailable: the Python handler takes every call
            _reason = f"{type(e).__name__}: {e}"
            _lib = None
            _handler_addr = 0
        return _handler_addr


def set_enabled(on: bool) -> None:
    """Let the native handler launch (True) or hand every call to Python (False)."""
    if _lib is not None:
        _lib.tiarray_ffi_enable(1 if on else 0)


def stats() -> tuple:
    """``(launches, misses, errors, serial, direct)`` of the native handler since the process
    started: its launches, calls it handed to Python after a reset, launches that failed,
    launches of serial variants, launches that called the compiled tasks directly."""
    if _lib is None:
        return (0, 0, 0, 0, 0)
    out = (ctypes.c_int64 * 5)()
    _lib.tiarray_ffi_stats(out)
    return tuple(out)


def clear() -> None:
    """Forget every record's kernels and contexts (the program is going away)."""
    if _lib is None:
        return
    with _core.launch_lock:
        _lib.tiarray_ffi_clear()
        _keep.clear()


# ----------------------------------------------------------------------------- records


def _kind(dtype) -> bytes:
    k = dtype.kind
    return b"f" if k not in ("b", "i", "u", "f", "c") else k.encode()


def _slots(ctx, spec, rec, serial) -> list:
    """Where launch context ``ctx`` keeps each argument and result of ``rec``: the address of
    an array's data pointer (the backend's ``array_slot``), of a scalar's bytes (in the
    argument buffer, found by setting two marker values through Taichi's own setter).
    RuntimeError where anything is not as expected (then Python launches the record)."""
    import numpy as np

    where = _core.arg_buffer(ctx)
    if where is None:
        raise RuntimeError("the launch context's layout is not Taichi 1.7's")
    buf, size = where
    n_in = len(rec.ins)
    values = [None] * (n_in + len(rec.outs) + len(rec.scratch[serial]))
    P_FLOAT, P_INT = _core.P_FLOAT, _core.P_INT
    arrays = [(i, spec.setters[i][1], k[1], k[2]) for i, k in enumerate(rec.ins) if k[0]]
    arrays += [
        (n_in + j, spec.setters[n_in + j][1], nb, shape)
        for j, (nb, shape) in enumerate(list(rec.outs) + list(rec.scratch[serial]))
    ]
    for pos, idx, nb, shape in arrays:
        values[pos] = _core.array_slot(ctx, idx, nb, shape)
        if not values[pos]:
            raise RuntimeError("an array argument has no data pointer where Taichi 1.7 keeps it")
    for i, k in enumerate(rec.ins):
        if k[0]:
            continue
        kind, idx = spec.setters[i]
        setter = (
            ctx.set_arg_float if kind == P_FLOAT else ctx.set_arg_int if kind == P_INT else ctx.set_arg_uint
        )
        dt = rec.scalar_dtypes[i]
        offsets = []
        marks = (0x3B, 0x5D) if dt.itemsize == 1 else (0x3E7B + i, 0x5EDB + i)
        for mark in marks:  # two markers: the same single place must change
            v = np.array(mark, dt)
            setter(idx, v.item())
            found = ctypes.string_at(buf, size)
            at = [
                o
                for o in range(0, size - v.itemsize + 1, v.itemsize)
                if found[o : o + v.itemsize] == v.tobytes()
            ]
            offsets.append(at)
        common = set(offsets[0]) & set(offsets[1])  # held the first marker, then the second
        if len(common) != 1:
            # not found (the kernel's parameter has another type than JAX's scalar) or ambiguous
            raise RuntimeError(f"scalar argument {i} ({dt}) is not stored as JAX passes it")
        values[i] = buf + common.pop()
    return values


def register(rid: int, rec) -> bool:
    """Describe record ``rid`` (a forward CPU call) to the native table; False where the
    native handler cannot take it (then every call goes to Python)."""
    if _lib is None or rid >= MAX_RECORDS:
        return False
    n_in = len(rec.ins)
    n_out = len(rec.outs)
    n_scratch = len(rec.scratch[False])
    if len(rec.scratch[True]) != n_scratch or n_in + n_out + n_scratch > MAX_PARAMS:
        return False
    rule = None
    if rec.decide is not None:
        rule = getattr(rec.decide, "native_rule", None)
        if rule is None:  # a decision only Python can make
            return False
    arg_array = (ctypes.c_uint8 * max(n_in, 1))(*[k[0] for k in rec.ins])
    arg_size = (ctypes.c_uint8 * max(n_in, 1))(*[0 if k[0] else k[3] for k in rec.ins])
    by_value = 0
    if rule is not None:
        pre, work, index, slot, by = rule
        by_value = 1 if by == "value" else 0
        if index >= 0:
            sd = rec.res.in_sds[index]
            kind, itemsize, count_n = _kind(sd.dtype), sd.dtype.itemsize, sd.size
            if by_value and (kind not in (b"i", b"u") or count_n != 1):
                return False  # a count that is not one integer: Python decides
        else:
            kind, itemsize, count_n = b"f", 0, 0
    else:
        pre = work = 0.0
        index = slot = -1
        kind, itemsize, count_n = b"f", 0, 0
    variants = (False, True) if rule is not None else (rec.serial,)
    prepared = []
    try:
        for serial in variants:
            spec = rec.specs[serial] if rec.specs is not None else rec.spec
            ctx = spec.t_kernel.make_launch_context()
            slots = _slots(ctx, spec, rec, serial)
            zero = [nb if z else 0 for (nb, _), z in zip(rec.outs, rec.zero)]
            zero += [nb for nb, _ in rec.scratch[serial]]
            direct = (*_core.task_launch(ctx), *_core.arg_buffer(ctx))
            prepared.append((serial, spec, ctx, slots, zero, direct))
    except Exception:  # not as expected (see _slots): Python launches this record
        return False
    prog = _cpp(_core.program())
    with _core.launch_lock:
        if _lib.tiarray_ffi_set_record(
            rid, n_in, n_out + n_scratch, n_out, arg_array, arg_size, 1 if rule is not None else 0,
            1 if rec.serial else 0, pre, work, index, by_value, slot, kind, itemsize, count_n,
        ) != 0:  # fmt: skip
            return False
        for serial, spec, ctx, slots, zero, (impl, rc, buf, size) in prepared:
            sarr = (ctypes.c_uint64 * len(slots))(*slots)
            zarr = (ctypes.c_uint64 * max(len(zero), 1))(*zero)
            _lib.tiarray_ffi_set_variant(
                rid, 1 if serial else 0, prog, _cpp(spec.compiled), _cpp(ctx), sarr, zarr, impl, rc, buf, size
            )
        _keep[rid] = [p[1:3] for p in prepared]  # alive while the table holds them
        _lib.tiarray_ffi_ready(rid)
    return True


# ----------------------------------------------------------------------------- the check


def _probe(so: str) -> int:
    """The check of a build, in its own process: 0 when the native handler launches right."""
    import numpy as np

    from .._operator import Operator, ShapeDtype

    ti = _core.ti
    lib = _open(so)

    @ti.kernel
    def _axpy(
        a: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)
    ):
        for i in x:
            out[i] = a * x[i] + y[i]

    op = Operator("native_probe", kernel=_axpy, outs=lambda a, x, y: ShapeDtype(x.shape, x.dtype))
    x = np.arange(37, dtype=np.float32)
    y = np.ones(37, np.float32)
    np.testing.assert_array_equal(op(2.0, x, y), 2 * x + 1)  # compiled through the usual path

    @ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)
    def no_fallback(frame):  # pragma: no cover - the launch probe makes no FFI call
        return None

    _init(lib, ctypes.cast(no_fallback, ctypes.c_void_p).value)
    spec = next(iter(op._plans.values())).spec
    ctx = spec.t_kernel.make_launch_context()
    out = np.zeros(37, np.float32)
    for (_kind, idx), v in zip(spec.setters, (3.0, x, y, out)):
        if isinstance(v, float):
            ctx.set_arg_float(idx, v)
        else:
            ctx.set_arg_external_array_with_shape(idx, v.ctypes.data, v.nbytes, v.shape, 0)
    with _core.launch_lock:
        lib.tiarray_ffi_probe_launch(_cpp(_core.program()), _cpp(spec.compiled), _cpp(ctx))
    np.testing.assert_array_equal(out, 3 * x + 1)
    print("native launch: ok", flush=True)
    import importlib.util

    if importlib.util.find_spec("jax") is None:
        return 0
    # end to end: this process's handler is the native one
    global _lib, _handler_addr, _reason, _tried
    os.environ["TIARRAY_NATIVE"] = "1"
    _tried = False
    real_prepared = globals()["_prepared"]
    globals()["_prepared"] = lambda compiler, directory: (so, "ok")
    try:
        import jax
        import jax.numpy as jnp

        f = jax.jit(lambda x, y: jax.lax.fori_loop(0, 50, lambda i, c: op(0.5, c, y), x))
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        want = x.copy()
        for _ in range(50):
            want = 0.5 * want + 1
        for _ in range(3):
            np.testing.assert_allclose(np.asarray(f(xj, yj)), want, rtol=1e-6)
    finally:
        globals()["_prepared"] = real_prepared
    if status() != "native" or stats()[0] < 1:
        print(f"jax: the native handler did not launch: {status()}, stats {stats()}", flush=True)
        return 3
    print(f"jax: ok ({stats()[4]} of {stats()[0]} launches called the tasks directly)", flush=True)
    return 0
