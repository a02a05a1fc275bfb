"""The element-wise kernels: one generic strided n-ary loop, specialised per operation.

Kernels
-------
``_c1``/``_c2``/``_c3`` (contiguous) and ``_s1``/``_s2``/``_s3`` (strided) apply an
operation to 1, 2 or 3 operands and store one result. Every kernel takes a single static
``t = (op, ct, out_spec, in_specs)``:

- ``op``: a ``@ti.func`` from this module, called as ``op(ct, *values)``;
- ``ct``: the compute type handed to ``op`` (``ti.f32`` for float16 data, the real
  component type for complex data, the integer type itself, ``ti.u8`` for bool);
- ``out_spec = (is_complex, store_type)``;
- ``in_specs``: per operand ``(stored_complex, as_complex, load_type, step[, round_to])``;
  a real operand of a complex operation is widened to ``(x, 0)``; ``step`` (contiguous
  kernels) is 1, or 0 for an operand broadcast from a single element; ``round_to``: an
  integer operand is first rounded to this type, the promoted dtype, where that is
  narrower than the compute type and cannot hold every integer of the operand (``int16``
  with ``float16`` data computed in ``float32``).

Operands are 1-D spans of memory (complex data as its real dtype, two numbers per
element). The contiguous kernels index element ``i`` directly. The strided kernels read
an int32 *meta* array ``[shape[nd], (offset, strides[nd]) per operand, output first]``
(element units) and run in parallel over the rows of the collapsed shape with a serial
inner loop over its last axis, so the index arithmetic costs one division per row.

Operations are small ``@ti.func``s; the scalar math they use is in :mod:`._math`.
"""

from .. import _backend
from .._backend import ti
from . import _math as m

# ----------------------------------------------------------------------------- load / store


@ti.func
def _in(v, s: ti.template()):
    """A real value loaded as ``s[2]``; rounded to ``s[4]`` first where the spec has one."""
    if ti.static(len(s) > 4):
        return ti.cast(ti.cast(v, s[4]), s[2])
    else:
        return ti.cast(v, s[2])


@ti.func
def _ld(arr: ti.template(), idx, s: ti.template()):
    if ti.static(s[0]):
        return ti.Vector([ti.cast(arr[2 * idx], s[2]), ti.cast(arr[2 * idx + 1], s[2])], dt=s[2])
    elif ti.static(s[1]):
        return ti.Vector([_in(arr[idx], s), ti.cast(0, s[2])], dt=s[2])
    else:
        return _in(arr[idx], s)


@ti.func
def _st(arr: ti.template(), idx, v, s: ti.template()):
    if ti.static(s[0]):
        arr[2 * idx] = ti.cast(v[0], s[1])
        arr[2 * idx + 1] = ti.cast(v[1], s[1])
    else:
        arr[idx] = ti.cast(v, s[1])


@ti.func
def _ci(i, s: ti.template()):
    """Index of element ``i`` of a contiguous (step 1) or broadcast (step 0) operand."""
    if ti.static(s[3] == 1):
        return i
    else:
        return 0


# ----------------------------------------------------------------------------- contiguous


@ti.kernel
def _c1(out: ti.types.ndarray(ndim=1), a: ti.types.ndarray(ndim=1), n: ti.i32, t: ti.template()):
    for i in range(n):
        _st(out, i, t[0](t[1], _ld(a, _ci(i, t[3][0]), t[3][0])), t[2])


@ti.kernel
def _c2(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    n: ti.i32,
    t: ti.template(),
):
    for i in range(n):
        va = _ld(a, _ci(i, t[3][0]), t[3][0])
        vb = _ld(b, _ci(i, t[3][1]), t[3][1])
        _st(out, i, t[0](t[1], va, vb), t[2])


@ti.kernel
def _c3(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    c: ti.types.ndarray(ndim=1),
    n: ti.i32,
    t: ti.template(),
):
    for i in range(n):
        va = _ld(a, _ci(i, t[3][0]), t[3][0])
        vb = _ld(b, _ci(i, t[3][1]), t[3][1])
        vc = _ld(c, _ci(i, t[3][2]), t[3][2])
        _st(out, i, t[0](t[1], va, vb, vc), t[2])


# ----------------------------------------------------------------------------- strided


