"""A torch module built on tiarray Operators, trained with DistributedDataParallel.

``python tests/multiprocess/torch_ddp.py RANK WORLD PORT OUT`` is one rank of a gloo job
on 127.0.0.1 (``tests/operators/test_torch_ddp.py`` starts two); ``train(rank=0, world=1)`` is the
single-process run it is compared with. Each rank takes its contiguous half of every
batch; DDP averages the gradients, so with a mean loss the averaged gradient equals the
single-process gradient of the whole batch.
"""

import os
import sys

import numpy as np
import torch

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants

nd = ti.types.ndarray
N_IN, N_HID, N_OUT, BATCH, STEPS = 6, 8, 3, 16, 3


@ti.kernel
def _dense(x: nd(ndim=2), w: nd(ndim=2), b: nd(ndim=1), out: nd(ndim=2)):
    # the sum over k as a loop of its own, not an inner loop: quadrants' autodiff refuses a
    # non-static range inside a loop ("Cannot use non static range in Backwards mode")
    for i, j in out:
        out[i, j] = b[j]
    for i, j, k in ti.ndrange(out.shape[0], out.shape[1], x.shape[1]):
        out[i, j] += x[i, k] * w[k, j]


# out = x @ w + b; differentiated by Taichi autodiff (no rules)
dense = ta.Operator(
    "ddp_dense",
    kernel=_dense,
    outs=lambda x, w, b: ta.ShapeDtype((x.shape[0], w.shape[1]), x.dtype),
)


@ti.kernel
def _softplus(x: nd(), out: nd()):
    for I in ti.grouped(x):
        out[I] = ti.log(1.0 + ti.exp(x[I]))


def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return t / (1 + (-x).exp())


# a jvp rule: torch transposes what it computes
softplus = ta.Operator(
    "ddp_softplus", kernel=_softplus, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype), jvp=_softplus_jvp
)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        g = torch.Generator().manual_seed(0)
        self.w1 = torch.nn.Parameter(torch.randn(N_IN, N_HID, generator=g, dtype=torch.float64) * 0.5)
        self.b1 = torch.nn.Parameter(torch.randn(N_HID, generator=g, dtype=torch.float64) * 0.1)
        self.w2 = torch.nn.Parameter(torch.randn(N_HID, N_OUT, generator=g, dtype=torch.float64) * 0.5)
        self.b2 = torch.nn.Parameter(torch.zeros(N_OUT, dtype=torch.float64))

    def forward(self, x):
        return dense(softplus(dense(x, self.w1, self.b1)), self.w2, self.b2)


def data(step):
    g = np.random.default_rng(100 + step)
    return g.standard_normal((BATCH, N_IN)), g.standard_normal((BATCH, N_OUT))


def train(rank=0, world=1):
    """Train for STEPS steps; returns the first step's gradients and the final parameters."""
    torch.manual_seed(0)
    net = Net()
    model = net
    if world > 1:
        model = torch.nn.parallel.DistributedDataParallel(net)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    first_grads = None
    lo, hi = rank * BATCH // world, (rank + 1) * BATCH // world
    for step in range(STEPS):
        x, y = data(step)
        x, y = torch.from_numpy(x[lo:hi]), torch.from_numpy(y[lo:hi])
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        if first_grads is None:
            first_grads = {k: p.grad.detach().numpy().copy() for k, p in net.named_parameters()}
        opt.step()
    params = {k: p.detach().numpy().copy() for k, p in net.named_parameters()}
    return first_grads, params


def main(rank, world, port, out):
    from datetime import timedelta

    import torch.distributed as dist

    torch.set_num_threads(1)
    dist.init_process_group(
        "gloo",
        init_method=f"tcp://127.0.0.1:{port}",
        rank=rank,
        world_size=world,
        timeout=timedelta(seconds=120),
    )
    try:
        grads, params = train(rank, world)
        # both ranks done with every collective before either tears the group down: gloo's
        # teardown while the peer still talks aborted a rank once in CI ("terminate called
        # without an active exception", a joinable gloo thread destroyed; pytorch#28126)
        dist.barrier()
    finally:
        dist.destroy_process_group()
    np.savez(
        out, **{f"grad_{k}": v for k, v in grads.items()}, **{f"param_{k}": v for k, v in params.items()}
    )
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # results saved: no interpreter teardown racing gloo's threads


if __name__ == "__main__":
    os.environ.setdefault("GLOO_SOCKET_IFNAME", "lo")
    main(int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
