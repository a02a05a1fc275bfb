"""CSR products split by rows or columns over 4 JAX devices (``tiarray.operators.distributed``).

Runs in its own process with 4 virtual CPU devices (``tests/operators/test_jax_multidevice.py``
starts it). The products are the library's ``event_csrmv`` and ``csrmv``; every result is
compared with the dense NumPy product and with the same operator on one device.
"""

import os
import re
import sys

if "jax" not in sys.modules:
    os.environ["XLA_FLAGS"] = (
        os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4"
    ).strip()
    os.environ.setdefault("JAX_PLATFORMS", "cpu")
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from _row_csr import dense, random_csr  # noqa: E402
from jax.sharding import AxisType, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402
from tiarray.operators.distributed import (  # noqa: E402
    block_csrmv,
    partition_csr_columns,
    partition_csr_rows,
    sharded_csrmv,
)
from tiarray.operators.sparse import csrmv, event_csrmv  # noqa: E402

rng = np.random.default_rng(11)


@pytest.fixture(scope="module", autouse=True)
def _four_devices():
    assert len(jax.devices()) == 4, f"these tests need 4 JAX devices (XLA_FLAGS), got {jax.devices()}"


def _mesh(explicit=False):
    t = AxisType.Explicit if explicit else AxisType.Auto
    return jax.make_mesh((4,), ("d",), axis_types=(t,))


OPS = {"csrmv": csrmv, "event_csrmv": event_csrmv, "default": None}
PARTITION = {"rows": partition_csr_rows, "columns": partition_csr_columns}


@pytest.mark.parametrize("split", ["rows", "columns"])
@pytest.mark.parametrize("op", ["csrmv", "event_csrmv"])
@pytest.mark.parametrize("explicit", [False, True], ids=["auto", "explicit"])
@pytest.mark.parametrize("homogeneous", [False, True], ids=["weights", "homogeneous"])
@pytest.mark.parametrize("m, n", [(40, 24), (37, 26), (3, 6)], ids=["even", "uneven", "fewer-than-devices"])
def test_matvec_equals_the_dense_product_and_the_single_device_run(m, n, homogeneous, explicit, op, split):
    # transpose=False: row blocks compute their rows from the whole vector; column blocks
    # give partial sums (psum). Float values: event_csrmv takes them as event values.
    op = OPS[op]
    mesh = _mesh(explicit)
    w, i, p = random_csr(m, n, 0.3, rng, homogeneous=homogeneous)
    A = dense(w, i, p, (m, n))
    blocks = PARTITION[split](w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    x = rng.standard_normal(n).astype(np.float32)
    f = jax.jit(lambda x: sharded_csrmv(blocks, x, mesh=mesh, axis_name="d", op=op))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), A @ x, rtol=1e-5, atol=1e-5)
    single = jax.jit(lambda x: op(jnp.asarray(w), i, p, x, shape=(m, n)))(x)
    np.testing.assert_allclose(np.asarray(y), np.asarray(single), rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kind", ["events", "values"])
@pytest.mark.parametrize("explicit", [False, True], ids=["auto", "explicit"])
@pytest.mark.parametrize("scatter", [False, True], ids=["psum", "psum_scatter"])
@pytest.mark.parametrize("homogeneous", [False, True], ids=["weights", "homogeneous"])
@pytest.mark.parametrize("m", [40, 37], ids=["even", "uneven"])
def test_transposed_product_of_row_blocks_sums_the_partial_products(m, scatter, homogeneous, explicit, kind):
    # bool events through the default product (event_csrmv), float values through csrmv
    mesh = _mesh(explicit)
    n = 24
    w, i, p = random_csr(m, n, 0.3, rng, homogeneous=homogeneous)
    A = dense(w, i, p, (m, n))
    blocks = partition_csr_rows(w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    spikes = rng.random(m) < 0.3
    x, op, ref = (spikes, None, event_csrmv) if kind == "events" else (rng.standard_normal(m), csrmv, csrmv)
    x = x if kind == "events" else x.astype(np.float32)
    f = jax.jit(
        lambda s: sharded_csrmv(blocks, s, mesh=mesh, axis_name="d", transpose=True, scatter=scatter, op=op)
    )
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), A.T @ x, rtol=1e-5, atol=1e-5)
    assert y.sharding.is_equivalent_to(NamedSharding(mesh, P("d") if scatter else P()), 1)
    txt = f.lower(x).compile().as_text()
    assert ("reduce-scatter" in txt) == scatter and ("all-reduce" in txt) != scatter
    single = jax.jit(lambda s: ref(jnp.asarray(w), i, p, s, shape=(m, n), transpose=True))(x)
    np.testing.assert_allclose(np.asarray(y), np.asarray(single), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["events", "values"])
