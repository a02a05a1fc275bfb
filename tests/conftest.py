"""Shared test configuration.

Framework tests take the framework through a fixture (``torch``, ``jax``, ``cupy``)
and are marked with it automatically. Each nox session selects its part with ``-m``:
``tests-numpy`` runs ``not torch and not jax and not cupy``, ``tests-torch`` runs
``torch and not jax``, ``tests-jax`` runs ``jax and not torch``, and ``tests-all``
(every framework installed) runs the tests that need several frameworks at once.
A framework fixture *fails* (it does not skip) when the framework is missing: a
selected test must really run.

Taichi on CUDA: ``TIARRAY_ARCH=cuda pytest -m cuda`` runs the device-generic tests with
Taichi and the frameworks' arrays on the GPU. A test is device-generic (marked ``cuda``
here) when it takes a framework fixture (``torch``, ``jax``, ``cupy``) in one of
``CUDA_AREAS``, unless it is marked ``cpu_only`` (it needs Taichi on the CPU: host
pointers, NumPy views of the memory, CPU-only kernels; the mark gives the reason). Under
``TIARRAY_ARCH=cuda`` the ``torch`` fixture makes CUDA torch's default device (so
``torch.as_tensor``, ``torch.arange``... give CUDA tensors), JAX's default backend must be
the GPU, and every fixture fails where its framework has no GPU.
"""

import importlib.util
import os

os.environ.setdefault("ENABLE_TAICHI_HEADER_PRINT", "0")
os.environ.setdefault("TI_SKIP_VERSION_CHECK", "ON")

import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

# Every hypothesis test follows the loaded profile's max_examples (kernels compile on first
# use, so no deadline). ci: derandomized, for CI and nox; dev: quick; thorough: a local
# search for bugs (HYPOTHESIS_PROFILE=thorough pytest tests/<area>/test_x.py).
_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]
settings.register_profile(
    "ci", max_examples=25, deadline=None, suppress_health_check=_QUIET, derandomize=True
)
settings.register_profile("dev", max_examples=10, deadline=None, suppress_health_check=_QUIET)
settings.register_profile("thorough", max_examples=300, deadline=None, suppress_health_check=_QUIET)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

FRAMEWORKS = ("torch", "jax", "cupy", "quadrants")
ON_CUDA = os.environ.get("TIARRAY_ARCH", "").strip().lower() in ("cuda", "gpu")
CUDA_AREAS = ("operators", "sparse", "interop")  # tests/<area>/ holding device-generic tests

if os.environ.get("TIARRAY_TEST_INSTALLED"):
    # nox sessions test the installed distribution, not the checkout
    import tiarray

    assert "site-packages" in tiarray.__file__, f"testing {tiarray.__file__}, not the installed package"

# Test modules written for one framework import it at the top; where the framework is
# not installed they are not collected at all (and their marker keeps them out of other
# sessions' selections), rather than reported as skipped.
collect_ignore = [
    f"operators/test_operator_{fw}.py" for fw in FRAMEWORKS if importlib.util.find_spec(fw) is None
]


def pytest_collection_modifyitems(config, items):
    for item in items:
        names = getattr(item, "fixturenames", ())
        for fw in FRAMEWORKS:
            if fw in names:
                item.add_marker(getattr(pytest.mark, fw))
        if "qd" in names:
            item.add_marker(pytest.mark.quadrants)
        if (
            any(fw in names for fw in ("torch", "jax", "cupy"))
            and item.path.parent.name in CUDA_AREAS
            and "qd" not in names  # quadrants beside tiarray is started on the CPU
            and item.get_closest_marker("cpu_only") is None
        ):
            item.add_marker(pytest.mark.cuda)


@pytest.fixture(scope="session")
def torch():
    import torch

    torch.set_num_threads(min(2, torch.get_num_threads()))
    if ON_CUDA:
        assert torch.cuda.is_available(), "TIARRAY_ARCH=cuda, but this torch has no CUDA device"
        torch.set_default_device("cuda")
    return torch


@pytest.fixture(scope="session")
def jax():
    import jax

    if ON_CUDA:
        assert jax.default_backend() == "gpu", (
            f"TIARRAY_ARCH=cuda, but JAX computes on {jax.default_backend()!r}: install jax with its CUDA plugin"
        )
    return jax


@pytest.fixture(scope="session")
def cupy():
    import cupy

    return cupy


@pytest.fixture(scope="session")
def qd():
    """quadrants (Genesis' Taichi fork), started on the CPU beside tiarray's Taichi."""
    os.environ.setdefault("ENABLE_QUADRANTS_HEADER_PRINT", "0")
    import quadrants

    quadrants.init(arch=quadrants.cpu)
    return quadrants


def _all_parallel():
    """Every CPU kernel in its parallel variant (``set_serial_threshold(0)``) until resumed."""
    import tiarray as ta

    old = ta.set_serial_threshold(0)
    try:
        yield
    finally:
        ta.set_serial_threshold(old)


@pytest.fixture
def parallel_kernels():
    """Force the parallel kernels, whatever the serial thresholds would pick for the sizes."""
    yield from _all_parallel()


@pytest.fixture(params=["tuned", "parallel"])
def launch_mode(request):
    """Run a test twice: with the serial thresholds as tuned, and with every CPU kernel in
    its parallel variant, so the parallel kernels stay covered whatever sizes the
    thresholds send to the serial ones."""
    if request.param == "tuned":
        yield request.param
        return
    for _ in _all_parallel():
        yield request.param
