"""The autodiff and batching rules of the sparse Operators, called directly on NumPy arrays.

The rules are framework-neutral functions on the Operators (``op.transpose``, ``op.jvp``,
``op.batch``); here they are checked numerically in float64 without any framework:
transposes (VJPs) against finite-difference gradients of ``<ct, op(...)>`` coordinate by
coordinate, JVPs against central finite differences, batching against a Python loop.
JAX ``check_grads`` and torch ``gradcheck`` check them end to end in
``test_sparse_frameworks.py``.
"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import fd_grad as _fd_grad
from _sparse_helpers import fd_jvp as _fd_jvp
from _sparse_helpers import random_csr

from tiarray import UndefinedPrimal


def _T(f, ct, primals, which, **static):
    """The transpose rule of ``f``'s Operator for input ``which`` (the cotangent of that input)."""
    args = list(primals)
    a = np.asarray(args[which])
    args[which] = UndefinedPrimal(a.shape, a.dtype)
    return f.operator.transpose((ct,), tuple(args), **static)[which]


def _J(f, primals, tangents, **static):
    """The JVP: the Operator's jvp rule, or (linear operators) the sum over tangents of the call
    with that input replaced by its tangent (what the registry derives)."""
    op = f.operator
    if op.jvp is not None:
        return op.jvp(tuple(primals), tuple(tangents), **static)
    out = None
    for i, t in enumerate(tangents):
        if t is not None:
            a = list(primals)
            a[i] = t
            y = op(*a, **static)
            out = y if out is None else out + y
    return out


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
    st = {"shape": shape, "transpose": transpose}

    def F(w_, x_):
        return f(w_, idx, ptr, x_, **st)

    got = _J(f, (w, idx, ptr, x), (dw, None, None, dx), **st)
    np.testing.assert_allclose(got, _fd_jvp(F, [w, x], [dw, dx]), rtol=1e-8, atol=1e-8)
    got = _J(f, (w, idx, ptr, x), (dw, None, None, None), **st)
    np.testing.assert_allclose(got, _fd_jvp(F, [w, x], [dw, None]), rtol=1e-8, atol=1e-8)


@pytest.mark.parametrize("homo", ["per-synapse", "scalar"])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("op,kind,ndim", CSR_CASES)
def test_csr_transpose(op, kind, ndim, transpose, homo, mat):
    w, idx, ptr, dense = mat
    rng = np.random.default_rng(2)
    shape = (9, 7)
    if homo == "scalar":
        w = np.asarray(0.7)
    x = _x(kind, ndim, 9 if transpose else 7, rng)
    f = getattr(sp, op)
    st = {"shape": shape, "transpose": transpose}
    y = f(w, idx, ptr, x, **st)
    ct = rng.standard_normal(y.shape)

    gw = _T(f, ct, (w, idx, ptr, x), 0, **st)
    want = _fd_grad(lambda w_: (ct * f(w_, idx, ptr, x, **st)).sum(), w)
    assert gw.shape == w.shape and gw.dtype == w.dtype
    np.testing.assert_allclose(gw, want, rtol=1e-8, atol=1e-8)
    if kind == "float":
        gx = _T(f, ct, (w, idx, ptr, x), 3, **st)
        want = _fd_grad(lambda x_: (ct * f(w, idx, ptr, x_, **st)).sum(), x)
        np.testing.assert_allclose(gx, want, rtol=1e-8, atol=1e-8)
        # and against the dense matrix: A.T @ ct (or A @ ct)
        from _sparse_helpers import dense_of

        A = dense_of(w, idx, ptr, shape)
        np.testing.assert_allclose(gx, (A if transpose else A.T) @ ct, rtol=1e-10, atol=1e-10)


