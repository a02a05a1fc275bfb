"""Element-wise functions (array API 2024.12), ``where``, and the TiArray operators.

Every function is generated from one row of a table::

    name: (dtype category, result rule, {compute kinds: Taichi operation})

(the operation is named by its ``@ti.func`` in :mod:`tiarray._kernels.elementwise`, imported
on first use) and runs the generic element-wise kernels of that module, compiled once per
(operation, dtypes, layout) and cached.

Semantics
---------
- **Type promotion**: :func:`tiarray._dtypes.promote` (the standard's lattice, extended
  to mixed kinds like JAX/PyTorch: ``int32 + float32 -> float32``). Every argument must
  have a dtype of the function's category, else ``TypeError`` naming the function and
  the argument.
- **Python scalars** (``bool``, ``int``, ``float``, ``complex``; NumPy scalars count as
  Python scalars) take a dtype from the array next to them
  (:func:`tiarray._dtypes.scalar_dtype`); an ``int`` that does not fit an integer array's
  dtype raises ``OverflowError``. Two scalars raise ``TypeError``.
- **Other arrays** (NumPy arrays, torch tensors, JAX arrays, anything with DLPack) are
  converted with :func:`tiarray.asarray`, without copying where their memory can be
  shared.
- **Broadcasting** as the standard says; all arrays must be on the same device
  (``ValueError`` otherwise). The result is a new C-contiguous array on that device.
- **Integers** wrap on overflow. Division by zero gives 0 for ``floor_divide`` and
  ``remainder`` (as NumPy); ``floor_divide`` rounds toward minus infinity and
  ``remainder`` takes the sign of the divisor. Shifts by a negative amount or by at
  least the bit width give 0 (``-1`` for right shifts of negative numbers).
  ``pow`` with a negative integer exponent gives the integer part of the result (0
  unless the base is 1 or -1); the standard leaves it undefined.
- **Floating point**: the special cases (NaN, infinities, signed zeros) of each function
  follow the standard, which follows C99 Annexes F and G. ``float16`` data is computed in
  float32 and stored as float16; ``bfloat16`` is refused (Taichi cannot compute on it).
- **Complex** data is computed as (real, imaginary) pairs by our own implementations of
  the complex elementary functions (see :mod:`tiarray._kernels._math`).
"""

from __future__ import annotations

import builtins
import sys

import numpy as np

from . import _dtypes, _launch, _runtime
from ._array_object import TiArray
from ._backend import ti
from ._buffer import empty_owned
from ._dtypes import DType
from ._kernels.copy import copy_array
from ._launch import IEEE, Launcher
from ._validate import check_dtype
from ._views import broadcast_shapes, broadcast_view, collapse

__all__ = [
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh",
    "bitwise_and", "bitwise_left_shift", "bitwise_invert", "bitwise_or",
    "bitwise_right_shift", "bitwise_xor", "ceil", "clip", "conj", "copysign", "cos",
    "cosh", "divide", "equal", "exp", "expm1", "floor", "floor_divide", "greater",
    "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan", "less", "less_equal",
    "log", "log1p", "log2", "log10", "logaddexp", "logical_and", "logical_not",
    "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder",
    "round", "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan",
    "tanh", "trunc", "where",
]  # fmt: skip

# ============================================================================= tables
#
# result rules: "same" (the promoted dtype), "bool", "real" (the real dtype of a complex
# input, the input dtype otherwise), "float" (floating inputs keep their dtype, integer
# inputs give the default real floating dtype).
# kinds: b bool, i signed integer, u unsigned integer, f real floating, c complex.

UNARY = {
    "abs": ("numeric", "real", {"i": "abs_i", "u": "identity", "f": "abs_f", "c": "abs_c"}),
    "acos": ("floating-point", "same", {"f": "acos_f", "c": "acos_c"}),
    "acosh": ("floating-point", "same", {"f": "acosh_f", "c": "acosh_c"}),
    "asin": ("floating-point", "same", {"f": "asin_f", "c": "asin_c"}),
    "asinh": ("floating-point", "same", {"f": "asinh_f", "c": "asinh_c"}),
    "atan": ("floating-point", "same", {"f": "atan_f", "c": "atan_c"}),
    "atanh": ("floating-point", "same", {"f": "atanh_f", "c": "atanh_c"}),
    "bitwise_invert": ("integer or boolean", "same", {"b": "bitwise_invert_b", "iu": "bitwise_invert_r"}),
    "ceil": ("real numeric", "same", {"iu": "identity", "f": "ceil_f"}),
    "conj": ("numeric", "same", {"iuf": "identity", "c": "conj_c"}),
    "cos": ("floating-point", "same", {"f": "cos_f", "c": "cos_c"}),
    "cosh": ("floating-point", "same", {"f": "cosh_f", "c": "cosh_c"}),
    "exp": ("floating-point", "same", {"f": "exp_f", "c": "exp_c"}),
    "expm1": ("floating-point", "same", {"f": "expm1_f", "c": "expm1_c"}),
    "floor": ("real numeric", "same", {"iu": "identity", "f": "floor_f"}),
    "imag": ("complex floating-point", "real", {"c": "imag_c"}),
    "isfinite": ("numeric", "bool", {"iu": "true_r", "f": "isfinite_f", "c": "isfinite_c"}),
    "isinf": ("numeric", "bool", {"iu": "false_r", "f": "isinf_f", "c": "isinf_c"}),
    "isnan": ("numeric", "bool", {"iu": "false_r", "f": "isnan_f", "c": "isnan_c"}),
    "log": ("floating-point", "same", {"f": "log_f", "c": "log_c"}),
    "log1p": ("floating-point", "same", {"f": "log1p_f", "c": "log1p_c"}),
    "log2": ("floating-point", "same", {"f": "log2_f", "c": "log2_c"}),
    "log10": ("floating-point", "same", {"f": "log10_f", "c": "log10_c"}),
    "logical_not": ("boolean", "bool", {"b": "logical_not_b"}),
    "negative": ("numeric", "same", {"ifc": "negative_r", "u": "negative_u"}),
    "positive": ("numeric", "same", {"iufc": "identity"}),
    "real": ("numeric", "real", {"iuf": "identity", "c": "real_c"}),
    "reciprocal": ("floating-point", "same", {"f": "reciprocal_f", "c": "reciprocal_c"}),
    "round": ("numeric", "same", {"iu": "identity", "f": "round_f", "c": "round_c"}),
    "sign": ("numeric", "same", {"i": "sign_i", "u": "sign_u", "f": "sign_f", "c": "sign_c"}),
    "signbit": ("real floating-point", "bool", {"f": "signbit_f"}),
    "sin": ("floating-point", "same", {"f": "sin_f", "c": "sin_c"}),
    "sinh": ("floating-point", "same", {"f": "sinh_f", "c": "sinh_c"}),
    "sqrt": ("floating-point", "same", {"f": "sqrt_f", "c": "sqrt_c"}),
    "square": ("numeric", "same", {"iuf": "square_r", "c": "square_c"}),
    "tan": ("floating-point", "same", {"f": "tan_f", "c": "tan_c"}),
    "tanh": ("floating-point", "same", {"f": "tanh_f", "c": "tanh_c"}),
    "trunc": ("real numeric", "same", {"iu": "identity", "f": "trunc_f"}),
}

