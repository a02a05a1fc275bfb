"""Indexes of a sparse structure, built once and cached while the structure cannot change.

- the *column index* of a CSR or fixed-number matrix (:func:`column_index`): each column's
  synapses and their rows, so that work on a column (``*_update_on_post``, the column route
  of ``event_csrmv``'s and ``event_fcnmv``'s ``A @ s``) visits its synapses only;
- the *source index* of a COO list (:func:`source_route`): each source's synapses and their
  destinations, so that an event product visits the active sources' synapses only;
- per-synapse weights in an index's order (:func:`index_weights`), so that a kernel walking
  the index reads them in a stream.

Caching follows ``_once``: JAX arrays once (NumPy constants of the computation), torch
tensors once per ``_version``, read-only NumPy arrays once.
"""

from __future__ import annotations

import numpy as np

from .._operator import Operator, ShapeDtype
from . import _index_kernels as K
from . import _once, _validate, _xp
from ._common import IEEE

__all__ = ["column_index", "index_weights", "column_route", "source_route"]

_COLIDX = Operator(
    "column_index",
    kernel=K.column_index_kernel,
    outs=lambda indices, indptr, *, n, fixed: (
        ShapeDtype((n + 1,), "int64"),
        ShapeDtype(indices.shape, "int64" if indices.shape[0] >= 2**31 else "int32"),
        ShapeDtype(indices.shape, "int32"),
    ),
    policy=lambda *a, **k: "serial",
    compile_options=IEEE,
)


def column_index(indices, indptr, *, shape):
    """The column index of a CSR matrix: for each column, its synapses and their rows.

    Returns ``(ptr_t, perm, rows_t)``: column ``c``'s synapses are ``perm[ptr_t[c]:ptr_t[c + 1]]``
    (positions in ``indices``/``weights``, increasing), of rows ``rows_t[ptr_t[c]:ptr_t[c + 1]]``.
    ``csr_update_on_post`` uses it to visit only the synapses of spiking columns, and
    ``event_csrmv`` / ``event_fcnmv`` their ``A @ s`` with few active events (the column
    route, ``docs/sparse.md``).

    Built by one kernel (a counting sort over the synapses) and cached while the index
    arrays cannot change (JAX arrays; torch tensors per ``_version``; read-only NumPy
    arrays); otherwise built on every call (and inside the computation when the arrays are
    traced). The result is of the index arrays' framework (NumPy for JAX arrays: constants).

    Parameters
    ----------
    indices, indptr : arrays
        The CSR structure of an ``(m, n) = shape`` matrix.
    shape : tuple of two ints

    Returns
    -------
    ptr_t : array (n + 1,), int64
    perm : array (nnz,), int32
    rows_t : array (nnz,), int32

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import column_index
    >>> ptr_t, perm, rows_t = column_index(np.array([0, 2, 0]), np.array([0, 2, 3]), shape=(2, 3))
    >>> ptr_t.tolist(), perm.tolist(), rows_t.tolist()
    ([0, 2, 2, 3], [0, 2, 1], [0, 1, 0])
    """
    func = "column_index"
    _, idx, ptr, m, n = _validate.csr(func, 0.0, indices, indptr, shape)
    return _column_index(idx, ptr, m, n, fixed=False)


def _column_index(idx, ptr_or_m, m, n, *, fixed, key=None, traced=True):
    """The column index, cached on ``key`` (the caller's index arrays; default ``idx``, ``indptr``).

    Where nothing can be cached (traced arrays, arrays that may change): built on every call
    (inside the computation when traced), or ``None`` with ``traced=False`` (a caller that
    has a route without the index)."""
    arrays = (idx,) if fixed else (idx, ptr_or_m)
    # the values are read from the arrays the cache is keyed on: a fixed-number index is
    # flattened per call, under jax.jit into a tracer even for a concrete (m, k) array, and a
    # column index built from that tracer was cached under the concrete array, so every
    # later call raised UnexpectedTracerError (2026-12-05)
    sources = key if key is not None else arrays

    def build():
        hosts = [_xp.host(a) for a in sources]
        if any(h is None for h in hosts):  # traced: inside the computation, every call
            # (torch.full, not a NumPy array converted: Dynamo cannot convert one under
            # torch.compile, where fcn_update_on_post failed; 2026-12-06)
            p = _xp.full((1,), m, "int64", idx) if fixed else ptr_or_m
            return _COLIDX(idx, p, n=n, fixed=fixed)
        p = np.array([m], np.int64) if fixed else np.ascontiguousarray(hosts[1])
        res = _xp.host_op(_COLIDX, np.ascontiguousarray(hosts[0]).reshape(-1), p, n=n, fixed=fixed)
        if _xp.fw_of(idx) in ("numpy", "jax"):
            return res
        return tuple(_xp.from_numpy(r, idx) for r in res)

    return _once.cached(
        "column_index",
        key if key is not None else arrays,
        (m, n, fixed),
        build,
        None if traced else lambda: None,
    )


