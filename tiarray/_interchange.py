"""Data interchange: ``asarray`` and ``from_dlpack`` (in), ``__dlpack__`` and ``to_device`` (out).

Getting arrays in shares memory wherever it can (:mod:`tiarray._foreign` makes the
views) and copies otherwise (Python scalars and sequences, another dtype or device,
``copy=True``). Exporting hands a DLPack capsule (:mod:`tiarray._dlpack`) of the array's
memory, or of a copy where the consumer asks for one. Both directions need the copy
kernels, so this module sits above them and attaches ``TiArray.__dlpack__`` and
``TiArray.to_device``.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
import weakref

import numpy as np

from . import _backend, _cuda, _dlpack, _dtypes, _runtime
from ._array_object import MemoryKeeper, TiArray, c_strides
from ._buffer import empty_owned
from ._detect import TAICHI_FAMILY, framework_of
from ._foreign import _import_numpy, _import_torch, device_from_dl, dl_pair, view_of
from ._kernels.copy import copy_array, copy_to_device
from ._runtime import CPU
from ._validate import check_copy
from ._views import real_view

__all__ = ["asarray", "from_dlpack", "export_dlpack"]

_SCALAR_TYPES = (bool, int, float, complex)


def asarray(obj, /, *, dtype=None, device=None, copy=None) -> TiArray:
    """Convert ``obj`` to a TiArray, sharing its memory whenever possible.

    Parameters
    ----------
    obj : array-like
        A TiArray, NumPy array, torch tensor, JAX array, CuPy array, array-api-strict
        array, ``ti.ndarray``, a Taichi field (``ti.field``, ``ti.Vector.field``,
        ``ti.Matrix.field``: a view of its memory where its SNodes are dense, element
        axes last), any object with ``__dlpack__``, an object with the buffer
        protocol, a Python scalar, or a nested sequence of those.
    dtype : DType, optional
        The dtype of the result; a different dtype than ``obj``'s needs a copy.
    device : Device or str, optional
        The device of the result; a different device than ``obj``'s needs a copy.
    copy : bool, optional
        ``True``: always copy. ``None``: copy only if needed. ``False``: never copy, and
        raise ``ValueError`` if a copy is needed.

    Returns
    -------
    TiArray
        A view of ``obj``'s memory (read-only if ``obj`` is immutable, e.g. a JAX array)
        or, when a copy was made, a new array tiarray owns.

    Raises
    ------
    TypeError
        For objects that are not arrays, unsupported dtypes (e.g. quantized tensors),
        traced JAX values, torch tensors that require grad.
    ValueError
        If ``copy=False`` and a copy is needed.
    BufferError
        If a DLPack producer refuses to export, or a capsule was already consumed.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = np.arange(4, dtype=np.float32)
    >>> t = ta.asarray(x)
    >>> t.ptr == x.ctypes.data        # the same memory
    True
    >>> ta.asarray([1, 2, 3]).dtype
    tiarray.int64
    """
    func = "asarray"
    check_copy(copy, func)
    want_dtype = None if dtype is None else _dtypes.to_dtype(dtype, func=func)
    want_device = None if device is None else _runtime.get_device(device, func=func)

    x = None
    if not isinstance(obj, _SCALAR_TYPES):
        x = view_of(obj, func, copy, want_device)
        if x is None and (hasattr(obj, "__array_interface__") or hasattr(obj, "__array__")):
            try:
                arr = np.asarray(obj, copy=False if copy is False else None)
            except ValueError as e:
                raise ValueError(
                    f"{func}(): {type(obj).__name__} cannot be converted without a copy: {e}"
                ) from e
            except Exception as e:
                raise TypeError(f"{func}(): could not convert {type(obj).__name__} to an array: {e}") from e
            x = _import_numpy(arr, func)
    if x is None:
        # Python scalars, nested sequences, and strided memory we cannot describe.
        if copy is False:
            raise ValueError(
                f"{func}(): a {type(obj).__name__} has no memory that can be shared without a copy, "
                "but copy=False was given"
            )
        return _from_python(obj, want_dtype, want_device, func)

    if want_device is not None and want_device != x._device:
        if copy is False:
            raise ValueError(
                f"{func}(): the input lives on {x._device}, device={want_device} needs a copy, "
                "but copy=False was given"
            )
        x = copy_to_device(x, want_device)
        copied = True
    else:
        copied = False
    if want_dtype is not None and want_dtype is not x._dtype:
        if copy is False:
            raise ValueError(
                f"{func}(): the input has dtype {x._dtype.name}, dtype={want_dtype.name} needs a copy, "
                "but copy=False was given"
            )
        return copy_array(x, want_dtype)
    if copy and not copied:
        return copy_array(x)
    return x


def _default_for(kind):
    return _dtypes.DEFAULTS[kind]


def _infer_dtype(obj) -> _dtypes.DType | None:
    """The array API dtype of a Python scalar or nested sequence (None: let NumPy decide)."""
    kinds = set()

    def walk(o, depth=0):
        if depth > 64:
            raise ValueError("asarray(): sequence nested too deeply")
        if isinstance(o, bool) or isinstance(o, np.bool_):
            kinds.add("b")
        elif isinstance(o, (int, np.integer)):
            kinds.add("i")
        elif isinstance(o, (float, np.floating)):
            kinds.add("f")
        elif isinstance(o, (complex, np.complexfloating)):
            kinds.add("c")
        elif isinstance(o, (list, tuple)):
            for e in o:
                walk(e, depth + 1)
        else:
            kinds.add("?")

    walk(obj)
    if "?" in kinds:
        return None
    if "c" in kinds:
        return _default_for("complex floating")
    if "f" in kinds:
        return _default_for("real floating")
    if "i" in kinds:
        return _default_for("integral")
    if "b" in kinds:
        return _dtypes.bool
    return _default_for("real floating")  # empty sequence


def _from_python(obj, dtype, device, func) -> TiArray:
    if dtype is None:
        dtype = _infer_dtype(obj)
    try:
        if dtype is not None:
            if dtype.kind in "iu" and not isinstance(obj, np.ndarray):
                _check_int_range(obj, dtype, func)
            arr = np.asarray(obj, dtype=dtype.numpy)
        else:
            arr = np.asarray(obj)
    except (OverflowError, ValueError, TypeError) as e:
        raise TypeError(f"{func}(): could not convert {type(obj).__name__} to an array: {e}") from None
    if arr.dtype == object or _dtypes.from_numpy_dtype(arr.dtype) is None:
        raise TypeError(
            f"{func}(): expected an array, a Python scalar or a nested sequence of numbers, "
            f"got {type(obj).__name__}"
        )
    dt = _dtypes.from_numpy_dtype(arr.dtype)
    host = empty_owned(arr.shape, dt, CPU)
    if host.size:
        np.copyto(host._numpy_view(), arr)
    dev = device if device is not None else _runtime.current_device()
    if dev != CPU:
        return copy_to_device(host, dev)
    return host


def _check_int_range(obj, dtype, func):
    info = np.iinfo(dtype.numpy)

    def walk(o):
        if isinstance(o, (list, tuple)):
            for e in o:
                walk(e)
        elif isinstance(o, int) and not isinstance(o, bool):
            if not info.min <= o <= info.max:
                raise OverflowError(f"Python int {o} does not fit in {dtype.name}")

    walk(obj)


def from_dlpack(x, /, *, device=None, copy=None) -> TiArray:
    """Import an object that implements DLPack (``__dlpack__`` and ``__dlpack_device__``).

    Parameters
    ----------
    x : object
        Any DLPack producer: a NumPy array, torch tensor, JAX array, CuPy array, a TiArray...,
        or a ``ti.ndarray`` or Taichi field (shared as :func:`asarray` shares them).
    device : Device or str, optional
        Where the result must live; another device than ``x``'s needs a copy.
    copy : bool, optional
        ``True`` always copies, ``False`` never copies (``ValueError`` if needed).

    Returns
    -------
    TiArray

    Raises
    ------
    TypeError
        If ``x`` does not implement DLPack.
    BufferError
        If the producer refuses to export or the dtype/device is not supported.

    Examples
    --------
    >>> import numpy as np, tiarray as ta
    >>> x = np.ones(3)
    >>> ta.from_dlpack(x).ptr == x.ctypes.data
    True
    """
    func = "from_dlpack"
    if isinstance(x, TiArray):
        t = x
    else:
        fw = framework_of(x)
        if not hasattr(x, "__dlpack__") and fw not in TAICHI_FAMILY:
            raise TypeError(
                f"{func}(): argument 'x' must implement the DLPack protocol (__dlpack__), "
                f"got {type(x).__name__}"
            )
        if fw == "numpy":
            t = _import_numpy(x, func)  # same memory, without building a capsule
            if t is None:
                raise BufferError(f"{func}(): NumPy array with strides not a multiple of its itemsize")
        elif fw == "torch":
            t = _import_torch(x, func, copy, None if device is None else _runtime.get_device(device))
        else:
            t = view_of(x, func, copy, None if device is None else _runtime.get_device(device))
    return asarray(t, device=device, copy=copy)


# ----------------------------------------------------------------------------- export


def export_dlpack(x: TiArray, *, stream, max_version, dl_device, copy):
    if x._owner.__class__ is MemoryKeeper:
        x._owner.check()
    if max_version is not None:
        ok = isinstance(max_version, tuple) and len(max_version) == 2
        if not (ok and all(isinstance(v, int) and not isinstance(v, bool) for v in max_version)):
            raise TypeError(
                f"__dlpack__(): argument 'max_version' must be None or a (major, minor) tuple of ints, "
                f"got {max_version!r}"
            )
    check_copy(copy, "__dlpack__")
    versioned = max_version is not None and max_version[0] >= 1
    if x._readonly and not versioned:
        # A legacy capsule has no read-only flag: its consumer may write (even JAX, into a
        # donated buffer). NumPy refuses such an export; tiarray exports a copy, as the
        # standard's copy=None allows, and refuses only where no copy is allowed.
        if copy is False:
            raise BufferError(
                "__dlpack__(): the array is read-only, which a legacy (unversioned) DLPack capsule cannot "
                "say, and copy=False was given; ask for a versioned capsule (max_version=(1, 0) or newer, "
                "as NumPy >= 2 and PyTorch do) to share the memory read-only"
            )
        copy = True
    copied = False
    if dl_device is not None:
        want = device_from_dl(dl_pair(dl_device, "__dlpack__", "argument 'dl_device'"), "__dlpack__")
        if want != x._device:
            if copy is False:
                raise BufferError(
                    f"__dlpack__(): the array is on {x._device}, dl_device asks for {want}; that needs a copy "
                    "but copy=False was given"
                )
            x = copy_to_device(x, want)
            copied = True
    if not copy and any(st < 0 for st, d in zip(x._strides, x._shape) if d > 1):
        # PyTorch aborts the process on negative DLPack strides (a C++ exception escapes
        # at::fromDLPack), and JAX cannot take them either: refuse cleanly instead.
        raise BufferError(
            "__dlpack__(): the array has negative strides, which DLPack consumers such as PyTorch "
            "cannot represent; use np.asarray(x) for a NumPy view, or export a copy "
            "(x.__dlpack__(copy=True) or tiarray.asarray(x, copy=True))"
        )
    if copy and not copied:
        x = copy_array(x)
        copied = True
    if x._device.kind == "cpu":
        if stream is not None and stream != -1:
            raise BufferError(f"__dlpack__(): stream must be None for CPU memory, got {stream!r}")
    elif stream != -1:
        _cuda.stream_wait(stream)
    return _dlpack.export_capsule(
        x._ptr, x._shape, x._strides, x._dtype, x._device.dlpack, x,
        readonly=x._readonly, versioned=versioned, copied=copied,
    )  # fmt: skip


# ----------------------------------------------------------------------------- plain kernels

_WRITTEN = weakref.WeakKeyDictionary()  # kernel object -> the ndarray parameters it may write

# Calls whose arguments are values (an element passed to them is read, not written).
# Any other call may write an element or array passed to it: a ti.func parameter
# without annotation is a reference, and the atomics write their first argument.
_PURE_CALLS = frozenset(
    "abs min max float int bool cast sqrt rsqrt exp log sin cos tan tanh asin acos atan2 floor ceil "
    "round pow select isnan isinf erf sign u8 u16 u32 u64 i8 i16 i32 i64 f16 f32 f64 length norm "
    "dot cross normalized clamp".split()
)


# Bare-name calls taken as pure: Python's builtins only (a user's ti.func may be called
# 'clamp' or 'norm' and take an element by reference: ti.template()).
_PURE_BUILTINS = frozenset("abs min max float int bool len range".split())
# Methods of an element (a vector or matrix) that only read it (``x[i].fill(5)`` writes it).
_PURE_METHODS = frozenset(
    "norm norm_sqr norm_inv normalized dot cross outer_product sum max min any all transpose trace "
    "determinant inverse cast to_list to_numpy get_shape".split()
)


def _call_name(call) -> str:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    return f.id if isinstance(f, ast.Name) else ""


def _pure_call(call) -> bool:
    """Whether a call only reads the arrays and elements passed to it (see _PURE_CALLS)."""
    f = call.func
    if isinstance(f, ast.Name):
        return f.id in _PURE_BUILTINS
    return isinstance(f, ast.Attribute) and f.attr in _PURE_CALLS


def _source_tree(func):
    """``(tree, parents)``: the AST of ``func``'s source and each node's parent, or None where
    the source cannot be read."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(func)))
    except (OSError, TypeError, SyntaxError):
        return None
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[child] = node
    return tree, parents


