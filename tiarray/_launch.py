"""A fast launcher for ``@ti.kernel`` functions on memory given by pointer.

Taichi's own ``kernel(*args)`` path inspects every argument in Python on every call,
accepts only NumPy arrays and torch tensors, and costs about 140 us for a three-array
kernel on 16 elements. This module compiles a kernel once per *signature* (the dtype and
ndim of each array parameter and the values of its ``ti.template()`` parameters), keeps
the compiled artefact, and on each call only fills a launch context with pointers and
scalars: a few microseconds.

It also works around the cost of Taichi's CPU thread pool: waking it costs about 30 us
per parallel loop, more than the whole work of a small kernel. On the CPU every kernel is
therefore compiled in two variants, the normal one and one whose outermost loops are
serialised (``ti.loop_config(serialize=True)`` inserted before each), and a call picks the
serial variant when the arrays it touches are small (``serial_threshold`` bytes).

Conventions for array parameters (``ti.types.ndarray``):

- memory must be C-contiguous (Taichi's external arrays have no strides); the
  caller makes contiguous copies where needed;
- ``bool`` data is passed as ``u8``; complex data as real pairs, i.e. an array of the
  real dtype with a trailing axis of length 2 (so a ``complex64`` array of ndim ``n``
  matches ``ti.types.ndarray(dtype=ti.f32, ndim=n + 1)``);
- ``bfloat16`` has no Taichi type and is refused.

Taichi's kernel internals (materialisation, compilation, the launch context) are reached
through the boundary, :mod:`tiarray._backend`; the specs keep the backend's own bound
methods, so a launch calls no wrapper.
"""

from __future__ import annotations

import ast
import ctypes
import functools
import itertools
import math
import os as _os
import re
import sys
import threading

import numpy as np

from . import _backend, _dtypes, _runtime
from ._array_object import TiArray
from ._backend import ti
from ._foreign import view_of as _view_of
from ._hostptr import numpy_data_ptr as _numpy_data_ptr

__all__ = ["Launcher", "launcher", "KernelSignatureError", "set_serial_threshold"]

# Arrays touching at most this many bytes in total run in the serial variant on the CPU.
# Measured on 2 cores (benchmarks/bench_launch.py): Taichi's pool costs ~30 us a loop,
# while one core streams ~10 GB/s, so below ~256 KiB one thread finishes first.
_SERIAL_THRESHOLD = [1 << 18]

# Vectorised streaming kernels (element-wise span kernels, flat and row reductions) move
# ~60 GB/s on one core of that machine, not ~10: they pass ``speed`` (up to STREAM) to
# ``Launcher.use_serial``, which scales the threshold by it. Measured break-evens on 2
# threads (``python benchmarks/bench_array_api.py -k "mid-size"``, docs/array_api.md):
# float32 ``add`` about 5e5 elements (6 MB), ``sum``/``max`` about 1.5e6 (6 MB), i.e. a
# serial run of ~100 us.
STREAM = 24.0
_THREAD_FACTOR = [None]  # of the running program (a per-program cache)
_runtime.register_cache(lambda: _THREAD_FACTOR.__setitem__(0, None))


def _thread_factor() -> float:
    """How the break-even of a parallel launch moves with the pool's size ``p``, relative to
    2 threads: a launch of ``t`` serial seconds pays when ``pool + t / p < t``, i.e. from
    ``t = pool * p / (p - 1)``; a pool of one never pays."""
    if _program() is not _CACHES.prog:
        _runtime.sync_caches()
    f = _THREAD_FACTOR[0]
    if f is None:
        p = _runtime.cpu_workers()
        f = _THREAD_FACTOR[0] = float("inf") if p <= 1 else p / (2.0 * (p - 1))
    return f


_program = _runtime.program
_CACHES = _runtime.CACHES
_compile_lock = _runtime.lock  # compiles and the registry's clears exclude each other

# The compile options of tiarray's own kernels: IEEE semantics (NaN, infinities, signed
# zeros), whatever ``fast_math`` the program was started with (a user's ti.init keeps
# Taichi's default, fast_math=True). Kernels that want fast math ask for it per Launcher.
IEEE = {"fast_math": False}
# Taichi keeps per-runtime global temporaries (loop bounds, reductions): two kernels must
# not run at once. Launches hold the GIL in Taichi 1.7, the lock makes it explicit.
_launch_lock = threading.RLock()


def set_serial_threshold(nbytes: int) -> int:
    """Set the size (bytes of array data per launch) under which CPU kernels run serially.

    Returns the previous value. ``0`` always uses Taichi's parallel loops; a huge value
    always the serial ones. Kernels that stream their data vectorised scale the threshold
    up (contiguous element-wise functions of cheap operations and real reductions by up to
    24x, i.e. 6 MiB with the default 256 KiB on 2 threads), costly element-wise operations
    (``tanh``, ``sin`` ...) scale it down by their cost per element, and larger thread
    pools lower it (by ``p / (2 (p - 1))``).

    Examples
    --------
    >>> import tiarray as ta
    >>> old = ta.set_serial_threshold(0)  # every CPU kernel parallel
    >>> _ = ta.set_serial_threshold(old)
    """
    old = _SERIAL_THRESHOLD[0]
    _SERIAL_THRESHOLD[0] = int(nbytes)
    return old


def _no_contiguous_copy(x):
    raise RuntimeError("tiarray._kernels.copy is not loaded: the launcher cannot copy a strided argument")


