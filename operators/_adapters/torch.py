"""PyTorch adapter: every Operator is a ``torch.library.custom_op`` named ``tiarray::<name>``.

Schema: ``tiarray::<name>(Tensor <input>..., str static) -> Tensor[]``. Scalar kernel
parameters are 0-d tensors in the schema (a Python number is wrapped on the way in), so
a learnable scalar can be an input and ``torch.compile`` sees no Python floats. Static
parameters travel as one string argument, ``repr`` of the sorted ``(name, value)``
pairs: strings are constants for ``torch.compile``, so each static variant is a separate
specialisation, and the string names the variant in graphs and error messages.

- ``register_fake`` computes the outputs from ``outs`` (shapes, contiguous strides, the
  inputs' device);
- ``register_autograd`` differentiates with the Operator's rules when it has them
  (``transpose`` for the inputs in ``linear``, else the ``jvp`` rule transposed by torch's
  autograd), and otherwise with Taichi autodiff through a second custom op,
  ``tiarray::<name>_vjp`` (the kernel's reverse-mode variant; it has its own fake
  implementation, so ``torch.compile`` traces the backward too);
- eager calls take the cheapest correct route: nothing to record (no input requires
  grad, no tracing, no ``torch.func`` transform, no dispatch/function mode, plain
  tensors) -> a direct launch; inputs that require grad -> a ``torch.autograd.Function``
  with the same backward as the custom op (the dispatcher's Python layers cost ~150 us
  a call); tracing, transforms, modes, subclasses -> the custom op. Under
  ``torch.compile``, ``Operator.__call__`` hands the call to an ``allow_in_graph``
  entry point, so Dynamo never traces the dispatch code (caches, locks).

CUDA tensors: Taichi launches on the legacy default stream; the launch is ordered after
the work queued on torch's current stream, and torch's current stream after the launch,
with CUDA events (no host synchronisation).
"""

from __future__ import annotations

import ast
import importlib.abc
import importlib.util
import keyword
import sys
import threading

import torch

from tiarray._internal import P_FLOAT as _P_FLOAT
from tiarray._internal import dtypes as _dtypes

from ._eager import (
    CACHES,
    HostInputs,
    ensure_init,
    guard_checks,
    make_plan,
    program,
    run_plan,
    runner_inputs,
    scratch_outs,
    set_runners,
)

__all__ = ["call"]

_Tensor = torch.Tensor
_TDT: dict = {}  # torch dtype -> tiarray DType
_TDT_BACK: dict = {}  # tiarray DType -> torch dtype


def _tdtype(op, name, t):
    d = _TDT.get(t)
    if d is None:
        d = _dtypes._BY_NAME.get(str(t).rsplit(".", 1)[-1])
        if d is None:
            raise TypeError(
                f"{op.name}: argument '{name}' has torch dtype {t}, which tiarray does not support"
            )
        _TDT[t] = d
    return d


def _torch_dtype(d: _dtypes.DType):
    t = _TDT_BACK.get(d)
    if t is None:
        t = getattr(torch, d.name)
        _TDT_BACK[d] = t
    return t


# ----------------------------------------------------------------------------- eager engine


