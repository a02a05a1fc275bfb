"""The namespace as a whole against the array API standard (2025.12).

One completeness test for every section: the names of the main namespace, of the
``linalg`` and ``fft`` extensions, the TiArray attributes and methods, and
``__array_namespace_info__``. The reference is array-api-strict's namespace with its
API version set to tiarray's (2025.12; names that array-api-strict gates behind a later
version are left out), so the lists are not copied by hand. A child process checks the
2024.12 mode that ``TIARRAY_ARRAY_API_VERSION=2024.12`` selects.
"""

import inspect
import os
import re
import subprocess
import sys
import tempfile

import array_api_strict as xps
import numpy as np
import pytest

import tiarray as ta

# array-api-strict's own helpers, not names of the standard
STRICT_ONLY = {
    "ArrayAPIStrictFlags",
    "Device",
    "__version__",
    "get_array_api_strict_flags",
    "reset_array_api_strict_flags",
    "set_array_api_strict_flags",
}

# tiarray's public names beyond the standard: the array type, the dtype objects the
# standard leaves to the library, the runtime and the kernel/operator machinery
TIARRAY_EXTRAS = {
    "TiArray", "DType", "Device", "AxisError", "backend", "init", "is_initialized",
    "Launcher", "KernelSignatureError", "set_serial_threshold",
    "Operator", "ShapeDtype", "UndefinedPrimal",
    "float16", "bfloat16",
}  # fmt: skip

# the named tuples the decompositions return (as NumPy's)
LINALG_EXTRAS = {"EigResult", "EighResult", "QRResult", "SVDResult", "SlogdetResult"}
# 2025.12 functions that array-api-strict (2.6.1) defines but leaves out of linalg.__all__
STRICT_LINALG_UNLISTED = {"eig", "eigvals"}

# The array object's attributes and methods (the standard's "Array object" page)
ARRAY_ATTRIBUTES = ["dtype", "device", "mT", "ndim", "shape", "size", "T"]
ARRAY_METHODS = [
    "__abs__", "__add__", "__and__", "__array_namespace__", "__bool__", "__complex__",
    "__dlpack__", "__dlpack_device__", "__eq__", "__float__", "__floordiv__", "__ge__",
    "__getitem__", "__gt__", "__index__", "__int__", "__invert__", "__le__", "__lshift__",
    "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__", "__neg__", "__or__", "__pos__",
    "__pow__", "__rshift__", "__setitem__", "__sub__", "__truediv__", "__xor__", "to_device",
]  # fmt: skip
# operators with reflected (__r*__) and in-place (__i*__) forms
ARITHMETIC_OPERATORS = ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul",
                        "and", "or", "xor", "lshift", "rshift"]  # fmt: skip


@pytest.fixture(scope="module")
def strict():
    old = xps.get_array_api_strict_flags()["api_version"]
    xps.set_array_api_strict_flags(api_version=VERSION)
    yield xps
    xps.set_array_api_strict_flags(api_version=old)


VERSION = "2025.12"


def _in_version(obj) -> bool:
    """Whether array-api-strict (set to VERSION) offers ``obj``: a function gated behind a
    later version raises RuntimeError("... requires API version ...") before it looks at
    its arguments."""
    if not callable(obj) or isinstance(obj, type):
        return True
    try:
        obj()
    except RuntimeError as e:
        return "requires API version" not in str(e)
    except Exception:
        pass
    return True


def _reference(module) -> set:
    return {n for n in module.__all__ if n not in STRICT_ONLY and _in_version(getattr(module, n))}


def _missing_sections(obj) -> list:
    """The numpy-style sections (``Parameters`` over a dashed line ...) missing from a docstring."""
    doc = obj.__doc__ or ""
    return [
        s
        for s in ("Parameters", "Returns", "Raises", "Examples")
        if not re.search(rf"^ *{s}\n *---", doc, re.M)
    ]


def test_the_reference_is_the_2025_12_list(strict):
    names = _reference(strict)
    # added in 2023.12, 2024.12 and 2025.12
    assert {"nextafter", "reciprocal", "diff", "take_along_axis", "cumulative_prod", "count_nonzero",
            "searchsorted", "hypot", "copysign", "signbit", "clip", "moveaxis", "tile", "unstack",
            "isin", "broadcast_shapes"} <= names  # fmt: skip
    assert all(callable(getattr(strict.linalg, n)) for n in STRICT_LINALG_UNLISTED)
    assert len(names) > 150


