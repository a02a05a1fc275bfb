"""JAX adapter: every Operator is a JAX primitive lowered to an XLA FFI custom call.

Per Operator (created on its first JAX call) there are three primitives:

``<name>``
    the operator itself. Abstract evaluation runs ``outs``; the lowering is an XLA FFI
    custom call (``jax.ffi.ffi_lowering``) whose handler (a ctypes callback registered
    with ``jax.ffi.register_ffi_target``) launches the Taichi kernel directly on XLA's
    buffers: no copy; outputs are XLA's result buffers, zero-filled first. Eager calls
    go through the same lowering (``apply_primitive``), so eager == jit. Static
    parameters are a primitive parameter (one primitive covers every variant); the
    lowering passes a small integer attribute, ``tiarray_id``, naming a record in a
    locked registry: the compiled spec, the shapes, the scalar readers.
``<name>.lin`` and ``<name>.vjp``
    differentiation by Taichi autodiff when the Operator has no ``jvp``/``transpose``.
    The JVP of ``<name>`` emits ``<name>.lin``, a primitive linear in the tangents with
    no forward evaluation (forward mode raises), whose transpose is ``<name>.vjp``: the
    kernel's reverse-mode variant, reading output cotangents and accumulating input
    gradients. ``jax.grad``/``vjp``/``jacrev`` therefore work; ``jax.jvp`` does not.

vmap uses the ``batch`` rule, else a sequential ``lax.map`` over the batch (one launch
per element: correct, slow). Scalar kernel parameters become 0-d operands; the handler
reads their value (on CUDA with a device-to-host copy and a stream synchronisation).

Several devices: inside ``shard_map`` the lowering sees local avals, so each device's
handler runs on its shard; outputs are typed as varying over the manual axes any input
varies over, and inputs are cast to varying first (as JAX's own primitives), which makes
gradients of replicated inputs sums over devices. Operators with a ``partition`` rule are
wrapped in ``custom_partitioning`` when lowered for several devices (``_jax_partition``);
without one, XLA gathers their inputs.

Thread safety: XLA calls handlers from its own threads; each call takes the GIL, reads
only immutable records, and launches under the launcher's lock.
"""

from __future__ import annotations

import ctypes
import functools
import threading

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.extend.core import Primitive
from jax.interpreters import ad, batching, mlir
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tiarray import _internal as _core
from tiarray._internal import dtypes as _dtypes

from .. import _operator
from . import _jax_partition as _partitioning
from . import _native, _xla_ffi
from ._eager import HostInputs, host_view

try:
    from jax.sharding import get_abstract_mesh as _get_abstract_mesh
except ImportError:  # pragma: no cover - an older JAX
    _get_abstract_mesh = lambda: None  # noqa: E731
try:
    from jax.sharding import ManualAxisType as _ManualAxisType
except ImportError:  # pragma: no cover - an older JAX
    _ManualAxisType = None
try:  # lowering contexts: which devices a computation is lowered for
    from jax._src.sharding_impls import ShardingContext as _ShardingContext
    from jax._src.sharding_impls import SPMDAxisContext as _SPMDAxisContext
except ImportError:  # pragma: no cover - a future JAX: no partitioned lowering
    _ShardingContext = _SPMDAxisContext = ()

try:  # primitives whose lowering needs the device assignment (custom_partitioning)
    from jax._src.dispatch import prim_requires_devices_during_lowering as _requires_devices
except ImportError:  # pragma: no cover - a future JAX
    _requires_devices = set()

_direct_lowering = _partitioning.direct_lowering

try:  # the standard eager implementation of a primitive: jit it (cached per signature)
    from jax._src.dispatch import apply_primitive as _apply_primitive
except ImportError:  # pragma: no cover - a future JAX without it
    _apply_primitive = None

__all__ = ["call"]

_Zero = ad.Zero
_typeof = jax.typeof
_float0 = jax.dtypes.float0
_not_mapped = getattr(batching, "not_mapped", None)

# ----------------------------------------------------------------------------- dtypes


def _tdtype(npd) -> _dtypes.DType:
    d = _dtypes.from_numpy_dtype(np.dtype(npd))
    if d is None:
        raise TypeError(f"JAX dtype {npd} is not supported by tiarray")
    return d


def _np(d: _dtypes.DType):
    return d.numpy


def _aval(sd) -> jax.core.ShapedArray:
    return jax.core.ShapedArray(sd.shape, _np(sd.dtype))


def _canon(d: _dtypes.DType):
    return jax.dtypes.canonicalize_dtype(d.numpy)


# ----------------------------------------------------------------------------- records

_records: list = []  # id -> _Record (append-only; reads need no lock)
_record_ids: dict = {}
_registry_lock = threading.Lock()


class _Record:
    """Everything the FFI handler needs for one lowered call (immutable once built)."""

    __slots__ = (
        "op",
        "mode",
        "res",
        "arch",
        "spec",  # None until built, and after the program changed
        "ins",
        "outs",
        "n_in",
        "grad_mask",
        "mask",
        "fast",
        "serial",  # the variant of `spec` (fixed for this signature)
        "scratch",  # {serial: ((nbytes, launch shape), ...)}: scratch results used by a launch
        "decide",  # per-call policy (CPU) or None
        "specs",  # {serial: spec} when `decide`
        "fasts",  # {serial: fast runner} when `decide`
        "zero",  # per output: zero-filled before the launch (False: it aliases an input)
        "aliases",  # {input index: output index} of the custom call (Operator aliases)
        "rid",  # the record's id (the custom call's attribute)
        "native",  # described to the native handler (_native.register), which launches it
        "scalar_dtypes",  # per input: the NumPy dtype of XLA's scalar (None for an array)
    )


