"""Operators as torch custom ops: eager, autograd, opcheck, gradcheck, torch.compile."""

import threading

import numpy as np
import pytest
import torch  # noqa: E402  (conftest ignores this file where torch is not installed)
from _operator_cases import (  # noqa: E402
    _cube,
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
    tile,
    typed,
)

import tiarray as ta  # noqa: E402

pytestmark = pytest.mark.torch
rng = np.random.default_rng(2)


def _t(a, **kw):
    return torch.as_tensor(np.ascontiguousarray(a)).clone().requires_grad_(kw.get("grad", False))


def test_forward_type_device_dtype():
    x, y = rng.standard_normal(16).astype(np.float32), rng.standard_normal(16).astype(np.float32)
    out = axpy(2.0, torch.as_tensor(x), torch.as_tensor(y))
    assert type(out) is torch.Tensor and out.dtype == torch.float32 and out.device.type == "cpu"
    np.testing.assert_allclose(out.cpu().numpy(), axpy_ref(2.0, x, y), rtol=1e-6)
    # 0-d tensor scalar, non-contiguous input
    base = torch.as_tensor(rng.standard_normal(32).astype(np.float32))
    out = axpy(torch.tensor(3.0), base[::2], base[1::2])
    np.testing.assert_allclose(
        out.cpu().numpy(), axpy_ref(3.0, base[::2].cpu().numpy(), base[1::2].cpu().numpy()), rtol=1e-6
    )


def test_custom_op_path_equals_direct_path():
    x, y = _t(rng.standard_normal(9)), _t(rng.standard_normal(9))
    direct = poly(0.5, x, y)
    via_op = torch.ops.tiarray.t_poly(torch.tensor(0.5, dtype=torch.float64), x, y, "()")
    assert isinstance(via_op, list) and len(via_op) == 1
    torch.testing.assert_close(direct, via_op[0])
    np.testing.assert_allclose(
        direct.cpu().numpy(), poly_ref(0.5, x.cpu().numpy(), y.cpu().numpy()), rtol=1e-12
    )


def test_static_and_multiple_outputs():
    x = _t(rng.standard_normal(5))
    torch.testing.assert_close(affine(x, mode="scale"), torch.as_tensor(affine_ref(x.cpu().numpy(), "scale")))
    torch.testing.assert_close(affine(x, mode="shift"), torch.as_tensor(affine_ref(x.cpu().numpy(), "shift")))
    torch.testing.assert_close(tile(x, reps=2), x.repeat(2))
    a, b = split(x)
    ra, rb = split_ref(x.cpu().numpy())
    np.testing.assert_allclose(a.cpu().numpy(), ra)
    np.testing.assert_allclose(b.cpu().numpy(), rb)


def test_opcheck():
    from torch.library import opcheck

    x, y = _t(rng.standard_normal(6), grad=True), _t(rng.standard_normal(6), grad=True)
    a = torch.tensor(0.5, dtype=torch.float64)
    poly(0.5, x, y)  # defines the op
    opcheck(torch.ops.tiarray.t_poly.default, (a, x, y, "()"))
    split(x)
    opcheck(torch.ops.tiarray.t_split.default, (x, "()"))
    affine(x.detach(), mode="scale")
    opcheck(torch.ops.tiarray.t_affine.default, (x, "(('mode', 'scale'),)"))
    A = _t(rng.standard_normal((3, 6)), grad=True)
    mv(A, x)
    opcheck(torch.ops.tiarray.t_mv.default, (A, x, "()"))


def test_gradcheck_taichi_autodiff():
    x, y = _t(rng.standard_normal(6), grad=True), _t(rng.standard_normal(6), grad=True)
    assert torch.autograd.gradcheck(lambda x, y: poly(0.5, x, y), (x, y))
    assert torch.autograd.gradcheck(lambda x: split(x), (x,))
    w = _t(rng.standard_normal(5), grad=True)
    idx = torch.tensor([0, 4, 4, 2], dtype=torch.int32)
    assert torch.autograd.gradcheck(lambda w: gather(w, idx), (w,))


def test_taichi_autodiff_vs_finite_differences():
    x0, y0 = rng.standard_normal(7), rng.standard_normal(7)
    x, y = _t(x0, grad=True), _t(y0, grad=True)
    (poly(0.7, x, y) ** 2).sum().backward()
    np.testing.assert_allclose(
        x.grad.cpu().numpy(), fd_grad(lambda v: np.sum(poly_ref(0.7, v, y0) ** 2), x0), rtol=1e-6, atol=1e-8
    )
    np.testing.assert_allclose(
        y.grad.cpu().numpy(), fd_grad(lambda v: np.sum(poly_ref(0.7, x0, v) ** 2), y0), rtol=1e-6, atol=1e-8
    )