def test_sddmm_and_to_dense_transposes(mat):
    w, idx, ptr, dense = mat
    rng = np.random.default_rng(12)
    shape = (9, 7)
    for k in (None, 3):
        a = rng.standard_normal((9,) if k is None else (9, k))
        b = rng.standard_normal((7,) if k is None else (7, k))
        y = sp.csr_sddmm(idx, ptr, a, b, shape=shape)
        ct = rng.standard_normal(y.shape)

        def L(a_, b_, ct=ct):
            return (ct * sp.csr_sddmm(idx, ptr, a_, b_, shape=shape)).sum()

        ga = _T(sp.csr_sddmm, ct, (idx, ptr, a, b), 2, shape=shape)
        gb = _T(sp.csr_sddmm, ct, (idx, ptr, a, b), 3, shape=shape)
        np.testing.assert_allclose(ga, _fd_grad(lambda a_, b=b: L(a_, b), a), rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(gb, _fd_grad(lambda b_, a=a: L(a, b_), b), rtol=1e-8, atol=1e-8)
    for weights in (w, np.asarray(0.3)):
        ct = rng.standard_normal(shape)
        g = _T(sp.csr_to_dense, ct, (weights, idx, ptr), 0, shape=shape)
        want = _fd_grad(lambda w_, ct=ct: (ct * sp.csr_to_dense(w_, idx, ptr, shape=shape)).sum(), weights)
        assert g.shape == weights.shape
        np.testing.assert_allclose(g, want, rtol=1e-8, atol=1e-8)


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
    out, out_axis = f.operator.batch(
        (w, idx, ptr, xs), (None, None, None, axis), shape=shape, transpose=transpose
    )
    items = [f(w, idx, ptr, np.take(xs, b, axis=axis), shape=shape, transpose=transpose) for b in range(3)]
    np.testing.assert_allclose(np.moveaxis(out, out_axis, 0), np.stack(items), rtol=1e-12, atol=1e-12)
    # batched weights: one call per element, still right
    ws = np.stack([w, 2 * w, -w])
    out, out_axis = f.operator.batch(
        (ws, idx, ptr, xs), (0, None, None, axis), shape=shape, transpose=transpose
    )
    items = [
        f(ws[b], idx, ptr, np.take(xs, b, axis=axis), shape=shape, transpose=transpose) for b in range(3)
    ]
    np.testing.assert_allclose(np.moveaxis(out, out_axis, 0), np.stack(items), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_vmap_of_mm_folds_the_batch(axis, mat):
    w, idx, ptr, _ = mat
    rng = np.random.default_rng(5)
    xs = rng.standard_normal((7, 4, 3))  # (n, batch, k)
    xs = np.moveaxis(xs, 1, axis)
    out, out_axis = sp.csrmm.operator.batch(
        (w, idx, ptr, xs), (None, None, None, axis), shape=(9, 7), transpose=False
    )
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
    prob, seed = np.asarray(0.3, np.float32), np.asarray(21, np.uint32)
    st = {"shape": shape, "transpose": transpose}
    k = len(params)

    def F(x_, *ps):
        return f(x_, *ps, prob, seed, **st)

    dx = rng.standard_normal(n)
    dps = [np.asarray(rng.standard_normal()) for _ in params]
    got = _J(f, (x, *params, prob, seed), (dx, *dps, None, None), **st)
    np.testing.assert_allclose(got, _fd_jvp(F, [x, *params], [dx, *dps]), rtol=1e-8, atol=1e-8)
    for i in range(k):  # one parameter tangent at a time (the others zero)
        t = [None] * k
        t[i] = dps[i]
        got = _J(f, (x, *params, prob, seed), (None, *t, None, None), **st)
        np.testing.assert_allclose(got, _fd_jvp(F, [x, *params], [None, *t]), rtol=1e-8, atol=1e-8)

    y = F(x, *params)
    ct = rng.standard_normal(y.shape)
    primals = (x, *params, prob, seed)
    gx = _T(f, ct, primals, 0, **st)
    np.testing.assert_allclose(gx, _fd_grad(lambda x_: (ct * F(x_, *params)).sum(), x), rtol=1e-8, atol=1e-8)
    for i in range(k):
        g = _T(f, ct, primals, 1 + i, **st)

        def L(p, i=i):
            ps = list(params)
            ps[i] = p
            return (ct * F(x, *ps)).sum()

        assert np.shape(g) == ()
        np.testing.assert_allclose(g, _fd_grad(L, params[i]), rtol=1e-8, atol=1e-8)
    assert f.operator.nondiff == ("prob", "seed")


@pytest.mark.parametrize("dist", list(JITC))
def test_jitc_todense_rules(dist):
    rng = np.random.default_rng(16)
    shape = (11, 13)
    params = [np.asarray(p) for p in JITC[dist]]
    f = getattr(sp, f"jitc_todense_prob_{dist}")
    prob, seed = np.asarray(0.4, np.float32), np.asarray(2, np.uint32)
    for transpose in (False, True):
        st = {"shape": shape, "transpose": transpose}
        ct = rng.standard_normal(shape[::-1] if transpose else shape)
        for i in range(len(params)):
            g = _T(f, ct, (*params, prob, seed), i, **st)

            def L(p, i=i, ct=ct, st=st):
                ps = list(params)
                ps[i] = p
                return (ct * f(*ps, prob, seed, **st)).sum()

            np.testing.assert_allclose(g, _fd_grad(L, params[i]), rtol=1e-8, atol=1e-8)
        dps = [np.asarray(rng.standard_normal()) for _ in params]
        got = _J(f, (*params, prob, seed), (*dps, None, None), **st)
        np.testing.assert_allclose(
            got, _fd_jvp(lambda *ps, st=st: f(*ps, prob, seed, **st), params, dps), rtol=1e-8, atol=1e-8
        )


def test_jitc_bool_events_weight_gradient():
    e = np.ones(17, bool)
    f = sp.jitc_event_mv_prob_homo
    primals = (e, np.asarray(1.0), np.asarray(0.3, np.float32), np.asarray(1, np.uint32))
    g = _T(f, np.ones(23), primals, 1, shape=(23, 17), transpose=False)
    A = sp.jitc_todense_prob_homo(1.0, 0.3, 1, shape=(23, 17))
    np.testing.assert_allclose(g, (A @ e).sum(), rtol=1e-6)
