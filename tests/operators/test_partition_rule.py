"""``Operator(partition=...)``: parsing and validation of the rule (no framework needed).

How a rule partitions a computation is tested on 4 JAX devices in
``tests/multidevice/jax_sharding.py``.
"""

import re

import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants under TIARRAY_BACKEND

nd = ti.types.ndarray


@ti.kernel
def _axpy(alpha: ti.f32, x: nd(ndim=1), y: nd(ndim=1), out: nd(ndim=1)):
    for i in x:
        out[i] = alpha * x[i] + y[i]


def _outs(alpha, x, y):
    return ta.ShapeDtype(x.shape, x.dtype)


def _op(rule):
    return ta.Operator("pr_axpy", kernel=_axpy, outs=_outs, partition=rule)


def test_rule_is_parsed_into_entries_and_map_factors():
    op = _op(", i, i -> i")
    r = op.partition
    assert r.text == ", i, i -> i"
    assert r.ins == ((), ("i",), ("i",)) and r.outs == (("i",),)
    assert r.map_factors == frozenset({"i"}) and r.n_in == 3


def test_map_factors_are_those_in_an_input_and_an_output():
    @ti.kernel
    def _mm(x: nd(ndim=2), w: nd(ndim=2), out: nd(ndim=2)):
        for b, m in out:
            for k in range(x.shape[1]):
                out[b, m] += x[b, k] * w[k, m]

    op = ta.Operator(
        "pr_mm",
        kernel=_mm,
        outs=lambda x, w: ta.ShapeDtype((x.shape[0], w.shape[1]), x.dtype),
        partition="... b k, k m -> ... b m",
    )
    assert op.partition.map_factors == frozenset({"...", "b", "m"})
    assert op.partition.shardy_text(op.partition.ins, op.partition.outs) == (
        "... b k, k m -> ... b m",
        ("k",),
    )
    # the rule does not change what the operator computes
    x, w = np.ones((2, 3), np.float32), np.ones((3, 4), np.float32)
    np.testing.assert_array_equal(op(x, w), x @ w)


def test_ellipsis_axes_are_right_aligned():
    from tiarray.operators._partition import PartitionRule

    class _P:
        def __init__(self, name, arr):
            self.name, self.is_array = name, arr

    r = PartitionRule("op", "... i -> ... i", [_P("x", True), _P("out", True)])
    assert r.dim_factors(("...", "i"), 3, "op", "x") == (("...", 1), ("...", 0), "i")
    assert r.dim_factors(("...", "i"), 1, "op", "x") == ("i",)
    with pytest.raises(
        ValueError, match=re.escape("op: the partition rule '... i -> ... i' gives x at least 1 axes")
    ):
        r.dim_factors(("...", "i"), 0, "op", "x")
    with pytest.raises(ValueError, match=r"gives x 1 axes \(i\), but it has 2"):
        r.dim_factors(("i",), 2, "op", "x")


@pytest.mark.parametrize(
    "rule, err, msg",
    [
        (3, TypeError, "argument 'partition' must be a str such as 'i, i -> i', got int 3"),
        ("i, i, i", ValueError, "must contain '->' once"),
        ("i -> i -> i", ValueError, "must contain '->' once"),
        (
            "i, i -> i",
            ValueError,
            "has 2 input and 1 output entries; the kernel has 4 parameters (alpha, x, y, out)",
        ),
        ("a, i, i -> i", ValueError, "'alpha' is a scalar parameter, its entry must be empty, got 'a'"),
        (", 1i, i -> i", ValueError, "factor '1i' in ', 1i, i -> i' is not a name"),
        (", i ..., i -> i", ValueError, "'...' may only begin an entry"),
        (", i i, i -> i", ValueError, "a factor appears twice in the entry 'i i'"),
    ],
)
def test_bad_rules_raise_naming_the_operator(rule, err, msg):
    with pytest.raises(err, match=re.escape("Operator('pr_axpy'): argument 'partition'")) as e:
        _op(rule)
    assert msg in str(e.value)
