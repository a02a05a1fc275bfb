"""Just-in-time connectivity operators: products with a random matrix regenerated from a seed.

The ``(m, n) = shape`` matrix ``A`` has each entry connected independently with
probability ``prob`` (rounded to float32); it is never stored. ``transpose=False``
computes ``A @ x`` (``x`` of length ``n``), ``transpose=True`` computes ``A.T @ x``
(length ``m``, the rows of active events only). ``A`` depends only on ``(seed, shape,
prob)`` and the weight parameters: both directions, the event and non-event variants,
the ``jitc_todense_*`` functions and :func:`fixed_prob_csr` see the very same matrix, and
the connectivity is the same on every device. The three weight distributions share the
connectivity: ``jitc_mv_prob_normal(v, mu, 0, ...)`` equals ``jitc_mv_prob_homo(v, mu, ...)``.

``seed`` is a 32-bit integer (larger values are taken modulo 2**32); weight parameters
are float32 or float64 scalars and set the result's dtype (Python numbers take the
vector's float dtype, or float32).
"""

from __future__ import annotations

import numpy as np

from . import _jitc_kernels as K
from . import _policy, _validate
from ._run import launcher_for, run

__all__ = [
    "jitc_mv_prob_homo",
    "jitc_mv_prob_uniform",
    "jitc_mv_prob_normal",
    "jitc_event_mv_prob_homo",
    "jitc_event_mv_prob_uniform",
    "jitc_event_mv_prob_normal",
    "jitc_todense_prob_homo",
    "jitc_todense_prob_uniform",
    "jitc_todense_prob_normal",
    "fixed_prob_csr",
]

_L = {
    "homo": launcher_for(K.jitc_mv_homo_kernel, "jitc_mv_prob_homo"),
    "uniform": launcher_for(K.jitc_mv_uniform_kernel, "jitc_mv_prob_uniform"),
    "normal": launcher_for(K.jitc_mv_normal_kernel, "jitc_mv_prob_normal"),
}
_L_DENSE = {
    "homo": launcher_for(K.jitc_todense_homo_kernel, "jitc_todense_prob_homo"),
    "uniform": launcher_for(K.jitc_todense_uniform_kernel, "jitc_todense_prob_uniform"),
    "normal": launcher_for(K.jitc_todense_normal_kernel, "jitc_todense_prob_normal"),
}
_L_COUNTS = launcher_for(K.fixed_prob_counts_kernel, "fixed_prob_csr.counts")
_L_FILL = launcher_for(K.fixed_prob_fill_kernel, "fixed_prob_csr.fill")


def _prob(func, prob) -> np.ndarray:
    p = _validate.float_scalar(func, "prob", prob, np.float32)
    v = float(p)
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"{func}(): argument 'prob' must be a probability in [0, 1], got {v}")
    return p


def _params(func, names, values, like):
    """0-d weight-parameter arrays sharing one float dtype."""
    dt = like if like in _validate._FLOAT_DTYPES else None
    arrays = [
        None if _validate.is_py_number(v) else _validate.float_scalar(func, n, v)
        for n, v in zip(names, values)
    ]
    given = [a.dtype for a in arrays if a is not None]
    if given:
        dt = np.result_type(*given)
    if dt is None:
        dt = np.dtype(np.float32)
    return [
        np.asarray(v, dtype=dt) if a is None else a.astype(dt, copy=False) for a, v in zip(arrays, values)
    ]


