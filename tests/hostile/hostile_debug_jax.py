"""Debug mode under ``jax.jit`` (``TIARRAY_DEBUG=1``): the XLA FFI handler runs its
launches checked too, and the error reaches the caller with the operator and argument."""

import os

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti

assert os.environ.get("TIARRAY_DEBUG") == "1", "run by test_hostile_input, with TIARRAY_DEBUG=1"


@ti.kernel
def _double(x: ti.types.ndarray(ndim=1), out: ti.types.ndarray(ndim=1)):
    for i in x:
        out[i] = x[i] * 2


short = ta.Operator("double_short", kernel=_double, outs=lambda x: ta.ShapeDtype((x.shape[0] // 2,), x.dtype))
double = ta.Operator("double", kernel=_double, outs=lambda x: ta.ShapeDtype(x.shape, x.dtype))


def test_jit_reports_the_operator_and_the_argument():
    for _ in range(2):
        with pytest.raises(
            Exception, match=r"double_short: the kernel accessed argument 'out' out of bounds at index \[4\]"
        ):
            jax.block_until_ready(jax.jit(short)(jnp.arange(8.0)))
    np.testing.assert_array_equal(jax.jit(double)(jnp.arange(4.0)), [0.0, 2.0, 4.0, 6.0])
    g = jax.grad(lambda x: jnp.sum(double(x)))(jnp.arange(3.0))
    np.testing.assert_array_equal(g, [2.0, 2.0, 2.0])
