"""Benchmark: the sparse families beyond CSR (fixed-number, dense, COO, JIT-connectivity matrix
products, spike-index events, delays, plasticity) against brainevent 0.3 and dense/sparse baselines.

One run prints one table per family: median microseconds per call of every method (the
minimum over all calls in parentheses), the memory-traffic bound of the case, and the
ratios ``peer / tiarray`` (**> 1: tiarray faster**) against the tiarray route that matches
the peer (brainevent runs under ``jax.jit``: it is compared with ``ti jit``; the NumPy
baselines with the NumPy route ``tiarray``).

Cases: n in {4000, 10000, 40000} neurons (square matrices), connection probability p =
0.02, 0.02, 0.002 (80 to 200 synapses per row, as ``bench_sparse.py``), firing rate r in
{0.01, 0.05, 0.1}, both directions (``A @ s`` and ``A.T @ s``; plasticity: on pre and on
post spikes), float32 weights, int32 indices. Dense matrices are skipped at n = 40000
(6.4 GB). JIT matrix products multiply a ``(., K = 8)`` matrix whose entries are nonzero
at rate r (the event variants get its bool pattern). Spike-index events: the active rows
of a bool spike vector, as ``jnp.nonzero(size=n)`` gives them. Delays: ``D = 8`` slots,
one delay per synapse, uniform in ``[0, D)``, every slot of the history at rate r.

Methods (each one's result is checked against a float64 dense NumPy reference before it
is timed; a wrong result is reported, not timed):

- ``tiarray``: the function on NumPy arrays (connectivity read-only: checked once);
- ``ti jit``: the function inside ``jax.jit`` with the connectivity closed over as constants
  (the way a simulation step uses it);
- ``brainevent``: brainevent 0.3.0's operator for the family under ``jax.jit`` (its
  numba CPU backend), when installed (it needs Python >= 3.12): ``binary_fcnmv``/``fcnmv``,
  ``binary_densemv``, ``jitsmm``/``binary_jitsmm`` (checked against its own ``jits``
  matrix; its transposed product uses another matrix than the transpose of its
  ``A``, ``jits(..., transpose=True)``), ``BinaryArray @ CSR`` for spike-index events (it
  has no list form), ``csr_delay_deliver`` for delays (the same simulation step in its push
  form: it adds the current spikes into an arrival ring, ``(t + d) mod D``, and reads
  nothing else; tiarray's ``event_csrmv_delayed`` reads the history, its
  ``csr_delay_deliver``, row ``ti push jit``, is the push form on the same ring; ``brainevent layout``
  is its push form on a precomputed ``CSRDelayLayout``, ``brainevent pull`` the pull form's own
  computation in brainevent: its event CSR product on the delay-stacked ``(D n, n)`` matrix with
  the history slots gathered in delay order), ``update_csr_on_binary_pre/post``,
  ``update_dense_on_binary_pre/post``, ``update_fixed_post_conn_on_binary_pre`` (which clip
  every weight: tiarray clips the updated ones);
- ``C floor`` (the rows that visit exactly the active synapses: fixed-number ``A.T @ s``,
  spike indices): what their random accesses alone cost on this machine, a compiled loop
  that zeroes the output and adds the active synapses' weights into it from two contiguous
  lists made before timing (no event scan, no rows, no launch); the column ``ti jit x C
  floor`` is tiarray's ``jax.jit`` time over it (``no compiler`` without a C++ compiler).
  COO and the pull-form delays must also read synapses that add nothing (every COO entry;
  every synapse of a row that spiked in the window), so the loop is no floor for them;
- baselines: ``scipy`` (CSR/COO of the same matrix), ``dense @`` (NumPy gemv,
  n <= 10000), ``numpy`` (fancy-indexed plasticity update), ``torch`` (sparse COO/CSR, when
  installed).

A method whose library is not installed appears as ``not installed`` in its cells: the
table says what was not measured. Memory-traffic bounds (bytes / the copy bandwidth measured
at the start of the run, as ``bench_sparse.py``): the bytes an ideal kernel must move (per family below, ``bound_bytes``).

Usage (timings only on a quiet machine; the lead runs the full table)::

    python benchmarks/bench_sparse_families.py                   # full table
    python benchmarks/bench_sparse_families.py --quick           # smoke run (n = 1000, r = 0.05)
    python benchmarks/bench_sparse_families.py --families fcn dense --n 4000
"""

