"""Kernels of the creation functions: ``arange``, ``linspace``, ``eye``, ``tril``/``triu``.

Outputs are new C-contiguous arrays passed as 1-D spans (complex data as real pairs).
"""

from .._backend import ti
from .._launch import IEEE, Launcher


@ti.kernel
def _arange_int(out: ti.types.ndarray(ndim=1), n: ti.i32, start: ti.i64, step: ti.i64, dt: ti.template()):
    for i in range(n):
        out[i] = ti.cast(start + ti.cast(i, ti.i64) * step, dt)


@ti.kernel
def _arange_float(out: ti.types.ndarray(ndim=1), n: ti.i32, start: ti.f64, step: ti.f64, dt: ti.template()):
    for i in range(n):
        out[i] = ti.cast(start + ti.cast(i, ti.f64) * step, dt)


@ti.kernel
def _linspace(
    out: ti.types.ndarray(ndim=1),
    n: ti.i32,
    start_re: ti.f64,
    start_im: ti.f64,
    step_re: ti.f64,
    step_im: ti.f64,
    stop_re: ti.f64,
    stop_im: ti.f64,
    last_is_stop: ti.i32,
    cplx: ti.template(),
    dt: ti.template(),
):
    for i in range(n):
        fi = ti.cast(i, ti.f64)
        re = start_re + fi * step_re
        im = start_im + fi * step_im
        if last_is_stop != 0 and i == n - 1:
            re = stop_re
            im = stop_im
        if ti.static(cplx):
            out[2 * i] = ti.cast(re, dt)
            out[2 * i + 1] = ti.cast(im, dt)
        else:
            out[i] = ti.cast(re, dt)


@ti.kernel
def _eye(
    out: ti.types.ndarray(ndim=1),
    d: ti.i32,
    r0: ti.i32,
    c0: ti.i32,
    ncols: ti.i32,
    cplx: ti.template(),
    dt: ti.template(),
):
    # ``out`` is zero-filled; write ones on the k-th diagonal
    for i in range(d):
        idx = (r0 + i) * ncols + c0 + i
        if ti.static(cplx):
            out[2 * idx] = ti.cast(1, dt)
        else:
            out[idx] = ti.cast(1, dt)


@ti.kernel
def _tri(
    out: ti.types.ndarray(ndim=1),
    x: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i64, ndim=1),
    n: ti.i32,
    nd: ti.template(),
    lower: ti.template(),
    cplx: ti.template(),
    dt: ti.template(),
):
    # meta = [x_offset, shape[nd], x_strides[nd], k]; out is C-contiguous with x's shape
    ncols = meta[nd]
    nrows = meta[nd - 1]
    k = meta[1 + 2 * nd]
    for i in range(n):
        rem = ti.cast(i, ti.i64)
        off = meta[0]
        for q in ti.static(range(nd)):
            d = ti.static(nd - 1 - q)
            c = rem % meta[1 + d]
            rem = rem // meta[1 + d]
            off += c * meta[1 + nd + d]
        col = ti.cast(i, ti.i64) % ncols
        row = (ti.cast(i, ti.i64) // ncols) % nrows
        keep = False
        if ti.static(lower):
            keep = col - row <= k
        else:
            keep = col - row >= k
        if ti.static(cplx):
            if keep:
                out[2 * i] = x[2 * off]
                out[2 * i + 1] = x[2 * off + 1]
            else:
                out[2 * i] = ti.cast(0, dt)
                out[2 * i + 1] = ti.cast(0, dt)
        else:
            if keep:
                out[i] = x[off]
            else:
                out[i] = ti.cast(0, dt)


arange_int = Launcher(_arange_int, name="arange", compile_options=IEEE)
arange_float = Launcher(_arange_float, name="arange", compile_options=IEEE)
linspace = Launcher(_linspace, name="linspace", compile_options=IEEE)
eye = Launcher(_eye, name="eye", compile_options=IEEE)
tri = Launcher(_tri, name="tril/triu", compile_options=IEEE)
