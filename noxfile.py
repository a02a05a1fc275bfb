"""Nox sessions: one test session per framework, each installing only that framework.

    nox                      # the CI set: lint, tests-numpy/torch/jax/all/quadrants/py313,
                             # qd-numpy/torch/jax (the quadrants backend), docs, examples
    nox -s tests-torch       # one session
    nox -s bench             # the benchmark scripts (prints ratio tables)
    nox -s tests-cupy        # on a machine with a CUDA GPU and CuPy
    nox -s tests-cuda        # Taichi on CUDA: the device-generic tests, on a GPU machine

Every session installs tiarray itself (not editable) with constraints.txt, so each
one proves the package works with that framework alone.
"""

import functools
import glob
import os
import shutil

import nox

nox.options.sessions = [
    "lint", "tests-numpy", "tests-torch", "tests-jax", "tests-all", "tests-quadrants", "tests-py313",
    "qd-numpy", "qd-torch", "qd-jax", "docs", "examples",
]  # fmt: skip
nox.options.reuse_existing_virtualenvs = True
nox.options.error_on_missing_interpreters = False

PY = "3.11" if os.environ.get("CI") else None


def _session(**kwargs):
    """``nox.session``; under CI the session's virtualenv is deleted when the session ends,
    passed or failed. The CI set's twelve virtualenvs hold 13.6 GB together (0.06 to 1.9 GB
    each, ``du -sh .nox/*`` after a full run, 2026-12-04), and CI's run of aac219a failed from
    its seventh session on with 'No space left on device'; one at a time, the disk holds at most
    the largest. Locally they stay, for ``nox -r``."""

    def decorate(func):
        @functools.wraps(func)
        def run(session):
            try:
                func(session)
            finally:
                if os.environ.get("CI"):
                    shutil.rmtree(session.virtualenv.location, ignore_errors=True)

        return nox.session(**kwargs)(run)

    return decorate


def _interpreter(version):
    """``pythonX.Y`` on PATH when it runs, else pyenv's newest ``X.Y.*`` (installed, not on
    PATH by default: a pyenv shim answers only for the selected version), else the name."""
    name = f"python{version}"
    exe = shutil.which(name)
    if exe and "/shims/" not in exe:
        return exe
    root = os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))
    found = sorted(glob.glob(os.path.join(root, "versions", f"{version}.*", "bin", name)))
    return found[-1] if found else version


PY313 = _interpreter("3.13")
C = ("-c", "constraints.txt")
ENV = {
    "ENABLE_TAICHI_HEADER_PRINT": "0",
    "TI_SKIP_VERSION_CHECK": "ON",
    "HYPOTHESIS_PROFILE": os.environ.get("HYPOTHESIS_PROFILE", "ci"),
}


def _pytest(session, marks, *paths, workers=None, **env):
    # The pytest script, not `python -m pytest`: that would put the checkout on sys.path
    # and test the source tree instead of the installed package. workers: pytest-xdist
    # processes (-n), for the sessions whose time CI's 90 minutes can spare least.
    session.run(
        "pytest",
        "-m",
        marks,
        "-q",
        "-p",
        "no:cacheprovider",
        *(("-n", str(workers)) if workers else ()),
        *(session.posargs or paths),
        env={**ENV, "TIARRAY_TEST_INSTALLED": "1", **env},
    )


@_session(python=PY)
def lint(session):
    """ruff lint and format check; the import contracts of pyproject.toml (import-linter)."""
    session.install("ruff", "import-linter")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")
    # lint-imports reads the installed package: tiarray.operators exists only there (setup
    # maps operators/ into it), and it runs outside the checkout, whose tiarray/ would
    # shadow the installed one (lint-imports puts the working directory on sys.path).
    session.install("--no-deps", ".")
    config = os.path.abspath("pyproject.toml")
    with session.chdir(session.create_tmp()):
        session.run("lint-imports", config)


@_session(name="tests-numpy", python=PY)
def tests_numpy(session):
    """Taichi + NumPy only: everything that needs no other framework."""
    session.install(*C, ".[test]")
    _pytest(session, "not torch and not jax and not cupy and not quadrants", workers=2)


@_session(name="tests-torch", python=PY)
def tests_torch(session):
    """Taichi + NumPy + PyTorch (CPU build pinned in constraints.txt)."""
    session.install(*C, ".[test,torch]")
    _pytest(session, "torch and not jax and not cupy and not quadrants")


@_session(name="tests-jax", python=PY)
def tests_jax(session):
    """Taichi + NumPy + JAX."""
    session.install(*C, ".[test,jax]")
    _pytest(session, "jax and not torch and not cupy and not quadrants")


@_session(name="tests-all", python=PY)
def tests_all(session):
    """Tests that exchange data between PyTorch and JAX in one process."""
    session.install(*C, ".[test,torch,jax]")
    _pytest(session, "torch and jax and not cupy and not quadrants")


@_session(name="tests-quadrants", python=PY)
def tests_quadrants(session):
    """quadrants (Genesis' Taichi fork) beside taichi: its arrays in, TiArrays in its kernels."""
    session.install(*C, ".[test,torch,quadrants]")
    _pytest(session, "quadrants and not jax and not cupy", ENABLE_QUADRANTS_HEADER_PRINT="0")


# The same suites on the quadrants backend (TIARRAY_BACKEND=quadrants), one session per
# framework family, with taichi uninstalled: under that backend tiarray must not need it.
# Tests marked quadrants (quadrants arrays beside the backend) run here too.
QD = {"TIARRAY_BACKEND": "quadrants", "ENABLE_QUADRANTS_HEADER_PRINT": "0"}


