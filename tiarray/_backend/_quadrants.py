"""The quadrants backend (``quadrants>=1.3.3``, Genesis' Taichi fork): the same boundary
functions as :mod:`._taichi`, implemented on quadrants' Python internals
(``quadrants.lang.kernel.Kernel``, ``materialize(key, py_args, arg_features)``,
``FuncBase.get_tree_and_ctx``, ``compile_kernel`` returning a ``CompileResult``) and the
C++ launch API it shares with taichi. Selected with ``TIARRAY_BACKEND=quadrants``; under
it, taichi is not imported. The language module is exported as ``ti`` so that tiarray's
kernels (``ti.kernel``, ``ti.types.ndarray``, ``ti.template()``) are written once.
"""

import ast
import os

# quadrants prints a banner when it is imported unless told not to (a user's setting wins)
os.environ.setdefault("ENABLE_QUADRANTS_HEADER_PRINT", "0")
# quadrants 1.3.3's import checks pip's version (to warn about a pip older than 20.3) by
# importing pip, unless QD_MANYLINUX2014_OK is set; on Python < 3.12 an imported pip makes
# setuptools' distutils shim give up (_distutils_hack.spec_for_pip), and torch.compile's
# inductor then fails on its first C++ build ("AssertionError: .../distutils/core.py"),
# with or without tiarray. A user's own setting wins.
os.environ.setdefault("QD_MANYLINUX2014_OK", "1")

import quadrants as ti  # noqa: E402
from quadrants._lib import core as _core  # noqa: E402
from quadrants.lang import impl as _impl  # noqa: E402
from quadrants.lang._ndarray import Ndarray  # noqa: E402
from quadrants.lang.field import Field  # noqa: E402
from quadrants.lang.field import ScalarField as _ScalarField  # noqa: E402
from quadrants.lang.kernel import Kernel as _QKernel  # noqa: E402
from quadrants.lang.matrix import MatrixField as _MatrixField  # noqa: E402
from quadrants.lang.matrix import MatrixType as _MatrixType  # noqa: E402
from quadrants.lang.util import cook_dtype as _cook_dtype  # noqa: E402
from quadrants.lang.util import to_numpy_type as _to_numpy_type  # noqa: E402
from quadrants.types import ndarray_type as _ndarray_type  # noqa: E402
from quadrants.types import primitive_types as _primitive_types  # noqa: E402
from quadrants.types.annotations import Template as _Template  # noqa: E402
from quadrants.types.enums import AutodiffMode as _AutodiffMode  # noqa: E402

from . import _fields, _qd_memory  # noqa: E402

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

NAME = "quadrants"
VERSION = (
    tuple(int(p) for p in ti.__version__.split(".")[:3])
    if isinstance(ti.__version__, str)
    else tuple(ti.__version__)
)

# parameter kinds (param_info)
ARRAY, FLOAT, INT, UINT, TEMPLATE = range(5)

_ARCHS = {"cpu": ti.cpu, "x64": ti.x64, "arm64": ti.arm64, "cuda": ti.cuda, "gpu": ti.cuda}
_GPU_ARCHS = tuple(getattr(ti, a) for a in ("cuda", "vulkan", "metal", "amdgpu") if hasattr(ti, a))


# ----------------------------------------------------------------------------- program


def program():
    """The running program (``None`` before ``ti.init``); a new object after every
    ``ti.init``/``ti.reset``."""
    return _impl.pyquadrants._prog


def start(arch: str, **kwargs) -> None:
    """``qd.init`` on ``arch`` ("cpu", "x64", "arm64", "cuda", "gpu") with ``kwargs``."""
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
    if isinstance(prim, _QKernel):
        return prim
    if isinstance(obj, _QKernel):
        return obj
    raise TypeError(
        f"expected a function decorated with @qd.kernel (the quadrants backend runs), got {obj!r}"
    )


def kernel_function(kernel):
    """The Python function a Kernel object compiles."""
    return kernel.func


def kernel_parameters(kernel) -> list:
    """``[(name, annotation), ...]`` of a Kernel object's parameters, in order."""
    return [(a.name, a.annotation) for a in kernel.arg_metas]


