"""The few framework-specific array calls the sparse operators and their rules need.

The rules receive the arrays of whichever framework called the operator (NumPy, torch,
JAX arrays or tracers, CuPy, TiArray). Most of what they do works on all of them
(``*``, ``+``, ``.reshape``, ``.sum()``); the rest is here: making constants of the
caller's framework, converting dtypes, moving axes, reading concrete values on the host.
Frameworks are imported only when an array of theirs is seen.
"""

from __future__ import annotations

import sys

import numpy as np

from tiarray import _internal as _core
from tiarray._internal import asarray, framework_of, is_jax_tracer
from tiarray._internal import dtypes as _dtypes

__all__ = [
    "fw_of",
    "dtype_of",
    "astype",
    "full",
    "moveaxis",
    "stack",
    "cumsum",
    "host",
    "from_numpy",
    "is_traced",
    "stamp",
    "reshape",
    "jax_map",
]


def fw_of(*arrays) -> str:
    """The framework of a call's arrays (``"numpy"`` when none is an array)."""
    fw = None
    for a in arrays:
        f = framework_of(a)
        if f is None or f == fw:
            continue
        if fw is None or (fw == "numpy" and f == "jax"):
            fw = f
    return fw or "numpy"


_DT: dict = {}
# torch dtypes apart: torch.compile traces the lookup, and torch 2.11's Dynamo cannot hash
# the NumPy dtype keys of a shared dict (graph break "NumpyDTypeVariable", first CUDA run)
_DT_TORCH: dict = {}


def dtype_of(x) -> _dtypes.DType:
    """The tiarray dtype of any framework's array (or of a ShapeDtype / UndefinedPrimal)."""
    d = x.dtype
    if type(d).__module__ == "torch":
        r = _DT_TORCH.get(d)
        if r is None:
            # by name ("torch.float64" -> float64): torch.compile traces this and cannot trace
            # NumPy's dtype conversion of a torch dtype
            r = _dtypes.to_dtype(str(d).rsplit(".", 1)[-1])
            # not remembered while Dynamo traces: its guard on this dict, made before the
            # insertion, failed on the same frame ("Guard failed on the same frame it was
            # created", a first compiled call, 2026-12-05)
            if not sys.modules["torch"].compiler.is_compiling():
                _DT_TORCH[d] = r
        return r
    r = _DT.get(d)
    if r is None:
        r = d if isinstance(d, _dtypes.DType) else _dtypes.to_dtype(d)
        _DT[d] = r
    return r


def _dtype_name(dtype) -> str:
    """The dtype's name ("float32"), without NumPy's dtype machinery where it can be avoided
    (torch.compile traces these helpers and cannot trace NumPy dtype conversions)."""
    if isinstance(dtype, _dtypes.DType):
        return dtype.name
    if isinstance(dtype, str):
        return _dtypes.to_dtype(dtype).name
    if type(dtype).__module__ == "torch":
        return str(dtype).rsplit(".", 1)[-1]
    return _dtypes.from_numpy_dtype(_np_dtype(dtype)).name


def _np_dtype(dtype) -> np.dtype:
    if isinstance(dtype, _dtypes.DType):
        return dtype.numpy
    if isinstance(dtype, np.dtype):
        return dtype
    return _dtypes.to_dtype(dtype).numpy


def astype(x, dtype):
    """``x`` converted to ``dtype`` (a no-op when it has it already)."""
    fw = framework_of(x)
    if fw == "torch":
        import torch

        td = getattr(torch, _dtype_name(dtype))
        return x if x.dtype == td else x.to(td)
    npd = _np_dtype(dtype)
    if fw == "tiarray":
        return x if x.dtype.numpy == npd else x.__array_namespace__().astype(x, _dtypes.from_numpy_dtype(npd))
    if x.dtype == npd:
        return x
    return x.astype(npd)


def full(shape, value, dtype, like):
    """An array of ``like``'s framework (and device) filled with ``value``."""
    fw = framework_of(like)
    if fw == "torch":
        import torch

        return torch.full(tuple(shape), value, dtype=getattr(torch, _dtype_name(dtype)), device=like.device)
    npd = _np_dtype(dtype)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.full(tuple(shape), value, dtype=npd)
    if fw == "cupy":
        import cupy

        return cupy.full(tuple(shape), value, dtype=npd)
    if fw == "tiarray":
        xp = like.__array_namespace__()
        return xp.full(tuple(shape), value, dtype=_dtypes.from_numpy_dtype(npd), device=like.device)
    return np.full(tuple(shape), value, dtype=npd)


def moveaxis(x, src: int, dst: int):
    if framework_of(x) == "torch":
        return x.movedim(src, dst)
    if framework_of(x) == "jax":
        import jax.numpy as jnp

        return jnp.moveaxis(x, src, dst)
    if framework_of(x) == "cupy":
        import cupy

        return cupy.moveaxis(x, src, dst)
    if framework_of(x) == "tiarray":
        return x.__array_namespace__().moveaxis(x, src, dst)
    return np.moveaxis(x, src, dst)


def repeat0(x, b: int):
    """``b`` copies of ``x`` along a new first axis, ``b = 0`` included (a stack of ``b``
    references cannot tell the framework of an empty list)."""
    fw = framework_of(x)
    shape = (int(b), *x.shape)
    if fw == "torch":
        return x.unsqueeze(0).expand(shape)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.broadcast_to(x[None], shape)
    if fw == "cupy":
        import cupy

        return cupy.broadcast_to(x[None], shape)
    return np.broadcast_to(np.asarray(x)[None], shape)


