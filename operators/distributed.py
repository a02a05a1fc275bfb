"""Sparse products with the rows of a CSR matrix split over JAX devices.

A matrix too large for one device is cut by rows into equal blocks, one per device
(:func:`partition_csr_rows`). Inside ``jax.shard_map``, :func:`block_csrmv` multiplies a
device's block:

- ``transpose=False`` (``A @ x``): each device computes its own rows from the whole
  vector; nothing to add up (``gather=True`` first assembles ``x`` from its shards with
  ``all_gather``);
- ``transpose=True`` (``A.T @ x``, the spiking direction when rows are presynaptic
  neurons): each device multiplies its rows' events and gets a partial sum over the whole
  output; ``reduce="psum"`` adds them on every device, ``"psum_scatter"`` leaves each
  device the sum of its own slice (half the traffic of ``psum``), ``None`` returns the
  partial sums.

:func:`sharded_csrmv` does the whole product from outside ``shard_map``. The product is
any operator with the signature of ``tiarray.operators.sparse.event_csrmv``
(``op(weights, indices, indptr, x, *, shape, transpose)``): ``event_csrmv`` (the default),
``csrmv``, or your own. See ``docs/scaling.md``.

Blocks have the same number of rows (the last ones padded with empty rows) and of
synapses (padded to the largest block): every device runs the same compiled program on
arrays of the same shapes. The padding synapses sit in one extra row per block (column 0,
weight 0) that no event ever activates and whose output is dropped, so homogeneous
weights need no expansion and the vector needs no padding.
"""

from __future__ import annotations

import numpy as np

__all__ = ["RowBlocks", "partition_csr_rows", "block_csrmv", "sharded_csrmv"]


