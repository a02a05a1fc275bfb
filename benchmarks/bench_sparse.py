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
connectivity passed as jitted arguments (``ti jit``), and the :class:`tiarray.operators.CSR`
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
        A = self.csr
        if transpose:
            out.append(("ti CSR", lambda: A.T @ x, np.asarray))
        else:
            out.append(("ti CSR", lambda: A @ x, np.asarray))
        return out


PEER_ORDER = ["scipy", "torch", "jax BCSR", "jax BCOO", "dense @", "brainevent"]
ROUTES = ["ti torch", "ti jit", "ti CSR"]


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
    args = ap.parse_args(argv)
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


if __name__ == "__main__":
    sys.exit(main())
