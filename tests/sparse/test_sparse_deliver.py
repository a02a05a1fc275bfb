"""The push form of delays (csr_delay_deliver): an arrival-ring simulation against the pull
form and a per-step reference, gradients against dense references, the ring updated in
place under jax.jit, and bad input."""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import NONDET_TOL, frozen, parallel_mode, random_csr

M, N, L = 30, 20, 5


@pytest.fixture(scope="module")
def net():
    rng = np.random.default_rng(5)
    w, idx, ptr, _ = random_csr(M, N, 0.3, rng)
    delays = rng.integers(0, L, idx.shape[0]).astype(np.int32)
    return w, idx, ptr, delays, np.repeat(np.arange(M), np.diff(ptr))


def _deliver_ref(ring, events, w, idx, rows, delays, t):
    out = np.array(ring, dtype=np.float64, copy=True)
    wb = np.broadcast_to(w, idx.shape)
    for j in range(idx.shape[0]):
        e = float(events[rows[j]])
        if e != 0:
            out[(t + delays[j]) % ring.shape[0], idx[j]] += wb[j] * e
    return out


# "writeable": arrays that may change; "frozen": read-only arrays (checked once); "one": a
# single weight (the kernel's homogeneous path).
@pytest.mark.parametrize("arrays", ["writeable", "frozen", "one"])
@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_arrival_ring_simulation_equals_the_pull_form(net, mode, arrays):
    """Read slot t after delivering step t, clear it: the input of each step is the pull
    form's product over the spike history (event_csrmv_delayed)."""
    w, idx, ptr, delays, rows = net
    if arrays == "one":
        w = np.float64(0.75)
    if arrays != "writeable":
        idx, ptr, delays = frozen(idx, ptr, delays)
    rng = np.random.default_rng(0)
    steps = 23
    spikes = rng.random((steps, M)) < 0.15
    ring = np.zeros((L, N))
    hist = np.zeros((L, M), bool)
    with parallel_mode(mode):
        for t in range(steps):
            new = sp.csr_delay_deliver(ring, spikes[t], w, idx, ptr, delays, t, shape=(M, N))
            np.testing.assert_allclose(
                new, _deliver_ref(ring, spikes[t], w, idx, rows, delays, t), rtol=1e-12
            )
            assert not np.shares_memory(new, ring)
            ring = new
            hist[t % L] = spikes[t]
            pulled = sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(M, N))
            # the same sums in another order: a few ulps
            np.testing.assert_allclose(ring[t % L], pulled, rtol=1e-12, atol=1e-12)
            ring[t % L] = 0.0


def test_float_events_and_traced_t_negative(net):
    w, idx, ptr, delays, rows = net
    rng = np.random.default_rng(2)
    ev = np.where(rng.random(M) < 0.3, rng.standard_normal(M), 0.0)
    ring = rng.standard_normal((L, N))
    for t in (0, 7, -3):
        got = sp.csr_delay_deliver(ring, ev, w, idx, ptr, delays, t, shape=(M, N))
        np.testing.assert_allclose(
            got, _deliver_ref(ring, ev, w, idx, rows, delays, t), rtol=1e-12, atol=1e-12
        )


def test_bad_input(net):
    w, idx, ptr, delays, _ = net
    ring = np.zeros((L, N))
    ev = np.zeros(M, bool)
    with pytest.raises(IndexError, match="csr_delay_deliver.*delays"):
        sp.csr_delay_deliver(ring, ev, w, idx, ptr, delays + L, 0, shape=(M, N))
    with pytest.raises(
        ValueError, match=r"csr_delay_deliver\(\): argument 'ring' must have shape \(L, shape\[1\]\)"
    ):
        sp.csr_delay_deliver(np.zeros((L, N + 1)), ev, w, idx, ptr, delays, 0, shape=(M, N))
    with pytest.raises(
        TypeError, match=r"argument 'ring' must be float32 or float64 of the dtype of 'weights'"
    ):
        sp.csr_delay_deliver(ring.astype(np.float32), ev, w, idx, ptr, delays, 0, shape=(M, N))
    with pytest.raises(ValueError, match=r"argument 'events' must have shape \(shape\[0\],\) = \(30,\)"):
        sp.csr_delay_deliver(ring, np.zeros(M + 1, bool), w, idx, ptr, delays, 0, shape=(M, N))
    with pytest.raises(ValueError, match="one delay per synapse"):
        sp.csr_delay_deliver(ring, ev, w, idx, ptr, delays[:-1], 0, shape=(M, N))
    with pytest.raises(TypeError, match="'t' must be an integer"):
        sp.csr_delay_deliver(ring, ev, w, idx, ptr, delays, np.float32(1.0), shape=(M, N))