@ti.func
def _row_base(meta: ti.template(), r, nd: ti.template(), k: ti.template()):
    """Offset of operand ``k`` at the start of row ``r`` (rows: all axes but the last)."""
    base = ti.static(nd + k * (nd + 1))
    o = meta[base]
    rem = r
    for q in ti.static(range(nd - 1)):
        d = ti.static(nd - 2 - q)
        c = rem % meta[d]
        rem = rem // meta[d]
        o += c * meta[base + 1 + d]
    return o


@ti.func
def _last_stride(meta: ti.template(), nd: ti.template(), k: ti.template()):
    return meta[nd + k * (nd + 1) + nd]


@ti.kernel
def _s1(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    rows: ti.i32,
    nd: ti.template(),
    t: ti.template(),
):
    inner = meta[nd - 1]
    for r in range(rows):
        oo = _row_base(meta, r, nd, 0)
        oa = _row_base(meta, r, nd, 1)
        so = _last_stride(meta, nd, 0)
        sa = _last_stride(meta, nd, 1)
        for j in range(inner):
            _st(out, oo + j * so, t[0](t[1], _ld(a, oa + j * sa, t[3][0])), t[2])


@ti.kernel
def _s2(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    rows: ti.i32,
    nd: ti.template(),
    t: ti.template(),
):
    inner = meta[nd - 1]
    for r in range(rows):
        oo = _row_base(meta, r, nd, 0)
        oa = _row_base(meta, r, nd, 1)
        ob = _row_base(meta, r, nd, 2)
        so = _last_stride(meta, nd, 0)
        sa = _last_stride(meta, nd, 1)
        sb = _last_stride(meta, nd, 2)
        for j in range(inner):
            va = _ld(a, oa + j * sa, t[3][0])
            vb = _ld(b, ob + j * sb, t[3][1])
            _st(out, oo + j * so, t[0](t[1], va, vb), t[2])


@ti.kernel
def _s3(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    c: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    rows: ti.i32,
    nd: ti.template(),
    t: ti.template(),
):
    inner = meta[nd - 1]
    for r in range(rows):
        oo = _row_base(meta, r, nd, 0)
        oa = _row_base(meta, r, nd, 1)
        ob = _row_base(meta, r, nd, 2)
        oc = _row_base(meta, r, nd, 3)
        so = _last_stride(meta, nd, 0)
        sa = _last_stride(meta, nd, 1)
        sb = _last_stride(meta, nd, 2)
        sc = _last_stride(meta, nd, 3)
        for j in range(inner):
            va = _ld(a, oa + j * sa, t[3][0])
            vb = _ld(b, ob + j * sb, t[3][1])
            vc = _ld(c, oc + j * sc, t[3][2])
            _st(out, oo + j * so, t[0](t[1], va, vb, vc), t[2])


# The strided kernels with one axis: a flat parallel loop (rows would be 1).


@ti.kernel
def _f1(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    t: ti.template(),
):
    for i in range(n):
        _st(out, meta[1] + i * meta[2], t[0](t[1], _ld(a, meta[3] + i * meta[4], t[3][0])), t[2])


@ti.kernel
def _f2(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    t: ti.template(),
):
    for i in range(n):
        va = _ld(a, meta[3] + i * meta[4], t[3][0])
        vb = _ld(b, meta[5] + i * meta[6], t[3][1])
        _st(out, meta[1] + i * meta[2], t[0](t[1], va, vb), t[2])


@ti.kernel
def _f3(
    out: ti.types.ndarray(ndim=1),
    a: ti.types.ndarray(ndim=1),
    b: ti.types.ndarray(ndim=1),
    c: ti.types.ndarray(ndim=1),
    meta: ti.types.ndarray(dtype=ti.i32, ndim=1),
    n: ti.i32,
    t: ti.template(),
):
    for i in range(n):
        va = _ld(a, meta[3] + i * meta[4], t[3][0])
        vb = _ld(b, meta[5] + i * meta[6], t[3][1])
        vc = _ld(c, meta[7] + i * meta[8], t[3][2])
        _st(out, meta[1] + i * meta[2], t[0](t[1], va, vb, vc), t[2])


# ============================================================================= operations
#
# Naming: <function>_<variant>, variant by the compute kind: b (bool, as u8), i (signed
# integer), u (unsigned integer), f (real floating), c (complex). ``ct`` is static.

_NBITS = {ti.i8: 8, ti.i16: 16, ti.i32: 32, ti.i64: 64, ti.u8: 8, ti.u16: 16, ti.u32: 32, ti.u64: 64}

# ----------------------------------------------------------------------------- generic


@ti.func
def identity(ct: ti.template(), a):
    return a


@ti.func
def add_r(ct: ti.template(), a, b):
    return a + b


