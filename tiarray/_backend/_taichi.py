"""The taichi backend (``taichi==1.7.4``): the only module of tiarray that touches Taichi.

Every function of the boundary's contract (see :mod:`tiarray._backend`) is implemented
here on Taichi 1.7's Python internals (``taichi.lang.kernel_impl``, ``taichi.lang.impl``,
``taichi._lib.core``) and its C++ launch API. No ``from __future__ import annotations``:
nothing here is a kernel, but the module is imported before any kernel module and keeps
the same rules.
"""

import ast
import ctypes
import os
import sys

import numpy as np

# Taichi reads these when it is imported: no banner, no network version check. A user's
# own setting wins (and the banner setting only matters if taichi is not imported yet).
if "taichi" not in sys.modules:
    os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import taichi as ti  # noqa: E402
from taichi._lib import core as _core  # noqa: E402
from taichi.lang import impl as _impl  # noqa: E402
from taichi.lang import kernel_impl as _kernel_impl  # noqa: E402
from taichi.lang._ndarray import Ndarray  # noqa: E402
from taichi.lang.field import Field  # noqa: E402
from taichi.lang.field import ScalarField as _ScalarField  # noqa: E402
from taichi.lang.matrix import MatrixField as _MatrixField  # noqa: E402
from taichi.lang.matrix import MatrixType as _MatrixType  # noqa: E402
from taichi.lang.util import cook_dtype as _cook_dtype  # noqa: E402
from taichi.lang.util import to_numpy_type as _to_numpy_type  # noqa: E402
from taichi.types import ndarray_type as _ndarray_type  # noqa: E402
from taichi.types import primitive_types as _primitive_types  # noqa: E402
from taichi.types.annotations import template as _template  # noqa: E402
from taichi.types.utils import is_signed as _is_signed  # noqa: E402

from . import _fields  # noqa: E402

__all__ = [
    "NAME", "VERSION", "ti", "Ndarray",
    "ARRAY", "FLOAT", "INT", "UINT", "TEMPLATE",
    "program", "start", "arch_name", "debug_checks", "cpu_max_num_threads", "sync", "materialize", "compiling_for_gpu",
    "kernel_of", "kernel_function", "kernel_parameters", "param_info", "type_name", "tensor_type", "is_func",
    "new_kernel", "array_feature", "SCALAR_FEATURE", "compile", "program_config", "config_with", "check_compile_options", "arg_index",
    "ndarray_ptr", "ndarray_layout", "alloc_bytes",
    "Field", "field_layout", "field_to_numpy", "set_kernel_arg_hook",
    "element_type", "call_external",
    "native_launch", "on_finalize", "arg_buffer", "array_slot", "task_launch", "direct_tasks",
]  # fmt: skip

NAME = "taichi"
VERSION = tuple(ti.__version__)

# parameter kinds (param_info)
ARRAY, FLOAT, INT, UINT, TEMPLATE = range(5)

_ARCHS = {"cpu": ti.cpu, "x64": ti.x64, "arm64": ti.arm64, "cuda": ti.cuda, "gpu": ti.cuda}
_GPU_ARCHS = (ti.cuda, ti.vulkan, ti.metal, ti.amdgpu, ti.opengl, ti.gles)


# ----------------------------------------------------------------------------- program


def program():
    """The running program (``None`` before ``ti.init``); a new object after every
    ``ti.init``/``ti.reset``."""
    return _impl.pytaichi.prog


def start(arch: str, **kwargs) -> None:
    """``ti.init`` on ``arch`` ("cpu", "x64", "arm64", "cuda", "gpu") with ``kwargs``."""
    ti.init(arch=_ARCHS[arch], **kwargs)


def arch_name() -> str:
    """The running program's arch: 'x64', 'arm64', 'cuda', ..."""
    return _core.arch_name(_impl.current_cfg().arch)


debug_checks = _fields.debug_checker(_impl)


def cpu_max_num_threads() -> int:
    return int(getattr(_impl.current_cfg(), "cpu_max_num_threads", 0) or 0)


