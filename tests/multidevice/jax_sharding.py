"""Operators on several JAX devices: inside ``shard_map`` and under ``jit`` with sharded inputs.

Runs in its own process with 4 virtual CPU devices (``tests/operators/test_jax_multidevice.py``
starts it; ``python -m pytest tests/multidevice/jax_sharding.py`` runs it directly).
Every result is compared with the same computation on one device (or a NumPy reference);
the partitioning claims are checked on the compiled HLO.
"""

import os
import re
import sys

# before JAX is imported anywhere in this process
if "jax" not in sys.modules:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    ).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from _operator_cases import affine, affine_ref, axpy, cube, mv, mv_ref, poly, poly_ref, split, split_ref  # noqa: E402
from _partition_cases import axpy_p  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

import tiarray as ta  # noqa: E402
from tiarray._internal import ti  # noqa: E402  (the backend's language)

jax.config.update("jax_enable_x64", True)
nd = ti.types.ndarray
rng = np.random.default_rng(7)


@pytest.fixture(scope="module", autouse=True)
def _four_devices():
    assert len(jax.devices()) == 4, (
        "these tests need 4 JAX devices: XLA_FLAGS=--xla_force_host_platform_device_count=4 must be set "
        f"before JAX is imported; got {jax.devices()}"
    )


def _mesh(shape=(4,), names=("d",), explicit=False):
    t = AxisType.Explicit if explicit else AxisType.Auto
    return jax.make_mesh(shape, names, axis_types=(t,) * len(names))


def _put(x, mesh, spec):
    return jax.device_put(x, NamedSharding(mesh, spec))


def _hlo(f, *args):
    return f.lower(*args).compile().as_text()


def _custom_calls(txt, target):
    return [ln for ln in txt.splitlines() if f'custom_call_target="{target}"' in ln]


def _f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# --------------------------------------------------------------------- operators with rules


@ti.kernel
def _rowdot_k(x: nd(ndim=2), w: nd(ndim=1), out: nd(ndim=1)):
    # one loop over (b, k), not an inner loop: quadrants' autodiff refuses a non-static
    # range inside a loop ("Cannot use non static range in Backwards mode")
    for b, k in ti.ndrange(x.shape[0], x.shape[1]):
        out[b] += x[b, k] * w[k]


# out[b] = sum_k x[b, k] w[k]: 'b' is a map factor, 'k' a contraction; Taichi autodiff
rowdot = ta.Operator(
    "md_rowdot",
    kernel=_rowdot_k,
    outs=lambda x, w: ta.ShapeDtype((x.shape[0],), x.dtype),
    partition="b k, k -> b",
)


@ti.kernel
def _matmul_k(x: nd(ndim=2), w: nd(ndim=2), out: nd(ndim=2)):
    for b, m in out:
        for k in range(x.shape[1]):
            out[b, m] += x[b, k] * w[k, m]


matmul = ta.Operator(
    "md_matmul",
    kernel=_matmul_k,
    outs=lambda x, w: ta.ShapeDtype((x.shape[0], w.shape[1]), x.dtype),
    partition="b k, k m -> b m",
)


@ti.kernel
def _scale_rows_k(x: nd(ndim=3), s: nd(ndim=1), out: nd(ndim=3)):
    for I in ti.grouped(x):
        out[I] = x[I] * s[I[2]]


# '...' covers the leading axes
scale_last = ta.Operator(
    "md_scale_last",
    kernel=_scale_rows_k,
    outs=lambda x, s: ta.ShapeDtype(x.shape, x.dtype),
    partition="... c, c -> ... c",
)


@ti.kernel
def _tile_k(x: nd(ndim=1), out: nd(ndim=1)):
    n = x.shape[0]
    for i in out:
        out[i] = x[i % n]


# a wrong rule: the output size is not the input's (outs uses 'reps')
tile_bad = ta.Operator(
    "md_tile_bad",
    kernel=_tile_k,
    outs=lambda x, reps: ta.ShapeDtype((x.shape[0] * reps,), x.dtype),
    partition="i -> i",
)


# --------------------------------------------------------------------- shard_map


