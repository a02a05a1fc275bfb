"""The native XLA FFI handler (operators/_adapters/_native.py, _ffi_cpu.cpp) under jax.jit.

Each check runs the same jitted computation with the native handler and with the Python
handler (``_native.set_enabled(False)``), compares both with a NumPy reference, and reads the
native handler's counters to know which one launched. Hostile situations (a Taichi reset
between calls, threads, no compiler, a failed check) run in subprocesses.
"""

import os
import shutil
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest
from _operator_cases import _psum, axpy, axpy_ref, bump, bump_ref, psum, psum_fixed, tasks_kernel
from tiarray.operators import _variant_rule
from tiarray.operators._adapters import _native

import tiarray as ta
from tiarray._internal import ti

pytestmark = pytest.mark.cpu_only("the native handler launches CPU kernels; CUDA calls take the Python one")
nd = ti.types.ndarray
TAICHI = ta.backend() == "taichi"
HAVE_CXX = any(shutil.which(c) for c in (os.environ.get("CXX") or "c++", "g++", "clang++"))
NATIVE_EXPECTED = (
    TAICHI and HAVE_CXX and sys.platform.startswith("linux") and not os.environ.get("TIARRAY_DEBUG")
)


@ti.kernel
def _scalars(a: ti.f64, k: ti.i32, u: ti.u32, b: ti.i64, x: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = x[i] * a + ti.cast(k, ti.f64) - ti.cast(u, ti.f64) + ti.cast(b, ti.f64)


scalars = ta.Operator(
    "t_native_scalars", kernel=_scalars, outs=lambda a, k, u, b, x: ta.ShapeDtype(x.shape, x.dtype)
)

_RULE_SLOT = 3  # a threshold slot no library operator uses
# the scratch product with a per-call variant the native handler evaluates: parallel when at
# least THRESHOLDS[3] elements of x are nonzero
psum_rule = ta.Operator(
    "t_native_psum_rule",
    kernel=_psum,
    outs=lambda x: ta.ShapeDtype((2,), x.dtype),
    scratch=lambda x, serial: ta.ShapeDtype((0 if serial else 4,), x.dtype),
    policy=lambda x: _variant_rule.rule_decide(float("inf"), x.shape[0], 0, _RULE_SLOT),
)


def _run_both(f, *args):
    """``f(*args)`` through the native handler, then through the Python one: (native result,
    Python result, native launches during the first)."""
    _native.set_enabled(True)
    before = _native.stats()[0]
    got = np.asarray(f(*args))
    launched = _native.stats()[0] - before
    _native.set_enabled(False)
    try:
        ref = np.asarray(f(*args))
    finally:
        _native.set_enabled(True)
    return got, ref, launched


@pytest.fixture
def jnp(jax):
    with jax.enable_x64(True):
        yield jax.numpy


def test_native_handler_status(jax, jnp):
    f = jax.jit(lambda a, x, y: axpy(a, x, y))
    x = np.arange(8, dtype=np.float32)
    np.testing.assert_array_equal(np.asarray(f(np.float32(2), x, x)), axpy_ref(2, x, x))
    if NATIVE_EXPECTED:
        assert _native.status() == "native"
    elif not TAICHI:
        assert "exports no native launch" in _native.status()
    else:
        assert _native.status() != "native"


needs_native = pytest.mark.skipif(not NATIVE_EXPECTED, reason="no native handler on this backend/machine")


@needs_native
def test_jitted_calls_launch_natively_and_agree(jax, jnp):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(100).astype(np.float32)
    y = rng.standard_normal(100).astype(np.float32)
    f = jax.jit(lambda a, x, y: axpy(a, x, y))
    for a in (2.0, -0.5, 2.0):  # a scalar that changes: written into the context each call
        got, ref, launched = _run_both(f, np.float32(a), x, y)
        assert launched == 1
        np.testing.assert_array_equal(got, ref)
        np.testing.assert_array_equal(got, axpy_ref(a, x, y))
    # a loop: one native launch per step
    g = jax.jit(lambda x: jax.lax.fori_loop(0, 100, lambda i, c: axpy(np.float32(0.5), c, y), x))
    got, ref, launched = _run_both(g, x)
    assert launched == 100
    np.testing.assert_array_equal(got, ref)
    want = x.copy()
    for _ in range(100):
        want = axpy_ref(0.5, want, y)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


@needs_native
@pytest.mark.parametrize(
    "a, k, u, b",
    [
        (1.5, -3, 7, 1 << 40),
        (float("nan"), 0, 0, 0),
        (-0.0, 2**31 - 1, 2**32 - 1, -(1 << 62)),
        (float("inf"), -1, 1, -1),
    ],
)
def test_scalars_of_every_kind_are_written_bit_for_bit(jax, jnp, a, k, u, b):
    x = np.linspace(-2, 2, 33)
    f = jax.jit(lambda a, k, u, b, x: scalars(a, k, u, b, x))
    args = (np.float64(a), np.int32(k), np.uint32(u), np.int64(b), x)
    got, ref, launched = _run_both(f, *args)
    assert launched == 1
    np.testing.assert_array_equal(got, ref)  # NaN where NaN, -0.0 signs kept
    want = x * a + float(k) - float(u) + float(b)
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@needs_native
def test_a_scalar_of_another_type_is_converted_before_the_call(jax, jnp):
    # axpy's alpha is ti.f32: a float64 scalar (x64 on) reaches the custom call as float32
    # (the adapter converts it, as Taichi's setter would), so the bytes the native handler
    # copies are the kernel's type
    x = np.arange(8, dtype=np.float32)
    f = jax.jit(lambda a, x: axpy(a, x, x))
    got, ref, launched = _run_both(f, np.float64(1.0 / 3.0), x)
    assert launched == 1
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, axpy_ref(np.float32(1.0 / 3.0), x, x))


