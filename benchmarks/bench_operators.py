"""Per-call cost of an Operator from NumPy, torch, JAX (eager, jit, fori_loop), against baselines.

The operator is ``axpy`` (``out = alpha * x + y``) on 16 float32 elements: the work is
nothing, so the numbers are the overhead of each route (``--size N`` for another length:
below 256 elements every new torch tensor lands at a new address, so each call re-sets the
output argument, ~0.9 us; from 256 on the freed address comes back). Every row is measured in the
same run as the baselines it is compared with:

- ``raw launch``: ``Launcher.spec(...).launch`` with pointers ready, a new output
  pointer each call (what any route must at least pay);
- Taichi's own call, ``kernel(alpha, x, y, out)`` with NumPy arrays;
- the same computation written natively in each framework;
- a trivial jitted JAX function (``x + 1``) for the jit targets.

Targets (issue 4): from NumPy/torch within 10 us of the raw launch and >= 5x cheaper than
Taichi's own call; inside ``jax.jit`` at most 3x the trivial jitted function.

Run: ``python benchmarks/bench_operators.py`` (``--quick`` for fewer repeats);
``python benchmarks/bench_operators.py --gpu`` on one CUDA GPU (JAX GPU and torch CUDA rows, see gpu_main).
(No ``from __future__ import annotations`` here: the module defines a Taichi kernel.)
"""

import argparse
import os
import statistics
import sys
import time

import numpy as np


def timeit(f, n, repeat):
    for _ in range(min(n, 200)):
        f()
    per = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            f()
        per.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(per), min(per)


class Rounds:
    """Measure many routes round-robin (route A, B, C, A, B, C, ...) so that a change in
    machine load affects every route alike; report the median and best round per route."""

    def __init__(self, repeat):
        self.repeat = repeat
        self.entries = []  # [section, name, f, n, base, per-call results]

    def add(self, section, name, f, n, base=None, scale=1.0):
        for _ in range(min(n, 200)):
            f()
        self.entries.append([section, name, f, n, base, scale, []])

    def run(self):
        for _ in range(self.repeat):
            for e in self.entries:
                f, n = e[2], e[3]
                t0 = time.perf_counter()
                for _ in range(n):
                    f()
                e[6].append((time.perf_counter() - t0) / n * 1e6 / e[5])

    def rows(self):
        return [(e[0], e[1], statistics.median(e[6]), min(e[6]), e[4]) for e in self.entries]

    def median(self, name):
        for e in self.entries:
            if e[1] == name:
                return statistics.median(e[6])
        raise KeyError(name)

    def best(self, name):
        for e in self.entries:
            if e[1] == name:
                return min(e[6])
        raise KeyError(name)


_checked = []


def agree(name, got, want):
    """Check a route's result against the NumPy reference before anything is timed: a route
    that computes something else would make its time meaningless (the script stops)."""
    got = np.asarray(got, dtype=np.float64)
    want = np.asarray(want, dtype=np.float64)
    # float32 a*x+y: one rounding of the product and one of the sum, |error| <= 2 u |result|
    if got.shape != want.shape or not np.all(np.abs(got - want) <= 2 * 2.0**-24 * np.abs(want)):
        raise SystemExit(f"bench_operators: route '{name}' disagrees with NumPy: got {got}, want {want}")
    _checked.append(name)


def make_axpy():
    """The benchmark's kernel and its Operator: ``out = alpha * x + y`` (float32 alpha)."""
    import taichi as ti

    import tiarray as ta

    @ti.kernel
    def _axpy(
        alpha: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)
    ):
        for i in x:
            out[i] = alpha * x[i] + y[i]

    return _axpy, ta.Operator("axpy", kernel=_axpy, outs=lambda alpha, x, y: ta.ShapeDtype(x.shape, x.dtype))


