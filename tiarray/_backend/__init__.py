"""The Taichi boundary: the only package of tiarray that imports the Taichi implementation.

Everything else in ``tiarray`` and ``tiarray.operators`` writes kernels in the language
``ti`` exported here (``from tiarray._backend import ti``; ``@ti.kernel``, ``ti.func``,
``ti.types.ndarray(...)``, ``ti.template()``) and reaches the implementation's internals
only through the functions below. A backend is one module implementing all of them
(``_taichi.py`` for ``taichi==1.7.4``); the selector below picks one with the environment
variable ``TIARRAY_BACKEND`` (default: ``taichi`` where it is installed, else ``quadrants``,
so that Python 3.14, where taichi has no wheel, works with quadrants alone). Adding a backend is a new module with
the same ``__all__`` and one line in ``_BACKENDS``.

The contract (each backend module provides exactly these names)
---------------------------------------------------------------
Language and constants
    ``ti``                the language module (``taichi``); ``NAME`` ("taichi"), ``VERSION``
                          (a tuple of ints); ``Ndarray`` the backend's ndarray class.
    ``ARRAY, FLOAT, INT, UINT, TEMPLATE``  parameter kinds (small ints) of ``param_info``.
Program (the running runtime)
    ``program()``         the running program object, ``None`` before init. Its identity
                          changes on every init/reset: the cache registry compares it. Must
                          cost no more than an attribute read (it is on every launch path).
    ``start(arch, **kw)`` start the runtime on "cpu"/"x64"/"arm64"/"cuda"/"gpu".
    ``arch_name()``       'x64', 'arm64', 'cuda', ... of the running program.
    ``debug_checks()``    whether the running program checks every array access (debug mode).
    ``cpu_max_num_threads()``  the running program's CPU thread limit (0 if none).
    ``sync()``            wait for every launched kernel.
    ``materialize()``     make the program ready to compile on this thread (XLA compiles
                          on its own threads).
    ``compiling_for_gpu()``  at compile time: whether the kernel targets a GPU.
Kernel objects (at ``Launcher`` construction)
    ``kernel_of(obj)``    the kernel object of a ``@ti.kernel`` function; TypeError
                          "expected a function decorated with @ti.kernel, got ..." else.
    ``kernel_function(k)``, ``kernel_parameters(k)`` its Python function, its
                          ``[(name, annotation)]``.
    ``param_info(anno)``  ``(kind, dtype, ndim, elem_shape, needs_grad, boundary)``; kind
                          None for an annotation tiarray does not launch.
    ``type_name(t)``      'f32', 'i64', ... of a primitive type.
    ``tensor_type(elem_shape, prim)``  the element type of an ndarray of vectors/matrices.
    ``is_func(obj)``      whether ``obj`` is a ``@ti.func``/``@ti.real_func``.
Specialisation and compilation (once per signature, under the runtime lock)
    ``new_kernel(func, grad=False, rewrite=None)``  a kernel object owned by tiarray;
                          ``rewrite(function_def, array_ndims) -> globals`` edits the AST of
                          every specialisation before it is compiled (the serial variant).
    ``array_feature(elem_type, ndim, needs_grad, boundary)``, ``SCALAR_FEATURE``  the
                          per-parameter features of a specialisation (templates: the value).
    ``compile(kernel, key, args, features, config)`` -> ``(launchable, compiled, run)``.
    ``arg_index(slot)``   the launch context's index of the slot-th non-template
                          parameter (``(slot,)`` for taichi, ``slot`` for quadrants).
    ``program_config()``, ``config_with(cfg, overrides)``  the program's CompileConfig and
                          a copy with some fields changed (never change the program's own);
                          ``check_compile_options(options, who)`` TypeError unless ``options``
                          are CompileConfig fields and values they take.
Launching (the hot path: these are the implementation's own bound methods, no wrapper)
    ``launchable.make_launch_context()`` -> ctx with ``set_arg_external_array_with_shape(
    index, ptr, nbytes, shape, grad_ptr)``, ``set_arg_float/int/uint(index, value)``;
    ``run(compiled, ctx)`` launches.
Memory
    ``ndarray_layout(nd)`` ``(address, shape, element_strides, numpy_dtype)`` of a backend
                          ndarray, scalar, vector or matrix (element axes last); RuntimeError
                          for one of a runtime reset or re-initialised since (as fields).
    ``ndarray_ptr(nd)``   the data pointer of a backend ndarray tiarray allocated itself;
                          ``alloc_bytes(n)`` -> ``(owner, pointer)`` of ``n`` zero-filled
                          bytes of device memory.
Fields
    ``Field``             the backend's field class (``ti.field``, ``Vector.field``, ...).
    ``field_layout(f)``   ``(address, shape, byte_strides, numpy_dtype)`` of a field whose
                          memory is one strided array (element axes last), else a string
                          naming its layout; RuntimeError for a field of a runtime reset
                          or re-initialised since (its memory is freed).
    ``field_to_numpy(f)`` a NumPy copy of any field (same RuntimeError).
Plain kernels (a user's own ``kernel(*args)`` call through the backend's launch path)
    ``set_kernel_arg_hook(types, convert)``  every call of a ``@ti.kernel`` whose
                          arguments include an instance of ``types`` first passes them
                          through ``convert(kernel, func, params, args, kwargs) -> (args,
                          kwargs)`` (``params``: ``[(name, is_ndarray)]``).
quadrants memory (``qd_memory``, whichever backend runs; it never imports quadrants)
    ``qd_memory.kind(x)`` "ndarray"/"field" for a quadrants ndarray/field/``qd.tensor``.
    ``qd_memory.ndarray_layout(nd)``  ``(address, shape, element_strides, numpy_dtype)``.
    ``qd_memory.field_layout(f)``, ``qd_memory.field_to_numpy(f)``  as ``field_layout``.
    ``qd_memory.arch_is_gpu()``  whether quadrants' program runs on a GPU.
Native launches (tiarray's native XLA FFI handler, ``operators/_adapters/_native.py``)
    ``native_launch()``   ``(address, cpp)``: the address of the C++ launch function
                          ``launch(program, compiled, ctx)`` and ``cpp(obj)`` the C++ object
                          behind a Python program, compiled kernel or launch context; or
                          None where the backend has none.
    ``on_finalize(fn)``   call ``fn()`` before the running program is finalized.
    ``arg_buffer(ctx)``   ``(address, size)`` of a launch context's argument buffer (the
                          scalars), or None where it must not be touched natively.
    ``array_slot(ctx, index, nbytes, shape)``  set array argument ``index`` (at a marker
                          address) and return where ``ctx`` keeps its data pointer: writing
                          a pointer there sets an array of that size and shape; 0 where not
                          known (then only the setter may set it).
    ``task_launch(ctx)``  ``(impl, runtime_context)``: the C++ objects a native launch that
                          calls a kernel's compiled tasks directly reads (the program's
                          kernel launcher, ``ctx``'s RuntimeContext); ``(0, 0)`` where not
                          known (then only the backend's launch may launch).
Compile time (called inside ``ti.static`` while a kernel compiles)
    ``element_type(arg)`` the element type of an ndarray argument.
    ``call_external(addr, args)``  a call of a C function (by address) in the kernel.
"""

