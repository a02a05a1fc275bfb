"""The ``fft`` extension of the array API standard (2024.12).

The transforms (``fft``, ``ifft``, ``fftn``, ``ifftn``, ``rfft``, ``irfft``, ``rfftn``,
``irfftn``, ``hfft``, ``ihfft``) call NumPy's pocketfft on a NumPy view of the array's
memory (no copy of the input) and copy the result into a new TiArray. They keep the
precision of the input (``complex64`` in, ``complex64`` out; ``float32`` in, ``complex64``
out for ``rfft``). ``fftfreq`` and ``rfftfreq`` are computed by a Taichi kernel on the
requested device, ``fftshift`` and ``ifftshift`` are :func:`tiarray.roll` (strided copies
on the array's device).

Device limits
-------------
The transforms run on the CPU only: given an array in CUDA memory they raise
``NotImplementedError`` asking for ``x.to_device('cpu')``. ``float16``/``bfloat16``
inputs are transformed in single precision.

Input dtypes follow the standard: ``fft``, ``ifft``, ``fftn``, ``ifftn``, ``irfft``,
``irfftn`` and ``hfft`` take complex floating-point arrays, ``rfft``, ``rfftn`` and
``ihfft`` real floating-point arrays; anything else raises ``TypeError``.

Examples
--------
>>> import tiarray as ta
>>> x = ta.asarray([1.0 + 0j, 0j, 0j, 0j])
>>> ta.fft.fft(x).tolist()
[(1+0j), (1+0j), (1+0j), (1+0j)]
"""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes, _runtime
from ._array_object import TiArray
from ._manipulation_functions import roll
from ._validate import check_array, normalize_axes, normalize_axis

__all__ = [
    "fft", "ifft", "fftn", "ifftn", "rfft", "irfft", "rfftn", "irfftn", "hfft", "ihfft",
    "fftfreq", "rfftfreq", "fftshift", "ifftshift",
]  # fmt: skip

_NORMS = ("backward", "ortho", "forward")


def _name(func: str) -> str:
    return f"fft.{func}"


def _check(x, func: str, kind: str) -> TiArray:
    x = check_array(x, _name(func))
    if kind == "complex" and x._dtype.kind != "c":
        raise TypeError(
            f"{_name(func)}(): argument 'x' must have a complex floating-point dtype, got {x._dtype.name}"
        )
    if kind == "real" and x._dtype.kind != "f":
        raise TypeError(
            f"{_name(func)}(): argument 'x' must have a real floating-point dtype, got {x._dtype.name}"
        )
    if x._device.kind != "cpu":
        raise NotImplementedError(
            f"{_name(func)}(): argument 'x' lives on {x._device}; the transforms call pocketfft through NumPy and run "
            "on the CPU only. Copy the array with x.to_device('cpu') first"
        )
    return x


def _norm(norm, func: str) -> str:
    if norm not in _NORMS:
        raise ValueError(
            f"{_name(func)}(): argument 'norm' must be 'backward', 'ortho' or 'forward', got {norm!r}"
        )
    return norm


def _np_in(x: TiArray) -> np.ndarray:
    if x._dtype in (_dtypes.float16, _dtypes.bfloat16):
        from ._kernels.copy import copy_array

        x = copy_array(x, _dtypes.float32)
    return x._numpy_view()


def _n(n, func: str, arg: str = "n"):
    if n is None:
        return None
    if isinstance(n, bool):
        raise TypeError(f"{_name(func)}(): argument '{arg}' must be an int, got a bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{_name(func)}(): argument '{arg}' must be an int, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{_name(func)}(): argument '{arg}' must be at least 1, got {n}")
    return n


def _out(a: np.ndarray, want: _dtypes.DType) -> TiArray:
    from ._buffer import empty_owned
    from ._runtime import CPU

    out = empty_owned(a.shape, want, CPU)
    if out.size:
        np.copyto(out._numpy_view(), a, casting="unsafe")
    return out


def _complex_of(x: TiArray) -> _dtypes.DType:
    if x._dtype.kind == "c":
        return x._dtype
    return _dtypes.complex128 if x._dtype is _dtypes.float64 else _dtypes.complex64


def _real_of(x: TiArray) -> _dtypes.DType:
    return _dtypes.float64 if x._dtype in (_dtypes.complex128, _dtypes.float64) else _dtypes.float32


def _one_axis(x, n, axis, norm, func, kind, npf, out_kind):
    x = _check(x, func, kind)
    n = _n(n, func)
    if x.ndim == 0:
        raise ValueError(f"{_name(func)}(): argument 'x' must have at least one dimension")
    ax = normalize_axis(axis, x.ndim, _name(func))
    norm = _norm(norm, func)
    r = npf(_np_in(x), n=n, axis=ax, norm=norm)
    return _out(r, _complex_of(x) if out_kind == "complex" else _real_of(x))


