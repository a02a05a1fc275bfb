"""Every operator of the families beyond CSR, on every framework, against dense NumPy references.

The cases (``_family_cases.py``) cover each operator x dtype (float32/float64) x weight
form x direction x event kind (bool/float). Each runs on NumPy, torch and JAX arrays;
the float64 cases also run JAX ``jit``/``grad``/``check_grads``/``vmap`` (over the operand
and over the weights) and torch ``gradcheck``/``backward``; one case per operator runs
under ``torch.compile``, forward and backward. Gradients are compared with central differences of the dense
NumPy reference (exact up to rounding: every operator is linear in each differentiable
argument), and checked numerically on the operator itself (``check_grads``,
``gradcheck``). Framework tests take the ``torch`` / ``jax`` fixture, which marks them.
"""

from __future__ import annotations

import numpy as np
import pytest
from _family_cases import cases, rng_for
from _sparse_helpers import (
    NONDET_TOL,
    TAICHI_ON_CUDA,
    CupyFW,
    JaxFW,
    NumpyFW,
    TorchFW,
    fd_grad,
    parallel_mode,
)

CASES = cases()
IDS = [c.id for c in CASES]
F64 = [c for c in CASES if c.dtype == "float64" and c.diff]
F64_IDS = [c.id for c in F64]


def _replace(args, positions, values):
    a = list(args)
    for p, v in zip(positions, values):
        a[p] = v
    return a


