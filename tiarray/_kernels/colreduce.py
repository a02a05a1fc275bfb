"""Reductions over the rows of a row-major block on the CPU: ``sum``/``prod``/``max``/
``min`` (and ``mean``) over axis 0 of a C-contiguous matrix, the batch axis of most
programs.

The general column kernel (``reduce._reduce_cols``) keeps 16 accumulators per task in
registers and walks the reduced positions one at a time: 2-6x slower than NumPy, whose
loop adds whole rows into a row of accumulators with SIMD instructions. This kernel does
the same: a task owns a tile of up to ``_TW`` columns and a chunk of rows, and a
``ti.real_func`` (array pointers in registers, so LLVM vectorises the loop; see
``docs/internals.md``) adds each row of the tile into the tile's accumulators in ``part``
(``part[rc * L + j]``: row chunk ``rc``'s accumulator of column ``j``, at most 4 KiB per
tile, which stays in the L1 cache). A second loop combines the row chunks and stores the
results.

Values and their combination are those of the general kernels (``reduce._value``,
``reduce._step``, ``reduce._finish``): float32 sums accumulate in float64, float max/min
compare monotone integer keys of the bits, so NaN propagates and ``-0.0 < +0.0``. The
functions are branch-free (static ``if`` only), which a real function requires.

Used by :func:`tiarray._kernels.reduce.reduce_into` when the reduced axes collapse to one
axis of row stride ``S >= L`` over ``L`` contiguous outputs, for float32/float64 data.

No ``from __future__ import annotations`` here: Taichi reads the annotations.
"""

from .._backend import ti
from .._launch import IEEE, Launcher
from . import _reduce_funcs as R

_TW = 2048  # columns per tile

_LAUNCHERS: dict = {}


def launcher(op: int, x_t, acc_t, out_t, post: int, val_t, key_t, fkey: bool) -> Launcher:
    """The Launcher of the row-reduction kernel for one specialisation (cached)."""
    key = (op, x_t, acc_t, out_t, post, val_t, key_t, fkey)
    ln = _LAUNCHERS.get(key)
    if ln is None:
        ln = _LAUNCHERS[key] = Launcher(_make(*key), name="reduce_rows", compile_options=IEEE)
    return ln


def _make(op, x_t, acc_t, out_t, post, val_t, key_t, fkey):
    X = ti.types.ndarray(dtype=x_t, ndim=1)
    P = ti.types.ndarray(dtype=acc_t, ndim=1)
    O = ti.types.ndarray(dtype=out_t, ndim=1)

    @ti.real_func
    def rows(
        x: X, part: P, off: ti.i32, S: ti.i32, r0: ti.i32, r1: ti.i32, c0: ti.i32, c1: ti.i32, pb: ti.i32
    ):
        # part[pb + j - c0] = reduction of x[off + i * S + j] over i in [r0, r1), j in [c0, c1)
        b0 = off + r0 * S - pb
        for p in range(pb, pb + c1 - c0):
            part[p] = R._value(x, b0 + p + c0, op, acc_t, val_t, key_t, fkey, False, 1.0)
        for i in range(r0 + 1, r1):
            b = off + i * S - pb + c0
            for p in range(pb, pb + c1 - c0):
                part[p] = R._step(
                    op, acc_t, part[p], R._value(x, b + p, op, acc_t, val_t, key_t, fkey, False, 1.0), 0
                )

    @ti.kernel
    def reduce_rows(
        out: O, part: P, x: X, off: ti.i32, S: ti.i32, m: ti.i32, L: ti.i32, rch: ti.i32, nrc: ti.i32,
        pad: ti.i32, div: ti.f64,
    ):  # fmt: skip
        nct = (L - 1) // _TW + 1
        for s_ in range(nct * nrc * pad):
            if s_ % pad == 0:  # one task per block of Taichi's CPU pool (see reduce.task_pad)
                t = s_ // pad
                rc = t % nrc
                c0 = t // nrc * _TW
                r0 = rc * rch
                rows(x, part, off, S, r0, r0 + ti.min(rch, m - r0), c0, c0 + ti.min(_TW, L - c0), rc * L + c0)
        for j in range(L):
            a = part[j]
            for rc in range(1, nrc):
                a = R._step(op, acc_t, a, part[rc * L + j], 0)
            R._finish(out, j, a, a, div, acc_t, val_t, out_t, False, post, key_t, fkey)

    return reduce_rows