def _many_axes(x, s, axes, norm, func, kind, npf, out_kind):
    x = _check(x, func, kind)
    norm = _norm(norm, func)
    if axes is None:
        if s is not None:
            axes = tuple(range(x.ndim - len(s), x.ndim))
        else:
            axes = tuple(range(x.ndim))
    ax = normalize_axes(tuple(axes), x.ndim, _name(func), "axes", none_is_all=False, sort=False, lists=True)
    if s is not None:
        s = tuple(s)
        if len(s) != len(ax):
            raise ValueError(
                f"{_name(func)}(): arguments 's' and 'axes' must have the same length, got {s} and {axes}"
            )
        fixed = []
        for i, (v, a) in enumerate(zip(s, ax)):
            if v == -1:
                if func in ("irfftn",) and i == len(ax) - 1:
                    fixed.append(2 * (x._shape[a] - 1))
                else:
                    fixed.append(x._shape[a])
            else:
                fixed.append(_n(v, func, "s"))
        s = tuple(fixed)
    if not ax:
        return _out(_np_in(x), _complex_of(x) if out_kind == "complex" else _real_of(x))
    r = npf(_np_in(x), s=s, axes=ax, norm=norm)
    return _out(r, _complex_of(x) if out_kind == "complex" else _real_of(x))


def fft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """One-dimensional discrete Fourier transform (pocketfft, CPU only).

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    n : int, optional
        Length of the transformed axis of the output: the input is cropped or zero-padded.
        Default: the size of ``x`` along ``axis``.
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        Normalisation: ``'backward'`` (none on the forward transform, default),
        ``'ortho'`` (``1/sqrt(n)``), ``'forward'`` (``1/n``).

    Returns
    -------
    TiArray
        Complex, the dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.fft(ta.asarray([1j, 1j])).tolist()
    [2j, 0j]
    """
    return _one_axis(x, n, axis, norm, "fft", "complex", np.fft.fft, "complex")


def ifft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """One-dimensional inverse discrete Fourier transform (pocketfft, CPU only).

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    n : int, optional
        Length of the transformed axis of the output (crop or zero-pad).
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        ``'backward'`` (default) scales the inverse by ``1/n``.

    Returns
    -------
    TiArray
        Complex, the dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.ifft(ta.asarray([2 + 0j, 0j])).tolist()
    [(1+0j), (1+0j)]
    """
    return _one_axis(x, n, axis, norm, "ifft", "complex", np.fft.ifft, "complex")


def fftn(x, /, *, s=None, axes=None, norm="backward") -> TiArray:
    """N-dimensional discrete Fourier transform (pocketfft, CPU only).

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    s : sequence of ints, optional
        Output sizes along ``axes`` (crop or zero-pad); ``-1`` keeps an axis' size.
    axes : sequence of ints, optional
        The axes to transform; all of them by default (the last ``len(s)`` when only ``s``
        is given).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`fft`).

    Returns
    -------
    TiArray
        Complex, the dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``s`` and ``axes`` differ in length, a size is invalid, or axes repeat.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.fftn(ta.asarray([[1 + 0j, 0j], [0j, 0j]])).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """
    return _many_axes(x, s, axes, norm, "fftn", "complex", np.fft.fftn, "complex")


def ifftn(x, /, *, s=None, axes=None, norm="backward") -> TiArray:
    """N-dimensional inverse discrete Fourier transform (pocketfft, CPU only).

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    s : sequence of ints, optional
        Output sizes along ``axes``; ``-1`` keeps an axis' size.
    axes : sequence of ints, optional
        The axes to transform (default all).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`ifft`).

    Returns
    -------
    TiArray
        Complex, the dtype of ``x``.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``s`` and ``axes`` differ in length or a size is invalid.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.ifftn(ta.asarray([[4 + 0j, 0j], [0j, 0j]])).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (1+0j)]]
    """
    return _many_axes(x, s, axes, norm, "ifftn", "complex", np.fft.ifftn, "complex")


def rfft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """Discrete Fourier transform of real input: the ``n // 2 + 1`` non-negative frequencies.

    Parameters
    ----------
    x : TiArray
        Real floating-point input.
    n : int, optional
        Number of input points used along ``axis`` (crop or zero-pad).
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`fft`).

    Returns
    -------
    TiArray
        Complex of the matching precision (``complex64`` for ``float32``).

    Raises
    ------
    TypeError
        If ``x`` is not real floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.rfft(ta.asarray([1.0, 1.0, 1.0, 1.0])).tolist()
    [(4+0j), 0j, 0j]
    """
    return _one_axis(x, n, axis, norm, "rfft", "real", np.fft.rfft, "complex")


