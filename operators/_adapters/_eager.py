"""What the eager adapters (NumPy, TiArray, torch, CuPy) share: the per-call plan.

A plan is everything a call decides from its signature (static parameters, the dtype and
shape of each input): the compiled kernel spec, how each input becomes a launch value,
the outputs to allocate. Adapters cache plans in ``op._plans`` under a key they build
from what they can read cheaply, so a repeated call costs a dict lookup, the pointer
reads, the output allocation and the launch. ``op._plans`` is a per-program cache
(cleared by the runtime's registry): a call first checks
``program() is not CACHES.prog`` and calls ``ensure_init()`` when it fails.
"""

from __future__ import annotations

from tiarray import _internal as _core
from tiarray._internal import host_runner

from .._operator import scalar_converter

__all__ = [
    "Plan", "make_plan", "runner_inputs", "remember_fast", "guard_checks", "set_runners", "scratch_outs", "run_plan",
]  # fmt: skip


class Plan:
    __slots__ = (
        "res",  # the operator's _Resolved
        "res_op",  # the Operator
        "spec",  # compiled Launcher spec
        "in_conv",  # per input: None (array) or a scalar converter (_operator.scalar_converter)
        "in_shapes",  # per input: launch shape of an array input (None for scalars)
        "in_nbytes",  # per input: bytes of an array input (None for scalars)
        "out_shapes",  # per output: the array shape
        "out_launch",  # per output: launch shape (complex: trailing 2)
        "out_nbytes",  # per output: bytes
        "out_dtypes",  # per output: tiarray DType
        "single",
        "native_out",  # per output: the framework's dtype object (filled by the adapter)
        "extra",  # scratch buffers or a per-call policy: the adapter calls select()
        "serial",  # the variant of `spec` (fixed for this signature unless `decide`)
        "specs",  # {serial: spec} when the variant is decided per call
        "scratch",  # {serial: ((shape, launch shape, nbytes, DType), ...)}
        "decide",  # per-call policy (CPU only) or None
        "alias",  # per output: the input it starts from (Operator aliases), or None; None without
        "runner",  # a launch specialised to the call (the NumPy adapter's), or None
        "fast",  # (static dict, guarded runner) for Operator.__call__'s fast path, or None
    )

    def select(self, host_inputs):
        """``(spec, scratch)`` of one launch: the per-call policy reads the inputs on the CPU."""
        if self.decide is None:
            return self.spec, self.scratch[self.serial]
        serial = self.res_op._serial_for(self.res, host_inputs)
        return self.specs[serial], self.scratch[serial]


def _launch_shape(sd):
    return sd.shape + (2,) if sd.dtype.kind == "c" else sd.shape


def make_plan(op, skey, in_sds, fw: str, device_kind: str) -> Plan:
    """Build a plan for a call whose inputs have ``in_sds`` (``(DType, shape)`` per input)."""
    dev = _core.current_device()
    if dev.kind != device_kind:
        raise TypeError(
            f"{op.name}: the {fw} arrays live on {device_kind}, but Taichi computes on {dev}; "
            f"move the arrays to {dev} (or start Taichi on {device_kind} with tiarray.init)"
        )
    res = op._resolve(in_sds, skey)
    p = Plan()
    p.res = res
    p.res_op = op
    p.spec = op._spec(res, dev.kind)
    p.serial = _spec_is_serial(op, res, dev.kind)
    p.decide = res.decide if dev.kind == "cpu" else None
    p.specs = None
    if p.decide is not None:
        p.specs = {s: op._spec(res, dev.kind, serial=s) for s in (False, True)}
    p.scratch = {
        s: tuple(
            (sd.shape, _launch_shape(sd), sd.size * sd.dtype.itemsize, sd.dtype) for sd in res.scratch[s]
        )
        for s in (False, True)
    }
    p.extra = bool(res.scratch[False]) or p.decide is not None
    conv = []
    shapes = []
    nbytes = []
    for prm, sd in zip(op._params, res.in_sds):
        if prm.is_array:
            conv.append(None)
            shapes.append(_launch_shape(sd))
            nbytes.append(sd.size * sd.dtype.itemsize)
        else:
            conv.append(scalar_converter(op.name, prm))
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
    p.alias = res.alias
    p.native_out = None
    p.runner = None
    p.fast = None
    return p


FAST_SLOTS = 4  # signatures per Operator on the fast path (a network calls one operator on a few)