def sync() -> None:
    ti.sync()


def materialize() -> None:
    """Make the program ready to compile kernels on this thread (Taichi builds its root
    SNode tree lazily, on the thread that compiles first)."""
    rt = _impl.get_runtime()
    if not rt.materialized:
        rt.materialize()


def compiling_for_gpu() -> bool:
    """At compile time (inside ``ti.static``): whether the kernel is compiled for a GPU."""
    return _impl.current_cfg().arch in _GPU_ARCHS


# ----------------------------------------------------------------------------- kernel objects


def kernel_of(obj):
    """The Kernel object of a ``@ti.kernel`` function (TypeError for anything else)."""
    prim = getattr(obj, "_primal", None)
    if isinstance(prim, _kernel_impl.Kernel):
        return prim
    if isinstance(obj, _kernel_impl.Kernel):
        return obj
    raise TypeError(f"expected a function decorated with @ti.kernel, got {obj!r}")


def kernel_function(kernel):
    """The Python function a Kernel object compiles."""
    return kernel.func


def kernel_parameters(kernel) -> list:
    """``[(name, annotation), ...]`` of a Kernel object's parameters, in order."""
    return [(a.name, a.annotation) for a in kernel.arguments]


def param_info(anno) -> tuple:
    """``(kind, dtype, ndim, elem_shape, needs_grad, boundary)`` of a parameter annotation.

    ``kind``: ARRAY (``ti.types.ndarray``: ``dtype`` its element's primitive type or None,
    ``ndim`` or None, ``elem_shape`` of vector/matrix elements, ``needs_grad`` (None:
    unspecified) and ``boundary``), FLOAT, INT, UINT (scalars), TEMPLATE, or None for an
    annotation tiarray does not launch (the other fields are then None/()).
    """
    if isinstance(anno, _template):
        return (TEMPLATE, None, None, (), None, None)
    if isinstance(anno, _ndarray_type.NdarrayType):
        dt = anno.dtype
        if isinstance(dt, _MatrixType):
            return (ARRAY, dt.dtype, anno.ndim, tuple(dt.get_shape()), anno.needs_grad, anno.boundary)
        return (ARRAY, dt, anno.ndim, (), anno.needs_grad, anno.boundary)
    if id(anno) in _primitive_types.real_type_ids:
        return (FLOAT, None, None, (), None, None)
    if id(anno) in _primitive_types.integer_type_ids:
        return (INT if _is_signed(_cook_dtype(anno)) else UINT, None, None, (), None, None)
    return (None, None, None, (), None, None)


def type_name(t) -> str:
    """The short name of a primitive type: 'f32', 'i64', 'u8', ..."""
    return _cook_dtype(t).to_string()


def tensor_type(elem_shape, prim):
    """The element type of an ndarray of vectors/matrices of ``prim`` with ``elem_shape``."""
    return _core.get_type_factory_instance().get_tensor_type(list(elem_shape), prim)


def is_func(obj) -> bool:
    """Whether ``obj`` is a ``@ti.func`` (or ``@ti.real_func``)."""
    return bool(getattr(obj, "_is_taichi_function", False))


# ----------------------------------------------------------------------------- specialisation


class _Kernel(_kernel_impl.Kernel):
    """A Kernel object owned by tiarray, optionally with its AST rewritten before compiling."""

    def __init__(self, func, autodiff_mode, rewrite):
        self._tiarray_rewrite = rewrite
        super().__init__(func, autodiff_mode, _classkernel=False)

    def materialize(self, key=None, args=None, arg_features=None):
        rewrite = self._tiarray_rewrite
        if rewrite is None:
            return super().materialize(key=key, args=args, arg_features=arg_features)
        orig = _kernel_impl._get_tree_and_ctx
        me = self
        ndims = {
            a.name: f[1]
            for a, f in zip(self.arguments, arg_features or ())
            if isinstance(a.annotation, _ndarray_type.NdarrayType)
        }

        def patched(obj, *a, **k):
            tree, ctx = orig(obj, *a, **k)
            if obj is me:
                ctx.global_vars.update(rewrite(tree.body[0], ndims))
                ast.fix_missing_locations(tree)
            return tree, ctx

        _kernel_impl._get_tree_and_ctx = patched
        try:
            return super().materialize(key=key, args=args, arg_features=arg_features)
        finally:
            _kernel_impl._get_tree_and_ctx = orig


