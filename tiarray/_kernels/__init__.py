"""Taichi kernels of tiarray's own functions, one module per family.

Kernels are written once, generically over dtypes and ndim (``ti.template()``
parameters), compiled on first use per signature by :mod:`tiarray._launch`, and cached
on disk by Taichi's offline cache. Strided operands are passed as a 1-D span of the
memory they touch plus an int64 *meta* array of offsets, shape and strides
(:func:`tiarray._kernels._strided.span_arg`, ``meta_array``, ``meta_arg``). Besides the
kernels, this layer holds the copies of TiArrays (``copy``) and the element-wise
planner (``elementwise_ops``, ``elementwise_plan``).
"""