def _written_params(func, names) -> set:
    """The parameters among ``names`` that the kernel ``func`` may write (read from its
    source; every one of them if the source cannot be read)."""
    src = _source_tree(func)
    if src is None:
        return set(names)
    tree, parents = src
    written = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in names) or node.id in written:
            continue
        top, meta = node, False
        while isinstance(parents.get(top), (ast.Subscript, ast.Attribute)) and parents[top].value is top:
            top = parents[top]
            meta = meta or (isinstance(top, ast.Attribute) and top.attr == "shape")
        up = parents.get(top)
        if meta:
            continue  # x.shape
        if isinstance(getattr(top, "ctx", None), (ast.Store, ast.Del)):
            written.add(node.id)
        elif top is node:  # the bare array: only `for i in x` / `ti.grouped(x)` / `ti.ndrange(x)` read it
            # (not ti.static(x): `y = ti.static(x); y[0] = 1` wrote a read-only array, 2026-12-05)
            if not (
                (isinstance(up, ast.For) and up.iter is top)
                or (isinstance(up, ast.Call) and _call_name(up) in ("grouped", "ndrange"))
            ):
                written.add(node.id)
        elif isinstance(up, ast.Call) and up.func is top and isinstance(top, ast.Attribute):
            if top.attr not in _PURE_METHODS:  # a method of an element: x[i].fill(5) writes it
                written.add(node.id)
        elif isinstance(up, ast.Call) and (top in up.args or top in [k.value for k in up.keywords]):
            if not _pure_call(up):
                written.add(node.id)
    return written


