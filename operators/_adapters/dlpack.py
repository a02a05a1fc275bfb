"""Arrays known only by the array API and DLPack (array-api-strict's, say): in through a
zero-copy TiArray view (``from_dlpack``), the call run by the TiArray adapter, the results
back through the array namespace's own ``from_dlpack`` (zero-copy too). Eager, like the
TiArray adapter: no differentiation, no tracing."""

from __future__ import annotations

from tiarray._internal import from_dlpack

from . import tiarray as _tiarray

__all__ = ["call"]


def call(op, args, static):
    ns = None
    conv = []
    for a in args:
        if hasattr(a, "__dlpack__") and hasattr(a, "__array_namespace__"):
            ns = ns or a.__array_namespace__()
            conv.append(from_dlpack(a))
        else:
            conv.append(a)
    res = _tiarray.call(op, conv, static)
    if isinstance(res, tuple):
        return tuple(ns.from_dlpack(r) for r in res)
    return ns.from_dlpack(res)
