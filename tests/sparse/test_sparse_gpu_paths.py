"""The GPU code paths of the sparse kernels (one thread per row, atomic adds), run on the CPU.

Taichi's CPU backend supports the same atomics, so forcing the kernels' compile-time
``on_gpu()`` switch exercises the GPU algorithms here; a CUDA device then only adds the
backend. (The device check itself needs a GPU and runs where one is lent.)
"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _family_cases import cases
from _sparse_helpers import dense_of, random_csr
from tiarray.operators.sparse import (
    _coo,
    _coo_kernels,
    _csr,
    _csr_kernels,
    _delayed,
    _delayed_kernels,
    _dense,
    _fcn,
    _fcn_kernels,
    _indexed,
    _indexed_kernels,
    _jitc,
    _jitc_kernels,
)

KERNEL_MODULES = (_csr_kernels, _jitc_kernels, _fcn_kernels, _coo_kernels, _indexed_kernels, _delayed_kernels)


def _ops():
    return [op for mod in (_csr, _jitc, _fcn, _coo, _dense) for op in mod._OPS.values()] + [
        _indexed._CSR,
        _indexed._FCN,
        _delayed._MAIN,
    ]


def _reset():
    """Forget every compiled kernel of the sparse Operators (the switch is read at compile time)."""
    for op in _ops():
        op._plans.clear()
        for la in op._launchers.values():
            la._specs.clear()
            la._kernels.clear()


@pytest.fixture
def gpu_paths(monkeypatch):
    for mod in KERNEL_MODULES:
        monkeypatch.setattr(mod, "on_gpu", lambda: True)
    _reset()
    yield
    monkeypatch.undo()
    _reset()


@pytest.mark.parametrize("homo", [False, True])
def test_csr_gpu_paths(gpu_paths, homo):
    rng = np.random.default_rng(8)
    m, n = 40, 30
    w, idx, ptr, dense = random_csr(m, n, 0.3, rng)
    if homo:
        w = np.asarray(0.25)
        dense = dense_of(w, idx, ptr, (m, n))
    e = rng.random(m) < 0.4
    np.testing.assert_allclose(
        sp.event_csrmv(w, idx, ptr, e, shape=(m, n), transpose=True), dense.T @ e, rtol=1e-12
    )
    v = rng.standard_normal(m)
    np.testing.assert_allclose(
        sp.csrmv(w, idx, ptr, v, shape=(m, n), transpose=True), dense.T @ v, rtol=1e-12
    )
    E = rng.random((m, 5)) < 0.4
    np.testing.assert_allclose(
        sp.event_csrmm(w, idx, ptr, E, shape=(m, n), transpose=True), dense.T @ E, rtol=1e-12
    )


@pytest.mark.parametrize("dist,params", [("homo", (0.5,)), ("uniform", (-1.0, 1.0)), ("normal", (0.1, 0.7))])
def test_jitc_gpu_paths(gpu_paths, dist, params):
    rng = np.random.default_rng(9)
    shape = (50, 40)
    ps = [np.asarray(p) for p in params]
    A = getattr(sp, f"jitc_todense_prob_{dist}")(*ps, 0.2, 5, shape=shape)
    e = rng.random(50) < 0.4
    y = getattr(sp, f"jitc_event_mv_prob_{dist}")(e, *ps, 0.2, 5, shape=shape, transpose=True)
    np.testing.assert_allclose(y, A.T @ e, rtol=1e-12, atol=1e-12)


GPU_CASES = [
    c for c in cases() if c.dtype == "float64" and c.family in ("fcn", "coo", "jitc", "indexed", "delayed")
]


@pytest.mark.parametrize("case", GPU_CASES, ids=[c.id for c in GPU_CASES])
def test_family_gpu_paths(gpu_paths, case):
    got = case.fn(*case.args, **case.kw)
    np.testing.assert_allclose(got, case.ref(*case.args), rtol=1e-12, atol=1e-12)


def test_paths_are_really_switched(gpu_paths):
    # the switch is read when the kernel compiles: the atomic path is compiled now
    assert all(mod.on_gpu() for mod in KERNEL_MODULES)
    assert all(la._specs == {} for op in _ops() for la in op._launchers.values())