@pytest.mark.jax
def test_jax_scan_in_place_grads_and_bad_delays_skipped(net):
    import jax

    with jax.enable_x64(True):
        _jax_checks(net)


def _jax_checks(net):
    import jax
    import jax.numpy as jnp
    from jax.test_util import check_grads

    w, idx, ptr, delays, rows = net
    rng = np.random.default_rng(3)
    spikes = rng.random((12, M)) < 0.2

    def step(ring, xs):
        s, t = xs
        ring = sp.csr_delay_deliver(ring, s, jnp.asarray(w), idx, ptr, delays, t, shape=(M, N))
        got = ring[t % L]
        return ring.at[t % L].set(0.0), got

    f = jax.jit(lambda r: jax.lax.scan(step, r, (jnp.asarray(spikes), jnp.arange(12)))[1])
    ins = f(jnp.zeros((L, N)))
    hist = np.zeros((L, M), bool)
    for t in range(12):
        hist[t % L] = spikes[t]
        np.testing.assert_allclose(
            np.asarray(ins[t]), sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(M, N)), rtol=1e-12,
            atol=1e-12,
        )  # fmt: skip
    # the ring is a donated argument: the delivery is made in its buffer
    ring = jnp.zeros((L, N))
    ptr0 = ring.unsafe_buffer_pointer()
    g = jax.jit(lambda r, s: sp.csr_delay_deliver(r, s, jnp.asarray(w), idx, ptr, delays, 3, shape=(M, N)),
                donate_argnums=0)  # fmt: skip
    out = g(ring, jnp.asarray(spikes[0]))
    assert out.unsafe_buffer_pointer() == ptr0
    np.testing.assert_allclose(
        np.asarray(out), _deliver_ref(np.zeros((L, N)), spikes[0], w, idx, rows, delays, 3)
    )
    # gradients in ring, weights and float events (float64, against finite differences)
    ev = np.where(rng.random(M) < 0.4, rng.standard_normal(M), 0.0)
    r0 = rng.standard_normal((L, N))
    fn = lambda r, ww, e: sp.csr_delay_deliver(r, e, ww, idx, ptr, delays, 4, shape=(M, N))  # noqa: E731
    check_grads(fn, (jnp.asarray(r0), jnp.asarray(w), jnp.asarray(ev)), order=2, modes=("fwd", "rev"))
    fn1 = lambda ww, e: sp.csr_delay_deliver(jnp.asarray(r0), e, ww, idx, ptr, delays, 4, shape=(M, N))  # noqa: E731
    check_grads(fn1, (jnp.float64(0.5), jnp.asarray(ev)), order=1, modes=("fwd", "rev"))
    # traced delays out of range: skipped, never written outside the ring
    bad = jnp.asarray(delays).at[0].set(L + 7).at[1].set(-1)
    h = jax.jit(lambda d: sp.csr_delay_deliver(jnp.zeros((L, N)), jnp.ones(M, bool), jnp.asarray(w), idx, ptr, d, 0,
                                               shape=(M, N)))  # fmt: skip
    keep = np.ones(idx.shape[0], bool)
    keep[:2] = False
    want = np.zeros((L, N))
    np.add.at(want, (delays[keep] % L, idx[keep]), np.asarray(w)[keep])
    np.testing.assert_allclose(np.asarray(h(bad)), want, rtol=1e-12)


