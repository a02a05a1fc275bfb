"""Autodiff and batching rules shared by the sparse products (CSR, fixed-number, COO).

Each product has the inputs ``(weights, *structure, x)``: the weights (one shared weight,
shape ``()``, or one per synapse), the index arrays that place the synapses (CSR:
``indices, indptr``; fixed-number: ``indices``; COO: ``row, col``) and the operand ``x``
(a vector, a matrix, events). It is linear in ``weights`` and in ``x``; the rules are
products again, so that second derivatives work:

- ``x``: ``op(w, *structure, ct, transpose=not transpose)``;
- per-synapse ``w``: the sampled product ``sddmm(*structure, a, b)`` with
  ``out_j = sum_c a[row(j), c] b[col(j), c]`` and ``(a, b) = (ct, x)`` (``transpose=False``)
  or ``(x, ct)`` (``True``);
- one shared ``w``: ``<ct, op(1, *structure, x)>``.

Batching: ``vmap`` over ``x`` of an ``mv`` operator is one launch of its ``mm`` operator
(the batch becomes the columns); of an ``mm`` operator, the batch is folded into the
columns. A batched weight or structure runs one call per batch element.

A *route* Operator (the column routes of ``event_csrmv``/``event_fcnmv``, the source route
of ``event_coomv``) takes its product's inputs and then the cached index arrays; its parts
are the product's, on the first inputs (:func:`route_parts`).

The rules receive the framework's arrays (see ``docs/operators.md``); operators are looked
up at call time through the ``op_of(name)`` function of the defining module, since the
rules are made before the Operators exist.
"""

from __future__ import annotations

from .._operator import UndefinedPrimal
from . import _xp

__all__ = [
    "product_transpose",
    "sddmm_transpose",
    "mv_batch",
    "mm_batch",
    "loop_batch",
    "route_parts",
    "is_bool",
]


def is_bool(x) -> bool:
    return _xp.dtype_of(x).kind == "b"


def product_transpose(op_of, name: str, sddmm: str):
    """Transpose rule of ``y = op(w, *structure, x)``, linear in ``w`` and in ``x``."""

    def rule(cts, primals, *, shape, transpose):
        (ct,) = cts
        w, struct, x = primals[0], primals[1:-1], primals[-1]
        op = op_of(name)
        res = [None] * len(primals)
        if isinstance(x, UndefinedPrimal):
            # d<ct, A x>/dx = A^T ct (the same operator, other direction)
            res[-1] = _xp.astype(op(w, *struct, ct, shape=shape, transpose=not transpose), x.dtype)
        if isinstance(w, UndefinedPrimal):
            if len(w.shape) == 0:
                # one shared weight: y = w * (A_1 x), so d<ct, y>/dw = <ct, A_1 x>
                y1 = op(_xp.full((), 1, w.dtype, ct), *struct, x, shape=shape, transpose=transpose)
                g = (ct * y1).sum().reshape(())
            else:
                # per synapse j (row i, column k): dy/dw_j pairs ct and x through (i, k)
                xf = _xp.astype(x, w.dtype) if is_bool(x) else x
                a, b = (xf, ct) if transpose else (ct, xf)
                g = op_of(sddmm)(*struct, a, b, shape=shape)
            res[0] = _xp.astype(g, w.dtype)
        return tuple(res)

    return rule


def sddmm_transpose(op_of, mv: str, mm: str):
    """Transpose rule of ``out = sddmm(*structure, a, b)``, linear in ``a`` and in ``b``."""

    def rule(cts, primals, *, shape):
        (ct,) = cts
        struct, a, b = primals[:-2], primals[-2], primals[-1]
        res = [None] * len(primals)
        op = op_of(mm if len(a.shape) == 2 else mv)
        if isinstance(a, UndefinedPrimal):  # da[i] = sum_{j in row i} ct_j b[col_j]
            res[-2] = _xp.astype(op(ct, *struct, b, shape=shape, transpose=False), a.dtype)
        if isinstance(b, UndefinedPrimal):  # db[k] = sum_{j: col_j = k} ct_j a[row_j]
            res[-1] = _xp.astype(op(ct, *struct, a, shape=shape, transpose=True), b.dtype)
        return tuple(res)

    return rule