def _build(op, skey, args, key):
    params = op._params
    op._check_nargs(len(args))
    in_sds = []
    dev = None
    for i, a in enumerate(args):
        p = params[i]
        if isinstance(a, _Tensor):
            d = _tdtype(op, p.name, a.dtype)
            if a.layout != torch.strided:
                raise TypeError(f"{op.name}: argument '{p.name}' has layout {a.layout}; use .to_dense()")
            if p.is_array:
                if dev is None:
                    dev = a.device
                elif a.device != dev:
                    raise TypeError(f"{op.name}: argument '{p.name}' is on {a.device}, other inputs on {dev}")
                in_sds.append((d, tuple(a.shape)))
            else:
                if a.dim() != 0:
                    raise TypeError(
                        f"{op.name}: argument '{p.name}' is a scalar parameter ({p.dtype.name}); got a tensor "
                        f"of shape {tuple(a.shape)}"
                    )
                in_sds.append((p.dtype, ()))
        else:
            if p.is_array:
                raise TypeError(
                    f"{op.name}: argument '{p.name}' must be a tensor (the kernel's parameter is a "
                    f"ti.types.ndarray), got {type(a).__name__}"
                )
            _check_number(op, p, a)
            in_sds.append((p.dtype, ()))
    if dev is None:
        dev = torch.device("cpu")
    if dev.type not in ("cpu", "cuda"):
        raise TypeError(f"{op.name}: tensors on device '{dev}' are not supported; tiarray takes cpu and cuda")
    if dev.type == "cuda":  # pragma: no cover - needs a GPU
        from tiarray import _internal as _core

        # (the plan key holds the device: a plan is never reused for another CUDA device)
        rt = _core.current_device()
        if rt.kind == "cuda" and (dev.index or 0) != rt.index:
            raise TypeError(
                f"{op.name}: the torch tensors live on {dev}, but Taichi computes on {rt}; move them there"
            )
    plan = make_plan(op, skey, tuple(in_sds), "torch", dev.type)
    plan.native_out = (
        tuple(
            torch.empty((), dtype=_torch_dtype(d), device=dev).expand(shape)
            for d, shape in zip(plan.out_dtypes, plan.out_shapes)
        ),
        dev,
    )
    if dev.type == "cpu" and plan.alias is None:
        # the direct route's whole call as generated code (None where it does not apply), and
        # the same checking its own signature for Operator.__call__'s fast path
        ins = runner_inputs(plan, args, _Tensor)
        # torch.zeros(16, dtype=D) ~1.07 us, zeros_like of a template 1.19, zeros((16,), dtype=D) 1.6
        outs = [
            (f"Z({', '.join(map(str, sh)) or '()'}, dtype=D{j})", nb, ls)
            for j, (sh, nb, ls) in enumerate(zip(plan.out_shapes, plan.out_nbytes, plan.out_launch))
        ]
        names = {"Z": torch.zeros, **{f"D{j}": _torch_dtype(d) for j, d in enumerate(plan.out_dtypes)}}
        # the fast twin reads what ``call`` reads for the plan key and the route (exact type,
        # dtype, shape, CPU, no grad, no torch transform or mode; a real tensor has no conjugate
        # bit); not the layout: a sparse or MKL-DNN tensor raises in is_contiguous/data_ptr,
        # which sends the call to the full path and its error
        names.update(T=_Tensor, fa=_functorch_active, dd=_dispatch_depth, tf=_tf_mode, fw=_fwad)
        checks = guard_checks(
            args, _Tensor, names, tname="T", dtype="dtype", shape="shape",
            more=lambda a: " and {a}.is_cpu and not {a}.requires_grad" + (" and not {a}.is_conj()" if a.dtype.is_complex else ""),
        )  # fmt: skip
        scratch = scratch_outs(
            plan, names, lambda shape, d: f"Z({', '.join(map(str, shape)) or '()'}, dtype={d})", _torch_dtype,
            lambda: torch.zeros(1),
        )  # fmt: skip
        set_runners(
            plan, skey, ins, outs,
            ready="{a}.is_contiguous() and not {a}.is_neg() and not {a}.is_conj()",
            fast_ready="{a}.is_contiguous() and not {a}.is_neg()",
            ptr="{a}.data_ptr()",
            names=names,
            checks=checks,
            pre="not fa() and not dd() and not tf() and fw._current_level < 0",
            scratch=scratch,
            hosts=_hosts,
        )  # fmt: skip
    op._plans[key] = plan
    return plan


def _check_number(op, p, a):
    if isinstance(a, (bool, int, float)) and not isinstance(a, complex):
        return
    import numbers

    if isinstance(a, numbers.Real):
        return
    raise TypeError(
        f"{op.name}: argument '{p.name}' is a scalar parameter; expected a number or a 0-d tensor, got "
        f"{type(a).__name__}"
    )


def _key(skey, args):
    return (
        "torch",
        skey,
        *[(a.dtype, a.shape, a.device, a.layout) if isinstance(a, _Tensor) else type(a) for a in args],
    )