def _record_id(op, mode, skey, in_avals, mask, arch, n_in) -> int:
    key = (id(op), mode, skey, tuple((a.shape, a.dtype) for a in in_avals), mask, arch)
    rid = _record_ids.get(key)
    if rid is not None:
        return rid
    with _registry_lock:
        rid = _record_ids.get(key)
        if rid is None:
            rid = len(_records)
            rec = _build_record(op, mode, skey, in_avals, mask, arch, n_in, rid)
            _records.append(rec)
            _record_ids[key] = rid
    return rid


def _build_record(op, mode, skey, in_avals, mask, arch, n_in, rid) -> _Record:
    res = op._resolve(_in_sds(op, in_avals[:n_in]), skey)
    rec = _Record()
    rec.rid = rid
    rec.native = False
    rec.op = op
    rec.mode = mode
    rec.res = res
    rec.arch = arch
    rec.n_in = n_in
    rec.mask = mask
    ins = []
    rec.scalar_dtypes = tuple(
        None if p.is_array else np.dtype(av.dtype) for p, av in zip(op._params, in_avals[:n_in])
    )
    for p, sd, av in zip(op._params, res.in_sds, in_avals[:n_in]):
        if p.is_array:
            shape = sd.shape + (2,) if sd.dtype.kind == "c" else sd.shape
            ins.append((1, sd.size * sd.dtype.itemsize, shape))
        else:
            code = _xla_ffi.XLA_DTYPE.get(np.dtype(av.dtype).name)
            view = _xla_ffi.SCALAR_VIEWS.get(code)
            if view is None:
                raise TypeError(
                    f"{op.name}: scalar argument '{p.name}' of dtype {av.dtype} cannot be read by the FFI handler"
                )
            ins.append((0, view[0], view[1], view[2]))
    rec.ins = tuple(ins)
    outs = []
    for o in res.outs:
        shape = o.shape + (2,) if o.dtype.kind == "c" else o.shape
        outs.append((o.size * o.dtype.itemsize, shape))
    rec.outs = tuple(outs)
    alias = res.alias if mode == "fwd" else None
    rec.zero = tuple(alias is None or alias[j] is None for j in range(len(res.outs)))
    rec.aliases = {k: j for j, k in enumerate(alias) if k is not None} if alias else {}
    if mode == "vjp":
        # one bool per kernel parameter: masked inputs and floating outputs carry gradients
        gm = tuple(mask) + tuple(o.dtype.kind in "fc" for o in res.outs)
        rec.grad_mask = gm
    else:
        rec.grad_mask = None
    rec.scratch = {
        srl: tuple(
            (o.size * o.dtype.itemsize, o.shape + (2,) if o.dtype.kind == "c" else o.shape)
            for o in res.scratch[srl]
        )
        for srl in (False, True)
    }
    rec.decide = res.decide if arch == "cpu" and mode == "fwd" else None
    _make_specs(rec)
    return rec


def _make_specs(rec):
    """(Re)compile the record's spec(s) and fast runners (at build, and after a Taichi reset)."""
    op, res, arch, mode = rec.op, rec.res, rec.arch, rec.mode
    if arch == "cpu":
        rec.serial = (
            res.mode == "serial" if res.mode is not None else op._launcher("cpu").use_serial(res.nbytes)
        )
    else:
        rec.serial = False
    rec.spec = op._spec(res, arch, grad_mask=rec.grad_mask, serial=rec.serial)
    # debug mode: every launch through spec.launch, which checks it (no inlined runner)
    make = _make_checked_fwd if arch == "cpu" and _core.debug_mode() else _make_fast_fwd
    rec.fast = make(rec, rec.spec, rec.serial) if mode == "fwd" and arch == "cpu" else None
    if rec.decide is not None:
        rec.specs = {srl: op._spec(res, arch, serial=srl) for srl in (False, True)}
        rec.fasts = {srl: make(rec, rec.specs[srl], srl) for srl in (False, True)}
    else:
        rec.specs = rec.fasts = None
    # the native handler repeats forward CPU launches (not in debug mode: every launch checked)
    rec.native = (
        _native_active[0] and mode == "fwd" and arch == "cpu" and make is _make_fast_fwd
        and _native.register(rec.rid, rec)
    )  # fmt: skip


def _make_checked_fwd(rec, spec, serial: bool):
    """The forward runner of debug mode: what ``_make_fast_fwd``'s runner does, through
    ``spec.launch`` (which runs the kernel checked, on guarded copies)."""

    def run(args, rets):
        U64 = _U64
        vals = []
        for i, k in enumerate(rec.ins):
            d = U64[(args[i] >> 3) + 3]
            vals.append((d, k[1], k[2]) if k[0] else k[1][d >> k[2]])
        n_out = len(rec.outs)
        for j, (nb, shape) in enumerate(list(rec.outs) + list(rec.scratch[serial])):
            d = U64[(rets[j] >> 3) + 3] or (1 if j >= n_out else 0)
            if nb and (j >= n_out or rec.zero[j]):
                ctypes.memset(d, 0, nb)
            vals.append((d, nb, shape))
        spec.launch(vals)

    return run


