"""Per-call cost of launching a 3-array Taichi kernel on 16 elements.

    python benchmarks/bench_launch.py

Rows: Taichi's own call with NumPy arguments (the baseline), Taichi's own call with
ti.ndarray arguments, tiarray's Launcher called with NumPy arrays, and the Launcher's
low-level ``spec.launch`` with pointers (what operators use). Target: the Launcher at
least 5x cheaper than Taichi's own call.

A second table prices Taichi's CPU thread pool: the same ``spec.launch`` of ``axpy`` on
16 and 4096 elements in the Launcher's serial variant (outer loops serialised, the
calling thread does the work) and in the parallel one (Taichi wakes its pool). Their
difference is what a kernel must save by running on several threads before a parallel
launch pays; it sets the serial thresholds of tiarray's kernels.

A third table times a parallel kernel of one equal task per worker (a dependent chain of
multiply-adds, about 0.5 and 2 ms per task) with Taichi's workers pinned one per CPU (what
tiarray does, ``tiarray._threads``) and free to move (their affinity reset to every CPU),
next to the serial variant running all tasks on the calling thread. With free workers the
tasks partly run one after the other on one CPU (see docs/internals.md, "Woken workers
queue behind each other").
"""

import _harness  # noqa: F401  (sets the Taichi environment first)
import numpy as np
import taichi as ti
from _harness import fmt_us, machine_line, print_table, timeit

import tiarray as ta
from tiarray._launch import Launcher, kernel_arg


@ti.kernel
def chains(out: ti.types.ndarray(ndim=1), iters: ti.i32):
    # one task per worker (512 iterations per block of Taichi's pool, see reduce.task_pad)
    for s in range(out.shape[0] * 512):
        if s % 512 == 0:
            t = s // 512
            acc = ti.cast(t, ti.f32) + out[t]
            for _k in range(iters):
                acc = acc * 0.999999 + 1e-7
            out[t] = acc


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
    tx.from_numpy(x)
    ty.from_numpy(y)
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
    want = 2.0 * x + y
    for name, fn in cases:  # before timing: every route computes axpy
        out[:] = 0
        tout.fill(0)
        fn()
        got = tout.to_numpy() if "ti.ndarray" in name else out
        np.testing.assert_array_equal(got, want, err_msg=name)  # one product, one sum: exact vs NumPy
    times = {name: timeit(fn) for name, fn in cases}
    base = times[cases[0][0]]
    rows = [
        {"method": name, "us / call": fmt_us(t), "speed-up vs taichi": f"{base / t:.1f}x"}
        for name, t in times.items()
    ]
    print(f"machine: {machine_line()}")
    print_table("Launching axpy on 16 float32 elements", rows, ["method", "us / call", "speed-up vs taichi"])

    import taichi.lang.impl as ti_impl

    pool = []
    for m in (16, 4096):
        arrs = [ta.asarray(np.arange(m, dtype=np.float32)) for _ in range(3)]
        args = [2.0] + [kernel_arg(t) for t in arrs]
        sig = [(ta.float32, 1, False)] * 3
        ser, par = launcher.spec(sig, (), serial=True), launcher.spec(sig, (), serial=False)
        want = 2.0 * np.asarray(arrs[0]) + np.asarray(arrs[1])
        for sp in (ser, par):
            arrs[2][...] = 0
            sp.launch(args)
            np.testing.assert_array_equal(np.asarray(arrs[2]), want)
        t_ser = timeit(lambda s=ser, v=args: s.launch(v))
        t_par = timeit(lambda s=par, v=args: s.launch(v))
        pool.append(
            {
                "elements": m,
                "serial variant us": fmt_us(t_ser),
                "parallel variant us": fmt_us(t_par),
                "cost of the pool us": fmt_us(t_par - t_ser),
            }
        )
    threads = ti_impl.current_cfg().cpu_max_num_threads
    print_table(
        f"Taichi's CPU thread pool ({threads} threads): spec.launch of axpy, serial vs parallel variant",
        pool,
        ["elements", "serial variant us", "parallel variant us", "cost of the pool us"],
    )

    _pinning_table(threads)


def _pinning_table(threads: int):
    import os

    from tiarray import _threads

    pinned = _threads.pinned_workers()
    if not pinned:
        print("\n(workers not pinned here: no pinning table; see tiarray._threads for when tiarray pins)")
        return
    cpus = set(os.sched_getaffinity(0))
    ln = Launcher(chains)
    out = ta.zeros(threads, dtype=ta.float32)
    arg = kernel_arg(out)
    sig = [(ta.float32, 1, False)]
    ser, par = ln.spec(sig, (), serial=True), ln.spec(sig, (), serial=False)
    # before timing: both variants run every task (task t adds t to its slot, plus a chain
    # of multiply-adds that only moves it by a bounded amount)
    for sp in (ser, par):
        out[...] = 0
        sp.launch([arg, 10])
        got = np.asarray(out)
        assert np.all(np.abs(got - np.arange(threads)) < 1e-3 * (1 + np.arange(threads))), got
    rows = []
    for iters in (250_000, 1_000_000):
        t_ser = timeit(lambda v=[arg, iters]: ser.launch(v), min_time=0.5)
        t_pin = timeit(lambda v=[arg, iters]: par.launch(v), min_time=0.5)
        for tid, _ in pinned:
            os.sched_setaffinity(tid, cpus)
        try:
            t_free = timeit(lambda v=[arg, iters]: par.launch(v), min_time=0.5)
        finally:
            for tid, cpu in pinned:
                os.sched_setaffinity(tid, {cpu})
        rows.append(
            {
                "us per task": fmt_us(t_ser / threads),
                "serial, all tasks us": fmt_us(t_ser),
                "parallel, free workers us": fmt_us(t_free),
                "parallel, pinned workers us": fmt_us(t_pin),
            }
        )
    print_table(
        f"{threads} equal tasks, one per worker: serial, parallel with free and with pinned workers",
        rows,
        ["us per task", "serial, all tasks us", "parallel, free workers us", "parallel, pinned workers us"],
    )


if __name__ == "__main__":
    main()