def param_info(anno) -> tuple:
    """``(kind, dtype, ndim, elem_shape, needs_grad, boundary)`` of a parameter annotation.

    ``kind``: ARRAY (``ti.types.ndarray``: ``dtype`` its element's primitive type or None,
    ``ndim`` or None, ``elem_shape`` of vector/matrix elements, ``needs_grad`` (None:
    unspecified) and ``boundary``), FLOAT, INT, UINT (scalars), TEMPLATE, or None for an
    annotation tiarray does not launch (the other fields are then None/()).
    """
    if anno is _Template or isinstance(anno, _Template):
        return (TEMPLATE, None, None, (), None, None)
    if isinstance(anno, _ndarray_type.NdarrayType):
        dt = anno.dtype
        if isinstance(dt, _MatrixType):
            return (ARRAY, dt.dtype, anno.ndim, tuple(dt.get_shape()), anno.needs_grad, anno.boundary)
        return (ARRAY, dt, anno.ndim, (), anno.needs_grad, anno.boundary)
    if id(anno) in _primitive_types.real_type_ids:
        return (FLOAT, None, None, (), None, None)
    if id(anno) in _primitive_types.integer_type_ids:
        return (INT if _core.is_signed(_cook_dtype(anno)) else UINT, None, None, (), None, None)
    return (None, None, None, (), None, None)


def type_name(t) -> str:
    """The short name of a primitive type: 'f32', 'i64', 'u8', ..."""
    return _cook_dtype(t).to_string()


def tensor_type(elem_shape, prim):
    """The element type of an ndarray of vectors/matrices of ``prim`` with ``elem_shape``."""
    return _core.get_type_factory_instance().get_tensor_type(list(elem_shape), prim)


def is_func(obj) -> bool:
    """Whether ``obj`` is a ``@ti.func`` (or ``@ti.real_func``)."""
    return bool(getattr(obj, "_is_quadrants_function", False))


# ----------------------------------------------------------------------------- specialisation


class _Kernel(_QKernel):
    """A Kernel object owned by tiarray, optionally with its AST rewritten before compiling
    (quadrants builds the tree in ``FuncBase.get_tree_and_ctx``: overridden here)."""

    def __init__(self, func, autodiff_mode, rewrite):
        self._tiarray_rewrite = rewrite
        self._tiarray_ndims = {}
        super().__init__(func, autodiff_mode, _is_classkernel=False)

    def materialize(self, key=None, py_args=(), arg_features=None):
        # Kernel.__call__ sets these before it materializes; tiarray materializes directly
        self.raise_on_templated_floats = _impl.current_cfg().raise_on_templated_floats
        if self._tiarray_rewrite is not None:
            self._tiarray_ndims = {
                a.name: f[1]
                for a, f in zip(self.arg_metas, arg_features or ())
                if isinstance(a.annotation, _ndarray_type.NdarrayType)
            }
        return super().materialize(key, py_args, arg_features)

    def get_tree_and_ctx(self, *args, **kwargs):
        tree, ctx = super().get_tree_and_ctx(*args, **kwargs)
        rewrite = self._tiarray_rewrite
        if rewrite is not None and kwargs.get("current_kernel") is self:
            ctx.global_vars.update(rewrite(tree.body[0], self._tiarray_ndims))
            ast.fix_missing_locations(tree)
        return tree, ctx


def new_kernel(func, *, grad: bool = False, rewrite=None):
    """A new Kernel object for ``func`` (reverse-mode autodiff variant if ``grad``).

    ``rewrite(function_def, array_ndims) -> dict`` (optional) edits the kernel's
    ``ast.FunctionDef`` in place before quadrants transforms it and returns names to add to
    its globals.
    """
    mode = _AutodiffMode.REVERSE if grad else _AutodiffMode.NONE
    return _Kernel(func, mode, rewrite)


def array_feature(elem_type, ndim: int, needs_grad: bool, boundary):
    """The specialisation feature of an ndarray parameter (element type without the
    vector/matrix axes in ``ndim``)."""
    return (elem_type, ndim, needs_grad, boundary, None)  # quadrants adds the layout tag


