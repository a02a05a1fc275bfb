"""``CSR``: an immutable sparse matrix object over the function API, with a cached transpose.

The functions (:func:`event_csrmv` ...) take the three CSR arrays on every call and can
only walk the matrix the way it is stored: ``A.T @ s`` (the spiking direction) visits the
rows of active events, but ``A @ s`` must read every column index to find the active
ones. A ``CSR`` object is immutable by contract, so it can build the structure of
``A.T`` once (on first need) and keep it: then ``A @ s`` is an event scatter over the
rows of ``A.T`` of the active events, and ``x @ A`` / ``A.T @ x`` for a float ``x`` is a
gather. This is what a prebuilt transposed ``torch.sparse_csr_tensor`` gives torch.
"""

from __future__ import annotations

import numpy as np

from . import _csr, _validate, _xp

__all__ = ["CSR"]

_PREPARE = (
    "this product needs the transposed structure of the matrix (A @ s with events, A.T @ v with floats), "
    "built from the index values at the first such product, which a traced computation cannot read; "
    "call A.prepare() once before torch.compile"
)


class CSR:
    r"""An immutable CSR matrix ``A`` of shape ``(m, n)`` with ``@``, ``.T`` and a cached transpose.

    ``A @ x`` and ``x @ A`` (``A.T @ x``) dispatch to :func:`event_csrmv` /
    :func:`csrmv` (1-D ``x``) or :func:`event_csrmm` / :func:`csrmm` (2-D ``x``), choosing
    for each direction the algorithm that reads the least memory:

    ====================  ===============================================================
    product               how
    ====================  ===============================================================
    ``A.T @ s``, bool     event scatter over the rows of ``A`` whose event is true
    ``A @ s``, bool       event scatter over the rows of the cached ``A.T`` (active columns)
    ``A @ v``, float      gather over the rows of ``A``
    ``A.T @ v``, float    gather over the rows of the cached ``A.T``
    ====================  ===============================================================

    The transposed structure (``csr_transpose``: two kernels and a host prefix sum) is
    built on the first product that needs it and kept; it holds a second copy of the
    connectivity (``4 nnz + 4 m`` bytes for int32 indices, plus ``4 nnz`` for per-synapse
    float32 weights). The object is immutable *by contract*: mutating the arrays it was
    built from afterwards gives products with stale transposes. Use :meth:`with_weights`
    for new weights on the same connectivity (plasticity): it reuses the transposed
    structure and permutes the new weights (``w[perm]``, differentiable).

    Parameters
    ----------
    weights : array of shape (), (1,) or (nnz,), float32 or float64, or a Python float
        One weight for every synapse, or one per synapse.
    indices, indptr : arrays, int32 or int64
        Column indices (nnz,) and row pointers (m + 1,), of any supported framework; they
        must be concrete (the transpose is built from their values) and are validated
        once here.
    shape : tuple of two ints
        ``(m, n)``.

    Attributes
    ----------
    weights, indices, indptr : arrays
        As given (homogeneous weights with shape ``()``).
    shape : tuple of int
    nnz : int
    T : CSR
        The transpose, sharing this object's arrays (no copy until a product needs the
        transposed structure); ``A.T.T is A``.

    Raises
    ------
    TypeError, ValueError, IndexError
        As :func:`csrmv` for invalid connectivity.

    Examples
    --------
    >>> import numpy as np
    >>> from tiarray.operators import CSR
    >>> A = CSR(np.array([1.0, 2.0, 3.0], np.float32), np.array([0, 2, 1]), np.array([0, 2, 3]),
    ...         shape=(2, 3))
    >>> A @ np.array([True, False, True])        # event-driven over the cached A.T
    array([3., 0.], dtype=float32)
    >>> np.array([True, True]) @ A               # A.T @ s: over the active rows of A
    array([1., 3., 2.], dtype=float32)
    >>> A.T @ np.array([1.0, 1.0], np.float32)   # a gather over the cached A.T
    array([1., 3., 2.], dtype=float32)
    >>> A.todense()
    array([[1., 0., 2.],
           [0., 3., 0.]], dtype=float32)
    """

    __slots__ = ("weights", "indices", "indptr", "shape", "_t", "_struct_t", "_is_t", "_build")
    __array_ufunc__ = None  # ``ndarray @ CSR`` defers to CSR.__rmatmul__

    def __init__(self, weights, indices, indptr, *, shape):
        func = "CSR"
        w, idx, ptr, m, n = _validate.csr(func, weights, indices, indptr, shape, like=indices)
        if _xp.is_traced(idx) or _xp.is_traced(ptr):
            raise TypeError(
                "CSR(): 'indices' and 'indptr' must be concrete arrays (they are traced here): build the CSR "
                "object outside jax.jit / torch.compile and close over it"
            )
        self.weights = w
        self.indices = idx
        self.indptr = ptr
        self.shape = (m, n)
        self._t = None  # the CSR of A.T (a transposed view until a product needs its arrays)
        self._struct_t = None  # (indices_t, indptr_t, perm) of A.T, built once
        self._is_t = False  # this object is the .T view of another: its arrays are the other's
        # the transpose's builder reads the index values: torch.compile runs it eagerly (a
        # graph break; under fullgraph=True an error that says to call prepare() first)
        self._build = _xp.eager_only(self._build_transpose, idx, _PREPARE)

    # ------------------------------------------------------------------ structure

    @property
    def nnz(self) -> int:
        return int(self.indices.shape[0])

    @property
    def T(self) -> CSR:
        if self._t is None:
            t = CSR.__new__(CSR)
            t.weights, t.indices, t.indptr = self.weights, self.indices, self.indptr
            t.shape = (self.shape[1], self.shape[0])
            t._t = self
            t._struct_t = None
            t._is_t = True
            self._t = t
        return self._t

    def _stored(self):
        """``(weights, indices, indptr, shape)`` of the stored matrix ``S`` and whether ``self`` is ``S.T``."""
        if self._is_t:
            o = self._t
            return o.weights, o.indices, o.indptr, o.shape, True
        return self.weights, self.indices, self.indptr, self.shape, False

    def _transposed_arrays(self):
        """The CSR arrays of ``S.T`` (``S`` the stored matrix), built once and cached on ``S``."""
        owner = self._t if self._is_t else self
        if owner._struct_t is None:
            owner._build()
        it, pt, perm = owner._struct_t[:3]
        w = owner.weights
        if len(w.shape) == 0:
            return w, it, pt
        if len(owner._struct_t) == 4:  # the permuted weights, kept (the object is immutable)
            return owner._struct_t[3], it, pt
        wt = w[perm]
        # a traced permutation stays in its trace; torch weights that require grad are
        # permuted on every product: kept, w[perm] carried its autograd graph (a second
        # backward raised) or, made under no_grad, none (the weight gradient was lost)
        if not _xp.is_traced(wt) and not getattr(w, "requires_grad", False):
            owner._struct_t = (it, pt, perm, wt)
        return wt, it, pt

    def _build_transpose(self):
        if _xp.is_traced(self.indices) or _xp.is_traced(self.indptr):  # not run eagerly after all
            raise RuntimeError(f"CSR @: {_PREPARE}")
        _, it, pt, perm = _csr.csr_transpose(
            np.float32(0), self.indices, self.indptr, shape=self.shape, return_permutation=True
        )
        self._struct_t = (it, pt, perm)

    # ------------------------------------------------------------------ products

    def _product(self, x, direction_t: bool):
        """``self @ x`` (``direction_t=False``) or ``self.T @ x`` (``True``)."""
        x = _validate.as_array("CSR @", "x", x)
        w, idx, ptr, shape, is_t = self._stored()
        want_t = direction_t != is_t  # multiply by S.T (True) or S (False)
        event = _xp.dtype_of(x).kind == "b"
        nd = len(x.shape)
        if nd not in (1, 2):
            raise ValueError(f"CSR @: the operand must be 1-D or 2-D, got shape {tuple(x.shape)}")
        if event:
            f = _csr.event_csrmv if nd == 1 else _csr.event_csrmm
        else:
            f = _csr.csrmv if nd == 1 else _csr.csrmm
        # events: scatter over the active rows (of S for S.T @ s, of S.T for S @ s);
        # floats: gather over the rows (of S for S @ v, of S.T for S.T @ v)
        use_stored = want_t if event else not want_t
        if use_stored:
            return f(w, idx, ptr, x, shape=shape, transpose=want_t)
        wt, it, pt = self._transposed_arrays()
        return f(wt, it, pt, x, shape=(shape[1], shape[0]), transpose=not want_t)

    def __matmul__(self, x):
        return self._product(x, False)

    def __rmatmul__(self, x):
        # x @ A = (A.T @ x.T).T; for 2-D x: (x @ A).T = A.T @ x.T
        if len(getattr(x, "shape", ())) == 2:
            return self._product(x.T, True).T
        return self._product(x, True)

    def prepare(self) -> CSR:
        """Build the cached transposed structure now, and return ``self``.

        The first product that needs it (``A @ s`` with events, ``A.T @ v`` with floats)
        builds it otherwise. Under ``torch.compile`` that build runs eagerly (a graph
        break), and ``fullgraph=True`` refuses it: call this before compiling.

        Examples
        --------
        >>> import numpy as np
        >>> from tiarray.operators import CSR
        >>> A = CSR(np.ones(3, np.float32), np.array([0, 2, 1]), np.array([0, 2, 3]), shape=(2, 3)).prepare()
        >>> (A @ np.array([True, False, True])).tolist()
        [2.0, 0.0]
        """
        self._transposed_arrays()
        return self

    def dot(self, x):
        """``A @ x``, as a method: the form ``torch.compile(fullgraph=True)`` can trace.

        Dynamo (torch 2.13) does not call the ``@`` of a non-tensor object beside a tensor
        (``A @ x`` and ``x @ A`` break the graph: "Failed to convert args/kwargs to proxy");
        it traces a method call. ``x @ A`` is ``A.T.dot(x)`` (1-D ``x``). A product that
        needs the transposed structure needs :meth:`prepare` before compiling.

        Examples
        --------
        >>> import numpy as np
        >>> from tiarray.operators import CSR
        >>> A = CSR(np.ones(3, np.float32), np.array([0, 2, 1]), np.array([0, 2, 3]), shape=(2, 3))
        >>> A.dot(np.array([True, False, True])).tolist(), A.T.dot(np.array([True, True])).tolist()
        ([2.0, 0.0], [1.0, 1.0, 1.0])
        """
        return self._product(x, False)

    def with_weights(self, weights) -> CSR:
        """A CSR with the same connectivity and new weights, sharing the cached transpose.

        Parameters
        ----------
        weights : array of shape (), (1,) or (nnz,), or a Python float

        Returns
        -------
        CSR

        Examples
        --------
        >>> import numpy as np
        >>> from tiarray.operators import CSR
        >>> A = CSR(np.ones(3, np.float32), np.array([0, 2, 1]), np.array([0, 2, 3]), shape=(2, 3))
        >>> (A.with_weights(np.float32(2.0)) @ np.array([True, True, True])).tolist()
        [4.0, 2.0]
        """
        w, idx, ptr, shape, is_t = self._stored()
        new = CSR(weights, idx, ptr, shape=shape)
        owner = self._t if is_t else self
        if owner._struct_t is not None:
            new._struct_t = owner._struct_t[:3]  # the structure, not the old permuted weights
        return new.T if is_t else new

    def todense(self):
        """The dense matrix (``csr_to_dense``), of the arrays' framework."""
        w, idx, ptr, shape, is_t = self._stored()
        d = _csr.csr_to_dense(w, idx, ptr, shape=shape)
        return d.T if is_t else d

    def __repr__(self) -> str:
        return f"CSR(shape={self.shape}, nnz={self.nnz}, dtype={_xp.dtype_of(self.weights).name})"