def test_gradcheck_rules():
    A = _t(rng.standard_normal((4, 3)), grad=True)
    v = _t(rng.standard_normal(3), grad=True)
    w = _t(rng.standard_normal(4), grad=True)
    assert torch.autograd.gradcheck(lambda A, v: mv(A, v), (A, v))
    assert torch.autograd.gradcheck(lambda A, w: mv(A, w, transpose=True), (A, w))
    assert torch.autograd.gradgradcheck(lambda A, v: mv(A, v), (A, v))
    x = _t(rng.standard_normal(5), grad=True)
    assert torch.autograd.gradcheck(cube, (x,))
    np.testing.assert_allclose(
        mv(A, v).detach().cpu().numpy(), mv_ref(A.detach().cpu().numpy(), v.detach().cpu().numpy())
    )


def test_torch_compile_fullgraph_forward_and_backward():
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def f(x, y):
        return (poly(2.0, x, y) * 2).sum() + affine(x, mode="scale").sum() + affine(y, mode="shift").sum()

    x0, y0 = rng.standard_normal(8), rng.standard_normal(8)
    x, y = _t(x0, grad=True), _t(y0, grad=True)
    loss = f(x, y)
    ref = (poly_ref(2.0, x0, y0) * 2).sum() + (2 * x0).sum() + (y0 + 1).sum()
    np.testing.assert_allclose(loss.item(), ref, rtol=1e-12)
    loss.backward()
    np.testing.assert_allclose(x.grad.cpu().numpy(), 8 * x0 + 2, rtol=1e-12)
    np.testing.assert_allclose(y.grad.cpu().numpy(), 2 * np.cos(y0) + 1, rtol=1e-12)


def test_torch_compile_static_specialisation():
    torch._dynamo.reset()

    @torch.compile(fullgraph=True)
    def g(x, mode):
        return affine(x, mode=mode)

    x = _t(rng.standard_normal(4))
    torch.testing.assert_close(g(x, "scale"), 2 * x)
    torch.testing.assert_close(g(x, "shift"), x + 1)
    torch.testing.assert_close(g(x, "scale"), 2 * x)


def test_inference_mode_and_no_grad():
    x, y = _t(rng.standard_normal(4), grad=True), _t(rng.standard_normal(4))
    with torch.no_grad():
        out = poly(1.0, x, y)
    assert not out.requires_grad
    with torch.inference_mode():
        out = poly(1.0, x.detach(), y)
    np.testing.assert_allclose(out.cpu().numpy(), poly_ref(1.0, x.detach().cpu().numpy(), y.cpu().numpy()))


def test_errors():
    x = torch.ones(3)
    with pytest.raises(TypeError, match=r"t_axpy.*two frameworks.*(torch.*numpy|numpy.*torch)"):
        axpy(1.0, x, np.ones(3, np.float32))
    with pytest.raises(ta.KernelSignatureError, match=r"t_typed.*'x'.*f32.*f64"):
        typed(torch.ones((2, 2), dtype=torch.float64))
    with pytest.raises(TypeError, match=r"t_masked.*'spikes'.*non-differentiable"):
        masked(x, torch.ones(3, requires_grad=True))
    with pytest.raises(TypeError, match=r"t_poly.*scalar parameter 'alpha'.*Remedy"):
        poly(torch.tensor(1.0, dtype=torch.float64, requires_grad=True), x.double(), x.double())
    with pytest.raises(TypeError, match=r"t_axpy.*'x' must be a tensor"):
        axpy(1.0, 2.0, x)


def test_second_order_taichi_autodiff_raises():
    x = _t(rng.standard_normal(3), grad=True)
    (g,) = torch.autograd.grad(poly(1.0, x, x).sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"t_poly: second-order differentiation"):
        g.sum().backward()


def test_thread_safety():
    errors = []

    def work(seed):
        r = np.random.default_rng(seed)
        try:
            for _ in range(100):
                x = torch.as_tensor(r.standard_normal(20))
                y = torch.as_tensor(r.standard_normal(20))
                np.testing.assert_allclose(
                    poly(1.5, x, y).cpu().numpy(), poly_ref(1.5, x.cpu().numpy(), y.cpu().numpy())
                )
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors, errors


