"""The ``ti.func`` building blocks of the reductions (values, steps, float keys, tasks),
shared by the general kernels (:mod:`tiarray._kernels.reduce`) and the row kernel
(:mod:`tiarray._kernels.colreduce`).

No ``from __future__ import annotations`` here: Taichi reads the annotations.
"""

from .._backend import ti

# operations (template values)
SUM, PROD, MAX, MIN, ALL, ANY, COUNT, SQDEV = range(8)
# post-processing of the final value
POST_NONE, POST_DIV, POST_SQRT = range(3)

_LEVELS = 32  # pairwise levels: 2**32 blocks, more than an ndarray can hold
_BLOCK = 512  # elements per block of a pairwise sum


# ----------------------------------------------------------------------------- float keys


@ti.func
def float_key(v, key_t: ti.template()):
    """An unsigned integer whose order is the order of the float ``v`` (NaN excluded).

    ``key_t`` is ``ti.u32`` for ``float32`` values and ``ti.u64`` for ``float64``.
    Negative floats have all bits flipped, positive ones only the sign bit.
    """
    if ti.static(key_t == ti.u32):
        b = ti.bit_cast(v, ti.u32)
        m = ti.cast(ti.bit_cast(b, ti.i32) >> 31, ti.u32) | ti.u32(0x80000000)
        return b ^ m
    else:
        b = ti.bit_cast(v, ti.u64)
        m = ti.cast(ti.bit_cast(b, ti.i64) >> 63, ti.u64) | ti.u64(0x8000000000000000)
        return b ^ m


@ti.func
def key_float(k, key_t: ti.template()):
    """The float of a key made by :func:`float_key`."""
    if ti.static(key_t == ti.u32):
        m = ti.cast(ti.bit_cast(~k, ti.i32) >> 31, ti.u32) | ti.u32(0x80000000)
        return ti.bit_cast(k ^ m, ti.f32)
    else:
        m = ti.cast(ti.bit_cast(~k, ti.i64) >> 63, ti.u64) | ti.u64(0x8000000000000000)
        return ti.bit_cast(k ^ m, ti.f64)


@ti.func
def is_nan(v, key_t: ti.template()):
    """NaN test on the bits (robust to Taichi's fast-math folding of ``v != v``)."""
    r = False
    if ti.static(key_t == ti.u32):
        r = (ti.bit_cast(v, ti.u32) & ti.u32(0x7FFFFFFF)) > ti.u32(0x7F800000)
    else:
        r = (ti.bit_cast(v, ti.u64) & ti.u64(0x7FFFFFFFFFFFFFFF)) > ti.u64(0x7FF0000000000000)
    return r


# ----------------------------------------------------------------------------- the kernel


@ti.func
def _out_base(meta: ti.template(), o):
    """Offset in x of output ``o``'s first element (the kept axes walked in C order)."""
    ndo = ti.cast(meta[1], ti.i32)
    base = meta[0]
    rem = ti.cast(o, ti.i64)
    for kk in range(ndo):
        d = ndo - 1 - kk
        sh = meta[3 + d]
        base += (rem % sh) * meta[3 + ndo + d]
        rem = rem // sh
    return base


@ti.func
def _walk_offset(meta: ti.template(), base, pos, ndi, ish):
    """Offset of inner flat position ``pos``, without its last-axis part, and its index
    along the last inner axis."""
    L = meta[ish + ndi - 1]
    j = pos % L
    q = pos // L
    off = base
    for kk in range(ndi - 1):
        d = ndi - 2 - kk
        sh = meta[ish + d]
        off += (q % sh) * meta[ish + ndi + d]
        q = q // sh
    return off, j


@ti.func
def _value(
    x: ti.template(),
    i,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    widen: ti.template(),
    one,
):
    """Element ``x[i]`` as the accumulator sees it (a float key for float max/min; a
    widened value for sums, multiplied by the runtime ``one`` so that LLVM cannot narrow
    the wide accumulation back to the input precision)."""
    r = ti.cast(0, acc_t)
    if ti.static(fkey):
        v = ti.cast(x[i], val_t)
        k = float_key(v, key_t)
        nan_key = ti.cast(0, key_t)
        if ti.static(op == MAX):
            nan_key = ~nan_key
        r = ti.select(is_nan(v, key_t), nan_key, k)
    elif ti.static(widen):
        r = ti.cast(x[i], acc_t) * one
    else:
        r = ti.cast(x[i], acc_t)
    return r


@ti.func
def _step(op: ti.template(), acc_t: ti.template(), a, v, mu):
    """One step of a real reduction (for ALL/ANY/COUNT, ``v`` is 1 for a non-zero element)."""
    r = a
    if ti.static(op == SUM):
        r = a + v
    elif ti.static(op == PROD):
        r = a * v
    elif ti.static(op == MAX):
        r = ti.max(a, v)
    elif ti.static(op == MIN):
        r = ti.min(a, v)
    elif ti.static(op == ALL):
        r = a & v
    elif ti.static(op == ANY):
        r = a | v
    elif ti.static(op == COUNT):
        r = a + v
    elif ti.static(op == SQDEV):
        d = v - mu
        r = a + d * d
    return r


