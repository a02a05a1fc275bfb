"""Cost of sharing memory with tiarray, in both directions, against each framework's own
zero-copy path and against a copy, for 1e3 to 1e8 float32 elements.

    python benchmarks/bench_interop.py [--max-size 1e8]

Targets: constant time in the size; ``ta.asarray(torch_tensor)`` within 1.5x of
``np.from_dlpack(torch_tensor)``.
"""

import argparse

import _harness  # noqa: F401
import numpy as np
from _harness import fmt_us, machine_line, print_table, timeit

import tiarray as ta


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--max-size", type=float, default=1e8)
    p.add_argument("--quick", action="store_true", help="sizes up to 1e5 only")
    args = p.parse_args()
    sizes = [int(s) for s in (1e3, 1e5, 1e7, 1e8) if s <= (1e5 if args.quick else args.max_size)]
    import jax
    import torch

    torch.set_num_threads(2)
    rows = []
    for n in sizes:
        rows.extend(bench_size(n, torch, jax))
    print(f"machine: {machine_line()}")
    print_table(
        "Zero-copy exchange (float32); ratio column: time / np.from_dlpack(torch) of the same size",
        rows,
        ["elements", "direction", "method", "us / call", "x np.from_dlpack(torch)"],
    )


def bench_size(n, torch, jax):
    rows = []
    a = np.ones(n, np.float32)
    tt = torch.ones(n)
    jj = jax.device_put(np.asarray(ta.ones(n, dtype=ta.float32)))  # aligned: JAX shares it
    t = ta.asarray(a, copy=True)
    cases = [
        ("import", "ta.asarray(numpy)", lambda: ta.asarray(a)),
        ("import", "torch.from_numpy(numpy) [peer]", lambda: torch.from_numpy(a)),
        ("import", "ta.asarray(torch)", lambda: ta.asarray(tt)),
        ("import", "np.from_dlpack(torch) [peer]", lambda: np.from_dlpack(tt)),
        ("import", "ta.asarray(jax)", lambda: ta.asarray(jj)),
        ("import", "torch.from_dlpack(jax) [peer]", lambda: torch.from_dlpack(jj)),
        ("export", "np.asarray(tiarray)", lambda: np.asarray(t)),
        ("export", "np.from_dlpack(tiarray)", lambda: np.from_dlpack(t)),
        ("export", "torch.from_dlpack(tiarray)", lambda: torch.from_dlpack(t)),
        ("export", "jax.dlpack.from_dlpack(tiarray)", lambda: jax.dlpack.from_dlpack(t)),
        ("copy", "ta.asarray(numpy, copy=True)", lambda: ta.asarray(a, copy=True)),
        ("copy", "numpy.copy() [peer]", lambda: a.copy()),
    ]
    times = {}
    for _kind, name, fn in cases:
        times[name] = timeit(fn, min_time=0.1 if n < 1e7 else 0.5, repeats=5)
    ref = times["np.from_dlpack(torch) [peer]"]
    for kind, name, _fn in cases:
        rows.append(
            {
                "elements": f"{n:.0e}",
                "direction": kind,
                "method": name,
                "us / call": fmt_us(times[name]),
                "x np.from_dlpack(torch)": f"{times[name] / ref:.2f}",
            }
        )
    return rows


if __name__ == "__main__":
    main()
