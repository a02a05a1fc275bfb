"""Scalar math for the element-wise kernels, as ``@ti.func`` helpers.

Every helper takes the compute type ``ct`` (``ti.f32`` or ``ti.f64``) as its first,
static argument, so that one source serves both precisions. Complex numbers are
``ti.Vector([re, im])`` pairs of ``ct``.

Why not Taichi's own functions for everything:

- Taichi has no ``expm1``, ``log1p``, ``sinh``, ``cosh``, ``asinh``, ``acosh``,
  ``atanh``, ``hypot``, ``copysign``, ``nextafter``, ``fmod`` and no complex type;
  ``ti.round`` rounds half away from zero and ``ti.max``/``ti.min`` drop NaNs;
- Taichi folds ``x != x`` to ``False``, compiles ``!=`` as an ordered comparison (False
  for NaN; we write ``not (a == b)``) and types Python float literals as ``f32``, so
  NaN tests are done on the bits and every constant is written ``ct(value)``.

The algorithms are the classical ones: Kahan's tricks for ``expm1``/``log1p``, bit-level
``fmod`` and ``nextafter``, C99 Annex G handling of infinities and NaNs for complex
functions, Kahan's ``ctanh`` and the Hull-Fairgrieve-Tang method for the complex inverse
trigonometric functions (as in FreeBSD's msun, which NumPy and C libraries follow).

Results need Taichi's ``fast_math`` off (tiarray's default): with it, LLVM may assume
there are no NaNs, infinities or signed zeros.
"""

from .._backend import ti

# ----------------------------------------------------------------------------- constants


def _p(ct, v64, v32):
    """A compile-time constant by precision."""
    return v64 if ct == ti.f64 else v32


@ti.func
def _ut(ct: ti.template(), v: ti.template()):
    """An unsigned integer constant of the width of ``ct``."""
    if ti.static(ct == ti.f64):
        return ti.u64(v)
    else:
        return ti.u32(v)


@ti.func
def _uc(ct: ti.template(), v):
    """An integer variable cast to the unsigned type of the width of ``ct``."""
    if ti.static(ct == ti.f64):
        return ti.cast(v, ti.u64)
    else:
        return ti.cast(v, ti.u32)


@ti.func
def bits(ct: ti.template(), x):
    if ti.static(ct == ti.f64):
        return ti.bit_cast(x, ti.u64)
    else:
        return ti.bit_cast(x, ti.u32)


@ti.func
def from_bits(ct: ti.template(), b):
    return ti.bit_cast(b, ct)


@ti.func
def nan(ct: ti.template()):
    return ti.bit_cast(_ut(ct, ti.static(_p(ct, 0x7FF8000000000000, 0x7FC00000))), ct)


@ti.func
def inf(ct: ti.template()):
    return ti.bit_cast(_ut(ct, ti.static(_p(ct, 0x7FF0000000000000, 0x7F800000))), ct)


# ----------------------------------------------------------------------------- classification


@ti.func
def isnan(ct: ti.template(), x):
    b = bits(ct, x) & _ut(ct, ti.static(_p(ct, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF)))
    return b > _ut(ct, ti.static(_p(ct, 0x7FF0000000000000, 0x7F800000)))


@ti.func
def isinf(ct: ti.template(), x):
    b = bits(ct, x) & _ut(ct, ti.static(_p(ct, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF)))
    return b == _ut(ct, ti.static(_p(ct, 0x7FF0000000000000, 0x7F800000)))


@ti.func
def isfinite(ct: ti.template(), x):
    b = bits(ct, x) & _ut(ct, ti.static(_p(ct, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF)))
    return b < _ut(ct, ti.static(_p(ct, 0x7FF0000000000000, 0x7F800000)))


@ti.func
def signbit(ct: ti.template(), x):
    return (bits(ct, x) >> _ut(ct, ti.static(_p(ct, 63, 31)))) != _ut(ct, 0)


@ti.func
def copysign(ct: ti.template(), x, y):
    m = _ut(ct, ti.static(_p(ct, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF)))
    s = _ut(ct, ti.static(_p(ct, 0x8000000000000000, 0x80000000)))
    return from_bits(ct, (bits(ct, x) & m) | (bits(ct, y) & s))


@ti.func
def fabs(ct: ti.template(), x):
    return from_bits(ct, bits(ct, x) & _ut(ct, ti.static(_p(ct, 0x7FFFFFFFFFFFFFFF, 0x7FFFFFFF))))


@ti.func
def fmax_nan(ct: ti.template(), a, b):
    """``maximum`` with NaN propagation (NumPy's choice of operand for equal values).
    Branch-free (a select), so that it runs in the vectorised span kernels."""
    return ti.select((a > b) | isnan(ct, a), a, b)


@ti.func
def fmin_nan(ct: ti.template(), a, b):
    return ti.select((a < b) | isnan(ct, a), a, b)


# ----------------------------------------------------------------------------- rounding


@ti.func
def round_half_even(ct: ti.template(), x):
    r = x
    ax = fabs(ct, x)
    if ax < ct(ti.static(_p(ct, 4503599627370496.0, 8388608.0))):  # 2**52 / 2**23: else integral, inf or nan
        f = ti.floor(ax)
        d = ax - f
        if d > ct(0.5):
            f += ct(1.0)
        elif d == ct(0.5):
            half = f * ct(0.5)
            if half != ti.floor(half):  # f is odd
                f += ct(1.0)
        r = copysign(ct, f, x)
    return r


@ti.func
def trunc(ct: ti.template(), x):
    return copysign(ct, ti.floor(fabs(ct, x)), x)


@ti.func
def fmod(ct: ti.template(), x, y):
    """C ``fmod``: ``x - n*y`` with ``n = trunc(x/y)``, computed exactly on the bits."""
    MB = ti.static(_p(ct, 52, 23))
    NB = ti.static(_p(ct, 64, 32))
    EM = ti.static(_p(ct, 0x7FF, 0xFF))
    ux = bits(ct, x)
    uy = bits(ct, y)
    ex = ti.cast((ux >> _ut(ct, MB)) & _ut(ct, EM), ti.i32)
    ey = ti.cast((uy >> _ut(ct, MB)) & _ut(ct, EM), ti.i32)
    sx = ux & _ut(ct, 1 << (NB - 1))
    ax2 = ux << _ut(ct, 1)
    ay2 = uy << _ut(ct, 1)
    r = x
    if ay2 == _ut(ct, 0) or isnan(ct, y) or ex == EM:
        r = nan(ct)
    elif ax2 <= ay2:
        if ax2 == ay2:
            r = from_bits(ct, sx)  # signed zero
    else:
        mmask = _ut(ct, (1 << MB) - 1)
        lead = _ut(ct, 1 << MB)
        mx = (ux & mmask) | lead
        my = (uy & mmask) | lead
        if ex == 0:  # subnormal x: normalise
            mx = ux & mmask
            ex = 1
            while mx & lead == _ut(ct, 0):
                mx = mx << _ut(ct, 1)
                ex -= 1
        if ey == 0:
            my = uy & mmask
            ey = 1
            while my & lead == _ut(ct, 0):
                my = my << _ut(ct, 1)
                ey -= 1
        while ex > ey and mx != _ut(ct, 0):
            if mx >= my:
                mx = mx - my
            mx = mx << _ut(ct, 1)
            ex -= 1
        if mx >= my:
            mx = mx - my
        if mx == _ut(ct, 0):
            r = from_bits(ct, sx)
        else:
            while mx & lead == _ut(ct, 0):
                mx = mx << _ut(ct, 1)
                ex -= 1
            res = mx
            if ex > 0:
                res = (mx - lead) | (_uc(ct, ex) << _ut(ct, MB))
            else:
                res = mx >> _uc(ct, 1 - ex)
            r = from_bits(ct, res | sx)
    return r


