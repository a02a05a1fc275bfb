"""Taichi kernels as NumPy, PyTorch, JAX and CuPy operators.

:class:`Operator` registers a ``@ti.kernel`` once; calling it on the arrays of any
framework runs the kernel on their memory without copies and returns arrays of the same
kind. Under JAX every Operator is a primitive (``jit``, ``vmap``, ``grad``, ``jvp``,
``scan``); under PyTorch a ``torch.library`` custom op (autograd, ``torch.compile``).
See ``docs/operators.md``.
"""

from ._operator import Operator, ShapeDtype, UndefinedPrimal

__all__ = ["Operator", "ShapeDtype", "UndefinedPrimal"]
