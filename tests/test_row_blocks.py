"""``partition_csr_rows``: the row blocks of a CSR matrix (NumPy; no framework needed).

The products over devices are tested on 4 JAX devices in
``tests/multidevice/row_partitioned.py``.
"""

import re

import numpy as np
import pytest
from _row_csr import dense, random_csr
from tiarray.operators.distributed import RowBlocks, partition_csr_rows
from tiarray.operators.sparse import csrmv, event_csrmv

rng = np.random.default_rng(5)


def _block_dense(b, d):
    """The dense rows of block d, padding row included: (rows + 1, n)."""
    w = b.weights if b.homogeneous else b.weights[d]
    return dense(w, b.indices[d], b.indptr[d], (b.rows + 1, b.shape[1]))


@pytest.mark.parametrize("homogeneous", [False, True])
@pytest.mark.parametrize("m, parts", [(12, 4), (13, 4), (3, 4), (5, 1), (0, 2)])
def test_blocks_hold_the_rows_of_the_matrix(m, parts, homogeneous):
    n = 7
    w, i, p = random_csr(m, n, 0.4, rng, homogeneous=homogeneous, index_dtype=np.int64)
    A = dense(w, i, p, (m, n))
    b = partition_csr_rows(w, i, p, shape=(m, n), parts=parts)
    assert isinstance(b, RowBlocks) and b.shape == (m, n) and b.parts == parts
    assert b.rows == max(1, -(-m // parts))
    nnz_max = b.indices.shape[1]
    assert b.indices.shape == (parts, nnz_max) and b.indptr.shape == (parts, b.rows + 2)
    assert b.indices.dtype == np.int64 and b.indptr.dtype == np.int64
    stacked = np.concatenate([_block_dense(b, d)[: b.rows] for d in range(parts)])
    np.testing.assert_array_equal(stacked[:m], A)
    assert not stacked[m:].any()  # padding rows are empty
    for d in range(parts):
        ptr = b.indptr[d]
        assert ptr[0] == 0 and np.all(np.diff(ptr) >= 0) and ptr[-1] == nnz_max
        # the padding row holds only padding synapses (column 0, weight 0 when per synapse)
        pad = slice(ptr[b.rows], ptr[b.rows + 1])
        assert np.all(b.indices[d, pad] == 0)
        if not homogeneous:
            assert np.all(b.weights[d, pad] == 0)


def test_each_block_product_is_its_rows_of_the_product():
    m, n, parts = 10, 6, 3
    w, i, p = random_csr(m, n, 0.5, rng)
    A = dense(w, i, p, (m, n))
    b = partition_csr_rows(w, i, p, shape=(m, n), parts=parts)
    x = rng.standard_normal(n).astype(np.float32)
    e = rng.random(m) < 0.5
    e_pad = np.concatenate([e, np.zeros(b.rows * parts - m, bool)])
    y_t = np.zeros(n)
    for d in range(parts):
        shape = (b.rows + 1, n)
        y = csrmv(b.weights[d], b.indices[d], b.indptr[d], x, shape=shape)
        r0, r1 = d * b.rows, min((d + 1) * b.rows, m)
        np.testing.assert_allclose(y[: r1 - r0], A[r0:r1] @ x, rtol=1e-5, atol=1e-6)
        ev = np.concatenate([e_pad[d * b.rows : (d + 1) * b.rows], [False]])
        y_t += event_csrmv(b.weights[d], b.indices[d], b.indptr[d], ev, shape=shape, transpose=True)
    np.testing.assert_allclose(y_t, A.T @ e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize(
    "kwargs, err, msg",
    [
        ({"shape": (3,)}, ValueError, "argument 'shape' must be a pair of ints (m, n), got (3,)"),
        ({"shape": (3, 0)}, ValueError, "argument 'shape' must have m >= 0 rows and n >= 1 columns"),
        ({"parts": 0}, ValueError, "argument 'parts' must be a positive int, got 0"),
        ({"parts": 2.0}, ValueError, "argument 'parts' must be a positive int, got 2.0"),
        ({"indptr": np.array([0, 1, 3])}, ValueError, "argument 'indptr' must have length m + 1 = 4, got 3"),
        ({"indptr": np.array([0, 2, 1, 3])}, ValueError, "argument 'indptr' must start at 0, never decrease"),
        (
            {"indptr": np.array([0, 1, 2, 2])},
            ValueError,
            "argument 'indptr' must start at 0, never decrease and end at nnz = 3 (got first 0, last 2)",
        ),
        ({"indices": np.array([0.0, 1.0, 2.0])}, TypeError, "argument 'indices' must be a 1-D integer array"),
        (
            {"weights": np.ones(2)},
            ValueError,
            "argument 'weights' must have shape (nnz,) = (3,), () or (1,), got (2,)",
        ),
    ],
)
def test_bad_input_raises_naming_the_argument(kwargs, err, msg):
    args = {
        "weights": np.ones(3, np.float32),
        "indices": np.array([0, 1, 2]),
        "indptr": np.array([0, 1, 2, 3]),
        "shape": (3, 3),
        "parts": 2,
    }
    args.update(kwargs)
    with pytest.raises(err, match=re.escape("partition_csr_rows(): " + msg)):
        partition_csr_rows(args.pop("weights"), args.pop("indices"), args.pop("indptr"), **args)
