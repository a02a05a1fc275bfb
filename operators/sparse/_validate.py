"""Argument checks of the sparse operators.

Shapes and dtypes are always checked. Values (``indptr`` starts at 0, never decreases
and ends at ``nnz``; every column index lies in ``[0, n)``) are checked when they are
concrete, i.e. in eager calls. Checking the values reads the whole connectivity, which
costs more than an event-driven product itself, so the result is remembered for the
pair of index arrays (by identity, for as long as both arrays live): a network's
connectivity is checked once, not once per time step. Arrays mutated in place after
their first use are not re-checked; the kernels bounds-check every access regardless,
so invalid values give wrong numbers, never an out-of-bounds access.
"""

from __future__ import annotations

import operator
import weakref

import numpy as np

__all__ = ["shape2", "csr", "dense_operand", "float_scalar", "int_scalar"]

_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))

# (id(indices), id(indptr), n_cols) -> (weakref(indices), weakref(indptr))
_checked: dict = {}
_MAX_CHECKED = 256


def is_py_number(x) -> bool:
    """A Python int or float (not bool, not a NumPy scalar, which keeps its dtype)."""
    return type(x) is int or type(x) is float


def shape2(func: str, shape) -> tuple[int, int]:
    """``shape`` as a pair of non-negative Python ints."""
    try:
        m, n = shape
        m = operator.index(m)
        n = operator.index(n)
    except (TypeError, ValueError):
        raise TypeError(
            f"{func}(): argument 'shape' must be a pair of ints (rows, columns), got {shape!r}"
        ) from None
    if m < 0 or n < 0:
        raise ValueError(f"{func}(): argument 'shape' must hold non-negative sizes, got {shape!r}")
    if m >= 2**31 or n >= 2**31:
        raise ValueError(f"{func}(): argument 'shape' must hold sizes below 2**31, got {shape!r}")
    return m, n


def _array(func: str, name: str, x) -> np.ndarray:
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and not isinstance(x, (int, float, bool)):
        try:
            return np.from_dlpack(x)
        except Exception:
            pass
    try:
        return np.asarray(x)
    except Exception as e:
        raise TypeError(
            f"{func}(): argument '{name}' must be an array, got {type(x).__name__}: {e}"
        ) from None


def index_array(func: str, name: str, x) -> np.ndarray:
    """A 1-D C-contiguous int32 or int64 array (other integer dtypes are converted)."""
    a = _array(func, name, x)
    if a.dtype not in _INDEX_DTYPES:
        if a.dtype.kind not in "iu" or a.dtype == np.bool_:
            raise TypeError(
                f"{func}(): argument '{name}' must be an integer array (int32 or int64), got dtype {a.dtype}"
            )
        if a.dtype == np.uint64 and a.size and a.max() > np.iinfo(np.int64).max:
            raise ValueError(f"{func}(): argument '{name}' holds values too large for int64")
        a = a.astype(np.int64)
    if a.ndim != 1:
        raise ValueError(f"{func}(): argument '{name}' must be 1-D, got shape {a.shape}")
    return np.ascontiguousarray(a)


def _weights(func: str, weights, nnz: int, like_dtype) -> np.ndarray:
    if is_py_number(weights):
        dt = like_dtype if like_dtype in _FLOAT_DTYPES else np.dtype(np.float32)
        return np.asarray(weights, dtype=dt)
    w = _array(func, "weights", weights)
    if w.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"{func}(): argument 'weights' must be float32 or float64, got dtype {w.dtype}")
    if w.shape == () or w.shape == (1,):
        return np.ascontiguousarray(w).reshape(())
    if w.shape != (nnz,):
        raise ValueError(
            f"{func}(): argument 'weights' must have shape () or (1,) (one weight for every synapse) "
            f"or (nnz,) = ({nnz},), got {w.shape}"
        )
    return np.ascontiguousarray(w)


def _check_values(func: str, indices: np.ndarray, indptr: np.ndarray, n_cols: int) -> None:
    key = (id(indices), id(indptr), n_cols)
    hit = _checked.get(key)
    if hit is not None and hit[0]() is indices and hit[1]() is indptr:
        return
    nnz = indices.shape[0]
    if indptr.shape[0] and (indptr[0] != 0 or indptr[-1] != nnz):
        raise ValueError(
            f"{func}(): argument 'indptr' must start at 0 and end at nnz = len(indices) = {nnz}, "
            f"got indptr[0] = {int(indptr[0])}, indptr[-1] = {int(indptr[-1])}"
        )
    if indptr.shape[0] > 1:
        d = np.diff(indptr)
        if d.size and d.min() < 0:
            i = int(np.argmax(d < 0))
            raise ValueError(
                f"{func}(): argument 'indptr' must be non-decreasing, got indptr[{i}] = {int(indptr[i])} > "
                f"indptr[{i + 1}] = {int(indptr[i + 1])}"
            )
    if nnz:
        lo = indices.min()
        hi = indices.max()
        if lo < 0 or hi >= n_cols:
            bad = int(np.argmax((indices < 0) | (indices >= n_cols)))
            raise IndexError(
                f"{func}(): argument 'indices' holds column index {int(indices[bad])} at position {bad}, "
                f"outside [0, {n_cols}) (the matrix has {n_cols} columns)"
            )
    try:
        refs = (weakref.ref(indices), weakref.ref(indptr))
    except TypeError:  # pragma: no cover - numpy arrays are weak-referenceable
        return
    if len(_checked) >= _MAX_CHECKED:
        _checked.pop(next(iter(_checked)))
    _checked[key] = refs


