"""CuPy adapter: CuPy arrays in, CuPy arrays out, eagerly, on Taichi's CUDA runtime.

Taichi must run on CUDA (``tiarray.init("cuda")``) on the arrays' device. Inputs are
passed by pointer (non-contiguous ones are copied first), outputs are new zero-filled
CuPy arrays. Stream ordering: the launch waits for the work queued on CuPy's current
stream and CuPy's stream waits for the launch (CUDA events, no host synchronisation).
Not tested in CI (no GPU): ``benchmarks/gpu_check.py`` checks it on a GPU.
"""

from __future__ import annotations

import cupy

from tiarray import _internal as _core
from tiarray._internal import dtypes as _dtypes

from . import _cuda_ops
from ._eager import CACHES, ensure_init, make_plan, not_an_array, program

__all__ = ["call"]

_ndarray = cupy.ndarray


def _build(op, skey, args, key):  # pragma: no cover - needs a GPU
    params = op._params
    op._check_nargs(len(args))
    in_sds = []
    dev = _core.current_device()
    for i, a in enumerate(args):
        p = params[i]
        if isinstance(a, _ndarray):
            d = _dtypes.from_numpy_dtype(a.dtype)
            if d is None:
                raise TypeError(
                    f"{op.name}: argument '{p.name}' has dtype {a.dtype}, which tiarray does not support"
                )
            if dev.kind == "cuda" and a.device.id != dev.index:
                raise TypeError(
                    f"{op.name}: argument '{p.name}' lives on cuda:{a.device.id}, but Taichi computes on {dev}"
                )
            if not p.is_array and a.ndim == 0:
                in_sds.append((p.dtype, ()))
            else:
                in_sds.append((d, a.shape))
        else:
            if p.is_array:
                raise not_an_array(op, i, a)
            in_sds.append((p.dtype, ()))
    plan = make_plan(op, skey, tuple(in_sds), "CuPy", "cuda")
    plan.native_out = tuple(d.numpy for d in plan.out_dtypes)
    op._plans[key] = plan
    return plan


def call(op, args, static):  # pragma: no cover - needs a GPU
    skey = op._static_key(static) if static else ()
    key = (
        "cupy",
        skey,
        *[(a.dtype, a.shape, a.device.id) if isinstance(a, _ndarray) else type(a) for a in args],
    )
    if program() is not CACHES.prog:  # first call, or Taichi was reset
        ensure_init()
    plan = op._plans.get(key)
    if plan is None:
        plan = _build(op, skey, args, key)
    vals = []
    keep = []
    for conv, shp, a in zip(plan.in_conv, plan.in_shapes, args):
        if conv is None:
            if not a.flags.c_contiguous:
                a = cupy.ascontiguousarray(a)
                keep.append(a)
            vals.append((a.data.ptr, a.nbytes, shp))
        else:
            vals.append(conv(a.item() if isinstance(a, _ndarray) else a))
    outs = []
    alias = plan.alias
    for j, (shape, npd, nb, ls) in enumerate(
        zip(plan.out_shapes, plan.native_out, plan.out_nbytes, plan.out_launch)
    ):
        if alias is None or alias[j] is None:
            o = cupy.zeros(shape, npd)  # zero-filled on CuPy's current stream
        else:  # the output starts as a copy of its input (Operator aliases), on the same stream
            o = cupy.array(args[alias[j]], dtype=npd, order="C", copy=True)
        outs.append(o)
        vals.append((o.data.ptr, nb, ls))
    spec = plan.spec
    if plan.extra:  # on the GPU: the parallel variant, no per-call policy
        spec, scratch = plan.select(())
        for shape, ls, nb, d in scratch:
            o = cupy.zeros(shape, d.numpy)
            keep.append(o)
            vals.append((o.data.ptr or 1, nb, ls))
    stream = cupy.cuda.get_current_stream().ptr
    _cuda_ops.order(stream, before=True)
    spec.launch(vals)
    _cuda_ops.order(stream, before=False)
    del keep
    return outs[0] if plan.single else tuple(outs)