# ``(x) -> (contiguous copy, write-back or None)`` for a strided array argument: copies need
# the copy kernels, a layer above this one, which attach it (tiarray._kernels.copy).
_contiguous_copy = [_no_contiguous_copy]


def attach_contiguous_copy(fn) -> None:
    _contiguous_copy[0] = fn


class KernelSignatureError(TypeError):
    """An argument does not match the kernel's annotation (dtype, ndim, kind)."""


# ----------------------------------------------------------------------------- serial variant


class _SerializeTopLevelLoops:
    """Insert ``ti.loop_config(serialize=True)`` before every outermost ``for`` loop.

    Struct-for loops over an ndarray parameter (``for i in x``, ``for I in
    ti.grouped(x)``), which Taichi cannot serialise, are first rewritten as the equivalent
    range loops over ``x.shape``.
    """

    NAME = "__tiarray_loop_config__"

    def __init__(self, array_ndims: dict):
        self.array_ndims = array_ndims  # ndarray parameter name -> ndim

    def _stmt(self):
        call = ast.Call(
            func=ast.Name(id=self.NAME, ctx=ast.Load()),
            args=[],
            keywords=[ast.keyword(arg="serialize", value=ast.Constant(value=True))],
        )
        return ast.Expr(value=call)

    def _shape_dims(self, name: str, n: int):
        return [
            ast.Subscript(
                value=ast.Attribute(value=ast.Name(id=name, ctx=ast.Load()), attr="shape", ctx=ast.Load()),
                slice=ast.Constant(value=d),
                ctx=ast.Load(),
            )
            for d in range(n)
        ]

    def _ndrange(self, name: str, n: int):
        return ast.Call(
            func=ast.Attribute(
                value=ast.Name(id="__tiarray_ti__", ctx=ast.Load()), attr="ndrange", ctx=ast.Load()
            ),
            args=self._shape_dims(name, n),
            keywords=[],
        )

    def _rewrite_struct_for(self, loop: ast.For) -> None:
        it = loop.iter
        if isinstance(it, ast.Name) and it.id in self.array_ndims:
            n = len(loop.target.elts) if isinstance(loop.target, ast.Tuple) else 1
            loop.iter = self._ndrange(it.id, n)
        elif (
            isinstance(it, ast.Call)
            and isinstance(it.func, ast.Attribute)
            and it.func.attr == "grouped"
            and len(it.args) == 1
            and isinstance(it.args[0], ast.Name)
            and it.args[0].id in self.array_ndims
        ):
            name = it.args[0].id
            it.args = [self._ndrange(name, self.array_ndims[name])]

    def rewrite_body(self, body):
        out = []
        for stmt in body:
            if isinstance(stmt, ast.For):
                self._rewrite_struct_for(stmt)
                prev = out[-1] if out else None
                if not _is_loop_config(prev):
                    out.append(self._stmt())
                out.append(stmt)
            elif isinstance(stmt, ast.If):
                # loops under `if ti.static(...)` are still outermost loops
                stmt.body = self.rewrite_body(stmt.body)
                stmt.orelse = self.rewrite_body(stmt.orelse)
                out.append(stmt)
            else:
                out.append(stmt)
        return out


def _is_loop_config(stmt) -> bool:
    if not isinstance(stmt, ast.Expr) or not isinstance(stmt.value, ast.Call):
        return False
    f = stmt.value.func
    return (isinstance(f, ast.Attribute) and f.attr == "loop_config") or (
        isinstance(f, ast.Name) and f.id in ("loop_config", _SerializeTopLevelLoops.NAME)
    )


def _serialize_rewrite(fdef, array_ndims: dict) -> dict:
    """The serial variant's AST rewrite (``_backend.new_kernel(..., rewrite=...)``)."""
    fdef.body = _SerializeTopLevelLoops(array_ndims).rewrite_body(fdef.body)
    return {_SerializeTopLevelLoops.NAME: ti.loop_config, "__tiarray_ti__": ti}


# ----------------------------------------------------------------------------- parameters

_P_ARRAY, _P_FLOAT, _P_INT, _P_UINT, _P_TEMPLATE = (
    _backend.ARRAY, _backend.FLOAT, _backend.INT, _backend.UINT, _backend.TEMPLATE,
)  # fmt: skip


class _Param:
    __slots__ = ("name", "kind", "anno", "ti_dtype", "ndim", "elem_shape", "index", "needs_grad", "boundary")

    def __init__(self, name, anno, index):
        self.name = name
        self.anno = anno
        self.index = index
        kind, self.ti_dtype, self.ndim, self.elem_shape, self.needs_grad, self.boundary = _backend.param_info(
            anno
        )
        if kind is None:
            raise KernelSignatureError(
                f"parameter '{name}' has annotation {anno!r}; tiarray launches kernels whose parameters "
                "are ti.types.ndarray(), scalar types (ti.f32, ti.i32, ...) or ti.template()"
            )
        self.kind = kind


def _ti_dtype_of(dtype: _dtypes.DType):
    """(taichi primitive type, extra trailing axis) used to pass data of ``dtype``."""
    if dtype._ti_name is None:
        raise KernelSignatureError(f"{dtype.name} arrays cannot be passed to Taichi kernels")
    return getattr(ti, dtype._ti_name), (2,) if dtype.kind == "c" else ()


# ----------------------------------------------------------------------------- specs