BINARY = {
    "add": ("numeric", "same", {"iufc": "add_r"}),
    "atan2": ("real floating-point", "same", {"f": "atan2_f"}),
    "bitwise_and": ("integer or boolean", "same", {"biu": "bitwise_and_r"}),
    "bitwise_left_shift": ("integer", "same", {"iu": "left_shift_r"}),
    "bitwise_or": ("integer or boolean", "same", {"biu": "bitwise_or_r"}),
    "bitwise_right_shift": ("integer", "same", {"i": "right_shift_i", "u": "right_shift_u"}),
    "bitwise_xor": ("integer or boolean", "same", {"biu": "bitwise_xor_r"}),
    "copysign": ("real floating-point", "same", {"f": "copysign_f"}),
    "divide": ("numeric", "float", {"f": "divide_f", "c": "divide_c"}),
    "equal": ("all", "bool", {"biuf": "equal_r", "c": "equal_c"}),
    "floor_divide": ("real numeric", "same", {"i": "floor_divide_i", "u": "floor_divide_u", "f": "floor_divide_f"}),
    "greater": ("real numeric", "bool", {"iuf": "greater_r"}),
    "greater_equal": ("real numeric", "bool", {"iuf": "greater_equal_r"}),
    "hypot": ("real floating-point", "same", {"f": "hypot_f"}),
    "less": ("real numeric", "bool", {"iuf": "less_r"}),
    "less_equal": ("real numeric", "bool", {"iuf": "less_equal_r"}),
    "logaddexp": ("real floating-point", "same", {"f": "logaddexp_f"}),
    "logical_and": ("boolean", "bool", {"b": "logical_and_b"}),
    "logical_or": ("boolean", "bool", {"b": "logical_or_b"}),
    "logical_xor": ("boolean", "bool", {"b": "logical_xor_b"}),
    "maximum": ("real numeric", "same", {"iu": "maximum_i", "f": "maximum_f"}),
    "minimum": ("real numeric", "same", {"iu": "minimum_i", "f": "minimum_f"}),
    "multiply": ("numeric", "same", {"iuf": "multiply_r", "c": "multiply_c"}),
    "nextafter": ("real floating-point", "same", {"f": "nextafter_f"}),
    "not_equal": ("all", "bool", {"biuf": "not_equal_r", "c": "not_equal_c"}),
    "pow": ("numeric", "same", {"i": "pow_i", "u": "pow_u", "f": "pow_f", "c": "pow_c"}),
    "remainder": ("real numeric", "same", {"i": "remainder_i", "u": "remainder_u", "f": "remainder_f"}),
    "subtract": ("numeric", "same", {"iufc": "subtract_r"}),
}  # fmt: skip

# clip is ternary with optional bounds; where has a boolean condition (see below).
_CLIP_OPS = {
    (True, True): {"iu": "clip_i", "f": "clip_f"},
    (True, False): {"iu": "clip_lo_i", "f": "clip_lo_f"},
    (False, True): {"iu": "clip_hi_i", "f": "clip_hi_f"},
}
_WHERE_OPS = {"biufc": "where_r"}


def _expand(impls: dict) -> dict:
    out = {}
    for kinds, op in impls.items():
        for kd in kinds:
            out[kd] = op
    return out


_IMPLS = {name: _expand(row[2]) for name, row in {**UNARY, **BINARY}.items()}
_CLIP_IMPLS = {k: _expand(v) for k, v in _CLIP_OPS.items()}
_WHERE_IMPLS = _expand(_WHERE_OPS)

# ============================================================================= kernels

# The kernel module (about 150 Taichi functions) is imported on first use, not with tiarray.
_K = []


def _kmod():
    if not _K:
        from ._kernels import elementwise

        _K.append(elementwise)
    return _K[0]


def _op(name: str):
    return getattr(_kmod(), name)


class _Launchers(dict):
    def __missing__(self, key):
        kind, nin = key
        ln = self[key] = Launcher(getattr(_kmod(), f"_{kind}{nin}"), name="elementwise", compile_options=IEEE)
        return ln


_LAUNCHERS = _Launchers()
_INT32_MAX = (1 << 31) - 1

_CATEGORIES = _dtypes.CATEGORIES


def _compute_type(dtype: DType):
    """The Taichi type operations compute in for data of ``dtype``."""
    if dtype.kind == "b":
        return ti.u8
    if dtype is _dtypes.float16:
        return ti.f32
    return _dtypes.taichi_type(dtype)


def _storage_dtype(dtype: DType) -> DType:
    """The dtype of the 1-D span handed to a kernel (complex as its real dtype)."""
    return _dtypes.finfo_dtype(dtype) if dtype.kind == "c" else dtype


# bits of the significand of the floating dtypes computed in a wider type (an integer of
# more bits may not be exact in them)
_MANTISSA = {_dtypes.float16: 11, _dtypes.float32: 24}


