"""Autodiff and batching rules of the sparse operators, as plain functions of other operators.

Every product here is linear in each differentiable input separately (bilinear in
``(weights, x)``), so the rules need no new kernels beyond :func:`csr_sddmm`:

================  =========================================  ==========================================
operator          JVP (tangent of ``y``)                     transpose (cotangent of one linear input)
================  =========================================  ==========================================
csrmv             ``op(dw, ., x) + op(w, ., dx)``             ``x``: ``op(w, ., ct, transpose=not T)``
(event_csrmv,                                                ``w`` per synapse: ``csr_sddmm`` of
csrmm,                                                       ``(ct, x)`` (``T=False``) or ``(x, ct)``
event_csrmm)                                                 (``T=True``); one weight: ``<ct, op(1, ., x)>``
jitc homo         ``op(x, dw) + op(dx, w)``                   ``x``: ``op(ct, w, transpose=not T)``;
                                                             ``w``: ``<ct, op(x, 1)>``
jitc uniform      ``op(x, dlow, dhigh) + op(dx, low, high)``  ``low``: ``<ct, op(x, 1, 0)>``,
                                                             ``high``: ``<ct, op(x, 0, 1)>``
jitc normal       ``op(x, dmu, dsigma) + op(dx, mu, sigma)``  ``mu``: ``<ct, op(x, 1, 0)>``,
                                                             ``sigma``: ``<ct, op(x, 0, 1)>``
================  =========================================  ==========================================

(``op(x, 1, 0)`` of the uniform matrix has the weights ``1 - u``, of the normal matrix the
weights 1: the weight of each connection is affine in the parameters, and the
connectivity does not depend on them.)

Not differentiable: ``indices``, ``indptr``, ``seed``, ``prob``, and bool events (asking
raises :class:`NonDifferentiableError`). Float events are differentiable like vectors.

Batching: ``vmap`` of ``csrmv``/``event_csrmv`` over the vector's axis is one
``csrmm``/``event_csrmm`` launch (the batch becomes the columns of the dense operand);
``vmap`` of ``csrmm`` over its matrix's batch axis folds the batch into the columns.

The functions use only the operators and array methods shared by NumPy, PyTorch and
JAX arrays (``reshape``, ``sum``, ``*``, ``+``; ``_permute`` and ``_astype`` smooth the two
differences), so they can be registered as :class:`tiarray.Operator` rules in phase 2;
the constants (``_ones``, ``_zeros``) are NumPy scalars for now and take the framework's
namespace then. ``None`` stands for a zero tangent.
"""

from __future__ import annotations

from . import _csr, _jitc

__all__ = [
    "NonDifferentiableError",
    "NON_DIFFERENTIABLE",
    "check_differentiable",
    "csr_jvp",
    "csr_transpose",
    "csr_batch",
    "csrmm_batch",
    "jitc_jvp",
    "jitc_transpose",
]


class NonDifferentiableError(TypeError):
    """Differentiation was asked with respect to an input that has no derivative."""


# operator -> inputs that are never differentiable
NON_DIFFERENTIABLE = {
    "csrmv": ("indices", "indptr"),
    "event_csrmv": ("indices", "indptr"),
    "csrmm": ("indices", "indptr"),
    "event_csrmm": ("indices", "indptr"),
    "jitc_mv_prob_homo": ("prob", "seed"),
    "jitc_mv_prob_uniform": ("prob", "seed"),
    "jitc_mv_prob_normal": ("prob", "seed"),
    "jitc_event_mv_prob_homo": ("prob", "seed"),
    "jitc_event_mv_prob_uniform": ("prob", "seed"),
    "jitc_event_mv_prob_normal": ("prob", "seed"),
}

_WHY = {
    "indices": "column indices are integers (the sparsity pattern)",
    "indptr": "row pointers are integers (the sparsity pattern)",
    "seed": "the seed selects a random matrix; it is not a continuous parameter",
    "prob": "the connectivity changes by whole synapses; it is piecewise constant in prob",
    "events": "bool events are not differentiable; pass float events (0.0/1.0) to get a gradient",
}


