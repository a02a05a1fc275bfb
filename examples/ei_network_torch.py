"""The balanced E/I spiking network of ``ei_network_jax.py``, in PyTorch.

Same neurons, synapses, connectivity generator and parameters; each time step runs in a
plain Python loop with torch tensors, and spikes propagate with
``tiarray.operators.event_csrmv(..., transpose=True)`` on the tensors' own memory (no
copies). Prints the same statistics and saves the same kind of plot.

    python examples/ei_network_torch.py               # 1 s of network time, COBA
    python examples/ei_network_torch.py --quick       # 200 ms, for CI
"""

import argparse
import math
import os
import sys
import time

import tiarray.operators as top  # before taichi: keeps Taichi's banner quiet

# isort: split
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ei_common import Params, build_connectivity, merge_projections, plot, rates_hz  # noqa: E402


def simulate(p: Params, n: int, duration_ms: float, seed: int = 0):
    n_exc, conn_e, conn_i = build_connectivity(n, seed=seed + 42)
    steps = int(round(duration_ms / p.dt))
    gen = torch.Generator().manual_seed(seed)
    v = -55.0 + 2.0 * torch.randn(n, generator=gen)
    spikes = torch.zeros(steps, n, dtype=torch.bool)
    run_s = run(p, n_exc, conn_e, conn_i, v, steps, spikes.__setitem__)
    return spikes.numpy(), n_exc, run_s


@torch.no_grad()
def run(p: Params, n_exc: int, conn_e, conn_i, v, steps: int, record) -> float:
    """``steps`` steps from membrane potentials ``v`` (a float32 tensor, mV).

    ``conn_e``, ``conn_i``: ``(indices, indptr)`` NumPy arrays of ``build_connectivity``;
    ``record(k, spike)`` gets each step's spikes. Returns the wall time of the loop (s).
    ``benchmarks/bench_network.py`` times this loop.
    """
    n = v.shape[0]
    # both projections in one (n, 2n) matrix: one operator call per step, not two
    ind, ptr = (torch.from_numpy(a) for a in merge_projections(n, conn_e, conn_i))
    one = torch.tensor(1.0)
    ge = torch.zeros(n)
    gi = torch.zeros(n)
    t_last = torch.full((n,), -1e7)
    decay_e, decay_i = math.exp(-p.dt / p.tau_e), math.exp(-p.dt / p.tau_i)
    t0 = time.perf_counter()
    for k in range(steps):
        t = k * p.dt
        spike = v >= p.v_th
        record(k, spike)
        v = torch.where(spike, p.v_reset, v)
        t_last = torch.where(spike, t, t_last)
        counts = top.event_csrmv(one, ind, ptr, spike, shape=(n, 2 * n), transpose=True)
        ge.add_(counts[:n], alpha=p.w_e)
        gi.add_(counts[n:], alpha=p.w_i)
        ge *= decay_e
        gi *= decay_i
        if p.model == "coba":
            current = ge * (p.e_exc - v) + gi * (p.e_inh - v) + p.i_ext
        else:
            current = ge + gi + p.i_ext
        refractory = (t - t_last) < p.tau_ref
        v = torch.where(refractory, v, v + p.dt * (p.v_rest - v + current) / p.tau)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=("coba", "cuba"), default="coba")
    parser.add_argument("--n", type=int, default=4000)
    parser.add_argument("--duration", type=float, default=1000.0, help="network time in ms")
    parser.add_argument("--quick", action="store_true", help="simulate 200 ms (for CI)")
    parser.add_argument("--out", default="examples/output/ei_network_torch.png")
    args = parser.parse_args(argv)
    torch.set_num_threads(min(2, torch.get_num_threads()))
    p = Params() if args.model == "coba" else Params.cuba()
    duration = 200.0 if args.quick else args.duration
    spikes, n_exc, run_s = simulate(p, args.n, duration)
    r_e, r_i = rates_hz(spikes, n_exc, p.dt)
    print(
        f"E/I network ({args.model.upper()}), {args.n} neurons, {duration:.0f} ms of network time, PyTorch + tiarray"
    )
    print(f"mean rate: excitatory {r_e:.1f} Hz, inhibitory {r_i:.1f} Hz")
    print(f"wall time per simulated second: {run_s / (duration / 1000.0):.2f} s")
    plot(
        spikes,
        n_exc,
        p.dt,
        args.out,
        f"{args.model.upper()} network, {args.n} LIF neurons (PyTorch + tiarray)",
    )
    print(f"raster and rate plot: {args.out}")
    if not (0.5 < r_e < 200.0):
        print("unexpected firing rate: the network is silent or saturated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