def _host_inputs(rec, args):
    """The inputs of a CPU custom call as NumPy views (built when read), for ``decide``."""
    ins = rec.ins
    sds = rec.res.in_sds

    def make(i):
        d = _U64[(args[i] >> 3) + 3]
        k = ins[i]
        if k[0]:
            return host_view(d, sds[i].shape, sds[i].dtype)
        return k[1][d >> k[2]]

    return HostInputs(rec.n_in, make)


def _make_fast_fwd(rec, spec, serial):
    """A forward runner specialised to one record: generated code with the shapes, sizes
    and argument slots inlined, its own Taichi launch context, and the arguments re-set
    only when their value changed (inputs often stay in the same XLA buffers from call to
    call). About 1-2 us cheaper per call than the generic path through ``spec.launch``.
    Scratch results (after the outputs) are zero-filled to the size of the ``serial``
    variant and passed with its shape. As ``host_runner``'s: array pointers written where
    the context keeps them, and, once Taichi's launch has shown where its compiled tasks
    read them, the tasks called directly (``_launch.runner_launch``; the native handler
    does the same in C++ where it is compiled)."""
    from tiarray._internal import P_ARRAY as _P_ARRAY
    from tiarray._internal import P_FLOAT as _P_FLOAT
    from tiarray._internal import P_INT as _P_INT
    from tiarray._internal import launch_lock as _launch_lock
    from tiarray._internal import runner_array_set as _array_set
    from tiarray._internal import runner_launch as _runner_launch

    ctx = spec.t_kernel.make_launch_context()
    ns = {
        "U64": _U64,
        "memset": ctypes.memset,
        "ctx": ctx,
        "lock": _launch_lock,
        "launch_kernel": spec.run,
        "compiled": spec.compiled,
        "L": [None] * len(spec.setters),
    }
    setter_name = {_P_FLOAT: "set_arg_float", _P_INT: "set_arg_int"}
    body = []
    sets = []
    arrays = []  # the arguments that are arrays
    n_in = len(rec.ins)
    for i, k in enumerate(rec.ins):
        kind, idx = spec.setters[i]
        if k[0]:
            body.append(f"    a{i} = U64[(args[{i}] >> 3) + 3]")
            sets.append(_array_set(ns, i, f"a{i}", idx, k[1], k[2]))
            arrays.append(i)
        else:
            ns[f"V{i}"] = k[1]
            body.append(f"    a{i} = V{i}[U64[(args[{i}] >> 3) + 3] >> {k[2]}]")
            fn = setter_name.get(kind, "set_arg_uint")
            # zeros are always set (0.0 == -0.0), and so is NaN (NaN != NaN)
            sets.append(
                f"        if L[{i}] != a{i} or a{i} == 0:\n"
                f"            L[{i}] = None\n"
                f"            ctx.{fn}({idx!r}, a{i})\n"
                f"            L[{i}] = a{i}"
            )
    for j, (nb, shape) in enumerate(rec.outs):
        kind, idx = spec.setters[n_in + j]
        assert kind == _P_ARRAY
        body.append(f"    o{j} = U64[(rets[{j}] >> 3) + 3]")
        if nb and rec.zero[j]:  # (an aliased output holds its input's values)
            body.append(f"    memset(o{j}, 0, {nb})")
        sets.append(_array_set(ns, n_in + j, f"o{j}", idx, nb, shape))
        arrays.append(n_in + j)
    n_out = len(rec.outs)
    for j, (nb, shape) in enumerate(rec.scratch[serial]):
        kind, idx = spec.setters[n_in + n_out + j]
        q = n_in + n_out + j
        body.append(f"    s{j} = U64[(rets[{n_out + j}] >> 3) + 3] or 1")
        if nb:
            body.append(f"    memset(s{j}, 0, {nb})")
        sets.append(_array_set(ns, q, f"s{j}", idx, nb, shape))
        arrays.append(q)
    body.append("    with lock:")
    body.extend(sets)
    body.append(_runner_launch(ns, spec, arrays, "        "))
    src = "def run(args, rets):\n" + "\n".join(body) + "\n"
    exec(compile(src, f"<tiarray {rec.op.name} ffi runner>", "exec"), ns)
    return ns["run"]


def _forget_specs():
    """The registry's clear hook: every record's specs belong to the old program (the
    records themselves stay: compiled XLA executables name them)."""
    for rec in _records:
        rec.spec = rec.fast = rec.specs = rec.fasts = None


_core.register_cache(_forget_specs)


def _current_spec(rec):
    if program() is not CACHES.prog:  # Taichi was reset since lowering
        _core.ensure_init()
    if rec.spec is None:
        _make_specs(rec)
    return rec.spec


# ----------------------------------------------------------------------------- handlers

_U64 = _xla_ffi._U64
program = _core.program
CACHES = _core.CACHES
_memset = ctypes.memset
_memmove = ctypes.memmove