def check_differentiable(op: str, name: str, dtype=None) -> None:
    """Raise :class:`NonDifferentiableError` if ``op`` has no derivative in input ``name``."""
    if name in NON_DIFFERENTIABLE.get(op, ()) or (
        name == "events" and dtype is not None and str(dtype) in ("bool", "torch.bool")
    ):
        raise NonDifferentiableError(
            f"{op}(): argument '{name}' is not differentiable ({_WHY[name]}); "
            "stop its gradient (jax.lax.stop_gradient, tensor.detach()) or mark it static"
        )


def _is_bool(x) -> bool:
    return "bool" in str(getattr(x, "dtype", ""))


def _dot(a, b):
    return (a * b).sum()


def _like_weights(g, weights):
    """Reshape a scalar weight gradient to the shape of ``weights`` (() or (1,))."""
    return g.reshape(getattr(weights, "shape", ()))


def _one_like(weights):
    import numpy as np

    return np.ones((), dtype=weights.dtype)


def _astype(x, like):
    """``x`` converted to the dtype of ``like`` (NumPy/JAX ``astype``, torch ``to``)."""
    if hasattr(x, "astype"):
        return x.astype(like.dtype)
    return x.to(like.dtype)


def _permute(x, axes):
    if hasattr(x, "permute"):  # torch
        return x.permute(*axes)
    return x.transpose(axes)


# ----------------------------------------------------------------------------- CSR


def _csr_op(op: str):
    return getattr(_csr, op)


def csr_jvp(op, primals, tangents, *, shape, transpose=False):
    """Tangent of ``y = op(weights, indices, indptr, x)`` for ``op`` in csrmv, event_csrmv, csrmm, event_csrmm.

    ``tangents = (dweights, dx)``, each None (zero) or an array shaped like its primal.
    """
    w, idx, ptr, x = primals
    dw, dx = tangents
    f = _csr_op(op)
    out = None
    if dw is not None:
        out = f(dw, idx, ptr, x, shape=shape, transpose=transpose)
    if dx is not None:
        if _is_bool(x):
            check_differentiable(op, "events", "bool")
        t = f(w, idx, ptr, dx, shape=shape, transpose=transpose)
        out = t if out is None else out + t
    return out


def csr_transpose(op, ct, primals, linear, *, shape, transpose=False):
    """Cotangent of the linear input ``linear`` (``"weights"`` or ``"x"``) given ``ct``.

    ``y = op(w, indices, indptr, x)`` is linear in ``w`` for fixed ``x`` and in ``x`` for
    fixed ``w``; this is the transpose of that linear map.
    """
    w, idx, ptr, x = primals
    if linear in ("indices", "indptr"):
        check_differentiable(op, linear)
    f = _csr_op(op)
    if linear == "x":
        if _is_bool(x):
            check_differentiable(op, "events", "bool")
        return f(w, idx, ptr, ct, shape=shape, transpose=not transpose)
    if linear != "weights":
        raise ValueError(f"{op}: unknown linear input {linear!r}")
    if getattr(w, "ndim", 0) == 0 or tuple(w.shape) == (1,) and idx.shape[0] != 1:
        # one weight: d<ct, w * A1 x>/dw = <ct, A1 x>
        y1 = f(_one_like(w), idx, ptr, x, shape=shape, transpose=transpose)
        return _like_weights(_dot(ct, y1), w)
    xf = x if not _is_bool(x) else _astype(x, ct)
    if transpose:
        g = _csr.csr_sddmm(idx, ptr, xf, ct, shape=shape)
    else:
        g = _csr.csr_sddmm(idx, ptr, ct, xf, shape=shape)
    return _astype(g, w)


def csr_batch(op, primals, axis, *, shape, transpose=False):
    """``vmap`` of csrmv / event_csrmv over axis ``axis`` of ``x``: one csrmm / event_csrmm.

    Returns ``(out, out_axis)``: the batched result and where its batch axis is (1).
    """
    w, idx, ptr, x = primals
    if axis != 1:
        x = _moveaxis(x, axis, x.ndim - 1)
    mm = {"csrmv": _csr.csrmm, "event_csrmv": _csr.event_csrmm}[op]
    return mm(w, idx, ptr, x, shape=shape, transpose=transpose), 1