@needs_native
def test_aliased_outputs_and_scratch_results(jax, jnp):
    w = np.arange(10.0)
    idx = np.array([1, 4, 7], np.int32)
    v = np.array([0.5, -1.0, 2.0])
    f = jax.jit(lambda w, idx, v: bump(w, idx, v))
    got, ref, launched = _run_both(f, w, idx, v)
    assert launched == 1
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, bump_ref(w, idx, v))
    x = np.arange(1.0, 41.0)
    for mode, parts in (("serial", 0), ("parallel", 3)):
        g = jax.jit(lambda x, mode=mode: psum_fixed(x, mode=mode))
        for _ in range(2):  # scratch is zero-filled before every launch
            got, ref, launched = _run_both(g, x)
            assert launched == 1
            np.testing.assert_array_equal(got, ref)
            np.testing.assert_array_equal(got, [x.sum(), parts])


@needs_native
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_the_variant_rule_is_evaluated_per_call_as_python_does(jax, jnp, dtype):
    x = np.zeros(64, dtype)
    f = jax.jit(lambda x: psum_rule(x))
    old = _variant_rule.THRESHOLDS[_RULE_SLOT]
    cases = [(0, 0, 0), (16, 15, 0), (16, 16, 0), (16, 15, 1), (16, 64, 0), (1 << 40, 64, 0), (-1, 3, 0)]
    try:
        for thr, nonzero, nans in cases:
            _variant_rule.THRESHOLDS[_RULE_SLOT] = thr
            x[:] = -0.0  # negative zeros are zeros
            x[:nonzero] = np.arange(1, nonzero + 1)
            x[nonzero : nonzero + nans] = np.nan  # NaN is not
            s0 = _native.stats()
            got = np.asarray(f(x))
            s1 = _native.stats()
            assert s1[0] - s0[0] == 1
            native_serial = s1[3] - s0[3] == 1
            python = psum_rule._resolve(((getattr(ta, dtype), x.shape),), ()).decide([x]) == "serial"
            assert python == (nonzero + nans < thr)  # the rule: serial below thr nonzero elements
            assert native_serial == python, (thr, nonzero, nans)
            assert got[1] == (0 if python else 4)
            np.testing.assert_allclose(got[0], x.astype(np.float64).sum(), rtol=1e-6)
    finally:
        _variant_rule.THRESHOLDS[_RULE_SLOT] = old


