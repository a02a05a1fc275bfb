"""Argument checks of the sparse operators, for the arrays of every framework.

Shapes and dtypes are always checked (they are known even under ``jax.jit`` and
``torch.compile``). Values (``indptr`` starts at 0, never decreases and ends at ``nnz``;
every column index lies in ``[0, n)``) are checked when they are concrete: NumPy, eager
torch, eager JAX, CuPy and TiArray arrays, not tracers. Checking the values reads the
whole connectivity, which costs more than an event-driven product itself, so the result
is remembered for the pair of index arrays (by identity, for as long as both arrays live,
and together with what may change about them in place: a torch tensor's shape, dtype,
storage and version counter, a NumPy array's shape and strides; see ``_xp.stamp``): a
network's connectivity is checked once, not once per time step. A torch tensor written,
resized or given new storage in place is checked again; values written into a NumPy array
in place are not re-checked, but the kernels bounds-check every access regardless, so
invalid values give wrong numbers, never an out-of-bounds access.
"""

from __future__ import annotations

import operator
import sys
import weakref

import numpy as np

from tiarray._internal import TAICHI_FAMILY, asarray, check_bool, framework_of
from tiarray._internal import dtypes as _dtypes

from . import _once, _xp

__all__ = [
    "check_bool",
    "shape2",
    "csr",
    "dense_operand",
    "float_scalar",
    "int_scalar",
    "as_array",
    "index_range",
]

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_F32, _F64, _BOOL = _dtypes.float32, _dtypes.float64, _dtypes.bool
_FLOATS = (_F32, _F64)
_INTS = (_dtypes.int32, _dtypes.int64)

# (id(indices), id(indptr), n_cols) -> (weakref(indices), weakref(indptr), stamps)
_checked: dict = {}
_MAX_CHECKED = 256


def is_py_number(x) -> bool:
    """A Python int or float (not bool, not a NumPy scalar, which keeps its dtype)."""
    return type(x) is int or type(x) is float


def weak_float(x) -> bool:
    """A 0-d float JAX value of weak type: what a Python float becomes when passed through
    ``jax.jit``/``grad`` (float64 with x64 on). It takes the operand's dtype, as the Python
    float does and as JAX's own promotion does (it was taken as a float64 weight under a
    transform, float32 eagerly, and csr_delay_deliver refused a float32 ring, 2026-12-05)."""
    return (
        getattr(x, "weak_type", False) is True
        and framework_of(x) == "jax"
        and tuple(x.shape) == ()
        and x.dtype.kind == "f"
    )


def shape2(func: str, shape, name: str = "argument 'shape'") -> tuple[int, int]:
    """``shape`` as a pair of non-negative Python ints (``name``: what the messages call it,
    for a function whose sizes are two arguments)."""
    try:
        m, n = shape
        m = operator.index(m)
        n = operator.index(n)
    except (TypeError, ValueError):
        what = "a pair of ints (rows, columns)" if name == "argument 'shape'" else "ints"
        raise TypeError(f"{func}(): {name} must be {what}, got {shape!r}") from None
    if m < 0 or n < 0:
        raise ValueError(f"{func}(): {name} must hold non-negative sizes, got {shape!r}")
    if m >= 2**31 or n >= 2**31:
        raise ValueError(f"{func}(): {name} must hold sizes below 2**31, got {shape!r}")
    return m, n


def size(func: str, name: str, n) -> int:
    """``n`` as a non-negative Python int below 2**31 (argument ``name``)."""
    try:
        v = operator.index(n)
    except TypeError:
        raise TypeError(f"{func}(): argument '{name}' must be an int, got {n!r}") from None
    if not 0 <= v < 2**31:
        raise ValueError(f"{func}(): argument '{name}' must be in [0, 2**31), got {v}")
    return v


def as_array(func: str, name: str, x):
    """``x`` if it is an array of a supported framework, else ``np.asarray(x)``."""
    fw = framework_of(x)
    if fw in ("numpy", "torch", "jax", "cupy", "tiarray"):
        return x
    if fw in TAICHI_FAMILY:
        return asarray(x)
    if x is None:
        raise TypeError(f"{func}(): argument '{name}' must be an array, got None")
    try:
        a = np.asarray(x)
    except Exception as e:
        raise TypeError(
            f"{func}(): argument '{name}' must be an array, got {type(x).__name__}: {e}"
        ) from None
    if _dtypes.from_numpy_dtype(a.dtype) is None:
        held = type(a.flat[0]).__name__ if a.size else a.dtype
        raise TypeError(
            f"{func}(): argument '{name}' must be an array of numbers or bools, got {type(x).__name__} "
            f"holding {held}"
        )
    return a


