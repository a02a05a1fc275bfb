"""Operators with partition rules, shared by the multi-device and multi-process tests."""

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants under TIARRAY_BACKEND

nd = ti.types.ndarray


@ti.kernel
def _axpy_k(alpha: ti.f32, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] + y[i]


# elementwise in x and y: 'i' may be split across devices
axpy_p = ta.Operator(
    "md_axpy", kernel=_axpy_k, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype), partition=", i, i -> i"
)
