"""Train a network with a sparse layer by gradient descent, in JAX (optax) and PyTorch.

The hidden layer is a fixed random sparse connectivity (10 % of the 512 x 1024 pairs)
with one trainable weight per synapse, applied with ``tiarray.operators.csrmv`` (batched
with ``jax.vmap``, which tiarray turns into one ``csrmm`` launch). A teacher network of
the same shape generates the targets; the student starts from other weights and learns
them. Gradients flow through the sparse product's transpose rule in both frameworks.

    python examples/train_sparse_layer.py            # 300 steps in each framework
    python examples/train_sparse_layer.py --quick    # 60 steps (for CI)
"""

import argparse
import sys
import time

import tiarray.operators as top  # before taichi: keeps Taichi's banner quiet

# isort: split
import numpy as np

N_IN, N_HID, N_OUT, PROB, BATCH = 1024, 512, 8, 0.1, 64


def problem(seed: int = 0):
    """Connectivity, teacher weights, initial student weights and a data sampler."""
    rng = np.random.default_rng(seed)
    indices, indptr = top.fixed_prob_csr(N_HID, N_IN, PROB, seed=7)
    nnz = int(indptr[-1])
    scale = 1.0 / np.sqrt(PROB * N_IN)
    teacher = {
        "w": (rng.standard_normal(nnz) * scale).astype(np.float32),
        "readout": (rng.standard_normal((N_HID, N_OUT)) / np.sqrt(N_HID)).astype(np.float32),
    }
    student = {
        "w": (rng.standard_normal(nnz) * scale).astype(np.float32),
        "readout": teacher["readout"] + 0.3 * rng.standard_normal((N_HID, N_OUT)).astype(np.float32),
    }

    def batch(step):
        r = np.random.default_rng(1000 + step)
        return r.standard_normal((BATCH, N_IN)).astype(np.float32)

    return indices, indptr, teacher, student, batch


def train_jax(steps: int) -> tuple[float, float, float]:
    import jax
    import jax.numpy as jnp
    import optax

    indices, indptr, teacher, student, batch = problem()
    ind, ptr = jnp.asarray(indices), jnp.asarray(indptr)

    def forward(params, x):
        # vmap over the batch: one csrmm launch computing A @ x_b for every sample
        h = jax.vmap(lambda v: top.csrmv(params["w"], ind, ptr, v, shape=(N_HID, N_IN)))(x)
        return jnp.tanh(h) @ params["readout"]

    def loss_fn(params, x, y):
        return jnp.mean((forward(params, x) - y) ** 2)

    teacher = jax.tree.map(jnp.asarray, teacher)
    params = jax.tree.map(jnp.asarray, student)
    opt = optax.adam(3e-3)
    state = opt.init(params)

    @jax.jit
    def step(params, state, x):
        y = forward(teacher, x)
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, state = opt.update(grads, state)
        return optax.apply_updates(params, updates), state, loss

    x0 = jnp.asarray(batch(-1))
    first = float(loss_fn(params, x0, forward(teacher, x0)))
    t0 = time.perf_counter()
    for k in range(steps):
        params, state, _ = step(params, state, jnp.asarray(batch(k)))
    jax.block_until_ready(params)
    elapsed = time.perf_counter() - t0
    last = float(loss_fn(params, x0, forward(teacher, x0)))
    return first, last, elapsed


def train_torch(steps: int) -> tuple[float, float, float]:
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    indices, indptr, teacher, student, batch = problem()
    ind, ptr = torch.from_numpy(indices), torch.from_numpy(indptr)

    class SparseNet(torch.nn.Module):
        def __init__(self, p):
            super().__init__()
            self.w = torch.nn.Parameter(torch.from_numpy(p["w"].copy()))
            self.readout = torch.nn.Parameter(torch.from_numpy(p["readout"].copy()))

        def forward(self, x):
            # A @ X for the whole batch: csrmm on the transposed batch (one launch)
            h = top.csrmm(self.w, ind, ptr, x.T.contiguous(), shape=(N_HID, N_IN)).T
            return torch.tanh(h) @ self.readout

    net, ref = SparseNet(student), SparseNet(teacher).requires_grad_(False)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    x0 = torch.from_numpy(batch(-1))
    with torch.no_grad():
        first = float(torch.mean((net(x0) - ref(x0)) ** 2))
    t0 = time.perf_counter()
    for k in range(steps):
        x = torch.from_numpy(batch(k))
        loss = torch.mean((net(x) - ref(x)) ** 2)
        opt.zero_grad()
        loss.backward()
        opt.step()
    elapsed = time.perf_counter() - t0
    with torch.no_grad():
        last = float(torch.mean((net(x0) - ref(x0)) ** 2))
    return first, last, elapsed


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="60 steps (for CI)")
    parser.add_argument("--framework", choices=("both", "jax", "torch"), default="both")
    args = parser.parse_args(argv)
    steps = 60 if args.quick else args.steps
    nnz = int(top.fixed_prob_csr(N_HID, N_IN, PROB, seed=7)[1][-1])
    print(
        f"sparse layer {N_IN} -> {N_HID}, {nnz} trainable synapses ({PROB:.0%}), batch {BATCH}, {steps} steps"
    )
    ok = True
    runs = {"jax": train_jax, "torch": train_torch}
    for name in ("jax", "torch") if args.framework == "both" else (args.framework,):
        first, last, elapsed = runs[name](steps)
        print(
            f"{name:5s}: held-out loss {first:.4f} -> {last:.4f} "
            f"({first / last:.1f}x lower) in {elapsed:.1f} s ({1e3 * elapsed / steps:.1f} ms/step)"
        )
        ok &= last < 0.5 * first
    if not ok:
        print("the loss did not go down by half", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
