"""Values derived from index arrays (range checks, column indices), computed once per array *version*.

A value derived from an array (its indices were checked; the column index of a CSR
matrix) may be reused only while the array cannot have changed. :func:`stamp` gives a
token that changes whenever the contents of an array may have changed, or ``None`` when
there is no such token; :func:`cached` reuses a value only while the stamps of all its
arrays are unchanged (and the arrays alive: weak references), and computes it again on
every call otherwise:

- **JAX arrays** are immutable: the array itself (its identity) is the token.
- **torch tensors** count their in-place changes in ``Tensor._version`` (shared by views
  and bumped by ``resize_``, ``set_`` and every in-place op): the token is that counter
  with the data pointer, shape, strides and dtype. Writes that bypass torch (through a
  NumPy view of the tensor's memory) are not seen.
- **NumPy arrays** count nothing. They are reused only when they are read-only all the
  way down: the array and every array it is a view of have ``flags.writeable == False``
  and the memory belongs to one of them or to an immutable ``bytes`` object. This is the
  array's promise not to change (:func:`fixed_num_conn` returns such arrays;
  ``a.flags.writeable = False`` makes one; setting it back to ``True`` breaks the promise).
  A writeable NumPy array, a CuPy array or a TiArray is checked again on every call.
- **Traced values** (``jax.jit`` tracers, ``torch.compile``) have no values: no token.

Keys hold the validated Python ints of a call (never a shape tuple as the user gave it,
so ``shape=(5.0, 7)`` cannot hit the entry of ``(5, 7)``).
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from tiarray._internal import framework_of, numpy_data_ptr

from . import _xp

__all__ = ["stamp", "cached", "clear"]

_MAX = 256
_cache: dict = {}  # key -> (weakrefs, stamps, value)
_lock = threading.Lock()
# keys whose arrays died: their values (column and delay indexes, tens of MB for a large
# network) are dropped at the next call, not held until 255 other entries push them out.
# A weakref callback runs wherever the collector does, possibly inside this module with
# _lock held, so it only appends here (atomic) and the next call removes the entries.
_dead: list = []


def _frozen_numpy(a: np.ndarray) -> bool:
    """Whether ``a`` and every array below it are read-only, over memory owned by one of them
    (or by an immutable ``bytes``)."""
    x = a
    while True:
        if x.flags.writeable:
            return False
        base = x.base
        if base is None:
            return x.flags.owndata
        if isinstance(base, bytes):
            return True
        if not isinstance(base, np.ndarray):
            return False  # a buffer of another object (mmap, memoryview...): it may change
        x = base


def stamp(x):
    """A hashable token that changes whenever the contents of ``x`` may have changed, or ``None``."""
    if _xp.is_traced(x):
        return None
    fw = framework_of(x)
    if fw == "jax":
        return ("jax",)
    if fw == "torch":
        try:
            version = x._version
        except RuntimeError:  # inference tensors keep no version counter
            return None
        return ("torch", version, x.data_ptr(), tuple(x.shape), tuple(x.stride()), str(x.dtype))
    if isinstance(x, np.ndarray) and _frozen_numpy(x):
        return ("numpy", numpy_data_ptr(x), x.shape, x.strides, x.dtype.str)
    return None


def cached(kind: str, arrays: tuple, extra: tuple, compute, uncacheable=None):
    """``compute()``, or the value it gave for the same ``kind``, arrays (identity and stamp) and
    ``extra`` (hashable Python values) when none of the arrays can have changed since.

    Where an array has no stamp (it may change, or it is traced) nothing is cached and
    ``compute()`` runs, or ``uncacheable()`` when given (a caller with another way there)."""
    stamps = tuple(stamp(a) for a in arrays)
    if any(s is None for s in stamps):
        return compute() if uncacheable is None else uncacheable()
    key = (kind, tuple(id(a) for a in arrays), extra)
    with _lock:
        _purge()
        hit = _cache.get(key)
    if hit is not None and hit[1] == stamps and all(r() is a for r, a in zip(hit[0], arrays)):
        return hit[2]
    value = compute()
    try:
        refs = tuple(weakref.ref(a, lambda _, key=key: _dead.append(key)) for a in arrays)
    except TypeError:  # not weak-referenceable: computed again next time
        return value
    with _lock:
        _purge()
        if len(_cache) >= _MAX:
            _cache.pop(next(iter(_cache)))
        _cache[key] = (refs, stamps, value)
    return value


def _purge():
    """Drop the entries of arrays that died (``_lock`` held). A key reused by a new array (the
    same ``id``) keeps its entry while that entry's arrays are alive."""
    while _dead:
        key = _dead.pop()
        hit = _cache.get(key)
        if hit is not None and any(r() is None for r in hit[0]):
            del _cache[key]


def clear() -> None:
    """Forget every cached value (tests)."""
    with _lock:
        _cache.clear()
        _dead.clear()
