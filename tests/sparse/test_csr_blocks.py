"""``partition_csr_rows`` / ``partition_csr_columns``: the blocks of a CSR matrix (NumPy).

The products over devices are tested on 4 JAX devices in
``tests/multidevice/split_csr.py``.
"""

import re

import numpy as np
import pytest
from _row_csr import dense, random_csr
from tiarray.operators.distributed import CSRBlocks, partition_csr_columns, partition_csr_rows
from tiarray.operators.sparse import csrmv, event_csrmv

rng = np.random.default_rng(5)
PARTITION = {"rows": partition_csr_rows, "columns": partition_csr_columns}


def _block_dense(b, d):
    """The dense matrix of block d, padding row included: local_shape."""
    w = b.weights if b.homogeneous else b.weights[d]
    return dense(w, b.indices[d], b.indptr[d], b.local_shape)


@pytest.mark.parametrize("split", ["rows", "columns"])
@pytest.mark.parametrize("homogeneous", [False, True])
@pytest.mark.parametrize("size, parts", [(12, 4), (13, 4), (3, 4), (5, 1), (0, 2)])
def test_blocks_hold_the_matrix(size, parts, homogeneous, split):
    m, n = (size, 7) if split == "rows" else (7, max(size, 1))
    w, i, p = random_csr(m, n, 0.4, rng, homogeneous=homogeneous, index_dtype=np.int64)
    A = dense(w, i, p, (m, n))
    b = PARTITION[split](w, i, p, shape=(m, n), parts=parts)
    assert isinstance(b, CSRBlocks) and b.shape == (m, n) and b.parts == parts and b.split == split
    if split == "rows":
        assert b.rows == max(1, -(-m // parts)) and b.cols == n
    else:
        assert b.rows == m and b.cols == -(-n // parts)
    nnz_max = b.indices.shape[1]
    assert b.indices.shape == (parts, nnz_max) and b.indptr.shape == (parts, b.rows + 2)
    assert b.indices.dtype == np.int64 and b.indptr.dtype == np.int64
    blocks = [_block_dense(b, d)[: b.rows] for d in range(parts)]
    whole = np.concatenate(blocks, axis=0 if split == "rows" else 1)
    if split == "rows":
        np.testing.assert_array_equal(whole[:m], A)
        assert not whole[m:].any()  # padding rows are empty
    else:
        np.testing.assert_array_equal(whole[:, :n], A)
        assert not whole[:, n:].any()  # padding columns are empty
    for d in range(parts):
        ptr = b.indptr[d]
        assert ptr[0] == 0 and np.all(np.diff(ptr) >= 0) and ptr[-1] == nnz_max
        # the padding row holds only padding synapses (column 0, weight 0 when per synapse)
        pad = slice(ptr[b.rows], ptr[b.rows + 1])
        assert np.all(b.indices[d, pad] == 0)
        if not homogeneous:
            assert np.all(b.weights[d, pad] == 0)


def test_column_blocks_keep_the_order_of_each_row():
    # the synapses of a row keep their order in every block (a network's inputs are then
    # added in the order one device adds them)
    w = np.arange(1.0, 7.0)
    indices = np.array([3, 0, 2, 1, 3, 0])
    indptr = np.array([0, 4, 6])
    b = partition_csr_columns(w, indices, indptr, shape=(2, 4), parts=2)
    assert b.indices.tolist() == [[0, 1, 0], [1, 0, 1]]
    assert b.weights.tolist() == [[2.0, 4.0, 6.0], [1.0, 3.0, 5.0]]
    assert b.indptr.tolist() == [[0, 2, 3, 3], [0, 2, 3, 3]]


@pytest.mark.parametrize("split", ["rows", "columns"])
def test_block_products_compose_the_product(split):
    m, n, parts = 10, 9, 3
    w, i, p = random_csr(m, n, 0.5, rng)
    A = dense(w, i, p, (m, n))
    b = PARTITION[split](w, i, p, shape=(m, n), parts=parts)
    x = rng.standard_normal(n).astype(np.float32)
    e = rng.random(m) < 0.5
    y, y_t = (
        np.zeros(b.rows * parts if split == "rows" else m),
        np.zeros(n if split == "rows" else b.cols * parts),
    )
    e_pad = np.concatenate([e, np.zeros(b.rows * parts - m if split == "rows" else 0, bool)])
    x_pad = np.concatenate([x, np.zeros(b.cols * parts - n if split == "columns" else 0, np.float32)])
    for d in range(parts):
        wd, idx, ptr = b.weights[d], b.indices[d], b.indptr[d]
        if split == "rows":  # own rows from the whole x; partial sums of A.T e from own events
            y[d * b.rows : (d + 1) * b.rows] = csrmv(wd, idx, ptr, x, shape=b.local_shape)[: b.rows]
            ev = np.concatenate([e_pad[d * b.rows : (d + 1) * b.rows], [False]])
            y_t += event_csrmv(wd, idx, ptr, ev, shape=b.local_shape, transpose=True)
        else:  # partial sums of A x from own columns; own columns of A.T e from all events
            y += csrmv(wd, idx, ptr, x_pad[d * b.cols : (d + 1) * b.cols], shape=b.local_shape)[:m]
            ev = np.concatenate([e, [False]])
            y_t[d * b.cols : (d + 1) * b.cols] = event_csrmv(
                wd, idx, ptr, ev, shape=b.local_shape, transpose=True
            )
    np.testing.assert_allclose(y[:m], A @ x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y_t[:n], A.T @ e, rtol=1e-5, atol=1e-6)


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
@pytest.mark.parametrize("split", ["rows", "columns"])
def test_bad_input_raises_naming_the_argument(kwargs, err, msg, split):
    args = {
        "weights": np.ones(3, np.float32),
        "indices": np.array([0, 1, 2]),
        "indptr": np.array([0, 1, 2, 3]),
        "shape": (3, 3),
        "parts": 2,
    }
    args.update(kwargs)
    with pytest.raises(err, match=re.escape(f"partition_csr_{split}(): " + msg)):
        PARTITION[split](args.pop("weights"), args.pop("indices"), args.pop("indptr"), **args)
