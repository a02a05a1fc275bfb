"""A spiking network step with its neurons split over the devices of several JAX processes.

``python tests/multiprocess/jax_network.py RANK WORLD PORT OUT`` is one process of a
``jax.distributed`` job on 127.0.0.1 with CPU collectives over gloo, 2 CPU devices per
process (``tests/operators/test_jax_multiprocess.py`` starts two: 4 devices in all). The functions
here are also what the single-process reference runs.

The network: ``N`` leaky integrate-and-fire neurons, recurrent CSR connectivity whose rows
(presynaptic neurons) are split over the devices with
``tiarray.operators.distributed``; each step a device scatters its neurons' spikes through
its rows (``event_csrmv(..., transpose=True)``), the partial currents are reduce-scattered
(``psum_scatter``), and every device integrates its own neurons.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

N, STEPS, DEVICES_PER_PROCESS = 128, 40, 2


def problem():
    """Connectivity (weights, indices, indptr) and the external drive (STEPS, N)."""
    from _row_csr import random_csr

    rng = np.random.default_rng(2024)
    w, i, p = random_csr(N, N, 0.1, rng)
    w = (w * 0.3).astype(np.float32)  # excitatory and inhibitory synapses
    drive = (rng.random((STEPS, N)) * 0.22).astype(np.float32)
    return w, i, p, drive


def _lif(v, current, ext):
    import jax.numpy as jnp

    v = 0.9 * v + current + ext
    fired = v > 1.0
    return jnp.where(fired, 0.0, v), fired


def run_single(w, i, p, drive):
    """The network on one device: spikes (STEPS, N)."""
    import jax
    import jax.numpy as jnp
    from tiarray.operators.sparse import event_csrmv

    def step(c, ext):
        v, s = c
        v, s = _lif(v, event_csrmv(jnp.asarray(w), i, p, s, shape=(N, N), transpose=True), ext)
        return (v, s), s

    v0 = jnp.zeros(N, jnp.float32)
    return jax.jit(lambda d: jax.lax.scan(step, (v0, v0 > 1), d)[1])(drive)


def run_sharded(mesh, blocks, drive):
    """The network with its neurons split over the mesh axis 'd': spikes (STEPS, N),
    sharded over the neurons."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P
    from tiarray.operators.distributed import block_csrmv

    def body(w, i, p, drive):
        def step(c, ext):
            v, s = c
            cur = block_csrmv(w, i, p, s, shape=(N, N), axis_name="d", transpose=True, reduce="psum_scatter")
            v, s = _lif(v, cur, ext)
            return (v, s), s

        v0 = jnp.zeros_like(drive[0])
        return jax.lax.scan(step, (v0, v0 > 1), drive)[1]

    f = jax.shard_map(
        body, mesh=mesh, in_specs=(P("d"), P("d"), P("d"), P(None, "d")), out_specs=P(None, "d")
    )
    return jax.jit(f)(*blocks.arrays(), drive)


def main(rank, world, port, out):
    import jax

    jax.config.update("jax_cpu_collectives_implementation", "gloo")
    jax.config.update("jax_num_cpu_devices", DEVICES_PER_PROCESS)
    jax.distributed.initialize(
        coordinator_address=f"127.0.0.1:{port}",
        num_processes=world,
        process_id=rank,
        initialization_timeout=120,
    )
    from jax.experimental import multihost_utils
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P
    from tiarray.operators.distributed import partition_csr_rows

    assert jax.process_count() == world and len(jax.local_devices()) == DEVICES_PER_PROCESS
    n_dev = len(jax.devices())
    mesh = jax.make_mesh((n_dev,), ("d",), axis_types=(jax.sharding.AxisType.Explicit,))
    w, i, p, drive = problem()
    blocks = partition_csr_rows(w, i, p, shape=(N, N), parts=n_dev).shard(mesh, "d")
    sharding = NamedSharding(mesh, P(None, "d"))
    drive_g = jax.make_array_from_callback(drive.shape, sharding, lambda idx: drive[idx])
    spikes = run_sharded(mesh, blocks, drive_g)
    spikes = np.asarray(multihost_utils.process_allgather(spikes, tiled=True))
    # an Operator with a partition rule, jitted on arrays split over both processes
    from _partition_cases import axpy_p

    x = np.arange(4.0 * n_dev, dtype=np.float32)
    xs = jax.make_array_from_callback(x.shape, NamedSharding(mesh, P("d")), lambda idx: x[idx])
    y = jax.jit(lambda a: axpy_p(2.0, a, a))(xs)
    y = np.asarray(multihost_utils.process_allgather(y, tiled=True))
    np.savez(out, spikes=spikes, axpy=y, devices=n_dev, processes=jax.process_count())
    jax.distributed.shutdown()


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
