"""Taichi kernels of the plasticity updates on spikes (CSR, fixed-number and dense weights).

``out`` starts with the values of ``weights`` (the Operators' ``aliases``: a copy the
adapter makes, or, under ``jax.jit``, the weights' own buffer where XLA may reuse it), and
every kernel changes only the synapses of the spiking neurons:

- ``on_pre``: the synapses of row ``i`` (presynaptic neuron ``i`` spiked, ``s_i != 0``):
  ``w_j <- clip(w_j + s_i * post_trace[c_j])``;
- ``on_post``: the synapses of column ``c`` (``s_c != 0``), found through the column index
  ``(ptr_t, perm, rows_t)``: column ``c``'s synapses are ``perm[ptr_t[c]:ptr_t[c + 1]]``, of
  rows ``rows_t[...]``: ``w_j <- clip(w_j + s_c * pre_trace[row_j])``.

Rows (columns) own disjoint synapses, so they run in parallel without atomics. ``clip``
is ``np.clip`` (a NaN weight stays NaN, a NaN bound gives NaN); the bounds are ``-inf``/``inf``
when not given. Invalid indices (only where values were not checked) are skipped.

The column index itself is built in ``_index_kernels``. Kernel convention as in
``_csr_kernels``; no ``from __future__ import annotations``.
"""

from tiarray._internal import ti

from ._common import is_bool
from ._csr_kernels import _bounds, _nonzero, _valid


@ti.func
def _clip(v, lo, hi):
    """``np.clip(v, lo, hi)``: a NaN ``v`` stays NaN, and a NaN bound gives NaN, as in NumPy,
    JAX and torch (a NaN bound was ignored before 2026-12-05; ``lo != lo`` does not test
    it: Taichi folds that to false)."""
    r = ti.select((v < lo) | ti.math.isnan(lo), lo, v)
    return ti.select((r > hi) | ti.math.isnan(hi), hi, r)


@ti.func
def _scale(spikes: ti.template(), si, dt: ti.template()):
    """The factor of an event ``si`` of ``spikes``: 1 for a spike (bool), the value of a float
    event (also used by the push-form delay kernels)."""
    s = ti.cast(1, dt)
    if ti.static(not is_bool(spikes)):
        s = ti.cast(si, dt)
    return s


@ti.kernel
def csr_on_pre_kernel(
    weights: ti.types.ndarray(ndim=1),
    indices: ti.types.ndarray(ndim=1),
    indptr: ti.types.ndarray(ndim=1),
    pre_spikes: ti.types.ndarray(ndim=1),
    post_trace: ti.types.ndarray(ndim=1),
    w_min: ti.types.ndarray(ndim=0),
    w_max: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=1),
    fixed: ti.template(),
):
    """CSR (``fixed=False``) or fixed-number (``fixed=True``: ``indptr`` unused, rows of
    ``len(indices) // len(pre_spikes)`` synapses) ``on_pre`` update."""
    nnz = ti.min(ti.min(weights.shape[0], out.shape[0]), indices.shape[0])
    n_rows = pre_spikes.shape[0]
    if ti.static(not fixed):
        n_rows = ti.min(n_rows, indptr.shape[0] - 1)
    k = indices.shape[0] // ti.max(pre_spikes.shape[0], 1)
    n_tr = post_trace.shape[0]
    for i in range(n_rows):
        si = pre_spikes[i]
        if _nonzero(pre_spikes, si):
            a = i * k
            b = a + k
            if ti.static(not fixed):
                a, b = _bounds(indptr, i, nnz)
            b = ti.min(b, nnz)
            sc = _scale(pre_spikes, si, out.get_type().element_type)
            lo = ti.cast(w_min[None], out.get_type().element_type)
            hi = ti.cast(w_max[None], out.get_type().element_type)
            for j in range(a, b):
                c = indices[j]
                if _valid(c, n_tr):
                    # out starts as weights (the Operator's aliases): read the cell being written
                    out[j] = _clip(out[j] + sc * ti.cast(post_trace[ti.cast(c, ti.i32)], out.get_type().element_type),
                                   lo, hi)  # fmt: skip


