"""What the eager adapters (NumPy, TiArray, torch, CuPy) share: the per-call plan.

A plan is everything a call decides from its signature (static parameters, the dtype and
shape of each input): the compiled kernel spec, how each input becomes a launch value,
the outputs to allocate. Adapters cache plans in ``op._plans`` under a key they build
from what they can read cheaply, so a repeated call costs a dict lookup, the pointer
reads, the output allocation and the launch.
"""

from __future__ import annotations

from taichi.lang import impl as _ti_impl

from tiarray import _runtime
from tiarray._launch import _P_FLOAT

__all__ = ["Plan", "make_plan"]


class Plan:
    __slots__ = (
        "res",  # the operator's _Resolved
        "spec",  # compiled Launcher spec
        "prog",  # Taichi program the spec belongs to
        "in_conv",  # per input: None (array) or a scalar converter (float / int)
        "in_shapes",  # per input: launch shape of an array input (None for scalars)
        "in_nbytes",  # per input: bytes of an array input (None for scalars)
        "out_shapes",  # per output: the array shape
        "out_launch",  # per output: launch shape (complex: trailing 2)
        "out_nbytes",  # per output: bytes
        "out_dtypes",  # per output: tiarray DType
        "single",
        "native_out",  # per output: the framework's dtype object (filled by the adapter)
    )


def _launch_shape(sd):
    return sd.shape + (2,) if sd.dtype.kind == "c" else sd.shape


def make_plan(op, skey, in_sds, fw: str, device_kind: str) -> Plan:
    """Build a plan for a call whose inputs have ``in_sds`` (``(DType, shape)`` per input)."""
    dev = _runtime.current_device()
    if dev.kind != device_kind:
        raise TypeError(
            f"{op.name}: the {fw} arrays live on {device_kind}, but Taichi computes on {dev}; "
            f"move the arrays to {dev} (or start Taichi on {device_kind} with tiarray.init)"
        )
    res = op._resolve(in_sds, skey)
    p = Plan()
    p.res = res
    p.spec = op._spec(res, dev.kind)
    p.prog = _ti_impl.get_runtime().prog
    conv = []
    shapes = []
    nbytes = []
    for prm, sd in zip(op._params, res.in_sds):
        if prm.is_array:
            conv.append(None)
            shapes.append(_launch_shape(sd))
            nbytes.append(sd.size * sd.dtype.itemsize)
        else:
            conv.append(float if prm.kind == _P_FLOAT else int)
            shapes.append(None)
            nbytes.append(None)
    p.in_conv = tuple(conv)
    p.in_shapes = tuple(shapes)
    p.in_nbytes = tuple(nbytes)
    p.out_shapes = tuple(o.shape for o in res.outs)
    p.out_launch = tuple(_launch_shape(o) for o in res.outs)
    p.out_nbytes = tuple(o.size * o.dtype.itemsize for o in res.outs)
    p.out_dtypes = tuple(o.dtype for o in res.outs)
    p.single = res.single
    p.native_out = None
    return p


def plan_is_current(p: Plan) -> bool:
    """False once Taichi was reset (``ti.reset``/``ti.init``) since the plan was made."""
    return p.prog is _ti_impl.get_runtime().prog


def scalar_sig(prm_dtype):
    return (prm_dtype, ())


def not_an_array(op, i, a):
    p = op._params[i]
    return TypeError(
        f"{op.name}: argument '{p.name}' must be an array (the kernel's parameter is a "
        f"ti.types.ndarray), got {type(a).__name__}"
    )