@ti.kernel
def _flag(x: nd(), out: nd(ndim=1), scratch: nd(ndim=1)):
    for _i in range(1):
        out[0] = scratch.shape[0]


# parallel (scratch of 1) when at least THRESHOLDS[3] elements of x are nonzero, any dtype
flag_rule = ta.Operator(
    "t_native_flag_rule",
    kernel=_flag,
    outs=lambda x: ta.ShapeDtype((1,), ta.int32),
    scratch=lambda x, serial: ta.ShapeDtype((0 if serial else 1,), ta.int32),
    policy=lambda x: _variant_rule.rule_decide(float("inf"), x.shape[0], 0, _RULE_SLOT),
)


@needs_native
@pytest.mark.parametrize(
    "dtype", ["bool", "int8", "uint16", "int32", "uint64", "float16", "float32", "float64", "complex64"]
)
def test_the_native_count_of_nonzero_elements_is_numpys(jax, jnp, dtype):
    # the native rule counts in blocks (255 elements for one-byte types): counts that cross
    # block boundaries, -0.0 and NaN, and the high bits of every element width
    with jax.enable_x64(True):
        rng = np.random.default_rng(7)
        f = jax.jit(flag_rule)
        old = _variant_rule.THRESHOLDS[_RULE_SLOT]
        for n, density in ((1, 0), (254, 0.3), (255, 1), (256, 1), (1000, 1), (1000, 0.3), (70_000, 1)):
            x = np.zeros(n, dtype)
            x[rng.random(n) < density] = 1  # density 1: a block's count at its type's limit
            if x.dtype.kind == "f":
                x[rng.random(n) < 0.2] = -0.0
                x[-1] = np.nan
            elif x.dtype.kind == "c":
                x[rng.random(n) < 0.2] = 1j  # nonzero in the imaginary part only
            elif x.dtype.kind in "iu" and x.itemsize > 1:
                x[0] = np.array(1 << (8 * x.itemsize - 1), np.uint64).astype(dtype)  # the top bit alone
            count = int(np.count_nonzero(x))
            try:
                for thr in (count, count + 1):
                    _variant_rule.THRESHOLDS[_RULE_SLOT] = thr
                    s0 = _native.stats()
                    got = int(np.asarray(f(jnp.asarray(x)))[0])
                    s1 = _native.stats()
                    assert s1[0] - s0[0] == 1  # the native handler decided
                    assert got == (1 if count >= thr else 0), (n, count, thr)
            finally:
                _variant_rule.THRESHOLDS[_RULE_SLOT] = old


several_tasks = ta.Operator(
    "t_native_several_tasks",
    kernel=tasks_kernel,
    outs=lambda x: (ta.ShapeDtype(x.shape, x.dtype), ta.ShapeDtype((1,), x.dtype)),
)


def _direct_launches(f, *args):
    """``(result, launches, direct launches)`` of ``f(*args)`` through the native handler."""
    _native.set_enabled(True)
    s0 = _native.stats()
    got = jax_tree_numpy(f(*args))
    s1 = _native.stats()
    return got, s1[0] - s0[0], s1[4] - s0[4]


def jax_tree_numpy(r):
    return tuple(np.asarray(a) for a in r) if isinstance(r, (tuple, list)) else np.asarray(r)