def _dtype(func, name, a) -> _dtypes.DType:
    try:
        return _xp.dtype_of(a)
    except TypeError:
        raise TypeError(f"{func}(): argument '{name}' has an unsupported dtype {a.dtype}") from None


def float_like(func: str, name: str, x):
    """The dtype a Python-number weight takes from the operand ``x`` (argument ``name``): that
    of a float32/float64 ``x``, else None (float32); an unsupported dtype is an error naming
    ``func`` and ``name`` (an object array reached the dtype table's own error before)."""
    d = _dtype(func, name, x)
    return d if d in _FLOATS else None


def plain_tensor(func: str, name: str, a) -> None:
    """A torch tensor ``a`` holds strided data tiarray can read: not sparse (or another
    layout), nested or on the meta device, each of which raised a raw torch error from a
    data pointer or a size (2026-12-05). Called where an argument is first checked."""
    if framework_of(a) != "torch" or _xp.is_traced(a):
        return
    torch = sys.modules["torch"]
    if a.is_nested:
        raise TypeError(f"{func}(): argument '{name}' is a nested tensor; pass a regular (strided) tensor")
    if a.layout != torch.strided:
        raise TypeError(f"{func}(): argument '{name}' has layout {a.layout}; use .to_dense()")
    if a.device.type == "meta":
        raise TypeError(f"{func}(): argument '{name}' is on the meta device, which holds no data")


def index_array(func: str, name: str, x, ndim: int = 1):
    """An int32 or int64 array with ``ndim`` dimensions (other integer dtypes are converted to int64)."""
    a = as_array(func, name, x)
    plain_tensor(func, name, a)
    d = _dtype(func, name, a)
    if d not in _INTS:
        if d.kind not in "iu":
            raise TypeError(
                f"{func}(): argument '{name}' must be an integer array (int32 or int64), got dtype {d.name}"
            )
        if d is _dtypes.uint64:
            h = _xp.host(a)
            if h is not None and h.size and h.max() > np.iinfo(np.int64).max:
                raise ValueError(f"{func}(): argument '{name}' holds values too large for int64")
        a = _xp.astype(a, _dtypes.int64)
    if len(a.shape) != ndim:
        raise ValueError(f"{func}(): argument '{name}' must be {ndim}-D, got shape {tuple(a.shape)}")
    return a


def number_weight(weights, like_dtype, like):
    """A Python-number weight (or one passed through a JAX transform, :func:`weak_float`) as a
    0-d array of the operand's float dtype ``like_dtype`` (float32 when None), in ``like``'s
    framework; None for any other ``weights``."""
    dt = like_dtype if like_dtype in _FLOATS else _F32
    if is_py_number(weights):
        return _xp.full((), weights, dt, like)
    if weak_float(weights):
        return _xp.astype(weights, dt)
    return None


def _weights(func: str, weights, nnz: int, like_dtype, like):
    w = number_weight(weights, like_dtype, like)
    if w is not None:
        return w
    w = as_array(func, "weights", weights)
    plain_tensor(func, "weights", w)
    d = _dtype(func, "weights", w)
    if d not in _FLOATS:
        raise TypeError(f"{func}(): argument 'weights' must be float32 or float64, got dtype {d.name}")
    shape = tuple(w.shape)
    if shape == ():
        return w
    if shape == (1,):
        return w.reshape(())
    if shape != (nnz,):
        raise ValueError(
            f"{func}(): argument 'weights' must have shape () or (1,) (one weight for every synapse) "
            f"or (nnz,) = ({nnz},), got {shape}"
        )
    return w