def parts(size: int) -> int:
    """The pieces of an eager call, each timed alone (ns per call, best of 7 runs of 300 000,
    an empty lambda's time subtracted): re-setting an array argument of a launch context with
    Taichi's setter and by writing its pointer (``array_slot``), and, where torch is installed,
    what the torch route's generated code calls: the output's allocation and, per input
    tensor, the checks of its signature and its pointer."""
    import ctypes

    import numpy as np

    from tiarray import _backend

    def per_call(f, n=300_000):
        best = []
        for _ in range(7):
            t0 = time.perf_counter()
            for _ in range(n):
                f()
            best.append((time.perf_counter() - t0) / n)
        return min(best) * 1e9

    empty = per_call(lambda: None)
    _, axpy = make_axpy()
    x = np.arange(size, dtype=np.float32)
    axpy(2.0, x, x)
    spec = next(iter(axpy._plans.values())).spec
    ctx = spec.t_kernel.make_launch_context()
    idx = spec.setters[3][1]
    bufs = [np.zeros(size, np.float32) for _ in range(2)]
    ptrs = [b.ctypes.data for b in bufs]
    rows = [
        (
            "Taichi's setter, an array argument",
            lambda: ctx.set_arg_external_array_with_shape(idx, ptrs[0], 4 * size, (size,), 0),
        )
    ]
    slot = _backend.array_slot(ctx, idx, 4 * size, (size,))
    if slot:
        word = ctypes.c_uint64.from_address(slot)
        rows.append(
            ("its pointer written where the context keeps it", lambda: setattr(word, "value", ptrs[1]))
        )
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        a = torch.arange(float(size))
        d, shape = torch.float32, tuple(a.shape)
        rows += [
            ("torch.zeros(n, dtype=...) (the output)", lambda: torch.zeros(size, dtype=d)),
            ("torch.empty(n, dtype=...)", lambda: torch.empty(size, dtype=d)),
            ("a.dtype", lambda: a.dtype),
            ("a.shape == (n,)", lambda: a.shape == shape),
            ("a.is_cpu", lambda: a.is_cpu),
            ("a.requires_grad", lambda: a.requires_grad),
            ("a.is_contiguous()", lambda: a.is_contiguous()),
            ("a.is_neg()", lambda: a.is_neg()),
            ("a.data_ptr()", lambda: a.data_ptr()),
        ]
    print(f"# {size} float32 elements" + (f", torch {torch.__version__}" if torch is not None else ""))
    print("| call | ns |\n|---|---:|")
    per_tensor = 0.0
    for name, f in rows:
        ns = per_call(f) - empty
        per_tensor += ns if name.startswith("a.") else 0.0
        print(f"| `{name}` | {ns:.0f} |")
    if torch is not None:
        print(f"| per input tensor, the `a.` rows | {per_tensor:.0f} |")
    if slot:
        ctx.set_arg_external_array_with_shape(idx, ptrs[0], 4 * size, (size,), 0)
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument(
        "--size", type=int, default=16, help="axpy's length (default 16: the work is nothing; CPU mode)"
    )
    ap.add_argument(
        "--gpu", action="store_true", help="on one CUDA GPU: JAX GPU and torch CUDA rows (gpu_main)"
    )
    ap.add_argument("--gpu-device", choices=["cuda", "cpu"], default="cuda", help=argparse.SUPPRESS)
    ap.add_argument(
        "--parts",
        action="store_true",
        help="time the pieces of an eager call alone (Taichi's setter, a pointer write, torch's calls)",
    )
    args = ap.parse_args()
    if args.gpu:
        sys.exit(gpu_main(args))
    if args.parts:
        sys.exit(parts(args.size))
    N = 1000 if args.quick else 4000
    R = 5 if args.quick else 15
    os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")

    import tiarray as ta

    # --------------------------------------------------------------- first call / compile
    t0 = time.perf_counter()
    if not ta.is_initialized():
        ta.init()
    t_init = time.perf_counter() - t0

    _axpy, axpy = make_axpy()
    S = args.size
    x = np.arange(S, dtype=np.float32)
    y = np.ones(S, np.float32)
    t0 = time.perf_counter()
    axpy(2.0, x, y)
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    axpy(2.0, x, y)
    t_second = time.perf_counter() - t0
    t0 = time.perf_counter()
    axpy(2.0, np.arange(S + 16, dtype=np.float32), np.ones(S + 16, np.float32))
    t_newshape = time.perf_counter() - t0

    B = Rounds(R)
    SCAN_FLOOR = "scan(1000) of the same step without event_csrmv (its floor), per step"
    RAW, TAICHI, TRIV = (
        "raw launch (Launcher spec, new output pointer)",
        "Taichi's own call, NumPy arguments",
        None,
    )

    # --------------------------------------------------------------- baselines
    spec = next(iter(axpy._plans.values())).spec
    outs = [np.zeros(S, np.float32) for _ in range(2)]
    px, py = x.ctypes.data, y.ctypes.data
    po = [o.ctypes.data for o in outs]
    k = [0]

    def raw():
        k[0] ^= 1
        spec.launch([2.0, (px, 4 * S, (S,)), (py, 4 * S, (S,)), (po[k[0]], 4 * S, (S,))])

    ref = 2.0 * x + y
    raw()
    agree(RAW, outs[k[0]], ref)
    outs[0][:] = 0
    _axpy(2.0, x, y, outs[0])
    agree(TAICHI, outs[0], ref)
    B.add("baseline", RAW, raw, N)
    B.add("baseline", TAICHI, lambda: _axpy(2.0, x, y, outs[0]), max(N // 10, 100))

    # --------------------------------------------------------------- NumPy / TiArray
    B.add("numpy", "axpy Operator, NumPy arrays", lambda: axpy(2.0, x, y), N, base="raw")
    B.add("numpy", "native NumPy 2*x+y", lambda: 2.0 * x + y, N)
    tx, ty = ta.asarray(x), ta.asarray(y)
    B.add("numpy", "axpy Operator, TiArrays", lambda: axpy(2.0, tx, ty), N, base="raw")
    agree("axpy Operator, NumPy arrays", axpy(2.0, x, y), ref)
    agree("axpy Operator, TiArrays", np.from_dlpack(axpy(2.0, tx, ty)), ref)

    # --------------------------------------------------------------- torch
    have_torch = False
    try:
        import torch

        have_torch = True
        xt, yt = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
        B.add(
            "torch", "axpy Operator, torch tensors (direct route)", lambda: axpy(2.0, xt, yt), N, base="raw"
        )
        a_t = torch.tensor(2.0)
        B.add(
            "torch",
            "torch.ops.tiarray.axpy (dispatcher route)",
            lambda: torch.ops.tiarray.axpy(a_t, xt, yt, "()"),
            N // 4,
            base="raw",
        )
        xg = xt.clone().requires_grad_()
        B.add(
            "torch",
            "axpy Operator, requires_grad input (autograd route)",
            lambda: axpy(2.0, xg, yt),
            N // 4,
            base="raw",
        )
        B.add("torch", "native torch 2*x+y", lambda: 2.0 * xt + yt, N)
        agree("axpy Operator, torch tensors (direct route)", axpy(2.0, xt, yt).numpy(), ref)
        agree(
            "torch.ops.tiarray.axpy (dispatcher route)",
            torch.ops.tiarray.axpy(a_t, xt, yt, "()")[0].numpy(),
            ref,
        )
        agree("axpy Operator, requires_grad input (autograd route)", axpy(2.0, xg, yt).detach().numpy(), ref)
    except ImportError:
        print("torch not installed: torch rows skipped", file=sys.stderr)

    # --------------------------------------------------------------- JAX
    have_jax = False
    t_jit_first = None
    try:
        import jax
        import jax.numpy as jnp

        have_jax = True
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        aj = jnp.float32(2.0)
        B.add("jax", "axpy Operator, JAX eager", lambda: axpy(aj, xj, yj).block_until_ready(), N // 4)
        B.add("jax", "native jnp a*x+y, eager", lambda: (aj * xj + yj).block_until_ready(), N // 4)
        triv = jax.jit(lambda a, x, y: x + 1)
        jf = jax.jit(axpy)
        jn = jax.jit(lambda a, x, y: a * x + y)
        t0 = time.perf_counter()
        jf(aj, xj, yj).block_until_ready()
        t_jit_first = time.perf_counter() - t0
        TRIV = "jit trivial x+1 (baseline)"
        B.add("jax", TRIV, lambda: triv(aj, xj, yj).block_until_ready(), N)
        B.add("jax", "jit(axpy Operator)", lambda: jf(aj, xj, yj).block_until_ready(), N, base="jit x+1")
        B.add("jax", "jit(native a*x+y)", lambda: jn(aj, xj, yj).block_until_ready(), N, base="jit x+1")
        steps = 1000
        lo = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: axpy(a, c, y), x))
        ln = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: a * c + y, x))
        B.add(
            "jax",
            f"fori_loop({steps}) of axpy Operator, per step",
            lambda: lo(aj, xj, yj).block_until_ready(),
            max(N // 1000, 2),
            scale=steps,
        )
        B.add(
            "jax",
            f"fori_loop({steps}) of native a*x+y, per step",
            lambda: ln(aj, xj, yj).block_until_ready(),
            max(N // 1000, 2),
            scale=steps,
        )
        # the spiking-network step (issue 16): event_csrmv(transpose=True) in a jitted scan,
        # m = n = 4000, p = 0.02 (examples/ei_network_jax.py), with 0 and 8 active rows
        import tiarray.operators as top

        nn = 4000
        ci, cp = (jnp.asarray(a) for a in top.fixed_prob_csr(nn, nn, 0.02, 1))
        cw = jnp.float32(0.5)
        active = jnp.zeros(nn, bool).at[jnp.arange(8) * 491].set(True)

        def ev_loop(n_active):
            def body(c, _):
                e = active if n_active else c > 1e30  # the events depend on the carry in both
                y = top.event_csrmv(cw, ci, cp, e & (c < 1e30), shape=(nn, nn), transpose=True)
                return c + y, None

            return jax.jit(lambda c: jax.lax.scan(body, c, None, length=steps)[0])

        c0 = jnp.zeros(nn, jnp.float32)
        for n_active in (0, 8):
            ev = ev_loop(n_active)
            B.add(
                "jax",
                f"scan({steps}) of event_csrmv(transpose=True), n={nn}, {n_active} active rows, per step",
                lambda ev=ev: ev(c0).block_until_ready(),
                max(N // 1000, 2),
                scale=steps,
            )

        def floor_body(c, _):  # the same step with the product replaced by an element-wise op
            e = c > 1e30
            return c + jnp.where(e & (c < 1e30), cw, jnp.float32(0)), None

        fl = jax.jit(lambda c: jax.lax.scan(floor_body, c, None, length=steps)[0])
        B.add(
            "jax",
            SCAN_FLOOR,
            lambda: fl(c0).block_until_ready(),
            max(N // 1000, 2),
            scale=steps,
        )
        got = np.asarray(ev_loop(8)(c0))
        ind_np, ptr_np = (np.asarray(a) for a in (ci, cp))
        rows = np.flatnonzero(np.asarray(active))
        want = np.zeros(nn)
        for r in rows:
            np.add.at(want, ind_np[ptr_np[r] : ptr_np[r + 1]], 0.5)
        np.testing.assert_allclose(got, steps * want, rtol=1e-5)
        _checked.append("scan of event_csrmv(transpose=True) (the dense sum of the active rows)")
        agree("axpy Operator, JAX eager", axpy(aj, xj, yj), ref)
        agree("jit(axpy Operator)", jf(aj, xj, yj), ref)
        # 1000 steps of c <- 2c + 1 overflow float32: compare the loop with the native loop
        np.testing.assert_array_equal(np.asarray(lo(aj, xj, yj)), np.asarray(ln(aj, xj, yj)))
        _checked.append(f"fori_loop({steps}) of axpy Operator (bit-equal to the native loop)")
    except ImportError:
        print("jax not installed: JAX rows skipped", file=sys.stderr)

    print(f"# checked against NumPy before timing: {len(_checked)} routes agree", file=sys.stderr)
    load0 = os.getloadavg()[0]
    B.run()
    load1 = os.getloadavg()[0]

    # --------------------------------------------------------------- report
    raw_t = B.median(RAW)
    taichi_t = B.median(TAICHI)
    base_of = {"raw": raw_t}
    if TRIV is not None:
        base_of["jit x+1"] = B.median(TRIV)
    print(
        f"# Operator call overhead: axpy on {S} float32; microseconds per call, median and best of {R} "
        "rounds (routes measured round-robin)"
    )
    print(
        f"# load average {load0:.2f} -> {load1:.2f}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}"
    )
    print()
    print("| section | route | median us | best us | vs baseline | Taichi's own call / route |")
    print("|---|---|---:|---:|---|---:|")
    for sec, name, med, mn, base in B.rows():
        vs = ""
        if base is not None and base in base_of:
            b = base_of[base]
            vs = f"{med / b:.2f}x {base} ({med - b:+.1f} us)"
        ratio = f"{taichi_t / med:.1f}x" if "Operator" in name else ""
        print(f"| {sec} | {name} | {med:.2f} | {mn:.2f} | {vs} | {ratio} |")
    print()
    print("| first call and cache | seconds |")
    print("|---|---:|")
    print(f"| Taichi init | {t_init:.3f} |")
    print(f"| first NumPy call (resolve + compile; Taichi's offline cache may serve it) | {t_first:.4f} |")
    print(f"| second call (plan cache hit) | {t_second:.6f} |")
    print(f"| first call with a new shape (new plan; the compiled spec is reused) | {t_newshape:.6f} |")
    if t_jit_first is not None:
        print(f"| first jax.jit(axpy) call (trace + lower + XLA compile) | {t_jit_first:.4f} |")
    print()
    print("Targets (median rounds; in brackets the best rounds, which show the cost without other")
    print("processes' load on a shared machine):")
    raw_b, taichi_b = B.best(RAW), B.best(TAICHI)
    np_t, np_b = B.median("axpy Operator, NumPy arrays"), B.best("axpy Operator, NumPy arrays")
    print(
        f"- NumPy: {np_t - raw_t:+.1f} us vs raw launch [{np_b - raw_b:+.1f}] (target <= 10); Taichi own call / "
        f"NumPy route = {taichi_t / np_t:.1f}x [{taichi_b / np_b:.1f}x] (target >= 5)"
    )
    if have_torch:
        name = "axpy Operator, torch tensors (direct route)"
        t_t, t_b = B.median(name), B.best(name)
        print(
            f"- torch: {t_t - raw_t:+.1f} us vs raw launch [{t_b - raw_b:+.1f}] (target <= 10); Taichi own call / "
            f"torch route = {taichi_t / t_t:.1f}x [{taichi_b / t_b:.1f}x] (target >= 5)"
        )
    if have_jax:
        j_t, j_b = B.median("jit(axpy Operator)"), B.best("jit(axpy Operator)")
        print(
            f"- jax.jit: {j_t / base_of['jit x+1']:.2f}x a trivial jitted x+1 "
            f"[{j_b / B.best(TRIV):.2f}x] (target <= 3)"
        )
        try:
            f_t, f_b = B.median(SCAN_FLOOR), B.best(SCAN_FLOOR)
        except KeyError:  # the scan rows did not run
            return
        for n_active in (0, 8):
            name = next(e[1] for e in B.entries if e[1].startswith("scan(") and f"{n_active} active" in e[1])
            print(
                f"- event_csrmv in a scan, {n_active} active rows: {B.median(name) - f_t:+.2f} us per step over "
                f"the step without it [{B.best(name) - f_b:+.2f}] (issue 16: <= 3 us plus its work)"
            )


# ----------------------------------------------------------------------------- --gpu mode


def _gpu_err(e):
    return f"ERR {type(e).__name__}: {' '.join(str(e).split())[:120]}".replace("|", "/")


class GpuRounds:
    """:class:`Rounds` for the --gpu run: an entry whose call raises is reported, not fatal.
    ``f`` is one timed unit (a call and its wait, or a batch of calls and one wait); ``scale``
    divides its time (calls per batch, or steps of a loop)."""

    def __init__(self, repeat):
        self.repeat = repeat
        self.entries = []  # dicts: section, name, f, n, base, scale, times, ok, err

    def add(self, section, name, f, n, base=None, scale=1.0, check=None):
        """Call ``f`` once, check its result with ``check(result) -> bool`` (None: no check),
        warm up; an exception makes an error row."""
        e = dict(section=section, name=name, f=f, n=n, base=base, scale=scale, times=[], ok=None, err=None)
        try:
            out = f()
            if check is not None:
                e["ok"] = bool(check(out))
            for _ in range(min(n, 50)):
                f()
        except Exception as ex:  # one route failing is reported, never fatal
            e["err"] = _gpu_err(ex)
        self.entries.append(e)
        return e

    def run(self):
        for _ in range(self.repeat):
            for e in self.entries:
                if e["err"]:
                    continue
                try:
                    t0 = time.perf_counter()
                    for _ in range(e["n"]):
                        e["f"]()
                    e["times"].append((time.perf_counter() - t0) / e["n"] * 1e6 / e["scale"])
                except Exception as ex:
                    e["err"] = _gpu_err(ex)

    def get(self, name):
        for e in self.entries:
            if e["name"] == name and e["times"] and not e["err"]:
                return statistics.median(e["times"]), min(e["times"])
        return None


def gpu_main(args):
    """``--gpu``: an Operator's per-call cost on one CUDA GPU.

    Rows: the trivial ``axpy`` Operator (16 float32) inside ``jax.jit`` on JAX GPU arrays
    against a jitted ``x + 1`` (and a jitted native ``a*x+y``), each call waited for
    (``block_until_ready``), and issued back to back (one wait per batch of 100 calls: the
    dispatch rate); from torch CUDA tensors (eager) against torch's ``x + 1`` and ``2*x+y``,
    back to back (one ``torch.cuda.synchronize()`` per batch of 100) and synchronised after
    every call; per step of a jitted ``lax.fori_loop`` of the Operator and of native
    ``a*x+y``, and of a jitted ``lax.scan`` of ``event_csrmv(transpose=True)`` (m = n =
    4000, p = 0.02, 0 and 8 active rows) next to the same scan of native ``c + 1`` (the
    loop's own cost). Every result is checked before timing (``WRONG`` in the table);
    routes are measured round-robin, median and best of ``R`` rounds.
    """
    cuda = args.gpu_device == "cuda"
    os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
    os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
    if not cuda:
        os.environ.setdefault("JAX_PLATFORMS", "cpu")
    N = 300 if args.quick else 1000  # calls per timed unit (blocking routes)
    R = 3 if args.quick else 5
    BATCH = 100
    steps = 1000
    t_start = time.perf_counter()
    notes = []

    import tiarray as ta

    t0 = time.perf_counter()
    try:
        tdev = ta.init("cuda" if cuda else "cpu")  # before any other tiarray call
    except Exception as e:
        print(f"bench_operators --gpu: tiarray.init failed: {type(e).__name__}: {e}")
        return 2
    t_init = time.perf_counter() - t0

    _axpy, axpy = make_axpy()
    x = np.arange(16, dtype=np.float32)
    y = np.ones(16, np.float32)
    ref = 2.0 * x + y

    def close(got):
        got = np.asarray(got, dtype=np.float64)
        return got.shape == ref.shape and bool(np.all(np.abs(got - ref) <= 2 * 2.0**-24 * np.abs(ref)))

    B = GpuRounds(R)
    firsts = {}
    TRIV, JAX_OP, T_TRIV, T_OP = (
        "jit trivial x+1, waited per call (baseline)",
        "jit(axpy Operator), waited per call",
        "native torch x + 1, back to back (baseline)",
        "axpy Operator, torch CUDA tensors, back to back",
    )
    T_TRIV_S, T_OP_S = (
        "native torch x + 1, synchronize per call (baseline)",
        "axpy Operator, torch CUDA tensors, synchronize per call",
    )
    J_TRIV_A, J_OP_A = (
        "jit trivial x+1, back to back (baseline)",
        "jit(axpy Operator), back to back",
    )

    # --------------------------------------------------------------- torch
    try:
        import torch

        if cuda and not torch.cuda.is_available():
            raise RuntimeError("torch has no CUDA device here")
        dev = torch.device("cuda" if cuda else "cpu")
        sync = torch.cuda.synchronize if cuda else (lambda: None)
        xt, yt = torch.from_numpy(x).to(dev), torch.from_numpy(y).to(dev)
        t0 = time.perf_counter()
        try:
            axpy(2.0, xt, yt)
            sync()
        except Exception:
            pass
        firsts["first axpy call on torch tensors (compile, or Taichi's offline cache)"] = (
            time.perf_counter() - t0
        )

        def batch(f):
            def run():
                for _ in range(BATCH):
                    out = f()
                sync()
                return out

            return run

        def synced(f):
            def run():
                out = f()
                sync()
                return out

            return run

        def tcheck(out):
            return close(out.cpu().numpy())

        def tcheck1(out):
            return bool(torch.equal(out.cpu(), torch.from_numpy(x + 1)))

        B.add("torch", T_TRIV, batch(lambda: xt + 1), max(N // BATCH, 2), scale=BATCH, check=tcheck1)
        B.add(
            "torch", T_OP, batch(lambda: axpy(2.0, xt, yt)), max(N // BATCH, 2), T_TRIV, BATCH, check=tcheck
        )
        B.add("torch", "native torch 2*x+y, back to back", batch(lambda: 2.0 * xt + yt), max(N // BATCH, 2),
              T_TRIV, BATCH, check=tcheck)  # fmt: skip
        B.add("torch", T_TRIV_S, synced(lambda: xt + 1), N, check=tcheck1)
        B.add("torch", T_OP_S, synced(lambda: axpy(2.0, xt, yt)), N, T_TRIV_S, check=tcheck)
    except Exception as e:
        notes.append(f"torch rows not run: {type(e).__name__}: {e}")

    # --------------------------------------------------------------- JAX
    try:
        import jax
        import jax.numpy as jnp

        jdev = jax.devices()[0]
        if cuda and jdev.platform != "gpu":
            raise RuntimeError(f"JAX has no GPU here (its default device is {jdev})")
        xj, yj = jnp.asarray(x), jnp.asarray(y)
        aj = jnp.float32(2.0)
        triv = jax.jit(lambda a, x, y: x + 1)
        jf = jax.jit(axpy)
        jn = jax.jit(lambda a, x, y: a * x + y)
        t0 = time.perf_counter()
        try:
            jf(aj, xj, yj).block_until_ready()
        except Exception:
            pass
        firsts["first jax.jit(axpy) call (trace + lower + XLA compile)"] = time.perf_counter() - t0

        def jbatch(f):
            def run():
                for _ in range(BATCH):
                    out = f()
                return out.block_until_ready()

            return run

        def j1(out):
            return bool(np.array_equal(np.asarray(out), x + 1))

        B.add("jax", TRIV, lambda: triv(aj, xj, yj).block_until_ready(), N, check=j1)
        B.add("jax", JAX_OP, lambda: jf(aj, xj, yj).block_until_ready(), N, TRIV, check=close)
        B.add("jax", "jit(native a*x+y), waited per call", lambda: jn(aj, xj, yj).block_until_ready(), N, TRIV,
              check=close)  # fmt: skip
        B.add("jax", J_TRIV_A, jbatch(lambda: triv(aj, xj, yj)), max(N // BATCH, 2), scale=BATCH, check=j1)
        B.add("jax", J_OP_A, jbatch(lambda: jf(aj, xj, yj)), max(N // BATCH, 2), J_TRIV_A, BATCH, check=close)
        B.add("jax", "axpy Operator, JAX eager, waited per call", lambda: axpy(aj, xj, yj).block_until_ready(),
              max(N // 4, 2), check=close)  # fmt: skip

        lo = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: axpy(a, c, y), x))
        ln = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: a * c + y, x))
        want_loop = [None]

        def native_loop():
            want_loop[0] = np.asarray(ln(aj, xj, yj).block_until_ready())
            return want_loop[0]

        B.add("jax", f"fori_loop({steps}) of native a*x+y, per step", native_loop, 2, scale=steps,
              check=lambda out: out.shape == (16,))  # fmt: skip
        # 1000 steps of c <- 2c + 1 overflow float32: compare the loop with the native loop
        B.add("jax", f"fori_loop({steps}) of axpy Operator, per step", lambda: lo(aj, xj, yj).block_until_ready(),
              2, scale=steps, check=lambda out: want_loop[0] is not None
              and np.array_equal(np.asarray(out), want_loop[0]))  # fmt: skip

        try:
            import tiarray.operators as top

            nn = 4000
            ci, cp = (jnp.asarray(a) for a in top.fixed_prob_csr(nn, nn, 0.02, 1))
            cw = jnp.float32(0.5)
            active = jnp.zeros(nn, bool).at[jnp.arange(8) * 491].set(True)
            ind_np, ptr_np = (np.asarray(a) for a in (ci, cp))
            want8 = np.zeros(nn)
            for r in np.flatnonzero(np.asarray(active)):
                np.add.at(want8, ind_np[ptr_np[r] : ptr_np[r + 1]], 0.5)

            def ev_loop(n_active):
                def body(c, _):
                    e = active if n_active else c > 1e30  # the events depend on the carry in both
                    yv = top.event_csrmv(cw, ci, cp, e & (c < 1e30), shape=(nn, nn), transpose=True)
                    return c + yv, None

                return jax.jit(lambda c: jax.lax.scan(body, c, None, length=steps)[0])

            c0 = jnp.zeros(nn, jnp.float32)
            native_scan = jax.jit(
                lambda c: jax.lax.scan(lambda c, _: (c + 1, None), c, None, length=steps)[0]
            )
            B.add("jax", f"scan({steps}) of native c + 1, n={nn}, per step (the loop's own cost)",
                  lambda: native_scan(c0).block_until_ready(), 2, scale=steps,
                  check=lambda out: bool(np.all(np.asarray(out) == steps)))  # fmt: skip
            for n_active in (0, 8):
                ev = ev_loop(n_active)
                want = steps * want8 if n_active else np.zeros(nn)
                B.add(
                    "jax",
                    f"scan({steps}) of event_csrmv(transpose=True), n={nn}, {n_active} active rows, per step",
                    lambda ev=ev: ev(c0).block_until_ready(),
                    2,
                    scale=steps,
                    check=lambda out, want=want: bool(np.allclose(np.asarray(out), want, rtol=1e-5, atol=0)),
                )
        except Exception as e:
            notes.append(f"event_csrmv scan rows not run: {type(e).__name__}: {e}")
    except Exception as e:
        notes.append(f"JAX rows not run: {type(e).__name__}: {e}")

    load0 = os.getloadavg()[0]
    B.run()
    load1 = os.getloadavg()[0]

    # --------------------------------------------------------------- report
    vers = []
    for mod in ("torch", "jax", "taichi"):
        try:
            v = __import__(mod).__version__
            vers.append(f"{mod} {'.'.join(map(str, v)) if isinstance(v, tuple) else v}")
        except Exception:
            pass
    where = "CPU smoke run (--gpu-device cpu)"
    if cuda:
        try:
            import torch

            where = torch.cuda.get_device_name(0)
        except Exception:
            where = "CUDA"
    print(f"# bench_operators --gpu: Operator call overhead on {where}; axpy on 16 float32")
    print(
        f"# tiarray on {tdev}; python {sys.version.split()[0]}, {', '.join(vers)}; {os.cpu_count()} CPUs, load "
        f"{load0:.2f} -> {load1:.2f}; microseconds per call (per step for loops), median and best of {R} "
        "rounds, routes round-robin"
    )
    print(
        f"# 'waited per call': each call waited for (block_until_ready / torch.cuda.synchronize); "
        f"'back to back': {BATCH} calls, then one wait (the rate calls can be issued at)"
    )
    print()
    print("| section | route | median us | best us | vs baseline | check |")
    print("|---|---|---:|---:|---|---|")
    failed = []
    for e in B.entries:
        got = B.get(e["name"])
        if e["err"] or got is None:
            print(f"| {e['section']} | {e['name']} | {e['err'] or 'no time'} | | | |")
            failed.append(f"{e['name']}: {e['err']}")
            continue
        med, mn = got
        vs = ""
        base = B.get(e["base"]) if e["base"] else None
        if base is not None:
            vs = f"{med / base[0]:.2f}x ({med - base[0]:+.1f} us)"
        chk = "-" if e["ok"] is None else "ok" if e["ok"] else "**WRONG**"
        if e["ok"] is False:
            failed.append(f"{e['name']}: WRONG")
        print(f"| {e['section']} | {e['name']} | {med:.2f} | {mn:.2f} | {vs} | {chk} |")
    print()
    print("| first call | seconds |")
    print("|---|---:|")
    print(f"| tiarray.init({'cuda' if cuda else 'cpu'}) | {t_init:.3f} |")
    for k, v in firsts.items():
        print(f"| {k} | {v:.4f} |")
    print()
    for a, b, what in (
        (JAX_OP, TRIV, "jax.jit, waited per call: jit(axpy) / jit(x+1)"),
        (J_OP_A, J_TRIV_A, "jax.jit, back to back: jit(axpy) / jit(x+1)"),
        (T_OP, T_TRIV, "torch CUDA eager, back to back: axpy Operator / torch x + 1"),
        (T_OP_S, T_TRIV_S, "torch CUDA eager, synchronize per call: axpy Operator / torch x + 1"),
    ):
        ga, gb = B.get(a), B.get(b)
        if ga and gb:
            print(f"- {what} = {ga[0] / gb[0]:.2f}x [best rounds {ga[1] / gb[1]:.2f}x]")
    for note in notes:
        print(f"- note: {note}")
    print(f"\n_total {time.perf_counter() - t_start:.1f} s_")
    if failed:
        print("\nFAILED ROUTES:\n" + "\n".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    main()