def _eager(op, skey, args, key=None):
    if key is None:
        key = _key(skey, args)
    if program() is not CACHES.prog:  # first call, or Taichi was reset
        ensure_init()
    plan = op._plans.get(key)
    if plan is None:
        plan = _build(op, skey, args, key)
    vals = []
    keep = None
    contig = [] if plan.extra else None
    for conv, shp, a in zip(plan.in_conv, plan.in_shapes, args):
        if conv is None:
            # (a real tensor can carry the negative bit: .imag of a conjugate view)
            if not a.is_contiguous() or a.is_neg() or a.is_conj():
                a = a.resolve_conj().resolve_neg().contiguous()
                keep = (keep or []) + [a]
            vals.append((a.data_ptr(), a.nbytes, shp))
        else:
            vals.append(conv(a.item() if isinstance(a, _Tensor) else a))
        if contig is not None:
            contig.append(a)
    tmpls, dev = plan.native_out
    outs = []
    alias = plan.alias
    for j, (tmpl, nb, ls) in enumerate(zip(tmpls, plan.out_nbytes, plan.out_launch)):
        if alias is None or alias[j] is None:
            # zeros_like of a memory-less template (shape, dtype, device) is the cheapest
            # zero-filled allocation torch has (~1 us; torch.zeros(shape, ...) ~1.6 us)
            o = _zeros_like(tmpl, memory_format=_contiguous)
        else:  # the output starts as a copy of its input (Operator aliases)
            o = _aliased_out(args[alias[j]])
        outs.append(o)
        vals.append((o.data_ptr(), nb, ls))
    spec = plan.spec
    if contig is not None:
        spec, keep = _extra(plan, contig, vals, dev, keep)
    if dev.type == "cuda":  # pragma: no cover - needs a GPU
        _launch_cuda(spec, vals, dev)
    else:
        spec.launch(vals)
    del keep
    return outs, plan


def _hosts(args):
    """What a per-call policy reads of a call's arguments: NumPy views, made when read."""
    return HostInputs(len(args), lambda i: _host(args[i]))


def _host(a):
    if isinstance(a, _Tensor):
        return a.detach().numpy() if a.requires_grad else a.numpy()
    return a


def _extra(plan, contig, vals, dev, keep):
    """Scratch buffers and the per-call variant: appends the scratch launch values."""
    spec, scratch = plan.select(HostInputs(len(contig), lambda i: _host(contig[i])) if plan.decide else ())
    for shape, ls, nb, d in scratch:
        if nb:
            o = torch.zeros(shape, dtype=_torch_dtype(d), device=dev)
            keep = (keep or []) + [o]
            vals.append((o.data_ptr(), nb, ls))
        else:  # nothing to zero: a constant non-null pointer (the launch context keeps it)
            vals.append((1, 0, ls))
    return spec, keep


_zeros_like = torch.zeros_like
_contiguous = torch.contiguous_format


def _aliased_out(a):
    """A new contiguous tensor holding ``a``'s values (an output that starts from an input)."""
    return a.detach().resolve_conj().resolve_neg().clone(memory_format=_contiguous)


def _launch_cuda(spec, vals, dev):  # pragma: no cover - needs a GPU (benchmarks/gpu_check.py)
    from . import _cuda_ops

    stream = torch.cuda.current_stream(dev).cuda_stream
    _cuda_ops.order(stream, before=True)
    spec.launch(vals)
    _cuda_ops.order(stream, before=False)


def _launch_grad_cuda(spec, vals, grads, dev):  # pragma: no cover - needs a GPU
    from . import _cuda_ops

    stream = torch.cuda.current_stream(dev).cuda_stream
    _cuda_ops.order(stream, before=True)
    spec.launch(vals, grads)
    _cuda_ops.order(stream, before=False)


# ----------------------------------------------------------------------------- static strings

_static_by_str: dict = {}


def _static_str(skey: tuple) -> str:
    s = repr(skey)
    if s not in _static_by_str:
        _static_by_str[s] = skey
    return s


def _static_from_str(op, s: str) -> tuple:
    skey = _static_by_str.get(s)
    if skey is None:  # a graph saved by another process: the repr of literals parses back
        try:
            skey = ast.literal_eval(s)
        except (ValueError, SyntaxError):
            raise ValueError(f"{op.name}: unknown static parameters {s!r}") from None
        _static_by_str[s] = skey
    return skey


# ----------------------------------------------------------------------------- custom ops

_RESERVED = {"self", "out", "static", "mask", "cts"}
_ops_lock = threading.RLock()
_used_names: set = set()


def _arg_name(n):
    return n + "_" if n in _RESERVED else n


