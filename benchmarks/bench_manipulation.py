"""matmul, take and boolean-mask indexing of tiarray next to NumPy, measured in one run.

    python benchmarks/bench_manipulation.py [--quick]

Cases (float32): ``matmul`` of two 1024 x 1024 matrices (NumPy: its BLAS), and ``take``
(``n`` random int64 indices) and ``x[mask]`` (a random mask, half true) on 1e3, 1e6 and
1e7 elements. Targets: ``matmul`` within 3x of NumPy's BLAS; see issue 3 for the others.

Prints the machine, the load while it ran, and a Markdown table of median times and
ratios (tiarray / NumPy). Both libraries use every core they see (OpenBLAS and Taichi's
thread pool); on a loaded machine the parallel kernels of both suffer, so look at the
load column.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import numpy as np  # noqa: E402

import tiarray as ta  # noqa: E402


def timeit(fn, *, min_time: float = 0.3, repeats: int = 7, warmup: int = 2) -> float:
    """Median seconds per call over ``repeats`` batches of at least ``min_time / repeats``."""
    for _ in range(warmup):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / repeats or n >= 1 << 16:
            break
        n *= 2
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t0) / n)
    return statistics.median(samples)


def fmt_us(s: float) -> str:
    us = s * 1e6
    return f"{us:,.0f}" if us >= 1000 else f"{us:.1f}"


def load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f}"
    except OSError:  # pragma: no cover
        return "?"


def machine_line() -> str:
    import taichi as ti

    blas = ""
    try:
        cfg = np.show_config(mode="dicts")
        blas = cfg["Build Dependencies"]["blas"]["name"]
    except Exception:  # pragma: no cover
        pass
    return (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
        f"numpy {np.__version__} ({blas}), taichi {'.'.join(map(str, ti.__version__))}, tiarray {ta.__version__}"
    )


def check(r, e, rtol=0.0):
    got = np.asarray(r)
    if rtol:
        np.testing.assert_allclose(got, e, rtol=rtol, atol=rtol * float(np.abs(e).max()))
    else:
        np.testing.assert_array_equal(got, e)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true", help="sizes up to 1e6, matmul 512")
    args = p.parse_args()
    rng = np.random.default_rng(0)
    rows = []

    n = 512 if args.quick else 1024
    a = rng.standard_normal((n, n)).astype(np.float32)
    b = rng.standard_normal((n, n)).astype(np.float32)
    ta_a, ta_b = ta.asarray(a), ta.asarray(b)
    check(ta.matmul(ta_a, ta_b), a @ b, rtol=1e-4)
    l0 = load()
    t_np = timeit(lambda: a @ b, min_time=1.0)
    t_ta = timeit(lambda: ta.matmul(ta_a, ta_b), min_time=1.0)
    rows.append((f"matmul {n}x{n}", "-", t_np, t_ta, f"{l0}/{load()}"))

    sizes = [1000, 1_000_000] + ([] if args.quick else [10_000_000])
    for size in sizes:
        rows.extend(bench_indexing(size, rng))

    print(f"machine: {machine_line()}")
    print("\n### matmul, take and boolean-mask indexing (float32); ratio = tiarray / NumPy\n")
    print("| operation | elements | NumPy us | tiarray us | ratio | load (1 min, before/after) |")
    print("|---|---|---:|---:|---:|---|")
    for op, size, t_np, t_ta, ld in rows:
        print(f"| {op} | {size} | {fmt_us(t_np)} | {fmt_us(t_ta)} | {t_ta / t_np:.2f} | {ld} |")


def bench_indexing(size: int, rng) -> list:
    x = rng.standard_normal(size).astype(np.float32)
    idx = rng.integers(0, size, size=size)
    mask = rng.random(size) < 0.5
    tx, tidx, tmask = ta.asarray(x), ta.asarray(idx), ta.asarray(mask)
    check(ta.take(tx, tidx), np.take(x, idx))
    check(tx[tmask], x[mask])
    rows = []
    l0 = load()
    t_np = timeit(lambda: np.take(x, idx))
    t_ta = timeit(lambda: ta.take(tx, tidx))
    rows.append(("take", f"{size:.0e}", t_np, t_ta, f"{l0}/{load()}"))
    l0 = load()
    t_np = timeit(lambda: x[mask])
    t_ta = timeit(lambda: tx[tmask])
    rows.append(("x[mask]", f"{size:.0e}", t_np, t_ta, f"{l0}/{load()}"))
    return rows


if __name__ == "__main__":
    main()