@ti.func
def nextafter(ct: ti.template(), x, y):
    r = x
    if isnan(ct, x) or isnan(ct, y):
        r = nan(ct)
    elif x == y:
        r = y
    elif x == ct(0.0):
        r = copysign(ct, from_bits(ct, _ut(ct, 1)), y)
    else:
        b = bits(ct, x)
        if (y > x) == (x > ct(0.0)):
            b = b + _ut(ct, 1)
        else:
            b = b - _ut(ct, 1)
        r = from_bits(ct, b)
    return r


# ----------------------------------------------------------------------------- exp / log


@ti.func
def exp_f32_poly(x):
    """``exp`` of a float32, branch-free so that LLVM vectorises a loop of it (libm's
    ``expf`` is a call per element).

    Cody-Waite reduction ``x = k ln2 + r``, ``|r| <= ln2 / 2``, Cephes' degree-6 minimax
    polynomial for ``e^r`` (about 1 ulp: at most 8.1e-8 relative error against float64 on
    the benchmark's uniform(-10, 10) data), then ``2^k`` applied as two powers of two so that
    results in the subnormal range and overflow to infinity come out right. ``x`` is clamped
    to ``[-104, 89]`` first (``exp`` is 0 below and infinite above in float32); NaN is
    detected from its bits, which survives any compiler assumption about NaN.
    """
    f = ti.f32
    xc = ti.min(ti.max(x, f(-104.0)), f(89.0))
    k = ti.floor(xc * f(1.44269504088896341) + f(0.5))
    r = xc - k * f(0.693359375)
    r = r - k * f(-2.12194440e-4)
    p = f(1.9875691500e-4)
    p = p * r + f(1.3981999507e-3)
    p = p * r + f(8.3334519073e-3)
    p = p * r + f(4.1665795894e-2)
    p = p * r + f(1.6666665459e-1)
    p = p * r + f(5.0000001201e-1)
    y = p * (r * r) + r + f(1.0)
    ki = ti.cast(k, ti.i32)
    k1 = ki >> 1
    k2 = ki - k1
    s1 = ti.bit_cast((k1 + 127) << 23, f)
    s2 = ti.bit_cast((k2 + 127) << 23, f)
    res = y * s1 * s2
    return ti.select(isnan(f, x), x, res)


@ti.func
def tanh_f32_poly(x):
    """``tanh`` of a float32, branch-free (vectorisable; libm's ``tanhf`` is a call per
    element, ~13 ns). Cephes' ``tanhf``: ``|x| < 0.625``: ``x + x^3 P(x^2)`` (degree-4
    minimax); else ``1 - 2 / (e^(2|x|) + 1)`` with :func:`exp_f32_poly` (which saturates to
    infinity, giving 1). Both are computed on ``|x|`` and the sign is copied from ``x``
    (``tanh(-0) = -0``); NaN propagates through both branches. About 2 ulp.
    """
    f = ti.f32
    ax = fabs(f, x)
    z = ax * ax
    p = f(-5.70498872745e-3)
    p = p * z + f(2.06390887954e-2)
    p = p * z - f(5.37397155531e-2)
    p = p * z + f(1.33314422036e-1)
    p = p * z - f(3.33332819422e-1)
    small = p * z * ax + ax
    e = exp_f32_poly(ax + ax)
    big = f(1.0) - f(2.0) / (e + f(1.0))
    r = ti.select(ax >= f(0.625), big, small)
    return copysign(f, r, x)


@ti.func
def _log_special(ct: ti.template(), x, r):
    """``r``, the polynomial ``log(x)`` of a positive finite ``x``, with the special values
    put in: ``log(+-0) = -inf``, NaN for negative ``x``, ``log(inf) = inf``, NaN kept."""
    r = ti.select(x == ct(0.0), -inf(ct), r)
    r = ti.select(x < ct(0.0), nan(ct), r)
    r = ti.select(x == inf(ct), x, r)
    return ti.select(isnan(ct, x), x, r)


@ti.func
def log_f32_poly(x):
    """``log`` of a float32, branch-free (vectorisable; libm's ``logf`` is a call per
    element). Cephes' ``logf``: ``x = m 2^e`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` read
    from the bits (subnormals scaled by ``2^23`` first), ``log(m)`` by a degree-9
    polynomial in ``m - 1``, ``e ln 2`` added in two parts. About 1 ulp. ``log(0) = -inf``,
    negative numbers give NaN, ``log(inf) = inf``, NaN propagates.
    """
    f = ti.f32
    sub = x < f(1.17549435e-38)  # subnormal (or zero / negative: replaced below)
    xs = ti.select(sub, x * f(8388608.0), x)
    b = ti.bit_cast(xs, ti.u32)
    e = ti.cast((b >> ti.u32(23)) & ti.u32(0xFF), ti.i32) - 126 - ti.select(sub, 23, 0)
    m = ti.bit_cast((b & ti.u32(0x007FFFFF)) | ti.u32(0x3F000000), f)  # in [0.5, 1)
    lt = m < f(0.707106781186547524)
    e = e - ti.select(lt, 1, 0)
    t = ti.select(lt, m + m - f(1.0), m - f(1.0))
    z = t * t
    y = f(7.0376836292e-2)
    y = y * t - f(1.1514610310e-1)
    y = y * t + f(1.1676998740e-1)
    y = y * t - f(1.2420140846e-1)
    y = y * t + f(1.4249322787e-1)
    y = y * t - f(1.6668057665e-1)
    y = y * t + f(2.0000714765e-1)
    y = y * t - f(2.4999993993e-1)
    y = y * t + f(3.3333331174e-1)
    y = y * t * z
    fe = ti.cast(e, f)
    y = y + fe * f(-2.12194440e-4)
    y = y - f(0.5) * z
    return _log_special(f, x, t + y + fe * f(0.693359375))


# float32 sin/cos: arguments below this (2**24 * pi/4) are reduced exactly enough in float64
SINCOS_F32_LIMIT = 13176794.0