class _TorchOp:
    def __init__(self, op):
        self.op = op
        # an identifier torch's schema parser takes: ASCII letters, digits and '_' (a non-ASCII
        # letter raised UnicodeDecodeError), not starting with a digit, not a keyword ('def':
        # "expected ident but found 'def'")
        base = "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in op.name)
        if not base or base[0].isdigit() or keyword.iskeyword(base):
            base = "op_" + base
        with _ops_lock:
            name = base
            k = 2
            while name in _used_names:
                name = f"{base}_{k}"
                k += 1
            _used_names.add(name)
        self.name = name
        self._fwd = {}  # n_in -> op handle (the number of inputs is fixed by the first call)
        self._lock = threading.Lock()

    def ops(self, n_in):
        h = self._fwd.get(n_in)
        if h is None:
            with self._lock:
                h = self._fwd.get(n_in)
                if h is None:
                    h = self._define(n_in)
                    self._fwd[n_in] = h
        return h

    def _define(self, n_in):
        op = self.op
        names = [_arg_name(p.name) for p in op._params[:n_in]]
        suffix = "" if not self._fwd else f"_{n_in}in"
        fname = f"tiarray::{self.name}{suffix}"
        vname = f"tiarray::{self.name}{suffix}_vjp"
        schema = "(" + ", ".join([f"Tensor {n}" for n in names] + ["str static"]) + ") -> Tensor[]"
        vschema = (
            "("
            + ", ".join([f"Tensor {n}" for n in names] + ["Tensor[] cts", "str static", "str mask"])
            + ") -> Tensor[]"
        )

        def impl(*args):
            *inputs, static = args
            return _eager(op, _static_from_str(op, static), inputs)[0]

        def fake(*args):
            *inputs, static = args
            res = _resolve_tensors(op, inputs, _static_from_str(op, static))
            dev = _device_of(inputs)
            return [torch.empty(o.shape, dtype=_torch_dtype(o.dtype), device=dev) for o in res.outs]

        def vjp_impl(*args):
            *inputs, cts, static, mask = args
            return _taichi_vjp(op, inputs, cts, _static_from_str(op, static), _mask_from_str(mask))

        def vjp_fake(*args):
            *inputs, cts, static, mask = args
            m = _mask_from_str(mask)
            return [torch.empty(a.shape, dtype=a.dtype, device=a.device) for a, b in zip(inputs, m) if b]

        fwd = torch.library.custom_op(fname, impl, mutates_args=(), schema=schema)
        fwd.register_fake(fake)
        vjp = torch.library.custom_op(vname, vjp_impl, mutates_args=(), schema=vschema)
        vjp.register_fake(vjp_fake)

        def setup_context(ctx, inputs, output):
            *ins, static = inputs
            ctx.static = static
            ctx.n_in = len(ins)
            tensors = [a for a in ins]
            ctx.save_for_backward(*tensors, *output)
            ctx.n_out = len(output)

        def backward(ctx, grads):
            saved = ctx.saved_tensors
            inputs = list(saved[: ctx.n_in])
            outputs = saved[ctx.n_in :]
            needs = ctx.needs_input_grad[: ctx.n_in]
            if isinstance(grads, torch.Tensor):
                grads = [grads]
            cts = [torch.zeros_like(o) if g is None else g for g, o in zip(grads, outputs)]

            def run_vjp(inputs, cts, mask):
                return vjp(*inputs, list(cts), ctx.static, "".join("1" if m else "0" for m in mask))

            gin = _backward(op, run_vjp, inputs, cts, _static_from_str(op, ctx.static), needs)
            return (*gin, None)

        def vjp_backward(ctx, grads):
            raise RuntimeError(_second_order_msg(op))

        def vjp_setup(ctx, inputs, output):
            pass

        fwd.register_autograd(backward, setup_context=setup_context)
        vjp.register_autograd(vjp_backward, setup_context=vjp_setup)
        return fwd, vjp


def _mask_from_str(s: str) -> tuple:
    return tuple(c == "1" for c in s)


def _device_of(inputs):
    for a in inputs:
        if isinstance(a, _Tensor) and a.dim() > 0:
            return a.device
    for a in inputs:
        if isinstance(a, _Tensor):
            return a.device
    return torch.device("cpu")


def _resolve_tensors(op, inputs, skey):
    sds = []
    for p, a in zip(op._params, inputs):
        if p.is_array:
            sds.append((_tdtype(op, p.name, a.dtype), tuple(int(s) for s in a.shape)))
        else:
            sds.append((p.dtype, ()))
    return op._resolve(tuple(sds), skey)


def _second_order_msg(op):
    return (
        f"{op.name}: second-order differentiation (a gradient of a gradient) needs jvp/transpose rules; "
        "Taichi autodiff gives first-order reverse mode only. Remedy: give Operator(..., jvp=..., "
        "transpose=..., linear=...)"
    )


