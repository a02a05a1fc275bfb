"""Plasticity updates on spikes (CSR, fixed-number, dense weights) on every framework against a
NumPy reference; the column index and its cache; what the updates read; bad input."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _family_cases import rng_for
from _sparse_helpers import CupyFW, JaxFW, NumpyFW, TorchFW, host_call, parallel_mode, random_csr
from tiarray.operators.sparse import _once

M, N = 26, 19


def _spikes(n, kind, rng):
    s = rng.random(n) < 0.3
    if kind == "bool":
        return s
    return (s * rng.uniform(0.5, 2.0, n)).astype(kind)


def _clip(v, lo, hi):
    return np.clip(v, -np.inf if lo is None else lo, np.inf if hi is None else hi)


def make(fn, dtype, skind, clip, bounds=None):
    """(args, kwargs, reference) of one update (``bounds``: ``(w_min, w_max)`` instead of the
    usual ones when ``clip``)."""
    rng = rng_for(f"{fn}-{dtype}-{skind}-{clip}")
    lo, hi = (bounds or (-0.2, 0.6)) if clip else (None, None)
    kw = {} if not clip else {"w_min": lo, "w_max": hi}
    pre = fn.endswith("pre")
    s = _spikes(M if pre else N, dtype if skind == "float" else "bool", rng)
    tr = rng.standard_normal(N if pre else M).astype(dtype) * 0.3
    sf = s.astype(np.float64)
    if fn.startswith("csr"):
        w, idx, ptr, _ = random_csr(M, N, 0.3, rng, wdtype=dtype)
        rows = np.repeat(np.arange(M), np.diff(ptr))
        spk, other = (sf[rows], tr[idx]) if pre else (sf[idx], tr[rows])
        ref = w.astype(np.float64).copy()
        up = spk != 0
        ref[up] = _clip(ref[up] + spk[up] * other[up], lo, hi)
        return (w, idx, ptr, s, tr), dict(shape=(M, N), **kw), ref
    if fn.startswith("fcn"):
        idx = sp.fixed_num_conn(M, N, 4, seed=int(rng.integers(1 << 30)))
        w = rng.standard_normal((M, 4)).astype(dtype) * 0.3
        rows = np.repeat(np.arange(M), 4).reshape(M, 4)
        spk, other = (sf[rows], tr[idx]) if pre else (sf[idx], tr[rows])
        ref = w.astype(np.float64).copy()
        up = spk != 0
        ref[up] = _clip(ref[up] + spk[up] * other[up], lo, hi)
        return (w, idx, s, tr), dict(shape=(M, N), **kw), ref
    W = rng.standard_normal((M, N)).astype(dtype) * 0.3
    ref = W.astype(np.float64).copy()
    if pre:
        ref[s != 0] = _clip(ref[s != 0] + sf[s != 0, None] * tr[None, :].astype(np.float64), lo, hi)
    else:
        ref[:, s != 0] = _clip(ref[:, s != 0] + tr[:, None].astype(np.float64) * sf[None, s != 0], lo, hi)
    return (W, s, tr), kw, ref


FNS = [f"{a}_update_on_{b}" for a in ("csr", "fcn", "dense") for b in ("pre", "post")]
CASES = [
    (f, d, k, c)
    for f in FNS
    for d in ("float32", "float64")
    for k in ("bool", "float")
    for c in (False, True)
]
IDS = ["-".join(map(str, c)) for c in CASES]


def check(fw, case, bounds=None):
    fn, dtype, skind, clip = case
    args, kw, ref = make(*case, bounds=bounds)
    keep = [np.array(a) for a in args]
    with fw.ctx():
        got = fw.np(getattr(sp, fn)(*[fw.arr(a) for a in args], **kw))
    assert got.dtype == np.dtype(dtype) and got.shape == ref.shape
    # one rounding per updated weight (the sum), then an exact clip
    np.testing.assert_allclose(
        got, ref, rtol=2 * np.finfo(dtype).eps, atol=2 * np.finfo(dtype).eps, equal_nan=True
    )
    for a, b in zip(args, keep):  # the inputs are not changed
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_numpy(case):
    check(NumpyFW(), case)


# as np.clip (and jnp.clip, torch.clamp): a NaN bound gives NaN (it was ignored before
# 2026-12-05), crossed bounds give w_max
BOUNDS = [(np.nan, None), (None, np.nan), (np.nan, np.nan), (0.3, -0.1)]


@pytest.mark.parametrize("bounds", BOUNDS, ids=repr)
@pytest.mark.parametrize("fn", FNS)
def test_bounds_clip_as_numpy(fn, bounds):
    check(NumpyFW(), (fn, "float64", "bool", True), bounds=bounds)
    check(NumpyFW(), (fn, "float32", "float", True), bounds=bounds)


@pytest.mark.parametrize(
    "fn", ["csr_update_on_pre", "csr_update_on_post", "fcn_update_on_pre", "fcn_update_on_post"]
)
def test_one_synapse_with_its_own_weight(fn):
    # a (1,) weight array with nnz = 1 is one weight per synapse (it was refused as a shared weight)
    s, tr = np.ones(1, bool), np.full(1, 0.25)
    if fn.startswith("csr"):
        got = getattr(sp, fn)(np.array([1.0]), np.array([0]), np.array([0, 1]), s, tr, shape=(1, 1))
        np.testing.assert_array_equal(got, [1.25])
    else:
        for w in (np.array([1.0]), np.array([[1.0]])):
            got = getattr(sp, fn)(w, np.array([[0]]), s, tr, shape=(1, 1))
            np.testing.assert_array_equal(got, [[1.25]])
    want = r"\(nnz,\) = \(1,\)" if fn.startswith("csr") else r"\(shape\[0\], k\) = \(1, 1\)"
    with pytest.raises(ValueError, match=rf"must hold one weight per synapse, shape {want}, got \(\)"):
        getattr(sp, fn)(
            np.array(1.0),
            *(([np.array([0]), np.array([0, 1])]) if fn.startswith("csr") else [np.array([[0]])]),
            s,
            tr,
            shape=(1, 1),
        )


@pytest.mark.parametrize(
    "case", [c for c in CASES if c[1] == "float64"], ids=[i for i, c in zip(IDS, CASES) if c[1] == "float64"]
)
def test_numpy_parallel(case):
    with parallel_mode("parallel"):
        import tiarray as ta

        old = ta.set_serial_threshold(0)
        try:
            check(NumpyFW(), case)
        finally:
            ta.set_serial_threshold(old)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_torch(torch, case):
    check(TorchFW(torch), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_jax(jax, case):
    check(JaxFW(jax), case)


def _float_inputs(fn, args, kw):
    """{public argument name: value} of the update's float inputs (spikes as floats)."""
    pre = fn.endswith("pre")
    return {"weights": args[0], "pre_spikes" if pre else "post_spikes": args[-2],
            "post_trace" if pre else "pre_trace": args[-1], "w_max": np.float64(kw["w_max"])}  # fmt: skip


