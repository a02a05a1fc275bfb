"""Shared helpers of the sparse operator tests: random CSR matrices, dense references."""

from __future__ import annotations

import contextlib
import os
import zlib

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import numpy as np  # noqa: E402

# Taichi computes on CUDA in this run (``TIARRAY_ARCH=cuda``, as tests/conftest.py reads it)
TAICHI_ON_CUDA = os.environ.get("TIARRAY_ARCH", "").strip().lower() in ("cuda", "gpu")


# gradcheck's bound on backward's run-to-run differences: on CUDA the products' backward sums
# with atomics in a different order each run (float64 differences ~1e-16, second CUDA run)
NONDET_TOL = 1e-12 if TAICHI_ON_CUDA else 0.0


def host_op_off_cpu(monkeypatch):
    """Make the sparse eager helpers' ``_xp.host_op`` take its device path (inputs as TiArrays
    on Taichi's device, NumPy results) while Taichi runs on the CPU."""
    import types

    from tiarray.operators.sparse import _xp

    real = _xp._core
    off_cpu = types.SimpleNamespace(**{k: getattr(real, k) for k in dir(real) if not k.startswith("__")})
    off_cpu.is_cpu = lambda: False
    monkeypatch.setattr(_xp, "_core", off_cpu)


def host_call(fn, *args, **kw):
    """``fn`` on NumPy inputs, NumPy results, wherever Taichi computes: on CUDA (where NumPy
    arrays are refused, tiarray makes no silent copies) through TiArrays on its device."""
    if not TAICHI_ON_CUDA:
        return fn(*args, **kw)
    import tiarray as ta

    dev = ta.Device("cuda", 0)
    conv = [
        ta.asarray(np.asarray(a), device=dev) if isinstance(a, (np.ndarray, np.generic)) else a for a in args
    ]
    res = fn(*conv, **kw)
    return tuple(np.asarray(r) for r in res) if isinstance(res, tuple) else np.asarray(res)


def stable_rng(*key) -> np.random.Generator:
    """A generator seeded from ``key``'s repr: the same in every process (``hash()`` of strings
    is salted per process, so a failure seeded from it could not be reproduced)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def random_csr(
    m, n, density, rng, *, wdtype=np.float64, index_dtype=np.int32, duplicates=True, empty_rows=True
):
    """A random CSR matrix ``(weights, indices, indptr)`` and its dense float64 twin.

    Rows get a binomial number of synapses; with ``duplicates`` some rows repeat a column
    (CSR allows it: the entries add up); with ``empty_rows`` about a tenth of the rows
    are empty.
    """
    counts = rng.binomial(n, density, size=m) if n else np.zeros(m, np.int64)
    if empty_rows and m:
        counts[rng.random(m) < 0.1] = 0
    rows = []
    for i in range(m):
        c = int(counts[i])
        if c and duplicates and rng.random() < 0.2:
            cols = rng.integers(0, n, size=c)
        else:
            cols = np.sort(rng.choice(n, size=min(c, n), replace=False)) if n else np.zeros(0, np.int64)
        rows.append(cols)
    indptr = np.zeros(m + 1, index_dtype)
    indptr[1:] = np.cumsum([len(r) for r in rows]) if m else []
    indices = (np.concatenate(rows) if rows else np.zeros(0)).astype(index_dtype)
    weights = rng.standard_normal(indices.shape[0]).astype(wdtype)
    dense = np.zeros((m, n))
    for i in range(m):
        for j in range(indptr[i], indptr[i + 1]):
            dense[i, indices[j]] += weights[j]
    return weights, indices, indptr, dense


def dense_of(weights, indices, indptr, shape):
    """float64 dense matrix (homogeneous weights broadcast)."""
    m, n = shape
    d = np.zeros((m, n))
    w = np.broadcast_to(np.asarray(weights, np.float64).reshape(-1), indices.shape)
    for i in range(m):
        for j in range(int(indptr[i]), int(indptr[i + 1])):
            d[i, int(indices[j])] += w[j]
    return d


def events(n, rate, rng, kind):
    """A bool spike vector or a float vector with zeros at the same rate."""
    active = rng.random(n) < rate
    if kind == "bool":
        return active
    vals = rng.standard_normal(n).astype(kind)
    vals[~active] = 0
    return vals


def tol(dtype, scale=1.0):
    """(rtol, atol) for a float32 or float64 result against a float64 reference."""
    if np.dtype(dtype) == np.float32:
        return 2e-5, 2e-5 * max(scale, 1.0)
    return 1e-12, 1e-12 * max(scale, 1.0)


H = 1e-3  # the products are linear in each input: central differences are exact up to rounding


def fd_jvp(f, args, tangents):
    """Central-difference directional derivative of ``f(*args)`` along ``tangents`` (None: zero)."""
    plus = [a if t is None else a + H * t for a, t in zip(args, tangents)]
    minus = [a if t is None else a - H * t for a, t in zip(args, tangents)]
    return (f(*plus) - f(*minus)) / (2 * H)


def fd_grad(L, a):
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


def guarded(n, dtype, pad=64):
    """A zeroed length-n view in the middle of a buffer filled with a sentinel (12345): a kernel
    that writes outside the view changes the sentinel."""
    buf = np.full(n + 2 * pad, 12345.0, dtype)
    buf[pad : pad + n] = 0
    return buf, buf[pad : pad + n]


@contextlib.contextmanager
def parallel_mode(mode):
    """Force the serial or the parallel (multi-block) kernels, whatever the size."""
    from tiarray.operators.sparse import _policy

    if mode == "serial":
        old = _policy.set_thresholds(gather=1 << 62, scatter=1 << 62, jitc=1 << 62)
    else:
        old = _policy.set_thresholds(gather=0, scatter=0, jitc=0)
    try:
        yield
    finally:
        _policy.set_thresholds(**old)


# ----------------------------------------------------------------------------- frameworks


class NumpyFW:
    """Converts test data to a framework's arrays and back (the NumPy one is the identity)."""

    name = "numpy"

    def arr(self, a):
        return np.array(a)

    def np(self, y):
        assert isinstance(y, np.ndarray), type(y)
        return y

    def ctx(self):
        return contextlib.nullcontext()


class TorchFW(NumpyFW):
    name = "torch"

    def __init__(self, torch):
        self.torch = torch

    def arr(self, a):
        return self.torch.as_tensor(np.array(a))

    def np(self, y):
        assert type(y) is self.torch.Tensor, type(y)
        return y.detach().cpu().numpy()


class JaxFW(NumpyFW):
    name = "jax"

    def __init__(self, jax):
        self.jax = jax

    def arr(self, a):
        import jax.numpy as jnp

        return jnp.asarray(np.array(a))

    def np(self, y):
        assert isinstance(y, self.jax.Array), type(y)
        return np.asarray(y)

    def ctx(self):
        return self.jax.enable_x64(True)


class CupyFW(NumpyFW):
    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy

    def arr(self, a):
        return self.cupy.asarray(np.array(a))

    def np(self, y):
        assert isinstance(y, self.cupy.ndarray), type(y)
        return y.get()


def frozen(*arrays):
    """Read-only copies of ``arrays`` (structure that cannot change: the cached index paths)."""
    out = []
    for a in arrays:
        a = np.array(a)
        a.flags.writeable = False
        out.append(a)
    return out
