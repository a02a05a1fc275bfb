"""``Operator``: a Taichi kernel registered once, called on any framework's arrays.

An :class:`Operator` owns *what* is computed: its kernel(s), the ``outs`` function that
gives the shapes and dtypes of the results, the static parameters, and the optional
differentiation and batching rules. The framework adapters in
:mod:`tiarray.operators._adapters` only translate arrays in and out (zero-copy); no
semantics live there.

Call conventions (the contract every adapter implements):

- The kernel's parameters (``ti.template()`` ones aside) are the call's inputs in order,
  then the outputs. Array parameters (``ti.types.ndarray``) take arrays; scalar
  parameters (``ti.f32``, ``ti.i32`` ...) take Python numbers, NumPy scalars, 0-d arrays
  or traced JAX scalars.
- Outputs are allocated by the adapter (NumPy arrays for NumPy inputs, XLA's result
  buffers under JAX, ...) and **zero-filled before the kernel runs**: kernels may
  accumulate with ``+=``.
- Keyword arguments of a call are *static*: they must be hashable; they select a
  specialisation; those named like a ``ti.template()`` parameter of the kernel are
  passed to it; all of them are passed to ``outs`` and to the rules. Static parameters
  that no template takes are allowed (e.g. an output ``shape`` used only by ``outs``).
  A template parameter that the call does not give takes its value from
  ``static_defaults``, or the call raises ``TypeError``.
"""

# No ``from __future__ import annotations``: doctests here define Taichi kernels, which
# need real annotation objects.
import itertools
import operator
import sys
import threading
import weakref

from tiarray import _internal as _core
from tiarray._internal import P_ARRAY as _P_ARRAY
from tiarray._internal import P_TEMPLATE as _P_TEMPLATE
from tiarray._internal import KernelSignatureError, Launcher, stored_params
from tiarray._internal import dtypes as _dtypes

from ._partition import PartitionRule

__all__ = ["Operator", "ShapeDtype", "UndefinedPrimal"]


class ShapeDtype:
    """The shape and dtype of an array, without data.

    ``outs`` functions receive one per input (scalars appear as ``shape == ()`` with the
    dtype of the kernel's scalar parameter) and return one per output. The same objects
    are used under every framework and under tracing (``jax.jit``, ``torch.compile``).

    Parameters
    ----------
    shape : tuple of int
        The shape.
    dtype : dtype-like
        A tiarray dtype, or anything :func:`tiarray.asarray` understands as a dtype
        (NumPy, torch and JAX dtypes, names such as ``"float32"``).

    Attributes
    ----------
    shape : tuple of int
    dtype : tiarray.DType
    ndim : int
    size : int

    Raises
    ------
    TypeError
        If ``shape`` is not a sequence of ints or ``dtype`` is not a supported dtype.

    Examples
    --------
    >>> import tiarray as ta
    >>> s = ta.ShapeDtype((3, 4), "float32")
    >>> s.shape, s.dtype, s.ndim, s.size
    ((3, 4), tiarray.float32, 2, 12)
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        try:
            if isinstance(shape, (str, bytes)):  # int('abc') raised a bare ValueError
                raise TypeError
            shape = tuple(operator.index(s) for s in shape)  # not int(): 2.5 is no size
        except TypeError:
            raise TypeError(
                f"ShapeDtype(): argument 'shape' must be a tuple of ints, got {shape!r}"
            ) from None
        if any(s < 0 for s in shape):
            raise ValueError(f"ShapeDtype(): argument 'shape' must not have negative sizes, got {shape}")
        self.shape = shape
        self.dtype = _dtypes.to_dtype(dtype, func="ShapeDtype")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"ShapeDtype(shape={self.shape}, dtype={self.dtype.name})"

    def __eq__(self, other) -> bool:
        if not isinstance(other, ShapeDtype):
            return NotImplemented
        return self.shape == other.shape and self.dtype is other.dtype

    def __hash__(self) -> int:
        return hash((self.shape, self.dtype.name))


class UndefinedPrimal:
    """Stands for a linear input in a ``transpose`` rule: its shape and dtype, no value.

    A ``transpose`` rule receives the call's inputs with the linear input(s) being
    transposed replaced by an ``UndefinedPrimal``; it returns one cotangent for each of
    them (``None`` for the other inputs). tiarray creates them; rules only test for them
    with ``isinstance``.

    Parameters
    ----------
    shape : tuple of int
        The shape of the input being transposed.
    dtype : dtype-like
        Its dtype.

    Attributes
    ----------
    shape : tuple of int
    dtype : tiarray.DType
    ndim : int

    Examples
    --------
    >>> import tiarray as ta
    >>> p = ta.UndefinedPrimal((4,), ta.float32)
    >>> isinstance(p, ta.UndefinedPrimal), p.shape
    (True, (4,))
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = _dtypes.to_dtype(dtype, func="UndefinedPrimal")

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def __repr__(self) -> str:
        return f"UndefinedPrimal(shape={self.shape}, dtype={self.dtype.name})"


