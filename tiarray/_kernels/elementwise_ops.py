"""Which operation each element-wise function runs: one row per function.

    name: (dtype category, result rule, {compute kinds: Taichi operation})

The operation is named by its ``@ti.func`` in :mod:`tiarray._kernels.elementwise`.
:mod:`tiarray._kernels.elementwise_plan` reads these tables to plan a call and
:mod:`tiarray._elementwise_functions` generates the public functions from them.
"""

from __future__ import annotations

__all__ = ["UNARY", "BINARY"]
#
# result rules: "same" (the promoted dtype), "bool", "real" (the real dtype of a complex
# input, the input dtype otherwise), "float" (floating inputs keep their dtype, integer
# inputs give the default real floating dtype).
# kinds: b bool, i signed integer, u unsigned integer, f real floating, c complex.

UNARY = {
    "abs": ("numeric", "real", {"i": "abs_i", "u": "identity", "f": "abs_f", "c": "abs_c"}),
    "acos": ("floating-point", "same", {"f": "acos_f", "c": "acos_c"}),
    "acosh": ("floating-point", "same", {"f": "acosh_f", "c": "acosh_c"}),
    "asin": ("floating-point", "same", {"f": "asin_f", "c": "asin_c"}),
    "asinh": ("floating-point", "same", {"f": "asinh_f", "c": "asinh_c"}),
    "atan": ("floating-point", "same", {"f": "atan_f", "c": "atan_c"}),
    "atanh": ("floating-point", "same", {"f": "atanh_f", "c": "atanh_c"}),
    "bitwise_invert": ("integer or boolean", "same", {"b": "bitwise_invert_b", "iu": "bitwise_invert_r"}),
    "ceil": ("real numeric", "same", {"iu": "identity", "f": "ceil_f"}),
    "conj": ("numeric", "same", {"iuf": "identity", "c": "conj_c"}),
    "cos": ("floating-point", "same", {"f": "cos_f", "c": "cos_c"}),
    "cosh": ("floating-point", "same", {"f": "cosh_f", "c": "cosh_c"}),
    "exp": ("floating-point", "same", {"f": "exp_f", "c": "exp_c"}),
    "expm1": ("floating-point", "same", {"f": "expm1_f", "c": "expm1_c"}),
    "floor": ("real numeric", "same", {"iu": "identity", "f": "floor_f"}),
    "imag": ("complex floating-point", "real", {"c": "imag_c"}),
    "isfinite": ("numeric", "bool", {"iu": "true_r", "f": "isfinite_f", "c": "isfinite_c"}),
    "isinf": ("numeric", "bool", {"iu": "false_r", "f": "isinf_f", "c": "isinf_c"}),
    "isnan": ("numeric", "bool", {"iu": "false_r", "f": "isnan_f", "c": "isnan_c"}),
    "log": ("floating-point", "same", {"f": "log_f", "c": "log_c"}),
    "log1p": ("floating-point", "same", {"f": "log1p_f", "c": "log1p_c"}),
    "log2": ("floating-point", "same", {"f": "log2_f", "c": "log2_c"}),
    "log10": ("floating-point", "same", {"f": "log10_f", "c": "log10_c"}),
    "logical_not": ("boolean", "bool", {"b": "logical_not_b"}),
    "negative": ("numeric", "same", {"ifc": "negative_r", "u": "negative_u"}),
    "positive": ("numeric", "same", {"iufc": "identity"}),
    "real": ("numeric", "real", {"iuf": "identity", "c": "real_c"}),
    "reciprocal": ("floating-point", "same", {"f": "reciprocal_f", "c": "reciprocal_c"}),
    "round": ("numeric", "same", {"iu": "identity", "f": "round_f", "c": "round_c"}),
    "sign": ("numeric", "same", {"i": "sign_i", "u": "sign_u", "f": "sign_f", "c": "sign_c"}),
    "signbit": ("real floating-point", "bool", {"f": "signbit_f"}),
    "sin": ("floating-point", "same", {"f": "sin_f", "c": "sin_c"}),
    "sinh": ("floating-point", "same", {"f": "sinh_f", "c": "sinh_c"}),
    "sqrt": ("floating-point", "same", {"f": "sqrt_f", "c": "sqrt_c"}),
    "square": ("numeric", "same", {"iuf": "square_r", "c": "square_c"}),
    "tan": ("floating-point", "same", {"f": "tan_f", "c": "tan_c"}),
    "tanh": ("floating-point", "same", {"f": "tanh_f", "c": "tanh_c"}),
    "trunc": ("real numeric", "same", {"iu": "identity", "f": "trunc_f"}),
}

