"""The autodiff and batching rules of the sparse operators, checked numerically in float64.

JVPs against central finite differences of the operators themselves; transposes
(VJPs) against finite-difference gradients of ``<ct, op(...)>`` coordinate by coordinate;
batching against a Python loop. (JAX ``check_grads`` and torch ``gradcheck`` take over
once the operators are registered with ``tiarray.Operator``.)
"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import random_csr
from tiarray.operators.sparse import _rules as R

H = 1e-3  # every product is linear in each input: central differences are exact up to rounding


def _fd_jvp(f, args, tangents):
    plus = [a if t is None else a + H * t for a, t in zip(args, tangents)]
    minus = [a if t is None else a - H * t for a, t in zip(args, tangents)]
    return (f(*plus) - f(*minus)) / (2 * H)


def _fd_grad(L, a):
    """Gradient of the scalar function L at array a (float64), coordinate by coordinate."""
    a = np.asarray(a, np.float64)
    g = np.zeros_like(a)
    flat = g.reshape(-1)
    for i in range(a.size):
        e = np.zeros(a.size)
        e[i] = H
        e = e.reshape(a.shape)
        flat[i] = (L(a + e) - L(a - e)) / (2 * H)
    return g


@pytest.fixture(scope="module")
def mat():
    rng = np.random.default_rng(4)
    w, idx, ptr, dense = random_csr(9, 7, 0.4, rng)
    return w, idx, ptr, dense


CSR_CASES = [
    ("csrmv", "float", 1),
    ("event_csrmv", "float", 1),
    ("event_csrmv", "bool", 1),
    ("csrmm", "float", 2),
    ("event_csrmm", "float", 2),
    ("event_csrmm", "bool", 2),
]


def _x(kind, ndim, length, rng):
    shape = (length,) if ndim == 1 else (length, 3)
    if kind == "bool":
        return rng.random(shape) < 0.5
    x = rng.standard_normal(shape)
    x[rng.random(shape) < 0.2] = 0
    return x


@pytest.mark.parametrize("homo", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("op,kind,ndim", CSR_CASES)
def test_csr_jvp(op, kind, ndim, transpose, homo, mat):
    w, idx, ptr, _ = mat
    rng = np.random.default_rng(1)
    shape = (9, 7)
    if homo:
        w = np.asarray(0.7)
    x = _x(kind, ndim, 9 if transpose else 7, rng)
    f = getattr(sp, op)
    dw = rng.standard_normal(w.shape)
    dx = None if kind == "bool" else rng.standard_normal(x.shape)
    got = R.csr_jvp(op, (w, idx, ptr, x), (dw, dx), shape=shape, transpose=transpose)

    def F(w_, x_):
        return f(w_, idx, ptr, x_, shape=shape, transpose=transpose)

    want = _fd_jvp(F, [w, x], [dw, dx])
    np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-8)
    # weights-only and x-only tangents
    np.testing.assert_allclose(
        R.csr_jvp(op, (w, idx, ptr, x), (dw, None), shape=shape, transpose=transpose),
        _fd_jvp(F, [w, x], [dw, None]),
        rtol=1e-8,
        atol=1e-8,
    )


@pytest.mark.parametrize("homo", ["per-synapse", "scalar", "one"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("op,kind,ndim", CSR_CASES)
def test_csr_transpose(op, kind, ndim, transpose, homo, mat):
    w, idx, ptr, dense = mat
    rng = np.random.default_rng(2)
    shape = (9, 7)
    if homo == "scalar":
        w = np.asarray(0.7)
    elif homo == "one":
        w = np.asarray([0.7])
    x = _x(kind, ndim, 9 if transpose else 7, rng)
    f = getattr(sp, op)
    y = f(w, idx, ptr, x, shape=shape, transpose=transpose)
    ct = rng.standard_normal(y.shape)

    gw = R.csr_transpose(op, ct, (w, idx, ptr, x), "weights", shape=shape, transpose=transpose)
    want = _fd_grad(lambda w_: (ct * f(w_, idx, ptr, x, shape=shape, transpose=transpose)).sum(), w)
    assert gw.shape == w.shape
    np.testing.assert_allclose(gw, want, rtol=1e-8, atol=1e-8)
    if kind == "float":
        gx = R.csr_transpose(op, ct, (w, idx, ptr, x), "x", shape=shape, transpose=transpose)
        want = _fd_grad(lambda x_: (ct * f(w, idx, ptr, x_, shape=shape, transpose=transpose)).sum(), x)
        np.testing.assert_allclose(gx, want, rtol=1e-8, atol=1e-8)
        # and against the dense matrix: A.T @ ct (or A @ ct)
        from _sparse_helpers import dense_of

        A = dense_of(w, idx, ptr, shape)
        np.testing.assert_allclose(gx, (A if transpose else A.T) @ ct, rtol=1e-10, atol=1e-10)
    else:
        with pytest.raises(R.NonDifferentiableError, match="bool events are not differentiable"):
            R.csr_transpose(op, ct, (w, idx, ptr, x), "x", shape=shape, transpose=transpose)


@pytest.mark.parametrize("name", ["indices", "indptr"])
def test_csr_index_arrays_are_not_differentiable(name, mat):
    w, idx, ptr, _ = mat
    with pytest.raises(
        R.NonDifferentiableError, match=rf"csrmv\(\): argument '{name}' is not differentiable"
    ):
        R.csr_transpose("csrmv", np.ones(9), (w, idx, ptr, np.ones(7)), name, shape=(9, 7))
    with pytest.raises(R.NonDifferentiableError, match="seed"):
        R.check_differentiable("jitc_mv_prob_homo", "seed")
    with pytest.raises(R.NonDifferentiableError, match="prob"):
        R.check_differentiable("jitc_event_mv_prob_normal", "prob")
    R.check_differentiable("csrmv", "weights")  # no error


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("op,kind", [("csrmv", "float"), ("event_csrmv", "bool"), ("event_csrmv", "float")])
@pytest.mark.parametrize("axis", [0, 1])
def test_vmap_of_mv_is_one_mm(op, kind, axis, transpose, mat):
    w, idx, ptr, _ = mat
    rng = np.random.default_rng(3)
    shape = (9, 7)
    n = 9 if transpose else 7
    xs = _x(kind, 2, n, rng)  # (n, 3): batch on axis 1
    if axis == 0:
        xs = np.ascontiguousarray(xs.T)
    f = getattr(sp, op)
    out, out_axis = R.csr_batch(op, (w, idx, ptr, xs), axis, shape=shape, transpose=transpose)
    items = [f(w, idx, ptr, np.take(xs, b, axis=axis), shape=shape, transpose=transpose) for b in range(3)]
    np.testing.assert_allclose(np.moveaxis(out, out_axis, 0), np.stack(items), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_of_mm_folds_the_batch(axis, mat):
    w, idx, ptr, _ = mat
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((7, 4, 3))  # (n, batch, k)
    xs = np.moveaxis(xs, 1, axis)
    out, out_axis = R.csrmm_batch("csrmm", (w, idx, ptr, xs), axis, shape=(9, 7))
    items = [sp.csrmm(w, idx, ptr, np.take(xs, b, axis=axis), shape=(9, 7)) for b in range(4)]
    np.testing.assert_allclose(np.moveaxis(out, out_axis, 0), np.stack(items), rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- JITC

JITC = {"homo": (0.7,), "uniform": (-0.4, 1.3), "normal": (0.2, 0.9)}
NAMES = {"homo": ("weight",), "uniform": ("w_low", "w_high"), "normal": ("w_mu", "w_sigma")}


@pytest.mark.parametrize("event", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("dist", list(JITC))
def test_jitc_jvp_and_transpose(dist, transpose, event):
    rng = np.random.default_rng(6)
    shape = (23, 17)
    params = [np.asarray(p) for p in JITC[dist]]
    f = getattr(sp, f"jitc_{'event_' if event else ''}mv_prob_{dist}")
    n = shape[0] if transpose else shape[1]
    x = rng.standard_normal(n)
    x[rng.random(n) < 0.3] = 0
    prob, seed = 0.3, 21

    def F(x_, *ps):
        return f(x_, *ps, prob, seed, shape=shape, transpose=transpose)

    dx = rng.standard_normal(n)
    dps = [np.asarray(rng.standard_normal()) for _ in params]
    got = R.jitc_jvp(
        dist, (x, *params, prob, seed), (dx, *dps), shape=shape, transpose=transpose, event=event
    )
    np.testing.assert_allclose(got, _fd_jvp(F, [x, *params], [dx, *dps]), rtol=1e-8, atol=1e-8)
    for i in range(len(params)):  # one parameter tangent at a time (the others zero)
        t = [None] * len(params)
        t[i] = dps[i]
        got = R.jitc_jvp(
            dist, (x, *params, prob, seed), (None, *t), shape=shape, transpose=transpose, event=event
        )
        np.testing.assert_allclose(got, _fd_jvp(F, [x, *params], [None, *t]), rtol=1e-8, atol=1e-8)

    y = F(x, *params)
    ct = rng.standard_normal(y.shape)
    gx = R.jitc_transpose(
        dist, ct, (x, *params, prob, seed), "x", shape=shape, transpose=transpose, event=event
    )
    np.testing.assert_allclose(gx, _fd_grad(lambda x_: (ct * F(x_, *params)).sum(), x), rtol=1e-8, atol=1e-8)
    for i, name in enumerate(NAMES[dist]):
        g = R.jitc_transpose(
            dist, ct, (x, *params, prob, seed), name, shape=shape, transpose=transpose, event=event
        )

        def L(p, i=i):
            ps = list(params)
            ps[i] = p
            return (ct * F(x, *ps)).sum()

        assert np.shape(g) == ()
        np.testing.assert_allclose(g, _fd_grad(L, params[i]), rtol=1e-8, atol=1e-8)
    for name in ("prob", "seed"):
        with pytest.raises(R.NonDifferentiableError, match=name):
            R.jitc_transpose(
                dist, ct, (x, *params, prob, seed), name, shape=shape, transpose=transpose, event=event
            )


def test_jitc_bool_events_are_not_differentiable():
    e = np.ones(17, bool)
    with pytest.raises(R.NonDifferentiableError, match="bool events"):
        R.jitc_transpose("homo", np.ones(23), (e, np.asarray(1.0), 0.3, 1), "x", shape=(23, 17), event=True)
    # but the weight gradient of a bool-event product exists
    g = R.jitc_transpose(
        "homo", np.ones(23), (e, np.asarray(1.0), 0.3, 1), "weight", shape=(23, 17), event=True
    )
    A = sp.jitc_todense_prob_homo(1.0, 0.3, 1, shape=(23, 17))
    np.testing.assert_allclose(g, (A @ e).sum(), rtol=1e-6)