def stack(xs, axis: int = 0):
    fw = framework_of(xs[0])
    if fw == "torch":
        import torch

        return torch.stack(list(xs), dim=axis)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.stack(list(xs), axis=axis)
    if fw == "cupy":
        import cupy

        return cupy.stack(list(xs), axis=axis)
    if fw == "tiarray":
        return xs[0].__array_namespace__().stack(list(xs), axis=axis)
    return np.stack(list(xs), axis=axis)


def eager_only(fn, like, reason):
    """``fn``, or for torch arrays ``like`` the same function that ``torch.compile`` does not
    trace but runs eagerly (a graph break; under ``fullgraph=True`` Dynamo's error, with
    ``reason``): for work that reads array values (made where no trace runs, e.g. in a
    constructor, since Dynamo may not trace the wrapping itself)."""
    if framework_of(like) != "torch":
        return fn
    return sys.modules["torch"].compiler.disable(fn, reason=reason)


def is_traced(x) -> bool:
    """Whether ``x`` has no concrete value here (a JAX tracer, a torch fake/traced tensor)."""
    if is_jax_tracer(x):
        return True
    if framework_of(x) == "torch":
        torch = sys.modules["torch"]
        if torch.compiler.is_compiling():
            return True
        sub = getattr(torch._subclasses, "FakeTensor", None) if hasattr(torch, "_subclasses") else None
        if sub is not None and isinstance(x, sub):
            return True
        if type(x) is not torch.Tensor:
            return True  # functorch wrappers, other subclasses: do not read values
        try:
            torch._C._functorch.is_functorch_wrapped_tensor  # noqa: B018
            if torch._C._functorch.is_functorch_wrapped_tensor(x):
                return True
        except AttributeError:  # pragma: no cover - older torch
            pass
    return False


def host(x):
    """A NumPy array with the values of ``x`` (a view where the memory is on the host), or
    ``None`` when ``x`` has no concrete value (traced)."""
    if isinstance(x, np.ndarray):
        return x
    if is_traced(x):
        return None
    fw = framework_of(x)
    if fw == "torch":
        torch = sys.modules["torch"]
        off = getattr(torch._C, "_DisableFuncTorch", None)
        if off is not None and getattr(torch._C, "_are_functorch_transforms_active", lambda: False)():
            # a plain tensor captured by a torch.func transform: the ops below would run at
            # the transform's level and make storage-less wrappers ("Cannot access data
            # pointer", 2026-12-05); read it with the transforms off
            with off():
                return x.detach().resolve_conj().resolve_neg().cpu().numpy()
        return x.detach().resolve_conj().resolve_neg().cpu().numpy()
    if fw == "cupy":
        return x.get()
    if fw in ("jax", "tiarray"):
        return np.asarray(x)
    return np.asarray(x)


def from_numpy(a: np.ndarray, like):
    """``a`` as an array of ``like``'s framework and device (NumPy results of eager helpers)."""
    fw = framework_of(like)
    if fw in (None, "numpy"):
        return a
    if fw == "torch":
        import torch

        return torch.from_numpy(np.asarray(a, order="C")).to(like.device)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.asarray(a)
    if fw == "cupy":
        import cupy

        return cupy.asarray(a)
    if fw == "tiarray":
        return asarray(a, device=like.device)
    return a


def host_op(op, *args, **static):
    """Run an Operator on host NumPy arrays (the eager helpers' passes): directly when Taichi
    runs on the CPU, through TiArrays on Taichi's device otherwise; NumPy results."""
    _core.ensure_init()
    if _core.is_cpu():
        return op(*args, **static)
    dev = _core.current_device()
    # (np.asarray, not np.ascontiguousarray: that one makes a 0-d array 1-d, and a seed
    # became a (1,) array on CUDA, refused by the kernel's 0-d parameter, 2026-12-04)
    res = op(*[asarray(np.asarray(a, order="C"), device=dev) if isinstance(a, np.ndarray) else a for a in args],
             **static)  # fmt: skip
    if isinstance(res, tuple):
        return tuple(np.asarray(r) for r in res)
    return np.asarray(res)


def cumsum(x):
    fw = framework_of(x)
    if fw == "torch":
        import torch

        return torch.cumsum(x, 0)
    if fw == "jax":
        import jax.numpy as jnp

        return jnp.cumsum(x)
    return np.cumsum(x)


def stamp(x):
    """What may change about an array object in place, so that a result remembered for it
    can be checked before reuse: torch tensors change shape, dtype, storage and values in
    place (``resize_``, ``set_``, ``.data = ...``; in-place writes bump ``_version``, except
    on inference tensors, which have no version counter and are treated as NumPy arrays); NumPy
    and CuPy arrays their shape and strides (``a.shape = ...``, ``resize``; value writes are
    not seen, and the kernels clamp every index regardless); JAX arrays and TiArrays do not
    change. ``None``: nothing to compare (a traced tensor), so nothing is reused."""
    fw = framework_of(x)
    if fw == "torch":
        if sys.modules["torch"].compiler.is_compiling():
            return None  # traced by dynamo, which cannot compare data pointers: nothing to reuse
        if x.is_inference():  # no version counter (reading _version raises): as for NumPy
            return (x.shape, x.dtype, x.data_ptr(), x.stride(), "inference")
        return (x.shape, x.dtype, x.data_ptr(), x._version)
    if fw in ("numpy", "cupy"):
        return (x.shape, x.strides, x.dtype)
    return None


def reshape(x, shape):
    """``x.reshape(shape)`` for every framework (TiArrays through ``tiarray.reshape``)."""
    if framework_of(x) == "tiarray":
        return x.__array_namespace__().reshape(x, tuple(shape))
    return x.reshape(tuple(shape))


def jax_map(f, xs):
    """``jax.lax.map(f, xs)``: one call of ``f`` per leading element, in a loop (not unrolled)."""
    from jax import lax

    return lax.map(f, xs)