class _Spec:
    """One compiled specialisation: a Taichi kernel object and its compiled artefact.

    Forward launches reuse one launch context per spec (under the launch lock) and set
    only the arguments whose value changed since the previous launch: each
    ``set_arg_*`` call costs about 1 us, a new context another 1 us, and a caller that
    launches on the same inputs again (a jitted JAX function, a training loop) pays only
    for what changed; on the CPU only (see ``reuse_contexts``). An array argument whose
    pointer alone changed (a new output of the same shape) is written where the context
    keeps it (``_find_slot``, 0.03 us against the setter's 0.84). Reverse-mode launches
    (``grads``) use a fresh context.
    """

    __slots__ = (
        "t_kernel", "compiled", "run", "setters", "_ctx", "_last", "_aslots", "_direct", "label", "arg_names"
    )  # fmt: skip

    def launch(self, values, grads=None):
        """Run with one value per non-template parameter.

        Arrays are ``(ptr, nbytes, shape)``; ``grads`` (reverse mode) gives one gradient
        pointer (or 0) per non-template parameter.
        """
        # a fresh context: reverse mode, and every launch off the CPU (see reuse_contexts;
        # debug mode is the CPU's only, so it is never skipped here)
        if grads is not None or not (_REUSE[0] or reuse_contexts()):
            ctx = self.t_kernel.make_launch_context()
            for (kind, idx), v, g in zip(self.setters, values, _NO_GRADS if grads is None else grads):
                _set_arg(ctx, kind, idx, v, g, self)
            with _launch_lock:
                try:
                    self.run(self.compiled, ctx)
                except AssertionError as e:  # Taichi's checks (debug mode) and kernel asserts
                    raise _kernel_error(self, values, e) from None
            return
        if _DEBUG[0] is not False and debug_mode():
            return _debug_launch(self, values)
        with _launch_lock:
            ctx = self._ctx
            last = self._last
            if ctx is None:
                ctx = self._ctx = self.t_kernel.make_launch_context()
                last = self._last = [_UNSET] * len(self.setters)
                self._aslots = {}  # argument -> where ctx keeps its data pointer (0: unknown)
                self._direct = _DIRECT_TRIES
            # direct: (tasks, rc, {argument: where the tasks read its data pointer}) once
            # known (see _learn_direct); an int while not: the tries left
            direct = self._direct
            at = direct[2] if direct.__class__ is tuple else None
            i = 0
            for (kind, idx), v in zip(self.setters, values):
                # (0.0 == -0.0: zeros are always set, so the sign bit reaches the kernel)
                lv = last[i]
                if lv != v or v == 0:
                    last[i] = _UNSET  # stays unset if the setter raises
                    if kind == _P_ARRAY and lv is not _UNSET and lv[1] == v[1] and lv[2] == v[2]:
                        # only the pointer changed (a new output, say): write it where the
                        # context keeps it (see _array_set), else the setter
                        sl = at[i] if at is not None else self._aslots.get(i)
                        if sl is None:
                            sl = self._aslots[i] = _find_slot(ctx, idx, v)
                        if sl:
                            sl.value = v[0]
                        else:
                            _set_arg(ctx, kind, idx, v, 0, self)
                    else:
                        _set_arg(ctx, kind, idx, v, 0, self)
                        if at is not None and kind == _P_ARRAY:  # the setter sets its map only
                            at[i].value = v[0]
                    last[i] = v
                i += 1
            try:
                if at is not None:
                    rc = direct[1]
                    for t in direct[0]:
                        t(rc)
                    return
                self.run(self.compiled, ctx)
            except AssertionError as e:  # Taichi's checks (debug mode) and kernel asserts
                raise _kernel_error(self, values, e) from None
            if direct:
                self._learn(ctx, values)

    def _learn(self, ctx, values):
        """After a launch through Taichi: how to call the compiled tasks (see _learn_direct)."""
        self._direct -= 1
        ptrs = {i: v[0] for i, ((kind, _), v) in enumerate(zip(self.setters, values)) if kind == _P_ARRAY}
        got = _direct_tasks(ctx, self.compiled, ptrs)
        if got is not None:
            self._direct = got


_MAX_ELEMENTS = 2**31 - 1
_NO_GRADS = itertools.repeat(0)


