"""Per-call cost of launching a 3-array Taichi kernel on 16 elements.

    python benchmarks/bench_launch.py

Rows: Taichi's own call with NumPy arguments (the baseline), Taichi's own call with
ti.ndarray arguments, tiarray's Launcher called with NumPy arrays, and the Launcher's
low-level ``spec.launch`` with pointers (what operators use). Target: the Launcher at
least 5x cheaper than Taichi's own call.
"""

import _harness  # noqa: F401  (sets the Taichi environment first)
import numpy as np
import taichi as ti
from _harness import fmt_us, machine_line, print_table, timeit

import tiarray as ta
from tiarray._launch import Launcher, kernel_arg


@ti.kernel
def axpy(
    alpha: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)
):
    for i in x:
        out[i] = alpha * x[i] + y[i]


def main():
    ta.zeros(1)  # start Taichi through tiarray (quietly)
    n = 16
    x = np.arange(n, dtype=np.float32)
    y = np.ones(n, np.float32)
    out = np.zeros(n, np.float32)
    tx, ty, tout = (ti.ndarray(ti.f32, (n,)) for _ in range(3))
    launcher = Launcher(axpy)
    a, b, c = ta.asarray(x), ta.asarray(y), ta.asarray(out)
    spec = launcher.spec([(ta.float32, 1, False)] * 3, (), serial=launcher.use_serial(3 * 4 * n))
    vals = [2.0, kernel_arg(a), kernel_arg(b), kernel_arg(c)]

    cases = [
        ("taichi kernel(numpy arrays) [baseline]", lambda: axpy(2.0, x, y, out)),
        ("taichi kernel(ti.ndarray)", lambda: axpy(2.0, tx, ty, tout)),
        ("tiarray Launcher(numpy arrays)", lambda: launcher(2.0, x, y, out)),
        ("tiarray Launcher(TiArrays)", lambda: launcher(2.0, a, b, c)),
        ("tiarray spec.launch(pointers)", lambda: spec.launch(vals)),
    ]
    times = {name: timeit(fn) for name, fn in cases}
    base = times[cases[0][0]]
    rows = [
        {"method": name, "us / call": fmt_us(t), "speed-up vs taichi": f"{base / t:.1f}x"}
        for name, t in times.items()
    ]
    print(f"machine: {machine_line()}")
    print_table("Launching axpy on 16 float32 elements", rows, ["method", "us / call", "speed-up vs taichi"])
    np.testing.assert_allclose(np.asarray(c), 2.0 * x + y)


if __name__ == "__main__":
    main()
