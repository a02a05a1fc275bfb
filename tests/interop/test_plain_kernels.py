"""A user's own ``@ti.kernel`` called with TiArrays at ``ti.types.ndarray()`` parameters.

The kernel runs on the TiArray's memory (whatever framework's memory is behind it): the
reference is the framework's own array after the call, against the same arithmetic in
NumPy. A read-only TiArray is refused before Taichi sees it, and its memory is unchanged.
"""

import numpy as np
import pytest

import tiarray as ta
from tiarray._internal import ti  # the backend's language: taichi, or quadrants


@ti.kernel
def axpy(a: ti.f32, x: ti.types.ndarray(), y: ti.types.ndarray()) -> ti.f32:
    s = 0.0
    for i in x:
        y[i] += a * x[i]
        s += y[i]
    return s


@ti.kernel
def scale2d(x: ti.types.ndarray(dtype=ti.f64, ndim=2), k: ti.f64):
    for i, j in x:
        x[i, j] *= k + i


@ti.kernel
def shift_vecs(v: ti.types.ndarray(dtype=ti.math.vec3, ndim=1), by: ti.template()):
    for i in v:
        v[i] += by


@ti.func
def bump(e: ti.template()):  # a reference: writes the element passed
    e += 1.0


@ti.kernel
def writes_through_func(x: ti.types.ndarray(), y: ti.types.ndarray()):
    for i in x:
        bump(x[i])
        y[i] = ti.sqrt(x[i]) + x.shape[0]


@ti.kernel
def writes_atomically(x: ti.types.ndarray(), y: ti.types.ndarray()):
    for i in y:
        ti.atomic_add(x[0], y[i])


@ti.kernel
def reads_only(x: ti.types.ndarray(), y: ti.types.ndarray()):
    for I in ti.grouped(x):
        y[I] = ti.abs(x[I]) * 2 + x.shape[0]


@ti.kernel
def writes_through_static_alias(x: ti.types.ndarray(), y: ti.types.ndarray()):
    z = ti.static(x)
    z[0] = y[0]


@ti.kernel
def writes_by_element_method(
    x: ti.types.ndarray(dtype=ti.types.vector(3, ti.f32), ndim=1), y: ti.types.ndarray()
):
    for i in range(x.shape[0]):
        x[i].fill(y[0])


@ti.func
def clamp(v: ti.template()):  # a user's function named like a pure one, taking a reference
    v += 1


@ti.kernel
def writes_through_clamp(x: ti.types.ndarray(), y: ti.types.ndarray()):
    for i in y:
        clamp(x[i])


@ti.kernel
def reads_vectors(x: ti.types.ndarray(dtype=ti.types.vector(3, ti.f32), ndim=1), y: ti.types.ndarray()):
    for i in range(x.shape[0]):
        y[i] = x[i].norm() + ti.math.clamp(x[i][0], 0.0, 1.0) + max(x[i][1], 0.0) + ti.abs(x[i][2])


def test_numpy_memory_written_in_place():
    xn = np.arange(5, dtype=np.float32)
    yn = np.ones(5, dtype=np.float32)
    x, y = ta.asarray(xn), ta.asarray(yn)
    s = axpy(2.0, x, y)
    np.testing.assert_array_equal(yn, 1 + 2 * np.arange(5, dtype=np.float32))
    assert s == pytest.approx(float(yn.sum()))
    # keywords, and a TiArray that tiarray allocated
    z = ta.zeros(5, dtype=ta.float32)
    axpy(a=1.0, x=x, y=z)
    np.testing.assert_array_equal(np.asarray(z), xn)


def test_2d_and_vector_elements():
    xn = np.arange(12, dtype=np.float64).reshape(3, 4)
    x = ta.asarray(xn.copy())
    scale2d(x, 2.0)
    np.testing.assert_array_equal(np.asarray(x), xn * (2.0 + np.arange(3)[:, None]))
    vn = np.zeros((4, 3), dtype=np.float32)
    shift_vecs(ta.asarray(vn), 1.5)
    np.testing.assert_array_equal(vn, np.full((4, 3), 1.5, np.float32))


def test_a_field_view_passed_to_a_kernel():
    f = ti.field(ti.f32, shape=(6,))
    f.from_numpy(np.arange(6, dtype=np.float32))
    y = ta.zeros(6, dtype=ta.float32)
    axpy(3.0, ta.asarray(f), y)
    np.testing.assert_array_equal(np.asarray(y), 3 * np.arange(6, dtype=np.float32))


def test_torch_memory(torch):
    yt = torch.ones(5)
    x = ta.asarray(torch.arange(5, dtype=torch.float32))
    axpy(2.0, x, ta.asarray(yt))
    torch.testing.assert_close(yt, 1 + 2 * torch.arange(5, dtype=torch.float32))


def test_jax_memory_is_read_and_refused_as_output(jax):
    import jax.numpy as jnp

    xj = jnp.arange(5, dtype=jnp.float32)
    y = ta.zeros(5, dtype=ta.float32)
    axpy(1.0, ta.asarray(xj), y)  # read-only input, only read
    np.testing.assert_array_equal(np.asarray(y), np.arange(5, dtype=np.float32))
    yj = jnp.ones(5, dtype=jnp.float32)
    with pytest.raises(
        ValueError, match=r"axpy\(\): argument 'y' is a read-only TiArray.*tiarray.Operator.*copy=True"
    ):
        axpy(1.0, ta.asarray(xj), ta.asarray(yj))
    np.testing.assert_array_equal(np.asarray(yj), np.ones(5, np.float32))