import importlib.util
import os

from . import _qd_memory as qd_memory  # noqa: F401  quadrants objects, whichever backend runs

_BACKENDS = {  # name -> (package, pip requirement)
    "taichi": ("taichi", "taichi==1.7.4"),
    "quadrants": ("quadrants", "quadrants>=1.3.3"),
}


def _default():
    # find_spec looks for the package without importing it (importing taichi costs ~1 s).
    for name in ("taichi", "quadrants"):
        try:
            if importlib.util.find_spec(name) is not None:
                return name
        except (ImportError, ValueError):  # a finder that refuses it; a None in sys.modules
            pass
    return "taichi"  # neither installed: the import below says what to install


NAME = (os.environ.get("TIARRAY_BACKEND") or "").strip().lower() or _default()
if NAME not in _BACKENDS:
    raise ImportError(
        f"tiarray: the environment variable TIARRAY_BACKEND is {NAME!r}, which names no tiarray backend; "
        f"available: {', '.join(sorted(_BACKENDS))} (unset it for the default: taichi where it is "
        f"installed, else quadrants)"
    )
try:
    if NAME == "taichi":
        from ._taichi import *  # noqa: F403
        from ._taichi import __all__  # noqa: F401
    elif NAME == "quadrants":
        from ._quadrants import *  # noqa: F403
        from ._quadrants import __all__  # noqa: F401
except ImportError as e:
    pkg, req = _BACKENDS[NAME]
    if getattr(e, "name", None) is not None and e.name.split(".")[0] == pkg:
        raise ImportError(
            f"tiarray: the {NAME} backend needs the package '{pkg}', which could not be imported ({e}); "
            f"install it with `pip install {req}`, or choose another backend with TIARRAY_BACKEND"
        ) from e
    raise
