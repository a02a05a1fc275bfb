"""Views: new shapes and strides over the same memory, never a copy.

Used by indexing, manipulation functions and kernels. Every function returns a TiArray
sharing the input's memory and owner, or raises if no such view exists.
"""

from __future__ import annotations

from ._array_object import TiArray, c_strides

__all__ = ["broadcast_shapes", "broadcast_view", "reshape_view", "permute_view", "real_view", "collapse"]


def broadcast_shapes(*shapes, func: str = "broadcast_shapes") -> tuple:
    """The broadcast shape of ``shapes`` (array API broadcasting rules)."""
    nd = max((len(s) for s in shapes), default=0)
    out = [1] * nd
    for s in shapes:
        off = nd - len(s)
        for i, d in enumerate(s):
            o = out[off + i]
            if d == o or d == 1:
                continue
            if o == 1:
                out[off + i] = d
            else:
                raise ValueError(
                    f"{func}(): shapes {', '.join(str(tuple(x)) for x in shapes)} cannot be broadcast together"
                )
    return tuple(out)


def broadcast_view(x: TiArray, shape: tuple, func: str = "broadcast_to") -> TiArray:
    """``x`` broadcast to ``shape`` (zero strides on new or size-1 axes)."""
    shape = tuple(shape)
    if shape == x._shape:
        return x
    nd = len(shape)
    if x.ndim > nd:
        raise ValueError(f"{func}(): cannot broadcast shape {x._shape} to {shape}")
    off = nd - x.ndim
    strides = [0] * nd
    for i, (d, st) in enumerate(zip(x._shape, x._strides)):
        t = shape[off + i]
        if d == t:
            strides[off + i] = st
        elif d == 1:
            strides[off + i] = 0
        else:
            raise ValueError(f"{func}(): cannot broadcast shape {x._shape} to {shape}")
    return x._view(x._ptr, shape, tuple(strides))


def reshape_view(x: TiArray, shape: tuple) -> TiArray | None:
    """``x`` with a new shape as a view, or None if the strides do not allow it.

    Works for C-contiguous data and, more generally, whenever each group of merged or
    split axes is contiguous within itself (NumPy's rule).
    """
    shape = tuple(shape)
    if shape == x._shape:
        return x
    if x._is_c_contiguous():
        return x._view(x._ptr, shape, c_strides(shape))
    # squeeze-out size-1 axes, then match groups
    old = [(d, s) for d, s in zip(x._shape, x._strides) if d != 1]
    oi = 0
    ni = 0
    new = list(shape)
    res = [0] * len(new)
    while ni < len(new) or oi < len(old):
        if ni < len(new) and new[ni] == 1:
            res[ni] = 0
            ni += 1
            continue
        if oi >= len(old) or ni >= len(new):
            return None
        # gather a group of old axes whose product equals a group of new axes
        op, np_ = old[oi][0], new[ni]
        oj, nj = oi, ni
        while op != np_:
            if op < np_:
                oj += 1
                if oj >= len(old):
                    return None
                op *= old[oj][0]
            else:
                nj += 1
                if nj >= len(new):
                    return None
                np_ *= new[nj]
        # the old group must be contiguous: stride[k] == stride[k+1] * dim[k+1]
        for k in range(oi, oj):
            if old[k][1] != old[k + 1][1] * old[k + 1][0]:
                return None
        st = old[oj][1]
        for k in range(nj, ni - 1, -1):
            res[k] = st
            st *= new[k]
        oi, ni = oj + 1, nj + 1
    return x._view(x._ptr, shape, tuple(res))


def permute_view(x: TiArray, axes: tuple) -> TiArray:
    return x._view(x._ptr, tuple(x._shape[a] for a in axes), tuple(x._strides[a] for a in axes))


def real_view(x: TiArray) -> TiArray:
    """A complex array as its real dtype with a trailing axis of length 2 (re, im)."""
    from ._dtypes import finfo_dtype

    if x._dtype.kind != "c":
        return x
    rd = finfo_dtype(x._dtype)
    return TiArray._new(
        x._ptr, x._shape + (2,), tuple(2 * s for s in x._strides) + (1,), rd, x._device, x._owner, x._readonly
    )


def collapse(shape: tuple, *strides_list) -> tuple:
    """Merge adjacent axes that are contiguous in every operand; drop size-1 axes.

    Returns ``(shape, [strides, ...])`` describing the same element walk in C order with
    as few axes as possible (at least one).
    """
    dims = [i for i, d in enumerate(shape) if d != 1]
    if not dims:
        return (1,), [(0,) for _ in strides_list]
    sh = [shape[dims[0]]]
    sts = [[s[dims[0]]] for s in strides_list]
    for i in dims[1:]:
        d = shape[i]
        if all(st[-1] == s[i] * d for st, s in zip(sts, strides_list)):
            sh[-1] *= d
            for st, s in zip(sts, strides_list):
                st[-1] = s[i]
        else:
            sh.append(d)
            for st, s in zip(sts, strides_list):
                st.append(s[i])
    return tuple(sh), [tuple(st) for st in sts]


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    """The shape of a reduction of ``shape`` over ``axes``."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)
