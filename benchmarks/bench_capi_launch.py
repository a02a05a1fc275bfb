"""Taichi's C API as a launch route, next to tiarray's launcher: per-call cost on 16 elements.

    python benchmarks/bench_capi_launch.py

The taichi wheel ships ``libtaichi_c_api.so``: an AOT module (``ti.aot.Module(ti.x64)``) of
a kernel can be loaded and launched through it from the same process, on memory imported
zero-copy (``ti_import_cpu_memory``). A native XLA/torch handler could call it without
Python; this script measures whether that would be cheap enough (issue: <= 3 us per call).

Rows (the same ``axpy`` on 16 float32 elements, serial loop, every route checked against
NumPy first): tiarray's ``spec.launch`` (what the Operators use; the baseline), the C API's
``ti_launch_kernel`` + ``ti_wait`` called through ctypes, ``ti_launch_kernel`` alone, and
one ``ti_import_cpu_memory`` (a launch on new memory needs one per array). ctypes adds
about 0.3 us per call to the C API rows. taichi backend only.
"""

import ctypes
import os
import tempfile

import _harness  # noqa: F401  (sets the Taichi environment first)
import numpy as np
import taichi as ti
from _harness import fmt_us, machine_line, print_table, timeit

import tiarray as ta
from tiarray._launch import Launcher, kernel_arg

N = 16
_vp = ctypes.c_void_p


@ti.kernel
def axpy(a: ti.f32, x: ti.types.ndarray(dtype=ti.f32, ndim=1), y: ti.types.ndarray(dtype=ti.f32, ndim=1)):
    ti.loop_config(serialize=True)
    for i in range(x.shape[0]):
        y[i] = a * x[i] + y[i]


class _Shape(ctypes.Structure):
    _fields_ = [("dim_count", ctypes.c_uint32), ("dims", ctypes.c_uint32 * 16)]


class _NdArray(ctypes.Structure):
    _fields_ = [("memory", _vp), ("shape", _Shape), ("elem_shape", _Shape), ("elem_type", ctypes.c_int)]


class _Value(ctypes.Union):
    _fields_ = [
        ("i32", ctypes.c_int32),
        ("f32", ctypes.c_float),
        ("ndarray", _NdArray),
        ("pad", ctypes.c_uint8 * 136),
    ]


class _Arg(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("value", _Value)]


def _capi():
    root = os.path.join(os.path.dirname(ti.__file__), "_lib", "c_api")
    os.environ.setdefault("TI_LIB_DIR", os.path.join(root, "runtime"))
    lib = ctypes.CDLL(os.path.join(root, "lib", "libtaichi_c_api.so"), mode=ctypes.RTLD_LOCAL)
    for name, res, args in (
        ("ti_create_runtime", _vp, [ctypes.c_int, ctypes.c_uint32]),
        ("ti_load_aot_module", _vp, [_vp, ctypes.c_char_p]),
        ("ti_get_aot_module_kernel", _vp, [_vp, ctypes.c_char_p]),
        ("ti_import_cpu_memory", _vp, [_vp, _vp, ctypes.c_size_t]),
        ("ti_launch_kernel", None, [_vp, _vp, ctypes.c_uint32, _vp]),
        ("ti_wait", None, [_vp]),
    ):
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    return lib


def main():
    if ta.backend() != "taichi":
        print("bench_capi_launch: the C API route is taichi's; skipped under", ta.backend())
        return
    ta.zeros(1)  # start Taichi through tiarray
    x = np.arange(N, dtype=np.float32)
    y = np.ones(N, np.float32)
    want = 2.0 * x + y

    launcher = Launcher(axpy)
    tx, ty = ta.asarray(x), ta.asarray(y.copy())
    spec = launcher.spec([(ta.float32, 1, False)] * 2, (), serial=True)
    vals = [2.0, kernel_arg(tx), kernel_arg(ty)]
    spec.launch(vals)
    np.testing.assert_array_equal(np.asarray(ty), want)

    lib = _capi()
    rt = lib.ti_create_runtime(4, 0)  # TI_ARCH_X64
    assert rt, "ti_create_runtime failed"
    with tempfile.TemporaryDirectory() as d:
        m = ti.aot.Module(ti.x64)
        m.add_kernel(axpy, name="axpy")
        m.save(d)
        mod = lib.ti_load_aot_module(rt, d.encode())
        assert mod, "ti_load_aot_module failed"
        kern = lib.ti_get_aot_module_kernel(mod, b"axpy")  # reads the module's files
        assert kern, "ti_get_aot_module_kernel failed"
    yc = y.copy()
    args = (_Arg * 3)()
    args[0].type, args[0].value.f32 = 1, 2.0  # TI_ARGUMENT_TYPE_F32
    for a, arr in ((args[1], x), (args[2], yc)):
        a.type = 2  # TI_ARGUMENT_TYPE_NDARRAY
        a.value.ndarray.memory = lib.ti_import_cpu_memory(rt, arr.ctypes.data, arr.nbytes)
        a.value.ndarray.shape.dim_count, a.value.ndarray.shape.dims[0] = 1, N
        a.value.ndarray.elem_type = 1  # TI_DATA_TYPE_F32
    lib.ti_launch_kernel(rt, kern, 3, args)
    lib.ti_wait(rt)
    np.testing.assert_array_equal(yc, want)

    def launch_wait():
        lib.ti_launch_kernel(rt, kern, 3, args)
        lib.ti_wait(rt)

    cases = [
        ("tiarray spec.launch (serial variant) [baseline]", lambda: spec.launch(vals)),
        ("C API ti_launch_kernel + ti_wait (ctypes)", launch_wait),
        ("C API ti_launch_kernel alone (ctypes)", lambda: lib.ti_launch_kernel(rt, kern, 3, args)),
        (
            "C API ti_import_cpu_memory, one array (ctypes)",
            lambda: lib.ti_import_cpu_memory(rt, x.ctypes.data, x.nbytes),
        ),
    ]
    times = {name: timeit(fn) for name, fn in cases}
    base = times[cases[0][0]]
    rows = [{"route": k, "us / call": fmt_us(t), "x baseline": f"{t / base:.2f}"} for k, t in times.items()]
    print(f"machine: {machine_line()}")
    print_table(
        f"Launching a serial axpy on {N} float32 elements", rows, ["route", "us / call", "x baseline"]
    )


if __name__ == "__main__":
    main()
