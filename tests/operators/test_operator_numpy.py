"""Operators called on NumPy arrays and TiArrays (no framework needed)."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
from _operator_cases import (
    affine,
    affine_ref,
    axpy,
    axpy_ref,
    gather,
    mv,
    mv_ref,
    poly,
    poly_ref,
    split,
    split_ref,
    tile,
    typed,
)

import tiarray as ta
from tiarray import _backend  # the running backend: its language module

rng = np.random.default_rng(0)


@pytest.mark.parametrize("n", [1, 16, 1000, 70000])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_axpy_forward(n, dtype):
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    out = axpy(2.5, x, y)
    assert type(out) is np.ndarray and out.dtype == dtype and out.shape == (n,)
    np.testing.assert_allclose(out, axpy_ref(2.5, x, y), rtol=1e-6)


def test_scalar_forms():
    x = rng.standard_normal(8).astype(np.float32)
    y = rng.standard_normal(8).astype(np.float32)
    for alpha in (3, 3.0, np.float32(3), np.float64(3), np.array(3.0)):
        np.testing.assert_allclose(axpy(alpha, x, y), axpy_ref(3.0, x, y), rtol=1e-6)


def test_inputs_are_not_modified_and_outputs_are_new():
    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    x0, y0 = x.copy(), y.copy()
    a = axpy(1.0, x, y)
    b = axpy(1.0, x, y)
    assert not np.shares_memory(a, b)
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(y, y0)


def test_non_contiguous_and_readonly_inputs():
    base = rng.standard_normal(64).astype(np.float32)
    x = base[::2]
    y = base[1::2].copy()
    y.flags.writeable = False
    np.testing.assert_allclose(axpy(2.0, x, y), axpy_ref(2.0, x, y), rtol=1e-6)
    # two strided inputs: both temporary copies must live until the launch
    big = rng.standard_normal((3, 64)).astype(np.float32)
    np.testing.assert_allclose(axpy(2.0, big[0, ::4], big[2, ::4]), axpy_ref(2.0, big[0, ::4], big[2, ::4]))
    t = ta.asarray(big)
    np.testing.assert_allclose(
        np.asarray(axpy(2.0, t[0, ::4], t[2, ::4])), axpy_ref(2.0, big[0, ::4], big[2, ::4])
    )


def test_poly_float64():
    x = rng.standard_normal(33)
    y = rng.standard_normal(33)
    np.testing.assert_allclose(poly(0.5, x, y), poly_ref(0.5, x, y), rtol=1e-12)


def test_static_specialisation():
    x = rng.standard_normal(10).astype(np.float32)
    np.testing.assert_allclose(affine(x, mode="scale"), affine_ref(x, "scale"))
    np.testing.assert_allclose(affine(x, mode="shift"), affine_ref(x, "shift"))
    la = affine._launcher("cpu")
    assert len({k[1] for k in la._specs}) == 2  # two template values, two specialisations


def test_static_used_only_by_outs():
    x = np.arange(4, dtype=np.float64)
    np.testing.assert_array_equal(tile(x, reps=3), np.tile(x, 3))
    np.testing.assert_array_equal(tile(x, reps=1), x)


def test_static_default_and_override():
    A = rng.standard_normal((5, 3))
    v = rng.standard_normal(3)
    w = rng.standard_normal(5)
    np.testing.assert_allclose(mv(A, v), mv_ref(A, v), rtol=1e-12)
    np.testing.assert_allclose(mv(A, w, transpose=True), mv_ref(A, w, True), rtol=1e-12)


def test_multiple_outputs():
    x = rng.standard_normal(7)
    a, b = split(x)
    ra, rb = split_ref(x)
    np.testing.assert_allclose(a, ra)
    np.testing.assert_allclose(b, rb)


def test_integer_input():
    w = rng.standard_normal(10).astype(np.float32)
    idx = np.array([3, 3, 0, 9], dtype=np.int32)
    np.testing.assert_array_equal(gather(w, idx), w[idx])


def test_tiarray_in_tiarray_out():
    x = ta.asarray(rng.standard_normal(16).astype(np.float32))
    y = ta.asarray(rng.standard_normal(16).astype(np.float32))
    out = axpy(2.0, x, y)
    assert isinstance(out, ta.TiArray) and out.dtype == ta.float32
    np.testing.assert_allclose(np.asarray(out), axpy_ref(2.0, np.asarray(x), np.asarray(y)), rtol=1e-6)
    a, b = split(ta.asarray(np.arange(3.0)))
    assert isinstance(a, ta.TiArray) and isinstance(b, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(b), np.arange(3.0) ** 2)


def test_array_api_strict_in_array_api_strict_out():
    # arrays known by the array API and DLPack only come back in their own namespace (an
    # Operator refused them before)
    import array_api_strict as xp  # a test dependency: installed in every session

    x = rng.standard_normal(16).astype(np.float32)
    y = rng.standard_normal(16).astype(np.float32)
    strict_array = type(xp.asarray(0))  # array-api-strict 2.6 does not export its Array class
    out = axpy(2.0, xp.asarray(x), xp.asarray(y))
    assert isinstance(out, strict_array) and out.dtype == xp.float32
    np.testing.assert_allclose(np.from_dlpack(out), axpy_ref(2.0, x, y), rtol=1e-6)
    a, b = split(xp.asarray(np.arange(3.0)))
    assert isinstance(a, strict_array) and isinstance(b, strict_array)
    np.testing.assert_array_equal(np.from_dlpack(b), np.arange(3.0) ** 2)


# ----------------------------------------------------------------------------- errors


def test_error_mixed_frameworks():
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"t_axpy.*two frameworks.*(numpy.*tiarray|tiarray.*numpy)"):
        axpy(1.0, x, ta.asarray(x))


def test_error_dtype_annotation():
    with pytest.raises(ta.KernelSignatureError, match=r"t_typed.*'x'.*f32.*f64"):
        typed(np.ones((2, 2)))


def test_error_ndim_annotation():
    with pytest.raises(ta.KernelSignatureError, match=r"t_typed.*'x'.*ndim=2.*got 1"):
        typed(np.ones(3, np.float32))


def test_error_scalar_for_array_and_array_for_scalar():
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"t_axpy.*'x' must be an array"):
        axpy(1.0, 2.0, x)
    with pytest.raises(TypeError, match=r"t_axpy.*'alpha' is a scalar parameter"):
        axpy(x, x, x)


def test_error_arg_count():
    x = np.ones(4, np.float32)
    with pytest.raises(TypeError, match=r"t_axpy: outs\(\) failed for a call with 2 input\(s\)"):
        axpy(1.0, x)
    with pytest.raises(TypeError, match=r"t_two.*expects 1 output\(s\), but outs\(\) returned 2"):
        ta.Operator("t_two", kernel=tile.kernels["cpu"], outs=lambda x: (x, x))(x)


def test_error_unhashable_static():
    x = np.ones(4)
    with pytest.raises(TypeError, match=r"t_tile.*static parameter 'reps' must be hashable.*list"):
        tile(x, reps=[1, 2])


def test_error_input_given_by_keyword():
    x = np.ones(3, np.float32)
    with pytest.raises(
        TypeError, match=r"t_axpy: 'y' is an input or output of the kernel: pass inputs positionally"
    ):
        axpy(1.0, x, y=x)


def test_error_missing_template():
    with pytest.raises(TypeError, match=r"t_affine.*missing static parameter 'mode'"):
        affine(np.ones(3))


def test_error_bad_construction():
    with pytest.raises(TypeError, match="outs"):
        ta.Operator("bad", kernel=affine.kernels["cpu"], outs=None)
    with pytest.raises(TypeError, match="linear"):
        ta.Operator("bad", kernel=affine.kernels["cpu"], outs=lambda x: x, transpose=lambda *a: a)
    with pytest.raises(TypeError, match="'nondiff' names 'nope'"):
        ta.Operator("bad", kernel=affine.kernels["cpu"], outs=lambda x: x, nondiff=("nope",))
    # compile options are checked when the Operator is made (an unknown field raised an
    # AttributeError, a wrong type pybind's error, at the first call; a list was ignored)
    for opts, msg in [
        ({"fast_maths": True}, "the CompileConfig has no field 'fast_maths'"),
        ({"fast_math": "yes"}, r"compile_options\['fast_math'\] must be a bool, got 'yes'"),
        ([("fast_math", True)], "argument 'compile_options' must be a dict, got list"),
    ]:
        with pytest.raises(TypeError, match=msg):
            ta.Operator("bad", kernel=affine.kernels["cpu"], outs=lambda x: x, compile_options=opts)


def test_error_vector_element_parameter():
    # an Operator's routes launch arrays with their full shape: a vector-element parameter
    # crashed the process on its first call (SIGSEGV in the launch context, 2026-12-05)
    ti = _backend.ti

    @ti.kernel
    def k(x: ti.types.ndarray(dtype=ti.math.vec3, ndim=1), out: ti.types.ndarray(dtype=ti.f32, ndim=1)):
        for i in x:
            out[i] = x[i].sum()

    with pytest.raises(TypeError, match=r"parameter 'x' is an ndarray with vector/matrix elements .*ndim=2"):
        ta.Operator("vec_param", kernel=k, outs=lambda x: ta.ShapeDtype(x.shape[:1], x.dtype))


def test_error_kernel_that_stores_into_an_input():
    # a kernel writing an input changed a read-only NumPy array (and JAX buffers) in place
    ti = _backend.ti

    @ti.kernel
    def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
        for i in x:
            x[i] += 7
            out[i] = 1

    op = ta.Operator("stores_input", kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))
    x = np.arange(3, dtype=np.float32)
    x.flags.writeable = False
    with pytest.raises(
        TypeError, match="stores_input: the kernel stores into 'x', which this call passes as an input"
    ):
        op(x)
    np.testing.assert_array_equal(x, [0, 1, 2])
    # the same kernel with x as an output (no inputs) is fine
    op2 = ta.Operator("stores_output", kernel=k, outs=lambda: (ta.ShapeDtype((3,), "float32"),) * 2)
    a, b = op2()
    np.testing.assert_array_equal(a, [7, 7, 7])
    np.testing.assert_array_equal(b, [1, 1, 1])


def test_error_kernel_that_stores_into_an_input_through_an_alias():
    # y = ti.static(x); y[i] = ... wrote a read-only input unseen (the plain-kernel check
    # caught it, the Operator's did not)
    ti = _backend.ti

    @ti.kernel
    def via_alias(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
        y = ti.static(x)
        z = y
        for i in out:
            z[i] = 5.0
            out[i] = 1.0

    op = ta.Operator("stores_via_alias", kernel=via_alias, outs=lambda x: ta.ShapeDtype((3,), "float32"))
    x = np.zeros(3, np.float32)
    x.flags.writeable = False
    with pytest.raises(TypeError, match="stores_via_alias: the kernel stores into 'x'"):
        op(x)
    assert not x.any()


def _fill_op(name, tdtype):
    ti = _backend.ti

    @ti.kernel
    def k(a: tdtype, x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
        for i in x:
            out[i] = a

    return ta.Operator(name, kernel=k, outs=lambda a, x: ta.ShapeDtype(x.shape, x.dtype))


def test_scalar_parameters_refuse_what_they_cannot_hold():
    """An integer outside a scalar parameter's range, NaN for an integer, a complex value for a
    real one: clear errors (Taichi wrapped 300 into a u8 as 44, and the others raised raw
    pybind/ctypes errors, 2026-12-05); the extremes of the range pass exactly."""
    ti = _backend.ti
    u8, i64, f32 = _fill_op("fill_u8", ti.u8), _fill_op("fill_i64", ti.i64), _fill_op("fill_f32", ti.f32)
    z = np.zeros(2, np.int64)
    np.testing.assert_array_equal(u8(255, z), [255, 255])
    np.testing.assert_array_equal(u8(np.uint8(0), z), [0, 0])
    np.testing.assert_array_equal(i64(-(2**63), z), [-(2**63)] * 2)
    for op, v, exc, msg in [
        (u8, 300, ValueError, r"\(uint8\); the value must be in \[0, 255\], got 300"),
        (u8, -1, ValueError, r"\(uint8\); the value must be in \[0, 255\], got -1"),
        (i64, 2**63, ValueError, r"\(int64\); the value must be in"),
        (i64, float("nan"), ValueError, r"\(int64\); expected a finite number, got nan"),
        (f32, np.array(1 + 2j), TypeError, r"\(float32\); a complex value has no real equivalent"),
        (
            f32,
            np.complex64(1 + 2j),
            TypeError,
            r"(\(float32\); a complex value has no real|expected a number)",
        ),
    ]:
        with pytest.raises(exc, match=f"^{op.name}: argument 'a' is a scalar parameter " + msg):
            op(v, z)


def test_shape_dtype():
    s = ta.ShapeDtype([2, 3], np.float32)
    assert s.shape == (2, 3) and s.dtype is ta.float32 and s.ndim == 2 and s.size == 6
    assert s == ta.ShapeDtype((2, 3), "float32")
    with pytest.raises(TypeError, match="ShapeDtype"):
        ta.ShapeDtype((2,), "no-such-dtype")


# ----------------------------------------------------------------------------- threads


def test_thread_safety_numpy():
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(200):
                n = int(r.integers(1, 50))
                x = r.standard_normal(n).astype(np.float32)
                y = r.standard_normal(n).astype(np.float32)
                np.testing.assert_allclose(axpy(1.5, x, y), axpy_ref(1.5, x, y), rtol=1e-6)
                m = "scale" if seed % 2 else "shift"
                np.testing.assert_allclose(affine(x, mode=m), affine_ref(x, m), rtol=1e-6)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_import_and_numpy_call_import_no_framework(tmp_path):
    code = (
        f"import sys, numpy as np, {ta.backend()} as ti\n"
        "before = set(sys.modules)  # quadrants imports torch itself where it is installed\n"
        "import tiarray, tiarray.operators\n"
        "@ti.kernel\n"
        "def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = x[i] * 2\n"
        "op = tiarray.Operator('double', kernel=k, outs=lambda x: tiarray.ShapeDtype(x.shape, x.dtype))\n"
        "assert (op(np.arange(3.0)) == [0, 2, 4]).all()\n"
        "bad = [m for m in ('torch', 'jax', 'cupy') if m in sys.modules and m not in before]\n"
        "assert not bad, bad\n"
        "print('ok')\n"
    )
    script = tmp_path / "no_framework.py"  # Taichi reads kernel source from a file
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip().endswith("ok")


@pytest.mark.parametrize("kind", ["ndarray", "field"])
def test_taichi_ndarray_and_field_inputs_give_tiarrays(kind):
    # the backend's own arrays are read in place (a TiArray view) and give TiArrays
    ti = _backend.ti
    ta.zeros(1)
    x = ti.ndarray(ti.f32, 5) if kind == "ndarray" else ti.field(ti.f32, shape=5)
    x.from_numpy(np.arange(5, dtype=np.float32))
    out = affine(x, mode="scale")
    assert isinstance(out, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(out), 2 * np.arange(5, dtype=np.float32))


def test_kernels_per_arch():
    from _operator_cases import _affine

    op = ta.Operator(
        "t_cpu_only", kernels={"cpu": _affine}, outs=lambda x, mode: ta.ShapeDtype(x.shape, x.dtype)
    )
    np.testing.assert_array_equal(op(np.ones(3), mode="scale"), 2 * np.ones(3))
    gpu_only = ta.Operator(
        "t_gpu_only", kernels={"cuda": _affine}, outs=lambda x, mode: ta.ShapeDtype(x.shape, x.dtype)
    )
    with pytest.raises(RuntimeError, match=r"t_gpu_only: no kernel for Taichi arch 'cpu'"):
        gpu_only(np.ones(3), mode="scale")
    with pytest.raises(TypeError, match="keys 'cpu' and/or 'cuda'"):
        ta.Operator("bad", kernels={"metal": _affine}, outs=lambda x: x)


def test_scratch_and_per_call_policy():
    from _operator_cases import PSUM_DECISIONS, psum, psum_fixed

    few = np.zeros(100)
    few[[3, 50]] = [1.5, 2.0]
    many = np.arange(100.0)
    PSUM_DECISIONS.clear()
    out = psum(few)
    assert isinstance(out, np.ndarray) and out.shape == (2,)  # scratch is not returned
    assert out.tolist() == [3.5, 0.0]  # serial: no partials
    assert PSUM_DECISIONS == [(2, "serial")]  # the policy read the values
    out = psum(many)
    assert out.tolist() == [many.sum(), 4.0]  # parallel: 4 zero-filled partials
    assert PSUM_DECISIONS[-1] == (99, "parallel")
    for _ in range(3):  # repeated calls: fresh zero-filled scratch each time
        assert psum(many).tolist() == [many.sum(), 4.0]
    assert psum_fixed(many, mode="serial").tolist() == [many.sum(), 0.0]
    assert psum_fixed(many, mode="parallel").tolist() == [many.sum(), 3.0]
    # TiArray inputs: the policy reads host views of Taichi's memory
    PSUM_DECISIONS.clear()
    assert np.asarray(psum(ta.asarray(few))).tolist() == [3.5, 0.0]
    assert PSUM_DECISIONS == [(2, "serial")]


def test_scratch_and_per_call_policy_take_generated_code():
    # a plan with scratch and a per-call variant runs generated code (one runner per variant,
    # the policy choosing per call) on the adapter's route and on Operator.__call__'s fast path:
    # values that flip the decision on one signature, scratch zero-filled on every call
    from _operator_cases import PSUM_DECISIONS, psum

    few = np.zeros(64)
    few[[3, 50]] = [1.5, 2.0]
    many = np.arange(64.0)
    PSUM_DECISIONS.clear()
    for k in range(6):
        x = many if k % 2 else few
        assert psum(x).tolist() == ([x.sum(), 4.0] if k % 2 else [3.5, 0.0])
    assert [m for _, m in PSUM_DECISIONS] == ["serial", "parallel"] * 3  # one decision per call
    plan = next(p for k, p in psum._plans.items() if k[0] == "numpy" and p.res.in_sds[0].shape == (64,))
    assert plan.runner is not None and psum._fast and psum._fast[0] is plan.fast
    PSUM_DECISIONS.clear()
    assert plan.runner([few]).tolist() == [3.5, 0.0]
    assert plan.fast[1]([many]).tolist() == [many.sum(), 4.0]
    assert plan.fast[1]([many.astype(np.float32)]) is None  # another signature: the full path
    assert [m for _, m in PSUM_DECISIONS] == ["serial", "parallel"]


def test_tiarray_scratch_and_per_call_policy_take_generated_code():
    # the same for TiArray calls: the policy reads host views of the TiArrays' memory, the
    # serial variant's scratch of no bytes is a constant array, the parallel one's partials
    # are zero-filled on every call
    from _operator_cases import PSUM_DECISIONS, psum

    fewn = np.zeros(48)
    fewn[[3, 40]] = [1.5, 2.0]
    few, many = ta.asarray(fewn), ta.asarray(np.arange(48.0))
    PSUM_DECISIONS.clear()
    for k in range(6):
        x = many if k % 2 else few
        got = psum(x)
        assert isinstance(got, ta.TiArray)
        assert np.asarray(got).tolist() == ([np.arange(48.0).sum(), 4.0] if k % 2 else [3.5, 0.0])
    assert [m for _, m in PSUM_DECISIONS] == ["serial", "parallel"] * 3  # one decision per call
    plan = next(p for k, p in psum._plans.items() if k[0] == "tiarray" and p.res.in_sds[0].shape == (48,))
    assert plan.runner is not None and psum._fast and psum._fast[0] is plan.fast
    PSUM_DECISIONS.clear()
    assert np.asarray(plan.runner([few])).tolist() == [3.5, 0.0]
    assert np.asarray(plan.fast[1]([many])).tolist() == [np.arange(48.0).sum(), 4.0]
    assert plan.fast[1]([ta.asarray(np.arange(48.0, dtype=np.float32))]) is None  # another signature
    assert [m for _, m in PSUM_DECISIONS] == ["serial", "parallel"]
    # strided and reversed views: the policy reads their own elements (a contiguous view of
    # the reversed one would start at its last element and read past the buffer)
    base = np.arange(96.0)
    base[:48] = 0.0
    for view, ref in ((ta.asarray(base)[::2], base[::2]), (ta.asarray(base[48:])[::-1], base[48:][::-1])):
        PSUM_DECISIONS.clear()
        assert plan.fast[1]([view]) is None  # not contiguous: the full path
        assert np.asarray(psum(view)).tolist() == [ref.sum(), 4.0]
        assert {c for c, _ in PSUM_DECISIONS} == {np.count_nonzero(ref)}


def test_scratch_and_policy_errors():
    from _operator_cases import _psum

    bad = ta.Operator(
        "t_psum_bad",
        kernel=_psum,
        outs=lambda x: ta.ShapeDtype((2,), x.dtype),
        scratch=lambda x, serial: ta.ShapeDtype((4,), "int32" if serial else x.dtype),
    )
    with pytest.raises(TypeError, match="t_psum_bad: scratch.. must give buffers of the same number, dtypes"):
        bad(np.ones(3))
    pol = ta.Operator(
        "t_psum_pol",
        kernel=_psum,
        outs=lambda x: ta.ShapeDtype((2,), x.dtype),
        scratch=lambda x, serial: ta.ShapeDtype((4,), x.dtype),
        policy=lambda x: "sometimes",
    )
    with pytest.raises(
        TypeError, match="t_psum_pol: policy.. must return 'serial', 'parallel', None or a callable"
    ):
        pol(np.ones(3))
    res = ta.Operator(
        "t_psum_res",
        kernel=_psum,
        outs=lambda x, serial: ta.ShapeDtype((2,), x.dtype),
        scratch=lambda x, serial: ta.ShapeDtype((4,), x.dtype),
    )
    with pytest.raises(TypeError, match="'serial' is reserved"):
        res(np.ones(3), serial=1)


def test_numpy_calls_run_generated_code_that_resets_what_changed():
    # The NumPy route's calls run code generated for their signature (_launch.host_runner)
    # with a launch context of their own, re-setting only the arguments whose value changed.
    # Each call must still reach the kernel with its own values: zeros whatever their sign
    # (0.0 == -0.0), NaN (NaN != NaN), the same arrays again, new arrays at new addresses,
    # a non-contiguous input (the generic path), and a fresh output every time.
    x = rng.standard_normal(40).astype(np.float32)
    y = np.full(40, -0.0, np.float32)
    axpy(1.0, x, y)
    plans = [p for k, p in axpy._plans.items() if k[0] == "numpy" and k[-1] == (y.dtype, y.shape)]
    # (debug mode checks every launch on guarded copies: the generic path, no runner)
    from tiarray._internal import debug_mode

    assert plans and all((p.runner is None) == debug_mode() for p in plans)
    outs = []
    for alpha in (2.0, 2.0, 0.0, -0.0, 0.0, float("nan"), float("nan"), -3.5):
        got = axpy(alpha, x, y)
        want = axpy_ref(alpha, x, y)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))  # -0.0 * x + -0.0
        assert all(got is not o for o in outs)
        outs.append(got)
    for _ in range(3):
        x2, y2 = x * 2, rng.standard_normal(40).astype(np.float32)
        np.testing.assert_array_equal(axpy(0.5, x2, y2), axpy_ref(0.5, x2, y2))
    base = rng.standard_normal(80).astype(np.float32)
    np.testing.assert_array_equal(axpy(1.5, base[::2], y), axpy_ref(1.5, base[::2], y))
    np.testing.assert_array_equal(axpy(1.5, x, y), axpy_ref(1.5, x, y))


def test_tiarray_calls_run_generated_code_that_resets_what_changed():
    # The same generated code for TiArray calls on the CPU (see the NumPy test above)
    from tiarray._internal import debug_mode

    xn = rng.standard_normal(40).astype(np.float32)
    x, y = ta.asarray(xn), ta.asarray(np.full(40, -0.0, np.float32))
    axpy(1.0, x, y)
    plans = [p for k, p in axpy._plans.items() if k[0] == "tiarray" and k[-1] == (y.dtype, y.shape)]
    assert plans and all((p.runner is None) == debug_mode() for p in plans)
    outs = []
    for alpha in (2.0, 2.0, 0.0, -0.0, 0.0, float("nan"), ta.asarray(-3.5), -3.5):
        got = axpy(alpha, x, y)
        assert isinstance(got, ta.TiArray)
        want = axpy_ref(float(alpha), xn, np.asarray(y))
        np.testing.assert_array_equal(np.asarray(got), want)
        np.testing.assert_array_equal(np.signbit(np.asarray(got)), np.signbit(want))
        assert all(got.ptr != o.ptr for o in outs)
        outs.append(got)
    base = ta.asarray(rng.standard_normal(80).astype(np.float32))
    np.testing.assert_array_equal(
        np.asarray(axpy(1.5, base[::2], y)), axpy_ref(1.5, np.asarray(base)[::2], np.asarray(y))
    )


def test_fast_path_checks_the_whole_signature_itself():
    # Once a signature ran through generated code, Operator.__call__ hands the next calls
    # straight to that code (op._fast), which checks the signature itself instead of the
    # adapter's plan key. Whatever differs from the remembered signature must take the full
    # path and get its own answer: shapes, dtypes, a 0-d array or a NumPy scalar for a
    # Python float, strided and read-only inputs, another static value, more signatures in
    # turn than the fast path remembers, TiArrays next to NumPy arrays, bad arguments.
    from tiarray.operators._adapters._eager import FAST_SLOTS

    from tiarray._internal import debug_mode

    x = rng.standard_normal(40).astype(np.float32)
    y = rng.standard_normal(40).astype(np.float32)
    np.testing.assert_array_equal(axpy(2.0, x, y), axpy_ref(2.0, x, y))
    assert bool(axpy._fast) != debug_mode()  # (debug mode: every launch checked, no fast path)
    np.testing.assert_array_equal(axpy(2.0, x, y), axpy_ref(2.0, x, y))
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    cases = [
        (np.float32(0.5), x, y),
        (np.array(1.5, np.float32), x, y),
        (3, x, y),
        (2.0, x64, y64),
        (2.0, x[:20], y[:20]),
        (2.0, np.repeat(x, 2)[::2], y),
        (2.0, ta.asarray(x), ta.asarray(y)),
    ]
    ro = x.copy()
    ro.flags.writeable = False
    cases.append((2.0, ro, y))
    for _ in range(2):
        for a, u, v in cases:
            got = axpy(a, u, v)
            want = axpy_ref(float(a), np.asarray(u), np.asarray(v))
            np.testing.assert_array_equal(np.asarray(got), want.astype(np.asarray(u).dtype))
            assert type(got) is type(u)
    # more signatures in turn than the fast path holds: each call still gets its own shape
    lengths = list(range(3, 3 + 2 * FAST_SLOTS))
    for _ in range(2):
        for n in lengths:
            np.testing.assert_array_equal(axpy(2.0, x[:n], y[:n]), axpy_ref(2.0, x[:n], y[:n]))
    assert len(axpy._fast) <= FAST_SLOTS
    # static parameters are part of the signature
    np.testing.assert_array_equal(affine(x, mode="scale"), affine_ref(x, "scale"))
    np.testing.assert_array_equal(affine(x, mode="scale"), affine_ref(x, "scale"))
    np.testing.assert_array_equal(affine(x, mode="shift"), affine_ref(x, "shift"))
    np.testing.assert_array_equal(affine(x, mode="scale"), affine_ref(x, "scale"))
    with pytest.raises(TypeError, match="t_affine.*hashable"):
        affine(x, mode=np.array([1, 2]))
    # bad calls are refused by the full path, with its errors
    with pytest.raises(TypeError, match="t_axpy"):
        axpy(2.0, x)
    with pytest.raises(TypeError, match="t_axpy"):
        axpy(2.0, x, y, y, y)
    with pytest.raises(TypeError, match="t_axpy.*'x'"):
        axpy(2.0, [1.0, 2.0], y)
    np.testing.assert_array_equal(axpy(2.0, x, y), axpy_ref(2.0, x, y))


def test_fast_path_puts_the_signature_in_use_first():
    # each remembered signature the call is not costs a failed check (~0.15 us): the one that
    # took the call moves to the front of op._fast
    from tiarray._internal import debug_mode

    x = rng.standard_normal(7).astype(np.float32)
    x64 = x.astype(np.float64)
    x16 = rng.standard_normal(9).astype(np.float32)
    for a in (x, x64, x16):  # three signatures, the last one first
        np.testing.assert_array_equal(axpy(1.0, a, a), axpy_ref(1.0, a, a))
    if debug_mode():
        pytest.skip("debug mode launches every call through its checks: no fast path")
    assert axpy._fast[0][1]((1.0, x16, x16)) is not None
    np.testing.assert_array_equal(axpy(1.0, x, x), axpy_ref(1.0, x, x))  # a hit of the third
    first = axpy._fast[0][1]
    assert first((1.0, x, x)) is not None and first((1.0, x16, x16)) is None


def test_fast_path_after_a_taichi_reset(tmp_path):
    # the remembered code holds a launch context of the old program: after ti.reset (with or
    # without a new ti.init) calls must re-plan, not launch into freed memory
    code = (
        "import numpy as np, tiarray as ta\nfrom tiarray._internal import ti\n"
        "@ti.kernel\n"
        "def k(a: ti.f32, x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = a * x[i]\n"
        "op = ta.Operator('scale', kernel=k, outs=lambda a, x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "x = np.arange(4.0, dtype=np.float32)\n"
        "for _ in range(3):\n"
        "    assert (op(3.0, x) == 3 * x).all()\n"
        "old = op._fast\n"
        "assert old\n"
        "ti.reset()\n"
        "assert (op(2.0, x) == 2 * x).all()\n"
        "assert (op(2.0, x) == 2 * x).all()\n"
        "assert op._fast and not {id(r) for _, r in op._fast} & {id(r) for _, r in old}  # the new program's code\n"
        "old = op._fast\n"
        "ti.reset()\n"
        "ta.init('cpu')\n"
        "for _ in range(3):\n"
        "    assert (op(4.0, x) == 4 * x).all()\n"
        "assert op._fast and not {id(r) for _, r in op._fast} & {id(r) for _, r in old}\n"
        "print('ok')\n"
    )
    script = tmp_path / "reset.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "TIARRAY_DEBUG"}  # (debug mode has no fast path)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]


@pytest.mark.parametrize("native", ["", "0", "launch"])
def test_runner_re_sets_arrays_whose_pointer_changed(tmp_path, native):
    # the generated runner re-sets an array argument only when its pointer changed, by
    # writing the pointer where the launch context keeps it (taichi's layout) or through
    # Taichi's setter (TIARRAY_NATIVE=0, quadrants): every call on new memory must read it.
    # On taichi, after the first launches the slots are where the compiled tasks read the
    # pointers and the runner calls the tasks (not with TIARRAY_NATIVE=launch)
    code = (
        "import numpy as np, tiarray as ta\nfrom tiarray._internal import ti\n"
        "from tiarray import _backend\n"
        "@ti.kernel\n"
        "def k(a: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1),"
        " out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = a * x[i] + y[i]\n"
        "op = ta.Operator('axpy_ptr', kernel=k, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))\n"
        "rng = np.random.default_rng(0)\n"
        "keep = []\n"
        "for i in range(40):\n"
        "    x = rng.standard_normal(5).astype(np.float32)\n"
        "    y = x if i % 3 == 0 else rng.standard_normal(5).astype(np.float32)\n"
        "    out = op(1.5, x, y)\n"
        "    np.testing.assert_array_equal(out, np.float32(1.5) * x + y)\n"
        "    keep += [x, y, out]  # alive: every call gets new addresses\n"
        "    if i % 2:\n"
        "        np.testing.assert_array_equal(op(1.5, keep[0], keep[1]), np.float32(1.5) * keep[0] + keep[1])\n"
        "runner = next(iter(op._plans.values())).runner\n"
        "slots = sorted(k for k in runner.__globals__ if k[:1] == 'S' and k[1:].isdigit())\n"
        "print('slots', slots)\n"
        "fast = [r for _, r in op._fast]  # the runners that took the calls (Operator.__call__'s fast path)\n"
        "print('tasks', [len(r.__globals__.get('D', ())) for r in fast])\n"
    )
    script = tmp_path / "pointers.py"
    script.write_text(code)
    env = {k: v for k, v in os.environ.items() if k != "TIARRAY_DEBUG"}  # (debug mode has no runner)
    env["TIARRAY_NATIVE"] = native
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, r.stderr[-3000:]
    by_slot = _backend.NAME == "taichi" and native != "0"
    assert ("slots ['S1', 'S2', 'S3']" if by_slot else "slots []") in r.stdout, r.stdout
    assert ("tasks [1]" if by_slot and native == "" else "tasks [0]") in r.stdout, r.stdout
