"""GPU check of the Operator registry's CUDA paths (run on a machine with a CUDA GPU).

CI has no GPU, so the CUDA code of the adapters (stream ordering between Taichi's
legacy-stream launches and torch's / XLA's / CuPy's streams, device scalars, zero-filled
device outputs, reverse mode on device memory) is checked by this one script::

    TI_OFFLINE_CACHE_FILE_PATH=/tmp/ticache python benchmarks/gpu_check.py

Each check prints ``PASS``/``FAIL``/``SKIP`` with a reason; the exit status is the number
of failures. Frameworks without CUDA support in this environment are skipped (JAX needs
a CUDA jaxlib plugin, CuPy must be installed). Ordering is checked by queuing large
work on a non-default stream right before and after the launch: without the events the
kernel would read unfinished inputs or the follow-up would read an unfinished output.
"""

import os
import sys
import time
import traceback

import numpy as np

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")

import taichi as ti  # noqa: E402

import tiarray as ta  # noqa: E402

RESULTS = []


def check(name):
    def deco(f):
        t0 = time.perf_counter()
        try:
            msg = f()
            RESULTS.append(
                ("SKIP" if isinstance(msg, str) and msg.startswith("skip") else "PASS", name, msg or "")
            )
        except Exception as e:  # report and continue
            RESULTS.append(("FAIL", name, f"{type(e).__name__}: {e}"))
            traceback.print_exc()
        print(f"[{RESULTS[-1][0]}] {name} ({time.perf_counter() - t0:.1f}s) {RESULTS[-1][2]}", flush=True)
        return f

    return deco


nd = ti.types.ndarray


@ti.kernel
def _axpy(alpha: ti.f32, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] + y[i]


@ti.kernel
def _poly(alpha: ti.f64, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] * x[i] + ti.sin(y[i])


@ti.kernel
def _acc(x: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] += x[i]  # relies on zero-filled outputs


axpy = ta.Operator("g_axpy", kernel=_axpy, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))
poly = ta.Operator("g_poly", kernel=_poly, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))
acc = ta.Operator("g_acc", kernel=_acc, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))

N = 1 << 24  # 64 MB of float32: long enough kernels to expose missing stream ordering


