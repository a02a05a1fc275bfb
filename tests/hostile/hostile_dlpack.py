"""Malformed DLPack capsules and producers: a clear error at import, never a crash later.

Capsules are made by tiarray's own exporter and then corrupted field by field (the
``DLTensor`` is plain memory behind the capsule), so every case is a capsule a buggy
producer could hand over. Each case runs in a child process (tests/core/test_hostile_input.py).
"""

import ctypes

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tiarray as ta
from tiarray import _dlpack as D


def _capsule(corrupt, *, versioned=True, base=None):
    """A capsule of ``base`` (default: 6 float64) whose DLTensor ``corrupt`` has changed."""
    a = ta.asarray(np.arange(6.0) if base is None else base)
    cap = a.__dlpack__(max_version=(1, 1) if versioned else None)
    name = b"dltensor_versioned" if versioned else b"dltensor"
    addr = D._PyCapsule_GetPointer(cap, name)
    m = (D.DLManagedTensorVersioned if versioned else D.DLManagedTensor).from_address(addr)
    corrupt(m.dl_tensor)
    return cap


def _set(field, value):
    def f(t):
        setattr(t, field, value)

    return f


def _shape0(value):
    def f(t):
        t.shape[0] = value

    return f


def _device(kind):
    def f(t):
        t.device.device_type = kind

    return f


MALFORMED = {
    "negative-shape": (_shape0(-5), r"asarray\(\): the DLPack capsule has a negative shape \(-5,\)"),
    "negative-ndim": (_set("ndim", -1), r"asarray\(\): the DLPack capsule has ndim = -1; expected 0 to 64"),
    "huge-ndim": (_set("ndim", 1 << 20), r"has ndim = 1048576; expected 0 to 64"),
    "NULL-shape": (_set("shape", None), r"has ndim = 1 but no shape \(a NULL pointer\)"),
    "NULL-data": (_set("data", None), r"describes 6 element\(s\) of shape \(6,\) at address NULL"),
    "unknown-device": (_device(99), r"DLPack device type 99 \(unknown\) is not supported"),
    "CUDA-on-a-CPU-runtime": (_device(2), r"lives on cuda:0 but Taichi runs on the CPU"),
}


@pytest.mark.parametrize("versioned", [True, False])
@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_capsule_is_refused_at_import(case, versioned):
    corrupt, msg = MALFORMED[case]
    cap = _capsule(corrupt, versioned=versioned)
    with pytest.raises((BufferError, ValueError), match=msg):
        ta.asarray(cap)
    # consumed by the failed import: its deleter ran, it cannot be imported twice
    with pytest.raises(BufferError, match="already consumed"):
        ta.asarray(cap)


def test_an_empty_capsule_may_have_a_null_pointer():
    cap = _capsule(_set("data", None), base=np.zeros((0, 3)))
    x = ta.asarray(cap)
    assert x.shape == (0, 3) and x.size == 0
    assert ta.sum(x) == 0


def test_a_capsule_of_another_kind_is_named():
    other = D._PyCapsule_New(12345, b"some.other.capsule", None)
    with pytest.raises(
        TypeError, match=r"expected a DLPack capsule .* got a capsule named 'some.other.capsule'"
    ):
        ta.asarray(other)


class Producer:
    """A DLPack producer whose two methods can be made to misbehave."""

    def __init__(self, device=(1, 0), error=None, capsule=None):
        self.device, self.error, self.capsule = device, error, capsule

    def __dlpack_device__(self):
        if isinstance(self.device, Exception):
            raise self.device
        return self.device

    def __dlpack__(self, **kw):
        if self.error is not None:
            raise self.error
        if self.capsule is not None:
            return self.capsule
        return np.arange(3.0).__dlpack__(max_version=kw.get("max_version"))


@pytest.mark.parametrize("device", [None, (1,), "cpu", (1, 0, 0), (1.0, 0), (True, 0)])
def test_a_bad_dlpack_device_names_the_producer(device):
    with pytest.raises(
        BufferError, match=r"asarray\(\): the result of Producer.__dlpack_device__\(\) must be a DLPack"
    ):
        ta.asarray(Producer(device=device))
    np.testing.assert_array_equal(np.asarray(ta.asarray(Producer())), [0.0, 1.0, 2.0])  # the good one works


