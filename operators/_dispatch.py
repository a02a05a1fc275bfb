"""Find the framework of a call's arguments and hand the call to that framework's adapter.

Detection never imports a framework (:func:`tiarray._detect.framework_of` looks only at
``sys.modules``); an adapter module is imported the first time its framework is seen.
Adapters translate (zero-copy) and launch; they hold no semantics.

Mixing frameworks in one call raises ``TypeError``, with one exception that JAX itself
makes: NumPy arrays are accepted next to JAX arrays (they become constants, as in every
``jax.numpy`` function), which is how index arrays built with NumPy/SciPy usually reach
a jitted function.
"""

from __future__ import annotations

import importlib

from tiarray._internal import TAICHI_FAMILY, framework_of

__all__ = ["dispatch"]

_ADAPTER_MODULES = {
    "numpy": "numpy",
    "tiarray": "tiarray",
    "jax": "jax",
    "torch": "torch",
    "cupy": "cupy",
    "array_api_strict": "dlpack",  # through DLPack both ways, results of the caller's namespace
}
_adapters: dict = {}
_MISSING = object()


def _adapter(fw: str):
    a = _adapters.get(fw)
    if a is None:
        mod = _ADAPTER_MODULES.get(fw)
        if mod is None:
            raise TypeError(f"no adapter for arrays of '{fw}'")
        a = importlib.import_module(f"tiarray.operators._adapters.{mod}").call
        _adapters[fw] = a
    return a


_TYPE_FW: dict = {}  # type -> framework (framework_of caches too; this saves a call per argument)
# Taichi's and quadrants' arrays are TiArrays to the call: they mix with TiArrays and each other
_FAMILY = dict.fromkeys(TAICHI_FAMILY, "tiarray")


def framework_of_call(op, args) -> str:
    """The framework whose adapter runs this call (``"numpy"`` when no argument is an array)."""
    fw = first = None
    for a in args:
        f = _TYPE_FW.get(type(a), _MISSING)
        if f is _MISSING:
            f = framework_of(a)
            f = _TYPE_FW[type(a)] = _FAMILY.get(f, f)
        if f is None or f == fw:
            continue
        if fw is None:
            fw, first = f, a
        elif {f, fw} == {"jax", "numpy"}:
            fw = "jax"
        else:
            raise TypeError(
                f"{op.name}: the arguments mix arrays of two frameworks, {framework_of(first)} and "
                f"{framework_of(a)}; convert them to one framework first (e.g. with tiarray.asarray / the "
                "framework's from_dlpack, zero-copy)"
            )
    return fw or "numpy"


def dispatch(op, args, static):
    """Run ``op`` on ``args``: the adapter of their framework converts in, launches, converts out."""
    fw = framework_of_call(op, args)
    a = _adapters.get(fw)
    if a is None:
        a = _adapter(fw)
    return a(op, args, static)
