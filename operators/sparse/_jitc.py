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

from tiarray._internal import IEEE
from tiarray._internal import dtypes as _dtypes

from .._operator import Operator, ShapeDtype, UndefinedPrimal
from . import _jitc_kernels as K
from . import _policy, _rules, _validate, _xp

__all__ = [
    "jitc_mv_prob_homo",
    "jitc_mv_prob_uniform",
    "jitc_mv_prob_normal",
    "jitc_event_mv_prob_homo",
    "jitc_event_mv_prob_uniform",
    "jitc_event_mv_prob_normal",
    "jitc_mm_prob_homo",
    "jitc_mm_prob_uniform",
    "jitc_mm_prob_normal",
    "jitc_event_mm_prob_homo",
    "jitc_event_mm_prob_uniform",
    "jitc_event_mm_prob_normal",
    "jitc_todense_prob_homo",
    "jitc_todense_prob_uniform",
    "jitc_todense_prob_normal",
    "fixed_prob_csr",
]

_PARAMS = {"homo": ("weight",), "uniform": ("w_low", "w_high"), "normal": ("w_mu", "w_sigma")}
_MV_KERNELS = {
    "homo": K.jitc_mv_homo_kernel,
    "uniform": K.jitc_mv_uniform_kernel,
    "normal": K.jitc_mv_normal_kernel,
}
_MM_KERNELS = {
    "homo": K.jitc_mm_homo_kernel,
    "uniform": K.jitc_mm_uniform_kernel,
    "normal": K.jitc_mm_normal_kernel,
}
_DENSE_KERNELS = {
    "homo": K.jitc_todense_homo_kernel,
    "uniform": K.jitc_todense_uniform_kernel,
    "normal": K.jitc_todense_normal_kernel,
}


def _unit(dist, name):
    """Parameter values whose matrix is d(A)/d(name): each weight is linear in the parameters.

    uniform: ``w = low (1 - u) + high u``; normal: ``w = mu + sigma z``; homo: ``w``."""
    return tuple(1.0 if n == name else 0.0 for n in _PARAMS[dist])


# ----------------------------------------------------------------------------- rules


def _zero_like_param(p):
    return _xp.full((), 0, p.dtype, p)


def _mv_jvp(name, dist):
    k = len(_PARAMS[dist])

    def jvp(primals, tangents, *, shape, transpose):
        op = _OPS[name]
        x, params, prob, seed = primals[0], primals[1 : 1 + k], primals[1 + k], primals[2 + k]
        dx, dparams = tangents[0], tangents[1 : 1 + k]
        out = None
        if any(d is not None for d in dparams):
            # the weights are linear in the parameters: the tangent is the same product with
            # the parameter tangents as parameters (e.g. uniform: dlow (1 - u) + dhigh u)
            dps = [_zero_like_param(p) if d is None else d for p, d in zip(params, dparams)]
            out = op(x, *dps, prob, seed, shape=shape, transpose=transpose)
        if dx is not None:
            t = op(dx, *params, prob, seed, shape=shape, transpose=transpose)
            out = t if out is None else out + t
        return out

    return jvp


def _mv_transpose(name, dist):
    names = _PARAMS[dist]
    k = len(names)

    def transpose_rule(cts, primals, *, shape, transpose):
        (ct,) = cts
        op = _OPS[name]
        x, params, prob, seed = primals[0], primals[1 : 1 + k], primals[1 + k], primals[2 + k]
        res = [None] * len(primals)
        if isinstance(x, UndefinedPrimal):
            g = op(ct, *params, prob, seed, shape=shape, transpose=not transpose)
            res[0] = _xp.astype(g, x.dtype)
        for i, (pn, p) in enumerate(zip(names, params)):
            if isinstance(p, UndefinedPrimal):
                unit = [_xp.full((), v, p.dtype, ct) for v in _unit(dist, pn)]
                y1 = op(x, *unit, prob, seed, shape=shape, transpose=transpose)
                res[1 + i] = _xp.astype((ct * y1).sum().reshape(()), p.dtype)
        return tuple(res)

    return transpose_rule


