"""Reductions, scans and sorts of tiarray next to NumPy on the same data.

Prints one row per (function, size): the best time of several runs for tiarray (Taichi
kernels on TiArrays that view the NumPy arrays) and for NumPy, and their ratio
(tiarray / NumPy: below 1 means tiarray is faster). float32 data, 1e3, 1e6 and 1e7
elements. The rows fold into ``benchmarks/bench_array_api.py``.

Run: ``python benchmarks/bench_reductions.py [--repeat N]``
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import tiarray as ta


def best_time(f, repeat: int, min_time: float = 0.05) -> float:
    """Best per-call time of ``f`` over ``repeat`` batches (a batch lasts >= min_time)."""
    f()  # compile / warm up
    t0 = time.perf_counter()
    f()
    once = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int(min_time / once))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(inner):
            f()
        best = min(best, (time.perf_counter() - t0) / inner)
    return best


def cases():
    return [
        ("sum", lambda t: ta.sum(t), lambda a: np.sum(a)),
        ("max", lambda t: ta.max(t), lambda a: np.max(a)),
        ("cumulative_sum", lambda t: ta.cumulative_sum(t), lambda a: np.cumsum(a)),
        ("sort", lambda t: ta.sort(t), lambda a: np.sort(a)),
    ]


def fmt(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:8.1f} us"
    return f"{s * 1e3:8.2f} ms"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--sizes", default="1e3,1e6,1e7")
    args = p.parse_args(argv)
    rng = np.random.default_rng(0)
    print(f"tiarray {ta.__version__} on {ta.__array_namespace_info__().default_device()}, "
          f"{os.cpu_count()} CPU(s); float32 data; best of {args.repeat}")  # fmt: skip
    print(f"{'function':<16}{'size':>10}{'tiarray':>14}{'NumPy':>14}{'tiarray/NumPy':>16}")
    for size in (int(float(s)) for s in args.sizes.split(",")):
        a = rng.standard_normal(size).astype(np.float32)
        t = ta.asarray(a)  # a view of the same memory
        for name, f_ta, f_np in cases():
            r = np.asarray(f_ta(t))
            e = f_np(a)
            if name in ("sort", "max"):
                assert np.array_equal(r, e), name
            else:
                assert np.allclose(r, e, rtol=1e-3, atol=1e-2 * np.sqrt(size)), name
            tt = best_time(lambda f=f_ta, v=t: f(v), args.repeat)
            tn = best_time(lambda f=f_np, v=a: f(v), args.repeat)
            print(f"{name:<16}{size:>10.0e}{fmt(tt):>14}{fmt(tn):>14}{tt / tn:>16.2f}")


if __name__ == "__main__":
    main()
