"""Memory shared between frameworks lives exactly as long as someone holds it, and
round trips do not leak."""

import gc
import resource
import weakref

import numpy as np
import pytest

import tiarray as ta
from tiarray import _dlpack


def rss_mb() -> float:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / 2**20


def test_owner_freed_when_last_view_dies():
    t = ta.zeros(1000)
    ref = weakref.ref(t.base)
    v = t[10:20].T if t.ndim == 2 else t[10:20]
    del t
    gc.collect()
    assert ref() is not None
    del v
    gc.collect()
    assert ref() is None


def test_numpy_export_keeps_memory_alive():
    t = ta.asarray(np.arange(100.0), copy=True)
    ref = weakref.ref(t.base)
    y = np.from_dlpack(t)
    del t
    gc.collect()
    assert ref() is not None
    np.testing.assert_array_equal(y, np.arange(100.0))
    del y
    gc.collect()
    assert ref() is None


def test_100k_round_trips_leave_memory_flat():
    x = np.ones(256, np.float32)
    n0 = _dlpack.live_exports()

    def trip():
        t = ta.asarray(x)
        y = np.from_dlpack(t)
        z = ta.from_dlpack(y)
        w = np.from_dlpack(ta.asarray(z.__dlpack__(max_version=(1, 0))))
        return w

    for _ in range(2000):
        trip()
    gc.collect()
    before = rss_mb()
    for _ in range(100_000):
        trip()
    gc.collect()
    after = rss_mb()
    assert _dlpack.live_exports() == n0
    assert after - before < 8, f"resident memory grew by {after - before:.1f} MB"


def test_100k_torch_round_trips_leave_memory_flat(torch):
    x = torch.ones(256)
    n0 = _dlpack.live_exports()

    def trip():
        t = ta.asarray(x)
        return torch.from_dlpack(ta.asarray(torch.from_dlpack(t)))

    for _ in range(2000):
        trip()
    gc.collect()
    before = rss_mb()
    for _ in range(100_000):
        trip()
    gc.collect()
    after = rss_mb()
    assert _dlpack.live_exports() == n0
    assert after - before < 8, f"resident memory grew by {after - before:.1f} MB"


def test_recycled_buffers_never_alias_live_numpy_views():
    # Large result buffers are recycled when their owner dies; memory still seen through
    # a NumPy view (or anything built on one) must not be handed out again.
    n = 1 << 20
    t = ta.full((n,), 1.0, dtype=ta.float32)
    a = np.asarray(t)
    s = np.asarray(ta.full((n,), 7.0, dtype=ta.float32))[10:20]  # a slice of a dead array's view
    del t
    gc.collect()
    others = [ta.full((n,), 2.0, dtype=ta.float32) for _ in range(4)]
    assert (a == 1.0).all() and (s == 7.0).all()
    for o in others:
        assert not np.shares_memory(np.asarray(o), a)


@pytest.mark.cpu_only("a NumPy view of tiarray's memory")
def test_recycled_buffers_never_alias_torch_views(torch):
    n = 1 << 20
    t = ta.full((n,), 1.0, dtype=ta.float32)
    x = torch.from_numpy(np.asarray(t))
    y = torch.from_dlpack(ta.full((n,), 3.0, dtype=ta.float32))
    del t
    gc.collect()
    others = [ta.full((n,), 2.0, dtype=ta.float32) for _ in range(4)]
    assert bool((x == 1.0).all()) and bool((y == 3.0).all())
    assert all(o.ptr not in (x.data_ptr(), y.data_ptr()) for o in others)


def test_small_buffers_from_slabs_are_aligned_disjoint_and_live_on():
    from tiarray import _buffer

    # many small results: 64-byte aligned, never overlapping, values kept after the other
    # buffers of their slab die (the slab lives as long as any of its buffers)
    keep, refs = [], []
    for i in range(3000):  # more than one slab
        t = ta.full((i % 37 + 1,), float(i))
        assert t.ptr % _buffer.ALIGNMENT == 0
        (keep if i % 7 == 0 else refs).append(t)
    spans = sorted((t._byte_extent(), id(t)) for t in keep + refs)
    for ((_, hi), _a), ((lo, _), _b) in zip(spans, spans[1:]):
        assert hi <= lo, "two live arrays share memory"
    del refs
    gc.collect()
    for t in keep:
        i = int(t[0])
        assert i % 7 == 0 and np.array_equal(np.asarray(t), np.full(i % 37 + 1, float(i)))
    # an exported view keeps its buffer (and slab) alive after the TiArray dies
    t = ta.arange(5.0)
    y = np.from_dlpack(t)
    del t, keep
    gc.collect()
    for _ in range(2000):
        ta.full((8,), -1.0)
    np.testing.assert_array_equal(y, np.arange(5.0))