def _dense_jvp(name, dist):
    k = len(_PARAMS[dist])

    def jvp(primals, tangents, *, shape, transpose):
        params, prob, seed = primals[:k], primals[k], primals[k + 1]
        dparams = tangents[:k]
        if all(d is None for d in dparams):
            return None
        dps = [_zero_like_param(p) if d is None else d for p, d in zip(params, dparams)]
        return _OPS[name](*dps, prob, seed, shape=shape, transpose=transpose)

    return jvp


def _dense_transpose(name, dist):
    names = _PARAMS[dist]
    k = len(names)

    def transpose_rule(cts, primals, *, shape, transpose):
        (ct,) = cts
        params, prob, seed = primals[:k], primals[k], primals[k + 1]
        res = [None] * len(primals)
        for i, (pn, p) in enumerate(zip(names, params)):
            if isinstance(p, UndefinedPrimal):
                unit = [_xp.full((), v, p.dtype, ct) for v in _unit(dist, pn)]
                y1 = _OPS[name](*unit, prob, seed, shape=shape, transpose=transpose)
                res[i] = _xp.astype((ct * y1).sum().reshape(()), p.dtype)
        return tuple(res)

    return transpose_rule


# ----------------------------------------------------------------------------- operators


def _mv_outs(x, *rest, shape, transpose):
    m, n = shape
    return ShapeDtype((n if transpose else m,) + tuple(x.shape[1:]), rest[0].dtype)


def _op(name):
    return _OPS[name]


def _dense_outs(*inputs, shape, transpose):
    m, n = shape
    return ShapeDtype((n, m) if transpose else (m, n), inputs[0].dtype)


_OPS: dict = {}
for _dist in ("homo", "uniform", "normal"):
    for _event in (False, True):
        for _mm in (False, True):
            _name = f"jitc_{'event_' if _event else ''}{'mm' if _mm else 'mv'}_prob_{_dist}"
            _mm_name = f"jitc_{'event_' if _event else ''}mm_prob_{_dist}"
            _OPS[_name] = Operator(
                _name,
                kernel=(_MM_KERNELS if _mm else _MV_KERNELS)[_dist],
                outs=_mv_outs,
                jvp=_mv_jvp(_name, _dist),
                transpose=_mv_transpose(_name, _dist),
                linear=("matrix" if _mm else "vector", *_PARAMS[_dist]),
                # vmap over the vector is one matrix product; over the matrix, folded into its columns
                batch=_rules.mm_batch(_op, _name, 0) if _mm else _rules.mv_batch(_op, _name, _mm_name, 0),
                nondiff=("prob", "seed"),
                scratch=_policy.jitc_scratch,
                policy=_policy.jitc_policy(len(_PARAMS[_dist])),
                static_defaults={"transpose": False},
                compile_options=IEEE,
            )
    _name = f"jitc_todense_prob_{_dist}"
    _OPS[_name] = Operator(
        _name,
        kernel=_DENSE_KERNELS[_dist],
        outs=_dense_outs,
        jvp=_dense_jvp(_name, _dist),
        transpose=_dense_transpose(_name, _dist),
        linear=_PARAMS[_dist],
        nondiff=("prob", "seed"),
        policy=_policy.jitc_dense_policy(len(_PARAMS[_dist])),
        static_defaults={"transpose": False},
        compile_options=IEEE,
    )
_COUNTS = Operator(
    "fixed_prob_csr_counts",
    kernel=K.fixed_prob_counts_kernel,
    outs=lambda prob, seed, n_cols, n_rows: ShapeDtype((n_rows,), "int64"),
    policy=_policy.fixed_prob_policy,
    compile_options=IEEE,
)
_FILL = Operator(
    "fixed_prob_csr_fill",
    kernel=K.fixed_prob_fill_kernel,
    outs=lambda prob, seed, n_cols, indptr, nnz: ShapeDtype((nnz,), indptr.dtype),
    policy=_policy.fixed_prob_policy,
    compile_options=IEEE,
)


# ----------------------------------------------------------------------------- public functions


def _prob(func, prob, like):
    if _validate.is_py_number(prob):
        p = float(prob)
        if not (0.0 <= p <= 1.0):
            raise ValueError(f"{func}(): argument 'prob' must be a probability in [0, 1], got {p}")
        return _xp.full((), np.float32(p), _dtypes.float32, like)
    p = _validate.float_scalar(func, "prob", prob, like=like)
    h = _xp.host(p)
    if h is not None and not (0.0 <= float(h) <= 1.0):
        raise ValueError(f"{func}(): argument 'prob' must be a probability in [0, 1], got {float(h)}")
    return _xp.astype(p, _dtypes.float32)