@ti.func
def subtract_r(ct: ti.template(), a, b):
    return a - b


@ti.func
def multiply_r(ct: ti.template(), a, b):
    return a * b


@ti.func
def multiply_c(ct: ti.template(), a, b):
    return m.cmul(ct, a, b)


@ti.func
def divide_f(ct: ti.template(), a, b):
    return a / b


@ti.func
def divide_c(ct: ti.template(), a, b):
    return m.cdiv(ct, a, b)


@ti.func
def negative_r(ct: ti.template(), a):
    return -a


@ti.func
def negative_u(ct: ti.template(), a):
    return ti.cast(0, ct) - a


@ti.func
def square_r(ct: ti.template(), a):
    return a * a


@ti.func
def square_c(ct: ti.template(), a):
    return m.cmul(ct, a, a)


@ti.func
def abs_i(ct: ti.template(), a):
    return ti.select(a < 0, -a, a)


@ti.func
def abs_f(ct: ti.template(), a):
    return m.fabs(ct, a)


@ti.func
def abs_c(ct: ti.template(), a):
    return m.cabs(ct, a)


@ti.func
def real_c(ct: ti.template(), a):
    return a[0]


@ti.func
def imag_c(ct: ti.template(), a):
    return a[1]


@ti.func
def conj_c(ct: ti.template(), a):
    return m.cx(ct, a[0], -a[1])


@ti.func
def reciprocal_f(ct: ti.template(), a):
    return ct(1.0) / a


@ti.func
def reciprocal_c(ct: ti.template(), a):
    return m.cdiv(ct, m.cx(ct, ct(1.0), ct(0.0)), a)


# ----------------------------------------------------------------------------- comparisons


@ti.func
def equal_r(ct: ti.template(), a, b):
    return a == b


@ti.func
def equal_c(ct: ti.template(), a, b):
    return (a[0] == b[0]) and (a[1] == b[1])


@ti.func
def not_equal_r(ct: ti.template(), a, b):
    # not (a == b): Taichi's != is an ordered comparison, False when a NaN is involved
    return not (a == b)


@ti.func
def not_equal_c(ct: ti.template(), a, b):
    return not ((a[0] == b[0]) and (a[1] == b[1]))


@ti.func
def less_r(ct: ti.template(), a, b):
    return a < b


@ti.func
def less_equal_r(ct: ti.template(), a, b):
    return a <= b


@ti.func
def greater_r(ct: ti.template(), a, b):
    return a > b


@ti.func
def greater_equal_r(ct: ti.template(), a, b):
    return a >= b


@ti.func
def maximum_i(ct: ti.template(), a, b):
    # if/else rather than ti.max, which Taichi cannot compile for 8-bit integers
    r = b
    if a > b:
        r = a
    return r


@ti.func
def minimum_i(ct: ti.template(), a, b):
    r = b
    if a < b:
        r = a
    return r


@ti.func
def maximum_f(ct: ti.template(), a, b):
    return m.fmax_nan(ct, a, b)


@ti.func
def minimum_f(ct: ti.template(), a, b):
    return m.fmin_nan(ct, a, b)


# ----------------------------------------------------------------------------- classification


@ti.func
def true_r(ct: ti.template(), a):
    return 1


@ti.func
def false_r(ct: ti.template(), a):
    return 0


@ti.func
def isnan_f(ct: ti.template(), a):
    return m.isnan(ct, a)


@ti.func
def isnan_c(ct: ti.template(), a):
    return m.isnan(ct, a[0]) or m.isnan(ct, a[1])


@ti.func
def isinf_f(ct: ti.template(), a):
    return m.isinf(ct, a)


@ti.func
def isinf_c(ct: ti.template(), a):
    return m.isinf(ct, a[0]) or m.isinf(ct, a[1])


@ti.func
def isfinite_f(ct: ti.template(), a):
    return m.isfinite(ct, a)


@ti.func
def isfinite_c(ct: ti.template(), a):
    return m.isfinite(ct, a[0]) and m.isfinite(ct, a[1])


@ti.func
def signbit_f(ct: ti.template(), a):
    return m.signbit(ct, a)


@ti.func
def sign_i(ct: ti.template(), a):
    return ti.cast(a > 0, ct) - ti.cast(a < 0, ct)


@ti.func
def sign_u(ct: ti.template(), a):
    return ti.cast(a > 0, ct)