@ti.func
def sincos_f32_poly(x, want_cos: ti.template()):
    """``sin`` (``want_cos=False``) or ``cos`` of a float32 with ``|x| < SINCOS_F32_LIMIT``,
    branch-free (libm's ``sinf``/``cosf`` are a call per element, ~4.6 ns).

    Cephes' ``sinf``/``cosf``: the octant ``j = floor(|x| 4/pi)`` rounded up to even, the
    reduction ``r = |x| - j pi/4`` done in float64 with a 29-bit leading part of ``pi/4`` (so
    that ``j * hi`` is exact for ``j < 2**24``) and a correction, then the degree-3
    polynomials of ``sin`` and ``cos`` on ``[-pi/4, pi/4]`` chosen and signed by the octant.
    About 1 ulp. Larger, infinite and NaN arguments are the caller's (the libm kernels).
    """
    f = ti.f32
    d = ti.f64
    ax = fabs(f, x)
    xd = ti.cast(ax, d)
    j = ti.cast(xd * d(1.2732395447351628), ti.i32)
    j = j + (j & 1)
    y = ti.cast(j, d)
    r = ti.cast((xd - y * d(0.7853981629014015)) - y * d(4.960467898402702e-10), f)
    j = j & 7
    z = r * r
    ps = ((f(-1.9515295891e-4) * z + f(8.3321608736e-3)) * z - f(1.6666654611e-1)) * z * r + r
    pc = ((f(2.443315711809948e-5) * z - f(1.388731625493765e-3)) * z + f(4.166664568298827e-2)) * z * z
    pc = pc - f(0.5) * z + f(1.0)
    q = j & 3  # 0 or 2 (j is even): 2 swaps sin and cos
    flip = ti.u32(0)
    res = ps
    if ti.static(want_cos):
        res = ti.select(q == 2, ps, pc)
        # cos: negative in octants 2-5 (j = 2 or 4 after rounding up to even)
        flip = ti.select((j == 2) | (j == 4), ti.u32(0x80000000), ti.u32(0))
    else:
        res = ti.select(q == 2, pc, ps)
        flip = (ti.bit_cast(x, ti.u32) & ti.u32(0x80000000)) ^ ti.select(j > 3, ti.u32(0x80000000), ti.u32(0))
    return ti.bit_cast(ti.bit_cast(res, ti.u32) ^ flip, f)


@ti.func
def exp_f64_poly(x):
    """``exp`` of a float64, branch-free (vectorisable; libm's ``exp`` is a call per
    element, ~4 ns). Cephes' ``exp``: ``x = k ln2 + r`` (two-part ``ln2``), the Pade form
    ``e^r = 1 + 2 r P(r^2) / (Q(r^2) - r P(r^2))``, then ``2^k`` applied as two powers of two
    (subnormal results and overflow come out right). ``x`` is clamped to ``[-746, 710]``
    first; NaN is detected from its bits. About 1 ulp.
    """
    f = ti.f64
    xc = ti.min(ti.max(x, f(-746.0)), f(710.0))
    k = ti.floor(xc * f(1.4426950408889634073599) + f(0.5))
    r = xc - k * f(6.93145751953125e-1)
    r = r - k * f(1.42860682030941723212e-6)
    rr = r * r
    px = (f(1.26177193074810590878e-4) * rr + f(3.02994407707441961300e-2)) * rr + f(
        9.99999999999999999910e-1
    )
    px = px * r
    qx = (f(3.00198505138664455042e-6) * rr + f(2.52448340349684104192e-3)) * rr + f(
        2.27265548208155028766e-1
    )
    qx = qx * rr + f(2.00000000000000000009e0)
    y = f(1.0) + f(2.0) * (px / (qx - px))
    ki = ti.cast(k, ti.i64)
    k1 = ki >> 1
    k2 = ki - k1
    s1 = ti.bit_cast((k1 + 1023) << 52, f)
    s2 = ti.bit_cast((k2 + 1023) << 52, f)
    res = y * s1 * s2
    return ti.select(isnan(f, x), x, res)


@ti.func
def log_f64_poly(x):
    """``log`` of a float64, branch-free (libm's ``log`` is a call per element, ~4 ns).
    fdlibm's ``e_log.c``: ``x = m 2^k`` with ``m`` in ``[sqrt(2)/2, sqrt(2))`` from the bits
    (subnormals scaled by ``2^54`` first), ``f = m - 1``, ``s = f / (2 + f)``,
    ``log(1 + f) = 2s + s R(s^2)`` with its degree-7 polynomial, ``k ln2`` in two parts;
    both of fdlibm's final forms are computed and the one it would use selected. Under 1
    ulp. ``log(0) = -inf``, negative numbers give NaN, ``log(inf) = inf``, NaN propagates.
    """
    f = ti.f64
    u = ti.u64
    sub = x < f(2.2250738585072014e-308)
    xs = ti.select(sub, x * f(18014398509481984.0), x)  # 2**54
    b = ti.bit_cast(xs, u)
    hx = ti.cast((b >> u(32)) & u(0xFFFFF), ti.i64)
    k = ti.cast((b >> u(52)) & u(0x7FF), ti.i64) - 1023 - ti.select(sub, 54, 0)
    i = (hx + 0x95F64) & 0x100000  # m >= sqrt(2): use m / 2
    m = ti.bit_cast((b & u(0x000FFFFFFFFFFFFF)) | (ti.cast(i ^ 0x3FF00000, u) << u(32)), f)
    k = k + (i >> 20)
    ff = m - f(1.0)
    s = ff / (f(2.0) + ff)
    dk = ti.cast(k, f)
    z = s * s
    w = z * z
    t1 = w * (
        f(3.999999999940941908e-01) + w * (f(2.222219843214978396e-01) + w * f(1.531383769920937332e-01))
    )
    t2 = z * (
        f(6.666666666666735130e-01)
        + w
        * (f(2.857142874366239149e-01) + w * (f(1.818357216161805012e-01) + w * f(1.479819860511658591e-01)))
    )
    R = t2 + t1
    hfsq = f(0.5) * ff * ff
    ln2_hi = f(6.93147180369123816490e-01)
    ln2_lo = f(1.90821492927058770002e-10)
    r1 = dk * ln2_hi - ((hfsq - (s * (hfsq + R) + dk * ln2_lo)) - ff)
    r2 = dk * ln2_hi - ((s * (ff - R) - dk * ln2_lo) - ff)
    return _log_special(f, x, ti.select(((hx - 0x6147A) | (0x6B851 - hx)) > 0, r1, r2))


@ti.func
def tanh_f64_poly(x):
    """``tanh`` of a float64, branch-free (libm's ``tanh`` is a call per element, ~12 ns).
    Cephes' ``tanh``: ``|x| < 0.625``: ``x + x^3 P(x^2) / Q(x^2)``; else
    ``1 - 2 / (e^(2|x|) + 1)`` with :func:`exp_f64_poly`; the sign is copied from ``x``.
    About 2 ulp.
    """
    f = ti.f64
    ax = fabs(f, x)
    z = ax * ax
    p = (f(-9.64399179425052238628e-1) * z - f(9.92877231001918586564e1)) * z - f(1.61468768441708447952e3)
    q = ((z + f(1.12811678491632931402e2)) * z + f(2.23548839060100448583e3)) * z + f(
        4.84406305325125486048e3
    )
    small = ax + ax * z * (p / q)
    e = exp_f64_poly(ax + ax)
    big = f(1.0) - f(2.0) / (e + f(1.0))
    r = ti.select(ax >= f(0.625), big, small)
    return copysign(f, r, x)