def test_shard_map_runs_every_kind_of_operator_on_local_shards():
    mesh = _mesh()
    x, y = _f32(16), _f32(16)
    xs, ys = _put(x, mesh, P("d")), _put(y, mesh, P("d"))

    def body(x, y):
        a, b = split(x)
        return axpy(2.0, x, y), a, b, affine(x, mode="shift"), poly(0.5, x, y), cube(x)

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d")))
    out = f(xs, ys)
    ref = (axpy(2.0, x, y), *split_ref(x), affine_ref(x, "shift"), poly_ref(0.5, x, y), x**3)
    for o, r in zip(out, ref):
        assert o.sharding.spec == P("d")
        np.testing.assert_allclose(np.asarray(o), r, rtol=1e-5, atol=1e-6)
    # each device's custom call saw a local shard of 4 elements
    calls = _custom_calls(_hlo(f, xs, ys), "tiarray_t_axpy")
    assert calls and all("f32[4]" in c and "f32[16]" not in c for c in calls)


def test_shard_map_local_results_differ_per_device():
    # a kernel that depends on the local length shows that each device ran on its shard
    mesh = _mesh()
    x = np.arange(16, dtype=np.float32)
    f = jax.jit(
        jax.shard_map(lambda x: mv(x.reshape(2, 2), x[:2]), mesh=mesh, in_specs=P("d"), out_specs=P("d"))
    )
    out = np.asarray(f(_put(x, mesh, P("d"))))
    ref = np.concatenate([mv_ref(x[4 * k : 4 * k + 4].reshape(2, 2), x[4 * k : 4 * k + 2]) for k in range(4)])
    np.testing.assert_allclose(out, ref, rtol=1e-6)


def test_shard_map_gradients_equal_the_single_device_gradients():
    # poly: Taichi autodiff; mv: transpose rule; cube: jvp rule. 'y' and 'A' are replicated
    # inputs: their gradient is the sum over devices (the pcast to varying transposes to psum)
    mesh = _mesh()
    x = rng.standard_normal(16)
    y = rng.standard_normal(16)
    A = rng.standard_normal((4, 4))

    def loss_local(x, y, A):
        # x: a shard of 4, y: a shard of 4, A replicated
        return (poly(0.5, x, y) * cube(x)).sum() + (mv(A, x) ** 2).sum()

    def loss_sharded(x, y, A):
        f = jax.shard_map(
            lambda x, y, A: jax.lax.psum(loss_local(x, y, A), "d"),
            mesh=mesh,
            in_specs=(P("d"), P("d"), P()),
            out_specs=P(),
        )
        return f(x, y, A)

    def loss_single(x, y, A):
        return sum(loss_local(x[4 * k : 4 * k + 4], y[4 * k : 4 * k + 4], A) for k in range(4))

    gs = jax.jit(jax.grad(loss_sharded, argnums=(0, 1, 2)))(
        _put(x, mesh, P("d")), _put(y, mesh, P("d")), _put(A, mesh, P())
    )
    g1 = jax.jit(jax.grad(loss_single, argnums=(0, 1, 2)))(x, y, A)
    for a, b in zip(gs, g1):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-10)


def test_shard_map_output_varies_over_the_manual_axes():
    mesh = _mesh()
    seen = {}

    def body(x, y):
        out = axpy(1.0, x, y)  # x varies over 'd', y does not
        seen["vma"] = jax.typeof(out).manual_axis_type.varying
        return jax.lax.psum(out, "d")

    x, y = _f32(16), _f32(4)
    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("d"), P()), out_specs=P()))
    out = f(_put(x, mesh, P("d")), _put(y, mesh, P()))
    assert seen["vma"] == frozenset({"d"})
    np.testing.assert_allclose(np.asarray(out), x.reshape(4, 4).sum(0) + 4 * y, rtol=1e-5)


def test_operator_with_rule_inside_shard_map_is_lowered_directly():
    mesh = _mesh()
    x, y = _f32(16), _f32(16)
    f = jax.jit(
        jax.shard_map(lambda x, y: axpy_p(3.0, x, y), mesh=mesh, in_specs=(P("d"), P("d")), out_specs=P("d"))
    )
    args = _put(x, mesh, P("d")), _put(y, mesh, P("d"))
    np.testing.assert_allclose(np.asarray(f(*args)), 3 * x + y, rtol=1e-6)
    txt = _hlo(f, *args)
    assert "CustomSPMDPartitioning" not in txt and _custom_calls(txt, "tiarray_md_axpy")