@pytest.mark.parametrize("torch_first", [True, False])
def test_torch_compile_first_call_in_a_fresh_process(tmp_path, torch_first):
    """The first call of an Operator may be inside torch.compile(fullgraph=True)."""
    import subprocess
    import sys

    imports = (
        "import torch\nimport tiarray as ta\n" if torch_first else "import tiarray as ta\nimport torch\n"
    )
    code = imports + (
        "from tiarray._internal import ti\n"
        "@ti.kernel\n"
        "def k(a: ti.f32, x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):\n"
        "    for i in x:\n"
        "        out[i] = a * x[i] * x[i]\n"
        "op = ta.Operator('fresh', kernel=k, outs=lambda a, x: ta.ShapeDtype(x.shape, x.dtype))\n"
        "f = torch.compile(lambda x: op(3.0, x).sum(), fullgraph=True)\n"
        "x = torch.arange(4.0, requires_grad=True)\n"
        "l = f(x)\n"
        "l.backward()\n"
        "assert l.item() == 3 * (0 + 1 + 4 + 9), l\n"
        "assert torch.equal(x.grad, 6 * torch.arange(4.0)), x.grad\n"
        "print('ok')\n"
    )
    script = tmp_path / "fresh.py"
    script.write_text(code)
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    assert r.stdout.strip().endswith("ok")


def test_custom_op_autograd_route_matches_eager_route():
    x0, y0 = rng.standard_normal(6), rng.standard_normal(6)
    a = torch.tensor(0.3, dtype=torch.float64)
    x1, y1 = _t(x0, grad=True), _t(y0, grad=True)
    (poly(0.3, x1, y1) ** 2).sum().backward()  # eager autograd.Function route
    x2, y2 = _t(x0, grad=True), _t(y0, grad=True)
    (torch.ops.tiarray.t_poly(a, x2, y2, "()")[0] ** 2).sum().backward()  # custom-op route
    torch.testing.assert_close(x1.grad, x2.grad)
    torch.testing.assert_close(y1.grad, y2.grad)
    x3 = _t(x0, grad=True)
    (g,) = torch.autograd.grad(torch.ops.tiarray.t_poly(a, x3, x3, "()")[0].sum(), x3, create_graph=True)
    with pytest.raises(RuntimeError, match=r"t_poly: second-order differentiation"):
        g.sum().backward()


def test_scratch_and_per_call_policy():
    from _operator_cases import PSUM_DECISIONS, psum, psum_fixed

    few = torch.zeros(100, dtype=torch.float64)
    few[[3, 50]] = torch.tensor([1.5, 2.0], dtype=torch.float64)
    many = torch.arange(100.0, dtype=torch.float64)
    PSUM_DECISIONS.clear()
    assert psum(few).tolist() == [3.5, 0.0]
    assert PSUM_DECISIONS == [(2, "serial")]
    assert psum(many).tolist() == [float(many.sum()), 4.0]
    assert PSUM_DECISIONS[-1] == (99, "parallel")
    # the custom-op route and a strided input
    assert torch.ops.tiarray.t_psum(many, "()")[0].tolist() == [float(many.sum()), 4.0]
    assert psum(torch.arange(200.0, dtype=torch.float64)[::2]).tolist() == [float(many.sum() * 2), 4.0]
    assert psum_fixed(many, mode="serial").tolist() == [float(many.sum()), 0.0]
    # differentiating an Operator with scratch and no rules: a clear error
    x = many.clone().requires_grad_(True)
    with pytest.raises(TypeError, match="t_psum: torch.autograd needs jvp/transpose rules"):
        psum(x).sum().backward()


def test_scratch_and_per_call_policy_take_generated_code():
    # as in test_operator_numpy: one runner per variant, the policy (on NumPy views of the
    # tensors) choosing per call, scratch zero-filled every call; not with grad or a non-contiguous input
    from _operator_cases import PSUM_DECISIONS, psum

    few = torch.zeros(64, dtype=torch.float64)
    few[[3, 50]] = torch.tensor([1.5, 2.0], dtype=torch.float64)
    many = torch.arange(64.0, dtype=torch.float64)
    PSUM_DECISIONS.clear()
    for k in range(6):
        x = many if k % 2 else few
        assert psum(x).tolist() == ([float(x.sum()), 4.0] if k % 2 else [3.5, 0.0])
    assert [m for _, m in PSUM_DECISIONS] == ["serial", "parallel"] * 3
    plan = next(p for k, p in psum._plans.items() if k[0] == "torch" and p.res.in_sds[0].shape == (64,))
    assert plan.runner is not None and psum._fast and psum._fast[0] is plan.fast
    assert plan.fast[1]([many.requires_grad_(True)]) is None  # grad: the autograd route
    many.requires_grad_(False)
    strided = torch.arange(128.0, dtype=torch.float64)[::2]
    assert plan.runner([strided]) is None  # not contiguous: the generic path copies it
    assert psum(strided).tolist() == [float(strided.sum()), 4.0]