def main():
    dev = ta.init("cuda")
    print(f"Taichi on {dev}", flush=True)

    # ------------------------------------------------------------------ torch
    try:
        import torch

        have_torch = torch.cuda.is_available()
    except ImportError:
        have_torch = False

    @check("torch: forward on CUDA tensors, default stream")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        x = torch.arange(16, device="cuda", dtype=torch.float32)
        y = torch.ones(16, device="cuda")
        out = axpy(2.0, x, y)
        assert out.is_cuda and out.dtype == torch.float32
        np.testing.assert_allclose(out.cpu().numpy(), 2 * np.arange(16) + 1)
        # outputs are zero-filled before the kernel (+=) even when memory is reused
        for _ in range(3):
            o = acc(torch.full((1000,), 7.0, device="cuda"))
            assert torch.all(o == 7.0)

    @check("torch: stream ordering on a non-default stream")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            for _k in range(5):
                x = torch.ones(N, device="cuda")
                x.mul_(3.0)  # queued on s before the launch
                out = axpy(2.0, x, x)
                out.add_(1.0)  # queued on s after the launch
            s.synchronize()
        assert out[0].item() == 10.0 and out[-1].item() == 10.0, (out[0].item(), out[-1].item())

    @check("torch: autograd (Taichi autodiff) and gradcheck on CUDA")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        x = torch.rand(64, device="cuda", dtype=torch.float64, requires_grad=True)
        y = torch.rand(64, device="cuda", dtype=torch.float64, requires_grad=True)
        poly(0.5, x, y).sum().backward()
        torch.testing.assert_close(x.grad, x.detach())
        torch.testing.assert_close(y.grad, torch.cos(y.detach()))
        xs = x.detach()[:6].clone().requires_grad_()
        ys = y.detach()[:6].clone().requires_grad_()
        assert torch.autograd.gradcheck(lambda a, b: poly(0.5, a, b), (xs, ys))

    @check("torch: torch.compile(fullgraph=True) on CUDA, forward and backward")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        f = torch.compile(lambda x, y: (poly(2.0, x, y) * 2).sum(), fullgraph=True)
        x = torch.rand(1000, device="cuda", dtype=torch.float64, requires_grad=True)
        y = torch.rand(1000, device="cuda", dtype=torch.float64)
        loss = f(x, y)
        ref = (2 * (2.0 * x * x + torch.sin(y))).sum()
        torch.testing.assert_close(loss, ref)
        loss.backward()
        torch.testing.assert_close(x.grad, 8 * x.detach())

    @check("TiArray: CUDA TiArrays in, CUDA TiArrays out")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA to make data"
        x = ta.asarray(torch.arange(8, device="cuda", dtype=torch.float32))
        out = axpy(3.0, x, x)
        assert isinstance(out, ta.TiArray) and out.device == ta.Device("cuda", 0)
        np.testing.assert_allclose(np.asarray(out.to_device("cpu")), 4 * np.arange(8))

    # ------------------------------------------------------------------ sparse operators
    import tiarray.operators as tops

    def _sparse_case(seed=0, m=300, n=200, p=0.05):
        rng = np.random.default_rng(seed)
        dense = (rng.random((m, n)) < p) * rng.standard_normal((m, n))
        rows, cols = np.nonzero(dense)
        ptr = np.zeros(m + 1, np.int32)
        np.cumsum(np.bincount(rows, minlength=m), out=ptr[1:])
        return dense[rows, cols], cols.astype(np.int32), ptr, dense

    @check("sparse (torch CUDA): event_csrmv/csrmv/csrmm both directions, atomics scatter, scratch")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        w, idx, ptr, dense = _sparse_case()
        T = lambda a: torch.as_tensor(a, device="cuda")  # noqa: E731
        rng = np.random.default_rng(1)
        for transpose in (False, True):
            D = dense.T if transpose else dense
            e = rng.random(D.shape[1]) < 0.2
            y = tops.event_csrmv(T(w), T(idx), T(ptr), T(e), shape=dense.shape, transpose=transpose)
            np.testing.assert_allclose(y.cpu().numpy(), D @ e, rtol=1e-10, atol=1e-10)
            v = rng.standard_normal(D.shape[1])
            y = tops.csrmv(T(w), T(idx), T(ptr), T(v), shape=dense.shape, transpose=transpose)
            np.testing.assert_allclose(y.cpu().numpy(), D @ v, rtol=1e-10, atol=1e-10)
            B = rng.standard_normal((D.shape[1], 5))
            y = tops.csrmm(T(w), T(idx), T(ptr), T(B), shape=dense.shape, transpose=transpose)
            np.testing.assert_allclose(y.cpu().numpy(), D @ B, rtol=1e-10, atol=1e-10)
        tw = T(w).requires_grad_(True)
        tx = T(rng.standard_normal(dense.shape[1])).requires_grad_(True)
        assert torch.autograd.gradcheck(
            lambda a, b: tops.csrmv(a, T(idx), T(ptr), b, shape=dense.shape), (tw, tx)
        )
        A = tops.CSR(T(w), T(idx), T(ptr), shape=dense.shape)
        e = rng.random(dense.shape[1]) < 0.2
        np.testing.assert_allclose((A @ T(e)).cpu().numpy(), dense @ e, rtol=1e-10, atol=1e-10)

    @check("sparse (torch CUDA): JITC connectivity bit-identical to the CPU's")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        import subprocess

        code = (
            "import numpy as np, tiarray.operators as o;"
            "np.save('/tmp/_jitc_cpu.npy', o.jitc_todense_prob_homo(np.float32(1.0), 0.1, 77, shape=(500, 400)));"
            "np.save('/tmp/_jitc_cpu_n.npy', o.jitc_todense_prob_normal(np.float64(0.5), np.float64(0.2), 0.1, 77,"
            " shape=(500, 400)))"
        )
        env = dict(os.environ, TIARRAY_ARCH="cpu")
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        cpu = np.load("/tmp/_jitc_cpu.npy")
        gpu = tops.jitc_todense_prob_homo(torch.tensor(1.0, device="cuda"), 0.1, 77, shape=(500, 400))
        np.testing.assert_array_equal(gpu.cpu().numpy(), cpu)
        cpu_n = np.load("/tmp/_jitc_cpu_n.npy")
        gpu_n = (
            tops.jitc_todense_prob_normal(
                torch.tensor(0.5, device="cuda", dtype=torch.float64),
                torch.tensor(0.2, device="cuda", dtype=torch.float64),
                0.1,
                77,
                shape=(500, 400),
            )
            .cpu()
            .numpy()
        )
        np.testing.assert_array_equal(gpu_n != 0, cpu_n != 0)
        np.testing.assert_allclose(gpu_n, cpu_n, rtol=1e-12, atol=1e-12)
        x = torch.rand(500, device="cuda", dtype=torch.float32) < 0.3
        y = tops.jitc_event_mv_prob_homo(
            x, torch.tensor(1.0, device="cuda"), 0.1, 77, shape=(500, 400), transpose=True
        )
        np.testing.assert_allclose(y.cpu().numpy(), cpu.T @ x.cpu().numpy(), rtol=1e-5)

    # ------------------------------------------------------------------ JAX
    try:
        import jax
        import jax.numpy as jnp

        gpus = [d for d in jax.devices() if d.platform == "gpu"]
    except Exception:
        gpus = []

    @check("jax: eager and jit on GPU, scalars on device, ordering with XLA's stream")
    def _():
        if not gpus:
            return "skip: JAX has no GPU backend here (install jax[cuda12])"
        x = jnp.ones(N, jnp.float32)
        f = jax.jit(lambda a, x: axpy(a, x * 3.0, x * 3.0) + 1.0)  # XLA work on both sides of the launch
        out = f(jnp.float32(2.0), x)
        assert float(out[0]) == 13.0 and float(out[-1]) == 13.0, (float(out[0]), float(out[-1]))
        eager = axpy(2.0, jnp.arange(4.0, dtype=jnp.float32), jnp.ones(4, jnp.float32))
        np.testing.assert_allclose(np.asarray(eager), [1, 3, 5, 7])

    @check("jax: grad (Taichi autodiff), vmap, fori_loop on GPU")
    def _():
        if not gpus:
            return "skip: JAX has no GPU backend here"
        with jax.enable_x64(True):
            x = jnp.linspace(0.0, 1.0, 33)
            y = jnp.linspace(1.0, 2.0, 33)
            g = jax.jit(jax.grad(lambda x: poly(0.5, x, y).sum()))(x)
            np.testing.assert_allclose(np.asarray(g), np.asarray(x), rtol=1e-12)
            v = jax.vmap(lambda x: poly(0.5, x, y))(jnp.stack([x, 2 * x]))
            np.testing.assert_allclose(np.asarray(v[1]), np.asarray(0.5 * 4 * x * x + jnp.sin(y)), rtol=1e-12)
        xs = jnp.zeros(1000, jnp.float32)
        out = jax.jit(lambda x: jax.lax.fori_loop(0, 100, lambda i, c: axpy(1.0, c, jnp.ones_like(c)), x))(xs)
        assert float(out[0]) == 100.0, float(out[0])

    @check("sparse (jax GPU): jit, vmap as one csrmm, grad, scratch results, traced seed")
    def _():
        if not gpus:
            return "skip: JAX has no GPU backend here"
        w, idx, ptr, dense = _sparse_case(2)
        rng = np.random.default_rng(3)
        with jax.enable_x64(True):
            for transpose in (False, True):
                D = dense.T if transpose else dense
                e = jnp.asarray(rng.random(D.shape[1]) < 0.2)
                f = jax.jit(
                    lambda w, e, t=transpose: tops.event_csrmv(w, idx, ptr, e, shape=dense.shape, transpose=t)
                )
                np.testing.assert_allclose(
                    np.asarray(f(jnp.asarray(w), e)), D @ np.asarray(e), rtol=1e-10, atol=1e-10
                )
                E = jnp.asarray(rng.random((4, D.shape[1])) < 0.2)
                g = jax.vmap(
                    lambda e, t=transpose: tops.event_csrmv(w, idx, ptr, e, shape=dense.shape, transpose=t)
                )
                np.testing.assert_allclose(
                    np.asarray(jax.jit(g)(E)), np.asarray(E, float) @ D.T, rtol=1e-10, atol=1e-10
                )
            gx = jax.grad(lambda x: tops.csrmv(w, idx, ptr, x, shape=dense.shape).sum())(
                jnp.ones(dense.shape[1])
            )
            np.testing.assert_allclose(np.asarray(gx), dense.sum(0), rtol=1e-10)
        h = jax.jit(
            lambda s: tops.jitc_mv_prob_homo(jnp.ones(400, jnp.float32), 1.0, 0.1, s, shape=(500, 400))
        )
        a, b = np.asarray(h(jnp.uint32(5))), np.asarray(h(jnp.uint32(6)))
        assert not np.array_equal(a, b) and abs(a.mean() - 40) < 5

    @check("jax: jit per-call overhead on GPU vs a trivial jitted function")
    def _():
        if not gpus:
            return "skip: JAX has no GPU backend here"
        x = jnp.ones(16, jnp.float32)
        a = jnp.float32(2.0)
        jf = jax.jit(lambda a, x: axpy(a, x, x))
        jt = jax.jit(lambda a, x: x + 1)
        for f in (jf, jt):
            for _ in range(100):
                f(a, x).block_until_ready()
        t = {}
        for name, f in (("axpy", jf), ("x+1", jt)):
            t0 = time.perf_counter()
            for _ in range(2000):
                f(a, x).block_until_ready()
            t[name] = (time.perf_counter() - t0) / 2000 * 1e6
        return f"jit axpy {t['axpy']:.1f} us, jit x+1 {t['x+1']:.1f} us, ratio {t['axpy'] / t['x+1']:.2f}"

    # ------------------------------------------------------------------ CuPy
    @check("cupy: the cupy test modules (operators, sparse)")
    def _():
        try:
            import cupy  # noqa: F401
        except ImportError:
            return "skip: CuPy not installed"
        import subprocess

        env = dict(os.environ, TIARRAY_ARCH="cuda")
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-m",
                "cupy",
                os.path.join(here, "..", "tests", "test_operator_cupy.py"),
                os.path.join(here, "..", "tests", "test_sparse_frameworks.py"),
            ],
            env=env,
            capture_output=True,
            text=True,
        )
        print(r.stdout[-3000:], r.stderr[-2000:])
        assert r.returncode == 0, "pytest -m cupy failed"

    fails = sum(1 for r in RESULTS if r[0] == "FAIL")
    print("\nSUMMARY")
    for status, name, msg in RESULTS:
        print(f"{status:4s}  {name}  {msg}")
    return fails


if __name__ == "__main__":
    sys.exit(main())