from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_k] = "2"
os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import copy_bandwidth, machine_line  # noqa: E402
from bench_sparse import _fmt, make_case, timed  # noqa: E402

BW = None  # bytes/s, measured by main() on the machine of the run (as bench_sparse.py)

NOT_INSTALLED = "not installed"
FAMILIES = ["fcn", "dense", "coo", "jitc_mm", "indexed", "delayed", "plasticity"]
K_MM = 8
D_DELAY = 8


def _have(mod):
    try:
        __import__(mod)
        return True
    except Exception:
        return False


class Env:
    def __init__(self):
        self.jax = _have("jax")
        self.brainevent = self.jax and _have("brainevent")
        self.scipy = _have("scipy")
        self.torch = _have("torch")
        if self.torch:
            import torch

            torch.set_num_threads(2)

    def jit(self, f):
        import jax

        return jax.jit(f)


def _ro(*arrays):
    for a in arrays:
        a.flags.writeable = False
    return arrays


def _ready(x):
    return x.block_until_ready() if hasattr(x, "block_until_ready") else x


# ----------------------------------------------------------------------------- the scatter floor
#
# What the random accesses of a scatter over the active synapses alone cost on this machine:
# a compiled loop that zeroes the output and adds the active synapses' weights into it,
# out[idx[j]] += w[j], from two contiguous lists made before timing (no event scan, no row
# structure, no launch). Its result is the product itself, checked as every method is. Built
# with tiarray's own compiler helper into a temporary directory, removed at exit; "no
# compiler" where there is none.

_FLOOR_SRC = r"""
#include <cstdint>
#include <cstring>
extern "C" void scatter_floor(const int32_t *idx, const float *w, int64_t s, float *out, int64_t n) {
  std::memset(out, 0, (size_t)n * sizeof(float));
  for (int64_t j = 0; j < s; ++j) out[idx[j]] += w[j];
}
"""
_FLOOR = []


def _scatter_floor_fn():
    """The compiled ``scatter_floor`` (ctypes), or a string saying why there is none."""
    if not _FLOOR:
        import atexit
        import ctypes
        import shutil
        import tempfile

        from tiarray import _cbuild

        cxx = _cbuild.compiler()
        if cxx is None:
            _FLOOR.append("no compiler")
        else:
            d = tempfile.mkdtemp(prefix="tiarray_floor_")
            atexit.register(shutil.rmtree, d, True)  # the library stays loaded until then
            src = os.path.join(d, "floor.cpp")
            with open(src, "w") as f:
                f.write(_FLOOR_SRC)
            lib = ctypes.CDLL(
                _cbuild.build(cxx, src, os.path.join(d, "floor.so"), ("-O2", "-shared", "-fPIC"))
            )
            fn = lib.scatter_floor
            fn.restype = None
            fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p, ctypes.c_int64]
            _FLOOR.append(fn)
    return _FLOOR[0]


def scatter_floor(targets, weights, n):
    """The method ``C floor`` of a row whose product adds ``weights[j]`` into ``out[targets[j]]``
    (the active synapses, in the kernel's order)."""
    fn = _scatter_floor_fn()
    if isinstance(fn, str):
        return fn
    idx = np.ascontiguousarray(targets, dtype=np.int32)
    w = np.ascontiguousarray(weights, dtype=np.float32)

    pi, pw, size = idx.ctypes.data, w.ctypes.data, idx.size

    def run(_keep=(idx, w)):  # the lists live as long as the method
        out = np.empty(n, np.float32)  # a fresh output per call, as the operators return
        fn(pi, pw, size, out.__array_interface__["data"][0], n)
        return out

    return (run, None)


# ----------------------------------------------------------------------------- cases
#
# Each case builder returns (rows); a row is a dict with the case's description, its
# float64 reference, its memory-traffic bound (us), and methods: name -> (callable, reference
# override or None) or a string (why it was not measured).