def test_direct_route_runs_generated_code_that_resets_what_changed():
    # CPU tensors without grad: each call signature runs code generated for it
    # (tiarray._launch.host_runner), re-setting only the arguments whose value changed. Each
    # call must still reach the kernel with its own values: zeros of both signs, NaN, a 0-d
    # tensor scalar, new tensors, a strided or negated view (the generic path), fresh outputs.
    from tiarray._internal import debug_mode

    x = torch.as_tensor(rng.standard_normal(40).astype(np.float32))
    y = torch.full((40,), -0.0)
    axpy(1.0, x, y)
    plans = [p for k, p in axpy._plans.items() if k[0] == "torch" and k[-1][:2] == (y.dtype, y.shape)]
    assert plans and all((p.runner is None) == debug_mode() for p in plans)
    outs = []
    for alpha in (2.0, 2.0, 0.0, -0.0, 0.0, float("nan"), float("nan"), torch.tensor(-3.5), -3.5):
        got = axpy(alpha, x, y)
        want = axpy_ref(float(alpha), x.numpy(), y.numpy())
        np.testing.assert_array_equal(got.numpy(), want)
        np.testing.assert_array_equal(np.signbit(got.numpy()), np.signbit(want))  # -0.0 * x + -0.0
        assert got.is_contiguous() and all(got.data_ptr() != o.data_ptr() for o in outs)
        outs.append(got)
    base = torch.as_tensor(rng.standard_normal(80).astype(np.float32))
    np.testing.assert_array_equal(
        axpy(1.5, base[::2], y).numpy(), axpy_ref(1.5, base[::2].numpy(), y.numpy())
    )
    neg = torch._neg_view(x)  # a lazily negated view: the same memory, read as -x
    np.testing.assert_array_equal(axpy(1.5, neg, y).numpy(), axpy_ref(1.5, -x.numpy(), y.numpy()))
    np.testing.assert_array_equal(axpy(1.5, x, y).numpy(), axpy_ref(1.5, x.numpy(), y.numpy()))