def test_main_namespace_is_complete(strict):
    names = _reference(strict)
    missing = sorted(n for n in names if not hasattr(ta, n))
    assert not missing, f"tiarray lacks standard names: {missing}"
    not_exported = sorted(names - set(ta.__all__))
    assert not not_exported, f"standard names missing from tiarray.__all__: {not_exported}"
    extras = set(ta.__all__) - names
    assert extras == TIARRAY_EXTRAS, sorted(extras ^ TIARRAY_EXTRAS)
    assert ta.__array_api_version__ == VERSION == strict.__array_api_version__
    assert len(ta.__all__) == len(set(ta.__all__)), "duplicates in tiarray.__all__"


def test_every_standard_function_is_documented(strict):
    funcs = []
    for n in sorted(_reference(strict)):
        obj = getattr(ta, n)
        if callable(obj) and not isinstance(obj, (type, ta.DType)) and n != "__array_namespace_info__":
            funcs.append((n, obj))
    funcs += [
        (f"linalg.{n}", getattr(ta.linalg, n)) for n in [*strict.linalg.__all__, *STRICT_LINALG_UNLISTED]
    ]
    funcs += [(f"fft.{n}", getattr(ta.fft, n)) for n in strict.fft.__all__]
    bad = {n: miss for n, f in funcs if (miss := _missing_sections(f))}
    assert not bad, f"docstrings without numpy-style sections: {bad}"


@pytest.mark.parametrize("ext", ["linalg", "fft"])
def test_extensions_are_complete(strict, ext):
    import importlib

    mod = getattr(ta, ext)
    assert importlib.import_module(f"tiarray.{ext}") is mod
    ref = {n for n in getattr(strict, ext).__all__ if _in_version(getattr(getattr(strict, ext), n))}
    if ext == "linalg":
        ref |= STRICT_LINALG_UNLISTED
    extras = LINALG_EXTRAS if ext == "linalg" else set()
    assert ref and set(mod.__all__) == ref | extras, sorted(set(mod.__all__) ^ (ref | extras))
    for n in ref:
        assert callable(getattr(mod, n)), n


def test_linalg_shares_the_main_namespace_functions():
    for n in ("matmul", "matrix_transpose", "tensordot", "vecdot"):
        assert getattr(ta.linalg, n) is getattr(ta, n)


def test_array_object_has_every_attribute_and_method():
    from array_api_strict._array_object import Array

    for n in ARRAY_ATTRIBUTES + ARRAY_METHODS:
        assert hasattr(Array, n), f"{n} is not in array-api-strict's Array (the list is wrong)"
        assert hasattr(ta.TiArray, n), f"TiArray lacks {n}"
    for op in ARITHMETIC_OPERATORS:
        for form in (f"__{op}__", f"__r{op}__", f"__i{op}__"):
            assert hasattr(Array, form) and hasattr(ta.TiArray, form), form
    for n in ARRAY_ATTRIBUTES:
        assert isinstance(getattr(ta.TiArray, n), property), n
    x = ta.asarray(np.arange(6.0).reshape(2, 3))
    assert x.dtype == ta.float64 and x.ndim == 2 and x.shape == (2, 3) and x.size == 6
    assert (
        x.T.shape == (3, 2)
        and x.mT.shape == (3, 2)
        and x.device == ta.__array_namespace_info__().default_device()
    )


def test_namespace_info_matches_the_standard(strict):
    info, ref = ta.__array_namespace_info__(), strict.__array_namespace_info__()
    for m in ("capabilities", "default_device", "default_dtypes", "devices", "dtypes"):
        assert callable(getattr(info, m)), m
    assert info.capabilities().keys() == ref.capabilities().keys()
    assert all(isinstance(v, bool) for k, v in info.capabilities().items() if k != "max dimensions")
    assert info.default_device() in info.devices()
    assert type(info.devices()) is type(ref.devices()) is tuple  # a list before 2025.12
    dd = info.default_dtypes()
    assert dd.keys() == ref.default_dtypes().keys()
    assert dd == info.default_dtypes(device=info.default_device())
    assert dd["real floating"] == ta.float64 and dd["integral"] == dd["indexing"] == ta.int64
    assert dd["complex floating"] == ta.complex128
    # the standard's dtypes, by name and by kind
    assert info.dtypes().keys() == ref.dtypes().keys()
    for kind in ("bool", "signed integer", "unsigned integer", "integral", "real floating",
                 "complex floating", "numeric", ("integral", "real floating")):  # fmt: skip
        got = info.dtypes(kind=kind)
        assert got.keys() == ref.dtypes(kind=kind).keys(), kind
        assert all(ta.isdtype(d, kind) for d in got.values()), kind