def fcn_rows(env, sp, n, p, r, rng):
    k = max(1, int(round(p * n)))
    idx = sp.fixed_num_conn(n, n, k, seed=n)
    w = rng.random((n, k), dtype=np.float32)
    A = None
    rows = []
    s_bool = rng.random(n) < r
    v = rng.standard_normal(n).astype(np.float32)
    for op, x in (("event_fcnmv", s_bool), ("fcnmv", v)):
        for transpose in (False, True):
            f = getattr(sp, op)
            xs = x
            if op == "event_fcnmv" and not transpose:
                active = int(s_bool[idx].sum())
                bound = 4 * n * k + 4 * active + n + 4 * n
            elif op == "event_fcnmv":
                active = int(s_bool.sum()) * k
                bound = 8 * active + n + 4 * n
            else:
                bound = 8 * n * k + 8 * n
            m = {"tiarray": (lambda f=f, xs=xs, t=transpose: f(w, idx, xs, shape=(n, n), transpose=t), None)}
            if env.jax:
                import jax.numpy as jnp

                # the same JAX arrays as brainevent's, closed over (constants: the column index
                # of event_fcnmv's A @ s is cached, and so are the weights in its order)
                wj, ij = jnp.asarray(w), jnp.asarray(idx)
                g = env.jit(
                    lambda x_, f=f, t=transpose, wj=wj, ij=ij: f(wj, ij, x_, shape=(n, n), transpose=t)
                )
                xj = jnp.asarray(xs)
                m["ti jit"] = (lambda g=g, xj=xj: _ready(g(xj)), None)
            if env.brainevent:
                import brainevent as be
                import jax.numpy as jnp

                bf = be.binary_fcnmv if op == "event_fcnmv" else be.fcnmv
                wj, ij = jnp.asarray(w), jnp.asarray(idx)
                g = env.jit(
                    lambda x_, bf=bf, t=transpose, wj=wj, ij=ij: bf(wj, ij, x_, shape=(n, n), transpose=t)
                )
                xj = jnp.asarray(xs)
                m["brainevent"] = (lambda g=g, xj=xj: _ready(g(xj)), None)
            else:
                m["brainevent"] = NOT_INSTALLED
            if env.scipy:
                import scipy.sparse as ss

                if A is None:
                    A = ss.csr_matrix((w.reshape(-1), idx.reshape(-1), np.arange(n + 1) * k), shape=(n, n))
                M = A.T.tocsr() if transpose else A
                xf = xs.astype(np.float32)
                m["scipy"] = (lambda M=M, xf=xf: M @ xf, None)
            else:
                m["scipy"] = NOT_INSTALLED
            if op == "event_fcnmv" and transpose:
                act = np.nonzero(s_bool)[0]
                m["C floor"] = scatter_floor(idx[act].reshape(-1), w[act].reshape(-1), n)
            rows.append(dict(op=op, dir=transpose, bound=bound, methods=m,
                             ref=lambda f=f, xs=xs, t=transpose: _fcn_ref(w, idx, xs, n, t)))  # fmt: skip
    return rows


def _fcn_ref(w, idx, x, n, transpose):
    x = x.astype(np.float64)
    w64 = w.astype(np.float64)
    if transpose:
        y = np.zeros(n)
        np.add.at(y, idx.reshape(-1), (w64 * x[:, None]).reshape(-1))
        return y
    return (w64 * x[idx]).sum(1)


def dense_rows(env, sp, n, p, r, rng):
    if n > 10000:
        return [dict(op="event_densemv", dir=t, bound=float("nan"), ref=None,
                     methods={"tiarray": "skipped: 6.4 GB matrix"}) for t in (False, True)]  # fmt: skip
    W = rng.random((n, n), dtype=np.float32)
    s = rng.random(n) < r
    na = int(s.sum())
    rows = []
    for transpose in (False, True):
        m = {"tiarray": (lambda t=transpose: sp.event_densemv(W, s, transpose=t), None)}
        if env.jax:
            import jax.numpy as jnp

            Wj = jnp.asarray(W)
            g = env.jit(lambda x_, t=transpose, Wj=Wj: sp.event_densemv(Wj, x_, transpose=t))
            sj = jnp.asarray(s)  # JAX arrays, as brainevent's row gets (a NumPy argument is copied per call)
            m["ti jit"] = (lambda g=g, sj=sj: _ready(g(sj)), None)
        if env.brainevent:
            import brainevent as be
            import jax.numpy as jnp

            Wj = jnp.asarray(W)
            g = env.jit(lambda x_, t=transpose, Wj=Wj: be.binary_densemv(Wj, x_, transpose=t))
            sj = jnp.asarray(s)
            m["brainevent"] = (lambda g=g, sj=sj: _ready(g(sj)), None)
        else:
            m["brainevent"] = NOT_INSTALLED
        sf = s.astype(np.float32)
        Wt = np.ascontiguousarray(W.T)
        m["dense @"] = (lambda Wt=Wt if transpose else W, sf=sf: Wt @ sf, None)
        rows.append(dict(op="event_densemv", dir=transpose, bound=4 * n * na + 5 * n, methods=m,
                         ref=lambda t=transpose: (W.T if t else W).astype(np.float64) @ s))  # fmt: skip
    return rows