@ti.func
def exp_poly(ct: ti.template(), x):
    """:func:`exp_f32_poly` or :func:`exp_f64_poly` by ``ct``."""
    r = x
    if ti.static(ct == ti.f32):
        r = exp_f32_poly(x)
    else:
        r = exp_f64_poly(x)
    return r


@ti.func
def log_poly(ct: ti.template(), x):
    """:func:`log_f32_poly` or :func:`log_f64_poly` by ``ct``."""
    r = x
    if ti.static(ct == ti.f32):
        r = log_f32_poly(x)
    else:
        r = log_f64_poly(x)
    return r


@ti.func
def log1p_poly(ct: ti.template(), x):
    """:func:`log1p` branch-free, on the vectorisable ``log``: Kahan's
    ``log(u) * x / (u - 1)`` with ``u = 1 + x`` (``x`` itself where ``u`` rounds to 1,
    ``+inf`` for ``+inf``; NaN below -1). A few ulp."""
    u = ct(1.0) + x
    d = u - ct(1.0)
    r = log_poly(ct, u) * (x / ti.select(d == ct(0.0), ct(1.0), d))
    r = ti.select(u == ct(1.0), x, r)
    return ti.select(u == inf(ct), u, r)


@ti.func
def expm1_poly(ct: ti.template(), x):
    """:func:`expm1` branch-free, on the vectorisable ``exp`` and ``log``: Kahan's
    ``(u - 1) x / log(u)`` with ``u = e^x`` (``x`` itself where ``u`` rounds to 1, -1 where
    ``u - 1`` does, ``u`` where it is infinite). A few ulp."""
    u = exp_poly(ct, x)
    um1 = u - ct(1.0)
    lu = log_poly(ct, u)
    r = um1 * x / ti.select(lu == ct(0.0), ct(1.0), lu)
    r = ti.select(u == ct(1.0), x, r)
    r = ti.select(um1 == ct(-1.0), ct(-1.0), r)
    return ti.select(u == inf(ct), u, r)


@ti.func
def log1p(ct: ti.template(), x):
    u = ct(1.0) + x
    r = x
    if u == ct(1.0):
        r = x
    elif u == inf(ct):
        r = u
    else:
        r = ti.log(u) * (x / (u - ct(1.0)))
    return r


@ti.func
def expm1(ct: ti.template(), x):
    u = ti.exp(x)
    r = x
    if u == ct(1.0):
        r = x
    elif isinf(ct, u):
        r = u
    else:
        um1 = u - ct(1.0)
        if um1 == ct(-1.0):
            r = ct(-1.0)
        else:
            r = um1 * x / ti.log(u)
    return r


@ti.func
def log2(ct: ti.template(), x):
    r = ti.log(x) * ct(1.4426950408889634)
    b = bits(ct, x)
    MB = ti.static(_p(ct, 52, 23))
    e = ti.cast((b >> _ut(ct, MB)) & _ut(ct, ti.static(_p(ct, 0x7FF, 0xFF))), ti.i32)
    if (
        x > ct(0.0)
        and (b & _ut(ct, (1 << MB) - 1)) == _ut(ct, 0)
        and e != 0
        and e != ti.static(_p(ct, 0x7FF, 0xFF))
    ):
        r = ti.cast(e - ti.static(_p(ct, 1023, 127)), ct)  # exact powers of two
    return r


@ti.func
def log10(ct: ti.template(), x):
    r = ti.log(x) * ct(0.4342944819032518)
    if isfinite(ct, r):
        k = ti.floor(r + ct(0.5))
        if ti.abs(r - k) < ct(1e-3) and ti.abs(k) <= ct(ti.static(_p(ct, 22.0, 10.0))):
            if ti.pow(ct(10.0), k) == x:  # exact powers of ten give exact integers
                r = k
    return r


@ti.func
def logaddexp(ct: ti.template(), x, y):
    r = x
    if x == y:
        r = x + ct(0.6931471805599453)
    else:
        t = x - y
        if t > ct(0.0):
            r = x + log1p(ct, ti.exp(-t))
        elif t <= ct(0.0):
            r = y + log1p(ct, ti.exp(t))
        else:
            r = t
    return r


# ----------------------------------------------------------------------------- hyperbolic


@ti.func
def _logmax(ct: ti.template()):
    return ct(ti.static(_p(ct, 709.782712893384, 88.72283)))


@ti.func
def sinh(ct: ti.template(), x):
    ax = fabs(ct, x)
    r = ax
    if ax < ct(22.0):
        t = expm1(ct, ax)
        r = ct(0.5) * (t + t / (t + ct(1.0)))
    elif ax < _logmax(ct):
        r = ct(0.5) * ti.exp(ax)
    else:
        e = ti.exp(ct(0.5) * ax)
        r = (ct(0.5) * e) * e
    return copysign(ct, r, x)


@ti.func
def cosh(ct: ti.template(), x):
    ax = fabs(ct, x)
    r = ax
    if ax < ct(22.0):
        e = ti.exp(ax)
        r = ct(0.5) * (e + ct(1.0) / e)
    elif ax < _logmax(ct):
        r = ct(0.5) * ti.exp(ax)
    else:
        e = ti.exp(ct(0.5) * ax)
        r = (ct(0.5) * e) * e
    return r


@ti.func
def tanh(ct: ti.template(), x):
    return ti.tanh(x)


@ti.func
def asinh(ct: ti.template(), x):
    ax = fabs(ct, x)
    r = ax
    if ax > ct(ti.static(_p(ct, 268435456.0, 4096.0))):
        r = ti.log(ax) + ct(0.6931471805599453)
    elif ax > ct(2.0):
        r = ti.log(ct(2.0) * ax + ct(1.0) / (ti.sqrt(ax * ax + ct(1.0)) + ax))
    else:
        t = ax * ax
        r = log1p(ct, ax + t / (ct(1.0) + ti.sqrt(ct(1.0) + t)))
    return copysign(ct, r, x)


@ti.func
def acosh(ct: ti.template(), x):
    r = x
    if x < ct(1.0):
        r = nan(ct)
    elif x > ct(ti.static(_p(ct, 268435456.0, 4096.0))):
        r = ti.log(x) + ct(0.6931471805599453)
    elif x > ct(2.0):
        r = ti.log(ct(2.0) * x - ct(1.0) / (x + ti.sqrt(x * x - ct(1.0))))
    else:
        t = x - ct(1.0)
        r = log1p(ct, t + ti.sqrt(ct(2.0) * t + t * t))
    return r


