"""Spike-index products: the ``jnp.nonzero(size=...)`` form under jit, vmap over spike lists,
repeated ids, bad input, and clamping of unvalidated counts and ids. (Every operator on
every framework against dense references is in ``test_sparse_families.py``.)"""

from __future__ import annotations

import numpy as np
import pytest
import tiarray.operators.sparse as sp
from _family_cases import fcn_dense
from _sparse_helpers import dense_of, random_csr


@pytest.fixture(scope="module")
def net():
    rng = np.random.default_rng(5)
    w, idx, ptr, dense = random_csr(30, 20, 0.3, rng)
    fidx = sp.fixed_num_conn(30, 20, 5, seed=9)
    fw = rng.standard_normal((30, 5))
    return w, idx, ptr, dense, fw, fidx, fcn_dense(fw, fidx, (30, 20))


def test_repeated_ids_add_their_row_once_per_occurrence(net):
    w, idx, ptr, dense, fw, fidx, fdense = net
    ids = np.array([3, 7, 3, 0, 29, 3])
    e = np.bincount(ids[:5], minlength=30).astype(float)  # 3 twice, 7, 0, 29
    np.testing.assert_allclose(
        sp.event_csrmv_indexed(w, idx, ptr, ids, 5, shape=(30, 20)), dense.T @ e, rtol=1e-12
    )
    np.testing.assert_allclose(
        sp.event_fcnmv_indexed(fw, fidx, ids, 5, shape=(30, 20)), fdense.T @ e, rtol=1e-12
    )
    np.testing.assert_array_equal(sp.ids_to_events(ids, 5, 30), e.astype(np.float32))
    assert not sp.event_csrmv_indexed(w, idx, ptr, ids, 0, shape=(30, 20)).any()
    assert sp.event_csrmv_indexed(w, idx, ptr, np.zeros(0, np.int32), 0, shape=(30, 20)).shape == (20,)


def test_errors(net):
    w, idx, ptr, dense, fw, fidx, fdense = net
    ids = np.array([1, 2, 3])
    f = sp.event_csrmv_indexed
    with pytest.raises(
        ValueError,
        match=r"event_csrmv_indexed\(\): argument 'count' must be in \[0, len\(ids\)\] = \[0, 3\], got 4",
    ):
        f(w, idx, ptr, ids, 4, shape=(30, 20))
    with pytest.raises(ValueError, match="argument 'count' must be in"):
        f(w, idx, ptr, ids, -1, shape=(30, 20))
    # past int32: the range error, not a raw OverflowError (before 2026-12-05)
    for big in (2**40, np.int64(2**40), np.uint64(2**63), -(2**40)):
        with pytest.raises(
            ValueError, match=rf"argument 'count' must be in \[0, len\(ids\)\] = \[0, 3\], got {int(big)}"
        ):
            f(w, idx, ptr, ids, big, shape=(30, 20))
        with pytest.raises(ValueError, match="event_fcnmv_indexed\\(\\): argument 'count' must be in"):
            sp.event_fcnmv_indexed(fw, fidx, ids, big, shape=(30, 20))
    with pytest.raises(IndexError, match=r"argument 'ids' holds neuron 30 at position 1, outside \[0, 30\)"):
        f(w, idx, ptr, np.array([1, 30, 2]), 2, shape=(30, 20))
    f(w, idx, ptr, np.array([1, 2, 30]), 2, shape=(30, 20))  # beyond count: never read, no error
    with pytest.raises(TypeError, match=r"argument 'ids' must be an integer array"):
        f(w, idx, ptr, ids.astype(float), 2, shape=(30, 20))
    with pytest.raises(TypeError, match=r"argument 'count' must be an integer"):
        f(w, idx, ptr, ids, 2.0, shape=(30, 20))
    with pytest.raises(TypeError, match=r"argument 'count' must be an integer scalar, got dtype float32"):
        f(w, idx, ptr, ids, np.float32(2), shape=(30, 20))
    with pytest.raises(ValueError, match=r"argument 'count' must be a scalar"):
        f(w, idx, ptr, ids, np.array([1, 2]), shape=(30, 20))
    with pytest.raises(ValueError, match=r"argument 'ids' must be 1-D"):
        f(w, idx, ptr, ids.reshape(3, 1), 2, shape=(30, 20))
    with pytest.raises(IndexError, match=r"event_fcnmv_indexed\(\): argument 'ids' holds neuron -1"):
        sp.event_fcnmv_indexed(fw, fidx, np.array([-1]), 1, shape=(30, 20))


