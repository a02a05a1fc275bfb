"""Docstring material of the element-wise functions: summary, special cases, example.

``DOCS[name] = (summary, details, (example call, example output))``; the Parameters,
Returns and Raises sections are generated from the function table in
:mod:`tiarray._elementwise_functions`.
"""

_C99 = "Special values (NaN, infinities, signed zeros) follow the array API standard (C99 Annex F)."
_C99C = (
    "Special values (NaN, infinities, signed zeros) follow the array API standard (C99 "
    "Annexes F and G for real and complex input)."
)

DOCS = {
    "abs": (
        "Absolute value of each element; the modulus ``hypot(re, im)`` for complex input.",
        "``abs(-0.0)`` is ``+0.0`` and ``abs(-inf)`` is ``+inf``; for complex input an infinite "
        "part gives ``+inf`` even if the other is NaN. The absolute value of the minimum signed "
        "integer wraps to itself.",
        ("ta.abs(ta.asarray([-1.5, 0.0, 2.0]))", "TiArray([1.5, 0. , 2. ], dtype=float64)"),
    ),
    "acos": (
        "Principal value of the inverse cosine, in radians (``[0, pi]`` for real input).",
        "Real input outside ``[-1, 1]`` gives NaN. Complex input: branch cuts on ``(-inf, -1)`` "
        "and ``(1, inf)`` of the real axis. " + _C99C,
        ("ta.acos(ta.asarray([1.0, 0.0]))", "TiArray([0.        , 1.57079633], dtype=float64)"),
    ),
    "acosh": (
        "Inverse hyperbolic cosine.",
        "Real input below 1 gives NaN; ``acosh(1) = +0``. Complex input: branch cut on "
        "``(-inf, 1)`` of the real axis. " + _C99C,
        ("ta.acosh(ta.asarray([1.0, 2.0]))", "TiArray([0.       , 1.3169579], dtype=float64)"),
    ),
    "add": (
        "Sum ``x1 + x2`` of each pair of elements (``+`` on TiArrays).",
        "Integers wrap on overflow; ``inf + -inf`` is NaN; ``-0.0 + -0.0`` is ``-0.0``. Complex "
        "parts add independently.",
        ("ta.add(ta.asarray([1, 2]), 10)", "TiArray([11, 12], dtype=int64)"),
    ),
    "asin": (
        "Principal value of the inverse sine, in radians (``[-pi/2, pi/2]`` for real input).",
        "Real input outside ``[-1, 1]`` gives NaN; signed zeros are kept. Complex input: "
        "branch cuts on ``(-inf, -1)`` and ``(1, inf)``. " + _C99C,
        ("ta.asin(ta.asarray([0.0, 1.0]))", "TiArray([0.        , 1.57079633], dtype=float64)"),
    ),
    "asinh": (
        "Inverse hyperbolic sine.",
        "Odd function; signed zeros and infinities are kept. Complex input: branch cuts on "
        "``(-inf j, -j)`` and ``(j, inf j)``. " + _C99C,
        ("ta.asinh(ta.asarray([0.0, 1.0]))", "TiArray([0.        , 0.88137359], dtype=float64)"),
    ),
    "atan": (
        "Principal value of the inverse tangent, in radians (``[-pi/2, pi/2]`` for real input).",
        "``atan(+-inf) = +-pi/2``; signed zeros are kept. Complex input: branch cuts on "
        "``(-inf j, -j)`` and ``(j, inf j)``. " + _C99C,
        ("ta.atan(ta.asarray([0.0, 1.0]))", "TiArray([0.        , 0.78539816], dtype=float64)"),
    ),
    "atan2": (
        "Angle of the point ``(x2, x1)``: the inverse tangent of ``x1 / x2`` in the right quadrant.",
        "The result lies in ``[-pi, pi]``; the signs of zeros and infinities pick the quadrant "
        "(``atan2(+0, -0) = +pi``, ``atan2(+inf, -inf) = 3*pi/4``). " + _C99,
        (
            "ta.atan2(ta.asarray([1.0, -1.0]), ta.asarray([-1.0, -1.0]))",
            "TiArray([ 2.35619449, -2.35619449], dtype=float64)",
        ),
    ),
    "atanh": (
        "Inverse hyperbolic tangent.",
        "Real input: ``atanh(+-1) = +-inf``, ``|x| > 1`` gives NaN. Complex input: branch cuts "
        "on ``(-inf, -1]`` and ``[1, inf)``. " + _C99C,
        ("ta.atanh(ta.asarray([0.0, 0.5]))", "TiArray([0.        , 0.54930614], dtype=float64)"),
    ),
    "bitwise_and": (
        "Bitwise AND of each pair of elements (``&``); logical AND for booleans.",
        "Integers are combined in two's complement after type promotion.",
        ("ta.bitwise_and(ta.asarray([12, 10]), 6)", "TiArray([4, 2], dtype=int64)"),
    ),
    "bitwise_left_shift": (
        "Shift the bits of ``x1`` left by ``x2`` (``<<``).",
        "Bits shifted out are lost (integers wrap); a shift by at least the bit width, or by a "
        "negative amount (undefined in the standard), gives 0.",
        ("ta.bitwise_left_shift(ta.asarray([1, 3]), 2)", "TiArray([ 4, 12], dtype=int64)"),
    ),
    "bitwise_invert": (
        "Bitwise NOT of each element (``~``); logical NOT for booleans.",
        "For signed integers ``~x == -x - 1`` (two's complement).",
        ("ta.bitwise_invert(ta.asarray([0, 5], dtype=ta.uint8))", "TiArray([255, 250], dtype=uint8)"),
    ),
    "bitwise_or": (
        "Bitwise OR of each pair of elements (``|``); logical OR for booleans.",
        "Integers are combined in two's complement after type promotion.",
        ("ta.bitwise_or(ta.asarray([12, 10]), 1)", "TiArray([13, 11], dtype=int64)"),
    ),
    "bitwise_right_shift": (
        "Shift the bits of ``x1`` right by ``x2`` (``>>``): arithmetic for signed integers.",
        "A shift by at least the bit width, or by a negative amount (undefined in the "
        "standard), gives 0, or -1 for negative signed values.",
        ("ta.bitwise_right_shift(ta.asarray([16, -16]), 2)", "TiArray([ 4, -4], dtype=int64)"),
    ),
    "bitwise_xor": (
        "Bitwise exclusive OR of each pair of elements (``^``); logical XOR for booleans.",
        "Integers are combined in two's complement after type promotion.",
        ("ta.bitwise_xor(ta.asarray([12, 10]), 6)", "TiArray([10, 12], dtype=int64)"),
    ),
    "ceil": (
        "Smallest integer not less than each element (rounding toward +inf).",
        "Integer input is returned unchanged (as a new array of the same dtype). NaN, "
        "infinities and signed zeros are kept; ``ceil(-0.5) = -0.0``.",
        ("ta.ceil(ta.asarray([-1.5, 1.2]))", "TiArray([-1.,  2.], dtype=float64)"),
    ),
    "conj": (
        "Complex conjugate ``re - im j`` of each element.",
        "Real input is returned unchanged (as a new array of the same dtype); the sign of a "
        "zero imaginary part flips.",
        ("ta.conj(ta.asarray([1 + 2j]))", "TiArray([1.-2.j], dtype=complex128)"),
    ),
    "copysign": (
        "The magnitude of ``x1`` with the sign bit of ``x2``.",
        "Works on the sign bit: ``copysign(1.0, -0.0) = -1.0``, and NaN inputs keep their "
        "payload with the sign of ``x2``.",
        (
            "ta.copysign(ta.asarray([1.0, 2.0]), ta.asarray([-0.0, 3.0]))",
            "TiArray([-1.,  2.], dtype=float64)",
        ),
    ),
    "cos": (
        "Cosine of each element (radians).",
        "``cos(+-inf)`` is NaN. Complex input: ``cos(z) = cosh(j z)``. " + _C99C,
        ("ta.cos(ta.asarray([0.0, 3.141592653589793]))", "TiArray([ 1., -1.], dtype=float64)"),
    ),
    "cosh": (
        "Hyperbolic cosine of each element.",
        "Even function; ``cosh(+-inf) = +inf``; large arguments overflow to ``+inf`` only when "
        "the result does. " + _C99C,
        ("ta.cosh(ta.asarray([0.0, 1.0]))", "TiArray([1.        , 1.54308063], dtype=float64)"),
    ),
    "divide": (
        "True quotient ``x1 / x2`` of each pair of elements (``/``).",
        "Floating division by zero gives signed infinities or NaN as IEEE 754. Integer "
        "inputs are divided in the default real floating dtype (float64), as NumPy (the "
        "standard leaves integer division implementation-defined). Complex division uses "
        "Smith's algorithm.",
        ("ta.divide(ta.asarray([1.0, -1.0]), 0.0)", "TiArray([ inf, -inf], dtype=float64)"),
    ),
    "equal": (
        "Truth of ``x1 == x2`` for each pair of elements (``==``).",
        "NaN is unequal to everything, ``-0.0 == +0.0``; complex numbers are equal when both parts are.",
        (
            "ta.equal(ta.asarray([1.0, float('nan')]), ta.asarray([1.0, float('nan')]))",
            "TiArray([ True, False], dtype=bool)",
        ),
    ),
    "exp": (
        "Exponential ``e**x`` of each element.",
        "``exp(-inf) = +0``, ``exp(+inf) = +inf``. Complex input: ``exp(re) * (cos(im) + j "
        "sin(im))``, without spurious overflow for large ``re``. " + _C99C,
        ("ta.exp(ta.asarray([0.0, 1.0]))", "TiArray([1.        , 2.71828183], dtype=float64)"),
    ),
    "expm1": (
        "``exp(x) - 1`` of each element, accurate for small ``x``.",
        "``expm1(-inf) = -1``; signed zeros are kept. Complex input is supported. " + _C99C,
        ("ta.expm1(ta.asarray([1e-10, 0.0]))", "TiArray([1.e-10, 0.e+00], dtype=float64)"),
    ),
    "floor": (
        "Largest integer not greater than each element (rounding toward -inf).",
        "Integer input is returned unchanged (as a new array of the same dtype). NaN, "
        "infinities and signed zeros are kept.",
        ("ta.floor(ta.asarray([-1.5, 1.2]))", "TiArray([-2.,  1.], dtype=float64)"),
    ),
    "floor_divide": (
        "Quotient of ``x1 / x2`` rounded toward -inf (``//``).",
        "Integers: the quotient is rounded toward minus infinity and division by zero gives 0 "
        "(as NumPy; the standard leaves it undefined); ``min_int // -1`` wraps. Floating: "
        "``floor(x1 / x2)`` computed exactly from ``fmod``; ``+-inf // finite`` is ``+-inf``, "
        "division by zero gives infinities or NaN.",
        ("ta.floor_divide(ta.asarray([7, -7]), 2)", "TiArray([ 3, -4], dtype=int64)"),
    ),
    "greater": (
        "Truth of ``x1 > x2`` for each pair of elements (``>``).",
        "Comparisons with NaN are False. Not defined for complex input.",
        ("ta.greater(ta.asarray([1, 2, 3]), 2)", "TiArray([False, False,  True], dtype=bool)"),
    ),
    "greater_equal": (
        "Truth of ``x1 >= x2`` for each pair of elements (``>=``).",
        "Comparisons with NaN are False. Not defined for complex input.",
        ("ta.greater_equal(ta.asarray([1, 2, 3]), 2)", "TiArray([False,  True,  True], dtype=bool)"),
    ),
    "hypot": (
        "Length ``sqrt(x1**2 + x2**2)`` of each vector ``(x1, x2)``, without undue overflow or underflow.",
        "An infinite argument gives ``+inf`` even when the other is NaN.",
        (
            "ta.hypot(ta.asarray([3.0, 1e300]), ta.asarray([4.0, 1e300]))",
            "TiArray([5.00000000e+000, 1.41421356e+300], dtype=float64)",
        ),
    ),
    "imag": (
        "Imaginary part of each element of a complex array.",
        "The result is real, of the same precision (``complex64 -> float32``).",
        ("ta.imag(ta.asarray([1 + 2j, 3 - 4j]))", "TiArray([ 2., -4.], dtype=float64)"),
    ),
    "isfinite": (
        "Whether each element is finite (neither infinite nor NaN).",
        "Always True for integers; complex numbers are finite when both parts are.",
        (
            "ta.isfinite(ta.asarray([1.0, float('inf'), float('nan')]))",
            "TiArray([ True, False, False], dtype=bool)",
        ),
    ),
    "isinf": (
        "Whether each element is positive or negative infinity.",
        "Always False for integers; a complex number is infinite when either part is.",
        ("ta.isinf(ta.asarray([1.0, -float('inf')]))", "TiArray([False,  True], dtype=bool)"),
    ),
    "isnan": (
        "Whether each element is NaN.",
        "Always False for integers; a complex number is NaN when either part is.",
        ("ta.isnan(ta.asarray([1.0, float('nan')]))", "TiArray([False,  True], dtype=bool)"),
    ),
    "less": (
        "Truth of ``x1 < x2`` for each pair of elements (``<``).",
        "Comparisons with NaN are False. Not defined for complex input.",
        ("ta.less(ta.asarray([1, 2, 3]), 2)", "TiArray([ True, False, False], dtype=bool)"),
    ),
    "less_equal": (
        "Truth of ``x1 <= x2`` for each pair of elements (``<=``).",
        "Comparisons with NaN are False. Not defined for complex input.",
        ("ta.less_equal(ta.asarray([1, 2, 3]), 2)", "TiArray([ True,  True, False], dtype=bool)"),
    ),
    "log": (
        "Natural logarithm of each element.",
        "``log(+-0) = -inf``, negative real input gives NaN. Complex input: principal value, "
        "branch cut on ``(-inf, 0]``, accurate near ``|z| = 1``. " + _C99C,
        ("ta.log(ta.asarray([1.0, 2.718281828459045]))", "TiArray([0., 1.], dtype=float64)"),
    ),
    "log1p": (
        "``log(1 + x)`` of each element, accurate for small ``x``.",
        "``log1p(-1) = -inf``, input below -1 gives NaN; signed zeros are kept. Complex input "
        "is supported. " + _C99C,
        ("ta.log1p(ta.asarray([1e-10, 0.0]))", "TiArray([1.e-10, 0.e+00], dtype=float64)"),
    ),
    "log2": (
        "Base-2 logarithm of each element.",
        "Exact for powers of two; ``log2(0) = -inf``; negative real input gives NaN. Complex "
        "input: ``log(z) / log(2)``.",
        ("ta.log2(ta.asarray([1.0, 8.0, 0.5]))", "TiArray([ 0.,  3., -1.], dtype=float64)"),
    ),
    "log10": (
        "Base-10 logarithm of each element.",
        "Exact for powers of ten; ``log10(0) = -inf``; negative real input gives NaN. Complex "
        "input: ``log(z) / log(10)``.",
        ("ta.log10(ta.asarray([1.0, 1000.0]))", "TiArray([0., 3.], dtype=float64)"),
    ),
    "logaddexp": (
        "``log(exp(x1) + exp(x2))`` of each pair of elements, without overflow.",
        "``logaddexp(+inf, x) = +inf`` for any non-NaN ``x``; NaN propagates.",
        (
            "ta.logaddexp(ta.asarray([0.0, 1000.0]), ta.asarray([0.0, 1000.0]))",
            "TiArray([6.93147181e-01, 1.00069315e+03], dtype=float64)",
        ),
    ),
    "logical_and": (
        "Logical AND of each pair of boolean elements.",
        "Both arguments must be boolean arrays (or Python bools).",
        ("ta.logical_and(ta.asarray([True, False]), True)", "TiArray([ True, False], dtype=bool)"),
    ),
    "logical_not": (
        "Logical NOT of each boolean element.",
        "The argument must be a boolean array.",
        ("ta.logical_not(ta.asarray([True, False]))", "TiArray([False,  True], dtype=bool)"),
    ),
    "logical_or": (
        "Logical OR of each pair of boolean elements.",
        "Both arguments must be boolean arrays (or Python bools).",
        ("ta.logical_or(ta.asarray([True, False]), False)", "TiArray([ True, False], dtype=bool)"),
    ),
    "logical_xor": (
        "Logical exclusive OR of each pair of boolean elements.",
        "Both arguments must be boolean arrays (or Python bools).",
        ("ta.logical_xor(ta.asarray([True, False]), True)", "TiArray([False,  True], dtype=bool)"),
    ),
    "maximum": (
        "Larger of each pair of elements.",
        "NaN propagates (if either is NaN the result is NaN); for zeros of different sign the "
        "result is either (the standard leaves it unspecified). Not defined for complex input.",
        ("ta.maximum(ta.asarray([1.0, float('nan')]), 2.0)", "TiArray([ 2., nan], dtype=float64)"),
    ),
    "minimum": (
        "Smaller of each pair of elements.",
        "NaN propagates (if either is NaN the result is NaN); for zeros of different sign the "
        "result is either (the standard leaves it unspecified). Not defined for complex input.",
        ("ta.minimum(ta.asarray([1.0, float('nan')]), 2.0)", "TiArray([ 1., nan], dtype=float64)"),
    ),
    "multiply": (
        "Product ``x1 * x2`` of each pair of elements (``*``).",
        "Integers wrap on overflow; ``0 * inf`` is NaN. Complex: ``(ac - bd) + (ad + bc) j``.",
        ("ta.multiply(ta.asarray([1.5, 2.0]), 2)", "TiArray([3., 4.], dtype=float64)"),
    ),
    "negative": (
        "Numerical negative ``-x`` of each element (unary ``-``).",
        "Integers wrap (``-min_int == min_int``, unsigned ``-x == 2**n - x``); the sign of "
        "zeros and NaNs flips.",
        ("ta.negative(ta.asarray([1, -2]))", "TiArray([-1,  2], dtype=int64)"),
    ),
    "nextafter": (
        "The next representable floating-point value after ``x1`` in the direction of ``x2``.",
        "``nextafter(x, x) = x`` (``x2`` is returned, so ``nextafter(-0.0, +0.0) = +0.0``); "
        "from zero the result is the smallest subnormal with the sign of ``x2``; NaN propagates.",
        ("(ta.nextafter(ta.asarray([1.0]), 2.0) - 1.0).item()", "2.220446049250313e-16"),
    ),
    "not_equal": (
        "Truth of ``x1 != x2`` for each pair of elements (``!=``).",
        "NaN is unequal to everything (including NaN); complex numbers differ when either part does.",
        ("ta.not_equal(ta.asarray([1, 2]), 2)", "TiArray([ True, False], dtype=bool)"),
    ),
    "positive": (
        "Numerical positive ``+x`` of each element (unary ``+``): a copy.",
        "The values, including NaN payloads and signed zeros, are unchanged.",
        ("ta.positive(ta.asarray([-1.0, 2.0]))", "TiArray([-1.,  2.], dtype=float64)"),
    ),
    "pow": (
        "``x1`` raised to the power ``x2`` for each pair of elements (``**``).",
        "Floating: C99 ``pow`` special cases (``pow(x, +-0) = 1`` even for NaN ``x``, "
        "``pow(1, y) = 1``). Integers wrap on overflow; a negative integer exponent (undefined in "
        "the standard) gives the integer part of the result (0 unless ``|x1| == 1``). Complex: "
        "exact products for small integer exponents, else ``exp(x2 * log(x1))``.",
        ("ta.pow(ta.asarray([2, 3]), 3)", "TiArray([ 8, 27], dtype=int64)"),
    ),
    "real": (
        "Real part of each element.",
        "Real input is returned unchanged (as a new array of the same dtype); complex input "
        "gives a real array of the same precision (``complex64 -> float32``).",
        ("ta.real(ta.asarray([1 + 2j, 3 - 4j]))", "TiArray([1., 3.], dtype=float64)"),
    ),
    "reciprocal": (
        "Reciprocal ``1 / x`` of each element.",
        "``reciprocal(+-0) = +-inf``; complex input uses Smith's division.",
        ("ta.reciprocal(ta.asarray([2.0, -0.0]))", "TiArray([ 0.5, -inf], dtype=float64)"),
    ),
    "remainder": (
        "Remainder of ``x1 / x2`` with the sign of the divisor ``x2`` (``%``), as Python's ``%``.",
        "Integers: ``x1 - floor_divide(x1, x2) * x2``; division by zero gives 0 (as NumPy). "
        "Floating: computed exactly from ``fmod``; a zero result takes the sign of ``x2``; "
        "``remainder(+-inf, y)`` and ``remainder(x, 0)`` are NaN.",
        ("ta.remainder(ta.asarray([7, -7]), 3)", "TiArray([1, 2], dtype=int64)"),
    ),
    "round": (
        "Round each element to the nearest integer, halves to even.",
        "Integer input is returned unchanged. ``round(2.5) = 2``, ``round(-0.4) = -0.0``; "
        "complex input rounds both parts.",
        ("ta.round(ta.asarray([0.5, 1.5, 2.5, -0.5]))", "TiArray([ 0.,  2.,  2., -0.], dtype=float64)"),
    ),
    "sign": (
        "Sign of each element: -1, 0 or 1; ``x / |x|`` for complex input.",
        "``sign(+-0) = 0`` and ``sign(NaN) = NaN``; complex zero gives 0 and complex input with "
        "a NaN part gives NaN + NaN j.",
        ("ta.sign(ta.asarray([-3.0, 0.0, 2.0]))", "TiArray([-1.,  0.,  1.], dtype=float64)"),
    ),
    "signbit": (
        "Whether the sign bit of each element is set.",
        "True for ``-0.0``, negative numbers and NaNs with the sign bit set.",
        ("ta.signbit(ta.asarray([-0.0, 0.0, -1.0]))", "TiArray([ True, False,  True], dtype=bool)"),
    ),
    "sin": (
        "Sine of each element (radians).",
        "``sin(+-inf)`` is NaN; signed zeros are kept. Complex input: ``sin(z) = -j sinh(j z)``. " + _C99C,
        ("ta.sin(ta.asarray([0.0, 1.5707963267948966]))", "TiArray([0., 1.], dtype=float64)"),
    ),
    "sinh": (
        "Hyperbolic sine of each element.",
        "Odd function; signed zeros and infinities are kept; accurate for small arguments. " + _C99C,
        ("ta.sinh(ta.asarray([0.0, 1.0]))", "TiArray([0.        , 1.17520119], dtype=float64)"),
    ),
    "sqrt": (
        "Principal square root of each element.",
        "``sqrt(-0.0) = -0.0``, negative real input gives NaN. Complex input: branch cut on "
        "``(-inf, 0)``, result with non-negative real part. " + _C99C,
        ("ta.sqrt(ta.asarray([4.0, 2.0]))", "TiArray([2.        , 1.41421356], dtype=float64)"),
    ),
    "square": (
        "Square ``x * x`` of each element.",
        "Integers wrap on overflow; complex input gives ``(re**2 - im**2) + 2 re im j``.",
        ("ta.square(ta.asarray([3, -4]))", "TiArray([ 9, 16], dtype=int64)"),
    ),
    "subtract": (
        "Difference ``x1 - x2`` of each pair of elements (``-``).",
        "Integers wrap on overflow; ``inf - inf`` is NaN.",
        ("ta.subtract(ta.asarray([5, 7]), 2)", "TiArray([3, 5], dtype=int64)"),
    ),
    "tan": (
        "Tangent of each element (radians).",
        "``tan(+-inf)`` is NaN; signed zeros are kept. Complex input: ``tan(z) = -j tanh(j z)``. " + _C99C,
        ("ta.tan(ta.asarray([0.0, 0.7853981633974483]))", "TiArray([0., 1.], dtype=float64)"),
    ),
    "tanh": (
        "Hyperbolic tangent of each element.",
        "``tanh(+-inf) = +-1``; signed zeros are kept. Complex input uses Kahan's algorithm. " + _C99C,
        ("ta.tanh(ta.asarray([0.0, 100.0]))", "TiArray([0., 1.], dtype=float64)"),
    ),
    "trunc": (
        "Round each element toward zero (drop the fractional part).",
        "Integer input is returned unchanged. NaN, infinities and signed zeros are kept; "
        "``trunc(-0.5) = -0.0``.",
        ("ta.trunc(ta.asarray([-1.7, 1.7]))", "TiArray([-1.,  1.], dtype=float64)"),
    ),
}