def test_read_only_numpy_read_where_not_written_refused_where_written():
    ro = np.arange(5, dtype=np.float32)
    ro.flags.writeable = False
    x = ta.asarray(np.ones(5, dtype=np.float32))
    axpy(1.0, ta.asarray(ro), x)  # axpy only reads 'x'
    np.testing.assert_array_equal(np.asarray(x), 1 + np.arange(5, dtype=np.float32))
    y = ta.zeros(5, dtype=ta.float32)
    reads_only(ta.asarray(ro), y)
    np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(5, dtype=np.float32) + 5)
    for kernel, arg in ((axpy, "y"), (writes_through_func, "x"), (writes_atomically, "x")):
        args = (1.0, x, ta.asarray(ro)) if kernel is axpy else (ta.asarray(ro), ta.zeros(5, dtype=ta.float32))
        with pytest.raises(
            ValueError, match=rf"{kernel.__name__}\(\): argument '{arg}' is a read-only TiArray"
        ):
            kernel(*args)
    np.testing.assert_array_equal(ro, np.arange(5, dtype=np.float32))
    # the remedy the error names works
    c = ta.asarray(ta.asarray(ro), copy=True)
    writes_atomically(c, ta.ones(5, dtype=ta.float32))
    assert np.asarray(c)[0] == 5


def test_the_write_analysis_is_right_where_it_allows():
    # writes_through_func writes x through the ti.func: with writable memory, the result shows it
    xn = np.zeros(3, dtype=np.float32)
    yn = np.zeros(3, dtype=np.float32)
    writes_through_func(ta.asarray(xn), ta.asarray(yn))
    np.testing.assert_array_equal(xn, np.ones(3, np.float32))
    np.testing.assert_allclose(yn, np.ones(3) + 3)


def test_strided_tiarray_refused():
    base = np.ones(10, dtype=np.float32)
    with pytest.raises(ValueError, match=r"axpy\(\): argument 'y' is a TiArray with strides \(2,\)"):
        axpy(1.0, ta.asarray(np.arange(5, dtype=np.float32)), ta.asarray(base)[::2])
    np.testing.assert_array_equal(base, np.ones(10, np.float32))


def test_calls_without_tiarrays_are_taichi_s_own():
    yn = np.ones(3, dtype=np.float32)
    axpy(1.0, np.arange(3, dtype=np.float32), yn)
    np.testing.assert_array_equal(yn, [1, 2, 3])


def test_writes_the_source_check_missed():
    """Three writes the read-only check let through, each changing a read-only NumPy array
    (2026-12-05): an alias made by ti.static(x), a method of an element (x[i].fill), and a
    user function named like a pure one ('clamp') taking an element by reference."""
    for kernel, shape in ((writes_through_static_alias, (3,)), (writes_by_element_method, (2, 3)),
                          (writes_through_clamp, (3,))):  # fmt: skip
        ro = np.zeros(shape, np.float32)
        ro.flags.writeable = False
        with pytest.raises(ValueError, match=rf"{kernel.__name__}\(\): argument 'x' is a read-only TiArray"):
            kernel(ta.asarray(ro), ta.ones(3, dtype=ta.float32))
        assert not ro.any()
    # reading methods, ti.math functions and builtins stay reads
    ro = np.ones((2, 3), np.float32)
    ro.flags.writeable = False
    y = np.zeros(2, np.float32)
    reads_vectors(ta.asarray(ro), ta.asarray(y))
    np.testing.assert_allclose(y, np.sqrt(3) + 3, rtol=1e-6)


@ti.kernel
def conj_pairs(z: ti.types.ndarray(ndim=2)):
    for i in range(z.shape[0]):
        z[i, 1] = -z[i, 1]


def test_complex_tiarrays_arrive_as_real_pairs():
    # Taichi has no complex types: the same memory as (re, im) pairs, as tiarray.Operator passes it
    for dtype in (np.complex64, np.complex128):
        z = (np.arange(4) + 1j * np.arange(4, 8)).astype(dtype)
        conj_pairs(ta.asarray(z))
        np.testing.assert_array_equal(z, np.conj((np.arange(4) + 1j * np.arange(4, 8)).astype(dtype)))


def test_arrays_for_parameters_that_take_none_are_refused_by_name():
    x, y = ta.ones(3, dtype=ta.float32), ta.zeros(3, dtype=ta.float32)
    with pytest.raises(
        TypeError, match=r"axpy\(\): argument 'a' is a TiArray of shape \(1,\), but the kernel's "
    ):
        axpy(ta.ones(1, dtype=ta.float32), x, y)
    with pytest.raises(
        TypeError, match=r"shift_vecs\(\): argument 'by' is a TiArray of shape \(3,\).*ti.template"
    ):
        shift_vecs(np.zeros((2, 3), np.float32), ta.ones(3, dtype=ta.float32))
    assert float(axpy(ta.asarray(np.float32(2.0)), x, y)) == 6.0  # one value, as a 0-d TiArray
    np.testing.assert_array_equal(y.__array__(), [2, 2, 2])


def test_bfloat16_tiarrays_are_refused_by_name():
    pytest.importorskip("ml_dtypes")
    b = ta.zeros(3, dtype=ta.bfloat16)
    with pytest.raises(
        TypeError, match=r"axpy\(\): argument 'y' is a bfloat16 TiArray; Taichi kernels have no"
    ):
        axpy(1.0, ta.ones(3, dtype=ta.float32), b)