def _params(func, names, values, like, like_dtype):
    """0-d weight-parameter arrays sharing one float dtype, of ``like``'s framework."""
    arrays = [
        None
        if _validate.is_py_number(v) or _validate.weak_float(v)
        else _validate.float_scalar(func, n, v, like=like)
        for n, v in zip(names, values)
    ]
    given = [_xp.dtype_of(a) for a in arrays if a is not None]
    if given:
        dt = _dtypes.float64 if _dtypes.float64 in given else _dtypes.float32
    elif like_dtype is not None:
        dt = like_dtype
    else:
        dt = _dtypes.float32
    return [_xp.full((), v, dt, like) if a is None else _xp.astype(a, dt) for a, v in zip(arrays, values)]


def _mv(func, dist, x, params, prob, seed, shape, transpose, allow_bool, ndim=1):
    transpose = _validate.check_bool(transpose, func, "transpose", numpy_bool=True)
    m, n = _validate.shape2(func, shape)
    name = "events" if allow_bool else ("vector" if ndim == 1 else "matrix")
    x = _validate.as_array(func, name, x)
    if transpose:
        x = _validate.dense_operand(func, name, x, m, ndim=ndim, allow_bool=allow_bool,
                                    where="shape[0] (transpose=True)")  # fmt: skip
    else:
        x = _validate.dense_operand(func, name, x, n, ndim=ndim, allow_bool=allow_bool,
                                    where="shape[1] (transpose=False)")  # fmt: skip
    if ndim == 2 and (n if transpose else m) * x.shape[1] >= 2**31:
        raise ValueError(f"{func}(): the result would hold more than 2**31 - 1 elements")
    ws = _params(func, _PARAMS[dist], params, x, _validate.float_like(func, name, x))
    p = _prob(func, prob, x)
    s = _validate.int_scalar(func, "seed", seed, like=x)
    return _OPS[func](x, *ws, p, s, shape=(m, n), transpose=transpose)


