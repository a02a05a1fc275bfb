"""Sparse and event-driven operators for spiking networks and sparse layers.

Every product is a :class:`tiarray.Operator`: it runs on NumPy, PyTorch, JAX (``jit``,
``vmap``, ``grad``, ``jvp``), CuPy arrays and TiArrays, and returns arrays of the same
kind. See ``docs/sparse.md`` for the conventions, the math and the measured speed.
"""

from ._coo import coomm, coomv, event_coomm, event_coomv
from ._csr import (
    csr_from_dense,
    csr_sddmm,
    csr_to_dense,
    csr_transpose,
    csrmm,
    csrmv,
    event_csrmm,
    event_csrmv,
)
from ._delayed import event_csrmv_delayed
from ._deliver import csr_delay_deliver
from ._dense import event_densemm, event_densemv
from ._fcn import event_fcnmm, event_fcnmv, fcnmm, fcnmv, fixed_num_conn
from ._indexed import event_csrmv_indexed, event_fcnmv_indexed, ids_to_events
from ._jitc import (
    fixed_prob_csr,
    jitc_event_mm_prob_homo,
    jitc_event_mm_prob_normal,
    jitc_event_mm_prob_uniform,
    jitc_event_mv_prob_homo,
    jitc_event_mv_prob_normal,
    jitc_event_mv_prob_uniform,
    jitc_mm_prob_homo,
    jitc_mm_prob_normal,
    jitc_mm_prob_uniform,
    jitc_mv_prob_homo,
    jitc_mv_prob_normal,
    jitc_mv_prob_uniform,
    jitc_todense_prob_homo,
    jitc_todense_prob_normal,
    jitc_todense_prob_uniform,
)
from ._object import CSR
from ._plasticity import (
    column_index,
    csr_update_on_post,
    csr_update_on_pre,
    dense_update_on_post,
    dense_update_on_pre,
    fcn_update_on_post,
    fcn_update_on_pre,
)
from ._policy import set_thresholds

__all__ = [
    "event_csrmv",
    "csrmv",
    "event_csrmm",
    "csrmm",
    "csr_sddmm",
    "csr_to_dense",
    "csr_from_dense",
    "csr_transpose",
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
    "CSR",
    "set_thresholds",
]
