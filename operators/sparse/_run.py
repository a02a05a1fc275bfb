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

from tiarray import _dtypes
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


def run(lk: Launcher, inputs, outs, templates=(), *, serial: bool, scratch=None):
    """Launch ``lk`` on C-contiguous NumPy ``inputs``; return the list of new outputs.

    ``outs``: ``(shape, numpy dtype)`` per output; ``scratch``: ``(shape, numpy dtype)``
    or None (the kernel takes no scratch parameter).
    """
    arrays = list(inputs)
    outputs = [np.zeros(shape, dtype) for shape, dtype in outs]
    arrays.extend(outputs)
    if scratch is not None:
        arrays.append(np.zeros(scratch[0], scratch[1]))
    sigs = []
    values = []
    for a in arrays:
        if isinstance(a, np.ndarray):
            sigs.append((_dtype_of(a), a.ndim, False))
            values.append(_arg(a))
        else:
            values.append(a)
    spec = lk.spec(sigs, templates, serial=serial)
    spec.launch(values)
    return outputs