def _call_with(fn, args, kw, name, x):
    """``fn`` with its argument ``name`` replaced by ``x``."""
    pre = fn.endswith("pre")
    pos = {"weights": 0, "pre_spikes" if pre else "post_spikes": -2, "post_trace" if pre else "pre_trace": -1}
    a, k = list(args), dict(kw)
    if name in pos:
        a[pos[name]] = x
    else:
        k[name] = x
    return getattr(sp, fn)(*a, **k)


@pytest.mark.parametrize("fn", FNS)
def test_jax_jit_and_not_differentiable(jax, fn):
    """The result under jit; a gradient asked with respect to any input (also through a jitted
    function, where the rule runs outside the call) is a TypeError naming the public
    function and argument (it named the shared Operator and its kernel's parameter before
    2026-12-05: 'dense_update_on_spikes', 'trace')."""
    args, kw, ref = make(fn, "float64", "float", True)
    with jax.enable_x64(True):
        ja = [jax.numpy.asarray(a) for a in args]
        got = jax.jit(lambda *a: getattr(sp, fn)(*a, **kw))(*ja)
        np.testing.assert_allclose(np.asarray(got), ref, rtol=1e-15, atol=1e-15)
        for name, x in _float_inputs(fn, ja, kw).items():

            def loss(x_, name=name):
                return _call_with(fn, ja, kw, name, x_).sum()

            for g in (jax.grad(loss), jax.grad(jax.jit(loss))):
                with pytest.raises(TypeError, match=rf"^{fn}: .* gradient with respect to '{name}'"):
                    g(jax.numpy.asarray(x))