def _run_cpu(rid, api, ctx, args, rets):
    rec = _records[rid]
    if program() is not CACHES.prog or rec.spec is None:
        _current_spec(rec)
    if rec.fasts is not None:  # the variant depends on the inputs' values
        rec.fasts[rec.op._serial_for(rec.res, _host_inputs(rec, args))](args, rets)
        return
    fast = rec.fast
    if fast is not None:
        fast(args, rets)
        return
    spec = rec.spec
    U64 = _U64
    vals = []
    ins = rec.ins
    for i in range(rec.n_in):
        k = ins[i]
        d = U64[(args[i] >> 3) + 3]
        if k[0]:
            vals.append((d, k[1], k[2]))
        else:
            vals.append(k[1][d >> k[2]])
    if rec.mode == "fwd":
        for (nb, shape), rp, z in zip(rec.outs, rets, rec.zero):
            d = U64[(rp >> 3) + 3]
            if nb and z:
                _memset(d, 0, nb)
            vals.append((d, nb, shape))
        spec.launch(vals)
        return
    # vjp: args = primals + output cotangents; rets = input grads (masked inputs),
    # then scratch: output primals (zeros), then copies of the cotangents.
    n_out = len(rec.outs)
    mask = rec.mask
    grads = []
    gi = 0
    for i in range(rec.n_in):
        if mask[i]:
            d = U64[(rets[gi] >> 3) + 3]
            nb = ins[i][1]
            if nb:
                _memset(d, 0, nb)
            grads.append(d)
            gi += 1
        else:
            grads.append(0)
    for j, (nb, shape) in enumerate(rec.outs):
        d = U64[(rets[gi + j] >> 3) + 3]
        if nb:
            _memset(d, 0, nb)
        vals.append((d, nb, shape))
        ct = U64[(rets[gi + n_out + j] >> 3) + 3]
        if nb:
            _memmove(ct, U64[(args[rec.n_in + j] >> 3) + 3], nb)
        grads.append(ct if rec.grad_mask[rec.n_in + j] else 0)
    spec.launch(vals, grads)


def _run_cuda(rid, api, ctx, args, rets):  # pragma: no cover - needs a GPU (benchmarks/gpu_check.py)
    from . import _cuda_ops

    rec = _records[rid]
    spec = _current_spec(rec)
    stream = _xla_ffi.get_stream(api, ctx)
    U64 = _U64
    vals = []
    ins = rec.ins
    for i in range(rec.n_in):
        k = ins[i]
        d = U64[(args[i] >> 3) + 3]
        if k[0]:
            vals.append((d, k[1], k[2]))
        else:
            vals.append(_cuda_ops.read_scalar(d, k[1], k[2], k[3], stream))
    grads = None
    if rec.mode == "fwd":
        for (nb, shape), rp, z in zip(rec.outs, rets, rec.zero):
            d = U64[(rp >> 3) + 3]
            if z:
                _cuda_ops.memset_async(d, nb, stream)
            vals.append((d, nb, shape))
        n_out = len(rec.outs)
        for j, (nb, shape) in enumerate(rec.scratch[False]):
            d = U64[(rets[n_out + j] >> 3) + 3] or 1
            if nb:
                _cuda_ops.memset_async(d, nb, stream)
            vals.append((d, nb, shape))
    else:
        n_out = len(rec.outs)
        grads = []
        gi = 0
        for i in range(rec.n_in):
            if rec.mask[i]:
                d = U64[(rets[gi] >> 3) + 3]
                _cuda_ops.memset_async(d, ins[i][1], stream)
                grads.append(d)
                gi += 1
            else:
                grads.append(0)
        for j, (nb, shape) in enumerate(rec.outs):
            d = U64[(rets[gi + j] >> 3) + 3]
            _cuda_ops.memset_async(d, nb, stream)
            vals.append((d, nb, shape))
            ct = U64[(rets[gi + n_out + j] >> 3) + 3]
            _cuda_ops.memcpy_async(ct, U64[(args[rec.n_in + j] >> 3) + 3], nb, stream)
            grads.append(ct if rec.grad_mask[rec.n_in + j] else 0)
    # Taichi launches on the legacy default stream: order it after XLA's work, and XLA's
    # later work after the kernel, with events (the host never waits).
    _cuda_ops.order(stream, before=True)
    spec.launch(vals, grads)
    _cuda_ops.order(stream, before=False)


def _describe_error(rid, exc) -> str:
    name = "?"
    if 0 <= rid < len(_records):
        name = _records[rid].op.name
    return f"tiarray operator '{name}': {type(exc).__name__}: {exc}"


_handlers: dict = {}  # platform -> (ctypes callback, capsule); kept alive for the process
_targets_lock = threading.Lock()
_used_targets: set = set()


_native_active = [False]  # the CPU target's handler is the native one (_native.py)


def _capsule(platform: str):
    h = _handlers.get(platform)
    if h is None:
        run = _run_cpu if platform == "cpu" else _run_cuda
        cb = _xla_ffi.make_handler(run, _describe_error)
        addr = _native.load(cb) if platform == "cpu" else 0
        _native_active[0] = platform == "cpu" and bool(addr) or _native_active[0]
        # the native handler hands Python the calls it has not seen (cb, kept alive here)
        h = (cb, _xla_ffi.pycapsule(addr or cb))
        _handlers[platform] = h
    return h[1]


def _register_target(op) -> str:
    base = "tiarray_" + "".join(c if c.isalnum() or c == "_" else "_" for c in op.name)
    with _targets_lock:
        name = base
        k = 2
        while name in _used_targets:
            name = f"{base}_{k}"
            k += 1
        _used_targets.add(name)
        jax.ffi.register_ffi_target(name, _capsule("cpu"), platform="cpu")
        try:
            jax.ffi.register_ffi_target(name, _capsule("cuda"), platform="CUDA")
        except Exception:  # no CUDA plugin in this jaxlib: the CPU target is enough
            pass
    return name


# ----------------------------------------------------------------------------- per-op state


def _in_sds(op, avals):
    sds = []
    for p, a in zip(op._params, avals):
        if p.is_array:
            sds.append((_tdtype(a.dtype), tuple(a.shape)))
        else:
            if tuple(a.shape) != ():
                raise TypeError(
                    f"{op.name}: argument '{p.name}' is a scalar parameter ({p.dtype.name}); got an array "
                    f"of shape {tuple(a.shape)}"
                )
            sds.append((p.dtype, ()))
    return tuple(sds)