@pytest.mark.parametrize("explicit", [False, True], ids=["auto", "explicit"])
@pytest.mark.parametrize("homogeneous", [False, True], ids=["weights", "homogeneous"])
@pytest.mark.parametrize("n", [48, 46], ids=["even", "uneven"])
def test_transposed_product_of_column_blocks_equals_one_device_bit_for_bit(n, homogeneous, explicit, kind):
    # each device adds up its own columns over every active row, in the order one device
    # does: no reduction between devices, the same float sums
    mesh = _mesh(explicit)
    m = 40
    w, i, p = random_csr(m, n, 0.3, rng, homogeneous=homogeneous)
    A = dense(w, i, p, (m, n))
    blocks = partition_csr_columns(w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    x = rng.random(m) < 0.4 if kind == "events" else rng.standard_normal(m).astype(np.float32)
    op = event_csrmv if kind == "events" else csrmv
    f = jax.jit(lambda s: sharded_csrmv(blocks, s, mesh=mesh, axis_name="d", transpose=True, op=op))
    y = f(x)
    np.testing.assert_allclose(np.asarray(y), A.T @ x, rtol=1e-5, atol=1e-5)
    txt = f.lower(x).compile().as_text()
    assert "all-reduce" not in txt and "reduce-scatter" not in txt
    single = jax.jit(lambda s: op(jnp.asarray(w), i, p, s, shape=(m, n), transpose=True))(x)
    np.testing.assert_array_equal(np.asarray(y), np.asarray(single))


def test_matvec_of_column_blocks_can_scatter_the_sums():
    mesh = _mesh()
    m, n = 40, 30
    w, i, p = random_csr(m, n, 0.3, rng)
    A = dense(w, i, p, (m, n))
    blocks = partition_csr_columns(w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    x = rng.standard_normal(n).astype(np.float32)
    y = jax.jit(lambda x: sharded_csrmv(blocks, x, mesh=mesh, axis_name="d", scatter=True, op=csrmv))(x)
    np.testing.assert_allclose(np.asarray(y), A @ x, rtol=1e-5, atol=1e-5)
    assert y.sharding.is_equivalent_to(NamedSharding(mesh, P("d")), 1)


@pytest.mark.parametrize("split", ["rows", "columns"])
def test_network_step_inside_shard_map_equals_the_single_device_run(split):
    # N neurons split over 4 devices; rows of A are presynaptic neurons. Row blocks: the
    # local spikes go through the local rows, the partial currents are reduce-scattered.
    # Column blocks (each device holds its neurons' incoming synapses): the spikes are
    # gathered and every device adds up its own neurons' inputs.
    mesh = _mesh(explicit=True)
    N, steps = 64, 20
    w, i, p = random_csr(N, N, 0.2, rng)
    w = np.abs(w) * 0.6
    blocks = PARTITION[split](w, i, p, shape=(N, N), parts=4).shard(mesh, "d")
    drive = (rng.random((steps, N)) * 0.5).astype(np.float32)

    def current(w, i, p, spikes):
        if split == "rows":
            return block_csrmv(
                w, i, p, spikes, shape=(N, N), axis_name="d", transpose=True, reduce="psum_scatter"
            )
        return block_csrmv(
            w, i, p, spikes, shape=(N, N), axis_name="d", transpose=True, split="columns", gather=True
        )

    def run_sharded(drive):
        def body(w, i, p, drive):
            def step(c, ext):
                v, s = c
                v = 0.9 * v + current(w, i, p, s) + ext
                fired = v > 1.0
                return (jnp.where(fired, 0.0, v), fired), fired

            v0 = jnp.zeros_like(drive[0])  # varies over 'd', like the carry the step returns
            return jax.lax.scan(step, (v0, v0 > 1), drive)[1]

        return jax.shard_map(
            body, mesh=mesh, in_specs=(P("d"), P("d"), P("d"), P(None, "d")), out_specs=P(None, "d")
        )(*blocks.arrays(), drive)

    def run_single(drive):
        def step(c, ext):
            v, s = c
            v = 0.9 * v + event_csrmv(jnp.asarray(w), i, p, s, shape=(N, N), transpose=True) + ext
            fired = v > 1.0
            return (jnp.where(fired, 0.0, v), fired), fired

        v0 = jnp.zeros(N, jnp.float32)
        return jax.lax.scan(step, (v0, v0 > 1), drive)[1]

    sharded = np.asarray(jax.jit(run_sharded)(jax.device_put(drive, NamedSharding(mesh, P(None, "d")))))
    single = np.asarray(jax.jit(run_single)(drive))
    assert 0 < single.sum() < single.size  # the network fires, but not everywhere
    np.testing.assert_array_equal(sharded, single)


def test_gather_assembles_the_vector_from_its_shards():
    mesh = _mesh()
    m = n = 32
    w, i, p = random_csr(m, n, 0.25, rng)
    A = dense(w, i, p, (m, n))
    blocks = partition_csr_rows(w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    x = rng.standard_normal(n).astype(np.float32)

    def body(w, i, p, x):
        return block_csrmv(w, i, p, x, shape=(m, n), axis_name="d", gather=True, op=csrmv)

    f = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("d"),) * 4, out_specs=P("d")))
    np.testing.assert_allclose(
        np.asarray(f(*blocks.arrays(), jax.device_put(x, NamedSharding(mesh, P("d"))))),
        A @ x,
        rtol=1e-5,
        atol=1e-5,
    )


