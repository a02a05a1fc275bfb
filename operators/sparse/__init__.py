"""Sparse and event-driven operators for spiking networks and sparse layers.

Phase 1: the operators run on NumPy arrays through ``tiarray._launch``; they become
:class:`tiarray.Operator` objects (NumPy, PyTorch, JAX, CuPy; autodiff and vmap rules)
when the operator registry lands. The kernels already follow the registry convention.
"""

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
from ._jitc import (
    fixed_prob_csr,
    jitc_event_mv_prob_homo,
    jitc_event_mv_prob_normal,
    jitc_event_mv_prob_uniform,
    jitc_mv_prob_homo,
    jitc_mv_prob_normal,
    jitc_mv_prob_uniform,
    jitc_todense_prob_homo,
    jitc_todense_prob_normal,
    jitc_todense_prob_uniform,
)

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
    "jitc_todense_prob_homo",
    "jitc_todense_prob_uniform",
    "jitc_todense_prob_normal",
    "fixed_prob_csr",
]
