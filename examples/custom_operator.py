"""Write a Taichi kernel once, call it from NumPy, PyTorch and JAX (jit, vmap, grad).

Two operators:

* ``gelu_tanh``: an element-wise nonlinearity. It has no hand-written rules, so its
  gradients come from Taichi's own automatic differentiation (the kernel's reverse-mode
  variant).
* ``segment_sum``: a scatter-add ``out[seg[i]] += x[i]``, linear in ``x``. A
  ``transpose`` rule (a gather, itself an Operator) gives its gradient in every
  framework, and a ``batch`` rule makes ``vmap`` a single launch.

    python examples/custom_operator.py
"""

import argparse
import sys

import tiarray as ta  # before taichi: it keeps Taichi's import banner quiet

# isort: split
import numpy as np

if ta.backend() == "quadrants":  # TIARRAY_BACKEND=quadrants: Genesis' fork, the same names
    import quadrants as ti
else:
    import taichi as ti

# ----------------------------------------------------------------------------- kernels


@ti.kernel
def _gelu_tanh(x: ti.types.ndarray(), out: ti.types.ndarray()):
    for I in ti.grouped(x):
        v = x[I]
        out[I] = 0.5 * v * (1.0 + ti.tanh(0.7978845608 * (v + 0.044715 * v * v * v)))


gelu_tanh = ta.Operator("gelu_tanh", kernel=_gelu_tanh, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))


@ti.kernel
def _segment_sum(x: ti.types.ndarray(ndim=2), seg: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=2)):
    # x: (batch, n), seg: (n,) segment of each column, out: (batch, n_segments)
    for b, i in x:
        out[b, seg[i]] += x[b, i]


@ti.kernel
def _gather(y: ti.types.ndarray(ndim=2), seg: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=2)):
    for b, i in out:
        out[b, i] = y[b, seg[i]]


gather = ta.Operator(
    "gather_segments",
    kernel=_gather,
    outs=lambda y, seg, n_segments: ta.ShapeDtype((y.shape[0], seg.shape[0]), y.dtype),
)


def _segment_sum_transpose(cotangents, primals, n_segments):
    (ct,) = cotangents  # (batch, n_segments)
    x, seg = primals
    return (gather(ct, seg, n_segments=n_segments), None)


def _segment_sum_batch(args, axes, n_segments):
    # vmap over a leading axis of x: fold it into the kernel's batch axis (one launch)
    x, seg = args
    ax, seg_ax = axes
    if seg_ax is not None:
        raise NotImplementedError("segment_sum: the segment ids cannot be batched")
    x = x if ax == 0 else x.swapaxes(ax, 0) if hasattr(x, "swapaxes") else x.transpose(ax, 0)
    v, b, n = x.shape
    out = segment_sum(x.reshape(v * b, n), seg, n_segments=n_segments)
    return out.reshape(v, b, n_segments), 0


segment_sum = ta.Operator(
    "segment_sum",
    kernel=_segment_sum,
    outs=lambda x, seg, n_segments: ta.ShapeDtype((x.shape[0], n_segments), x.dtype),
    transpose=_segment_sum_transpose,
    linear=("x",),
    nondiff=("seg",),
    batch=_segment_sum_batch,
)


def reference_gelu(x):
    return 0.5 * x * (1 + np.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def reference_segment_sum(x, seg, n_segments):
    out = np.zeros((x.shape[0], n_segments), x.dtype)
    for i, s in enumerate(seg):
        out[:, s] += x[:, i]
    return out


# ----------------------------------------------------------------------------- tour


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="accepted for CI symmetry; the script is quick")
    parser.parse_args(argv)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 10)).astype(np.float32)
    seg = rng.integers(0, 3, size=10).astype(np.int32)

    # NumPy in, NumPy out
    y = gelu_tanh(x)
    s = segment_sum(x, seg, n_segments=3)
    print("numpy:", type(y).__name__, "max error", float(np.abs(y - reference_gelu(x)).max()))
    assert np.allclose(s, reference_segment_sum(x, seg, 3), atol=1e-5)

    # PyTorch: autograd through Taichi autodiff and through the transpose rule
    import torch

    xt = torch.tensor(x, requires_grad=True)
    loss = segment_sum(gelu_tanh(xt), torch.from_numpy(seg), n_segments=3).square().sum()
    loss.backward()
    xt64 = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    ok = torch.autograd.gradcheck(lambda v: gelu_tanh(v), (xt64,))
    print("torch: loss", round(loss.item(), 4), "grad shape", tuple(xt.grad.shape), "gradcheck", ok)

    # JAX: jit, vmap (one launch thanks to the batch rule), grad
    import jax
    import jax.numpy as jnp

    xj, segj = jnp.asarray(x), jnp.asarray(seg)

    @jax.jit
    def f(v):
        return jnp.sum(segment_sum(gelu_tanh(v), segj, n_segments=3) ** 2)

    g = jax.grad(f)(xj)
    batched = jax.vmap(lambda v: segment_sum(v, segj, n_segments=3))(jnp.stack([xj, 2 * xj]))
    print(
        "jax: loss",
        round(float(f(xj)), 4),
        "grad matches torch",
        bool(np.allclose(g, xt.grad.numpy(), atol=1e-4)),
    )
    print(
        "jax: vmap shape",
        batched.shape,
        "equals two calls",
        bool(np.allclose(batched[1], 2 * batched[0], atol=1e-5)),
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