@pytest.mark.parametrize("fn", FNS)
def test_torch_not_differentiable(torch, fn):
    args, kw, ref = make(fn, "float64", "float", False)
    kw = dict(kw, w_max=np.inf)
    ta = [torch.as_tensor(np.array(a)) for a in args]
    for name, x in _float_inputs(fn, ta, kw).items():
        xg = torch.tensor(np.asarray(x), requires_grad=True)
        with pytest.raises(TypeError, match=rf"^{fn}: .* gradient with respect to '{name}'"):
            _call_with(fn, ta, kw, name, xg)
    np.testing.assert_allclose(getattr(sp, fn)(*ta, **kw).cpu().numpy(), ref)


def test_updates_read_only_the_spiking_neurons_synapses():
    """Trace entries that no synapse of a spiking neuron reads may be NaN: they never show."""
    rng = np.random.default_rng(4)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng)
    rows = np.repeat(np.arange(M), np.diff(ptr))
    s = rng.random(M) < 0.2
    tr = rng.standard_normal(N)
    unread = np.ones(N, bool)
    unread[idx[s[rows]]] = False
    tr[unread] = np.nan
    assert np.isfinite(sp.csr_update_on_pre(w, idx, ptr, s, tr, shape=(M, N))).all()
    sc = rng.random(N) < 0.2
    trp = rng.standard_normal(M)
    unread = np.ones(M, bool)
    unread[rows[sc[idx]]] = False
    trp[unread] = np.nan
    assert np.isfinite(sp.csr_update_on_post(w, idx, ptr, sc, trp, shape=(M, N))).all()


def test_column_index():
    rng = np.random.default_rng(6)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng)
    ptr_t, perm, rows_t = sp.column_index(idx, ptr, shape=(M, N))
    rows = np.repeat(np.arange(M), np.diff(ptr))
    np.testing.assert_array_equal(np.diff(ptr_t), np.bincount(idx, minlength=N))
    for c in range(N):
        seg = perm[ptr_t[c] : ptr_t[c + 1]]
        np.testing.assert_array_equal(seg, np.nonzero(idx == c)[0])  # increasing positions
        np.testing.assert_array_equal(rows_t[ptr_t[c] : ptr_t[c + 1]], rows[seg])


def test_column_index_cache_cannot_go_stale(monkeypatch):
    """Read-only NumPy connectivity is indexed once; writeable arrays on every call (a rewiring
    in place is seen)."""
    rng = np.random.default_rng(7)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng, duplicates=False)
    _once.clear()
    built = []
    from tiarray.operators.sparse import _index

    real = _index._COLIDX

    class Counting:
        def __call__(self, *a, **k):
            built.append(1)
            return real(*a, **k)

    monkeypatch.setattr(_index, "_COLIDX", Counting())
    sc = np.ones(N, bool)
    tr = np.ones(M)
    fro_i, fro_p = idx.copy(), ptr.copy()
    fro_i.flags.writeable = fro_p.flags.writeable = False
    for _ in range(3):
        sp.csr_update_on_post(w, fro_i, fro_p, sc, tr, shape=(M, N))
    assert len(built) == 1
    mut = idx.copy()
    a = sp.csr_update_on_post(w, mut, ptr, np.arange(N) == 0, tr, shape=(M, N))
    mut[:] = 0  # every synapse now in column 0
    b = sp.csr_update_on_post(w, mut, ptr, np.arange(N) == 0, tr, shape=(M, N))
    np.testing.assert_allclose(a - w, np.where(idx == 0, 1.0, 0.0))
    np.testing.assert_allclose(b - w, 1.0)
    assert len(built) == 3


def test_torch_column_index_follows_in_place_changes(torch):
    rng = np.random.default_rng(8)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng, duplicates=False)
    ti_, tp, tw = torch.as_tensor(idx.copy()), torch.as_tensor(ptr), torch.as_tensor(w)
    s0 = torch.as_tensor(np.arange(N) == 0)
    tr = torch.ones(M, dtype=torch.float64)
    a = sp.csr_update_on_post(tw, ti_, tp, s0, tr, shape=(M, N)).cpu().numpy()
    np.testing.assert_allclose(a - w, np.where(idx == 0, 1.0, 0.0))
    ti_.zero_()  # bumps the version counter
    b = sp.csr_update_on_post(tw, ti_, tp, s0, tr, shape=(M, N)).cpu().numpy()
    np.testing.assert_allclose(b - w, 1.0)


