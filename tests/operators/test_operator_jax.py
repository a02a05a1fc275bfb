"""Operators as JAX primitives: eager, jit, vmap, grad, jvp, scan, threads."""

import threading

import jax  # noqa: E402  (conftest ignores this file where jax is not installed)
import jax.numpy as jnp  # noqa: E402
import numpy as np
import pytest
from _operator_cases import (  # noqa: E402
    BATCH_ARG_TYPES,
    BATCH_CALLS,
    affine,
    affine_ref,
    axpy,
    axpy_ref,
    cube,
    fd_grad,
    gather,
    masked,
    mv,
    mv_ref,
    poly,
    poly_ref,
    split,
    split_ref,
    square,
    tile,
    typed,
)
from jax.test_util import check_grads  # noqa: E402

import tiarray as ta  # noqa: E402

pytestmark = pytest.mark.jax
rng = np.random.default_rng(1)


@pytest.fixture(scope="module", autouse=True)
def _x64():
    with jax.enable_x64(True):
        yield


def _f32(n):
    return rng.standard_normal(n).astype(np.float32)


def test_eager_and_jit_forward():
    x, y = _f32(16), _f32(16)
    out = axpy(2.0, jnp.asarray(x), jnp.asarray(y))
    assert isinstance(out, jax.Array) and out.dtype == jnp.float32 and out.shape == (16,)
    np.testing.assert_allclose(out, axpy_ref(2.0, x, y), rtol=1e-6)
    out_j = jax.jit(axpy)(2.0, jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_array_equal(out, out_j)


def test_is_a_primitive_with_static_param():
    x = jnp.ones(4)
    jaxpr = jax.make_jaxpr(lambda x: (affine(x, mode="scale"), affine(x, mode="shift")))(x)
    prims = [e.primitive for e in jaxpr.jaxpr.eqns]
    assert len(prims) == 2 and prims[0] is prims[1] and prims[0].name == "t_affine"
    assert [dict(e.params)["static"] for e in jaxpr.jaxpr.eqns] == [
        (("mode", "scale"),),
        (("mode", "shift"),),
    ]


def test_static_specialisation_under_jit():
    x = jnp.asarray(_f32(9))
    f = jax.jit(lambda x: (affine(x, mode="scale"), affine(x, mode="shift")))
    a, b = f(x)
    np.testing.assert_allclose(a, affine_ref(np.asarray(x), "scale"))
    np.testing.assert_allclose(b, affine_ref(np.asarray(x), "shift"))
    np.testing.assert_array_equal(jax.jit(lambda x: tile(x, reps=2))(x), np.tile(np.asarray(x), 2))


def test_multiple_outputs():
    x = rng.standard_normal(6)
    a, b = jax.jit(split)(jnp.asarray(x))
    ra, rb = split_ref(x)
    np.testing.assert_allclose(a, ra)
    np.testing.assert_allclose(b, rb)


def test_traced_scalar_and_numpy_operands():
    x, y = _f32(8), _f32(8)
    f = jax.jit(lambda a, x: axpy(a, x, y))  # y is a NumPy constant
    for a in (0.5, 3.0):
        np.testing.assert_allclose(f(jnp.float32(a), jnp.asarray(x)), axpy_ref(a, x, y), rtol=1e-6)
    f64 = jax.jit(lambda a, x: axpy(a, x, jnp.asarray(y)))
    np.testing.assert_allclose(f64(jnp.float64(2.0), jnp.asarray(x)), axpy_ref(2.0, x, y), rtol=1e-6)


def test_scan_and_fori_loop():
    x, y = _f32(5), _f32(5)

    def ref_loop(c):
        for _ in range(7):
            c = axpy_ref(0.5, c, y)
        return c

    out = jax.jit(lambda c: jax.lax.fori_loop(0, 7, lambda i, c: axpy(0.5, c, jnp.asarray(y)), c))(x)
    np.testing.assert_allclose(out, ref_loop(x), rtol=1e-5)

    def body(c, a):
        c = axpy(a, c, jnp.asarray(y))
        return c, c.sum()

    c, sums = jax.lax.scan(body, jnp.asarray(x), jnp.arange(3, dtype=jnp.float32))
    ref = x
    ref_sums = []
    for a in range(3):
        ref = axpy_ref(a, ref, y)
        ref_sums.append(ref.sum())
    np.testing.assert_allclose(c, ref, rtol=1e-5)
    np.testing.assert_allclose(sums, ref_sums, rtol=1e-5)


# ----------------------------------------------------------------------------- vmap


def test_vmap_sequential_fallback():
    xb = rng.standard_normal((4, 6))
    y = rng.standard_normal(6)
    out = jax.vmap(lambda x: poly(1.5, x, jnp.asarray(y)))(jnp.asarray(xb))
    np.testing.assert_allclose(out, np.stack([poly_ref(1.5, x, y) for x in xb]), rtol=1e-12)
    # batched along axis 1, several batched inputs, a batched scalar
    yb = rng.standard_normal((6, 3))
    alphas = jnp.asarray([1.0, 2.0, 3.0])
    out = jax.jit(jax.vmap(lambda a, x, y: poly(a, x, y), in_axes=(0, None, 1)))(
        alphas, jnp.asarray(xb[0]), yb
    )
    ref = np.stack([poly_ref(a, xb[0], yb[:, k]) for k, a in enumerate([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(out, ref, rtol=1e-12)


def test_vmap_with_batch_rule():
    xb = jnp.asarray(rng.standard_normal((3, 5)))
    before = BATCH_CALLS[0]
    f = jax.vmap(square)
    np.testing.assert_allclose(f(xb), np.asarray(xb) ** 2)
    assert BATCH_CALLS[0] > before
    jaxpr = str(jax.make_jaxpr(f)(xb))
    assert "while" not in jaxpr and "scan" not in jaxpr  # one launch, not a loop


def test_vmap_over_a_numpy_array_hands_the_batch_rule_jax_arrays():
    # JAX hands a vmapped NumPy array's values to the rule as NumPy: the rule's own calls
    # then took NumPy's route (refused when Taichi runs on CUDA; first CUDA run, 2026-12-04)
    xb = rng.standard_normal((3, 5))
    BATCH_ARG_TYPES.clear()
    out = jax.vmap(square)(xb)
    assert BATCH_ARG_TYPES and not any(issubclass(t, np.ndarray) for t in BATCH_ARG_TYPES), BATCH_ARG_TYPES
    assert isinstance(out, jax.Array)
    np.testing.assert_allclose(np.asarray(out), xb**2)


def test_vmap_multiple_outputs_and_static():
    xb = jnp.asarray(rng.standard_normal((3, 4)))
    a, b = jax.vmap(split)(xb)
    np.testing.assert_allclose(b, np.asarray(xb) ** 2)
    s = jax.vmap(lambda x: affine(x, mode="scale"))(xb)
    np.testing.assert_allclose(s, 2 * np.asarray(xb))


# ----------------------------------------------------------------------------- autodiff


def test_taichi_autodiff_grad_vs_finite_differences():
    x = rng.standard_normal(7)
    y = rng.standard_normal(7)

    def f(x, y):
        return jnp.sum(poly(0.7, x, y) ** 2)

    gx, gy = jax.grad(f, argnums=(0, 1))(jnp.asarray(x), jnp.asarray(y))
    fd_x = fd_grad(lambda x_: np.sum(poly_ref(0.7, x_, y) ** 2), x)
    fd_y = fd_grad(lambda y_: np.sum(poly_ref(0.7, x, y_) ** 2), y)
    np.testing.assert_allclose(gx, fd_x, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(gy, fd_y, rtol=1e-6, atol=1e-8)
    check_grads(lambda x, y: poly(0.7, x, y), (jnp.asarray(x), jnp.asarray(y)), order=1, modes=("rev",))
    # under jit and vmap
    gj = jax.jit(jax.grad(f))(jnp.asarray(x), jnp.asarray(y))
    np.testing.assert_allclose(gj, gx, rtol=1e-12)
    xb = jnp.asarray(rng.standard_normal((3, 7)))
    gv = jax.vmap(jax.grad(f), in_axes=(0, None))(xb, jnp.asarray(y))
    for k in range(3):
        np.testing.assert_allclose(gv[k], jax.grad(f)(xb[k], jnp.asarray(y)), rtol=1e-12)


def test_taichi_autodiff_multiple_outputs_and_integer_input():
    x = rng.standard_normal(5)
    g = jax.grad(lambda x: jnp.sum(split(x)[0]) + 3 * jnp.sum(split(x)[1]))(jnp.asarray(x))
    np.testing.assert_allclose(g, 2 + 6 * x, rtol=1e-12)
    w = rng.standard_normal(6)
    idx = np.array([1, 1, 5, 0], np.int32)
    ct = rng.standard_normal(4)
    gw = jax.grad(lambda w: jnp.dot(gather(w, jnp.asarray(idx)), ct))(jnp.asarray(w))
    ref = np.zeros(6)
    np.add.at(ref, idx, ct)
    np.testing.assert_allclose(gw, ref, rtol=1e-12)


def test_vjp_and_jacrev():
    x = rng.standard_normal(4)
    y = rng.standard_normal(4)
    out, vjp = jax.vjp(lambda x: poly(2.0, x, jnp.asarray(y)), jnp.asarray(x))
    (g,) = vjp(jnp.ones(4))
    np.testing.assert_allclose(g, 4 * x, rtol=1e-12)
    J = jax.jacrev(lambda x: poly(2.0, x, jnp.asarray(y)))(jnp.asarray(x))
    np.testing.assert_allclose(J, np.diag(4 * x), rtol=1e-12)


def test_forward_mode_without_rule_raises():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"t_poly: forward-mode differentiation.*jvp rule.*Remedy"):
        jax.jvp(lambda x: poly(1.0, x, x), (x,), (x,))


def test_scalar_gradient_raises():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"t_poly.*scalar parameter 'alpha'.*Remedy"):
        jax.grad(lambda a: poly(a, x, x).sum())(1.0)


def test_nondiff_gradient_raises():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"t_masked.*'spikes'.*non-differentiable"):
        jax.grad(lambda s: masked(x, s).sum())(x)
    # but differentiating x with constant spikes works
    s = jnp.asarray([1.0, 0.0, 1.0])
    np.testing.assert_allclose(jax.grad(lambda x: masked(x, s).sum())(x), s)


def test_second_order_without_rules_raises():
    x = jnp.ones(3)
    with pytest.raises(TypeError, match=r"t_poly: second-order differentiation"):
        jax.grad(lambda x: jax.grad(lambda x: poly(1.0, x, x).sum())(x).sum())(x)


def test_transpose_rule_operator():
    A = jnp.asarray(rng.standard_normal((4, 3)))
    v = jnp.asarray(rng.standard_normal(3))
    np.testing.assert_allclose(mv(A, v), mv_ref(np.asarray(A), np.asarray(v)), rtol=1e-12)
    check_grads(lambda A, v: mv(A, v), (A, v), order=2, modes=("fwd", "rev"))
    w = jnp.asarray(rng.standard_normal(4))
    check_grads(lambda A, w: mv(A, w, transpose=True), (A, w), order=2, modes=("fwd", "rev"))
    check_grads(jax.jit(lambda A, v: mv(A, v)), (A, v), order=1, modes=("rev",))


def test_jvp_rule_operator():
    x = jnp.asarray(rng.standard_normal(5))
    np.testing.assert_allclose(cube(x), np.asarray(x) ** 3, rtol=1e-12)
    check_grads(cube, (x,), order=2, modes=("fwd", "rev"))
    np.testing.assert_allclose(jax.grad(lambda x: cube(x).sum())(x), 3 * np.asarray(x) ** 2, rtol=1e-12)


# ----------------------------------------------------------------------------- errors


def test_errors():
    x = jnp.ones((2, 2), jnp.float64)
    with pytest.raises(ta.KernelSignatureError, match=r"t_typed.*'x'.*f32.*f64"):
        jax.jit(typed)(x)
    with pytest.raises(TypeError, match=r"t_axpy.*'x' must be an array"):
        axpy(1.0, 2.0, jnp.ones(2))
    with pytest.raises(TypeError, match=r"t_axpy.*'alpha' is a scalar parameter"):
        jax.jit(lambda x: axpy(x, x, x))(jnp.ones(2))
    with pytest.raises(TypeError, match=r"t_tile.*'reps' must be hashable"):
        tile(jnp.ones(2), reps=[1])


def test_mixed_with_tiarray_raises():
    with pytest.raises(TypeError, match=r"t_axpy.*two frameworks.*jax.*tiarray"):
        axpy(1.0, jnp.ones(2, jnp.float32), ta.asarray(np.ones(2, np.float32)))


# ----------------------------------------------------------------------------- threads


def test_thread_safety_jit_and_eager():
    y = jnp.asarray(_f32(32))
    f = jax.jit(lambda a, x: axpy(a, x, y))
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        try:
            for k in range(100):
                x = r.standard_normal(32).astype(np.float32)
                a = float(r.integers(1, 5))
                ref = axpy_ref(a, x, np.asarray(y))
                out = f(jnp.float32(a), jnp.asarray(x)) if k % 2 else axpy(a, jnp.asarray(x), y)
                np.testing.assert_allclose(out, ref, rtol=1e-6)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


def test_while_loop():
    y = jnp.ones(4, jnp.float32)

    def cond(c):
        return c[0] < 50.0

    out = jax.jit(lambda x: jax.lax.while_loop(cond, lambda c: axpy(2.0, c, y), x))(jnp.ones(4, jnp.float32))
    ref = np.ones(4, np.float32)
    while ref[0] < 50:
        ref = 2 * ref + 1
    np.testing.assert_allclose(out, ref)


def test_dlpack_export_still_works_after_ffi_registration(tmp_path):
    # jax.ffi.pycapsule would rewrite ctypes.pythonapi.PyCapsule_New.argtypes for the whole
    # process; the adapter builds its capsules with a private prototype instead.
    import subprocess
    import sys

    code = (
        "import ctypes, numpy as np, jax.numpy as jnp, tiarray as ta\nfrom tiarray._internal import ti\n"
        "before = ctypes.pythonapi.PyCapsule_New.argtypes\n"
        "@ti.kernel\n"
        "def k(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = x[i] + 1\n"
        "op = ta.Operator('inc', kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "assert (np.asarray(op(jnp.zeros(3))) == 1).all()\n"
        "assert ctypes.pythonapi.PyCapsule_New.argtypes == before, ctypes.pythonapi.PyCapsule_New.argtypes\n"
        "print('ok')\n"
    )
    script = tmp_path / "capsule.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    t = ta.asarray(np.arange(5.0))
    np.testing.assert_array_equal(np.from_dlpack(t), np.arange(5.0))
    np.testing.assert_array_equal(np.asarray(jax.dlpack.from_dlpack(t)), np.arange(5.0))


def test_taichi_reset_between_calls(tmp_path):
    """A jitted function keeps working after Taichi was reset (specs are recompiled)."""
    import subprocess
    import sys

    code = (
        "import numpy as np, jax, jax.numpy as jnp, tiarray as ta\nfrom tiarray._internal import ti\n"
        "@ti.kernel\n"
        "def k(a: ti.f32, x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = a * x[i]\n"
        "op = ta.Operator('scale', kernel=k, outs=lambda a, x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "f = jax.jit(lambda x: op(2.0, x))\n"
        "x = jnp.arange(4.0, dtype=jnp.float32)\n"
        "assert (np.asarray(f(x)) == 2 * np.arange(4)).all()\n"
        "assert (op(3.0, np.arange(4.0)) == 3 * np.arange(4)).all()\n"
        "ti.reset()\n"
        "ta.init('cpu')\n"
        "assert (np.asarray(f(x + 1)) == 2 * (np.arange(4) + 1)).all()\n"
        "assert (op(3.0, np.arange(4.0)) == 3 * np.arange(4)).all()\n"
        "print('ok')\n"
    )
    script = tmp_path / "reset.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]


def test_scratch_and_per_call_policy_under_jit():
    from _operator_cases import PSUM_DECISIONS, psum, psum_fixed

    few = np.zeros(100)
    few[[3, 50]] = [1.5, 2.0]
    many = np.arange(100.0)
    f = jax.jit(lambda x: psum(x * 1.0))  # the input is a traced value inside the jit
    PSUM_DECISIONS.clear()
    out = f(jnp.asarray(few))
    assert out.shape == (2,) and np.asarray(out).tolist() == [3.5, 0.0]
    assert PSUM_DECISIONS == [(2, "serial")]  # decided in the custom call, from the values
    assert np.asarray(f(jnp.asarray(many))).tolist() == [many.sum(), 4.0]
    assert PSUM_DECISIONS[-1] == (99, "parallel")
    assert np.asarray(f(jnp.asarray(few))).tolist() == [3.5, 0.0]  # same executable, serial again
    # the scratch results are not outputs of the primitive
    jaxpr = jax.make_jaxpr(psum)(jnp.asarray(many))
    assert [len(e.outvars) for e in jaxpr.jaxpr.eqns] == [1]
    g = jax.jit(lambda x: psum_fixed(x, mode="parallel"))
    assert np.asarray(g(jnp.asarray(many))).tolist() == [many.sum(), 3.0]
    assert np.asarray(psum_fixed(jnp.asarray(many), mode="serial")).tolist() == [many.sum(), 0.0]


def _doubling():
    """A kernel ``out = 2 x`` of any shape and its ``outs``, for the rule-checking tests."""
    from tiarray import _backend

    ti = _backend.ti

    @ti.kernel
    def k(x: ti.types.ndarray(), out: ti.types.ndarray()):
        for i in ti.grouped(x):
            out[i] = x[i] * 2

    def outs(x):
        return ta.ShapeDtype(x.shape, x.dtype)

    return k, outs


def test_batch_rule_outputs_are_checked():
    """A batch rule's outputs are checked against the call's (a wrong shape came back
    silently), and a negative out_axes is an axis counted from the end (it raised a bare
    AssertionError inside JAX before 2026-12-05)."""
    k, outs = _doubling()

    def last(args, axes):  # the batch axis moved last
        (x,), (ax,) = args, axes
        return neg(jnp.moveaxis(x, ax, -1).reshape(-1)).reshape(jnp.moveaxis(x, ax, -1).shape), -1

    neg = ta.Operator("batch_neg_axis", kernel=k, outs=outs, batch=last)
    x = jnp.arange(6.0).reshape(3, 2)
    np.testing.assert_array_equal(jax.vmap(neg, in_axes=1)(x), 2 * np.asarray(x).T)
    bad = {
        "batch_too_long": (lambda a, ax: (jnp.ones(7), 0), "output 0 has 7 entries along its batch axis 0"),
        "batch_bad_axis": (lambda a, ax: (a[0], 5), r"out_axes\[0\] must be None or an axis"),
        "batch_bad_dtype": (
            lambda a, ax: (a[0].astype(jnp.int32), 0),
            "output 0 is int32.* the call's output is float32",
        ),
    }
    for name, (rule, msg) in bad.items():
        op = ta.Operator(name, kernel=k, outs=outs, batch=rule)
        with pytest.raises(TypeError, match=f"{name}: the batch rule's {msg}"):
            jax.vmap(op)(jnp.ones((2, 3), jnp.float32))


def test_scalar_parameters_refuse_what_they_cannot_hold():
    """Under jax.jit a complex value for a float parameter lost its imaginary part silently,
    and 300 for a u8 raised NumPy's bare OverflowError (2026-12-05)."""
    from tiarray import _backend

    ti = _backend.ti

    @ti.kernel
    def k(a: ti.f32, b: ti.u8, x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
        for i in x:
            out[i] = a * x[i] + b

    op = ta.Operator("scalars_ab", kernel=k, outs=lambda a, b, x: ta.ShapeDtype(x.shape, x.dtype))
    x = jnp.ones(3, jnp.float32)
    np.testing.assert_array_equal(jax.jit(lambda a: op(a, 255, x))(2.0), [257.0] * 3)
    with pytest.raises(
        TypeError, match=r"scalars_ab: argument 'a' is a scalar parameter \(float32\); a complex"
    ):
        jax.jit(lambda a: op(a, 1, x))(2 + 1j)
    with pytest.raises(
        ValueError, match=r"scalars_ab: argument 'b' is a scalar parameter \(uint8\); the value must"
    ):
        jax.jit(lambda: op(1.0, 300, x))()


def test_jvp_and_transpose_rule_outputs_are_checked():
    """A jvp rule's tangent of the wrong shape or dtype came back from jax.jvp as it was
    (2026-12-05); so would a transpose rule's cotangent."""
    k, outs = _doubling()

    x = jnp.ones(3, jnp.float32)
    bad_jvp = ta.Operator("jvp_bad_shape", kernel=k, outs=outs, jvp=lambda p, t: jnp.ones(5, jnp.float32))
    with pytest.raises(
        TypeError, match=r"jvp_bad_shape: the jvp rule's tangent 0 is float32\[5\]; expected float32\[3\]"
    ):
        jax.jvp(bad_jvp, (x,), (x,))
    bad_dt = ta.Operator("jvp_bad_dtype", kernel=k, outs=outs, jvp=lambda p, t: jnp.ones(3, jnp.int32))
    with pytest.raises(TypeError, match=r"jvp_bad_dtype: the jvp rule's tangent 0 is int32\[3\]"):
        jax.jvp(bad_dt, (x,), (x,))
    bad_t = ta.Operator(
        "transpose_bad", kernel=k, outs=outs, linear=("x",), transpose=lambda ct, p: (ct[0][:2],)
    )
    with pytest.raises(
        TypeError, match=r"transpose_bad: the transpose rule's cotangent of 'x' is float32\[2\]"
    ):
        jax.grad(lambda v: bad_t(v).sum())(x)
    good = ta.Operator(
        "transpose_good", kernel=k, outs=outs, linear=("x",), transpose=lambda ct, p: (2 * ct[0],)
    )
    np.testing.assert_array_equal(jax.grad(lambda v: good(v).sum())(x), [2.0] * 3)
