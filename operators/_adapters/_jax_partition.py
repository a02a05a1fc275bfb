"""Partitioning of Operators under ``jax.jit`` with sharded inputs (``Operator(partition=...)``).

An Operator lowers to an XLA FFI custom call; XLA does not know how to split a custom
call, so by default it gathers every input onto every device. For an Operator with a
partition rule, the lowering on several devices wraps the call in
``jax.experimental.custom_partitioning``:

- the rule goes to Shardy (``sharding_rule``) for sharding propagation, with every factor
  that is not a map factor marked ``need_replication``;
- ``partition`` (called by XLA's SPMD partitioner at compile time) reads the shardings
  propagation chose, keeps those of map factors whose sizes the mesh axes divide, asks
  for everything else replicated, and returns the per-device computation: the same
  primitive bound on the local shapes (so each device's handler sees its own shard);
- for the Taichi-autodiff VJP, gradients of inputs that lack a split map factor (a
  weight shared by a split batch) are partial sums per device: the per-device
  computation adds them with ``psum`` over the mesh axes of that factor;
- ``infer_sharding_from_operands`` gives the same result shardings for GSPMD (when a
  user turns Shardy off).

Inside ``shard_map`` (every mesh axis manual) and on one device the call is lowered
directly: the avals are already local. Under an explicit-sharding mesh the output
types carry the sharding of their map factors (``explicit_out_specs``).
"""

from __future__ import annotations

import contextvars
import functools
import math
import threading

import jax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

from tiarray import _internal as _core

__all__ = ["direct_lowering", "lower", "explicit_out_specs"]

# Set while our own custom_partitioning call lowers its body: the body is lowered directly.
direct_lowering: contextvars.ContextVar = contextvars.ContextVar("tiarray_direct_lowering", default=False)

_cp_lock = threading.Lock()


def _entries(rule, mode, mask, n_in):
    """Operand and result entries of the custom call of ``mode`` (fwd or vjp)."""
    ins, outs = rule.ins, rule.outs
    if mode == "fwd":
        return ins, outs
    # vjp: operands = primals + output cotangents; results = gradients of the masked
    # inputs, then two scratch copies of the outputs
    return ins + outs, tuple(ins[i] for i in range(n_in) if mask[i]) + outs + outs


def _check(op, rule, ins, outs, in_avals, out_avals):
    """Ranks and factor sizes of one call against the rule; returns the dims' factors."""
    sizes: dict = {}
    dims_in, dims_out = [], []
    for what, entries, avals, dims in (
        ("input", ins, in_avals, dims_in),
        ("output", outs, out_avals, dims_out),
    ):
        for k, (e, a) in enumerate(zip(entries, avals)):
            label = f"{what} {k} (shape {tuple(a.shape)})"
            fs = rule.dim_factors(e, len(a.shape), op.name, label)
            for f, n in zip(fs, a.shape):
                m = sizes.setdefault(f, (n, label))
                if m[0] != n:
                    name = "..." if isinstance(f, tuple) else f
                    raise ValueError(
                        f"{op.name}: the partition rule {rule.text!r} gives factor '{name}' size {m[0]} in "
                        f"{m[1]} and size {n} in {label}"
                    )
            dims.append(fs)
    return dims_in, dims_out


def lower(jop, ctx, operands, static, mode, mask, n_in):
    """Lower a call of an Operator with a partition rule for several devices."""
    op = jop.op
    rule = op.partition
    if n_in != rule.n_in:
        raise TypeError(
            f"{op.name}: the partition rule {rule.text!r} has {rule.n_in} input entries, but this call "
            f"gives {n_in} inputs"
        )
    ins, outs = _entries(rule, mode, mask, n_in)
    _check(op, rule, ins, outs, ctx.avals_in, ctx.avals_out)
    # XLA calls ``partition`` on its compile thread, where the kernel for the local shapes
    # is compiled; Taichi builds its root SNode tree only on the thread that ran ti.init:
    # do that now (this thread lowers the computation).
    _core.materialize()
    cp = _custom_partitioned(jop, mode, static, mask, n_in)
    token = direct_lowering.set(True)
    try:
        return jax.interpreters.mlir.lower_fun(cp, multiple_results=True)(ctx, *operands)
    finally:
        direct_lowering.reset(token)


def _custom_partitioned(jop, mode, static, mask, n_in):
    cache = jop.__dict__.setdefault("_partitioned", {})  # per Operator: dies with it
    key = (mode, static, mask, n_in)
    cp = cache.get(key)
    if cp is not None:
        return cp
    from jax.experimental.custom_partitioning import custom_partitioning

    op = jop.op
    rule = op.partition
    prim = jop.fwd if mode == "fwd" else jop.vjp
    params = {"static": static} if mode == "fwd" else {"static": static, "mask": mask}
    ins, outs = _entries(rule, mode, mask, n_in)
    # gradients of inputs: which input each vjp result belongs to (psum of missing split factors)
    grad_of = [i for i in range(n_in) if mask[i]] if mode == "vjp" else []

    def body(*args):
        return tuple(prim.bind(*args, **params))

    cp = custom_partitioning(body)
    text, need = rule.shardy_text(ins, outs)
    cp.def_partition(
        partition=functools.partial(_partition, op, rule, ins, outs, prim, params, grad_of),
        infer_sharding_from_operands=functools.partial(_infer, rule, ins, outs),
        sharding_rule=text,
        need_replication_factors=need,
    )
    with _cp_lock:
        cp = cache.setdefault(key, cp)
    return cp


