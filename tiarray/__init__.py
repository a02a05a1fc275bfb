"""tiarray: Taichi as a first-class citizen of the array ecosystem.

- :class:`TiArray`, an array that shares memory with NumPy, PyTorch, JAX and CuPy through
  DLPack in both directions, and implements the Python array API standard (2025.12, or
  2024.12 with ``TIARRAY_ARRAY_API_VERSION=2024.12``);
- :class:`Operator`, a Taichi kernel registered once and called on any framework's
  arrays, composing with ``jax.jit``/``vmap``/``grad`` and ``torch.autograd``/``compile``;
- :mod:`tiarray.operators`, event-driven and sparse operators built on it.
"""

from __future__ import annotations

import sys as _sys

__version__ = "0.1.0"

from . import _backend  # noqa: F401, I001  (sets Taichi's environment before it is imported)
from ._array_object import API_VERSION as __array_api_version__
from ._runtime import Device, backend, init, is_initialized
from . import _threads  # noqa: F401  (prepares Taichi's CPU workers for each program)
from . import _indexing, _interchange  # noqa: F401  (attach TiArray's indexing, __dlpack__, to_device)
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
from .operators import Operator, ShapeDtype, UndefinedPrimal

# ---- api-elementwise: element-wise functions, operators, data type functions, creation
from ._elementwise_functions import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and,
    bitwise_left_shift, bitwise_invert, bitwise_or, bitwise_right_shift, bitwise_xor, ceil,
    clip, conj, copysign, cos, cosh, divide, equal, exp, expm1, floor, floor_divide,
    greater, greater_equal, hypot, imag, isfinite, isinf, isnan, less, less_equal, log,
    log1p, log2, log10, logaddexp, logical_and, logical_not, logical_or, logical_xor,
    maximum, minimum, multiply, negative, nextafter, not_equal, positive, pow, real,
    reciprocal, remainder, round, sign, signbit, sin, sinh, square, sqrt, subtract, tan,
    tanh, trunc, where,
)  # fmt: skip
from ._data_type_functions import astype, can_cast, finfo, iinfo, result_type
from ._creation_functions import arange, linspace, eye, meshgrid, tril, triu
from ._constants import e, inf, nan, newaxis, pi
# ---- end api-elementwise


__all__ = [
    "__array_api_version__",
    "__array_namespace_info__",
    # runtime and types
    "Device", "backend", "init", "is_initialized", "TiArray", "DType", "isdtype",
    "Launcher", "KernelSignatureError", "set_serial_threshold",
    # operators
    "Operator", "ShapeDtype", "UndefinedPrimal",
    # dtypes
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "bfloat16", "float32", "float64", "complex64", "complex128",
    # creation
    "asarray", "from_dlpack", "empty", "empty_like", "zeros", "zeros_like",
    "ones", "ones_like", "full", "full_like",
    # ---- api-elementwise
    # creation (continued)
    "arange", "eye", "linspace", "meshgrid", "tril", "triu",
    # constants
    "e", "inf", "nan", "newaxis", "pi",
    # data type functions (isdtype is listed above)
    "astype", "can_cast", "finfo", "iinfo", "result_type",
    # element-wise functions
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
    "bitwise_and", "bitwise_invert", "bitwise_left_shift", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos",
    "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater",
    "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan", "less", "less_equal",
    "log", "log10", "log1p", "log2", "logaddexp", "logical_and", "logical_not",
    "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder",
    "round", "sign", "signbit", "sin", "sinh", "sqrt", "square", "subtract", "tan",
    "tanh", "trunc",
    # searching (element-wise in nature)
    "where",
    # ---- end api-elementwise
]  # fmt: skip

# --- statistical, searching, sorting, set and utility functions (api-reductions) -------
from ._searching_functions import argmax, argmin, count_nonzero, nonzero, searchsorted
from ._set_functions import isin, unique_all, unique_counts, unique_inverse, unique_values
from ._sorting_functions import argsort, sort
from ._statistical_functions import (
    cumulative_prod,
    cumulative_sum,
    max,
    mean,
    min,
    prod,
    std,
    sum,
    var,
)
from ._utility_functions import all, any, diff
from ._validate import AxisError

__all__ += [
    # statistical
    "cumulative_prod", "cumulative_sum", "max", "mean", "min", "prod", "std", "sum", "var",
    # searching (where: element-wise functions)
    "argmax", "argmin", "count_nonzero", "nonzero", "searchsorted",
    # sorting
    "argsort", "sort",
    # set
    "isin", "unique_all", "unique_counts", "unique_inverse", "unique_values",
    # utility
    "all", "any", "diff",
    "AxisError",
]  # fmt: skip
# --- end of api-reductions ---------------------------------------------------------------

# ---- array API: manipulation, indexing, linear algebra, linalg/fft extensions (api-manipulation) ----
from . import fft, linalg  # noqa: E402
from ._indexing_functions import take, take_along_axis  # noqa: E402
from ._linear_algebra_functions import matmul, matrix_transpose, tensordot, vecdot  # noqa: E402
from ._manipulation_functions import (  # noqa: E402
    broadcast_arrays,
    broadcast_shapes,
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
    "broadcast_arrays", "broadcast_shapes", "broadcast_to", "concat", "expand_dims", "flip", "moveaxis", "permute_dims",
    "repeat", "reshape", "roll", "squeeze", "stack", "tile", "unstack",
]  # fmt: skip
# ---- end api-manipulation ----

from . import _array_object as _ao  # noqa: E402
from ._array_operators import _binary_operator, _inplace_operator  # noqa: E402, F401  (attaches the dunders)

_ao.attach_namespace(_sys.modules[__name__])  # TiArray.__array_namespace__() returns this module
del _ao
