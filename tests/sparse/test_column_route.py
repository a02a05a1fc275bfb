"""The column route of the event products' ``A @ s`` (``csrmv_cols_kernel``, ``fcnmv_cols_kernel``),
and the source route of ``event_coomv`` in both directions (``coomv_src_kernel``).

Where the column index of the structure is cached (read-only NumPy, JAX constants, torch
per version) and Taichi runs on the CPU, ``event_csrmv`` and ``event_fcnmv`` with
``transpose=False`` count the events and, when fewer than ``n / COLS_RATIO`` are active,
scatter the synapses of the active columns; otherwise they gather every row. Each case is
compared with a per-synapse float64 sum under a per-element float32 bound, at event rates
on both sides of the switch, with the weights read in the index's order (frozen), through
``perm`` (writeable) or shared (one weight). A COO list (unsorted, repeated pairs) takes the
same route through its source index: the synapses sorted by column (``A @ s``) or by row
(``A.T @ s``)."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import TAICHI_ON_CUDA, random_csr, stable_rng
from tiarray.operators.sparse import _coo, _csr, _csr_kernels, _fcn, _once

pytestmark = pytest.mark.skipif(TAICHI_ON_CUDA, reason="the column route is the CPU's")

M, N, K = 150, 203, 7  # 203 events: three full blocks of 64 and a tail of 11
RATIO = _csr_kernels.COLS_RATIO
OPS = {"fcn": "event_fcnmv_cols", "csr": "event_csrmv_cols", "coo": "event_coomv_src"}
MODULES = {"fcn": _fcn, "csr": _csr, "coo": _coo}
FAMILIES = ["fcn", "csr", "coo"]
FUNCS = {"fcn": sp.event_fcnmv, "csr": sp.event_csrmv, "coo": sp.event_coomv}


def _frozen(a):
    a = np.array(a)
    a.flags.writeable = False
    return a


class Case:
    """A matrix of one family: ``rows`` and ``cols`` of every synapse, its weights (per synapse
    in the family's layout, or one), and ``product(weights, events)`` calling the public function."""

    def __init__(self, family, rng, seed, replace=False, weights="frozen"):
        self.family = family
        if family == "fcn":
            idx = sp.fixed_num_conn(M, N, K, seed=seed, replace=replace)  # read-only
            self.rows, self.cols = np.repeat(np.arange(M), K), idx.ravel()
            self.structure = (idx,)
            w = rng.standard_normal((M, K)).astype(np.float32)
        elif family == "coo":  # any order; with replace, the first tenth of the pairs repeated last
            nnz = int(M * N * 0.04)
            self.rows, self.cols = rng.integers(0, M, nnz), rng.integers(0, N, nnz)
            if replace:
                k = nnz // 10
                self.rows[-k:], self.cols[-k:] = self.rows[:k], self.cols[:k]
            self.structure = (_frozen(self.rows.astype(np.int32)), _frozen(self.cols.astype(np.int32)))
            w = rng.standard_normal(nnz).astype(np.float32)
        else:
            w, idx, ptr, _ = random_csr(M, N, 0.04, rng, wdtype=np.float32, duplicates=replace)
            self.rows, self.cols = np.repeat(np.arange(M), np.diff(ptr)), idx
            self.structure = (_frozen(idx), _frozen(ptr))
        self.w = {"frozen": _frozen(w), "writeable": w, "shared": np.float32(0.75)}[weights]

    def product(self, w, e, **kw):
        return FUNCS[self.family](w, *self.structure, e, shape=(M, N), **kw)

    def check(self, got, e, w=None):
        """``got`` against ``A @ e`` summed per synapse in float64 (a NaN event reaches only the
        rows with a synapse on it): per row a sum of float32 products, each rounded, so per
        element ``(len + 1) eps32 sum_j |w_j e_j|``."""
        w = self.w if w is None else w
        wj = np.broadcast_to(np.asarray(w, np.float64).reshape(-1), self.rows.shape)
        terms = wj * np.asarray(e, np.float64)[self.cols]
        ref = np.zeros(M)
        np.add.at(ref, self.rows, terms)
        mag = np.zeros(M)
        np.add.at(mag, self.rows, np.abs(np.nan_to_num(terms)))
        length = np.bincount(self.rows, minlength=M)
        bound = (length + 1) * np.finfo(np.float32).eps * mag + 1e-30
        got = np.asarray(got, np.float64)
        nan = np.zeros(M, bool)
        np.logical_or.at(nan, self.rows, np.isnan(terms))
        assert np.array_equal(np.isnan(got), nan)
        err = np.abs(got[~nan] - ref[~nan])
        assert (err <= bound[~nan]).all(), (err.max(), np.argmax(err - bound[~nan]))

    def dense(self, w):
        A = np.zeros((M, N))
        np.add.at(
            A, (self.rows, self.cols), np.broadcast_to(np.asarray(w, np.float64).reshape(-1), self.rows.shape)
        )
        return A


def _events(rng, count, kind):
    """``count`` active events at random places (the first and the last among them, when
    there are enough), ``-0.0`` elsewhere for float events."""
    on = np.zeros(N, bool)
    if count:
        pick = rng.choice(np.arange(1, N - 1), count, replace=False)
        if count >= 2:
            pick[:2] = [0, N - 1]
        on[pick] = True
    if kind == "bool":
        return on
    return np.where(on, rng.standard_normal(N), -0.0).astype(np.float32)


# active counts: none, one, just below / at / above the switches (weights in the index's
# order or shared, weights through perm), half, all but none
PERM = _csr_kernels.COLS_RATIO_PERM
COUNTS = [0, 1, N // PERM - 1, N // PERM + 1, N // RATIO - 1, N // RATIO, N // RATIO + 2, N // 2, N - 2]


@pytest.mark.parametrize("count", COUNTS)
@pytest.mark.parametrize("kind", ["bool", "float32"])
@pytest.mark.parametrize("weights", ["frozen", "writeable", "shared"])
@pytest.mark.parametrize("replace", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_column_route_matches_the_sum(family, count, kind, weights, replace):
    rng = stable_rng("cols", family, count, kind, weights, replace)
    c = Case(family, rng, seed=count + 7, replace=replace, weights=weights)
    e = _events(rng, count, kind)
    c.check(c.product(c.w, e), e)


@pytest.mark.parametrize("family", FAMILIES)
def test_nan_event_reaches_its_rows(family):
    rng = stable_rng("cols-nan", family)
    c = Case(family, rng, seed=1)
    e = np.full(N, -0.0, np.float32)
    e[[5, int(c.cols[0])]] = [1.5, np.nan]  # a sparse step: the scatter
    got = c.product(c.w, e)
    assert np.isnan(got).any()
    c.check(got, e)


@pytest.mark.parametrize("family", FAMILIES)
def test_route_is_taken_only_for_cached_structure(family, monkeypatch):
    calls = []
    mod = MODULES[family]
    real = mod._OPS[OPS[family]]
    monkeypatch.setitem(mod._OPS, OPS[family], lambda *a, **k: calls.append(1) or real(*a, **k))
    _once.clear()
    rng = stable_rng("cols-route", family)
    c = Case(family, rng, seed=3, weights="shared")
    e = np.zeros(N, bool)
    e[::17] = True
    a = c.product(c.w, e)
    assert len(calls) == 1
    writeable = tuple(np.array(s) for s in c.structure)  # may change: the gather
    b = FUNCS[family](c.w, *writeable, e, shape=(M, N))
    c.product(c.w, np.ones(M, bool), transpose=True)  # a scatter over rows already (COO: the route)
    assert len(calls) == (2 if family == "coo" else 1)
    # one shared weight and bool events: both routes count in integers, bit for bit
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("family", FAMILIES)
def test_jax_closed_over_structure(jax, family):
    import jax.numpy as jnp
    from jax.test_util import check_grads

    rng = stable_rng("cols-jax", family)
    c = Case(family, rng, seed=4)
    with jax.enable_x64(True):
        js = tuple(jnp.asarray(np.asarray(s)) for s in c.structure)
        fn = FUNCS[family]
        w = rng.standard_normal(np.shape(c.w))
        e = np.where(rng.random(N) < 0.1, rng.standard_normal(N), 0.0)

        def f(w_, e_):
            return fn(w_, *js, e_, shape=(M, N))

        prims = [q.primitive.name for q in jax.make_jaxpr(f)(w, e).jaxpr.eqns]
        assert OPS[family] in prims, prims
        c.check(jax.jit(f)(w, e), e, w)
        # the weights' and events' gradients (the rules of the product), against dense ones
        A = c.dense(w)
        ct = rng.standard_normal(M)
        gw, ge = jax.grad(lambda w_, e_: jnp.dot(f(w_, e_), ct), argnums=(0, 1))(w, e)
        np.testing.assert_allclose(np.asarray(ge), A.T @ ct, rtol=1e-12, atol=1e-12)
        want = (ct[c.rows] * e[c.cols]).reshape(np.shape(w))
        np.testing.assert_allclose(np.asarray(gw), want, rtol=1e-12, atol=1e-12)
        check_grads(f, (w, e), order=2, modes=("fwd", "rev"))
        # vmap over the events: one mm launch
        E = np.where(rng.random((3, N)) < 0.1, 1.0, 0.0)
        vf = jax.vmap(lambda e_: f(w, e_))
        mm = {"fcn": "event_fcnmm", "csr": "event_csrmm", "coo": "event_coomm"}[family]
        assert mm in [q.primitive.name for q in jax.make_jaxpr(vf)(E).jaxpr.eqns]
        np.testing.assert_allclose(np.asarray(vf(E)), E @ A.T, rtol=1e-12, atol=1e-12)
        # weights closed over as well: read in the index's order
        jw = jnp.asarray(w.astype(np.float32))
        ev = rng.random(N) < 0.05
        c.check(jax.jit(lambda e_: fn(jw, *js, e_, shape=(M, N)))(ev), ev, np.asarray(jw))


@pytest.mark.parametrize("family", FAMILIES)
def test_torch_follows_in_place_changes_and_gradients(torch, family):
    rng = stable_rng("cols-torch", family)
    c = Case(family, rng, seed=5)
    ts = tuple(torch.as_tensor(np.array(s)) for s in c.structure)
    fn = FUNCS[family]
    w = torch.tensor(rng.standard_normal(np.shape(c.w)), requires_grad=True)
    e = torch.tensor(np.where(rng.random(N) < 0.1, rng.standard_normal(N), 0.0), requires_grad=True)
    c.check(fn(w, *ts, e, shape=(M, N)).detach().numpy(), e.detach().numpy(), w.detach().numpy())
    assert torch.autograd.gradcheck(lambda w_, e_: fn(w_, *ts, e_, shape=(M, N)), (w, e))
    cols = ts[1 if family == "coo" else 0]
    cols.view(-1)[:M] = 0  # a rewiring in place (bumps the version): the index is built again
    c.cols = cols.numpy().ravel().copy()
    c.check(fn(w, *ts, e, shape=(M, N)).detach().numpy(), e.detach().numpy(), w.detach().numpy())


def test_cached_index_is_released_with_its_structure():
    """The column index (tens of MB for a large network) lives as long as the arrays it was
    built from, not until 255 other entries push it out of the cache."""
    import gc
    import weakref

    _once.clear()
    rng = stable_rng("cols-release")
    c = Case("csr", rng, seed=6)
    e = np.zeros(N, bool)
    e[::50] = True
    c.product(c.w, e)  # builds and caches the column index and the reordered weights
    values = [entry[2] for entry in _once._cache.values()]
    held = [
        weakref.ref(v)
        for x in values
        for v in (x if isinstance(x, tuple) else (x,))
        if isinstance(v, np.ndarray)
    ]
    assert len(held) >= 4  # ptr_t, perm, rows_t; the weights in the index's order
    del c, values
    gc.collect()
    # any later call drops the entries of arrays that died; this one also replaces the
    # arrays the kernel's launch context keeps from the last call
    other = Case("csr", rng, seed=7)
    other.product(other.w, e)
    assert all(r() is None for r in held)


@pytest.mark.parametrize("count", [0, 1, M // PERM + 1, M // RATIO - 1, M // RATIO + 2, M // 2, M - 1])
@pytest.mark.parametrize("kind", ["bool", "float32"])
@pytest.mark.parametrize("weights", ["frozen", "writeable", "shared"])
def test_coo_source_route_transposed(count, kind, weights):
    """``A.T @ s`` of a COO list through its source index (the synapses sorted by row), against
    a per-synapse float64 sum: per column ``(len + 1) eps32 sum_j |w_j e_j|``."""
    rng = stable_rng("coo-T", count, kind, weights)
    c = Case("coo", rng, seed=count, replace=True, weights=weights)
    on = np.zeros(M, bool)
    on[rng.choice(M, count, replace=False)] = True
    e = on if kind == "bool" else np.where(on, rng.standard_normal(M), -0.0).astype(np.float32)
    got = np.asarray(c.product(c.w, e, transpose=True), np.float64)
    wj = np.broadcast_to(np.asarray(c.w, np.float64).reshape(-1), c.rows.shape)
    terms = wj * np.asarray(e, np.float64)[c.rows]
    ref, mag = np.zeros(N), np.zeros(N)
    np.add.at(ref, c.cols, terms)
    np.add.at(mag, c.cols, np.abs(terms))
    bound = (np.bincount(c.cols, minlength=N) + 1) * np.finfo(np.float32).eps * mag + 1e-30
    assert (np.abs(got - ref) <= bound).all()