def coo_rows(env, sp, n, p, r, rng):
    w, idx, ptr = make_case(n, p, seed=n)
    row = np.repeat(np.arange(n, dtype=np.int32), np.diff(ptr))
    perm = rng.permutation(idx.shape[0])  # a COO list in no particular order
    row, col, w = _ro(row[perm].copy(), idx[perm].copy(), w[perm].copy())
    nnz = idx.shape[0]
    rows = []
    s = rng.random(n) < r
    for transpose in (False, True):
        m = {"tiarray": (lambda t=transpose: sp.event_coomv(w, row, col, s, shape=(n, n), transpose=t), None)}
        if env.jax:
            import jax.numpy as jnp

            g = env.jit(lambda x_, t=transpose: sp.event_coomv(w, row, col, x_, shape=(n, n), transpose=t))
            sj = jnp.asarray(s)
            m["ti jit"] = (lambda g=g, sj=sj: _ready(g(sj)), None)
            from jax.experimental import sparse as jsparse

            C = jsparse.BCOO((jnp.asarray(w), jnp.asarray(np.stack([row, col], 1))), shape=(n, n))
            h = env.jit(lambda c, x_, t=transpose: (c.T if t else c) @ x_)
            sf = jnp.asarray(s.astype(np.float32))
            m["jax BCOO"] = (lambda h=h, C=C, sf=sf: _ready(h(C, sf)), None)
        m["brainevent"] = "no COO operator" if env.brainevent else NOT_INSTALLED
        if env.scipy:
            import scipy.sparse as ss

            S = ss.coo_matrix((w, (row, col)), shape=(n, n))
            M = S.T if transpose else S
            sf = s.astype(np.float32)
            m["scipy"] = (lambda M=M, sf=sf: M @ sf, None)
        else:
            m["scipy"] = NOT_INSTALLED
        src = row if transpose else col
        active = int(s[src].sum())
        rows.append(dict(op="event_coomv", dir=transpose, bound=8 * nnz + 4 * active + 5 * n, methods=m,
                         ref=lambda t=transpose: _coo_ref(w, row, col, s, n, t)))  # fmt: skip
    return rows


def _coo_ref(w, row, col, s, n, transpose):
    y = np.zeros(n)
    src, dst = (row, col) if transpose else (col, row)
    np.add.at(y, dst, w.astype(np.float64) * s[src])
    return y


def jitc_rows(env, sp, n, p, r, rng):
    B = rng.standard_normal((n, K_MM)).astype(np.float32)
    B[rng.random(B.shape) >= r] = 0
    E = B != 0
    seed = 7
    w = np.float32(0.5)
    A = None
    rows = []
    for op, X in (("jitc_event_mm_prob_homo", E), ("jitc_mm_prob_homo", B)):
        for transpose in (False, True):
            f = getattr(sp, op)
            m = {"tiarray": (lambda f=f, X=X, t=transpose: f(X, w, p, seed, shape=(n, n), transpose=t), None)}
            if env.jax:
                import jax.numpy as jnp

                g = env.jit(lambda x_, f=f, t=transpose: f(x_, w, p, seed, shape=(n, n), transpose=t))
                Xj = jnp.asarray(X)
                m["ti jit"] = (lambda g=g, Xj=Xj: _ready(g(Xj)), None)
            if env.brainevent:
                import brainevent as be
                import jax.numpy as jnp

                bf = be.binary_jitsmm if "event" in op else be.jitsmm
                g = env.jit(lambda x_, bf=bf, t=transpose: bf(0.5, p, x_, seed, shape=(n, n), transpose=t))
                Xj = jnp.asarray(X)
                if n <= 10000:  # its own matrix, in its own direction (below)
                    Mbe = np.asarray(be.jits(0.5, p, seed, shape=(n, n), transpose=transpose), np.float64)
                    ref_be = Mbe @ X.astype(np.float64)
                else:
                    ref_be = "unchecked"
                m["brainevent"] = (lambda g=g, Xj=Xj: _ready(g(Xj)), ref_be)
            else:
                m["brainevent"] = NOT_INSTALLED
            if n <= 10000:
                if A is None:
                    A = sp.jitc_todense_prob_homo(w, p, seed, shape=(n, n))
                M = np.ascontiguousarray(A.T) if transpose else A
                Xf = X.astype(np.float32)
                m["dense @"] = (lambda M=M, Xf=Xf: M @ Xf, None)

            def ref(X=X, t=transpose, A=A):
                if A is None:  # n = 40000: the tiarray dense matrix is 6.4 GB; compare the two routes instead
                    return None
                return (A.T if t else A).astype(np.float64) @ X.astype(np.float64)

            bound = 4 * n * K_MM * (2 if "event" not in op else 1.25)
            rows.append(dict(op=op, dir=transpose, bound=bound, methods=m, ref=ref))
    return rows