BINARY = {
    "add": ("numeric", "same", {"iufc": "add_r"}),
    "atan2": ("real floating-point", "same", {"f": "atan2_f"}),
    "bitwise_and": ("integer or boolean", "same", {"biu": "bitwise_and_r"}),
    "bitwise_left_shift": ("integer", "same", {"iu": "left_shift_r"}),
    "bitwise_or": ("integer or boolean", "same", {"biu": "bitwise_or_r"}),
    "bitwise_right_shift": ("integer", "same", {"i": "right_shift_i", "u": "right_shift_u"}),
    "bitwise_xor": ("integer or boolean", "same", {"biu": "bitwise_xor_r"}),
    "copysign": ("real floating-point", "same", {"f": "copysign_f"}),
    "divide": ("numeric", "float", {"f": "divide_f", "c": "divide_c"}),
    "equal": ("all", "bool", {"biuf": "equal_r", "c": "equal_c"}),
    "floor_divide": ("real numeric", "same", {"i": "floor_divide_i", "u": "floor_divide_u", "f": "floor_divide_f"}),
    "greater": ("real numeric", "bool", {"iuf": "greater_r"}),
    "greater_equal": ("real numeric", "bool", {"iuf": "greater_equal_r"}),
    "hypot": ("real floating-point", "same", {"f": "hypot_f"}),
    "less": ("real numeric", "bool", {"iuf": "less_r"}),
    "less_equal": ("real numeric", "bool", {"iuf": "less_equal_r"}),
    "logaddexp": ("real floating-point", "same", {"f": "logaddexp_f"}),
    "logical_and": ("boolean", "bool", {"b": "logical_and_b"}),
    "logical_or": ("boolean", "bool", {"b": "logical_or_b"}),
    "logical_xor": ("boolean", "bool", {"b": "logical_xor_b"}),
    "maximum": ("real numeric", "same", {"iu": "maximum_i", "f": "maximum_f"}),
    "minimum": ("real numeric", "same", {"iu": "minimum_i", "f": "minimum_f"}),
    "multiply": ("numeric", "same", {"iuf": "multiply_r", "c": "multiply_c"}),
    "nextafter": ("real floating-point", "same", {"f": "nextafter_f"}),
    "not_equal": ("all", "bool", {"biuf": "not_equal_r", "c": "not_equal_c"}),
    "pow": ("numeric", "same", {"i": "pow_i", "u": "pow_u", "f": "pow_f", "c": "pow_c"}),
    "remainder": ("real numeric", "same", {"i": "remainder_i", "u": "remainder_u", "f": "remainder_f"}),
    "subtract": ("numeric", "same", {"iufc": "subtract_r"}),
}  # fmt: skip

# clip is ternary with optional bounds; where has a boolean condition (see below).
_CLIP_OPS = {
    (True, True): {"iu": "clip_i", "f": "clip_f"},
    (True, False): {"iu": "clip_lo_i", "f": "clip_lo_f"},
    (False, True): {"iu": "clip_hi_i", "f": "clip_hi_f"},
}
_WHERE_OPS = {"biufc": "where_r"}


def _expand(impls: dict) -> dict:
    out = {}
    for kinds, op in impls.items():
        for kd in kinds:
            out[kd] = op
    return out


_IMPLS = {name: _expand(row[2]) for name, row in {**UNARY, **BINARY}.items()}
_CLIP_IMPLS = {k: _expand(v) for k, v in _CLIP_OPS.items()}
_WHERE_IMPLS = _expand(_WHERE_OPS)
