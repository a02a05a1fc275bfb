"""Taichi kernels as NumPy, PyTorch, JAX and CuPy operators, and the operators built on them.

:class:`Operator` registers a ``@ti.kernel`` once; calling it on the arrays of any
framework runs the kernel on their memory without copies and returns arrays of the same
kind. Under JAX every Operator is a primitive (``jit``, ``vmap``, ``grad``, ``jvp``,
``scan``); under PyTorch a ``torch.library`` custom op (autograd, ``torch.compile``).
See ``docs/operators.md``.

The sparse and event-driven operators (CSR, fixed-number, COO and dense event products,
just-in-time connectivity, spike-index events, synaptic delays, plasticity updates, the
:class:`CSR` matrix object) are Operators of this kind; see ``docs/sparse.md``. CSR
products with the matrix split over JAX devices by rows or columns
(``partition_csr_rows``, ``partition_csr_columns``, ``block_csrmv``, ``sharded_csrmv``) are
in :mod:`tiarray.operators.distributed`; see ``docs/scaling.md``.
"""

from ._operator import Operator, ShapeDtype, UndefinedPrimal

__all__ = [
    "Operator",
    "ShapeDtype",
    "UndefinedPrimal",
    # sparse and event-driven operators
    "event_csrmv",
    "csrmv",
    "event_csrmm",
    "csrmm",
    "csr_sddmm",
    "csr_to_dense",
    "csr_from_dense",
    "csr_transpose",
    "CSR",
    "jitc_mv_prob_homo",
    "jitc_mv_prob_uniform",
    "jitc_mv_prob_normal",
    "jitc_event_mv_prob_homo",
    "jitc_event_mv_prob_uniform",
    "jitc_event_mv_prob_normal",
    "jitc_mm_prob_homo",
    "jitc_mm_prob_uniform",
    "jitc_mm_prob_normal",
    "jitc_event_mm_prob_homo",
    "jitc_event_mm_prob_uniform",
    "jitc_event_mm_prob_normal",
    "jitc_todense_prob_homo",
    "jitc_todense_prob_uniform",
    "jitc_todense_prob_normal",
    "fixed_prob_csr",
    "fcnmv",
    "event_fcnmv",
    "fcnmm",
    "event_fcnmm",
    "fixed_num_conn",
    "csr_update_on_pre",
    "csr_update_on_post",
    "fcn_update_on_pre",
    "fcn_update_on_post",
    "dense_update_on_pre",
    "dense_update_on_post",
    "column_index",
    "event_csrmv_delayed",
    "csr_delay_deliver",
    "event_csrmv_indexed",
    "event_fcnmv_indexed",
    "ids_to_events",
    "coomv",
    "event_coomv",
    "coomm",
    "event_coomm",
    "event_densemv",
    "event_densemm",
    "set_thresholds",
    # row-partitioned products over JAX devices
    "partition_csr_rows",
    "partition_csr_columns",
    "CSRBlocks",
    "block_csrmv",
    "sharded_csrmv",
]

_DISTRIBUTED = frozenset(
    ("partition_csr_rows", "partition_csr_columns", "CSRBlocks", "block_csrmv", "sharded_csrmv")
)
_SPARSE = frozenset(__all__[3:]) - _DISTRIBUTED


def __getattr__(name):
    # the sparse operators are imported on first use (they define ~20 kernels: ~40 ms), and
    # each name is then bound here: looked up through this function on every access, it
    # cost 2.3 us of a 12.4 us eager `tiarray.operators.event_csrmv` call (n = 4000, no
    # events; /tmp timing of 20 000 calls, 2026-12-05)
    if name in _SPARSE:
        from . import sparse as module
    elif name in _DISTRIBUTED:
        from . import distributed as module
    else:
        raise AttributeError(f"module 'tiarray.operators' has no attribute {name!r}")
    value = getattr(module, name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | _SPARSE | _DISTRIBUTED)