# differences from array-api-strict's signatures that are not differences from the
# standard: strict's "not given" sentinel where tiarray uses None, and a default axis
ALLOWED_SIGNATURE_DIFFERENCES = {
    ("astype", "device"): "None",
    ("from_dlpack", "device"): "None",
    ("from_dlpack", "copy"): "None",
    ("expand_dims", "axis"): "0",
}


def _signature(f, name):
    out = []
    for p in inspect.signature(f).parameters.values():
        default = "-" if p.default is p.empty else repr(p.default)
        if (name, p.name) in ALLOWED_SIGNATURE_DIFFERENCES:
            default = "allowed"
        # positional-only parameters may have any name
        out.append((p.kind.name, "/" if p.kind is p.POSITIONAL_ONLY else p.name, default))
    return out


def test_signatures_match_the_standard(strict):
    """Positional-only, keyword and keyword-only parameters, and defaults, as in
    array-api-strict (which writes the standard's signatures)."""
    bad = {}
    for ref_mod, mod, prefix in (
        (strict, ta, ""),
        (strict.linalg, ta.linalg, "linalg."),
        (strict.fft, ta.fft, "fft."),
    ):
        names = _reference(ref_mod) if ref_mod is strict else ref_mod.__all__
        if ref_mod is strict.linalg:
            names = [*names, *sorted(STRICT_LINALG_UNLISTED)]
        for n in names:
            ref = getattr(ref_mod, n)
            if not callable(ref) or isinstance(ref, type) or n == "__array_namespace_info__":
                continue
            want, got = _signature(ref, n), _signature(getattr(mod, n), n)
            if want != got:
                bad[prefix + n] = (want, got)
    assert not bad, bad


# The 2024.12 mode in a child process (the version is read once, at import): the sequence
# types of that version, against array-api-strict set to 2024.12.
_CHILD_2024_12 = """
import array_api_strict as xps
import tiarray as ta

xps.set_array_api_strict_flags(api_version="2024.12")
assert ta.__array_api_version__ == "2024.12"
a, b = ta.asarray([1, 2]), ta.asarray([[1], [2]])
sa, sb = xps.asarray([1, 2]), xps.asarray([[1], [2]])
assert type(ta.meshgrid(a, a)) is type(xps.meshgrid(sa, sa)) is list
assert type(ta.meshgrid()) is type(xps.meshgrid()) is list
assert type(ta.broadcast_arrays(a, b)) is type(xps.broadcast_arrays(sa, sb)) is list
info, ref = ta.__array_namespace_info__(), xps.__array_namespace_info__()
assert type(info.devices()) is type(ref.devices()) is list
assert a.__array_namespace__(api_version="2024.12") is ta
try:
    a.__array_namespace__(api_version="2025.12")
except ValueError as e:
    assert "TIARRAY_ARRAY_API_VERSION=2025.12" in str(e), e
else:
    raise AssertionError("2025.12 accepted in the 2024.12 mode")
print("ok")
"""


def _child(code: str, version: str):
    env = dict(os.environ, TIARRAY_ARRAY_API_VERSION=version)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300,
        cwd=tempfile.gettempdir(),
    )  # fmt: skip


def test_the_2024_12_mode_returns_lists():
    proc = _child(_CHILD_2024_12, "2024.12")
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_an_unknown_version_is_refused_at_import():
    proc = _child("import tiarray", "2023.12")
    assert proc.returncode != 0
    assert "TIARRAY_ARRAY_API_VERSION must be one of 2024.12, 2025.12, got '2023.12'" in proc.stderr


def test_the_2025_12_sequences_are_tuples(strict):
    a = ta.asarray([1, 2])
    assert type(ta.meshgrid(a, a)) is type(strict.meshgrid(strict.asarray([1]))) is tuple
    assert ta.meshgrid() == ()
    assert type(ta.broadcast_arrays(a, a)) is tuple
    assert a.__array_namespace__(api_version="2025.12") is ta
