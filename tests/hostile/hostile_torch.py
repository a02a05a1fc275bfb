"""A torch tensor whose storage is swapped or reallocated under a TiArray view.

The view used to hold the tensor, not its storage: ``set_``, ``.data = ...`` and
``resize_`` freed the memory under it (segmentation faults). Each case runs in a child
process (tests/core/test_hostile_input.py).
"""

import gc

import numpy as np
import pytest
import torch

import tiarray as ta

N = 1 << 20  # large enough that freed memory goes back to the system (a crash if read)


def _view():
    x = torch.arange(N, dtype=torch.float64)
    return x, ta.asarray(x)


def test_set_keeps_the_old_storage_alive_for_the_view():
    x, v = _view()
    x.set_(torch.zeros(3, dtype=torch.float64))
    gc.collect()
    junk = torch.ones(N, dtype=torch.float64)  # reuses freed memory, if any was freed
    assert float(ta.sum(v)) == N * (N - 1) / 2  # what the view saw when it was made
    assert v.base is x  # users still see the tensor as the owner
    np.testing.assert_array_equal(x.numpy(), [0.0, 0.0, 0.0])
    del junk


def test_data_assignment_keeps_the_old_storage_alive_for_the_view():
    x, v = _view()
    x.data = torch.zeros(3, dtype=torch.float64)
    gc.collect()
    junk = torch.ones(N, dtype=torch.float64)
    assert float(ta.sum(v)) == N * (N - 1) / 2
    del junk


def test_resizing_a_viewed_cpu_tensor_is_refused_by_torch():
    # resize_ reallocated the storage and freed the view's memory; a TiArray view pins
    # the storage as tensor.numpy() does, so torch refuses, with its own error
    x, v = _view()
    with pytest.raises(RuntimeError, match="Trying to resize storage that is not resizable"):
        x.resize_(N * 64)
    assert float(ta.sum(v)) == N * (N - 1) / 2
    b = torch.zeros(5, dtype=torch.bfloat16)  # every dtype, those NumPy lacks included
    ta.asarray(b)
    with pytest.raises(RuntimeError, match="not resizable"):
        b.resize_(N)
    x.resize_(N // 2)  # shrinking keeps the memory: allowed, and the view still reads it
    assert float(ta.sum(v)) == N * (N - 1) / 2


def test_a_view_whose_memory_was_reallocated_is_refused():
    # what CUDA storages rely on (they cannot be pinned from Python): MemoryKeeper.check
    # compares the storage's address with the view's where memory is handed out (NumPy
    # views, DLPack) and in the element-wise and reduction launchers; other kernels do not
    # check (a documented limit for CUDA tensors resized under a view)
    x, v = _view()
    uses = (lambda: ta.sum(v), lambda: v + 1, lambda: np.asarray(v), lambda: v.__dlpack__(max_version=(1, 0)))
    for use in uses:
        use()  # warm: plans cached, as in a loop
    v._npv = None
    v._owner.data += 8  # as if the storage had moved
    for use in uses:
        with pytest.raises(RuntimeError, match=r"the memory of this array was freed: the Tensor it views"):
            use()


def test_views_of_a_tensor_see_its_in_place_writes():
    x, v = _view()
    x[0] = 42.0
    assert float(v[0]) == 42.0
    v[1] = 7.0
    assert float(x[1]) == 7.0


def test_an_operator_refuses_tensors_of_a_device_it_has_not_run_on():
    # after a call on CPU tensors, meta tensors of the same dtype and shape took the CPU
    # plan (its key read only is_cuda): their null data pointer reached the kernel (a crash)
    from tiarray._internal import ti  # the backend's language: taichi, or quadrants

    @ti.kernel
    def _double(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
        for i in x:
            out[i] = 2 * x[i]

    op = ta.Operator("h_double", kernel=_double, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))
    x = torch.arange(16, dtype=torch.float32)
    for _ in range(3):
        np.testing.assert_array_equal(op(x).numpy(), 2 * np.arange(16, dtype=np.float32))
    for _ in range(2):
        with pytest.raises(TypeError, match="h_double: tensors on device 'meta' are not supported"):
            op(torch.ones(16, device="meta"))
    if torch.backends.mkldnn.is_available():
        with pytest.raises(TypeError, match="h_double: argument 'x' has layout torch._mkldnn"):
            op(torch.ones(16).to_mkldnn())
    np.testing.assert_array_equal(op(x).numpy(), 2 * np.arange(16, dtype=np.float32))
