"""quadrants objects while another backend runs: the memory of ``qd.ndarray``/``qd.field``
(Genesis' Taichi fork, ``import quadrants as qd``) and TiArrays in ``@qd.kernel`` calls.

quadrants and taichi install side by side and run in one process, each with its own
runtime. tiarray never imports quadrants: everything here starts when the user has
imported it (``sys.modules``), either before tiarray (then at tiarray's import) or after
(a finder on ``sys.meta_path`` runs :func:`_activate` right after quadrants' own import,
so that every quadrants field is tagged with its program from the start and every
``@qd.kernel`` call can take TiArrays). Pointers are read directly (quadrants'
``to_dlpack`` exports 5 dtypes only): an ndarray's data pointer from its program, a
field's from its SNode tree (:mod:`._fields`).
"""

import importlib.abc
import importlib.util
import sys

import numpy as np

from . import _fields

_STATE: dict = {}  # filled by _activate: the quadrants classes and readers


def _activate(qd=None) -> None:
    if _STATE or (qd is None and "quadrants" not in sys.modules):
        return
    qd = qd or sys.modules["quadrants"]
    from quadrants.lang import impl
    from quadrants.lang._ndarray import Ndarray
    from quadrants.lang.field import Field, ScalarField
    from quadrants.lang.kernel import Kernel
    from quadrants.lang.matrix import MatrixField
    from quadrants.lang.util import to_numpy_type
    from quadrants.types.ndarray_type import NdarrayType

    try:
        from quadrants._tensor_wrapper import Tensor
    except ImportError:  # pragma: no cover - quadrants without qd.tensor
        Tensor = ()
    _STATE.update(
        qd=qd, impl=impl, Ndarray=Ndarray, Field=Field, Tensor=Tensor, to_numpy_type=to_numpy_type,
        fields=_fields.FieldReader(qd, impl, "pyquadrants", ScalarField, MatrixField, to_numpy_type, "quadrants"),
    )  # fmt: skip
    _fields.KernelCallHook(
        Kernel, lambda k: (k.func, [(m.name, isinstance(m.annotation, NdarrayType)) for m in k.arg_metas])
    )


class _ActivatingLoader(importlib.abc.Loader):
    """quadrants' own loader, then :func:`_activate` (a wrapper: a loader can serve many
    modules, e.g. pytest's, so it is never changed itself)."""

    def __init__(self, inner):
        self._inner = inner

    def create_module(self, spec):
        return self._inner.create_module(spec)

    def exec_module(self, module):
        self._inner.exec_module(module)
        _activate(module)

    def __getattr__(self, name):
        return getattr(self._inner, name)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs :func:`_activate` once quadrants has been imported (then leaves ``sys.meta_path``)."""

    def find_spec(self, name, path=None, target=None):
        if name != "quadrants":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.loader is not None and hasattr(spec.loader, "exec_module"):
            spec.loader = _ActivatingLoader(spec.loader)
        return spec


if "quadrants" in sys.modules:
    _activate()
else:
    sys.meta_path.insert(0, _AfterImport())


def kind(x) -> str | None:
    """``"ndarray"`` or ``"field"`` for a quadrants ndarray or field (or a ``qd.tensor`` of
    one), None for anything else; never imports quadrants."""
    if "quadrants" not in sys.modules:
        return None
    _activate()
    s = _STATE
    if s["Tensor"] and isinstance(x, s["Tensor"]):
        x = x._unwrap()
    if isinstance(x, s["Ndarray"]):
        return "ndarray"
    if isinstance(x, s["Field"]):
        return "field"
    return None


def unwrap(x):
    s = _STATE
    return x._unwrap() if s["Tensor"] and isinstance(x, s["Tensor"]) else x


def arch_is_gpu() -> bool:
    """Whether quadrants' running program is on a GPU."""
    from quadrants._lib import core

    return core.arch_name(_STATE["impl"].current_cfg().arch) not in ("x64", "arm64")


def ndarray_layout(nd) -> tuple:
    """``(address, shape, element_strides, numpy_dtype)`` of a quadrants ndarray (element
    axes of vector/matrix ndarrays last; a layout-tagged ndarray's canonical axes).
    RuntimeError for an ndarray of a runtime reset since (quadrants frees it then)."""
    impl = _STATE["impl"]
    nd = unwrap(nd)
    prog = impl.get_runtime()._prog
    if nd.arr is None or prog is None:
        raise RuntimeError(
            "the ndarray belongs to a quadrants runtime that was reset or re-initialised (qd.reset() or "
            "qd.init() since it was created); its memory has been freed"
        )
    ptr = prog.get_ndarray_data_ptr_as_int(nd.arr)
    phys = tuple(nd._physical_shape)
    elem = ()
    if hasattr(nd, "n"):
        elem = (nd.n, nd.m) if hasattr(nd, "m") and type(nd).__name__ == "MatrixNdarray" else (nd.n,)
    full = phys + elem
    st = list(_fields.c_strides(full))
    layout = getattr(nd, "_qd_layout", None)
    if layout is not None and tuple(layout) != tuple(range(len(layout))):
        # physical axis k holds canonical axis layout[k]: canonical axis j is physical inv[j]
        inv = [0] * len(layout)
        for k, j in enumerate(layout):
            inv[j] = k
        shape = tuple(phys[inv[j]] for j in range(len(layout))) + elem
        st = [st[inv[j]] for j in range(len(layout))] + st[len(layout) :]
    else:
        shape = full
    return ptr, shape, tuple(st), np.dtype(_STATE["to_numpy_type"](nd.dtype))


def field_layout(f):
    return _STATE["fields"].layout(unwrap(f))


def field_to_numpy(f):
    return _STATE["fields"].to_numpy(unwrap(f))