# ----------------------------------------------------------------------------- backward


def _backward(op, run_vjp, inputs, cts, skey, needs):
    """Input gradients of one call (``None`` where not needed).

    ``run_vjp(inputs, cts, mask)`` runs Taichi autodiff (the ``_vjp`` custom op, or the
    kernel directly on the eager autograd route)."""
    res = _resolve_tensors(op, inputs, skey)
    sd = res.static
    n_in = len(inputs)
    needs = list(needs)
    op._check_nondiff(needs, "torch.autograd")
    gin = [None] * n_in
    todo = [i for i in range(n_in) if needs[i]]
    if not todo:
        return gin
    if op.transpose is not None:
        rest = []
        for i in todo:
            if op._params[i].name not in op.linear:
                rest.append(i)
                continue
            primals = list(inputs)
            primals[i] = _undefined(op, inputs[i])
            r = op.transpose(tuple(cts), tuple(primals), **sd)
            if not isinstance(r, (tuple, list)) or len(r) != n_in:
                raise TypeError(
                    f"{op.name}: the transpose rule must return a tuple with one entry per input ({n_in}), "
                    f"got {r!r}"
                )
            gin[i] = r[i]
        todo = rest
        if todo and op.jvp is None:
            p = op._params[todo[0]]
            raise TypeError(
                f"{op.name}: the gradient with respect to '{p.name}' needs a jvp rule: the Operator is "
                f"declared linear only in {op.linear!r}. Remedy: give Operator(..., jvp=...) or detach it"
            )
    if todo and op.jvp is not None:
        # transpose the jvp rule with torch's autograd: vjp(ct) = d<ct, jvp(t)>/dt. Under
        # create_graph (grad mode on in a backward) the primals stay in the graph and the
        # gradient is differentiable again: detached, a Hessian came out zero (2026-12-05)
        create = torch.is_grad_enabled()
        with torch.enable_grad():
            prim = [a.detach() if isinstance(a, _Tensor) and not create else a for a in inputs]
            tans = [None] * n_in
            leaves = []
            for i in todo:
                t = torch.zeros_like(prim[i], requires_grad=True)
                tans[i] = t
                leaves.append(t)
            tout = op.jvp(tuple(prim), tuple(tans), **sd)
            if res.single and not isinstance(tout, (tuple, list)):
                tout = (tout,)
            if not isinstance(tout, (tuple, list)) or len(tout) != len(cts):
                raise TypeError(
                    f"{op.name}: the jvp rule must return one tangent per output ({len(cts)}), got "
                    f"{len(tout) if isinstance(tout, (tuple, list)) else type(tout).__name__}"
                )
            pairs = [(t, c) for t, c in zip(tout, cts) if t is not None and t.requires_grad]
            if pairs:
                gs = torch.autograd.grad(
                    [t for t, _ in pairs],
                    leaves,
                    [c for _, c in pairs],
                    allow_unused=True,
                    create_graph=create,
                )
            else:
                gs = [None] * len(leaves)
        for i, g in zip(todo, gs):
            gin[i] = torch.zeros_like(inputs[i]) if g is None else g
        todo = []
    if todo:
        # Taichi autodiff: float array inputs only
        mask = [False] * n_in
        for i in todo:
            a = inputs[i]
            if not isinstance(a, _Tensor) or a.dtype.is_floating_point or a.dtype.is_complex:
                mask[i] = True
        op._diff_inputs(mask, "torch.autograd")
        if any(mask):
            outs = run_vjp(inputs, cts, mask)
            it = iter(outs)
            for i in range(n_in):
                if mask[i]:
                    gin[i] = next(it)
    return gin


def _undefined(op, t):
    from .._operator import UndefinedPrimal

    return UndefinedPrimal(tuple(t.shape), _tdtype(op, "?", t.dtype))