class RowBlocks:
    """The rows of a CSR matrix cut into equal blocks, one per device.

    Made by :func:`partition_csr_rows`. Block ``d`` holds rows
    ``d * rows : (d + 1) * rows`` of the matrix; its arrays are row ``d`` of the stacked
    arrays below, so sharding their first axis over a mesh axis gives every device its
    block.

    Attributes
    ----------
    weights : array
        ``(parts, nnz_max)`` per-synapse weights, or the homogeneous weight as given
        (shape ``()`` or ``(1,)``, the same on every device).
    indices : array
        ``(parts, nnz_max)`` column indices.
    indptr : array
        ``(parts, rows + 2)`` row pointers of each block: ``rows`` rows and the padding row.
    shape : tuple of int
        ``(m, n)``, the shape of the whole matrix.
    parts : int
        The number of blocks.
    rows : int
        Rows per block (``ceil(m / parts)``).
    homogeneous : bool
        Whether ``weights`` is one weight shared by every synapse.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators.distributed import partition_csr_rows
    >>> b = partition_csr_rows(np.ones(3, np.float32), np.array([0, 1, 1]), np.array([0, 2, 3]),
    ...                        shape=(2, 2), parts=2)
    >>> b.rows, b.indptr.tolist(), b.indices.tolist()
    (1, [[0, 2, 2], [0, 1, 2]], [[0, 1], [1, 0]])
    """

    __slots__ = ("weights", "indices", "indptr", "shape", "parts", "rows", "homogeneous")

    def __init__(self, weights, indices, indptr, shape, parts, rows, homogeneous):
        self.weights = weights
        self.indices = indices
        self.indptr = indptr
        self.shape = shape
        self.parts = parts
        self.rows = rows
        self.homogeneous = homogeneous

    def arrays(self) -> tuple:
        """``(weights, indices, indptr)``."""
        return self.weights, self.indices, self.indptr

    def replace(self, weights, indices, indptr) -> RowBlocks:
        """The same blocks with other arrays (e.g. their sharded JAX copies)."""
        return RowBlocks(weights, indices, indptr, self.shape, self.parts, self.rows, self.homogeneous)

    def shard(self, mesh, axis_name) -> RowBlocks:
        """The blocks as JAX arrays, block ``d`` on the ``d``-th device of mesh axis ``axis_name``.

        Parameters
        ----------
        mesh : jax.sharding.Mesh
        axis_name : str
            A mesh axis of size ``parts``.

        Returns
        -------
        RowBlocks
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
                f"RowBlocks.shard(): mesh axis {axis_name!r} has {size} devices, the matrix is cut into "
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
            f"RowBlocks(shape={self.shape}, parts={self.parts}, rows={self.rows}, "
            f"nnz_max={self.indices.shape[-1]}, homogeneous={self.homogeneous})"
        )


def partition_csr_rows(weights, indices, indptr, *, shape, parts) -> RowBlocks:
    """Cut the rows of a CSR matrix into ``parts`` blocks of equal shapes.

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
    RowBlocks
        NumPy arrays; ``.shard(mesh, axis)`` puts them on devices.

    Raises
    ------
    ValueError
        For a ``shape`` or ``parts`` that is not positive, arrays whose lengths do not fit
        ``shape``, or an ``indptr`` that does not start at 0, decreases, or does not end at
        ``nnz``.
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
    try:
        m, n = (int(s) for s in shape)
    except (TypeError, ValueError):
        raise ValueError(f"{fn}: argument 'shape' must be a pair of ints (m, n), got {shape!r}") from None
    if m < 0 or n < 1:
        raise ValueError(f"{fn}: argument 'shape' must have m >= 0 rows and n >= 1 columns, got {shape!r}")
    if not isinstance(parts, (int, np.integer)) or parts < 1:
        raise ValueError(f"{fn}: argument 'parts' must be a positive int, got {parts!r}")
    parts = int(parts)
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
    homogeneous = weights.shape in ((), (1,))
    if not homogeneous and weights.shape != (nnz,):
        raise ValueError(
            f"{fn}: argument 'weights' must have shape (nnz,) = ({nnz},), () or (1,), got {weights.shape}"
        )
    rows = -(-m // parts) if m else 1
    nnz_max = 1  # at least one (padding) synapse: no zero-size arrays on devices
    starts = []
    for d in range(parts):
        r0, r1 = min(d * rows, m), min((d + 1) * rows, m)
        a, b = (int(indptr[r0]), int(indptr[r1])) if m else (0, 0)
        starts.append((r0, r1, a, b))
        nnz_max = max(nnz_max, b - a)
    P_idx = np.zeros((parts, nnz_max), indices.dtype)
    P_ptr = np.empty((parts, rows + 2), indptr.dtype)
    P_w = None if homogeneous else np.zeros((parts, nnz_max), weights.dtype)
    for d, (r0, r1, a, b) in enumerate(starts):
        k = b - a
        P_idx[d, :k] = indices[a:b]
        if P_w is not None:
            P_w[d, :k] = weights[a:b]
        local = indptr[r0 : r1 + 1] - a if m else np.zeros(1, indptr.dtype)
        P_ptr[d, : local.shape[0]] = local
        P_ptr[d, local.shape[0] : rows + 1] = k  # empty padding rows
        P_ptr[d, rows + 1] = nnz_max  # the padding row holds the padding synapses
    return RowBlocks(weights if homogeneous else P_w, P_idx, P_ptr, (m, n), parts, rows, homogeneous)


def _default_op(op):
    if op is not None:
        return op
    from .sparse import event_csrmv

    return event_csrmv


def block_csrmv(
    weights, indices, indptr, x, *, shape, axis_name, transpose=False, reduce="psum", gather=False, op=None
):
    """One device's part of a row-partitioned CSR product; call inside ``jax.shard_map``.

    Parameters
    ----------
    weights, indices, indptr : jax.Array
        This device's block of :func:`partition_csr_rows` (a leading axis of length 1, as
        ``shard_map`` passes a block of the stacked arrays, is dropped).
    x : jax.Array
        ``transpose=False``: the whole vector, length ``n`` (or this device's slice of it
        with ``gather=True``). ``transpose=True``: this device's rows' events or values,
        length ``rows``.
    shape : tuple of int
        ``(m, n)`` of the whole matrix.
    axis_name : str
        The mesh axis the rows are split over.
    transpose : bool
        ``False``: ``A @ x``; ``True``: ``A.T @ x``.
    reduce : {"psum", "psum_scatter", None}
        ``transpose=True`` only: add the devices' partial sums on every device
        (``"psum"``, length ``n``), give each device the sum over its slice
        (``"psum_scatter"``, length ``n / devices``), or return the partial sums (``None``).
    gather : bool
        ``transpose=False`` only: ``x`` is this device's slice; it is assembled with
        ``all_gather`` first.
    op : callable, optional
        The product, with the signature of ``event_csrmv`` (the default).

    Returns
    -------
    jax.Array
        ``transpose=False``: this device's rows of ``A @ x`` (length ``rows``).
        ``transpose=True``: as ``reduce`` says.

    Raises
    ------
    ValueError
        For a ``reduce`` that is not one of the three, a ``"psum_scatter"`` whose output
        length ``n`` is not a multiple of the axis size, or arrays whose lengths do not
        fit ``shape``.

    Examples
    --------
    One step of a network whose neurons (rows, presynaptic) are split over devices; each
    device gets the input current of its own neurons::

        def step(w, i, p, spikes):  # inside jax.shard_map(..., in_specs=P("d"), out_specs=P("d"))
            return block_csrmv(w, i, p, spikes, shape=(N, N), axis_name="d",
                               transpose=True, reduce="psum_scatter")
    """
    import jax
    import jax.numpy as jnp

    fn = "block_csrmv()"
    op = _default_op(op)
    m, n = (int(s) for s in shape)
    if indptr.ndim == 2:
        indptr = indptr.reshape(-1)
    if indices.ndim == 2:
        indices = indices.reshape(-1)
    if weights.ndim == 2:
        weights = weights.reshape(-1)
    rows = indptr.shape[0] - 2
    local_shape = (rows + 1, n)  # + the padding row
    if transpose:
        if gather:
            raise ValueError(f"{fn}: gather=True is for transpose=False (it assembles the vector x)")
        if reduce not in ("psum", "psum_scatter", None):
            raise ValueError(
                f"{fn}: argument 'reduce' must be 'psum', 'psum_scatter' or None, got {reduce!r}"
            )
        if x.shape != (rows,):
            raise ValueError(
                f"{fn}: argument 'x' must have this device's {rows} rows (transpose=True), got {x.shape}"
            )
        xp = jnp.concatenate([x, jnp.zeros((1,), x.dtype)])  # the padding row never fires
        y = op(weights, indices, indptr, xp, shape=local_shape, transpose=True)
        if reduce == "psum":
            return jax.lax.psum(y, axis_name)
        if reduce == "psum_scatter":
            size = jax.lax.axis_size(axis_name)
            if n % size:
                raise ValueError(
                    f"{fn}: reduce='psum_scatter' needs n = {n} to be a multiple of the {size} devices of axis "
                    f"{axis_name!r}; use reduce='psum', or pad the columns"
                )
            return jax.lax.psum_scatter(y, axis_name, scatter_dimension=0, tiled=True)
        return y
    if reduce != "psum":
        raise ValueError(
            f"{fn}: argument 'reduce' is for transpose=True; got reduce={reduce!r} with transpose=False"
        )
    if gather:
        x = jax.lax.all_gather(x, axis_name, tiled=True)
    if x.shape != (n,):
        raise ValueError(f"{fn}: argument 'x' must have length n = {n} (transpose=False), got {x.shape}")
    return op(weights, indices, indptr, x, shape=local_shape, transpose=False)[:rows]


def sharded_csrmv(blocks, x, *, mesh, axis_name, transpose=False, scatter=False, op=None):
    """A row-partitioned CSR product, from outside ``shard_map`` (works under ``jax.jit``).

    Parameters
    ----------
    blocks : RowBlocks
        From :func:`partition_csr_rows` (``parts`` equal to the size of ``axis_name``);
        NumPy or (better, once) sharded with ``blocks.shard(mesh, axis_name)``.
    x : jax.Array
        Length ``n`` (``transpose=False``) or ``m`` (``transpose=True``).
    mesh : jax.sharding.Mesh
    axis_name : str
        The mesh axis the rows are split over.
    transpose : bool
        ``False``: ``A @ x``; ``True``: ``A.T @ x``.
    scatter : bool
        ``transpose=True`` only: reduce with ``psum_scatter``, leaving the result sharded
        over ``axis_name`` (``n`` must be a multiple of the axis size) instead of
        replicated.
    op : callable, optional
        The product, with the signature of ``event_csrmv`` (the default).

    Returns
    -------
    jax.Array
        ``A @ x`` (length ``m``, sharded over ``axis_name``; replicated under an explicit
        mesh when ``m`` is not a multiple of the number of blocks) or ``A.T @ x`` (length
        ``n``, replicated, or sharded with ``scatter=True``).

    Raises
    ------
    ValueError
        For ``x`` of the wrong length, a mesh axis whose size is not ``blocks.parts``, and
        the cases of :func:`block_csrmv`.

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
    if scatter and not transpose:
        raise ValueError(f"{fn}: scatter=True is for transpose=True (the result of A @ x is already split)")
    w_spec = P() if blocks.homogeneous else P(axis_name)
    blk = P(axis_name)
    explicit = any(t == jax.sharding.AxisType.Explicit for t in getattr(mesh, "axis_types", ()))

    def call(f, specs, *args):
        if explicit:  # shard_map takes explicitly sharded arrays as typed: put them where it wants
            args = [jax.reshard(jnp.asarray(a), NamedSharding(mesh, sp)) for a, sp in zip(args, specs)]
        return f(*args)

    if transpose:
        pad = blocks.rows * blocks.parts - m
        if pad:
            x = jnp.concatenate([jnp.asarray(x), jnp.zeros((pad,), jnp.asarray(x).dtype)])
        reduce = "psum_scatter" if scatter else "psum"

        def body(w, i, p, xs):
            return block_csrmv(
                w, i, p, xs, shape=blocks.shape, axis_name=axis_name, transpose=True, reduce=reduce, op=op
            )

        specs = (w_spec, blk, blk, blk)
        f = jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=blk if scatter else P())
        return call(f, specs, *blocks.arrays(), x)

    def body(w, i, p, xs):
        return block_csrmv(w, i, p, xs, shape=blocks.shape, axis_name=axis_name, op=op)

    specs = (w_spec, blk, blk, P())
    f = jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=blk)
    y = call(f, specs, *blocks.arrays(), x)
    if y.shape[0] == m:
        return y
    if explicit:  # padded rows: an explicitly sharded array is sliced replicated
        y = jax.reshard(y, NamedSharding(mesh, P()))
    return y[:m]
