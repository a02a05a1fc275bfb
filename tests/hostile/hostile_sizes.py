"""Sizes past Taichi's 32-bit indices: a clear error, never a crash or a silent zero.

Inputs this large are broadcast views (stride 0) wherever possible, so that the cases
need no memory.
"""

import numpy as np
import pytest
import taichi as ti
import tiarray.operators.sparse as sp

import tiarray as ta

BIG = 2**31  # one element more than a Taichi kernel's array can hold


@ti.kernel
def _plus1(x: ti.types.ndarray(), out: ti.types.ndarray()):
    for i in x:
        out[i] = x[i] + ti.u8(1)


plus1 = ta.Operator("plus1", kernel=_plus1, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))


def test_operator_refuses_an_input_taichi_cannot_index():
    # taichi 1.7 does not even launch a kernel with a 2**31-element array: the output came
    # back as zeros
    big = np.broadcast_to(np.zeros(1, np.uint8), (BIG,))
    with pytest.raises(
        ValueError, match=r"plus1: argument 'x' has 2147483648 elements .* at most 2147483647"
    ):
        plus1(big)
    np.testing.assert_array_equal(plus1(np.arange(3, dtype=np.uint8)), [1, 2, 3])  # still works


def test_operator_refuses_an_output_taichi_cannot_index():
    op = ta.Operator("grow", kernel=_plus1, outs=lambda x: ta.ShapeDtype((BIG,), x.dtype))
    with pytest.raises(ValueError, match=r"grow: argument 'out' has 2147483648 elements"):
        op(np.zeros(4, np.uint8))


@pytest.mark.parametrize("dist", ["homo", "uniform", "normal"])
@pytest.mark.parametrize("transpose", [False, True])
def test_jitc_todense_refuses_a_matrix_past_2_31_elements(dist, transpose):
    # each side below 2**31 passed validation and the product (>= 2**32) segfaulted
    f = getattr(sp, f"jitc_todense_prob_{dist}")
    params = {"homo": (1.0,), "uniform": (0.0, 1.0), "normal": (0.0, 1.0)}[dist]
    for shape in [(2**16, 2**16 + 1), (2**31 - 1, 2)]:
        with pytest.raises(ValueError, match=rf"jitc_todense_prob_{dist}: argument 'out' has \d+ elements"):
            f(*params, 0.1, 0, shape=shape, transpose=transpose)
    small = f(*params, 0.5, 3, shape=(5, 4), transpose=transpose)
    assert small.shape == ((4, 5) if transpose else (5, 4))
