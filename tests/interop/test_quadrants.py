"""quadrants (Genesis' Taichi fork) beside taichi in one process: ``ta.asarray`` of
``qd.ndarray``/``qd.field``/``qd.tensor`` shares their memory for every quadrants dtype,
and ``@qd.kernel`` calls take TiArrays. The reference is quadrants' own view of its data
(``from_numpy``/``to_numpy``, its data pointer) and NumPy arithmetic.
"""

import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants

QD_DTYPES = {
    "u1": "bool", "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "f16": "float16", "f32": "float32", "f64": "float64",
}  # fmt: skip


def values(shape, dtype) -> np.ndarray:
    v = np.random.default_rng(3).integers(0, 100, size=shape)
    return (v % 2).astype(dtype) if dtype == "bool" else v.astype(dtype)


@pytest.mark.parametrize("qname", list(QD_DTYPES))
def test_ndarray_every_dtype_zero_copy(qd, qname):
    from quadrants.lang import impl

    ta.zeros(1)  # taichi runs too
    nd = qd.ndarray(getattr(qd, qname), shape=(3, 4))
    ref = values((3, 4), QD_DTYPES[qname])
    nd.from_numpy(ref)
    t = ta.asarray(nd)
    assert t.dtype == getattr(ta, QD_DTYPES[qname])
    assert t.ptr == impl.get_runtime().prog.get_ndarray_data_ptr_as_int(nd.arr)
    v = np.asarray(t)
    np.testing.assert_array_equal(v, ref)
    v[...] = values((3, 4), QD_DTYPES[qname])[::-1]
    np.testing.assert_array_equal(nd.to_numpy(), v)
    assert ta.from_dlpack(nd).ptr == t.ptr


@pytest.mark.parametrize("elem", [(3,), (2, 3)])
def test_vector_and_matrix_ndarrays(qd, elem):
    ty = qd.types.vector(3, qd.f32) if len(elem) == 1 else qd.types.matrix(2, 3, qd.f32)
    nd = qd.ndarray(ty, shape=(5,))
    ref = values((5,) + elem, "float32")
    nd.from_numpy(ref)
    t = ta.asarray(nd)
    assert t.shape == (5,) + elem
    np.testing.assert_array_equal(np.asarray(t), ref)


@ti.kernel
def _scaled(x: ti.types.ndarray(ndim=1), k: ti.f32, out: ti.types.ndarray(ndim=1)):
    for i in x:
        out[i] = x[i] * k


_SCALED = ta.Operator("t_qd_scaled", kernel=_scaled, outs=lambda x, k: ta.ShapeDtype(x.shape, x.dtype))


@pytest.mark.parametrize("kind", ["ndarray", "field", "tensor"])
def test_operators_take_quadrants_arrays(qd, kind):
    # an Operator reads quadrants memory in place and gives TiArrays, as for ti.ndarray,
    # also next to TiArrays (before: "no adapter for arrays of 'quadrants'")
    from tiarray.operators import event_csrmv

    ta.zeros(1)
    x = {"ndarray": qd.ndarray, "field": qd.field, "tensor": qd.tensor}[kind](qd.f32, shape=(4,))
    spikes = np.array([1.0, 0.0, 1.0, 1.0], np.float32)
    x.from_numpy(spikes)
    out = _SCALED(x, 3.0)
    assert isinstance(out, ta.TiArray)
    np.testing.assert_array_equal(np.asarray(out), 3 * spikes)
    indptr = np.array([0, 2, 3, 3, 5], np.int32)
    indices = np.array([0, 2, 1, 2, 0], np.int32)
    w = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    dense = np.zeros((4, 3), np.float32)
    for r in range(4):
        dense[r, indices[indptr[r] : indptr[r + 1]]] = w[indptr[r] : indptr[r + 1]]
    out = event_csrmv(ta.asarray(w), ta.asarray(indices), ta.asarray(indptr), x, shape=(4, 3), transpose=True)
    assert isinstance(out, ta.TiArray)
    np.testing.assert_allclose(np.asarray(out), spikes @ dense, rtol=1e-6)


def test_layout_tagged_tensor(qd):
    x = qd.tensor(qd.f32, shape=(3, 4), layout=(1, 0))
    ref = values((3, 4), "float32")
    x.from_numpy(ref)
    t = ta.asarray(x)
    assert t.shape == (3, 4)
    np.testing.assert_array_equal(np.asarray(t), x.to_numpy())
    np.testing.assert_array_equal(np.asarray(t), ref)


@pytest.mark.parametrize("kind", ["scalar", "vector", "matrix", "vector-soa"])
@pytest.mark.parametrize("qname", ["i8", "u16", "i32", "u64", "f16", "f32", "f64"])
def test_fields(qd, kind, qname):
    dt = getattr(qd, qname)
    if kind == "scalar":
        f, elem = qd.field(dt, shape=(4, 3)), ()
    elif kind == "vector":
        f, elem = qd.Vector.field(3, dt, shape=(4, 3)), (3,)
    elif kind == "vector-soa":
        f, elem = qd.Vector.field(3, dt, shape=(4, 3), layout=qd.Layout.SOA), (3,)
    else:
        f, elem = qd.Matrix.field(2, 2, dt, shape=(4, 3)), (2, 2)
    ref = values((4, 3) + elem, QD_DTYPES[qname])
    f.from_numpy(ref)
    t = ta.asarray(f)
    v = np.asarray(t)
    np.testing.assert_array_equal(v, ref)
    v *= 0
    np.testing.assert_array_equal(f.to_numpy(), np.zeros_like(ref))