def indexed_rows(env, sp, n, p, r, rng):
    w, idx, ptr = _ro(*make_case(n, p, seed=n))
    s = rng.random(n) < r
    active = np.nonzero(s)[0].astype(np.int32)
    ids = np.zeros(n, np.int32)
    ids[: active.size] = active
    count = int(active.size)
    syn = int(np.diff(ptr)[s].sum())
    m = {"tiarray": (lambda: sp.event_csrmv_indexed(w, idx, ptr, ids, count, shape=(n, n)), None),
         "ti event_csrmv": (lambda: sp.event_csrmv(w, idx, ptr, s, shape=(n, n), transpose=True), None)}  # fmt: skip
    if env.jax:
        import jax.numpy as jnp

        g = env.jit(lambda i_, c_: sp.event_csrmv_indexed(w, idx, ptr, i_, c_, shape=(n, n)))
        ij, cj = jnp.asarray(ids), jnp.asarray(count, jnp.int32)
        m["ti jit"] = (lambda g=g: _ready(g(ij, cj)), None)
    if env.brainevent:
        import brainevent as be
        import jax.numpy as jnp

        C = be.CSR((jnp.asarray(w), jnp.asarray(idx), jnp.asarray(ptr)), shape=(n, n))
        # C closed over (constants, as tiarray's rows): passed as an argument, its jit raised
        # "Cache keys should be comparable" from the second row of a size on
        h = env.jit(lambda s_: be.BinaryArray(s_) @ C)
        sj = jnp.asarray(s)
        m["brainevent"] = (lambda: _ready(h(sj)), None)
    else:
        m["brainevent"] = NOT_INSTALLED
    on = np.repeat(s, np.diff(ptr))
    m["C floor"] = scatter_floor(idx[on], w[on], n)
    rows = [dict(op="event_csrmv_indexed", dir=True, bound=8 * syn + 4 * count + 4 * n, methods=m,
                 ref=lambda: _csr_t(w, idx, ptr, s, n))]  # fmt: skip
    return rows


def _csr_t(w, idx, ptr, x, n):
    rows = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
    y = np.zeros(n)
    np.add.at(y, idx, w.astype(np.float64) * x[rows])
    return y