@ti.func
def sign_f(ct: ti.template(), a):
    r = a
    if a > ct(0.0):
        r = ct(1.0)
    elif a < ct(0.0):
        r = ct(-1.0)
    elif a == ct(0.0):
        r = ct(0.0)
    return r


@ti.func
def sign_c(ct: ti.template(), a):
    r = a
    if a[0] == ct(0.0) and a[1] == ct(0.0):
        r = m.cx(ct, ct(0.0), ct(0.0))
    elif m.isnan(ct, a[0]) or m.isnan(ct, a[1]):
        r = m.cx(ct, m.nan(ct), m.nan(ct))
    else:
        h = m.cabs(ct, a)
        r = m.cx(ct, a[0] / h, a[1] / h)
    return r


# ----------------------------------------------------------------------------- rounding


@ti.func
def ceil_f(ct: ti.template(), a):
    return ti.ceil(a)


@ti.func
def floor_f(ct: ti.template(), a):
    return ti.floor(a)


@ti.func
def trunc_f(ct: ti.template(), a):
    return m.trunc(ct, a)


@ti.func
def round_f(ct: ti.template(), a):
    return m.round_half_even(ct, a)


@ti.func
def round_c(ct: ti.template(), a):
    return m.cx(ct, m.round_half_even(ct, a[0]), m.round_half_even(ct, a[1]))


# ----------------------------------------------------------------------------- transcendental


@ti.func
def exp_f(ct: ti.template(), a):
    return ti.exp(a)


@ti.func
def exp_c(ct: ti.template(), a):
    return m.cexp(ct, a)


@ti.func
def expm1_f(ct: ti.template(), a):
    return m.expm1(ct, a)


@ti.func
def expm1_c(ct: ti.template(), a):
    return m.cexpm1(ct, a)


@ti.func
def log_f(ct: ti.template(), a):
    return ti.log(a)


@ti.func
def log_c(ct: ti.template(), a):
    return m.clog(ct, a)


@ti.func
def log1p_f(ct: ti.template(), a):
    return m.log1p(ct, a)


@ti.func
def log1p_c(ct: ti.template(), a):
    return m.clog1p(ct, a)


@ti.func
def log2_f(ct: ti.template(), a):
    return m.log2(ct, a)


@ti.func
def log2_c(ct: ti.template(), a):
    return m.clog(ct, a) * ct(1.4426950408889634)


@ti.func
def log10_f(ct: ti.template(), a):
    return m.log10(ct, a)


@ti.func
def log10_c(ct: ti.template(), a):
    return m.clog(ct, a) * ct(0.4342944819032518)


@ti.func
def sqrt_f(ct: ti.template(), a):
    return ti.sqrt(a)


@ti.func
def sqrt_c(ct: ti.template(), a):
    return m.csqrt(ct, a)


@ti.func
def sin_f(ct: ti.template(), a):
    return ti.sin(a)


@ti.func
def sin_c(ct: ti.template(), a):
    return m.csin(ct, a)


@ti.func
def cos_f(ct: ti.template(), a):
    return ti.cos(a)


@ti.func
def cos_c(ct: ti.template(), a):
    return m.ccos(ct, a)


@ti.func
def tan_f(ct: ti.template(), a):
    return ti.tan(a)


@ti.func
def tan_c(ct: ti.template(), a):
    return m.ctan(ct, a)


@ti.func
def sinh_f(ct: ti.template(), a):
    return m.sinh(ct, a)


@ti.func
def sinh_c(ct: ti.template(), a):
    return m.csinh(ct, a)


@ti.func
def cosh_f(ct: ti.template(), a):
    return m.cosh(ct, a)


@ti.func
def cosh_c(ct: ti.template(), a):
    return m.ccosh(ct, a)


@ti.func
def tanh_f(ct: ti.template(), a):
    return m.tanh(ct, a)


@ti.func
def tanh_c(ct: ti.template(), a):
    return m.ctanh(ct, a)


@ti.func
def asin_f(ct: ti.template(), a):
    return ti.asin(a)


@ti.func
def asin_c(ct: ti.template(), a):
    return m.casin(ct, a)


@ti.func
def acos_f(ct: ti.template(), a):
    return ti.acos(a)


@ti.func
def acos_c(ct: ti.template(), a):
    return m.cacos(ct, a)


@ti.func
def atan_f(ct: ti.template(), a):
    return ti.atan2(a, ct(1.0))


@ti.func
def atan_c(ct: ti.template(), a):
    return m.catan(ct, a)


@ti.func
def asinh_f(ct: ti.template(), a):
    return m.asinh(ct, a)