def test_partial_sums_without_reduction():
    mesh = _mesh()
    m, n = 16, 8
    w, i, p = random_csr(m, n, 0.4, rng)
    A = dense(w, i, p, (m, n))
    blocks = partition_csr_rows(w, i, p, shape=(m, n), parts=4).shard(mesh, "d")
    x = rng.standard_normal(m).astype(np.float32)

    def body(w, i, p, x):
        return block_csrmv(w, i, p, x, shape=(m, n), axis_name="d", transpose=True, reduce=None, op=csrmv)[
            None
        ]

    parts = np.asarray(
        jax.jit(jax.shard_map(body, mesh=mesh, in_specs=(P("d"),) * 4, out_specs=P("d")))(*blocks.arrays(), x)
    )
    assert parts.shape == (4, n)
    for d in range(4):
        np.testing.assert_allclose(
            parts[d], A[4 * d : 4 * d + 4].T @ x[4 * d : 4 * d + 4], rtol=1e-5, atol=1e-5
        )


def test_errors_name_the_function_and_the_argument():
    mesh = _mesh()
    w, i, p = random_csr(10, 6, 0.3, rng)
    blocks = partition_csr_rows(w, i, p, shape=(10, 6), parts=4).shard(mesh, "d")
    with pytest.raises(
        ValueError, match=r"sharded_csrmv\(\): argument 'x' must have length m = 10 \(transpose=True\)"
    ):
        sharded_csrmv(blocks, np.ones(6, bool), mesh=mesh, axis_name="d", transpose=True)
    with pytest.raises(
        ValueError, match=r"psum_scatter' needs the result length 6 to be a multiple of the 4"
    ):
        sharded_csrmv(
            blocks,
            np.ones(10, bool),
            mesh=mesh,
            axis_name="d",
            transpose=True,
            scatter=True,
            op=event_csrmv,
        )
    with pytest.raises(ValueError, match=r"mesh axis 'd' has 4 devices, the matrix is cut into 2 blocks"):
        partition_csr_rows(w, i, p, shape=(10, 6), parts=2).shard(mesh, "d")

    cols = partition_csr_columns(w, i, p, shape=(10, 6), parts=4).shard(mesh, "d")
    with pytest.raises(
        ValueError, match=r"scatter=True reduces partial sums; columns blocks with transpose=True"
    ):
        sharded_csrmv(cols, np.ones(10, bool), mesh=mesh, axis_name="d", transpose=True, scatter=True)

    def body(w, i, p, x, **kw):
        return block_csrmv(w, i, p, x, shape=(10, 6), axis_name="d", **kw)

    for kw, msg in (
        ({"split": "diagonal"}, "argument 'split' must be 'rows' or 'columns', got 'diagonal'"),
        ({"reduce": "sum"}, "argument 'reduce' must be 'psum', 'psum_scatter' or None, got 'sum'"),
        ({"transpose": True, "gather": True}, "split='rows' with transpose=True takes this device's slice"),
        ({"reduce": None}, "split='rows' with transpose=False gives local results: 'reduce' does not apply"),
    ):
        f = jax.shard_map(
            lambda w, i, p, x, kw=kw: body(w, i, p, x, **kw), mesh=mesh, in_specs=P("d"), out_specs=P("d")
        )
        with pytest.raises(ValueError, match=re.escape("block_csrmv(): " + msg)):
            jax.jit(f)(*blocks.arrays(), jnp.ones(24, np.float32))