def _taichi_vjp(op, inputs, cts, skey, mask):
    """Run the kernel's reverse-mode variant: input gradients for the inputs in ``mask``."""
    res = _resolve_tensors(op, inputs, skey)
    dev = _device_of(inputs)
    from tiarray import _internal as _core

    rt = _core.current_device()
    if rt.kind != dev.type:
        raise TypeError(f"{op.name}: the tensors live on {dev}, but Taichi computes on {rt}")
    gmask = tuple(mask) + tuple(o.dtype.kind in "fc" for o in res.outs)
    spec = op._spec(res, rt.kind, grad_mask=gmask)
    vals, grads, keep, gouts = [], [], [], []
    for p, sd, a, m in zip(op._params, res.in_sds, inputs, mask):
        if p.is_array:
            a = a.detach().resolve_conj().resolve_neg().contiguous()
            keep.append(a)
            shape = sd.shape + (2,) if sd.dtype.kind == "c" else sd.shape
            vals.append((a.data_ptr(), a.nbytes, shape))
            if m:
                g = torch.zeros_like(a)
                gouts.append(g)
                grads.append(g.data_ptr())
            else:
                grads.append(0)
        else:
            v = a.item() if isinstance(a, _Tensor) else a
            vals.append(float(v) if p.kind == _P_FLOAT else int(v))
            grads.append(0)
    for o, c, gm in zip(res.outs, cts, gmask[len(inputs) :]):
        shape = o.shape + (2,) if o.dtype.kind == "c" else o.shape
        scratch = torch.zeros(o.shape, dtype=_torch_dtype(o.dtype), device=dev)
        keep.append(scratch)
        vals.append((scratch.data_ptr(), scratch.nbytes, shape))
        cc = c.detach().to(scratch.dtype).contiguous().clone()  # the kernel may write to out.grad
        keep.append(cc)
        grads.append(cc.data_ptr() if gm else 0)
    if dev.type == "cuda":  # pragma: no cover
        _launch_grad_cuda(spec, vals, grads, dev)
    else:
        spec.launch(vals, grads)
    del keep
    return gouts


# ----------------------------------------------------------------------------- call

_C = torch._C
_functorch_active = getattr(_C, "_are_functorch_transforms_active", lambda: False)
_fwad = torch.autograd.forward_ad
if not hasattr(_fwad, "_current_level"):  # pragma: no cover - a torch without it: no dual levels seen

    class _NoLevels:
        _current_level = -1

    _fwad = _NoLevels()


def _forward_mode(args) -> bool:
    """Whether forward-mode AD sees this call: a ``torch.func.jvp``/``jacfwd`` level on the
    functorch stack, or an input carrying a tangent (``torch.autograd.forward_ad``). Neither
    is registered, and both gave zero or no tangents without a word (2026-12-05)."""
    if _fwad._current_level >= 0:  # a dual_level is open (a module global: ~50 ns)
        for a in args:
            if isinstance(a, _Tensor) and _fwad.unpack_dual(a).tangent is not None:
                return True
    if _functorch_active():
        stack = getattr(_C._functorch, "get_interpreter_stack", lambda: [])() or []
        return any(str(i.key()).endswith("Jvp") for i in stack)
    return False


def _forward_mode_error(op):
    return NotImplementedError(
        f"{op.name}: forward-mode differentiation (torch.func.jvp, torch.func.jacfwd, "
        "torch.autograd.forward_ad) is not supported for tiarray Operators in torch; it would "
        "give zero tangents. Remedy: reverse mode (torch.autograd.grad, torch.func.vjp, "
        "torch.autograd.functional.jacobian), or JAX, where jvp rules give forward mode"
    )


_dispatch_depth = getattr(_C, "_len_torch_dispatch_stack", lambda: 0)
_tf_mode = getattr(_C, "_is_torch_function_mode_enabled", lambda: False)
_is_compiling = torch.compiler.is_compiling
_grad_enabled = torch.is_grad_enabled
_state_lock = threading.Lock()


def _state(op) -> _TorchOp:
    st = op._adapter_state.get("torch")
    if st is None:
        with _state_lock:
            st = op._adapter_state.get("torch")
            if st is None:
                st = _TorchOp(op)
                op._adapter_state["torch"] = st
    return st