def irfft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """Inverse of :func:`rfft`: real output from the non-negative frequencies.

    Parameters
    ----------
    x : TiArray
        Complex floating-point input (Hermitian half-spectrum).
    n : int, optional
        Length of the output along ``axis``; default ``2 * (m - 1)`` for ``m`` input points.
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`ifft`).

    Returns
    -------
    TiArray
        Real of the matching precision (``float32`` for ``complex64``).

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.irfft(ta.asarray([4 + 0j, 0j, 0j])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _one_axis(x, n, axis, norm, "irfft", "complex", np.fft.irfft, "real")


def rfftn(x, /, *, s=None, axes=None, norm="backward") -> TiArray:
    """N-dimensional discrete Fourier transform of real input (last axis halved).

    Parameters
    ----------
    x : TiArray
        Real floating-point input.
    s : sequence of ints, optional
        Input sizes used along ``axes``; ``-1`` keeps an axis' size.
    axes : sequence of ints, optional
        The axes to transform (default all); the last one gets ``s[-1] // 2 + 1`` outputs.
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`fft`).

    Returns
    -------
    TiArray
        Complex of the matching precision.

    Raises
    ------
    TypeError
        If ``x`` is not real floating-point.
    ValueError
        If ``s`` and ``axes`` differ in length or a size is invalid.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.rfftn(ta.asarray([[1.0, 1.0], [1.0, 1.0]])).tolist()
    [[(4+0j), 0j], [0j, 0j]]
    """
    return _many_axes(x, s, axes, norm, "rfftn", "real", np.fft.rfftn, "complex")


def irfftn(x, /, *, s=None, axes=None, norm="backward") -> TiArray:
    """Inverse of :func:`rfftn`.

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    s : sequence of ints, optional
        Output sizes along ``axes``; ``-1`` keeps an axis' size (on the last axis:
        ``2 * (m - 1)``).
    axes : sequence of ints, optional
        The axes to transform (default all).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`ifft`).

    Returns
    -------
    TiArray
        Real of the matching precision.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``s`` and ``axes`` differ in length or a size is invalid.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.irfftn(ta.asarray([[4 + 0j, 0j], [0j, 0j]])).tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    return _many_axes(x, s, axes, norm, "irfftn", "complex", np.fft.irfftn, "real")


def hfft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """Transform of a Hermitian-symmetric signal (given by its first half): a real spectrum.

    Parameters
    ----------
    x : TiArray
        Complex floating-point input.
    n : int, optional
        Length of the output; default ``2 * (m - 1)`` for ``m`` input points.
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`fft`).

    Returns
    -------
    TiArray
        Real of the matching precision.

    Raises
    ------
    TypeError
        If ``x`` is not complex floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.hfft(ta.asarray([1 + 0j, 0j, 0j])).tolist()
    [1.0, 1.0, 1.0, 1.0]
    """
    return _one_axis(x, n, axis, norm, "hfft", "complex", np.fft.hfft, "real")


def ihfft(x, /, *, n=None, axis=-1, norm="backward") -> TiArray:
    """Inverse of :func:`hfft`: the half spectrum of a real signal (conjugated, scaled).

    Parameters
    ----------
    x : TiArray
        Real floating-point input.
    n : int, optional
        Number of input points used (crop or zero-pad).
    axis : int, optional
        The axis to transform (default ``-1``).
    norm : {'backward', 'ortho', 'forward'}, optional
        The normalisation (as :func:`ifft`).

    Returns
    -------
    TiArray
        Complex of the matching precision, ``n // 2 + 1`` points along ``axis``.

    Raises
    ------
    TypeError
        If ``x`` is not real floating-point.
    ValueError
        If ``n < 1`` or ``norm`` is unknown.
    NotImplementedError
        If ``x`` is not in CPU memory.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.ihfft(ta.asarray([1.0, 2.0, 1.0, 0.0])).tolist()
    [(1-0j), 0.5j, -0j]
    """
    return _one_axis(x, n, axis, norm, "ihfft", "real", np.fft.ihfft, "complex")


# ----------------------------------------------------------------------------- frequencies


