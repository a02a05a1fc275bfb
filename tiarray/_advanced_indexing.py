"""Advanced indexing: integer arrays, boolean masks and their combinations with basic indices.

``x[key]`` and ``x[key] = value`` for keys that :mod:`tiarray._indexing` does not handle as
views. The semantics are NumPy's (a superset of the array API standard's):

- integer arrays (TiArrays, NumPy arrays, nested sequences) are broadcast together; their
  broadcast shape ``B`` replaces the indexed axes in the result. If all advanced indices
  (integer arrays, boolean arrays, and integers or 0-d booleans next to them) are adjacent
  in the key, ``B`` goes where they are; otherwise it goes first;
- a boolean array of ``k`` dimensions selects along ``k`` axes (its shape must match them)
  and acts as ``k`` integer arrays (``nonzero``); a 0-d boolean (or a Python ``bool``)
  adds an axis of length 1 (``True``) or 0 (``False``);
- negative indices count from the end; an out-of-range index raises ``IndexError``,
  a non-integer index (a float, a float array) raises ``IndexError`` too (as NumPy).

The work is done by the bounds-checked gather/scatter kernels of
:mod:`tiarray._kernels.gather`; basic components (slices, integers, ``None``, ``...``)
are applied first as a view, so no data is copied before the gather.
"""

from __future__ import annotations

import operator

import numpy as np

from . import _dtypes
from ._array_object import TiArray, c_strides
from ._buffer import empty_owned
from ._interchange import asarray
from ._kernels import gather as _g
from ._kernels.copy import copy_array, copy_into
from ._views import broadcast_shapes, broadcast_view, collapse

__all__ = ["getitem_advanced", "setitem_advanced"]

_GET = "TiArray.__getitem__: argument 'key'"
_SET = "TiArray.__setitem__: argument 'key'"

# component kinds
_NONE, _ELL, _SLICE, _INT, _BOOL0, _INTARR, _BOOLARR = range(7)


def _bad_index(func: str, k) -> IndexError:
    what = f"a {k._dtype.name} array" if isinstance(k, TiArray) else repr(k)
    return IndexError(
        f"{func}: only integers, slices (:), ellipsis (...), None and integer or "
        f"boolean arrays are valid indices, got {what}"
    )


def _as_index_array(k, x: TiArray, func: str) -> TiArray:

    if isinstance(k, TiArray):
        a = k
    else:
        try:
            a = asarray(k)
        except (TypeError, ValueError) as e:
            raise IndexError(f"{func}: {k!r} cannot be used as an index ({e})") from None
        if isinstance(k, (list, tuple)) and a.size == 0 and a._dtype.kind == "f":
            # an empty sequence is an (empty) integer index, as in NumPy
            a = asarray(np.zeros(a._shape, dtype=np.int64))
    if a._device != x._device:
        a = a.to_device(x._device)
    return a


def _classify(k, x: TiArray, func: str):
    if k is None:
        return _NONE, None
    if k is Ellipsis:
        return _ELL, None
    if isinstance(k, slice):
        return _SLICE, k
    if isinstance(k, (bool, np.bool_)):
        return _BOOL0, bool(k)
    if isinstance(k, (int, np.integer)):
        return _INT, operator.index(k)
    if isinstance(k, (float, complex, np.floating, np.complexfloating, str, bytes)):
        raise _bad_index(func, k)
    if (
        isinstance(k, (TiArray, list, tuple, np.ndarray))
        or hasattr(k, "__dlpack__")
        or hasattr(k, "__array__")
    ):
        a = _as_index_array(k, x, func)
        kind = a._dtype.kind
        if kind == "b":
            if a.ndim == 0:
                return _BOOL0, bool(a._scalar(func))
            return _BOOLARR, a
        if kind in "iu":
            if a.ndim == 0:
                return _INT, int(a._scalar(func))
            return _INTARR, a
        raise _bad_index(func, a)
    raise _bad_index(func, k)


