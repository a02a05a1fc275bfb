"""Operators shared by the per-framework operator tests (no framework imported here).

Each one exercises one part of the contract: scalar parameters, Taichi autodiff, static
(template) parameters, statics used only by ``outs``, several outputs, rules (transpose
with linear inputs, jvp, batch), integer and non-differentiable inputs, annotation
checks. NumPy references live next to them.
"""

import numpy as np

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants under TIARRAY_BACKEND

nd = ti.types.ndarray


@ti.kernel
def _axpy(alpha: ti.f32, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] + y[i]


axpy = ta.Operator("t_axpy", kernel=_axpy, outs=lambda alpha, x, y: ta.ShapeDtype(x.shape, x.dtype))


def axpy_ref(alpha, x, y):
    return (np.float32(alpha) * x + y).astype(x.dtype)


@ti.kernel
def _poly(alpha: ti.f64, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] * x[i] + ti.sin(y[i])


# nonlinear in x and y: differentiated by Taichi autodiff
poly = ta.Operator("t_poly", kernel=_poly, outs=lambda alpha, x, y: ta.ShapeDtype(x.shape, x.dtype))


def poly_ref(alpha, x, y):
    return alpha * x * x + np.sin(y)


@ti.kernel
def _affine(x: nd(ndim=1), out: nd(ndim=1), mode: ti.template()):
    for i in x:
        if ti.static(mode == "scale"):
            out[i] = 2 * x[i]
        else:
            out[i] = x[i] + 1


affine = ta.Operator("t_affine", kernel=_affine, outs=lambda x, mode: ta.ShapeDtype(x.shape, x.dtype))


def affine_ref(x, mode):
    return 2 * x if mode == "scale" else x + 1


@ti.kernel
def _tile(x: nd(ndim=1), out: nd(ndim=1)):
    n = x.shape[0]
    for i in out:
        out[i] = x[i % n]


# 'reps' is static but no kernel template: only outs uses it
tile = ta.Operator("t_tile", kernel=_tile, outs=lambda x, reps: ta.ShapeDtype((x.shape[0] * reps,), x.dtype))


@ti.kernel
def _split(x: nd(ndim=1), a: nd(ndim=1), b: nd(ndim=1)):
    for i in x:
        a[i] = 2 * x[i]
        b[i] += x[i] * x[i]  # outputs are zero-filled: += is allowed


split = ta.Operator(
    "t_split",
    kernel=_split,
    outs=lambda x: (ta.ShapeDtype(x.shape, x.dtype), ta.ShapeDtype(x.shape, x.dtype)),
)


def split_ref(x):
    return 2 * x, x * x


@ti.kernel
def _mv(A: nd(ndim=2), v: nd(ndim=1), out: nd(ndim=1), transpose: ti.template()):
    if ti.static(transpose):
        for j in range(A.shape[1]):
            for i in range(A.shape[0]):
                out[j] += A[i, j] * v[i]
    else:
        for i in range(A.shape[0]):
            for j in range(A.shape[1]):
                out[i] += A[i, j] * v[j]


def _mv_outs(A, v, transpose):
    return ta.ShapeDtype((A.shape[1] if transpose else A.shape[0],), v.dtype)


def _mv_transpose(cts, primals, transpose):
    (ct,) = cts
    A, v = primals
    if isinstance(v, ta.UndefinedPrimal):
        return (None, mv(A, ct, transpose=not transpose))
    if transpose:
        return (v[:, None] * ct[None, :], None)
    return (ct[:, None] * v[None, :], None)


# bilinear in (A, v): a transpose rule, the JVP is derived from it
mv = ta.Operator(
    "t_mv",
    kernel=_mv,
    outs=_mv_outs,
    transpose=_mv_transpose,
    linear=("A", "v"),
    static_defaults={"transpose": False},
)


def mv_ref(A, v, transpose=False):
    return (A.T if transpose else A) @ v


@ti.kernel
def _cube(x: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = x[i] * x[i] * x[i]


def _cube_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return 3 * x * x * t


cube = ta.Operator("t_cube", kernel=_cube, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype), jvp=_cube_jvp)

BATCH_CALLS = [0]
BATCH_ARG_TYPES: list = []  # the types of the batched values each batch-rule call got


@ti.kernel
def _square(x: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = x[i] * x[i]


def _square_batch(args, axes):
    BATCH_CALLS[0] += 1
    BATCH_ARG_TYPES.append(type(args[0]))
    (x,), (ax,) = args, axes
    return square(x.reshape(-1)).reshape(x.shape), ax


square = ta.Operator(
    "t_square", kernel=_square, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype), batch=_square_batch
)


