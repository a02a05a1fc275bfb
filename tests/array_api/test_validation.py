"""The one home of argument checks (``tiarray._validate``): one ``ta.AxisError`` for every
axis check of the namespace, and the checks' contracts."""

import numpy as np
import pytest

import tiarray as ta

_R = ta.asarray(np.arange(8.0).reshape(2, 4))
_C = ta.asarray(np.arange(8.0).reshape(2, 4) + 1j)
_I = ta.asarray(np.zeros((2, 4), np.int64))

# every public function with an axis argument, called with an axis out of range
AXIS_CALLS = {
    "sum": lambda: ta.sum(_R, axis=5),
    "prod": lambda: ta.prod(_R, axis=5),
    "max": lambda: ta.max(_R, axis=5),
    "min": lambda: ta.min(_R, axis=5),
    "mean": lambda: ta.mean(_R, axis=5),
    "std": lambda: ta.std(_R, axis=5),
    "var": lambda: ta.var(_R, axis=5),
    "cumulative_sum": lambda: ta.cumulative_sum(_R, axis=5),
    "cumulative_prod": lambda: ta.cumulative_prod(_R, axis=5),
    "argmax": lambda: ta.argmax(_R, axis=5),
    "argmin": lambda: ta.argmin(_R, axis=5),
    "count_nonzero": lambda: ta.count_nonzero(_R, axis=5),
    "sort": lambda: ta.sort(_R, axis=5),
    "argsort": lambda: ta.argsort(_R, axis=5),
    "all": lambda: ta.all(_R, axis=5),
    "any": lambda: ta.any(_R, axis=5),
    "diff": lambda: ta.diff(_R, axis=5),
    "expand_dims": lambda: ta.expand_dims(_R, axis=5),
    "squeeze": lambda: ta.squeeze(_R, axis=5),
    "flip": lambda: ta.flip(_R, axis=5),
    "moveaxis": lambda: ta.moveaxis(_R, 5, 0),
    "permute_dims": lambda: ta.permute_dims(_R, (5, 0)),
    "roll": lambda: ta.roll(_R, 1, axis=5),
    "stack": lambda: ta.stack([_R, _R], axis=5),
    "concat": lambda: ta.concat([_R, _R], axis=5),
    "unstack": lambda: ta.unstack(_R, axis=5),
    "repeat": lambda: ta.repeat(_R, 2, axis=5),
    "take": lambda: ta.take(_R, ta.asarray([0]), axis=5),
    "take_along_axis": lambda: ta.take_along_axis(_R, _I, axis=5),
    "vecdot": lambda: ta.vecdot(_R, _R, axis=5),
    "tensordot": lambda: ta.tensordot(_R, _R, axes=((5,), (0,))),
    "tensordot (repeated)": lambda: ta.tensordot(_R, _R, axes=((0, 0), (0, 1))),
    "fft.fft": lambda: ta.fft.fft(_C, axis=5),
    "fft.ifft": lambda: ta.fft.ifft(_C, axis=5),
    "fft.fftn": lambda: ta.fft.fftn(_C, axes=(5,)),
    "fft.ifftn": lambda: ta.fft.ifftn(_C, axes=(5,)),
    "fft.rfft": lambda: ta.fft.rfft(_R, axis=5),
    "fft.irfft": lambda: ta.fft.irfft(_C, axis=5),
    "fft.rfftn": lambda: ta.fft.rfftn(_R, axes=(5,)),
    "fft.irfftn": lambda: ta.fft.irfftn(_C, axes=(5,)),
    "fft.hfft": lambda: ta.fft.hfft(_C, axis=5),
    "fft.ihfft": lambda: ta.fft.ihfft(_R, axis=5),
    "fft.fftshift": lambda: ta.fft.fftshift(_R, axes=5),
    "fft.ifftshift": lambda: ta.fft.ifftshift(_R, axes=5),
    "linalg.vector_norm": lambda: ta.linalg.vector_norm(_R, axis=5),
    "linalg.vecdot": lambda: ta.linalg.vecdot(_R, _R, axis=5),
    "linalg.cross": lambda: ta.linalg.cross(ta.asarray(np.ones((2, 3))), ta.asarray(np.ones((2, 3))), axis=5),
    "linalg.tensordot": lambda: ta.linalg.tensordot(_R, _R, axes=((5,), (0,))),
}


@pytest.mark.parametrize("name", sorted(AXIS_CALLS))
def test_one_axis_error_catches_every_axis_check(name):
    with pytest.raises(ta.AxisError) as info:
        AXIS_CALLS[name]()
    assert isinstance(info.value, ValueError) and isinstance(info.value, IndexError)
    # the message names the function and the axis
    msg = str(info.value)
    assert name.split(" ")[0].split(".")[-1] in msg and ("5" in msg or "repeat" in msg)


REPEATED = {
    "sum": lambda: ta.sum(_R, axis=(1, 1)),
    "expand_dims": lambda: ta.expand_dims(_R, axis=(0, 0)),
    "squeeze": lambda: ta.squeeze(ta.asarray(np.ones((1, 1))), axis=(0, 0)),
    "flip": lambda: ta.flip(_R, axis=(1, -1)),
    "fft.fftn": lambda: ta.fft.fftn(_C, axes=(0, 0)),
    "linalg.vector_norm": lambda: ta.linalg.vector_norm(_R, axis=(0, 0)),
}


@pytest.mark.parametrize("name", sorted(REPEATED))
def test_repeated_axes_are_axis_errors(name):
    with pytest.raises(ta.AxisError, match="repeated"):
        REPEATED[name]()


def test_axes_options():
    from tiarray._validate import normalize_axes

    kw = {"none_is_all": True, "sort": True, "lists": False}
    assert normalize_axes(None, 3, "f", **kw) == (0, 1, 2)
    assert normalize_axes((2, -3), 3, "f", **kw) == (0, 2)
    with pytest.raises(TypeError, match=r"f\(\): argument 'axis' must be None, an int or a tuple of ints"):
        normalize_axes([0, 1], 3, "f", **kw)
    kw = {"none_is_all": False, "sort": False, "lists": True}
    assert normalize_axes([2, -3], 3, "f", **kw) == (2, 0)
    with pytest.raises(TypeError, match="must be an int or a tuple or list of ints, got None"):
        normalize_axes(None, 3, "f", **kw)
    with pytest.raises(TypeError, match="got True"):
        normalize_axes(True, 3, "f", **kw)


def test_check_bool_and_dtype():
    from tiarray._validate import check_bool, check_dtype

    assert check_bool(True, "f", "keepdims") is True
    with pytest.raises(TypeError, match=r"f\(\): argument 'keepdims' must be a bool, got 1"):
        check_bool(1, "f", "keepdims")
    with pytest.raises(TypeError):
        check_bool(np.True_, "f", "keepdims")
    assert check_bool(np.True_, "f", "keepdims", numpy_bool=True) is True
    with pytest.raises(TypeError, match=r"g\(\): argument 'x1' must have an integer dtype, got float32"):
        check_dtype(ta.float32, "integer", "g", "x1")
    with pytest.raises(TypeError, match="bfloat16, which Taichi cannot compute on"):
        check_dtype(ta.bfloat16, "real floating-point", "g")
    check_dtype(ta.bfloat16, "real floating-point", "g", kernels=False)  # NumPy-backed functions take it