# Taichi scalar type name -> tiarray dtype (for scalar kernel parameters)
_SCALAR_DTYPES = {
    "f16": _dtypes.float16,
    "f32": _dtypes.float32,
    "f64": _dtypes.float64,
    "i8": _dtypes.int8,
    "i16": _dtypes.int16,
    "i32": _dtypes.int32,
    "i64": _dtypes.int64,
    "u8": _dtypes.uint8,
    "u16": _dtypes.uint16,
    "u32": _dtypes.uint32,
    "u64": _dtypes.uint64,
}


def _scalar_dtype(anno) -> _dtypes.DType:
    name = _core.type_name(anno)
    d = _SCALAR_DTYPES.get(name)
    if d is None:  # pragma: no cover - every Taichi primitive type is listed
        raise KernelSignatureError(f"scalar kernel parameter of Taichi type {name} is not supported")
    return d


def _is_complex(v) -> bool:
    """Whether the scalar ``v`` (a Python or NumPy number, a 0-d array or tensor) is complex."""
    if isinstance(v, complex):
        return True
    d = getattr(v, "dtype", None)
    return d is not None and (getattr(d, "kind", "") == "c" or getattr(d, "is_complex", False) is True)


def scalar_converter(op_name: str, p):
    """``conv(value) -> int | float``: the number a call passes to the scalar parameter ``p``,
    refused with a clear error where it is not one Taichi can take: a complex value (for a
    float one Python drops the imaginary part), NaN or infinity for an integer, an integer
    outside the parameter's range (Taichi wraps it: 300 reached a u8 as 44)."""
    name, dt = p.name, p.dtype.name

    def bad(v, why, exc=TypeError):
        return exc(f"{op_name}: argument '{name}' is a scalar parameter ({dt}); {why}, got {v!r}")

    if p.kind not in (_core.P_INT, _core.P_UINT):

        def conv_float(v):
            if _is_complex(v):
                raise bad(v, "a complex value has no real equivalent")
            try:
                return float(v)
            except (TypeError, ValueError) as e:
                raise bad(v, "expected a real number") from e

        conv_float.fast = "float"  # generated runners pass a Python float without the call
        return conv_float
    bits = p.dtype.itemsize * 8
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if p.kind == _core.P_INT else (0, (1 << bits) - 1)

    def conv_int(v):
        if _is_complex(v):
            raise bad(v, "a complex value has no integer equivalent")
        try:
            i = int(v)
        except (TypeError, ValueError, OverflowError) as e:  # NaN, inf, non-numbers
            raise bad(
                v,
                "expected a finite number",
                ValueError if isinstance(e, (ValueError, OverflowError)) else TypeError,
            ) from e
        if not lo <= i <= hi:
            raise bad(v, f"the value must be in [{lo}, {hi}]", ValueError)
        return i

    conv_int.fast = ("int", lo, hi)  # generated runners pass such a Python int without the call
    return conv_int


class _Param:
    """A non-template kernel parameter as the Operator sees it."""

    __slots__ = ("name", "kind", "dtype", "index")

    def __init__(self, p, index):
        self.name = p.name
        self.kind = p.kind  # _P_ARRAY, _P_FLOAT, _P_INT, _P_UINT
        self.index = index
        self.dtype = None if p.kind == _P_ARRAY else _scalar_dtype(p.anno)

    @property
    def is_array(self) -> bool:
        return self.kind == _P_ARRAY


class _Resolved:
    """What a call signature resolves to, independent of the framework.

    Computed once per (static parameters, input shapes and dtypes) and cached.
    """

    __slots__ = (
        "outs",  # tuple of ShapeDtype
        "single",  # outs() returned one ShapeDtype (the call returns one array)
        "templates",  # values of the kernel's template parameters, in order
        "array_sigs",  # (DType, ndim, False) per array parameter (inputs then outputs)
        "nbytes",  # bytes of array data touched (inputs and outputs)
        "in_sds",  # tuple of ShapeDtype of the inputs
        "static",  # the static kwargs as a dict
        "scratch",  # {serial (bool): tuple of ShapeDtype}; empty tuples without scratch
        "mode",  # "serial" / "parallel" fixed by the policy for this signature, or None
        "decide",  # per-call policy: callable(host_inputs) -> "serial" | "parallel", or None
        "alias",  # per output: the index of the input it starts from, or None; None without aliases
    )

    def scratch_max(self) -> tuple:
        """Per scratch buffer, the larger of its serial and parallel shapes (what a caller
        that decides the mode only at run time, e.g. an XLA custom call, allocates)."""
        out = []
        for a, b in zip(self.scratch[False], self.scratch[True]):
            out.append(a if a.size >= b.size else b)
        return tuple(out)


_NOT_GIVEN = object()


