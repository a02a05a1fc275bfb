"""tiarray: Taichi as a first-class citizen of the array ecosystem.

- :class:`TiArray`, an array that shares memory with NumPy, PyTorch, JAX and CuPy through
  DLPack in both directions, and implements the Python array API standard (2024.12);
- :class:`Operator`, a Taichi kernel registered once and called on any framework's
  arrays, composing with ``jax.jit``/``vmap``/``grad`` and ``torch.autograd``/``compile``;
- :mod:`tiarray.operators`, event-driven and sparse operators built on it.
"""

from __future__ import annotations

__version__ = "0.1.0"
__array_api_version__ = "2024.12"

from . import _runtime  # noqa: F401, I001  (sets Taichi's environment before it is imported)
from ._runtime import Device, init, is_initialized
from ._array_object import TiArray
from ._dtypes import (
    DType,
    bool,
    int8,
    int16,
    int32,
    int64,
    uint8,
    uint16,
    uint32,
    uint64,
    float16,
    bfloat16,
    float32,
    float64,
    complex64,
    complex128,
    isdtype,
)
from ._info import __array_namespace_info__
from ._creation_functions import (
    asarray,
    from_dlpack,
    empty,
    empty_like,
    zeros,
    zeros_like,
    ones,
    ones_like,
    full,
    full_like,
)
from ._launch import Launcher, KernelSignatureError, set_serial_threshold

__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    # runtime and types
    "Device", "init", "is_initialized", "TiArray", "DType", "isdtype",
    "Launcher", "KernelSignatureError", "set_serial_threshold",
    # dtypes
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    # creation
    "asarray", "from_dlpack", "empty", "empty_like", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like",
]  # fmt: skip

# ---- array API: manipulation, indexing, linear algebra, linalg/fft extensions (api-manipulation) ----
from . import fft, linalg  # noqa: E402
from ._indexing_functions import take, take_along_axis  # noqa: E402
from ._linear_algebra_functions import matmul, matrix_transpose, tensordot, vecdot  # noqa: E402
from ._manipulation_functions import (  # noqa: E402
    broadcast_arrays,
    broadcast_to,
    concat,
    expand_dims,
    flip,
    moveaxis,
    permute_dims,
    repeat,
    reshape,
    roll,
    squeeze,
    stack,
    tile,
    unstack,
)

__all__ += [
    "fft", "linalg",
    "take", "take_along_axis",
    "matmul", "matrix_transpose", "tensordot", "vecdot",
    "broadcast_arrays", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims",
    "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
]  # fmt: skip
# ---- end api-manipulation ----