class _JaxOp:
    """The primitives of one Operator and their rules."""

    def __init__(self, op):
        self.op = op
        self.target = _register_target(op)
        self.fwd = self._prim(op.name, "fwd")
        self.lin = self._prim(op.name + ".lin", "lin")
        self.vjp = self._prim(op.name + ".vjp", "vjp")
        self._lowering = jax.ffi.ffi_lowering(self.target)
        f, lin, vjp = self.fwd, self.lin, self.vjp
        f.def_abstract_eval(self._fwd_abstract)
        lin.def_abstract_eval(self._lin_abstract)
        vjp.def_abstract_eval(self._vjp_abstract)
        for prim, mode in ((f, "fwd"), (vjp, "vjp")):
            for plat, arch in (("cpu", "cpu"), ("cuda", "cuda")):
                mlir.register_lowering(
                    prim, functools.partial(self._lower, mode=mode, arch=arch), platform=plat
                )
        mlir.register_lowering(lin, self._lin_lower)
        ad.primitive_jvps[f] = self._fwd_jvp
        ad.primitive_transposes[f] = self._fwd_transpose
        ad.primitive_transposes[lin] = self._lin_transpose
        ad.primitive_jvps[vjp] = self._vjp_jvp
        batching.primitive_batchers[f] = self._fwd_batch
        batching.primitive_batchers[lin] = functools.partial(_sequential_batch, lin)
        batching.primitive_batchers[vjp] = functools.partial(_sequential_batch, vjp)
        if op.partition is not None:
            # lowered with the device assignment known, as custom_partitioning needs
            _requires_devices.update((f, vjp))

    @staticmethod
    def _prim(name, mode):
        p = Primitive(name)
        p.multiple_results = True
        if _apply_primitive is not None:
            p.def_impl(functools.partial(_apply_primitive, p))
        else:  # pragma: no cover
            p.def_impl(lambda *a, **k: jax.jit(lambda *b: p.bind(*b, **k))(*a))
        return p

    # -- abstract evaluation -----------------------------------------------------------

    def _fwd_abstract(self, *avals, static):
        res = self.op._resolve(_in_sds(self.op, avals), static)
        return _typed(self.op, avals, len(avals), [(o.shape, _np(o.dtype)) for o in res.outs])

    def _lin_abstract(self, *avals, static, mask):
        n_in = len(mask)
        res = self.op._resolve(_in_sds(self.op, avals[:n_in]), static)
        return _typed(self.op, avals, n_in, [(o.shape, _np(o.dtype)) for o in res.outs])

    def _vjp_abstract(self, *avals, static, mask):
        n_in = len(mask)
        res = self.op._resolve(_in_sds(self.op, avals[:n_in]), static)
        typed = _typed(self.op, avals, n_in, [(o.shape, _np(o.dtype)) for o in res.outs])
        # gradients have the types (shape, dtype, sharding) of their primals
        grads = _typed_like([avals[i] for i in range(n_in) if mask[i]], typed[0] if typed else None)
        return grads + typed * 2

    # -- lowering ----------------------------------------------------------------------

    def _lower(self, ctx, *operands, static, mode, arch, mask=None):
        dev = _core.current_device()
        if dev.kind != arch:
            raise TypeError(
                f"{self.op.name}: JAX runs this computation on {arch}, but Taichi computes on {dev}; "
                f"start Taichi on the same device (tiarray.init('{arch}') before any tiarray call)"
            )
        if arch == "cuda" and _device_count(ctx) > 1:  # pragma: no cover - needs several GPUs
            raise TypeError(
                f"{self.op.name}: this computation spans {_device_count(ctx)} GPUs of one process, but a "
                "process has one Taichi runtime on one GPU. Remedy: run one process per GPU "
                "(jax.distributed.initialize(..., local_device_ids=[k])); see docs/scaling.md"
            )
        n_in = len(mask) if mask is not None else len(ctx.avals_in)
        if self.op.partition is not None and not _direct_lowering.get() and _partitioned_context(ctx):
            return _partitioning.lower(self, ctx, operands, static, mode, mask, n_in)
        rid = _record_id(self.op, mode, static, ctx.avals_in, mask, arch, n_in)
        rec = _records[rid]
        res = rec.res
        lowering = self._lowering
        if rec.aliases:
            # XLA hands the input's buffer in as the output where the input is dead after
            # the call (a scan carry, a donated argument), and copies it in first otherwise
            lowering = jax.ffi.ffi_lowering(self.target, operand_output_aliases=rec.aliases)
        if mode == "fwd" and res.scratch[False]:
            # scratch buffers are extra results of the custom call, dropped here (XLA
            # allocates them from its pool); sized for either variant
            n_out = len(ctx.avals_out)
            extra = [_aval(o) for o in res.scratch_max()]
            r = lowering(ctx.replace(avals_out=[*ctx.avals_out, *extra]), *operands, tiarray_id=np.int64(rid))
            return list(r)[:n_out]
        return lowering(ctx, *operands, tiarray_id=np.int64(rid))

    def _lin_lower(self, ctx, *operands, static, mask):
        raise TypeError(_forward_mode_msg(self.op))

    # -- differentiation ---------------------------------------------------------------

    def _fwd_jvp(self, primals, tangents, *, static):
        op = self.op
        outs = self.fwd.bind(*primals, static=static)
        nz = tuple(not _is_zero(t) for t in tangents)
        res = op._resolve(_in_sds(op, [_typeof(p) for p in primals]), static)
        out_avals = [_aval(o) for o in res.outs]
        if not any(nz):
            return outs, [_Zero(a.to_tangent_aval()) for a in out_avals]
        op._check_nondiff(nz, "differentiation")
        sd = res.static
        if op.jvp is not None:
            tans = tuple(t if m else None for t, m in zip(tangents, nz))
            tout = op.jvp(tuple(primals), tans, **sd)
            touts = _as_tuple(tout, res.single, op, "jvp")
            if len(touts) != len(out_avals):
                raise TypeError(
                    f"{op.name}: the jvp rule returned {len(touts)} tangents for {len(out_avals)} outputs"
                )
            for i, (t, a) in enumerate(zip(touts, out_avals)):
                if t is not None:
                    _check_rule_array(op, "jvp", f"tangent {i}", t, a.to_tangent_aval())
        elif op.transpose is not None:
            touts = None
            for i, (p, m) in enumerate(zip(op._params, nz)):
                if not m:
                    continue
                if p.name not in op.linear:
                    raise TypeError(
                        f"{op.name}: differentiation with respect to '{p.name}' needs a jvp rule: the "
                        f"Operator is declared linear only in {op.linear!r}. Remedy: give "
                        "Operator(..., jvp=...) or stop the gradient of that argument"
                    )
                a = list(primals)
                a[i] = tangents[i]
                r = self.fwd.bind(*a, static=static)
                touts = r if touts is None else [x + y for x, y in zip(touts, r)]
        else:
            # Taichi autodiff: integer inputs carry no gradient
            mask = tuple(m and _tdtype(_typeof(p).dtype).kind in "fc" for m, p in zip(nz, primals))
            op._diff_inputs(mask, "differentiation")
            if not any(mask):
                return outs, [_Zero(a.to_tangent_aval()) for a in out_avals]
            nzt = [ad.instantiate_zeros(t) for t, m in zip(tangents, mask) if m]
            touts = self.lin.bind(*primals, *nzt, static=static, mask=mask)
        touts = [_Zero(a.to_tangent_aval()) if t is None else t for t, a in zip(touts, out_avals)]
        return outs, touts

    def _fwd_transpose(self, cts, *args, static):
        op = self.op
        if op.transpose is None:
            raise TypeError(
                f"{op.name}: reverse-mode differentiation needs a transpose rule for this Operator (its jvp "
                "rule uses it linearly). Remedy: give Operator(..., transpose=..., linear=...)"
            )
        n_in = len(args)
        avals = [a.aval if ad.is_undefined_primal(a) else _typeof(a) for a in args]
        res = op._resolve(_in_sds(op, avals), static)
        primals = []
        for a, av in zip(args, avals):
            if ad.is_undefined_primal(a):
                primals.append(_operator.UndefinedPrimal(av.shape, _tdtype(av.dtype)))
            else:
                primals.append(a)
        cts = [ad.instantiate_zeros(c) for c in cts]
        r = op.transpose(tuple(cts), tuple(primals), **res.static)
        if not isinstance(r, (tuple, list)) or len(r) != n_in:
            raise TypeError(
                f"{op.name}: the transpose rule must return a tuple with one entry per input ({n_in}), got {r!r}"
            )
        out = []
        for i, (a, v, av) in enumerate(zip(args, r, avals)):
            if not ad.is_undefined_primal(a):
                out.append(None)
            elif v is None:
                out.append(_Zero(av.to_tangent_aval()))
            else:
                _check_rule_array(
                    op, "transpose", f"cotangent of '{op._params[i].name}'", v, av.to_tangent_aval()
                )
                out.append(v)
        return out

    def _lin_transpose(self, cts, *args, static, mask):
        n_in = len(mask)
        primals = args[:n_in]
        if any(ad.is_undefined_primal(p) for p in primals):
            raise TypeError(f"{self.op.name}: internal error: undefined primal in the linearised call")
        cts = [ad.instantiate_zeros(c) for c in cts]
        outs = self.vjp.bind(*primals, *cts, static=static, mask=mask)
        grads = outs[: sum(mask)]
        return [None] * n_in + list(grads)

    def _vjp_jvp(self, primals, tangents, *, static, mask):
        raise TypeError(
            f"{self.op.name}: second-order differentiation (a gradient of a gradient, a Hessian) needs "
            "jvp/transpose rules; Taichi autodiff gives first-order reverse mode only. Remedy: give "
            "Operator(..., jvp=..., transpose=..., linear=...)"
        )

    # -- batching ----------------------------------------------------------------------

    def _fwd_batch(self, args, dims, *, static):
        op = self.op
        if op.batch is None:
            return _sequential_batch(self.fwd, args, dims, static=static)
        avals = []
        for a, d in zip(args, dims):
            av = _typeof(a)
            if d is not _not_mapped:
                shape = av.shape[:d] + av.shape[d + 1 :]
                av = jax.core.ShapedArray(shape, av.dtype)
            avals.append(av)
        res = op._resolve(_in_sds(op, avals), static)
        axes = tuple(None if d is _not_mapped else d for d in dims)
        # vmap over a NumPy array hands its batched values over as NumPy: the rule's calls
        # then took NumPy's route, refused when Taichi runs on CUDA (first CUDA run)
        args = [jnp.asarray(a) if isinstance(a, (np.ndarray, np.generic)) else a for a in args]
        r = op.batch(tuple(args), axes, **res.static)
        if not isinstance(r, tuple) or len(r) != 2:
            raise TypeError(f"{op.name}: the batch rule must return (outs, out_axes), got {r!r}")
        outs, oaxes = r
        outs = _as_tuple(outs, res.single, op, "batch")
        if res.single and not isinstance(oaxes, (tuple, list)):
            oaxes = (oaxes,)
        size = next(_typeof(a).shape[d] for a, d in zip(args, dims) if d is not _not_mapped)
        oaxes = _check_batch_outs(op, outs, oaxes, res.outs, size)
        return list(outs), oaxes