def delayed_rows(env, sp, n, p, r, rng):
    w, idx, ptr = _ro(*make_case(n, p, seed=n))
    delays = _ro(rng.integers(0, D_DELAY, idx.shape[0]).astype(np.int32))[0]
    hist = rng.random((D_DELAY, n)) < r
    t = 11
    rows_of = np.repeat(np.arange(n), np.diff(ptr))
    window = hist.any(0)
    syn = int(np.diff(ptr)[window].sum())
    m = {"tiarray": (lambda: sp.event_csrmv_delayed(w, idx, ptr, delays, hist, t, shape=(n, n)), None)}
    if env.jax:
        import jax.numpy as jnp

        g = env.jit(lambda h_, t_: sp.event_csrmv_delayed(w, idx, ptr, delays, h_, t_, shape=(n, n)))
        hj, tj = jnp.asarray(hist), jnp.asarray(t, jnp.int32)
        m["ti jit"] = (lambda g=g: _ready(g(hj, tj)), None)
        # the push form (csr_delay_deliver), brainevent's form: the same ring and call
        ringt = jnp.zeros((D_DELAY + 1, n), jnp.float32)
        wt, dt1 = jnp.asarray(w), jnp.asarray(delays + 1)
        gp = env.jit(
            lambda ring_, s_, t_: sp.csr_delay_deliver(ring_, s_, wt, idx, ptr, dt1, t_, shape=(n, n))
        )
        st = jnp.asarray(hist[t % D_DELAY])  # (converted once, as for brainevent's row)
        m["ti push jit"] = (
            lambda gp=gp, st=st: _ready(gp(ringt, st, tj)),
            "push form: not the same output",
        )
    if env.brainevent:
        import brainevent as be
        import jax.numpy as jnp

        wj, ij, pj, dj = (jnp.asarray(a) for a in (w, idx, ptr, delays + 1))  # its delays are in [1, L)
        ring = jnp.zeros((D_DELAY + 1, n), jnp.float32)
        g = env.jit(lambda ring_, s_, t_: be.csr_delay_deliver(ring_, s_, wj, ij, pj, dj, t_, shape=(n, n)))
        sj = jnp.asarray(hist[t % D_DELAY])
        tj = jnp.asarray(t, jnp.int32)
        m["brainevent"] = (lambda g=g: _ready(g(ring, sj, tj)), "push form: not the same output")
        # its push form on a precomputed delay layout (rows sorted by delay, as tiarray's index)
        lay = be.CSRDelayLayout.build(wj, ij, pj, dj, n_slots=D_DELAY + 1, shape=(n, n))
        gl = env.jit(lambda ring_, s_, t_: be.csr_delay_deliver_layout(ring_, s_, lay, t_))
        m["brainevent layout"] = (lambda gl=gl: _ready(gl(ring, sj, tj)), "push form: not the same output")
        # the pull form's own computation in brainevent: its event CSR product on the
        # (D * n, n) matrix whose row d * n + i holds row i's synapses of delay d, with
        # the history slots gathered in delay order, (t - d) mod D, inside the jit
        order = np.lexsort((rows_of, delays))
        sptr = np.zeros(D_DELAY * n + 1, np.int64)
        np.cumsum(np.bincount(delays.astype(np.int64) * n + rows_of, minlength=D_DELAY * n), out=sptr[1:])
        S = be.CSR((jnp.asarray(w[order]), jnp.asarray(idx[order]), jnp.asarray(sptr.astype(np.int32))),
                   shape=(D_DELAY * n, n))  # fmt: skip
        dl = jnp.arange(D_DELAY, dtype=jnp.int32)
        gs = env.jit(lambda h_, t_: be.BinaryArray(h_[(t_ - dl) % D_DELAY].reshape(-1)) @ S)
        m["brainevent pull"] = (lambda gs=gs: _ready(gs(hj, tj)), None)
    else:
        m["brainevent"] = NOT_INSTALLED

    def ref():
        y = np.zeros(n)
        np.add.at(y, idx, w.astype(np.float64) * hist[(t - delays) % D_DELAY, rows_of])
        return y

    return [
        dict(op="event_csrmv_delayed", dir=True, bound=12 * syn + D_DELAY * n + 4 * n, methods=m, ref=ref)
    ]