@ti.func
def asinh_c(ct: ti.template(), a):
    return m.casinh(ct, a)


@ti.func
def acosh_f(ct: ti.template(), a):
    return m.acosh(ct, a)


@ti.func
def acosh_c(ct: ti.template(), a):
    return m.cacosh(ct, a)


@ti.func
def atanh_f(ct: ti.template(), a):
    return m.atanh(ct, a)


@ti.func
def atanh_c(ct: ti.template(), a):
    return m.catanh(ct, a)


@ti.func
def atan2_f(ct: ti.template(), a, b):
    return ti.atan2(a, b)


@ti.func
def hypot_f(ct: ti.template(), a, b):
    return m.hypot(ct, a, b)


@ti.func
def logaddexp_f(ct: ti.template(), a, b):
    return m.logaddexp(ct, a, b)


@ti.func
def copysign_f(ct: ti.template(), a, b):
    return m.copysign(ct, a, b)


@ti.func
def nextafter_f(ct: ti.template(), a, b):
    return m.nextafter(ct, a, b)


@ti.func
def pow_i(ct: ti.template(), a, b):
    return m.int_pow(a, b, True)


@ti.func
def pow_u(ct: ti.template(), a, b):
    return m.int_pow(a, b, False)


@ti.func
def pow_f(ct: ti.template(), a, b):
    return ti.pow(a, b)


@ti.func
def pow_c(ct: ti.template(), a, b):
    return m.cpow(ct, a, b)


# ----------------------------------------------------------------------------- integer division


_SMALL_INTS = (ti.i8, ti.u8, ti.i16, ti.u16)


# Taichi miscompiles 8- and 16-bit integer division: those divide in int32.
@ti.func
def floor_divide_i(ct: ti.template(), a, b):
    if ti.static(ct in _SMALL_INTS):
        return ti.cast(m.int_floordiv(ti.cast(a, ti.i32), ti.cast(b, ti.i32), True), ct)
    else:
        return m.int_floordiv(a, b, True)


@ti.func
def floor_divide_u(ct: ti.template(), a, b):
    if ti.static(ct in _SMALL_INTS):
        return ti.cast(m.int_floordiv(ti.cast(a, ti.i32), ti.cast(b, ti.i32), True), ct)
    else:
        return m.int_floordiv(a, b, False)


@ti.func
def floor_divide_f(ct: ti.template(), a, b):
    return m.float_floordiv(ct, a, b)


@ti.func
def remainder_i(ct: ti.template(), a, b):
    if ti.static(ct in _SMALL_INTS):
        return ti.cast(m.int_remainder(ti.cast(a, ti.i32), ti.cast(b, ti.i32), True), ct)
    else:
        return m.int_remainder(a, b, True)


@ti.func
def remainder_u(ct: ti.template(), a, b):
    if ti.static(ct in _SMALL_INTS):
        return ti.cast(m.int_remainder(ti.cast(a, ti.i32), ti.cast(b, ti.i32), True), ct)
    else:
        return m.int_remainder(a, b, False)


@ti.func
def remainder_f(ct: ti.template(), a, b):
    return m.float_remainder(ct, a, b)


# ----------------------------------------------------------------------------- bitwise / logical


@ti.func
def bitwise_and_r(ct: ti.template(), a, b):
    return a & b


@ti.func
def bitwise_or_r(ct: ti.template(), a, b):
    return a | b


@ti.func
def bitwise_xor_r(ct: ti.template(), a, b):
    return a ^ b


@ti.func
def bitwise_invert_b(ct: ti.template(), a):
    return ti.cast(a == ti.cast(0, ct), ct)


@ti.func
def bitwise_invert_r(ct: ti.template(), a):
    return ~a


@ti.func
def left_shift_r(ct: ti.template(), a, b):
    nb = ti.static(_NBITS[ct])
    r = a - a
    if b >= 0 and b < nb:
        r = a << b
    return r


@ti.func
def right_shift_i(ct: ti.template(), a, b):
    nb = ti.static(_NBITS[ct])
    r = a >> ti.cast(nb - 1, ct)  # 0 or -1: the result of shifting everything out
    if b >= 0 and b < nb:
        r = a >> b
    return r


@ti.func
def right_shift_u(ct: ti.template(), a, b):
    nb = ti.static(_NBITS[ct])
    r = a - a
    if b < nb:
        r = a >> b
    return r


@ti.func
def logical_and_b(ct: ti.template(), a, b):
    return (a != 0) and (b != 0)