def csrmm_batch(op, primals, axis, *, shape, transpose=False):
    """``vmap`` of csrmm / event_csrmm over axis ``axis`` of the matrix (shape ``(n, k)`` per item).

    The batch is folded into the columns: one launch. Returns ``(out, out_axis)`` with the
    result shaped ``(rows, batch, k)`` and ``out_axis = 1``.
    """
    w, idx, ptr, x = primals
    if axis != 1:
        x = _moveaxis(x, axis, 1)
    n, b, k = x.shape
    f = _csr_op(op)
    y = f(w, idx, ptr, x.reshape(n, b * k), shape=shape, transpose=transpose)
    return y.reshape(y.shape[0], b, k), 1


def _moveaxis(x, src, dst):
    axes = list(range(x.ndim))
    axes.pop(src)
    axes.insert(dst, src)
    return _permute(x, axes)


# ----------------------------------------------------------------------------- JITC

_JITC_PARAMS = {"homo": ("weight",), "uniform": ("w_low", "w_high"), "normal": ("w_mu", "w_sigma")}


def _jitc_op(dist, event):
    return getattr(_jitc, f"jitc_{'event_' if event else ''}mv_prob_{dist}")


def jitc_jvp(dist, primals, tangents, *, shape, transpose=False, event=False):
    """Tangent of ``y = jitc_[event_]mv_prob_<dist>(x, *params, prob, seed)``.

    ``primals = (x, *params, prob, seed)``; ``tangents = (dx, *dparams)`` (None = zero).
    The weight of each connection is affine in the parameters, so the tangent with
    respect to them is the same product with the tangents as parameters.
    """
    f = _jitc_op(dist, event)
    x, *rest = primals
    nparams = len(_JITC_PARAMS[dist])
    params, prob, seed = rest[:nparams], rest[nparams], rest[nparams + 1]
    dx, *dparams = tangents
    out = None
    if any(d is not None for d in dparams):
        import numpy as np

        # e.g. uniform: w = low + (high - low) u, so dw = dlow + (dhigh - dlow) u
        dps = [np.zeros((), dtype=np.asarray(p).dtype) if d is None else d for p, d in zip(params, dparams)]
        out = f(x, *dps, prob, seed, shape=shape, transpose=transpose)
    if dx is not None:
        if _is_bool(x):
            check_differentiable("jitc_event_mv_prob_" + dist, "events", "bool")
        t = f(dx, *params, prob, seed, shape=shape, transpose=transpose)
        out = t if out is None else out + t
    return out


def jitc_transpose(dist, ct, primals, linear, *, shape, transpose=False, event=False):
    """Cotangent of the linear input ``linear``: ``"x"`` or a weight-parameter name."""
    import numpy as np

    f = _jitc_op(dist, event)
    opname = f"jitc_{'event_' if event else ''}mv_prob_{dist}"
    x, *rest = primals
    names = _JITC_PARAMS[dist]
    params, prob, seed = rest[: len(names)], rest[len(names)], rest[len(names) + 1]
    if linear in ("prob", "seed"):
        check_differentiable(opname, linear)
    if linear == "x":
        if _is_bool(x):
            check_differentiable(opname, "events", "bool")
        return f(ct, *params, prob, seed, shape=shape, transpose=not transpose)
    if linear not in names:
        raise ValueError(f"{opname}: unknown linear input {linear!r}")
    dt = np.asarray(params[0]).dtype
    one, zero = np.ones((), dt), np.zeros((), dt)
    unit = [one if n == linear else zero for n in names]
    if dist == "uniform" and linear == "w_low":
        unit = [one, zero]  # weights 1 - u
    y1 = f(x, *unit, prob, seed, shape=shape, transpose=transpose)
    p = params[names.index(linear)]
    return _dot(ct, y1).reshape(getattr(p, "shape", ()))
