"""Operator(aliases={output: input}): the output starts with the input's values.

Every framework returns a new array holding the input's values where the kernel wrote
nothing (checked against a NumPy reference) and never changes the input; under
``jax.jit`` a donated input's buffer becomes the output (no copy).
"""

import numpy as np
import pytest
from _operator_cases import bump, bump_ref

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants under TIARRAY_BACKEND

rng = np.random.default_rng(7)
nd = ti.types.ndarray


def _case(n=1000, k=17, dtype=np.float32):
    w = rng.standard_normal(n).astype(dtype)
    idx = rng.choice(n, size=k, replace=False).astype(np.int32)
    v = rng.standard_normal(k).astype(dtype)
    return w, idx, v


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_numpy_output_starts_from_the_input(dtype):
    w, idx, v = _case(dtype=dtype)
    w0 = w.copy()
    out = bump(w, idx, v)
    np.testing.assert_array_equal(out, bump_ref(w0, idx, v))  # one add per written element: exact
    np.testing.assert_array_equal(w, w0)  # the input is not changed
    assert not np.shares_memory(out, w)
    assert out.flags.c_contiguous and out.flags.writeable


def test_numpy_non_contiguous_and_readonly_input():
    base, idx, v = _case(n=2000)
    w = base[::2]
    w.flags.writeable = False
    out = bump(w, idx % 1000, v)
    np.testing.assert_array_equal(out, bump_ref(np.array(w), idx % 1000, v))
    np.testing.assert_array_equal(base[::2], w)


def test_tiarray_output_starts_from_the_input():
    w, idx, v = _case()
    out = bump(ta.asarray(w.copy()), ta.asarray(idx), ta.asarray(v))
    assert isinstance(out, ta.TiArray)
    np.testing.assert_array_equal(np.from_dlpack(out), bump_ref(w, idx, v))


@ti.kernel
def _k2(a: nd(ndim=1), b: nd(ndim=1), out: nd(ndim=1)):
    for i in a:
        out[i] += b[i]


def test_aliases_errors():
    with pytest.raises(TypeError, match=r"aliases.*'nope'.*not a kernel parameter"):
        ta.Operator(
            "t_al1", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases={"nope": "a"}
        )
    with pytest.raises(TypeError, match="aliases.*must be a dict"):
        ta.Operator("t_al2", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases=["a"])
    with pytest.raises(TypeError, match="'aliases' and 'partition'"):
        ta.Operator(
            "t_al3", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases={"out": "a"},
            partition="i, i -> i",
        )  # fmt: skip
    # an output of another shape than its input
    op = ta.Operator(
        "t_al4", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(b.shape, a.dtype), aliases={"out": "a"}
    )
    with pytest.raises(TypeError, match=r"t_al4: output 'out' starts from input 'a'.*\(4,\) float32.*\(5,\)"):
        op(np.zeros(4, np.float32), np.zeros(5, np.float32))
    # an input named as the output
    op = ta.Operator(
        "t_al5", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases={"b": "a"}
    )
    with pytest.raises(TypeError, match="t_al5: 'aliases' maps 'b' to 'a', but 'b' is not an output"):
        op(np.zeros(4, np.float32), np.zeros(4, np.float32))
    ok = ta.Operator(
        "t_al6", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases={"out": "a"}
    )
    a, b = rng.standard_normal(4).astype(np.float32), rng.standard_normal(4).astype(np.float32)
    np.testing.assert_array_equal(ok(a, b), a + b)  # out += b on a start of a


@pytest.mark.jax
def test_jax_eager_jit_and_the_input_kept():
    import jax
    import jax.numpy as jnp

    w, idx, v = _case()
    ref = bump_ref(w, idx, v)
    wj = jnp.asarray(w)
    np.testing.assert_array_equal(np.asarray(bump(wj, jnp.asarray(idx), jnp.asarray(v))), ref)
    f = jax.jit(lambda w, i, v: bump(w, i, v))
    np.testing.assert_array_equal(np.asarray(f(wj, idx, v)), ref)
    # the input stays alive and unchanged (XLA copies it into the output first)
    np.testing.assert_array_equal(np.asarray(wj), w)
    # the input used after the call in the same computation: XLA must copy
    g = jax.jit(lambda w, i, v: (bump(w, i, v), w * 2))
    o, w2 = g(wj, idx, v)
    np.testing.assert_array_equal(np.asarray(o), ref)
    np.testing.assert_array_equal(np.asarray(w2), w * 2)