@ti.func
def atanh(ct: ti.template(), x):
    ax = fabs(ct, x)
    r = ax
    if ax < ct(0.5):
        t = ax + ax
        r = ct(0.5) * log1p(ct, t + t * ax / (ct(1.0) - ax))
    else:
        r = ct(0.5) * log1p(ct, (ax + ax) / (ct(1.0) - ax))
    return copysign(ct, r, x)


@ti.func
def hypot(ct: ti.template(), x, y):
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    r = ax
    if isinf(ct, ax) or isinf(ct, ay):
        r = inf(ct)
    elif isnan(ct, ax) or isnan(ct, ay):
        r = nan(ct)
    else:
        a = ti.max(ax, ay)
        b = ti.min(ax, ay)
        if a == ct(0.0):
            r = ct(0.0)
        elif a < ct(ti.static(_p(ct, 1e150, 1e18))) and b > ct(ti.static(_p(ct, 1e-150, 1e-18))):
            r = ti.sqrt(a * a + b * b)
        else:
            t = b / a
            r = a * ti.sqrt(ct(1.0) + t * t)
    return r


# ----------------------------------------------------------------------------- integers


@ti.func
def int_floordiv(a, b, signed: ti.template()):
    r = a - a
    if b == 0:
        r = a - a
    else:
        if ti.static(signed):
            if b == -1:
                r = r - a  # wraps for the minimum value, as NumPy
            else:
                r = a // b
        else:
            r = a // b
    return r


@ti.func
def int_remainder(a, b, signed: ti.template()):
    r = a - a
    if b != 0:
        if ti.static(signed):
            if b != -1:
                r = a % b
        else:
            r = a % b
    return r


@ti.func
def int_pow(a, e, signed: ti.template()):
    """``a ** e`` with wrapping; a negative ``e`` gives the integer part of the result."""
    one = a - a + 1
    r = one
    k = e
    if ti.static(signed):
        if k < 0:
            r = a - a
            if a == 1:
                r = one
            elif a == -1:
                r = ti.select((k & 1) == 0, one, a)
            k = k - k
    base = a
    while k > 0:
        if k & 1:
            r = r * base
        base = base * base
        k = k >> 1
    return r


# ----------------------------------------------------------------------------- float division


@ti.func
def float_floordiv(ct: ti.template(), a, b):
    r = a / b
    if not (b == ct(0.0)):
        mod = fmod(ct, a, b)
        div = (a - mod) / b
        if not (mod == ct(0.0)):
            if (b < ct(0.0)) != (mod < ct(0.0)):
                div -= ct(1.0)
        if not (div == ct(0.0)):
            fl = ti.floor(div)
            if div - fl > ct(0.5):
                fl += ct(1.0)
            r = fl
        else:
            r = copysign(ct, ct(0.0), a / b)
        if isinf(ct, a) != isinf(ct, b):
            # the standard prefers floor(x1 / x2) when one operand is infinite: +-inf for
            # inf // finite (Python gives NaN), +-0 for finite // inf (Python gives -1 or 0)
            r = ti.floor(a / b)
    return r


@ti.func
def float_remainder(ct: ti.template(), a, b):
    mod = fmod(ct, a, b)
    if not (b == ct(0.0)) and not isnan(ct, mod):
        if not (mod == ct(0.0)):
            if (b < ct(0.0)) != (mod < ct(0.0)):
                mod += b
        else:
            mod = copysign(ct, ct(0.0), b)
    return mod


# ----------------------------------------------------------------------------- complex basics


@ti.func
def cx(ct: ti.template(), re, im):
    return ti.Vector([ti.cast(re, ct), ti.cast(im, ct)], dt=ct)


@ti.func
def cmul(ct: ti.template(), a, b):
    return cx(ct, a[0] * b[0] - a[1] * b[1], a[0] * b[1] + a[1] * b[0])


@ti.func
def cdiv(ct: ti.template(), a, b):
    """Smith's algorithm (as NumPy)."""
    abr = fabs(ct, b[0])
    abi = fabs(ct, b[1])
    r = cx(ct, ct(0.0), ct(0.0))
    if abr >= abi:
        if abr == ct(0.0) and abi == ct(0.0):
            r = cx(ct, a[0] / abr, a[1] / abi)
        else:
            rat = b[1] / b[0]
            scl = ct(1.0) / (b[0] + b[1] * rat)
            r = cx(ct, (a[0] + a[1] * rat) * scl, (a[1] - a[0] * rat) * scl)
    else:
        rat = b[0] / b[1]
        scl = ct(1.0) / (b[1] + b[0] * rat)
        r = cx(ct, (a[0] * rat + a[1]) * scl, (a[1] * rat - a[0]) * scl)
    return r


@ti.func
def cabs(ct: ti.template(), z):
    return hypot(ct, z[0], z[1])


# ----------------------------------------------------------------------------- complex exp / log / sqrt