def test_the_producer_s_own_exception_is_wrapped_and_chained():
    with pytest.raises(
        BufferError, match=r"the producer \(Producer\) failed in __dlpack__\(\): RuntimeError: boom"
    ) as e:
        ta.from_dlpack(Producer(error=RuntimeError("boom")))
    assert isinstance(e.value.__cause__, RuntimeError)
    with pytest.raises(BufferError, match=r"failed in __dlpack_device__\(\): KeyError"):
        ta.asarray(Producer(device=KeyError("x")))
    with pytest.raises(BufferError, match=r"Producer.__dlpack__\(\) must return a DLPack capsule, got int"):
        ta.asarray(Producer(capsule=7))


def test_a_device_that_disagrees_with_the_capsule_is_refused():
    with pytest.raises(
        BufferError, match=r"__dlpack_device__\(\) says cuda:0, but its capsule describes memory on cpu"
    ):
        ta.asarray(Producer(device=(2, 0)), device="cpu")


@pytest.mark.parametrize("dl_device", ["cpu", (1,), 1, (1, "0")])
def test_export_checks_dl_device(dl_device):
    x = ta.arange(3.0)
    with pytest.raises(BufferError, match=r"__dlpack__\(\): argument 'dl_device' must be a DLPack"):
        x.__dlpack__(dl_device=dl_device)
    y = ta.asarray(x.__dlpack__(dl_device=(1, 0), max_version=(1, 0)))
    assert y.ptr == x.ptr  # the well-formed request shares the memory


def test_a_read_only_array_is_never_writable_through_a_legacy_capsule():
    a = np.arange(3.0)
    a.flags.writeable = False
    t = ta.asarray(a)
    # a legacy capsule cannot say "read-only": its consumer gets a copy ...
    y = ta.asarray(t.__dlpack__())
    y[0] = 42
    np.testing.assert_array_equal(a, [0.0, 1.0, 2.0])
    assert not y.readonly and y.ptr != t.ptr
    # ... or, where no copy is allowed, an error; a versioned capsule shares the memory read-only
    with pytest.raises(BufferError, match=r"read-only, which a legacy .* copy=False was given"):
        t.__dlpack__(copy=False)
    z = ta.asarray(t.__dlpack__(max_version=(1, 0), copy=False))
    assert z.readonly and z.ptr == t.ptr
    with pytest.raises(ValueError, match="read-only"):
        z[0] = 42


def test_a_read_only_versioned_capsule_stays_read_only_through_numpy():
    a = np.arange(4.0)
    a.flags.writeable = False
    n = np.from_dlpack(ta.asarray(a))
    assert not n.flags.writeable and np.shares_memory(n, a)


_CODES = st.sampled_from([0, 1, 2, 4, 5, 6, 7, 8, 9, 200])  # int, uint, float, bfloat, complex, bool, ...


@given(
    ndim=st.integers(-3, 6),
    dims=st.lists(st.integers(-2, 4), min_size=6, max_size=6),
    code=_CODES,
    bits=st.sampled_from([0, 1, 7, 8, 16, 32, 64, 128, 255]),
    lanes=st.sampled_from([0, 1, 2, 4]),
    device=st.sampled_from([0, 1, 2, 3, 4, 13, 99]),
    null_data=st.booleans(),
    versioned=st.booleans(),
)
def test_random_capsule_headers_import_or_raise(ndim, dims, code, bits, lanes, device, null_data, versioned):
    # 64 KiB hold every C-contiguous shape drawn (at most 4**6 elements of at most 16 bytes)
    buf = np.zeros(8192)
    shape_arr = (ctypes.c_int64 * 6)(*dims)

    def corrupt(t):
        t.ndim = ndim
        t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
        t.strides = None
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, lanes
        t.device.device_type = device
        t.data = None if null_data else buf.ctypes.data

    cap = _capsule(corrupt, versioned=versioned, base=buf)
    try:
        x = ta.asarray(cap)
    except (BufferError, TypeError, ValueError):
        return
    # accepted: then the header was sane, and the view says exactly what it said
    assert 0 <= ndim <= 6 and all(d >= 0 for d in dims[:ndim])
    assert x.shape == tuple(dims[:ndim])
    assert x.dtype.itemsize * 8 == bits and lanes == 1 and device == 1
    if x.size:
        assert not null_data
        c = ta.asarray(x, copy=True)  # reads the memory: inside buf
        assert c.shape == x.shape


def test_export_checks_its_keywords():
    x = ta.arange(3.0)
    with pytest.raises(
        ValueError, match=r"__dlpack__\(\): argument 'copy' must be True, False or None, got 'yes'"
    ):
        x.__dlpack__(copy="yes")
    with pytest.raises(
        TypeError, match=r"__dlpack__\(\): argument 'max_version' must be None or a \(major, minor\)"
    ):
        x.__dlpack__(max_version=1)
