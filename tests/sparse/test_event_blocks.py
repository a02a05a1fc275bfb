"""The event scans visit exactly the nonzero events of every 64-row block.

The CPU kernels of the spiking-direction products scan their events ``EVENT_BLOCK`` (64)
at a time: a full block becomes a 64-bit mask whose set bits are visited in order, the
partial block at the end is scanned row by row. Each product here gets events at the
edges of that scheme (a full block, a block holding only its first and last row -- bits 0
and 63 --, a mixed block with negative values and ``-0.0``, the tail) and is compared
with a float64 per-synapse reference, in the serial and the parallel kernels.
"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _sparse_helpers import parallel_mode

M, N, K, D = 200, 90, 6, 3  # three full blocks of 64 rows and a tail of 8


def _events(kind, rng):
    """Nonzero at: every row of block 0, rows 64 and 127 of block 1, a third of block 2
    (half of them negative; ``-0.0`` at odd zero rows in floats), row 199 of the tail."""
    v = np.zeros(M)
    v[:64] = rng.uniform(0.5, 2.0, 64)
    v[[64, 127]] = [1.5, -0.75]
    pick = 128 + np.flatnonzero(rng.random(64) < 1 / 3)
    v[pick] = rng.uniform(0.5, 2.0, pick.size) * np.where(rng.random(pick.size) < 0.5, -1.0, 1.0)
    v[199] = 1.25
    if kind == "bool":
        return v != 0
    e = v.astype(kind)
    e[(v == 0) & (np.arange(M) % 2 == 1)] = -0.0  # a zero event whose sign bit is set
    return e


def _csr(rng):
    """``K`` synapses per row (distinct columns): CSR arrays, also fixed-number ones by reshape."""
    idx = np.stack([rng.choice(N, K, replace=False) for _ in range(M)]).astype(np.int32).ravel()
    w = rng.standard_normal(M * K).astype(np.float32)
    return w, idx, (np.arange(M + 1) * K).astype(np.int32)


def _frozen(*arrays):
    for a in arrays:
        a.flags.writeable = False


def _scatter(cells, terms, size):
    """``(sum, sum of |terms|, terms)`` per output cell of ``y[cells[j]] += terms[j]``, float64."""
    y, mag, cnt = np.zeros(size), np.zeros(size), np.zeros(size)
    np.add.at(y, cells, terms)
    np.add.at(mag, cells, np.abs(terms))
    np.add.at(cnt, cells, 1)
    return y, mag, cnt


def _check(got, ref, base=0.0):
    """Per element, the float32 bound of a sum of ``c`` products: ``(c + 1) u sum |terms|``."""
    y, mag, cnt = ref
    err = np.abs(np.asarray(got, np.float64).ravel() - y)
    bound = (cnt + 1) * 2.0**-24 * (mag + np.abs(base))
    bad = np.flatnonzero(err > bound)
    assert bad.size == 0, (bad[:5], err[bad[:5]], bound[bad[:5]])


@pytest.fixture(params=["serial", "parallel"])
def mode(request):
    with parallel_mode(request.param):
        yield request.param


@pytest.mark.parametrize("kind", ["bool", "float32", "float64"])
def test_event_csrmv_and_fcnmv_transposed(kind, mode):
    rng = np.random.default_rng(1)
    x = _events(kind, rng)
    w, idx, ptr = _csr(rng)
    ref = _scatter(idx, w.astype(np.float64) * np.repeat(x.astype(np.float64), K), N)
    _check(sp.event_csrmv(w, idx, ptr, x, shape=(M, N), transpose=True), ref)
    _check(sp.event_fcnmv(w.reshape(M, K), idx.reshape(M, K), x, shape=(M, N), transpose=True), ref)


@pytest.mark.parametrize("kind", ["bool", "float32", "float64"])
@pytest.mark.parametrize("transpose", [False, True])
def test_event_densemv(kind, transpose):
    rng = np.random.default_rng(2)
    x = _events(kind, rng)
    W = rng.standard_normal((M, N) if transpose else (N, M)).astype(np.float32)
    Wt = (W if transpose else W.T).astype(np.float64)  # (M, N): row i is event i's synapses
    ref = _scatter(np.tile(np.arange(N), M), (Wt * x.astype(np.float64)[:, None]).ravel(), N)
    _check(sp.event_densemv(W, x, transpose=transpose), ref)


@pytest.mark.parametrize("kind", ["bool", "float32"])
@pytest.mark.parametrize("index", ["delay index", "direct"])
@pytest.mark.parametrize("D", [D, 64, 70])  # the direct kernel keeps a row's slots in 64 bits
def test_event_csrmv_delayed(kind, index, D, mode):
    rng = np.random.default_rng(3)
    w, idx, ptr = _csr(rng)
    delays = rng.integers(0, D, idx.size).astype(np.int32)
    delays[::7] = D - 1  # the last slot
    hist = np.stack([_events(kind, np.random.default_rng(10 + s)) for s in range(D)])
    hist[1, :64] = 0  # block 0 active through the other slots only
    hist[:, 64:128] = 0
    hist[2, 127] = 1  # block 1: its last row, in one slot
    hist[D - 1, 64] = 1  # and its first row, in the last slot
    if index == "delay index":  # a structure that cannot change: the delay-index kernel
        _frozen(w, idx, ptr, delays)
    t = 5
    rows = np.repeat(np.arange(M), K)
    ref = _scatter(idx, w.astype(np.float64) * hist[(t - delays) % D, rows].astype(np.float64), N)
    _check(sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(M, N)), ref)


@pytest.mark.parametrize("kind", ["bool", "float32"])
@pytest.mark.parametrize("frozen", [False, True])
def test_csr_delay_deliver(kind, frozen):
    rng = np.random.default_rng(4)
    w, idx, ptr = _csr(rng)
    L = 4
    delays = rng.integers(0, L, idx.size).astype(np.int32)
    if frozen:  # one ring cell per synapse, cached
        _frozen(w, idx, ptr, delays)
    x = _events(kind, rng)
    ring = rng.standard_normal((L, N)).astype(np.float32)
    t = 6
    rows = np.repeat(np.arange(M), K)
    cells = ((t + delays) % L) * N + idx
    y, mag, cnt = _scatter(cells, w.astype(np.float64) * x[rows].astype(np.float64), L * N)
    base = ring.astype(np.float64).ravel()
    got = sp.csr_delay_deliver(ring, x, w, idx, ptr, delays, t, shape=(M, N))
    _check(got, (y + base, mag, cnt), base)