def _check_values(func: str, indices, indptr, n_cols: int) -> None:
    key = (id(indices), id(indptr), n_cols)
    hit = _checked.get(key)
    stamps = (_xp.stamp(indices), _xp.stamp(indptr))
    if hit is not None and hit[0]() is indices and hit[1]() is indptr and hit[2] == stamps:
        return
    hi_ = _xp.host(indices)
    hp = _xp.host(indptr)
    if hi_ is None or hp is None:
        return  # traced: the kernels stay in bounds regardless
    nnz = hi_.shape[0]
    if hp.shape[0] and (hp[0] != 0 or hp[-1] != nnz):
        raise ValueError(
            f"{func}(): argument 'indptr' must start at 0 and end at nnz = len(indices) = {nnz}, "
            f"got indptr[0] = {int(hp[0])}, indptr[-1] = {int(hp[-1])}"
        )
    if hp.shape[0] > 1:
        d = np.diff(hp)
        if d.size and d.min() < 0:
            i = int(np.argmax(d < 0))
            raise ValueError(
                f"{func}(): argument 'indptr' must be non-decreasing, got indptr[{i}] = {int(hp[i])} > "
                f"indptr[{i + 1}] = {int(hp[i + 1])}"
            )
    if nnz:
        lo = hi_.min()
        hi = hi_.max()
        if lo < 0 or hi >= n_cols:
            bad = int(np.argmax((hi_ < 0) | (hi_ >= n_cols)))
            raise IndexError(
                f"{func}(): argument 'indices' holds column index {int(hi_[bad])} at position {bad}, "
                f"outside [0, {n_cols}) (the matrix has {n_cols} columns)"
            )
    try:
        refs = (weakref.ref(indices), weakref.ref(indptr), stamps)
    except TypeError:  # not weak-referenceable: checked again next time
        return
    if len(_checked) >= _MAX_CHECKED:
        _checked.pop(next(iter(_checked)))
    _checked[key] = refs


# (id(weights), id(indices), id(indptr), (m, n), check_values) -> (weakrefs..., stamps, weights reshaped to ())
_fast: dict = {}


def csr(func: str, weights, indices, indptr, shape, *, like_dtype=None, like=None, check_values: bool = True):
    """Validated ``(weights, indices, indptr, m, n)``; homogeneous weights come back with shape ().

    ``like`` (an operand of the call) gives the framework and device of a weight given as
    a Python number, ``like_dtype`` its dtype. The result for a triple of arrays is
    remembered (by identity, while they live, with what may change about them in place:
    ``_xp.stamp``): a simulation calls the same operator on the same connectivity every step.
    ``shape`` is checked on every call (a remembered result must not stand for a shape
    like ``(5.0, 7)`` that equals a valid one).
    """
    m, n = shape2(func, shape)
    key = None
    if not is_py_number(weights):
        key = (id(weights), id(indices), id(indptr), m, n, check_values)
        hit = _fast.get(key)
        if (
            hit is not None
            and hit[0]() is weights
            and hit[1]() is indices
            and hit[2]() is indptr
            and hit[3] == (_xp.stamp(weights), _xp.stamp(indices), _xp.stamp(indptr))
        ):
            return (_xp.reshape(weights, ()) if hit[4] else weights, indices, indptr, m, n)
    res = _csr_slow(
        func, weights, indices, indptr, (m, n), like_dtype=like_dtype, like=like, check_values=check_values
    )
    # remember only results that are the inputs themselves (a reshaped weight aside): no
    # converting copies, so in-place updates of the caller's arrays (plasticity) are seen
    if (
        key is not None
        and res[1] is indices
        and res[2] is indptr
        and framework_of(weights) is not None  # an array, not a list converted by the check
        and not _xp.is_traced(weights)
    ):
        w = res[0]
        if w is weights or tuple(weights.shape) == (1,):
            try:
                stamps = (_xp.stamp(weights), _xp.stamp(indices), _xp.stamp(indptr))
                # weak references only, and the result rebuilt from them: the entry held the
                # result, so every array a call validated stayed alive until 255 more calls
                # pushed it out (a network's connectivity and weights, per call; 2026-12-05)
                entry = (
                    weakref.ref(weights),
                    weakref.ref(indices),
                    weakref.ref(indptr),
                    stamps,
                    w is not weights,
                )
            except TypeError:
                return res
            if len(_fast) >= _MAX_CHECKED:
                _fast.pop(next(iter(_fast)))
            _fast[key] = entry
    return res


def _csr_slow(func, weights, indices, indptr, shape, *, like_dtype, like, check_values):
    m, n = shape2(func, shape)
    indices = index_array(func, "indices", indices)
    indptr = index_array(func, "indptr", indptr)
    if indptr.shape[0] != m + 1:
        raise ValueError(
            f"{func}(): argument 'indptr' must have length shape[0] + 1 = {m + 1}, got {indptr.shape[0]}"
        )
    nnz = indices.shape[0]
    if nnz >= 2**31:
        raise ValueError(f"{func}(): at most 2**31 - 1 synapses are supported, got {nnz}")
    w = _weights(func, weights, nnz, like_dtype, like if like is not None else indices)
    if check_values:
        _check_values(func, indices, indptr, n)
    return w, indices, indptr, m, n