@ti.func
def nonzero_bits(v, xbits: ti.template()):
    """Whether ``v`` is non-zero. For floats (``xbits`` 16/32/64) the test is on the bits:
    Taichi compiles ``!=`` as an ordered comparison, which is False for NaN."""
    r = False
    if ti.static(xbits == 0):
        r = v != 0
    elif ti.static(xbits == 16):
        r = (ti.bit_cast(v, ti.u16) & ti.u16(0x7FFF)) != ti.u16(0)
    elif ti.static(xbits == 32):
        r = (ti.bit_cast(v, ti.u32) & ti.u32(0x7FFFFFFF)) != ti.u32(0)
    else:
        r = (ti.bit_cast(v, ti.u64) & ti.u64(0x7FFFFFFFFFFFFFFF)) != ti.u64(0)
    return r


@ti.func
def _nonzero(x: ti.template(), i, cplx: ti.template(), acc_t: ti.template(), xbits: ti.template()):
    nz = nonzero_bits(x[i], xbits)
    if ti.static(cplx):
        nz = nz or nonzero_bits(x[i + 1], xbits)
    return ti.cast(nz, acc_t)


@ti.func
def _run_real(
    x: ti.template(),
    lo,
    s,
    cnt,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    widen: ti.template(),
    one,
    mu,
    init,
    xbits: ti.template(),
):
    """Reduce ``cnt`` elements ``x[lo + k * s]`` into ``init`` (real data)."""
    a = init
    if s == 1:
        # the loop variable is the index: LLVM sees consecutive loads and vectorises
        for i in range(lo, lo + cnt):
            if ti.static(op == ALL or op == ANY or op == COUNT):
                a = _step(op, acc_t, a, _nonzero(x, i, False, acc_t, xbits), mu)
            else:
                a = _step(op, acc_t, a, _value(x, i, op, acc_t, val_t, key_t, fkey, widen, one), mu)
    else:
        for k in range(cnt):
            i = lo + k * s
            if ti.static(op == ALL or op == ANY or op == COUNT):
                a = _step(op, acc_t, a, _nonzero(x, i, False, acc_t, xbits), mu)
            else:
                a = _step(op, acc_t, a, _value(x, i, op, acc_t, val_t, key_t, fkey, widen, one), mu)
    return a


@ti.func
def _run_complex(
    x: ti.template(), lo, s, cnt, op: ti.template(), acc_t: ti.template(), one, ar, ai, xbits: ti.template()
):
    """Reduce ``cnt`` complex elements (pairs at ``lo + k * s``) into ``(ar, ai)``."""
    for k in range(cnt):
        i = lo + k * s
        if ti.static(op == SUM):
            ar += ti.cast(x[i], acc_t) * one
            ai += ti.cast(x[i + 1], acc_t) * one
        elif ti.static(op == PROD):
            vr = ti.cast(x[i], acc_t)
            vi = ti.cast(x[i + 1], acc_t)
            ar, ai = ar * vr - ai * vi, ar * vi + ai * vr
        else:
            ar = _step(op, acc_t, ar, _nonzero(x, i, True, acc_t, xbits), ar)
    return ar, ai


