"""Test cases of the sparse operator families beyond CSR, each with a dense NumPy reference.

A :class:`Case` is one call of a public function: its arguments (NumPy arrays; the
framework tests convert them), its keyword arguments, a float64 reference computed from
the same values with dense NumPy matrices, the positions of the differentiable
arguments, and the largest number of terms summed into one output element (for the
tolerance). ``tests/test_sparse_families.py`` runs every case on every framework.

Tolerances come from the error analysis of a float sum: a result element that sums ``k``
products of exactly representable inputs is within ``(k + 2) * eps * sum |terms|`` of the
exact value (``k - 1`` roundings of the sum, one per product, one for a shared weight
applied at the end). ``sum |terms|`` is the reference evaluated on the absolute values of
the arguments (every reference is a sum of products of its arguments).

Seeds are stable: ``zlib.crc32`` of the case id (``hash()`` of a str changes per process).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass

import numpy as np
import tiarray.operators.sparse as sp
from _sparse_helpers import host_call


@dataclass
class Case:
    id: str
    family: str
    fn: object  # the public function
    args: tuple  # NumPy arrays / Python values, positional
    kw: dict
    ref: object  # ref(*args) -> float64 ndarray (the same positional arguments)
    diff: tuple  # positions of differentiable (float) arguments
    terms: int  # the most terms summed into one output element
    dtype: str  # the result dtype
    operand: int | None = None  # position of the dense operand (vmap over it: one mm launch)
    mm_prim: str | None = None  # the one primitive that vmap over the operand must become
    absref: object = None  # sum |terms| per element, where it is not ref() of the absolute values

    def tol(self, *args):
        """Per-element absolute tolerance against the float64 reference."""
        eps = np.finfo(self.dtype).eps
        if self.absref is not None:
            scale = self.absref(*args)
        else:
            absargs = tuple(
                np.abs(a) if isinstance(a, np.ndarray) and a.dtype.kind == "f" else a for a in args
            )
            scale = np.abs(self.ref(*absargs))
        return (self.terms + 2) * eps * scale + np.finfo(self.dtype).tiny


def rng_for(case_id: str) -> np.random.Generator:
    return np.random.default_rng(zlib.crc32(case_id.encode()))


def _weights(kind, shape, dtype, rng):
    if kind == "scalar":
        return np.asarray(rng.standard_normal(), dtype)
    if kind == "one":
        return np.asarray([rng.standard_normal()], dtype)
    return rng.standard_normal(shape).astype(dtype)


def _operand(shape, ekind, dtype, rng):
    if ekind == "bool":
        return rng.random(shape) < 0.3
    x = rng.standard_normal(shape).astype(dtype)
    x[rng.random(shape) < 0.4] = 0
    return x


def _f64(x):
    return np.asarray(x, np.float64)


# ----------------------------------------------------------------------------- fixed-number


def fcn_dense(w, idx, shape):
    m, n = shape
    A = np.zeros((m, n))
    w = _f64(w)
    wb = np.broadcast_to(w.reshape(()) if w.size == 1 else w.reshape(idx.shape), idx.shape)
    np.add.at(A, (np.repeat(np.arange(m), idx.shape[1]), idx.reshape(-1)), wb.reshape(-1))
    return A


def fcn_cases():
    out = []
    m, n, k = 23, 17, 5
    for op in ("fcnmv", "event_fcnmv", "fcnmm", "event_fcnmm"):
        for dtype in ("float32", "float64"):
            for wk in ("per-synapse", "scalar", "one"):
                for transpose in (False, True):
                    for ekind in ("bool", "float") if op.startswith("event") else ("float",):
                        cid = f"{op}-{dtype}-{wk}-T{int(transpose)}-{ekind}"
                        rng = rng_for(cid)
                        idx = sp.fixed_num_conn(m, n, k, seed=int(rng.integers(1 << 30)), replace=True)
                        w = _weights(wk, (m, k), dtype, rng)
                        length = m if transpose else n
                        x = _operand((length,) if op.endswith("mv") else (length, 3), ekind, dtype, rng)

                        def ref(w_, idx_, x_, transpose=transpose):
                            A = fcn_dense(w_, idx_, (m, n))
                            return (A.T if transpose else A) @ _f64(x_)

                        out.append(
                            Case(
                                cid, "fcn", getattr(sp, op), (w, idx, x), dict(shape=(m, n), transpose=transpose),
                                ref, (0,) if ekind == "bool" else (0, 2),
                                terms=int(np.bincount(idx.reshape(-1)).max()) if transpose else k, dtype=dtype,
                                operand=2, mm_prim=op[:-1] + "m",
                            )
                        )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- dense


def dense_cases():
    out = []
    m, n = 19, 26
    for op in ("event_densemv", "event_densemm"):
        for dtype in ("float32", "float64"):
            for transpose in (False, True):
                for ekind in ("bool", "float"):
                    cid = f"{op}-{dtype}-T{int(transpose)}-{ekind}"
                    rng = rng_for(cid)
                    W = rng.standard_normal((m, n)).astype(dtype)
                    length = m if transpose else n
                    x = _operand((length,) if op.endswith("mv") else (length, 3), ekind, dtype, rng)

                    def ref(W_, x_, transpose=transpose):
                        return (_f64(W_).T if transpose else _f64(W_)) @ _f64(x_)

                    out.append(
                        Case(
                            cid, "dense", getattr(sp, op), (W, x), dict(transpose=transpose), ref,
                            (0,) if ekind == "bool" else (0, 1), terms=length, dtype=dtype,
                            operand=1, mm_prim="event_densemm",
                        )
                    )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- COO


def coo_dense(w, row, col, shape):
    A = np.zeros(shape)
    w = _f64(w)
    np.add.at(A, (row, col), np.broadcast_to(w.reshape(()) if w.size == 1 else w, row.shape))
    return A


def random_coo(m, n, nnz, rng):
    """Unsorted synapses with repeated pairs (they add up)."""
    row = rng.integers(0, m, nnz)
    col = rng.integers(0, n, nnz)
    row[-5:], col[-5:] = row[:5], col[:5]
    perm = rng.permutation(nnz)
    return row[perm].astype(np.int32), col[perm].astype(np.int32)


def coo_cases():
    out = []
    m, n, nnz = 21, 16, 90
    for op in ("coomv", "event_coomv", "coomm", "event_coomm"):
        for dtype in ("float32", "float64"):
            for wk in ("per-synapse", "scalar", "one"):
                for transpose in (False, True):
                    for ekind in ("bool", "float") if op.startswith("event") else ("float",):
                        cid = f"{op}-{dtype}-{wk}-T{int(transpose)}-{ekind}"
                        rng = rng_for(cid)
                        row, col = random_coo(m, n, nnz, rng)
                        w = _weights(wk, (nnz,), dtype, rng)
                        length = m if transpose else n
                        x = _operand((length,) if op.endswith("mv") else (length, 3), ekind, dtype, rng)

                        def ref(w_, row_, col_, x_, transpose=transpose):
                            A = coo_dense(w_, row_, col_, (m, n))
                            return (A.T if transpose else A) @ _f64(x_)

                        dst = col if transpose else row
                        out.append(
                            Case(
                                cid, "coo", getattr(sp, op), (w, row, col, x), dict(shape=(m, n), transpose=transpose),
                                ref, (0,) if ekind == "bool" else (0, 3), terms=int(np.bincount(dst).max()),
                                dtype=dtype, operand=3, mm_prim=op[:-1] + "m",
                            )
                        )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- JIT connectivity

JITC_PARAMS = {"homo": (0.7,), "uniform": (-0.4, 1.3), "normal": (0.2, 0.9)}


def jitc_cases():
    """The matrix products (every dtype), and the vector products in float64 (their vmap is one
    matrix product)."""
    out = []
    shape, prob, seed = (29, 23), 0.25, 31
    m, n = shape
    for dist, pvals in JITC_PARAMS.items():
        todense = functools.partial(host_call, getattr(sp, f"jitc_todense_prob_{dist}"))
        for event in (False, True):
            for kind in ("mm", "mv"):
                op = f"jitc_{'event_' if event else ''}{kind}_prob_{dist}"
                for dtype in ("float32", "float64") if kind == "mm" else ("float64",):
                    for transpose in (False, True):
                        for ekind in ("bool", "float") if event else ("float",):
                            cid = f"{op}-{dtype}-T{int(transpose)}-{ekind}"
                            rng = rng_for(cid)
                            ps = tuple(np.asarray(p, dtype) for p in pvals)
                            length = m if transpose else n
                            x = _operand((length,) if kind == "mv" else (length, 3), ekind, dtype, rng)
                            k = len(ps)

                            def ref(x_, *rest, transpose=transpose, todense=todense, k=k):
                                A = _f64(todense(*rest[:k], prob, seed, shape=shape))
                                return (A.T if transpose else A) @ _f64(x_)

                            def absref(x_, *rest, transpose=transpose, todense=todense, k=k):
                                A = np.abs(_f64(todense(*rest[:k], prob, seed, shape=shape)))
                                return (A.T if transpose else A) @ np.abs(_f64(x_))

                            A = todense(*ps, prob, seed, shape=shape) != 0
                            terms = int(A.sum(0 if transpose else 1).max())
                            diff = tuple(range(1, 1 + k)) if ekind == "bool" else tuple(range(0, 1 + k))
                            out.append(
                                Case(
                                    cid, "jitc", getattr(sp, op), (x, *ps, prob, seed),
                                    dict(shape=shape, transpose=transpose), ref, diff, terms=terms, dtype=dtype,
                                    operand=0, mm_prim=op.replace("_mv_", "_mm_"), absref=absref,
                                )
                            )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- spike-index events


def spike_list(m, rate, pad, rng):
    """``(ids, count, e)``: the distinct active rows first, then ``pad`` junk entries (as
    ``jnp.nonzero(size=...)`` pads), and the event vector they stand for."""
    e = rng.random(m) < rate
    active = np.nonzero(e)[0]
    ids = np.concatenate([active, rng.integers(0, m, pad)]).astype(np.int32)
    return ids, len(active), e


def indexed_cases():
    from _sparse_helpers import dense_of, random_csr

    out = []
    m, n = 27, 19
    for op in ("event_csrmv_indexed", "event_fcnmv_indexed"):
        for dtype in ("float32", "float64"):
            for wk in ("per-synapse", "scalar", "one"):
                cid = f"{op}-{dtype}-{wk}"
                rng = rng_for(cid)
                ids, count, e = spike_list(m, 0.3, 4, rng)
                if op == "event_csrmv_indexed":
                    w0, idx, ptr, _ = random_csr(m, n, 0.3, rng)
                    w = _weights(wk, w0.shape, dtype, rng)
                    args = (w, idx, ptr, ids, count)

                    def ref(w_, idx_, ptr_, ids_, count_, e=e):
                        return dense_of(w_, idx_, ptr_, (m, n)).T @ e

                    terms = int(np.bincount(idx, minlength=n).max())
                else:
                    idx = sp.fixed_num_conn(m, n, 4, seed=int(rng.integers(1 << 30)), replace=True)
                    w = _weights(wk, idx.shape, dtype, rng)
                    args = (w, idx, ids, count)

                    def ref(w_, idx_, ids_, count_, e=e):
                        return fcn_dense(w_, idx_, (m, n)).T @ e

                    terms = int(np.bincount(idx.reshape(-1), minlength=n).max())
                out.append(
                    Case(
                        cid,
                        "indexed",
                        getattr(sp, op),
                        args,
                        dict(shape=(m, n)),
                        ref,
                        (0,),
                        terms=terms,
                        dtype=dtype,
                    )
                )
    return out


# ----------------------------------------------------------------------------- delays


def delayed_cases():
    from _sparse_helpers import random_csr

    out = []
    m, n, D = 25, 18, 4
    for dtype in ("float32", "float64"):
        for wk in ("per-synapse", "scalar", "one"):
            for ekind in ("bool", "float"):
                for t in (2, 9):
                    cid = f"event_csrmv_delayed-{dtype}-{wk}-{ekind}-t{t}"
                    rng = rng_for(cid)
                    w0, idx, ptr, _ = random_csr(m, n, 0.3, rng)
                    w = _weights(wk, w0.shape, dtype, rng)
                    delays = rng.integers(0, D, idx.shape[0]).astype(np.int32)
                    hist = _operand((D, m), ekind, dtype, rng)
                    rows = np.repeat(np.arange(m), np.diff(ptr))

                    def ref(w_, idx_, ptr_, d_, h_, t_, rows=rows):
                        wb = np.broadcast_to(
                            _f64(w_).reshape(()) if np.size(w_) == 1 else _f64(w_), idx_.shape
                        )
                        y = np.zeros(n)
                        np.add.at(y, idx_, wb * _f64(h_)[(t_ - d_) % D, rows])
                        return y

                    out.append(
                        Case(
                            cid, "delayed", sp.event_csrmv_delayed, (w, idx, ptr, delays, hist, t), dict(shape=(m, n)),
                            ref, (0,) if ekind == "bool" else (0, 4), terms=int(np.bincount(idx, minlength=n).max()),
                            dtype=dtype,
                        )
                    )  # fmt: skip
    return out


def deliver_cases():
    """``csr_delay_deliver``: the arrival ring plus each active row's synapses, each added into
    slot ``(t + delay) % L`` of its column."""
    from _sparse_helpers import random_csr

    out = []
    m, n, L = 22, 15, 4
    for dtype in ("float32", "float64"):
        for wk in ("per-synapse", "scalar", "one"):
            for ekind in ("bool", "float"):
                for t in (3, -2):
                    cid = f"csr_delay_deliver-{dtype}-{wk}-{ekind}-t{t}"
                    rng = rng_for(cid)
                    w0, idx, ptr, _ = random_csr(m, n, 0.3, rng)
                    w = _weights(wk, w0.shape, dtype, rng)
                    delays = rng.integers(0, L, idx.shape[0]).astype(np.int32)
                    ring = rng.standard_normal((L, n)).astype(dtype)
                    ev = _operand((m,), ekind, dtype, rng)
                    rows = np.repeat(np.arange(m), np.diff(ptr))

                    def ref(ring_, ev_, w_, idx_, ptr_, d_, t_, rows=rows):
                        y = _f64(ring_).copy()
                        wb = np.broadcast_to(
                            _f64(w_).reshape(()) if np.size(w_) == 1 else _f64(w_), idx_.shape
                        )
                        np.add.at(y, ((t_ + d_) % y.shape[0], idx_), wb * _f64(ev_)[rows])
                        return y

                    slots = np.zeros((L, n), int)
                    np.add.at(slots, ((t + delays) % L, idx), 1)
                    out.append(
                        Case(
                            cid, "deliver", sp.csr_delay_deliver, (ring, ev, w, idx, ptr, delays, t),
                            dict(shape=(m, n)), ref, (0, 2) if ekind == "bool" else (0, 1, 2),
                            terms=int(slots.max()) + 1, dtype=dtype,
                        )
                    )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- sampled product


def sddmm_cases():
    """``csr_sddmm``: ``(a @ b.T)`` (or ``a * b`` per entry for vectors) at the synapses."""
    from _sparse_helpers import random_csr

    out = []
    m, n = 17, 13
    for dtype in ("float32", "float64"):
        for kdim in (0, 4):
            for ekind in ("bool", "float") if kdim == 0 else ("float",):
                cid = f"csr_sddmm-{dtype}-K{kdim}-{ekind}"
                rng = rng_for(cid)
                _, idx, ptr, _ = random_csr(m, n, 0.3, rng)
                a = rng.standard_normal((m, kdim) if kdim else m).astype(dtype)
                b = _operand((n, kdim) if kdim else (n,), ekind, dtype, rng)
                rows = np.repeat(np.arange(m), np.diff(ptr))

                def ref(idx_, ptr_, a_, b_, rows=rows):
                    prod = _f64(a_)[rows] * _f64(b_)[idx_]
                    return prod.sum(-1) if prod.ndim == 2 else prod

                out.append(
                    Case(
                        cid, "sddmm", sp.csr_sddmm, (idx, ptr, a, b), dict(shape=(m, n)), ref,
                        (2,) if ekind == "bool" else (2, 3), terms=max(kdim, 1), dtype=dtype,
                    )
                )  # fmt: skip
    return out


ALL = {
    "fcn": fcn_cases,
    "dense": dense_cases,
    "coo": coo_cases,
    "jitc": jitc_cases,
    "indexed": indexed_cases,
    "delayed": delayed_cases,
    "deliver": deliver_cases,
    "sddmm": sddmm_cases,
}


def cases(family=None):
    fams = [family] if family else list(ALL)
    return [c for f in fams for c in ALL[f]()]