@needs_native
def test_repeated_launches_call_the_compiled_tasks_directly(jax, jnp):
    # after Taichi's launch of a record, the native handler writes each call's pointers and
    # scalars into the argument buffer and calls the kernel's tasks: new buffers every step
    # (the loop's carry), a scalar that changes every step
    x = np.linspace(-1, 1, 50).astype(np.float32)
    y = np.arange(50, dtype=np.float32)

    def body(i, c):
        return axpy((i % 3).astype(jnp.float32) - 1, c, y)

    g = jax.jit(lambda x: jax.lax.fori_loop(0, 60, body, x))
    got, launched, direct = _direct_launches(g, x)
    assert launched == 60
    assert direct >= 59  # all but the first, when the layout is learnt
    want = x.copy()
    for i in range(60):
        want = axpy_ref(np.float32(i % 3 - 1), want, y)
    np.testing.assert_array_equal(got, want)
    got2, launched, direct = _direct_launches(g, x[::-1].copy())  # the next run: direct at once
    assert (launched, direct) == (60, 60)
    _native.set_enabled(False)
    try:
        np.testing.assert_array_equal(got2, np.asarray(g(x[::-1].copy())))
    finally:
        _native.set_enabled(True)


@needs_native
def test_a_kernel_of_several_tasks_runs_them_in_order(jax, jnp):
    x = np.arange(200_000.0)  # large enough for the parallel variant (its tasks: see _tasks)

    def step(c, _):
        out, tot = several_tasks(c)
        return out - 1.0, tot

    f = jax.jit(lambda x: jax.lax.scan(step, x, None, 5))
    got, launched, direct = _direct_launches(f, x)
    assert launched == 5 and direct >= 4
    c, tots = x.copy(), []
    for _ in range(5):
        out = 2 * c + 1
        tots.append([2 * (1 + out.sum())])  # integers below 2**53: exact in any order
        c = out - 1.0
    np.testing.assert_array_equal(got[0], c)
    np.testing.assert_array_equal(got[1], np.array(tots))


@needs_native
def test_one_buffer_passed_twice_keeps_taichis_launch(jax, jnp):
    # the argument buffer holds that pointer twice: no unique place, so no direct launch
    x = np.arange(20, dtype=np.float32)
    g = jax.jit(lambda x: jax.lax.fori_loop(0, 30, lambda i, c: axpy(np.float32(0.5), c, c), x))
    got, launched, direct = _direct_launches(g, x)
    assert launched == 30 and direct == 0
    want = x.copy()
    for _ in range(30):
        want = axpy_ref(0.5, want, want)
    np.testing.assert_array_equal(got, want)


@needs_native
def test_python_only_policies_keep_the_python_handler(jax, jnp):
    # psum's policy is a plain Python callable: the native handler hands its calls to Python
    x = np.arange(1.0, 21.0)
    f = jax.jit(lambda x: psum(x))
    got, ref, launched = _run_both(f, x)
    assert launched == 0
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_array_equal(got, [x.sum(), 4])


@needs_native
def test_sparse_products_in_a_scan(jax, jnp):
    import tiarray.operators.sparse as sp

    rng = np.random.default_rng(3)
    m = n = 300
    dense = (rng.random((m, n)) < 0.05) * rng.standard_normal((m, n)).astype(np.float32)
    w, idx, ptr = (np.asarray(a) for a in sp.csr_from_dense(dense.astype(np.float32)))
    spikes = rng.random((20, m)) < 0.1

    def step(c, s):
        y = sp.event_csrmv(w, idx, ptr, s, shape=(m, n), transpose=True)
        return c + y, y

    f = jax.jit(lambda S: jax.lax.scan(step, jnp.zeros(n, jnp.float32), S)[1])
    got, ref, launched = _run_both(f, spikes)
    assert launched == 20
    np.testing.assert_array_equal(got, ref)
    np.testing.assert_allclose(got, spikes.astype(np.float32) @ dense, rtol=1e-5, atol=1e-5)


