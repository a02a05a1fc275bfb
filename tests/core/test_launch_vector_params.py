"""Launcher with vector-element ndarray parameters (used by the GEMM kernels)."""

import numpy as np

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants
from tiarray._launch import Launcher

V4 = ti.types.vector(4, ti.f32)


@ti.kernel
def _scale_rows(
    a: ti.types.ndarray(dtype=V4, ndim=1), out: ti.types.ndarray(dtype=ti.f32, ndim=2), k: ti.f32
):
    for i in range(a.shape[0]):
        v = a[i] * k
        for j in ti.static(range(4)):
            out[i, j] = v[j]


def test_vector_element_parameters_through_call():
    lau = Launcher(_scale_rows)
    a = np.arange(12, dtype=np.float32).reshape(3, 4)  # three vectors of 4
    out = np.zeros((3, 4), np.float32)
    lau(ta.asarray(a), ta.asarray(out), 2.0)
    np.testing.assert_array_equal(out, 2 * a)


def test_compile_options_reach_the_compiler():
    # the opposite of the global fast_math must not change results; the spec compiles with
    # a copied config and leaves the program's own config alone
    from tiarray._backend import config_with as _config_with
    from tiarray._backend import program_config

    ta.zeros(1)
    glob = program_config().fast_math
    lau = Launcher(_scale_rows, compile_options={"fast_math": not glob})
    a = np.ones((2, 4), np.float32)
    out = np.zeros((2, 4), np.float32)
    lau(ta.asarray(a), ta.asarray(out), 3.0)
    np.testing.assert_array_equal(out, 3 * a)
    cfg = _config_with(program_config(), {"fast_math": not glob})
    assert cfg.fast_math is (not glob) and program_config().fast_math is glob