def test_jax_nonzero_form_under_jit_vmap_and_grad(jax, net):
    jnp = jax.numpy
    w, idx, ptr, dense, fw, fidx, fdense = net
    rng = np.random.default_rng(1)
    S = rng.random((4, 30)) < 0.2
    with jax.enable_x64(True):

        @jax.jit
        def step(spikes, w_):
            ids = jnp.nonzero(spikes, size=30, fill_value=0)[0]
            count = spikes.sum()
            return sp.event_csrmv_indexed(w_, idx, ptr, ids, count, shape=(30, 20)), sp.event_fcnmv_indexed(
                fw, fidx, ids, count, shape=(30, 20)
            )

        for s in S:
            a, b = step(s, w)
            np.testing.assert_allclose(np.asarray(a), dense.T @ s, rtol=1e-12, atol=1e-12)
            np.testing.assert_allclose(np.asarray(b), fdense.T @ s, rtol=1e-12, atol=1e-12)
        # vmap over the spike lists: one event_csrmm (event_fcnmm) launch on their event matrix
        ids = np.stack([np.concatenate([np.nonzero(s)[0], np.zeros(30 - s.sum(), int)]) for s in S]).astype(
            np.int32
        )
        counts = S.sum(1).astype(np.int32)
        g = jax.vmap(lambda i, c: sp.event_csrmv_indexed(w, idx, ptr, i, c, shape=(30, 20)))
        prims = [e.primitive.name for e in jax.make_jaxpr(g)(ids, counts).jaxpr.eqns]
        assert prims.count("event_csrmm") == 1 and "event_csrmv_indexed" not in prims, prims
        np.testing.assert_allclose(np.asarray(g(ids, counts)), S @ dense, rtol=1e-12, atol=1e-12)
        h = jax.vmap(lambda i, c: sp.event_fcnmv_indexed(fw, fidx, i, c, shape=(30, 20)))
        assert "event_fcnmm" in [e.primitive.name for e in jax.make_jaxpr(h)(ids, counts).jaxpr.eqns]
        np.testing.assert_allclose(np.asarray(h(ids, counts)), S @ fdense, rtol=1e-12, atol=1e-12)
        # one shared list, batched counts
        g2 = jax.vmap(lambda c: sp.event_csrmv_indexed(w, idx, ptr, ids[0], c, shape=(30, 20)))
        want = np.stack([dense.T @ np.bincount(ids[0][:c], minlength=30) for c in (0, 2, 3)])
        np.testing.assert_allclose(
            np.asarray(g2(np.array([0, 2, 3], np.int32))), want, rtol=1e-12, atol=1e-12
        )
        # grad with respect to the weights; the ids have none
        gw = jax.grad(lambda w_: step(S[0], w_)[0].sum())(jnp.asarray(w))
        rows = np.repeat(np.arange(30), np.diff(ptr))
        np.testing.assert_allclose(np.asarray(gw), S[0][rows].astype(float), rtol=1e-12)
        with pytest.raises(TypeError):
            jax.grad(lambda c: sp.event_csrmv_indexed(w, idx, ptr, ids[0], c, shape=(30, 20)).sum())(1.0)


def test_jax_unvalidated_count_and_ids_are_clamped(jax, net):
    """Under jit the values are not checked: count is clamped into [0, len(ids)], ids outside
    [0, m) are skipped; nothing outside the arrays is touched."""
    w, idx, ptr, dense, fw, fidx, fdense = net
    ids = np.array([4, -3, 30, 2**31 - 1, 5], np.int32)
    f = jax.jit(lambda i, c: sp.event_csrmv_indexed(w, idx, ptr, i, c, shape=(30, 20)))
    ff = jax.jit(lambda i, c: sp.event_fcnmv_indexed(fw, fidx, i, c, shape=(30, 20)))
    valid = np.zeros(30)
    valid[[4, 5]] = 1
    with jax.enable_x64(True):
        for c in (5, 100, 2**31 - 1):
            np.testing.assert_allclose(
                np.asarray(f(ids, np.int32(c))), dense.T @ valid, rtol=1e-12, atol=1e-12
            )
            np.testing.assert_allclose(
                np.asarray(ff(ids, np.int32(c))), fdense.T @ valid, rtol=1e-12, atol=1e-12
            )
        assert not np.asarray(f(ids, np.int32(-7))).any()


def test_torch_weight_gradient(torch, net):
    w, idx, ptr, dense, fw, fidx, fdense = net
    tw = torch.tensor(w, requires_grad=True)
    ids = torch.tensor([3, 1, 3], dtype=torch.int64)
    y = sp.event_csrmv_indexed(
        tw, torch.as_tensor(idx), torch.as_tensor(ptr), ids, torch.tensor(3), shape=(30, 20)
    )
    y.sum().backward()
    rows = np.repeat(np.arange(30), np.diff(ptr))
    np.testing.assert_allclose(
        tw.grad.cpu().numpy(), np.bincount([3, 1, 3], minlength=30)[rows].astype(float), rtol=1e-12
    )
    assert dense_of(w, idx, ptr, (30, 20)).shape == (30, 20)


@pytest.mark.parametrize("batch", [0, 1, 3])
def test_jax_vmap_over_lists_of_any_batch_size(jax, net, batch):
    # a batch of 0 raised IndexError: the shared count was stacked from an empty list
    jnp = jax.numpy
    w, idx, ptr, dense, fw, fidx, fdense = net
    rng = np.random.default_rng(batch)
    ids = jnp.asarray(rng.integers(0, 30, (batch, 5)).astype(np.int32))
    counts = jnp.asarray(rng.integers(0, 6, batch).astype(np.int32))

    def ref(D, i, c):
        e = np.zeros(30)
        np.add.at(e, np.asarray(i)[: int(c)], 1.0)
        return D.T @ e

    got = [
        jax.vmap(lambda i: sp.event_csrmv_indexed(w, idx, ptr, i, 3, shape=(30, 20)))(ids),
        jax.vmap(
            lambda c: sp.event_csrmv_indexed(
                w, idx, ptr, ids[0] if batch else jnp.zeros(5, jnp.int32), c, shape=(30, 20)
            )
        )(counts),
        jax.vmap(lambda i, c: sp.event_fcnmv_indexed(fw, fidx, i, c, shape=(30, 20)))(ids, counts),
    ]
    first = np.asarray(ids[0]) if batch else np.zeros(5, np.int32)
    want = [
        [ref(dense, ids[b], 3) for b in range(batch)],
        [ref(dense, first, counts[b]) for b in range(batch)],
        [ref(fdense, ids[b], counts[b]) for b in range(batch)],
    ]
    for g, r in zip(got, want):
        assert g.shape == (batch, 20)
        np.testing.assert_allclose(np.asarray(g), np.array(r).reshape(batch, 20), rtol=1e-5, atol=1e-5)