class _Plan:
    """A parsed advanced key: the view of ``x`` after basic indices, and the gather layout."""

    __slots__ = ("view", "pre", "post", "arrays", "bool0", "masks", "p")


def _plan(x: TiArray, key, func: str) -> _Plan:
    if not isinstance(key, tuple):
        key = (key,)
    comps = [_classify(k, x, func) for k in key]
    n_ell = sum(1 for c in comps if c[0] == _ELL)
    if n_ell > 1:
        raise IndexError(f"{func}: an index can have only one Ellipsis (...)")
    consumed = 0
    for kind, v in comps:
        if kind in (_INT, _SLICE, _INTARR):
            consumed += 1
        elif kind == _BOOLARR:
            consumed += v.ndim
    if consumed > x.ndim:
        raise IndexError(f"{func}: too many indices: the array is {x.ndim}-D but {consumed} were given")
    # adjacency of the advanced components, in the key as written
    adv_pos = [i for i, (kind, _) in enumerate(comps) if kind in (_INT, _BOOL0, _INTARR, _BOOLARR)]
    adjacent = adv_pos == list(range(adv_pos[0], adv_pos[-1] + 1)) if adv_pos else True
    if n_ell == 0:
        comps.append((_ELL, None))

    it_ptr = x._ptr
    itemsize = x._dtype.itemsize
    vshape, vstrides = [], []
    out_axes = []  # view axes that appear in the output (basic), in order
    n_out_before = None  # number of basic output axes before the first advanced component
    arrays = []  # (TiArray, view axis) for integer arrays
    masks = []  # (mask TiArray, first view axis)
    bool0 = []
    ax = 0
    for kind, v in comps:
        if kind in (_INT, _BOOL0, _INTARR, _BOOLARR) and n_out_before is None:
            n_out_before = len(out_axes)
        if kind == _NONE:
            out_axes.append(len(vshape))
            vshape.append(1)
            vstrides.append(0)
        elif kind == _ELL:
            n = x.ndim - consumed
            for _ in range(n):
                out_axes.append(len(vshape))
                vshape.append(x._shape[ax])
                vstrides.append(x._strides[ax])
                ax += 1
        elif kind == _SLICE:
            d, st = x._shape[ax], x._strides[ax]
            start, stop, step = v.indices(d)
            cnt = len(range(start, stop, step))
            if cnt:
                it_ptr += start * st * itemsize
            out_axes.append(len(vshape))
            vshape.append(cnt)
            vstrides.append(st * step)
            ax += 1
        elif kind == _INT:
            d = x._shape[ax]
            if not -d <= v < d:
                raise IndexError(f"{func}: index {v} is out of bounds for axis {ax} with size {d}")
            it_ptr += (v + d if v < 0 else v) * x._strides[ax] * itemsize
            ax += 1
        elif kind == _BOOL0:
            bool0.append(v)
        elif kind == _INTARR:
            arrays.append((v, len(vshape), ax))
            vshape.append(x._shape[ax])
            vstrides.append(x._strides[ax])
            ax += 1
        else:  # _BOOLARR
            k = v.ndim
            want = x._shape[ax : ax + k]
            if v._shape != want:
                # a mask axis must have the array's size or be 0 (the standard's rule): a
                # size-0 axis selects nothing, so the view takes the mask's (empty) shape
                for j, (a, b) in enumerate(zip(want, v._shape)):
                    if a != b and b != 0:
                        raise IndexError(
                            f"{func}: boolean index did not match the indexed array along "
                            f"axis {ax + j}; the axis has size {a} but the boolean index has size {b} "
                            "(expected the axis size or 0)"
                        )
                want = v._shape
            masks.append((v, len(vshape), ax))
            vshape.extend(want)
            vstrides.extend(x._strides[ax : ax + k])
            ax += k
    view = x._view(it_ptr, tuple(vshape), tuple(vstrides))

    plan = _Plan()
    plan.view = view
    plan.arrays = arrays
    plan.masks = [(m, vax, xax, None) for m, vax, xax in masks]
    plan.bool0 = bool0
    plan.p = n_out_before if adjacent else 0
    basic = [(vshape[a], vstrides[a]) for a in out_axes]
    plan.pre = basic[: plan.p]
    plan.post = basic[plan.p :]
    return plan