class _Plan:
    """Everything about one (function, input dtypes) that does not depend on the call."""

    __slots__ = (
        "out_dtype", "op", "ct", "out_spec", "loads", "sigs", "specs", "itemsizes", "nin", "in_ti", "lanes_ok",
        "span_ok", "speed", "limit",
    )  # fmt: skip

    def __init__(self, out_dtype, op, ct, in_dtypes, compute_dtype, load_types=None, round_to=None):
        self.out_dtype = out_dtype
        self.op = op
        self.ct = ct
        self.nin = len(in_dtypes)
        self.out_spec = (out_dtype.kind == "c", _dtypes.taichi_type(out_dtype))
        as_c = compute_dtype.kind == "c"
        loads = []
        for i, d in enumerate(in_dtypes):
            custom = load_types is not None and load_types[i] is not None
            ld = (d.kind == "c", as_c and not custom, load_types[i] if custom else ct)
            if (
                round_to is not None
                and not custom
                and d.kind in "iu"
                and 8 * d.itemsize > _MANTISSA[round_to]
            ):
                ld += (_dtypes.taichi_type(round_to),)  # rounded to the promoted dtype first
            loads.append(ld)
        self.loads = tuple(loads)
        self.sigs = [(_storage_dtype(out_dtype), 1, False)] + [
            (_storage_dtype(d), 1, False) for d in in_dtypes
        ]
        self.specs = {}
        self.itemsizes = out_dtype.itemsize + builtins.sum(d.itemsize for d in in_dtypes)
        self.in_ti = tuple(_dtypes.taichi_type(d) for d in in_dtypes)
        # the span kernels handle real data, loaded without rounding, only
        self.lanes_ok = out_dtype.kind != "c" and not builtins.any(
            ld[0] or ld[1] or len(ld) > 3 for ld in loads
        )
        # ... and, in the span kernels, branch-free operations only
        self.span_ok = self.lanes_ok and _kmod().span_op(op, ct) is not None
        self.speed = _launch.STREAM  # an operation costing nothing next to its data (see _speed)
        # the span variant is valid for arguments below this magnitude only (float32 sin/cos)
        self.limit = _kmod().range_limit(op, ct) if self.span_ok else None

    def template(self, steps):
        return (
            self.op,
            self.ct,
            self.out_spec,
            tuple(ld[:3] + (st,) + ld[3:] for ld, st in zip(self.loads, steps)),
        )


_PLANS: dict = {}


def _clear_specs() -> None:
    for p in _PLANS.values():
        p.specs.clear()


_runtime.register_cache(_clear_specs)  # the plans stay; their compiled specs are per program


def _result_dtype(func: str, dtypes) -> DType:
    try:
        return _dtypes.result_type_of(dtypes)
    except TypeError as e:
        raise TypeError(f"{func}(): no common dtype for {', '.join(d.name for d in dtypes)} ({e})") from None


_ARGNAMES = {1: ("x",), 2: ("x1", "x2"), 3: ("x", "min", "max")}


def _make_plan(func: str, dtypes: tuple) -> _Plan:
    if func in UNARY:
        category, rule, _ = UNARY[func]
    else:
        category, rule, _ = BINARY[func]
    names = _ARGNAMES[len(dtypes)]
    for n, d in zip(names, dtypes):
        check_dtype(d, category, func, n)
    pd = _result_dtype(func, dtypes)
    if rule == "same":
        out = pd
    elif rule == "bool":
        out = _dtypes.bool
    elif rule == "real":
        out = _dtypes.finfo_dtype(pd)
    else:  # float
        out = pd if pd.kind in "fc" else _dtypes.default_float()
        pd = out
    impl = _IMPLS[func].get(pd.kind)
    impl = impl and _op(impl)
    if impl is None:  # pragma: no cover - the tables cover every kind of each category
        raise TypeError(f"{func}(): not implemented for dtype {pd.name}")
    if func == "nextafter" and pd is _dtypes.float16:
        raise TypeError("nextafter(): float16 is not supported; cast to float32 first")
    ct = _compute_type(_dtypes.finfo_dtype(pd)) if pd.kind == "c" else _compute_type(pd)
    rpd = _dtypes.finfo_dtype(pd) if pd.kind == "c" else pd
    if func == "pow" and pd is _dtypes.complex64:
        # complex powers multiply repeatedly: in float32 an intermediate overflows to
        # inf * finite - inf * finite = NaN where the rounded result is a finite or
        # infinite number; float64 intermediates give the correctly rounded complex64
        ct = _compute_type(_dtypes.float64)
    # where the computation is wider than the promoted dtype (float16 in float32, complex64
    # pow in float64), integer operands are rounded to the promoted dtype first, as the
    # promotion says (int16 -21843 is -21840 in float16)
    round_to = rpd if rpd in _MANTISSA and ct != _dtypes.taichi_type(rpd) else None
    plan = _Plan(out, impl, ct, dtypes, pd, round_to=round_to)
    plan.speed = _speed(func, pd, plan.itemsizes)
    return plan


# Serial cost of an operation beyond moving its data, ns per element (float32, float64),
# measured with tiarray's own kernels (span or lane-blocked) on 2**18 elements of the
# reference machine (an AMD EPYC core); operations not listed cost next to nothing.
_OP_NS = {
    "exp": (0.65, 1.4), "expm1": (2.8, 6.0), "log": (0.85, 2.2), "log1p": (1.1, 2.7), "log2": (2.8, 5.1),
    "log10": (3.85, 5.7), "sin": (1.0, 8.4), "cos": (1.0, 9.0), "tan": (14.0, 10.2), "asin": (9.7, 11.7),
    "acos": (9.6, 12.2), "atan": (10.1, 14.3), "sinh": (8.7, 12.2), "cosh": (3.3, 4.4), "tanh": (1.2, 2.5),
    "asinh": (6.1, 8.9), "acosh": (7.5, 8.0), "atanh": (12.2, 13.9), "round": (7.0, 8.1), "sign": (0.35, 0.6),
    "sqrt": (0.0, 0.4), "pow": (5.0, 9.8),
    "atan2": (16.8, 14.3), "hypot": (2.1, 2.4), "logaddexp": (12.5, 15.8), "floor_divide": (9.5, 9.8),
    "remainder": (8.8, 9.0), "nextafter": (1.4, 1.3),
}  # fmt: skip
# bytes a core streams per ns in the span kernels (the STREAM reference)
_STREAM_BYTES_PER_NS = 60.0


def _speed(func: str, pd: DType, itemsizes: int) -> float:
    """``speed`` for ``Launcher.use_serial``: ``STREAM`` scaled down by the share of an
    element's serial time spent computing rather than moving its ``itemsizes`` bytes, so
    that a launch runs serially while its serial estimate stays under ~100 us."""
    ns = _OP_NS.get(func)
    if ns is None:
        return _launch.STREAM
    c = ns[0] if pd.itemsize <= 4 and pd.kind != "c" else ns[1]
    if pd.kind == "c":
        c *= 2
    return _launch.STREAM / (1.0 + _STREAM_BYTES_PER_NS * c / max(itemsizes, 1))


