"""Two JAX processes on 127.0.0.1 (``jax.distributed``, CPU collectives over gloo) run a
spiking network whose neurons are split over their 4 devices; the spike trains equal the
single-process run bit for bit. See ``tests/multiprocess/jax_network.py``.
"""

import sys

import numpy as np
import pytest
from _subprocess_suite import TESTS, free_port, run_processes

sys.path.insert(0, str(TESTS / "multiprocess"))

pytestmark = pytest.mark.cpu_only(
    "JAX processes on CPU devices (JAX_PLATFORMS=cpu), CPU collectives over gloo"
)


def test_two_processes_equal_the_single_process_run(jax, tmp_path):
    import jax_network

    w, i, p, drive = jax_network.problem()
    single = np.asarray(jax_network.run_single(w, i, p, drive))
    assert 0 < single.sum() < single.size / 2  # the network fires, sparsely

    port = free_port()
    outs = [tmp_path / f"rank{r}.npz" for r in range(2)]
    script = str(TESTS / "multiprocess" / "jax_network.py")
    run_processes(
        [[script, str(r), "2", str(port), str(outs[r])] for r in range(2)],
        env={"JAX_PLATFORMS": "cpu", "XLA_FLAGS": ""},
        timeout=300,
    )
    for o in outs:
        r = np.load(o)
        assert int(r["processes"]) == 2 and int(r["devices"]) == 4
        np.testing.assert_array_equal(r["spikes"], single)
        x = np.arange(16.0, dtype=np.float32)
        np.testing.assert_array_equal(r["axpy"], 3 * x)