def _resolve_b(plan: _Plan, factor: int, func: str):
    """Turn masks into offset arrays (in bit-view units) and compute the broadcast shape B of
    the advanced indices."""
    resolved = []
    for m, vax, xax, _ in plan.masks:
        k = m.ndim
        strides = tuple(s * factor for s in plan.view._strides[vax : vax + k])
        off = _g.mask_offsets(m, strides)
        resolved.append((m, vax, xax, off))
    plan.masks = resolved
    shapes = [a._shape for a, _, _ in plan.arrays]
    shapes += [off._shape for _, _, _, off in resolved]
    shapes += [((1,) if b else (0,)) for b in plan.bool0]
    try:
        return broadcast_shapes(*shapes, func=func)
    except ValueError:
        raise IndexError(
            f"{func}: the index arrays could not be broadcast together; shapes "
            f"{', '.join(str(s) for s in shapes)}"
        ) from None


def _out_of_bounds(func, e, plan, arr_info=None):
    if arr_info is not None:
        a, vax, xax = arr_info
        d = plan.view._shape[vax]
        return IndexError(f"{func}: index {e.value} is out of bounds for axis {xax} with size {d}")
    return IndexError(f"{func}: index {e.value} is out of bounds")


def _bits_layout(dtype: _dtypes.DType):
    """(factor, extra): complex128 moves as uint64 pairs: strides x2 and a trailing axis of 2."""
    if dtype is _dtypes.complex128:
        return 2, True
    return 1, False


def _combined_offsets(plan: _Plan, bshape: tuple, factor: int, func: str):
    """The int64 offsets (in bit-view elements) of every advanced position, over B (C order)."""
    view = plan.view
    nb = 1
    for s in bshape:
        nb *= s
    off = empty_owned(bshape, _dtypes.int64, view._device)
    first = True
    for a, vax, xax in plan.arrays:
        av = broadcast_view(a, bshape)
        try:
            _g.offsets(av, off, bshape, av._strides, view._shape[vax], view._strides[vax] * factor,
                       first=first)  # fmt: skip
        except _g.IndexOutOfBounds as e:
            raise _out_of_bounds(func, e, plan, (a, vax, xax)) from None
        first = False
    for _m, _vax, _xax, moff in plan.masks:
        ov = broadcast_view(moff, bshape)
        _g.offsets(ov, off, bshape, ov._strides, 0, 1, first=first, raw=False)
        first = False
    if first:  # only 0-d booleans: no offsets at all
        z = empty_owned((), _dtypes.int64, view._device, zero=True)
        if nb:
            copy_into(off, broadcast_view(z, bshape))
    return off


def _layout(plan: _Plan, bshape: tuple):
    """The gather's axes: (shape, x strides, p) with B flattened to one axis at p."""
    nb = 1
    for s in bshape:
        nb *= s
    shape = [s for s, _ in plan.pre] + [nb] + [s for s, _ in plan.post]
    xst = [st for _, st in plan.pre] + [0] + [st for _, st in plan.post]
    return shape, xst, len(plan.pre)


def _simple_mask(plan: _Plan) -> bool:
    """True for ``x[mask]``-like keys: one boolean array, nothing before it in the output."""
    return len(plan.masks) == 1 and not plan.arrays and not plan.bool0 and not plan.pre


