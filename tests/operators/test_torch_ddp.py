"""A module built on tiarray Operators trains under torch DistributedDataParallel.

Two processes (gloo, 127.0.0.1, bounded in time) train ``tests/multiprocess/torch_ddp.py``'s
network on halves of each batch; their averaged gradients and their parameters after
three SGD steps equal the single-process run on whole batches.
"""

import sys

import numpy as np
import pytest
from _subprocess_suite import TESTS, free_port, run_processes

sys.path.insert(0, str(TESTS / "multiprocess"))

pytestmark = pytest.mark.cpu_only("DDP over gloo with CPU tensors and a CPU generator")


def test_ddp_gradients_and_training_equal_the_single_process_run(torch, tmp_path):
    import torch_ddp

    grads, params = torch_ddp.train(rank=0, world=1)
    port = free_port()
    outs = [tmp_path / f"rank{r}.npz" for r in range(2)]
    script = str(TESTS / "multiprocess" / "torch_ddp.py")
    run_processes(
        [[script, str(r), "2", str(port), str(outs[r])] for r in range(2)],
        env={"GLOO_SOCKET_IFNAME": "lo", "OMP_NUM_THREADS": "1"},
        timeout=300,
    )
    ranks = [np.load(o) for o in outs]
    assert set(grads) == {"w1", "b1", "w2", "b2"}
    for k in grads:
        for r in ranks:
            # DDP's all-reduce averages the two half-batch gradients: the full-batch gradient
            np.testing.assert_allclose(r[f"grad_{k}"], grads[k], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(r[f"param_{k}"], params[k], rtol=1e-12, atol=1e-14)
        # the gradient is not trivially zero, and training moved the parameters
        assert np.abs(grads[k]).max() > 1e-3
    np.testing.assert_array_equal(ranks[0]["param_w1"], ranks[1]["param_w1"])


def test_single_process_gradients_match_torch_autograd(torch):
    # the reference above is itself checked against the same network in plain torch
    import torch_ddp

    grads, _ = torch_ddp.train(rank=0, world=1)
    net = torch_ddp.Net()
    x, y = (torch.from_numpy(a) for a in torch_ddp.data(0))
    h = torch.nn.functional.softplus(x @ net.w1 + net.b1)
    loss = ((h @ net.w2 + net.b2 - y) ** 2).mean()
    loss.backward()
    for k, p in net.named_parameters():
        np.testing.assert_allclose(grads[k], p.grad.numpy(), rtol=1e-10)