column_index.operator = _COLIDX


def source_route(w, src, dst, n_src, *, weights=None):
    """``(ptr_s, perm, dst_s, wsort)`` for the event-driven route of a COO product (each
    source's synapses, their destinations and weights in that order; sources are the
    entries of ``src``: columns for ``A @ x``, rows for ``A.T @ x``), or ``None`` where the
    structure may change or is traced. The index is the column index of ``src`` read as a
    fixed-number matrix of one synapse per row, with ``dst`` taken in its order."""
    nnz = int(src.shape[0])
    index = _column_index(src, None, nnz, n_src, fixed=True, key=(src,), traced=False)
    if index is None:
        return None
    ptr_s, perm, _ = index

    def build():
        hp = np.asarray(_xp.host(perm))
        d = np.ascontiguousarray(np.asarray(_xp.host(dst)).reshape(-1)[hp], np.int32)
        return d if _xp.fw_of(dst) in ("numpy", "jax") else _xp.from_numpy(d, dst)

    dst_s = _once.cached("source_dst", (src, dst), (n_src,), build, lambda: None)
    if dst_s is None:
        return None
    wsrc = weights if getattr(weights, "shape", None) is not None and len(weights.shape) >= 1 else None
    wsort = index_weights("source_weights", w, (src,), perm, (n_src,), source=wsrc)
    return ptr_s, perm, dst_s, wsort


def index_weights(tag, w, structure, perm, key, source=None):
    """The per-synapse weights in the order of an index (``w[perm]``), or an empty array (the
    kernel then reads ``w`` through ``perm``): one weight, or weights that may change.

    Weights that cannot change (JAX arrays, frozen NumPy) are reordered once, cached under
    ``tag`` with the ``structure`` arrays and ``key``. ``source``: the caller's array that
    ``w`` was made from (a flattened view, under ``jax.jit`` a tracer even of a constant),
    read and cached on instead. Not torch tensors: writes through ``.data`` (gradcheck's, old
    optimizers') do not count in ``_version``, and stale weights would be a silent wrong
    answer."""

    def unsorted():
        return _xp.full((0,), 0, _xp.dtype_of(w).name, w)

    src = w if source is None else source
    if len(w.shape) == 1 and _xp.fw_of(src) in ("numpy", "jax") and _xp.dtype_of(src) == _xp.dtype_of(w):
        return _once.cached(tag, (src, *structure), key, lambda: _sorted_weights(src, perm), unsorted)
    return unsorted()


def _sorted_weights(w, perm):
    """``w[perm]`` (concrete weights; flattened), in the framework of ``w`` (NumPy for JAX: a constant)."""
    ws = np.ascontiguousarray(np.asarray(_xp.host(w)).reshape(-1)[np.asarray(_xp.host(perm))])
    return ws if _xp.fw_of(w) in ("numpy", "jax") else _xp.from_numpy(ws, w)


def column_route(w, idx, ptr, m, n, *, key, weights=None):
    """``(ptr_t, perm, rows_t, wsort)`` for the column route of an event product's ``A @ s``
    (``ptr``: CSR ``indptr``, or ``None`` for fixed-number ``idx``), or ``None`` where the
    structure may change or is traced: a counting sort on every call would cost more than
    the route saves. ``key``: the caller's index arrays (the cache key); ``weights``: the
    caller's weights array that ``w`` was made from (see :func:`index_weights`)."""
    fixed = ptr is None
    index = _column_index(idx, ptr, m, n, fixed=fixed, key=key, traced=False)
    if index is None:
        return None
    ptr_t, perm, rows_t = index
    src = weights if getattr(weights, "shape", None) is not None and len(weights.shape) >= 1 else None
    wsort = index_weights("column_weights", w, key, perm, (m, n, fixed), source=src)
    return ptr_t, perm, rows_t, wsort