class Operator:
    """A Taichi kernel registered once and called on NumPy, PyTorch, JAX, CuPy or TiArray arrays.

    Parameters
    ----------
    name : str
        The operator's name: JAX primitive ``name``, torch op ``tiarray::name``, and the
        name used in every error message.
    kernel : ``@ti.kernel`` function, optional
        The kernel, used on every arch. Its parameters (``ti.template()`` ones aside) are
        the call's inputs in order, then the outputs.
    kernels : dict, optional
        ``{"cpu": kernel, "cuda": kernel}``: one kernel per Taichi arch (give ``kernel``
        or ``kernels``). All must have the same parameters.
    outs : callable
        ``outs(*inputs, **static) -> ShapeDtype | tuple[ShapeDtype, ...]``. Receives one
        object with ``.shape`` and ``.dtype`` (a tiarray dtype) per input. Returning a
        tuple makes the call return a tuple.
    jvp : callable, optional
        Forward-mode rule ``jvp(primals, tangents, **static) -> tangents_out``.
        ``primals`` is the tuple of inputs, ``tangents`` the tuple of their tangents
        (``None`` for a zero tangent); returns one tangent per output (a single array
        when ``outs`` returns one ShapeDtype, else a tuple; ``None`` for a zero tangent).
    transpose : callable, optional
        Transpose rule ``transpose(cotangents, primals, **static) -> tuple`` for an
        operator that is linear in each of the inputs named in ``linear``. ``cotangents``
        has one array per output; in ``primals`` the input(s) being transposed are
        :class:`UndefinedPrimal`; returns one entry per input: the cotangent of each
        undefined input, ``None`` for the others.
    batch : callable, optional
        Batching rule ``batch(args, axes, **static) -> (outs, out_axes)`` for
        ``jax.vmap``. ``axes[i]`` is the batched axis of ``args[i]`` or ``None``;
        ``outs``/``out_axes`` are single or tuples as the call's result. Without it,
        vmap runs the kernel once per batch element (correct, but slow).
    linear : sequence of str, optional
        Inputs in which the operator is linear (each one with the others fixed). Needed
        with ``transpose``: the JVP is derived from it when no ``jvp`` is given, and
        PyTorch's backward calls ``transpose`` for these inputs.
    nondiff : sequence of str, optional
        Inputs that must never be differentiated (index arrays, seeds, spikes): asking
        for their gradient raises ``TypeError``. Integer inputs are never differentiated.
    static_defaults : dict, optional
        Values of static (template) parameters for calls that do not give them.
    scratch : callable, optional
        ``scratch(*inputs, serial, **static) -> ShapeDtype | tuple[ShapeDtype, ...]``:
        temporary buffers the kernel needs, passed after the outputs, **zero-filled** before
        the launch and dropped after it (never returned). Called like ``outs`` (once per
        signature), with ``serial=True`` and ``serial=False``: the buffers of the serial
        and of the parallel variant of the kernel (e.g. one private partial result per
        thread in parallel, none in serial). Both must give the same number of buffers,
        with the same dtypes and ndims; sizes may differ (a run-time decision allocates
        the larger). ``serial`` is then a reserved static name.
    policy : callable, optional
        ``policy(*inputs, **static)``, called once per signature like ``outs`` (one
        ``ShapeDtype`` per input): decides whether the CPU runs the serial variant of the kernel
        (outermost loops serialised; Taichi's thread pool costs 10-60 us to wake) or the
        parallel one. Returns ``"serial"``, ``"parallel"``, ``None`` (the default rule: serial
        below ``tiarray.set_serial_threshold`` bytes of array data) or a callable
        ``decide(host_inputs) -> "serial" | "parallel"`` for a decision that depends on
        input *values* (e.g. the number of active events). ``decide`` runs on every CPU
        launch, where the buffers are host memory: eager NumPy, TiArray, torch calls and
        inside the XLA custom call under ``jax.jit``; ``host_inputs[i]`` is a NumPy view
        of input ``i`` (built when first read; scalars are numbers). On GPUs the parallel
        variant always runs and ``decide`` is not called.
    compile_options : dict, optional
        Taichi ``CompileConfig`` fields set for this Operator's kernels only, e.g.
        ``{"fast_math": True}`` for a reduction that LLVM may then vectorise across the
        loop (``tiarray.init`` compiles with ``fast_math=False`` for IEEE semantics).
    aliases : dict, optional
        ``{output: input}`` by kernel parameter names: each such output **starts with the
        values of that input** (same shape and dtype) instead of zeros, so a kernel that
        updates a few elements of a large array (a learning rule on the synapses of the
        neurons that spiked) writes only those. NumPy, torch, CuPy and TiArray calls copy
        the input into a new output (the input is never changed); under ``jax.jit`` the
        output is the input's buffer where XLA may reuse it (a ``lax.scan`` carry, a
        donated argument) and a copy XLA makes otherwise. Gradients of such an Operator
        come from its ``jvp``/``transpose`` rules (Taichi autodiff does not see the copy).
    partition : str, optional
        Which axes may be split across devices when JAX partitions a computation (``jit``
        with sharded inputs): a rule in einsum-like notation with one entry per kernel
        parameter, inputs then outputs, e.g. ``", i, i -> i"`` for ``axpy(alpha, x, y)``
        or ``"b n, n m -> b m"``. Factors that appear in an output and an input are map
        factors: the kernel computes each of their indices independently, so XLA may
        split them and every device runs the kernel on its shards. Without a rule, XLA
        gathers the inputs onto every device. See ``docs/scaling.md``.

    Raises
    ------
    TypeError
        For a missing or non-callable ``outs``, kernels with different parameters, names
        in ``linear``/``nondiff``/``aliases`` that are not parameters, ``transpose`` without
        ``linear``, a ``partition`` rule that is not a str, ``aliases`` with ``partition``.
        At a call: an ``aliases`` entry whose output is not an output, whose input is not
        an array input, or whose two arrays differ in shape or dtype.
    ValueError
        For a ``partition`` rule that does not parse or does not match the kernel's
        parameters (one entry per parameter, empty for scalars).

    Notes
    -----
    Differentiation without ``jvp``/``transpose`` uses Taichi's reverse-mode autodiff
    (the kernel's ``grad`` variant): ``jax.grad``/``vjp`` and ``torch.autograd`` work,
    forward mode (``jax.jvp``) raises. Taichi gives no gradient for scalar parameters:
    asking for one raises (make the scalar a 1-element array, or give rules).

    Examples
    --------
    >>> import numpy as np, taichi as ti, tiarray as ta
    >>> @ti.kernel
    ... def _axpy(alpha: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1),
    ...           out: ti.types.ndarray(ndim=1)):
    ...     for i in x:
    ...         out[i] = alpha * x[i] + y[i]
    >>> axpy = ta.Operator("axpy_doc", kernel=_axpy,
    ...                    outs=lambda alpha, x, y: ta.ShapeDtype(x.shape, x.dtype))
    >>> axpy(2.0, np.ones(3, np.float32), np.arange(3, dtype=np.float32))
    array([2., 3., 4.], dtype=float32)
    """

    def __init__(
        self,
        name: str,
        kernel=None,
        *,
        kernels: dict | None = None,
        outs,
        jvp=None,
        transpose=None,
        batch=None,
        linear=(),
        nondiff=(),
        static_defaults: dict | None = None,
        scratch=None,
        policy=None,
        compile_options: dict | None = None,
        partition: str | None = None,
        aliases: dict | None = None,
    ):
        if not isinstance(name, str) or not name:
            raise TypeError(f"Operator(): argument 'name' must be a non-empty str, got {name!r}")
        self.name = name
        if (kernel is None) == (kernels is None):
            raise TypeError(f"Operator({name!r}): give exactly one of 'kernel' or 'kernels'")
        if kernels is None:
            kernels = {"cpu": kernel, "cuda": kernel}
        else:
            if not isinstance(kernels, dict) or not kernels or set(kernels) - {"cpu", "cuda"}:
                raise TypeError(
                    f"Operator({name!r}): argument 'kernels' must be a dict with keys 'cpu' and/or 'cuda', "
                    f"got {kernels!r}"
                )
        self._launchers = {}
        for arch, k in kernels.items():
            try:
                self._launchers[arch] = Launcher(k, name=name, compile_options=compile_options)
            except TypeError as e:
                raise TypeError(f"Operator({name!r}): kernel for '{arch}': {e}") from None
        launchers = list(self._launchers.values())
        ref = launchers[0]
        for other in launchers[1:]:
            if [(p.name, p.kind) for p in other.params] != [(p.name, p.kind) for p in ref.params]:
                raise TypeError(f"Operator({name!r}): the kernels in 'kernels' must have the same parameters")
        self.kernels = dict(kernels)
        for q in ref.params:
            if q.kind == _P_ARRAY and q.elem_shape:
                # the Operator's routes pass every array with its full shape (the launch shape of
                # a scalar-element parameter); a vector element's shape differs, and such a call
                # crashed the process in the launch context (2026-12-05)
                raise TypeError(
                    f"Operator({name!r}): kernel parameter '{q.name}' is an ndarray with vector/matrix "
                    f"elements (element shape {tuple(q.elem_shape)}); an Operator's array parameters must "
                    f"have scalar elements: declare it ti.types.ndarray(dtype=<scalar>, ndim="
                    f"{(q.ndim or 0) + len(q.elem_shape)}) and index the element axes (x[i, j])"
                )
        self._params = [_Param(p, i) for i, p in enumerate(q for q in ref.params if q.kind != _P_TEMPLATE)]
        # the array parameters a kernel stores into (x[i] = ...): checked per call signature
        # against the inputs, which the Operator never lets a kernel change (a read-only NumPy
        # array, a JAX buffer); writes through called functions are not seen
        arrays = {p.name for p in self._params if p.is_array}
        self._stored = set().union(*(stored_params(la.func, arrays) for la in launchers))
        self._template_names = tuple(ref.template_names)
        if not callable(outs):
            raise TypeError(f"Operator({name!r}): argument 'outs' must be callable, got {outs!r}")
        self.outs = outs
        for rname, r in (
            ("jvp", jvp),
            ("transpose", transpose),
            ("batch", batch),
            ("scratch", scratch),
            ("policy", policy),
        ):
            if r is not None and not callable(r):
                raise TypeError(f"Operator({name!r}): argument '{rname}' must be callable, got {r!r}")
        self.jvp = jvp
        self.transpose = transpose
        self.batch = batch
        self.scratch = scratch
        self.policy = policy
        names = [p.name for p in self._params]
        self.linear = self._names_arg("linear", linear, names)
        self.nondiff = self._names_arg("nondiff", nondiff, names)
        if transpose is not None and not self.linear:
            raise TypeError(
                f"Operator({name!r}): a 'transpose' rule needs 'linear', the inputs in which the "
                "operator is linear"
            )
        if self.linear and transpose is None:
            raise TypeError(f"Operator({name!r}): 'linear' is only used with a 'transpose' rule")
        self.aliases = self._aliases_arg(aliases, names)
        if self.aliases and partition is not None:
            raise TypeError(
                f"Operator({name!r}): 'aliases' and 'partition' cannot be combined (not supported yet)"
            )
        sd = dict(static_defaults or {})
        for k, v in sd.items():
            _check_hashable(name, k, v)
        self.static_defaults = sd
        self.partition = (
            None
            if partition is None
            else PartitionRule(name, partition, self._params, scratch=scratch is not None)
        )
        self._resolved: dict = {}
        self._plans: dict = {}  # adapters' per-call caches (per program)
        # the fast path: ((static dict, guarded runner), ...), most recent first (_eager.remember_fast)
        self._fast: tuple = ()
        _core.register_cache(self._forget_plans)
        self._lock = threading.RLock()
        self._adapter_state: dict = {}  # per framework: primitives, torch ops ...
        self._uid = next(_UIDS)
        _BY_UID[self._uid] = self
        if _TRACE_HOOK[0] is None:
            if "torch" in sys.modules:
                _load_torch_adapter()
            else:
                _watch_for_torch()

    @staticmethod
    def _names_arg(what, value, names):
        if isinstance(value, str):
            value = (value,)
        value = tuple(value)
        for v in value:
            if v not in names:
                raise TypeError(
                    f"Operator(): argument '{what}' names {v!r}, which is not a kernel parameter "
                    f"(parameters: {', '.join(names)})"
                )
        return value

    def _aliases_arg(self, aliases, names):
        if aliases is None:
            return {}
        if not isinstance(aliases, dict):
            raise TypeError(
                f"Operator({self.name!r}): argument 'aliases' must be a dict {{output name: input name}}, "
                f"got {type(aliases).__name__}"
            )
        for o, i in aliases.items():
            for v in (o, i):
                if v not in names:
                    raise TypeError(
                        f"Operator({self.name!r}): argument 'aliases' names {v!r}, which is not a kernel "
                        f"parameter (parameters: {', '.join(names)})"
                    )
        if len(set(aliases.values())) != len(aliases):
            raise TypeError(
                f"Operator({self.name!r}): argument 'aliases' gives one input to two outputs: {aliases!r}"
            )
        return dict(aliases)

    def _resolve_aliases(self, n_in, sds, outs):
        """Per output, the index of the input it starts from (``aliases``), or None."""
        where = {p.name: i for i, p in enumerate(self._params)}
        alias = [None] * len(outs)
        for o, i in self.aliases.items():
            jo, ji = where[o] - n_in, where[i]
            if not 0 <= jo < len(outs):
                raise TypeError(
                    f"{self.name}: 'aliases' maps {o!r} to {i!r}, but {o!r} is not an output of this call "
                    f"(the call gave {n_in} input(s); outputs: "
                    f"{', '.join(p.name for p in self._params[n_in : n_in + len(outs)])})"
                )
            if ji >= n_in or not self._params[ji].is_array:
                raise TypeError(f"{self.name}: 'aliases' maps {o!r} to {i!r}, which is not an array input")
            a, b = sds[ji], outs[jo]
            if tuple(a.shape) != tuple(b.shape) or a.dtype != b.dtype:
                raise TypeError(
                    f"{self.name}: output {o!r} starts from input {i!r} ('aliases'), so it must have its shape "
                    f"and dtype {tuple(a.shape)} {a.dtype.name}; outs() gave {tuple(b.shape)} {b.dtype.name}"
                )
            alias[jo] = ji
        return tuple(alias)

    def __repr__(self) -> str:
        return f"<tiarray.Operator '{self.name}'>"

    def _forget_plans(self) -> None:
        """The registry's clear hook: the plans hold specs compiled for the old program."""
        self._plans.clear()
        self._fast = ()

    # ------------------------------------------------------------------ calling

    def __call__(self, *args, **static):
        """Run the operator on the arrays of one framework.

        Parameters
        ----------
        *args
            The inputs, in the order of the kernel's parameters: arrays (NumPy, torch,
            JAX, CuPy, TiArray; all of one framework, NumPy arrays also accepted next to
            JAX arrays) and scalars.
        **static
            Static parameters (hashable): the kernel's ``ti.template()`` parameters of the
            same name, and anything ``outs`` or the rules use.

        Returns
        -------
        array or tuple of arrays
            Of the inputs' kind and device.

        Raises
        ------
        TypeError
            Arrays of two frameworks, an argument that does not match the kernel's
            annotation (:class:`tiarray.KernelSignatureError`), unhashable or missing
            static parameters, a transform the operator cannot support.

        Examples
        --------
        >>> import numpy as np, taichi as ti, tiarray as ta
        >>> @ti.kernel
        ... def _shift(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1), by: ti.template()):
        ...     for i in x:
        ...         out[i] = x[i] + by
        >>> shift = ta.Operator("shift_doc", kernel=_shift, outs=lambda x, by: ta.ShapeDtype(x.shape, x.dtype))
        >>> shift(np.zeros(2), by=3)          # 'by' is static: one specialisation per value
        array([3., 3.])
        """
        h = _TRACE_HOOK[0]
        if h is not None and h[0]():  # torch.compile is tracing this call
            return h[1](self, args, static)
        # the fast path: a signature an eager adapter ran through generated code before; the
        # runner checks the arguments itself (None: not its signature), skipping the
        # framework detection and the plan key (~1-2 us a call; bench_operators.py)
        fast = self._fast
        for e in fast:
            try:
                same = static == e[0]
            except Exception:  # a static value whose == is not a bool (an array): the full path says
                break
            if same:
                r = e[1](args)
                if r is not None:
                    if e is not fast[0]:  # the signature in use goes first: each miss costs ~0.15 us
                        self._fast = (e, *[x for x in fast if x is not e])
                    return r
        return _dispatch(self, args, static)

    # ------------------------------------------------------------------ shared logic

    def _launcher(self, arch_kind: str) -> Launcher:
        """The Launcher for a Taichi arch kind ('cpu' or 'cuda')."""
        la = self._launchers.get(arch_kind)
        if la is None:
            raise RuntimeError(
                f"{self.name}: no kernel for Taichi arch '{arch_kind}'; this Operator has kernels "
                f"for {sorted(self._launchers)}"
            )
        return la

    def _static_key(self, static: dict) -> tuple:
        """The static parameters as a sorted, hashable tuple of (name, value)."""
        if not static:
            return ()
        items = tuple(sorted(static.items()))
        try:
            hash(items)
        except TypeError:
            for k, v in items:
                self._check_not_param(k)
                _check_hashable(self.name, k, v)
            raise
        return items

    def _check_not_param(self, k) -> None:
        if any(p.name == k for p in self._params):
            raise TypeError(
                f"{self.name}: '{k}' is an input or output of the kernel: pass inputs positionally; "
                "keyword arguments are static parameters"
            )

    def _check_nargs(self, n: int) -> None:
        if n > len(self._params):
            raise TypeError(
                f"{self.name}: the kernel has {len(self._params)} parameter(s) "
                f"({', '.join(p.name for p in self._params)}); the call gave {n} inputs"
            )

    def _resolve(self, in_sds: tuple, skey: tuple) -> _Resolved:
        """Resolve a call: ``in_sds`` holds one ``(DType, shape)`` per input.

        Validates the inputs against the kernel's parameters, runs ``outs``, checks the
        kernel annotations. Cached.
        """
        key = (skey, in_sds)
        r = self._resolved.get(key)
        if r is None:
            # no lock: resolving is pure (two threads may both compute it; one result is kept),
            # and torch.compile traces this code, which cannot enter a lock
            r = self._resolve_uncached(in_sds, skey)
            r = self._resolved.setdefault(key, r)
        return r

    def _resolve_uncached(self, in_sds, skey) -> _Resolved:
        name = self.name
        n_in = len(in_sds)
        self._check_nargs(n_in)
        static = dict(skey)
        for k in static:
            self._check_not_param(k)
        sds = []
        for p, (dtype, shape) in zip(self._params, in_sds):
            if p.is_array:
                sds.append(ShapeDtype(shape, dtype))
            else:
                if shape != ():
                    raise TypeError(
                        f"{name}: argument '{p.name}' is a scalar parameter ({p.dtype.name}); got an array "
                        f"of shape {shape}"
                    )
                sds.append(ShapeDtype((), p.dtype))
        # static parameters -> templates
        templates = []
        for t in self._template_names:
            v = static.get(t, _NOT_GIVEN)
            if v is _NOT_GIVEN:
                v = self.static_defaults.get(t, _NOT_GIVEN)
            if v is _NOT_GIVEN:
                raise TypeError(
                    f"{name}: missing static parameter '{t}' (a ti.template() parameter of the kernel); "
                    f"pass it by keyword, e.g. {name}(..., {t}=...), or give Operator(static_defaults=...)"
                )
            templates.append(v)
        call_static = dict(self.static_defaults)
        call_static.update(static)
        try:
            res = self.outs(*sds, **call_static)
        except TypeError as e:
            raise TypeError(
                f"{name}: outs() failed for a call with {n_in} input(s) (the kernel's parameters are "
                f"{', '.join(p.name for p in self._params)}: inputs first, then outputs): {e}"
            ) from e
        single = not isinstance(res, (tuple, list))
        outs = (res,) if single else tuple(res)
        norm = []
        for i, o in enumerate(outs):
            if isinstance(o, ShapeDtype):
                norm.append(o)
            elif hasattr(o, "shape") and hasattr(o, "dtype"):
                norm.append(ShapeDtype(o.shape, o.dtype))
            else:
                raise TypeError(
                    f"{name}: outs() must return a ShapeDtype or a tuple of them; output {i} is {o!r}"
                )
        outs = tuple(norm)
        inputs = {p.name for p in self._params[:n_in]}
        for what, names in (("linear", self.linear), ("nondiff", self.nondiff)):
            for x in names:
                if x not in inputs:  # an output (or scratch) of this call: the rule was ignored
                    raise TypeError(
                        f"{name}: Operator({what}=...) names '{x}', which is not an input of this call "
                        f"({n_in} input(s): {', '.join(p.name for p in self._params[:n_in]) or 'none'}); "
                        f"{what} names inputs"
                    )
        for p in self._params[:n_in]:
            if p.name in self._stored:
                raise TypeError(
                    f"{name}: the kernel stores into '{p.name}', which this call passes as an input; an "
                    "Operator never changes its inputs (a caller's array, a read-only NumPy array, a JAX "
                    f"buffer): make '{p.name}' an output (outs=...), or use aliases={{'out': 'in'}} for an "
                    "output that starts with an input's values"
                )
        scratch = self._resolve_scratch(sds, call_static)
        n_scr = len(scratch[False])
        n_out = len(self._params) - n_in - n_scr
        if len(outs) != n_out:
            what = f" and {n_scr} scratch buffer(s)" if n_scr else ""
            raise TypeError(
                f"{name}: the kernel has {len(self._params)} parameters "
                f"({', '.join(p.name for p in self._params)}); the call gave {n_in} input(s){what}, so the "
                f"kernel expects {n_out} output(s), but outs() returned {len(outs)}"
            )
        for p in self._params[n_in:]:
            if not p.is_array:
                raise TypeError(
                    f"{name}: kernel parameter '{p.name}' is an output or scratch buffer (it follows the "
                    f"{n_in} inputs) and must be a ti.types.ndarray"
                )
        array_sigs = []
        nbytes = 0
        n_io = n_in + n_out
        for i, (p, s) in enumerate(zip(self._params, sds + list(outs) + list(scratch[False]))):
            if p.is_array:
                if s.dtype._ti_name is None:
                    raise KernelSignatureError(
                        f"{name}: argument '{p.name}' has dtype {s.dtype.name}, which Taichi kernels cannot take"
                    )
                _check_kernel_size(name, p.name, s)
                array_sigs.append((s.dtype, len(s.shape), False))
                if i < n_io:
                    nbytes += s.size * s.dtype.itemsize
        for p, s in zip(self._params[n_io:], scratch[True]):
            _check_kernel_size(name, p.name, s)
        for la in self._launchers.values():
            la.check(array_sigs)
        mode, decide = self._resolve_policy(sds, call_static)
        r = _Resolved()
        r.alias = self._resolve_aliases(n_in, sds, outs) if self.aliases else None
        r.outs = outs
        r.single = single
        r.templates = tuple(templates)
        r.array_sigs = tuple(array_sigs)
        r.nbytes = nbytes
        r.in_sds = tuple(sds)
        r.static = call_static
        r.scratch = scratch
        r.mode = mode
        r.decide = decide
        return r

    def _resolve_scratch(self, sds, call_static) -> dict:
        """``{serial: tuple of ShapeDtype}`` of the scratch buffers (empty without ``scratch``)."""
        if self.scratch is None:
            return {False: (), True: ()}
        name = self.name
        if "serial" in call_static:
            raise TypeError(
                f"{name}: 'serial' is reserved for the scratch() function of this Operator; rename the "
                "static parameter"
            )
        res = {}
        for serial in (False, True):
            try:
                r = self.scratch(*sds, serial=serial, **call_static)
            except TypeError as e:
                raise TypeError(f"{name}: scratch() failed: {e}") from e
            r = (r,) if not isinstance(r, (tuple, list)) else tuple(r)
            norm = []
            for i, o in enumerate(r):
                if isinstance(o, ShapeDtype):
                    norm.append(o)
                elif hasattr(o, "shape") and hasattr(o, "dtype"):
                    norm.append(ShapeDtype(o.shape, o.dtype))
                else:
                    raise TypeError(
                        f"{name}: scratch() must return a ShapeDtype or a tuple of them; buffer {i} is {o!r}"
                    )
            res[serial] = tuple(norm)
        a, b = res[False], res[True]
        if len(a) != len(b) or any(x.dtype is not y.dtype or x.ndim != y.ndim for x, y in zip(a, b)):
            raise TypeError(
                f"{name}: scratch() must give buffers of the same number, dtypes and ndims for serial=True "
                f"and serial=False, got {b} and {a}"
            )
        return res

    def _resolve_policy(self, sds, call_static):
        """``(mode, decide)`` from the ``policy`` of this signature."""
        if self.policy is None:
            return None, None
        r = self.policy(*sds, **call_static)
        if r is None or r in ("serial", "parallel"):
            return r, None
        if callable(r):
            return None, r
        raise TypeError(
            f"{self.name}: policy() must return 'serial', 'parallel', None or a callable, got {r!r}"
        )

    def _spec(self, res: _Resolved, arch_kind: str, *, grad_mask=None, serial=None):
        """The compiled spec of a resolved call (reverse mode if ``grad_mask`` is given).

        ``serial``: the variant; by default the one the policy fixes for this signature,
        else the size rule (``Launcher.use_serial``)."""
        la = self._launcher(arch_kind)
        sigs = res.array_sigs
        if grad_mask is not None:
            # grad_mask: one bool per kernel parameter (inputs then outputs)
            sigs = []
            ai = 0
            for p, m in zip(self._params, grad_mask):
                if p.is_array:
                    d, nd, _ = res.array_sigs[ai]
                    sigs.append((d, nd, bool(m)))
                    ai += 1
            sigs = tuple(sigs)
        if serial is None:
            serial = res.mode == "serial" if res.mode is not None else la.use_serial(res.nbytes)
        return la.spec(sigs, res.templates, serial=bool(serial), grad=grad_mask is not None)

    def _serial_for(self, res: _Resolved, host_inputs) -> bool:
        """The variant of one CPU launch: the per-call policy on the inputs' values, or the
        signature's decision."""
        if res.decide is not None:
            m = res.decide(host_inputs)
            if m == "serial":
                return True
            if m == "parallel":
                return False
            raise TypeError(
                f"{self.name}: the policy's decide() must return 'serial' or 'parallel', got {m!r}"
            )
        if res.mode is not None:
            return res.mode == "serial"
        return self._launcher("cpu").use_serial(res.nbytes)

    # ------------------------------------------------------------------ differentiation helpers

    def _diff_inputs(self, mask, what: str):
        """Check that the inputs flagged in ``mask`` may be differentiated (Taichi autodiff)."""
        if self.scratch is not None and any(mask):
            raise TypeError(
                f"{self.name}: {what} needs jvp/transpose rules for this Operator: its kernel uses scratch "
                "buffers, which Taichi autodiff does not support. Remedy: give Operator(..., jvp=...) or "
                "Operator(..., transpose=..., linear=...)"
            )
        if self.aliases and any(mask):
            raise TypeError(
                f"{self.name}: {what} needs jvp/transpose rules for this Operator: its outputs start from "
                "its inputs ('aliases'), which Taichi autodiff does not see. Remedy: give "
                "Operator(..., jvp=...) or Operator(..., transpose=..., linear=...)"
            )
        for p, m in zip(self._params, mask):
            if not m:
                continue
            if p.name in self.nondiff:
                raise TypeError(_nondiff_msg(self, p.name, what))
            if not p.is_array:
                raise TypeError(
                    f"{self.name}: {what} asks for the gradient with respect to the scalar parameter "
                    f"'{p.name}'; Taichi autodiff gives gradients for array parameters only. Remedy: pass "
                    f"'{p.name}' as a 1-element array parameter, or give Operator(..., jvp=...) rules"
                )

    def _check_nondiff(self, mask, what: str):
        for p, m in zip(self._params, mask):
            if m and p.name in self.nondiff:
                raise TypeError(_nondiff_msg(self, p.name, what))


