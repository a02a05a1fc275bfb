"""Taichi kernels of the spike-index products: ``A.T @ e`` with ``e`` given as the list of its
active rows, ``ids[:count]`` (the form ``jnp.nonzero(size=...)`` produces).

Every listed row adds its synapses to the output: no pass over the neurons, work
proportional to the synapses of the listed rows. ``count`` is clamped into
``[0, len(ids)]``, ids outside ``[0, m)`` are skipped, and a repeated id adds its row once
per occurrence. The CPU splits the list into ``nt`` equal parts, one per thread slot,
with private outputs (``_csr_kernels``' scatter scheme); GPUs: one thread per id, atomics.

Kernel convention as in ``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import CHUNK, ndim, on_gpu
from ._csr_kernels import _add_blocks, _bounds, _scatter_row, _scatter_row_homo, _valid


@ti.func
def _n_listed(ids: ti.template(), count: ti.template()):
    return ti.cast(ti.min(ti.max(ti.cast(count[None], ti.i64), 0), ids.shape[0]), ti.i32)


@ti.func
def _add_row(weights: ti.template(), indices: ti.template(), target: ti.template(), off, a, b, n_out):
    if ti.static(ndim(weights) == 0):
        _scatter_row_homo(indices, target, off, a, b, n_out, ti.cast(weights[None], ti.f64))
    else:
        _scatter_row(weights, indices, target, off, a, b, n_out, 1.0)


@ti.func
def _add_row_atomic(weights: ti.template(), indices: ti.template(), out: ti.template(), a, b, n_out):
    for j in range(a, b):
        k = indices[j]
        if _valid(k, n_out):
            if ti.static(ndim(weights) == 0):
                ti.atomic_add(out[ti.cast(k, ti.i32)], weights[None])
            else:
                ti.atomic_add(out[ti.cast(k, ti.i32)], weights[j])


@ti.kernel
def csrmv_indexed_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    ids: ti.types.ndarray(ndim=1),
    count: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``out = sum_{t < count} A[ids[t], :]`` for the CSR matrix ``A``."""
    nnz = indices.shape[0]
    n_rows = indptr.shape[0] - 1
    n_out = out.shape[0]
    nl = _n_listed(ids, count)
    if ti.static(on_gpu()):
        for t in range(nl):
            i = ids[t]
            if _valid(i, n_rows):
                a, b = _bounds(indptr, ti.cast(i, ti.i32), nnz)
                _add_row_atomic(weights, indices, out, a, b, n_out)
    else:
        nt = 1
        if n_out > 0:
            nt = scratch.shape[0] // n_out + 1
        for s in range(nt * CHUNK):
            if s % CHUNK == 0:
                q = s // CHUNK
                for t in range(q * nl // nt, (q + 1) * nl // nt):
                    i = ids[t]
                    if _valid(i, n_rows):
                        a, b = _bounds(indptr, ti.cast(i, ti.i32), nnz)
                        if q == 0:
                            _add_row(weights, indices, out, 0, a, b, n_out)
                        else:
                            _add_row(weights, indices, scratch, (q - 1) * n_out, a, b, n_out)
        for c in range(ti.select(nt > 1, n_out, 0)):
            _add_blocks(out, scratch, nt, n_out, c)


@ti.kernel
def fcnmv_indexed_kernel(
    weights: ti.types.ndarray(),
    indices: ti.types.ndarray(ndim=1),
    ids: ti.types.ndarray(ndim=1),
    count: ti.types.ndarray(ndim=0),
    n_pre: ti.i32,
    out: ti.types.ndarray(ndim=1),
    scratch: ti.types.ndarray(ndim=1),
):
    """``out = sum_{t < count} A[ids[t], :]`` for the fixed-number matrix ``A`` (flattened
    ``indices``, ``n_pre`` rows of ``len(indices) // n_pre`` synapses)."""
    nnz = indices.shape[0]
    n_out = out.shape[0]
    nl = _n_listed(ids, count)
    k = nnz // ti.max(n_pre, 1)
    if ti.static(on_gpu()):
        for t in range(nl):
            i = ids[t]
            if _valid(i, n_pre):
                a = ti.cast(i, ti.i32) * k
                _add_row_atomic(weights, indices, out, a, a + k, n_out)
    else:
        nt = 1
        if n_out > 0:
            nt = scratch.shape[0] // n_out + 1
        for s in range(nt * CHUNK):
            if s % CHUNK == 0:
                q = s // CHUNK
                for t in range(q * nl // nt, (q + 1) * nl // nt):
                    i = ids[t]
                    if _valid(i, n_pre):
                        a = ti.cast(i, ti.i32) * k
                        if q == 0:
                            _add_row(weights, indices, out, 0, a, a + k, n_out)
                        else:
                            _add_row(weights, indices, scratch, (q - 1) * n_out, a, a + k, n_out)
        for c in range(ti.select(nt > 1, n_out, 0)):
            _add_blocks(out, scratch, nt, n_out, c)


@ti.kernel
def ids_to_events_kernel(ids: ti.types.ndarray(), count: ti.types.ndarray(), out: ti.types.ndarray()):
    """``out[i] = #{t < count: ids[t] == i}`` (a batch: ``ids`` (B, S), ``count`` (B,), ``out`` (m, B))."""
    if ti.static(ndim(ids) == 1):
        for _ in range(1):
            nl = ti.cast(ti.min(ti.max(ti.cast(count[None], ti.i64), 0), ids.shape[0]), ti.i32)
            for t in range(nl):
                i = ids[t]
                if _valid(i, out.shape[0]):
                    out[ti.cast(i, ti.i32)] += 1
    else:
        for bt in range(ti.min(ids.shape[0], out.shape[1])):
            nl = ti.cast(ti.min(ti.max(ti.cast(count[bt], ti.i64), 0), ids.shape[1]), ti.i32)
            for t in range(nl):
                i = ids[bt, t]
                if _valid(i, out.shape[0]):
                    out[ti.cast(i, ti.i32), bt] += 1
