"""``__array_namespace_info__``: what this array API namespace supports."""

from __future__ import annotations

from . import _dtypes, _runtime
from ._array_object import api_sequence

__all__ = ["__array_namespace_info__"]


class Info:
    """Inspection utilities of the tiarray namespace (array API 2025.12)."""

    __module__ = "tiarray"

    def capabilities(self) -> dict:
        """``{"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}``."""
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 64}

    def default_device(self):
        """The device Taichi computes on."""
        return _runtime.current_device()

    def default_dtypes(self, *, device=None) -> dict:
        """float64, complex128, int64 and int64 (indexing), on every device."""
        if device is not None:
            _runtime.get_device(device, func="default_dtypes")
        return dict(_dtypes.DEFAULTS)

    def dtypes(self, *, device=None, kind=None) -> dict:
        """The supported dtypes (by name), optionally of one ``kind`` (as in ``isdtype``)."""
        if device is not None:
            _runtime.get_device(device, func="dtypes")
        out = {}
        for d in _dtypes.STANDARD_DTYPES:
            if kind is None or _dtypes.isdtype(d, kind):
                out[d.name] = d
        return out

    def devices(self) -> tuple:
        """The devices arrays can live on and be computed on: the Taichi runtime's device (and
        the CPU). A tuple (2025.12); a list under ``TIARRAY_ARRAY_API_VERSION=2024.12``."""
        dev = _runtime.current_device()
        return api_sequence([dev] if dev.kind == "cpu" else [_runtime.CPU, dev])


def __array_namespace_info__() -> Info:
    """The namespace's inspection object (array API).

    Examples
    --------
    >>> import tiarray as ta
    >>> info = ta.__array_namespace_info__()
    >>> info.default_dtypes()["real floating"]
    tiarray.float64
    """
    return Info()