def _rows(plan: _Plan, factor: int, extra: bool):
    """For the simple mask case: (row_stride, col_stride, ncols) or None if not 2-D-able."""
    m, vax, _, _ = plan.masks[0]
    vs = plan.view
    k = m.ndim
    mshape = vs._shape[vax : vax + k]
    mstr = vs._strides[vax : vax + k]
    # the mask's axes must flatten to one stride (C order)
    msh, (mst,) = collapse(tuple(mshape), tuple(mstr))
    if len(msh) != 1:
        return None
    post_shape = [s for s, _ in plan.post]
    post_str = [st * factor for _, st in plan.post]
    if extra:
        post_shape.append(2)
        post_str.append(1)
    ncols = 1
    for s in post_shape:
        ncols *= s
    if ncols == 0:
        return (mst[0] * factor, 1, 0)
    psh, (pst,) = collapse(tuple(post_shape) or (1,), tuple(post_str) or (0,))
    if len(psh) != 1:
        return None
    return (mst[0] * factor, pst[0], ncols)


# ----------------------------------------------------------------------------- getitem


def getitem_advanced(x: TiArray, key) -> TiArray:
    """``x[key]`` for keys with integer arrays, boolean masks or sequences (a new array)."""
    return _getitem(x, key, _GET)


def _single_array(key, x: TiArray):
    """The key's only component as a TiArray if it is one array (fast paths), else None."""
    k = key[0] if type(key) is tuple and len(key) == 1 else key
    if isinstance(k, TiArray):
        a = k
    elif isinstance(k, np.ndarray) and k.ndim:
        a = asarray(k)
    else:
        return None
    if a.ndim == 0 or a._device != x._device:
        return None
    return a


def _getitem(x: TiArray, key, func: str) -> TiArray:
    a = _single_array(key, x)
    if a is not None:
        kind = a._dtype.kind
        if kind in "iu" and x.ndim:
            return gather_axis(x, a, 0, func)
        if kind == "b" and a._shape == x._shape[: a.ndim]:
            r = _mask_get(x, a)
            if r is not None:
                return r

    plan = _plan(x, key, func)
    factor, extra = _bits_layout(x._dtype)

    if _simple_mask(plan):
        rows = _rows(plan, factor, extra)
        if rows is not None:
            m = plan.masks[0][0]
            fm, starts, count, bs, nblocks = _g.mask_starts(m)
            out_shape = (count,) + tuple(s for s, _ in plan.post)
            out = empty_owned(out_shape, x._dtype, x._device)
            rs, cs, nc = rows
            vb = _g.bits_view(plan.view)
            _g.mask_select(
                vb, fm, starts, count, bs, nblocks, _g.bits_view(out), rs, cs, nc, 0, scatter=False
            )
            return out

    bshape = _resolve_b(plan, factor, func)
    out_shape = tuple(s for s, _ in plan.pre) + bshape + tuple(s for s, _ in plan.post)
    out = empty_owned(out_shape, x._dtype, x._device)
    nb = 1
    for s in bshape:
        nb *= s
    shape, xst, p = _layout(plan, bshape)
    xst = [s * factor for s in xst]
    if extra:
        shape.append(2)
        xst.append(1)
    yst = list(c_strides(tuple(shape)))
    xb = _g.bits_view(plan.view)
    yb = _g.bits_view(out)

    if len(plan.arrays) == 1 and not plan.masks:
        a, vax, xax = plan.arrays[0]
        idx = _contiguous_index(a, bshape, func)
        ist = [0] * len(shape)
        ist[p] = 1
        xst[p] = plan.view._strides[vax] * factor
        if out.size == 0:
            if nb:
                _check_only(plan, bshape, factor, func)
            return out
        try:
            _g.move(xb, idx, yb, tuple(shape), tuple(xst), tuple(yst), tuple(ist), p,
                    plan.view._shape[vax], raw=True, scatter=False)  # fmt: skip
        except _g.IndexOutOfBounds as e:
            raise _out_of_bounds(func, e, plan, plan.arrays[0]) from None
        return out

    off = _combined_offsets(plan, bshape, factor, func)
    if out.size == 0:
        return out
    ist = [0] * len(shape)
    ist[p] = 1
    _g.move(xb, _flat(off), yb, tuple(shape), tuple(xst), tuple(yst), tuple(ist), p, 0, raw=False,
            scatter=False)  # fmt: skip
    return out


