"""The internal API of tiarray's core for ``tiarray.operators``: the contract between them.

``operators/`` (the Operator, its framework adapters, the sparse library) imports nothing
from the core but this module (import-linter checks it, see ``pyproject.toml``), and
reaches the namespace functions through an array's ``__array_namespace__()``. Every name
here is used by ``operators/``; changing one is changing that contract.

Language and backend (:mod:`tiarray._backend`)
    ``ti`` the kernel language; ``type_name``, ``element_type``, ``compiling_for_gpu``,
    ``materialize``, ``native_launch``, ``on_finalize``, ``arg_buffer``, ``array_slot``, ``task_launch``
    (see the boundary's contract).
Runtime (:mod:`tiarray._runtime`)
    ``program``, ``CACHES``, ``ensure_init``, ``register_cache`` (the per-program cache
    registry: hot paths check ``program() is not CACHES.prog``), ``current_device``,
    ``is_cpu``, ``cpu_workers``.
Data types and checks
    ``dtypes`` (the module :mod:`tiarray._dtypes`), ``check_bool``.
Memory and interchange
    ``TiArray``, ``empty_owned``, ``copy_array``, ``view_of``, ``numpy_data_ptr``,
    ``asarray``, ``from_dlpack``, ``framework_of``, ``is_jax_tracer``, ``cuda`` (:mod:`tiarray._cuda`),
    ``stored_params`` (the ndarray parameters a kernel stores into).
Launcher (:mod:`tiarray._launch`)
    ``Launcher``, ``KernelSignatureError``, ``IEEE``, ``launch_lock``, ``host_runner`` (and, for
    other generated runners, ``runner_array_set`` and ``runner_launch``), the kernel
    parameter kinds ``P_ARRAY``, ``P_FLOAT``, ``P_INT``, ``P_UINT``, ``P_TEMPLATE``.
"""

from __future__ import annotations

from . import _cbuild as cbuild
from . import _cuda as cuda
from . import _dtypes as dtypes
from ._array_object import TiArray
from ._backend import (
    arg_buffer,
    array_slot,
    compiling_for_gpu,
    element_type,
    materialize,
    native_launch,
    on_finalize,
    task_launch,
    ti,
    type_name,
)
from ._buffer import empty_owned
from ._detect import TAICHI_FAMILY, framework_of, is_jax_tracer
from ._foreign import view_of
from ._hostptr import numpy_data_ptr
from ._interchange import asarray, from_dlpack, stored_params
from ._kernels.copy import copy_array
from ._launch import _P_ARRAY as P_ARRAY
from ._launch import _P_FLOAT as P_FLOAT
from ._launch import _P_INT as P_INT
from ._launch import _P_TEMPLATE as P_TEMPLATE
from ._launch import _P_UINT as P_UINT
from ._launch import IEEE, KernelSignatureError, Launcher, debug_mode, host_runner, runner_launch
from ._launch import _array_set as runner_array_set
from ._launch import _launch_lock as launch_lock
from ._runtime import CACHES, cpu_workers, current_device, ensure_init, is_cpu, program, register_cache
from ._validate import check_bool

__all__ = [
    "ti", "type_name", "element_type", "compiling_for_gpu", "materialize", "native_launch", "on_finalize",
    "arg_buffer", "array_slot", "task_launch",
    "program", "CACHES", "ensure_init", "register_cache", "current_device", "is_cpu", "cpu_workers",
    "dtypes", "check_bool",
    "TiArray", "empty_owned", "copy_array", "view_of", "numpy_data_ptr", "asarray", "from_dlpack", "stored_params", "framework_of",
    "is_jax_tracer", "TAICHI_FAMILY", "cuda", "cbuild",
    "Launcher", "KernelSignatureError", "IEEE", "launch_lock", "debug_mode", "host_runner", "runner_array_set", "runner_launch", "P_ARRAY", "P_FLOAT", "P_INT", "P_UINT", "P_TEMPLATE",
]  # fmt: skip
