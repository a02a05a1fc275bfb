"""The kernel launcher: correctness of both CPU variants, signatures, errors, threads."""

import os
import threading

import numpy as np
import pytest
from _operator_cases import tasks_kernel

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants under TIARRAY_BACKEND
from tiarray._launch import KernelSignatureError, Launcher, kernel_arg


@ti.kernel
def _axpy(
    alpha: ti.f32, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)
):
    for i in x:
        out[i] = alpha * x[i] + y[i]


@ti.kernel
def _scale2d(x: ti.types.ndarray(dtype=ti.f64, ndim=2), k: ti.template()):
    for i, j in x:
        x[i, j] = x[i, j] * k


@ti.kernel
def _grouped(x: ti.types.ndarray(ndim=3)):
    for I in ti.grouped(x):
        x[I] += I[0] * 100 + I[1] * 10 + I[2]


@ti.kernel
def _prefix_serial_semantics(x: ti.types.ndarray(dtype=ti.i64, ndim=1)):
    # depends on order: only correct when the loop runs serially
    ti.loop_config(serialize=True)
    for i in range(1, x.shape[0]):
        x[i] += x[i - 1]


def test_axpy_matches_numpy_both_variants():
    launcher = Launcher(_axpy)
    for n in (16, 100_000):  # serial and parallel variants
        x = np.random.default_rng(n).standard_normal(n).astype(np.float32)
        y = np.random.default_rng(n + 1).standard_normal(n).astype(np.float32)
        out = np.zeros(n, np.float32)
        launcher(2.5, x, y, out)
        np.testing.assert_allclose(out, 2.5 * x + y, rtol=1e-6)


def test_a_spec_reads_every_changed_pointer_and_shape():
    # a spec's launch context re-sets only what changed: a new pointer of the same size and
    # shape is written where the context keeps it, a new shape goes through Taichi's setter;
    # arguments keep their memory alive, so every call here is on new addresses
    launcher = Launcher(_axpy)
    spec = launcher.spec([(ta.float32, 1, False)] * 3, (), serial=True)
    rng = np.random.default_rng(3)
    keep = []
    for n in (5, 5, 5, 9, 9, 5, 5, 0, 5, 9):
        x, y = rng.standard_normal(n).astype(np.float32), rng.standard_normal(n).astype(np.float32)
        out = np.full(n, np.nan, np.float32)
        spec.launch([1.5, *((a.ctypes.data, a.nbytes, a.shape) for a in (x, y, out))])
        np.testing.assert_array_equal(out, np.float32(1.5) * x + y)
        keep += [x, y, out]
    if ta.backend() == "taichi" and os.environ.get("TIARRAY_NATIVE", "") not in ("0", "launch"):
        assert isinstance(spec._direct, tuple)  # these launches called the compiled tasks


def test_direct_launches_run_every_task_in_order_on_new_memory():
    # after Taichi's first launch of a context, a spec calls the kernel's compiled tasks
    # itself: each call here is on new memory, of two sizes
    launcher = Launcher(tasks_kernel)
    spec = launcher.spec([(ta.float64, 1, False)] * 3, (), serial=False)
    keep = []
    for k, n in enumerate((200_000, 200_000, 200_000, 100_002, 100_002, 200_000)):
        x = np.arange(float(n)) + k
        out, tot = np.full(n, np.nan), np.full(1, np.nan)
        spec.launch([(a.ctypes.data, a.nbytes, a.shape) for a in (x, out, tot)])
        want = 2 * x + 1
        np.testing.assert_array_equal(out, want)
        assert tot[0] == 2 * (1 + want.sum())  # integers below 2**53: exact in any order
        keep += [x, out, tot]
    if ta.backend() == "taichi" and os.environ.get("TIARRAY_NATIVE", "") not in ("0", "launch"):
        assert isinstance(spec._direct, tuple) and len(spec._direct[0]) == 5


@pytest.mark.skipif(ta.backend() != "taichi", reason="taichi's C++ layout")
def test_the_program_impl_is_the_first_match_of_the_scan():
    # the scan of a Program's words for its ProgramImpl (an object whose +8 points at the
    # Program's +40) may run past the Program into objects that match too: the first match
    # is the member. A fake Program of 4 KiB with two matching objects, and one with none.
    import ctypes

    from tiarray._backend import _taichi as B

    prog = (ctypes.c_uint64 * 512)()
    base = ctypes.addressof(prog)
    impls = [(ctypes.c_uint64 * 4)(0, base + 40, 0, 0) for _ in range(2)]
    prog[87] = ctypes.addressof(impls[0])  # +696, as in the taichi 1.7.4 wheel
    prog[464] = ctypes.addressof(impls[1])  # +3712, past the real Program (seen there)
    saved = dict(B._impl_of)
    try:
        B._impl_of.clear()
        assert B._program_impl(base) == ctypes.addressof(impls[0])
        B._impl_of.clear()
        prog[87] = 0
        assert B._program_impl(base) == ctypes.addressof(impls[1])
        B._impl_of.clear()
        prog[464] = 0
        assert B._program_impl(base) == 0
    finally:
        B._impl_of.clear()
        B._impl_of.update(saved)


