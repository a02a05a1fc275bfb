"""Per-call CPU variant rules that Python and the native XLA FFI handler evaluate alike.

An Operator's ``policy`` may return a ``decide(host_inputs)`` callable that picks the serial
or the parallel kernel variant on every CPU launch. A callable made by :func:`rule_decide`
says *how* it decides, in a form native code can evaluate too (``_adapters/_ffi_cpu.cpp``),
so that calls under ``jax.jit`` keep their per-call decision without entering Python::

    serial   if pre < threshold
    else     serial if work * f < threshold, parallel otherwise

where ``f`` is, with ``by="fraction"``, the fraction of nonzero elements of input ``index``
(as ``np.count_nonzero`` counts: ``-0.0`` is zero, NaN is not), with ``by="value"`` the value
of the integer input ``index`` (a count; negative counts as 0), and ``f = 1`` when ``index``
is -1; ``threshold`` is ``THRESHOLDS[slot]``, read at each decision (native memory, so that
changing it takes effect in compiled functions too). Other ``decide`` callables keep
working: calls with them take the Python path.
"""

from __future__ import annotations

import ctypes

import numpy as np

__all__ = ["THRESHOLDS", "rule_decide"]

# Threshold slots; their owner (sparse/_policy.py) sets the values.
THRESHOLDS = (ctypes.c_int64 * 4)()


def rule_decide(pre: float, work: float, index: int, slot: int, by: str = "fraction"):
    """A ``decide(host_inputs)`` for the rule above, carrying it as ``decide.native_rule``."""
    pre = float(pre)
    work = float(work)
    index = int(index)
    slot = int(slot)
    if by not in ("fraction", "value"):
        raise ValueError(f"rule_decide(): argument 'by' must be 'fraction' or 'value', got {by!r}")
    thresholds = THRESHOLDS

    def decide(h):
        thr = thresholds[slot]
        if pre < thr:
            return "serial"
        w = work
        if index >= 0:
            x = h[index]
            if by == "value":
                w = work * max(int(x), 0)
            else:
                n = x.size
                w = work * (np.count_nonzero(x) / n if n else 0.0)
        return "serial" if w < thr else "parallel"

    decide.native_rule = (pre, work, index, slot, by)
    return decide
