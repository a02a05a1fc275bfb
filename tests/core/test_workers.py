"""Taichi's CPU workers as tiarray prepares them (``tiarray._threads``): the calling
thread's floating-point environment (no flush-to-zero in parallel kernels) and one CPU
per worker."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest

import tiarray as ta
from tiarray import _threads

BACKEND = ta.backend()  # the language module of the running backend: taichi or quadrants

BIG = 1 << 20  # parallel launches for every kernel below


def _run(code: str, **env_over) -> str:
    env = dict(os.environ)
    env.pop("TIARRAY_PIN_THREADS", None)
    env.update(env_over)
    code = code.replace("taichi", BACKEND)  # under TIARRAY_BACKEND=quadrants: quadrants
    # cwd elsewhere: `python -c` puts the working directory first on sys.path, which would
    # import the source tree instead of the installed package
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
        cwd=tempfile.gettempdir(),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    return out.stdout.strip().splitlines()[-1]


def test_parallel_kernels_keep_subnormals():
    """Subnormal inputs and results survive parallel kernels, as in NumPy (Taichi's
    workers were created with flush-to-zero on)."""
    ta.zeros(1)
    if not _threads.workers_fp_env_set():
        pytest.skip("no C library fesetenv on this platform")
    tiny = np.full(BIG, 1e-39, np.float32)  # subnormal in float32
    x = ta.asarray(tiny)
    got = np.asarray(ta.multiply(x, ta.asarray(np.full(BIG, 1.5, np.float32))))
    np.testing.assert_array_equal(got, tiny * np.float32(1.5))
    got = np.asarray(ta.exp(ta.asarray(np.full(BIG, -100.0, np.float32))))
    np.testing.assert_allclose(got, np.exp(np.float32(-100.0)), rtol=1e-2)
    assert np.all(got > 0)
    np.testing.assert_allclose(float(ta.sum(x)), float(np.sum(tiny.astype(np.float64))), rtol=1e-5)
    # the calling thread is untouched: NumPy keeps its subnormals too
    assert np.float32(1e-39) * np.float32(1.5) > 0


def test_worker_probe_is_not_taken_from_the_offline_cache(tmp_path):
    """The probe kernel has the address of fesetenv compiled in; a second process (another
    address, ASLR) sharing the offline cache must compile its own."""
    code = (
        "import numpy as np, tiarray as ta\n"
        "from tiarray import _threads\n"
        "y = ta.asarray(np.full(1 << 20, 1e-39, np.float32))\n"
        "r = np.asarray(ta.multiply(y, ta.asarray(np.full(1 << 20, 1.5, np.float32))))\n"
        "print(int(np.count_nonzero(r == 0)), _threads.workers_fp_env_set())\n"
    )
    cache = str(tmp_path / "ticache")
    for _ in range(2):
        flushed, fp_set = _run(code, TI_OFFLINE_CACHE_FILE_PATH=cache).split()
        if fp_set == "True":
            assert flushed == "0"


def test_pinned_workers_are_distinct_cpus():
    """On Linux with as many workers as CPUs, each Taichi worker is bound to its own CPU;
    TIARRAY_PIN_THREADS=0 turns it off."""
    code = (
        "import numpy as np, tiarray as ta\n"
        "from tiarray import _threads\n"
        "ta.sum(ta.asarray(np.ones(10)))\n"
        "print(_threads.pinned_workers())\n"
    )
    pinned = eval(_run(code))
    can_pin = sys.platform.startswith("linux") and len(os.sched_getaffinity(0)) >= 2
    if can_pin:
        cpus = sorted(os.sched_getaffinity(0))
        assert sorted(c for _, c in pinned) == cpus
        assert len({t for t, _ in pinned}) == len(pinned)
    else:
        assert pinned == []
    assert eval(_run(code, TIARRAY_PIN_THREADS="0")) == []


def test_no_pinning_when_fewer_threads_than_cpus():
    """A runtime with fewer workers than CPUs (several processes sharing a machine) is left
    alone, but its workers still get the FP environment."""
    code = (
        "import taichi as ti, numpy as np\n"
        "ti.init(arch=ti.cpu, cpu_max_num_threads=1)\n"
        "import tiarray as ta\n"
        "from tiarray import _threads\n"
        "ta.sum(ta.asarray(np.ones(10)))\n"
        "print(_threads.pinned_workers(), _threads.workers_fp_env_set())\n"
    )
    out = _run(code)
    assert out.startswith("[]")


def test_more_threads_asked_than_the_pool_has():
    """``cpu_max_num_threads`` above the machine's CPU count: Taichi's pool still has one
    worker per CPU, and the probe waits for those only (otherwise it would wait for
    workers that do not exist, time out and leave the real ones with flush-to-zero)."""
    code = (
        "import os, numpy as np, tiarray as ta\n"
        "ta.init('cpu', cpu_max_num_threads=4 * (os.cpu_count() or 1))\n"
        "from tiarray import _threads\n"
        "y = ta.asarray(np.full(1 << 20, 1e-39, np.float32))\n"
        "r = np.asarray(ta.multiply(y, ta.asarray(np.full(1 << 20, 1.5, np.float32))))\n"
        "print(_threads.workers_fp_env_set(), int(np.count_nonzero(r == 0)))\n"
    )
    fp_set, flushed = _run(code).split()
    if sys.platform != "win32":
        assert fp_set == "True"
        assert flushed == "0"


def test_a_users_ti_init_keeps_its_flush_to_zero_everywhere():
    """A runtime the user started with ``ti.init`` keeps Taichi's FP environment in the
    calling thread (tiarray does not touch it), and the workers get the same one: serial
    and parallel kernels agree (both flush)."""
    code = (
        "import taichi as ti, numpy as np\n"
        "ti.init(arch=ti.cpu)\n"
        "import tiarray as ta\n"
        "small = np.asarray(ta.multiply(ta.asarray(np.full(4, 1e-39, np.float32)), 1.5))\n"
        "y = ta.asarray(np.full(1 << 20, 1e-39, np.float32))\n"
        "big = np.asarray(ta.multiply(y, ta.asarray(np.full(1 << 20, 1.5, np.float32))))\n"
        "print(int(np.count_nonzero(small == 0)), int(np.count_nonzero(big == 0)))\n"
    )
    small_flushed, big_flushed = _run(code).split()
    assert (small_flushed == "4") == (big_flushed == str(1 << 20))