# ============================================================================= operands

_PY_SCALARS = (bool, int, float, complex, np.bool_, np.number)


_SCALARS: dict = {}


def _scalar_array(value, dtype: DType, func: str, arg: str) -> TiArray:
    """A Python scalar as a 0-d read-only host array of ``dtype`` (Taichi moves it to the
    GPU if needed), cached per (type, value, dtype)."""
    t = type(value)
    if not (t is int or t is bool or (t is float and value != 0.0)):
        # floats compare equal across signed zeros: only cache what equality identifies
        return _new_scalar_array(value, dtype, func, arg)
    key = (t, value, dtype)
    h = _SCALARS.get(key)
    if h is not None:
        return h
    h = _new_scalar_array(value, dtype, func, arg)
    if len(_SCALARS) > 4096:
        _SCALARS.clear()
    _SCALARS[key] = h
    return h


def _new_scalar_array(value, dtype: DType, func: str, arg: str) -> TiArray:
    if dtype.kind in "iu" and not isinstance(value, (bool, np.bool_)):
        info = np.iinfo(dtype.numpy)
        v = int(value) if not isinstance(value, (float, complex, np.floating, np.complexfloating)) else None
        if v is not None and not info.min <= v <= info.max:
            raise OverflowError(
                f"{func}(): argument '{arg}': Python int {value} does not fit the array's dtype {dtype.name}"
            )
    if dtype._np is None:
        raise TypeError(f"{func}(): argument '{arg}': cannot hold a scalar of dtype {dtype.name}")
    a = np.array(value, dtype=dtype._np)
    return TiArray._new(a.ctypes.data, (), (), dtype, _runtime.CPU, a, True)


def _as_array(x, func: str, arg: str) -> TiArray:
    from ._interchange import asarray

    try:
        return asarray(x)
    except TypeError as e:
        raise TypeError(
            f"{func}(): argument '{arg}' must be an array or a Python scalar, got {type(x).__name__} ({e})"
        ) from None


def _operands(func: str, args: tuple, names: tuple) -> list:
    """The arguments as TiArrays; Python scalars take the dtype of the arrays next to them."""
    arrays = [None] * len(args)
    scalars = []
    for i, a in enumerate(args):
        if type(a) is TiArray:
            arrays[i] = a
        elif isinstance(a, _PY_SCALARS):
            scalars.append(i)
        else:
            arrays[i] = _as_array(a, func, names[i])
    if scalars:
        present = [a for a in arrays if a is not None]
        if not present:
            raise TypeError(f"{func}(): at least one argument must be an array, got only Python scalars")
        ref = _result_dtype(func, [a._dtype for a in present]) if len(present) > 1 else present[0]._dtype
        for i in scalars:
            try:
                sd = _dtypes.scalar_dtype(args[i], ref)
            except TypeError as e:
                raise TypeError(f"{func}(): argument '{names[i]}': {e}") from None
            arrays[i] = _scalar_array(args[i], sd, func, names[i])
    return arrays


# ============================================================================= execution


_program = _runtime.program
_CACHES = _runtime.CACHES


def _spec(plan: _Plan, key, launcher: Launcher, sigs, templates, serial: bool):
    s = plan.specs.get(key)
    if s is None:
        s = launcher.spec(sigs, templates, serial=serial)
        plan.specs[key] = s
    return s


def _span(x: TiArray) -> tuple:
    """``((ptr, nbytes, (n,)), element_offset)``: the memory of ``x`` as a 1-D kernel argument
    (complex data in real units, offsets in elements)."""
    lo, hi = x._byte_extent()
    nbytes = hi - lo
    sd = _storage_dtype(x._dtype)
    n = nbytes // sd.itemsize
    if n > _INT32_MAX:
        raise ValueError(
            f"an operand spans {n} elements; Taichi kernels index at most 2**31 - 1 elements per array"
        )
    if n == 0:
        return (x._ptr or 1, 0, (0,)), 0
    return (lo, nbytes, (n,)), (x._ptr - lo) // x._dtype.itemsize


def _contiguous_arg(x: TiArray, count: int) -> tuple:
    n = count * 2 if x._dtype.kind == "c" else count
    return (x._ptr, count * x._dtype.itemsize, (n,))


