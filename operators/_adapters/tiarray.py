"""TiArray adapter: TiArrays (and ``ti.ndarray``) in, TiArrays out, eagerly.

Inputs are passed by pointer (a strided input is first copied to contiguous memory);
outputs are new zero-filled TiArrays on Taichi's device.
"""

from __future__ import annotations

import functools

import numpy as np

from tiarray._internal import TiArray, copy_array, current_device, empty_owned, view_of
from tiarray._internal import dtypes as _dtypes

from ._eager import (
    CACHES,
    HostInputs,
    ensure_init,
    guard_checks,
    host_view,
    make_plan,
    not_an_array,
    program,
    run_plan,
    runner_inputs,
    scratch_outs,
    set_runners,
)

_empty_owned = empty_owned

__all__ = ["call"]


def _as_tiarray(op, args):
    out = []
    for a in args:
        if isinstance(a, TiArray):
            out.append(a)
        elif hasattr(a, "shape") and not isinstance(a, (int, float, bool)):
            t = view_of(a, op.name)
            out.append(a if t is None else t)
        else:
            out.append(a)
    return out


def _build(op, skey, args, key):
    params = op._params
    op._check_nargs(len(args))
    in_sds = []
    device = None
    for i, a in enumerate(args):
        p = params[i]
        if isinstance(a, TiArray):
            if device is None:
                device = a._device
            elif a._device != device:
                raise TypeError(
                    f"{op.name}: argument '{p.name}' lives on {a._device}, other arguments on {device}"
                )
            if not p.is_array and a.ndim == 0:
                in_sds.append((p.dtype, ()))
            else:
                in_sds.append((a._dtype, a._shape))
        else:
            if p.is_array:
                raise not_an_array(op, i, a)
            in_sds.append((p.dtype, ()))
    kind = device.kind if device is not None else "cpu"
    plan = make_plan(op, skey, tuple(in_sds), "TiArray", kind)
    plan.native_out = device
    if kind == "cpu" and plan.alias is None:
        # the whole call as generated code, and its twin for Operator.__call__'s fast path
        # (None where they do not apply); plans with scratch or a per-call variant (the
        # sparse products) get one per variant
        dev = device if device is not None else current_device()
        ins = runner_inputs(plan, args, TiArray)
        outs = [
            (functools.partial(_empty_owned, sh, d, dev, zero=True), nb, ls)
            for sh, d, nb, ls in zip(plan.out_shapes, plan.out_dtypes, plan.out_nbytes, plan.out_launch)
        ]
        names = {"TA": TiArray, "EO": _empty_owned, "DEV": dev}
        checks = guard_checks(args, TiArray, names, tname="TA", dtype="_dtype", shape="_shape")
        scratch = scratch_outs(
            plan, names, lambda shape, d: f"EO({shape!r}, {d}, DEV, zero=True)", lambda d: d,
            lambda: _empty_owned((1,), _dtypes.float64, dev, zero=True),
        )  # fmt: skip
        set_runners(
            plan, skey, ins, outs, ready="{a}._is_c_contiguous()", ptr="{a}._ptr", names=names, checks=checks,
            scratch=scratch, hosts=_hosts,
        )  # fmt: skip
    op._plans[key] = plan
    return plan


def _hosts(args):
    """What a per-call policy reads of a call's arguments: NumPy views of the TiArrays, made
    when read (the policy runs before the runner checks that the inputs are contiguous)."""
    return HostInputs(len(args), lambda i: _host(args[i]))


def _host(a):
    if not isinstance(a, TiArray):
        return a
    if a._is_c_contiguous():
        return host_view(a._ptr, a._shape, a._dtype)
    return np.asarray(a)  # strided (its own strides: a contiguous view would read past it)


def call(op, args, static):
    skey = op._static_key(static) if static else ()
    key = ["tiarray", skey]
    for a in args:
        if isinstance(a, TiArray):
            key.append((a._dtype, a._shape))
        elif hasattr(a, "shape"):  # a ti.ndarray: through a TiArray view
            args = _as_tiarray(op, args)
            key = (
                "tiarray",
                skey,
                *[(a._dtype, a._shape) if isinstance(a, TiArray) else type(a) for a in args],
            )
            break
        else:
            key.append(type(a))
    key = tuple(key)
    if program() is not CACHES.prog:  # first call, or Taichi was reset
        ensure_init()
    plan = op._plans.get(key)
    if plan is None:
        plan = _build(op, skey, args, key)
    res = run_plan(op, plan, args)
    if res is not None:
        return res
    vals = []
    keep = []
    for conv, shp, a in zip(plan.in_conv, plan.in_shapes, args):
        if conv is None:
            if not a._is_c_contiguous():
                a = copy_array(a)
                keep.append(a)
            vals.append((a._ptr, a._nbytes(), shp))
        else:
            vals.append(conv(a.item() if isinstance(a, TiArray) else a))
    outs = []
    device = plan.native_out
    if device is None:
        device = current_device()
    alias = plan.alias
    for j, (shape, d, nb, ls) in enumerate(
        zip(plan.out_shapes, plan.out_dtypes, plan.out_nbytes, plan.out_launch)
    ):
        if alias is None or alias[j] is None:
            o = _empty_owned(shape, d, device, zero=True)
        else:  # the output starts as a copy of its input (Operator aliases)
            o = copy_array(args[alias[j]])
        outs.append(o)
        vals.append((o._ptr, nb, ls))
    if plan.extra:
        n_in = len(args)

        def host(i):
            v = vals[i]
            if plan.in_conv[i] is not None:
                return v
            return host_view(v[0], plan.res.in_sds[i].shape, plan.res.in_sds[i].dtype)

        spec, scratch = plan.select(HostInputs(n_in, host))
        for shape, ls, nb, d in scratch:
            o = _empty_owned(shape, d, device, zero=True)
            keep.append(o)
            vals.append((o._ptr or 1, nb, ls))
        spec.launch(vals)
    else:
        plan.spec.launch(vals)
    del keep
    return outs[0] if plan.single else tuple(outs)