def check_forward(fw, case):
    with fw.ctx():
        args = [fw.arr(a) if isinstance(a, np.ndarray) else a for a in case.args]
        got = fw.np(case.fn(*args, **case.kw))
    ref = case.ref(*case.args)
    assert got.dtype == np.dtype(case.dtype), (got.dtype, case.dtype)
    assert got.shape == ref.shape, (got.shape, ref.shape)
    err = np.abs(got.astype(np.float64) - ref)
    tol = case.tol(*case.args)
    assert (err <= tol).all(), f"max error {err.max()}, at tolerance {tol.reshape(-1)[np.argmax(err)]}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_numpy(case):
    check_forward(NumpyFW(), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_torch(torch, case):
    check_forward(TorchFW(torch), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_jax(jax, case):
    check_forward(JaxFW(jax), case)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_forward_cupy(cupy, case):
    check_forward(CupyFW(cupy), case)


@pytest.mark.parametrize("case", F64, ids=F64_IDS)
def test_forward_parallel_kernels(case):
    """The multi-block CPU kernels (private outputs, thread slots), whatever the sizes."""
    with parallel_mode("parallel"):
        check_forward(NumpyFW(), case)


def _ref_grads(case, ct):
    """d<ct, ref(args)>/d(arg) for every differentiable argument, by central differences."""
    out = []
    for i in case.diff:

        def L(a, i=i):
            return (ct * case.ref(*_replace(case.args, (i,), (a,)))).sum()

        out.append(fd_grad(L, case.args[i]))
    return out


@pytest.mark.parametrize("case", F64, ids=F64_IDS)
def test_jax_jit_grad_vmap(jax, case):
    from jax.test_util import check_grads

    jnp = jax.numpy
    rng = rng_for("jax-" + case.id)
    with jax.enable_x64(True):
        args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in case.args]
        d0 = [args[i] for i in case.diff]

        def F(*d):  # (check_grads' finite differences pass NumPy arrays)
            return case.fn(*_replace(args, case.diff, [jnp.asarray(x) for x in d]), **case.kw)

        eager = np.asarray(F(*d0))
        jitted = np.asarray(jax.jit(F)(*d0))
        if TAICHI_ON_CUDA:  # atomic adds on the GPU sum in a different order each run (~1 ulp)
            assert (np.abs(jitted - eager) <= 2 * case.tol(*case.args)).all()
        else:
            np.testing.assert_array_equal(jitted, eager)
        ct = rng.standard_normal(eager.shape)
        grads = jax.grad(lambda *d: (F(*d) * ct).sum(), argnums=tuple(range(len(d0))))(*d0)
        for g, want, i in zip(grads, _ref_grads(case, ct), case.diff):
            assert g.shape == np.shape(case.args[i])
            np.testing.assert_allclose(np.asarray(g), want, rtol=1e-8, atol=1e-8)
        # order 2 for cases without one-element arguments: check_grads measures second
        # derivatives with respect to those in float32 (it fails for a jax.numpy function too)
        order = 1 if any(np.size(case.args[i]) == 1 for i in case.diff) else 2
        check_grads(F, tuple(d0), order=order, modes=("fwd", "rev"), eps=1e-3)
        if case.operand is not None:  # mv: one mm launch; mm: the batch folded into its columns
            x = case.args[case.operand]
            xs = np.stack([x, np.roll(x, 1, axis=0), -x]) if x.dtype.kind == "f" else np.stack([x, ~x, x])

            def G(x_):
                return case.fn(*_replace(args, (case.operand,), (x_,)), **case.kw)

            prims = [e.primitive.name for e in jax.make_jaxpr(jax.vmap(G))(xs).jaxpr.eqns]
            assert prims.count(case.mm_prim) == 1, prims
            assert case.fn.__name__ == case.mm_prim or case.fn.__name__ not in prims, prims
            assert not {"while", "scan", "map"} & set(prims), prims
            got = np.asarray(jax.jit(jax.vmap(G))(xs))
            want = np.stack([case.ref(*_replace(case.args, (case.operand,), (x_,))) for x_ in xs])
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", F64, ids=F64_IDS)
def test_jax_vmap_over_weights(jax, case):
    """vmap over the weights (or the JIT weight parameters), with the operand shared or batched
    too: one call per batch element (``lax.map``), each equal to its dense reference."""
    jnp = jax.numpy
    i = case.diff[1] if case.diff[0] == case.operand else case.diff[0]
    ws = np.stack([case.args[i], -2 * case.args[i]])
    with jax.enable_x64(True):
        args = [jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in case.args]

        def G(w_):
            return case.fn(*_replace(args, (i,), (w_,)), **case.kw)

        got = np.asarray(jax.jit(jax.vmap(G))(jnp.asarray(ws)))
        want = np.stack([case.ref(*_replace(case.args, (i,), (w_,))) for w_ in ws])
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        if case.operand is not None:  # weights and operand batched together
            x = case.args[case.operand]
            xs = np.stack([x, x[::-1]])

            def H(w_, x_):
                return case.fn(*_replace(args, (i, case.operand), (w_, x_)), **case.kw)

            got = np.asarray(jax.jit(jax.vmap(H))(jnp.asarray(ws), jnp.asarray(xs)))
            want = np.stack(
                [case.ref(*_replace(case.args, (i, case.operand), (w_, x_))) for w_, x_ in zip(ws, xs)]
            )
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("case", F64, ids=F64_IDS)
def test_torch_gradcheck(torch, case):
    rng = rng_for("torch-" + case.id)
    args = [torch.as_tensor(np.array(a)) if isinstance(a, np.ndarray) else a for a in case.args]
    d0 = [args[i].clone().requires_grad_(True) for i in case.diff]

    def F(*d):
        return case.fn(*_replace(args, case.diff, d), **case.kw)

    assert torch.autograd.gradcheck(F, tuple(d0), nondet_tol=NONDET_TOL)
    y = F(*d0)
    ct = rng.standard_normal(tuple(y.shape))
    (y * torch.as_tensor(ct)).sum().backward()
    for t, want in zip(d0, _ref_grads(case, ct)):
        np.testing.assert_allclose(t.grad.cpu().numpy(), want, rtol=1e-8, atol=1e-8)


def _compile_cases():
    """One float64 case per operator for ``torch.compile``: the spiking direction
    (``transpose=True``) and float events where the operator has them (so the backward
    reaches every differentiable argument)."""

    def rank(c):
        return (not c.kw.get("transpose", True), len(c.diff) == 1)

    best = {}
    for c in F64:
        name = c.fn.__name__
        if name not in best or rank(c) < rank(best[name]):
            best[name] = c
    return [best[k] for k in sorted(best)]


COMPILE = _compile_cases()


@pytest.mark.parametrize("case", COMPILE, ids=[c.id for c in COMPILE])
def test_torch_compile(torch, case):
    """``torch.compile(fullgraph=True)`` of every operator, forward and backward, against the
    dense reference and its gradients, and against the eager call (which may take another
    route, e.g. a cached delay index: the same sums in another order)."""
    torch._dynamo.reset()  # one code object (F) for every case: no recompile limit across tests
    rng = rng_for("compile-" + case.id)
    args = [torch.as_tensor(np.array(a)) if isinstance(a, np.ndarray) else a for a in case.args]

    def F(*d):
        return case.fn(*_replace(args, case.diff, d), **case.kw) * 2

    def run(fn, ct):
        d = [args[i].clone().requires_grad_(True) for i in case.diff]
        y = fn(*d)
        (y * torch.as_tensor(ct)).sum().backward()
        return [y.detach().cpu().numpy() / 2] + [t.grad.cpu().numpy() / 2 for t in d]

    ct = rng.standard_normal(np.shape(case.ref(*case.args)))
    eager = run(F, ct)
    compiled = run(torch.compile(F, fullgraph=True, backend="aot_eager"), ct)
    want = [case.ref(*case.args)] + _ref_grads(case, ct)
    err = np.abs(compiled[0] - want[0])
    assert (err <= case.tol(*case.args)).all(), err.max()
    for got, e, w in zip(compiled[1:], eager[1:], want[1:]):
        assert got.shape == np.shape(w)
        np.testing.assert_allclose(got, w, rtol=1e-8, atol=1e-8)
        np.testing.assert_allclose(got, e, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-12, atol=1e-12)


NO_WARNINGS = """
import sys
sys.path.insert(0, {tests!r})
import tiarray
tiarray.init(offline_cache=False)  # compile here: a cached kernel prints nothing
from _family_cases import cases
for c in cases("dense"):
    c.fn(*c.args, **c.kw)
print("ok")
"""


def test_kernels_compile_without_warnings(tmp_path):
    # the dense family's bool-event kernels stored a u64 bit position (_pop_lowest) into an
    # int32 array: Taichi printed "Assign may lose precision: i32 <- u64" on each first
    # compile (2026-12-06)
    import os
    import subprocess
    import sys

    script = tmp_path / "compile_dense.py"
    script.write_text(NO_WARNINGS.format(tests=os.path.dirname(os.path.dirname(__file__))))
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0 and r.stdout.strip().endswith("ok"), r.stderr[-3000:]
    out = r.stdout + r.stderr
    assert "Warning" not in out and "[W " not in out, out[:3000]


def _operand_mistakes():
    """(case, mistake) for one case per product and direction: the operand of wrong rank,
    length or dtype, and a transpose that is not a bool."""
    seen, out = set(), []
    for c in CASES:
        key = (c.fn.__name__, c.kw.get("transpose"))
        if c.operand is None or key in seen or c.dtype != "float64":
            continue
        seen.add(key)
        event = c.fn.__name__.startswith(("event_", "jitc_event_"))
        for mistake in ("rank", "length", "int32", "float16", "complex", "bool", "transpose"):
            if mistake == "bool" and event:
                continue
            out.append(pytest.param(c, mistake, id=f"{c.id}-{mistake}"))
    return out


@pytest.mark.parametrize("case, mistake", _operand_mistakes())
def test_operand_mistakes_name_function_and_argument(case, mistake):
    name = case.fn.__name__
    x = np.asarray(case.args[case.operand], np.float64)
    kw = dict(case.kw)
    err, want = TypeError, r"argument '(vector|matrix|events)' must be "
    if mistake == "rank":
        err, x = ValueError, x[..., None]
        want += rf"{x.ndim - 1}-D, got shape"
    elif mistake == "length":
        err, x = ValueError, x[:-1]
        want = r"argument '(vector|matrix|events)' must have length .* got " + str(x.shape[0])
    elif mistake in ("int32", "float16", "complex"):
        x = x.astype({"int32": np.int32, "float16": np.float16, "complex": np.complex64}[mistake])
        want += r".*float32 or float64, got dtype " + x.dtype.name
    elif mistake == "bool":
        x = x != 0
        want += r"float32 or float64, got bool \(use the event_ variant for spike vectors\)"
    else:
        kw["transpose"], want = "yes", r"argument 'transpose' must be a bool, got 'yes'"
    args = _replace(case.args, (case.operand,), (x,))
    with pytest.raises(err, match=rf"^{name}\(\): {want}"):
        case.fn(*args, **kw)