def _aliases(tree, names) -> dict:
    """Local names bound to a parameter in ``names`` (``y = x``, ``y = ti.static(x)``, chains of
    them) -> that parameter."""
    alias = {n: n for n in names}
    changed = True
    while changed:
        changed = False
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target, value = node.targets[0], node.value
            if isinstance(value, ast.Call) and _call_name(value) == "static" and len(value.args) == 1:
                value = value.args[0]
            if isinstance(target, ast.Name) and isinstance(value, ast.Name) and value.id in alias:
                if target.id not in alias:
                    alias[target.id] = alias[value.id]
                    changed = True
    return alias


def stored_params(func, names) -> set:
    """The parameters among ``names`` that the kernel ``func`` stores into in its own body:
    ``x[i] = ...``, ``x[i] += ...``, ``ti.atomic_add(x[i], ...)``, also through a local alias
    (``y = ti.static(x)``; an Operator's elements are scalars, so no element methods).
    Functions it calls are not followed: a parameter passed to one is not counted, unlike
    :func:`_written_params`. An empty set where the source cannot be read."""
    src = _source_tree(func)
    if src is None:
        return set()
    tree, parents = src
    alias = _aliases(tree, names)
    stored = set()
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Name) and node.id in alias):
            continue
        top = node
        while isinstance(parents.get(top), ast.Subscript) and parents[top].value is top:
            top = parents[top]
        if top is node:
            continue  # the bare name: not an element store
        up = parents.get(top)
        if isinstance(getattr(top, "ctx", None), (ast.Store, ast.Del)):
            stored.add(alias[node.id])
        elif (
            isinstance(up, ast.Call)
            and up.args
            and up.args[0] is top
            and _call_name(up).startswith("atomic_")
        ):
            stored.add(alias[node.id])
    return stored


