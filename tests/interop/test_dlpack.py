"""The DLPack protocol itself: capsule versions, flags, one-time consumption, lifetimes."""

import ctypes
import gc

import numpy as np
import pytest

import tiarray as ta
from tiarray import _dlpack


def _managed(cap, name):
    get = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
        ("PyCapsule_GetPointer", ctypes.pythonapi)
    )
    return get(cap, name)


def test_versioned_capsule_when_consumer_allows():
    t = ta.asarray(np.arange(6.0).reshape(2, 3), copy=True)
    cap = t.__dlpack__(max_version=(1, 0))
    addr = _managed(cap, b"dltensor_versioned")
    m = _dlpack.DLManagedTensorVersioned.from_address(addr)
    assert m.version.major == 1
    assert m.flags & _dlpack.FLAG_READ_ONLY == 0
    dl = m.dl_tensor
    assert dl.data == t.ptr
    assert dl.ndim == 2
    assert [dl.shape[i] for i in range(2)] == [2, 3]
    assert [dl.strides[i] for i in range(2)] == [3, 1]
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == (2, 64, 1)
    assert (dl.device.device_type, dl.device.device_id) == (1, 0)


def test_legacy_capsule_without_max_version():
    t = ta.zeros(3, dtype=ta.int16)
    cap = t.__dlpack__()
    addr = _managed(cap, b"dltensor")
    m = _dlpack.DLManagedTensor.from_address(addr)
    assert m.dl_tensor.data == t.ptr
    assert (m.dl_tensor.dtype.code, m.dl_tensor.dtype.bits) == (0, 16)


def test_readonly_flag_is_set():
    x = np.arange(3.0)
    x.flags.writeable = False
    cap = ta.asarray(x).__dlpack__(max_version=(1, 1))
    m = _dlpack.DLManagedTensorVersioned.from_address(_managed(cap, b"dltensor_versioned"))
    assert m.flags & _dlpack.FLAG_READ_ONLY


def test_copy_true_sets_is_copied_and_copies():
    t = ta.asarray(np.arange(4.0), copy=True)
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    m = _dlpack.DLManagedTensorVersioned.from_address(_managed(cap, b"dltensor_versioned"))
    assert m.flags & _dlpack.FLAG_IS_COPIED
    assert m.dl_tensor.data != t.ptr


def test_capsule_is_consumed_once():
    t = ta.asarray(np.arange(4.0), copy=True)
    cap = t.__dlpack__(max_version=(1, 0))
    a = ta.asarray(cap)  # a raw capsule is accepted by asarray
    assert a.ptr == t.ptr
    with pytest.raises(BufferError, match="already consumed"):
        ta.asarray(cap)


def test_unconsumed_capsule_releases_export():
    t = ta.zeros(10)
    n = _dlpack.live_exports()
    cap = t.__dlpack__(max_version=(1, 0))
    assert _dlpack.live_exports() == n + 1
    del cap
    gc.collect()
    assert _dlpack.live_exports() == n


def test_imported_capsule_deleter_runs_once_when_views_die():
    t = ta.zeros(10)
    n = _dlpack.live_exports()
    a = ta.asarray(t.__dlpack__(max_version=(1, 0)))
    v = a[2:5]
    del a
    gc.collect()
    assert _dlpack.live_exports() == n + 1  # the view still holds the import
    del v
    gc.collect()
    assert _dlpack.live_exports() == n


def test_stream_on_cpu_is_an_error():
    with pytest.raises(BufferError, match="stream"):
        ta.zeros(2).__dlpack__(stream=5)


def test_dl_device_other_than_own_without_copy():
    with pytest.raises(BufferError, match="copy=False"):
        ta.zeros(2).__dlpack__(dl_device=(2, 0), copy=False)


def test_dlpack_device():
    assert ta.zeros(2).__dlpack_device__() == (1, 0)


def test_unsupported_dlpack_dtype():
    class Producer:
        def __init__(self):
            self.a = np.zeros(3, np.float32)

        def __dlpack_device__(self):
            return (1, 0)

        def __dlpack__(self, **kw):
            # a capsule whose dtype has lanes=4 (a vector type)
            cap = ta.asarray(self.a).__dlpack__()
            m = _dlpack.DLManagedTensor.from_address(_managed(cap, b"dltensor"))
            m.dl_tensor.dtype.lanes = 4
            return cap

    with pytest.raises(TypeError, match="lanes=4"):
        ta.from_dlpack(Producer())


class _Producer:
    """An array-like that exports a capsule made by NumPy (``__dlpack__`` + device)."""

    def __init__(self, a):
        self.a = a

    def __dlpack__(self, **kw):
        return self.a.__dlpack__(**kw)

    def __dlpack_device__(self):
        return self.a.__dlpack_device__()


def test_imported_readonly_versioned_capsule_stays_readonly():
    # NumPy exports a read-only array only as a versioned capsule with FLAG_READ_ONLY: the
    # import must keep the flag (a TiArray that wrote into it would change the array)
    x = np.arange(5.0)
    x.flags.writeable = False
    cap = x.__dlpack__(max_version=(1, 0))
    m = _dlpack.DLManagedTensorVersioned.from_address(_managed(cap, b"dltensor_versioned"))
    assert m.flags & _dlpack.FLAG_READ_ONLY  # the producer did set it
    for t in (ta.asarray(cap), ta.from_dlpack(_Producer(x)), ta.asarray(_Producer(x))):
        assert t.readonly
        assert t.ptr == x.__array_interface__["data"][0]  # still zero-copy
        with pytest.raises(ValueError, match="read-only"):
            t[0] = 42.0
        assert not np.asarray(t).flags.writeable
    assert x.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_imported_writable_versioned_capsule_is_writable():
    x = np.arange(3.0)
    t = ta.from_dlpack(_Producer(x))
    assert not t.readonly
    t[1] = 7.0
    assert x[1] == 7.0