@ti.func
def logical_or_b(ct: ti.template(), a, b):
    return (a != 0) or (b != 0)


@ti.func
def logical_xor_b(ct: ti.template(), a, b):
    return (a != 0) != (b != 0)


@ti.func
def logical_not_b(ct: ti.template(), a):
    return a == 0


# ----------------------------------------------------------------------------- ternary


@ti.func
def where_r(ct: ti.template(), c, a, b):
    r = b
    if c != 0:
        r = a
    return r


@ti.func
def clip_i(ct: ti.template(), x, lo, hi):
    return minimum_i(ct, maximum_i(ct, x, lo), hi)


@ti.func
def clip_lo_i(ct: ti.template(), x, lo):
    return maximum_i(ct, x, lo)


@ti.func
def clip_hi_i(ct: ti.template(), x, hi):
    return minimum_i(ct, x, hi)


@ti.func
def clip_lo_f(ct: ti.template(), x, lo):
    r = x
    if x < lo or m.isnan(ct, lo):
        r = lo
    return r


@ti.func
def clip_hi_f(ct: ti.template(), x, hi):
    r = x
    if x > hi or m.isnan(ct, hi):
        r = hi
    return r


@ti.func
def clip_f(ct: ti.template(), x, lo, hi):
    return clip_hi_f(ct, clip_lo_f(ct, x, lo), hi)


# ============================================================================= lane-blocked kernels
#
# Taichi reloads an ndarray's data pointer from the kernel's argument buffer before every
# access (a store might alias the buffer), which also keeps LLVM from vectorising. Reading
# and writing elements of LANES values at a time (an ndarray of vectors) amortises those
# reloads: about 1.6x faster per thread on contiguous real data. Kernels are made per
# (arity, element types, broadcast pattern), since the vector element type is part of the
# annotation.

LANES = 8


def _vec_ann(t, scalar: bool):
    if scalar:
        return ti.types.ndarray(dtype=t, ndim=1)
    return ti.types.ndarray(dtype=ti.types.vector(LANES, t), ndim=1)


@ti.func
def _vload(arr: ti.template(), i, s: ti.template()):
    # s = (is_scalar, compute type)
    if ti.static(s[0]):
        return ti.cast(arr[0], s[1])
    else:
        return arr[i]


@ti.func
def _lane(v, k: ti.template(), s: ti.template()):
    if ti.static(s[0]):
        return v
    else:
        return ti.cast(v[k], s[1])


def make_lane_kernel(nin: int, out_t, in_types: tuple, scalars: tuple):
    """A kernel applying ``t[0]`` to ``n`` blocks of LANES elements (``t = (op, ct, specs)``,
    ``specs[k] = (is_scalar, compute type)``)."""
    O = _vec_ann(out_t, False)
    A = [_vec_ann(tt, sc) for tt, sc in zip(in_types, scalars)]
    if nin == 1:
        A0 = A[0]

        @ti.kernel
        def k1(out: O, a: A0, n: ti.i32, t: ti.template()):
            for i in range(n):
                va = _vload(a, i, t[2][0])
                r = ti.Vector([ti.cast(0, out_t)] * LANES, dt=out_t)
                for q in ti.static(range(LANES)):
                    r[q] = ti.cast(t[0](t[1], _lane(va, q, t[2][0])), out_t)
                out[i] = r

        return k1
    if nin == 2:
        A0, A1 = A

        @ti.kernel
        def k2(out: O, a: A0, b: A1, n: ti.i32, t: ti.template()):
            for i in range(n):
                va = _vload(a, i, t[2][0])
                vb = _vload(b, i, t[2][1])
                r = ti.Vector([ti.cast(0, out_t)] * LANES, dt=out_t)
                for q in ti.static(range(LANES)):
                    r[q] = ti.cast(t[0](t[1], _lane(va, q, t[2][0]), _lane(vb, q, t[2][1])), out_t)
                out[i] = r

        return k2
    A0, A1, A2 = A

    @ti.kernel
    def k3(out: O, a: A0, b: A1, c: A2, n: ti.i32, t: ti.template()):
        for i in range(n):
            va = _vload(a, i, t[2][0])
            vb = _vload(b, i, t[2][1])
            vc = _vload(c, i, t[2][2])
            r = ti.Vector([ti.cast(0, out_t)] * LANES, dt=out_t)
            for q in ti.static(range(LANES)):
                r[q] = ti.cast(
                    t[0](t[1], _lane(va, q, t[2][0]), _lane(vb, q, t[2][1]), _lane(vc, q, t[2][2])), out_t
                )
            out[i] = r

    return k3