def _mv(func, dist, x, params, names, prob, seed, shape, transpose, allow_bool):
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"{func}(): argument 'transpose' must be a bool, got {transpose!r}")
    transpose = bool(transpose)
    m, n = _validate.shape2(func, shape)
    like = x.dtype if isinstance(x, np.ndarray) else None
    ws = _params(func, names, params, like)
    p = _prob(func, prob)
    s = _validate.int_scalar(func, "seed", seed)
    name = "events" if allow_bool else "vector"
    if transpose:
        x = _validate.dense_operand(
            func, name, x, m, ndim=1, allow_bool=allow_bool, where="shape[0] (transpose=True)"
        )
        n_out = n
        active = np.count_nonzero(x) if m * n * float(p) >= _policy._JITC_PAR[0] else 0
        serial = _policy.jitc_serial(active * n * float(p))
        blocks = 1 if serial else _policy.threads()
        scratch = (((blocks - 1) * n_out,), ws[0].dtype)
    else:
        x = _validate.dense_operand(
            func, name, x, n, ndim=1, allow_bool=allow_bool, where="shape[1] (transpose=False)"
        )
        n_out = m
        serial = _policy.jitc_serial(m * n * float(p))
        scratch = ((0,), ws[0].dtype)
    (out,) = run(
        _L[dist], (x, *ws, p, s), [((n_out,), ws[0].dtype)], (transpose,), serial=serial, scratch=scratch
    )
    return out


_MV_DOC = """{summary}

    Parameters
    ----------
    {xname} : 1-D array, {xkinds}
        Length ``shape[1]`` (``transpose=False``) or ``shape[0]`` (``transpose=True``).{xnote}
{wparams}
    prob : float
        Connection probability of each entry, in ``[0, 1]`` (rounded to float32).
    seed : int
        Seed of the matrix (32-bit; may be a 0-d integer array).
    shape : tuple of two ints
        ``(m, n)``, the shape of the matrix ``A``.
    transpose : bool, optional
        ``False``: ``A @ {xname}`` (length ``m``); ``True``: ``A.T @ {xname}`` (length ``n``){tnote}.

    Returns
    -------
    numpy.ndarray
        1-D, the dtype of the weight parameters.

    Raises
    ------
    TypeError
        Arguments of the wrong kind or dtype.
    ValueError
        A length that does not match ``shape`` and ``transpose``; ``prob`` outside ``[0, 1]``.

    Examples
    --------
    >>> import numpy as np
    >>> import tiarray.operators.sparse as sp
    >>> x = np.ones(300, dtype=np.float32)
    >>> y = sp.{name}({example}, 0.1, 42, shape=(200, 300))
    >>> y.shape, y.dtype
    ((200,), dtype('float32'))
    >>> A = sp.{dense}({dense_example}, 0.1, 42, shape=(200, 300))
    >>> bool(np.allclose(y, A @ x, rtol=1e-5, atol=1e-4))
    True
"""

_W = {
    "homo": ("    weight : float or 0-d array\n        The weight of every connection.", ["weight"]),
    "uniform": (
        "    w_low, w_high : float or 0-d arrays\n        Weights are drawn uniformly from ``[w_low, w_high)``.",
        ["w_low", "w_high"],
    ),
    "normal": (
        "    w_mu, w_sigma : float or 0-d arrays\n        Weights are ``w_mu + w_sigma * z`` with ``z`` standard normal.",
        ["w_mu", "w_sigma"],
    ),
}
_EX = {"homo": "0.5", "uniform": "0.1, 0.5", "normal": "0.5, 0.1"}


def _doc(fn, dist, event):
    name = fn.__name__
    fn.__doc__ = _MV_DOC.format(
        summary=(
            f"Event-driven product with a just-in-time random matrix, {dist} weights."
            if event
            else f"Product of a just-in-time random matrix ({dist} weights) with a vector."
        ),
        xname="events" if event else "vector",
        xkinds="bool or float32/float64" if event else "float32 or float64",
        xnote=(
            " A bool event switches its connections on; a float event scales them (zeros skipped)."
            if event
            else ""
        ),
        wparams=_W[dist][0],
        tnote=", visiting only the rows of nonzero events" if event else "",
        name=name,
        example="x, " + _EX[dist],
        dense=f"jitc_todense_prob_{dist}",
        dense_example=_EX[dist],
    )
    return fn