@ti.func
def cexp(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    r = cx(ct, x, y)
    if isfinite(ct, x):
        if y == ct(0.0):
            r = cx(ct, ti.exp(x), y)
        elif isfinite(ct, y):
            if x > _logmax(ct):
                e = ti.exp(ct(0.5) * x)
                r = cx(ct, (e * ti.cos(y)) * e, (e * ti.sin(y)) * e)
            else:
                e = ti.exp(x)
                r = cx(ct, e * ti.cos(y), e * ti.sin(y))
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif isnan(ct, x):
        if not (y == ct(0.0)):
            r = cx(ct, nan(ct), nan(ct))
    elif x > ct(0.0):
        if not (y == ct(0.0)):
            if isfinite(ct, y):
                r = cx(ct, x * ti.cos(y), x * ti.sin(y))
            else:
                r = cx(ct, x, nan(ct))
    else:
        if isfinite(ct, y):
            r = cx(ct, ct(0.0) * ti.cos(y), ct(0.0) * ti.sin(y))
        else:
            r = cx(ct, ct(0.0), ct(0.0))
    return r


@ti.func
def clog(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    re = ax
    im = ti.atan2(y, x)
    if isnan(ct, x) or isnan(ct, y):
        im = nan(ct)
        if isinf(ct, x) or isinf(ct, y):
            re = inf(ct)
        else:
            re = nan(ct)
    elif isinf(ct, x) or isinf(ct, y):
        re = inf(ct)
    else:
        a = ti.max(ax, ay)
        b = ti.min(ax, ay)
        if a == ct(0.0):
            re = -inf(ct)
        elif a > ct(ti.static(_p(ct, 4.49423283715579e307, 8.507059e37))):  # max / 4
            re = ti.log(hypot(ct, a * ct(0.5), b * ct(0.5))) + ct(0.6931471805599453)
        elif a < ct(ti.static(_p(ct, 2.2250738585072014e-308, 1.1754944e-38))):  # subnormal
            s = ct(ti.static(_p(ct, 18014398509481984.0, 16777216.0)))  # 2**54, 2**24
            re = ti.log(hypot(ct, a * s, b * s)) - ct(
                ti.static(_p(ct, 37.42994775023705, 16.635532333438687))
            )
        else:
            h = hypot(ct, a, b)
            if h >= ct(0.71) and h <= ct(1.73):
                re = ct(0.5) * log1p(ct, (a - ct(1.0)) * (a + ct(1.0)) + b * b)
            else:
                re = ti.log(h)
    return cx(ct, re, im)


@ti.func
def csqrt(ct: ti.template(), z):
    a = z[0]
    b = z[1]
    r = cx(ct, a, b)
    if a == ct(0.0) and b == ct(0.0):
        r = cx(ct, ct(0.0), b)
    elif isinf(ct, b):
        r = cx(ct, inf(ct), b)
    elif isnan(ct, a):
        r = cx(ct, a, nan(ct))
    elif isinf(ct, a):
        if signbit(ct, a):
            if isnan(ct, b):
                r = cx(ct, nan(ct), inf(ct))
            else:
                r = cx(ct, ct(0.0), copysign(ct, inf(ct), b))
        else:
            if isnan(ct, b):
                r = cx(ct, a, nan(ct))
            else:
                r = cx(ct, a, copysign(ct, ct(0.0), b))
    else:
        scale = False
        thresh = ct(ti.static(_p(ct, 7.446288774449766e307, 1.4095e38)))  # max / (1 + sqrt(2))
        if fabs(ct, a) >= thresh or fabs(ct, b) >= thresh:
            a *= ct(0.25)
            b *= ct(0.25)
            scale = True
        if a >= ct(0.0):
            t = ti.sqrt((a + hypot(ct, a, b)) * ct(0.5))
            r = cx(ct, t, b / (ct(2.0) * t))
        else:
            t = ti.sqrt((-a + hypot(ct, a, b)) * ct(0.5))
            r = cx(ct, fabs(ct, b) / (ct(2.0) * t), copysign(ct, t, b))
        if scale:
            r = r * ct(2.0)
    return r


@ti.func
def cpow(ct: ti.template(), a, b):
    """``a ** b``: exact products for small integer exponents, else ``exp(b * log(a))``."""
    r = cx(ct, ct(1.0), ct(0.0))
    br = b[0]
    bi = b[1]
    if br == ct(0.0) and bi == ct(0.0):
        r = cx(ct, ct(1.0), ct(0.0))
    elif a[0] == ct(0.0) and a[1] == ct(0.0):
        if br > ct(0.0):
            r = cx(ct, ct(0.0), ct(0.0))
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif bi == ct(0.0) and br > ct(-100.0) and br < ct(100.0) and br == ti.floor(br):
        n = ti.cast(ti.abs(br), ti.i32)
        if n == 1:
            r = a
        elif n == 2:
            r = cmul(ct, a, a)
        elif n == 3:
            r = cmul(ct, a, cmul(ct, a, a))
        else:
            acc = cx(ct, ct(1.0), ct(0.0))
            p = a
            while n > 0:
                if n & 1:
                    acc = cmul(ct, acc, p)
                n = n >> 1
                if n > 0:
                    p = cmul(ct, p, p)
            r = acc
        if br < ct(0.0):
            r = cdiv(ct, cx(ct, ct(1.0), ct(0.0)), r)
    else:
        la = clog(ct, a)
        r = cexp(ct, cmul(ct, la, b))
    return r


@ti.func
def cexpm1(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    r = z
    if isfinite(ct, x) and isfinite(ct, y) and fabs(ct, x) < ct(1.0) and fabs(ct, y) < ct(1.0):
        if y == ct(0.0):
            # expm1(+-0 + 0j) is +0 + 0j (array API), unlike the real expm1(-0) = -0
            rx = expm1(ct, x)
            if x == ct(0.0):
                rx = ct(0.0)
            r = cx(ct, rx, y)
        else:
            s = ti.sin(ct(0.5) * y)
            r = cx(ct, expm1(ct, x) * ti.cos(y) - ct(2.0) * s * s, ti.exp(x) * ti.sin(y))
    else:
        w = cexp(ct, z)
        r = cx(ct, w[0] - ct(1.0), w[1])
    return r


@ti.func
def clog1p(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    r = z
    if isfinite(ct, x) and isfinite(ct, y) and fabs(ct, x) < ct(0.5) and fabs(ct, y) < ct(0.5):
        if x == ct(0.0) and y == ct(0.0):
            r = z
        else:
            re = ct(0.5) * log1p(ct, x * (ct(2.0) + x) + y * y)
            r = cx(ct, re, ti.atan2(y, ct(1.0) + x))
    else:
        r = clog(ct, cx(ct, ct(1.0) + x, y))
    return r


# ----------------------------------------------------------------------------- complex hyperbolic


@ti.func
def ccosh(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    xf = isfinite(ct, x)
    yf = isfinite(ct, y)
    r = z
    if xf and yf:
        ax = fabs(ct, x)
        if y == ct(0.0):
            r = cx(ct, cosh(ct, x), x * y)
        elif ax < ct(22.0):
            r = cx(ct, cosh(ct, x) * ti.cos(y), sinh(ct, x) * ti.sin(y))
        elif ax < _logmax(ct):
            h = ti.exp(ax) * ct(0.5)
            r = cx(ct, h * ti.cos(y), copysign(ct, h, x) * ti.sin(y))
        else:
            e = ti.exp(ct(0.5) * ax)
            h = ct(0.5) * e
            r = cx(ct, (h * ti.cos(y)) * e, copysign(ct, ct(1.0), x) * ((h * ti.sin(y)) * e))
    elif x == ct(0.0):  # y inf or nan
        r = cx(ct, nan(ct), ct(0.0))
    elif y == ct(0.0):  # x inf or nan
        if isnan(ct, x):
            r = cx(ct, nan(ct), ct(0.0))
        else:
            r = cx(ct, inf(ct), copysign(ct, ct(1.0), x) * y)
    elif xf:  # y inf or nan, x finite nonzero
        r = cx(ct, nan(ct), nan(ct))
    elif isinf(ct, x):
        if yf:
            r = cx(ct, inf(ct) * ti.cos(y), x * ti.sin(y))
        else:
            r = cx(ct, inf(ct), nan(ct))
    else:
        r = cx(ct, nan(ct), nan(ct))
    return r


@ti.func
def csinh(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    xf = isfinite(ct, x)
    yf = isfinite(ct, y)
    r = z
    if xf and yf:
        ax = fabs(ct, x)
        if y == ct(0.0):
            r = cx(ct, sinh(ct, x), y)
        elif ax < ct(22.0):
            r = cx(ct, sinh(ct, x) * ti.cos(y), cosh(ct, x) * ti.sin(y))
        elif ax < _logmax(ct):
            h = ti.exp(ax) * ct(0.5)
            r = cx(ct, copysign(ct, h, x) * ti.cos(y), h * ti.sin(y))
        else:
            e = ti.exp(ct(0.5) * ax)
            h = ct(0.5) * e
            r = cx(ct, copysign(ct, ct(1.0), x) * ((h * ti.cos(y)) * e), (h * ti.sin(y)) * e)
    elif x == ct(0.0):  # y inf or nan
        r = cx(ct, x, nan(ct))
    elif y == ct(0.0):  # x inf or nan
        r = cx(ct, x, y)
    elif xf:
        r = cx(ct, nan(ct), nan(ct))
    elif isinf(ct, x):
        if yf:
            r = cx(ct, x * ti.cos(y), inf(ct) * ti.sin(y))
        else:
            r = cx(ct, x, nan(ct))
    else:
        r = cx(ct, nan(ct), nan(ct))
    return r


@ti.func
def ctanh(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    r = z
    if not isfinite(ct, x):
        if isnan(ct, x):
            if not (y == ct(0.0)):
                r = cx(ct, nan(ct), nan(ct))
        else:
            # tanh(+-inf + yj) = +-1 + 0j with the zero's sign of y (array API: "1 + 0j" for a
            # positive finite y; C99's sign of sin(2y) gives -0 for y = 2); unspecified for
            # an infinite or NaN y
            r = cx(ct, copysign(ct, ct(1.0), x), copysign(ct, ct(0.0), y))
    elif not isfinite(ct, y):
        if x == ct(0.0):
            r = cx(ct, x, nan(ct))
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif fabs(ct, x) >= ct(ti.static(_p(ct, 22.0, 11.0))):
        e = ti.exp(-fabs(ct, x))
        r = cx(ct, copysign(ct, ct(1.0), x), ct(4.0) * ti.sin(y) * ti.cos(y) * e * e)
    else:
        t = ti.tan(y)
        beta = ct(1.0) + t * t
        s = sinh(ct, x)
        rho = ti.sqrt(ct(1.0) + s * s)
        den = ct(1.0) + beta * s * s
        r = cx(ct, (beta * rho * s) / den, t / den)
    return r


@ti.func
def _times_i(ct: ti.template(), z):
    """``i * z``."""
    return cx(ct, -z[1], z[0])


@ti.func
def ccos(ct: ti.template(), z):
    return ccosh(ct, _times_i(ct, z))


@ti.func
def csin(ct: ti.template(), z):
    w = csinh(ct, _times_i(ct, z))
    return cx(ct, w[1], -w[0])


@ti.func
def ctan(ct: ti.template(), z):
    w = ctanh(ct, _times_i(ct, z))
    return cx(ct, w[1], -w[0])


# ----------------------------------------------------------------------------- complex inverse trig


@ti.func
def _eps(ct: ti.template()):
    return ct(ti.static(_p(ct, 2.220446049250313e-16, 1.1920929e-07)))


@ti.func
def _hull_f(ct: ti.template(), a, b, h):
    """``(hypot(a, b) - b) / 2`` without cancellation; ``h = hypot(a, b)``."""
    r = a * a / (h + b) / ct(2.0)
    if b < ct(0.0):
        r = (h - b) / ct(2.0)
    elif b == ct(0.0):
        r = a / ct(2.0)
    return r


@ti.func
def _hard_work(ct: ti.template(), x, y):
    """Hull et al.: for x, y >= 0, returns (Re asinh(x + iy), B usable, B, sqrt(A^2 - y^2), new y)."""
    eps = _eps(ct)
    R = hypot(ct, x, y + ct(1.0))
    S = hypot(ct, x, y - ct(1.0))
    A = ti.max((R + S) / ct(2.0), ct(1.0))
    rx = x
    if A < ct(10.0):
        if y == ct(1.0) and x < eps * eps / ct(128.0):
            rx = ti.sqrt(x)
        elif x >= eps * fabs(ct, y - ct(1.0)):
            am1 = _hull_f(ct, x, ct(1.0) + y, R) + _hull_f(ct, x, ct(1.0) - y, S)
            rx = log1p(ct, am1 + ti.sqrt(am1 * (A + ct(1.0))))
        elif y < ct(1.0):
            rx = x / ti.sqrt((ct(1.0) - y) * (ct(1.0) + y))
        else:
            rx = log1p(ct, (y - ct(1.0)) + ti.sqrt((y - ct(1.0)) * (y + ct(1.0))))
    else:
        rx = ti.log(A + ti.sqrt(A * A - ct(1.0)))
    new_y = y
    usable = ct(1.0)
    B = ct(0.0)
    sq = ct(0.0)
    if y < ct(ti.static(_p(ct, 5.9666725849601654e-154, 4.3368086899420177e-19))):
        usable = ct(0.0)
        sq = A * (ct(2.0) / eps)
        new_y = y * (ct(2.0) / eps)
    else:
        B = y / A
        if B > ct(0.6417):
            usable = ct(0.0)
            if y == ct(1.0) and x < eps / ct(128.0):
                sq = ti.sqrt(x) * ti.sqrt((A + y) / ct(2.0))
            elif x >= eps * fabs(ct, y - ct(1.0)):
                amy = _hull_f(ct, x, y + ct(1.0), R) + _hull_f(ct, x, y - ct(1.0), S)
                sq = ti.sqrt(amy * (A + y))
            elif y > ct(1.0):
                big = ct(4.0) / eps / eps
                sq = x * big * y / ti.sqrt((y + ct(1.0)) * (y - ct(1.0)))
                new_y = y * big
            else:
                sq = ti.sqrt((ct(1.0) - y) * (ct(1.0) + y))
    return ti.Vector([rx, usable, B, sq, new_y], dt=ct)


@ti.func
def _clog_large(ct: ti.template(), x, y):
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    big = ti.max(ax, ay)
    small = ti.min(ax, ay)
    rr = ax
    if big > ct(ti.static(_p(ct, 8.98846567431158e307, 1.7014117e38))):  # max / 2
        e = ct(2.718281828459045)
        rr = ti.log(hypot(ct, x / e, y / e)) + ct(1.0)
    elif big > ct(ti.static(_p(ct, 3.3519519824856489e153, 4.611685743549481e18))) or small < ct(
        ti.static(_p(ct, 1.4916681462400413e-154, 1.0842021724855044e-19))
    ):
        rr = ti.log(hypot(ct, x, y))
    else:
        rr = ti.log(big * big + small * small) / ct(2.0)
    return cx(ct, rr, ti.atan2(y, x))


@ti.func
def casinh(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    r = z
    recip_eps = ct(1.0) / _eps(ct)
    if isnan(ct, x) or isnan(ct, y):
        if isinf(ct, x):
            r = cx(ct, x, nan(ct))
        elif isinf(ct, y):
            r = cx(ct, y, nan(ct))
        elif y == ct(0.0):
            r = cx(ct, nan(ct), y)
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif ax > recip_eps or ay > recip_eps:
        w = cx(ct, ct(0.0), ct(0.0))
        if signbit(ct, x):
            w = _clog_large(ct, -x, -y)
        else:
            w = _clog_large(ct, x, y)
        r = cx(ct, copysign(ct, w[0] + ct(0.6931471805599453), x), copysign(ct, w[1], y))
    elif x == ct(0.0) and y == ct(0.0):
        r = z
    elif ax < ct(ti.static(_p(ct, 3.65002414998885671e-08, 8.4572793338e-4))) / ct(4.0) and ay < ct(
        ti.static(_p(ct, 3.65002414998885671e-08, 8.4572793338e-4))
    ) / ct(4.0):
        r = z
    else:
        h = _hard_work(ct, ax, ay)
        ry = ti.atan2(h[4], h[3])
        if h[1] != ct(0.0):
            ry = ti.asin(h[2])
        r = cx(ct, copysign(ct, h[0], x), copysign(ct, ry, y))
    return r


@ti.func
def cacos(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    sx = signbit(ct, x)
    sy = signbit(ct, y)
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    recip_eps = ct(1.0) / _eps(ct)
    pio2_hi = ct(1.5707963267948966)
    pio2_lo = ct(ti.static(_p(ct, 6.1232339957367659e-17, 7.5497899549e-9)))
    r = z
    if isnan(ct, x) or isnan(ct, y):
        if isinf(ct, x):
            r = cx(ct, nan(ct), -inf(ct))
        elif isinf(ct, y):
            r = cx(ct, nan(ct), -y)
        elif x == ct(0.0):
            r = cx(ct, pio2_hi, nan(ct))
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif ax > recip_eps or ay > recip_eps:
        w = _clog_large(ct, x, y)
        rx = fabs(ct, w[1])
        ry = w[0] + ct(0.6931471805599453)
        if not sy:
            ry = -ry
        r = cx(ct, rx, ry)
    elif x == ct(1.0) and y == ct(0.0):
        r = cx(ct, ct(0.0), -y)
    elif ax < ct(ti.static(_p(ct, 3.65002414998885671e-08, 8.4572793338e-4))) / ct(4.0) and ay < ct(
        ti.static(_p(ct, 3.65002414998885671e-08, 8.4572793338e-4))
    ) / ct(4.0):
        r = cx(ct, pio2_hi - (x - pio2_lo), -y)
    else:
        h = _hard_work(ct, ay, ax)
        rx = ct(0.0)
        if h[1] != ct(0.0):
            if sx:
                rx = ti.acos(-h[2])
            else:
                rx = ti.acos(h[2])
        else:
            if sx:
                rx = ti.atan2(h[3], -h[4])
            else:
                rx = ti.atan2(h[3], h[4])
        ry = h[0]
        if not sy:
            ry = -ry
        r = cx(ct, rx, ry)
    return r


@ti.func
def casin(ct: ti.template(), z):
    w = casinh(ct, cx(ct, z[1], z[0]))
    return cx(ct, w[1], w[0])


@ti.func
def cacosh(ct: ti.template(), z):
    w = cacos(ct, z)
    rx = w[0]
    ry = w[1]
    r = w
    if isnan(ct, rx) and isnan(ct, ry):
        r = cx(ct, ry, rx)
    elif isnan(ct, rx):
        r = cx(ct, fabs(ct, ry), rx)
    elif isnan(ct, ry) and z[0] == ct(0.0):
        r = cx(ct, ry, rx)  # acosh(+-0 + NaN j) = NaN + pi/2 j (array API; FreeBSD: NaN + NaN j)
    elif isnan(ct, ry):
        r = cx(ct, ry, ry)
    else:
        r = cx(ct, fabs(ct, ry), copysign(ct, rx, z[1]))
    return r


@ti.func
def _real_part_reciprocal(ct: ti.template(), x, y):
    """``x / (x*x + y*y)`` for large ``|x|`` or ``|y|``, scaled by a power of two."""
    r = x
    if isinf(ct, x) or isinf(ct, y):
        r = copysign(ct, ct(0.0), x)
    else:
        m = ti.max(fabs(ct, x), fabs(ct, y))
        MB = ti.static(_p(ct, 52, 23))
        e = (bits(ct, m) >> _ut(ct, MB)) & _ut(ct, ti.static(_p(ct, 0x7FF, 0xFF)))
        # 2 ** (bias - (e - bias)) = 2 ** -(exponent of m)
        s = from_bits(ct, (_ut(ct, ti.static(_p(ct, 2046, 254))) - e) << _ut(ct, MB))
        xs = x * s
        ys = y * s
        r = xs / (xs * xs + ys * ys) * s
    return r


@ti.func
def catanh(ct: ti.template(), z):
    x = z[0]
    y = z[1]
    ax = fabs(ct, x)
    ay = fabs(ct, y)
    eps = _eps(ct)
    recip_eps = ct(1.0) / eps
    pio2 = ct(1.5707963267948966)
    r = z
    if y == ct(0.0) and ax <= ct(1.0):
        r = cx(ct, atanh(ct, x), y)
    elif x == ct(0.0):
        r = cx(ct, x, ti.atan2(y, ct(1.0)))
    elif isnan(ct, x) or isnan(ct, y):
        if isinf(ct, x):
            r = cx(ct, copysign(ct, ct(0.0), x), nan(ct))
        elif isinf(ct, y):
            r = cx(ct, copysign(ct, ct(0.0), x), copysign(ct, pio2, y))
        else:
            r = cx(ct, nan(ct), nan(ct))
    elif ax > recip_eps or ay > recip_eps:
        r = cx(ct, _real_part_reciprocal(ct, x, y), copysign(ct, pio2, y))
    elif ax < ct(ti.static(_p(ct, 2.5809568279517849e-8, 5.9801995673e-4))) / ct(2.0) and ay < ct(
        ti.static(_p(ct, 2.5809568279517849e-8, 5.9801995673e-4))
    ) / ct(2.0):
        r = z
    else:
        rx = ct(0.0)
        if ax == ct(1.0) and ay < eps:
            rx = (ct(0.6931471805599453) - ti.log(ay)) / ct(2.0)
        else:
            am1 = ax - ct(1.0)
            ss = am1 * am1
            if ay >= ct(ti.static(_p(ct, 1.4916681462400413e-154, 1.0842021724855044e-19))):
                ss += ay * ay
            rx = log1p(ct, ct(4.0) * ax / ss) / ct(4.0)
        ry = ct(0.0)
        if ax == ct(1.0):
            ry = ti.atan2(ct(2.0), -ay) / ct(2.0)
        elif ay < eps:
            ry = ti.atan2(ct(2.0) * ay, (ct(1.0) - ax) * (ct(1.0) + ax)) / ct(2.0)
        else:
            ry = ti.atan2(ct(2.0) * ay, (ct(1.0) - ax) * (ct(1.0) + ax) - ay * ay) / ct(2.0)
        r = cx(ct, copysign(ct, rx, x), copysign(ct, ry, y))
    return r


@ti.func
def catan(ct: ti.template(), z):
    w = catanh(ct, cx(ct, z[1], z[0]))
    return cx(ct, w[1], w[0])
