"""Taichi fields in: ``ta.asarray(field)`` / ``ta.from_dlpack(field)`` share the field's memory.

The fields are the running backend's (``taichi``'s, or ``quadrants``' under
``TIARRAY_BACKEND=quadrants``); quadrants fields beside a taichi backend are in
``test_quadrants.py``.

Every element kind (scalar, vector, matrix; AoS and SoA) and every dtype a Taichi field
holds. The reference is Taichi's own view of the field (``from_numpy``/``to_numpy`` and
element access ``f[i]``, which go through Taichi's accessors, not through the pointer).
Layouts that are not one strided array raise, and ``copy=True`` copies them.
"""

import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants

BACKEND = ti.__name__

DTYPES = {
    "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
}  # fmt: skip


@pytest.fixture(scope="module", autouse=True)
def _taichi_running():
    ta.zeros(1)  # tiarray's runtime is the Taichi program the fields are created in


def values(shape, dtype: str) -> np.ndarray:
    rng = np.random.default_rng(len(shape) + 7)
    return rng.integers(0, 100, size=shape).astype(dtype)


def make(kind: str, tdt, shape):
    if kind == "scalar":
        return ti.field(tdt, shape=shape), ()
    if kind == "vector":
        return ti.Vector.field(3, tdt, shape=shape), (3,)
    if kind == "vector-soa":
        return ti.Vector.field(3, tdt, shape=shape, layout=ti.Layout.SOA), (3,)
    if kind == "matrix":
        return ti.Matrix.field(2, 3, tdt, shape=shape), (2, 3)
    if kind == "matrix-soa":
        return ti.Matrix.field(2, 3, tdt, shape=shape, layout=ti.Layout.SOA), (2, 3)
    raise AssertionError(kind)