def host_runner(
    spec: _Spec, ins, outs, single: bool, *, ready: str, ptr: str, names=None, guard=None, n_ret=None
):
    """A forward launch of ``spec`` specialised to one call signature of host arrays:
    ``run(args)`` -> the new outputs (one array when ``single``, else a tuple), or None
    where an array input is not ready to pass by pointer (the caller takes its generic path).

    ``ins``: per kernel input, ``(nbytes, launch shape)`` of an array or ``(conv, None)`` of a
    scalar (``conv(arg)`` gives the Python number; ``conv.fast``, where set, is ``"float"`` or
    ``("int", lo, hi)``: the values conv passes unchanged, tested inline without calling it); ``outs``: per output, ``(alloc, nbytes,
    launch shape)`` with ``alloc()`` a new zero-filled array, or ``alloc`` an expression of
    ``names`` that makes one. ``ready`` and ``ptr`` are the framework's expressions of an
    array ``{a}``: whether it can be passed as it is (C-contiguous, ...), and its data
    pointer; ``names`` what they use. Generated code with the sizes and slots
    inlined and a launch context of its own whose arguments are re-set only when their value
    changed: an eager call costs about the launch itself (the generic path through
    ``spec.launch``, tuples built and compared per argument, costs 1-1.5 us more;
    ``bench_operators.py``). On the CPU only, not in debug mode (every launch there goes
    through ``_debug_launch``), and None for operands past ``_MAX_ELEMENTS`` (the generic
    path raises for them).

    ``guard=(pre, checks)`` makes the runner check the call signature itself, for a caller
    that has not built a plan key (``Operator.__call__``'s fast path): ``run`` returns None
    unless ``args`` has one entry per input, for each input ``i`` the expression ``checks[i]``
    of ``{a}`` holds (the framework's type, dtype, shape ... exactly as the caller's plan key
    would find them), the running program is the one it was made for, and ``pre`` holds.

    ``n_ret``: only the first ``n_ret`` outputs are returned; the others are scratch buffers
    the kernel needs (allocated and zero-filled like outputs, then dropped)."""
    if not reuse_contexts() or debug_mode():
        return None
    ns = dict(names or {})
    ns.update(
        ctx=spec.t_kernel.make_launch_context(), lock=_launch_lock, launch_kernel=spec.run,
        compiled=spec.compiled, L=[None] * len(spec.setters), spec=spec, kernel_error=_kernel_error,
    )  # fmt: skip
    setter = {_P_FLOAT: "set_arg_float", _P_INT: "set_arg_int", _P_UINT: "set_arg_uint"}
    body, sets, values = [], [], []
    n_in = len(ins)
    arrays = [i for i, (_, shape) in enumerate(ins) if shape is not None]
    if guard is not None:
        # one test of the whole signature, inside a try: an argument that cannot even be
        # inspected (a wrong count, a tensor without storage) sends the call to the full path,
        # whose error names it; every input's check comes first, so another framework's call
        # fails on the first; the context belongs to this program (after a reset the full
        # path re-plans)
        pre, checks = guard
        ns.update(prog=_runtime.program, P=_runtime.program())
        names_in = "".join(f"a{i}, " for i in range(n_in))
        conds = [f"({checks[i].format(a=f'a{i}')})" for i in range(n_in)]
        conds += ["prog() is P", f"({pre})"] + [f"({ready.format(a=f'a{i}')})" for i in arrays]
        body.append(f"    try:\n        {names_in or '()'} = args")  # (a wrong count raises: None)
        body.append("        if not (" + "\n                and ".join(conds) + "):\n            return None")
        body.extend(f"        p{i} = {ptr.format(a=f'a{i}')}" for i in arrays)
        body.append("    except Exception:\n        return None")
    for i, (a, shape) in enumerate(ins):
        kind, idx = spec.setters[i]
        if shape is not None:
            if kind != _P_ARRAY or math.prod(shape) > _MAX_ELEMENTS:
                return None
            if guard is None:
                body.append(f"    a{i} = args[{i}]")
                body.append(f"    if not ({ready.format(a=f'a{i}')}):\n        return None")
                body.append(f"    p{i} = {ptr.format(a=f'a{i}')}")
            sets.append(_array_set(ns, i, f"p{i}", idx, a, shape))
            values.append(f"(p{i}, {a}, {shape!r})")
        else:
            if kind not in setter:
                return None
            ns[f"C{i}"] = a
            src = f"a{i}" if guard is not None else f"args[{i}]"
            fast = getattr(a, "fast", None)  # the values the converter passes unchanged, tested inline
            if fast == "float":
                body.append(
                    f"    p{i} = {src}\n    if p{i}.__class__ is not float:\n        p{i} = C{i}(p{i})"
                )
            elif isinstance(fast, tuple):  # ("int", lo, hi)
                body.append(
                    f"    p{i} = {src}\n    if p{i}.__class__ is not int or not {fast[1]} <= p{i} <= {fast[2]}:\n"
                    f"        p{i} = C{i}(p{i})"
                )
            else:
                body.append(f"    p{i} = C{i}({src})")
            # zeros are always set (0.0 == -0.0: the sign bit reaches the kernel), NaN too
            sets.append(
                f"        if L[{i}] != p{i} or p{i} == 0:\n            L[{i}] = None\n"
                f"            ctx.{setter[kind]}({idx!r}, p{i})\n            L[{i}] = p{i}"
            )
            values.append(f"p{i}")
    for j, (alloc, nb, ls) in enumerate(outs):
        kind, idx = spec.setters[n_in + j]
        if kind != _P_ARRAY or math.prod(ls) > _MAX_ELEMENTS:
            return None
        if isinstance(alloc, str):  # an expression of ``names``
            body.append(f"    o{j} = {alloc}")
        else:
            ns[f"A{j}"] = alloc
            body.append(f"    o{j} = A{j}()")
        body.append(f"    q{j} = {ptr.format(a=f'o{j}')}")
        sets.append(_array_set(ns, n_in + j, f"q{j}", idx, nb, ls))
        values.append(f"(q{j}, {nb}, {ls!r})")
    if len(spec.setters) != n_in + len(outs):
        return None
    body.append("    with lock:")
    body.extend(sets)
    body.append("        try:")
    body.append(runner_launch(ns, spec, arrays + [n_in + j for j in range(len(outs))], "            "))
    body.append("        except AssertionError as e:  # kernel asserts")
    body.append(f"            raise kernel_error(spec, [{', '.join(values)}], e) from None")
    n_ret = len(outs) if n_ret is None else n_ret
    res = "o0" if single else "(" + "".join(f"o{j}, " for j in range(n_ret)) + ")"
    body.append(f"    return {res}")
    src = "def run(args):\n" + "\n".join(body) + "\n"
    if _os.environ.get("TIARRAY_SHOW_RUNNERS"):
        print(src)
    exec(compile(src, f"<tiarray {spec.label} runner>", "exec"), ns)
    return ns["run"]


