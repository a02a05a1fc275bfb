"""Timing and table printing shared by the benchmark scripts.

Each benchmark measures tiarray next to named baselines *in the same run* and prints
a Markdown table with the median per-call time and the ratio to a reference row.
"""

from __future__ import annotations

import os
import platform
import statistics
import time

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")


def samples(fn, *, min_time: float = 0.2, repeats: int = 7, warmup: int = 3) -> list[float]:
    """Seconds per call of ``fn`` in each of ``repeats`` batches lasting about
    ``min_time / repeats`` (after ``warmup`` calls, which also compile kernels)."""
    for _ in range(warmup):
        fn()
    # calibrate the batch size
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / repeats or n >= 1 << 20:
            break
        n *= 2
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n)
    return out


def timeit(fn, *, min_time: float = 0.2, repeats: int = 7, warmup: int = 3) -> float:
    """Median seconds per call of ``fn`` over ``repeats`` batches of at least ``min_time``."""
    return statistics.median(samples(fn, min_time=min_time, repeats=repeats, warmup=warmup))


def copy_bandwidth(nbytes: int = 400 * 2**20, repeats: int = 5) -> float:
    """Bytes read + written per second by the best of ``repeats`` one-thread NumPy copies of
    ``nbytes`` (the memory-traffic bound's denominator, measured on the machine of the run)."""
    import numpy as np

    src = np.ones(nbytes // 8)
    dst = np.empty_like(src)
    best = float("inf")
    for _ in range(repeats + 1):  # the first copy also faults the pages in
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best


def fmt_us(seconds: float) -> str:
    us = seconds * 1e6
    if us >= 1000:
        return f"{us:,.0f}"
    if us >= 10:
        return f"{us:.1f}"
    return f"{us:.2f}"


def print_table(title: str, rows: list[dict], columns: list[str]) -> None:
    print(f"\n### {title}\n")
    print("| " + " | ".join(columns) + " |")
    print("|" + "|".join("---" for _ in columns) + "|")
    for r in rows:
        print("| " + " | ".join(str(r.get(c, "")) for c in columns) + " |")


def machine_line() -> str:
    import numpy as np

    parts = [f"python {platform.python_version()}", f"numpy {np.__version__}"]
    for mod in ("taichi", "torch", "jax"):
        try:
            m = __import__(mod)
            v = m.__version__
            parts.append(f"{mod} {'.'.join(map(str, v)) if isinstance(v, tuple) else v}")
        except Exception:
            pass
    return f"{platform.machine()}, {os.cpu_count()} CPUs; " + ", ".join(parts)