class _EagerFunction(torch.autograd.Function):
    """Eager autograd without the custom-op dispatcher (~10x cheaper per call); the
    backward is the same as the custom op's."""

    @staticmethod
    def forward(ctx, op, skey, *args):
        outs, plan = _eager(op, skey, args)
        ctx.op = op
        ctx.skey = skey
        ctx.n_in = len(args)
        tensors = [a if isinstance(a, _Tensor) else None for a in args]
        ctx.scalars = [None if isinstance(a, _Tensor) else a for a in args]
        ctx.save_for_backward(*tensors, *outs)
        nondiff = [o for o in outs if not (o.dtype.is_floating_point or o.dtype.is_complex)]
        if nondiff:
            ctx.mark_non_differentiable(*nondiff)
        ctx.single = plan.single
        return tuple(outs)

    @staticmethod
    def backward(ctx, *grads):
        op = ctx.op
        saved = ctx.saved_tensors
        inputs = [t if t is not None else v for t, v in zip(saved[: ctx.n_in], ctx.scalars)]
        outputs = saved[ctx.n_in :]
        cts = [torch.zeros_like(o) if g is None else g for g, o in zip(grads, outputs)]
        needs = ctx.needs_input_grad[2:]

        def run_vjp(inputs, cts, mask):
            gs = _taichi_vjp(op, inputs, cts, ctx.skey, mask)
            if torch.is_grad_enabled():  # create_graph: a second derivative would be wrong
                deps = [a for a in inputs if isinstance(a, _Tensor) and a.requires_grad]
                gs = [_NoSecondOrder.apply(op, g, *deps) for g in gs]
            return gs

        gin = _backward(op, run_vjp, inputs, cts, ctx.skey, needs)
        return (None, None, *gin)


class _NoSecondOrder(torch.autograd.Function):
    """Identity whose backward raises: marks Taichi-autodiff gradients as first order only."""

    @staticmethod
    def forward(ctx, op, g, *deps):
        ctx.op = op
        return g.view_as(g)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(_second_order_msg(ctx.op))


def _refuse_nested(op, args, a):
    """A clear error for a nested tensor (torch raised 'NestedTensorImpl doesn't support sizes',
    or NotImplementedError for the jagged layout)."""
    if getattr(a, "is_nested", False):
        i = next(j for j, b in enumerate(args) if b is a)
        name = op._params[i].name if i < len(op._params) else str(i)
        raise TypeError(
            f"{op.name}: argument '{name}' is a nested tensor (rows of different lengths), which a kernel's "
            "ndarray cannot take; pad it (torch.nested.to_padded_tensor) or pass its rows one by one"
        )


def call(op, args, static):
    st = op._adapter_state.get("torch")
    if st is None or len(args) not in st._fwd:  # define tiarray::<name> on the first call
        _state(op).ops(len(args))
    skey = op._static_key(static) if static else ()
    fa = _functorch_active()
    if (fa or _fwad._current_level >= 0) and _forward_mode(args):
        raise _forward_mode_error(op)
    if _is_compiling() or fa or _dispatch_depth() or _tf_mode():
        return _call_op(op, skey, args)
    # one pass: the route (direct launch / autograd.Function / custom op) and the plan key
    g = _grad_enabled()
    grad = False
    key = ["torch", skey]
    for a in args:
        if isinstance(a, _Tensor):
            if type(a) is not _Tensor:  # subclasses (and their modes) go through the dispatcher
                _refuse_nested(op, args, a)
                return _call_op(op, skey, args)
            if g and a.requires_grad:
                grad = True
            try:
                key.append((a.dtype, a.shape, a.device, a.layout))
            except RuntimeError:  # a nested tensor has no sizes
                _refuse_nested(op, args, a)
                raise
        else:
            key.append(type(a))
    if not grad:
        # the direct route: _eager inlined (this is the hot path of eager torch code)
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
        keep = None
        for conv, shp, nb, a in zip(plan.in_conv, plan.in_shapes, plan.in_nbytes, args):
            if conv is None:
                if not a.is_contiguous() or a.is_neg() or a.is_conj():
                    a = a.resolve_conj().resolve_neg().contiguous()
                    keep = (keep or []) + [a]  # alive until the launch returns
                vals.append((a.data_ptr(), nb, shp))
            else:
                vals.append(conv(a.item() if isinstance(a, _Tensor) else a))
        tmpls, dev = plan.native_out
        if plan.alias is not None:
            outs = tuple(
                _zeros_like(t, memory_format=_contiguous) if k is None else _aliased_out(args[k])
                for t, k in zip(tmpls, plan.alias)
            )
            for o, nb, ls in zip(outs, plan.out_nbytes, plan.out_launch):
                vals.append((o.data_ptr(), nb, ls))
        elif len(tmpls) == 1:
            o = _zeros_like(tmpls[0], memory_format=_contiguous)
            vals.append((o.data_ptr(), plan.out_nbytes[0], plan.out_launch[0]))
            outs = (o,)
        else:
            outs = tuple(_zeros_like(t, memory_format=_contiguous) for t in tmpls)
            for o, nb, ls in zip(outs, plan.out_nbytes, plan.out_launch):
                vals.append((o.data_ptr(), nb, ls))
        spec = plan.spec
        if plan.extra:
            contig = args
            if keep is not None:  # some inputs were copied: the policy reads the copies
                contig = [
                    a.resolve_conj().resolve_neg().contiguous()
                    if isinstance(a, _Tensor) and conv is None
                    else a
                    for conv, a in zip(plan.in_conv, args)
                ]
            spec, keep = _extra(plan, contig, vals, dev, keep)
        if dev.type == "cuda":  # pragma: no cover - needs a GPU
            _launch_cuda(spec, vals, dev)
        else:
            spec.launch(vals)
        del keep
        return outs[0] if plan.single else outs
    _check_grad_requests(op, args)
    outs = _EagerFunction.apply(op, skey, *args)
    return outs[0] if len(outs) == 1 and _single(op, skey, args) else tuple(outs)