# Operators by a process-unique integer (torch.compile passes it as a graph constant)
_UIDS = itertools.count()
_BY_UID: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
# (is_compiling, traced_call) once the torch adapter is loaded: torch.compile must not trace
# the dispatch code (caches, locks), so Operator.__call__ hands traced calls over first.
_TRACE_HOOK: list = [None]


# Taichi indexes a kernel's arrays with 32-bit integers: with 2**31 elements or more a
# kernel does not run at all (taichi 1.7 returns without launching) or its indices wrap.
_MAX_KERNEL_ELEMENTS = 2**31 - 1


def _check_kernel_size(op: str, arg: str, s) -> None:
    """Refuse an array a Taichi kernel cannot address (complex arrays travel as real pairs)."""
    n = s.size * (2 if s.dtype.kind == "c" else 1)
    if n > _MAX_KERNEL_ELEMENTS:
        raise ValueError(
            f"{op}: argument '{arg}' has {s.size} elements (shape {s.shape}); a Taichi kernel's "
            f"array holds at most {_MAX_KERNEL_ELEMENTS} elements (2**31 - 1: Taichi's indices are 32-bit)"
        )


class _TorchWatcher:
    """A one-shot import hook: when torch is imported after the first Operator was made, the
    torch adapter is loaded right after torch's own module ran. A first call under
    torch.compile cannot load it (dynamo does not trace imports; with fullgraph=True that
    call failed), and an eager call should not pay for it."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        import importlib.util

        sys.meta_path[:] = [f for f in sys.meta_path if f is not self]
        spec = importlib.util.find_spec("torch")
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        spec.loader = _ThenLoadAdapter(spec.loader)
        return spec


class _ThenLoadAdapter:
    """Runs torch's loader, then loads the torch adapter (never failing torch's import)."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        try:
            _load_torch_adapter()
        except Exception:  # pragma: no cover - the first torch call loads it then
            pass

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _watch_for_torch() -> None:
    if not any(isinstance(f, _TorchWatcher) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchWatcher())


def _load_torch_adapter():
    """Load the torch adapter (torch is already imported) so that torch.compile finds its hook."""
    import importlib

    importlib.import_module("tiarray.operators._adapters.torch")


def _dispatch(op, args, static):
    global _dispatch
    from ._dispatch import dispatch

    _dispatch = dispatch
    return dispatch(op, args, static)


def _nondiff_msg(op, arg, what):
    return (
        f"{op.name}: {what} asks for the gradient with respect to '{arg}', which the Operator marks "
        f"as non-differentiable (nondiff={op.nondiff!r}). Remedy: stop the gradient of '{arg}' "
        "(jax.lax.stop_gradient / tensor.detach())"
    )


def _check_hashable(name, k, v):
    try:
        hash(v)
    except TypeError:
        raise TypeError(
            f"{name}: static parameter '{k}' must be hashable (static parameters select a compiled "
            f"specialisation), got {type(v).__name__} {v!r}; use a tuple instead of a list"
        ) from None
