"""Sparse products with a CSR matrix split over JAX devices, by rows or by columns.

A matrix too large for one device is cut into equal blocks, one per device:
:func:`partition_csr_rows` cuts its rows, :func:`partition_csr_columns` its columns.
Inside ``jax.shard_map``, :func:`block_csrmv` multiplies a device's block. Each direction
of the product is local in one split and gives partial sums in the other:

==============  ==========================================  ==========================================
split           ``transpose=False`` (``A @ x``)             ``transpose=True`` (``A.T @ x``)
==============  ==========================================  ==========================================
rows            local: the device's rows, from the whole    partial sums over the whole output:
                ``x`` (``gather=True``: ``all_gather`` it)  ``reduce="psum"`` / ``"psum_scatter"``
columns         partial sums over the whole output:         local: the device's columns, from the
                ``reduce="psum"`` / ``"psum_scatter"``      whole ``x`` (``gather=True``: ``all_gather``)
==============  ==========================================  ==========================================

In a network whose rows are presynaptic neurons, ``transpose=True`` is the spiking
direction. Splitting the rows moves ``N`` floats per step (a reduce-scatter of partial
currents); splitting the columns (each device holds the incoming synapses of its own
neurons) moves ``N`` bools (an all-gather of the spikes) and adds every neuron's input on
one device, in the order of one device: the results equal the single-device product
bit for bit.

:func:`sharded_csrmv` does a whole product from outside ``shard_map``. The product is
any operator with the signature of ``tiarray.operators.sparse.event_csrmv``
(``op(weights, indices, indptr, x, *, shape, transpose)``): ``event_csrmv`` (the default),
``csrmv``, or your own. See ``docs/scaling.md``.

Blocks have the same shapes on every device (rows or columns padded to a multiple of the
device count; synapses padded to the largest block), so every device runs one compiled
program. The padding synapses sit in one extra row per block (column 0, weight 0) that
no event ever activates and whose output is dropped: homogeneous weights need no
expansion, and vectors along the rows need no padding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["CSRBlocks", "partition_csr_rows", "partition_csr_columns", "block_csrmv", "sharded_csrmv"]

_SPLITS = ("rows", "columns")


class CSRBlocks:
    """A CSR matrix cut into equal blocks of rows or of columns, one per device.

    Made by :func:`partition_csr_rows` and :func:`partition_csr_columns`. Block ``d`` is
    row ``d`` of the stacked arrays below, so sharding their first axis over a mesh axis
    gives every device its block. Each block is itself a CSR matrix of shape
    ``local_shape``: the block's rows (all ``m`` rows for a column split) plus one padding
    row, and the block's columns (all ``n`` for a row split).

    Attributes
    ----------
    weights : array
        ``(parts, nnz_max)`` per-synapse weights, or the homogeneous weight as given
        (shape ``()`` or ``(1,)``, the same on every device).
    indices : array
        ``(parts, nnz_max)`` column indices, local to the block.
    indptr : array
        ``(parts, rows + 2)`` row pointers of each block.
    shape : tuple of int
        ``(m, n)``, the shape of the whole matrix.
    split : str
        ``"rows"`` or ``"columns"``.
    parts : int
        The number of blocks.
    rows, cols : int
        Rows and columns of a block (without the padding row): ``(ceil(m / parts), n)``
        for a row split, ``(m, ceil(n / parts))`` for a column split.
    homogeneous : bool
        Whether ``weights`` is one weight shared by every synapse.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.distributed import partition_csr_rows
    >>> b = partition_csr_rows(np.ones(3, np.float32), np.array([0, 1, 1]), np.array([0, 2, 3]),
    ...                        shape=(2, 2), parts=2)
    >>> b.split, b.rows, b.cols, b.indptr.tolist(), b.indices.tolist()
    ('rows', 1, 2, [[0, 2, 2], [0, 1, 2]], [[0, 1], [1, 0]])
    """

    __slots__ = ("weights", "indices", "indptr", "shape", "split", "parts", "rows", "cols", "homogeneous")

    def __init__(self, weights, indices, indptr, *, shape, split, parts, rows, cols, homogeneous):
        self.weights = weights
        self.indices = indices
        self.indptr = indptr
        self.shape = shape
        self.split = split
        self.parts = parts
        self.rows = rows
        self.cols = cols
        self.homogeneous = homogeneous

    @property
    def local_shape(self) -> tuple:
        """The CSR shape of one block, padding row included."""
        return (self.rows + 1, self.cols)

    def arrays(self) -> tuple:
        """``(weights, indices, indptr)``."""
        return self.weights, self.indices, self.indptr

    def replace(self, weights, indices, indptr) -> CSRBlocks:
        """The same blocks with other arrays (e.g. their sharded JAX copies)."""
        return CSRBlocks(
            weights,
            indices,
            indptr,
            shape=self.shape,
            split=self.split,
            parts=self.parts,
            rows=self.rows,
            cols=self.cols,
            homogeneous=self.homogeneous,
        )

    def shard(self, mesh, axis_name) -> CSRBlocks:
        """The blocks as JAX arrays, block ``d`` on the ``d``-th device of mesh axis ``axis_name``.

        Parameters
        ----------
        mesh : jax.sharding.Mesh
        axis_name : str
            A mesh axis of size ``parts``.

        Returns
        -------
        CSRBlocks
            With ``jax.Array`` arrays sharded along their first axis (homogeneous weights
            replicated). With several processes (``jax.distributed``), every process calls
            this with the same blocks; each puts its own devices' blocks.

        Raises
        ------
        ValueError
            If the mesh axis does not have ``parts`` devices.
        """
        import jax
        from jax.sharding import NamedSharding
        from jax.sharding import PartitionSpec as P

        size = dict(mesh.shape).get(axis_name)
        if size != self.parts:
            raise ValueError(
                f"CSRBlocks.shard(): mesh axis {axis_name!r} has {size} devices, the matrix is cut into "
                f"{self.parts} blocks"
            )
        split = NamedSharding(mesh, P(axis_name))

        def put(a, sharding):
            # from the host copy every process holds: works with several processes too
            a = np.asarray(a)
            return jax.make_array_from_callback(a.shape, sharding, lambda idx: a[idx])

        w = put(self.weights, NamedSharding(mesh, P()) if self.homogeneous else split)
        return self.replace(w, put(self.indices, split), put(self.indptr, split))

    def __repr__(self) -> str:
        return (
            f"CSRBlocks(shape={self.shape}, split={self.split!r}, parts={self.parts}, "
            f"local_shape={self.local_shape}, nnz_max={self.indices.shape[-1]}, homogeneous={self.homogeneous})"
        )


def _check_csr(fn, weights, indices, indptr, shape, parts):
    try:
        m, n = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{fn}: argument 'shape' must be a pair of ints (m, n), got {shape!r}") from None
    if m < 0 or n < 1:
        raise ValueError(f"{fn}: argument 'shape' must have m >= 0 rows and n >= 1 columns, got {shape!r}")
    if isinstance(parts, bool) or not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValueError(f"{fn}: argument 'parts' must be a positive int, got {parts!r}")
    weights = np.asarray(weights)
    indices = np.asarray(indices)
    indptr = np.asarray(indptr)
    for name, a in (("indices", indices), ("indptr", indptr)):
        if a.dtype.kind not in "iu" or a.ndim != 1:
            raise TypeError(
                f"{fn}: argument '{name}' must be a 1-D integer array, got {a.dtype} of shape {a.shape}"
            )
    if indptr.shape[0] != m + 1:
        raise ValueError(f"{fn}: argument 'indptr' must have length m + 1 = {m + 1}, got {indptr.shape[0]}")
    nnz = indices.shape[0]
    if m and (indptr[0] != 0 or np.any(np.diff(indptr) < 0) or indptr[-1] != nnz):
        raise ValueError(
            f"{fn}: argument 'indptr' must start at 0, never decrease and end at nnz = {nnz} "
            f"(got first {indptr[0]}, last {indptr[-1]})"
        )
    if nnz and (indices.min() < 0 or indices.max() >= n):
        raise ValueError(f"{fn}: argument 'indices' must hold column indices in [0, {n})")
    homogeneous = weights.shape in ((), (1,))
    if not homogeneous and weights.shape != (nnz,):
        raise ValueError(
            f"{fn}: argument 'weights' must have shape (nnz,) = ({nnz},), () or (1,), got {weights.shape}"
        )
    return weights, indices, indptr, m, n, int(parts), homogeneous


def _stack(blocks, rows, index_dtype, ptr_dtype, w_dtype, homogeneous):
    """Stack per-block CSR pieces ``(weights, indices, row_counts)`` into padded arrays."""
    parts = len(blocks)
    nnz_max = max([1] + [b[1].shape[0] for b in blocks])  # >= 1: no zero-size arrays on devices
    P_idx = np.zeros((parts, nnz_max), index_dtype)
    P_ptr = np.empty((parts, rows + 2), ptr_dtype)
    P_w = None if homogeneous else np.zeros((parts, nnz_max), w_dtype)
    for d, (w, idx, counts) in enumerate(blocks):
        k = idx.shape[0]
        P_idx[d, :k] = idx
        if P_w is not None:
            P_w[d, :k] = w
        P_ptr[d, 0] = 0
        P_ptr[d, 1 : rows + 1] = np.cumsum(counts)
        P_ptr[d, rows + 1] = nnz_max  # the padding row holds the padding synapses
    return P_w, P_idx, P_ptr


def partition_csr_rows(weights, indices, indptr, *, shape, parts) -> CSRBlocks:
    """Cut the rows of a CSR matrix into ``parts`` blocks of equal shapes.

    Block ``d`` holds rows ``d * rows : (d + 1) * rows`` (``rows = ceil(m / parts)``; the
    last blocks padded with empty rows) and every column.

    Parameters
    ----------
    weights : array_like
        ``(nnz,)`` per-synapse weights, or one weight of shape ``()`` or ``(1,)``.
    indices : array_like
        ``(nnz,)`` column indices (int32 or int64, kept).
    indptr : array_like
        ``(m + 1,)`` row pointers.
    shape : tuple of int
        ``(m, n)``.
    parts : int
        The number of blocks (devices).

    Returns
    -------
    CSRBlocks
        NumPy arrays; ``.shard(mesh, axis)`` puts them on devices.

    Raises
    ------
    ValueError
        For a ``shape`` or ``parts`` that is not positive, arrays whose lengths do not fit
        ``shape``, an ``indptr`` that does not start at 0, decreases, or does not end at
        ``nnz``, or column indices outside ``[0, n)``.
    TypeError
        For index arrays that are not integers.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.distributed import partition_csr_rows
    >>> b = partition_csr_rows(np.arange(1.0, 4.0), np.array([2, 0, 1]), np.array([0, 1, 1, 3]),
    ...                        shape=(3, 3), parts=2)
    >>> b.rows, b.weights.tolist()
    (2, [[1.0, 0.0], [2.0, 3.0]])
    """
    fn = "partition_csr_rows()"
    weights, indices, indptr, m, n, parts, homogeneous = _check_csr(
        fn, weights, indices, indptr, shape, parts
    )
    rows = -(-m // parts) if m else 1
    counts = np.diff(indptr) if m else np.zeros(0, np.int64)
    blocks = []
    for d in range(parts):
        r0, r1 = min(d * rows, m), min((d + 1) * rows, m)
        a, b = (int(indptr[r0]), int(indptr[r1])) if m else (0, 0)
        c = np.zeros(rows, np.int64)
        c[: r1 - r0] = counts[r0:r1]
        blocks.append((None if homogeneous else weights[a:b], indices[a:b], c))
    P_w, P_idx, P_ptr = _stack(blocks, rows, indices.dtype, indptr.dtype, weights.dtype, homogeneous)
    return CSRBlocks(
        weights if homogeneous else P_w,
        P_idx,
        P_ptr,
        shape=(m, n),
        split="rows",
        parts=parts,
        rows=rows,
        cols=n,
        homogeneous=homogeneous,
    )


def partition_csr_columns(weights, indices, indptr, *, shape, parts) -> CSRBlocks:
    """Cut the columns of a CSR matrix into ``parts`` blocks of equal shapes.

    Block ``d`` holds every row, restricted to the columns ``d * cols : (d + 1) * cols``
    (``cols = ceil(n / parts)``), renumbered from 0; within each row the synapses keep
    their order. In a network whose rows are presynaptic neurons, block ``d`` is the
    incoming synapses of the neurons of device ``d``.

    Parameters
    ----------
    weights, indices, indptr, shape, parts
        As :func:`partition_csr_rows`.

    Returns
    -------
    CSRBlocks
        NumPy arrays; ``.shard(mesh, axis)`` puts them on devices.

    Raises
    ------
    ValueError, TypeError
        As :func:`partition_csr_rows`.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.distributed import partition_csr_columns
    >>> b = partition_csr_columns(np.arange(1.0, 4.0), np.array([2, 0, 1]), np.array([0, 1, 1, 3]),
    ...                           shape=(3, 4), parts=2)
    >>> b.cols, b.indices.tolist(), b.weights.tolist(), b.indptr.tolist()
    (2, [[0, 1], [0, 0]], [[2.0, 3.0], [1.0, 0.0]], [[0, 0, 0, 2, 2], [0, 1, 1, 1, 2]])
    """
    fn = "partition_csr_columns()"
    weights, indices, indptr, m, n, parts, homogeneous = _check_csr(
        fn, weights, indices, indptr, shape, parts
    )
    cols = -(-n // parts)
    row_of = np.repeat(np.arange(m), np.diff(indptr)) if m else np.zeros(0, np.int64)
    block_of = indices // cols
    blocks = []
    for d in range(parts):
        sel = block_of == d  # keeps the order of the synapses: by row, then as stored
        c = np.bincount(row_of[sel], minlength=m) if m else np.zeros(1, np.int64)
        idx = (indices[sel] - d * cols).astype(indices.dtype)
        blocks.append((None if homogeneous else weights[sel], idx, c))
    P_w, P_idx, P_ptr = _stack(blocks, max(m, 1), indices.dtype, indptr.dtype, weights.dtype, homogeneous)
    return CSRBlocks(
        weights if homogeneous else P_w,
        P_idx,
        P_ptr,
        shape=(m, n),
        split="columns",
        parts=parts,
        rows=max(m, 1),
        cols=cols,
        homogeneous=homogeneous,
    )


def _default_op(op):
    if op is not None:
        return op
    from .sparse import event_csrmv

    return event_csrmv


def block_csrmv(
    weights,
    indices,
    indptr,
    x,
    *,
    shape,
    axis_name,
    split="rows",
    transpose=False,
    reduce="psum",
    gather=False,
    op=None,
):
    """One device's part of a CSR product split over devices; call inside ``jax.shard_map``.

    Parameters
    ----------
    weights, indices, indptr : jax.Array
        This device's block of :func:`partition_csr_rows` or :func:`partition_csr_columns`
        (a leading axis of length 1, as ``shard_map`` passes a block of the stacked arrays,
        is dropped).
    x : jax.Array
        The vector (events or values). Where the product is local (rows with
        ``transpose=False``, columns with ``transpose=True``): the whole vector (length
        ``n``, resp. ``m``), or this device's slice of it with ``gather=True``. Where it
        gives partial sums: this device's slice (its rows, resp. its columns).
    shape : tuple of int
        ``(m, n)`` of the whole matrix.
    axis_name : str
        The mesh axis the blocks are split over.
    split : {"rows", "columns"}
        How the matrix was cut.
    transpose : bool
        ``False``: ``A @ x``; ``True``: ``A.T @ x``.
    reduce : {"psum", "psum_scatter", None}
        Where the product gives partial sums (rows with ``transpose=True``, columns with
        ``transpose=False``): add them on every device (``"psum"``, the whole result),
        give each device the sum over its slice (``"psum_scatter"``; the result length
        must be a multiple of the axis size), or return them (``None``).
    gather : bool
        Where the product is local: ``x`` is this device's slice, assembled with
        ``all_gather`` first.
    op : callable, optional
        The product, with the signature of ``event_csrmv`` (the default).

    Returns
    -------
    jax.Array
        Where the product is local: this device's rows (``split="rows"``), resp. columns,
        of the result. Elsewhere: as ``reduce`` says.

    Raises
    ------
    ValueError
        For a ``split`` or ``reduce`` that is not one of those listed, ``gather``/``reduce``
        in the direction that does not use it, a ``"psum_scatter"`` whose result length is
        not a multiple of the axis size, or an ``x`` whose length does not fit.

    Examples
    --------
    One step of a network whose neurons are split over devices (rows: presynaptic).
    Row blocks: each device scatters its own spikes, the partial currents are
    reduce-scattered. Column blocks (each device holds its neurons' incoming synapses):
    the spikes are gathered, each device adds up its own neurons' inputs::

        # inside jax.shard_map(..., in_specs=P("d"), out_specs=P("d"))
        current = block_csrmv(w, i, p, spikes, shape=(N, N), axis_name="d", transpose=True,
                              reduce="psum_scatter")                       # row blocks
        current = block_csrmv(w, i, p, spikes, shape=(N, N), axis_name="d", transpose=True,
                              split="columns", gather=True)               # column blocks
    """
    import jax
    import jax.numpy as jnp

    fn = "block_csrmv()"
    if split not in _SPLITS:
        raise ValueError(f"{fn}: argument 'split' must be 'rows' or 'columns', got {split!r}")
    if reduce not in ("psum", "psum_scatter", None):
        raise ValueError(f"{fn}: argument 'reduce' must be 'psum', 'psum_scatter' or None, got {reduce!r}")
    op = _default_op(op)
    m, n = (int(s) for s in shape)
    if indptr.ndim == 2:
        indptr = indptr.reshape(-1)
    if indices.ndim == 2:
        indices = indices.reshape(-1)
    if weights.ndim == 2:
        weights = weights.reshape(-1)
    rows = indptr.shape[0] - 2
    size = jax.lax.axis_size(axis_name)
    cols = n if split == "rows" else -(-n // size)
    local_shape = (rows + 1, cols)  # + the padding row
    # the block's input is along its rows when transposed, along its columns otherwise
    partial = (split == "rows") == transpose
    if not partial and reduce != "psum":
        raise ValueError(
            f"{fn}: split={split!r} with transpose={transpose} gives local results: 'reduce' does not apply "
            f"(got reduce={reduce!r})"
        )
    if partial and gather:
        raise ValueError(
            f"{fn}: split={split!r} with transpose={transpose} takes this device's slice of x: 'gather' does "
            "not apply"
        )
    if gather:
        x = jax.lax.all_gather(x, axis_name, tiled=True)
    # along the block's rows when transposed (all m of them for a column split), else along
    # its columns (all n for a row split)
    want = rows if transpose else cols
    if x.shape != (want,):
        what = "this device's slice" if partial else "the whole vector"
        raise ValueError(
            f"{fn}: argument 'x' must be {what}, of length {want} (split={split!r}, transpose={transpose}), "
            f"got shape {tuple(x.shape)}"
        )
    if transpose:
        xp = jnp.concatenate([x, jnp.zeros((1,), x.dtype)])  # the padding row never fires
        y = op(weights, indices, indptr, xp, shape=local_shape, transpose=True)
    else:
        y = op(weights, indices, indptr, x, shape=local_shape, transpose=False)[:rows]
    if not partial:
        return y
    if reduce == "psum":
        return jax.lax.psum(y, axis_name)
    if reduce == "psum_scatter":
        if y.shape[0] % size:
            raise ValueError(
                f"{fn}: reduce='psum_scatter' needs the result length {y.shape[0]} to be a multiple of the "
                f"{size} devices of axis {axis_name!r}; use reduce='psum', or pad the matrix"
            )
        return jax.lax.psum_scatter(y, axis_name, scatter_dimension=0, tiled=True)
    return y


def sharded_csrmv(blocks, x, *, mesh, axis_name, transpose=False, scatter=False, op=None):
    """A CSR product split over devices, from outside ``shard_map`` (works under ``jax.jit``).

    Parameters
    ----------
    blocks : CSRBlocks
        From :func:`partition_csr_rows` or :func:`partition_csr_columns` (``parts`` equal
        to the size of ``axis_name``); NumPy or (better, once) sharded with
        ``blocks.shard(mesh, axis_name)``.
    x : jax.Array
        Length ``n`` (``transpose=False``) or ``m`` (``transpose=True``).
    mesh : jax.sharding.Mesh
    axis_name : str
        The mesh axis the blocks are split over.
    transpose : bool
        ``False``: ``A @ x``; ``True``: ``A.T @ x``.
    scatter : bool
        Where the product gives partial sums (row blocks with ``transpose=True``, column
        blocks with ``transpose=False``): reduce with ``psum_scatter``, leaving the result
        sharded over ``axis_name`` (its length must be a multiple of the axis size)
        instead of replicated.
    op : callable, optional
        The product, with the signature of ``event_csrmv`` (the default).

    Returns
    -------
    jax.Array
        The product: sharded over ``axis_name`` where each device computes its own part
        (replicated under an explicit mesh when that part was padded), replicated where
        partial sums are added (sharded with ``scatter=True``).

    Raises
    ------
    ValueError
        For ``x`` of the wrong length, a mesh axis whose size is not ``blocks.parts``,
        ``scatter=True`` where the product is local, and the cases of
        :func:`block_csrmv`.

    Examples
    --------
    >>> import numpy as np, jax
    >>> from tiarray.operators.distributed import partition_csr_rows, sharded_csrmv
    >>> blocks = partition_csr_rows(np.ones(1, np.float32), np.array([0, 1, 1]),
    ...                             np.array([0, 2, 3]), shape=(2, 2), parts=1)
    >>> mesh = jax.make_mesh((1,), ("d",))
    >>> sharded_csrmv(blocks, np.array([True, True]), mesh=mesh, axis_name="d",
    ...               transpose=True)
    Array([1., 2.], dtype=float32)
    """
    import jax
    import jax.numpy as jnp
    from jax.sharding import NamedSharding
    from jax.sharding import PartitionSpec as P

    fn = "sharded_csrmv()"
    m, n = blocks.shape
    size = dict(mesh.shape).get(axis_name)
    if size != blocks.parts:
        raise ValueError(
            f"{fn}: mesh axis {axis_name!r} has {size} devices, the matrix is cut into {blocks.parts} blocks"
        )
    want = m if transpose else n
    if tuple(x.shape) != (want,):
        raise ValueError(
            f"{fn}: argument 'x' must have length {'m' if transpose else 'n'} = {want} "
            f"(transpose={transpose}), got shape {tuple(x.shape)}"
        )
    partial = (blocks.split == "rows") == transpose
    if scatter and not partial:
        raise ValueError(
            f"{fn}: scatter=True reduces partial sums; {blocks.split} blocks with transpose={transpose} give "
            "each device its own part of the result already"
        )
    explicit = any(t == jax.sharding.AxisType.Explicit for t in getattr(mesh, "axis_types", ()))
    blk = P(axis_name)
    w_spec = P() if blocks.homogeneous else blk
    x = jnp.asarray(x)
    if partial:  # x is split over the devices along the blocks' own axis: pad it
        per = blocks.rows if blocks.split == "rows" else blocks.cols
        pad = per * blocks.parts - x.shape[0]
        if pad:
            x = jnp.concatenate([x, jnp.zeros((pad,), x.dtype)])
        x_spec, out_spec = blk, (blk if scatter else P())
        reduce = "psum_scatter" if scatter else "psum"
    else:
        x_spec, out_spec, reduce = P(), blk, "psum"

    def body(w, i, p, xs):
        return block_csrmv(
            w,
            i,
            p,
            xs,
            shape=blocks.shape,
            axis_name=axis_name,
            split=blocks.split,
            transpose=transpose,
            reduce=reduce,
            op=op,
        )

    specs = (w_spec, blk, blk, x_spec)
    args = (*blocks.arrays(), x)
    if explicit:  # shard_map takes explicitly sharded arrays as typed: put them where it wants
        args = [jax.reshard(jnp.asarray(a), NamedSharding(mesh, sp)) for a, sp in zip(args, specs)]
    y = jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=out_spec)(*args)
    full = n if transpose else m
    if y.shape[0] == full:
        return y
    if explicit and out_spec != P():  # padded: an explicitly sharded array is sliced replicated
        y = jax.reshard(y, NamedSharding(mesh, P()))
    return y[:full]