def _flat(a: TiArray) -> TiArray:
    return a._view(a._ptr, (a.size,), (1,))


def _contiguous_index(a: TiArray, bshape: tuple, func: str) -> TiArray:
    """The index array broadcast to B, C-contiguous and flattened."""
    if a._shape != tuple(bshape) or not a._is_c_contiguous():
        a = copy_array(broadcast_view(a, bshape))
    return _flat(a)


def _check_only(plan: _Plan, bshape: tuple, factor: int, func: str) -> None:
    """Bounds-check the integer index arrays (when the result is empty but B is not)."""
    _combined_offsets(plan, bshape, factor, func)


def gather_axis(x: TiArray, idx: TiArray, axis: int, func: str) -> TiArray:
    """``x[(slice(None),) * axis + (idx,)]`` for an integer TiArray ``idx`` (the fast path of
    ``take`` and of ``x[int_array]``)."""
    if not idx._is_c_contiguous():
        idx = copy_array(idx)
    nb = idx.size
    fi = idx._view(idx._ptr, (nb,), (1,))
    dim = x._shape[axis]
    pre, post = x._shape[:axis], x._shape[axis + 1 :]
    out = empty_owned(pre + idx._shape + post, x._dtype, x._device)
    try:
        if out.size == 0:
            if nb:
                _g.check_bounds(fi, dim)
            return out
        factor, extra = _bits_layout(x._dtype)
        ost = c_strides(pre + (nb,) + post)
        shape, xst, yst = [], [], []
        if pre:
            sh, (a, b) = collapse(pre, x._strides[:axis], ost[:axis])
            shape += sh
            xst += a
            yst += b
        p = len(shape)
        shape.append(nb)
        xst.append(x._strides[axis])
        yst.append(ost[axis])
        if post:
            sh, (a, b) = collapse(post, x._strides[axis + 1 :], ost[axis + 1 :])
            shape += sh
            xst += a
            yst += b
        xst = [v * factor for v in xst]
        yst = [v * factor for v in yst]
        ist = [0] * len(shape)
        ist[p] = 1
        if len(shape) == 1 and not extra:
            _g.gather1(_g.bits_view(x), fi, _g.bits_view(out), xst[0], yst[0], 1, dim)
            return out
        if extra:
            shape.append(2)
            xst.append(1)
            yst.append(1)
            ist.append(0)
        _g.move(_g.bits_view(x), fi, _g.bits_view(out), tuple(shape), tuple(xst), tuple(yst), tuple(ist), p, dim,
                raw=True, scatter=False)  # fmt: skip
    except _g.IndexOutOfBounds as e:
        raise IndexError(
            f"{func}: index {e.value} is out of bounds for axis {axis} with size {dim}"
        ) from None
    return out


def _mask_get(x: TiArray, m: TiArray):
    """``x[m]`` for a boolean TiArray ``m`` of shape ``x.shape[:m.ndim]``, or None when the
    masked axes or the rest do not flatten to single strides."""
    k = m.ndim
    msh, (mst,) = collapse(x._shape[:k], x._strides[:k])
    if len(msh) != 1:
        return None
    factor, extra = _bits_layout(x._dtype)
    post = x._shape[k:]
    post_shape = list(post)
    post_str = [st * factor for st in x._strides[k:]]
    if extra:
        post_shape.append(2)
        post_str.append(1)
    ncols = 1
    for v in post_shape:
        ncols *= v
    if ncols and post_shape:
        psh, (pst,) = collapse(tuple(post_shape), tuple(post_str))
        if len(psh) != 1:
            return None
        cs = pst[0]
    else:
        cs = 1
    n = msh[0]
    if ncols and _g._select_l.use_serial(n * (1 + ncols * x._dtype.itemsize)):
        # small: one serial pass into room for every row, then a view of the rows used
        fm = _g._flat_mask(m)
        full = empty_owned((n,) + post, x._dtype, x._device)
        count = _g.mask_compact(_g.bits_view(x), fm, _g.bits_view(full), mst[0] * factor, cs, ncols)
        shape = (count,) + post
        return full._view(full._ptr, shape, c_strides(shape))
    fm, starts, count, bs, nblocks = _g.mask_starts(m)
    out = empty_owned((count,) + post, x._dtype, x._device)
    _g.mask_select(_g.bits_view(x), fm, starts, count, bs, nblocks, _g.bits_view(out), mst[0] * factor, cs, ncols, 0,
                   scatter=False)  # fmt: skip
    return out