_MV_DOC = """{summary}

    .. math::

        y = A x \\ (\\text{{transpose=False}}), \\qquad y = A^T x \\ (\\text{{transpose=True}}),
        \\qquad A_{{ik}} = b_{{ik}}\\, w_{{ik}}, \\quad b_{{ik}} \\sim \\mathrm{{Bernoulli}}(p)

    where the connectivity ``b`` and the weights ``w`` ({wdesc}) are regenerated from
    ``(seed, shape, prob)`` and the weight parameters on every call, never stored (see
    ``docs/sparse.md`` for the generator). The same ``A`` for both directions, every
    framework and every device.

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
    array
        1-D, of the operand's framework (NumPy, torch, JAX, CuPy, TiArray), with the dtype
        of the weight parameters.

    Raises
    ------
    TypeError
        Arguments of the wrong kind or dtype; asking for the gradient with respect to
        ``prob`` (``seed`` is an integer and has none).
    ValueError
        A length that does not match ``shape`` and ``transpose``; ``prob`` outside ``[0, 1]``
        (when concrete).

    Notes
    -----
    Differentiable in the {xname} (float) and in the weight parameters (exactly: each
    weight is affine in them). ``seed`` and ``prob`` may be traced values under ``jax.jit``.

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
        wdesc={"homo": "one weight", "uniform": "uniform", "normal": "normal"}[dist],
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
    return _mv("jitc_mv_prob_homo", "homo", vector, (weight,), prob, seed, shape, transpose, False)


def jitc_mv_prob_uniform(vector, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv(
        "jitc_mv_prob_uniform", "uniform", vector, (w_low, w_high), prob, seed, shape, transpose, False
    )


def jitc_mv_prob_normal(vector, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv("jitc_mv_prob_normal", "normal", vector, (w_mu, w_sigma), prob, seed, shape, transpose, False)


def jitc_event_mv_prob_homo(events, weight, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mv_prob_homo", "homo", events, (weight,), prob, seed, shape, transpose, True)


def jitc_event_mv_prob_uniform(events, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mv_prob_uniform", "uniform", events, (w_low, w_high), prob, seed, shape, transpose,
               True)  # fmt: skip


def jitc_event_mv_prob_normal(events, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mv_prob_normal", "normal", events, (w_mu, w_sigma), prob, seed, shape, transpose,
               True)  # fmt: skip


for _f, _d, _e in [
    (jitc_mv_prob_homo, "homo", False),
    (jitc_mv_prob_uniform, "uniform", False),
    (jitc_mv_prob_normal, "normal", False),
    (jitc_event_mv_prob_homo, "homo", True),
    (jitc_event_mv_prob_uniform, "uniform", True),
    (jitc_event_mv_prob_normal, "normal", True),
]:
    _doc(_f, _d, _e)
    _f.operator = _OPS[_f.__name__]


_MM_DOC = """{summary}

    The matrix product with the just-in-time random matrix ``A`` of
    :func:`jitc_{ev}mv_prob_{dist}` (the same ``A`` for the same ``(seed, shape, prob)`` and
    weight parameters: ``{name}(B, ...)`` equals ``jitc_todense_prob_{dist}(...) @ B``, or
    ``.T @ B`` with ``transpose=True``):

    .. math::

        Y = A B \\ (\\text{{transpose=False}}), \\qquad Y = A^T B \\ (\\text{{transpose=True}}).

    Each row of ``A`` is generated once and applied to all ``K`` columns of ``B``.{tnote}

    Parameters
    ----------
    {xname} : 2-D array, {xkinds}
        Shape ``(shape[1], K)`` (``transpose=False``) or ``(shape[0], K)`` (``transpose=True``).
{wparams}
    prob : float
        Connection probability of each entry, in ``[0, 1]`` (rounded to float32).
    seed : int
        Seed of the matrix (32-bit; may be a 0-d integer array, traced under ``jax.jit``).
    shape : tuple of two ints
        ``(m, n)``, the shape of ``A``.
    transpose : bool, optional
        Multiply by ``A.T``.

    Returns
    -------
    array
        ``(m, K)`` or ``(n, K)``, of the operand's framework, with the dtype of the weight
        parameters.

    Raises
    ------
    TypeError, ValueError
        As :func:`jitc_{ev}mv_prob_{dist}`.

    Notes
    -----
    Differentiable in the {xname} (float) and in the weight parameters; ``vmap`` over the
    {xname} is folded into its columns, and ``vmap`` of :func:`jitc_{ev}mv_prob_{dist}`
    over its vector is one call of this operator.

    Examples
    --------
    >>> import numpy as np
    >>> import tiarray.operators.sparse as sp
    >>> B = np.random.default_rng(0).standard_normal((300, 4)).astype(np.float32)
    >>> Y = sp.{name}(B, {example}, 0.1, 42, shape=(200, 300))
    >>> A = sp.jitc_todense_prob_{dist}({example}, 0.1, 42, shape=(200, 300))
    >>> Y.shape, bool(np.allclose(Y, A @ B, rtol=1e-5, atol=1e-4))
    ((200, 4), True)