def new_kernel(func, *, grad: bool = False, rewrite=None):
    """A new Kernel object for ``func`` (reverse-mode autodiff variant if ``grad``).

    ``rewrite(function_def, array_ndims) -> dict`` (optional) edits the kernel's
    ``ast.FunctionDef`` in place before Taichi transforms it (``array_ndims``: ndarray
    parameter name -> ndim of this specialisation) and returns names to add to its globals.
    """
    mode = _kernel_impl.AutodiffMode.REVERSE if grad else _kernel_impl.AutodiffMode.NONE
    return _Kernel(func, mode, rewrite)


def array_feature(elem_type, ndim: int, needs_grad: bool, boundary):
    """The specialisation feature of an ndarray parameter (element type without the
    vector/matrix axes in ``ndim``)."""
    return (elem_type, ndim, needs_grad, boundary)


SCALAR_FEATURE = "#"


def compile(kernel, key, args: tuple, features: tuple, config) -> tuple:
    """Specialise ``kernel`` (``args``: template values, None elsewhere; ``features`` one
    per parameter) under ``key`` and compile it with ``config``.

    Returns ``(launchable, compiled, run)``: ``launchable.make_launch_context()`` gives a
    launch context, ``run(compiled, ctx)`` launches (``run`` is the program's bound
    ``launch_kernel``).
    """
    kernel.materialize(key=key, args=args, arg_features=features)
    launchable = kernel.compiled_kernels[key]
    prog = _impl.pytaichi.prog
    compiled = prog.compile_kernel(config, prog.get_device_caps(), launchable)
    return launchable, compiled, prog.launch_kernel


def arg_index(slot: int):
    """The launch context's index of the ``slot``-th non-template parameter (a tuple)."""
    return (slot,)


def program_config():
    """The running program's CompileConfig."""
    return _impl.pytaichi.prog.config()


config_with = _fields.config_copier(_core.CompileConfig)
check_compile_options = _fields.options_checker(_core.CompileConfig)


# ----------------------------------------------------------------------------- memory


def ndarray_ptr(nd) -> int:
    """The data pointer of a ``ti.ndarray`` (not ``nd.arr.device_allocation_ptr()``, which
    points at the allocation record)."""
    return _impl.pytaichi.prog.get_ndarray_data_ptr_as_int(nd.arr)


_RESET = (
    "the ndarray belongs to a Taichi runtime that was reset or re-initialised (ti.reset() or ti.init() "
    "since it was created); its memory has been freed"
)


# A reset frees an ndarray's memory but not the Python object, and the next program hands
# out the same allocation ids again: asking it for the pointer of a stale ndarray gave the
# memory of a new one (an unrelated ndarray's values, silently). So every ndarray is tagged
# with the program it was created under (Ndarray.__init__ runs first in every subclass's
# __init__, before create_ndarray); an untagged one, made before tiarray was imported, is
# current only while the program of that time runs (as fields, _fields.FieldReader).
_PROG_AT_START = _impl.pytaichi.prog
_ndarray_init = Ndarray.__init__


def _tagged_ndarray_init(self, *args, **kwargs):
    _ndarray_init(self, *args, **kwargs)
    self._tiarray_prog = _impl.pytaichi.prog


Ndarray.__init__ = _tagged_ndarray_init


