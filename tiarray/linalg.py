"""The ``linalg`` extension of the array API standard (2025.12).

Products, norms, ``trace``, ``diagonal``, ``outer``, ``cross``, ``matrix_power`` and
``matrix_transpose`` are computed by tiarray's Taichi kernels, on the array's device.

The decompositions and solvers (``cholesky``, ``qr``, ``svd``, ``svdvals``, ``eig``,
``eigvals``, ``eigh``, ``eigvalsh``, ``solve``, ``inv``, ``det``, ``slogdet``, ``pinv``, ``matrix_rank``, and the
``'nuc'``, ``2`` and ``-2`` matrix norms, which need singular values) call LAPACK through
NumPy on a NumPy view of the array's memory (no copy of the input); their results are
copied into new TiArrays.

Device limits
-------------
The LAPACK-backed functions run on the CPU only. Given an array in CUDA memory they raise
``NotImplementedError`` asking for ``x.to_device('cpu')`` (an explicit copy): tiarray never
moves data between devices behind your back. ``float16``/``bfloat16`` inputs are computed
in ``float32`` by LAPACK and the results cast back.

Examples
--------
>>> import tiarray as ta
>>> x = ta.asarray([[2.0, 0.0], [0.0, 3.0]])
>>> float(ta.linalg.det(x))
6.0
>>> ta.linalg.vector_norm(ta.asarray([3.0, 4.0])).item()
5.0
"""

from __future__ import annotations

import math
import operator
from typing import NamedTuple

import numpy as np

from . import _dtypes
from ._array_object import TiArray, c_strides
from ._elementwise_functions import multiply
from ._linear_algebra_functions import (
    _promote,
    _same_device,
    matmul,
    matrix_transpose,
    tensordot,
    vecdot,
)
from ._validate import AxisError, check_array, normalize_axes
from ._views import broadcast_shapes, broadcast_view

__all__ = [
    "cholesky", "cross", "det", "diagonal", "eig", "eigh", "eigvals", "eigvalsh", "inv", "matmul", "matrix_norm",
    "matrix_power", "matrix_rank", "matrix_transpose", "outer", "pinv", "qr", "slogdet", "solve",
    "svd", "svdvals", "tensordot", "trace", "vecdot", "vector_norm",
    "EigResult", "EighResult", "QRResult", "SlogdetResult", "SVDResult",
]  # fmt: skip


class EigResult(NamedTuple):
    """The result of :func:`eig`: ``(eigenvalues, eigenvectors)``."""

    eigenvalues: TiArray
    eigenvectors: TiArray


class EighResult(NamedTuple):
    """The result of :func:`eigh`: ``(eigenvalues, eigenvectors)``."""

    eigenvalues: TiArray
    eigenvectors: TiArray


class QRResult(NamedTuple):
    """The result of :func:`qr`: ``(Q, R)``."""

    Q: TiArray
    R: TiArray


class SlogdetResult(NamedTuple):
    """The result of :func:`slogdet`: ``(sign, logabsdet)``."""

    sign: TiArray
    logabsdet: TiArray


class SVDResult(NamedTuple):
    """The result of :func:`svd`: ``(U, S, Vh)``."""

    U: TiArray
    S: TiArray
    Vh: TiArray


# ----------------------------------------------------------------------------- helpers


def _name(func: str) -> str:
    return f"linalg.{func}"


def _floating(x: TiArray, func: str, arg: str = "x") -> None:
    if x._dtype.kind not in "fc":
        raise TypeError(
            f"{_name(func)}(): argument '{arg}' must have a floating-point dtype, got {x._dtype.name}"
        )


def _numeric(x: TiArray, func: str, arg: str = "x") -> None:
    if x._dtype.kind == "b":
        raise TypeError(f"{_name(func)}(): argument '{arg}' must have a numeric dtype, got bool")


def _matrix(x: TiArray, func: str, square: bool = False, arg: str = "x") -> None:
    if x.ndim < 2:
        raise ValueError(
            f"{_name(func)}(): argument '{arg}' must have at least two dimensions, got shape {x.shape}"
        )
    if square and x._shape[-1] != x._shape[-2]:
        raise ValueError(
            f"{_name(func)}(): argument '{arg}' must be a stack of square matrices, got shape {x.shape}"
        )