def _frequencies(n, d, dtype, device, func: str, half: bool) -> TiArray:
    from ._buffer import empty_owned
    from ._kernels.copy import copy_array

    if isinstance(n, bool):
        raise TypeError(f"{_name(func)}(): argument 'n' must be an int, got a bool")
    try:
        n = operator.index(n)
    except TypeError:
        raise TypeError(f"{_name(func)}(): argument 'n' must be an int, got {n!r}") from None
    if n < 1:
        raise ValueError(f"{_name(func)}(): argument 'n' must be at least 1, got {n}")
    if isinstance(d, bool) or not isinstance(d, (int, float)):
        raise TypeError(f"{_name(func)}(): argument 'd' must be a float, got {d!r}")
    if d == 0:
        raise ValueError(f"{_name(func)}(): argument 'd' must not be zero")
    if dtype is None:
        dt = _dtypes.float64
    else:
        dt = _dtypes.to_dtype(dtype, func=_name(func))
        if dt.kind != "f":
            raise TypeError(
                f"{_name(func)}(): argument 'dtype' must be a real floating-point dtype, got {dt.name}"
            )
    dev = _runtime.get_device(device, func=_name(func))
    from ._kernels.manip import frequencies

    m = n // 2 + 1 if half else n
    kd = dt if dt._ti_name is not None else _dtypes.float32
    out = empty_owned((m,), kd, dev)
    frequencies(out, n, 1.0 / (float(d) * n), half)
    return out if kd is dt else copy_array(out, dt)


def fftfreq(n, /, *, d=1.0, dtype=None, device=None) -> TiArray:
    """Sample frequencies of :func:`fft`: ``[0, 1, ..., ceil(n/2)-1, -floor(n/2), ..., -1] / (d*n)``.

    Parameters
    ----------
    n : int
        Window length.
    d : float, optional
        Sample spacing (default ``1.0``).
    dtype : DType, optional
        A real floating-point dtype (default ``float64``).
    device : Device or str, optional
        Where to create the array (default: the compute device).

    Returns
    -------
    TiArray
        Shape ``(n,)``.

    Raises
    ------
    TypeError
        If ``dtype`` is not real floating-point or ``n`` is not an int.
    ValueError
        If ``n < 1`` or ``d == 0``.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.fftfreq(4).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _frequencies(n, d, dtype, device, "fftfreq", False)


def rfftfreq(n, /, *, d=1.0, dtype=None, device=None) -> TiArray:
    """Sample frequencies of :func:`rfft`: ``[0, 1, ..., n//2] / (d*n)``.

    Parameters
    ----------
    n : int
        Window length.
    d : float, optional
        Sample spacing (default ``1.0``).
    dtype : DType, optional
        A real floating-point dtype (default ``float64``).
    device : Device or str, optional
        Where to create the array (default: the compute device).

    Returns
    -------
    TiArray
        Shape ``(n // 2 + 1,)``.

    Raises
    ------
    TypeError
        If ``dtype`` is not real floating-point or ``n`` is not an int.
    ValueError
        If ``n < 1`` or ``d == 0``.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.rfftfreq(4).tolist()
    [0.0, 0.25, 0.5]
    """
    return _frequencies(n, d, dtype, device, "rfftfreq", True)


def _shift(x, axes, func: str, sign: int) -> TiArray:
    x = check_array(x, _name(func))
    if axes is None:
        axes = tuple(range(x.ndim))
    ax = normalize_axes(axes, x.ndim, _name(func), "axes", none_is_all=False, sort=False, lists=True)
    if not ax:
        from ._kernels.copy import copy_array

        return copy_array(x)
    shifts = tuple(sign * (x._shape[a] // 2) for a in ax)
    return roll(x, shifts, axis=ax)


def fftshift(x, /, *, axes=None) -> TiArray:
    """Move the zero-frequency term to the centre (a roll by ``n // 2`` along each axis).

    Parameters
    ----------
    x : TiArray
        Input array.
    axes : int or sequence of ints, optional
        The axes to shift (default all).

    Returns
    -------
    TiArray
        A new array, same shape and dtype.

    Raises
    ------
    IndexError
        If an axis is out of range.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.fftshift(ta.fft.fftfreq(4)).tolist()
    [-0.5, -0.25, 0.0, 0.25]
    """
    return _shift(x, axes, "fftshift", 1)


def ifftshift(x, /, *, axes=None) -> TiArray:
    """Inverse of :func:`fftshift` (a roll by ``-(n // 2)`` along each axis).

    Parameters
    ----------
    x : TiArray
        Input array.
    axes : int or sequence of ints, optional
        The axes to shift (default all).

    Returns
    -------
    TiArray
        A new array, same shape and dtype.

    Raises
    ------
    IndexError
        If an axis is out of range.

    Examples
    --------
    >>> import tiarray as ta
    >>> ta.fft.ifftshift(ta.asarray([-0.5, -0.25, 0.0, 0.25])).tolist()
    [0.0, 0.25, -0.5, -0.25]
    """
    return _shift(x, axes, "ifftshift", -1)