_DIRECT_TRIES = 8


def runner_launch(ns: dict, spec, arrays, indent: str) -> str:
    """A generated runner's launch (``ns``: its globals, with ``ctx``, ``L``, ``compiled``,
    ``launch_kernel`` and the ``S{k}`` slots ``_array_set`` made), its lines indented by
    ``indent``: where every array argument (``arrays``) is written through a slot, Taichi's
    launch until ``_learn_direct`` has learnt the compiled tasks, then the tasks called
    directly; else Taichi's launch every time."""
    if all(f"S{k}" in ns for k in arrays):
        # after Taichi's first launch the slots move to the argument buffer
        ns.update(D=(), R=0, learn=_learn_direct(ns, spec, list(arrays)))
        src = "if D:\n    for t in D:\n        t(R)\nelse:\n    launch_kernel(compiled, ctx)\n    learn()"
    else:
        src = "launch_kernel(compiled, ctx)"
    return "\n".join(indent + line for line in src.split("\n"))


def _learn_direct(ns: dict, spec, slotted):
    """For a runner (``ns``: its globals): after each of its first launches through Taichi
    (at most ``_DIRECT_TRIES``), ask the backend how to call the kernel's compiled tasks
    directly (``direct_tasks``); once known, the runner writes its array pointers where the
    tasks read them and calls the tasks: ~0.15 us instead of Taichi's launch, ~1.3 us
    (``bench_operators.py``). The launch lock is held."""
    tries = [_DIRECT_TRIES]

    def learn():
        if tries[0] <= 0:
            return
        tries[0] -= 1
        got = _direct_tasks(ns["ctx"], spec.compiled, {k: ns["L"][k] for k in slotted})
        if got is None:
            return
        tasks, rc, at = got
        for k in slotted:
            ns[f"S{k}"] = at[k]
        ns["R"] = rc
        ns["D"] = tasks
        tries[0] = 0

    return learn


def _direct_tasks(ctx, compiled, pointers):
    """The backend's ``direct_tasks`` with each argument's place as a ``c_uint64`` over it:
    ``(tasks, rc, {argument: c_uint64})``; None (Taichi's launch stays) where it has none or
    raises: the launch it follows succeeded, and a failure to learn must not fail it."""
    try:
        got = _backend.direct_tasks(ctx, compiled, pointers)
    except Exception:
        return None
    if got is None:
        return None
    tasks, rc, where = got
    return tasks, rc, {k: ctypes.c_uint64.from_address(a) for k, a in where.items()}


def _find_slot(ctx, idx, v):
    """Where ``ctx`` keeps array argument ``idx``'s data pointer (a ``c_uint64`` over it), or
    0; leaves the argument set to ``v`` = ``(pointer, nbytes, shape)`` either way."""
    slot = _backend.array_slot(ctx, idx, v[1], v[2])
    if not slot:
        ctx.set_arg_external_array_with_shape(idx, v[0], v[1], v[2], 0)
        return 0
    sl = ctypes.c_uint64.from_address(slot)
    sl.value = v[0]
    return sl


def _array_set(ns: dict, k: int, p: str, idx, nbytes: int, shape) -> str:
    """The runner's line setting its ``k``-th argument, an array at pointer ``p`` of
    ``nbytes`` bytes and shape ``shape``, when the pointer changed since its last launch. Where
    the backend knows where the context keeps the pointer (``array_slot``), the line writes
    it there: an output (a new tensor every call; below 1 KiB glibc rarely hands the freed
    address back) costs 0.03 us instead of the setter's 0.84 (``bench_operators.py --parts``)."""
    slot = _backend.array_slot(ns["ctx"], idx, nbytes, shape)
    if slot:
        ns[f"S{k}"] = ctypes.c_uint64.from_address(slot)
        return f"        if L[{k}] != {p}:\n            S{k}.value = {p}\n            L[{k}] = {p}"
    return (
        f"        if L[{k}] != {p}:\n            L[{k}] = None\n"
        f"            ctx.set_arg_external_array_with_shape({idx!r}, {p}, {nbytes}, {shape!r}, 0)\n"
        f"            L[{k}] = {p}"
    )


# debug mode on the CPU (None: not known yet for the running program)
_DEBUG: list = [None]
_runtime.register_cache(lambda: _DEBUG.__setitem__(0, None))


# whether a launch context may be launched again (None: not known yet for the running program)
_REUSE: list = [None]
_runtime.register_cache(lambda: _REUSE.__setitem__(0, None))


def reuse_contexts() -> bool:
    """Whether forward launches reuse one launch context per spec: on the CPU only.

    Taichi's CUDA launcher (1.7.4, ``runtime/cuda/kernel_launcher.cpp``) points the
    context's argument and result buffers at device memory for the launch and frees it
    after, without pointing them back: the next ``set_arg_*`` on that context wrote through
    a freed device pointer from the host (a segfault on the first CUDA run, 2026-12-04), so
    on any other device each launch gets a fresh context, as Taichi's own launches do."""
    if _REUSE[0] is None:
        _REUSE[0] = _runtime.is_cpu()
    return _REUSE[0]


