"""Sparse and event-driven operators for spiking networks and sparse layers.

Phase 1: the operators run on NumPy arrays through ``tiarray._launch``; they become
:class:`tiarray.Operator` objects (NumPy, PyTorch, JAX, CuPy; autodiff and vmap rules)
when the operator registry lands. The kernels already follow the registry convention.
"""

from ._csr import csr_from_dense, csr_sddmm, csr_to_dense, csrmm, csrmv, event_csrmm, event_csrmv

__all__ = [
    "event_csrmv",
    "csrmv",
    "event_csrmm",
    "csrmm",
    "csr_sddmm",
    "csr_to_dense",
    "csr_from_dense",
]