def ndarray_layout(nd) -> tuple:
    """``(address, shape, element_strides, numpy_dtype)`` of a ``ti.ndarray`` (the element
    axes of a vector/matrix ndarray last: Taichi stores them AOS, row-major). RuntimeError
    for an ndarray of a runtime reset or re-initialised since (its program is gone or not
    the one it was created under)."""
    prog = _impl.pytaichi.prog
    if prog is None or getattr(nd, "_tiarray_prog", _PROG_AT_START) is not prog:
        raise RuntimeError(_RESET)
    try:
        ptr = prog.get_ndarray_data_ptr_as_int(nd.arr)
    except RuntimeError:
        raise RuntimeError(_RESET) from None
    shape = tuple(nd.shape) + tuple(nd.element_shape)
    return ptr, shape, _fields.c_strides(shape), np.dtype(_to_numpy_type(nd.dtype))


def alloc_bytes(nbytes: int) -> tuple:
    """``(owner, pointer)`` of ``nbytes`` (a multiple of 8) of device memory, zero-filled,
    from the backend's allocator (a ``ti.ndarray`` of bytes)."""
    nd = ti.ndarray(ti.u8, nbytes)
    return nd, ndarray_ptr(nd)


# ----------------------------------------------------------------------------- fields

# The SNode-tree reading is the same for taichi and quadrants (tiarray/_backend/_fields.py).
_FIELDS = _fields.FieldReader(ti, _impl, "pytaichi", _ScalarField, _MatrixField, _to_numpy_type, "Taichi")
field_layout = _FIELDS.layout
field_to_numpy = _FIELDS.to_numpy


# ----------------------------------------------------------------------------- plain kernels

# Taichi's own ``kernel(*args)`` accepts NumPy arrays and torch tensors as ``ndarray()``
# arguments only. A layer above registers a converter for its own array type here; the
# kernel class's ``__call__`` hands it the arguments of every call that contains one.
_fields.KernelCallHook(
    _kernel_impl.Kernel,
    lambda k: (k.func, [(a.name, isinstance(a.annotation, _ndarray_type.NdarrayType)) for a in k.arguments]),
)


set_kernel_arg_hook = _fields.set_hook


# ----------------------------------------------------------------------------- compile time

element_type = _fields.element_type
call_external = _fields.external_caller(_impl, _core, "taichi.lang.expr")


# ----------------------------------------------------------------------------- native launches

# Taichi's exported C++ launch, ``Program::launch_kernel(const CompiledKernelData&,
# LaunchContextBuilder&)`` (Itanium mangling; a non-virtual member function is called as a
# function of (this, &compiled, &ctx)).
_LAUNCH_SYMBOL = (
    "_ZN6taichi4lang7Program13launch_kernelERKNS0_18CompiledKernelDataERNS0_20LaunchContextBuilderE"
)
# pybind11 keeps a (simple) instance's C++ pointer right after the Python object header
_CPP_OFFSET = object.__basicsize__


def _cpp_object(obj) -> int:
    return ctypes.c_void_p.from_address(id(obj) + _CPP_OFFSET).value or 0


def native_launch():
    """``(address, cpp)`` for launches from native code: the address of Taichi's exported
    ``Program::launch_kernel``, and ``cpp(obj)`` the C++ object behind the program, a compiled
    kernel or a launch context (Taichi's Python objects); None where the symbol is missing."""
    try:
        lib = ctypes.CDLL(_core.__file__)  # the loaded extension: dlopen returns its handle
        addr = ctypes.cast(getattr(lib, _LAUNCH_SYMBOL), ctypes.c_void_p).value
    except (OSError, AttributeError):
        return None
    return (addr, _cpp_object) if addr else None


# Taichi 1.7's LaunchContextBuilder (taichi/program/launch_context_builder.h): kernel_,
# owned_ctx_, ctx_, arg_buffer_, result_buffer_, ret_type_, arg_buffer_size, args_type,
# result_buffer_size, then four unordered_maps keyed by std::vector<int> (libstdc++: 56 bytes
# each; a node is {next, key (begin, end, capacity), value}); array_ptrs is the third.
# launch_kernel copies array_ptrs[{arg..., 1}] (an array's data pointer) into the argument
# buffer at every launch on the CPU; scalars are written into the argument buffer by set_arg_*.
_OWNED_CTX, _CTX, _ARG_BUFFER, _ARG_BUFFER_SIZE, _ARRAY_PTRS = 8, 16, 24, 48, 184
_DATA_PTR_POS = 1
_MARK = [0x7E57_0000_0000]  # marker pointers: set, found, never launched with