def remember_fast(op, plan) -> None:
    """Put ``plan``'s guarded runner first on ``op``'s fast path (after the adapter's own
    route ran it, so only signatures that the runner takes are remembered)."""
    f = op._fast
    e = plan.fast
    if e is None or (f and f[0] is e):
        return
    op._fast = (e, *[x for x in f if x is not e][: FAST_SLOTS - 1])


def set_runners(
    plan, skey, ins, outs, *, ready, ptr, names, checks, pre="True", fast_ready=None, scratch=None, hosts=None
) -> None:
    """Generate a plan's eager launch (``plan.runner``, for the adapter's own route) and its
    twin that checks its signature itself (``plan.fast``: ``(static dict, runner)`` for
    ``Operator.__call__``'s fast path), both from ``host_runner``; ``checks`` (one expression
    per argument, :func:`guard_checks`) and ``pre`` guard the twin, which tests readiness with
    ``fast_ready`` (default ``ready``). Either stays None where ``host_runner`` does not apply.

    A plan with scratch buffers or a per-call variant (``plan.extra``) needs ``scratch``:
    ``scratch(serial)`` gives each variant's scratch buffers as ``outs`` gives the outputs
    (allocated zero-filled every call, passed after the outputs, not returned); one runner
    per variant, and the plan's runner evaluates the per-call policy on ``hosts(args)`` (what
    ``Plan.select`` reads: NumPy views; default ``args``) to choose one. Without ``scratch``
    such a plan keeps the adapter's generic path."""
    if plan.extra:
        if scratch is not None:
            _set_variant_runners(plan, skey, ins, outs, ready, ptr, names, checks, pre, scratch, hosts)
        return
    plan.runner = host_runner(plan.spec, ins, outs, plan.single, ready=ready, ptr=ptr, names=names)
    if plan.runner is None:
        return
    fast = host_runner(
        plan.spec,
        ins,
        outs,
        plan.single,
        ready=fast_ready or ready,
        ptr=ptr,
        names=names,
        guard=(pre, checks),
    )
    plan.fast = None if fast is None else (dict(skey), fast)


def scratch_outs(plan, names: dict, alloc, dtype, empty):
    """``set_runners``' ``scratch``: per variant, each scratch buffer as ``outs`` gives an
    output, ``alloc(shape, name)`` (an expression of ``names`` making a zero-filled array of
    the dtype ``names[name] = dtype(DType)``), or for one of no bytes a constant array of its
    own, ``empty()`` (a pointer no other argument has), allocated once."""

    def scratch(serial):
        res = []
        for k, (shape, ls, nb, d) in enumerate(plan.scratch[serial]):
            if nb:
                names[f"SD{k}"] = dtype(d)
                res.append((alloc(shape, f"SD{k}"), nb, ls))
            else:
                names[f"SE{int(serial)}{k}"] = empty()
                res.append((f"SE{int(serial)}{k}", 0, ls))
        return res

    return scratch


def _set_variant_runners(plan, skey, ins, outs, ready, ptr, names, checks, pre, scratch, hosts) -> None:
    variants = (False, True) if plan.decide is not None else (plan.serial,)
    runners = {}
    for s in variants:
        spec = plan.specs[s] if plan.specs is not None else plan.spec
        r = host_runner(
            spec, ins, [*outs, *scratch(s)], plan.single, ready=ready, ptr=ptr, names=names, n_ret=len(outs)
        )
        if r is None:
            return
        runners[s] = r
    if plan.decide is None:
        run = runners[plan.serial]
    else:
        run = _deciding(plan.decide, runners[True], runners[False], hosts)
    guard = _guard(checks, names, pre, len(ins))

    def fast(args):
        # the signature first (as the other fast runners do, in one test), then the plan's route
        return run(args) if guard(args) else None

    plan.runner = run
    plan.fast = (dict(skey), fast)


def _deciding(decide, serial, parallel, hosts):
    """A runner that evaluates the per-call policy ``decide`` (on ``hosts(args)``, else on
    ``args``) and runs the ``serial`` or ``parallel`` variant's runner; None (the generic path,
    which raises the policy's error) when the policy raises or answers something else."""

    def run(args):
        try:
            m = decide(args if hosts is None else hosts(args))
        except Exception:
            return None
        if m == "serial":
            return serial(args)
        if m == "parallel":
            return parallel(args)
        return None

    return run