def _single(op, skey, args):
    return _resolve_tensors(op, args, skey).single


def _check_grad_requests(op, targs):
    for p, a in zip(op._params, targs):
        if isinstance(a, _Tensor) and a.requires_grad and torch.is_grad_enabled():
            if p.name in op.nondiff:
                from .._operator import _nondiff_msg

                raise TypeError(_nondiff_msg(op, p.name, "torch.autograd"))
            if not p.is_array and op.jvp is None:
                raise TypeError(
                    f"{op.name}: torch.autograd asks for the gradient with respect to the scalar parameter "
                    f"'{p.name}'; Taichi autodiff gives gradients for array parameters only. Remedy: pass "
                    f"'{p.name}' as a 1-element array parameter, or give Operator(..., jvp=...) rules"
                )


def _call_op(op, skey, args):
    st = _state(op)
    op._check_nargs(len(args))
    params = op._params
    targs = []
    for p, a in zip(params, args):
        if isinstance(a, _Tensor):
            targs.append(a)
        elif p.is_array:
            raise TypeError(
                f"{op.name}: argument '{p.name}' must be a tensor (the kernel's parameter is a "
                f"ti.types.ndarray), got {type(a).__name__}"
            )
        else:
            _check_number(op, p, a)
            targs.append(torch.tensor(a, dtype=_torch_dtype(p.dtype)))
    _check_grad_requests(op, targs)
    fwd, _vjp = st.ops(len(args))
    outs = fwd(*targs, _static_str(skey))
    res = _resolve_tensors(op, targs, skey)
    return outs[0] if res.single else tuple(outs)


# ----------------------------------------------------------------------------- torch.compile


def _traced_entry(uid, skey, *args):
    """The call as torch.compile sees it: Dynamo puts this function into the graph as it
    is (``allow_in_graph``) and AOTAutograd traces it with fake tensors, so the dispatch
    code (caches, locks, op definition) runs as ordinary Python and only the custom op
    reaches the graph."""
    from .._operator import _BY_UID

    op = _BY_UID[uid]
    return _call_op(op, op._static_key(dict(skey)), args)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``callback(module)`` once module ``name`` has been imported (a one-shot finder
    that wraps the module's loader)."""

    def __init__(self, name, callback):
        self.name = name
        self.callback = callback

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)  # one shot; the search below must not find this finder
        spec = importlib.util.find_spec(fullname)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        exec_module = spec.loader.exec_module
        callback = self.callback

        def exec_then_call(module):
            exec_module(module)
            callback(module)

        spec.loader.exec_module = exec_then_call
        return spec


def _allow_in_graph(dynamo) -> None:
    dynamo.allow_in_graph(_traced_entry)


# torch.compile must find _traced_entry marked before it traces an Operator call, but
# importing torch._dynamo costs 1-3 s, which an eager program never needs: mark it now if
# Dynamo is loaded, else the moment it is (torch.compile and torch.export import it).
if "torch._dynamo" in sys.modules:
    _allow_in_graph(sys.modules["torch._dynamo"])
else:
    sys.meta_path.insert(0, _AfterImport("torch._dynamo", _allow_in_graph))


def _traced_call(op, args, static):
    # Runs under Dynamo: pure code only (no caches, no locks, no mutation)
    return _traced_entry(op._uid, tuple(sorted(static.items())), *args)


def _install_hook():
    from .. import _operator

    _operator._TRACE_HOOK[0] = (torch.compiler.is_compiling, _traced_call)


_install_hook()
