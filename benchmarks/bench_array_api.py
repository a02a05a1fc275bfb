"""Benchmark of the array API namespace: tiarray next to NumPy on the same data, one table.

    python benchmarks/bench_array_api.py            # the full table (a few minutes)
    python benchmarks/bench_array_api.py --quick    # sizes up to 1e6, matmul 512, short runs
    python benchmarks/bench_array_api.py -k sort    # only the rows whose name contains "sort"

The rows are issue 3's list on float32 data of 1e3, 1e6 and 1e7 elements: ``add``,
``multiply``, ``exp``, ``where``, ``sum``, ``max``, ``cumulative_sum``, ``sort``, ``take``
(``n`` random int64 indices) and boolean-mask indexing ``x[mask]`` (half true); ``matmul``
of two 1024 x 1024 matrices (NumPy: its BLAS); and the per-call overhead of small calls
(16 elements: ``add``, ``x + 1.0``, ``sum``, ``where``, ``reshape`` + copy, ``take``).
Further rows beyond the issue's list: ``argmax``, ``vecdot``, matrix @ vector,
``nonzero``, and ``sum``/``max`` over axis 0 of n x 1000 matrices (the batch axis).

Each row is registered with :func:`case`: ``setup(n)`` prepares data once and returns
``{"tiarray": fn, "numpy": fn}`` (zero-argument callables; the TiArrays view the NumPy
arrays, zero-copy). Before timing, the two results are compared (a benchmark of a wrong
answer is worthless). Each callable is timed with ``_harness.samples`` (batches repeated
after a warm-up that also compiles the kernels); the table shows the best batch (the
least disturbed by other processes on a shared machine) of each, their ratio
tiarray / NumPy (< 1: tiarray faster) and the ratio of the medians.

NumPy runs its element-wise loops, reductions and sorts on one thread, OpenBLAS uses every
core; Taichi uses its CPU thread pool above the serial threshold (256 KiB per call).
Targets (issue 3): element-wise and reductions on 1e7 elements no slower than NumPy,
``matmul`` within 3x of BLAS, per-call overhead under 20 us.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys

import numpy as np
from _harness import fmt_us, machine_line, print_table, samples

import tiarray as ta

CASES: list = []
SIZES = (10**3, 10**6, 10**7)
rng = np.random.default_rng(0)


def case(name: str, sizes=SIZES, rtol: float | None = 0.0):
    """Register ``setup(n) -> {"tiarray": fn, "numpy": fn}`` as one row per size.

    ``rtol``: how closely the results must agree (0: exactly; None: not compared).
    """

    def deco(setup):
        CASES.append((name, tuple(sizes), setup, rtol))
        return setup

    return deco


def _f32(n, k=1):
    xs = [rng.standard_normal(n, dtype=np.float32) for _ in range(k)]
    return xs + [ta.asarray(x) for x in xs]


# ----------------------------------------------------------------------------- element-wise


@case("add")
def _add(n):
    x, y, tx, ty = _f32(n, 2)
    return {"tiarray": lambda: ta.add(tx, ty), "numpy": lambda: np.add(x, y)}


@case("multiply")
def _multiply(n):
    x, y, tx, ty = _f32(n, 2)
    return {"tiarray": lambda: ta.multiply(tx, ty), "numpy": lambda: np.multiply(x, y)}


@case("exp", rtol=2e-6)
def _exp(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.exp(tx), "numpy": lambda: np.exp(x)}


@case("tanh", rtol=1e-6)
def _tanh(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.tanh(tx), "numpy": lambda: np.tanh(x)}


@case("log", rtol=1e-6)
def _log(n):
    x = np.abs(rng.standard_normal(n, dtype=np.float32)) + np.float32(1e-3)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.log(tx), "numpy": lambda: np.log(x)}


@case("sin", rtol=1e-6)
def _sin(n):
    x = rng.uniform(-100, 100, n).astype(np.float32)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.sin(tx), "numpy": lambda: np.sin(x)}


@case("log1p", sizes=(10**6,), rtol=1e-6)
def _log1p(n):
    x = rng.uniform(-0.9, 10, n).astype(np.float32)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.log1p(tx), "numpy": lambda: np.log1p(x)}


@case("expm1", sizes=(10**6,), rtol=1e-6)
def _expm1(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.expm1(tx), "numpy": lambda: np.expm1(x)}


@case("maximum(x, 0.0) (relu)", sizes=(10**6, 10**7))
def _relu(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.maximum(tx, 0.0), "numpy": lambda: np.maximum(x, np.float32(0.0))}


@case("x ** 2", sizes=(10**6, 10**7))
def _square_op(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: tx**2, "numpy": lambda: x**2}


@case("exp (float64)", sizes=(10**6, 10**7), rtol=1e-14)
def _exp64(n):
    x = rng.standard_normal(n)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.exp(tx), "numpy": lambda: np.exp(x)}


@case("log (float64)", sizes=(10**6, 10**7), rtol=1e-14)
def _log64(n):
    x = np.abs(rng.standard_normal(n)) + 1e-3
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.log(tx), "numpy": lambda: np.log(x)}


@case("tanh (float64)", sizes=(10**6, 10**7), rtol=1e-14)
def _tanh64(n):
    x = rng.standard_normal(n)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.tanh(tx), "numpy": lambda: np.tanh(x)}


@case("where")
def _where(n):
    x, y, tx, ty = _f32(n, 2)
    c = x > 0
    tc = ta.asarray(c)
    return {"tiarray": lambda: ta.where(tc, tx, ty), "numpy": lambda: np.where(c, x, y)}


@case("add, transposed 2-D (strided)", sizes=(10**6,))
def _add_t(n):
    m = int(round(n**0.5))
    x = rng.standard_normal((m, m), dtype=np.float32)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.add(tx.T, tx), "numpy": lambda: np.add(x.T, x)}


# ----------------------------------------------------------------------------- reductions, scans, sorts


@case("sum", rtol=1e-4)
def _sum(n):
    x, tx = _f32(n)
    # NumPy sums float32 pairwise in float32; tiarray accumulates in float64
    return {"tiarray": lambda: ta.sum(tx), "numpy": lambda: np.sum(x)}


@case("max")
def _max(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.max(tx), "numpy": lambda: np.max(x)}


@case("cumulative_sum", rtol=None)  # float32 running sums differ with the order of additions
def _cumsum(n):
    x, tx = _f32(n)

    def check(got):
        # tiarray accumulates in float64 and rounds once: within u32 |s_k| + gamma_k(2^-53) S_k
        # of the exact k-th partial sum (S_k = sum |x_i|); NumPy's float32 scan is not the reference
        ref = np.cumsum(x.astype(np.float64))
        k = np.arange(1, n + 1)
        bound = 2.0**-24 * np.abs(ref) + 2 * k * 2.0**-53 * np.cumsum(np.abs(x.astype(np.float64)))
        bad = np.flatnonzero(np.abs(got.astype(np.float64) - ref) > bound)
        assert bad.size == 0, ("cumulative_sum", bad[:5])

    return {"tiarray": lambda: ta.cumulative_sum(tx), "numpy": lambda: np.cumsum(x), "check": check}


@case("sort")
def _sort(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.sort(tx), "numpy": lambda: np.sort(x)}


# ----------------------------------------------------------------------------- linear algebra, indexing


@case("matmul 1024x1024", sizes=(1024,), rtol=1e-4)
def _matmul(n):
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    ta_a, ta_b = ta.asarray(a), ta.asarray(b)
    return {"tiarray": lambda: ta.matmul(ta_a, ta_b), "numpy": lambda: a @ b}


@case("take (n random indices)")
def _take(n):
    x, tx = _f32(n)
    idx = rng.integers(0, n, size=n)
    tidx = ta.asarray(idx)
    return {"tiarray": lambda: ta.take(tx, tidx), "numpy": lambda: np.take(x, idx)}


@case("x[mask] (half true)")
def _mask(n):
    x, tx = _f32(n)
    mask = rng.random(n) < 0.5
    tmask = ta.asarray(mask)
    return {"tiarray": lambda: tx[tmask], "numpy": lambda: x[mask]}


# ------------------------------------------------------------- beyond issue 3's list (kept honest)


@case("argmax", sizes=(10**7,))
def _argmax(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.argmax(tx), "numpy": lambda: np.argmax(x)}


@case("vecdot (two 1-D vectors)", sizes=(10**7,), rtol=1e-4)
def _vecdot(n):
    x, y, tx, ty = _f32(n, 2)
    return {"tiarray": lambda: ta.vecdot(tx, ty), "numpy": lambda: np.vecdot(x, y)}


@case("matrix @ vector 1000x1000", sizes=(1000,), rtol=1e-4)
def _matvec(n):
    a, v = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    ta_a, ta_v = ta.asarray(a), ta.asarray(v)
    return {"tiarray": lambda: ta.matmul(ta_a, ta_v), "numpy": lambda: a @ v}


@case("sum over axis 0, n x 1000", sizes=(1000, 10**4), rtol=1e-4)
def _sum_axis0(n):
    a = rng.standard_normal((n, 1000), dtype=np.float32)
    t = ta.asarray(a)
    return {"tiarray": lambda: ta.sum(t, axis=0), "numpy": lambda: np.sum(a, axis=0)}


@case("max over axis 0, n x 1000", sizes=(1000, 10**4))
def _max_axis0(n):
    a = rng.standard_normal((n, 1000), dtype=np.float32)
    t = ta.asarray(a)
    return {"tiarray": lambda: ta.max(t, axis=0), "numpy": lambda: np.max(a, axis=0)}


@case("nonzero (half true)", sizes=(10**7,))
def _nonzero(n):
    m = rng.random(n) < 0.5
    tm = ta.asarray(m)
    return {"tiarray": lambda: ta.nonzero(tm)[0], "numpy": lambda: np.nonzero(m)[0]}


# ----------------------------------------------------------------------------- mid-size arrays
# where a parallel launch (Taichi's pool: tens of us) and the serial variant are close:
# the rows behind the serial thresholds (tiarray/_launch.py: STREAM, _elementwise_functions: _OP_NS)


@case("add (mid-size)", sizes=(10**5, 3 * 10**5))
def _add_mid(n):
    return _add(n)


@case("exp (mid-size)", sizes=(10**5, 3 * 10**5), rtol=2e-6)
def _exp_mid(n):
    return _exp(n)


@case("tanh (mid-size)", sizes=(3 * 10**4,), rtol=1e-6)
def _tanh_mid(n):
    return _tanh(n)


@case("sum (mid-size)", sizes=(3 * 10**5,), rtol=1e-4)
def _sum_mid(n):
    return _sum(n)


@case("max (mid-size)", sizes=(3 * 10**5,))
def _max_mid(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.max(tx), "numpy": lambda: np.max(x)}


# ----------------------------------------------------------------------------- per-call overhead

SMALL = (16,)


@case("overhead: add", sizes=SMALL)
def _o_add(n):
    x, y, tx, ty = _f32(n, 2)
    return {"tiarray": lambda: ta.add(tx, ty), "numpy": lambda: np.add(x, y)}


@case("overhead: x + 1.0 (Python scalar)", sizes=SMALL)
def _o_scalar(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: tx + 1.0, "numpy": lambda: x + 1.0}


@case("overhead: sum", sizes=SMALL, rtol=1e-6)
def _o_sum(n):
    x, tx = _f32(n)
    return {"tiarray": lambda: ta.sum(tx), "numpy": lambda: np.sum(x)}


@case("overhead: where", sizes=SMALL)
def _o_where(n):
    x, y, tx, ty = _f32(n, 2)
    c = x > 0
    tc = ta.asarray(c)
    return {"tiarray": lambda: ta.where(tc, tx, ty), "numpy": lambda: np.where(c, x, y)}


@case("overhead: reshape(x.T) (a copy)", sizes=SMALL)
def _o_reshape(n):
    x = rng.standard_normal((4, n // 4), dtype=np.float32)
    tx = ta.asarray(x)
    return {"tiarray": lambda: ta.reshape(tx.T, (n,)), "numpy": lambda: np.reshape(x.T, (n,))}


@case("overhead: matmul (4 x 4) @ 4", sizes=(4,), rtol=1e-5)
def _o_matmul(n):
    a, v = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    ta_a, ta_v = ta.asarray(a), ta.asarray(v)
    return {"tiarray": lambda: ta.matmul(ta_a, ta_v), "numpy": lambda: a @ v}


@case("overhead: take", sizes=SMALL)
def _o_take(n):
    x, tx = _f32(n)
    idx = rng.integers(0, n, size=n)
    tidx = ta.asarray(idx)
    return {"tiarray": lambda: ta.take(tx, tidx), "numpy": lambda: np.take(x, idx)}


# ----------------------------------------------------------------------------- main


def _check(name, fns, rtol):
    got, want = np.asarray(fns["tiarray"]()), np.asarray(fns["numpy"]())
    assert got.shape == want.shape and got.dtype == want.dtype, (name, got.shape, want.shape, got.dtype)
    if "check" in fns:  # a case with its own error bound against an exact reference
        fns["check"](got)
    elif rtol == 0.0:
        np.testing.assert_array_equal(got, want, err_msg=name)
    elif rtol is not None:
        scale = float(np.abs(want).max()) if want.size else 1.0
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=name)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="sizes up to 1e6, matmul 512, shorter runs")
    ap.add_argument("-k", default="", help="run only the rows whose name contains this")
    ap.add_argument(
        "--json", default=None, help="also write the measurements to this JSON file (for plot_results.py)"
    )
    args = ap.parse_args(argv)
    min_time, repeats = (0.05, 3) if args.quick else (0.3, 7)
    if not ta.is_initialized():
        ta.init("cpu")
    import taichi as ti

    threads = ti.lang.impl.current_cfg().cpu_max_num_threads
    load0 = os.getloadavg()[0]
    rows, raw = [], []
    for name, sizes, setup, rtol in CASES:
        if args.k and args.k not in name:
            continue
        for n in sizes:
            if args.quick:
                if n > 10**6:
                    continue
                if name.startswith("matmul"):
                    n = 512
            fns = setup(n)
            _check(name, fns, rtol)
            s_ta = samples(fns["tiarray"], min_time=min_time, repeats=repeats)
            s_np = samples(fns["numpy"], min_time=min_time, repeats=repeats)
            b_ta, b_np = min(s_ta), min(s_np)
            m_ta, m_np = statistics.median(s_ta), statistics.median(s_np)
            label = name.replace("1024x1024", f"{n}x{n}") if name.startswith("matmul") else name
            rows.append(
                {
                    "case": label,
                    "n": "-" if name.startswith("matmul") else f"{n:,}",
                    "tiarray us": fmt_us(b_ta),
                    "numpy us": fmt_us(b_np),
                    "ratio": f"{b_ta / b_np:.2f}",
                    "ratio of medians": f"{m_ta / m_np:.2f}",
                }
            )
            raw.append({"case": label, "n": n, "tiarray_s": s_ta, "numpy_s": s_np})
            print(
                f"  {label:<36} {rows[-1]['n']:>12}  ratio {rows[-1]['ratio']}", file=sys.stderr, flush=True
            )
            del fns
    print(f"machine: {machine_line()}; Taichi CPU threads: {threads}")
    print(f"load average (1 min) before/after: {load0:.2f}/{os.getloadavg()[0]:.2f}")
    print_table(
        f"tiarray vs NumPy, float32 unless a row says otherwise (best of {repeats} batches; ratio = tiarray / NumPy, "
        "< 1: tiarray faster)",
        rows,
        ["case", "n", "tiarray us", "numpy us", "ratio", "ratio of medians"],
    )
    if args.json:
        import json

        meta = {"machine": machine_line(), "threads": threads, "repeats": repeats, "load": os.getloadavg()}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": raw}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