# ----------------------------------------------------------------------------- setitem


def setitem_advanced(x: TiArray, key, value) -> None:
    """``x[key] = value`` for keys with integer arrays, boolean masks or sequences.

    ``value`` is broadcast to the shape of ``x[key]``. With repeated indices, which of the
    values lands is unspecified (as in the standard).
    """
    func = _SET
    plan = _plan(x, key, func)
    v = as_value(value, x, "TiArray.__setitem__")
    if v._dtype is not x._dtype or _overlaps(v, x):
        v = copy_array(v, x._dtype)
    factor, extra = _bits_layout(x._dtype)
    xb = _g.bits_view(plan.view)

    if _simple_mask(plan):
        rows = _rows(plan, factor, extra)
        if rows is not None:
            rs, cs, nc = rows
            m = plan.masks[0][0]
            post_shape = tuple(s for s, _ in plan.post)
            if v.ndim <= len(post_shape) or (v.ndim == len(post_shape) + 1 and v._shape[0] == 1):
                # one row for every selected position: a masked fill, no compaction needed
                row = v if v.ndim <= len(post_shape) else v._view(v._ptr, v._shape[1:], v._strides[1:])
                row = _value_to(row, post_shape, v)
                if not row._is_c_contiguous() or row._shape != post_shape:
                    row = copy_array(row)
                fm = _g._flat_mask(m)
                rb = _g.bits_view(row)
                rb = rb._view(rb._ptr, (rb.size,), (1,))
                _g.mask_fill(xb, fm, rb, rs, cs, nc, 0)
                return
            fm, starts, count, bs, nblocks = _g.mask_starts(m)
            vb = _value_to(v, (count,) + post_shape, v)
            if not vb._is_c_contiguous():
                vb = copy_array(vb)
            _g.mask_select(xb, fm, starts, count, bs, nblocks, _g.bits_view(vb), rs, cs, nc, 0, scatter=True)
            return

    bshape = _resolve_b(plan, factor, func)
    out_shape = tuple(s for s, _ in plan.pre) + bshape + tuple(s for s, _ in plan.post)
    vv = _value_to(v, out_shape, v)
    nb = 1
    for s in bshape:
        nb *= s
    shape, xst, p = _layout(plan, bshape)
    xst = [s * factor for s in xst]
    # the value's strides with B flattened: B's axes must merge into one
    np_ = len(plan.pre)
    bst = vv._strides[np_ : np_ + len(bshape)]
    flat_b = _flat_stride(bshape, bst)
    if flat_b is None:
        vv = empty_owned(out_shape, x._dtype, x._device)
        copy_into(vv, broadcast_view(v, out_shape))
        flat_b = _flat_stride(bshape, vv._strides[np_ : np_ + len(bshape)])
    yst = list(vv._strides[:np_]) + [flat_b] + list(vv._strides[np_ + len(bshape) :])
    yst = [s * factor for s in yst]
    if extra:
        shape.append(2)
        xst.append(1)
        yst.append(1)
    yb = _g.bits_view(vv)
    if len(plan.arrays) == 1 and not plan.masks:
        a, vax, xax = plan.arrays[0]
        idx = _contiguous_index(a, bshape, func)
        ist = [0] * len(shape)
        ist[p] = 1
        xst[p] = plan.view._strides[vax] * factor
        if vv.size == 0:
            if nb:
                _check_only(plan, bshape, factor, func)
            return
        try:
            # validate every index before writing anything (as NumPy)
            _g.check_bounds(idx, plan.view._shape[vax])
            _g.move(xb, idx, yb, tuple(shape), tuple(xst), tuple(yst), tuple(ist), p,
                    plan.view._shape[vax], raw=True, scatter=True)  # fmt: skip
        except _g.IndexOutOfBounds as e:
            raise _out_of_bounds(func, e, plan, plan.arrays[0]) from None
        return
    off = _combined_offsets(plan, bshape, factor, func)
    if vv.size == 0:
        return
    ist = [0] * len(shape)
    ist[p] = 1
    _g.move(xb, _flat(off), yb, tuple(shape), tuple(xst), tuple(yst), tuple(ist), p, 0,
            raw=False, scatter=True)  # fmt: skip


