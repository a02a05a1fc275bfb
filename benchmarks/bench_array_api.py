"""Benchmark of the array API functions: tiarray next to NumPy on the same data.

Run ``python benchmarks/bench_array_api.py`` (options: ``--quick`` for fewer repeats,
``-k substring`` to select cases). Every case is a row of ``CASES``: a name, the sizes
it runs at, and a ``setup(n)`` returning ``{"tiarray": fn, "numpy": fn}`` (zero-argument
callables on data prepared once). Each callable is timed after a warm-up (which also
compiles the kernels) by repeating it until about 0.2 s have passed, several times; the
table shows the best time per call (the least disturbed by other processes on a shared
machine, as ``timeit`` recommends) and the ratio tiarray / NumPy (< 1: tiarray faster).

Add rows with :func:`case`::

    @case("sum", sizes=(10**3, 10**6, 10**7))
    def _(n):
        x = rng.standard_normal(n, dtype=np.float32)
        t = ta.asarray(x)
        return {"tiarray": lambda: ta.sum(t), "numpy": lambda: np.sum(x)}

NumPy runs its element-wise loops on one thread; Taichi uses its CPU thread pool (all
cores the machine gives it) above the serial threshold (256 KiB of data per call).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time

import numpy as np

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import tiarray as ta  # noqa: E402

CASES: list = []
rng = np.random.default_rng(0)


def case(name: str, sizes=(10**3, 10**6, 10**7)):
    """Register ``setup(n) -> {"tiarray": fn, "numpy": fn}`` as a benchmark row per size."""

    def deco(setup):
        CASES.append((name, tuple(sizes), setup))
        return setup

    return deco


# ----------------------------------------------------------------------------- element-wise


def _pair(n):
    x = rng.standard_normal(n, dtype=np.float32)
    y = rng.standard_normal(n, dtype=np.float32)
    return x, y, ta.asarray(x), ta.asarray(y)


@case("add float32")
def _add(n):
    x, y, tx, ty = _pair(n)
    return {"tiarray": lambda: ta.add(tx, ty), "numpy": lambda: np.add(x, y)}


@case("multiply float32")
def _multiply(n):
    x, y, tx, ty = _pair(n)
    return {"tiarray": lambda: ta.multiply(tx, ty), "numpy": lambda: np.multiply(x, y)}


@case("exp float32")
def _exp(n):
    x, _, tx, _ = _pair(n)
    return {"tiarray": lambda: ta.exp(tx), "numpy": lambda: np.exp(x)}


@case("where float32")
def _where(n):
    x, y, tx, ty = _pair(n)
    c = x > 0
    tc = ta.asarray(c)
    return {"tiarray": lambda: ta.where(tc, tx, ty), "numpy": lambda: np.where(c, x, y)}


@case("add float32, transposed (2-D, strided)", sizes=(10**6,))
def _add_t(n):
    m = int(round(n**0.5))
    x = rng.standard_normal((m, m), dtype=np.float32)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.add(tx.T, tx), "numpy": lambda: np.add(x.T, x)}


@case("add overhead (16 float32)", sizes=(16,))
def _overhead(n):
    x, y, tx, ty = _pair(n)
    return {"tiarray": lambda: ta.add(tx, ty), "numpy": lambda: np.add(x, y)}


@case("x + 1.0 overhead (16 float32, Python scalar)", sizes=(16,))
def _overhead_scalar(n):
    x, _, tx, _ = _pair(n)
    return {"tiarray": lambda: tx + 1.0, "numpy": lambda: x + 1.0}


# ----------------------------------------------------------------------------- timing


def _time(fn, budget: float, repeats: int) -> float:
    fn()  # warm-up: compiles kernels, touches memory
    t0 = time.perf_counter()
    fn()
    one = max(time.perf_counter() - t0, 1e-7)
    number = max(1, int(budget / one))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - t0) / number)
    return min(samples)


def _fmt_us(s: float) -> str:
    us = s * 1e6
    return f"{us:,.1f}" if us < 1000 else f"{us:,.0f}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    ap.add_argument("-k", default="", help="run only cases whose name contains this")
    args = ap.parse_args(argv)
    budget, repeats = (0.05, 3) if args.quick else (0.2, 7)
    ta.init("cpu") if not ta.is_initialized() else None
    import taichi as ti

    cfg = ti.lang.impl.current_cfg()
    print(f"# tiarray array API benchmark: {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} CPUs, Python {sys.version.split()[0]}, numpy {np.__version__}, "
          f"taichi {ti.__version__} (cpu_max_num_threads={cfg.cpu_max_num_threads})")  # fmt: skip
    print(f"# best of {repeats} repeats; ratio = tiarray / numpy (< 1: tiarray faster)")
    print()
    print("| case | n | tiarray us | numpy us | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, sizes, setup in CASES:
        if args.k and args.k not in name:
            continue
        for n in sizes:
            fns = setup(n)
            t_ta = _time(fns["tiarray"], budget, repeats)
            t_np = _time(fns["numpy"], budget, repeats)
            print(f"| {name} | {n:,} | {_fmt_us(t_ta)} | {_fmt_us(t_np)} | {t_ta / t_np:.2f} |", flush=True)
            del fns
    return 0


if __name__ == "__main__":
    sys.exit(main())
