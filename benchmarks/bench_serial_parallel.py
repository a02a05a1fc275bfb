"""Benchmark: a sparse event product in the serial and the parallel CPU variant, interleaved.

The sparse Operators pick the serial or the parallel kernel per call from the work
(``tiarray.operators.sparse.set_thresholds``). This script forces each variant in turn,
one call each, alternating, so that both see the same machine state (on a shared 2-CPU
machine back-to-back blocks of one variant drift by up to 1.5x), and prints the median and
minimum per call and the ratio parallel / serial (> 1: the serial variant is faster).

Cases: ``event_fcnmv`` (k = 80 synapses per row) and ``event_densemv`` in the spiking
direction (``A.T @ s``), bool spikes at rate r, float32 weights, the NumPy route.

Usage::

    python benchmarks/bench_serial_parallel.py                         # the default cases
    python benchmarks/bench_serial_parallel.py --quick                 # smoke run
    python benchmarks/bench_serial_parallel.py --op event_fcnmv --n 40000 --r 0.05 0.1
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _harness import machine_line  # noqa: E402


def _case(sp, op, n, r, rng):
    s = rng.random(n) < r
    if op == "event_fcnmv":
        k = 80
        idx = sp.fixed_num_conn(n, n, k, seed=n)
        w = rng.random((n, k), dtype=np.float32)
        for a in (idx, w):
            a.flags.writeable = False
        return "scatter", lambda: sp.event_fcnmv(w, idx, s, shape=(n, n), transpose=True)
    W = rng.random((n, n), dtype=np.float32)
    W.flags.writeable = False
    return "gather", lambda: sp.event_densemv(W, s, transpose=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--op", nargs="+", default=["event_fcnmv", "event_densemv"])
    ap.add_argument("--n", type=int, nargs="+", default=None)
    ap.add_argument("--r", type=float, nargs="+", default=[0.01, 0.05, 0.1])
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--quick", action="store_true", help="smoke run: n = 4000, r = 0.05, 20 calls")
    args = ap.parse_args(argv)
    if args.quick:
        args.n, args.r, args.calls = [4000], [0.05], 20
    from tiarray.operators import sparse as sp

    print(machine_line())
    print("\n| op | n | r | serial us (min) | parallel us (min) | parallel / serial |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(0)
    old = sp.set_thresholds()
    try:
        for op in args.op:
            sizes = args.n or ([4000, 10000, 40000] if op == "event_fcnmv" else [4000, 10000])
            for n in sizes:
                for r in args.r:
                    knob, f = _case(sp, op, n, r, rng)
                    times = {"serial": [], "parallel": []}
                    for rep in range(args.calls):
                        for mode, th in (("serial", 1 << 62), ("parallel", 0)):
                            sp.set_thresholds(**{knob: th})
                            if rep == 0:
                                f(), f()  # compile and warm both variants
                            t0 = time.perf_counter()
                            f()
                            times[mode].append(time.perf_counter() - t0)
                    med = {m: float(np.median(v)) * 1e6 for m, v in times.items()}
                    mn = {m: float(np.min(v)) * 1e6 for m, v in times.items()}
                    print(
                        f"| {op} | {n} | {r} | {med['serial']:.1f} ({mn['serial']:.1f}) | "
                        f"{med['parallel']:.1f} ({mn['parallel']:.1f}) | {med['parallel'] / med['serial']:.2f} |"
                    )
    finally:
        sp.set_thresholds(**old)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