def debug_mode() -> bool:
    """Whether launches run checked (debug mode on the CPU); the runtime must be started."""
    if _DEBUG[0] is None:
        _DEBUG[0] = _backend.debug_checks() and _runtime.is_cpu()
    return _DEBUG[0]


def _debug_launch(spec: _Spec, values) -> None:
    """A forward launch in debug mode on the CPU: every array argument is run on a copy
    inside guard zones, copied back only if the kernel ran clean and changed it.

    Taichi's checks report an out-of-bounds access but, on the CPU, do not stop it
    (measured: the writes past the end land and corrupted the heap); with a guard of the
    largest argument's size (at least 4 KiB) on each side, the common overruns (outputs
    declared smaller than the kernel writes, inputs of different lengths, off-by-one
    indices) land in the guards, and the error names the operator and the argument."""
    vals = list(values)
    arrays = [j for j, (kind, _) in enumerate(spec.setters) if kind == _P_ARRAY]
    guard = max([4096] + [values[j][1] for j in arrays])
    copies = []
    for j in arrays:
        ptr, nb, shape = values[j]
        buf = np.zeros(nb + 2 * guard, np.uint8)
        base = buf.ctypes.data + guard
        if nb:
            ctypes.memmove(base, ptr, nb)
        vals[j] = (base, nb, shape)
        copies.append((ptr, nb, buf))
    with _launch_lock:
        ctx = spec.t_kernel.make_launch_context()
        for (kind, idx), v in zip(spec.setters, vals):
            _set_arg(ctx, kind, idx, v, 0, spec)
        try:
            spec.run(spec.compiled, ctx)
        except AssertionError as e:
            raise _kernel_error(spec, values, e) from None
    for ptr, nb, buf in copies:
        if nb:
            new = buf[guard : guard + nb]
            old = np.ctypeslib.as_array((ctypes.c_uint8 * nb).from_address(ptr))
            if not np.array_equal(new, old):  # only what the kernel wrote: never read-only inputs
                ctypes.memmove(ptr, new.ctypes.data, nb)


_OOB = re.compile(r"Out of bound access to ndarray at arg (\d+) with indices \[([^\]]*)\]")


def _kernel_error(spec: _Spec, values, e: AssertionError) -> Exception:
    """Taichi's assertion from a launch, as an error naming the operator and the argument.

    In debug mode (``tiarray.init(debug=True)``, ``TIARRAY_DEBUG=1``) Taichi checks every
    array access; on the CPU the access itself still happens (measured: the writes past
    the end land), so tiarray pads the outputs it allocates in that mode (see
    ``tiarray._buffer``)."""
    msg = str(e)
    first = msg.strip().splitlines()[0] if msg.strip() else "assertion failed"
    m = _OOB.search(msg)
    if m is None:
        return AssertionError(f"{spec.label}: the kernel's assertion failed: {first}")
    arg, idx = int(m.group(1)), m.group(2).strip()
    name, shape = f"#{arg}", None
    for j, (kind, slot) in enumerate(spec.setters):
        if slot == arg or slot == (arg,):
            name = spec.arg_names[j]
            if kind == _P_ARRAY and j < len(values):
                shape = tuple(values[j][2])
    where = f"; its shape is {shape}" if shape is not None else ""
    return IndexError(
        f"{spec.label}: the kernel accessed argument '{name}' out of bounds at index [{idx}]{where} "
        f"(Taichi's bounds check, debug mode): {first}"
    )


def _entry_point() -> str:
    """The tiarray function the user called (the outermost tiarray frame), for error messages."""
    f = sys._getframe(1)
    name = "tiarray"
    while f is not None:
        mod = f.f_globals.get("__name__", "")
        if mod == "tiarray" or mod.startswith("tiarray."):
            name = f.f_code.co_name
            if name.startswith("__") and name.endswith("__"):
                name = f"TiArray.{name}"
        else:
            break
        f = f.f_back
    return f"{name}()" if not name.startswith("TiArray.") else name


def _set_arg(ctx, kind, idx, v, g, spec):
    if kind == _P_ARRAY:
        n = math.prod(v[2])
        if n > _MAX_ELEMENTS:
            # Taichi indexes arrays with 32-bit ints: larger ones gave wrong sums and crashed
            # scans; one rule for every kernel (checked only when an argument changes: no cost)
            raise ValueError(
                f"{_entry_point()}: an operand of {n} elements is too large: Taichi kernels index at "
                "most 2**31 - 1 elements per array; split the array, or reduce it in parts"
            )
        ctx.set_arg_external_array_with_shape(idx, v[0], v[1], v[2], g)
    elif kind == _P_FLOAT:
        ctx.set_arg_float(idx, v)
    elif kind == _P_INT:
        ctx.set_arg_int(idx, v)
    else:
        ctx.set_arg_uint(idx, v)


class _Unset:
    """Compares unequal to everything (a launch-context slot not set yet)."""

    __slots__ = ()

    def __eq__(self, other):
        return False

    def __ne__(self, other):
        return True

    __hash__ = None


_UNSET = _Unset()


