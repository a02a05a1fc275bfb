"""The TiArray operators (array API "Operators"): ``+``, ``<``, ``&``, ``@``, ``+=`` ...

Each dunder calls the namespace function of the same operation (``__add__`` ->
:func:`tiarray.add`, ``__matmul__`` -> :func:`tiarray.matmul`, looked up in the namespace
module ``tiarray/__init__`` attaches to the array object, so a replaced namespace function
is what ``@`` and the unary operators call). They need layers above the array object, so
this module attaches them to ``TiArray`` when it is imported (by ``tiarray/__init__``).
"""

from __future__ import annotations

import builtins

from ._array_object import _NAMESPACE, TiArray
from ._elementwise_functions import _PY_SCALARS, _as_array, _binary, _operands, _pick_device
from ._kernels.copy import copy_array, copy_into
from ._kernels.elementwise_plan import _PLANS, _make_plan, _run
from ._views import broadcast_shapes, broadcast_view

__all__ = []


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
        mm = _NAMESPACE[0].matmul
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
        res = _NAMESPACE[0].matmul(self, other)
        if res._dtype is not self._dtype or res._shape != self._shape:
            raise TypeError(
                f"{where_}: the result has dtype {res._dtype.name} and shape {res._shape}; "
                f"in place it must keep the array's dtype {self._dtype.name} and shape {self._shape}"
            )
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


def _install_operators():
    """Arithmetic, comparison and bitwise dunders, each calling the namespace function."""
    binary = {
        "add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
        "floordiv": "floor_divide", "mod": "remainder", "pow": "pow", "matmul": "matmul",
        "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
        "lshift": "bitwise_left_shift", "rshift": "bitwise_right_shift",
    }  # fmt: skip
    compare = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
               "eq": "equal", "ne": "not_equal"}  # fmt: skip
    unary = {"neg": "negative", "pos": "positive", "abs": "abs", "invert": "bitwise_invert"}

    def make_binary(fname):
        def op(self, other):
            return _binary_operator(fname, self, other, False)

        def rop(self, other):
            return _binary_operator(fname, self, other, True)

        def iop(self, other):
            return _inplace_operator(fname, self, other)

        return op, rop, iop

    for d, fname in binary.items():
        op, rop, iop = make_binary(fname)
        for name, f in ((f"__{d}__", op), (f"__r{d}__", rop), (f"__i{d}__", iop)):
            f.__name__ = name
            f.__qualname__ = f"TiArray.{name}"
            f.__doc__ = f"``{name}``: calls :func:`tiarray.{fname}`."
            setattr(TiArray, name, f)

    for d, fname in compare.items():

        def make(fname):
            def op(self, other):
                return _binary_operator(fname, self, other, False)

            return op

        f = make(fname)
        f.__name__ = f"__{d}__"
        f.__qualname__ = f"TiArray.__{d}__"
        f.__doc__ = f"``__{d}__``: calls :func:`tiarray.{fname}`."
        setattr(TiArray, f"__{d}__", f)

    for d, fname in unary.items():

        def make(fname):
            def op(self):
                return getattr(_NAMESPACE[0], fname)(self)

            return op

        f = make(fname)
        f.__name__ = f"__{d}__"
        f.__qualname__ = f"TiArray.__{d}__"
        f.__doc__ = f"``__{d}__``: calls :func:`tiarray.{fname}`."
        setattr(TiArray, f"__{d}__", f)


_install_operators()


_install_operators()