def plain_kernel_args(kernel, func, params, args: tuple, kwargs: dict) -> tuple:
    """The arguments of a user's own ``@ti.kernel`` call with each TiArray at an
    ``ndarray()`` parameter replaced by a view Taichi's launch path takes (NumPy on the
    CPU, torch on CUDA): the same memory, no copy. A read-only TiArray is refused (a plain
    kernel may write any ndarray argument), so is a strided one (Taichi's external arrays
    have no strides, and a hidden copy would not be zero-copy)."""
    if _runtime.program() is None:  # TiArrays given, Taichi not started yet: tiarray starts it
        _runtime.ensure_init()
    written = _WRITTEN.get(kernel)
    if written is None:
        written = _WRITTEN[kernel] = _written_params(func, {n for n, is_array in params if is_array})
    name = func.__name__
    is_arrays = dict(params)
    out = list(args)
    new_kwargs = dict(kwargs)
    for key, a in list(enumerate(args)) + list(kwargs.items()):
        if not isinstance(a, TiArray):
            continue
        if isinstance(key, int):
            if key >= len(params):
                continue
            pname = params[key][0]
        else:
            pname = key
        is_array = is_arrays.get(pname)
        if not is_array:
            if is_array is None:  # not a parameter of the kernel: Taichi says so
                continue
            if a.ndim != 0:
                raise TypeError(
                    f"{name}(): argument '{pname}' is a TiArray of shape {a.shape}, but the kernel's parameter "
                    f"'{pname}' is not a ti.types.ndarray() (it is a scalar or a ti.template()). Annotate it "
                    "ti.types.ndarray() to pass an array, or pass one value (a Python number or a 0-d TiArray)"
                )
            if isinstance(key, int):  # a 0-d TiArray for a scalar parameter: its value
                out[key] = a.item()
            else:
                new_kwargs[key] = a.item()
            continue
        if a._dtype.kind == "c":  # Taichi has no complex types: real pairs, as tiarray.Operator passes them
            a = real_view(a)
        elif a._dtype is _dtypes.bfloat16:
            raise TypeError(
                f"{name}(): argument '{pname}' is a bfloat16 TiArray; Taichi kernels have no bfloat16 type. "
                f"Pass a float32 copy (tiarray.astype({pname}, tiarray.float32))"
            )
        may_write = pname in written
        if a._readonly and may_write:
            raise ValueError(
                f"{name}(): argument '{pname}' is a read-only TiArray (a view of a JAX array or of a read-only "
                f"NumPy array), and the kernel may write '{pname}' (it stores into it or passes it to a "
                "function). Call the kernel through "
                "tiarray.Operator(kernel, outs=[...]), which knows inputs from outputs and never writes an "
                f"input, or pass a writable copy: tiarray.asarray({pname}, copy=True)"
            )
        if not a._is_c_contiguous():
            raise ValueError(
                f"{name}(): argument '{pname}' is a TiArray with strides {a._strides} (not C-contiguous); "
                "Taichi's ndarray arguments have no strides. Pass a contiguous copy "
                f"(tiarray.asarray({pname}, copy=True)), or call the kernel through tiarray.Operator"
            )
        if a._device.kind == "cpu":
            view = a._numpy_view()
        else:
            torch = sys.modules.get("torch")
            if torch is None:
                raise TypeError(
                    f"{name}(): argument '{pname}' is a TiArray on {a._device}; Taichi's own kernel call takes "
                    "GPU memory only as a torch tensor and torch is not imported. Call the kernel through "
                    "tiarray.Operator, which takes any framework's GPU memory"
                )
            view = torch.from_dlpack(a)
        if isinstance(key, int):
            out[key] = view
        else:
            new_kwargs[key] = view
    return tuple(out), new_kwargs