def _check_batch_outs(op, outs, oaxes, want, size):
    """The batch rule's ``out_axes`` (negative ones normalised, ``None`` as not mapped), after
    checking each output against the call's: its shape with the batch axis of length
    ``size`` removed, and its dtype (a wrong rule gave wrong shapes silently, and a negative
    axis an AssertionError inside JAX)."""
    if len(oaxes) != len(outs):
        raise TypeError(f"{op.name}: the batch rule returned {len(outs)} output(s) and {len(oaxes)} out_axes")
    norm = []
    for i, (o, a, w) in enumerate(zip(outs, oaxes, want)):
        av = _typeof(o)
        shape = tuple(av.shape)
        if a is not None:
            if (
                not isinstance(a, (int, np.integer))
                or isinstance(a, bool)
                or not -len(shape) <= a < len(shape)
            ):
                raise TypeError(
                    f"{op.name}: the batch rule's out_axes[{i}] must be None or an axis of its output of "
                    f"shape {shape}, got {a!r}"
                )
            a = int(a) % len(shape)
            if shape[a] != size:
                raise TypeError(
                    f"{op.name}: the batch rule's output {i} has {shape[a]} entries along its batch axis {a} "
                    f"(shape {shape}); the vmap has {size}"
                )
            shape = shape[:a] + shape[a + 1 :]
        if shape != tuple(w.shape) or np.dtype(av.dtype).name != w.dtype.name:
            raise TypeError(
                f"{op.name}: the batch rule's output {i} is {np.dtype(av.dtype).name}{list(shape)} per batch "
                f"element; the call's output is {w.dtype.name}{list(w.shape)}"
            )
        norm.append(_not_mapped if a is None else a)
    return norm


