"""Sizes past Taichi's 32-bit indices: a clear error, never a crash or a silent zero.

Inputs this large are broadcast views (stride 0) wherever possible, so that the cases
need no memory.
"""

import numpy as np
import pytest
import tiarray.operators.sparse as sp

import tiarray as ta
from tiarray._internal import ti  # the backend's language

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


# np.zeros of this size is calloc'ed: untouched pages cost no memory, and every case is
# refused before a kernel reads them
@pytest.fixture(scope="module")
def big_bytes():
    return ta.asarray(np.zeros(BIG + 5, np.uint8))


REFUSED = {
    "sum": lambda x: ta.sum(x),
    "count_nonzero": lambda x: ta.count_nonzero(x),
    "max": lambda x: ta.max(x),
    "argmax": lambda x: ta.argmax(x),
    "any": lambda x: ta.any(x),
    "cumulative_sum": lambda x: ta.cumulative_sum(x),
    "nonzero": lambda x: ta.nonzero(x),
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_reductions_and_scans_refuse_arrays_taichi_cannot_index(big_bytes, name):
    # sum gave 2013265935 for 2**31 + 5 ones' worth of memory; cumulative_sum and nonzero
    # crashed the interpreter
    with pytest.raises(ValueError, match=rf"{name}\(\): an operand of 2147483653 elements is too large"):
        REFUSED[name](big_bytes)


def test_a_large_broadcast_view_touches_one_element_and_is_reduced_exactly():
    # the rule is about the memory a kernel indexes: a stride-0 view of 2**31 + 5 elements
    # indexes one, and its reductions are right
    x = ta.broadcast_to(ta.asarray(np.ones(1, np.uint8)), (BIG + 5,))
    assert int(ta.sum(x)) == BIG + 5
    assert int(ta.count_nonzero(x)) == BIG + 5
    rows = ta.sum(ta.broadcast_to(ta.asarray(np.ones((1, 1), np.uint8)), (2, BIG + 5)), axis=1)
    np.testing.assert_array_equal(np.asarray(rows), [BIG + 5, BIG + 5])