_backend.set_kernel_arg_hook((TiArray,), plain_kernel_args)


# ----------------------------------------------------------------------------- TiArray methods


def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None):
    """Export as a DLPack capsule (versioned when ``max_version >= (1, 0)``, else legacy).

    Parameters
    ----------
    stream : int or None
        CPU: must be ``None``. CUDA: the consumer's stream (``None`` or ``1`` the
        legacy default stream, ``2`` the per-thread default stream, ``-1`` no
        synchronisation, another int a ``cudaStream_t``); the data is made ready on it.
    max_version : tuple of int, optional
        The highest DLPack version the consumer understands.
    dl_device : tuple, optional
        The device the consumer wants the data on; a different device needs ``copy``.
    copy : bool, optional
        ``True`` exports a copy, ``False`` never copies (``BufferError`` if one is needed).

    Raises
    ------
    BufferError
        If the array cannot be exported as asked (device needs a copy and
        ``copy=False``, a stream on the CPU, ``bfloat16`` to a legacy consumer ...).
    """
    return export_dlpack(self, stream=stream, max_version=max_version, dl_device=dl_device, copy=copy)


def _cuda_array_interface(self) -> dict:
    """The CUDA array interface (version 3) of an array in CUDA memory, for consumers that read
    it instead of DLPack (``cupy.asarray``, ``numba.cuda.as_cuda_array``): no copy, read-only
    arrays say so, and ``stream`` is 1 (Taichi's legacy default stream, which the consumer
    waits for). CPU arrays have no such attribute (``hasattr`` is False)."""
    if self._device.kind != "cuda":
        raise AttributeError(
            f"__cuda_array_interface__: the array lives on {self._device}; the CUDA array interface "
            "describes CUDA memory (use __array_interface__ or DLPack)"
        )
    npd = self._dtype._np
    if npd is None or npd.kind == "V":  # bfloat16
        raise AttributeError(
            f"__cuda_array_interface__: {self._dtype} has no type string in the CUDA array interface; "
            "export it through DLPack"
        )
    if self._owner.__class__ is MemoryKeeper:
        self._owner.check()
    it = npd.itemsize
    strides = self._strides
    return {
        "shape": self._shape,
        "typestr": npd.str,
        "data": (self._ptr if self.size else 0, self._readonly),
        "strides": None if strides == c_strides(self._shape) else tuple(s * it for s in strides),
        "version": 3,
        "stream": _cuda.LEGACY_STREAM,
    }


def to_device(self, device, /, *, stream=None) -> TiArray:
    """This array on ``device``: itself if it is there already, else a copy."""
    dev = _runtime.get_device(device, func="to_device")
    if dev == self._device:
        return self
    return copy_to_device(self, dev, stream=stream)


for _f in (__dlpack__, to_device):
    _f.__qualname__ = f"TiArray.{_f.__name__}"
    setattr(TiArray, _f.__name__, _f)
del _f
_cuda_array_interface.__qualname__ = "TiArray.__cuda_array_interface__"
TiArray.__cuda_array_interface__ = property(_cuda_array_interface)