def test_one_array_passed_twice_keeps_taichis_launch():
    # the argument buffer holds that pointer twice: no unique place to write it
    launcher = Launcher(_axpy)
    spec = launcher.spec([(ta.float32, 1, False)] * 3, (), serial=True)
    x = np.arange(6, dtype=np.float32)
    for a in (1.0, 2.0, 3.0):
        spec.launch([a, *((v.ctypes.data, v.nbytes, v.shape) for v in (x, x, x))])  # in place
    np.testing.assert_array_equal(x, np.arange(6, dtype=np.float32) * 2 * 3 * 4)
    assert not isinstance(spec._direct, tuple)


def test_explicit_serial_and_parallel_specs_agree():
    launcher = Launcher(_axpy)
    x, y = ta.asarray(np.arange(1000, dtype=np.float32)), ta.asarray(np.ones(1000, np.float32))
    outs = []
    for serial in (True, False):
        out = ta.zeros(1000, dtype=ta.float32)
        spec = launcher.spec([(ta.float32, 1, False)] * 3, (), serial=serial)
        spec.launch([3.0, kernel_arg(x), kernel_arg(y), kernel_arg(out)])
        outs.append(np.asarray(out).copy())
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(outs[0], 3.0 * np.arange(1000) + 1)


def test_serial_threshold_scales_with_kernel_speed():
    """``use_serial(nbytes, speed)``: the threshold times the kernel's speed and the pool's
    size factor (1 at 2 threads); ``0`` keeps every launch parallel, whatever the speed."""
    from tiarray import _launch, _runtime

    _runtime.ensure_init()
    if not _runtime.is_cpu():
        pytest.skip("serial variants exist on the CPU only")
    ln = Launcher(_axpy)
    old = ta.set_serial_threshold(1000)
    try:
        f = _launch._thread_factor()
        assert ln.use_serial(1000) and not ln.use_serial(1001)
        if f != float("inf"):
            edge = int(1000 * 24 * f)
            assert ln.use_serial(edge, 24.0) and not ln.use_serial(edge + 24, 24.0)
        ta.set_serial_threshold(0)
        assert not ln.use_serial(1, 24.0) and not ln.use_serial(1)
    finally:
        ta.set_serial_threshold(old)