"""


def jitc_mm_prob_homo(matrix, weight, prob, seed, *, shape, transpose=False):
    return _mv("jitc_mm_prob_homo", "homo", matrix, (weight,), prob, seed, shape, transpose, False, 2)


def jitc_mm_prob_uniform(matrix, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv(
        "jitc_mm_prob_uniform", "uniform", matrix, (w_low, w_high), prob, seed, shape, transpose, False, 2
    )


def jitc_mm_prob_normal(matrix, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv(
        "jitc_mm_prob_normal", "normal", matrix, (w_mu, w_sigma), prob, seed, shape, transpose, False, 2
    )


def jitc_event_mm_prob_homo(events, weight, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mm_prob_homo", "homo", events, (weight,), prob, seed, shape, transpose, True, 2)


def jitc_event_mm_prob_uniform(events, w_low, w_high, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mm_prob_uniform", "uniform", events, (w_low, w_high), prob, seed, shape, transpose,
               True, 2)  # fmt: skip


def jitc_event_mm_prob_normal(events, w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _mv("jitc_event_mm_prob_normal", "normal", events, (w_mu, w_sigma), prob, seed, shape, transpose,
               True, 2)  # fmt: skip


for _f, _d, _e in [
    (jitc_mm_prob_homo, "homo", False),
    (jitc_mm_prob_uniform, "uniform", False),
    (jitc_mm_prob_normal, "normal", False),
    (jitc_event_mm_prob_homo, "homo", True),
    (jitc_event_mm_prob_uniform, "uniform", True),
    (jitc_event_mm_prob_normal, "normal", True),
]:
    _f.__doc__ = _MM_DOC.format(
        summary=(
            f"Event-driven product of a just-in-time random matrix ({_d} weights) with a batch of event vectors."
            if _e
            else f"Product of a just-in-time random matrix ({_d} weights) with a dense matrix."
        ),
        ev="event_" if _e else "",
        dist=_d,
        name=_f.__name__,
        xname="events" if _e else "matrix",
        xkinds="bool or float32/float64" if _e else "float32 or float64",
        tnote=" Transposed, only the rows of ``A`` whose row of ``events`` has a nonzero entry are generated."
        if _e
        else "",
        wparams=_W[_d][0],
        example=_EX[_d],
    )
    _f.operator = _OPS[_f.__name__]


def _todense(func, dist, params, prob, seed, shape, transpose):
    transpose = _validate.check_bool(transpose, func, "transpose", numpy_bool=True)
    m, n = _validate.shape2(func, shape)
    like = next((v for v in (*params, prob, seed) if not _validate.is_py_number(v)), np.zeros(()))
    like = _validate.as_array(func, "weight", like)
    ws = _params(func, _PARAMS[dist], params, like, None)
    p = _prob(func, prob, like)
    s = _validate.int_scalar(func, "seed", seed, like=like)
    if _xp.fw_of(*ws, p, s) == "numpy":
        # parameters only, no data: where Taichi runs on CUDA the matrix is made there and
        # returned as NumPy, as fixed_num_conn does (the NumPy route refused it, asking the
        # caller to move arrays it never passed)
        return _xp.host_op(_OPS[func], *ws, p, s, shape=(m, n), transpose=transpose)
    return _OPS[func](*ws, p, s, shape=(m, n), transpose=transpose)


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
    array
        ``A`` (or ``A.T``), the dtype of the weight parameters, of their framework (NumPy
        when they are Python numbers). Differentiable in the weight parameters.

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
    return _todense("jitc_todense_prob_homo", "homo", (weight,), prob, seed, shape, transpose)


def jitc_todense_prob_uniform(w_low, w_high, prob, seed, *, shape, transpose=False):
    return _todense("jitc_todense_prob_uniform", "uniform", (w_low, w_high), prob, seed, shape, transpose)


def jitc_todense_prob_normal(w_mu, w_sigma, prob, seed, *, shape, transpose=False):
    return _todense("jitc_todense_prob_normal", "normal", (w_mu, w_sigma), prob, seed, shape, transpose)


for _f, _d in [(jitc_todense_prob_homo, "homo"), (jitc_todense_prob_uniform, "uniform"),
               (jitc_todense_prob_normal, "normal")]:  # fmt: skip
    _f.__doc__ = _DENSE_DOC.format(dist=_d, wparams=_W[_d][0], ex=_EX[_d])
    _f.operator = _OPS[_f.__name__]


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
    m, n = _validate.shape2(func, (n_pre, n_post), "arguments (n_pre, n_post)")
    like = np.zeros(())
    p = np.asarray(_xp.host(_prob(func, prob, like)), np.float32)
    s = np.asarray(_xp.host(_validate.int_scalar(func, "seed", seed, like=like)))
    idt = np.dtype(index_dtype)
    if idt not in _validate._INDEX_DTYPES:
        raise TypeError(f"{func}(): argument 'index_dtype' must be int32 or int64, got {index_dtype!r}")
    ncols = np.asarray(n, dtype=np.int64)
    counts = _xp.host_op(_COUNTS, p, s, ncols, n_rows=m)
    indptr = np.zeros(m + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    nnz = int(indptr[-1])
    if nnz >= 2**31 or nnz > np.iinfo(idt).max:
        raise ValueError(
            f"{func}(): {nnz} synapses do not fit {idt} indices (Taichi arrays hold < 2**31 elements)"
        )
    indptr = indptr.astype(idt)
    indices = _xp.host_op(_FILL, p, s, ncols, indptr, nnz=nnz)
    return indices, indptr