def _quadrants_backend(session, extras, marks):
    session.install(*C, f".[test,quadrants{extras}]")
    session.run("python", "-m", "pip", "uninstall", "-y", "-q", "taichi")
    _pytest(session, marks, workers=2, **QD)


@_session(name="qd-numpy", python=PY)
def qd_numpy(session):
    """The quadrants backend, taichi not installed: everything that needs no other framework."""
    _quadrants_backend(session, "", "not torch and not jax and not cupy")


@_session(name="qd-torch", python=PY)
def qd_torch(session):
    """The quadrants backend with PyTorch (and JAX, for the tests that exchange with it), and
    the two examples that write kernels (in quadrants' language under this backend)."""
    _quadrants_backend(session, ",torch,jax", "torch and not cupy")
    for script in ("custom_operator.py", "rl_zero_copy.py"):
        session.run("python", f"examples/{script}", "--quick", env={**ENV, **QD})


@_session(name="qd-jax", python=PY)
def qd_jax(session):
    """The quadrants backend with JAX."""
    _quadrants_backend(session, ",jax", "jax and not torch and not cupy")


# What can differ between Python versions is the machinery, not the kernels' arithmetic:
# Taichi's internals the launcher reads, ctypes and the XLA FFI handler, DLPack capsules and
# lifetimes, caches keyed on objects. Those suites run on 3.13; the sparse and elementwise
# suites (two thirds of the tests' time) run on 3.11 only. The whole suite on 3.13 took
# 23 min here (4375 passed, 2026-12-02) and CI's run with it 4222 s of its 90 min.
PY313_TESTS = (
    "tests/core",
    "tests/interop",
    "tests/operators",
    "tests/array_api/test_array_object.py",
    "tests/array_api/test_creation.py",
    "tests/array_api/test_namespace.py",
    "tests/array_api/test_validation.py",
    "tests/array_api/test_indexing.py",
    "tests/sparse/test_sparse_validation.py",
    "tests/sparse/test_sparse_delayed.py",
    "tests/sparse/test_sparse_rules.py",
)


@_session(name="tests-py313", python=PY313)
def tests_py313(session):
    """Python 3.13 (pyenv's where it is not on PATH): Taichi + NumPy + JAX, the suites of the
    machinery (launcher, FFI, DLPack, lifetimes, validation; ``PY313_TESTS``) without torch
    (its pinned CPU build is a cp311 wheel) and the quadrants session's tests."""
    session.install(*C, ".[test,jax]")
    _pytest(session, "not torch and not cupy and not quadrants", *PY313_TESTS)


@_session(name="tests-cupy", python=PY)
def tests_cupy(session):
    """CuPy on a CUDA GPU (not run in CI: CI has no GPU)."""
    session.install(*C, ".[test,cupy]")
    _pytest(session, "cupy", TIARRAY_ARCH="cuda")


@_session(name="tests-cuda", python=PY, venv_params=["--system-site-packages"])
def tests_cuda(session):
    """Taichi on CUDA, every framework's arrays on the GPU: the device-generic tests (marked
    ``cuda`` by tests/conftest.py). Not run in CI (no GPU). It uses the machine's own CUDA
    builds of torch, JAX and CuPy (system site-packages: PyPI's defaults and
    constraints.txt's CPU torch would replace them); benchmarks/gpu_run.sh runs the same
    selection with gpu_check.py and the GPU benchmarks."""
    session.install("--no-deps", ".")
    session.install("taichi==1.7.4", "pytest>=8", "pytest-xdist", "hypothesis", "array-api-strict",
                    "array-api-compat", "array-api-extra", "scipy")  # fmt: skip
    _pytest(session, "cuda", "tests/operators", "tests/sparse", "tests/interop", TIARRAY_ARCH="cuda")


@_session(python=PY)
def docs(session):
    """Build the documentation; warnings are errors, code blocks are run."""
    session.install(*C, ".[docs,torch,jax,test]")
    session.run("sphinx-build", "-W", "--keep-going", "-b", "html", "docs", "docs/_build/html", env=ENV)
    session.run("sphinx-build", "-W", "--keep-going", "-b", "doctest", "docs", "docs/_build/doctest", env=ENV)


@_session(python=PY)
def examples(session):
    """Run every example script (each runs on a CPU in under a minute), and the network
    benchmark's smoke run, which fails when a row's rates are not finite, implausible or
    disagree with tiarray's (its peers, brainevent and Brian2, need Python >= 3.12 and
    are not run here)."""
    session.install(*C, ".[torch,jax,examples]")
    for script in sorted(os.listdir("examples")):
        if script.endswith(".py") and not script.startswith("_"):
            session.run("python", f"examples/{script}", "--quick", env={**ENV, "MPLBACKEND": "Agg"})
    session.run("python", "benchmarks/bench_network.py", "--quick", env={**ENV, "MPLBACKEND": "Agg"})


@_session(python=PY)
def bench(session):
    """Run the benchmark scripts; each prints a table of ratios against named baselines."""
    session.install(*C, ".[torch,jax]", "scipy")
    for script in sorted(os.listdir("benchmarks")):
        if script.startswith("bench_") and script.endswith(".py"):
            session.run("python", f"benchmarks/{script}", *session.posargs, env=ENV)


@_session(python=PY)
def wheel(session):
    """Build the wheel and check that tiarray.operators is inside it."""
    session.install("build")
    session.run("python", "-m", "build", "--wheel", "--outdir", "dist")