class Launcher:
    """Compiles and launches one ``@ti.kernel`` on memory given by pointer.

    Parameters
    ----------
    kernel : function decorated with ``@ti.kernel``
        Its parameters may be ``ti.types.ndarray(...)``, scalars and ``ti.template()``.
    name : str, optional
        Used in error messages (defaults to the kernel's name).
    serial_threshold : int, optional
        Bytes of array data under which the CPU uses the serial variant (default: the
        global setting, see :func:`set_serial_threshold`).

    Notes
    -----
    The low-level entry points used by tiarray's own code are :meth:`spec` (compile or
    look up a specialisation for a signature) and ``_Spec.launch`` (run it). The
    high-level :meth:`__call__` takes TiArrays, framework arrays and scalars.
    """

    def __init__(
        self,
        kernel,
        *,
        name: str | None = None,
        serial_threshold: int | None = None,
        compile_options: dict | None = None,
    ):
        prim = _backend.kernel_of(kernel)
        # CompileConfig fields overridden for this kernel only (e.g. {"fast_math": False}
        # keeps LLVM's loop vectoriser off the reductions of a register-blocked kernel).
        self.func = _backend.kernel_function(prim)
        self.name = name or self.func.__name__
        if compile_options is not None:
            _backend.check_compile_options(compile_options, self.name)
        self.compile_options = dict(compile_options or {})
        self.serial_threshold = serial_threshold
        self.params = [_Param(n, a, i) for i, (n, a) in enumerate(_backend.kernel_parameters(prim))]
        self.template_names = [p.name for p in self.params if p.kind == _P_TEMPLATE]
        self.array_params = [p for p in self.params if p.kind == _P_ARRAY]
        # launch indices: templates take no slot
        slot = 0
        self._slots = []
        for p in self.params:
            if p.kind == _P_TEMPLATE:
                self._slots.append(None)
            else:
                self._slots.append(_backend.arg_index(slot))
                slot += 1
        self._kernels: dict = {}
        self._specs: dict = {}
        _runtime.register_cache(self._clear)
        call_params = [p for p in self.params if p.kind != _P_TEMPLATE]
        self._nargs = len(call_params)
        self._kinds = [p.kind for p in call_params]
        self._names = [p.name for p in call_params]
        # trailing axes of an array argument that are the vector/matrix element of its
        # parameter (ti.types.ndarray(dtype=ti.types.vector(n, ...))): Taichi's launch
        # context takes the shape without them
        self._elem_ndims = [len(p.elem_shape) for p in call_params]

    def __repr__(self) -> str:
        return f"<tiarray Launcher for kernel '{self.name}'>"

    # -- compilation ------------------------------------------------------------------

    def _kernel(self, serial: bool, grad: bool):
        k = self._kernels.get((serial, grad))
        if k is None:
            k = _backend.new_kernel(self.func, grad=grad, rewrite=_serialize_rewrite if serial else None)
            self._kernels[(serial, grad)] = k
        return k

    def spec(self, array_sigs, templates=(), *, serial: bool = False, grad: bool = False):
        """The compiled specialisation for a signature.

        ``array_sigs``: one ``(DType, ndim, needs_grad)`` per array parameter, in order.
        ``templates``: the values of the ``ti.template()`` parameters, in order.
        ``grad``: the reverse-mode (``kernel.grad``) variant.
        """
        if _program() is not _CACHES.prog:  # first use, or ti.reset()/ti.init() since
            _runtime.ensure_init()
        key = (tuple(array_sigs), tuple(templates), serial, grad)
        s = self._specs.get(key)
        if s is not None:
            return s
        with _compile_lock:
            s = self._specs.get(key)
            if s is None:
                s = self._compile(key)
                self._specs[key] = s
        return s

    def _clear(self) -> None:
        """Forget the compiled kernels (the registry calls it when the program changes)."""
        self._specs.clear()
        self._kernels.clear()

    def _compile(self, key):
        array_sigs, templates, serial, grad = key
        if len(array_sigs) != len(self.array_params):
            raise TypeError(
                f"{self.name}: {len(self.array_params)} array argument(s) expected, got {len(array_sigs)}"
            )
        if len(templates) != len(self.template_names):
            raise TypeError(
                f"{self.name}: {len(self.template_names)} static (template) argument(s) expected "
                f"({', '.join(self.template_names)}), got {len(templates)}"
            )
        kern = self._kernel(serial and _runtime.is_cpu(), grad)
        features = []
        args = []
        ai = ti_ = 0
        for p in self.params:
            if p.kind == _P_ARRAY:
                dtype, ndim, needs_grad = array_sigs[ai]
                ai += 1
                prim, extra = _ti_dtype_of(dtype)
                self._check_array(p, prim, ndim + len(extra))
                full_ndim = ndim + len(extra)
                if p.elem_shape:
                    elem_type = _backend.tensor_type(p.elem_shape, prim)
                    full_ndim -= len(p.elem_shape)
                else:
                    elem_type = prim
                ng = bool(needs_grad) if p.needs_grad is None else p.needs_grad
                features.append(_backend.array_feature(elem_type, full_ndim, ng, p.boundary))
                args.append(None)
            elif p.kind == _P_TEMPLATE:
                v = templates[ti_]
                ti_ += 1
                features.append(v)
                args.append(v)
            else:
                features.append(_backend.SCALAR_FEATURE)
                args.append(None)
        tkey = (self.func, len(self._specs), grad)
        with _launch_lock:
            t_kernel, compiled, run = _backend.compile(
                kern, tkey, tuple(args), tuple(features), self._config()
            )
        s = _Spec()
        s.t_kernel = t_kernel
        s.compiled = compiled
        s.run = run
        s._ctx = None
        s._last = None
        s._aslots = {}
        s._direct = 0
        s.setters = [(p.kind, self._slots[i]) for i, p in enumerate(self.params) if p.kind != _P_TEMPLATE]
        s.label = self.name
        s.arg_names = [p.name for p in self.params if p.kind != _P_TEMPLATE]
        return s

    def check(self, array_sigs) -> None:
        """Check a signature against the kernel's annotations without compiling.

        ``array_sigs`` as for :meth:`spec`. Raises :class:`KernelSignatureError` naming
        the argument, what the annotation wants and what was given.
        """
        if len(array_sigs) != len(self.array_params):
            raise TypeError(
                f"{self.name}: {len(self.array_params)} array argument(s) expected, got {len(array_sigs)}"
            )
        for p, (dtype, ndim, _g) in zip(self.array_params, array_sigs):
            prim, extra = _ti_dtype_of(dtype)
            self._check_array(p, prim, ndim + len(extra))

    def _config(self):
        """The program's CompileConfig, or a copy with this kernel's overrides."""
        cfg = _backend.program_config()
        if not self.compile_options:
            return cfg
        return _backend.config_with(cfg, self.compile_options)

    def _check_array(self, p: _Param, prim, ndim: int):
        if p.ti_dtype is not None and p.ti_dtype != prim:
            raise KernelSignatureError(
                f"{self.name}: argument '{p.name}' must have dtype {_backend.type_name(p.ti_dtype)} "
                f"(the kernel's annotation), got {_backend.type_name(prim)}"
            )
        want = None if p.ndim is None else p.ndim + len(p.elem_shape)
        if want is not None and want != ndim:
            raise KernelSignatureError(
                f"{self.name}: argument '{p.name}' must have ndim={want} (the kernel's annotation), got {ndim}"
            )

    # -- high-level call --------------------------------------------------------------

    def use_serial(self, nbytes: int, speed: float | None = None) -> bool:
        """Whether a CPU launch touching ``nbytes`` runs the serial variant.

        ``speed``: how many times faster per byte than the threshold's reference a kernel
        is on one core (``STREAM`` for vectorised streaming kernels, less for costly
        operations); the threshold is scaled by it and by the pool's size.
        """
        th = self.serial_threshold if self.serial_threshold is not None else _SERIAL_THRESHOLD[0]
        if speed is not None and th > 0:
            th = th * speed * _thread_factor()
        return nbytes <= th and _runtime.is_cpu()

    def __call__(self, *args, **templates):
        """Launch on TiArrays, framework arrays (zero-copy where contiguous) and scalars.

        Template parameters are given by keyword (their names in the kernel).
        Arrays are written in place; a non-contiguous array is copied to a contiguous
        buffer for the kernel and copied back afterwards.
        """
        if len(args) != self._nargs or len(templates) != len(self.template_names):
            self._check_call(args, templates)
        try:
            tvals = tuple(templates[n] for n in self.template_names)
        except KeyError:
            self._check_call(args, templates)
        sigs, values, writebacks, nbytes = [], [], None, 0
        for kind, name, ne, v in zip(self._kinds, self._names, self._elem_ndims, args):
            if kind == _P_ARRAY:
                if type(v) is np.ndarray and v.flags.c_contiguous and not ne:
                    # the common case, without building a TiArray
                    dt = _dtypes._BY_NP.get(v.dtype)
                    if dt is not None:
                        shape = v.shape + (2,) if dt.kind == "c" else v.shape
                        sigs.append((dt, v.ndim, False))
                        values.append((_numpy_data_ptr(v), v.nbytes, shape))
                        nbytes += v.nbytes
                        continue
                a = v if isinstance(v, TiArray) else _view_of(v, self.name)
                if a is None:
                    raise TypeError(
                        f"{self.name}(): argument '{name}' must be an array, got {type(v).__name__}"
                    )
                if not a._is_c_contiguous():
                    # copied to a contiguous buffer for the kernel, and back afterwards
                    a, wb = _contiguous_copy[0](a)
                    if wb is not None:
                        writebacks = (writebacks or []) + [wb]
                sigs.append((a._dtype, len(a._shape), False))
                val = kernel_arg(a)
                if ne:
                    val = (val[0], val[1], val[2][: len(val[2]) - ne])
                values.append(val)
                nbytes += a._nbytes()
            else:
                if isinstance(v, TiArray):
                    v = v.item()
                values.append(v)
        spec = self.spec(sigs, tvals, serial=self.use_serial(nbytes))
        spec.launch(values)
        if writebacks:
            for wb in writebacks:
                wb()

    def _check_call(self, args, templates):
        if len(args) != self._nargs:
            raise TypeError(f"{self.name}: {self._nargs} positional argument(s) expected, got {len(args)}")
        missing = [n for n in self.template_names if n not in templates]
        extra = [n for n in templates if n not in self.template_names]
        raise TypeError(
            f"{self.name}: static argument(s) {self.template_names} expected by keyword; "
            f"missing {missing}, unexpected {extra}"
        )


def kernel_arg(a) -> tuple:
    """``(ptr, nbytes, shape)`` of a C-contiguous TiArray as a kernel argument."""
    shape = a._shape
    if a._dtype.kind == "c":
        shape = shape + (2,)
    return (a._ptr, a._nbytes(), shape)


@functools.cache
def launcher(kernel) -> Launcher:
    """The shared :class:`Launcher` of a kernel (cached)."""
    return Launcher(kernel)
