"""Benchmark: event-driven and dense-operand CSR products against their peers.

One run prints two tables, both from the same measurements:

1. times: median microseconds per call of every method, with the memory-traffic lower
   bound of the case;
2. ratios: ``peer_time / tiarray_time`` for every peer (**> 1 means tiarray is faster**),
   and ``x LB`` = tiarray's time over the memory-traffic bound (1 would be perfect).

Cases: ``event_csrmv`` (bool spikes) and ``csrmv`` (a float32 vector), both directions,
n in {1000, 4000, 10000, 40000} with p = 0.02, 0.02, 0.02, 0.002 (20 to 200 synapses
per row, as in ``shared/peer-baselines-2026-11-29.md``), firing rate r in {0.01, 0.05,
0.1}, float32 weights, int32 indices. ``W`` has exactly ``round(p n^2)`` nonzeros at
random positions.

tiarray routes, all on the same data: the function API on NumPy arrays (``tiarray``, the
reference of the ratios), on torch tensors (``ti torch``), inside ``jax.jit`` with the
connectivity passed as jitted arguments (``ti jit``) or closed over (``ti jit const``: JAX
constants, whose column index is cached, so ``event_csrmv``'s ``A @ s`` can scatter the
active columns; torch tensors get it too), and the :class:`tiarray.operators.CSR`
object (``ti CSR``), which caches the transposed structure: ``A @ s`` becomes an event
scatter over ``A.T``'s active rows and ``A.T @ v`` a gather (the other two directions are
the function API again).

Peers, each called as its documentation shows: ``scipy.sparse`` (``W @ s``; ``W.T @ s``
through the CSC view), ``torch.sparse_csr_tensor`` (``W @ s``; a prebuilt ``W^T`` CSR for
the transpose), ``jax.experimental.sparse`` BCSR (prebuilt ``W^T`` for the transpose:
``BCSR.T`` is not implemented) and BCOO (``BCOO.T``) under ``jax.jit``, dense ``W @ s``
(NumPy sgemv, skipped at n = 40000: 6.4 GB), and ``brainevent`` (``CSR @ BinaryArray``
and ``BinaryArray @ CSR`` under ``jax.jit``) when it is installed. Non-tiarray methods get
the spikes pre-converted to float32 (not timed), except brainevent, which takes bool.

``--weights shared`` gives tiarray one weight for all synapses (a 0-d array: no weight
array is read) and the peers, which have no such form, an array of that constant.

Memory-traffic bounds (bytes / the copy bandwidth, measured at the start of each run as
the best one-thread NumPy copy of 400 MB, bytes read + written per second; with
``--weights shared`` without the weight bytes):

- ``LB_ev`` (event ops, both directions): 8 bytes per active synapse + n spike bytes +
  4n output bytes. The gather direction (``transpose=False``) cannot reach it with CSR
  input: it must read every column index to find the active ones. Its own bound,
  ``LB_gather``, is 4 bytes per synapse + 4 bytes per active synapse + n + 4n.
- ``LB_csr`` (``csrmv``): 8 bytes per synapse + indptr + input and output vectors.

Threads are pinned to 2 (OMP/MKL/OPENBLAS_NUM_THREADS, ``torch.set_num_threads(2)``;
XLA and Taichi use the machine's 2 CPUs). Timing: after warm-up, each method is called
repeatedly for ``--min-time`` seconds, in ``--rounds`` rounds; the times table shows the
lowest per-round median and, in parentheses, the minimum over all calls. Ratios use
``--stat`` (default ``min``): on a machine shared with other jobs, contention only ever
adds time, so the minimum is the best estimate of each method's own cost; use
``--stat median`` on a quiet machine. Methods run one after the other with a short pause
in between, so that spinning OpenMP workers of one library do not steal the cores of
the next.

Usage::

    python benchmarks/bench_sparse.py            # full table (a few minutes)
    python benchmarks/bench_sparse.py --quick    # smoke run for CI
    python benchmarks/bench_sparse.py --weights shared   # one weight for all synapses
    python benchmarks/bench_sparse.py --gpu      # on one CUDA GPU, n up to 10^6 (see gpu_main)
"""

from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_k] = "2"
os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import argparse  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

BW = None  # bytes/s, measured by main() (_harness.copy_bandwidth)


def make_case(n, p, seed=0):
    """CSR with exactly round(p n^2) nonzeros at random positions, sorted within rows."""
    rng = np.random.default_rng(seed)
    nnz = int(round(p * n * n))
    flat = np.unique(rng.integers(0, n * n, size=int(nnz * 1.05) + 16, dtype=np.int64))
    while flat.shape[0] < nnz:  # pragma: no cover - only for tiny n
        flat = np.unique(np.concatenate([flat, rng.integers(0, n * n, size=nnz, dtype=np.int64)]))
    flat = np.sort(rng.choice(flat, size=nnz, replace=False))
    rows = flat // n
    cols = (flat % n).astype(np.int32)
    indptr = np.zeros(n + 1, np.int32)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    weights = rng.random(nnz, dtype=np.float32)
    return weights, cols, indptr


def reference(w, idx, ptr, x, n, transpose):
    """``A @ x`` (``A.T @ x``) of the CSR matrix in float64 by NumPy alone, and each element's
    float32 error bound for products rounded to float32 and summed in any order: terms *
    2^-24 * sum |term| (a rounding per product and per addition) plus the output rounding."""
    rows = np.repeat(np.arange(n), np.diff(ptr))
    terms = w.astype(np.float64) * (x[rows] if transpose else x[idx]).astype(np.float64)
    at = idx if transpose else rows
    ref = np.bincount(at, weights=terms, minlength=n)
    mag = np.bincount(at, weights=np.abs(terms), minlength=n)
    count = np.bincount(at, weights=terms != 0, minlength=n)
    return ref, count * 2.0**-24 * mag + 2.0**-24 * np.abs(ref)


