"""Element-wise functions (array API 2024.12) and ``where``.

Every function is generated from one row of a table (:mod:`tiarray._kernels.elementwise_ops`)::

    name: (dtype category, result rule, {compute kinds: Taichi operation})

and runs through the element-wise planner (:mod:`tiarray._kernels.elementwise_plan`). This
module converts the operands (Python scalars, other libraries' arrays), picks the
device and the output, and generates the public functions with their docstrings. The
TiArray operators (``+``, ``<`` ...) are in :mod:`tiarray._array_operators`.

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

import numpy as np

from . import _dtypes, _runtime
from ._array_object import TiArray
from ._backend import ti
from ._buffer import empty_owned
from ._dtypes import DType
from ._interchange import asarray
from ._kernels.elementwise_ops import _CLIP_IMPLS, _WHERE_IMPLS, BINARY, UNARY
from ._kernels.elementwise_plan import (
    _PLANS,
    _compute_type,
    _identity_plan,
    _make_plan,
    _op,
    _Plan,
    _result_dtype,
    _run,
)
from ._validate import check_dtype
from ._views import broadcast_shapes

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
    try:
        a = np.array(value, dtype=dtype._np)
    except OverflowError:  # an int past the float range (NumPy raises the same, without names)
        raise OverflowError(
            f"{func}(): argument '{arg}': a Python int of {len(str(int(value)).lstrip('-'))} digits is too large for the "
            f"array's dtype {dtype.name}"
        ) from None
    return TiArray._new(a.ctypes.data, (), (), dtype, _runtime.CPU, a, True)


def _as_array(x, func: str, arg: str) -> TiArray:
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
