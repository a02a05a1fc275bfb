"""An E/I spiking network whose excitatory synapses learn with pair-based STDP, in JAX.

The network of ``examples/ei_network_jax.py`` (leaky integrate-and-fire neurons, 80 %
excitatory, conductance-based synapses, each pair connected with probability 2 %), with
one weight per excitatory synapse that changes by spike-timing-dependent plasticity:

- every neuron keeps a trace that jumps by 1 at its spikes and decays with ``tau_plus``
  (presynaptic, excitatory neurons) or ``tau_minus`` (postsynaptic, every neuron);
- a presynaptic spike depresses its synapses by ``A_minus`` times the postsynaptic trace
  (post before pre): ``tiarray.operators.csr_update_on_pre`` visits only the synapses of the
  neurons that spiked;
- a postsynaptic spike potentiates the synapses onto it by ``A_plus`` times the
  presynaptic trace (pre before post): ``csr_update_on_post`` finds them through the
  column index of the connectivity (built once, at trace time: the connectivity is a
  constant of the jitted step);
- weights stay in ``[0, w_max]``.

Each step of ``jax.lax.scan`` propagates the spikes with ``event_csrmv(..., transpose=True)``
(the learned weights for the excitatory population) and applies both updates. The
script prints the rates and the mean weight before and after, and saves the weight
distribution before/after and the population rates as a PNG.

    python examples/stdp_network.py                  # 1 s of network time
    python examples/stdp_network.py --quick          # 200 ms, 2000 neurons, for CI
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
from _ei_common import Params, build_connectivity, rates_hz  # noqa: E402

TAU_PLUS, TAU_MINUS = 16.8, 33.7  # ms (Bi and Poo 1998, as fitted by van Rossum et al. 2000)


def make_step(p: Params, n: int, n_exc: int, conn_e, conn_i, w_max: float, a_plus: float, a_minus: float):
    """One Euler step: ``(state, _) -> (state, (spikes, mean weight))``; the excitatory
    weights are part of the state."""
    ind_e, ptr_e = (jnp.asarray(a) for a in conn_e)
    ind_i, ptr_i = (jnp.asarray(a) for a in conn_i)
    shape_e, shape_i = (n_exc, n), (n - n_exc, n)
    w_i = jnp.float32(p.w_i)
    decay_e = np.float32(np.exp(-p.dt / p.tau_e))
    decay_i = np.float32(np.exp(-p.dt / p.tau_i))
    decay_plus = np.float32(np.exp(-p.dt / TAU_PLUS))
    decay_minus = np.float32(np.exp(-p.dt / TAU_MINUS))

    def step(state, _):
        v, ge, gi, t_last, t, w_e, x_pre, y_post = state
        spike = v >= p.v_th
        v = jnp.where(spike, p.v_reset, v)
        t_last = jnp.where(spike, t, t_last)
        pre = spike[:n_exc]
        # propagation with the current (learned) excitatory weights: only the active rows are read
        ge = (ge + top.event_csrmv(w_e, ind_e, ptr_e, pre, shape=shape_e, transpose=True)) * decay_e
        gi = (gi + top.event_csrmv(w_i, ind_i, ptr_i, spike[n_exc:], shape=shape_i, transpose=True)) * decay_i
        # traces: jump at the neuron's spikes, then decay
        x_pre = (x_pre + pre) * decay_plus
        y_post = (y_post + spike) * decay_minus
        # STDP: depression at presynaptic spikes, potentiation at postsynaptic spikes
        w_e = top.csr_update_on_pre(
            w_e, ind_e, ptr_e, pre, -a_minus * y_post, shape=shape_e, w_min=0.0, w_max=w_max
        )
        w_e = top.csr_update_on_post(
            w_e, ind_e, ptr_e, spike, a_plus * x_pre, shape=shape_e, w_min=0.0, w_max=w_max
        )
        current = ge * (p.e_exc - v) + gi * (p.e_inh - v) + p.i_ext
        refractory = (t - t_last) < p.tau_ref
        v = jnp.where(refractory, v, v + p.dt * (p.v_rest - v + current) / p.tau)
        return (v, ge, gi, t_last, t + p.dt, w_e, x_pre, y_post), (spike, w_e.mean())

    return step


def simulate(n: int, duration_ms: float, seed: int = 0):
    p = Params()
    n_exc, conn_e, conn_i = build_connectivity(n, seed=seed + 42)
    nnz = conn_e[0].shape[0]
    w_max = 2.0 * p.w_e
    rng = np.random.default_rng(seed)
    w0 = (p.w_e * rng.uniform(0.5, 1.5, nnz)).astype(np.float32)
    step = make_step(p, n, n_exc, conn_e, conn_i, w_max, a_plus=0.01 * w_max, a_minus=0.0105 * w_max)
    steps = int(round(duration_ms / p.dt))
    key = jax.random.PRNGKey(seed)
    z = jnp.zeros(n, jnp.float32)
    state = (-55.0 + 2.0 * jax.random.normal(key, (n,), jnp.float32), z, z, jnp.full(n, -1e7, jnp.float32),
             jnp.float32(0.0), jnp.asarray(w0), jnp.zeros(n_exc, jnp.float32), z)  # fmt: skip
    run = jax.jit(lambda s: lax.scan(step, s, None, length=steps))
    t0 = time.perf_counter()
    compiled = run.lower(state).compile()
    t1 = time.perf_counter()
    final, (spikes, w_mean) = compiled(state)
    spikes = np.asarray(jax.block_until_ready(spikes))
    t2 = time.perf_counter()
    return p, n_exc, spikes, w0, np.asarray(final[5]), np.asarray(w_mean), w_max, t1 - t0, t2 - t1


def plot(path, p, n_exc, spikes, w0, w1, w_mean, w_max):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax1, ax2, ax3) = plt.subplots(3, 1, figsize=(8, 9))
    bins = np.linspace(0, w_max, 41)
    ax1.hist(w0, bins=bins, alpha=0.6, label="before", color="tab:gray")
    ax1.hist(w1, bins=bins, alpha=0.6, label="after", color="tab:red")
    ax1.set_xlabel("excitatory weight (conductance jump)")
    ax1.set_ylabel("synapses")
    ax1.legend()
    ax1.set_title("weight distribution before and after STDP")
    steps = spikes.shape[0]
    bin_steps = max(1, int(round(5.0 / p.dt)))
    nb = steps // bin_steps
    t = np.arange(nb) * bin_steps * p.dt
    for sl, name, c in (
        (slice(0, n_exc), "excitatory", "tab:red"),
        (slice(n_exc, None), "inhibitory", "tab:blue"),
    ):
        rate = spikes[: nb * bin_steps, sl].reshape(nb, bin_steps, -1).mean(axis=(1, 2)) * 1000.0 / p.dt
        ax2.plot(t, rate, color=c, label=name)
    ax2.set_ylabel("rate (Hz)")
    ax2.legend()
    ax3.plot(np.arange(steps) * p.dt, w_mean, color="k")
    ax3.set_xlabel("time (ms)")
    ax3.set_ylabel("mean excitatory weight")
    fig.tight_layout()
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--n", type=int, default=4000, help="number of neurons")
    parser.add_argument("--duration", type=float, default=1000.0, help="network time in ms")
    parser.add_argument("--quick", action="store_true", help="200 ms with 2000 neurons (for CI)")
    parser.add_argument("--out", default="examples/output/stdp_network.png")
    args = parser.parse_args(argv)
    n, duration = (2000, 200.0) if args.quick else (args.n, args.duration)
    p, n_exc, spikes, w0, w1, w_mean, w_max, compile_s, run_s = simulate(n, duration)
    r_e, r_i = rates_hz(spikes, n_exc, p.dt)
    print(f"E/I network with STDP, {n} neurons, {w0.size} plastic synapses, {duration:.0f} ms, JAX + tiarray")
    print(f"mean rate: excitatory {r_e:.1f} Hz, inhibitory {r_i:.1f} Hz")
    print(f"mean excitatory weight: {w0.mean():.4f} -> {w1.mean():.4f} (bounds [0, {w_max}])")
    print(f"compile {compile_s:.2f} s; wall time per simulated second: {run_s / (duration / 1000.0):.2f} s")
    plot(args.out, p, n_exc, spikes, w0, w1, w_mean, w_max)
    print(f"weights and rates plot: {args.out}")
    if not (0.5 < r_e < 200.0):
        print("unexpected firing rate: the network is silent or saturated", file=sys.stderr)
        return 1
    if not (np.isfinite(w1).all() and w1.min() >= 0 and w1.max() <= w_max and (w1 != w0).any()):
        print("the weights did not learn, or left their bounds", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