def agrees(got, ref, bound) -> bool:
    got = np.asarray(got, dtype=np.float64)
    return got.shape == ref.shape and bool(np.all(np.abs(got - ref) <= bound))


def measure(f, min_time, max_calls=100000):
    f()
    f()
    ts = []
    t_end = time.perf_counter() + min_time
    while len(ts) < 5 or (time.perf_counter() < t_end and len(ts) < max_calls):
        t0 = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t0)
    ts = np.asarray(ts) * 1e6
    return float(np.median(ts)), float(ts.min()), len(ts)


def timed(f, min_time, rounds):
    """(lowest per-round median, minimum over all calls, calls) in microseconds."""
    meds, mins, calls = [], [], 0
    for _ in range(rounds):
        med, mn, n = measure(f, min_time)
        meds.append(med)
        mins.append(mn)
        calls += n
    return min(meds), min(mins), calls


class Peers:
    """Builds each library's matrices once per case and hands out the timed callables."""

    def __init__(self, args):
        self.args = args
        self.have = {}
        try:
            import scipy.sparse  # noqa: F401

            self.have["scipy"] = True
        except ImportError:
            pass
        try:
            import torch

            torch.set_num_threads(2)
            self.have["torch"] = True
        except ImportError:
            pass
        try:
            import jax  # noqa: F401
            import jax.experimental.sparse  # noqa: F401

            self.have["jax"] = True
        except ImportError:
            pass
        try:
            import brainevent  # noqa: F401

            self.have["brainevent"] = True
        except Exception:
            pass

    def versions(self):
        out = {"numpy": np.__version__}
        for mod in ("scipy", "torch", "jax", "taichi", "brainevent"):
            try:
                v = __import__(mod).__version__
                out[mod] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
            except Exception:
                out[mod] = "not installed"
        return out

    def build(self, w, idx, ptr, n):
        self.S = self.ST = None
        self.torch_A = self.torch_AT = None
        self.jax = {}
        self.be = None
        shape = (n, n)
        if "scipy" in self.have:
            import scipy.sparse as ss

            self.S = ss.csr_matrix((w, idx, ptr), shape=shape)
            self.ST = self.S.T  # CSC view, no copy
            self.S_T_csr = self.S.T.tocsr()
        if "torch" in self.have:
            import torch

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                self.torch_A = torch.sparse_csr_tensor(
                    torch.from_numpy(ptr), torch.from_numpy(idx), torch.from_numpy(w), shape
                )
                st = self.S_T_csr
                self.torch_AT = torch.sparse_csr_tensor(
                    torch.from_numpy(st.indptr.astype(np.int32)),
                    torch.from_numpy(st.indices.astype(np.int32)),
                    torch.from_numpy(st.data),
                    shape,
                )
        if "jax" in self.have:
            import jax
            import jax.numpy as jnp
            from jax.experimental import sparse as jsparse

            st = self.S_T_csr
            self.jax["bcsr"] = jsparse.BCSR((jnp.asarray(w), jnp.asarray(idx), jnp.asarray(ptr)), shape=shape)
            self.jax["bcsr_T"] = jsparse.BCSR(
                (
                    jnp.asarray(st.data),
                    jnp.asarray(st.indices.astype(np.int32)),
                    jnp.asarray(st.indptr.astype(np.int32)),
                ),
                shape=shape,
            )
            rows = np.repeat(np.arange(n, dtype=np.int32), np.diff(ptr))
            self.jax["bcoo"] = jsparse.BCOO(
                (jnp.asarray(w), jnp.asarray(np.stack([rows, idx], 1))), shape=shape, indices_sorted=True
            )
            self.jax["mv"] = jax.jit(lambda M, v: M @ v)
            self.jax["mvT"] = jax.jit(lambda M, v: M.T @ v)
        if "brainevent" in self.have:
            import brainevent
            import jax
            import jax.numpy as jnp

            self.be = brainevent.CSR((jnp.asarray(w), jnp.asarray(idx), jnp.asarray(ptr)), shape=shape)
            self.be_ev = jax.jit(lambda c, s: c @ brainevent.BinaryArray(s))
            self.be_evT = jax.jit(lambda c, s: brainevent.BinaryArray(s) @ c)
            self.be_mv = jax.jit(lambda c, v: c @ v)
            self.be_mvT = jax.jit(lambda c, v: v @ c)
        self.dense = None
        if n <= self.args.dense_max_n:
            self.dense = self.S.toarray() if self.S is not None else None

    def methods(self, op, transpose, x_bool, x_float):
        """(name, callable, result->numpy) for every peer of one case."""
        out = []
        xf = x_float
        if self.S is not None:
            M = self.ST if transpose else self.S
            out.append(("scipy", lambda: M @ xf, np.asarray))
        if self.torch_A is not None:
            import torch

            T = self.torch_AT if transpose else self.torch_A
            xt = torch.from_numpy(xf)
            out.append(("torch", lambda: T @ xt, lambda r: r.numpy()))
        if self.jax:
            import jax
            import jax.numpy as jnp

            xj = jax.device_put(jnp.asarray(xf))
            mv = self.jax["mv"]
            B = self.jax["bcsr_T"] if transpose else self.jax["bcsr"]
            out.append(("jax BCSR", lambda mv=mv, B=B, xj=xj: mv(B, xj).block_until_ready(), np.asarray))
            C = self.jax["bcoo"]
            fc = self.jax["mvT"] if transpose else mv
            out.append(("jax BCOO", lambda fc=fc, C=C, xj=xj: fc(C, xj).block_until_ready(), np.asarray))
        if self.dense is not None:
            D = self.dense.T if transpose else self.dense
            D = np.ascontiguousarray(D)
            out.append(("dense @", lambda: D @ xf, np.asarray))
        if self.be is not None:
            import jax.numpy as jnp

            c = self.be
            if op == "event_csrmv":
                sj = jnp.asarray(x_bool)
                f = self.be_evT if transpose else self.be_ev
            else:
                sj = jnp.asarray(xf)
                f = self.be_mvT if transpose else self.be_mv
            out.append(("brainevent", lambda f=f, c=c, sj=sj: f(c, sj).block_until_ready(), np.asarray))
        return out