# ----------------------------------------------------------------------------- shardings


def _axes(entry) -> tuple:
    if entry is None:
        return ()
    if isinstance(entry, str):
        return (entry,)
    return tuple(entry)


def _spec_entries(sharding, ndim) -> list:
    if not isinstance(sharding, NamedSharding):
        return [()] * ndim
    spec = list(sharding.spec) + [None] * (ndim - len(sharding.spec))
    return [_axes(e) for e in spec[:ndim]]


def _assign(rule, mesh, dims_and_shardings):
    """Mesh axes of each map factor: the first sharding seen for it whose axes divide every
    size of the factor and are not taken by another factor."""
    shape = dict(mesh.shape)
    sizes: dict = {}
    for fs, dims, _ in dims_and_shardings:
        for f, n in zip(fs, dims):
            sizes.setdefault(f, set()).add(n)
    taken: set = set()
    assign: dict = {}
    for fs, _, sharding in dims_and_shardings:
        for f, axes in zip(fs, _spec_entries(sharding, len(fs))):
            if not axes or f in assign or not rule.is_map(f) or taken & set(axes):
                continue
            if any(a not in shape for a in axes):
                continue
            k = math.prod(shape[a] for a in axes)
            if all(n % k == 0 for n in sizes[f]):
                assign[f] = axes
                taken |= set(axes)
    return assign


def _spec(fs, assign) -> P:
    out = []
    for f in fs:
        axes = assign.get(f, ())
        out.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return P(*out)


def _dims(rule, op_name, entries, shapes):
    return [
        rule.dim_factors(e, len(s.shape), op_name, f"array {k}")
        for k, (e, s) in enumerate(zip(entries, shapes))
    ]


def _partition(op, rule, ins, outs, prim, params, grad_of, mesh, arg_shapes, result_shape):
    arg_shapes = tuple(arg_shapes)
    res_shapes = tuple(result_shape)
    fin = _dims(rule, op.name, ins, arg_shapes)
    fout = _dims(rule, op.name, outs, res_shapes)
    # results first: they carry the shardings propagation chose for this call
    assign = _assign(
        rule,
        mesh,
        [(fs, s.shape, s.sharding) for fs, s in zip(fout, res_shapes)]
        + [(fs, s.shape, s.sharding) for fs, s in zip(fin, arg_shapes)],
    )
    arg_sh = tuple(NamedSharding(mesh, _spec(fs, assign)) for fs in fin)
    res_sh = tuple(NamedSharding(mesh, _spec(fs, assign)) for fs in fout)
    # gradients: sum over the devices that split a map factor the input does not have
    psum_axes = []
    for i in grad_of:
        have = set(fin[i])
        psum_axes.append(tuple(a for f, axes in assign.items() if f not in have for a in axes))

    def lower_fn(*args):
        token = direct_lowering.set(True)
        try:
            r = list(prim.bind(*args, **params))
        finally:
            direct_lowering.reset(token)
        for k, axes in enumerate(psum_axes):
            if axes:
                r[k] = jax.lax.psum(r[k], axes)
        return tuple(r)

    return mesh, lower_fn, res_sh, arg_sh


def _infer(rule, ins, outs, mesh, arg_shapes, result_shape):
    arg_shapes = tuple(arg_shapes)
    res_shapes = tuple(result_shape)
    fin = _dims(rule, "operator", ins, arg_shapes)
    fout = _dims(rule, "operator", outs, res_shapes)
    assign = _assign(rule, mesh, [(fs, s.shape, s.sharding) for fs, s in zip(fin, arg_shapes)])
    return tuple(NamedSharding(mesh, _spec(fs, assign)) for fs in fout)


# ----------------------------------------------------------------------------- explicit sharding


def explicit_out_specs(op, in_avals, out_ndims, mesh) -> list:
    """Partition specs of the outputs under a mesh: map factors keep the explicit sharding
    of the inputs that have them; everything else is replicated."""
    rule = op.partition
    repl = [(None,) * n for n in out_ndims]
    if rule is None or len(in_avals) != rule.n_in or len(out_ndims) != len(rule.outs):
        return repl
    try:
        fin = [rule.dim_factors(e, len(a.shape), op.name, "input") for e, a in zip(rule.ins, in_avals)]
        fout = [rule.dim_factors(e, n, op.name, "output") for e, n in zip(rule.outs, out_ndims)]
    except ValueError:
        return repl  # reported when the call is lowered
    items = []
    for fs, a in zip(fin, in_avals):
        sh = getattr(a, "sharding", None)
        if isinstance(sh, NamedSharding) and not sh.mesh.empty:
            items.append((fs, a.shape, sh))
    if not items:
        return repl
    explicit = {
        name
        for name, t in zip(mesh.axis_names, getattr(mesh, "axis_types", ()))
        if t == jax.sharding.AxisType.Explicit
    }
    if not explicit:
        return repl
    assign = _assign(rule, mesh, items)
    assign = {f: axes for f, axes in assign.items() if set(axes) <= explicit}
    return [tuple(_spec(fs, assign)) for fs in fout]