@ti.func
def _task(
    x: ti.template(),
    aux: ti.template(),
    meta: ti.template(),
    t,
    n_chunks,
    chunk,
    m,
    one,
    op: ti.template(),
    acc_t: ti.template(),
    val_t: ti.template(),
    cplx: ti.template(),
    pairwise: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
    widen: ti.template(),
    xbits: ti.template(),
):
    """The accumulator ``(re, im)`` of task ``t``: chunk ``t % n_chunks`` of output
    ``t // n_chunks``."""
    o = t // n_chunks
    c = t - o * n_chunks
    ndi = ti.cast(meta[2], ti.i32)
    ish = 3 + 2 * ti.cast(meta[1], ti.i32)
    base = _out_base(meta, o)
    mu = ti.cast(0, acc_t)
    if ti.static(op == SQDEV):
        mu = ti.cast(aux[o], acc_t)
    start = ti.cast(c, ti.i64) * chunk
    end = ti.min(start + chunk, m)
    L = meta[ish + ndi - 1]
    sL = meta[ish + 2 * ndi - 1]

    ar = ti.cast(0, acc_t)
    ai = ti.cast(0, acc_t)
    if ti.static(op == PROD or op == ALL):
        ar = ti.cast(1, acc_t)
    if ti.static(op == MAX or op == MIN):
        if start < end:
            off0, j0 = _walk_offset(meta, base, start, ndi, ish)
            ar = _value(x, ti.cast(off0 + j0 * sL, ti.i32), op, acc_t, val_t, key_t, fkey, False, one)
    stack_r = ti.Vector([ti.cast(0, acc_t)] * (_LEVELS if ti.static(pairwise) else 1), dt=acc_t)
    stack_i = ti.Vector([ti.cast(0, acc_t)] * (_LEVELS if ti.static(pairwise and cplx) else 1), dt=acc_t)
    nblk = ti.cast(0, ti.i64)

    pos = start
    if ti.static(cplx and op == PROD):
        # start from the first element, not from 1 * it: (1 + 0j) * (0 + nan j) is NaN + NaN j
        if start < end:
            off0, j0 = _walk_offset(meta, base, start, ndi, ish)
            o0 = ti.cast(off0 + j0 * sL, ti.i32)
            ar = ti.cast(x[o0], acc_t)
            ai = ti.cast(x[o0 + 1], acc_t)
            pos = start + 1
    while pos < end:
        off, j = _walk_offset(meta, base, pos, ndi, ish)
        r = ti.min(L - j, end - pos)
        off += j * sL
        if ti.static(pairwise):
            done = ti.cast(0, ti.i64)
            while done < r:
                blk = ti.min(r - done, _BLOCK)
                lo = ti.cast(off + done * sL, ti.i32)
                br = ti.cast(0, acc_t)
                bi = ti.cast(0, acc_t)
                if ti.static(cplx):
                    br, bi = _run_complex(
                        x, lo, ti.cast(sL, ti.i32), ti.cast(blk, ti.i32), op, acc_t, one, br, bi, xbits
                    )
                else:
                    br = _run_real(
                        x,
                        lo,
                        ti.cast(sL, ti.i32),
                        ti.cast(blk, ti.i32),
                        op,
                        acc_t,
                        val_t,
                        key_t,
                        fkey,
                        widen,
                        one,
                        mu,
                        br,
                        xbits,
                    )
                # push the block sum on a binary counter: sums of equal sizes merge
                carry = 1
                for lv in ti.static(range(_LEVELS)):
                    if carry:
                        if (nblk >> lv) & 1:
                            br = stack_r[lv] + br
                            stack_r[lv] = ti.cast(0, acc_t)
                            if ti.static(cplx):
                                bi = stack_i[lv] + bi
                                stack_i[lv] = ti.cast(0, acc_t)
                        else:
                            stack_r[lv] = br
                            if ti.static(cplx):
                                stack_i[lv] = bi
                            carry = 0
                nblk += 1
                done += blk
        else:
            lo = ti.cast(off, ti.i32)
            if ti.static(cplx):
                ar, ai = _run_complex(
                    x, lo, ti.cast(sL, ti.i32), ti.cast(r, ti.i32), op, acc_t, one, ar, ai, xbits
                )
            else:
                ar = _run_real(
                    x,
                    lo,
                    ti.cast(sL, ti.i32),
                    ti.cast(r, ti.i32),
                    op,
                    acc_t,
                    val_t,
                    key_t,
                    fkey,
                    widen,
                    one,
                    mu,
                    ar,
                    xbits,
                )
        pos += r
    if ti.static(pairwise):
        for lv in ti.static(range(_LEVELS)):
            if (nblk >> lv) & 1:
                ar = stack_r[lv] + ar
                if ti.static(cplx):
                    ai = stack_i[lv] + ai
    return ar, ai


@ti.func
def _fold(op: ti.template(), acc_t: ti.template(), cplx: ti.template(), ar, ai, br, bi):
    """Combine two accumulators."""
    rr = ar
    ri = ai
    if ti.static(op == SUM or op == COUNT or op == SQDEV):
        rr = ar + br
        ri = ai + bi
    elif ti.static(op == PROD and cplx):
        rr = ar * br - ai * bi
        ri = ar * bi + ai * br
    else:
        rr = _step(op, acc_t, ar, br, ar)
    return rr, ri


@ti.func
def _finish(
    out: ti.template(),
    i,
    ar,
    ai,
    div,
    acc_t: ti.template(),
    val_t: ti.template(),
    out_t: ti.template(),
    cplx: ti.template(),
    post: ti.template(),
    key_t: ti.template(),
    fkey: ti.template(),
):
    """Post-process accumulator ``(ar, ai)`` and store it as ``out[i]``."""
    if ti.static(fkey):
        v = ti.cast(0, val_t)
        if ar == ti.cast(0, acc_t) or ar == ~ti.cast(0, acc_t):
            v = ti.cast(ti.math.nan, val_t)
        else:
            v = ti.cast(key_float(ar, key_t), val_t)
        out[i] = ti.cast(v, out_t)
    else:
        rr = ar
        ri = ai
        if ti.static(post == POST_DIV):
            rr = ar / ti.cast(div, acc_t)
            ri = ai / ti.cast(div, acc_t)
        elif ti.static(post == POST_SQRT):
            rr = ti.sqrt(ar / ti.cast(div, acc_t))
        if ti.static(cplx):
            out[2 * i] = ti.cast(rr, out_t)
            out[2 * i + 1] = ti.cast(ri, out_t)
        else:
            out[i] = ti.cast(rr, out_t)