def tiarray_call(sp, op, w, idx, ptr, x, n, transpose):
    f = getattr(sp, op)
    return lambda: f(w, idx, ptr, x, shape=(n, n), transpose=transpose)


class Routes:
    """The tiarray routes other than NumPy: torch tensors, inside jax.jit, the CSR object."""

    def __init__(self, have):
        self.torch = "torch" in have
        self.jax = "jax" in have
        self._jit = {}

    def build(self, sp, w, idx, ptr, n):
        self.csr = sp.CSR(w, idx, ptr, shape=(n, n))
        self.csr.T @ np.zeros(n, np.float32)  # build the cached transpose (not timed)
        if self.torch:
            import torch

            self.t = tuple(torch.from_numpy(a) for a in (w, idx, ptr))
        if self.jax:
            import jax.numpy as jnp

            self.j = tuple(jnp.asarray(a) for a in (w, idx, ptr))

    def methods(self, sp, op, transpose, x, n):
        f = getattr(sp, op)
        out = []
        if self.torch:
            import torch

            xt = torch.from_numpy(x)
            tw, ti_, tp = self.t
            out.append(
                (
                    "ti torch",
                    lambda: f(tw, ti_, tp, xt, shape=(n, n), transpose=transpose),
                    lambda r: r.numpy(),
                )
            )
        if self.jax:
            import jax
            import jax.numpy as jnp

            key = (op, transpose, n)
            g = self._jit.get(key)
            if g is None:
                g = self._jit[key] = jax.jit(
                    lambda w, i, p, x: f(w, i, p, x, shape=(n, n), transpose=transpose)
                )
            jw, ji, jp = self.j
            xj = jnp.asarray(x)
            out.append(("ti jit", lambda: g(jw, ji, jp, xj).block_until_ready(), np.asarray))
            # the connectivity closed over (constants of the computation, as BrainPy models hold
            # it): event_csrmv's A @ s may then take the column route (docs/sparse.md)
            h = self._jit.get(key + ("const",))
            if h is None:
                h = self._jit[key + ("const",)] = jax.jit(
                    lambda x: f(jw, ji, jp, x, shape=(n, n), transpose=transpose)
                )
            out.append(("ti jit const", lambda: h(xj).block_until_ready(), np.asarray))
        A = self.csr
        if transpose:
            out.append(("ti CSR", lambda: A.T @ x, np.asarray))
        else:
            out.append(("ti CSR", lambda: A @ x, np.asarray))
        return out


PEER_ORDER = ["scipy", "torch", "jax BCSR", "jax BCOO", "dense @", "brainevent"]
ROUTES = ["ti torch", "ti jit", "ti jit const", "ti CSR"]