def plasticity_rows(env, sp, n, p, r, rng):
    w, idx, ptr = _ro(*make_case(n, p, seed=n))
    nnz = idx.shape[0]
    rows_of = np.repeat(np.arange(n, dtype=np.int32), np.diff(ptr))
    s = rng.random(n) < r
    tr = rng.random(n, dtype=np.float32) * 0.01
    out = []
    for post in (False, True):
        fn = sp.csr_update_on_post if post else sp.csr_update_on_pre
        m = {"tiarray": (lambda fn=fn: fn(w, idx, ptr, s, tr, shape=(n, n), w_min=0.0, w_max=1.0), None)}
        if env.jax:
            import jax.numpy as jnp

            g = env.jit(lambda w_, s_, fn=fn: fn(w_, idx, ptr, s_, tr, shape=(n, n), w_min=0.0, w_max=1.0))
            wj, sj = jnp.asarray(w), jnp.asarray(s)
            m["ti jit"] = (lambda g=g, wj=wj, sj=sj: _ready(g(wj, sj)), None)
        if env.brainevent:
            import brainevent as be
            import jax.numpy as jnp

            wj, ij, pj, sj, tj = (jnp.asarray(a) for a in (w, idx, ptr, s, tr))
            if post:
                ptr_t, perm, rows_t = sp.column_index(idx, ptr, shape=(n, n))
                rt, pt, pm = jnp.asarray(rows_t), jnp.asarray(ptr_t.astype(np.int32)), jnp.asarray(perm)
                g = env.jit(
                    lambda w_, s_, a=(rt, pt, pm, tj): be.update_csr_on_binary_post(
                        w_, *a[:3], a[3], s_, 0.0, 1.0, shape=(n, n)
                    )
                )
            else:
                g = env.jit(
                    lambda w_, s_, a=(ij, pj, tj): be.update_csr_on_binary_pre(
                        w_, a[0], a[1], s_, a[2], 0.0, 1.0, shape=(n, n)
                    )
                )
            m["brainevent"] = (lambda g=g, wj=wj, sj=sj: _ready(g(wj, sj)), None)
        else:
            m["brainevent"] = NOT_INSTALLED

        def numpy_update(post=post):
            new = w.copy()
            sel = s[idx] if post else s[rows_of]
            new[sel] = np.clip(new[sel] + (tr[rows_of[sel]] if post else tr[idx[sel]]), 0.0, 1.0)
            return new

        m["numpy"] = (numpy_update, None)
        syn = int((s[idx] if post else s[rows_of]).sum())
        out.append(dict(op="csr_update_on_post" if post else "csr_update_on_pre", dir=post, methods=m,
                        bound=8 * nnz + 12 * syn + 4 * n, ref=lambda u=numpy_update: u().astype(np.float64)))  # fmt: skip
    return out


BUILDERS = {
    "fcn": fcn_rows,
    "dense": dense_rows,
    "coo": coo_rows,
    "jitc_mm": jitc_rows,
    "indexed": indexed_rows,
    "delayed": delayed_rows,
    "plasticity": plasticity_rows,
}


# ----------------------------------------------------------------------------- running


def _check(got, ref):
    got = np.asarray(got, np.float64)
    scale = max(1.0, float(np.abs(ref).max(initial=0.0)))
    return got.shape == ref.shape and np.allclose(got, ref, rtol=1e-4, atol=1e-4 * scale)


def run_row(row, min_time, rounds):
    ref = row["ref"]() if row["ref"] is not None else None
    res = {}
    route_outputs = {}
    for name, spec in row["methods"].items():
        if isinstance(spec, str):
            res[name] = spec
            continue
        fn, own = spec
        try:
            got = np.asarray(fn())
        except Exception as e:  # a failing method is reported, not fatal
            res[name] = f"error: {type(e).__name__}: {str(e)[:60]}"
            continue
        if isinstance(own, str):
            status = own  # checked separately, or not comparable
        elif own is not None:
            status = "ok" if _check(got, own) else "WRONG (its own matrix)"
        elif ref is not None:
            status = "ok" if _check(got, ref) else "WRONG"
        else:
            route_outputs[name] = got
            status = "ok"
        if status.startswith("WRONG"):
            res[name] = status
            continue
        time.sleep(0.02)
        res[name] = timed(fn, min_time, rounds) + (status,)
    if (
        ref is None and len(route_outputs) > 1
    ):  # no dense reference (too large): the tiarray routes must agree
        base = route_outputs.get("tiarray")
        for name, got in route_outputs.items():
            if base is not None and not _check(got, base) and isinstance(res[name], tuple):
                res[name] = "WRONG (routes disagree)"
    return res


def _cell(v):
    if isinstance(v, str):
        return v
    med, mn, _, status = v
    s = f"{_fmt(med)} ({_fmt(mn)})"
    return s if status == "ok" else f"{s} [{status}]"