@ti.kernel
def _gather(w: nd(ndim=1), idx: nd(dtype=ti.i32, ndim=1), out: nd(ndim=1)):
    for i in idx:
        out[i] = w[idx[i]]


gather = ta.Operator("t_gather", kernel=_gather, outs=lambda w, idx: ta.ShapeDtype(idx.shape, w.dtype))


@ti.kernel
def _masked(x: nd(ndim=1), spikes: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = x[i] * spikes[i]


masked = ta.Operator(
    "t_masked", kernel=_masked, outs=lambda x, spikes: ta.ShapeDtype(x.shape, x.dtype), nondiff=("spikes",)
)


@ti.kernel
def _typed(x: nd(dtype=ti.f32, ndim=2), out: nd(dtype=ti.f32, ndim=2)):
    for i, j in x:
        out[i, j] = x[i, j] + 1


typed = ta.Operator("t_typed", kernel=_typed, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))


def fd_grad(f, x, eps=1e-6):
    """Central finite differences of a scalar function of a float64 vector."""
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        g[i] = (f(x + e) - f(x - e)) / (2 * eps)
    return g


@ti.kernel
def _psum(x: nd(ndim=1), out: nd(ndim=1), part: nd(ndim=1)):
    # out[0] = sum(x); out[1] = the number of scratch partials the launch saw (0: serial).
    # `part[b] +=` and `out[0] +=` rely on the zero-filling of scratch and outputs.
    nb = ti.max(part.shape[0], 1)
    n = x.shape[0]
    for b in range(nb):
        acc = ti.cast(0, x.get_type().element_type)
        for i in range(b * n // nb, (b + 1) * n // nb):
            acc += x[i]
        if part.shape[0] > 0:
            part[b] += acc
        else:
            out[0] += acc
    for b in range(part.shape[0]):
        out[0] += part[b]
    out[1] = part.shape[0]


PSUM_DECISIONS: list = []


def _psum_policy(x):
    def decide(host):
        nz = int(np.count_nonzero(host[0]))
        mode = "serial" if nz < 8 else "parallel"
        PSUM_DECISIONS.append((nz, mode))
        return mode

    return decide


# scratch buffers and a per-call serial/parallel decision from the input values
psum = ta.Operator(
    "t_psum",
    kernel=_psum,
    outs=lambda x: ta.ShapeDtype((2,), x.dtype),
    scratch=lambda x, serial: ta.ShapeDtype((0 if serial else 4,), x.dtype),
    policy=_psum_policy,
)
# scratch with a policy fixed per signature (from the static `mode`)
psum_fixed = ta.Operator(
    "t_psum_fixed",
    kernel=_psum,
    outs=lambda x, mode: ta.ShapeDtype((2,), x.dtype),
    scratch=lambda x, serial, mode: ta.ShapeDtype((0 if serial else 3,), x.dtype),
    policy=lambda x, mode: mode,
)


@ti.kernel
def _bump(w: nd(ndim=1), idx: nd(dtype=ti.i32, ndim=1), v: nd(ndim=1), out: nd(ndim=1)):
    # writes only out[idx[k]]: every other element keeps the value out starts with
    for k in idx:
        out[idx[k]] = w[idx[k]] + v[k]


def _bump_jvp(primals, tangents):
    w, idx, v = primals
    tw, _, tv = tangents
    return tw if tv is None else (tw if tw is not None else 0 * w) + bump(0 * w, idx, tv)


# aliases: 'out' starts with the values of 'w' (not zeros)
bump = ta.Operator(
    "t_bump",
    kernel=_bump,
    outs=lambda w, idx, v: ta.ShapeDtype(w.shape, w.dtype),
    aliases={"out": "w"},
    nondiff=("idx",),
    jvp=_bump_jvp,
)


def bump_ref(w, idx, v):
    r = np.array(w, copy=True)
    r[idx] = w[idx] + v
    return r


@ti.kernel
def tasks_kernel(x: nd(ndim=1), out: nd(ndim=1), tot: nd(ndim=1)):
    # compiled for many threads: five tasks (serial, parallel, serial bound, parallel,
    # serial), each depending on the one before (direct launches must run all, in order)
    tot[0] = 1.0
    for i in x:
        out[i] = 2.0 * x[i] + tot[0]
    for i in range(x.shape[0] // 2):
        tot[0] += out[2 * i] + out[2 * i + 1]
    tot[0] = tot[0] * 2.0