@pytest.mark.jax
def test_jax_donated_input_is_the_output_buffer():
    import jax
    import jax.numpy as jnp

    w, idx, v = _case(n=1 << 16)
    wj = jnp.asarray(w)
    ptr = wj.unsafe_buffer_pointer()
    f = jax.jit(lambda w, i, v: bump(w, i, v), donate_argnums=0)
    out = f(wj, jnp.asarray(idx), jnp.asarray(v))
    np.testing.assert_array_equal(np.asarray(out), bump_ref(w, idx, v))
    assert out.unsafe_buffer_pointer() == ptr  # updated in place: no copy of the 256 KB
    assert wj.is_deleted()


@pytest.mark.jax
def test_jax_scan_carry_and_jvp_and_vmap():
    import jax
    import jax.numpy as jnp

    w, idx, _ = _case(n=300, k=9)
    vs = rng.standard_normal((5, 9)).astype(np.float32)
    ref = w.copy()
    for v in vs:
        ref = bump_ref(ref, idx, v)
    out, _ = jax.jit(lambda w: jax.lax.scan(lambda c, v: (bump(c, idx, v), None), w, vs))(jnp.asarray(w))
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-6, atol=0)
    # forward mode through the jvp rule: d out = tw + scatter of tv
    tw = rng.standard_normal(300).astype(np.float32)
    tv = rng.standard_normal(9).astype(np.float32)
    p, t = jax.jvp(lambda w, v: bump(w, idx, v), (jnp.asarray(w), jnp.asarray(vs[0])), (tw, tv))
    np.testing.assert_array_equal(np.asarray(p), bump_ref(w, idx, vs[0]))
    np.testing.assert_allclose(np.asarray(t), bump_ref(tw, idx, tv), rtol=1e-6)
    # vmap over v: one output per batch element, each from w
    b = jax.vmap(lambda v: bump(jnp.asarray(w), idx, v))(jnp.asarray(vs))
    for k in range(5):
        np.testing.assert_array_equal(np.asarray(b[k]), bump_ref(w, idx, vs[k]))


@pytest.mark.jax
def test_jax_taichi_autodiff_is_refused():
    import jax
    import jax.numpy as jnp

    op = ta.Operator(
        "t_al_grad", kernel=_k2, outs=lambda a, b: ta.ShapeDtype(a.shape, a.dtype), aliases={"out": "a"}
    )
    a = jnp.ones(4, jnp.float32)
    with pytest.raises(TypeError, match="t_al_grad: differentiation needs jvp/transpose rules.*'aliases'"):
        jax.grad(lambda b: op(a, b).sum())(a)


@pytest.mark.torch
def test_torch_output_starts_from_the_input():
    import torch

    w, idx, v = _case()
    wt = torch.as_tensor(w.copy())
    out = bump(wt, torch.as_tensor(idx), torch.as_tensor(v))
    assert isinstance(out, torch.Tensor)
    np.testing.assert_array_equal(out.cpu().numpy(), bump_ref(w, idx, v))
    np.testing.assert_array_equal(wt.cpu().numpy(), w)
    assert out.data_ptr() != wt.data_ptr()
    # a non-contiguous input, and one that requires grad (the call itself needs no grad of it)
    base = torch.as_tensor(np.repeat(w, 2))
    out = bump(base[::2], torch.as_tensor(idx), torch.as_tensor(v))
    np.testing.assert_array_equal(out.cpu().numpy(), bump_ref(w, idx, v))
    out = bump(torch.as_tensor(w.copy()).requires_grad_(), torch.as_tensor(idx), torch.as_tensor(v))
    np.testing.assert_array_equal(out.detach().cpu().numpy(), bump_ref(w, idx, v))


@pytest.mark.torch
def test_torch_compile_output_starts_from_the_input():
    import torch

    w, idx, v = _case(n=64, k=3)
    f = torch.compile(lambda w, i, v: bump(w, i, v) * 1.0, fullgraph=True)
    out = f(torch.as_tensor(w), torch.as_tensor(idx), torch.as_tensor(v))
    np.testing.assert_array_equal(out.cpu().numpy(), bump_ref(w, idx, v))
