"""Which framework an object belongs to, without importing any framework.

A framework can only have produced an object if it is already in ``sys.modules``, so the
checks look there and never import. Results are cached per type.
"""

from __future__ import annotations

import sys

import numpy as np

from ._array_object import TiArray
from ._backend import Field, Ndarray, qd_memory

__all__ = ["framework_of", "TAICHI_FAMILY"]

_CACHE: dict = {}
_MISSING = object()


def _classify(x) -> str | None:
    if isinstance(x, TiArray):
        return "tiarray"
    if isinstance(x, np.ndarray):
        return "numpy"
    mods = sys.modules
    torch = mods.get("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return "torch"
    jax = mods.get("jax")
    if jax is not None:
        arr = getattr(jax, "Array", None)
        if arr is not None and isinstance(x, arr):
            return "jax"
    cupy = mods.get("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return "cupy"
    strict = mods.get("array_api_strict")
    if strict is not None:
        # array-api-strict 2.6 no longer exports its Array class at the top level
        cls = getattr(strict, "Array", None) or getattr(getattr(strict, "_array_object", None), "Array", None)
        if cls is not None and isinstance(x, cls):
            return "array_api_strict"
    # quadrants first: under the quadrants backend its classes are the backend's Ndarray and
    # Field too, and its objects take the quadrants path (qd.tensor wrappers, order= layouts,
    # a GPU quadrants beside a CPU tiarray, messages that say quadrants)
    if "quadrants" in mods and qd_memory.kind(x) is not None:
        return "quadrants"
    if isinstance(x, Ndarray):
        return "taichi"
    if isinstance(x, Field):
        return "taichi_field"
    return None


# the frameworks whose arrays are Taichi or quadrants memory: ta.asarray views them in place
TAICHI_FAMILY = frozenset({"taichi", "taichi_field", "quadrants"})


def framework_of(x) -> str | None:
    """``"tiarray"``, ``"numpy"``, ``"torch"``, ``"jax"``, ``"cupy"``, ``"array_api_strict"``,
    ``"taichi"`` (a ``ti.ndarray``), ``"taichi_field"`` (a ``ti.field``, ``Vector.field``,
    ``Matrix.field``), ``"quadrants"`` (a ``qd.ndarray``/``qd.field``), or ``None`` for anything else (scalars, lists, other objects)."""
    t = type(x)
    r = _CACHE.get(t, _MISSING)
    if r is _MISSING:
        r = _classify(x)
        if r != "torch" or (
            t.__module__ in _TORCH_CACHED and not sys.modules["torch"].compiler.is_compiling()
        ):
            _CACHE[t] = r
    return r


# torch tensor types remembered, outside torch.compile's tracing; not the tracing subclasses
# (FakeTensor, FunctionalTensor): a FunctionalTensor key added while AOTAutograd traced a
# first call failed the guards Dynamo builds over this dict ("DictGetItemSource index must
# be a ConstDictKeySource", 2026-12-05)
_TORCH_CACHED = frozenset({"torch", "torch.nn.parameter"})


def is_jax_tracer(x) -> bool:
    jax = sys.modules.get("jax")
    if jax is None:
        return False
    core = getattr(jax, "core", None)
    tracer = getattr(core, "Tracer", None)
    return tracer is not None and isinstance(x, tracer)