def test_jax_column_index_constant_or_traced(jax):
    """Closed-over connectivity: the column index is built at trace time (a constant, no kernel in
    the computation); traced connectivity: built inside the computation, every call."""
    rng = np.random.default_rng(9)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng)
    s = rng.random(N) < 0.3
    tr = rng.standard_normal(M)
    want = host_call(sp.csr_update_on_post, w, idx, ptr, s, tr, shape=(M, N))
    with jax.enable_x64(True):
        jidx, jptr = jax.numpy.asarray(idx), jax.numpy.asarray(ptr)

        def f(w_):
            return sp.csr_update_on_post(w_, jidx, jptr, s, tr, shape=(M, N))

        prims = [e.primitive.name for e in jax.make_jaxpr(f)(w).jaxpr.eqns]
        assert "column_index" not in prims and "csr_update_on_post" in prims, prims
        np.testing.assert_allclose(np.asarray(jax.jit(f)(w)), want, rtol=1e-15)

        def g(w_, i_, p_):
            return sp.csr_update_on_post(w_, i_, p_, s, tr, shape=(M, N))

        prims = [e.primitive.name for e in jax.make_jaxpr(g)(w, idx, ptr).jaxpr.eqns]
        assert "column_index" in prims, prims
        np.testing.assert_allclose(np.asarray(jax.jit(g)(w, idx, ptr)), want, rtol=1e-15)
        # garbage connectivity under jit: skipped, never out of bounds
        bad = idx.copy()
        bad[::3] = 10**6
        assert np.isfinite(np.asarray(jax.jit(g)(w, bad, ptr))).all()


def test_errors():
    rng = np.random.default_rng(10)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng)
    s, tr = np.ones(M, bool), np.ones(N)
    with pytest.raises(
        ValueError, match=r"csr_update_on_pre\(\): argument 'weights' must hold one weight per synapse"
    ):
        sp.csr_update_on_pre(np.float64(0.5), idx, ptr, s, tr, shape=(M, N))
    with pytest.raises(
        ValueError, match=r"argument 'pre_spikes' must have length m \(rows, presynaptic\) = 26, got 19"
    ):
        sp.csr_update_on_pre(w, idx, ptr, tr.astype(bool), tr, shape=(M, N))
    with pytest.raises(
        ValueError, match=r"argument 'pre_trace' must have length m \(rows, presynaptic\) = 26, got 19"
    ):
        sp.csr_update_on_post(w, idx, ptr, np.ones(N, bool), tr, shape=(M, N))
    with pytest.raises(TypeError, match=r"argument 'post_trace' must be float32 or float64, got bool"):
        sp.csr_update_on_pre(w, idx, ptr, s, tr.astype(bool), shape=(M, N))
    with pytest.raises(TypeError, match=r"argument 'w_max' must be a float32 or float64 scalar"):
        sp.csr_update_on_pre(w, idx, ptr, s, tr, shape=(M, N), w_max=np.int32(1))
    with pytest.raises(ValueError, match=r"argument 'w_min' must be a scalar"):
        sp.csr_update_on_pre(w, idx, ptr, s, tr, shape=(M, N), w_min=np.zeros(3))
    with pytest.raises(
        ValueError, match=r"fcn_update_on_post\(\): argument 'weights' must hold one weight per synapse"
    ):
        sp.fcn_update_on_post(
            np.float32(1), sp.fixed_num_conn(M, N, 3, seed=1), np.ones(N, bool), np.ones(M), shape=(M, N)
        )
    with pytest.raises(
        ValueError, match=r"dense_update_on_post\(\): argument 'post_spikes' must have length n"
    ):
        sp.dense_update_on_post(np.zeros((M, N)), np.ones(M, bool), np.ones(M))
    bad = idx.copy()
    bad[2] = N
    with pytest.raises(IndexError, match="column index"):
        sp.csr_update_on_post(w, bad, ptr, np.ones(N, bool), np.ones(M), shape=(M, N))
    W = np.zeros((M, N))
    with pytest.raises(
        ValueError, match=r"dense_update_on_pre\(\): argument 'pre_spikes' must have length m"
    ):
        sp.dense_update_on_pre(W, np.ones(N, bool), np.ones(N))
    with pytest.raises(
        ValueError, match=r"dense_update_on_pre\(\): argument 'post_trace' must have length n"
    ):
        sp.dense_update_on_pre(W, np.ones(M, bool), np.ones(M))
    with pytest.raises(ValueError, match=r"dense_update_on_pre\(\): argument 'weights' must be a 2-D matrix"):
        sp.dense_update_on_pre(W[0], np.ones(M, bool), np.ones(N))
    # a trace is not a spike vector: no pointer to an event_ variant
    with pytest.raises(
        TypeError,
        match=r"dense_update_on_pre\(\): argument 'post_trace' must be float32 or float64, got bool$",
    ):
        sp.dense_update_on_pre(W, np.ones(M, bool), np.ones(N, bool))
    with pytest.raises(
        TypeError, match=r"dense_update_on_pre\(\): argument 'pre_spikes' must be bool, float32"
    ):
        sp.dense_update_on_pre(W, np.ones(M, np.int32), np.ones(N))
    conn = sp.fixed_num_conn(M, N, 3, seed=2)
    with pytest.raises(
        ValueError, match=r"fcn_update_on_pre\(\): argument 'weights' must hold one weight per synapse, "
        r"shape \(shape\[0\], k\) = \(26, 3\), got \(\)"
    ):  # fmt: skip
        sp.fcn_update_on_pre(np.float64(0.5), conn, np.ones(M, bool), np.ones(N), shape=(M, N))
    with pytest.raises(ValueError, match=r"fcn_update_on_pre\(\): argument 'post_trace' must have length n"):
        sp.fcn_update_on_pre(np.zeros((M, 3)), conn, np.ones(M, bool), np.ones(M), shape=(M, N))
    with pytest.raises(IndexError, match=r"fcn_update_on_pre\(\): argument 'indices' holds column index"):
        sp.fcn_update_on_pre(np.zeros((M, 3)), conn + N, np.ones(M, bool), np.ones(N), shape=(M, N))
    with pytest.raises(
        TypeError, match=r"fcn_update_on_pre\(\): argument 'w_min' must be a float32 or float64"
    ):
        sp.fcn_update_on_pre(
            np.zeros((M, 3)), conn, np.ones(M, bool), np.ones(N), shape=(M, N), w_min=np.int32(0)
        )