# ----------------------------------------------------------------------------- sharding types


def _typed(op, in_avals, n_in, outs):
    """Output avals ``(shape, dtype)`` typed for the context: inside ``shard_map`` they
    vary over the manual axes any input varies over; under an explicit-sharding mesh they
    carry the sharding the partition rule gives (replicated without a rule)."""
    mesh = _get_abstract_mesh()
    if mesh is None or mesh.empty:
        return [jax.core.ShapedArray(sh, dt) for sh, dt in outs]
    vma = frozenset()
    for a in in_avals:
        mat = getattr(a, "manual_axis_type", None)
        if mat is not None:
            vma = vma | mat.varying
    specs = _partitioning.explicit_out_specs(op, in_avals[:n_in], [len(sh) for sh, _ in outs], mesh)
    return [_shaped(sh, dt, mesh, spec, vma) for (sh, dt), spec in zip(outs, specs)]


def _typed_like(avals, ref):
    """Avals for gradients: those of their primals, with the manual-axis variance of ``ref``."""
    out = []
    for a in avals:
        if ref is not None and getattr(ref, "manual_axis_type", None) is not None:
            try:
                a = a.update(manual_axis_type=ref.manual_axis_type)
            except Exception:  # pragma: no cover - an older JAX without manual axis types
                pass
        out.append(a.update(weak_type=False) if getattr(a, "weak_type", False) else a)
    return out


def _shaped(shape, dtype, mesh, spec, vma):
    sharding = NamedSharding(mesh, P(*spec))
    try:
        return jax.core.ShapedArray(
            shape, dtype, sharding=sharding, manual_axis_type=_ManualAxisType(varying=vma)
        )
    except TypeError:  # pragma: no cover - an older JAX: no manual axis types
        return jax.core.ShapedArray(shape, dtype, sharding=sharding)


def _device_count(ctx) -> int:
    """How many devices of this process the computation being lowered runs on (with
    several processes, each runs its own devices' part)."""
    if jax.local_device_count() == 1:
        return 1
    ac = ctx.module_context.axis_context
    devices = None
    if isinstance(ac, _SPMDAxisContext):
        devices = ac.mesh._flat_devices_tuple
    elif isinstance(ac, _ShardingContext):
        if ac.device_assignment is None:
            return min(ac.num_devices, jax.local_device_count())
        devices = ac.device_assignment
    if devices is None:
        return 1
    me = jax.process_index()
    return sum(1 for d in devices if d.process_index == me)


def _partitioned_context(ctx) -> bool:
    """Whether this lowering is for several devices that XLA partitions (not a single
    device, not the body of a ``shard_map`` over every mesh axis)."""
    ac = ctx.module_context.axis_context
    if isinstance(ac, _SPMDAxisContext):
        if set(ac.manual_axes) == set(ac.mesh.axis_names):
            return False
        devices = ac.mesh._flat_devices_tuple
    elif isinstance(ac, _ShardingContext):
        devices = ac.device_assignment
    else:
        return False
    return bool(devices) and len(devices) > 1