KINDS = ["scalar", "vector", "vector-soa", "matrix", "matrix-soa"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("dtype", list(DTYPES))
def test_field_view_every_kind_and_dtype(kind, dtype):
    f, elem = make(kind, getattr(ti, DTYPES[dtype]), (4, 5))
    ref = values((4, 5) + elem, dtype)
    f.from_numpy(ref)
    t = ta.asarray(f)
    assert t.shape == (4, 5) + elem
    assert t.dtype == getattr(ta, dtype)
    v = np.asarray(t)
    np.testing.assert_array_equal(v, ref)
    # the view is the field's memory: a write through NumPy is what Taichi reads back
    v[...] = values(v.shape, dtype)[::-1]
    np.testing.assert_array_equal(f.to_numpy(), v)
    # and a write by Taichi is what the view reads
    f.from_numpy(ref)
    np.testing.assert_array_equal(v, ref)
    # the same view through from_dlpack
    assert ta.from_dlpack(f).ptr == t.ptr


@pytest.mark.parametrize("shape", [(), (7,), (2, 3, 4)])
def test_field_shapes(shape):
    f = ti.field(ti.f32, shape=shape)
    ref = values(shape, "float32")
    f.from_numpy(ref)
    t = ta.asarray(f)
    assert t.shape == shape
    np.testing.assert_array_equal(np.asarray(t), ref)


def test_field_element_writes_both_ways():
    f = ti.Vector.field(2, ti.f32, shape=(3,))
    v = np.asarray(ta.asarray(f))
    f[1] = [5.0, 6.0]  # Taichi's accessor
    assert v[1].tolist() == [5.0, 6.0]
    v[2, 0] = 9.0
    assert f[2][0] == 9.0


def test_field_written_by_a_kernel_is_seen():
    f = ti.field(ti.i32, shape=(6,))

    @ti.kernel
    def fill():
        for i in f:
            f[i] = i * i

    t = ta.asarray(f)
    fill()
    np.testing.assert_array_equal(np.asarray(t), np.arange(6) ** 2)
    # and tiarray's own kernels compute on the field's memory
    t2 = ta.asarray(f)
    t2 += 1
    np.testing.assert_array_equal(f.to_numpy(), np.arange(6) ** 2 + 1)


def test_field_layouts_ordered_and_nested_dense():
    col = ti.field(ti.f64, shape=(4, 5), order="ji")  # column-major
    nested = ti.field(ti.f64)
    ti.root.dense(ti.i, 4).dense(ti.j, 5).place(nested)
    for f in (col, nested):
        ref = values((4, 5), "float64")
        f.from_numpy(ref)
        t = ta.asarray(f)
        np.testing.assert_array_equal(np.asarray(t), ref)
    assert ta.asarray(col)._strides == (1, 4)


def test_struct_of_members_in_one_dense_is_strided():
    a = ti.field(ti.f32)
    b = ti.field(ti.f64)
    ti.root.dense(ti.i, 5).place(a, b)  # AoS of (f32, f64): strides of 16 bytes
    a.from_numpy(np.arange(5, dtype=np.float32))
    b.from_numpy(np.arange(5, dtype=np.float64) * 2)
    ta_a, ta_b = ta.asarray(a), ta.asarray(b)
    assert ta_a._strides == (4,) and ta_b._strides == (2,)
    np.testing.assert_array_equal(np.asarray(ta_a), np.arange(5, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(ta_b), np.arange(5) * 2.0)


def not_dense_fields():
    ptr = ti.field(ti.f32)
    ti.root.pointer(ti.ij, 2).dense(ti.ij, 4).place(ptr)
    bm = ti.field(ti.i32)
    ti.root.bitmasked(ti.i, 8).place(bm)
    blocked = ti.field(ti.f32)
    ti.root.dense(ti.ij, 2).dense(ti.ij, 2).place(blocked)
    mixed = ti.Vector.field(3, ti.f32)
    other = ti.field(ti.f32)
    ti.root.dense(ti.i, 4).place(mixed.get_scalar_field(0))
    ti.root.dense(ti.i, 4).place(mixed.get_scalar_field(1))
    ti.root.dense(ti.i, 4).place(other)
    ti.root.dense(ti.i, 4).place(mixed.get_scalar_field(2))
    return {"pointer": ptr, "bitmasked": bm, "blocked": blocked, "mixed layout": mixed}


def test_not_dense_layouts_raise_and_copy():
    fields = not_dense_fields()
    for word, f in fields.items():
        with pytest.raises(
            ValueError, match=rf"asarray\(\).*cannot be shared without a copy.*{word}.*copy=True"
        ):
            ta.asarray(f)
        with pytest.raises(ValueError, match="cannot be shared without a copy"):
            ta.from_dlpack(f)
        ref = values(f.shape + ((f.n,) if word == "mixed layout" else ()), "float32").astype(
            f.to_numpy().dtype
        )
        f.from_numpy(ref)
        c = ta.asarray(f, copy=True)
        np.testing.assert_array_equal(np.asarray(c), f.to_numpy())
        if word != "pointer" and word != "bitmasked":
            np.testing.assert_array_equal(np.asarray(c), ref)


def test_copy_true_of_a_dense_field_is_a_copy():
    f = ti.field(ti.f32, shape=(3,))
    f.from_numpy(np.arange(3, dtype=np.float32))
    c = ta.asarray(f, copy=True)
    assert c.ptr != ta.asarray(f).ptr
    np.asarray(c)[0] = 7
    assert f[0] == 0


def test_view_keeps_the_field_alive():
    import gc

    f = ti.field(ti.f32, shape=(4,))
    f.from_numpy(np.arange(4, dtype=np.float32))
    t = ta.asarray(f)
    del f
    gc.collect()
    np.testing.assert_array_equal(np.asarray(t), np.arange(4, dtype=np.float32))


def test_field_to_torch_both_ways(torch):
    f = ti.Matrix.field(2, 2, ti.f32, shape=(3,))
    f.from_numpy(np.arange(12, dtype=np.float32).reshape(3, 2, 2))
    x = torch.from_dlpack(ta.asarray(f))
    assert x.shape == (3, 2, 2)
    torch.testing.assert_close(x, torch.arange(12, dtype=torch.float32).reshape(3, 2, 2))
    x.mul_(2)
    np.testing.assert_array_equal(f.to_numpy(), np.arange(12, dtype=np.float32).reshape(3, 2, 2) * 2)
    f[0] = [[-1.0, -2.0], [-3.0, -4.0]]
    assert x[0].tolist() == [[-1.0, -2.0], [-3.0, -4.0]]


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir(),
    )  # fmt: skip


@pytest.mark.parametrize("how", ["ti.reset()", "ti.init(arch=ti.cpu)"])
def test_field_of_a_reset_runtime_is_refused(how):
    r = _run(
        f"""
        import numpy as np, {BACKEND} as ti
        ti.init(arch=ti.cpu)
        early = ti.field(ti.f32, shape=(3,))  # before tiarray is imported
        import tiarray as ta
        ta.zeros(1)
        late = ti.Vector.field(2, ti.f32, shape=(3,))
        np.asarray(ta.asarray(early)); np.asarray(ta.asarray(late))
        {how}
        ti.init(arch=ti.cpu)
        for f in (early, late):
            try:
                ta.asarray(f)
            except ValueError as e:
                print("REFUSED", e)
            try:
                ta.asarray(f, copy=True)
            except ValueError as e:
                print("REFUSED-COPY")
        fresh = ti.field(ti.f32, shape=(2,))
        fresh.from_numpy(np.array([1.0, 2.0], np.float32))
        print("FRESH", np.asarray(ta.asarray(fresh)).tolist())
        """
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("REFUSED asarray(): argument 'obj'") == 2, r.stdout
    assert r.stdout.count("cannot be read") == 2 and "reset or re-initialised" in r.stdout
    assert r.stdout.count("REFUSED-COPY") == 2
    assert "FRESH [1.0, 2.0]" in r.stdout


def test_fields_of_destroyed_snode_trees():
    """A FieldsBuilder tree destroyed: its field is refused (reading it read freed memory and
    crashed), and the next tree, which takes the same tree id, gets its own address (its field
    was given the destroyed tree's buffer: garbage, then a segfault on writing, 2026-12-05)."""
    r = _run(
        f"""
        import numpy as np, {BACKEND} as ti
        import tiarray as ta
        ti.init(arch=ti.cpu)
        fb = ti.FieldsBuilder(); x = ti.field(ti.f32); fb.dense(ti.i, 8).place(x); tree = fb.finalize()
        ta.asarray(x)
        tree.destroy()
        for copy in (None, True):
            try:
                ta.asarray(x, copy=copy)
                print("READ")
            except ValueError as e:
                print("REFUSED", e)
        fb2 = ti.FieldsBuilder(); y = ti.field(ti.f32); fb2.dense(ti.i, 1 << 16).place(y); fb2.finalize()
        y.fill(5)
        a = np.asarray(ta.asarray(y))
        a[:] = 1
        print("NEW", a[:2].tolist(), y.to_numpy()[:2].tolist())
        """
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert "READ" not in r.stdout and r.stdout.count("SNode tree was destroyed") == 2, r.stdout
    assert "NEW [1.0, 1.0] [1.0, 1.0]" in r.stdout, r.stdout


def test_grad_and_dual_fields_are_views():
    """A field's .grad and .dual are fields of their own: they were refused as fields 'of a
    runtime that no longer runs' unless tiarray was imported after ti.init (2026-12-05)."""
    r = _run(
        f"""
        import numpy as np, {BACKEND} as ti
        import tiarray as ta
        ti.init(arch=ti.cpu)
        f = ti.field(ti.f32, shape=4, needs_grad=True, needs_dual=True)
        v = ti.Vector.field(2, ti.f32, shape=3, needs_grad=True)
        f.grad.fill(2.0); f.dual.fill(3.0); v.grad.fill(4.0)
        g, d, vg = np.asarray(ta.asarray(f.grad)), np.asarray(ta.asarray(f.dual)), np.asarray(ta.asarray(v.grad))
        g[0] = 7.0
        print("OK", g.tolist(), d.tolist(), vg.tolist(), f.grad.to_numpy().tolist())
        """
    )
    assert r.returncode == 0, r.stderr[-3000:]
    assert (
        "OK [7.0, 2.0, 2.0, 2.0] [3.0, 3.0, 3.0, 3.0] [[4.0, 4.0], [4.0, 4.0], [4.0, 4.0]] [7.0, 2.0, 2.0, 2.0]"
        in r.stdout
    ), r.stdout


def test_struct_fields_and_axes_out_of_order():
    """A Struct field raised a bare AttributeError ('no attribute vars'), also with copy=True,
    and a field placed on ti.j alone an IndexError (2026-12-05)."""
    s = ti.Struct.field({"a": ti.f32, "b": ti.i32}, shape=3)
    for copy in (None, True):
        with pytest.raises(
            TypeError, match=r"asarray\(\): argument 'obj' is a (quadrants )?StructField.*pass its members"
        ):
            ta.asarray(s, copy=copy)
    s.a.fill(2.0)
    np.testing.assert_array_equal(np.asarray(ta.asarray(s.a)), [2.0] * 3)
    z = ti.field(ti.i32)
    ti.root.dense(ti.j, 3).place(z)
    z.fill(4)
    with pytest.raises(ValueError, match="places axes"):
        ta.asarray(z)
    np.testing.assert_array_equal(np.asarray(ta.asarray(z, copy=True)), z.to_numpy())


def test_quantized_fields_are_refused_by_name():
    """A quantized (bit-packed) field raised a bare AssertionError from the language's
    to_numpy_type, also with copy=True (2026-12-05): its elements have no NumPy dtype."""
    q = ti.field(dtype=ti.types.quant.int(bits=4, signed=False))
    bits = ti.BitpackedFields(max_num_bits=32)
    bits.place(q)
    ti.root.dense(ti.i, 8).place(bits)
    for copy in (None, True):
        with pytest.raises(
            TypeError, match=r"asarray\(\): argument 'obj'.*element type qu4 has no NumPy dtype"
        ):
            ta.asarray(q, copy=copy)
    plain = ti.field(ti.i32, shape=8)  # fields of plain types in the same program still read

    @ti.kernel
    def unpack():
        for i in range(8):
            q[i] = i
            plain[i] = q[i]

    unpack()
    np.testing.assert_array_equal(np.asarray(ta.asarray(plain)), np.arange(8))
