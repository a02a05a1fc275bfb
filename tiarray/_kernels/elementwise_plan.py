"""The element-wise planner: how one call of an element-wise function runs.

A *plan* is everything about one (function, input dtypes) that does not depend on the
call: the operation (:mod:`tiarray._kernels.elementwise_ops`), the compute type, how each
operand is loaded, the compiled specs (per program), and the operation's ``speed`` for
the serial/parallel choice (the cost table ``_OP_NS``). ``_run`` executes a plan on
operands broadcast to an output: contiguous real data of branch-free operations in the
span kernels (real functions LLVM vectorises), large contiguous data in the lane-blocked
kernels, everything else in the generic strided kernels of
:mod:`tiarray._kernels.elementwise`.
"""

from __future__ import annotations

import builtins

import numpy as np

from .. import _dtypes, _launch, _runtime
from .._array_object import MemoryKeeper, TiArray
from .._backend import ti
from .._buffer import empty_owned
from .._dtypes import DType
from .._launch import IEEE, Launcher
from .._validate import check_dtype
from .._views import broadcast_view, collapse
from . import reduce as _kr
from .elementwise_ops import _IMPLS, BINARY, UNARY

# The kernel module (about 150 Taichi functions) is imported on first use, not with tiarray.
_K = []


def _kmod():
    if not _K:
        from . import elementwise

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
    for x in xs:
        if x._owner.__class__ is MemoryKeeper:
            x._owner.check()
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
    axes = tuple(range(x.ndim))
    ext = []
    for op in (_kr.MAX, _kr.MIN):
        r = empty_owned((), x._dtype, x._device)
        _kr.reduce_into(r, x, axes, op, x._dtype)
        ext.append(float(r))
    hi, lo = ext
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


def _identity_plan(dtype: DType) -> _Plan:
    key = ("positive", dtype)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _PLANS[key] = _Plan(
            dtype, _op("identity"), _compute_type(_dtypes.finfo_dtype(dtype)), (dtype,), dtype
        )
    return plan
