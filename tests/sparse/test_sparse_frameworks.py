"""The sparse operators on every framework: NumPy, torch, JAX (and CuPy, on a GPU).

Each check is a function of a framework wrapper (``_sparse_helpers.NumpyFW`` ...) called by
one test per framework; the framework tests take the ``torch`` / ``jax`` / ``cupy``
fixture, which marks them, so each nox session runs its part (``tests/conftest.py``).
Every result is compared with a dense float64 NumPy reference. JAX-only and torch-only
parts (``jit``, ``vmap``, ``check_grads``, ``gradcheck``, traced seeds) follow.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import (
    NONDET_TOL,
    TAICHI_ON_CUDA,
    CupyFW,
    JaxFW,
    NumpyFW,
    TorchFW,
    dense_of,
    events,
    host_call,
    random_csr,
    stable_rng,
    tol,
)

PRODUCTS = ["event_csrmv", "csrmv", "event_csrmm", "csrmm"]
CASES = [
    (op, wdtype, homo, transpose, ekind)
    for op in PRODUCTS
    for wdtype in ("float32", "float64")
    for homo in ("per-synapse", "scalar", "one")
    for transpose in (False, True)
    for ekind in (("bool", "float") if op.startswith("event") else ("float",))
]
IDS = ["-".join(str(v) for v in c) for c in CASES]
JITC = {"homo": (0.7,), "uniform": (-0.4, 1.3), "normal": (0.2, 0.9)}
JITC_CASES = [
    (dist, event, transpose, wdtype)
    for dist in JITC
    for event in (False, True)
    for transpose in (False, True)
    for wdtype in ("float32", "float64")
]
JITC_IDS = ["-".join(str(v) for v in c) for c in JITC_CASES]


def _weights(w0, homo, wdtype, rng):
    if homo == "scalar":
        return np.asarray(rng.standard_normal(), dtype=wdtype)
    if homo == "one":
        return np.asarray([rng.standard_normal()], dtype=wdtype)
    return w0.astype(wdtype)


def _operand(op, length, ekind, wdtype, rng):
    shape = (length,) if op.endswith("mv") else (length, 4)
    if ekind == "bool":
        return rng.random(shape) < 0.3
    x = rng.standard_normal(shape).astype(wdtype)
    x[rng.random(shape) < 0.5] = 0
    return x


def check_product(fw, op, wdtype, homo, transpose, ekind):
    rng = stable_rng(op, wdtype, homo, transpose, ekind)
    m, n = 23, 17
    w0, idx, ptr, _ = random_csr(m, n, 0.3, rng)
    w = _weights(w0, homo, wdtype, rng)
    dense = dense_of(w, idx, ptr, (m, n))
    x = _operand(op, m if transpose else n, ekind, wdtype, rng)
    f = getattr(sp, op)
    with fw.ctx():
        y = f(fw.arr(w), fw.arr(idx), fw.arr(ptr), fw.arr(x), shape=(m, n), transpose=transpose)
        got = fw.np(y)
    ref = (dense.T if transpose else dense) @ x.astype(np.float64)
    assert got.dtype == np.dtype(wdtype) and got.shape == ref.shape
    rtol, atol = tol(wdtype, np.abs(ref).max(initial=0))
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def check_helpers(fw):
    rng = np.random.default_rng(31)
    m, n = 12, 9
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng)
    A = fw.arr
    with fw.ctx():
        np.testing.assert_allclose(
            fw.np(sp.csr_to_dense(A(w), A(idx), A(ptr), shape=(m, n))), dense, rtol=1e-12
        )
        a, b = rng.standard_normal(m), rng.standard_normal(n)
        rows = np.repeat(np.arange(m), np.diff(ptr))
        got = fw.np(sp.csr_sddmm(A(idx), A(ptr), A(a), A(b), shape=(m, n)))
        np.testing.assert_allclose(got, a[rows] * b[idx], rtol=1e-12)
        a2, b2 = rng.standard_normal((m, 3)), rng.random((n, 3)) < 0.5
        got = fw.np(sp.csr_sddmm(A(idx), A(ptr), A(a2), A(b2), shape=(m, n)))
        np.testing.assert_allclose(got, (a2[rows] * b2[idx]).sum(1), rtol=1e-12)
        wd, id_, pd = sp.csr_from_dense(A(dense))
        np.testing.assert_allclose(fw.np(sp.csr_to_dense(wd, id_, pd, shape=(m, n))), dense, rtol=1e-12)
        wt, it, pt = sp.csr_transpose(A(w), A(idx), A(ptr), shape=(m, n))
        np.testing.assert_allclose(fw.np(sp.csr_to_dense(wt, it, pt, shape=(n, m))), dense.T, rtol=1e-12)


def check_edge_cases(fw):
    rng = np.random.default_rng(5)
    A = fw.arr
    with fw.ctx():
        # empty matrices, in both directions
        for m, n in ((0, 5), (5, 0), (0, 0)):
            idx, ptr = np.zeros(0, np.int32), np.zeros(m + 1, np.int32)
            for transpose in (False, True):
                e = np.ones(m if transpose else n, bool)
                y = fw.np(
                    sp.event_csrmv(A(np.float32(1)), A(idx), A(ptr), A(e), shape=(m, n), transpose=transpose)
                )
                assert y.shape == (n if transpose else m,) and not y.any()
        # empty rows, all-zero and all-one events
        m, n = 30, 20
        w, idx, ptr, dense = random_csr(m, n, 0.2, rng)  # about a tenth of the rows are empty
        assert (np.diff(ptr) == 0).any()
        for transpose in (False, True):
            for value in (False, True):
                e = np.full(m if transpose else n, value)
                got = fw.np(sp.event_csrmv(A(w), A(idx), A(ptr), A(e), shape=(m, n), transpose=transpose))
                np.testing.assert_allclose(got, (dense.T if transpose else dense) @ e, rtol=1e-12, atol=1e-12)


def check_jitc(fw, dist, event, transpose, wdtype):
    rng = np.random.default_rng(7)
    shape = (41, 29)
    params = [np.asarray(p, wdtype) for p in JITC[dist]]
    prob, seed = 0.2, 123
    gpu = fw.name == "cupy" or TAICHI_ON_CUDA
    if gpu:  # Taichi runs on CUDA here (NumPy arrays are refused): the pure-Python model
        import _jitc_reference as R

        w1, w2 = (float(params[0]), 0.0) if dist == "homo" else (float(params[0]), float(params[1]))
        dense_np = R.todense(shape, prob, seed, dist, w1, w2, wdtype)
    else:
        dense_np = getattr(sp, f"jitc_todense_prob_{dist}")(*params, prob, seed, shape=shape)
    f = getattr(sp, f"jitc_{'event_' if event else ''}mv_prob_{dist}")
    n = shape[0] if transpose else shape[1]
    x = events(n, 0.3, rng, "bool" if event else wdtype)
    with fw.ctx():
        dense = fw.np(getattr(sp, f"jitc_todense_prob_{dist}")(*map(fw.arr, params), prob, seed, shape=shape))
        got = fw.np(f(fw.arr(x), *map(fw.arr, params), prob, seed, shape=shape, transpose=transpose))
        # a seed given as an array gives the same matrix
        again = fw.np(f(fw.arr(x), *map(fw.arr, params), prob, fw.arr(np.int32(seed)), shape=shape,
                        transpose=transpose))  # fmt: skip
    # the matrix is the same in every framework (and the connectivity on every device), bit for bit
    if gpu and dist != "homo":  # weights: float math on the GPU, same to rounding
        np.testing.assert_array_equal(dense != 0, dense_np != 0)
        np.testing.assert_allclose(dense, dense_np, rtol=1e-5 if wdtype == "float32" else 1e-12, atol=1e-6)
    else:
        np.testing.assert_array_equal(dense, dense_np)
    assert dense.dtype == np.dtype(wdtype) and got.dtype == np.dtype(wdtype)
    ref = (dense_np.astype(np.float64).T if transpose else dense_np.astype(np.float64)) @ x.astype(np.float64)
    rtol, atol = tol(wdtype, np.abs(ref).max(initial=0) * 10)
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)
    if gpu:  # atomic adds on the GPU sum in a different order from run to run (seen: 1 ulp)
        np.testing.assert_allclose(again, got, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(again, got)


def check_csr_object(fw):
    rng = np.random.default_rng(11)
    m, n = 23, 17
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng)
    with fw.ctx():
        for weights, D in ((w, dense), (np.float64(0.5), dense_of(0.5, idx, ptr, (m, n)))):
            A = sp.CSR(fw.arr(weights), fw.arr(idx), fw.arr(ptr), shape=(m, n))
            assert A.shape == (m, n) and A.T.shape == (n, m) and A.T.T is A
            s_n, s_m = rng.random(n) < 0.3, rng.random(m) < 0.3
            v_n, v_m = rng.standard_normal(n), rng.standard_normal(m)
            S, V = rng.random((n, 3)) < 0.3, rng.standard_normal((m, 4))
            cases = [
                (A @ fw.arr(s_n), D @ s_n),  # event scatter over the cached A.T
                (fw.arr(s_m) @ A, D.T @ s_m),  # event scatter over A
                (A.T @ fw.arr(s_m), D.T @ s_m),
                (A @ fw.arr(v_n), D @ v_n),  # gather over A
                (A.T @ fw.arr(v_m), D.T @ v_m),  # gather over the cached A.T
                (fw.arr(v_m) @ A, D.T @ v_m),
                (A @ fw.arr(S), D @ S),
                (A.T @ fw.arr(V), D.T @ V),
                (fw.arr(V.T) @ A, V.T @ D),
                (A.todense(), D),
                (A.T.todense(), D.T),
                (A.dot(fw.arr(s_n)), D @ s_n),  # the method form of @
                (A.T.dot(fw.arr(v_m)), D.T @ v_m),
            ]
            for got, want in cases:
                if want is not None:
                    np.testing.assert_allclose(fw.np(got), want, rtol=1e-12, atol=1e-12)
        # the transpose was built once and is shared by with_weights
        A2 = A.with_weights(fw.arr(np.float64(2.0)))
        assert all(a is b for a, b in zip(A2._struct_t[:3], A._struct_t[:3], strict=True))
        np.testing.assert_allclose(
            fw.np(A2 @ fw.arr(s_n)), 2 * dense_of(1.0, idx, ptr, (m, n)) @ s_n, rtol=1e-12
        )


# ----------------------------------------------------------------------------- per framework


def test_csr_object_numpy():
    check_csr_object(NumpyFW())


def test_csr_object_torch(torch):
    check_csr_object(TorchFW(torch))


def test_csr_object_jax(jax):
    check_csr_object(JaxFW(jax))


def test_csr_object_cupy(cupy):
    check_csr_object(CupyFW(cupy))


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_products_numpy(case):
    check_product(NumpyFW(), *case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_products_torch(torch, case):
    check_product(TorchFW(torch), *case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_products_jax(jax, case):
    check_product(JaxFW(jax), *case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_products_cupy(cupy, case):
    check_product(CupyFW(cupy), *case)


@pytest.mark.parametrize("case", JITC_CASES, ids=JITC_IDS)
def test_jitc_numpy(case):
    check_jitc(NumpyFW(), *case)


@pytest.mark.parametrize("case", JITC_CASES, ids=JITC_IDS)
def test_jitc_torch(torch, case):
    check_jitc(TorchFW(torch), *case)


@pytest.mark.parametrize("case", JITC_CASES, ids=JITC_IDS)
def test_jitc_jax(jax, case):
    check_jitc(JaxFW(jax), *case)


@pytest.mark.parametrize("case", JITC_CASES, ids=JITC_IDS)
def test_jitc_cupy(cupy, case):
    check_jitc(CupyFW(cupy), *case)


def test_helpers_and_edge_cases_numpy():
    check_helpers(NumpyFW())
    check_edge_cases(NumpyFW())


def test_helpers_and_edge_cases_torch(torch):
    check_helpers(TorchFW(torch))
    check_edge_cases(TorchFW(torch))


def test_helpers_and_edge_cases_jax(jax):
    check_helpers(JaxFW(jax))
    check_edge_cases(JaxFW(jax))


def test_helpers_and_edge_cases_cupy(cupy):
    check_helpers(CupyFW(cupy))
    check_edge_cases(CupyFW(cupy))


def test_jitc_matrix_is_the_same_in_every_framework(torch, jax):
    args = (np.float32(-0.5), np.float32(1.5), 0.1, 99)
    a = host_call(sp.jitc_todense_prob_uniform, *args, shape=(300, 200))
    b = sp.jitc_todense_prob_uniform(*map(torch.tensor, args[:2]), *args[2:], shape=(300, 200)).cpu().numpy()
    c = np.asarray(
        sp.jitc_todense_prob_uniform(*map(jax.numpy.asarray, args[:2]), *args[2:], shape=(300, 200))
    )
    np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(a, c)
    assert 0.08 < (a != 0).mean() < 0.12


# ----------------------------------------------------------------------------- JAX


def _mat(rng, m=9, n=7, density=0.4):
    return random_csr(m, n, density, rng)


@pytest.mark.parametrize("op", PRODUCTS)
def test_jax_jit_equals_eager(jax, op):
    jnp = jax.numpy
    rng = np.random.default_rng(1)
    w, idx, ptr, dense = _mat(rng)
    f = getattr(sp, op)
    with jax.enable_x64(True):
        for transpose in (False, True):
            x = _operand(
                op, 9 if transpose else 7, "bool" if op.startswith("event") else "float", "float64", rng
            )
            eager = f(jnp.asarray(w), idx, ptr, jnp.asarray(x), shape=(9, 7), transpose=transpose)
            jitted = jax.jit(lambda w, x, t=transpose: f(w, idx, ptr, x, shape=(9, 7), transpose=t))(w, x)
            np.testing.assert_array_equal(np.asarray(eager), np.asarray(jitted))
            np.testing.assert_allclose(np.asarray(jitted), (dense.T if transpose else dense) @ x, rtol=1e-12)


@pytest.mark.parametrize("op,mm", [("event_csrmv", "event_csrmm"), ("csrmv", "csrmm")])
@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize("in_axis", [0, 1])
def test_jax_vmap_is_one_csrmm_launch(jax, op, mm, transpose, in_axis):
    rng = np.random.default_rng(2)
    w, idx, ptr, dense = _mat(rng)
    n = 9 if transpose else 7
    xs = rng.random((5, n)) < 0.4 if op.startswith("event") else rng.standard_normal((5, n))
    if in_axis == 1:
        xs = np.ascontiguousarray(xs.T)
    f = getattr(sp, op)
    with jax.enable_x64(True):
        g = jax.vmap(lambda x: f(w, idx, ptr, x, shape=(9, 7), transpose=transpose), in_axes=in_axis)
        jaxpr = jax.make_jaxpr(g)(xs)
        prims = [e.primitive.name for e in jaxpr.jaxpr.eqns]
        # one launch of the matrix-matrix operator, no loop, no per-vector launch
        assert prims.count(mm) == 1 and op not in prims, prims
        assert not {"while", "scan", "map"} & set(prims), prims
        got = np.asarray(jax.jit(g)(xs))
    rows = xs if in_axis == 0 else xs.T
    want = np.stack([(dense.T if transpose else dense) @ r for r in rows.astype(np.float64)])
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_jax_vmap_of_csrmm_and_of_batched_weights(jax):
    rng = np.random.default_rng(3)
    w, idx, ptr, dense = _mat(rng)
    B = rng.standard_normal((4, 7, 3))
    with jax.enable_x64(True):
        g = jax.vmap(lambda b: sp.csrmm(w, idx, ptr, b, shape=(9, 7)))
        prims = [e.primitive.name for e in jax.make_jaxpr(g)(B).jaxpr.eqns]
        assert prims.count("csrmm") == 1
        np.testing.assert_allclose(np.asarray(g(B)), np.einsum("ij,bjk->bik", dense, B), rtol=1e-12)
        # batched per-synapse weights (e.g. an ensemble of networks): one call per member
        ws = np.stack([w, 2 * w, -w])
        x = rng.standard_normal(7)
        got = jax.vmap(lambda w_: sp.csrmv(w_, idx, ptr, x, shape=(9, 7)))(ws)
        np.testing.assert_allclose(
            np.asarray(got), np.stack([dense @ x, 2 * dense @ x, -dense @ x]), rtol=1e-12
        )


@pytest.mark.parametrize("op", ["csrmv", "event_csrmv", "csrmm", "event_csrmm"])
@pytest.mark.parametrize("homo", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_jax_check_grads_csr(jax, op, homo, transpose):
    from jax.test_util import check_grads

    jnp = jax.numpy
    rng = np.random.default_rng(4)
    w, idx, ptr, dense = _mat(rng)
    if homo:
        w = np.asarray(0.8)
    x = _operand(op, 9 if transpose else 7, "float", "float64", rng)
    f = getattr(sp, op)
    A = dense_of(w, idx, ptr, (9, 7))
    A1 = A / 0.8 if homo else None
    with jax.enable_x64(True):

        def F(w_, x_):  # (check_grads' finite differences pass NumPy arrays)
            return f(jnp.asarray(w_), idx, ptr, jnp.asarray(x_), shape=(9, 7), transpose=transpose)

        # check_grads measures second derivatives with respect to 0-d arguments in float32
        # (it fails for a pure jax.numpy function too): order 2 for per-synapse weights,
        # and second derivatives against the dense reference below for both
        check_grads(
            F, (jnp.asarray(w), jnp.asarray(x)), order=1 if homo else 2, modes=("fwd", "rev"), eps=1e-3
        )
        if homo:
            mat = lambda w_: w_ * A1  # noqa: E731
        else:
            rows = np.repeat(np.arange(9), np.diff(ptr))
            mat = lambda w_: jnp.zeros((9, 7)).at[rows, idx].add(w_)  # noqa: E731

        def G(w_, x_):  # the same product with a dense jax.numpy matrix
            M = mat(w_)
            return (M.T if transpose else M) @ x_

        for fun in (F, G):
            hess = jax.hessian(lambda w_, x_, fun=fun: (fun(w_, x_) ** 2).sum(), argnums=(0, 1))(
                jnp.asarray(w), jnp.asarray(x)
            )
            if fun is F:
                hF = hess
        for a, b in zip(jax.tree_util.tree_leaves(hF), jax.tree_util.tree_leaves(hess)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10, atol=1e-12)
        gx = jax.grad(lambda x_: F(w, x_).sum())(jnp.asarray(x))
        A = dense_of(w, idx, ptr, (9, 7))
        ones = np.ones((A.shape[1] if transpose else A.shape[0],) + x.shape[1:])
        np.testing.assert_allclose(np.asarray(gx), (A if transpose else A.T) @ ones, rtol=1e-12)
        gw = jax.grad(lambda w_: F(w_, x).sum())(jnp.asarray(w))
        assert gw.shape == w.shape
        if homo:  # one weight given as shape (1,): the gradient has that shape, same value
            g1 = jax.grad(lambda w_: F(w_, x).sum())(jnp.asarray([0.8]))
            assert g1.shape == (1,) and float(g1[0]) == pytest.approx(float(gw), rel=1e-12)
        # bool events: the weight gradient exists, the events have none
        if op.startswith("event"):
            e = x != 0
            gw = jax.grad(lambda w_: f(w_, idx, ptr, e, shape=(9, 7), transpose=transpose).sum())(
                jnp.asarray(w)
            )
            want = jax.grad(
                lambda w_: f(w_, idx, ptr, e.astype(np.float64), shape=(9, 7), transpose=transpose).sum()
            )(jnp.asarray(w))
            np.testing.assert_allclose(np.asarray(gw), np.asarray(want), rtol=1e-12)


@pytest.mark.parametrize("dist", list(JITC))
@pytest.mark.parametrize("event", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_jax_check_grads_jitc(jax, dist, event, transpose):
    from jax.test_util import check_grads

    jnp = jax.numpy
    rng = np.random.default_rng(5)
    shape = (13, 11)
    f = getattr(sp, f"jitc_{'event_' if event else ''}mv_prob_{dist}")
    x = rng.standard_normal(shape[0] if transpose else shape[1])
    with jax.enable_x64(True):
        params = [jnp.asarray(p, jnp.float64) for p in JITC[dist]]

        def F(x_, *ps):  # (check_grads' finite differences pass NumPy arrays)
            return f(jnp.asarray(x_), *map(jnp.asarray, ps), 0.3, 17, shape=shape, transpose=transpose)

        check_grads(F, (jnp.asarray(x), *params), order=2, modes=("fwd", "rev"), eps=1e-3)
        g = jax.grad(lambda *ps: F(x, *ps).sum(), argnums=tuple(range(len(params))))(*params)
        # exact: the weight of each connection is affine in the parameters
        D = [
            host_call(getattr(sp, f"jitc_todense_prob_{dist}"), *u, 0.3, 17, shape=shape)
            for u in _units(dist)
        ]
        for gi, Di in zip(g, D):
            ones = np.ones(shape[1] if transpose else shape[0])
            want = ones @ (Di.T if transpose else Di) @ x
            np.testing.assert_allclose(float(gi), want, rtol=1e-10)
        check_grads(
            lambda *ps: getattr(sp, f"jitc_todense_prob_{dist}")(
                *map(jnp.asarray, ps), 0.3, 17, shape=shape, transpose=transpose
            ),
            tuple(params),
            order=1,
            modes=("fwd", "rev"),
        )


def _units(dist):
    k = len(JITC[dist])
    return [tuple(np.float64(1.0 if j == i else 0.0) for j in range(k)) for i in range(k)]


def test_jax_seed_is_traced_under_jit(jax):
    jnp = jax.numpy
    shape = (200, 150)
    x = np.ones(150, np.float32)
    calls = []

    @jax.jit
    def f(seed, prob):
        calls.append(1)  # counts traces
        return sp.jitc_mv_prob_homo(x, np.float32(1.0), prob, seed, shape=shape)

    for seed in (1, 2, 3):
        got = np.asarray(f(jnp.asarray(seed, jnp.uint32), jnp.asarray(0.1, jnp.float32)))
        want = host_call(sp.jitc_mv_prob_homo, x, np.float32(1.0), 0.1, seed, shape=shape)
        np.testing.assert_array_equal(got, want)
    assert len(calls) == 1  # one trace, three seeds
    a = np.asarray(f(jnp.asarray(1, jnp.uint32), jnp.asarray(0.1, jnp.float32)))
    b = np.asarray(f(jnp.asarray(2, jnp.uint32), jnp.asarray(0.1, jnp.float32)))
    assert not np.array_equal(a, b)

    # a traced int32 seed inside lax.fori_loop: a new matrix each step
    def body(i, acc):
        return acc + sp.jitc_mv_prob_homo(x, np.float32(1.0), 0.1, i, shape=shape)

    tot = jax.jit(lambda: jax.lax.fori_loop(0, 3, body, jnp.zeros(200, jnp.float32)))()
    want = sum(host_call(sp.jitc_mv_prob_homo, x, np.float32(1.0), 0.1, i, shape=shape) for i in range(3))
    np.testing.assert_allclose(np.asarray(tot), want, rtol=1e-6)


def test_jax_parallel_variant_under_jit(jax):
    """The serial/parallel decision runs inside the custom call, on the values."""
    rng = np.random.default_rng(6)
    m, n = 300, 200
    w, idx, ptr, dense = random_csr(m, n, 0.05, rng)
    old = sp.set_thresholds(gather=0, scatter=0, jitc=0)
    try:
        with jax.enable_x64(True):
            f = jax.jit(lambda e: sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=True))
            for rate in (0.0, 0.1, 1.0):
                e = rng.random(m) < rate
                np.testing.assert_allclose(np.asarray(f(e)), dense.T @ e, rtol=1e-12, atol=1e-12)
            g = jax.jit(
                lambda x: sp.jitc_event_mv_prob_normal(x, 0.5, 0.2, 0.1, 4, shape=(m, n), transpose=True)
            )
            e = rng.random(m) < 0.2
            A = host_call(sp.jitc_todense_prob_normal, np.float32(0.5), np.float32(0.2), 0.1, 4, shape=(m, n))
            np.testing.assert_allclose(np.asarray(g(e)), A.T.astype(np.float64) @ e, rtol=1e-5, atol=1e-5)
    finally:
        sp.set_thresholds(**old)


def test_jax_values_are_checked_eagerly_not_under_jit(jax):
    jnp = jax.numpy
    idx = np.array([0, 7, 2], np.int32)
    ptr = np.array([0, 2, 3], np.int32)
    e = np.ones(5, bool)
    with pytest.raises(IndexError, match=r"event_csrmv\(\): argument 'indices' holds column index 7"):
        sp.event_csrmv(jnp.ones(3), jnp.asarray(idx), jnp.asarray(ptr), jnp.asarray(e), shape=(2, 5))
    # under jit the values are unknown: no error, and the kernel stays in bounds
    f = jax.jit(lambda i: sp.event_csrmv(jnp.ones(3), i, ptr, e, shape=(2, 5)))
    assert np.isfinite(np.asarray(f(idx))).all()
    with pytest.raises(
        ValueError, match=r"argument 'events' must have length shape\[1\] \(transpose=False\) = 5"
    ):
        jax.jit(lambda x: sp.event_csrmv(jnp.ones(3), jnp.asarray(idx), ptr, x, shape=(2, 5)))(
            np.ones(4, bool)
        )


def test_jax_non_differentiable_arguments(jax):
    jnp = jax.numpy
    x = jnp.ones(11)
    with pytest.raises(
        TypeError, match=r"jitc_mv_prob_homo: differentiation asks for the gradient with respect to 'prob'"
    ):
        jax.grad(lambda p: sp.jitc_mv_prob_homo(x, 1.0, p, 3, shape=(7, 11)).sum())(jnp.asarray(0.3))
    rng = np.random.default_rng(0)
    w, idx, ptr, _ = _mat(rng)
    with pytest.raises(
        TypeError, match="grad requires real- or complex-valued inputs"
    ):  # JAX's own rule for ints
        jax.grad(lambda i: sp.csrmv(w, i, ptr, jnp.ones(7), shape=(9, 7)).sum())(jnp.asarray(idx))


# ----------------------------------------------------------------------------- torch


@pytest.mark.parametrize("op", ["csrmv", "event_csrmv", "csrmm", "event_csrmm"])
@pytest.mark.parametrize("homo", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_torch_gradcheck_csr(torch, op, homo, transpose):
    rng = np.random.default_rng(7)
    w, idx, ptr, dense = _mat(rng)
    if homo:
        w = np.asarray([0.8])
    x = _operand(op, 9 if transpose else 7, "float", "float64", rng)
    f = getattr(sp, op)
    ti_, tp = torch.as_tensor(idx), torch.as_tensor(ptr)
    tw = torch.tensor(w, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)

    def F(w_, x_):
        return f(w_, ti_, tp, x_, shape=(9, 7), transpose=transpose)

    assert torch.autograd.gradcheck(F, (tw, tx), nondet_tol=NONDET_TOL)
    assert torch.autograd.gradgradcheck(F, (tw, tx), nondet_tol=NONDET_TOL)
    F(tw, tx).sum().backward()
    assert tw.grad.shape == tw.shape
    A = dense_of(w, idx, ptr, (9, 7))
    ones = np.ones((A.shape[1] if transpose else A.shape[0],) + x.shape[1:])
    np.testing.assert_allclose(tx.grad.cpu().numpy(), (A if transpose else A.T) @ ones, rtol=1e-12)


@pytest.mark.parametrize("dist", list(JITC))
@pytest.mark.parametrize("event", [False, True])
@pytest.mark.parametrize("transpose", [False, True])
def test_torch_gradcheck_jitc(torch, dist, event, transpose):
    rng = np.random.default_rng(8)
    shape = (13, 11)
    f = getattr(sp, f"jitc_{'event_' if event else ''}mv_prob_{dist}")
    x = torch.tensor(rng.standard_normal(shape[0] if transpose else shape[1]), requires_grad=True)
    params = [torch.tensor(p, dtype=torch.float64, requires_grad=True) for p in JITC[dist]]

    def F(x_, *ps):
        return f(x_, *ps, 0.3, 17, shape=shape, transpose=transpose)

    assert torch.autograd.gradcheck(F, (x, *params), nondet_tol=NONDET_TOL)
    dense_f = getattr(sp, f"jitc_todense_prob_{dist}")
    assert torch.autograd.gradcheck(
        lambda *ps: dense_f(*ps, 0.3, 17, shape=shape, transpose=transpose),
        tuple(params),
        nondet_tol=NONDET_TOL,
    )


def test_torch_sddmm_and_to_dense_gradcheck(torch):
    rng = np.random.default_rng(9)
    w, idx, ptr, dense = _mat(rng)
    ti_, tp = torch.as_tensor(idx), torch.as_tensor(ptr)
    a = torch.tensor(rng.standard_normal((9, 2)), requires_grad=True)
    b = torch.tensor(rng.standard_normal((7, 2)), requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda a_, b_: sp.csr_sddmm(ti_, tp, a_, b_, shape=(9, 7)), (a, b), nondet_tol=NONDET_TOL
    )
    tw = torch.tensor(w, requires_grad=True)
    assert torch.autograd.gradcheck(
        lambda w_: sp.csr_to_dense(w_, ti_, tp, shape=(9, 7)), (tw,), nondet_tol=NONDET_TOL
    )


def test_torch_non_differentiable_arguments(torch):
    x = torch.ones(11, dtype=torch.float64)
    p = torch.tensor(0.3, requires_grad=True)
    with pytest.raises(
        TypeError, match=r"jitc_mv_prob_homo: torch.autograd asks for the gradient with respect to 'prob'"
    ):
        sp.jitc_mv_prob_homo(x, 1.0, p, 3, shape=(7, 11))
    # bool events and integer index arrays cannot require grad in torch; float events can
    rng = np.random.default_rng(0)
    w, idx, ptr, dense = _mat(rng)
    e = torch.tensor(rng.random(7) < 0.5)
    tw = torch.tensor(w, requires_grad=True)
    y = sp.event_csrmv(tw, torch.as_tensor(idx), torch.as_tensor(ptr), e, shape=(9, 7))
    y.sum().backward()
    assert tw.grad is not None and tw.grad.shape == tw.shape


def test_torch_compile(torch):
    rng = np.random.default_rng(10)
    w, idx, ptr, dense = _mat(rng)
    ti_, tp = torch.as_tensor(idx), torch.as_tensor(ptr)
    tw = torch.tensor(w)

    @torch.compile(fullgraph=True, backend="aot_eager")
    def f(x):
        return sp.event_csrmv(tw, ti_, tp, x, shape=(9, 7), transpose=True) * 2

    e = torch.tensor(rng.random(9) < 0.5)
    np.testing.assert_allclose(f(e).cpu().numpy(), 2 * dense.T @ e.cpu().numpy(), rtol=1e-12)


def test_torch_compile_csr_object(torch):
    """``A.dot(x)`` compiles with ``fullgraph=True`` (Dynamo does not call ``@`` of an object
    beside a tensor); a product that needs the transposed structure of a fresh object says
    to call ``A.prepare()`` under it, and runs after that; without ``fullgraph`` it builds
    the structure eagerly (before 2026-12-05 both failed inside the trace: "does not support
    tracing ndarray.dtype", "RuntimeError when making fake tensor call")."""
    rng = np.random.default_rng(13)
    w, idx, ptr, dense = _mat(rng)
    e7, e9 = rng.random(7) < 0.5, rng.random(9) < 0.5
    args = (torch.tensor(w), torch.as_tensor(idx), torch.as_tensor(ptr))
    A = sp.CSR(*args, shape=(9, 7))
    f_t = torch.compile(lambda s: A.T.dot(s), fullgraph=True, backend="aot_eager")  # over A's rows
    np.testing.assert_allclose(f_t(torch.tensor(e9)).numpy(), dense.T @ e9, rtol=1e-12)
    f = torch.compile(lambda s: A.dot(s), fullgraph=True, backend="aot_eager")  # over A.T's rows
    with pytest.raises(Exception, match=r"call A\.prepare\(\) once before torch\.compile"):
        f(torch.tensor(e7))
    torch._dynamo.reset()
    B = sp.CSR(*args, shape=(9, 7)).prepare()
    g = torch.compile(lambda s: B.dot(s), fullgraph=True, backend="aot_eager")
    np.testing.assert_allclose(g(torch.tensor(e7)).numpy(), dense @ e7, rtol=1e-12)
    # without fullgraph the structure is built eagerly (a graph break), the product traced
    torch._dynamo.reset()
    C = sp.CSR(*args, shape=(9, 7))
    h = torch.compile(lambda s: C @ s, backend="aot_eager")
    np.testing.assert_allclose(h(torch.tensor(e7)).numpy(), dense @ e7, rtol=1e-12)


def test_torch_mixed_frameworks_raise(torch):
    rng = np.random.default_rng(0)
    w, idx, ptr, _ = _mat(rng)
    with pytest.raises(TypeError, match="mix arrays of two frameworks"):
        sp.csrmv(torch.tensor(w), idx, ptr, torch.ones(7, dtype=torch.float64), shape=(9, 7))


def test_jax_csr_object_under_jit_and_grad(jax):
    jnp = jax.numpy
    rng = np.random.default_rng(12)
    m, n = 30, 20
    w, idx, ptr, dense = random_csr(m, n, 0.2, rng)
    with jax.enable_x64(True):
        A = sp.CSR(jnp.asarray(w), idx, ptr, shape=(m, n))
        e = rng.random(n) < 0.3
        f = jax.jit(lambda e: A @ e)  # closes over the object (its cached transpose)
        np.testing.assert_allclose(np.asarray(f(e)), dense @ e, rtol=1e-12)
        # the weights of a CSR are differentiable through the cached permutation
        g = jax.grad(lambda w_: (A.with_weights(w_) @ e).sum())(jnp.asarray(w))
        rows = np.repeat(np.arange(m), np.diff(ptr))
        np.testing.assert_allclose(np.asarray(g), e[idx].astype(float), rtol=1e-12)
        assert rows.shape == g.shape
    with pytest.raises(TypeError, match="must be concrete"):
        jax.jit(lambda i: sp.CSR(w, i, ptr, shape=(m, n)).nnz)(idx)


def test_torch_csr_object_grad(torch):
    rng = np.random.default_rng(13)
    m, n = 30, 20
    w, idx, ptr, dense = random_csr(m, n, 0.2, rng)
    A = sp.CSR(torch.tensor(w), torch.as_tensor(idx), torch.as_tensor(ptr), shape=(m, n))
    tw = torch.tensor(w, requires_grad=True)
    e = torch.tensor(rng.random(n) < 0.3)
    (A.with_weights(tw) @ e).sum().backward()
    np.testing.assert_allclose(tw.grad.cpu().numpy(), e.cpu().numpy()[idx].astype(float), rtol=1e-12)


def test_torch_csr_object_with_weights_that_learn(torch):
    # the object kept w[perm] for its cached transpose with the autograd graph of the first
    # product: a second backward raised; kept from a no_grad product, the weight gradient of
    # later products was silently lost (2026-12-05)
    rng = np.random.default_rng(13)
    w, idx, ptr, dense = _mat(rng)
    tw = torch.nn.Parameter(torch.tensor(w))
    A = sp.CSR(tw, torch.as_tensor(idx), torch.as_tensor(ptr), shape=(9, 7))
    v = torch.tensor(rng.standard_normal(9))
    s = torch.tensor(rng.random(7) < 0.5)
    rows = np.repeat(np.arange(9), np.diff(ptr))
    with torch.no_grad():
        A @ s
        v @ A
    for step in (1, 2):
        ((v @ A).sum() + (A @ s).sum()).backward()  # both through the cached transpose
        expected = step * (v.numpy()[rows] + s.numpy()[idx])
        np.testing.assert_allclose(tw.grad.numpy(), expected, rtol=1e-12)
    with torch.no_grad():
        tw.mul_(2)  # an optimizer step: the next product sees the new weights
    np.testing.assert_allclose((v @ A).detach().numpy(), v.numpy() @ (2 * dense), rtol=1e-12)


def test_torch_arguments_without_readable_data(torch):
    # each raised a raw torch error from a data pointer or a size (2026-12-05)
    rng = np.random.default_rng(14)
    w, idx, ptr, _ = _mat(rng)
    tw, ti_, tp, x = (
        torch.tensor(w),
        torch.as_tensor(idx),
        torch.as_tensor(ptr),
        torch.ones(7, dtype=torch.float64),
    )
    with pytest.raises(
        TypeError, match=r"csrmv\(\): argument 'weights' has layout torch.sparse_coo; use .to_dense\(\)"
    ):
        sp.csrmv(tw.to_sparse(), ti_, tp, x, shape=(9, 7))
    with pytest.raises(TypeError, match=r"csrmv\(\): argument 'indices' has layout torch.sparse_coo"):
        sp.csrmv(tw, ti_.to_sparse(), tp, x, shape=(9, 7))
    with pytest.raises(TypeError, match=r"CSR\(\): argument 'weights' has layout torch.sparse_coo"):
        sp.CSR(tw.to_sparse(), ti_, tp, shape=(9, 7))
    with pytest.raises(TypeError, match=r"csrmv\(\): argument 'indices' is on the meta device"):
        sp.csrmv(*(a.to("meta") for a in (tw, ti_, tp, x)), shape=(9, 7))
    with warnings.catch_warnings():  # torch warns (once per process) that nested tensors are a prototype
        warnings.simplefilter("ignore", UserWarning)
        nested = torch.nested.nested_tensor([torch.ones(9, dtype=torch.float64)] * 2)
    with pytest.raises(TypeError, match=r"csrmm\(\): argument 'matrix' is a nested tensor"):
        sp.csrmm(tw, ti_, tp, nested, shape=(9, 7), transpose=True)
    with pytest.raises(TypeError, match=r"event_densemv\(\): argument 'weights' is a nested tensor"):
        sp.event_densemv(nested, torch.ones(2, dtype=torch.bool))
    with pytest.raises(
        ValueError, match=r"ids_to_events\(\): argument 'n' must be in \[0, 2\*\*31\), got 2147483648"
    ):
        sp.ids_to_events(torch.tensor([0]), 1, 2**31)
    with pytest.raises(
        ValueError, match=r"fixed_num_conn\(\): arguments \(n_pre, n_post\) must hold non-negative"
    ):
        sp.fixed_num_conn(-1, 3, 1, 0)


def test_torch_forward_mode_is_refused(torch):
    # zero tangents without a word before 2026-12-05; the captured index tensors are read
    # with functorch's transforms off (their reading raised "Cannot access data pointer")
    rng = np.random.default_rng(15)
    w, idx, ptr, _ = _mat(rng)
    tw, ti_, tp = torch.tensor(w), torch.as_tensor(idx), torch.as_tensor(ptr)
    x = torch.ones(7, dtype=torch.float64)
    with pytest.raises(NotImplementedError, match=r"csrmv: forward-mode differentiation"):
        torch.func.jvp(lambda v: sp.csrmv(tw, ti_, tp, v, shape=(9, 7)), (x,), (x,))


FRESH_COMPILE = """
import torch
import tiarray.operators.sparse as sp
ind, ptr, dl = torch.tensor([0, 2, 1]), torch.tensor([0, 2, 3, 3]), torch.tensor([0, 1, 1])
s = torch.tensor([True, False, True])
w = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
if "{case}" == "csrmv":
    f = torch.compile(lambda w: sp.csrmv(w, ind, ptr, torch.ones(3, dtype=torch.float64), shape=(3, 3)), fullgraph=True, backend="aot_eager")
    y = f(w)
    y.sum().backward()
    assert y.tolist() == [3.0, 3.0, 0.0] and w.grad.tolist() == [1.0, 1.0, 1.0], (y, w.grad)
elif "{case}" == "deliver":
    f = torch.compile(lambda ring: sp.csr_delay_deliver(ring, s, w.detach(), ind, ptr, dl, 1, shape=(3, 3)), fullgraph=True, backend="aot_eager")
    r = f(torch.zeros(2, 3, dtype=torch.float64))
    assert r.tolist() == [[0.0, 0.0, 2.0], [1.0, 0.0, 0.0]], r  # row 0: col 0 (delay 0), col 2 (delay 1)
else:
    f = torch.compile(lambda w: sp.csr_update_on_pre(w, ind, ptr, s, torch.ones(3, dtype=torch.float64), shape=(3, 3)), fullgraph=True, backend="aot_eager")
    assert f(w.detach()).tolist() == [2.0, 3.0, 3.0]
print("ok")
"""


@pytest.mark.parametrize("case", ["csrmv", "deliver", "update"])
def test_torch_compile_as_the_first_call_of_a_process(torch, tmp_path, case):
    # a first call under torch.compile failed: a type and a dtype remembered by tiarray while
    # Dynamo traced (its guards on those dicts failed on the same frame), and Taichi's start
    # (a lock Dynamo cannot trace) inside csr_delay_deliver's CPU check (2026-12-05)
    import subprocess
    import sys

    script = tmp_path / "fresh.py"
    script.write_text(FRESH_COMPILE.replace("{case}", case))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]