def _run(plan: _Plan, out: TiArray, xs: list, fresh: bool = True) -> TiArray:
    """Compute ``out[...] = op(*xs)`` (``xs`` broadcast to ``out.shape``); ``fresh``: ``out``
    is a new C-contiguous array."""
    shape = out._shape
    n = 1
    for s in shape:
        n *= s
    if n == 0:
        return out
    if n > _INT32_MAX:
        raise ValueError(
            f"the result has {n} elements; Taichi kernels index at most 2**31 - 1 elements per array"
        )
    if _program() is not _CACHES.prog:  # the plans' specs belong to the running program
        _runtime.ensure_init()
    nin = len(xs)
    ln = _LAUNCHERS[("c", 1)]
    nbytes = n * plan.itemsizes
    # Fast path: every operand is C-contiguous with the result's shape, or one element.
    steps = []
    if fresh or out._is_c_contiguous():
        for x in xs:
            if x._shape == shape and x._is_c_contiguous():
                steps.append(1)
            elif x.size == 1:
                steps.append(0)
            else:
                break
    # contiguous launches run vectorised kernels (the plan's speed); strided ones do not
    if len(steps) == nin:
        return _launch_contiguous(plan, out, xs, steps, n, ln.use_serial(nbytes, plan.speed))
    # General path: collapse the broadcast layout to as few axes as possible.
    views = [broadcast_view(x, shape) for x in xs]
    cshape, cstrides = collapse(shape, out._strides, *[v._strides for v in views])
    if len(cshape) == 1 and cstrides[0][0] == 1 and builtins.all(st[0] in (0, 1) for st in cstrides[1:]):
        steps = [st[0] for st in cstrides[1:]]
        return _launch_contiguous(plan, out, xs, steps, n, ln.use_serial(nbytes, plan.speed))
    serial = ln.use_serial(nbytes)
    nd = len(cshape)
    ospan, ooff = _span(out)
    meta = list(cshape) + [ooff, *cstrides[0]]
    values = [ospan]
    for v, st in zip(views, cstrides[1:]):
        sp, off = _span(v)
        values.append(sp)
        meta.append(off)
        meta.extend(st)
    meta_np = np.array(meta, dtype=np.int32)
    values.append((meta_np.ctypes.data, meta_np.nbytes, meta_np.shape))
    sigs = plan.sigs + [(_dtypes.int32, 1, False)]
    t = plan.template((1,) * nin)
    if nd == 1:
        spec = _spec(plan, ("f", serial), _LAUNCHERS[("f", nin)], sigs, (t,), serial)
        values.append(n)
    else:
        spec = _spec(plan, ("s", nd, serial), _LAUNCHERS[("s", nin)], sigs, (nd, t), serial)
        values.append(n // cshape[-1])
    spec.launch(values)
    return out


# Contiguous real data of branch-free operations runs in the span kernels (``_kernels.elementwise.make_span_kernel``:
# real functions over spans of the arrays, which LLVM vectorises). Each span has at least
# _SPAN_MIN elements; a parallel launch uses at most 8 spans per thread.
_SPAN_MIN = 1 << 14
_SPAN_LAUNCHERS: dict = {}


def _span_launcher(plan: _Plan, scalars: tuple) -> Launcher:
    key = (
        plan.op,
        plan.ct,
        plan.nin,
        plan.out_spec[1],
        plan.in_ti,
        tuple(ld[2] for ld in plan.loads),
        scalars,
    )
    ln = _SPAN_LAUNCHERS.get(key)
    if ln is None:
        t = (plan.op, plan.ct, tuple((sc, ld[2]) for sc, ld in zip(scalars, plan.loads)))
        kern = _kmod().make_span_kernel(plan.nin, plan.out_spec[1], plan.in_ti, t)
        ln = _SPAN_LAUNCHERS[key] = Launcher(kern, name="elementwise", compile_options=IEEE)
    return ln


def _span_blocks(n: int, serial: bool, speed: float = _launch.STREAM) -> tuple:
    """``(blk, pad)`` of a span kernel launch over ``n`` elements (``speed``: the plan's, so
    that few spans of a costly operation are padded onto separate workers too)."""
    if serial or n <= _SPAN_MIN:
        return max(n, 1), 1
    from ._kernels import reduce as _kr

    nt = _kr.num_threads()
    spans = builtins.max(nt, builtins.min(n // _SPAN_MIN, 8 * nt))
    blk = -(-n // spans)
    blk = -(-blk // 64) * 64  # whole cache lines per span
    spans = -(-n // blk)
    return blk, _kr.task_pad(spans, int(blk * _launch.STREAM / speed), serial)


def _launch_spans(plan: _Plan, out: TiArray, xs, steps: tuple, n: int, serial: bool) -> TiArray:
    key = ("v", steps, serial)
    spec = plan.specs.get(key)
    if spec is None:
        scalars = tuple(st == 0 for st in steps)
        sigs = [(plan.out_dtype, 1, False)] + [(x._dtype, 1, False) for x in xs]
        spec = _spec(plan, key, _span_launcher(plan, scalars), sigs, (), serial)
    values = [(out._ptr, n * out._dtype.itemsize, (n,))]
    for x, st in zip(xs, steps):
        isz = x._dtype.itemsize
        values.append((x._ptr, n * isz, (n,)) if st else (x._ptr, isz, (1,)))
    blk, pad = _span_blocks(n, serial, plan.speed)
    values += [n, blk, pad]
    spec.launch(values)
    return out


_LANES = 8  # = _kernels.elementwise.LANES
_LANE_MIN = 8192  # elements; below, one launch of the plain kernel is cheaper
_LANE_LAUNCHERS: dict = {}


def _lane_launcher(plan: _Plan, scalars: tuple) -> Launcher:
    key = (plan.nin, plan.out_spec[1], plan.in_ti, scalars)
    ln = _LANE_LAUNCHERS.get(key)
    if ln is None:
        kern = _kmod().make_lane_kernel(plan.nin, plan.out_spec[1], plan.in_ti, scalars)
        ln = _LANE_LAUNCHERS[key] = Launcher(kern, name="elementwise", compile_options=IEEE)
    return ln


def _launch_lanes(plan: _Plan, out: TiArray, xs, steps: tuple, n: int, serial: bool) -> int:
    """Run the lane-blocked kernel on the first ``n // LANES * LANES`` elements; returns
    how many elements it did."""
    nb = n // _LANES
    key = ("l", steps, serial)  # ("v", ...) are the span kernels: a plan may use both
    spec = plan.specs.get(key)
    if spec is None:
        scalars = tuple(st == 0 for st in steps)
        sigs = [(plan.out_dtype, 2, False)] + [
            (x._dtype, 1 if sc else 2, False) for x, sc in zip(xs, scalars)
        ]
        t = (plan.op, plan.ct, tuple((sc, ld[2]) for sc, ld in zip(scalars, plan.loads)))
        spec = _spec(plan, key, _lane_launcher(plan, scalars), sigs, (t,), serial)
    # arrays of vectors are passed with their shape without the element axis (as Taichi does)
    it = out._dtype.itemsize
    values = [(out._ptr, nb * _LANES * it, (nb,))]
    for x, st in zip(xs, steps):
        isz = x._dtype.itemsize
        values.append((x._ptr, nb * _LANES * isz, (nb,)) if st else (x._ptr, isz, (1,)))
    values.append(nb)
    spec.launch(values)
    return nb * _LANES


# below this many elements a range-limited span variant is not worth its argument check
_LIMIT_MIN = 16384


def _within(x: TiArray, limit: float, n: int) -> bool:
    """Whether every element of ``x`` lies strictly inside ``(-limit, limit)`` (so not NaN
    or infinite), for a range-limited span variant (float32 ``sin``/``cos``): two
    vectorised reductions, worth it from ``_LIMIT_MIN`` elements on."""
    if n < _LIMIT_MIN:
        return False
    from ._statistical_functions import max as _max
    from ._statistical_functions import min as _min

    hi = float(_max(x))
    lo = float(_min(x))
    return -limit < lo and hi < limit  # False for NaN


def _launch_contiguous(plan: _Plan, out: TiArray, xs, steps, n: int, serial: bool) -> TiArray:
    steps = tuple(steps)
    if plan.span_ok and out._device.kind == "cpu" and (plan.limit is None or _within(xs[0], plan.limit, n)):
        # (on a GPU a span would be one thread's serial loop: the plain kernels there)
        return _launch_spans(plan, out, xs, steps, n, serial)
    result = out
    if n >= _LANE_MIN and plan.lanes_ok:
        done = _launch_lanes(plan, out, xs, steps, n, serial)
        if done == n:
            return result
        # the tail: views that start after the blocks
        out = out._view(out._ptr + done * out._dtype.itemsize, (n - done,), (1,))
        xs = [
            x._view(x._ptr + done * x._dtype.itemsize, (n - done,), (1,)) if st else x
            for x, st in zip(xs, steps)
        ]
        n -= done
        serial = True
    key = ("c", steps, serial)
    spec = plan.specs.get(key)
    if spec is None:
        spec = _spec(plan, key, _LAUNCHERS[("c", len(xs))], plan.sigs, (plan.template(steps),), serial)
    values = [_contiguous_arg(out, n)]
    for x, st in zip(xs, steps):
        values.append(_contiguous_arg(x, n if st else 1))
    values.append(n)
    spec.launch(values)
    return result


# ============================================================================= generic entry points


def _unary(func: str, x) -> TiArray:
    if type(x) is not TiArray:
        if isinstance(x, _PY_SCALARS):
            raise TypeError(f"{func}(): argument 'x' must be an array, got a Python {type(x).__name__}")
        x = _as_array(x, func, "x")
    key = (func, x._dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_plan(func, (x._dtype,))
    out = empty_owned(x._shape, plan.out_dtype, x._device)
    return _run(plan, out, [x])


def _small_power(x1: TiArray, x2):
    """``x1 ** x2`` for the Python exponents whose correctly rounded result is one simple
    operation (as NumPy does for ``x ** 2``): ``2`` -> ``x * x``, ``1`` -> a copy, ``-1`` ->
    ``1 / x`` (floating arrays). ``None`` for every other exponent. libm's ``pow`` costs
    ~5 ns an element, a product ~0.2 ns."""
    k = x1._dtype.kind
    if k not in "iuf" or (type(x2) is float and k != "f"):
        return None
    if x2 == 2:
        return _binary("multiply", x1, x1)
    if x2 == 1:
        return _unary("positive", x1)
    if x2 == -1 and k == "f":
        return _unary("reciprocal", x1)
    return None


def _binary(func: str, x1, x2) -> TiArray:
    if type(x1) is not TiArray or type(x2) is not TiArray:
        t2 = type(x2)
        if func == "pow" and type(x1) is TiArray and (t2 is int or t2 is float):
            r = _small_power(x1, x2)
            if r is not None:
                return r
        if type(x1) is TiArray and (t2 is float or t2 is int) and x1._dtype.kind in "fc":
            # fast path for ``x + 1.0``: a Python int or float next to a floating array
            x2 = _scalar_array(x2, x1._dtype, func, "x2")
        else:
            x1, x2 = _operands(func, (x1, x2), ("x1", "x2"))
    key = (func, x1._dtype, x2._dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_plan(func, (x1._dtype, x2._dtype))
    s1, s2 = x1._shape, x2._shape
    if s1 == s2 or not s2:
        shape = s1
    elif not s1:
        shape = s2
    else:
        shape = broadcast_shapes(s1, s2, func=func)
    dev = x1._device
    if dev != x2._device:
        dev = _pick_device(func, (x1, x2))
    out = empty_owned(shape, plan.out_dtype, dev)
    return _run(plan, out, [x1, x2])


def _is_scalar_holder(x: TiArray) -> bool:
    """A 0-d host array made by ``_scalar_array`` (usable next to arrays on any device)."""
    return x._readonly and x._shape == () and isinstance(x._owner, np.ndarray) and x._owner.ndim == 0


def _pick_device(func: str, xs) -> _runtime.Device:
    devs = {x._device for x in xs if not _is_scalar_holder(x)}
    if len(devs) > 1:
        raise ValueError(
            f"{func}(): the arrays are on different devices ({', '.join(sorted(str(d) for d in devs))}); "
            "move them to one device first with x.to_device(...)"
        )
    return next(iter(devs)) if devs else xs[0]._device


# ============================================================================= where and clip


def where(condition, x1, x2, /) -> TiArray:
    """Select elements from ``x1`` where ``condition`` is True, and from ``x2`` elsewhere.

    Parameters
    ----------
    condition : TiArray
        A boolean array, broadcast with ``x1`` and ``x2``.
    x1, x2 : TiArray or Python scalar
        The values to choose from (at most one of them a Python scalar, which takes the
        other's dtype). They may have any dtypes that promote together.

    Returns
    -------
    TiArray
        ``x1_i`` where ``condition_i`` is True, else ``x2_i``; the dtype of ``x1`` and
        ``x2`` after type promotion, the broadcast shape of all three.

    Raises
    ------
    TypeError
        If ``condition`` is not boolean, both ``x1`` and ``x2`` are Python scalars, or
        their dtypes do not promote.
    ValueError
        If the shapes do not broadcast or the arrays are on different devices.

    Examples
    --------
    >>> import tiarray as ta
    >>> x = ta.asarray([1.0, -2.0, 3.0])
    >>> ta.where(x > 0, x, 0.0)
    TiArray([1., 0., 3.], dtype=float64)
    """
    func = "where"
    if type(condition) is not TiArray:
        if isinstance(condition, _PY_SCALARS):
            raise TypeError(f"{func}(): argument 'condition' must be a boolean array, got a Python scalar")
        condition = _as_array(condition, func, "condition")
    if condition._dtype is not _dtypes.bool:
        raise TypeError(
            f"{func}(): argument 'condition' must have a boolean dtype, got {condition._dtype.name}"
        )
    if isinstance(x1, _PY_SCALARS) and isinstance(x2, _PY_SCALARS):
        raise TypeError(f"{func}(): at most one of 'x1' and 'x2' may be a Python scalar")
    if type(x1) is not TiArray or type(x2) is not TiArray:
        x1, x2 = _operands(func, (x1, x2), ("x1", "x2"))
    key = (func, x1._dtype, x2._dtype)
    plan = _PLANS.get(key)
    if plan is None:
        for n, d in (("x1", x1._dtype), ("x2", x2._dtype)):
            if d is _dtypes.bfloat16:
                check_dtype(d, "all", func, n)
        pd = _result_dtype(func, (x1._dtype, x2._dtype))
        ct = _compute_type(_dtypes.finfo_dtype(pd))
        plan = _Plan(
            pd, _op(_WHERE_IMPLS[pd.kind]), ct, (_dtypes.bool, x1._dtype, x2._dtype), pd, (ti.u8, None, None)
        )
        _PLANS[key] = plan
    sc = condition._shape
    if sc == x1._shape == x2._shape:
        shape = sc
    else:
        shape = broadcast_shapes(sc, x1._shape, x2._shape, func=func)
    dev = condition._device
    if not (dev == x1._device == x2._device):
        dev = _pick_device(func, (condition, x1, x2))
    out = empty_owned(shape, plan.out_dtype, dev)
    return _run(plan, out, [condition, x1, x2])


def clip(x, /, min=None, max=None) -> TiArray:
    """Clamp each element of ``x`` to the interval ``[min, max]``.

    Parameters
    ----------
    x : TiArray
        A real numeric array.
    min, max : TiArray, Python int or float, or None
        The bounds (``None``: no bound), broadcast with ``x``. An integer ``x`` needs
        integer bounds; Python int bounds outside the range of ``x``'s dtype are clamped
        to it.

    Returns
    -------
    TiArray
        The clamped values, with ``x``'s dtype and the broadcast shape. A NaN in ``x``,
        ``min`` or ``max`` gives NaN; if ``min > max`` the result is ``max`` (the standard
        leaves it unspecified).

    Raises
    ------
    TypeError
        If ``x`` or a bound is not real numeric, or a bound is floating while ``x`` is an
        integer array (or an integer array bound with a floating ``x``).
    ValueError
        If the shapes do not broadcast or the arrays are on different devices.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.clip(ta.asarray([-2, 0, 5]), 0, 3)
    TiArray([0, 0, 3], dtype=int64)
    """
    func = "clip"
    if type(x) is not TiArray:
        if isinstance(x, _PY_SCALARS):
            raise TypeError(f"{func}(): argument 'x' must be an array, got a Python {type(x).__name__}")
        x = _as_array(x, func, "x")
    check_dtype(x._dtype, "real numeric", func, "x")
    xd = x._dtype
    bounds = []
    for name, b in (("min", min), ("max", max)):
        if b is None:
            bounds.append(None)
            continue
        if isinstance(b, _PY_SCALARS) and not isinstance(b, TiArray):
            if isinstance(b, (complex, np.complexfloating)) or isinstance(b, (bool, np.bool_)):
                raise TypeError(
                    f"{func}(): argument '{name}' must be an int, a float, an array or None, got {b!r}"
                )
            if xd.kind in "iu":
                if isinstance(b, (float, np.floating)):
                    raise TypeError(
                        f"{func}(): argument '{name}' must be an integer when 'x' has an integer dtype "
                        f"({xd.name}), got {b!r}"
                    )
                info = np.iinfo(xd.numpy)
                b = builtins.min(builtins.max(int(b), int(info.min)), int(info.max))
            bounds.append(_scalar_array(b, xd, func, name))
        else:
            if type(b) is not TiArray:
                b = _as_array(b, func, name)
            check_dtype(b._dtype, "real numeric", func, name)
            if (xd.kind in "iu") != (b._dtype.kind in "iu"):
                raise TypeError(
                    f"{func}(): argument '{name}' has dtype {b._dtype.name} but 'x' has dtype {xd.name}; "
                    "mixing integer and floating dtypes in clip is not supported"
                )
            bounds.append(b)
    present = [b for b in bounds if b is not None]
    if not present:
        out = empty_owned(x._shape, xd, x._device)
        _run(_identity_plan(xd), out, [x])
        return out
    dts = (xd,) + tuple(b._dtype for b in present)
    key = (func, bounds[0] is not None, bounds[1] is not None) + dts
    plan = _PLANS.get(key)
    if plan is None:
        pd = _result_dtype(func, dts)
        ops = _CLIP_IMPLS[(bounds[0] is not None, bounds[1] is not None)]
        plan = _Plan(xd, _op(ops[pd.kind]), _compute_type(pd), dts, pd)
        _PLANS[key] = plan
    shape = broadcast_shapes(x._shape, *[b._shape for b in present], func=func)
    dev = _pick_device(func, [x] + present)
    out = empty_owned(shape, xd, dev)
    return _run(plan, out, [x] + present)


def _identity_plan(dtype: DType) -> _Plan:
    key = ("positive", dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _Plan(
            dtype, _op("identity"), _compute_type(_dtypes.finfo_dtype(dtype)), (dtype,), dtype
        )
    return plan


# ============================================================================= operators


def _is_operand(x) -> bool:
    return (
        type(x) is TiArray
        or isinstance(x, _PY_SCALARS)
        or hasattr(x, "__dlpack__")
        or hasattr(x, "__array_interface__")
        or hasattr(x, "__array__")
    )


_OPSYM = {
    "add": "+", "subtract": "-", "multiply": "*", "divide": "/", "floor_divide": "//",
    "remainder": "%", "pow": "**", "matmul": "@", "bitwise_and": "&", "bitwise_or": "|",
    "bitwise_xor": "^", "bitwise_left_shift": "<<", "bitwise_right_shift": ">>",
}  # fmt: skip


def _matmul():
    f = getattr(sys.modules["tiarray"], "matmul", None)
    if f is None:
        raise TypeError("the @ operator needs tiarray.matmul, which is not available in this build")
    return f


def _binary_operator(fname: str, self: TiArray, other, reflected: bool = False):
    """The TiArray dunders ``__add__``, ``__radd__``, ``__lt__`` ... (array API operators).

    Returns ``NotImplemented`` for operands that are neither arrays nor Python scalars, so
    that Python can try the other operand's method.
    """
    if not _is_operand(other):
        return NotImplemented
    if fname == "matmul":
        if isinstance(other, _PY_SCALARS):
            return NotImplemented
        if type(other) is not TiArray:  # a NumPy array, torch tensor ...: as for the other operators
            other = _as_array(other, "matmul", "x1" if reflected else "x2")
        mm = _matmul()
        return mm(other, self) if reflected else mm(self, other)
    if reflected:
        return _binary(fname, other, self)
    return _binary(fname, self, other)


def _inplace_operator(fname: str, self: TiArray, other):
    """The in-place dunders (``__iadd__`` ...): compute into ``self``'s memory.

    The standard requires the result to keep ``self``'s dtype and shape: a promotion that
    would change the dtype raises ``TypeError``, a broadcast that would change the shape
    ``ValueError``. Read-only arrays raise ``ValueError``.
    """
    if not _is_operand(other):
        return NotImplemented
    sym = _OPSYM.get(fname, fname) + "="
    where_ = f"TiArray.__i{fname}__ ({sym})"
    if self._readonly:
        raise ValueError(
            f"{where_}: the array is read-only (a broadcast view, or a view of memory its producer does not "
            "let others write, e.g. a JAX array); copy it first with tiarray.asarray(x, copy=True)"
        )
    if fname == "matmul":
        if type(other) is not TiArray:
            other = _as_array(other, "matmul", "x2")
        res = _matmul()(self, other)
        if res._dtype is not self._dtype or res._shape != self._shape:
            raise TypeError(
                f"{where_}: the result has dtype {res._dtype.name} and shape {res._shape}; "
                f"in place it must keep the array's dtype {self._dtype.name} and shape {self._shape}"
            )
        from ._kernels.copy import copy_into

        copy_into(self, res)
        return self
    if type(other) is not TiArray:
        other = _operands(fname, (self, other), ("x1", "x2"))[1]
    key = (fname, self._dtype, other._dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _make_plan(fname, (self._dtype, other._dtype))
    if plan.out_dtype is not self._dtype:
        raise TypeError(
            f"{where_}: the result dtype {plan.out_dtype.name} ({self._dtype.name} {_OPSYM.get(fname, fname)} "
            f"{other._dtype.name}) differs from the array's dtype {self._dtype.name}; in-place operations "
            "must keep the dtype"
        )
    shape = broadcast_shapes(self._shape, other._shape, func=where_)
    if shape != self._shape:
        raise ValueError(
            f"{where_}: operand shape {other._shape} would broadcast the array's shape {self._shape} "
            f"to {shape}; in-place operations must keep the shape"
        )
    _pick_device(where_, (self, other))
    if other is not self and _overlaps(self, other) and not _same_layout(self, other):
        other = copy_array(other)
    _run(plan, self, [self, other], fresh=False)
    return self


def _overlaps(a: TiArray, b: TiArray) -> bool:
    if a._device != b._device or a.size == 0 or b.size == 0:
        return False
    alo, ahi = a._byte_extent()
    blo, bhi = b._byte_extent()
    return alo < bhi and blo < ahi


def _same_layout(a: TiArray, b: TiArray) -> bool:
    if a._ptr != b._ptr or a._dtype.itemsize != b._dtype.itemsize:
        return False
    bv = broadcast_view(b, a._shape)
    return builtins.all(s == 1 or st == sb for s, st, sb in zip(a._shape, a._strides, bv._strides))


# ============================================================================= generated functions

_DOC_CATEGORY = {
    "numeric": "a numeric dtype (integer, real or complex floating; not bool)",
    "real numeric": "a real numeric dtype (integer or real floating)",
    "integer": "an integer dtype",
    "integer or boolean": "an integer or boolean dtype",
    "boolean": "the boolean dtype",
    "floating-point": "a floating-point dtype (real or complex)",
    "real floating-point": "a real floating-point dtype",
    "complex floating-point": "a complex floating-point dtype",
    "all": "any dtype",
}

_DOC_RESULT = {
    "same": "the dtype of the input" + "",
    "bool": "``bool``",
    "real": "the real dtype of the same precision for complex input (``complex64 -> float32``), "
    "the input's dtype otherwise",
    "float": "the promoted dtype for floating input; the default real floating dtype (float64) for integer input",
}


def _make_docstring(name: str, nin: int) -> str:
    from ._elementwise_docs import DOCS

    category, rule = (UNARY if nin == 1 else BINARY)[name][:2]
    summary, details, example = DOCS[name]
    res = _DOC_RESULT[rule]
    if nin == 2 and rule == "same":
        res = "the dtype of ``x1`` and ``x2`` after type promotion"
    if nin == 1:
        params = f"""x : TiArray
    Input array; must have {_DOC_CATEGORY[category]}."""
        raises = f"""TypeError
    If ``x`` is not an array or its dtype is not {category}."""
    else:
        params = f"""x1, x2 : TiArray or Python scalar
    Input arrays (at most one a Python scalar, which takes the other's dtype); must have
    {_DOC_CATEGORY[category]}. They are broadcast together."""
        raises = f"""TypeError
    If an argument's dtype is not {category}, the dtypes do not promote, or both
    arguments are Python scalars.
OverflowError
    If a Python int does not fit the dtype of the array next to it.
ValueError
    If the shapes do not broadcast or the arrays are on different devices."""
    call, result = example
    return f"""{summary}

{details}

Parameters
----------
{params}

Returns
-------
TiArray
    A new array with {res}.

Raises
------
{raises}

Examples
--------
>>> import tiarray as ta
>>> {call}
{result}
"""


def _make_unary(name: str):
    def f(x, /):
        return _unary(name, x)

    f.__name__ = f.__qualname__ = name
    f.__module__ = "tiarray"
    f.__doc__ = _make_docstring(name, 1)
    return f


def _make_binary(name: str):
    def f(x1, x2, /):
        return _binary(name, x1, x2)

    f.__name__ = f.__qualname__ = name
    f.__module__ = "tiarray"
    f.__doc__ = _make_docstring(name, 2)
    return f


_FUNCS = {name: _make_unary(name) for name in UNARY}
_FUNCS.update({name: _make_binary(name) for name in BINARY})
_FUNCS["clip"] = clip
_FUNCS["where"] = where
where.__module__ = clip.__module__ = "tiarray"

# The generated functions, bound to module names (in the order of ``__all__``).
(
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, bitwise_and, bitwise_left_shift,
    bitwise_invert, bitwise_or, bitwise_right_shift, bitwise_xor, ceil, clip, conj, copysign, cos,
    cosh, divide, equal, exp, expm1, floor, floor_divide, greater, greater_equal, hypot, imag,
    isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp, logical_and,
    logical_not, logical_or, logical_xor, maximum, minimum, multiply, negative, nextafter,
    not_equal, positive, pow, real, reciprocal, remainder, round, sign, signbit, sin, sinh, square,
    sqrt, subtract, tan, tanh, trunc, where,
) = [_FUNCS[name] for name in __all__]  # fmt: skip
assert all(globals()[name] is _FUNCS[name] for name in __all__)