def _native_off() -> bool:
    return os.environ.get("TIARRAY_NATIVE", "").strip().lower() in ("0", "false", "no", "off")


def _tasks_off() -> bool:
    """``TIARRAY_NATIVE=launch``: every launch through Taichi's own (to compare)."""
    return os.environ.get("TIARRAY_NATIVE", "").strip().lower() == "launch"


def _rd(addr: int) -> int:
    return ctypes.c_uint64.from_address(addr).value


def arg_buffer(ctx):
    """``(address, size)`` of launch context ``ctx``'s argument buffer (where ``set_arg_*``
    writes scalars), or None where the context is not laid out as Taichi 1.7's (or
    ``TIARRAY_NATIVE=0``): then nothing may be read or written through it."""
    if VERSION[:2] != (1, 7) or _native_off():
        return None
    c = _cpp_object(ctx)
    if not c:
        return None
    owned, cctx, buf, size = (
        _rd(c + _OWNED_CTX),
        _rd(c + _CTX),
        _rd(c + _ARG_BUFFER),
        _rd(c + _ARG_BUFFER_SIZE),
    )
    if not (owned and owned == cctx and buf and _rd(cctx) == buf and 0 < size < (1 << 20)):
        return None
    return buf, size


def array_slot(ctx, index, nbytes: int, shape) -> int:
    """Set array argument ``index`` of launch context ``ctx`` to ``nbytes`` bytes of shape
    ``shape`` at a marker address, and return the address where the context keeps its data
    pointer (its node in ``array_ptrs``): writing another pointer there (8 bytes) is what
    ``set_arg_external_array_with_shape`` does for an array of the same size and shape, at a
    small part of its cost (0.03 against 0.84 us, ``bench_operators.py --parts``). 0 where
    it cannot be found (another layout, the marker not found or found twice,
    ``TIARRAY_NATIVE=0``): then use the setter.
    The marker stays in the context until a pointer is written: launch it with none."""
    if arg_buffer(ctx) is None:
        return 0
    _MARK[0] += 64
    mark = _MARK[0]
    ctx.set_arg_external_array_with_shape(index, mark, nbytes, shape, 0)
    key = (*index, _DATA_PTR_POS) if isinstance(index, (tuple, list)) else (index, _DATA_PTR_POS)
    c = _cpp_object(ctx)
    node = _rd(c + _ARRAY_PTRS + 16)  # _M_before_begin._M_nxt
    found, seen = [], 0
    while node and seen < 4096:
        seen += 1
        b, e = _rd(node + 8), _rd(node + 16)
        if 0 < e - b <= 64 and (e - b) % 4 == 0:
            k = tuple(np.frombuffer(ctypes.string_at(b, e - b), np.int32).tolist())
            if k == key:
                if _rd(node + 32) != mark:
                    return 0  # the key's value is not the pointer just set: not Taichi 1.7's layout
                found.append(node + 32)
        node = _rd(node)
    return found[0] if len(found) == 1 else 0


# Taichi 1.7's Program keeps ``std::unique_ptr<ProgramImpl> program_impl_`` after its
# CompileConfig (program.h); a ProgramImpl keeps ``CompileConfig *config`` at +8, which points
# at the Program's ``compile_config_`` (+40). The member's offset depends on the sizes of the
# members before it, so it is found: the first word of the Program that points at an object
# whose +8 is that config (696 in the taichi 1.7.4 wheel).
_PROGRAM_CONFIG, _IMPL_CONFIG, _PROGRAM_SCAN = 40, 8, 4096
_impl_of: dict = {}  # Program address -> ProgramImpl address (0: not found)