@pytest.mark.torch
def test_torch_gradcheck_and_ring_kept(net):
    import torch

    w, idx, ptr, delays, rows = net
    rng = np.random.default_rng(4)
    ev = torch.as_tensor(np.where(rng.random(M) < 0.4, rng.standard_normal(M), 0.0)).requires_grad_()
    r0 = torch.as_tensor(rng.standard_normal((L, N))).requires_grad_()
    wt = torch.as_tensor(w.copy()).requires_grad_()
    ti_, tp, td = (torch.as_tensor(a) for a in (idx, ptr, delays))
    out = sp.csr_delay_deliver(r0, ev, wt, ti_, tp, td, 2, shape=(M, N))
    np.testing.assert_allclose(
        out.detach().cpu().numpy(),
        _deliver_ref(r0.detach().cpu().numpy(), ev.detach().cpu().numpy(), w, idx, rows, delays, 2),
        rtol=1e-12,
    )
    before = r0.detach().clone()
    torch.autograd.gradcheck(
        lambda r, ww, e: sp.csr_delay_deliver(r, e, ww, ti_, tp, td, 2, shape=(M, N)),
        (r0, wt, ev),
        nondet_tol=NONDET_TOL,
    )
    assert torch.equal(r0.detach(), before)


@pytest.mark.parametrize("read_only", [False, True])
@pytest.mark.parametrize("rate", [0.0, 0.004, 0.3])
def test_event_blocks(rate, read_only):
    """Rows scanned 64 at a time: silent blocks, one event in a block, a partial last block."""
    rng = np.random.default_rng(8)
    m, n = 200, 70
    w, idx, ptr, _ = random_csr(m, n, 0.1, rng)
    delays = rng.integers(0, 3, idx.shape[0]).astype(np.int64)
    rows = np.repeat(np.arange(m), np.diff(ptr))
    ev = rng.random(m) < rate
    ev[130] = rate > 0  # an event in the third block
    ring = rng.standard_normal((3, n))
    if read_only:
        w, idx, ptr, delays = frozen(w, idx, ptr, delays)
    got = sp.csr_delay_deliver(ring, ev, w, idx, ptr, delays, 5, shape=(m, n))
    np.testing.assert_allclose(got, _deliver_ref(ring, ev, w, idx, rows, delays, 5), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("one", [False, True])
def test_rows_longer_than_a_chunk(one):
    # the CPU kernel computes a row's ring cells a chunk at a time (DELIVER_CHUNK synapses):
    # rows of 0, 1, a chunk, a chunk +- 1 and several chunks, repeated columns, float events
    from tiarray.operators.sparse._deliver_kernels import DELIVER_CHUNK as C

    rng = np.random.default_rng(11)
    n, Lr = 700, 4
    lengths = [0, 1, C - 1, C, C + 1, 3 * C + 7, 2]
    ptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    idx = rng.integers(0, n, ptr[-1]).astype(np.int32)
    delays = rng.integers(0, Lr, ptr[-1]).astype(np.int32)
    w = np.float32(0.5) if one else rng.standard_normal(ptr[-1]).astype(np.float32)
    events = np.array([1.0, 0.0, -2.0, 1.5, 1.0, 0.25, 3.0], np.float32)
    ring = rng.standard_normal((Lr, n)).astype(np.float32)
    rows = np.repeat(np.arange(len(lengths)), lengths)
    got = sp.csr_delay_deliver(ring, events, w, idx, ptr, delays, 6, shape=(len(lengths), n))
    want = _deliver_ref(ring, events, w, idx, rows, delays, 6)
    # each cell: the ring's value plus up to ~3 float32 products, added in order
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize("t", [2**31, -(2**40), np.uint64(2**64 - 1), np.array(-(2**63))], ids=repr)
def test_t_past_int32_is_taken_modulo_the_ring(net, t):
    w, idx, ptr, delays, rows = net
    e = np.random.default_rng(2).random(M) < 0.4
    ring = np.random.default_rng(3).random((L, N))
    got = sp.csr_delay_deliver(ring, e, w, idx, ptr, delays, t, shape=(M, N))
    np.testing.assert_allclose(got, _deliver_ref(ring, e, w, idx, rows, delays, int(t) % L), rtol=1e-12)


def test_a_python_float_weight_takes_the_rings_dtype(net):
    _, idx, ptr, delays, rows = net
    e = np.random.default_rng(2).random(M) < 0.4
    for dt in (np.float32, np.float64):
        ring = np.zeros((L, N), dt)
        got = sp.csr_delay_deliver(ring, e, 0.5, idx, ptr, delays, 3, shape=(M, N))  # float64: refused before
        assert got.dtype == dt
        np.testing.assert_allclose(
            got, _deliver_ref(ring, e, 0.5, idx, rows, delays, 3), rtol=2 * np.finfo(dt).eps
        )