def bounds(op, transpose, n, nnz, active_syn, shared=False):
    """The memory-traffic bound (us) and its name; ``shared``: one weight, no weight array read."""
    wb = 0 if shared else 4  # bytes of weight per synapse read
    if op == "event_csrmv":
        lb_ev = ((4 + wb) * active_syn + n + 4 * n) / BW * 1e6
        if transpose:
            return lb_ev, "LB_ev"
        return (4 * nnz + wb * active_syn + n + 4 * n) / BW * 1e6, "LB_gather"
    return ((4 + wb) * nnz + 4 * (n + 1) + 8 * n) / BW * 1e6, "LB_csr"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small smoke run (CI)")
    ap.add_argument("--min-time", type=float, default=None, help="seconds of timed calls per method")
    ap.add_argument(
        "--rounds", type=int, default=None, help="repeat each measurement (lowest median, overall minimum)"
    )
    ap.add_argument("--n", type=int, nargs="*", default=None)
    ap.add_argument("--r", type=float, nargs="*", default=None)
    ap.add_argument("--ops", nargs="*", default=["event_csrmv", "csrmv"])
    ap.add_argument("--dense-max-n", type=int, default=10000)
    ap.add_argument(
        "--weights",
        choices=["per-synapse", "shared"],
        default="per-synapse",
        help="one weight per synapse, or one shared weight (tiarray gets a 0-d array, peers a constant array)",
    )
    ap.add_argument("--no-peers", action="store_true", help="time tiarray only")
    ap.add_argument("--no-routes", action="store_true", help="time tiarray's NumPy route only")
    ap.add_argument("--stat", choices=["min", "median"], default="min", help="statistic used for the ratios")
    ap.add_argument(
        "--json", default=None, help="also write the measurements to this JSON file (for plot_results.py)"
    )
    ap.add_argument(
        "--gpu",
        action="store_true",
        help="run on one CUDA GPU: tiarray on torch CUDA tensors and in jax.jit next to cuSPARSE "
        "(torch, CuPy) and dense products (see gpu_main)",
    )
    ap.add_argument("--gpu-bw", type=float, default=4.8e12, help="--gpu: bytes/s of the bounds (H200 HBM3e)")
    ap.add_argument("--gpu-k", type=int, default=100, help="--gpu: synapses per row")
    ap.add_argument("--gpu-device", choices=["cuda", "cpu"], default="cuda", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.gpu:
        return gpu_main(args)
    if args.quick:
        ns = args.n or [1000, 4000]
        rs = args.r or [0.05]
        min_time = args.min_time or 0.05
        rounds = args.rounds or 1
    else:
        ns = args.n or [1000, 4000, 10000, 40000]
        rs = args.r or [0.01, 0.05, 0.1]
        min_time = args.min_time or 0.3
        rounds = args.rounds or 2
    p_of = {1000: 0.02, 4000: 0.02, 10000: 0.02, 40000: 0.002}

    global BW
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from _harness import copy_bandwidth

    BW = copy_bandwidth(100 * 2**20 if args.quick else 400 * 2**20)
    from tiarray.operators import sparse as sp

    import tiarray

    tiarray._runtime.ensure_init()
    peers = Peers(args)
    frameworks = dict(peers.have)
    if args.no_peers:
        peers.have = {}
    vers = peers.versions()
    print("# bench_sparse")
    print(
        f"- {platform.machine()} {platform.processor() or ''}, {os.cpu_count()} CPUs, Python "
        f"{sys.version.split()[0]}; " + ", ".join(f"{k} {v}" for k, v in vers.items())
    )
    import taichi.lang.impl as ti_impl

    print(
        f"- threads: OMP/MKL/OPENBLAS=2, torch 2, Taichi cpu_max_num_threads="
        f"{ti_impl.current_cfg().cpu_max_num_threads}; min-time {min_time}s x {rounds} round(s) "
        "; load " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    )
    print(f"- bandwidth for the bounds: {BW / 1e9:.1f} GB/s (best one-thread NumPy copy, read + write)")
    print(
        f"- weights: {args.weights}\n"
        "- times in us per call: lowest per-round median (minimum over all calls); ratios from the "
        f"{args.stat}: peer / tiarray (> 1: tiarray faster); x LB = tiarray / bound\n"
    )

    rows = []
    routes = Routes({} if args.no_routes else frameworks)
    t_start = time.perf_counter()
    for n in ns:
        p = p_of.get(n, 20.0 / n)
        w, idx, ptr = make_case(n, p, seed=n)
        nnz = idx.shape[0]
        shared = args.weights == "shared"
        if shared:  # the peers have no shared-weight form: they get the constant array
            w = np.full_like(w, 0.5)
        w_ti = np.asarray(w[0]) if shared else w
        peers.build(w, idx, ptr, n)
        routes.build(sp, w_ti, idx, ptr, n)
        for r in rs:
            rng = np.random.default_rng(int(r * 1000) + n)
            s_bool = rng.random(n) < r
            s_f32 = s_bool.astype(np.float32)
            v_f32 = rng.standard_normal(n).astype(np.float32)
            for op in args.ops:
                for transpose in (False, True):
                    if op == "event_csrmv":
                        x_t, x_peer, active_rows = s_bool, s_f32, s_bool
                    else:
                        x_t, x_peer, active_rows = v_f32, v_f32, np.ones(n, bool)
                    f_ti = tiarray_call(sp, op, w_ti, idx, ptr, x_t, n, transpose)
                    counts = np.diff(ptr)
                    if transpose:
                        active_syn = int(counts[active_rows].sum())
                    else:
                        active_syn = int(active_rows[idx].sum())
                    ref, bound = reference(w, idx, ptr, x_peer, n, transpose)
                    res = {}
                    ok = agrees(f_ti(), ref, bound)
                    res["tiarray"] = timed(f_ti, min_time, rounds) + (ok,)
                    for name, f, conv in routes.methods(sp, op, transpose, x_t, n):
                        okr = agrees(conv(f()), ref, bound)
                        res[name] = timed(f, min_time, rounds) + (okr,)
                    for name, f, conv in peers.methods(op, transpose, s_bool, x_peer):
                        try:
                            got = conv(f())
                        except Exception as e:  # a peer failing is reported, not fatal
                            res[name] = (float("nan"), float("nan"), 0, f"error: {type(e).__name__}")
                            continue
                        okp = agrees(got, ref, bound)
                        time.sleep(0.05)
                        res[name] = timed(f, min_time, rounds) + (okp,)
                        time.sleep(0.05)
                    lb, lb_name = bounds(op, transpose, n, nnz, active_syn, shared)
                    rows.append(
                        dict(op=op, transpose=transpose, n=n, p=p, r=r, nnz=nnz, active_syn=active_syn,
                             lb=lb, lb_name=lb_name, res=res)
                    )  # fmt: skip
                    print(
                        f"  . {op:11s} T={int(transpose)} n={n:5d} r={r:<4}: tiarray {res['tiarray'][0]:9.1f} us "
                        f"({lb_name} {lb:7.1f})",
                        file=sys.stderr,
                        flush=True,
                    )
    print_tables(rows, args.stat)
    print(f"\n_total {time.perf_counter() - t_start:.0f} s_")
    if args.json:
        write_json(args.json, rows, machine=vers, stat=args.stat, weights=args.weights)
    bad = [
        (r["op"], r["transpose"], r["n"], r["r"], k)
        for r in rows
        for k, v in r["res"].items()
        if v[3] is not True and not (isinstance(v[3], str))
    ]
    if bad:
        print("\nWRONG RESULTS:", bad)
        return 1
    return 0


def write_json(path, rows, **meta):
    """The measurements as JSON: ``{"meta": ..., "rows": [...]}``; each row's ``res`` maps a
    method to ``[lowest round median us, minimum us, calls, correct]``."""
    import json

    out = [{**r, "res": {k: list(v) for k, v in r["res"].items()}} for r in rows]
    with open(path, "w") as f:
        json.dump({"meta": {**meta, "load": os.getloadavg()}, "rows": out}, f, indent=1, default=str)


def _fmt(x):
    if x != x:
        return "-"
    if x >= 100:
        return f"{x:,.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def print_tables(rows, stat="min"):
    peers = [p for p in PEER_ORDER if any(p in r["res"] for r in rows)]
    routes = [p for p in ROUTES if any(p in r["res"] for r in rows)]
    dirn = {False: "A @ s", True: "A.T @ s"}
    si = 0 if stat == "median" else 1
    cols = ["tiarray", *routes, *peers]
    print("## times (us per call): lowest round median (minimum)\n")
    print("| op | dir | n | p | r | active syn | bound | bound us | " + " | ".join(cols) + " |")
    print("|---|---|---:|---:|---:|---:|---|---:|" + "---:|" * len(cols))
    for r in rows:
        cells = [f"{_fmt(r['res'][p][0])} ({_fmt(r['res'][p][1])})" if p in r["res"] else "-" for p in cols]
        print(
            f"| {r['op']} | {dirn[r['transpose']]} | {r['n']} | {r['p']} | {r['r']} | {r['active_syn']:,} | "
            f"{r['lb_name']} | {_fmt(r['lb'])} | " + " | ".join(cells) + " |"
        )
    print(f"\n## ratios of the {stat} times: peer / tiarray (> 1: tiarray faster); x LB: tiarray / bound\n")
    print(
        "| op | dir | n | r | x LB | "
        + " | ".join(peers)
        + " | margin | "
        + " | ".join(f"margin, {x}" for x in routes)
        + " |"
    )
    print("|---|---|---:|---:|---:|" + "---:|" * (len(peers) + 1 + len(routes)))
    for r in rows:
        t = r["res"]["tiarray"][si]
        ratios = []
        for p in peers:
            v = r["res"].get(p)
            ratios.append(v[si] / t if v is not None and v[si] == v[si] else float("nan"))
        finite = [x for x in ratios if x == x]
        worst = min(finite) if finite else float("nan")
        cells = [("**" + _fmt(x) + "**") if x == x and x < 1 else _fmt(x) for x in ratios]
        margins = []
        for route in routes:
            v = r["res"].get(route)
            rv = [
                r["res"][p][si] / v[si] for p in peers if p in r["res"] and r["res"][p][si] == r["res"][p][si]
            ]
            m = min(rv) if v is not None and rv else float("nan")
            margins.append(("**" + _fmt(m) + "**") if m == m and m < 1 else _fmt(m))
        print(
            f"| {r['op']} | {dirn[r['transpose']]} | {r['n']} | {r['r']} | {_fmt(t / r['lb'])} | "
            + " | ".join(cells)
            + f" | {('**' + _fmt(worst) + '**') if worst < 1 else _fmt(worst)} | "
            + " | ".join(margins)
            + " |"
        )
    print(
        "\n(bold: below 1, a peer is faster. 'margin' is the smallest peer / tiarray ratio of the NumPy "
        "route; 'margin, ti ...' the same for the torch route, the jax.jit route and the CSR object, "
        "each against the same peers)"
    )


# ----------------------------------------------------------------------------- --gpu mode
#
# One run on a CUDA GPU (``--gpu``; the hidden ``--gpu-device cpu`` runs the same code with
# torch, JAX and tiarray on the CPU at small sizes, as a smoke test). The matrices are built
# on the device with torch (exactly ``--gpu-k`` distinct random columns per row), the
# references are float64 products on the device, every method is called on the same device
# data, and a method that fails is reported in its cell without stopping the run.

GPU_METHODS = ["ti torch", "ti jit", "torch CSR", "cupy", "cupy W.T", "dense"]


def _err(e) -> str:
    msg = " ".join(str(e).split())[:80].replace("|", "/")
    return f"ERR {type(e).__name__}: {msg}"


def gpu_make_case(n, k, seed, device):
    """``(w, idx, ptr)`` as torch tensors on ``device``: exactly ``k`` distinct columns per
    row, sorted within rows, float32 weights in [0, 1), int32 indices. Duplicate columns
    are redrawn (only those entries) until there are none; the draw treats every column
    alike, so each row's set of columns is uniform over the k-subsets."""
    import torch

    if not 0 < k <= n // 2:
        raise ValueError(f"--gpu-k {k} must lie in [1, n/2] (n = {n})")
    if n * k >= 2**31:
        raise ValueError(f"n k = {n * k} synapses do not fit int32 indices")
    g = torch.Generator(device=device).manual_seed(seed)
    cols = torch.sort(
        torch.randint(0, n, (n, k), generator=g, device=device, dtype=torch.int32), dim=1
    ).values
    for _ in range(1000):
        dup = cols[:, 1:] == cols[:, :-1]
        nd = int(dup.sum())
        if nd == 0:
            break
        tail = cols[:, 1:]  # a view: the assignment writes into cols
        tail[dup] = torch.randint(0, n, (nd,), generator=g, device=device, dtype=torch.int32)
        cols = torch.sort(cols, dim=1).values
    else:  # pragma: no cover
        raise RuntimeError("gpu_make_case(): duplicate columns remain after 1000 redraws")
    idx = cols.reshape(-1)
    ptr = torch.arange(0, n * k + 1, k, device=device, dtype=torch.int32)
    w = torch.rand(n * k, generator=g, device=device, dtype=torch.float32)
    return w, idx, ptr


def gpu_transpose(w, idx, ptr, n):
    """The CSR form of ``A.T`` (columns sorted within rows), on the arrays' device."""
    import torch

    srt = torch.sort(idx, stable=True)
    rows = torch.arange(n, device=idx.device, dtype=torch.int32).repeat_interleave(
        (ptr[1:] - ptr[:-1]).long()
    )
    ptr_t = torch.searchsorted(srt.values, torch.arange(n + 1, device=idx.device, dtype=torch.int32))
    return w[srt.indices], rows[srt.indices], ptr_t.to(torch.int32)


def gpu_reference(w, idx, ptr, x, n, transpose):
    """:func:`reference` computed with torch on the data's device; NumPy ``(ref, bound)``."""
    import torch

    rows = torch.arange(n, device=idx.device).repeat_interleave((ptr[1:] - ptr[:-1]).long())
    cols = idx.long()
    xd = x.double()
    terms = w.double() * (xd[rows] if transpose else xd[cols])
    at = cols if transpose else rows

    def acc(v):
        return torch.zeros(n, dtype=torch.float64, device=idx.device).index_add_(0, at, v)

    ref = acc(terms)
    mag = acc(terms.abs())
    count = acc((terms != 0).double())
    bound = count * 2.0**-24 * mag + 2.0**-24 * ref.abs()
    return ref.cpu().numpy(), bound.cpu().numpy()


def _to_numpy(r):
    mod = type(r).__module__
    if mod.startswith("torch"):
        return r.detach().cpu().numpy()
    if mod.startswith("cupy"):
        return r.get()
    return np.asarray(r)


class GpuSync:
    """``sync(out)`` waits for ``out`` (``block_until_ready`` for JAX, CuPy's device
    synchronize for CuPy) and then for the whole device (``torch.cuda.synchronize()``: every
    stream of every library on it). On the CPU (smoke run) only the first part."""

    def __init__(self, cuda):
        import torch

        self.dev = torch.cuda.synchronize if cuda else None

    def __call__(self, out=None):
        if out is not None:
            if hasattr(out, "block_until_ready"):
                out.block_until_ready()
            if type(out).__module__.startswith("cupy"):
                import cupy

                cupy.cuda.Device().synchronize()
        if self.dev is not None:
            self.dev()


def gpu_timed(f, sync, min_time, repeats):
    """``(median us, min us, calls)`` per call: after three warm-up calls, ``repeats``
    batches of calls issued back to back, each batch ended by ``sync`` (result and device)."""
    sync(f())
    sync(f())
    t0 = time.perf_counter()
    sync(f())
    one = time.perf_counter() - t0
    calls = int(max(1, min(2000, min_time / repeats / max(one, 1e-6))))
    per = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        for _ in range(calls):
            out = f()
        sync(out)
        per.append((time.perf_counter() - t0) / calls * 1e6)
    return float(np.median(per)), float(np.min(per)), calls * repeats


class GpuEnv:
    """What the --gpu run uses: device, frameworks (None where missing), timing settings."""

    def __init__(self, args, notes):
        import torch

        self.cuda = args.gpu_device == "cuda"
        self.dev = torch.device("cuda" if self.cuda else "cpu")
        self.sync = GpuSync(self.cuda)
        self.k = args.gpu_k
        self.dense_max_n = args.dense_max_n
        self.ops = args.ops
        self.min_time = args.min_time or (0.02 if args.quick else 0.05)
        self.repeats = args.rounds or 5
        self.jax = self.jdev = None
        try:
            import jax

            self.jdev = jax.devices()[0]
            if self.cuda and self.jdev.platform != "gpu":
                notes.append(f"ti jit: JAX has no GPU here (its default device is {self.jdev}): not run")
            else:
                self.jax = jax
        except Exception as e:
            notes.append(f"ti jit: JAX unusable: {_err(e)}")
        self.cupy = self.cpsparse = None
        if not self.cuda:
            try:
                import cupy  # noqa: F401

                notes.append("SKIP: cupy (--gpu-device cpu)")
            except ImportError:
                notes.append("SKIP: cupy not installed")
        else:
            try:
                import cupy
                import cupyx.scipy.sparse as cpsparse

                self.cupy, self.cpsparse = cupy, cpsparse
            except ImportError:
                notes.append("SKIP: cupy not installed")
            except Exception as e:
                notes.append(f"SKIP: cupy: {_err(e)}")


def _built(make):
    """``make()``, or the error it raised as a table cell."""
    try:
        return make()
    except Exception as e:
        return _err(e)


def gpu_rows_for_n(env, sp, n, rs, rows, notes):
    """Build the case of size ``n`` on the device and measure every op, direction and rate."""
    import torch

    t_case = time.perf_counter()
    try:
        w, idx, ptr = gpu_make_case(n, env.k, seed=n, device=env.dev)
        w_t, idx_t, ptr_t = gpu_transpose(w, idx, ptr, n)
    except Exception as e:
        notes.append(f"n={n}: building the case failed: {_err(e)}")
        return
    nnz = int(idx.shape[0])
    counts = (ptr[1:] - ptr[:-1]).long()
    shape = (n, n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's sparse CSR beta warning
        t_csr = _built(lambda: torch.sparse_csr_tensor(ptr, idx, w, shape))
        t_csr_t = _built(lambda: torch.sparse_csr_tensor(ptr_t, idx_t, w_t, shape))
    jax, jdev = env.jax, env.jdev
    j_data = None
    if jax is not None:

        def to_jax(t):
            try:
                return jax.dlpack.from_dlpack(t)  # zero copy where JAX can
            except Exception:
                return jax.device_put(t.cpu().numpy(), jdev)

        j_data = _built(lambda: tuple(to_jax(a) for a in (w, idx, ptr)))
    c_csr = c_csr_t = None
    cupy = env.cupy
    if cupy is not None:

        def cp_csr(a, b, c):
            return env.cpsparse.csr_matrix(
                (cupy.from_dlpack(a), cupy.from_dlpack(b), cupy.from_dlpack(c)), shape=shape
            )

        c_csr = _built(lambda: cp_csr(w, idx, ptr))
        c_csr_t = _built(lambda: cp_csr(w_t, idx_t, ptr_t))
    dense = None
    if n <= env.dense_max_n:

        def make_dense():
            D = torch.zeros(shape, dtype=torch.float32, device=env.dev)
            D[torch.arange(n, device=env.dev).repeat_interleave(counts), idx.long()] = w
            return D, D.T.contiguous()

        dense = _built(make_dense)
    env.sync()
    t_build = time.perf_counter() - t_case
    jitted = {}

    def jit_of(fn, transpose):
        key = (fn.__name__, transpose)
        if key not in jitted:
            jitted[key] = jax.jit(lambda a, b, c, x: fn(a, b, c, x, shape=shape, transpose=transpose))
        return jitted[key]

    cases = [("event_csrmv", r) for r in rs] + [("csrmv", None)]
    for op, r in [c for c in cases if c[0] in env.ops]:
        fn = getattr(sp, op)
        g = torch.Generator(device=env.dev).manual_seed(n + (int(r * 1000) if r is not None else 7))
        if op == "event_csrmv":
            x_ti = torch.rand(n, generator=g, device=env.dev) < r  # bool spikes
            x_f = x_ti.to(torch.float32)  # what the peers get (not timed)
        else:
            x_f = torch.randn(n, generator=g, device=env.dev, dtype=torch.float32)
            x_ti = x_f
        xj = xc = None
        if jax is not None:
            xj = _built(lambda x=x_ti: jax.device_put(x.cpu().numpy(), jdev))
        if cupy is not None:
            xc = _built(lambda x=x_f: cupy.from_dlpack(x))
        for transpose in (False, True):
            if op == "event_csrmv":
                active = int(counts[x_ti].sum()) if transpose else int(x_ti[idx.long()].sum())
            else:
                active = nnz
            try:
                ref, bnd = gpu_reference(w, idx, ptr, x_f, n, transpose)
            except Exception as e:
                notes.append(f"{op} T={int(transpose)} n={n} r={r}: no reference, not run: {_err(e)}")
                continue
            methods = {
                "ti torch": lambda fn=fn, x=x_ti, t=transpose: fn(w, idx, ptr, x, shape=shape, transpose=t)
            }
            if jax is not None:
                if isinstance(j_data, str) or isinstance(xj, str):
                    methods["ti jit"] = j_data if isinstance(j_data, str) else xj
                else:
                    methods["ti jit"] = lambda jf=jit_of(fn, transpose), x=xj: jf(*j_data, x)
            T = t_csr_t if transpose else t_csr
            methods["torch CSR"] = T if isinstance(T, str) else (lambda T=T, x=x_f: T @ x)
            if cupy is not None:
                for name, C in (
                    ("cupy", c_csr_t if transpose else c_csr),
                    ("cupy W.T", c_csr if transpose else None),
                ):
                    if C is None:
                        continue
                    if isinstance(C, str) or isinstance(xc, str):
                        methods[name] = C if isinstance(C, str) else xc
                    elif name == "cupy W.T":
                        methods[name] = lambda C=C, x=xc: C.T @ x
                    else:
                        methods[name] = lambda C=C, x=xc: C @ x
            if dense is not None:
                if isinstance(dense, str):
                    methods["dense"] = dense
                else:
                    Dm = dense[1] if transpose else dense[0]
                    methods["dense"] = lambda Dm=Dm, x=x_f: Dm @ x
            res = {}
            for name, f in methods.items():
                if isinstance(f, str):
                    res[name] = f
                    continue
                try:
                    out = f()
                    env.sync(out)
                    ok = agrees(_to_numpy(out), ref, bnd)
                    del out
                    res[name] = gpu_timed(f, env.sync, env.min_time, env.repeats) + (ok,)
                except Exception as e:  # one method failing is reported, never fatal
                    res[name] = _err(e)
            lb, lb_name = bounds(op, transpose, n, nnz, active)
            rows.append(
                dict(op=op, transpose=transpose, n=n, p=env.k / n, r=r, nnz=nnz, active_syn=active,
                     lb=lb, lb_name=lb_name, res=res)
            )  # fmt: skip
            v = res["ti torch"]
            msg = v if isinstance(v, str) else f"{v[0]:9.1f} us"
            print(
                f"  . {op:11s} T={int(transpose)} n={n:7d} r={r}: ti torch {msg} ({lb_name} {lb:7.1f} us)",
                file=sys.stderr,
                flush=True,
            )
    print(
        f"  . n={n}: case built on the device in {t_build:.2f} s; all rows of n in "
        f"{time.perf_counter() - t_case:.1f} s",
        file=sys.stderr,
        flush=True,
    )


def gpu_main(args):
    """``--gpu``: ``event_csrmv`` and ``csrmv`` on one CUDA GPU, both directions.

    n in {10^4, 10^5, 10^6} (``--n``) with exactly ``--gpu-k`` (100) distinct random columns
    per row (p = k / n; 10^8 synapses at n = 10^6), float32 weights, int32 indices, firing
    rates ``--r`` (0.01, 0.1) for the event op (``csrmv`` gets one float32 vector per n).
    Methods on the same device data: ``ti torch`` (the function API on torch CUDA tensors,
    the reference of the ratios), ``ti jit`` (the same inside ``jax.jit`` on JAX GPU arrays),
    ``torch CSR`` (cuSPARSE through ``torch.sparse_csr_tensor``: ``W @ x``, a prebuilt
    ``W^T`` CSR for the transpose), ``cupy`` (``cupyx.scipy.sparse.csr_matrix``: ``W @ x``, a
    prebuilt ``W^T`` for the transpose), ``cupy W.T`` (``W.T @ x`` through CuPy's transposed
    view), ``dense`` (torch ``W @ x``, n <= ``--dense-max-n``). Peers get the spikes as
    float32 (not timed). Times: median (and min) over ``--rounds`` (5) batches of calls
    issued back to back, about ``--min-time`` (0.05) s per method in all, each batch ended by
    a device synchronize: the per-call time includes each library's host-side cost. Each
    result is checked against a float64 product on the device (``WRONG`` outside the
    float32 error bound of :func:`reference`). Bounds: :func:`bounds` at ``--gpu-bw`` bytes/s.
    """
    cuda = args.gpu_device == "cuda"
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    if not cuda:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    global BW
    BW = args.gpu_bw
    t_start = time.perf_counter()
    import torch

    if cuda and not torch.cuda.is_available():
        print("bench_sparse --gpu: torch has no CUDA device here (torch.cuda.is_available() is False)")
        return 2
    import tiarray

    try:
        tdev = tiarray.init("cuda" if cuda else "cpu")  # before any other tiarray call
    except Exception as e:
        print(f"bench_sparse --gpu: tiarray.init failed: {_err(e)}")
        return 2
    from tiarray.operators import sparse as sp

    notes = []
    env = GpuEnv(args, notes)
    if cuda:
        ns = args.n or ([10000, 100000] if args.quick else [10000, 100000, 1000000])
    else:
        ns = args.n or [1000, 3000]
    rs = args.r or [0.01, 0.1]
    vers = {"numpy": np.__version__}
    for mod in ("torch", "jax", "cupy", "taichi"):
        try:
            v = __import__(mod).__version__
            vers[mod] = ".".join(map(str, v)) if isinstance(v, tuple) else str(v)
        except Exception:
            vers[mod] = "not installed"
    name = (
        torch.cuda.get_device_name(env.dev)
        if cuda
        else f"CPU smoke run ({platform.machine()}, --gpu-device cpu)"
    )
    print("# bench_sparse --gpu")
    print(
        f"- {name}; tiarray on {tdev}, JAX on {env.jdev}; Python {sys.version.split()[0]}; "
        + ", ".join(f"{a} {b}" for a, b in vers.items())
    )
    print(
        f"- k = {env.k} synapses per row (p = k / n), float32 weights, int32 indices; bounds at "
        f"{BW / 1e12:.2f} TB/s; times: median (min) over {env.repeats} batches of back-to-back calls "
        f"(about {env.min_time:g} s per method), each batch ended by a device synchronize"
    )
    print(
        "- ratios: peer median / ti torch median (> 1: tiarray faster); x LB: tiarray / bound; "
        "ti jit: tiarray inside jax.jit\n"
    )
    rows = []
    for n in ns:
        try:
            gpu_rows_for_n(env, sp, n, rs, rows, notes)
        except Exception as e:  # e.g. out of memory outside the methods: the other sizes still run
            notes.append(f"n={n}: stopped: {_err(e)}")
        if cuda:
            torch.cuda.empty_cache()
    print_gpu_tables(rows)
    for note in notes:
        print(f"- note: {note}")
    print(f"\n_total {time.perf_counter() - t_start:.1f} s_")
    if args.json:
        import json

        with open(args.json, "w") as f:
            meta = dict(gpu=name, versions=vers, bw=BW, k=env.k, min_time=env.min_time, repeats=env.repeats)
            json.dump({"meta": meta, "rows": rows}, f, indent=1, default=str)
    bad = []
    for r in rows:
        for m, v in r["res"].items():
            where = f"{r['op']} {'A.T @ s' if r['transpose'] else 'A @ s'} n={r['n']} r={r['r']} {m}"
            if isinstance(v, str):
                if m.startswith("ti "):
                    bad.append(f"{where}: {v}")
            elif v[3] is not True:
                bad.append(f"{where}: WRONG")
    if bad or not rows:
        print("\nWRONG RESULTS OR TIARRAY ERRORS:\n" + "\n".join(bad or ["no rows measured"]))
        return 1
    return 0


def _gpu_cell(v):
    if v is None:
        return "-"
    if isinstance(v, str):
        return v
    s = f"{_fmt(v[0])} ({_fmt(v[1])})"
    return s if v[3] else f"**WRONG** {s}"


def _gpu_ratio(res, m, num, den):
    """``num / den`` as a cell for method ``m`` (ERR, WRONG, bold below 1)."""
    v = res.get(m)
    if v is None:
        return "-"
    if isinstance(v, str):
        return "ERR"
    if num is None or den is None:
        return "-"
    x = num / den
    s = ("**" + _fmt(x) + "**") if x < 1 else _fmt(x)
    return s if v[3] else f"{s} WRONG"


def print_gpu_tables(rows):
    dirn = {False: "A @ s", True: "A.T @ s"}
    cols = [m for m in GPU_METHODS if any(m in r["res"] for r in rows)]
    peers = [m for m in cols if not m.startswith("ti ")]
    print("## times (us per call): median (min)\n")
    print("| op | dir | n | nnz | r | active syn | bound | bound us | " + " | ".join(cols) + " |")
    print("|---|---|---:|---:|---:|---:|---|---:|" + "---:|" * len(cols))
    for r in rows:
        rate = "-" if r["r"] is None else r["r"]
        print(
            f"| {r['op']} | {dirn[r['transpose']]} | {r['n']:,} | {r['nnz']:,} | {rate} | {r['active_syn']:,} | "
            f"{r['lb_name']} | {_fmt(r['lb'])} | "
            + " | ".join(_gpu_cell(r["res"].get(m)) for m in cols)
            + " |"
        )
    print("\n## ratios of the medians: peer / ti torch (> 1: tiarray faster); x LB: tiarray / bound\n")
    print(
        "| op | dir | n | r | ti torch x LB | ti jit x LB | ti jit / ti torch | "
        + " | ".join(peers)
        + " | fastest peer / ti torch | fastest peer / ti jit |"
    )
    print("|---|---|---:|---:|---:|---:|---:|" + "---:|" * (len(peers) + 2))
    for r in rows:
        res = r["res"]
        t = {m: v[0] for m, v in res.items() if not isinstance(v, str)}
        ti, tj = t.get("ti torch"), t.get("ti jit")
        good = [t[m] for m in peers if m in t and res[m][3]]
        best = min(good) if good else None
        cells = [
            _gpu_ratio(res, "ti torch", ti, r["lb"]),
            _gpu_ratio(res, "ti jit", tj, r["lb"]),
            _fmt(tj / ti) if ti is not None and tj is not None else "-",
            *[_gpu_ratio(res, m, t.get(m), ti) for m in peers],
            _fmt(best / ti) if best is not None and ti is not None else "-",
            _fmt(best / tj) if best is not None and tj is not None else "-",
        ]
        rate = "-" if r["r"] is None else r["r"]
        print(f"| {r['op']} | {dirn[r['transpose']]} | {r['n']:,} | {rate} | " + " | ".join(cells) + " |")
    print(
        "\n(bold: below 1, the peer is faster; ERR: the method raised, the times table has the message; "
        "WRONG: outside the float32 error bound of the float64 reference; 'fastest peer' among the "
        "correct ones)"
    )


if __name__ == "__main__":
    sys.exit(main())