def _readable(perm: str = "r") -> list:
    """``[(low, high)]``: this process's mappings whose permissions include ``perm`` (``r``:
    readable, ``x``: executable)."""
    ranges = []
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) > 1 and perm in parts[1]:
                lo, hi = parts[0].split("-")
                ranges.append((int(lo, 16), int(hi, 16)))
    return ranges


_MAPS: dict = {}  # permission -> [(low, high)], read again when an address is not in it


def _mapped(a: int, n: int = 8, perm: str = "r", refresh: bool = True) -> bool:
    """Whether ``n`` bytes at ``a`` (8-aligned unless ``n`` is 1) lie in one mapping of this
    process with permission ``perm``; reading /proc/self/maps costs ~1 ms with torch and JAX
    loaded, so it is read again only for an address the last reading did not cover."""
    if not a or (n != 1 and a % 8):
        return False
    for fresh in (False, True) if refresh else (False,):
        if fresh or perm not in _MAPS:
            try:
                _MAPS[perm] = _readable(perm)
            except OSError:
                return False
        if any(lo <= a and a + n <= hi for lo, hi in _MAPS[perm]):
            return True
    return False


def _program_impl(prog: int) -> int:
    if prog in _impl_of:
        return _impl_of[prog]
    found = []
    _MAPS.clear()  # one fresh reading for the scan
    # the Program's words up to _PROGRAM_SCAN bytes, or to the end of its mapping (a heap
    # object can lie less than that before it)
    end = next((hi for lo, hi in _MAPS.get("r", ()) if lo <= prog < hi), 0) if _mapped(prog, 48) else 0
    if end:
        for off in range(_PROGRAM_CONFIG + 8, min(_PROGRAM_SCAN, end - prog - 7), 8):
            p = _rd(prog + off)
            if _mapped(p, 32, refresh=False) and _rd(p + _IMPL_CONFIG) == prog + _PROGRAM_CONFIG:
                found.append(p)
    _impl_of.clear()  # one program at a time
    if _impl_of.clear not in _FINALIZE_HOOKS:  # a later program may get this address
        on_finalize(_impl_of.clear)
        on_finalize(_MAPS.clear)  # the program's memory goes away
    # the first: the scan may run past the Program into other objects that also point at a
    # ProgramImpl-like object (seen at +3712 beside the real +696, 2026-12-05)
    _impl_of[prog] = found[0] if found else 0
    return _impl_of[prog]


def task_launch(ctx) -> tuple:
    """``(impl, runtime_context)`` for launches that call a kernel's compiled tasks directly
    (tiarray's native handler, see its C++ file): the address of the program's C++
    ProgramImpl (whose kernel launcher caches each compiled kernel's task functions) and of
    launch context ``ctx``'s RuntimeContext (what a task reads its arguments through).
    ``(0, 0)`` where either is not laid out as Taichi 1.7's, or with ``TIARRAY_NATIVE=0`` or
    ``TIARRAY_NATIVE=launch``: then only Taichi's launch may launch."""
    if _tasks_off() or arg_buffer(ctx) is None:
        return 0, 0
    impl = _program_impl(_cpp_object(program()))
    return (impl, _rd(_cpp_object(ctx) + _CTX)) if impl else (0, 0)


# Taichi 1.7's CPU kernel launcher (taichi/runtime/cpu/kernel_launcher.h): ProgramImpl +24
# -> cpu::KernelLauncher {vptr, executor, int launch_id_counter_ @16, std::vector<Context>
# contexts_ @24}; a Context (48 bytes) starts with std::vector<TaskFunc> task_funcs. A
# CompiledKernelData keeps std::optional<int> launch id at +8 (engaged flag at +12).
_LAUNCHER, _COUNTER, _CONTEXTS, _CONTEXT_SIZE, _LAUNCH_ID, _MAX_TASKS = 24, 16, 24, 48, 8, 16
# void task(RuntimeContext *), called holding the GIL as Taichi's pybind launch does: a
# Python thread that finalizes the program (ti.reset) cannot run while a kernel does
# (measured: a 70 ms kernel let another thread's loop run 80 000 times through Taichi's
# launch, 1 000 000 times through a CFUNCTYPE call, which releases it)
_TASK = ctypes.PYFUNCTYPE(None, ctypes.c_void_p)