# --------------------------------------------------------------------- jit with sharded inputs


def test_without_rule_xla_gathers_the_inputs_and_results_are_right():
    mesh = _mesh()
    x, y = _f32(16), _f32(16)
    f = jax.jit(lambda x, y: axpy(2.0, x, y))
    args = _put(x, mesh, P("d")), _put(y, mesh, P("d"))
    np.testing.assert_allclose(np.asarray(f(*args)), 2 * x + y, rtol=1e-6)
    assert "all-gather" in _hlo(f, *args)  # documented: no rule, no partitioning


@pytest.mark.parametrize("explicit", [False, True], ids=["auto", "explicit"])
def test_rule_partitions_without_gathering(explicit):
    mesh = _mesh(explicit=explicit)
    x, y = _f32(16), _f32(16)
    f = jax.jit(lambda x, y: axpy_p(2.0, x, y))
    args = _put(x, mesh, P("d")), _put(y, mesh, P("d"))
    out = f(*args)
    single = jax.jit(lambda x, y: axpy_p(2.0, x, y))(x, y)
    np.testing.assert_array_equal(np.asarray(out), np.asarray(single))
    assert out.sharding.spec == P("d")
    txt = _hlo(f, *args)
    assert "all-gather" not in txt and "all-reduce" not in txt
    calls = _custom_calls(txt, "tiarray_md_axpy")
    assert len(calls) == 1 and "f32[4]" in calls[0] and "f32[16]" not in calls[0]


@pytest.mark.parametrize("explicit", [False, True], ids=["auto", "explicit"])
def test_shared_input_stays_whole_and_gradient_is_summed(explicit):
    # rowdot: x (b, k) split over b, w (k,) replicated; the Taichi-autodiff gradient of w is
    # a sum over b: each device computes its part, one all-reduce adds them
    mesh = _mesh(explicit=explicit)
    x, w = rng.standard_normal((8, 5)), rng.standard_normal(5)
    xs, ws = _put(x, mesh, P("d", None)), _put(w, mesh, P())

    def loss(x, w):
        return (rowdot(x, w) ** 2).sum()

    f = jax.jit(rowdot)
    out = f(xs, ws)
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-12)
    assert out.sharding.spec == P("d")
    txt = _hlo(f, xs, ws)
    assert "all-gather" not in txt and "all-reduce" not in txt
    g = jax.jit(jax.grad(loss, argnums=(0, 1)))
    gx, gw = g(xs, ws)
    g1x, g1w = jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w)
    np.testing.assert_allclose(np.asarray(gx), np.asarray(g1x), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gw), np.asarray(g1w), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(gw), 2 * (x @ w) @ x, rtol=1e-12)
    gtxt = _hlo(g, xs, ws)
    assert "all-gather" not in gtxt
    vjp_calls = _custom_calls(gtxt, "tiarray_md_rowdot")
    # forward and reverse kernels ran on the local rows (2 of 8)
    assert vjp_calls and all("f64[2,5]" in c and "f64[8,5]" not in c for c in vjp_calls)


def test_two_axis_mesh_splits_two_factors():
    mesh = _mesh((2, 2), ("b", "m"))
    x, w = _f32(6, 8), _f32(8, 4)
    xs, ws = _put(x, mesh, P("b", None)), _put(w, mesh, P(None, "m"))
    f = jax.jit(matmul)
    out = f(xs, ws)
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-5, atol=1e-5)
    assert out.sharding.spec == P("b", "m")
    txt = _hlo(f, xs, ws)
    assert "all-gather" not in txt
    (call,) = _custom_calls(txt, "tiarray_md_matmul")
    assert "f32[3,8]" in call and "f32[8,2]" in call and "f32[3,2]" in call


def test_split_contraction_factor_is_gathered_not_split():
    # k is not a map factor: inputs sharded along k are gathered, results still right
    mesh = _mesh()
    x, w = _f32(4, 8), _f32(8, 4)
    xs, ws = _put(x, mesh, P(None, "d")), _put(w, mesh, P("d", None))
    out = jax.jit(matmul)(xs, ws)
    np.testing.assert_allclose(np.asarray(out), x @ w, rtol=1e-5, atol=1e-5)


