"""TiArray attributes and Python protocols, against NumPy."""

import numpy as np
import pytest

import tiarray as ta


def test_attributes():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    t = ta.asarray(x)
    assert (t.ndim, t.shape, t.size, t.dtype, t.device) == (3, (2, 3, 4), 24, ta.float32, ta.Device("cpu"))
    assert t.nbytes == x.nbytes
    np.testing.assert_array_equal(np.asarray(t.mT), np.swapaxes(x, -1, -2))
    m = t[0]
    np.testing.assert_array_equal(np.asarray(m.T), x[0].T)
    assert m.T.ptr == m.ptr  # a view
    with pytest.raises(ValueError, match="2-D"):
        _ = t.T
    with pytest.raises(ValueError, match="at least 2"):
        _ = ta.asarray(np.ones(3)).mT


def test_namespace():
    t = ta.zeros(2)
    assert t.__array_namespace__() is ta
    assert t.__array_namespace__(api_version="2024.12") is ta
    assert t.__array_namespace__(api_version="2025.12") is ta
    with pytest.raises(ValueError, match="api_version"):
        t.__array_namespace__(api_version="2099.01")
    assert ta.__array_api_version__ == "2025.12"


def test_scalar_conversions():
    assert float(ta.asarray(2.5)) == 2.5
    assert int(ta.asarray(7)) == 7
    assert bool(ta.asarray(True)) is True
    assert complex(ta.asarray(1 + 2j)) == 1 + 2j
    assert [0, 1, 2][ta.asarray(2)] == 2
    with pytest.raises(TypeError, match="one element"):
        bool(ta.zeros(3))
    with pytest.raises(TypeError, match="integer"):
        [0, 1][ta.asarray(1.0)]
    with pytest.raises(TypeError, match="complex"):
        float(ta.asarray(1j))


def test_len_iter_repr():
    t = ta.asarray(np.arange(6).reshape(3, 2))
    assert len(t) == 3
    assert [r.tolist() for r in t] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(TypeError, match="0-d"):
        len(ta.asarray(1.0))
    r = repr(ta.asarray(np.array([1.5, 2.0], np.float32)))
    assert r == "TiArray([1.5, 2. ], dtype=float32)"
    assert "readonly" in repr(ta.asarray(np.broadcast_to(np.ones(2), (2, 2))))


def test_hash_and_construction_refused():
    with pytest.raises(TypeError):
        hash(ta.zeros(1))
    with pytest.raises(TypeError, match="asarray"):
        ta.TiArray()


@pytest.mark.parametrize(
    "key",
    [
        1, -1, slice(None), slice(1, None, 2), (Ellipsis, 1), (None, 0), (slice(None, None, -1), 2),
        (1, slice(None), None), (), Ellipsis, (slice(5, 1, -2),), (slice(10, 20),),
    ],
)  # fmt: skip
def test_basic_indexing_views_match_numpy(key):
    x = np.arange(60, dtype=np.int32).reshape(4, 5, 3)
    t = ta.asarray(x)
    v = t[key]
    ref = x[key]
    np.testing.assert_array_equal(np.asarray(v), ref)
    assert v.shape == ref.shape
    if ref.size:
        assert v.ptr == ref.__array_interface__["data"][0]


def test_basic_indexing_errors():
    t = ta.zeros((2, 3))
    with pytest.raises(IndexError, match="out of bounds for axis 1"):
        t[0, 3]
    with pytest.raises(IndexError, match="too many indices"):
        t[0, 0, 0]
    with pytest.raises(IndexError, match="Ellipsis"):
        t[..., ...]


def test_basic_setitem():
    x = np.zeros((3, 4))
    t = ta.asarray(x)
    t[1] = 5.0
    t[:, 0] = ta.asarray(np.array([1.0, 2.0, 3.0]))
    t[2, 1:3] = 7
    ref = np.zeros((3, 4))
    ref[1] = 5.0
    ref[:, 0] = [1, 2, 3]
    ref[2, 1:3] = 7
    np.testing.assert_array_equal(x, ref)
    with pytest.raises(TypeError, match="float"):
        ta.zeros(3, dtype=ta.int32)[0] = 1.5


def test_to_device_same_device_is_identity():
    t = ta.zeros(3)
    assert t.to_device("cpu") is t
    assert t.to_device(ta.Device("cpu")) is t


def test_creation_basics():
    np.testing.assert_array_equal(
        np.asarray(ta.full((2, 2), 3, dtype=ta.int16)), np.full((2, 2), 3, np.int16)
    )
    np.testing.assert_array_equal(np.asarray(ta.ones(3, dtype=ta.bool)), np.ones(3, bool))
    np.testing.assert_array_equal(np.asarray(ta.zeros_like(ta.ones((2, 3)))), np.zeros((2, 3)))
    assert ta.full(2, 1 + 1j).dtype == ta.complex128
    np.testing.assert_array_equal(
        np.asarray(ta.full(3, 2.5 - 1j, dtype=ta.complex64)), np.full(3, 2.5 - 1j, np.complex64)
    )
    assert ta.empty_like(ta.zeros(4, dtype=ta.uint8)).dtype == ta.uint8
    with pytest.raises(TypeError, match="fill_value"):
        ta.full(3, "x")
