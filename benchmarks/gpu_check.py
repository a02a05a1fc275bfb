"""GPU check of the Operator registry's CUDA paths (run on a machine with a CUDA GPU).

CI has no GPU, so the CUDA code of the adapters (stream ordering between Taichi's
legacy-stream launches and torch's / XLA's / CuPy's streams, device scalars, zero-filled
device outputs, reverse mode on device memory) is checked by this one script::

    TI_OFFLINE_CACHE_FILE_PATH=/tmp/ticache python benchmarks/gpu_check.py [--no-suite]

(``benchmarks/gpu_run.sh`` runs it with the CUDA test suite and the GPU benchmarks.) Each
check prints ``PASS``/``FAIL``/``SKIP`` with a reason; the exit status is the number of
failures. ``--no-suite`` leaves out the CuPy test modules (the CUDA suite run,
``TIARRAY_ARCH=cuda pytest -m cuda``, includes them). Frameworks without CUDA support in this environment are skipped (JAX needs
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


@ti.kernel
def _slow_copy(x: nd(ndim=1), out: nd(ndim=1)):
    # out = x, after a dependent chain of 4000 multiply-adds per element (several ms for 2^22
    # elements): a consumer that does not wait for this kernel reads the zero-filled output.
    # 0 * acc is kept: fast_math is off, and acc stays finite.
    for i in x:
        acc = x[i]
        for _k in range(4000):
            acc = acc * 0.999 + 0.001
        out[i] = x[i] + 0.0 * acc


axpy = ta.Operator("g_axpy", kernel=_axpy, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))
poly = ta.Operator("g_poly", kernel=_poly, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))
acc = ta.Operator("g_acc", kernel=_acc, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))
slow_copy = ta.Operator("g_slow_copy", kernel=_slow_copy, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))

N = 1 << 24  # 64 MB of float32: long enough kernels to expose missing stream ordering


def main():
    no_suite = "--no-suite" in sys.argv[1:]
    dev = ta.init("cuda")
    print(f"Taichi on {dev}", flush=True)
    import gc

    from tiarray import _dlpack

    cuda0 = ta.Device("cuda", 0)

    @check("TiArray: array API on CUDA (creation, element-wise, reductions, matmul, sort) against NumPy")
    def _():
        rng = np.random.default_rng(0)
        a = rng.standard_normal((64, 48)).astype(np.float32)
        b = rng.standard_normal((48, 32)).astype(np.float32)
        x, y = ta.asarray(a, device=cuda0), ta.asarray(b, device=cuda0)
        assert x.device == cuda0
        np.testing.assert_allclose(np.asarray(ta.sin(x) * 2 + 1), np.sin(a) * 2 + 1, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(float(ta.sum(x)), a.astype(np.float64).sum(), rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(np.asarray(ta.max(x, axis=0)), a.max(0))
        np.testing.assert_allclose(np.asarray(x @ y), a @ b, rtol=1e-4, atol=1e-4)
        np.testing.assert_array_equal(np.asarray(ta.sort(x, axis=1)), np.sort(a, axis=1))
        z = ta.zeros((1000,), dtype=ta.float64)
        assert z.device == cuda0 and not np.asarray(z).any()
        np.testing.assert_array_equal(np.asarray(ta.arange(10, device=cuda0)), np.arange(10))
        w = ta.asarray(a, device=cuda0)
        w *= 2.0  # in place, on the GPU
        np.testing.assert_allclose(np.asarray(w), 2 * a)

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

    @check("DLPack torch <-> tiarray on CUDA: same address, writes visible both ways, lifetimes")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        n = 1000
        x = torch.arange(n, device="cuda", dtype=torch.float32)
        t = ta.asarray(x)
        assert t.ptr == x.data_ptr() and t.device == cuda0, (t.ptr, x.data_ptr(), t.device)
        t *= 2.0  # tiarray writes: torch sees it
        assert torch.equal(x, 2 * torch.arange(n, device="cuda", dtype=torch.float32))
        z = ta.zeros((n,), dtype=ta.float32)
        live = _dlpack.live_exports()
        y = torch.from_dlpack(z)
        assert y.is_cuda and y.data_ptr() == z.ptr, (y.device, y.data_ptr(), z.ptr)
        y.fill_(3.0)  # torch writes: tiarray sees it
        assert float(ta.sum(z)) == 3.0 * n
        del z
        gc.collect()
        assert float(y.sum()) == 3.0 * n  # the export keeps the memory alive
        del y
        gc.collect()
        assert _dlpack.live_exports() == live
        x2 = torch.ones(n, device="cuda")
        t2 = ta.asarray(x2)
        del x2
        gc.collect()
        assert float(ta.sum(t2)) == n  # the view keeps the tensor's memory alive

    @check("DLPack torch on CUDA: stream ordering under load (side stream, both directions)")
    def _():
        if not have_torch:
            return "skip: no torch with CUDA"
        n = 1 << 22
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            # import: torch's side stream sleeps, then writes; tiarray's kernel must see the write
            x = torch.zeros(n, device="cuda")
            torch.cuda._sleep(50_000_000)  # ~25 ms of GPU time on s
            x.fill_(7.0)
            got = float(ta.sum(ta.asarray(x), dtype=ta.float64))
        assert got == 7.0 * n, f"tiarray read torch's tensor before torch's stream wrote it: sum {got}"
        ones = ta.ones((n,), dtype=ta.float32)
        z = slow_copy(ones)  # a long tiarray kernel on the legacy stream
        with torch.cuda.stream(s):
            # export: torch's stream must wait for that kernel
            v = float(torch.from_dlpack(z).sum())
        assert v == float(n), f"torch read tiarray's output before its kernel finished: sum {v}"

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

    @check(
        "JIT connectivity: the same matrices on CPU and GPU for the same seed (connectivity, homo and uniform weights bit for bit; normal weights to 8 eps)"
    )
    def _():
        import subprocess

        cases = {
            "homo": ((1.0,), np.float32),
            "uniform": ((-0.4, 1.3), np.float32),
            "normal": ((0.5, 0.2), np.float64),
        }
        code = (
            "import sys, numpy as np, tiarray.operators as o\n"
            "for dist, (params, dt) in %r.items():\n"
            "    dt = np.dtype(dt)\n"
            "    m = getattr(o, 'jitc_todense_prob_' + dist)(*[dt.type(p) for p in params], 0.1, 77, shape=(500, 400))\n"
            "    np.save(f'/tmp/_jitc_cpu_{dist}.npy', np.asarray(m))\n"
        ) % {k: (v[0], np.dtype(v[1]).str) for k, v in cases.items()}
        env = dict(os.environ, TIARRAY_ARCH="cpu")
        # -P: the checkout's tiarray/ (without operators/) must not shadow the installed package
        r = subprocess.run([sys.executable, "-P", "-c", code], env=env, capture_output=True, text=True)
        assert r.returncode == 0, r.stderr[-2000:]
        bad, notes = [], []
        for dist, (params, dt) in cases.items():
            cpu = np.load(f"/tmp/_jitc_cpu_{dist}.npy")
            gpu = getattr(tops, "jitc_todense_prob_" + dist)(
                *[ta.asarray(np.asarray(p, dt), device=cuda0) for p in params], 0.1, 77, shape=(500, 400)
            )
            gpu = np.asarray(gpu)
            if not np.array_equal(gpu != 0, cpu != 0):
                bad.append(
                    f"{dist}: the connectivity differs ({int((gpu != 0).sum())} vs {int((cpu != 0).sum())})"
                )
            elif dist == "normal":
                # the normal weights pass through log and cos: libm's on the CPU, libdevice's
                # on CUDA, which differ in the last bits (seen: 2.2e-16 on weights ~0.5)
                diff = np.abs(gpu.astype(np.float64) - cpu)
                if diff.max() > 8 * np.finfo(np.float64).eps:
                    bad.append(f"normal: weights differ by up to {diff.max():.3g} (allowed 8 eps)")
                else:
                    notes.append(f"normal weights equal to {diff.max():.2g}")
            elif not np.array_equal(gpu.view(np.uint8), cpu.view(np.uint8)):
                diff = np.abs(gpu.astype(np.float64) - cpu)
                ulps = np.abs(
                    gpu.view(np.int64 if gpu.itemsize == 8 else np.int32).astype(np.int64)
                    - cpu.view(np.int64 if cpu.itemsize == 8 else np.int32).astype(np.int64)
                )
                bad.append(
                    f"{dist}: same connectivity, {int((gpu != cpu).sum())} weights differ "
                    f"(max {diff.max():.3g}, {int(ulps.max())} ulp)"
                )
        assert not bad, "; ".join(bad)
        if have_torch:  # and the event product on the GPU agrees with the CPU's matrix
            cpu = np.load("/tmp/_jitc_cpu_homo.npy")
            x = torch.rand(500, device="cuda", dtype=torch.float32) < 0.3
            y = tops.jitc_event_mv_prob_homo(
                x, torch.tensor(1.0, device="cuda"), 0.1, 77, shape=(500, 400), transpose=True
            )
            np.testing.assert_allclose(y.cpu().numpy(), cpu.T @ x.cpu().numpy(), rtol=1e-5)
        return "; ".join(notes)

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
        out = f(jnp.float32(2.0), x)  # 2 * 3 + 3 + 1
        assert float(out[0]) == 10.0 and float(out[-1]) == 10.0, (float(out[0]), float(out[-1]))
        eager = axpy(2.0, jnp.arange(4.0, dtype=jnp.float32), jnp.ones(4, jnp.float32))
        np.testing.assert_allclose(np.asarray(eager), [1, 3, 5, 7])

    @check("DLPack JAX <-> tiarray on GPU: same address, read-only import, lifetimes, ordering")
    def _():
        if not gpus:
            return "skip: JAX has no GPU backend here"
        n = 1000
        j = jnp.arange(n, dtype=jnp.float32)
        t = ta.asarray(j)
        assert t.ptr == j.unsafe_buffer_pointer() and t.device == cuda0 and t.readonly
        np.testing.assert_array_equal(np.asarray(t), np.arange(n, dtype=np.float32))
        z = ta.asarray(np.arange(n, dtype=np.float32), device=cuda0)
        live = _dlpack.live_exports()
        y = jax.dlpack.from_dlpack(z)
        assert y.unsafe_buffer_pointer() == z.ptr, (y.unsafe_buffer_pointer(), z.ptr)
        assert next(iter(y.devices())).platform == "gpu"
        del z
        gc.collect()
        np.testing.assert_array_equal(np.asarray(y), np.arange(n, dtype=np.float32))
        del y
        gc.collect()
        assert _dlpack.live_exports() == live
        del j
        gc.collect()
        np.testing.assert_array_equal(np.asarray(t), np.arange(n, dtype=np.float32))
        m = 1 << 22  # export right after a long kernel: JAX must wait for it
        v = float(jax.dlpack.from_dlpack(slow_copy(ta.ones((m,), dtype=ta.float32))).sum())
        assert v == float(m), f"JAX read tiarray's output before its kernel finished: sum {v}"
        big = jnp.ones((4096, 4096), jnp.float32)
        w = big
        for _ in range(20):  # a queue of XLA work on its stream, then the import
            w = w @ big * (1.0 / 4096)
        got = float(ta.sum(ta.asarray(w), dtype=ta.float64))
        assert got == 4096.0 * 4096.0, f"tiarray read JAX's array before XLA computed it: sum {got}"

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

    # ------------------------------------------------------------------ CuPy, numba
    try:
        import cupy

        have_cupy = cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:
        have_cupy = False

    @check("DLPack and __cuda_array_interface__ CuPy <-> tiarray: same address, writes visible, lifetimes")
    def _():
        if not have_cupy:
            return "skip: CuPy not installed"
        n = 1000
        c = cupy.arange(n, dtype=cupy.float32)
        t = ta.asarray(c)
        assert t.ptr == c.data.ptr and t.device == cuda0
        t *= 2.0
        assert bool((c == 2 * cupy.arange(n, dtype=cupy.float32)).all())
        z = ta.zeros((n,), dtype=ta.float32)
        live = _dlpack.live_exports()
        y = cupy.from_dlpack(z)
        assert y.data.ptr == z.ptr
        y += 1.0
        assert float(ta.sum(z)) == n
        del z
        gc.collect()
        assert float(y.sum()) == n
        del y
        gc.collect()
        assert _dlpack.live_exports() == live
        # __cuda_array_interface__: cupy.asarray reads it (no DLPack)
        u = ta.ones((n,), dtype=ta.float64)
        a = cupy.asarray(u)
        assert a.data.ptr == u.ptr and a.dtype == cupy.float64 and float(a.sum()) == n
        v = ta.asarray(np.arange(12.0).reshape(3, 4), device=cuda0).T  # strided view
        b = cupy.asarray(v)
        assert b.data.ptr == v.ptr and b.strides == (8, 32)
        np.testing.assert_array_equal(cupy.asnumpy(b), np.arange(12.0).reshape(3, 4).T)

    @check("__cuda_array_interface__ numba.cuda <-> tiarray: same address both ways")
    def _():
        try:
            from numba import cuda as ncuda

            if not ncuda.is_available():
                return "skip: numba.cuda sees no GPU"
        except Exception as e:
            return f"skip: numba.cuda unavailable ({type(e).__name__}: {e})"
        n = 256
        u = ta.full((n,), 4.0, dtype=ta.float32)
        d = ncuda.as_cuda_array(u)
        assert d.device_ctypes_pointer.value == u.ptr
        np.testing.assert_array_equal(d.copy_to_host(), np.full(n, 4.0, np.float32))
        h = ncuda.to_device(np.arange(n, dtype=np.float32))
        t = ta.asarray(h)
        assert t.ptr == h.device_ctypes_pointer.value
        np.testing.assert_array_equal(np.asarray(t), np.arange(n, dtype=np.float32))

    @check("DLPack CuPy: stream ordering under load (non-blocking stream, both directions)")
    def _():
        if not have_cupy:
            return "skip: CuPy not installed"
        spin = cupy.RawKernel(
            r"""
            extern "C" __global__ void spin_fill(float* x, float v, long long cycles, long long n) {
                long long start = clock64();
                while (clock64() - start < cycles) { }
                for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n;
                     i += (long long)gridDim.x * blockDim.x) x[i] = v;
            }""",
            "spin_fill",
        )
        n = 1 << 22
        s = cupy.cuda.Stream(non_blocking=True)
        with s:
            c = cupy.zeros(n, dtype=cupy.float32)
            spin((1,), (256,), (c, cupy.float32(7.0), cupy.int64(50_000_000), cupy.int64(n)))
            got = float(ta.sum(ta.asarray(c), dtype=ta.float64))
        assert got == 7.0 * n, f"tiarray read CuPy's array before CuPy's stream wrote it: sum {got}"
        z = slow_copy(ta.ones((n,), dtype=ta.float32))
        with s:
            v = float(cupy.from_dlpack(z).sum())
        assert v == float(n), f"CuPy read tiarray's output before its kernel finished: sum {v}"

    @check("cupy: the CuPy operator tests (pytest -m cupy tests/operators/test_operator_cupy.py)")
    def _():
        if not have_cupy:
            return "skip: CuPy not installed"
        if no_suite:
            return "skip: --no-suite (the CUDA suite run includes them)"
        import subprocess

        env = dict(os.environ, TIARRAY_ARCH="cuda")
        here = os.path.dirname(os.path.abspath(__file__))
        r = subprocess.run(
            [sys.executable, "-P", "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "cupy",
             os.path.join(here, "..", "tests", "operators", "test_operator_cupy.py")],
            env=env, capture_output=True, text=True,
        )  # fmt: skip
        print(r.stdout[-3000:], r.stderr[-2000:])
        assert r.returncode == 0, "pytest -m cupy failed"

    fails = sum(1 for r in RESULTS if r[0] == "FAIL")
    print("\nSUMMARY")
    for status, name, msg in RESULTS:
        print(f"{status:4s}  {name}  {msg}")
    return fails


if __name__ == "__main__":
    sys.exit(main())
