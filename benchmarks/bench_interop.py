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


def data_ptr(x) -> int:
    """The address of the first element of a NumPy, torch, JAX or tiarray array."""
    if isinstance(x, ta.TiArray):
        return x.ptr
    if isinstance(x, np.ndarray):
        return x.__array_interface__["data"][0]
    if hasattr(x, "data_ptr"):  # torch
        return x.data_ptr()
    return x.unsafe_buffer_pointer()  # jax


def check(name, got, src, shares):
    """Before timing: the result holds the source's values, in the source's memory when the
    method promises zero-copy and in other memory when it copies (else the script stops)."""
    same = data_ptr(got) == data_ptr(src)
    if same != shares:
        raise SystemExit(
            f"bench_interop: '{name}' {'copied' if shares else 'did not copy'} (expected the opposite)"
        )
    if not np.array_equal(np.from_dlpack(got), np.from_dlpack(src)):
        raise SystemExit(f"bench_interop: '{name}' returned other values than its source")


def bench_size(n, torch, jax):
    rows = []
    a = np.ones(n, np.float32)
    tt = torch.ones(n)
    jj = jax.device_put(np.asarray(ta.ones(n, dtype=ta.float32)))  # aligned: JAX shares it
    t = ta.asarray(a, copy=True)
    t[n // 2] = 3.0  # a value that differs from its neighbours, to compare contents
    a[n // 3] = 5.0
    tt[n // 4] = 7.0
    # (direction, method, call, the array it reads, whether the result shares its memory)
    cases = [
        ("import", "ta.asarray(numpy)", lambda: ta.asarray(a), a, True),
        ("import", "torch.from_numpy(numpy) [peer]", lambda: torch.from_numpy(a), a, True),
        ("import", "ta.asarray(torch)", lambda: ta.asarray(tt), tt, True),
        ("import", "np.from_dlpack(torch) [peer]", lambda: np.from_dlpack(tt), tt, True),
        ("import", "ta.asarray(jax)", lambda: ta.asarray(jj), jj, True),
        ("import", "torch.from_dlpack(jax) [peer]", lambda: torch.from_dlpack(jj), jj, True),
        ("export", "np.asarray(tiarray)", lambda: np.asarray(t), t, True),
        ("export", "np.from_dlpack(tiarray)", lambda: np.from_dlpack(t), t, True),
        ("export", "torch.from_dlpack(tiarray)", lambda: torch.from_dlpack(t), t, True),
        ("export", "jax.dlpack.from_dlpack(tiarray)", lambda: jax.dlpack.from_dlpack(t), t, True),
        ("copy", "ta.asarray(numpy, copy=True)", lambda: ta.asarray(a, copy=True), a, False),
        ("copy", "numpy.copy() [peer]", lambda: a.copy(), a, False),
    ]
    for _kind, name, fn, src, shares in cases:
        check(name, fn(), src, shares)
    times = {}
    for _kind, name, fn, _src, _shares in cases:
        times[name] = timeit(fn, min_time=0.1 if n < 1e7 else 0.5, repeats=5)
    ref = times["np.from_dlpack(torch) [peer]"]
    for kind, name, *_ in cases:
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