@needs_native
def test_spike_index_products_decide_natively_by_their_count(jax, jnp):
    # event_csrmv_indexed's policy is a rule on the value of its `count` input
    import tiarray.operators.sparse as sp
    from tiarray.operators.sparse import _policy

    rng = np.random.default_rng(4)
    m = n = 200
    dense = ((rng.random((m, n)) < 0.1) * rng.standard_normal((m, n))).astype(np.float32)
    w, idx, ptr = (np.asarray(a) for a in sp.csr_from_dense(dense))
    f = jax.jit(lambda ids, count: sp.event_csrmv_indexed(w, idx, ptr, ids, count, shape=(m, n)))
    per_row = idx.shape[0] / m
    old = _policy.set_thresholds()
    try:
        for thr, count in ((0, 5), (1 << 40, 5), (int(per_row * 20), 19), (int(per_row * 20), 25), (10, -3)):
            _policy.set_thresholds(scatter=thr)
            ids = np.zeros(m, np.int32)
            ids[: max(count, 0)] = rng.choice(m, max(count, 0), replace=False)
            s0 = _native.stats()
            got, ref, launched = _run_both(f, ids, np.int32(count))
            s1 = _native.stats()
            assert launched == 1
            np.testing.assert_array_equal(got, ref)
            e = np.zeros(m, np.float32)
            e[ids[: max(count, 0)]] = 1
            np.testing.assert_allclose(got, e @ dense, rtol=1e-5, atol=1e-5)
            python_serial = per_row * max(count, 0) < thr
            assert (s1[3] - s0[3] == 1) == python_serial, (thr, count)
    finally:
        _policy.set_thresholds(**old)


@needs_native
def test_threads_share_the_launch_lock(jax, jnp):
    # XLA's threads launch natively while other threads launch from Python (eager NumPy calls)
    x = np.arange(64, dtype=np.float32)
    f = jax.jit(lambda x: jax.lax.fori_loop(0, 50, lambda i, c: axpy(np.float32(1.0), c, x), x))
    want = x.copy()
    for _ in range(50):
        want = want + x
    errors = []

    def jitted():
        try:
            for _ in range(20):
                np.testing.assert_array_equal(np.asarray(f(x)), want)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    def eager():
        try:
            for _ in range(300):
                np.testing.assert_array_equal(axpy(2.0, x, x), axpy_ref(2.0, x, x))
        except Exception as e:  # pragma: no cover
            errors.append(e)

    ts = [threading.Thread(target=jitted) for _ in range(3)] + [
        threading.Thread(target=eager) for _ in range(2)
    ]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def _script(body: str, **env) -> subprocess.CompletedProcess:
    code = textwrap.dedent(
        """
        import numpy as np, jax, jax.numpy as jnp
        import tiarray as ta
        from tiarray._internal import ti
        from tiarray.operators._adapters import _native
        from _operator_cases import axpy, axpy_ref
        x = np.arange(16, dtype=np.float32)
        f = jax.jit(lambda a, x: axpy(a, x, x))
        """
    ) + textwrap.dedent(body)
    # run from tests/ (its helpers import from there; the checkout's tiarray/ must not shadow
    # the installed package, as it would from the repository root)
    tests = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    e = dict(os.environ, **env)
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=e, timeout=600, cwd=tests
    )