# (id(weights), id(indices), id(indptr), shape) -> (weakrefs..., validated result)
_fast: dict = {}


def csr(func: str, weights, indices, indptr, shape, *, like_dtype=None, check_values: bool = True):
    """Validated ``(weights, indices, indptr, m, n)``; homogeneous weights come back with shape ().

    The result for a triple of NumPy arrays is remembered (by identity, while they live):
    a simulation calls the same operator on the same connectivity every step.
    """
    key = None
    if type(weights) is np.ndarray and type(indices) is np.ndarray and type(indptr) is np.ndarray:
        try:
            key = (id(weights), id(indices), id(indptr), shape, check_values)
            hit = _fast.get(key)
        except TypeError:  # unhashable shape: the slow path reports it
            key = hit = None
        if hit is not None and hit[0]() is weights and hit[1]() is indices and hit[2]() is indptr:
            return hit[3]
    res = _csr_slow(func, weights, indices, indptr, shape, like_dtype=like_dtype, check_values=check_values)
    w = res[0]
    # remember only results that share memory with the inputs (no converting copies), so
    # that in-place updates of the caller's arrays (plasticity) are seen
    if key is not None and (w is weights or w.base is weights) and res[1] is indices and res[2] is indptr:
        if len(_fast) >= _MAX_CHECKED:
            _fast.pop(next(iter(_fast)))
        _fast[key] = (weakref.ref(weights), weakref.ref(indices), weakref.ref(indptr), res)
    return res


def _csr_slow(func, weights, indices, indptr, shape, *, like_dtype, check_values):
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
    w = _weights(func, weights, nnz, like_dtype)
    if check_values:
        _check_values(func, indices, indptr, n)
    return w, indices, indptr, m, n


def dense_operand(func: str, name: str, x, length: int, *, ndim: int, allow_bool: bool, where: str):
    """A C-contiguous bool or float32/float64 operand with ``shape[0] == length``."""
    a = _array(func, name, x)
    if a.dtype == np.bool_:
        if not allow_bool:
            raise TypeError(
                f"{func}(): argument '{name}' must be float32 or float64, got bool "
                "(use the event_ variant for spike vectors)"
            )
    elif a.dtype not in _FLOAT_DTYPES:
        kinds = "bool, float32 or float64" if allow_bool else "float32 or float64"
        raise TypeError(f"{func}(): argument '{name}' must be {kinds}, got dtype {a.dtype}")
    if a.ndim != ndim:
        raise ValueError(f"{func}(): argument '{name}' must be {ndim}-D, got shape {a.shape}")
    if a.shape[0] != length:
        raise ValueError(f"{func}(): argument '{name}' must have length {where} = {length}, got {a.shape[0]}")
    return np.ascontiguousarray(a)


def float_scalar(func: str, name: str, x, dtype=None) -> np.ndarray:
    """A 0-d float array (Python numbers become ``dtype``, default float32)."""
    if is_py_number(x):
        return np.asarray(x, dtype=dtype or np.float32)
    a = _array(func, name, x)
    if a.dtype not in _FLOAT_DTYPES:
        raise TypeError(
            f"{func}(): argument '{name}' must be a float32 or float64 scalar, got dtype {a.dtype}"
        )
    if a.size != 1:
        raise ValueError(f"{func}(): argument '{name}' must be a scalar, got shape {a.shape}")
    return np.ascontiguousarray(a).reshape(())


def int_scalar(func: str, name: str, x) -> np.ndarray:
    """A 0-d integer array (int32, int64 or uint32)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_)):
        return np.asarray(int(x) & 0xFFFFFFFF, dtype=np.uint32)
    a = _array(func, name, x)
    if a.dtype.kind not in "iu" or a.dtype == np.bool_:
        raise TypeError(f"{func}(): argument '{name}' must be an integer scalar, got dtype {a.dtype}")
    if a.size != 1:
        raise ValueError(f"{func}(): argument '{name}' must be a scalar, got shape {a.shape}")
    if a.dtype not in (np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.uint32)):
        a = a.astype(np.int64)
    return np.ascontiguousarray(a).reshape(())