def test_fast_path_checks_the_whole_signature_itself():
    # Once a signature ran the direct route's generated code, Operator.__call__ hands the next
    # calls straight to it (op._fast), which checks the signature itself. Whatever the direct
    # route would not take, or would take with another plan, must go the full way: other
    # dtypes and shapes, strided and negated views, inputs that require grad (autograd), a
    # torch function mode or dispatch mode (they must see the custom op), tensors of another
    # layout (a clear error).
    from torch.overrides import TorchFunctionMode
    from torch.utils._python_dispatch import TorchDispatchMode

    from tiarray._internal import debug_mode

    xn = rng.standard_normal(40).astype(np.float32)
    yn = rng.standard_normal(40).astype(np.float32)
    x, y = torch.as_tensor(xn), torch.as_tensor(yn)
    for _ in range(2):
        np.testing.assert_array_equal(axpy(2.0, x, y).numpy(), axpy_ref(2.0, xn, yn))
    assert bool(axpy._fast) != debug_mode()
    cases = [
        ((torch.tensor(0.5), x, y), axpy_ref(0.5, xn, yn)),
        ((3, x, y), axpy_ref(3.0, xn, yn)),
        ((2.0, x[:20], y[:20]), axpy_ref(2.0, xn[:20], yn[:20])),
        ((2.0, x.double(), y.double()), axpy_ref(2.0, xn.astype(np.float64), yn.astype(np.float64))),
        ((2.0, torch.as_tensor(np.repeat(xn, 2))[::2], y), axpy_ref(2.0, xn, yn)),
        ((2.0, torch._neg_view(x), y), axpy_ref(2.0, -xn, yn)),
    ]
    for _ in range(2):
        for args, want in cases:
            got = axpy(*args)
            assert type(got) is torch.Tensor and got.dtype == args[1].dtype
            np.testing.assert_array_equal(got.numpy(), want)
    # an input that requires grad: the autograd route, with its gradient
    axpy(2.0, x, y)  # (the fast path has this signature first)
    xg = x.clone().requires_grad_(True)
    axpy(2.0, xg, y).sum().backward()
    np.testing.assert_array_equal(xg.grad.numpy(), np.full(40, 2.0, np.float32))
    with torch.no_grad():  # nothing to record: the direct route
        np.testing.assert_array_equal(axpy(2.0, xg, y).numpy(), axpy_ref(2.0, xn, yn))

    seen = []

    class Functions(TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    class Dispatch(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(str(func))
            return func(*args, **(kwargs or {}))

    for mode in (Functions, Dispatch):
        seen.clear()
        with mode():
            got = axpy(2.0, x, y)
        np.testing.assert_array_equal(got.numpy(), axpy_ref(2.0, xn, yn))
        assert any("tiarray" in f and "t_axpy" in f for f in seen), (mode, seen)
    # other layouts: the full path's error
    with pytest.raises(TypeError, match="t_axpy: argument 'x' has layout torch.sparse_coo"):
        axpy(2.0, x.to_sparse(), y)
    np.testing.assert_array_equal(axpy(2.0, x, y).numpy(), axpy_ref(2.0, xn, yn))


def test_forward_mode_is_refused_not_zero():
    # forward mode is not registered; torch.func.jvp/jacfwd and forward_ad gave zero or no
    # tangents without a word (2026-12-05). Both routes: cold (first call of a signature)
    # and warm (the fast path of generated code)
    import torch.autograd.forward_ad as fwAD

    x = torch.tensor([1.0, 2.0], dtype=torch.float64)
    for warm in (False, True):
        if warm:
            cube(x)
        with pytest.raises(NotImplementedError, match=r"t_cube: forward-mode differentiation"):
            torch.func.jvp(cube, (x,), (torch.ones_like(x),))
        with pytest.raises(NotImplementedError, match=r"t_cube: forward-mode differentiation"):
            torch.func.jacfwd(cube)(x)
        with fwAD.dual_level(), pytest.raises(NotImplementedError, match=r"t_cube: forward-mode"):
            cube(fwAD.make_dual(x, torch.ones_like(x)))
    with fwAD.dual_level():  # a dual level with no tangent on the inputs: an ordinary call
        np.testing.assert_allclose(cube(x).numpy(), x.numpy() ** 3)
    # reverse mode and its compositions still work
    np.testing.assert_allclose(
        torch.autograd.functional.jacobian(cube, x).numpy(), np.diag(3 * x.numpy() ** 2)
    )


def test_second_order_through_a_jvp_rule():
    # the jvp rule transposed by torch's autograd: its gradient is differentiable again (the
    # primals were detached and the Hessian came out zero, 2026-12-05)
    x = torch.tensor([1.0, -2.0, 0.5], dtype=torch.float64)
    h = torch.autograd.functional.hessian(lambda v: cube(v).sum(), x)
    np.testing.assert_allclose(h.numpy(), np.diag(6 * x.numpy()), rtol=1e-12)
    assert torch.autograd.gradgradcheck(cube, (x.clone().requires_grad_(),))


def test_a_jvp_rule_returning_too_many_tangents_is_an_error():
    bad = ta.Operator(
        "t_cube_two_tangents", kernel=_cube, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype),
        jvp=lambda p, t: (3 * p[0] ** 2 * t[0], t[0]),
    )  # fmt: skip
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    with pytest.raises(
        TypeError, match=r"t_cube_two_tangents: the jvp rule must return one tangent per output \(1\), got 2"
    ):
        bad(x).sum().backward()


@pytest.mark.parametrize("name", ["def", "1abc", "h\u00e9\u00e9", "my op"])
def test_operator_names_torch_cannot_parse(torch, name):
    """Any Operator name works on torch's autograd route (torch's schema parser raised on a
    keyword, a leading digit and non-ASCII letters, 2026-12-05)."""
    from tiarray import _backend

    ti = _backend.ti

    @ti.kernel
    def k(x: ti.types.ndarray(), out: ti.types.ndarray()):
        for i in ti.grouped(x):
            out[i] = x[i] * 2

    op = ta.Operator(name, kernel=k, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype), linear=("x",),
                     transpose=lambda ct, p: (op(ct[0]),))  # fmt: skip
    x = torch.ones(3, requires_grad=True)
    y = op(x)
    y.sum().backward()
    np.testing.assert_array_equal(y.detach().numpy(), [2.0] * 3)
    np.testing.assert_array_equal(x.grad.numpy(), [2.0] * 3)