def test_uneven_sizes_fall_back_to_replication():
    # 10 rows on 4 devices: the factor is not split (no padded shard reaches the kernel)
    mesh = _mesh()
    x, w = _f32(10, 3), _f32(3)
    xs = jax.device_put(x, NamedSharding(mesh, P()))
    f = jax.jit(rowdot, in_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P())))
    np.testing.assert_allclose(np.asarray(f(xs, w)), x @ w, rtol=1e-5)
    f2 = jax.jit(lambda x, w: rowdot(jax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("d"))), w))
    np.testing.assert_allclose(np.asarray(f2(x, w)), x @ w, rtol=1e-5)
    (call,) = _custom_calls(_hlo(f2, x, w), "tiarray_md_rowdot")
    assert "f32[10,3]" in call


def test_ellipsis_axes_are_map_axes():
    mesh = _mesh((2, 2), ("a", "b"))
    x, s = _f32(4, 6, 8), _f32(8)
    xs = _put(x, mesh, P("a", "b", None))
    f = jax.jit(scale_last)
    out = f(xs, s)
    np.testing.assert_allclose(np.asarray(out), x * s, rtol=1e-6)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, P("a", "b", None)), 3)
    (call,) = _custom_calls(_hlo(f, xs, s), "tiarray_md_scale_last")
    assert "f32[2,3,8]" in call


def test_rule_on_one_device_is_the_plain_custom_call():
    x, y = _f32(8), _f32(8)
    f = jax.jit(lambda x, y: axpy_p(2.0, x, y))
    np.testing.assert_allclose(np.asarray(f(x, y)), 2 * x + y, rtol=1e-6)
    txt = _hlo(f, x, y)
    assert "CustomSPMDPartitioning" not in txt and _custom_calls(txt, "tiarray_md_axpy")


def test_partitioned_call_inside_scan():
    mesh = _mesh()
    x, y = _f32(16), _f32(16)

    def run(x, y):
        def step(c, _):
            return axpy_p(0.5, c, y), None

        return jax.lax.scan(step, x, None, length=5)[0]

    args = _put(x, mesh, P("d")), _put(y, mesh, P("d"))
    f = jax.jit(run)
    single = jax.jit(run)(x, y)
    np.testing.assert_array_equal(np.asarray(f(*args)), np.asarray(single))
    assert "all-gather" not in _hlo(f, *args)


def test_rule_that_contradicts_outs_raises_naming_the_operator():
    mesh = _mesh()
    x = _put(_f32(8), mesh, P("d"))
    with pytest.raises(Exception, match=r"md_tile_bad.*factor 'i' size"):
        jax.jit(lambda x: tile_bad(x, reps=2))(x)


@ti.kernel
def _neg_k(x: nd(), out: nd()):
    for I in ti.grouped(x):
        out[I] = -x[I]


neg = ta.Operator("md_neg", kernel=_neg_k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype), partition="i -> i")


def test_rule_that_does_not_fit_the_ranks_raises():
    mesh = _mesh()
    x = _put(_f32(8, 2), mesh, P("d"))
    with pytest.raises(ValueError, match=re.escape("md_neg: the partition rule 'i -> i' gives input 0")):
        jax.jit(neg)(x)
    np.testing.assert_array_equal(np.asarray(jax.jit(neg)(x.reshape(-1))), -np.asarray(x).reshape(-1))


def test_eager_call_on_sharded_arrays_is_partitioned_too():
    mesh = _mesh()
    x, y = _f32(16), _f32(16)
    out = axpy_p(2.0, _put(x, mesh, P("d")), _put(y, mesh, P("d")))
    np.testing.assert_allclose(np.asarray(out), 2 * x + y, rtol=1e-6)
    assert out.sharding.is_equivalent_to(NamedSharding(mesh, P("d")), 1)


def test_vmap_of_a_partitioned_operator():
    # no batch rule: vmap runs the operator once per batch element (lax.map); each call is
    # still partitioned over the rows
    mesh = _mesh()
    x, w = rng.standard_normal((3, 8, 5)), rng.standard_normal((3, 5))
    xs = _put(x, mesh, P(None, "d", None))
    f = jax.jit(jax.vmap(rowdot))
    np.testing.assert_allclose(np.asarray(f(xs, w)), np.einsum("abk,ak->ab", x, w), rtol=1e-12)
    assert "all-gather" not in _hlo(f, xs, w)