def test_elementwise_serial_choice_follows_the_operation_cost():
    """A cheap operation streams: its contiguous launches stay serial up to ~STREAM times
    the byte threshold; a costly one (atan, ~10 ns an element) goes parallel much sooner."""
    from tiarray import _launch, _runtime
    from tiarray._kernels import elementwise_plan as E

    _runtime.ensure_init()
    f32 = ta.float32
    cheap = E._make_plan("add", (f32, f32))
    costly = E._make_plan("atan", (f32,))
    assert cheap.speed == _launch.STREAM
    assert costly.speed < 1.0
    assert E._make_plan("atan", (ta.float64,)).speed < 1.0
    if not _runtime.is_cpu() or _launch._thread_factor() == float("inf"):
        return
    for key in (("atan", f32), ("add", f32, f32)):
        E._PLANS.pop(key, None)  # fresh plans: only this test's launches in their specs
    x = ta.asarray(np.linspace(-2, 2, 60_000, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(ta.atan(x)), np.arctan(np.asarray(x)), rtol=2e-6, atol=1e-7)
    np.testing.assert_array_equal(np.asarray(ta.add(x, x)), np.asarray(x) * 2)
    modes = {
        k: {key[-1] for key in E._PLANS[k].specs if key[0] == "v"} for k in (("atan", f32), ("add", f32, f32))
    }
    assert modes[("atan", f32)] == {False}  # 480 KB of atan: parallel
    assert modes[("add", f32, f32)] == {True}  # 720 KB of add: serial


def test_struct_for_rewrites_in_serial_variant():
    x = np.zeros((2, 3, 4), np.float32)
    Launcher(_grouped)(x)
    i, j, k = np.indices(x.shape)
    np.testing.assert_array_equal(x, i * 100 + j * 10 + k)
    y = np.ones((3, 4))
    Launcher(_scale2d)(y, k=3.0)
    np.testing.assert_array_equal(y, np.full((3, 4), 3.0))


def test_templates_select_specialisations():
    launcher = Launcher(_scale2d)
    a, b = np.ones((2, 2)), np.ones((2, 2))
    launcher(a, k=2.0)
    launcher(b, k=5.0)
    assert a[0, 0] == 2.0 and b[0, 0] == 5.0
    with pytest.raises(TypeError, match="static"):
        launcher(a)


def test_user_serialised_loop_is_kept():
    x = np.ones(50_000, np.int64)
    Launcher(_prefix_serial_semantics)(x)
    np.testing.assert_array_equal(x, np.arange(1, 50_001))


def test_signature_errors_name_the_argument():
    launcher = Launcher(_scale2d)
    with pytest.raises(KernelSignatureError, match="argument 'x' must have dtype f64"):
        launcher(np.ones((2, 2), np.float32), k=1.0)
    with pytest.raises(KernelSignatureError, match="argument 'x' must have ndim=2"):
        launcher(np.ones(3), k=1.0)
    with pytest.raises(TypeError, match="positional"):
        Launcher(_axpy)(1.0, np.ones(2, np.float32))


def test_non_contiguous_arrays_are_written_back():
    base = np.ones((4, 6))
    view = base[:, ::2]  # not contiguous
    Launcher(_scale2d)(view, k=4.0)
    np.testing.assert_array_equal(base[:, ::2], 4.0)
    np.testing.assert_array_equal(base[:, 1::2], 1.0)


def test_arrays_from_torch_and_jax(torch, jax):
    x = torch.arange(8, dtype=torch.float32)
    y = ta.asarray(jax.numpy.ones(8, dtype=jax.numpy.float32))  # read-only input is fine
    out = torch.zeros(8)
    Launcher(_axpy)(2.0, x, y, out)
    assert torch.equal(out, 2 * torch.arange(8, dtype=torch.float32) + 1)


class _CountingKernel:
    """A spec's Taichi kernel, counting the launch contexts made from it."""

    def __init__(self, kernel):
        self.kernel, self.made = kernel, 0

    def make_launch_context(self):
        self.made += 1
        return self.kernel.make_launch_context()


@pytest.mark.parametrize("device", ["cpu", "other"])
def test_launch_contexts_are_reused_on_the_cpu_only(monkeypatch, device):
    # Taichi's CUDA launcher leaves a launched context pointing at freed device memory: the
    # next launch on it segfaulted (first CUDA run, 2026-12-04). Off the CPU every launch
    # gets a fresh context, with every argument set; on the CPU one context is reused.
    from tiarray import _launch, _runtime

    ta.asarray(0.0)  # Taichi started
    if device == "other":
        monkeypatch.setattr(_runtime, "is_cpu", lambda: False)
    monkeypatch.setattr(_launch, "_REUSE", [None])
    assert _launch.reuse_contexts() is (device == "cpu")
    spec = Launcher(_axpy).spec([(ta.float32, 1, False)] * 3, (), serial=True)
    spec.t_kernel = counting = _CountingKernel(spec.t_kernel)
    rng = np.random.default_rng(3)
    x, y = (ta.asarray(rng.standard_normal(100).astype(np.float32)) for _ in range(2))
    out = ta.zeros(100, dtype=ta.float32)
    for alpha in (2.0, -1.0, -1.0):  # the same arguments again: a fresh context gets them all
        out[...] = 0.0
        spec.launch([alpha, kernel_arg(x), kernel_arg(y), kernel_arg(out)])
        np.testing.assert_allclose(np.asarray(out), alpha * np.asarray(x) + np.asarray(y), rtol=1e-6)
    assert counting.made == (1 if device == "cpu" else 3)


def test_concurrent_launches_from_threads():
    # Taichi started on the main thread, as tiarray's docs ask (started on a worker, it would
    # refuse later ti.fields on this one: test_runtime's worker-thread test)
    ta.init() if not ta.is_initialized() else None
    launcher = Launcher(_axpy)
    errors = []

    def work(seed):
        rng = np.random.default_rng(seed)
        for _ in range(50):
            n = int(rng.integers(1, 5000))
            x = rng.standard_normal(n).astype(np.float32)
            y = rng.standard_normal(n).astype(np.float32)
            out = np.zeros(n, np.float32)
            launcher(1.5, x, y, out)
            if not np.allclose(out, 1.5 * x + y, rtol=1e-6):
                errors.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


def test_complex_arrays_are_real_pairs():
    @ti.kernel
    def conj_(z: ti.types.ndarray(dtype=ti.f64, ndim=2)):
        for i in range(z.shape[0]):
            z[i, 1] = -z[i, 1]

    z = np.array([1 + 2j, 3 - 4j])
    Launcher(conj_)(z)
    np.testing.assert_array_equal(z, np.array([1 - 2j, 3 + 4j]))


def test_bfloat16_cannot_be_passed():
    t = ta.zeros(4, dtype=ta.bfloat16)
    with pytest.raises(KernelSignatureError, match="bfloat16"):
        Launcher(_axpy)(1.0, t, t, t)