def _guard(checks, names, pre, n):
    """``guard(args)``: whether ``args`` has ``n`` entries passing ``checks`` (expressions of
    ``{a}``, :func:`guard_checks`), the running program is the one of now, and ``pre`` holds."""
    ns = dict(names)
    ns.update(prog=_core.program, P=_core.program())
    conds = [f"({c.format(a=f'a{i}')})" for i, c in enumerate(checks)] + ["prog() is P", f"({pre})"]
    src = (
        "def guard(args):\n    try:\n"
        f"        {''.join(f'a{i}, ' for i in range(n)) or '()'} = args\n"
        f"        return bool({' and '.join(conds)})\n"
        "    except Exception:\n        return False\n"
    )
    exec(compile(src, "<tiarray guard>", "exec"), ns)
    return ns["guard"]


def run_plan(op, plan, args):
    """The adapter's route through ``plan.runner``: the outputs, or None (no runner, or an
    input not ready to pass as it is: the generic path runs). A signature the runner took
    goes first on ``op``'s fast path."""
    run = plan.runner
    if run is None:
        return None
    res = run(args)
    if res is not None:
        remember_fast(op, plan)
    return res


def guard_checks(args, array_type, names: dict, *, tname: str, dtype: str, shape: str, more=None) -> list:
    """The per-argument checks of a fast runner (``host_runner(guard=...)``) for the call
    ``args`` that built a plan, as the adapter's key reads them: an array of exactly
    ``array_type`` (named ``tname`` in ``names``) with the same ``.<dtype>`` (by identity) and
    ``.<shape>``, plus ``more(a)`` (an expression of ``{a}``, or ""); anything else its exact
    type. Fills ``names`` with the constants the checks use."""
    checks = []
    for i, a in enumerate(args):
        if isinstance(a, array_type):
            names[f"D_{i}"], names[f"S_{i}"] = getattr(a, dtype), tuple(getattr(a, shape))
            c = f"type({{a}}) is {tname} and {{a}}.{dtype} is D_{i} and {{a}}.{shape} == S_{i}"
            checks.append(c + (more(a) if more is not None else ""))
        else:
            names[f"K_{i}"] = type(a)
            checks.append(f"type({{a}}) is K_{i}")
    return checks


def runner_inputs(plan: Plan, args, boxed=None) -> list:
    """``host_runner``'s ``ins`` for the call ``args`` that built ``plan``: ``(nbytes, launch
    shape)`` per array, ``(conv, None)`` per scalar; a scalar given as a 0-d array of type
    ``boxed`` (a tensor, a TiArray: the plan's key tells which slots are) is read with ``.item()``."""
    return [
        (nb, shp)
        if conv is None
        else (_item_conv(conv) if boxed is not None and isinstance(a, boxed) else conv, None)
        for conv, shp, nb, a in zip(plan.in_conv, plan.in_shapes, plan.in_nbytes, args)
    ]


def _item_conv(conv):
    return lambda a: conv(a.item())


def _spec_is_serial(op, res, kind) -> bool:
    if kind != "cpu":
        return False
    if res.mode is not None:
        return res.mode == "serial"
    return op._launcher("cpu").use_serial(res.nbytes)


class HostInputs:
    """The inputs of one CPU launch as NumPy views, each built when first read (for a
    per-call ``policy``). ``make(i)`` builds the view of input ``i``."""

    __slots__ = ("_make", "_cache", "_n")

    def __init__(self, n, make):
        self._n = n
        self._make = make
        self._cache = {}

    def __len__(self):
        return self._n

    def __getitem__(self, i):
        if i < 0:
            i += self._n
        if not 0 <= i < self._n:
            raise IndexError(i)
        v = self._cache.get(i)
        if v is None:
            v = self._cache[i] = self._make(i)
        return v

    def __iter__(self):
        return (self[i] for i in range(self._n))


def host_view(ptr: int, shape: tuple, dtype):
    """A read-only NumPy view of host memory at ``ptr`` (C-contiguous ``shape`` of tiarray ``dtype``)."""
    import ctypes

    import numpy as np

    npd = dtype.numpy
    n = 1
    for s in shape:
        n *= s
    nb = n * npd.itemsize
    if nb == 0 or not ptr:
        return np.zeros(shape, npd)
    a = np.frombuffer((ctypes.c_char * nb).from_address(ptr), npd).reshape(shape)
    a.flags.writeable = False
    return a


program = _core.program
CACHES = _core.CACHES
ensure_init = _core.ensure_init


def not_an_array(op, i, a):
    p = op._params[i]
    return TypeError(
        f"{op.name}: argument '{p.name}' must be an array (the kernel's parameter is a "
        f"ti.types.ndarray), got {type(a).__name__}"
    )
