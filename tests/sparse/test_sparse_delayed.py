"""Synaptic delays: a ring-buffer simulation against a per-step reference, bad input, and delays
taken modulo D where values are not checked. (Every case on every framework against dense
references is in ``test_sparse_families.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import frozen, host_call, parallel_mode, random_csr


@pytest.fixture(scope="module")
def net():
    rng = np.random.default_rng(11)
    w, idx, ptr, _ = random_csr(30, 20, 0.3, rng)
    delays = rng.integers(0, 5, idx.shape[0]).astype(np.int32)
    return w, idx, ptr, delays, np.repeat(np.arange(30), np.diff(ptr))


# "writeable": arrays that may change, the direct kernel; "frozen": read-only arrays, the
# product through the cached delay index (per-synapse weights reordered once); "one": a
# single weight through the index.
@pytest.mark.parametrize("arrays", ["writeable", "frozen", "one"])
@pytest.mark.parametrize("mode", ["serial", "parallel"])
def test_ring_buffer_simulation(net, mode, arrays):
    """Each synapse delivers the spike of its presynaptic neuron exactly ``delay`` steps later."""
    w, idx, ptr, delays, rows = net
    if arrays == "one":
        w = np.float64(0.75)
    if arrays != "writeable":
        idx, ptr, delays = frozen(idx, ptr, delays)
        assert sp._delayed._delay_index(idx, ptr, delays, 30, 5) is not None
    else:
        assert sp._delayed._delay_index(idx, ptr, delays, 30, 5) is None
    wb = np.broadcast_to(w, idx.shape)
    rng = np.random.default_rng(0)
    D, steps = 5, 23
    spikes = rng.random((steps, 30)) < 0.15
    hist = np.zeros((D, 30), bool)
    with parallel_mode(mode):
        for t in range(steps):
            hist[t % D] = spikes[t]
            got = sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(30, 20))
            want = np.zeros(20)
            for j in range(idx.shape[0]):
                if t - delays[j] >= 0 and spikes[t - delays[j], rows[j]]:
                    want[idx[j]] += wb[j]
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_delay_index_follows_changes(torch, net):
    """The cached delay index is rebuilt when a torch tensor of the structure changes in place
    (its version counter), and the float history weights each delivered synapse."""
    w, idx, ptr, delays, rows = net
    tw, ti_, tp, td = (torch.as_tensor(a.copy()) for a in (w, idx, ptr, delays))
    rng = np.random.default_rng(5)
    hist = rng.random((5, 30)) * (rng.random((5, 30)) < 0.4)

    def want(d, t):
        y = np.zeros(20)
        np.add.at(y, idx, w * hist[(t - d) % 5, rows])
        return y

    for t in (3, 8):
        got = sp.event_csrmv_delayed(tw, ti_, tp, td, torch.as_tensor(hist), t, shape=(30, 20))
        np.testing.assert_allclose(got.cpu().numpy(), want(delays, t), rtol=1e-12, atol=1e-12)
    td.add_(1).remainder_(5)  # every delay changes in place
    got = sp.event_csrmv_delayed(tw, ti_, tp, td, torch.as_tensor(hist), 8, shape=(30, 20))
    np.testing.assert_allclose(got.cpu().numpy(), want((delays + 1) % 5, 8), rtol=1e-12, atol=1e-12)
    tw.data.mul_(2)  # a write that torch's version counter does not see: weights are never cached
    got = sp.event_csrmv_delayed(tw, ti_, tp, td, torch.as_tensor(hist), 8, shape=(30, 20))
    np.testing.assert_allclose(got.cpu().numpy(), 2 * want((delays + 1) % 5, 8), rtol=1e-12, atol=1e-12)


def test_errors(net):
    w, idx, ptr, delays, rows = net
    h = np.zeros((5, 30), bool)
    f = sp.event_csrmv_delayed
    with pytest.raises(
        IndexError,
        match=r"event_csrmv_delayed\(\): argument 'delays' holds delay 5 at position 3, outside \[0, 5\)",
    ):
        d = delays.copy()
        d[3] = 5
        f(w, idx, ptr, d, h, 0, shape=(30, 20))
    with pytest.raises(IndexError, match="holds delay -1"):
        d = delays.copy()
        d[0] = -1
        f(w, idx, ptr, d, h, 0, shape=(30, 20))
    with pytest.raises(
        ValueError, match=r"argument 'delays' must have one delay per synapse, length nnz = \d+, got 3"
    ):
        f(w, idx, ptr, delays[:3], h, 0, shape=(30, 20))
    with pytest.raises(TypeError, match=r"argument 'delays' must be an integer array"):
        f(w, idx, ptr, delays.astype(float), h, 0, shape=(30, 20))
    with pytest.raises(
        ValueError, match=r"argument 'history' must have shape \(D, shape\[0\]\) = \(D, 30\) with D >= 1"
    ):
        f(w, idx, ptr, delays, np.zeros((5, 29), bool), 0, shape=(30, 20))
    with pytest.raises(ValueError, match="with D >= 1 steps, got \\(0, 30\\)"):
        f(w, idx, ptr, delays * 0, np.zeros((0, 30), bool), 0, shape=(30, 20))
    with pytest.raises(
        TypeError, match=r"argument 'history' must be bool, float32 or float64, got dtype int32"
    ):
        f(w, idx, ptr, delays, h.astype(np.int32), 0, shape=(30, 20))
    with pytest.raises(TypeError, match=r"argument 't' must be an integer scalar, got dtype float64"):
        f(w, idx, ptr, delays, h, np.float64(1), shape=(30, 20))
    with pytest.raises(ValueError, match=r"argument 't' must be a scalar"):
        f(w, idx, ptr, delays, h, np.array([1, 2]), shape=(30, 20))


def test_jax_unchecked_delays_wrap_and_t_is_traced(jax, net):
    """Under jit the delays are not checked: each is taken modulo D (never a read outside
    history); one trace serves every step t."""
    w, idx, ptr, delays, rows = net
    rng = np.random.default_rng(3)
    D = 5
    hist = rng.random((D, 30)) < 0.3
    wild = delays + D * rng.integers(-(2**20), 2**20, delays.shape[0]).astype(np.int32)
    traces = []

    @jax.jit
    def f(d, t):
        traces.append(1)
        return sp.event_csrmv_delayed(w, idx, ptr, d, hist, t, shape=(30, 20))

    with jax.enable_x64(True):
        for t in (0, 4, 13):
            want = host_call(sp.event_csrmv_delayed, w, idx, ptr, delays, hist, t, shape=(30, 20))
            np.testing.assert_allclose(np.asarray(f(wild, np.int32(t))), want, rtol=1e-12, atol=1e-12)
    assert len(traces) == 1


# Python and NumPy integers past int32 (a raw OverflowError before 2026-12-05), and t at the
# int64 extremes, where t - delay overflowed in the direct kernel: -2**63 gave another slot
T_EXTREMES = [2**31, -(2**31) - 1, 2**40, -(2**70), np.uint32(2**32 - 1), np.int64(2**40),
              np.uint64(2**64 - 1), np.array(-(2**63)), np.array(2**63 - 1), np.array(-(2**63) + 1)]  # fmt: skip


@pytest.mark.parametrize("arrays", ["writeable", "frozen"])
@pytest.mark.parametrize("t", T_EXTREMES, ids=[repr(t) for t in T_EXTREMES])
def test_t_is_taken_modulo_d_at_any_size(net, arrays, t):
    w, idx, ptr, delays, rows = net
    if arrays == "frozen":
        idx, ptr, delays = frozen(idx, ptr, delays)
    hist = np.random.default_rng(3).random((5, 30)) < 0.3
    got = sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(30, 20))
    ref = np.zeros(20)
    np.add.at(ref, idx, w * hist[(int(t) % 5 - delays) % 5, rows])
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)


def test_a_python_float_weight_takes_the_histories_float_dtype(net):
    _, idx, ptr, delays, rows = net
    hist = np.random.default_rng(4).random((5, 30)) * (np.random.default_rng(5).random((5, 30)) < 0.3)
    for dt in (np.float32, np.float64):
        got = sp.event_csrmv_delayed(0.5, idx, ptr, delays, hist.astype(dt), 7, shape=(30, 20))
        assert got.dtype == dt
        ref = np.zeros(20)
        np.add.at(ref, idx, 0.5 * hist.astype(dt).astype(np.float64)[(7 - delays) % 5, rows])
        np.testing.assert_allclose(got, ref, rtol=4 * np.finfo(dt).eps, atol=4 * np.finfo(dt).eps)
    got = sp.event_csrmv_delayed(0.5, idx, ptr, delays, hist != 0, 7, shape=(30, 20))
    assert got.dtype == np.float32  # bool events: float32, as event_csrmv