def _sequential_batch(prim, args, dims, **params):
    """vmap by running the primitive once per batch element (``lax.map``: one launch per
    element at run time, one compiled body)."""
    mapped = [jnp.moveaxis(a, d, 0) for a, d in zip(args, dims) if d is not _not_mapped]

    def body(xs):
        it = iter(xs)
        full = [next(it) if d is not _not_mapped else a for a, d in zip(args, dims)]
        return tuple(prim.bind(*full, **params))

    outs = lax.map(body, tuple(mapped))
    return list(outs), [0] * len(outs)


def _is_zero(t) -> bool:
    if type(t) is _Zero:
        return True
    try:
        return _typeof(t).dtype == _float0
    except Exception:
        return False


def _check_rule_array(op, rule, what, x, want):
    """A rule's array ``x`` must have the shape and dtype of the aval ``want`` (a tangent of a
    wrong shape or dtype came back from jax.jvp as it was)."""
    got = _typeof(x)
    if tuple(got.shape) != tuple(want.shape) or np.dtype(got.dtype) != np.dtype(want.dtype):
        raise TypeError(
            f"{op.name}: the {rule} rule's {what} is {np.dtype(got.dtype).name}{list(got.shape)}; expected "
            f"{np.dtype(want.dtype).name}{list(want.shape)}"
        )


def _as_tuple(r, single, op, rule):
    if single:
        if isinstance(r, (tuple, list)):
            if len(r) != 1:
                raise TypeError(
                    f"{op.name}: the {rule} rule must return one array (outs returns one), got {r!r}"
                )
            return tuple(r)
        return (r,)
    if not isinstance(r, (tuple, list)):
        raise TypeError(f"{op.name}: the {rule} rule must return a tuple (outs returns a tuple), got {r!r}")
    return tuple(r)


def _forward_mode_msg(op) -> str:
    return (
        f"{op.name}: forward-mode differentiation (jax.jvp, jax.jacfwd, jax.linearize) needs a jvp rule; "
        "this Operator differentiates with Taichi autodiff, which is reverse-mode only. Remedy: use "
        "jax.grad / jax.vjp / jax.jacrev, or give Operator(..., jvp=...)"
    )


_state_lock = threading.Lock()


def _state(op) -> _JaxOp:
    st = op._adapter_state.get("jax")
    if st is None:
        with _state_lock:
            st = op._adapter_state.get("jax")
            if st is None:
                st = _JaxOp(op)
                op._adapter_state["jax"] = st
    return st


# ----------------------------------------------------------------------------- call

_jax_array = jax.Array
_Tracer = jax.core.Tracer


def _match_vma(args):
    """Inside ``shard_map``: make every input vary over the manual axes any input varies
    over (``pcast(..., to="varying")``, whose transpose is a ``psum``), as JAX does for
    its own primitives; the gradient of an input that is the same on every device is
    then the sum of the per-device gradients."""
    mats = [getattr(_typeof(a), "manual_axis_type", None) for a in args]
    vma = frozenset().union(*(m.varying for m in mats if m is not None))
    if not vma:
        return args
    out = []
    for a, m in zip(args, mats):
        missing = vma - (m.varying if m is not None else frozenset())
        out.append(lax.pcast(a, tuple(sorted(missing, key=str)), to="varying") if missing else a)
    return out


def call(op, args, static):
    st = op._adapter_state.get("jax") or _state(op)
    skey = op._static_key(static) if static else ()
    op._check_nargs(len(args))
    params = op._params
    jargs = []
    for i, a in enumerate(args):
        p = params[i]
        if p.is_array:
            if not isinstance(a, (_jax_array, np.ndarray)):
                raise TypeError(
                    f"{op.name}: argument '{p.name}' must be an array (the kernel's parameter is a "
                    f"ti.types.ndarray), got {type(a).__name__}"
                )
            jargs.append(a)
        else:
            if isinstance(a, (_jax_array, np.ndarray)):
                if a.shape != ():
                    raise TypeError(
                        f"{op.name}: argument '{p.name}' is a scalar parameter ({p.dtype.name}); got an array "
                        f"of shape {a.shape}"
                    )
                if np.dtype(a.dtype).kind == "c":  # astype would drop the imaginary part
                    raise TypeError(
                        f"{op.name}: argument '{p.name}' is a scalar parameter ({p.dtype.name}); a complex "
                        f"value has no real equivalent, got an array of dtype {a.dtype}"
                    )
                want = _canon(p.dtype)
                if a.dtype != want:
                    a = a.astype(want)
                jargs.append(a)
            else:
                if not isinstance(a, (int, float, np.number, np.bool_)):
                    raise TypeError(
                        f"{op.name}: argument '{p.name}' is a scalar parameter; expected a number, got "
                        f"{type(a).__name__}"
                    )
                v = _operator.scalar_converter(op.name, p)(
                    a
                )  # complex, NaN for an int, out of range: clear errors
                want = _canon(p.dtype)
                try:
                    jargs.append(np.asarray(v, dtype=want))
                except OverflowError:  # an int64 parameter is int32 without jax_enable_x64
                    raise ValueError(
                        f"{op.name}: argument '{p.name}' ({p.dtype.name}) reaches JAX as {np.dtype(want).name} "
                        f"(jax_enable_x64 is off), which cannot hold {a!r}"
                    ) from None
    if any(isinstance(a, _Tracer) for a in jargs):
        jargs = _match_vma(jargs)
    outs = st.fwd.bind(*jargs, static=skey)
    if len(outs) == 1:
        in_sds = _in_sds(op, [_typeof(a) for a in jargs])
        if op._resolve(in_sds, skey).single:
            return outs[0]
    return tuple(outs)