# Taichi reloads an ndarray's data pointer from the kernel's argument buffer after every
# store (LLVM cannot rule out that the store aliases the buffer), which keeps LLVM from
# vectorising a kernel's loops. A ``ti.real_func`` receives its arrays as values, with the
# pointers in registers, so a loop inside one vectorises (with a run-time overlap check).
# The contiguous real kernels therefore run over spans: each task of the kernel's loop
# calls a real function on ``[lo, hi)``. Measured on 1e6 float32 elements
# (``benchmarks/bench_array_api.py``): add 417 -> 144 us per call. Real functions
# cannot take template arguments, so a (function, types, broadcast pattern) gets its own
# real function and kernel; the operation is in their closure (Taichi's offline cache keys
# them by their bodies, so closures that differ only in the operation stay apart).


@ti.func
def _sv(arr: ti.template(), i, s: ti.template()):
    # s = (is_scalar, compute type): a broadcast operand is element 0 of a 1-element array
    if ti.static(s[0]):
        return ti.cast(arr[0], s[1])
    else:
        return ti.cast(arr[i], s[1])


@ti.func
def where_select(ct: ti.template(), c, a, b):
    return ti.select(c != 0, a, b)


@ti.func
def exp_f32_simd(ct: ti.template(), a):
    return m.exp_f32_poly(a)


@ti.func
def tanh_f32_simd(ct: ti.template(), a):
    return m.tanh_f32_poly(a)


@ti.func
def log_f32_simd(ct: ti.template(), a):
    return m.log_f32_poly(a)


@ti.func
def sin_f32_simd(ct: ti.template(), a):
    return m.sincos_f32_poly(a, False)


@ti.func
def cos_f32_simd(ct: ti.template(), a):
    return m.sincos_f32_poly(a, True)


@ti.func
def exp_f64_simd(ct: ti.template(), a):
    return m.exp_f64_poly(a)


@ti.func
def tanh_f64_simd(ct: ti.template(), a):
    return m.tanh_f64_poly(a)


@ti.func
def log_f64_simd(ct: ti.template(), a):
    return m.log_f64_poly(a)


@ti.func
def log1p_simd(ct: ti.template(), a):
    return m.log1p_poly(ct, a)


@ti.func
def expm1_simd(ct: ti.template(), a):
    return m.expm1_poly(ct, a)


_SPAN_OPS: dict = {}
# (operation, compute type) -> its vectorisable polynomial for the span kernels (libm: a
# call per element)
_SIMD = {
    (exp_f, ti.f32): exp_f32_simd, (tanh_f, ti.f32): tanh_f32_simd, (log_f, ti.f32): log_f32_simd,
    (sin_f, ti.f32): sin_f32_simd, (cos_f, ti.f32): cos_f32_simd, (log1p_f, ti.f32): log1p_simd,
    (expm1_f, ti.f32): expm1_simd,
    (exp_f, ti.f64): exp_f64_simd, (tanh_f, ti.f64): tanh_f64_simd, (log_f, ti.f64): log_f64_simd,
    (log1p_f, ti.f64): log1p_simd, (expm1_f, ti.f64): expm1_simd,
}  # fmt: skip
# span variants valid only for arguments of magnitude below a limit: the caller checks the
# data (``range_limit``) and otherwise runs the plain kernels (libm)
_SIMD_LIMITS = {(sin_f, ti.f32): m.SINCOS_F32_LIMIT, (cos_f, ti.f32): m.SINCOS_F32_LIMIT}


def range_limit(op, ct):
    """The magnitude below which every argument of ``span_op(op, ct)`` must lie, or ``None``."""
    return _SIMD_LIMITS.get((op, ct))


def span_op(op, ct):
    """The variant of ``op`` for the span kernels, or ``None`` if it cannot run in one.

    Taichi 1.7 crashes (segmentation fault while compiling) when a ``ti.func`` with
    run-time control flow (``if``, ``while``, ``for``) is inlined into a real function, so
    only branch-free operations qualify: checked from the source of ``op`` and of every
    ``ti.func`` it calls. ``where`` becomes a select; the transcendental functions in
    ``_SIMD`` the vectorisable polynomials of ``_math``.
    """
    key = (op, ct)
    if key not in _SPAN_OPS:
        if key in _SIMD:
            r = _SIMD[key]
        elif op is where_r:
            r = where_select
        else:
            r = op if _branch_free(op, set()) else None
        _SPAN_OPS[key] = r
    return _SPAN_OPS[key]