def _value_to(v: TiArray, shape: tuple, orig: TiArray) -> TiArray:
    try:
        return broadcast_view(v, shape)
    except ValueError:
        raise ValueError(
            f"TiArray.__setitem__: argument 'value' of shape {orig._shape} cannot be broadcast to the "
            f"shape of the indexed selection {tuple(shape)}"
        ) from None


def _overlaps(a: TiArray, b: TiArray) -> bool:
    """Whether the memory ``a`` and ``b`` touch may overlap."""
    if a._device != b._device or a.size == 0 or b.size == 0:
        return False
    lo1, hi1 = a._byte_extent()
    lo2, hi2 = b._byte_extent()
    return lo1 < hi2 and lo2 < hi1


def _flat_stride(bshape: tuple, bst: tuple):
    """The single stride that walks B's axes in C order, or None if there is none."""
    st = None
    acc = None
    for s, t in zip(reversed(bshape), reversed(bst)):
        if s == 1:
            continue
        if st is None:
            st, acc = t, t * s
        elif t != acc:
            return None
        else:
            acc = t * s
    return 0 if st is None else st


def as_value(value, x: TiArray, func: str) -> TiArray:
    """The right-hand side of an assignment as a TiArray on ``x``'s device."""
    if isinstance(value, (bool, int, float, complex)):
        if isinstance(value, complex) and x._dtype.kind != "c":
            raise TypeError(f"{func}: cannot assign a complex value to a {x._dtype.name} array")
        if isinstance(value, float) and x._dtype.kind in "biu":
            raise TypeError(f"{func}: cannot assign a float value to a {x._dtype.name} array")
        if x._dtype.kind in "iu" and isinstance(value, int) and not isinstance(value, bool):
            info = np.iinfo(x._dtype.numpy)
            if not info.min <= value <= info.max:
                raise OverflowError(
                    f"{func}: argument 'value' = {value} is outside the range of {x._dtype.name} "
                    f"[{info.min}, {info.max}]"
                )
        return asarray(value, dtype=x._dtype, device=x._device)
    if isinstance(value, (str, bytes, dict, set)) or value is None:
        raise TypeError(
            f"{func}: argument 'value' must be an array or a Python scalar, got {type(value).__name__}"
        )
    try:
        v = asarray(value)
    except TypeError as e:
        raise TypeError(f"{func}: argument 'value' must be an array or a Python scalar: {e}") from None
    if v._device != x._device:
        v = v.to_device(x._device)
    if v._dtype is not x._dtype:
        try:
            r = _dtypes.promote(x._dtype, v._dtype)
        except TypeError:
            r = None
        if r is not x._dtype:
            raise TypeError(
                f"{func}: cannot assign {v._dtype.name} values to a {x._dtype.name} array without "
                "losing information; use astype first"
            )
    return v
