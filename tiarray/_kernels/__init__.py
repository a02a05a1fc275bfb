"""Taichi kernels of tiarray's own functions, one module per family.

Kernels are written once, generically over dtypes and ndim (``ti.template()``
parameters), compiled on first use per signature by :mod:`tiarray._launch`, and cached
on disk by Taichi's offline cache. Strided operands are passed as 1-D arrays over the
memory they span plus an int64 *meta* array of offsets, shape and strides
(:func:`tiarray._kernels._strided.strided_args`).
"""