@pytest.mark.parametrize("fn", FNS)
def test_torch_compile(torch, fn):
    """Every update under ``torch.compile(fullgraph=True)``, float32 with clipping, as eagerly
    and as the reference."""
    torch._dynamo.reset()  # one code object for every update: no recompile limit across tests
    args, kw, ref = make(fn, "float32", "float", True)
    targs = [torch.as_tensor(np.array(a)) for a in args]
    eager = getattr(sp, fn)(*targs, **kw)
    f = torch.compile(lambda *a: getattr(sp, fn)(*a, **kw) * 1, fullgraph=True, backend="aot_eager")
    got = f(*targs).cpu().numpy()
    assert got.dtype == np.float32 and got.shape == ref.shape
    np.testing.assert_array_equal(got, eager.cpu().numpy())
    np.testing.assert_allclose(got, ref, rtol=2 * np.finfo(np.float32).eps, atol=2 * np.finfo(np.float32).eps)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_cupy(cupy, case):
    check(CupyFW(cupy), case)


def test_jax_fixed_number_on_post_compiles_again(jax):
    # the column index of a concrete (m, k) index array was built from its flattened view,
    # a tracer under jit, and cached under the array: every later call, jitted or eager,
    # raised UnexpectedTracerError (2026-12-05)
    jnp = jax.numpy
    rng = np.random.default_rng(21)
    idx = sp.fixed_num_conn(M, N, 3, seed=4)
    indices = jnp.asarray(idx)
    w = rng.standard_normal((M, 3))
    s = rng.random(N) < 0.4
    tr = rng.standard_normal(M)
    rows = np.repeat(np.arange(M), 3).reshape(M, 3)
    ref = w + np.where(s[idx], tr[rows], 0.0)
    with jax.enable_x64(True):
        f = lambda w_: sp.fcn_update_on_post(w_, indices, jnp.asarray(s), jnp.asarray(tr), shape=(M, N))  # noqa: E731
        for g in (jax.jit(f), jax.jit(lambda w_: f(w_) + 0), f):
            np.testing.assert_allclose(np.asarray(g(jnp.asarray(w))), ref, rtol=1e-12)
