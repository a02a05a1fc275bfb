"""Debug mode (``TIARRAY_DEBUG=1``, set by tests/core/test_hostile_input.py for this child):
a kernel that reads or writes past an array raises an error naming the operator and the
argument, instead of overrunning the heap.

The overrun cases crashed the interpreter before (glibc "corrupted size vs. prev_size",
"double free or corruption"): Taichi's CPU bounds check reports an access but does not stop
it, so debug mode runs launches on guarded copies.
"""

import os

import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti

assert os.environ.get("TIARRAY_DEBUG") == "1", "run by test_hostile_input, with TIARRAY_DEBUG=1"


@ti.kernel
def _double(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
    for i in x:
        out[i] = x[i] * 2


@ti.kernel
def _axpy(a: ti.f64, x: ti.types.ndarray(ndim=1), y: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
    for i in out:
        out[i] = a * x[i] + y[i]


# the bug of the issue: the declared output is smaller than what the kernel writes
short = ta.Operator("double_short", kernel=_double, outs=lambda x: ta.ShapeDtype((x.shape[0] // 2,), x.dtype))
double = ta.Operator("double", kernel=_double, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))
axpy = ta.Operator("axpy", kernel=_axpy, outs=lambda a, x, y: ta.ShapeDtype(x.shape, x.dtype))


def test_an_output_smaller_than_the_kernel_writes_is_named():
    for _ in range(3):  # and again: nothing was corrupted by the first
        with pytest.raises(
            IndexError,
            match=r"double_short: the kernel accessed argument 'out' out of bounds at index \[4\]; its shape is \(4,\)",
        ):
            short(np.arange(8.0))
    np.testing.assert_array_equal(double(np.arange(4.0)), [0.0, 2.0, 4.0, 6.0])


def test_inputs_of_different_lengths_are_named():
    # reading y past its end was silent
    with pytest.raises(
        IndexError, match=r"axpy: the kernel accessed argument 'y' out of bounds at index \[3\]"
    ):
        axpy(2.0, np.ones(6), np.ones(3))
    np.testing.assert_array_equal(axpy(2.0, np.ones(3), np.arange(3.0)), [2.0, 3.0, 4.0])


def test_a_plain_launch_and_the_array_api_still_work_checked():
    x = ta.arange(10.0)
    assert float(ta.sum(x)) == 45.0
    np.testing.assert_array_equal(np.asarray(ta.cumulative_sum(x)), np.cumsum(np.arange(10.0)))
    np.testing.assert_array_equal(np.asarray(x[::-2] * 2), np.arange(10.0)[::-2] * 2)


def test_a_failed_checked_launch_leaves_the_callers_memory_alone():
    out = np.full(4, -1.0)
    from tiarray._launch import launcher

    with pytest.raises(IndexError, match=r"argument 'out' out of bounds"):
        launcher(_double)(np.arange(8.0), out)
    np.testing.assert_array_equal(out, [-1.0] * 4)  # the guarded copy was not copied back


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_negative_float_events_raise_no_false_overflow_report(dtype, capfd):
    # the events' sign bit was shifted out to test them: debug mode printed "Shift left
    # overflow detected" for every negative event (2026-12-05); now masked
    import tiarray.operators.sparse as sp

    w, idx, ptr = np.arange(1.0, 6.0, dtype=dtype), np.array([0, 2, 1, 2, 0]), np.array([0, 2, 3, 3, 5])
    ev = np.array([-1.5, -0.0, 2.0, -4.0], dtype)
    ev64 = np.zeros(128, dtype)
    ev64[70] = -3.0  # a whole block of 64 events tested at once
    got = sp.event_csrmv(w, idx, ptr, ev, shape=(4, 3), transpose=True)
    blk = sp.event_csrmv(
        dtype(1.0), np.zeros(128, np.int64), np.arange(129), ev64, shape=(128, 1), transpose=True
    )
    np.testing.assert_allclose(got, [1 * -1.5 + 5 * -4.0, 0.0, 2 * -1.5 + 4 * -4.0])
    np.testing.assert_allclose(blk, [-3.0])
    out, err = capfd.readouterr()
    assert "overflow" not in (out + err).lower(), out + err