def _lapack_in(x: TiArray, func: str, arg: str = "x") -> np.ndarray:
    """A NumPy view of CPU data for LAPACK (half precision is promoted to float32)."""
    if x._device.kind != "cpu":
        raise NotImplementedError(
            f"{_name(func)}(): argument '{arg}' lives on {x._device}; this function calls LAPACK through NumPy and "
            "runs on the CPU only. Copy the array with x.to_device('cpu') first"
        )
    if x._dtype in (_dtypes.float16, _dtypes.bfloat16):
        from ._kernels.copy import copy_array

        x = copy_array(x, _dtypes.float32)
    return x._numpy_view()


def _out(a: np.ndarray, dtype: _dtypes.DType | None = None) -> TiArray:
    """Copy a NumPy result into a new TiArray (tiarray-owned, aligned CPU memory)."""
    from ._buffer import empty_owned
    from ._runtime import CPU

    a = np.asarray(a)
    dt = _dtypes.from_numpy_dtype(a.dtype) if dtype is None else dtype
    out = empty_owned(a.shape, dt, CPU)
    if out.size:
        np.copyto(out._numpy_view(), a, casting="unsafe")
    return out


def _real_dtype(x: TiArray) -> _dtypes.DType:
    return _dtypes.finfo_dtype(x._dtype)


def _linalg_errors(func: str):
    """Re-raise NumPy's LinAlgError with the function's name (it is a ValueError)."""

    class _Ctx:
        def __enter__(self):
            return self

        def __exit__(self, et, ev, tb):
            if et is not None and issubclass(et, np.linalg.LinAlgError):
                raise np.linalg.LinAlgError(f"{_name(func)}(): {ev}") from None
            return False

    return _Ctx()


# ----------------------------------------------------------------------------- LAPACK-backed