def jitc_mv_prob_homo(vector, weight, prob, seed, *, shape, transpose=False):
    return _mv(
        "jitc_mv_prob_homo", "homo", vector, (weight,), ["weight"], prob, seed, shape, transpose, False
    )


def jitc_mv_prob_uniform(vector, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv("jitc_mv_prob_uniform", "uniform", vector, (w_low, w_high), ["w_low", "w_high"], prob, seed, shape,
               transpose, False)  # fmt: skip


def jitc_mv_prob_normal(vector, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv("jitc_mv_prob_normal", "normal", vector, (w_mu, w_sigma), ["w_mu", "w_sigma"], prob, seed, shape,
               transpose, False)  # fmt: skip


def jitc_event_mv_prob_homo(events, weight, prob, seed, *, shape, transpose=False):
    return _mv(
        "jitc_event_mv_prob_homo", "homo", events, (weight,), ["weight"], prob, seed, shape, transpose, True
    )


def jitc_event_mv_prob_uniform(events, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mv_prob_uniform", "uniform", events, (w_low, w_high), ["w_low", "w_high"], prob, seed,
               shape, transpose, True)  # fmt: skip


def jitc_event_mv_prob_normal(events, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mv_prob_normal", "normal", events, (w_mu, w_sigma), ["w_mu", "w_sigma"], prob, seed,
               shape, transpose, True)  # fmt: skip


for _f, _d, _e in [
    (jitc_mv_prob_homo, "homo", False),
    (jitc_mv_prob_uniform, "uniform", False),
    (jitc_mv_prob_normal, "normal", False),
    (jitc_event_mv_prob_homo, "homo", True),
    (jitc_event_mv_prob_uniform, "uniform", True),
    (jitc_event_mv_prob_normal, "normal", True),
]:
    _doc(_f, _d, _e)


def _todense(func, dist, params, names, prob, seed, shape, transpose):
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"{func}(): argument 'transpose' must be a bool, got {transpose!r}")
    m, n = _validate.shape2(func, shape)
    ws = _params(func, names, params, None)
    p = _prob(func, prob)
    s = _validate.int_scalar(func, "seed", seed)
    oshape = (n, m) if transpose else (m, n)
    serial = _policy.jitc_serial(m * n * float(p))
    (out,) = run(_L_DENSE[dist], (*ws, p, s), [(oshape, ws[0].dtype)], (bool(transpose),), serial=serial)
    return out


_DENSE_DOC = """The dense just-in-time random matrix ``A`` ({dist} weights) of the ``jitc_*_prob_{dist}`` products.

    Parameters
    ----------
{wparams}
    prob : float
        Connection probability of each entry, in ``[0, 1]``.
    seed : int
        Seed of the matrix.
    shape : tuple of two ints
        ``(m, n)``.
    transpose : bool, optional
        Return ``A.T`` (shape ``(n, m)``) instead of ``A``.

    Returns
    -------
    numpy.ndarray
        ``A`` (or ``A.T``), the dtype of the weight parameters.

    Raises
    ------
    TypeError, ValueError
        As the matching product.

    Examples
    --------
    >>> import numpy as np
    >>> import tiarray.operators.sparse as sp
    >>> A = sp.jitc_todense_prob_{dist}({ex}, 0.2, 7, shape=(100, 80))
    >>> A.shape, bool(abs((A != 0).mean() - 0.2) < 0.05)
    ((100, 80), True)
    >>> bool((sp.jitc_todense_prob_{dist}({ex}, 0.2, 7, shape=(100, 80), transpose=True) == A.T).all())
    True
"""


def jitc_todense_prob_homo(weight, prob, seed, *, shape, transpose=False):
    return _todense("jitc_todense_prob_homo", "homo", (weight,), ["weight"], prob, seed, shape, transpose)


def jitc_todense_prob_uniform(w_low, w_high, prob, seed, *, shape, transpose=False):
    return _todense("jitc_todense_prob_uniform", "uniform", (w_low, w_high), ["w_low", "w_high"], prob, seed, shape,
                    transpose)  # fmt: skip


def jitc_todense_prob_normal(w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _todense("jitc_todense_prob_normal", "normal", (w_mu, w_sigma), ["w_mu", "w_sigma"], prob, seed, shape,
                    transpose)  # fmt: skip


for _f, _d in [(jitc_todense_prob_homo, "homo"), (jitc_todense_prob_uniform, "uniform"),
               (jitc_todense_prob_normal, "normal")]:  # fmt: skip
    _f.__doc__ = _DENSE_DOC.format(dist=_d, wparams=_W[_d][0], ex=_EX[_d])


def fixed_prob_csr(n_pre, n_post, prob, seed, *, index_dtype=np.int32):
    """Random connectivity in CSR form, generated by a kernel: each pair connected with ``prob``.

    It is the connectivity of the just-in-time matrices of the same ``(seed, prob)`` and
    shape ``(n_pre, n_post)``: ``csrmv(w, *fixed_prob_csr(...), v, ...)`` equals
    ``jitc_mv_prob_homo(v, w, ...)``. Two passes (count, then fill), each parallel over
    rows; column indices are increasing within each row.

    Parameters
    ----------
    n_pre, n_post : int
        Rows and columns.
    prob : float
        Connection probability, in ``[0, 1]`` (rounded to float32).
    seed : int
        32-bit seed.
    index_dtype : numpy dtype, optional
        ``int32`` (default) or ``int64``.

    Returns
    -------
    indices : numpy.ndarray
        ``(nnz,)`` column indices.
    indptr : numpy.ndarray
        ``(n_pre + 1,)`` row pointers.

    Raises
    ------
    TypeError
        Non-integer sizes or seed, an ``index_dtype`` that is not int32/int64.
    ValueError
        Negative sizes, ``prob`` outside ``[0, 1]``, more synapses than the index dtype
        (or Taichi's 2**31 array limit) can hold.

    Examples
    --------
    >>> import numpy as np
    >>> import tiarray.operators.sparse as sp
    >>> indices, indptr = sp.fixed_prob_csr(1000, 500, 0.1, seed=3)
    >>> indptr.shape, bool(abs(indptr[-1] / (1000 * 500) - 0.1) < 0.01)
    ((1001,), True)
    >>> v = np.random.default_rng(0).standard_normal(500).astype(np.float32)
    >>> a = sp.csrmv(np.float32(0.5), indices, indptr, v, shape=(1000, 500))
    >>> b = sp.jitc_mv_prob_homo(v, np.float32(0.5), 0.1, 3, shape=(1000, 500))
    >>> bool(np.allclose(a, b, rtol=1e-5, atol=1e-5))
    True
    """
    func = "fixed_prob_csr"
    m, n = _validate.shape2(func, (n_pre, n_post))
    p = _prob(func, prob)
    s = _validate.int_scalar(func, "seed", seed)
    idt = np.dtype(index_dtype)
    if idt not in _validate._INDEX_DTYPES:
        raise TypeError(f"{func}(): argument 'index_dtype' must be int32 or int64, got {index_dtype!r}")
    ncols = np.asarray(n, dtype=np.int64)
    serial = _policy.jitc_serial(m * n * float(p))
    (counts,) = run(_L_COUNTS, (p, s, ncols), [((m,), np.int64)], (), serial=serial)
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    if nnz >= 2**31 or nnz > np.iinfo(idt).max:
        raise ValueError(
            f"{func}(): {nnz} synapses do not fit {idt} indices (Taichi arrays hold < 2**31 elements)"
        )
    indptr = indptr.astype(idt)
    (indices,) = run(_L_FILL, (p, s, ncols, indptr), [((nnz,), idt)], (), serial=serial)
    return indices, indptr
