"""Phase-1 launch path: run a sparse kernel on NumPy arrays through ``tiarray._launch``.

This is a thin stand-in for :class:`tiarray.Operator` (being built in parallel), with
the same kernel convention: ``kernel(*inputs, *outputs, *scratch, **statics)``; outputs
and scratch are zero-filled before the launch; statics go to the kernel's
``ti.template()`` parameters of the same name. When the registry lands, each operator
in :mod:`tiarray.operators.sparse` becomes an ``Operator`` over the same kernel and
this module goes away.

It reads an array's data pointer straight from the ``PyArrayObject`` struct (checked
against ``ndarray.ctypes.data`` at import): ``ctypes.data`` costs about 1.5 us per
array, more than the rest of the launch path together.
"""

from __future__ import annotations

import ctypes

import numpy as np

from tiarray import _dtypes, _launch, _runtime
from tiarray._launch import Launcher

__all__ = ["run", "launcher_for"]

_from_address = ctypes.c_void_p.from_address
_PTR_OFFSET = 16  # PyArrayObject: ob_refcnt, ob_type, data


def _check_offset() -> bool:
    a = np.arange(3.0)
    try:
        return _from_address(id(a) + _PTR_OFFSET).value == a.ctypes.data
    except Exception:  # pragma: no cover - exotic interpreters
        return False


_FAST_PTR = _check_offset()
if not _FAST_PTR:  # pragma: no cover - every CPython we know lays PyArrayObject out this way
    raise ImportError("tiarray.operators.sparse: unexpected numpy array layout (data pointer offset)")

_DT: dict = {}


def _dtype_of(a: np.ndarray) -> _dtypes.DType:
    d = _DT.get(a.dtype)
    if d is None:
        d = _dtypes.from_numpy_dtype(a.dtype)
        if d is None:
            raise TypeError(f"unsupported dtype {a.dtype}")
        _DT[a.dtype] = d
    return d


def _arg(a: np.ndarray) -> tuple:
    if _FAST_PTR:
        ptr = _from_address(id(a) + _PTR_OFFSET).value
    else:  # pragma: no cover
        ptr = a.ctypes.data
    # Taichi wants a non-null pointer even when nothing is read.
    return (ptr or 1, a.nbytes, a.shape)


_LAUNCHERS: dict = {}


def launcher_for(kernel, name: str) -> Launcher:
    lk = _LAUNCHERS.get(name)
    if lk is None:
        lk = _LAUNCHERS[name] = Launcher(kernel, name=name)
    return lk


class _Ctx:
    """A reusable Taichi launch context for one compiled spec (CPU only).

    Setting an external-array argument costs about 1 us (a pybind call that converts
    the shape), more than the launch itself (about 1 us); a context is kept per spec
    and only the arguments that changed since the last launch are set again. Weights
    and connectivity are the same arrays from one time step to the next.
    """

    __slots__ = ("ctx", "last")

    def __init__(self, spec):
        self.ctx = spec.t_kernel.make_launch_context()
        self.last = [None] * len(spec.setters)


_SPECS: dict = {}


def _entry(lk, key, arrays, templates, serial):
    sigs = [(_dtype_of(a), a.ndim, False) for a in arrays]
    spec = lk.spec(sigs, templates, serial=serial)
    ent = (spec, _Ctx(spec) if _runtime.is_cpu() else None, spec.prog)
    _SPECS[key] = ent
    return ent


def run(lk: Launcher, inputs, outs, templates=(), *, serial: bool, scratch=None):
    """Launch ``lk`` on C-contiguous NumPy ``inputs``; return the list of new outputs.

    ``outs``: ``(shape, numpy dtype)`` per output; ``scratch``: ``(shape, numpy dtype)``
    or None (the kernel takes no scratch parameter). Every kernel argument is an array
    (scalars are 0-d arrays).
    """
    outputs = [np.zeros(shape, dtype) for shape, dtype in outs]
    if scratch is None:
        arrays = (*inputs, *outputs)
    else:
        arrays = (*inputs, *outputs, np.zeros(scratch[0], scratch[1]))
    key = (lk, templates, serial, *[(a.dtype, a.ndim) for a in arrays])
    ent = _SPECS.get(key)
    if ent is None or ent[2] is not _runtime._ti_impl.get_runtime().prog:
        ent = _entry(lk, key, arrays, templates, serial)
    spec, c, _ = ent
    if c is None:  # pragma: no cover - GPU runs use the launcher's own path
        spec.launch([_arg(a) for a in arrays])
        return outputs
    with _launch._launch_lock:
        ctx = c.ctx
        last = c.last
        i = 0
        for (_, idx), a in zip(spec.setters, arrays):
            v = (_from_address(id(a) + _PTR_OFFSET).value or 1, a.nbytes, a.shape)
            if last[i] != v:
                ctx.set_arg_external_array_with_shape(idx, v[0], v[1], v[2], 0)
                last[i] = v
            i += 1
        spec.prog.launch_kernel(spec.compiled, ctx)
    return outputs