SCALAR_FEATURE = "#"


def compile(kernel, key, args: tuple, features: tuple, config) -> tuple:
    """Specialise ``kernel`` (``args``: template values, None elsewhere; ``features`` one
    per parameter) under ``key`` and compile it with ``config``.

    Returns ``(launchable, compiled, run)``: ``launchable.make_launch_context()`` gives a
    launch context, ``run(compiled, ctx)`` launches (``run`` is the program's bound
    ``launch_kernel``).
    """
    kernel.materialize(key, args, features)
    launchable = kernel.materialized_kernels[key]
    prog = _impl.pyquadrants._prog
    compiled = prog.compile_kernel(config, prog.get_device_caps(), launchable).compiled_kernel_data
    return launchable, compiled, prog.launch_kernel


def arg_index(slot: int):
    """The launch context's index of the ``slot``-th non-template parameter (an int)."""
    return slot


def program_config():
    """The running program's CompileConfig."""
    return _impl.pyquadrants._prog.config()


config_with = _fields.config_copier(_core.CompileConfig)
check_compile_options = _fields.options_checker(_core.CompileConfig)


# ----------------------------------------------------------------------------- memory


def ndarray_ptr(nd) -> int:
    """The data pointer of a ``ti.ndarray`` (not ``nd.arr.device_allocation_ptr()``, which
    points at the allocation record)."""
    return _impl.pyquadrants._prog.get_ndarray_data_ptr_as_int(nd.arr)


def ndarray_layout(nd) -> tuple:
    """As the taichi backend's: the reader of quadrants memory, which knows its vector,
    matrix and layout-tagged ndarrays and its reset runtimes (``nd.arr`` is None then)."""
    return _qd_memory.ndarray_layout(nd)


def alloc_bytes(nbytes: int) -> tuple:
    """``(owner, pointer)`` of ``nbytes`` (a multiple of 8) of device memory, zero-filled,
    from the backend's allocator (a ``ti.ndarray`` of bytes)."""
    nd = ti.ndarray(ti.u8, nbytes)
    return nd, ndarray_ptr(nd)


# ----------------------------------------------------------------------------- fields

# The SNode-tree reading is the same for taichi and quadrants (tiarray/_backend/_fields.py).
_FIELDS = _fields.FieldReader(
    ti, _impl, "pyquadrants", _ScalarField, _MatrixField, _to_numpy_type, "quadrants"
)
field_layout = _FIELDS.layout
field_to_numpy = _FIELDS.to_numpy


# ----------------------------------------------------------------------------- plain kernels

# Taichi's own ``kernel(*args)`` accepts NumPy arrays and torch tensors as ``ndarray()``
# arguments only. A layer above registers a converter for its own array type here; the
# kernel class's ``__call__`` hands it the arguments of every call that contains one.
_fields.KernelCallHook(
    _QKernel,
    lambda k: (k.func, [(a.name, isinstance(a.annotation, _ndarray_type.NdarrayType)) for a in k.arg_metas]),
)


set_kernel_arg_hook = _fields.set_hook


# ----------------------------------------------------------------------------- compile time

element_type = _fields.element_type
call_external = _fields.external_caller(_impl, _core, "quadrants.lang.expr")


# ----------------------------------------------------------------------------- native launches


def native_launch():
    """None: tiarray's native XLA FFI handler launches taichi's kernels only (quadrants
    exports another C++ API); calls under ``jax.jit`` take the Python handler."""
    return None


def on_finalize(fn) -> None:
    """Nothing to do: without native launches no native code holds quadrants' objects."""


def arg_buffer(ctx):
    """None: quadrants' launch context is not read natively."""
    return None


def direct_tasks(ctx, compiled, pointers):
    """None: quadrants' kernels are launched by quadrants only."""
    return None


def task_launch(ctx) -> tuple:
    """``(0, 0)``: quadrants' kernels are launched by quadrants only."""
    return 0, 0


def array_slot(ctx, index, nbytes, shape) -> int:
    """0: quadrants' launch context is not written natively (its setters set every array)."""
    return 0
