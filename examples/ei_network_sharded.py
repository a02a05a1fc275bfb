"""The E/I spiking network of ``ei_network_jax.py`` with its neurons split over 4 devices.

Every device holds a quarter of the neurons (their state) and their incoming synapses
(``tiarray.operators.partition_csr_columns``: the columns of the presynaptic-to-
postsynaptic CSR matrices). Each step, inside ``jax.shard_map``:

1. every device finds the spikes of its neurons;
2. the spikes are gathered on every device (``all_gather`` of 4000 bools);
3. every device adds up its own neurons' synaptic input over the rows of the neurons
   that spiked (``event_csrmv(..., transpose=True)`` on its block), in the order one
   device would;
4. the neuron update of ``ei_network_jax.make_step`` runs on the local neurons.

No floating-point sum is split between devices, so the spike trains equal the
single-device run (``ei_network_jax.simulate``) bit for bit; the script checks it and
prints the wall time per simulated second for 1 and 4 devices.

On a CPU the 4 devices are virtual (``--xla_force_host_platform_device_count=4``, set
below before JAX is imported): they share one process and one Taichi runtime, so this
shows the sharded program, not a speed-up (see ``docs/scaling.md``).

    python examples/ei_network_sharded.py             # 1 s of network time, COBA
    python examples/ei_network_sharded.py --quick     # 200 ms, for CI
"""

import argparse
import os
import sys

if "jax" not in sys.modules:  # 4 virtual CPU devices, before JAX is imported
    flags = os.environ.get("XLA_FLAGS", "")
    if "xla_force_host_platform_device_count" not in flags:
        os.environ["XLA_FLAGS"] = (flags + " --xla_force_host_platform_device_count=4").strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")

import tiarray.operators as top  # before taichi/jax: keeps Taichi's banner quiet

# isort: split
import time

import jax
import numpy as np
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ei_common import Params, build_connectivity, rates_hz  # noqa: E402
from ei_network_jax import init_state, make_step, simulate  # noqa: E402


def simulate_sharded(p: Params, n: int, duration_ms: float, devices, seed: int = 0):
    """Run the network with its neurons split over ``devices``; returns ``(spikes[steps, n]
    as NumPy bool, n_exc, compile_s, run_s)``, like ``ei_network_jax.simulate``."""
    d = len(devices)
    if n % d:
        raise ValueError(f"simulate_sharded(): {n} neurons do not split evenly over {d} devices")
    n_exc, conn_e, conn_i = build_connectivity(n, seed=seed + 42)
    steps = int(round(duration_ms / p.dt))
    mesh = jax.make_mesh((d,), ("d",), devices=devices)
    # each device: every presynaptic row, its own neurons' columns (their incoming synapses)
    blk_e = top.partition_csr_columns(np.float32(p.w_e), *conn_e, shape=(n_exc, n), parts=d).shard(mesh, "d")
    blk_i = top.partition_csr_columns(np.float32(p.w_i), *conn_i, shape=(n - n_exc, n), parts=d).shard(
        mesh, "d"
    )

    def run(state, blocks_e, blocks_i):
        def propagate(spike):  # this device's neurons' spikes -> their synaptic input
            every = lax.all_gather(spike, "d", tiled=True)
            kw = {"axis_name": "d", "transpose": True, "split": "columns"}
            ge_in = top.block_csrmv(*blocks_e, every[:n_exc], shape=(n_exc, n), **kw)
            gi_in = top.block_csrmv(*blocks_i, every[n_exc:], shape=(n - n_exc, n), **kw)
            return ge_in, gi_in

        step = make_step(p, n, n_exc, conn_e, conn_i, propagate=propagate)
        return lax.scan(step, state, None, length=steps)

    blk = P("d")
    state_spec = (blk, blk, blk, blk, P())  # v, ge, gi, t_last split; t the same everywhere
    w_spec = P()  # homogeneous weights: one number on every device
    f = jax.jit(
        jax.shard_map(
            run,
            mesh=mesh,
            in_specs=(state_spec, (w_spec, blk, blk), (w_spec, blk, blk)),
            out_specs=(state_spec, P(None, "d")),
        )
    )
    state = init_state(n, jax.random.PRNGKey(seed), p)
    state = tuple(jax.device_put(s, NamedSharding(mesh, sp)) for s, sp in zip(state, state_spec))
    args = (state, blk_e.arrays(), blk_i.arrays())
    t0 = time.perf_counter()
    compiled = f.lower(*args).compile()
    t1 = time.perf_counter()
    _, spikes = compiled(*args)
    spikes = np.asarray(jax.block_until_ready(spikes))
    t2 = time.perf_counter()
    return spikes, n_exc, t1 - t0, t2 - t1


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=("coba", "cuba"), default="coba")
    parser.add_argument("--n", type=int, default=4000, help="number of neurons (a multiple of the devices)")
    parser.add_argument("--duration", type=float, default=1000.0, help="network time in ms")
    parser.add_argument("--devices", type=int, default=4)
    parser.add_argument("--quick", action="store_true", help="simulate 200 ms (for CI)")
    args = parser.parse_args(argv)
    p = Params() if args.model == "coba" else Params.cuba()
    duration = 200.0 if args.quick else args.duration
    devices = jax.devices()[: args.devices]
    if len(devices) < args.devices:
        print(f"only {len(devices)} JAX devices here, {args.devices} asked for", file=sys.stderr)
        return 1
    # The CPU event scatter adds a neuron's inputs row by row; above a work threshold it
    # would split the rows over threads (different partial sums on 1 and 4 devices): keep
    # it serial so that both runs add in the same order.
    old = top.set_thresholds(scatter=1 << 62)
    try:
        single, n_exc, c1, r1 = simulate(p, args.n, duration)
        sharded, _, c4, r4 = simulate_sharded(p, args.n, duration, devices)
    finally:
        top.set_thresholds(**old)
    r_e, r_i = rates_hz(sharded, n_exc, p.dt)
    same = np.array_equal(single, sharded)
    per_s = 1000.0 / duration
    print(
        f"E/I network ({args.model.upper()}), {args.n} neurons on {len(devices)} {devices[0].platform} devices, "
        f"{duration:.0f} ms of network time"
    )
    print(f"mean rate: excitatory {r_e:.1f} Hz, inhibitory {r_i:.1f} Hz; {int(sharded.sum())} spikes")
    print(f"spike trains equal the single-device run bit for bit: {same}")
    print("wall time per simulated second:")
    print(f"  1 device  (ei_network_jax.simulate): {r1 * per_s:.2f} s   (compile {c1:.2f} s)")
    print(f"  {len(devices)} devices (neurons split, shard_map): {r4 * per_s:.2f} s   (compile {c4:.2f} s)")
    if not same:
        diff = np.nonzero((single != sharded).any(axis=1))[0]
        print(f"the spike trains differ from step {diff[0]} on", file=sys.stderr)
        return 1
    if not (0.5 < r_e < 200.0):
        print("unexpected firing rate: the network is silent or saturated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
