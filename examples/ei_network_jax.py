"""A balanced excitatory/inhibitory spiking network in JAX, event-driven with tiarray.

4000 leaky integrate-and-fire neurons (80 % excitatory, 20 % inhibitory), each pair
connected with probability 2 %, with conductance-based (COBA) or current-based (CUBA)
exponential synapses, after the benchmark networks of Brette et al. (2007) as used by
BrainPy. Each step of ``jax.lax.scan`` propagates the spikes of the step with one
``tiarray.operators.event_csrmv(..., transpose=True)`` call over both projections (merged
into one matrix by ``_ei_common.merge_projections``): only the synapses of neurons that
spiked are visited.

The script prints the mean firing rates and the wall time per simulated second (of a
second run, after one that warms up), and saves a spike raster with the population rate
as a PNG. On the 2-CPU development machine it printed 0.07 s per simulated second for
COBA (2026-12-05; 0.12 s when the native XLA handler still went through Taichi's launch,
0.19 s with ``TIARRAY_NATIVE=0``, tiarray's Python XLA handler; docs/performance.md).

    python examples/ei_network_jax.py                 # 1 s of network time, COBA
    python examples/ei_network_jax.py --model cuba --duration 2000
    python examples/ei_network_jax.py --quick         # 200 ms, for CI

Parameters, connectivity and plotting live in ``examples/_ei_common.py`` (shared with the
PyTorch version); ``init_state``, ``make_step`` and ``simulate`` here are reused by
``examples/ei_network_sharded.py``, ``state_from`` and ``make_step`` by
``benchmarks/bench_network.py``.
"""

import argparse
import os
import sys
import time

import tiarray.operators as top  # before taichi/jax: keeps Taichi's banner quiet

# isort: split
import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _ei_common import Params, build_connectivity, merge_projections, plot, rates_hz  # noqa: E402


def init_state(n: int, key, p: Params):
    """Membrane potentials around -55 mV, no synaptic input, no refractoriness."""
    return state_from(-55.0 + 2.0 * jax.random.normal(key, (n,), jnp.float32))


def state_from(v):
    """The state of ``make_step`` at time 0 from membrane potentials ``v`` (float32, mV)."""
    v = jnp.asarray(v, jnp.float32)
    n = v.shape[0]
    z = jnp.zeros(n, jnp.float32)
    return (v, z, z, jnp.full(n, -1e7, jnp.float32), jnp.float32(0.0))


def make_step(p: Params, n: int, n_exc: int, conn_e, conn_i, propagate=None):
    """One Euler step of the network, for ``lax.scan``: ``(state, _) -> (state, spikes)``.

    ``propagate(spike) -> (ge_input, gi_input)`` replaces the synaptic propagation (the
    sharded example passes one that works on a device's neurons).
    """
    if propagate is None:
        # both projections in one (n, 2n) matrix: one operator call per step, not two
        ind, ptr = (jnp.asarray(a) for a in merge_projections(n, conn_e, conn_i))
        one = jnp.float32(1.0)

        def propagate(spike):
            # event-driven propagation: only the rows of neurons that spiked are visited;
            # each target's count of E and I spikes, times the projections' weights
            counts = top.event_csrmv(one, ind, ptr, spike, shape=(n, 2 * n), transpose=True)
            return p.w_e * counts[:n], p.w_i * counts[n:]

    decay_e = np.float32(np.exp(-p.dt / p.tau_e))
    decay_i = np.float32(np.exp(-p.dt / p.tau_i))

    def step(state, _):
        v, ge, gi, t_last, t = state
        spike = v >= p.v_th
        v = jnp.where(spike, p.v_reset, v)
        t_last = jnp.where(spike, t, t_last)
        ge_in, gi_in = propagate(spike)
        ge = ge + ge_in
        gi = gi + gi_in
        ge = ge * decay_e
        gi = gi * decay_i
        if p.model == "coba":
            current = ge * (p.e_exc - v) + gi * (p.e_inh - v) + p.i_ext
        else:
            current = ge + gi + p.i_ext
        refractory = (t - t_last) < p.tau_ref
        v = jnp.where(refractory, v, v + p.dt * (p.v_rest - v + current) / p.tau)
        return (v, ge, gi, t_last, t + p.dt), spike

    return step


def simulate(p: Params, n: int, duration_ms: float, seed: int = 0):
    """Run the network; returns ``(spikes[steps, n] as NumPy bool, n_exc, compile_s, run_s)``."""
    n_exc, conn_e, conn_i = build_connectivity(n, seed=seed + 42)
    steps = int(round(duration_ms / p.dt))
    step = make_step(p, n, n_exc, conn_e, conn_i)
    run = jax.jit(lambda s: lax.scan(step, s, None, length=steps))
    state = init_state(n, jax.random.PRNGKey(seed), p)
    t0 = time.perf_counter()
    compiled = run.lower(state).compile()
    t1 = time.perf_counter()
    # a first run, not timed: it pays once for touching the output's memory and for the
    # first launches (tiarray prepares each launch in Python, then repeats it natively)
    jax.block_until_ready(compiled(state))
    t2 = time.perf_counter()
    _, spikes = compiled(state)
    spikes = np.asarray(jax.block_until_ready(spikes))
    t3 = time.perf_counter()
    return spikes, n_exc, t1 - t0, t3 - t2


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", choices=("coba", "cuba"), default="coba")
    parser.add_argument("--n", type=int, default=4000, help="number of neurons")
    parser.add_argument("--duration", type=float, default=1000.0, help="network time in ms")
    parser.add_argument("--quick", action="store_true", help="simulate 200 ms (for CI)")
    parser.add_argument("--out", default="examples/output/ei_network_jax.png")
    args = parser.parse_args(argv)
    p = Params() if args.model == "coba" else Params.cuba()
    duration = 200.0 if args.quick else args.duration
    spikes, n_exc, compile_s, run_s = simulate(p, args.n, duration)
    r_e, r_i = rates_hz(spikes, n_exc, p.dt)
    print(
        f"E/I network ({args.model.upper()}), {args.n} neurons, {duration:.0f} ms of network time, JAX + tiarray"
    )
    print(f"mean rate: excitatory {r_e:.1f} Hz, inhibitory {r_i:.1f} Hz")
    print(f"compile {compile_s:.2f} s; wall time per simulated second: {run_s / (duration / 1000.0):.2f} s")
    plot(spikes, n_exc, p.dt, args.out, f"{args.model.upper()} network, {args.n} LIF neurons (JAX + tiarray)")
    print(f"raster and rate plot: {args.out}")
    if not (0.5 < r_e < 200.0):
        print("unexpected firing rate: the network is silent or saturated", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