def cholesky(x, /, *, upper=False) -> TiArray:
    """Cholesky factor of Hermitian positive-definite matrices (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point.
    upper : bool, optional
        Return the upper factor ``U`` (``x = U^H U``) instead of the lower ``L``
        (``x = L L^H``). Default ``False``.

    Returns
    -------
    TiArray
        The triangular factors, dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    numpy.linalg.LinAlgError
        If a matrix is not positive-definite (a ``ValueError``).
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.cholesky(ta.asarray([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    func = "cholesky"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    a = _lapack_in(x, func)
    with _linalg_errors(func):
        return _out(np.linalg.cholesky(a, upper=bool(upper)), x._dtype)


def det(x, /) -> TiArray:
    """Determinant of square matrices (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point.

    Returns
    -------
    TiArray
        Shape ``x.shape[:-2]``, dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.det(ta.asarray([[1.0, 2.0], [3.0, 4.0]])).item()  # doctest: +ELLIPSIS
    -2.0000000000000004
    """
    func = "det"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        return _out(np.linalg.det(_lapack_in(x, func)), x._dtype)


def slogdet(x, /) -> SlogdetResult:
    """Sign and natural log of the absolute determinant (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point.

    Returns
    -------
    SlogdetResult
        ``sign`` (dtype of ``x``; a unit complex number for complex input, 0 for a
        singular matrix) and ``logabsdet`` (the real dtype; ``-inf`` for a singular matrix).

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> s, l = ta.linalg.slogdet(ta.asarray([[2.0, 0.0], [0.0, -3.0]]))
    >>> s.item(), round(l.item(), 6)
    (-1.0, 1.791759)
    """
    func = "slogdet"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        s, ld = np.linalg.slogdet(_lapack_in(x, func))
    return SlogdetResult(_out(s, x._dtype), _out(ld, _real_dtype(x)))


def inv(x, /) -> TiArray:
    """Inverse of square matrices (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point.

    Returns
    -------
    TiArray
        The inverses, dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    numpy.linalg.LinAlgError
        If a matrix is singular.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.inv(ta.asarray([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    func = "inv"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        return _out(np.linalg.inv(_lapack_in(x, func)), x._dtype)


def solve(x1, x2, /) -> TiArray:
    """Solve ``x1 @ out = x2`` (LAPACK, CPU only).

    Parameters
    ----------
    x1 : TiArray
        Coefficient matrices, shape ``(..., M, M)``, floating-point.
    x2 : TiArray
        Right-hand sides: shape ``(M,)`` (one vector, as ``(..., M, 1)``) or
        ``(..., M, K)`` (its batch axes broadcast with those of ``x1``).

    Returns
    -------
    TiArray
        The solution, dtype from the type promotion rules; shape ``(..., M)`` for a 1-D
        ``x2``, else ``(..., M, K)``.

    Raises
    ------
    TypeError
        If an operand is not floating-point.
    ValueError
        If the shapes are incompatible or the devices differ.
    numpy.linalg.LinAlgError
        If a matrix is singular.
    NotImplementedError
        If the operands are not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.solve(ta.asarray([[2.0, 0.0], [0.0, 4.0]]), ta.asarray([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    func = "solve"
    x1 = check_array(x1, _name(func), "x1")
    x2 = check_array(x2, _name(func), "x2")
    _floating(x1, func, "x1")
    _floating(x2, func, "x2")
    _same_device(x1, x2, _name(func))
    _matrix(x1, func, square=True, arg="x1")
    rd = _promote(x1, x2, _name(func))
    M = x1._shape[-1]
    if x2.ndim == 0 or x2._shape[-1 if x2.ndim == 1 else -2] != M:
        raise ValueError(
            f"{_name(func)}(): argument 'x2' must have shape (M,) or (..., M, K) with M = {M}, got {x2.shape}"
        )
    a = _lapack_in(x1, func, "x1")
    b = _lapack_in(x2, func, "x2")
    npd = rd.numpy if rd not in (_dtypes.float16, _dtypes.bfloat16) else np.float32
    a = a.astype(npd, copy=False)
    b = b.astype(npd, copy=False)
    with _linalg_errors(func):
        if x2.ndim == 1:
            bb = np.broadcast_to(b[:, None], a.shape[:-2] + (M, 1))
            r = np.linalg.solve(a, bb)[..., 0]
        else:
            try:
                batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            except ValueError:
                raise ValueError(
                    f"{_name(func)}(): the batch dimensions of x1 {x1.shape} and x2 {x2.shape} cannot be broadcast"
                ) from None
            r = np.linalg.solve(
                np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
            )
    return _out(r, rd)


def _complex_dtype(x: TiArray) -> _dtypes.DType:
    """The complex dtype of ``x``'s precision (half precision: complex64)."""
    return x._dtype if x._dtype.kind == "c" else _dtypes._COMPLEX_OF_FLOAT[x._dtype]


def eig(x, /) -> EigResult:
    """Eigenvalues and eigenvectors of general square matrices (LAPACK ``geev``, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point (real or complex), finite.

    Returns
    -------
    EigResult
        ``eigenvalues`` of shape ``(..., M)`` and ``eigenvectors`` of shape ``(..., M, M)``
        (column ``i`` belongs to eigenvalue ``i``, normalized to unit length), both of the
        complex dtype of ``x``'s precision (``complex64`` for ``float32`` and half
        precision, ``complex128`` for ``float64``), also when every eigenvalue is real.
        The order is LAPACK's (unspecified by the standard).

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices; ``numpy.linalg.LinAlgError`` (a
        ``ValueError``) if it holds infinities or NaNs or the iteration does not converge.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> w, v = ta.linalg.eig(ta.asarray([[0.0, -1.0], [1.0, 0.0]]))
    >>> w.tolist()
    [1j, -1j]
    >>> w.dtype, v.shape
    (tiarray.complex128, (2, 2))
    """
    func = "eig"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    cd = _complex_dtype(x)
    with _linalg_errors(func):
        w, v = np.linalg.eig(_lapack_in(x, func))
    return EigResult(_out(w, cd), _out(v, cd))


def eigvals(x, /) -> TiArray:
    """Eigenvalues of general square matrices (LAPACK ``geev``, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point (real or complex), finite.

    Returns
    -------
    TiArray
        Shape ``(..., M)``, the complex dtype of ``x``'s precision (see :func:`eig`), in
        LAPACK's order.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices; ``numpy.linalg.LinAlgError`` (a
        ``ValueError``) if it holds infinities or NaNs or the iteration does not converge.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.eigvals(ta.asarray([[2.0, 1.0], [0.0, 3.0]])).tolist()
    [(2+0j), (3+0j)]
    """
    func = "eigvals"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        return _out(np.linalg.eigvals(_lapack_in(x, func)), _complex_dtype(x))


def eigh(x, /) -> EighResult:
    """Eigenvalues and eigenvectors of Hermitian (symmetric) matrices (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point; only the lower triangle is read.

    Returns
    -------
    EighResult
        ``eigenvalues`` (ascending, the real dtype) and ``eigenvectors`` (columns, dtype of
        ``x``).

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.eigh(ta.asarray([[2.0, 0.0], [0.0, 1.0]])).eigenvalues.tolist()
    [1.0, 2.0]
    """
    func = "eigh"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        w, v = np.linalg.eigh(_lapack_in(x, func))
    return EighResult(_out(w, _real_dtype(x)), _out(v, x._dtype))


def eigvalsh(x, /) -> TiArray:
    """Eigenvalues of Hermitian (symmetric) matrices, ascending (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, floating-point.

    Returns
    -------
    TiArray
        Shape ``(..., M)``, the real dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` is not a stack of square matrices.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.eigvalsh(ta.asarray([[2.0, 1.0], [1.0, 2.0]])).tolist()
    [1.0, 3.0]
    """
    func = "eigvalsh"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func, square=True)
    with _linalg_errors(func):
        return _out(np.linalg.eigvalsh(_lapack_in(x, func)), _real_dtype(x))


def qr(x, /, *, mode="reduced") -> QRResult:
    """QR decomposition (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.
    mode : {'reduced', 'complete'}, optional
        ``'reduced'``: ``Q`` is ``(..., M, K)``, ``R`` is ``(..., K, N)``, ``K = min(M, N)``;
        ``'complete'``: ``Q`` is ``(..., M, M)``, ``R`` is ``(..., M, N)``.

    Returns
    -------
    QRResult
        ``Q`` with orthonormal columns and upper-triangular ``R``, dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` has fewer than two dimensions or ``mode`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> q, r = ta.linalg.qr(ta.asarray([[1.0, 0.0], [0.0, 2.0]]))
    >>> abs(r.tolist()[1][1])
    2.0
    """
    func = "qr"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    if mode not in ("reduced", "complete"):
        raise ValueError(f"{_name(func)}(): argument 'mode' must be 'reduced' or 'complete', got {mode!r}")
    with _linalg_errors(func):
        q, r = np.linalg.qr(_lapack_in(x, func), mode=mode)
    return QRResult(_out(q, x._dtype), _out(r, x._dtype))


def svd(x, /, *, full_matrices=True) -> SVDResult:
    """Singular value decomposition ``x = U @ diag(S) @ Vh`` (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.
    full_matrices : bool, optional
        ``True``: ``U`` is ``(..., M, M)`` and ``Vh`` is ``(..., N, N)``; ``False``: they
        are ``(..., M, K)`` and ``(..., K, N)`` with ``K = min(M, N)``. Default ``True``.

    Returns
    -------
    SVDResult
        ``U``, ``S`` (descending, the real dtype, shape ``(..., K)``) and ``Vh``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` has fewer than two dimensions.
    numpy.linalg.LinAlgError
        If the SVD does not converge.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.svd(ta.asarray([[3.0, 0.0], [0.0, 4.0]])).S.tolist()
    [4.0, 3.0]
    """
    func = "svd"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    with _linalg_errors(func):
        u, s, vh = np.linalg.svd(_lapack_in(x, func), full_matrices=bool(full_matrices))
    return SVDResult(_out(u, x._dtype), _out(s, _real_dtype(x)), _out(vh, x._dtype))


def svdvals(x, /) -> TiArray:
    """Singular values, descending (LAPACK, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.

    Returns
    -------
    TiArray
        Shape ``(..., min(M, N))``, the real dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` has fewer than two dimensions.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.svdvals(ta.asarray([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    func = "svdvals"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    return _out(_svdvals_np(x, func), _real_dtype(x))


def _svdvals_np(x: TiArray, func: str) -> np.ndarray:
    with _linalg_errors(func):
        return np.linalg.svd(_lapack_in(x, func), compute_uv=False)


def _rtol_np(rtol, x: TiArray, func: str):
    if rtol is None:
        return max(x._shape[-2:]) * float(np.finfo(_lapack_in(x, func).dtype).eps)
    if isinstance(rtol, TiArray):
        if rtol._dtype.kind not in "f":
            raise TypeError(
                f"{_name(func)}(): argument 'rtol' must be real floating-point, got {rtol._dtype.name}"
            )
        return _lapack_in(rtol, func, "rtol")
    if isinstance(rtol, (int, float)) and not isinstance(rtol, bool):
        return float(rtol)
    raise TypeError(f"{_name(func)}(): argument 'rtol' must be a float, a TiArray or None, got {rtol!r}")


def pinv(x, /, *, rtol=None) -> TiArray:
    """Moore-Penrose pseudo-inverse (LAPACK SVD, CPU only).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.
    rtol : float or TiArray, optional
        Singular values at most ``rtol * largest`` are treated as zero. Default
        ``max(M, N) * eps`` of the dtype.

    Returns
    -------
    TiArray
        Shape ``(..., N, M)``, dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` has fewer than two dimensions.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.pinv(ta.asarray([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    func = "pinv"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    r = _rtol_np(rtol, x, func)
    with _linalg_errors(func):
        return _out(np.linalg.pinv(_lapack_in(x, func), rcond=r), x._dtype)


def matrix_rank(x, /, *, rtol=None) -> TiArray:
    """Rank of matrices: the number of singular values above ``rtol * largest``.

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.
    rtol : float or TiArray, optional
        Relative tolerance (broadcast against the batch shape). Default
        ``max(M, N) * eps`` of the dtype.

    Returns
    -------
    TiArray
        Shape ``x.shape[:-2]``, the default integer dtype.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``x`` has fewer than two dimensions.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.matrix_rank(ta.asarray([[1.0, 2.0], [2.0, 4.0]])).item()
    1
    """
    func = "matrix_rank"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    s = _svdvals_np(x, func)
    r = _rtol_np(rtol, x, func)
    if s.shape[-1] == 0:
        return _out(np.zeros(s.shape[:-1], dtype=np.int64))
    tol = s.max(axis=-1, keepdims=True) * np.asarray(r)[..., None]
    return _out(np.count_nonzero(s > tol, axis=-1).astype(np.int64), _dtypes.int64)


# ----------------------------------------------------------------------------- by our kernels


def diagonal(x, /, *, offset=0) -> TiArray:
    """The diagonals of the matrices in ``x`` (a view: no data is copied).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``.
    offset : int, optional
        ``0`` the main diagonal, ``> 0`` above it, ``< 0`` below it.

    Returns
    -------
    TiArray
        Shape ``(..., L)``; a view with stride ``strides[-2] + strides[-1]``.

    Raises
    ------
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.diagonal(ta.asarray([[1, 2], [3, 4]]), offset=1).tolist()
    [2]
    """
    func = "diagonal"
    x = check_array(x, _name(func))
    _matrix(x, func)
    offset = operator.index(offset)
    M, N = x._shape[-2:]
    sm, sn = x._strides[-2:]
    if offset >= 0:
        L = max(0, min(M, N - offset))
        start = offset * sn
    else:
        L = max(0, min(M + offset, N))
        start = -offset * sm
    ptr = x._ptr + (start * x._dtype.itemsize if L else 0)
    return x._view(ptr, x._shape[:-2] + (L,), x._strides[:-2] + (sm + sn,))


def _sum_dtype(x: TiArray) -> _dtypes.DType:
    d = x._dtype
    if d.kind == "i" and d.itemsize < 8:
        return _dtypes.int64
    if d.kind == "u" and d.itemsize < 8:
        return _dtypes.uint64
    return d


def trace(x, /, *, offset=0, dtype=None) -> TiArray:
    """Sum of the diagonals of the matrices in ``x``.

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, numeric.
    offset : int, optional
        Which diagonal (as :func:`diagonal`).
    dtype : DType, optional
        The result dtype. Default: as ``sum`` - the dtype of ``x``, except that integers
        narrower than the default integer give ``int64`` (signed) or ``uint64`` (unsigned).

    Returns
    -------
    TiArray
        Shape ``x.shape[:-2]``.

    Raises
    ------
    TypeError
        If ``x`` is not numeric.
    ValueError
        If ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.trace(ta.asarray([[1, 2], [3, 4]])).item()
    5
    """
    from ._kernels import linalg as _k
    from ._kernels.copy import copy_array

    func = "trace"
    x = check_array(x, _name(func))
    _numeric(x, func)
    _matrix(x, func)
    rd = _sum_dtype(x) if dtype is None else _dtypes.to_dtype(dtype, func=_name(func))
    d = diagonal(x, offset=offset)
    s = _k.reduce(d, (d.ndim - 1,), _k.SUM)
    return s if s._dtype is rd else copy_array(s, rd)


def outer(x1, x2, /) -> TiArray:
    """Outer product of two vectors: ``out[i, j] = x1[i] * x2[j]``.

    Parameters
    ----------
    x1 : TiArray
        1-D, numeric.
    x2 : TiArray
        1-D, numeric.

    Returns
    -------
    TiArray
        Shape ``(len(x1), len(x2))``, dtype from the type promotion rules.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If an operand is not 1-D or the devices differ.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.outer(ta.asarray([1, 2]), ta.asarray([1, 10])).tolist()
    [[1, 10], [2, 20]]
    """
    func = "outer"
    x1 = check_array(x1, _name(func), "x1")
    x2 = check_array(x2, _name(func), "x2")
    _numeric(x1, func, "x1")
    _numeric(x2, func, "x2")
    _same_device(x1, x2, _name(func))
    if x1.ndim != 1 or x2.ndim != 1:
        raise ValueError(f"{_name(func)}(): arguments must be 1-D, got shapes {x1.shape} and {x2.shape}")
    _promote(x1, x2, _name(func))
    # An element-wise product of broadcast views, not a GEMM with an inner size of 1: the
    # GEMM accumulates from +0, so 0 * -1 came out +0.0 where x1[i] * x2[j] is -0.0.
    a = x1._view(x1._ptr, (x1._shape[0], 1), (x1._strides[0], 0))
    b = x2._view(x2._ptr, (1, x2._shape[0]), (0, x2._strides[0]))
    return multiply(a, b)


_CROSS_CT = {
    "float16": _dtypes.float32, "bfloat16": _dtypes.float32, "float32": _dtypes.float32,
    "float64": _dtypes.float64, "complex64": _dtypes.complex64, "complex128": _dtypes.complex128,
    "int8": _dtypes.int64, "int16": _dtypes.int64, "int32": _dtypes.int64, "int64": _dtypes.int64,
    "uint8": _dtypes.uint64, "uint16": _dtypes.uint64, "uint32": _dtypes.uint64, "uint64": _dtypes.uint64,
}  # fmt: skip


def cross(x1, x2, /, *, axis=-1) -> TiArray:
    """Cross product of 3-element vectors.

    Parameters
    ----------
    x1 : TiArray
        Numeric, with size 3 along ``axis``.
    x2 : TiArray
        Numeric, with size 3 along ``axis``; the other axes broadcast with ``x1``'s.
    axis : int, optional
        The axis holding the vectors, counted from the end: in ``[-N, -1]`` with
        ``N = min(x1.ndim, x2.ndim)``. Default ``-1``.

    Returns
    -------
    TiArray
        The broadcast shape, dtype from the type promotion rules.

    Raises
    ------
    TypeError
        If an operand is not numeric.
    ValueError
        If the sizes along ``axis`` are not 3, ``axis`` is not negative and in range, or
        the shapes do not broadcast.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.cross(ta.asarray([1, 0, 0]), ta.asarray([0, 1, 0])).tolist()
    [0, 0, 1]
    """
    from ._buffer import empty_owned
    from ._kernels import linalg as _k
    from ._kernels.copy import copy_array

    func = "cross"
    x1 = check_array(x1, _name(func), "x1")
    x2 = check_array(x2, _name(func), "x2")
    _numeric(x1, func, "x1")
    _numeric(x2, func, "x2")
    _same_device(x1, x2, _name(func))
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError(f"{_name(func)}(): arguments must have at least one dimension")
    ax = operator.index(axis)
    n = min(x1.ndim, x2.ndim)
    if not -n <= ax <= -1:
        raise AxisError(
            f"{_name(func)}(): argument 'axis' must be a negative axis in [-{n}, -1] (counted from the end), got {axis}"
        )
    if x1._shape[ax] != 3 or x2._shape[ax] != 3:
        raise ValueError(
            f"{_name(func)}(): the arrays must have size 3 along axis {axis}, got shapes {x1.shape} and {x2.shape}"
        )
    rd = _promote(x1, x2, _name(func))
    ct = _CROSS_CT[rd.name]
    a = _last(x1, x1.ndim + ax)
    b = _last(x2, x2.ndim + ax)
    try:
        bshape = broadcast_shapes(a._shape[:-1], b._shape[:-1], func=_name(func))
    except ValueError:
        raise ValueError(
            f"{_name(func)}(): the shapes {x1.shape} and {x2.shape} cannot be broadcast together"
        ) from None
    a = _prep(broadcast_view(a, bshape + (3,)), ct)
    b = _prep(broadcast_view(b, bshape + (3,)), ct)
    out = empty_owned(bshape + (3,), ct, x1._device)
    _k.cross(a, b, out, bshape, ct)
    if ct is not rd:
        out = copy_array(out, rd)
    # the vector axis goes back where it was
    pos = out.ndim + ax
    order = list(range(out.ndim - 1))
    order.insert(pos, out.ndim - 1)
    return out._view(out._ptr, tuple(out._shape[d] for d in order), tuple(out._strides[d] for d in order))


def _last(x: TiArray, axis: int) -> TiArray:
    order = [d for d in range(x.ndim) if d != axis] + [axis]
    return x._view(x._ptr, tuple(x._shape[d] for d in order), tuple(x._strides[d] for d in order))


def _prep(x: TiArray, ct: _dtypes.DType) -> TiArray:
    """Operands the cross kernel can read: no bfloat16/bool, complex when computing complex."""
    from ._kernels.copy import copy_array

    if x._dtype is _dtypes.bfloat16 or (ct.kind == "c" and x._dtype.kind != "c"):
        return copy_array(x, ct)
    return x


def matrix_power(x, n, /) -> TiArray:
    """Raise square matrices to an integer power (repeated squaring with :func:`matmul`).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, M)``, numeric (floating-point for negative ``n``).
    n : int
        The exponent. ``0`` gives identity matrices; a negative ``n`` inverts first
        (LAPACK, CPU only).

    Returns
    -------
    TiArray
        Shape and dtype of ``x``.

    Raises
    ------
    TypeError
        If ``n`` is not an int, or ``x`` is not numeric (floating-point for ``n < 0``).
    ValueError
        If ``x`` is not a stack of square matrices.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.matrix_power(ta.asarray([[1, 1], [0, 1]]), 3).tolist()
    [[1, 3], [0, 1]]
    """
    from ._buffer import empty_owned
    from ._kernels.copy import copy_array, copy_into

    func = "matrix_power"
    x = check_array(x, _name(func))
    _numeric(x, func)
    _matrix(x, func, square=True)
    if isinstance(n, bool):
        raise TypeError(f"{_name(func)}(): argument 'n' must be an int, got a bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{_name(func)}(): argument 'n' must be an int, got {n!r}") from None
    if n == 0:
        out = empty_owned(x._shape, x._dtype, x._device, zero=True)
        if out.size:
            one = _one(x._dtype, x._device)
            d = diagonal(out)
            copy_into(d, broadcast_view(one, d._shape))
        return out
    if n < 0:
        _floating(x, func)
        x = inv(x)
        n = -n
    result = None
    base = x
    while True:
        if n & 1:
            result = base if result is None else matmul(result, base)
        n >>= 1
        if not n:
            break
        base = matmul(base, base)
    return copy_array(result) if result is x else result


def _one(dtype: _dtypes.DType, device) -> TiArray:
    from ._interchange import asarray

    if dtype is _dtypes.bfloat16:
        from ._kernels.copy import copy_array

        return copy_array(asarray(np.ones((), np.float32), device=device), dtype)
    return asarray(np.ones((), dtype=dtype.numpy), device=device)


# ----------------------------------------------------------------------------- norms


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2) -> TiArray:
    """Vector norm over one or more axes.

    Parameters
    ----------
    x : TiArray
        Floating-point input.
    axis : int or tuple of ints, optional
        The axes to reduce (their elements form the vector); all of them by default.
    keepdims : bool, optional
        Keep the reduced axes with size one. Default ``False``.
    ord : int or float, optional
        ``2`` (default, Euclidean), ``1``, ``inf`` (max abs), ``-inf`` (min abs), ``0``
        (number of non-zero elements), or any other ``p``: ``sum(abs(x)**p)**(1/p)``.

    Returns
    -------
    TiArray
        The real floating dtype of ``x`` (``float32`` for ``complex64``).

    Raises
    ------
    TypeError
        If ``x`` is not floating-point or ``ord`` is not a number.
    ValueError
        If ``ord`` is ``inf``/``-inf`` over zero elements.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.vector_norm(ta.asarray([[3.0, 4.0], [6.0, 8.0]]), axis=1).tolist()
    [5.0, 10.0]
    """
    from ._kernels import linalg as _k

    func = "vector_norm"
    x = check_array(x, _name(func))
    _floating(x, func)
    axes = (
        tuple(range(x.ndim))
        if axis is None
        else normalize_axes(axis, x.ndim, _name(func), none_is_all=False, sort=False, lists=True)
    )
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise TypeError(f"{_name(func)}(): argument 'ord' must be a number, got {ord!r}")
    ord = float(ord)
    n_red = math.prod(x._shape[d] for d in axes)
    if ord == math.inf:
        op, fin, p = _k.MAXABS, _k.FIN_NONE, 0.0
    elif ord == -math.inf:
        op, fin, p = _k.MINABS, _k.FIN_NONE, 0.0
    elif ord == 0:
        op, fin, p = _k.COUNTNZ, _k.FIN_NONE, 0.0
    elif ord == 1:
        op, fin, p = _k.SUMABS, _k.FIN_NONE, 1.0
    elif ord == 2:
        op, fin, p = _k.SUMSQ, _k.FIN_SQRT, 2.0
    else:
        op, fin, p = _k.SUMPOW, _k.FIN_ROOT, ord
    if n_red == 0 and op in (_k.MAXABS, _k.MINABS):
        raise ValueError(
            f"{_name(func)}(): ord={ord} of zero elements is undefined (the reduced axes are empty)"
        )
    r = _k.reduce(x, tuple(sorted(axes)), op, p=p, fin=fin)
    return _finish(r, x, axes, keepdims)


def _finish(r: TiArray, x: TiArray, axes: tuple, keepdims: bool) -> TiArray:
    from ._kernels.copy import copy_array

    rd = _real_dtype(x)
    if r._dtype is not rd:
        r = copy_array(r, rd)
    if keepdims:
        shape = tuple(1 if d in axes else s for d, s in enumerate(x._shape))
        r = r._view(r._ptr, shape, c_strides(shape))
    return r


def matrix_norm(x, /, *, keepdims=False, ord="fro") -> TiArray:
    """Matrix norm of the matrices in ``x`` (last two axes).

    Parameters
    ----------
    x : TiArray
        Shape ``(..., M, N)``, floating-point.
    keepdims : bool, optional
        Keep the two reduced axes with size one. Default ``False``.
    ord : {'fro', 'nuc', 1, -1, 2, -2, inf, -inf}, optional
        ``'fro'`` (default, Frobenius), ``'nuc'`` (sum of singular values), ``1``/``-1``
        (max/min column abs sum), ``inf``/``-inf`` (max/min row abs sum), ``2``/``-2``
        (largest/smallest singular value). ``'nuc'`` and ``+-2`` use LAPACK (CPU only).

    Returns
    -------
    TiArray
        Shape ``x.shape[:-2]``, the real floating dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not floating-point.
    ValueError
        If ``ord`` is not one of the above or ``x`` has fewer than two dimensions.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.linalg.matrix_norm(ta.asarray([[1.0, -2.0], [3.0, 4.0]]), ord=1).item()
    6.0
    """
    from ._kernels import linalg as _k
    from ._kernels.copy import copy_array

    func = "matrix_norm"
    x = check_array(x, _name(func))
    _floating(x, func)
    _matrix(x, func)
    nd = x.ndim
    axes = (nd - 2, nd - 1)
    if isinstance(ord, str):
        if ord == "fro":
            r = _k.reduce(x, axes, _k.SUMSQ, fin=_k.FIN_SQRT)
            return _finish(r, x, axes, keepdims)
        if ord == "nuc":
            s = _svdvals_np(x, func)
            return _finish(_out(s.sum(axis=-1)), x, axes, keepdims)
        raise ValueError(
            f"{_name(func)}(): argument 'ord' must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise ValueError(
            f"{_name(func)}(): argument 'ord' must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
        )
    if ord in (2, -2):
        s = _svdvals_np(x, func)
        if s.shape[-1] == 0:
            raise ValueError(f"{_name(func)}(): ord={ord} of an empty matrix is undefined")
        v = s.max(axis=-1) if ord == 2 else s.min(axis=-1)
        return _finish(_out(v), x, axes, keepdims)
    if ord in (1, -1, math.inf, -math.inf):
        # 1: max over columns of the column sums; inf: max over rows of the row sums
        sum_axis = nd - 2 if ord in (1, -1) else nd - 1
        other = nd - 1 if sum_axis == nd - 2 else nd - 2
        if x._shape[other] == 0:
            raise ValueError(
                f"{_name(func)}(): ord={ord} of a matrix with no {'columns' if ord in (1, -1) else 'rows'} is undefined"
            )
        sums = _k.reduce(x, (sum_axis,), _k.SUMABS)  # shape (..., other)
        r = _k.reduce(sums, (sums.ndim - 1,), _k.MAX if ord > 0 else _k.MIN)
        if r._dtype is not _real_dtype(x):
            r = copy_array(r, _real_dtype(x))
        return _finish(r, x, axes, keepdims)
    raise ValueError(
        f"{_name(func)}(): argument 'ord' must be 'fro', 'nuc', 1, -1, 2, -2, inf or -inf, got {ord!r}"
    )