def test_jax_python_float_weight_under_transforms_takes_the_operand_dtype(jax):
    # with x64 on, a Python float passed through jit/grad is a weak float64: it was taken as a
    # float64 weight (a float64 result, float32 eagerly) and csr_delay_deliver refused the
    # float32 ring (2026-12-05); JAX's own promotion keeps the operand's dtype
    jnp = jax.numpy
    indptr, indices = np.array([0, 2, 3]), np.array([0, 1, 1])
    with jax.enable_x64(True):
        x = jnp.ones(2, jnp.float32)
        f = lambda w, x: sp.csrmv(w, indices, indptr, x, shape=(2, 2))  # noqa: E731
        assert (
            f(0.5, x).dtype
            == jax.jit(f)(0.5, x).dtype
            == jax.jit(lambda w, x: w * x)(0.5, x).dtype
            == jnp.float32
        )
        assert float(jax.grad(lambda w: f(w, x).sum())(0.5)) == 3.0
        ring = jnp.zeros((2, 2), jnp.float32)
        g = lambda w: sp.csr_delay_deliver(
            ring, jnp.array([True, True]), w, indices, indptr, jnp.zeros(3, jnp.int32), 0, shape=(2, 2)
        )  # noqa: E731
        assert jax.jit(g)(0.5).dtype == jnp.float32 and float(jax.jit(g)(0.5).sum()) == 1.5
        assert float(jax.grad(lambda w: g(w).sum())(0.5)) == 3.0
        fi = jnp.array([[0, 1], [1, 0]], jnp.int32)
        assert jax.jit(lambda w: sp.fcnmv(w, fi, x, shape=(2, 2)))(0.5).dtype == jnp.float32
        assert jax.jit(lambda w: sp.jitc_mv_prob_homo(x, w, 0.5, 3, shape=(2, 2)))(0.5).dtype == jnp.float32
        # an explicit float64 weight is float64 and promotes, as before
        assert sp.csrmv(jnp.float64(0.5), indices, indptr, x, shape=(2, 2)).dtype == jnp.float64
