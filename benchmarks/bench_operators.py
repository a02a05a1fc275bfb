"""Per-call cost of an Operator from NumPy, torch, JAX (eager, jit, fori_loop), against baselines.

The operator is ``axpy`` (``out = alpha * x + y``) on 16 float32 elements: the work is
nothing, so the numbers are the overhead of each route. Every row is measured in the
same run as the baselines it is compared with:

- ``raw launch``: ``Launcher.spec(...).launch`` with pointers ready, a new output
  pointer each call (what any route must at least pay);
- Taichi's own call, ``kernel(alpha, x, y, out)`` with NumPy arrays;
- the same computation written natively in each framework;
- a trivial jitted JAX function (``x + 1``) for the jit targets.

Targets (issue 4): from NumPy/torch within 10 us of the raw launch and >= 5x cheaper than
Taichi's own call; inside ``jax.jit`` at most 3x the trivial jitted function.

Run: ``python benchmarks/bench_operators.py`` (``--quick`` for fewer repeats).
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    N = 2000 if args.quick else 10000
    R = 5 if args.quick else 9
    os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")

    import taichi as ti

    import tiarray as ta

    rows = []  # (section, name, median, min, baseline name or None)

    def add(section, name, f, n=N, base=None):
        med, mn = timeit(f, n, R)
        rows.append((section, name, med, mn, base))
        return med

    # --------------------------------------------------------------- first call / compile
    t0 = time.perf_counter()

    @ti.kernel
    def _axpy(
        alpha: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)
    ):
        for i in x:
            out[i] = alpha * x[i] + y[i]

    axpy = ta.Operator("axpy", kernel=_axpy, outs=lambda alpha, x, y: ta.ShapeDtype(x.shape, x.dtype))
    x = np.arange(16, dtype=np.float32)
    y = np.ones(16, np.float32)
    ta.init() if not ta.is_initialized() else None
    t_init = time.perf_counter() - t0
    t0 = time.perf_counter()
    axpy(2.0, x, y)
    t_first = time.perf_counter() - t0
    t0 = time.perf_counter()
    axpy(2.0, x, y)
    t_second = time.perf_counter() - t0
    t0 = time.perf_counter()
    axpy(2.0, np.arange(32, dtype=np.float32), np.ones(32, np.float32))
    t_newshape = time.perf_counter() - t0

    # --------------------------------------------------------------- baselines
    spec = next(iter(axpy._plans.values())).spec
    outs = [np.zeros(16, np.float32) for _ in range(2)]
    px, py = x.ctypes.data, y.ctypes.data
    po = [o.ctypes.data for o in outs]
    k = [0]

    def raw():
        k[0] ^= 1
        spec.launch([2.0, (px, 64, (16,)), (py, 64, (16,)), (po[k[0]], 64, (16,))])

    raw_t = add("baseline", "raw launch (Launcher spec, new output pointer)", raw)
    taichi_t = add(
        "baseline", "Taichi's own call, NumPy arguments", lambda: _axpy(2.0, x, y, outs[0]), n=N // 10
    )

    # --------------------------------------------------------------- NumPy / TiArray
    np_t = add("numpy", "axpy Operator, NumPy arrays", lambda: axpy(2.0, x, y), base="raw")
    add("numpy", "native NumPy 2*x+y", lambda: 2.0 * x + y)
    tx, ty = ta.asarray(x), ta.asarray(y)
    add("numpy", "axpy Operator, TiArrays", lambda: axpy(2.0, tx, ty), base="raw")

    # --------------------------------------------------------------- torch
    torch_t = None
    try:
        import torch

        torch.set_num_threads(min(2, torch.get_num_threads()))
        xt, yt = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
        torch_t = add(
            "torch", "axpy Operator, torch tensors (direct path)", lambda: axpy(2.0, xt, yt), base="raw"
        )
        a_t = torch.tensor(2.0)
        add(
            "torch",
            "torch.ops.tiarray.axpy (dispatcher path)",
            lambda: torch.ops.tiarray.axpy(a_t, xt, yt, "()"),
            n=N // 4,
            base="raw",
        )
        xg = xt.clone().requires_grad_()
        add(
            "torch",
            "axpy Operator, requires_grad input (autograd)",
            lambda: axpy(2.0, xg, yt),
            n=N // 4,
            base="raw",
        )
        add("torch", "native torch 2*x+y", lambda: 2.0 * xt + yt)
    except ImportError:
        print("torch not installed: torch rows skipped", file=sys.stderr)

    # --------------------------------------------------------------- JAX
    jit_ratio = None
    try:
        import jax
        import jax.numpy as jnp

        xj, yj = jnp.asarray(x), jnp.asarray(y)
        aj = jnp.float32(2.0)
        add("jax", "axpy Operator, JAX eager", lambda: axpy(aj, xj, yj).block_until_ready(), n=N // 4)
        add("jax", "native jnp a*x+y, eager", lambda: (aj * xj + yj).block_until_ready(), n=N // 4)
        triv = jax.jit(lambda a, x, y: x + 1)
        jf = jax.jit(axpy)
        jn = jax.jit(lambda a, x, y: a * x + y)
        t0 = time.perf_counter()
        jf(aj, xj, yj).block_until_ready()
        t_jit_first = time.perf_counter() - t0
        triv_t = add("jax", "jit trivial x+1 (baseline)", lambda: triv(aj, xj, yj).block_until_ready())
        jit_t = add("jax", "jit(axpy Operator)", lambda: jf(aj, xj, yj).block_until_ready(), base="jit x+1")
        add("jax", "jit(native a*x+y)", lambda: jn(aj, xj, yj).block_until_ready(), base="jit x+1")
        jit_ratio = jit_t / triv_t
        steps = 1000
        lo = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: axpy(a, c, y), x))
        ln = jax.jit(lambda a, x, y: jax.lax.fori_loop(0, steps, lambda i, c: a * c + y, x))
        lo(aj, xj, yj).block_until_ready()
        ln(aj, xj, yj).block_until_ready()
        med, mn = timeit(lambda: lo(aj, xj, yj).block_until_ready(), 5, R)
        rows.append(("jax", f"fori_loop({steps}) of axpy Operator, per step", med / steps, mn / steps, None))
        med, mn = timeit(lambda: ln(aj, xj, yj).block_until_ready(), 5, R)
        rows.append(("jax", f"fori_loop({steps}) of native a*x+y, per step", med / steps, mn / steps, None))
    except ImportError:
        print("jax not installed: JAX rows skipped", file=sys.stderr)
        t_jit_first = None

    # --------------------------------------------------------------- report
    base_of = {"raw": raw_t}
    if jit_ratio is not None:
        base_of["jit x+1"] = triv_t
    print(
        f"# Operator call overhead: axpy on 16 float32 (median and best of {R} runs, microseconds per call)"
    )
    print(f"# load average {os.getloadavg()[0]:.2f}, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print()
    print("| section | route | median us | min us | vs baseline |")
    print("|---|---|---:|---:|---|")
    for sec, name, med, mn, base in rows:
        vs = ""
        if base is not None and base in base_of:
            b = base_of[base]
            vs = f"{med / b:.2f}x {base} (+{med - b:.1f} us)"
        elif sec != "baseline":
            vs = f"Taichi own call / this = {taichi_t / med:.1f}x"
        print(f"| {sec} | {name} | {med:.2f} | {mn:.2f} | {vs} |")
    print()
    print("| first call and cache | seconds |")
    print("|---|---:|")
    print(f"| Taichi init | {t_init:.3f} |")
    print(
        f"| first NumPy call (resolve + Taichi compile of 2 variants; Taichi's offline cache may serve it) | {t_first:.3f} |"
    )
    print(f"| second call (plan cache hit) | {t_second:.6f} |")
    print(f"| first call with a new shape (new plan; the compiled spec is reused) | {t_newshape:.6f} |")
    if t_jit_first is not None:
        print(f"| first jax.jit(axpy) call (trace + lower + XLA compile) | {t_jit_first:.3f} |")
    print()
    print("Targets:")
    print(
        f"- NumPy: {np_t - raw_t:+.1f} us vs raw launch (target <= 10); Taichi own / NumPy route = "
        f"{taichi_t / np_t:.1f}x (target >= 5)"
    )
    if torch_t is not None:
        print(
            f"- torch: {torch_t - raw_t:+.1f} us vs raw launch (target <= 10); Taichi own / torch route = "
            f"{taichi_t / torch_t:.1f}x (target >= 5)"
        )
    if jit_ratio is not None:
        print(f"- jax.jit: {jit_ratio:.2f}x a trivial jitted x+1 (target <= 3)")


if __name__ == "__main__":
    main()
