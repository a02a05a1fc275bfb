"""Exports are released, and the consumer's exception kept, when a consumer frees an imported
array while an exception propagates (the native deleter, ``tiarray/_dlpack_release.cpp``).

Each case runs in a fresh interpreter with its own cache directory, so that the build, its
verdict and the choice between the native and the ctypes callbacks are those of a first run.
"""

import os
import shutil
import subprocess
import sys
import textwrap

import pytest

HAVE_CXX = any(shutil.which(c) for c in (os.environ.get("CXX") or "c++", "g++", "clang++"))
needs_cxx = pytest.mark.skipif(not HAVE_CXX, reason="no C++ compiler: exports use the ctypes callbacks")

PRELUDE = """
import gc
import numpy as np
import tiarray as ta
from tiarray import _dlpack

def freed_during(name, make, expected):
    # make() raises while a temporary import of an export is alive: the consumer frees it
    # (calling our deleter) with the exception pending
    n0 = _dlpack.live_exports()
    try:
        make()
    except BaseException as e:
        got = type(e).__name__
    else:
        got = "nothing"
    gc.collect()
    print(name, got, "expected", expected, "leaked", _dlpack.live_exports() - n0)
"""


def _run(body, tmp_path, **env):
    e = {k: v for k, v in os.environ.items() if k not in ("TIARRAY_NATIVE", "CXX")}
    e.update(TIARRAY_CACHE_DIR=str(tmp_path / "cache"), **env)
    code = textwrap.dedent(PRELUDE) + textwrap.dedent(body)
    # cwd: not the checkout, whose tiarray/ (without operators/) would shadow the installed package
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=e, cwd=tmp_path
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout, r.stderr


def _check_cases(out):
    lines = [ln.split() for ln in out.splitlines() if " expected " in ln]
    assert lines, out
    for name, got, _, expected, _, leaked in lines:
        assert (got, leaked) == (expected, "0"), (
            f"{name}: raised {got} (want {expected}), {leaked} exports leaked"
        )


NUMPY_CASES = """
x = ta.arange(5.0)
freed_during("index", lambda: np.from_dlpack(x)[10], "IndexError")
freed_during("ufunc", lambda: np.from_dlpack(x) + "a", "UFuncTypeError")
freed_during("keyboard", lambda: [np.from_dlpack(x), (_ for _ in ()).throw(KeyboardInterrupt)], "KeyboardInterrupt")
freed_during("legacy", lambda: np.asarray(np.from_dlpack(ta.ones(3)))[7], "IndexError")
print("status", _dlpack.release_status())
"""


@needs_cxx
def test_numpy_frees_an_import_during_an_exception(tmp_path):
    out, err = _run(NUMPY_CASES, tmp_path)
    _check_cases(out)
    assert "status native" in out, out
    assert "Exception ignored" not in err, err  # nothing reported as unraisable


@needs_cxx
def test_torch_frees_an_import_during_an_exception(tmp_path):
    pytest.importorskip("torch")
    out, err = _run(
        """
        import torch
        x = ta.arange(5.0)
        freed_during("index", lambda: torch.from_dlpack(x)[10], "IndexError")
        freed_during("matmul", lambda: torch.from_dlpack(x) @ torch.ones(3, dtype=torch.float64), "RuntimeError")
        """,
        tmp_path,
    )
    _check_cases(out)
    assert "Exception ignored" not in err, err


@needs_cxx
def test_the_capsule_destructor_keeps_a_pending_exception(tmp_path):
    # an unconsumed capsule that dies while an exception propagates
    out, err = _run(
        """
        x = ta.arange(4.0)
        def f():
            c = x.__dlpack__()
            raise LookupError("mine")
        freed_during("capsule", f, "LookupError")
        def g():
            caps = [x.__dlpack__(max_version=(1, 0)), x.__dlpack__(), x.__dlpack__(max_version=None)]
            return caps[3]
        freed_during("capsules", g, "IndexError")
        """,
        tmp_path,
    )
    _check_cases(out)


def test_without_the_native_callbacks_exports_are_still_released(tmp_path):
    # TIARRAY_NATIVE=0, no compiler, or a failed check remembered: the ctypes callbacks
    # release every export freed outside an exception, and the status says why
    body = """
    x = ta.arange(6.0)
    n0 = _dlpack.live_exports()
    a = np.from_dlpack(x)
    c = x.__dlpack__()
    assert _dlpack.live_exports() == n0 + 2
    np.testing.assert_array_equal(a, np.arange(6.0))
    del a, c
    gc.collect()
    print("leaked", _dlpack.live_exports() - n0)
    print("status", _dlpack.release_status())
    """
    out, _ = _run(body, tmp_path, TIARRAY_NATIVE="0")
    assert "leaked 0" in out and "status RuntimeError: turned off (TIARRAY_NATIVE=0)" in out, out
    out, _ = _run(body, tmp_path, CXX="/nonexistent/c++")
    assert "leaked 0" in out and "no C++ compiler" in out, out


@needs_cxx
def test_a_failed_check_is_remembered(tmp_path):
    code = """
    import os, sys
    from tiarray import _cbuild, _dlpack
    cxx = _cbuild.compiler()
    d = os.path.join(sys.argv[1], "dlpack-" + _cbuild.tag(_dlpack.RELEASE_SOURCE, cxx, _dlpack._RELEASE_FLAGS))
    os.makedirs(d)
    open(os.path.join(d, "dlpack_release.so"), "wb").write(b"not a library")
    open(os.path.join(d, "verdict"), "w").write("the check failed (exit status -11): Segmentation fault\\n")
    """
    cache = tmp_path / "cache"
    subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), str(cache)], check=True, timeout=120, cwd=tmp_path
    )
    out, _ = _run(
        """
        a = np.from_dlpack(ta.arange(3.0))
        print("status", _dlpack.release_status())
        print(a.sum())
        """,
        tmp_path,
    )
    assert "status RuntimeError: the check failed (exit status -11): Segmentation fault" in out, out
    assert out.strip().endswith("3.0"), out