@ti.kernel
def csr_on_post_kernel(
    weights: ti.types.ndarray(ndim=1),
    ptr_t: ti.types.ndarray(ndim=1),
    perm: ti.types.ndarray(ndim=1),
    rows_t: ti.types.ndarray(ndim=1),
    post_spikes: ti.types.ndarray(ndim=1),
    pre_trace: ti.types.ndarray(ndim=1),
    w_min: ti.types.ndarray(ndim=0),
    w_max: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=1),
):
    """``on_post`` update through the column index (CSR and fixed-number weights alike)."""
    nnz = ti.min(weights.shape[0], out.shape[0])
    n_perm = ti.min(perm.shape[0], rows_t.shape[0])
    n_tr = pre_trace.shape[0]
    for c in range(ti.min(post_spikes.shape[0], ptr_t.shape[0] - 1)):
        sc0 = post_spikes[c]
        if _nonzero(post_spikes, sc0):
            a, b = _bounds(ptr_t, c, n_perm)
            sc = _scale(post_spikes, sc0, out.get_type().element_type)
            lo = ti.cast(w_min[None], out.get_type().element_type)
            hi = ti.cast(w_max[None], out.get_type().element_type)
            for q in range(a, b):
                j = perm[q]
                r = rows_t[q]
                if _valid(j, nnz) and _valid(r, n_tr):
                    jj = ti.cast(j, ti.i32)
                    # out starts as weights (aliases): one random cell per synapse, not two (under
                    # jax.jit without donation they are two buffers)
                    out[jj] = _clip(out[jj] + sc * ti.cast(pre_trace[ti.cast(r, ti.i32)], out.get_type().element_type),
                                    lo, hi)  # fmt: skip


@ti.func
def _dense_update(weights: ti.template(), spikes: ti.template(), trace: ti.template(), w_min: ti.template(),
                  w_max: ti.template(), out: ti.template(), post: ti.template()):  # fmt: skip
    """Dense ``on_pre`` (rows of spiking ``i``: ``W[i, :] += s_i trace``) or, ``post``, ``on_post``
    (columns of spiking ``j``: ``W[:, j] += s_j trace``); at the top level of its kernel, so
    that the loop over the spiking rows (columns) is the parallel one."""
    m = ti.min(weights.shape[0], out.shape[0])
    n = ti.min(weights.shape[1], out.shape[1])
    lo = ti.cast(w_min[None], out.get_type().element_type)
    hi = ti.cast(w_max[None], out.get_type().element_type)
    if ti.static(not post):
        for i in range(ti.min(m, spikes.shape[0])):
            si = spikes[i]
            if _nonzero(spikes, si):
                sc = _scale(spikes, si, out.get_type().element_type)
                for j in range(ti.min(n, trace.shape[0])):
                    out[i, j] = _clip(
                        weights[i, j] + sc * ti.cast(trace[j], out.get_type().element_type), lo, hi
                    )
    else:
        for j in range(ti.min(n, spikes.shape[0])):
            sj = spikes[j]
            if _nonzero(spikes, sj):
                sc = _scale(spikes, sj, out.get_type().element_type)
                for i in range(ti.min(m, trace.shape[0])):
                    out[i, j] = _clip(
                        weights[i, j] + sc * ti.cast(trace[i], out.get_type().element_type), lo, hi
                    )


# Two kernels, not one with a ``post`` switch: an Operator's messages name its kernel's
# parameters, and the two updates' public arguments differ (pre_spikes/post_trace and
# post_spikes/pre_trace).
@ti.kernel
def dense_on_pre_kernel(
    weights: ti.types.ndarray(ndim=2),
    pre_spikes: ti.types.ndarray(ndim=1),
    post_trace: ti.types.ndarray(ndim=1),
    w_min: ti.types.ndarray(ndim=0),
    w_max: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=2),
):
    """Dense ``on_pre``: ``W[i, :] += s_i post_trace`` on the rows of spiking ``i``."""
    _dense_update(weights, pre_spikes, post_trace, w_min, w_max, out, False)


@ti.kernel
def dense_on_post_kernel(
    weights: ti.types.ndarray(ndim=2),
    post_spikes: ti.types.ndarray(ndim=1),
    pre_trace: ti.types.ndarray(ndim=1),
    w_min: ti.types.ndarray(ndim=0),
    w_max: ti.types.ndarray(ndim=0),
    out: ti.types.ndarray(ndim=2),
):
    """Dense ``on_post``: ``W[:, j] += s_j pre_trace`` on the columns of spiking ``j``."""
    _dense_update(weights, post_spikes, pre_trace, w_min, w_max, out, True)