def loop_batch(op, args, axes, static):
    """vmap by one call per batch element (batched connectivity, weights or seeds): ``lax.map``
    under JAX (one launch per element in a loop, not an unrolled graph), a loop elsewhere."""
    size = next(a.shape[ax] for a, ax in zip(args, axes) if ax is not None)
    moved = [None if ax is None else _xp.moveaxis(a, ax, 0) for a, ax in zip(args, axes)]
    if _xp.fw_of(*args) == "jax":
        idx = [i for i, m in enumerate(moved) if m is not None]

        def one(batched):
            call = list(args)
            for i, v in zip(idx, batched):
                call[i] = v
            return op(*call, **static)

        return _xp.jax_map(one, tuple(moved[i] for i in idx)), 0
    outs = []
    for b in range(size):
        call = [a if m is None else m[b] for a, m in zip(args, moved)]
        outs.append(op(*call, **static))
    return _xp.stack(outs, 0), 0


def mv_batch(op_of, name: str, mm_name: str, operand: int = -1):
    """vmap of an ``mv`` product over its operand (input ``operand``, the last by default): one
    ``mm`` launch."""

    def rule(args, axes, **static):
        i = operand % len(args)
        if all(ax is None for j, ax in enumerate(axes) if j != i):
            a = list(args)
            a[i] = _xp.moveaxis(args[i], axes[i], 1)  # (length, batch): the batch becomes the columns
            return op_of(mm_name)(*a, **static), 1
        return loop_batch(op_of(name), args, axes, static)

    return rule


def mm_batch(op_of, name: str, operand: int = -1):
    """vmap of an ``mm`` product over its dense operand: the batch is folded into the columns."""

    def rule(args, axes, **static):
        i = operand % len(args)
        if all(ax is None for j, ax in enumerate(axes) if j != i):
            xb = _xp.moveaxis(args[i], axes[i], 1)  # (length, batch, k)
            length, b, k = xb.shape
            a = list(args)
            a[i] = xb.reshape(length, b * k)
            y = op_of(name)(*a, **static)
            return y.reshape(y.shape[0], b, k), 1
        return loop_batch(op_of(name), args, axes, static)

    return rule


def route_parts(op_of, product: str, sddmm: str, mm_name: str, route: str, n: int, *, outs, scratch,
                policy, fixed=None):  # fmt: skip
    """``outs``, ``transpose``, ``batch``, ``scratch`` and ``policy`` of the Operator ``route``,
    whose first ``n`` inputs are those of ``product`` (the last of them its operand) and
    whose further inputs are an index of the structure (no cotangent, never batched alone).
    ``fixed``: static arguments of ``product`` that ``route`` does not take
    (``transpose=False`` for the column routes). Rules: ``product``'s; ``vmap`` over the
    operand: one ``mm_name`` launch; anything else batched: one call each."""
    fixed = fixed or {}
    rule = product_transpose(op_of, product, sddmm)

    def first(f):
        return lambda *a, **static: f(*a[:n], **static, **fixed)

    def transpose(cts, primals, **static):
        return rule(cts, primals[:n], **static, **fixed) + (None,) * (len(primals) - n)

    def batch(args, axes, **static):
        i = n - 1
        if all(ax is None for j, ax in enumerate(axes) if j != i):
            x = _xp.moveaxis(args[i], axes[i], 1)
            return op_of(mm_name)(*args[:i], x, **static, **fixed), 1
        return loop_batch(op_of(route), args, axes, static)

    return dict(
        outs=first(outs), transpose=transpose, batch=batch, scratch=first(scratch), policy=first(policy)
    )