def _is_static_call(node) -> bool:
    import ast

    f = node.func if isinstance(node, ast.Call) else None
    return isinstance(f, ast.Attribute) and f.attr == "static"


def _branch_free(fn, seen: set) -> bool:
    """Whether the ``ti.func`` ``fn`` and the ``ti.func``s it calls have no run-time control flow."""
    import ast
    import inspect
    import textwrap

    py = getattr(fn, "__wrapped__", fn)
    if py in seen:
        return True
    seen.add(py)
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(py)))
    except (OSError, TypeError, SyntaxError):
        return False
    g = getattr(py, "__globals__", {})
    for node in ast.walk(tree):
        if isinstance(node, ast.IfExp):
            return False
        if isinstance(node, (ast.If, ast.While)) and not _is_static_call(node.test):
            return False
        if isinstance(node, ast.For) and not _is_static_call(node.iter):
            return False
        if isinstance(node, ast.Call):
            callee = None
            if isinstance(node.func, ast.Name):
                callee = g.get(node.func.id)
            elif isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
                mod = g.get(node.func.value.id)
                if mod is not None and mod is not ti:
                    callee = getattr(mod, node.func.attr, None)
            if _backend.is_func(callee) and not _branch_free(callee, seen):
                return False
    return True


def make_span_kernel(nin: int, out_t, in_types: tuple, t):
    """A kernel computing ``out[i] = t[0](t[1], *operands[i])`` over ``n`` elements.

    ``t = (op, ct, specs)``, ``specs[k] = (is_scalar, load type)``. The kernel's arguments
    are ``out, *operands, n, blk, pad``: it runs ``ceil(n / blk)`` spans of ``blk``
    elements, one per ``pad`` iterations of its task loop (see ``reduce.task_pad``);
    ``n >= 1``, and the index arithmetic stays below ``n`` (no int32 overflow up to
    ``n = 2**31 - 1``).
    """
    op, ct, specs = t
    op = span_op(op, ct)
    assert op is not None, "make_span_kernel: the operation has run-time branches (see span_op)"
    O = ti.types.ndarray(dtype=out_t, ndim=1)
    A = [ti.types.ndarray(dtype=tt, ndim=1) for tt in in_types]
    if nin == 1:
        A0 = A[0]
        s0 = specs[0]

        @ti.real_func
        def span1(out: O, a: A0, lo: ti.i32, hi: ti.i32):
            for i in range(lo, hi):
                out[i] = ti.cast(op(ct, _sv(a, i, s0)), out_t)

        @ti.kernel
        def k1(out: O, a: A0, n: ti.i32, blk: ti.i32, pad: ti.i32):
            for s_ in range(((n - 1) // blk + 1) * pad):
                if s_ % pad == 0:
                    lo = s_ // pad * blk
                    span1(out, a, lo, lo + ti.min(blk, n - lo))

        return k1
    if nin == 2:
        A0, A1 = A
        s0, s1 = specs

        @ti.real_func
        def span2(out: O, a: A0, b: A1, lo: ti.i32, hi: ti.i32):
            for i in range(lo, hi):
                out[i] = ti.cast(op(ct, _sv(a, i, s0), _sv(b, i, s1)), out_t)

        @ti.kernel
        def k2(out: O, a: A0, b: A1, n: ti.i32, blk: ti.i32, pad: ti.i32):
            for s_ in range(((n - 1) // blk + 1) * pad):
                if s_ % pad == 0:
                    lo = s_ // pad * blk
                    span2(out, a, b, lo, lo + ti.min(blk, n - lo))

        return k2
    A0, A1, A2 = A
    s0, s1, s2 = specs

    @ti.real_func
    def span3(out: O, a: A0, b: A1, c: A2, lo: ti.i32, hi: ti.i32):
        for i in range(lo, hi):
            out[i] = ti.cast(op(ct, _sv(a, i, s0), _sv(b, i, s1), _sv(c, i, s2)), out_t)

    @ti.kernel
    def k3(out: O, a: A0, b: A1, c: A2, n: ti.i32, blk: ti.i32, pad: ti.i32):
        for s_ in range(((n - 1) // blk + 1) * pad):
            if s_ % pad == 0:
                lo = s_ // pad * blk
                span3(out, a, b, c, lo, lo + ti.min(blk, n - lo))

    return k3
