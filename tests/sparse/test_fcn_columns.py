"""The column route of ``event_fcnmv``'s ``A @ s`` (``_fcn_kernels.fcnmv_cols_kernel``).

Where the column index of ``indices`` is cached (read-only NumPy, JAX constants, torch per
version) and Taichi runs on the CPU, ``A @ s`` counts the events and, when fewer than
``n / COLS_RATIO`` are active, scatters the synapses of the active columns; otherwise it
gathers every row. Each case compares with a float64 dense reference under a per-element
float32 bound, at event rates on both sides of the switch, with the weights read in the
index's order (frozen), through ``perm`` (writeable) or shared (one weight)."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import TAICHI_ON_CUDA, stable_rng
from tiarray.operators.sparse import _fcn, _fcn_kernels, _once

pytestmark = pytest.mark.skipif(TAICHI_ON_CUDA, reason="the column route is the CPU's")

M, N, K = 150, 203, 7  # 203 events: three full blocks of 64 and a tail of 11
RATIO = _fcn_kernels.COLS_RATIO


def _dense(w, idx, n):
    m, k = idx.shape
    A = np.zeros((m, n))
    np.add.at(
        A,
        (np.repeat(np.arange(m), k), idx.ravel()),
        np.broadcast_to(np.asarray(w, np.float64), idx.shape).ravel(),
    )
    return A


def _check(got, w, idx, e):
    """``got`` against ``A @ e`` summed per synapse in float64 (a NaN event reaches only the
    rows with a synapse on it): the sum of ``k`` float32 products, each rounded, so per
    element ``(k + 1) eps32 sum_j |w_j e_j|``."""
    terms = np.broadcast_to(np.asarray(w, np.float64), idx.shape) * np.asarray(e, np.float64)[idx]
    ref = terms.sum(1)
    bound = (K + 1) * np.finfo(np.float32).eps * np.abs(np.nan_to_num(terms)).sum(1) + 1e-30
    got = np.asarray(got, np.float64)
    assert np.array_equal(np.isnan(got), np.isnan(ref))
    fin = ~np.isnan(ref)
    err = np.abs(got[fin] - ref[fin])
    assert (err <= bound[fin]).all(), (err.max(), np.argmax(err - bound[fin]))


def _events(rng, count, kind):
    """``count`` active events at random places (and the first and last, when there are
    enough), ``-0.0`` elsewhere for float events."""
    on = np.zeros(N, bool)
    if count:
        on[rng.choice(N, count, replace=False)] = True
        if count >= 2:
            on[[0, N - 1]] = True
            on[rng.choice(np.nonzero(on)[0], 2, replace=False)] = False
            on[[0, N - 1]] = True
    if kind == "bool":
        return on
    e = np.where(on, rng.standard_normal(N), -0.0).astype(np.float32)
    return e


def _frozen(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


# active counts: none, one, just below / at / above the switch, half, all
COUNTS = [0, 1, 13, N // RATIO - 1, N // RATIO, N // RATIO + 2, N // 2, N]


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("kind", ["bool", "float32"])
@pytest.mark.parametrize("weights", ["frozen", "writeable", "shared"])
@pytest.mark.parametrize("replace", [False, True])
def test_column_route_matches_dense(count, kind, weights, replace):
    rng = stable_rng("cols", count, kind, weights, replace)
    idx = sp.fixed_num_conn(M, N, K, seed=count + 7, replace=replace)  # read-only: the column route
    w = rng.standard_normal((M, K)).astype(np.float32)
    w = {"frozen": _frozen(w), "writeable": w, "shared": np.float32(0.75)}[weights]
    e = _events(rng, count, kind)
    _check(sp.event_fcnmv(w, idx, e, shape=(M, N)), w, idx, e)


def test_nan_event_reaches_its_rows():
    rng = stable_rng("cols-nan")
    idx = sp.fixed_num_conn(M, N, K, seed=1)
    w = _frozen(rng.standard_normal((M, K)).astype(np.float32))
    e = np.full(N, -0.0, np.float32)
    e[[5, 130]] = [1.5, np.nan]  # a sparse step: the scatter
    got = sp.event_fcnmv(w, idx, e, shape=(M, N))
    assert np.isnan(got).any()
    _check(got, w, idx, e)


def test_route_is_taken_only_for_cached_indices(monkeypatch):
    calls = []
    real = _fcn._OPS["event_fcnmv_cols"]
    monkeypatch.setitem(_fcn._OPS, "event_fcnmv_cols", lambda *a, **k: calls.append(1) or real(*a, **k))
    _once.clear()
    idx = sp.fixed_num_conn(M, N, K, seed=3)
    w = np.float32(1.0)
    e = np.zeros(N, bool)
    e[::17] = True
    a = sp.event_fcnmv(w, idx, e, shape=(M, N))
    assert len(calls) == 1
    b = sp.event_fcnmv(w, idx.copy(), e, shape=(M, N))  # writeable: may change, the gather
    sp.event_fcnmv(w, idx, np.ones(M, bool), shape=(M, N), transpose=True)  # a scatter already
    assert len(calls) == 1
    # one shared weight and bool events: both routes count in integers, bit for bit
    np.testing.assert_array_equal(a, b)


def test_jax_closed_over_indices(jax):
    import jax.numpy as jnp
    from jax.test_util import check_grads

    rng = stable_rng("cols-jax")
    idx = np.asarray(sp.fixed_num_conn(M, N, K, seed=4))
    with jax.enable_x64(True):
        ji = jnp.asarray(idx)
        w = rng.standard_normal((M, K))
        e = np.where(rng.random(N) < 0.1, rng.standard_normal(N), 0.0)

        def f(w_, e_):
            return sp.event_fcnmv(w_, ji, e_, shape=(M, N))

        prims = [q.primitive.name for q in jax.make_jaxpr(f)(w, e).jaxpr.eqns]
        assert "event_fcnmv_cols" in prims, prims
        _check(jax.jit(f)(w, e), w, idx, e)
        # the weights' and events' gradients (the rules of event_fcnmv), against the dense ones
        A = _dense(w, idx, N)
        ct = rng.standard_normal(M)
        gw, ge = jax.grad(lambda w_, e_: jnp.dot(f(w_, e_), ct), argnums=(0, 1))(w, e)
        np.testing.assert_allclose(np.asarray(ge), A.T @ ct, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(np.asarray(gw), ct[:, None] * e[idx], rtol=1e-12, atol=1e-12)
        check_grads(f, (w, e), order=2, modes=("fwd", "rev"))
        # vmap over the events: one event_fcnmm launch
        E = np.where(rng.random((3, N)) < 0.1, 1.0, 0.0)
        vf = jax.vmap(lambda e_: f(w, e_))
        assert "event_fcnmm" in [q.primitive.name for q in jax.make_jaxpr(vf)(E).jaxpr.eqns]
        np.testing.assert_allclose(np.asarray(vf(E)), E @ A.T, rtol=1e-12, atol=1e-12)
        # frozen weights closed over as well: read in the index's order
        jw = jnp.asarray(w.astype(np.float32))
        ev = rng.random(N) < 0.05
        _check(jax.jit(lambda e_: sp.event_fcnmv(jw, ji, e_, shape=(M, N)))(ev), np.asarray(jw), idx, ev)


def test_torch_follows_in_place_changes_and_gradients(torch):
    rng = stable_rng("cols-torch")
    idx = np.array(sp.fixed_num_conn(M, N, K, seed=5))
    ti_ = torch.as_tensor(idx)
    w = torch.tensor(rng.standard_normal((M, K)), requires_grad=True)
    e = torch.tensor(np.where(rng.random(N) < 0.1, rng.standard_normal(N), 0.0), requires_grad=True)
    y = sp.event_fcnmv(w, ti_, e, shape=(M, N))
    _check(y.detach().numpy(), w.detach().numpy(), idx, e.detach().numpy())
    assert torch.autograd.gradcheck(lambda w_, e_: sp.event_fcnmv(w_, ti_, e_, shape=(M, N)), (w, e))
    ti_[:, 0] = 0  # a rewiring in place (bumps the version): the column index is built again
    y2 = sp.event_fcnmv(w, ti_, e, shape=(M, N))
    _check(y2.detach().numpy(), w.detach().numpy(), ti_.numpy(), e.detach().numpy())
