"""NumPy adapter: NumPy arrays in, NumPy arrays out, eagerly, without copies.

Inputs are passed to the kernel by pointer (a non-C-contiguous input is first copied to a
contiguous array); outputs are new zero-filled NumPy arrays (or copies of the input they
start from, for an Operator's ``aliases``). Taichi must run on the CPU.
"""

from __future__ import annotations

import numpy as np

from tiarray._internal import dtypes as _dtypes
from tiarray._internal import numpy_data_ptr as data_ptr

from ._eager import (
    CACHES,
    ensure_init,
    guard_checks,
    make_plan,
    not_an_array,
    program,
    run_plan,
    runner_inputs,
    scratch_outs,
    set_runners,
)

__all__ = ["call"]

_ndarray = np.ndarray
_zeros = np.zeros


_EMPTY = np.zeros(1, np.float64)
_EMPTY_PTR = _EMPTY.__array_interface__["data"][0]


def _np_dtype(op, i, a):
    d = _dtypes.from_numpy_dtype(a.dtype)
    if d is None:
        raise TypeError(
            f"{op.name}: argument '{op._params[i].name}' has NumPy dtype {a.dtype}, which tiarray does not "
            "support"
        )
    return d


def _build(op, skey, args, key):
    params = op._params
    op._check_nargs(len(args))
    in_sds = []
    for i, a in enumerate(args):
        p = params[i]
        if isinstance(a, _ndarray):
            d = _np_dtype(op, i, a)
            if not p.is_array and a.ndim == 0:
                in_sds.append((p.dtype, ()))
            else:
                in_sds.append((d, a.shape))
        else:
            if p.is_array:
                raise not_an_array(op, i, a)
            _check_scalar(op, i, a)
            in_sds.append((p.dtype, ()))
    plan = make_plan(op, skey, tuple(in_sds), "NumPy", "cpu")
    plan.native_out = tuple(d.numpy for d in plan.out_dtypes)
    if plan.alias is None:
        # the whole call as generated code (about 1 us less per call; None where it does not apply),
        # and the same checking its own signature for Operator.__call__'s fast path; scratch
        # buffers and a per-call variant too (an eager sparse product: 8.1 -> see _eager)
        ins = runner_inputs(plan, args)
        outs = [
            (f"Z({sh!r}, D{j})", nb, ls)
            for j, (sh, nb, ls) in enumerate(zip(plan.out_shapes, plan.out_nbytes, plan.out_launch))
        ]
        names = {
            "dp": data_ptr,
            "Z": _zeros,
            "nd": _ndarray,
            **{f"D{j}": d for j, d in enumerate(plan.native_out)},
        }
        checks = guard_checks(args, _ndarray, names, tname="nd", dtype="dtype", shape="shape")
        scratch = scratch_outs(
            plan,
            names,
            lambda shape, d: f"Z({shape!r}, {d})",
            lambda d: d.numpy,
            lambda: np.zeros(1, np.float64),
        )
        set_runners(
            plan, skey, ins, outs, ready="{a}.flags.c_contiguous", ptr="dp({a})", names=names, checks=checks,
            scratch=scratch,
        )  # fmt: skip
    op._plans[key] = plan
    return plan


def _check_scalar(op, i, a):
    if not isinstance(a, (int, float, np.number, np.bool_)) or isinstance(a, complex):
        raise TypeError(
            f"{op.name}: argument '{op._params[i].name}' is a scalar parameter; expected a number, got "
            f"{type(a).__name__}"
        )


def call(op, args, static):
    skey = op._static_key(static) if static else ()
    key = ("numpy", skey, *[(a.dtype, a.shape) if isinstance(a, _ndarray) else type(a) for a in args])
    if program() is not CACHES.prog:  # first call, or Taichi was reset
        ensure_init()
    plan = op._plans.get(key)
    if plan is None:
        plan = _build(op, skey, args, key)
    res = run_plan(op, plan, args)
    if res is not None:
        return res
    vals = []
    keep = None
    for conv, shp, a in zip(plan.in_conv, plan.in_shapes, args):
        if conv is None:
            if not a.flags.c_contiguous:
                a = np.ascontiguousarray(a)
                keep = (keep or []) + [a]
            vals.append((data_ptr(a), a.nbytes, shp))
        else:
            vals.append(conv(a))
    outs = []
    alias = plan.alias
    for j, (shape, npd, nb, ls) in enumerate(
        zip(plan.out_shapes, plan.native_out, plan.out_nbytes, plan.out_launch)
    ):
        if alias is None or alias[j] is None:
            o = _zeros(shape, npd)
        else:  # the output starts as a copy of its input (Operator aliases)
            o = np.array(args[alias[j]], dtype=npd, order="C", copy=True)
        outs.append(o)
        vals.append((data_ptr(o), nb, ls))
    if plan.extra:
        spec, scratch = plan.select(args if keep is None else [np.asarray(a, order="C") for a in args])
        for shape, ls, nb, d in scratch:
            if nb:
                o = _zeros(shape, d.numpy)
                keep = (keep or []) + [o]
                vals.append((data_ptr(o), nb, ls))
            else:  # nothing to zero: a constant non-null pointer (the launch context keeps it)
                vals.append((_EMPTY_PTR, 0, ls))
        spec.launch(vals)
    else:
        plan.spec.launch(vals)
    del keep
    return outs[0] if plan.single else tuple(outs)