@needs_native
def test_a_taichi_reset_between_calls(jax):
    r = _script(
        """
        np.testing.assert_array_equal(np.asarray(f(np.float32(2), x)), 3 * x)
        assert _native.stats()[0] == 1, _native.stats()
        ti.reset()  # the program the native table points into is gone
        np.testing.assert_array_equal(np.asarray(f(np.float32(3), x)), 4 * x)
        ti.reset()
        ti.init(arch=ti.cpu)  # the user's own program
        before = _native.stats()[0]
        for k in range(3):  # the first call prepares the new program's launch in Python
            np.testing.assert_array_equal(np.asarray(f(np.float32(k), x)), (k + 1) * x)
        print("launches", _native.stats()[0] - before)
        """
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert int(r.stdout.split("launches")[-1]) == 2  # natively again after the reset


@pytest.mark.parametrize(
    "env, reason",
    [
        ({"TIARRAY_NATIVE": "0"}, "turned off (TIARRAY_NATIVE=0)"),
        ({"CXX": "/nonexistent/c++", "PATH": "/nonexistent"}, "no C++ compiler"),
    ],
)
def test_without_the_native_handler_python_launches(jax, tmp_path, env, reason):
    r = _script(
        """
        for k in range(3):
            np.testing.assert_array_equal(np.asarray(f(np.float32(k), x)), (k + 1) * x)
        print("status:", _native.status(), _native.stats())
        """,
        TIARRAY_CACHE_DIR=str(tmp_path),
        **env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    if TAICHI:
        assert reason in r.stdout, r.stdout
    assert "(0, 0, 0, 0, 0)" in r.stdout


def test_python_handler_calls_the_compiled_tasks(jax, tmp_path):
    # without a compiler the Python handler's runner takes every call: it writes the array
    # pointers where its launch context keeps them and, after Taichi's first launches, calls
    # the compiled tasks itself (taichi only; quadrants, debug mode: Taichi's launch). New
    # buffers every call must still be read and written (values checked each time), also
    # one buffer passed as two arguments (f: both of its slots written) on the same record
    r = _script(
        """
        from tiarray.operators._adapters import jax as jad
        g = jax.jit(lambda a, x, y: axpy(a, x, y))
        rng = np.random.default_rng(0)
        for k in range(12):
            xs = rng.standard_normal(16).astype(np.float32)
            ys = rng.standard_normal(16).astype(np.float32)
            np.testing.assert_array_equal(np.asarray(g(np.float32(k - 3), xs, ys)), axpy_ref(k - 3, xs, ys))
            np.testing.assert_array_equal(np.asarray(f(np.float32(k), xs)), axpy_ref(k, xs, xs))
        tasks = sorted(len(r.fast.__globals__.get("D", ())) for r in jad._records if r.op is axpy and r.fast)
        print("status:", _native.status(), _native.stats(), "tasks", tasks)
        """,
        TIARRAY_CACHE_DIR=str(tmp_path),
        CXX="/nonexistent/c++",
        PATH="/nonexistent",
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "(0, 0, 0, 0, 0)" in r.stdout  # no native launches
    from tiarray._internal import debug_mode

    direct = TAICHI and not debug_mode() and os.environ.get("TIARRAY_NATIVE", "") not in ("0", "launch")
    assert ("tasks [1]" if direct else "tasks [0]") in r.stdout, r.stdout


@needs_native
def test_a_failed_check_is_remembered_and_python_launches(jax, tmp_path):
    # the verdict of a build's check is kept beside it: a failed one turns the handler off
    compiler = _native._compiler()
    d = tmp_path / ("native-" + _native._tag(compiler))
    d.mkdir()
    (d / "ffi_cpu.so").write_bytes(b"not a library")
    (d / "verdict").write_text("the check of it failed (exit status -11): Segmentation fault\n")
    r = _script(
        """
        np.testing.assert_array_equal(np.asarray(f(np.float32(1), x)), 2 * x)
        print("status:", _native.status())
        """,
        TIARRAY_CACHE_DIR=str(tmp_path),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "status: RuntimeError: the check of it failed (exit status -11)" in r.stdout


@needs_native
def test_a_failed_build_is_remembered_and_python_launches(jax, tmp_path):
    # a compiler that fails: the first process records why, the next one does not build again
    body = """
        np.testing.assert_array_equal(np.asarray(f(np.float32(1), x)), 2 * x)
        print("status:", _native.status())
        """
    for _ in range(2):
        r = _script(body, TIARRAY_CACHE_DIR=str(tmp_path), CXX="/bin/false")
        assert r.returncode == 0, r.stdout + r.stderr
        assert "status: RuntimeError: the build failed: RuntimeError: /bin/false" in r.stdout, r.stdout
    (verdict,) = tmp_path.glob("native-*/verdict")
    assert verdict.read_text().startswith("the build failed")
    assert not list(tmp_path.glob("native-*/ffi_cpu.so"))