def dense_operand(func: str, name: str, x, length: int, *, ndim: int, allow_bool: bool, where: str):
    """A bool or float32/float64 operand with ``ndim`` dimensions and ``shape[0] == length``."""
    a = as_array(func, name, x)
    d = _dtype(func, name, a)
    if d is _BOOL:
        if not allow_bool:  # the products' operands have an event_ twin; traces and a do not
            hint = " (use the event_ variant for spike vectors)" if name in ("vector", "matrix") else ""
            raise TypeError(f"{func}(): argument '{name}' must be float32 or float64, got bool{hint}")
    elif d not in _FLOATS:
        kinds = "bool, float32 or float64" if allow_bool else "float32 or float64"
        raise TypeError(f"{func}(): argument '{name}' must be {kinds}, got dtype {d.name}")
    try:
        shape = tuple(a.shape)
    except RuntimeError:  # a nested tensor has no sizes
        plain_tensor(func, name, a)
        raise
    if len(shape) != ndim:
        raise ValueError(f"{func}(): argument '{name}' must be {ndim}-D, got shape {shape}")
    if shape[0] != length:
        raise ValueError(f"{func}(): argument '{name}' must have length {where} = {length}, got {shape[0]}")
    return a


def float_scalar(func: str, name: str, x, dtype=None, like=None):
    """A 0-d float array (Python numbers become ``dtype``, default float32, in ``like``'s framework)."""
    if is_py_number(x):
        return _xp.full((), x, dtype or _F32, like if like is not None else np.zeros(()))
    a = as_array(func, name, x)
    d = _dtype(func, name, a)
    if d not in _FLOATS:
        raise TypeError(
            f"{func}(): argument '{name}' must be a float32 or float64 scalar, got dtype {d.name}"
        )
    size = 1
    for s in a.shape:
        size *= s
    if size != 1:
        raise ValueError(f"{func}(): argument '{name}' must be a scalar, got shape {tuple(a.shape)}")
    return a.reshape(()) if tuple(a.shape) != () else a


def int_scalar(func: str, name: str, x, like=None):
    """A 0-d integer array (Python ints become uint32, taken modulo 2**32)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        like = like if like is not None else np.zeros(())
        # torch has no general uint32 support: int64 holds every 32-bit seed too
        dt = _dtypes.int64 if framework_of(like) == "torch" else _dtypes.uint32
        return _xp.full((), int(x) & 0xFFFFFFFF, dt, like)
    a = as_array(func, name, x)
    d = _dtype(func, name, a)
    if d.kind not in "iu":
        raise TypeError(f"{func}(): argument '{name}' must be an integer scalar, got dtype {d.name}")
    size = 1
    for s in a.shape:
        size *= s
    if size != 1:
        raise ValueError(f"{func}(): argument '{name}' must be a scalar, got shape {tuple(a.shape)}")
    if d not in (_dtypes.int32, _dtypes.int64, _dtypes.uint32):
        a = _xp.astype(a, _dtypes.int64)
    return a.reshape(()) if tuple(a.shape) != () else a


def index_range(func: str, name: str, x, n: int, what: str = "column index") -> None:
    """Every value of the (concrete) integer array ``x`` lies in ``[0, n)``, else ``IndexError``
    naming the first one outside. Traced arrays are not checked (the kernels stay in bounds
    regardless). The check is remembered while ``x`` cannot have changed (``_once``)."""

    def check():
        h = _xp.host(x)
        if h is None or h.size == 0:
            return True
        if h.min() < 0 or h.max() >= n:
            flat = h.reshape(-1)
            bad = int(np.argmax((flat < 0) | (flat >= n)))
            pos = np.unravel_index(bad, h.shape)
            pos = int(pos[0]) if h.ndim == 1 else tuple(int(p) for p in pos)
            raise IndexError(
                f"{func}(): argument '{name}' holds {what} {int(flat[bad])} at position {pos}, "
                f"outside [0, {n})"
            )
        return True

    _once.cached("index_range", (x,), (int(n),), check)