@pytest.mark.parametrize(
    "shape, order, elem",
    [((4, 5), "ji", ()), ((3, 4, 5), "kij", ()), ((4, 5), "ji", (3,)), ((4, 5), "ji", (2, 2))],
)
def test_ordered_fields(qd, shape, order, elem):
    # quadrants lays an order= field out at the permuted shape in one dense SNode and
    # permutes the indices in kernels (`_qd_layout`): the view has the canonical axes
    if elem == ():
        f = qd.field(qd.f32, shape=shape, order=order)
    elif len(elem) == 1:
        f = qd.Vector.field(elem[0], qd.f32, shape=shape, order=order)
    else:
        f = qd.Matrix.field(*elem, qd.f32, shape=shape, order=order)
    ref = values(shape + elem, "float32")
    f.from_numpy(ref)
    v = np.asarray(ta.asarray(f))
    assert v.shape == shape + elem
    np.testing.assert_array_equal(v, ref)
    # the innermost physical axis is the order's last letter: the smallest stride
    inner = ord(order[-1]) - ord("i")
    assert min(v.strides[: len(shape)]) == v.strides[inner]
    v[(1,) * len(shape)] = -7.0  # a write through the view is the field's
    assert np.all(f.to_numpy()[(1,) * len(shape)] == -7.0)


def test_not_dense_quadrants_field(qd):
    f = qd.field(qd.f32)
    qd.root.pointer(qd.i, 2).dense(qd.i, 4).place(f)
    with pytest.raises(ValueError, match="cannot be shared without a copy.*pointer.*copy=True"):
        ta.asarray(f)
    np.testing.assert_array_equal(np.asarray(ta.asarray(f, copy=True)), f.to_numpy())


def test_quadrants_arrays_reach_torch(qd, torch):
    nd = qd.ndarray(qd.i16, shape=(4,))  # quadrants' own to_dlpack refuses i16
    x = torch.from_dlpack(ta.asarray(nd))
    x += 7
    np.testing.assert_array_equal(nd.to_numpy(), np.full(4, 7, np.int16))


def test_quadrants_kernels_take_tiarrays(qd, torch):
    @qd.kernel
    def axpy(a: qd.f32, x: qd.types.ndarray(), y: qd.types.ndarray()):
        for i in x:
            y[i] += a * x[i]

    xn = np.arange(5, dtype=np.float32)
    yt = torch.ones(5)
    axpy(2.0, ta.asarray(xn), ta.asarray(yt))
    torch.testing.assert_close(yt, 1 + 2 * torch.arange(5, dtype=torch.float32))
    axpy(1.0, x=ta.asarray(xn), y=ta.asarray(yt))
    torch.testing.assert_close(yt, 1 + 3 * torch.arange(5, dtype=torch.float32))
    ro = np.ones(5, dtype=np.float32)
    ro.flags.writeable = False
    axpy(1.0, ta.asarray(ro), ta.asarray(yt))  # read where the kernel only reads
    with pytest.raises(ValueError, match=r"axpy\(\): argument 'y' is a read-only TiArray.*tiarray.Operator"):
        axpy(1.0, ta.asarray(xn), ta.asarray(ro))
    np.testing.assert_array_equal(ro, np.ones(5, np.float32))


def test_quadrants_on_gpu_while_tiarray_on_cpu_is_refused(qd, monkeypatch):
    from tiarray import _backend

    nd = qd.ndarray(qd.f32, shape=(3,))
    monkeypatch.setattr(_backend.qd_memory, "arch_is_gpu", lambda: True)
    with pytest.raises(
        ValueError, match=r"asarray\(\): argument 'obj' is a quadrants .* on the GPU.*tiarray.init"
    ):
        ta.asarray(nd)


def _run(code: str) -> subprocess.CompletedProcess:
    import os

    env = {**os.environ, "ENABLE_QUADRANTS_HEADER_PRINT": "0"}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True, text=True, timeout=300, cwd=tempfile.gettempdir(), env=env,
    )  # fmt: skip


@pytest.mark.parametrize("order", ["quadrants first", "tiarray first"])
def test_arrays_of_a_reset_quadrants_runtime_are_refused(qd, order):
    imports = (
        "import quadrants as qd\nimport tiarray as ta"
        if order == "quadrants first"
        else "import tiarray as ta\nimport quadrants as qd"
    )
    r = _run(
        imports
        + textwrap.dedent(
            """
            import numpy as np
            qd.init(arch=qd.cpu)
            nd = qd.ndarray(qd.f32, shape=(3,))
            f = qd.Vector.field(2, qd.f32, shape=(3,))
            g = qd.field(qd.f32, shape=(3,))
            np.asarray(ta.asarray(nd)); np.asarray(ta.asarray(f))
            qd.reset()
            qd.init(arch=qd.cpu)
            for x in (nd, f, g):
                try:
                    ta.asarray(x)
                except ValueError as e:
                    print("REFUSED", e)
            h = qd.field(qd.f32, shape=(2,))
            h.from_numpy(np.array([1.0, 2.0], np.float32))
            print("FRESH", np.asarray(ta.asarray(h)).tolist())
            """
        )
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.count("REFUSED asarray(): argument 'obj' is a quadrants") == 3, r.stdout
    assert "FRESH [1.0, 2.0]" in r.stdout
