"""Operators on CuPy arrays (needs CuPy, a CUDA GPU and Taichi on CUDA).

Run in their own process with Taichi on CUDA: ``TIARRAY_ARCH=cuda pytest -m cupy``.
"""

import cupy  # noqa: E402  (conftest ignores this file where cupy is not installed)
import numpy as np
import pytest
from _operator_cases import affine, axpy, axpy_ref, split, split_ref  # noqa: E402

import tiarray as ta  # noqa: E402
from tiarray import _runtime  # noqa: E402

pytestmark = pytest.mark.cupy


@pytest.fixture(scope="module", autouse=True)
def _needs_taichi_cuda():
    if _runtime.current_device().kind != "cuda":
        pytest.skip("Taichi runs on the CPU in this process; run with TIARRAY_ARCH=cuda")


def test_forward_and_output_kind():
    x = cupy.arange(16, dtype=cupy.float32)
    y = cupy.ones(16, dtype=cupy.float32)
    out = axpy(2.0, x, y)
    assert isinstance(out, cupy.ndarray) and out.dtype == cupy.float32 and out.device.id == x.device.id
    np.testing.assert_allclose(cupy.asnumpy(out), axpy_ref(2.0, cupy.asnumpy(x), cupy.asnumpy(y)))


def test_static_and_multiple_outputs():
    x = cupy.asarray(np.random.default_rng(0).standard_normal(9))
    np.testing.assert_allclose(cupy.asnumpy(affine(x, mode="scale")), 2 * cupy.asnumpy(x))
    a, b = split(x)
    ra, rb = split_ref(cupy.asnumpy(x))
    np.testing.assert_allclose(cupy.asnumpy(a), ra)
    np.testing.assert_allclose(cupy.asnumpy(b), rb)


def test_stream_ordering_on_a_non_default_stream():
    n = 1 << 22
    s = cupy.cuda.Stream(non_blocking=True)
    with s:
        for _ in range(5):
            x = cupy.ones(n, dtype=cupy.float32)
            x *= 3  # queued on s: the launch must wait for it
            out = axpy(2.0, x, x)
            out += 1  # queued on s after the launch: must see its result
        s.synchronize()
    assert float(out[0]) == 10.0 and float(out[-1]) == 10.0


def test_mixed_with_numpy_raises():
    with pytest.raises(TypeError, match="two frameworks"):
        axpy(1.0, cupy.ones(2, cupy.float32), np.ones(2, np.float32))


def test_tiarray_kernel_signature_error():
    with pytest.raises(ta.KernelSignatureError):
        from _operator_cases import typed

        typed(cupy.ones((2, 2), cupy.float64))