def direct_tasks(ctx, compiled, pointers: dict):
    """How to launch context ``ctx`` of ``compiled`` again without Taichi's launch, after
    ``launch_kernel(compiled, ctx)`` ran with array data pointers ``pointers`` ({argument:
    pointer}): ``(tasks, rc, where)``, the kernel's compiled task functions (ctypes functions,
    called in order as ``t(rc)``), its RuntimeContext and, per argument of ``pointers``, the
    address in the argument buffer where the tasks read its data pointer (the one word holding
    it). None where anything is not as expected (another layout, a pointer held twice or not
    at all): then only Taichi's launch may launch it.

    Taichi's CPU launch (cpu::KernelLauncher::launch_llvm_kernel) sets the RuntimeContext's
    runtime, copies each array's data pointer from the context's map into the argument buffer
    and calls the tasks, nothing after (a parallel task dispatches to the thread pool and
    returns when done). That costs ~1.3 us of C++ bookkeeping per launch; calling the tasks
    through ctypes ~0.15 us. Every address is checked against this process's mappings before
    it is read, and each task must lie in executable memory."""
    impl, rc = task_launch(ctx)
    where = arg_buffer(ctx)
    if not (impl and rc and where) or not pointers:
        return None
    buf, size = where
    ok = _mapped
    launcher = _rd(impl + _LAUNCHER) if ok(impl + _LAUNCHER) else 0
    if not ok(launcher, _CONTEXTS + 16):
        return None
    counter = ctypes.c_int32.from_address(launcher + _COUNTER).value
    b, e = _rd(launcher + _CONTEXTS), _rd(launcher + _CONTEXTS + 8)
    if not (ok(b, max(e - b, 8)) and (e - b) % _CONTEXT_SIZE == 0 and (e - b) // _CONTEXT_SIZE == counter):
        return None
    c = _cpp_object(compiled)
    if not ok(c, 16) or ctypes.c_uint8.from_address(c + _LAUNCH_ID + 4).value != 1:
        return None
    lid = ctypes.c_int32.from_address(c + _LAUNCH_ID).value
    if not 0 <= lid < counter:
        return None
    tb, te = _rd(b + _CONTEXT_SIZE * lid), _rd(b + _CONTEXT_SIZE * lid + 8)
    n = (te - tb) // 8
    if not (ok(tb, max(te - tb, 8)) and (te - tb) % 8 == 0 and 0 < n <= _MAX_TASKS):
        return None
    funcs = [_rd(tb + 8 * k) for k in range(n)]
    if not all(_mapped(f, 1, "x") for f in funcs):
        return None
    if not (ok(rc, 32) and _rd(rc) == buf and _rd(rc + 8)):  # {arg_buffer, runtime, ...}
        return None
    words = np.frombuffer(ctypes.string_at(buf, size - size % 8), np.uint64)
    at = {}
    for k, p in pointers.items():
        hits = np.flatnonzero(words == np.uint64(p))
        if len(hits) != 1:
            return None
        at[k] = buf + 8 * int(hits[0])
    return tuple(_TASK(f) for f in funcs), rc, at


_FINALIZE_HOOKS: list = []


def on_finalize(fn) -> None:
    """Call ``fn()`` before the running program is finalized (``ti.reset()``, ``ti.init()``
    again, the end of the process): native code must let go of its C++ objects first."""
    if not _FINALIZE_HOOKS:
        clear = _impl.PyTaichi.clear

        def _clear(self):
            if self.prog is not None:
                for f in list(_FINALIZE_HOOKS):
                    f()
            return clear(self)

        _impl.PyTaichi.clear = _clear
    _FINALIZE_HOOKS.append(fn)