def print_family(family, rows, stat):
    names = []
    for r in rows:
        for k in r["res"]:
            if k not in names:
                names.append(k)
    si = 0 if stat == "median" else 1
    print(
        f"\n## {family}: times (us per call), lowest round median (minimum); ratios peer / tiarray from the {stat}\n"
    )
    head = [
        "op",
        "dir",
        "n",
        "r",
        "bound us",
        *names,
        "brainevent / ti jit",
        *(["brainevent / ti push jit"] if "ti push jit" in names else []),
        *(["brainevent layout / ti push jit"] if "brainevent layout" in names else []),
        *(["brainevent pull / ti jit"] if "brainevent pull" in names else []),
        "peers / tiarray (NumPy)",
        "ti jit x LB",
        *(["ti jit x C floor"] if "C floor" in names else []),
    ]
    print("| " + " | ".join(head) + " |")
    print("|" + "|".join("---" for _ in head) + "|")
    for r in rows:
        res = r["res"]

        def t(name, res=res):
            v = res.get(name)
            return v[si] if isinstance(v, tuple) else float("nan")

        be = t("brainevent") / t("ti jit")
        push = [t("brainevent") / t("ti push jit")] if "ti push jit" in names else []
        push += [t("brainevent layout") / t("ti push jit")] if "brainevent layout" in names else []
        push += [t("brainevent pull") / t("ti jit")] if "brainevent pull" in names else []
        peers = [f"{k} {_fmt(t(k) / t('tiarray'))}" for k in names
                 if k not in ("tiarray", "ti jit", "ti push jit", "C floor") and not k.startswith("brainevent") and isinstance(res.get(k), tuple)]  # fmt: skip
        dirn = {"plasticity": ("on pre", "on post")}.get(family, ("A @ s", "A.T @ s"))[int(bool(r["dir"]))]
        cells = [r["op"], dirn, str(r["n"]), str(r["r"]), _fmt(r["bound_us"]), *[_cell(res.get(k, "-")) for k in names],
                 *[("**" + _fmt(b) + "**") if b == b and b < 1 else _fmt(b) for b in (be, *push)],
                 "; ".join(peers) or "-",
                 _fmt(t("ti jit") / r["bound_us"]) if r["bound_us"] == r["bound_us"] else "-",
                 *([_fmt(t("ti jit") / t("C floor")) if isinstance(res.get("C floor"), tuple) else "-"]
                   if "C floor" in names else [])]  # fmt: skip
        print("| " + " | ".join(cells) + " |")
    print("\n(bold: below 1, brainevent is faster than tiarray's jax.jit route)")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="smoke run: n = 1000, r = 0.05, short timings")
    ap.add_argument("--families", nargs="*", default=FAMILIES, choices=FAMILIES)
    ap.add_argument("--n", type=int, nargs="*", default=None)
    ap.add_argument("--r", type=float, nargs="*", default=None)
    ap.add_argument("--min-time", type=float, default=None)
    ap.add_argument("--rounds", type=int, default=None)
    ap.add_argument("--stat", choices=["min", "median"], default="min")
    args = ap.parse_args(argv)
    global BW
    BW = copy_bandwidth(100 * 2**20 if args.quick else 400 * 2**20)
    ns = args.n or ([1000] if args.quick else [4000, 10000, 40000])
    rs = args.r or ([0.05] if args.quick else [0.01, 0.05, 0.1])
    min_time = args.min_time or (0.02 if args.quick else 0.3)
    rounds = args.rounds or (1 if args.quick else 2)
    p_of = {4000: 0.02, 10000: 0.02, 40000: 0.002}

    from tiarray.operators import sparse as sp

    import tiarray

    tiarray._runtime.ensure_init()
    env = Env()
    print("# bench_sparse_families")
    print(f"- {machine_line()}; brainevent "
          f"{__import__('brainevent').__version__ if env.brainevent else NOT_INSTALLED}; scipy "
          f"{__import__('scipy').__version__ if env.scipy else NOT_INSTALLED}; load "
          + " ".join(f"{x:.2f}" for x in os.getloadavg()))  # fmt: skip
    print(f"- min-time {min_time}s x {rounds} round(s); float32 weights, int32 indices")
    print(f"- memory-traffic bound: bytes / {BW / 1e9:.1f} GB/s (one-thread NumPy copy, measured now)")
    bad = []
    for family in args.families:
        rows = []
        for n in ns:
            p = p_of.get(n, 20.0 / n)
            for r in rs:
                rng = np.random.default_rng(int(r * 1000) + n)
                for row in BUILDERS[family](env, sp, n, p, r, rng):
                    row.update(n=n, r=r, bound_us=row["bound"] / BW * 1e6)
                    row["res"] = run_row(row, min_time, rounds)
                    rows.append(row)
                    bad += [(family, row["op"], n, r, k) for k, v in row["res"].items()
                            if isinstance(v, str) and v.startswith(("WRONG", "error"))]  # fmt: skip
                    print(f"  . {family} {row['op']} dir={int(bool(row['dir']))} n={n} r={r}", file=sys.stderr,
                          flush=True)  # fmt: skip
        print_family(family, rows, args.stat)
    if bad:
        print("\nWRONG RESULTS OR ERRORS:", bad)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
