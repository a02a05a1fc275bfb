"""``Operator(partition=...)``: which axes of an operator may be split across devices.

A partition rule is written in the einsum-like notation of JAX's ``custom_partitioning``
and Shardy (``"i, i -> i"``): one comma-separated entry per kernel parameter, inputs
then outputs, with ``->`` between them. An entry names the factor of each axis of that
array (letters, digits, underscores; starting with a letter); a scalar parameter has an
empty entry; ``...`` at the start of entries stands for any number of leading axes,
matched from the right between arrays (like NumPy broadcasting).

A factor that appears in an output *and* in at least one input is a **map factor**:
the rule declares that the kernel computes each index of it independently (slicing the
inputs that have the factor along it gives the same slice of the outputs; inputs without
it are used whole). XLA may split map factors across devices; each device then runs the
kernel on its shards. Every other factor (contractions, output sizes set by static
parameters) is never split: inputs are gathered along it.

This module is framework-neutral (parsing and checks); the JAX adapter turns a rule into
a ``custom_partitioning`` call.
"""

from __future__ import annotations

import re

__all__ = ["PartitionRule"]

ELLIPSIS = "..."
_FACTOR = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")


class PartitionRule:
    """A parsed ``partition`` rule of one Operator.

    Attributes
    ----------
    text : str
        The rule as given.
    ins, outs : tuple of tuple of str
        The factors of each input and output entry (``"..."`` for the ellipsis).
    map_factors : frozenset of str
        Factors that appear in an output and in an input (``"..."`` included when it
        does); only these may be split across devices.
    """

    __slots__ = ("text", "ins", "outs", "map_factors")

    def __init__(self, op_name: str, text, params, *, scratch: bool = False):
        where = f"Operator({op_name!r}): argument 'partition'"
        if not isinstance(text, str):
            raise TypeError(f"{where} must be a str such as 'i, i -> i', got {type(text).__name__} {text!r}")
        self.text = text
        if text.count("->") != 1:
            raise ValueError(f"{where} must contain '->' once (inputs -> outputs), got {text!r}")
        lhs, rhs = text.split("->")
        self.ins = tuple(_parse_entry(where, e, text) for e in lhs.split(","))
        self.outs = tuple(_parse_entry(where, e, text) for e in rhs.split(","))
        n = len(self.ins) + len(self.outs)
        names = [p.name for p in params]
        # scratch buffers (after the outputs) are not part of the call: no entries
        if n > len(params) or (n != len(params) and not scratch):
            raise ValueError(
                f"{where} has {len(self.ins)} input and {len(self.outs)} output entries; the kernel has "
                f"{len(params)} parameters ({', '.join(names)}): give one entry per parameter, an empty "
                "one for a scalar" + (" (none for the scratch buffers after the outputs)" if scratch else "")
            )
        for p, e in zip(params, self.ins + self.outs):
            if not p.is_array and e:
                raise ValueError(
                    f"{where}: '{p.name}' is a scalar parameter, its entry must be empty, got {' '.join(e)!r}"
                )
        in_f = {f for e in self.ins for f in e}
        out_f = {f for e in self.outs for f in e}
        self.map_factors = frozenset(in_f & out_f)

    @property
    def n_in(self) -> int:
        return len(self.ins)

    def __repr__(self) -> str:
        return f"PartitionRule({self.text!r})"

    # -------------------------------------------------------------- per-call views

    def dim_factors(self, entry, ndim: int, op_name: str, what: str) -> tuple:
        """The factor of each axis of an array of rank ``ndim`` described by ``entry``.

        Ellipsis axes become ``("...", k)`` with ``k`` counted from the last ellipsis
        axis (right-aligned between arrays).
        """
        if entry and entry[0] == ELLIPSIS:
            named = entry[1:]
            n_ell = ndim - len(named)
            if n_ell < 0:
                raise ValueError(
                    f"{op_name}: the partition rule {self.text!r} gives {what} at least {len(named)} "
                    f"axes, but it has {ndim}"
                )
            return tuple((ELLIPSIS, n_ell - 1 - k) for k in range(n_ell)) + tuple(named)
        if len(entry) != ndim:
            raise ValueError(
                f"{op_name}: the partition rule {self.text!r} gives {what} {len(entry)} axes "
                f"({' '.join(entry) or 'a scalar'}), but it has {ndim}"
            )
        return tuple(entry)

    def is_map(self, factor) -> bool:
        if isinstance(factor, tuple):  # an ellipsis axis
            return ELLIPSIS in self.map_factors
        return factor in self.map_factors

    def shardy_text(self, ins, outs) -> tuple[str, tuple]:
        """The Shardy rule for a custom call with these operand and result entries, and its
        ``need_replication`` factors (every factor that is not a map factor)."""

        def fmt(e):
            return " ".join(e)

        text = ", ".join(fmt(e) for e in ins) + " -> " + ", ".join(fmt(e) for e in outs)
        factors = {f for e in (*ins, *outs) for f in e if f != ELLIPSIS}
        need = tuple(sorted(f for f in factors if f not in self.map_factors))
        return text, need


def _parse_entry(where, e, text) -> tuple:
    toks = e.split()
    out = []
    for i, t in enumerate(toks):
        if t == ELLIPSIS:
            if i != 0:
                raise ValueError(f"{where}: '...' may only begin an entry, got {e.strip()!r} in {text!r}")
            out.append(ELLIPSIS)
        elif _FACTOR.match(t):
            out.append(t)
        else:
            raise ValueError(
                f"{where}: factor {t!r} in {text!r} is not a name (letters, digits, underscores, starting "
                "with a letter) or '...'"
            )
    if len(set(out)) != len(out):
        raise ValueError(f"{where}: a factor appears twice in the entry {e.strip()!r} of {text!r}")
    return tuple(out)
